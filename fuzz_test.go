package vkjit_test

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// The random-program differential fuzzer: hlotest.RandomProgram makes a
// well-typed module, hlotest.FuzzInputs its arguments, and checkProgram
// runs it on the device with fusion and without and in the reference
// evaluator. A difference, a panic, an internal error or a validation
// message is a failure; the failing program is shrunk (minimize) and
// kept in testdata/fuzz as a regression test (TestFuzzRegressions).
//
//	go test -run '^$' -fuzz FuzzPrograms -fuzztime 30m -timeout 0 .
//
// (-timeout 0: go test's default 10 minutes holds for the fuzzing
// processes too, which end at it with "communicating with fuzzing
// process: EOF" whatever -fuzztime says.) Without -fuzz, the seeds below
// run as part of make test.

// Go's fuzzing engine runs the fuzz function in worker processes whose
// output it discards (internal/fuzz starts them without stdout or
// stderr): a worker that dies of a fatal error, of a signal in the
// driver or of the engine's own 10 s "deadlocked!" panic leaves only
// "fuzzing process hung or terminated unexpectedly: exit status 2". A
// worker appends its crash report to $TMPDIR/vkjit-fuzzworkers.log.
func init() {
	if !slices.Contains(os.Args, "-test.fuzzworker") {
		return
	}
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "vkjit-fuzzworkers.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err == nil {
		debug.SetCrashOutput(f, debug.CrashOptions{})
	}
}

var (
	fuzzOnce sync.Once
	fuzzRT   *vkjit.Runtime
)

// fuzzRuntime is a runtime without the compile cache: every program is
// new, and the cache would only fill the disk.
func fuzzRuntime(t testing.TB) *vkjit.Runtime {
	fuzzOnce.Do(func() {
		r, err := vkjit.Open(vkjit.Options{Validate: vkjit.On, NoCache: true})
		if err != nil {
			panic(err)
		}
		fuzzRT = r
	})
	return fuzzRT
}

// failure says how a program failed: its kind groups failures for the
// minimizer (a shrunk program must fail the same way).
type failure struct {
	kind, msg string
}

func (f *failure) Error() string { return f.kind + ": " + f.msg }

// checkProgram runs m with the arguments of seed; nil means the device,
// fused and unfused, agrees with the evaluator.
func checkProgram(t testing.TB, m *hlo.Module, seed uint64) (fail *failure) {
	defer func() {
		if p := recover(); p != nil {
			fail = &failure{"panic", fmt.Sprint(p)}
		}
	}()
	r := fuzzRuntime(t)
	args := hlotest.FuzzInputs(m, seed)
	// A computed NaN's sign is IEEE's to leave open: total orders are
	// checked with it hidden.
	m, err := hlotest.HideNaNSigns(m)
	if err != nil {
		return &failure{"checker", err.Error()}
	}
	want, err := eval.RunLimited(m, fuzzTrips, args...)
	if errors.Is(err, eval.ErrTooManyTrips) {
		return &failure{"endless", err.Error()} // it may never finish: nothing to compare
	}
	if u := new(*eval.Unsupported); errors.As(err, u) {
		return &failure{"refused", err.Error()} // named: the evaluator does not run it
	}
	if err != nil {
		return &failure{"evaluator", err.Error()}
	}
	refs := rounding(m, args)
	// Every other seed reaches its arrays by device address when unfused,
	// as arrays past maxStorageBufferRange are.
	unfused := vkjit.CompileOptions{NoFuse: true, NoReuse: true}
	if seed%2 == 1 {
		unfused.AddressAbove = 4
	}
	for _, opts := range []vkjit.CompileOptions{{}, unfused} {
		mode := map[bool]string{true: "unfused", false: "fused"}[opts.NoFuse]
		if opts.AddressAbove > 0 {
			mode += " by address"
		}
		exe, err := r.Compile(m, opts)
		if err != nil {
			if refusal.MatchString(err.Error()) {
				return &failure{"refused", err.Error()}
			}
			return &failure{"compile " + mode, err.Error()}
		}
		ts := make([]*vkjit.Tensor, len(args))
		for i, a := range args {
			ts[i] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
		}
		outs, _, err := exe.Run(context.Background(), ts...)
		exe.Close()
		if err != nil {
			return &failure{"run " + mode, err.Error()}
		}
		if msgs := vkjit.ValidationMessages(); len(msgs) > 0 {
			return &failure{"validation " + mode, strings.Join(msgs, "; ")}
		}
		for i, w := range want.Leaves() {
			if d := differs(w, outs[i], refs, i); d != "" {
				return &failure{fmt.Sprintf("%s out%d", mode, i), d}
			}
		}
	}
	return nil
}

