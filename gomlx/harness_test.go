package gomlx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/gomlx/internal/vktest"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// The differential harness: every case builds a graph through GoMLX's
// backends.Builder interface, runs it on vkjit (lavapipe in CI) and
// compares each output with two oracles:
//
//   - the reference evaluator (hlo/eval) on the HLO module the graph
//     became: the device computes what the adapter built;
//   - GoMLX's pure-Go backend (simplego) where it computes the op and
//     dtype: the adapter built what GoMLX means.
//
// Cases run over every dtype GoMLX has a Go type for; a dtype the vkjit
// backend refuses fails the case when simplego computes it.

var (
	vkb     *Backend         // the backend under test
	goBack  backends.Backend // simplego
	allDTyp = []dtypes.DType{dtypes.Bool, dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64,
		dtypes.Uint8, dtypes.Uint16, dtypes.Uint32, dtypes.Uint64, dtypes.Float16, dtypes.BFloat16,
		dtypes.Float32, dtypes.Float64, dtypes.Complex64, dtypes.Complex128}
)

func TestMain(m *testing.M) {
	vktest.Main(m, func(opts vkjit.Options) (err error) {
		if vkb, err = Open(opts, vkjit.CompileOptions{}); err != nil {
			return err
		}
		// Sequentially, so that an op simplego lacks panics in the
		// caller's goroutine, where run recovers it, not in a worker's.
		goBack, err = simplego.New("ops_sequential")
		return err
	}, func() { vkb.Finalize() })
}

// arg is one input of a case: its shape for the case's dtype, and how its
// values are made (nil: hlotest.Random, a quarter edge cases).
type arg struct {
	shape func(dt dtypes.DType) shapes.Shape
	gen   func(rng *rand.Rand, s shapes.Shape) []byte
}

// opCase is one table row: a graph over its args, for each dtype it
// takes.
type opCase struct {
	name  string
	args  []arg
	build func(f backends.Builder, dt dtypes.DType, x []backends.Op) ([]backends.Op, error)
	ulps  int64   // float tolerance in units of the last place (0: exact)
	rel   float64 // or relative to the output's largest magnitude (sums)
	types []dtypes.DType
	// evalOnly says why simplego is no oracle for the case (XLA defines
	// what Go leaves to the platform): the evaluator alone is.
	evalOnly string
}

// of is an arg of the case's dtype and the given dimensions.
func of(dims ...int) arg {
	return arg{shape: func(dt dtypes.DType) shapes.Shape { return shapes.Make(dt, dims...) }}
}

// fixed is an arg of a fixed dtype.
func fixed(dt dtypes.DType, dims ...int) arg {
	return arg{shape: func(dtypes.DType) shapes.Shape { return shapes.Make(dt, dims...) }}
}

// with gives an arg its own values.
func (a arg) with(gen func(rng *rand.Rand, s shapes.Shape) []byte) arg { a.gen = gen; return a }

// result is one backend's outputs: shapes and bytes.
type result struct {
	shapes []shapes.Shape
	data   [][]byte
	module *hlo.Module // vkjit's
}