// references are m's results computed with other float widths (nil
// where m cannot be retyped), with dots and convolutions summed in f32 as
// the device sums them, in another order, and with every inexact float
// op's result an ulp up and an ulp down (eval.RunNudged): how far
// rounding moves each result.
type references struct {
	wide, narrow, summed, up, down []*hlo.Literal
	// poisoned: the results with the zeros of ops that order their own
	// sums, their FFT bins within rounding of 0, and inexact ops'
	// underflows made NaNs (eval.RunZerosPoisoned; nil where m has no
	// such op): a zero that is a zero there too has a sign no such op
	// decided, and a NaN or infinity that is not NaN there came from
	// values whose signs are arithmetic's.
	poisoned  []*hlo.Literal
	zeroSigns bool // zeros' signs are compared (where poisoned agrees)
}

// poisonsZeros reports whether m has an op whose zeros' signs may be
// its implementation's or a rounding's (eval.PoisonsZeros).
func poisonsZeros(m *hlo.Module) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if eval.PoisonsZeros(in.Op) {
				return true
			}
		}
	}
	return false
}

func rounding(m *hlo.Module, args []*hlo.Literal) references {
	var refs references
	run := func(to map[hlo.ElementType]hlo.ElementType) []*hlo.Literal {
		alt, err := hlotest.Retype(m, to)
		if err != nil {
			return nil
		}
		v, err := eval.Run(alt, hlotest.RetypeInputs(args, to)...)
		if err != nil {
			return nil
		}
		return v.Leaves()
	}
	refs.zeroSigns = true
	if poisonsZeros(m) {
		v, err := eval.RunZerosPoisoned(m, fuzzTrips, args...)
		if err != nil {
			refs.zeroSigns = false
		} else {
			refs.poisoned = v.Leaves()
		}
	}
	refs.wide = run(hlotest.Widened)
	refs.narrow = run(hlotest.Narrowed)
	if v, err := eval.RunSummedInF32(m, fuzzTrips, args...); err == nil {
		refs.summed = v.Leaves()
	}
	if v, err := eval.RunNudged(m, fuzzTrips, 1, args...); err == nil {
		refs.up = v.Leaves()
	}
	if v, err := eval.RunNudged(m, fuzzTrips, -1, args...); err == nil {
		refs.down = v.Leaves()
	}
	return refs
}

// literalOf is a tensor as the reference evaluator takes it.
func literalOf(x *vkjit.Tensor) *hlo.Literal {
	return &hlo.Literal{Shape: hlo.ArrayShape(hlo.ElementType(x.Type), x.Dims...), Data: x.Data}
}

// literalTensor is literal l as a tensor (its bytes shared), literalOf's
// inverse.
func literalTensor(l *hlo.Literal) *vkjit.Tensor {
	return &vkjit.Tensor{Type: vkjit.DType(l.Shape.Elem), Dims: l.Shape.Dims, Data: l.Data}
}

// literalTensors is literalTensor of each literal.
func literalTensors(lits []*hlo.Literal) []*vkjit.Tensor {
	ts := make([]*vkjit.Tensor, len(lits))
	for i, l := range lits {
		ts[i] = literalTensor(l)
	}
	return ts
}

// differs compares output i of the device with the evaluator's: integers
// and pred exactly; floats within what rounding explains. A float result
// may move by 16 times the distance between the evaluator's result and
// the same program's in wider floats (f64 results: in narrower floats,
// scaled by 2^-29), plus 8 ulp for the device's math library; where the
// two evaluations disagree on NaN or infinity (an overflow at the edge),
// the element is not compared, nor is the evaluator's NaN or infinity
// where the evaluation with undecided signs poisoned (refs.poisoned) is
// NaN (an FFT's roundoff times an infinity), nor the sign of a complex
// result's infinite part beside a NaN. A zero has the evaluator's sign
// where every evaluation agrees on it, the one with the zeros of ops
// that order their own sums poisoned too (refs.poisoned). A complex
// result is compared part by part, its ulps those of its modulus (a part
// that cancels is as far off as the number's rounding, not its own size).
func differs(want *hlo.Literal, got *vkjit.Tensor, refs references, i int) string {
	t := want.Shape.Elem
	if gs := literalOf(got).Shape; gs.Elem != t || !gs.SameDims(want.Shape) {
		return fmt.Sprintf("got %s, want %s", gs, want.Shape)
	}
	// view reads a literal's floats: a complex one's parts, two an
	// element.
	view := func(l *hlo.Literal) *vkjit.Tensor {
		p, _ := l.Shape.Elem.ComplexPart()
		return &vkjit.Tensor{Type: vkjit.DType(p), Dims: []int64{int64(len(l.Data) / p.Bytes())}, Data: l.Data}
	}
	part, complex := t.ComplexPart()
	if !t.IsFloat() && !complex {
		if string(got.Data) != string(want.Data) {
			wt := &vkjit.Tensor{Type: vkjit.DType(t), Dims: want.Shape.Dims, Data: want.Data}
			// An integer that an evaluation within rounding moves (a
			// bitcast or conversion of an inexact float: power(x, -5)'s
			// low bits) is not compared: the device's ulps are its own.
			var alts []*vkjit.Tensor
			for _, r := range [][]*hlo.Literal{refs.wide, refs.narrow, refs.summed, refs.up, refs.down} {
				if i < len(r) && r[i].Shape.Elem == t && len(r[i].Data) == len(want.Data) {
					alts = append(alts, &vkjit.Tensor{Type: vkjit.DType(t), Dims: want.Shape.Dims, Data: r[i].Data})
				}
			}
			moved := func(j int64, w float64) bool {
				for _, a := range alts {
					if a.Float64At(j) != w {
						return true
					}
				}
				return false
			}
			excused := false
			for j := int64(0); j < got.NumElements(); j++ {
				if a, b := got.Float64At(j), wt.Float64At(j); a != b {
					if !moved(j, b) {
						return fmt.Sprintf("element %d: got %v, want %v", j, a, b)
					}
					excused = true
				}
			}
			if !excused {
				return "bits differ" // beyond float64's 53 bits
			}
		}
		return ""
	}
	// The references that show rounding: the program in wider floats
	// (what every result narrower than f64 is compared with, and an f64
	// result computed from narrower values), for f64 results the program
	// in f32, its distance scaled down to f64's precision, and for the
	// others the program with its products summed in f32 (a sum that
	// cancels moves by the rounding of its partial sums, whose order the
	// device chooses).
	type ref struct {
		lit   *vkjit.Tensor
		scale float64
	}
	var alts []ref
	if i < len(refs.wide) {
		alts = append(alts, ref{view(refs.wide[i]), 16})
	}
	if part == hlo.F64 && i < len(refs.narrow) {
		alts = append(alts, ref{view(refs.narrow[i]), 16 * 0x1p-29})
	}
	if part != hlo.F64 && i < len(refs.summed) {
		alts = append(alts, ref{view(refs.summed[i]), 16})
	}
	// A device's few ulps in a transcendental function or a division,
	// amplified by what follows: 8 times what one ulp moves the result.
	for _, r := range [][]*hlo.Literal{refs.up, refs.down} {
		if i < len(r) {
			alts = append(alts, ref{view(r[i]), 8})
		}
	}
	t = part // from here on, the type of the floats compared
	maxFinite := map[hlo.ElementType]float64{hlo.F16: 65504, hlo.BF16: 3.3895313892515355e38, hlo.F32: math.MaxFloat32, hlo.F64: math.MaxFloat64}[t]
	eps := map[hlo.ElementType]float64{hlo.F16: 0x1p-11, hlo.BF16: 0x1p-8, hlo.F32: 0x1p-24, hlo.F64: 0x1p-53}[t]
	minNormal := map[hlo.ElementType]float64{hlo.F16: 0x1p-14, hlo.BF16: 0x1p-126, hlo.F32: 0x1p-126, hlo.F64: 0x1p-1022}[t]
	if f, ok := hlo.MiniFloatFormatOf(t); ok {
		// f8, f6, f4: computed in f32 and rounded once, as the evaluator
		// rounds its float64: 2 ulp, or a subnormal step, not 8 of f32's.
		maxFinite, eps, minNormal = f.Max, math.Ldexp(1, -f.Man-2), math.Ldexp(1, f.Emin-f.Man-3)
	}
	// zeros: the evaluations whose element j must be the zero w, sign
	// and all, for w's sign to be compared: every reference, and the one
	// with the zeros of ops that order their own sums made NaNs.
	zeros := make([]*vkjit.Tensor, 0, len(alts)+1)
	for _, r := range alts {
		zeros = append(zeros, r.lit)
	}
	if refs.poisoned != nil {
		zeros = append(zeros, view(refs.poisoned[i]))
	}
	sameZero := func(j int64, w float64) bool {
		for _, z := range zeros {
			if a := z.Float64At(j); a != 0 || math.Signbit(a) != math.Signbit(w) {
				return false
			}
		}
		return true
	}
	wt, gt := view(want), view(literalOf(got))
	at := func(j int64) string {
		if complex {
			return fmt.Sprintf("%d's %s part", j/2, map[bool]string{false: "real", true: "imaginary"}[j%2 == 1])
		}
		return fmt.Sprint(j)
	}
	for j := int64(0); j < gt.NumElements(); j++ {
		g, w := gt.Float64At(j), wt.Float64At(j)
		size := math.Abs(w)
		if complex {
			size = math.Hypot(wt.Float64At(j&^1), wt.Float64At(j|1))
		}
		// Unstable: an evaluation in other floats disagrees on NaN or
		// infinity (or the infinity's sign), or the result is near
		// overflow, where a rounding decides.
		unstable := false
		spread := 0.0
		for _, r := range alts {
			a := r.lit.Float64At(j)
			if math.IsNaN(a) != math.IsNaN(w) || math.IsInf(a, 0) != math.IsInf(w, 0) || math.IsInf(a, 0) && a != w || !math.IsInf(a, 0) && math.Abs(a) > maxFinite/2 {
				unstable = true
			}
			if d := r.scale * math.Abs(w-a); d > spread {
				spread = d
			}
		}
		switch {
		case unstable:
			continue
		case w == 0 && g == 0:
			// A zero's sign, where every evaluation agrees on it, is
			// IEEE arithmetic's and the spec's (sign(-0) is -0, max(-0,
			// +0) is +0), and 1/x tells the two apart.
			if refs.zeroSigns && math.Signbit(g) != math.Signbit(w) && sameZero(j, w) {
				return fmt.Sprintf("element %s: got %v, want %v (a zero of the other sign)", at(j), g, w)
			}
			continue
		case math.IsNaN(w) || math.IsInf(w, 0) || math.IsNaN(g) || math.IsInf(g, 0):
			if (math.IsNaN(w) || math.IsInf(w, 0)) && refs.poisoned != nil && math.IsNaN(view(refs.poisoned[i]).Float64At(j)) {
				// The evaluator's NaN or infinity came from a value
				// whose sign a rounding decides (an FFT's bin within
				// its error bound of 0 times an infinity): either
				// sign's infinity, or NaN, is right. A finite want is
				// still compared (the nudges cover a bin taken to 0).
				continue
			}
			if complex && math.IsInf(w, 0) && math.IsInf(g, 0) && math.IsNaN(wt.Float64At(j^1)) && math.IsNaN(gt.Float64At(j^1)) {
				// An infinite part beside a NaN: C99's Annex G leaves
				// its sign unspecified (csqrt(-inf + NaN i) is NaN +-
				// inf i); an implementation may take it from the NaN's
				// sign bit, which IEEE leaves open (x86 makes inf * 0
				// a NaN with the sign bit set, Go's math.NaN() not).
				continue
			}
			if !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
				return fmt.Sprintf("element %s: got %v, want %v", at(j), g, w)
			}
			continue
		}
		tol := spread + 8*eps*size + 8*minNormal
		if math.Abs(g-w) > tol {
			return fmt.Sprintf("element %s: got %v, want %v (tolerance %.3g from rounding in other floats)", at(j), g, w, tol)
		}
	}
	return ""
}