// run builds the case on backend be, executes it on inputs and reads the
// outputs back.
func run(be backends.Backend, c opCase, dt dtypes.DType, in []shapes.Shape, data [][]byte) (res result, buildErr, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f := be.Builder(c.name)
	params := make([]backends.Op, len(in))
	for i, s := range in {
		if params[i], buildErr = f.Parameter(fmt.Sprintf("x%d", i), s, nil); buildErr != nil {
			return
		}
	}
	outs, buildErr := c.build(f, dt, params)
	if buildErr != nil {
		return
	}
	exe, buildErr := f.Compile(outs, nil)
	if buildErr != nil {
		return
	}
	defer exe.Finalize()
	if e, ok := exe.(*Executable); ok {
		res.module = e.Module()
	}
	bufs := make([]backends.Buffer, len(in))
	for i, s := range in {
		flat := reflect.MakeSlice(reflect.SliceOf(s.DType.GoType()), s.Size(), s.Size()).Interface()
		dst, err := flatBytes(flat, s.DType, s.Size())
		if err != nil {
			return res, nil, err
		}
		copy(dst, data[i])
		if bufs[i], err = be.BufferFromFlatData(0, flat, s); err != nil {
			return res, nil, err
		}
	}
	outBufs, err := exe.Execute(bufs, nil, 0)
	for _, b := range bufs {
		be.BufferFinalize(b)
	}
	if err != nil {
		return res, nil, err
	}
	for _, ob := range outBufs {
		s, err := be.BufferShape(ob)
		if err != nil {
			return res, nil, err
		}
		flat := reflect.MakeSlice(reflect.SliceOf(s.DType.GoType()), s.Size(), s.Size()).Interface()
		if err := be.BufferToFlatData(ob, flat); err != nil {
			return res, nil, err
		}
		be.BufferFinalize(ob)
		b, _ := flatBytes(flat, s.DType, s.Size())
		res.shapes = append(res.shapes, s)
		res.data = append(res.data, append([]byte(nil), b...))
	}
	return res, nil, nil
}

// runCases runs every case over its dtypes as subtests.
func runCases(t *testing.T, cases []opCase) {
	for _, c := range cases {
		types := c.types
		if types == nil {
			types = allDTyp
		}
		for _, dt := range types {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) { runCase(t, c, dt) })
		}
	}
}

func runCase(t *testing.T, c opCase, dt dtypes.DType) {
	rng := rand.New(rand.NewPCG(uint64(len(c.name))*7919+uint64(dt), 0x676f6d6c78))
	in := make([]shapes.Shape, len(c.args))
	data := make([][]byte, len(c.args))
	for i, a := range c.args {
		in[i] = a.shape(dt)
		if a.gen != nil {
			data[i] = a.gen(rng, in[i])
			continue
		}
		data[i] = random(rng, in[i])
	}
	got, buildErr, err := run(vkb, c, dt, in, data)
	// simplego panics in its workers (which no recover reaches) on dtypes
	// it lacks: it runs only where it lists every dtype involved.
	involved := append(append([]shapes.Shape{}, in...), got.shapes...)
	involved = append(involved, shapes.Make(dt))
	var ref result
	refBuildErr, refErr := error(nil), error(nil)
	for _, s := range involved {
		if !goBack.Capabilities().DTypes[s.DType] {
			refBuildErr = fmt.Errorf("simplego lacks dtype %s", s.DType)
		}
	}
	if refBuildErr == nil {
		ref, refBuildErr, refErr = run(goBack, c, dt, in, data)
	}
	simplegoOK := refBuildErr == nil && refErr == nil
	if buildErr != nil {
		if simplegoOK {
			t.Fatalf("vkjit refuses what simplego computes: %v", buildErr)
		}
		t.Skipf("not a GoMLX op for this dtype: %v", buildErr)
	}
	if err != nil {
		t.Fatalf("vkjit: %v", err)
	}
	// The evaluator on the module the graph became.
	args := make([]*hlo.Literal, len(in))
	for i, s := range in {
		hs, _ := hloShape(s)
		args[i] = &hlo.Literal{Shape: hs, Data: data[i]}
	}
	v, err := eval.Run(got.module, args...)
	if err != nil {
		t.Fatalf("evaluator: %v", err)
	}
	leaves := v.Leaves()
	if len(leaves) != len(got.data) {
		t.Fatalf("evaluator gives %d outputs, vkjit %d", len(leaves), len(got.data))
	}
	for i := range got.data {
		if at, err := compareAt(got.shapes[i], got.data[i], leaves[i].Data, c.ulps, c.rel); err != nil {
			t.Errorf("output %d (%s) against the evaluator: %v;%s", i, got.shapes[i], err, inputsAt(in, data, got.shapes[i], at))
		}
	}
	if c.evalOnly != "" {
		return
	}
	if c.rel > 0 && dt == dtypes.BFloat16 {
		t.Logf("simplego accumulates bfloat16 sums and products in bfloat16, truncating each step: checked against the evaluator only")
		return
	}
	if !simplegoOK {
		t.Logf("simplego does not compute it (%v%v): checked against the evaluator only", refBuildErr, refErr)
		return
	}
	for i := range got.data {
		if !ref.shapes[i].Equal(got.shapes[i]) {
			t.Errorf("output %d: vkjit %s, simplego %s", i, got.shapes[i], ref.shapes[i])
			continue
		}
		ulps := c.ulps
		if got.shapes[i].DType == dtypes.BFloat16 {
			// GoMLX's bfloat16.FromFloat32 truncates; XLA and vkjit round
			// to nearest even.
			ulps = max(ulps, 1)
		}
		if at, err := compareAt(got.shapes[i], got.data[i], ref.data[i], ulps, c.rel); err != nil {
			t.Errorf("output %d (%s) against simplego: %v;%s", i, got.shapes[i], err, inputsAt(in, data, got.shapes[i], at))
		}
	}
}