// fuzzTrips bounds the evaluator's while loops: the generator's run at
// most 4 iterations, and a mutant's that runs far more may never end.
const fuzzTrips = 10000

// fuzzSize is a program's instruction count for a fuzz input.
func fuzzSize(size uint8) int { return 4 + int(size)%45 }

// FuzzPrograms generates, checks and, on failure, shrinks and keeps
// random programs.
func FuzzPrograms(f *testing.F) {
	for seed := uint64(0); seed < 120; seed++ {
		f.Add(seed, uint8(seed*7))
	}
	f.Fuzz(func(t *testing.T, seed uint64, size uint8) {
		m, err := hlotest.RandomProgram(seed, fuzzSize(size))
		if err != nil {
			t.Fatalf("the generator made an invalid module (seed %d): %v", seed, err)
		}
		fail := inTime(func() *failure { return checkProgram(t, m, seed) })
		if fail != nil && fail.kind == "slow" {
			t.Fatalf("seed %d size %d: %v\n%s", seed, size, fail, m)
		}
		if fail != nil {
			small := minimize(t, m, seed, fail)
			path := keepFailure(t, small, seed, checkProgram(t, small, seed))
			t.Fatalf("seed %d size %d: %v\nshrunk to %s:\n%s", seed, size, fail, path, small)
		}
	})
}

// fuzzDeadline is how long one input may run while fuzzing. Go's engine
// kills a worker whose input runs 10 s, without a word of why
// (internal/fuzz's "deadlocked!" panic, golang/go#56238: the campaign
// ends in "fuzzing process hung or terminated unexpectedly: exit status
// 2" and an input that passes when rerun); a program of a few dozen small
// ops that slow is a compile-time or evaluator blowup, or a host too busy
// to fuzz on, and is reported by name before that.
const fuzzDeadline = 8 * time.Second

// inTime runs check, while fuzzing within fuzzDeadline (a check still
// running then is left to finish in the background: the worker's
// campaign ends with the report).
func inTime(check func() *failure) *failure {
	if fl := flag.Lookup("test.fuzz"); fl == nil || fl.Value.String() == "" {
		return check()
	}
	done := make(chan *failure, 1)
	go func() { done <- check() }()
	select {
	case f := <-done:
		return f
	case <-time.After(fuzzDeadline):
		return &failure{"slow", fmt.Sprintf("still running after %v, near the fuzzing engine's 10 s", fuzzDeadline)}
	}
}

// keepFailure writes a shrunk failing program to testdata/fuzz, where
// TestFuzzRegressions runs it from then on.
func keepFailure(t testing.TB, m *hlo.Module, seed uint64, fail *failure) string {
	dir := filepath.Join("testdata", "fuzz")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("cannot keep the failure: %v", err)
		return ""
	}
	path := filepath.Join(dir, fmt.Sprintf("%s_%d.hlo", strings.NewReplacer(" ", "_", "/", "_").Replace(strings.Fields(fail.kind)[0]), seed))
	text := fmt.Sprintf("// seed: %d\n// %s\n%s", seed, strings.ReplaceAll(fail.Error(), "\n", " "), m)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Logf("cannot keep the failure: %v", err)
	}
	return path
}

// refusal is how the compiler names what the device cannot run yet (the
// rest of XLA's op set is issue 17's): not a wrong answer, but counted.
var refusal = regexp.MustCompile(`not supported on the device`)

var seedLine = regexp.MustCompile(`(?m)^// seed: (\d+)$`)

// TestFuzzRegressions runs the programs the fuzzer once failed on, with
// the arguments of their seeds.
func TestFuzzRegressions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "*.hlo"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		sm := seedLine.FindSubmatch(src)
		require.NotNil(t, sm, "%s: no // seed: line", f)
		seed, _ := strconv.ParseUint(string(sm[1]), 10, 64)
		m, err := hlo.Parse(f, string(src))
		require.NoError(t, err)
		require.NoError(t, hlo.Verify(m), f)
		if fail := checkProgram(t, m, seed); fail != nil {
			t.Errorf("%s: %v", f, fail)
		}
	}
}