// compare checks got against want element by element: integers and
// bools exactly, floats (and complex parts) within ulps units of the last
// place or rel of the largest magnitude; NaNs match NaNs.
func compare(s shapes.Shape, got, want []byte, ulps int64, rel float64) error {
	_, err := compareAt(s, got, want, ulps, rel)
	return err
}

// compareAt is compare that also gives the indices of the elements that
// differ.
func compareAt(s shapes.Shape, got, want []byte, ulps int64, rel float64) ([]int, error) {
	if len(got) != len(want) {
		return nil, fmt.Errorf("%d bytes, want %d", len(got), len(want))
	}
	t, part := partOf(s.DType)
	if !part.IsFloat() {
		for i := range got {
			if got[i] != want[i] {
				w := t.Bytes()
				return []int{i / w}, fmt.Errorf("element %d: %x, want %x", i/w, got[i/w*w:i/w*w+w], want[i/w*w:i/w*w+w])
			}
		}
		return nil, nil
	}
	w := part.Bytes()
	n := len(got) / w
	dec := func(b []byte, i int) float64 { return decode(part, b[i*w:]) }
	largest := 0.0
	for i := 0; i < n; i++ {
		if v := math.Abs(dec(want, i)); !math.IsInf(v, 0) && !math.IsNaN(v) {
			largest = max(largest, v)
		}
	}
	// A complex element is compared as one number: its error relative to
	// its modulus, in units of the parts' epsilon (ulps per part mean
	// little where one part is far below the other).
	eps := math.Ldexp(1, -map[hlo.ElementType]int{hlo.F32: 23, hlo.F64: 52}[part])
	normwise := func(i int) bool {
		if part == t {
			return false
		}
		e := i &^ 1
		gr, gi, wr, wi := dec(got, e), dec(got, e+1), dec(want, e), dec(want, e+1)
		for _, v := range []float64{gr, gi, wr, wi} {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return false
			}
		}
		m := math.Hypot(wr, wi)
		return math.Hypot(gr-wr, gi-wi) <= float64(max(ulps, 1))*eps*m
	}
	var bad []string
	var at []int
	for i := 0; i < n; i++ {
		g, wv := dec(got, i), dec(want, i)
		d := hlotest.ULPs(part, wv, g)
		if d <= ulps || (rel > 0 && math.Abs(g-wv) <= rel*largest) || normwise(i) {
			continue
		}
		at = append(at, i*w/t.Bytes())
		if len(bad) < 4 {
			bad = append(bad, fmt.Sprintf("[%d] %v want %v (%d ulps)", i, g, wv, d))
		} else if len(bad) == 4 {
			bad = append(bad, "...")
		}
	}
	if bad != nil {
		return at, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil, nil
}