// minimize shrinks a failing program while it fails the same way: the
// root's other outputs dropped, then instructions replaced by parameters
// of their shape (named as they were, so they get the same arguments
// from FuzzInputs) while the failure stays, then dead code and unused
// parameters and computations dropped.
func minimize(t testing.TB, m *hlo.Module, seed uint64, fail *failure) *hlo.Module {
	same := func(c *hlo.Module) bool {
		f := checkProgram(t, c, seed)
		return f != nil && strings.Fields(f.kind)[0] == strings.Fields(fail.kind)[0]
	}
	best := m
	// One output.
	if root := best.Entry.Root; root.Op == hlo.OpTuple {
		for i := range root.Operands {
			c := clone(best)
			c.Entry.Root = c.Entry.Instructions[indexOf(best.Entry, root.Operands[i])]
			if c = tidy(c); c != nil && same(c) {
				best = c
				break
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for i := len(best.Entry.Instructions) - 1; i >= 0; i-- {
			if i >= len(best.Entry.Instructions) {
				continue
			}
			if in := best.Entry.Instructions[i]; in.Op == hlo.OpParameter || !in.Shape.IsArray() {
				continue
			}
			c := clone(best)
			x := c.Entry.Instructions[i]
			if x == c.Entry.Root {
				// The root itself: replaced by one of its operands.
				if len(x.Operands) == 0 || !x.Operands[0].Shape.IsArray() {
					continue
				}
				c.Entry.Root = x.Operands[0]
			} else {
				*x = hlo.Instruction{Name: x.Name, Op: hlo.OpParameter, Shape: x.Shape, ParamNum: len(c.Entry.Params), Pos: x.Pos}
				c.Entry.Params = append(c.Entry.Params, x)
			}
			if c = tidy(c); c != nil && same(c) {
				best, changed = c, true
			}
		}
	}
	// Then inside the called computations (loop bodies, branches): each
	// instruction but parameters and roots replaced by zeros of its
	// shape while the failure stays, and what no root reaches dropped.
	named := func(m *hlo.Module, name string) *hlo.Computation {
		for _, c := range m.Computations {
			if c.Name == name && c != m.Entry {
				return c
			}
		}
		return nil
	}
	var names []string
	for _, c := range best.Computations {
		names = append(names, c.Name)
	}
	for _, name := range names {
		comp := named(best, name)
		if comp == nil {
			continue
		}
		for i := len(comp.Instructions) - 1; i >= 0; i-- {
			if comp = named(best, name); comp == nil {
				break // dropped with what called it
			}
			if i >= len(comp.Instructions) {
				continue
			}
			if in := comp.Instructions[i]; in == comp.Root || in.Op == hlo.OpParameter || in.Op == hlo.OpConstant || !in.Shape.IsArray() {
				continue
			}
			c := clone(best)
			x := named(c, name).Instructions[i]
			zeros, err := hlo.NewLiteral(x.Shape, make([]byte, x.Shape.ByteSize()))
			if err != nil {
				continue
			}
			*x = hlo.Instruction{Name: x.Name, Op: hlo.OpConstant, Shape: x.Shape, Literal: zeros, Pos: x.Pos}
			if c = tidy(c); c != nil && same(c) {
				best = c
			}
		}
	}
	return best
}

func indexOf(c *hlo.Computation, in *hlo.Instruction) int {
	for i, x := range c.Instructions {
		if x == in {
			return i
		}
	}
	panic("not in the computation")
}

func clone(m *hlo.Module) *hlo.Module {
	c, err := hlo.Parse(m.Name, m.String())
	if err != nil {
		panic(err)
	}
	if err := hlo.Verify(c); err != nil {
		panic(err)
	}
	return c
}

// tidy drops what the root does not reach (parameters renumbered; in a
// called computation, what its root does not reach but its parameters)
// and the computations nothing calls, and returns the module printed and
// parsed again; nil where it no longer verifies.
func tidy(m *hlo.Module) *hlo.Module {
	live := map[*hlo.Instruction]bool{}
	var mark func(in *hlo.Instruction)
	mark = func(in *hlo.Instruction) {
		if live[in] {
			return
		}
		live[in] = true
		for _, o := range in.Operands {
			mark(o)
		}
	}
	mark(m.Entry.Root)
	var ins, params []*hlo.Instruction
	for _, in := range m.Entry.Instructions {
		if live[in] {
			ins = append(ins, in)
		}
	}
	for _, p := range m.Entry.Params {
		if live[p] {
			p.ParamNum = len(params)
			params = append(params, p)
		}
	}
	m.Entry.Instructions, m.Entry.Params = ins, params
	// In a called computation, what neither its root nor the caller
	// (its parameters) needs.
	for _, c := range m.Computations {
		if c != m.Entry {
			c.Instructions = c.Reachable()
		}
	}
	called := map[*hlo.Computation]bool{m.Entry: true}
	var walk func(c *hlo.Computation)
	walk = func(c *hlo.Computation) {
		for _, in := range c.Instructions {
			for _, sub := range in.Called {
				if !called[sub] {
					called[sub] = true
					walk(sub)
				}
			}
		}
	}
	walk(m.Entry)
	var comps []*hlo.Computation
	for _, c := range m.Computations {
		if called[c] {
			comps = append(comps, c)
		}
	}
	m.Computations = comps
	c, err := hlo.Parse(m.Name, m.String())
	if err != nil || hlo.Verify(c) != nil {
		return nil
	}
	return c
}

// TestFuzzChecker: the checker itself can fail, on each kind of wrong
// answer: a wrong integer, a float beyond rounding, a NaN or infinity
// where the evaluator has none.
func TestFuzzChecker(t *testing.T) {
	f32 := func(v ...float32) *vkjit.Tensor { return must(vkjit.Float32s([]int64{int64(len(v))}, v)) }
	lit := func(v ...float32) *hlo.Literal {
		x := f32(v...)
		return literalOf(x)
	}
	none := references{}
	require.Empty(t, differs(lit(1, 2.5), f32(1, 2.5), none, 0))
	require.NotEmpty(t, differs(lit(1, 2.5), f32(1, 2.5001), none, 0), "beyond 8 ulp, with no rounding to explain it")
	require.Empty(t, differs(lit(1, 2.5), f32(1, 2.5000002), none, 0), "within 8 ulp")
	require.NotEmpty(t, differs(lit(1, 2.5), f32(1, float32(math.NaN())), none, 0))
	require.NotEmpty(t, differs(lit(float32(math.Inf(1))), f32(3e38), none, 0))
	wide := references{wide: []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F64, 2), Data: binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1)), math.Float64bits(2.5001))}}}
	require.Empty(t, differs(lit(1, 2.5), f32(1, 2.5001), wide, 0), "rounding moved the evaluator's result that far")
	s := &vkjit.Tensor{Type: vkjit.S32, Dims: []int64{2}, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}}
	require.Contains(t, differs(&hlo.Literal{Shape: literalOf(s).Shape, Data: []byte{1, 0, 0, 0, 3, 0, 0, 0}}, s, none, 0), "element 1: got 2, want 3")
	negZero := float32(math.Copysign(0, -1))
	signed := references{zeroSigns: true}
	require.Contains(t, differs(lit(negZero), f32(0), signed, 0), "a zero of the other sign")
	require.Empty(t, differs(lit(negZero), f32(0), none, 0), "where the program's zeros' signs are its algorithm's")
	wideZero := references{zeroSigns: true, wide: []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F64, 1), Data: make([]byte, 8)}}}
	require.Empty(t, differs(lit(negZero), f32(0), wideZero, 0), "where an evaluation in other floats has +0")
	poisoned := func(v float32) references {
		return references{zeroSigns: true, poisoned: []*hlo.Literal{lit(v)}}
	}
	require.Contains(t, differs(lit(negZero), f32(0), poisoned(negZero), 0), "a zero of the other sign", "no op ordering its own sums reaches it")
	require.Empty(t, differs(lit(negZero), f32(0), poisoned(float32(math.NaN())), 0), "where a zero such an op computed reaches it")
	require.Empty(t, differs(lit(negZero), f32(0), poisoned(0), 0), "where such a zero decides its sign")
}

// TestRunZerosPoisoned checks the evaluation the fuzzer's zero rule
// rests on: a zero from a triangular solve poisons what it reaches, and
// a zero computed beside it keeps its sign.
func TestRunZerosPoisoned(t *testing.T) {
	m, err := hlo.Parse("m.hlo", `HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  b = f32[2,1] parameter(1)
  x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  n = f32[2,1] negate(x)
  z = f32[2,1] multiply(b, n)
  nb = f32[2,1] negate(b)
  ROOT r = (f32[2,1], f32[2,1]) tuple(z, nb)
}
`)
	require.NoError(t, err)
	f := func(cols int64, v ...float32) *hlo.Literal {
		var d []byte
		for _, x := range v {
			d = binary.LittleEndian.AppendUint32(d, math.Float32bits(x))
		}
		return &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, int64(len(v))/cols, cols), Data: d}
	}
	a, b := f(2, 1, 0, 0, 1), f(1, 0, 0)
	v, err := eval.RunZerosPoisoned(m, fuzzTrips, a, b)
	require.NoError(t, err)
	z, nb := v.Tuple[0].Lit, v.Tuple[1].Lit
	for j := range int64(2) {
		require.True(t, math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(z.Data[4*j:])))), "the solve's zero reaches z")
		require.Equal(t, math.Copysign(0, -1), float64(math.Float32frombits(binary.LittleEndian.Uint32(nb.Data[4*j:]))), "-b's zero is -0")
	}
	require.True(t, poisonsZeros(m))
}