// inputsAt describes the inputs at element i of an elementwise case (the
// inputs of the output's shape), to tell why an element differs.
func inputsAt(in []shapes.Shape, data [][]byte, out shapes.Shape, at []int) string {
	var b strings.Builder
	for k, i := range at {
		if k == 3 {
			break
		}
		fmt.Fprintf(&b, " [%d]:", i)
		for j, s := range in {
			if s.Size() != out.Size() {
				continue
			}
			w := s.DType.Size()
			fmt.Fprintf(&b, " x%d=%s", j, element(s.DType, data[j][i*w:i*w+w]))
		}
	}
	return b.String()
}

// element prints one element's bytes as its value.
func element(dt dtypes.DType, b []byte) string {
	_, part := partOf(dt)
	if !part.IsFloat() {
		return fmt.Sprintf("%x", b)
	}
	var parts []string
	for o := 0; o < len(b); o += part.Bytes() {
		parts = append(parts, fmt.Sprint(decode(part, b[o:])))
	}
	return strings.Join(parts, ",")
}

// partOf is dt's element type and the type of its parts: a complex
// number's float type, else the element type itself.
func partOf(dt dtypes.DType) (t, part hlo.ElementType) {
	t, _ = elemOf(dt)
	switch t {
	case hlo.C64:
		return t, hlo.F32
	case hlo.C128:
		return t, hlo.F64
	}
	return t, t
}

// decode is the float of type t at the start of b (little-endian).
func decode(t hlo.ElementType, b []byte) float64 {
	var bits uint64
	for j := t.Bytes() - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(b[j])
	}
	return hlo.DecodeFloat(t, bits)
}

// Value makers for args.

// random is hlotest.Random (a quarter edge cases of the type), complex
// numbers made of its float parts: an edge case in either part.
func random(rng *rand.Rand, s shapes.Shape) []byte {
	hs, _ := hloShape(s)
	if t, part := partOf(s.DType); part != t {
		return hlotest.Random(hlo.ArrayShape(part, append(hs.Dims, 2)...), rng).Data
	}
	return hlotest.Random(hs, rng).Data
}

// ints fills an integer arg with values in [lo, hi].
func ints(lo, hi int) func(rng *rand.Rand, s shapes.Shape) []byte {
	return func(rng *rand.Rand, s shapes.Shape) []byte {
		w := s.DType.Size()
		out := make([]byte, s.Size()*w)
		for i := 0; i < s.Size(); i++ {
			v := uint64(int64(lo + rng.IntN(hi-lo+1)))
			for j := 0; j < w; j++ {
				out[i*w+j] = byte(v >> (8 * j))
			}
		}
		return out
	}
}

// nonZero is hlotest.Random with integer zeros made one (simplego's Go
// division panics on them; XLA defines them, and the evaluator cases of
// vkjit's own tests cover them).
func nonZero(rng *rand.Rand, s shapes.Shape) []byte {
	b := random(rng, s)
	if !s.DType.IsInt() {
		return b
	}
	w := s.DType.Size()
	for i := 0; i < len(b); i += w {
		zero := true
		for _, x := range b[i : i+w] {
			zero = zero && x == 0
		}
		if zero {
			b[i] = 1
		}
	}
	return b
}

// floats fills a float arg with normal values of magnitude in [lo, hi),
// either sign unless positive.
func floats(lo, hi float64, positive bool) func(rng *rand.Rand, s shapes.Shape) []byte {
	return func(rng *rand.Rand, s shapes.Shape) []byte {
		t, part := partOf(s.DType)
		n := s.Size()
		if part != t {
			n *= 2
		}
		w := part.Bytes()
		out := make([]byte, n*w)
		for i := 0; i < n; i++ {
			v := lo + rng.Float64()*(hi-lo)
			if !positive && rng.IntN(2) == 0 {
				v = -v
			}
			bits := hlo.EncodeFloat(part, v)
			for j := 0; j < w; j++ {
				out[i*w+j] = byte(bits >> (8 * j))
			}
		}
		return out
	}
}

func le32(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}