// The verifier's mutation fuzzer: a random program's text, mutated (a
// number, a type, an opcode or an operand replaced; an attribute or a
// line deleted; two lines swapped), must either be refused with a
// position, by the parser or the verifier or, naming what the device
// lacks, by the compiler, or compile and match the evaluator: an input
// the verifier accepts must never meet an internal error.
//
//	go test -run '^$' -fuzz FuzzMutants -fuzztime 10m -timeout 0 .
func FuzzMutants(f *testing.F) {
	for seed := uint64(0); seed < 40; seed++ {
		f.Add(seed, seed*31+7)
	}
	f.Fuzz(func(t *testing.T, seed, mutation uint64) {
		m, err := hlotest.RandomProgram(seed, fuzzSize(uint8(seed)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		text := hlotest.Mutate(m.String(), mutation)
		if fail := inTime(func() *failure { return checkMutant(t, text, seed) }); fail != nil {
			t.Fatalf("seed %d mutation %d: %v\n%s", seed, mutation, fail, text)
		}
	})
}

// mutantPos is a refusal's position: in mutant.hlo, or in the module's
// own name where the checker gave the compiler a re-parsed copy
// (hlotest.HideNaNSigns: FuzzMutants seed 2274, mutation 1262, a
// collective over other processes, refused by name and position).
var mutantPos = regexp.MustCompile(`^(mutant\.hlo|fuzz_\d+):\d+:\d+: `)

// checkMutant: nil when the text is refused with a position or runs and
// matches the evaluator.
func checkMutant(t testing.TB, text string, seed uint64) *failure {
	m, err := hlo.Parse("mutant.hlo", text)
	if err == nil {
		err = hlo.Verify(m)
	}
	if err != nil {
		if !mutantPos.MatchString(err.Error()) {
			return &failure{"refused without a position", err.Error()}
		}
		return nil
	}
	for _, l := range allShapes(m) {
		if l.NumElements() > 1<<16 {
			return nil // a mutant too large to run quickly
		}
	}
	fail := checkProgram(t, m, seed)
	if fail != nil && strings.HasPrefix(fail.kind, "compile") && mutantPos.MatchString(fail.msg) && !strings.Contains(fail.msg, "internal error") {
		return nil // refused by name, with a position
	}
	if fail != nil && strings.Contains(fail.kind, " out") && reducerHangsOnOrder(m, seed) {
		return nil // a value no order is the answer for; it compiled and ran
	}
	if fail != nil && (fail.kind == "refused" || fail.kind == "endless") {
		return nil
	}
	return fail
}

// reducerHangsOnOrder reports whether m folds with a computation whose
// result hangs on the order of its steps, XLA leaving a reduction's
// order to the implementation while a device folds rows of 8 and more in
// lanes, so that no one evaluation is the answer: a reducer of one
// operand that is not one of the order-free ops (a mutant's that returns
// a parameter, or subtracts; FuzzMutants seed 292, mutation 537), or a
// reducer of several that is not the generator's own for seed, whose
// arg reducers are commutative and associative (a mutant's that kept
// the later of two tied elements gave index 16 sequentially, 4 in lanes:
// FuzzMutants seed 393, mutation 18).
func reducerHangsOnOrder(m *hlo.Module, seed uint64) bool {
	free := map[hlo.Opcode]bool{hlo.OpAdd: true, hlo.OpMultiply: true, hlo.OpMaximum: true, hlo.OpMinimum: true,
		hlo.OpAnd: true, hlo.OpOr: true, hlo.OpXor: true}
	var own map[string]string // the generator's computations, as text
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op != hlo.OpReduce && in.Op != hlo.OpReduceWindow || len(in.Called) != 1 {
				continue
			}
			r := in.Called[0]
			if len(r.Params) == 2 && !free[r.ReducerOp()] {
				return true
			}
			if len(r.Params) > 2 {
				if own == nil {
					own = map[string]string{}
					if g, err := hlotest.RandomProgram(seed, fuzzSize(uint8(seed))); err == nil {
						for _, gc := range g.Computations {
							own[gc.Name] = computationText(gc)
						}
					}
				}
				if own[r.Name] != computationText(r) {
					return true
				}
			}
		}
	}
	return false
}

// computationText is c's instructions as text.
func computationText(c *hlo.Computation) string {
	var b strings.Builder
	for _, in := range c.Instructions {
		b.WriteString(in.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func allShapes(m *hlo.Module) []hlo.Shape {
	var out []hlo.Shape
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			out = append(out, in.Shape.Leaves()...)
		}
	}
	return out
}
