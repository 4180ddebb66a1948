package vkjit_test

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
)

var rt *vkjit.Runtime

// TestMain opens one runtime with the Khronos validation layer on, and
// fails the run if the layer reported anything.
func TestMain(m *testing.M) {
	os.Setenv("VKJIT_VALIDATE", "1")
	var err error
	cacheDir, err := os.MkdirTemp("", "vkjit-cache")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(cacheDir)
	// A cache of its own: the tests measure compilation, and must not
	// fill the user's cache directory.
	rt, err = vkjit.Open(vkjit.Options{Validate: true, CacheDir: cacheDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkjit tests need a Vulkan device:", err)
		os.Exit(1)
	}
	code := m.Run()
	rt.Close()
	if msgs := vkjit.ValidationMessages(); len(msgs) > 0 {
		for _, msg := range msgs {
			fmt.Fprintln(os.Stderr, "validation:", msg)
		}
		fmt.Fprintf(os.Stderr, "FAIL: the validation layer reported %d message(s)\n", len(msgs))
		code = 1
	}
	os.Exit(code)
}

// noValidationMessages fails t if the validation layer said anything
// during the test.
func noValidationMessages(t *testing.T) {
	t.Helper()
	require.Empty(t, vkjit.ValidationMessages(), "validation layer messages")
}

// TestLlvmpipeTarget holds lower.LlvmpipeTarget, for which shaders/
// keeps the generated kernels, to what lavapipe reports (but for its
// core count, the host's).
func TestLlvmpipeTarget(t *testing.T) {
	d := rt.Device()
	if !strings.Contains(d.Name, "llvmpipe") {
		t.Skipf("the device is %s, not llvmpipe", d.Name)
	}
	got, want := rt.Target(), lower.LlvmpipeTarget
	got.Cores = want.Cores
	require.Equal(t, want, got, "lavapipe's target changed: update lower.LlvmpipeTarget and regenerate shaders/ (make shaders)")
}

// TestSmallGraphByHand runs a chain of elementwise ops on two f32
// arguments and compares with values worked out independently.
func TestSmallGraphByHand(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("chain.hlo", `HloModule chain
ENTRY main {
  x = f32[5] parameter(0)
  y = f32[5] parameter(1)
  s = f32[5] add(x, y)
  p = f32[5] multiply(s, x)
  c = f32[5] constant({1, 2, 3, 4, 5})
  d = f32[5] subtract(p, c)
  ROOT m = f32[5] maximum(d, y)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x, _ := vkjit.Float32s([]int64{5}, []float32{1, 2, 3, 4, 5})
	y, _ := vkjit.Float32s([]int64{5}, []float32{0.5, -1, 2, float32(math.NaN()), 100})
	outs, st, err := exe.Run(x, y)
	require.NoError(t, err)
	got, err := outs[0].AsFloat32()
	require.NoError(t, err)
	// (x+y)*x - c, then max with y (NaN propagates):
	// (1.5*1-1, 1*2-2, 5*3-3, NaN, 105*5-5) vs y
	want := []float32{0.5, 0, 12, float32(math.NaN()), 520}
	for i := range want {
		if math.IsNaN(float64(want[i])) {
			require.True(t, math.IsNaN(float64(got[i])), "element %d: %v", i, got[i])
			continue
		}
		require.Equal(t, want[i], got[i], "element %d", i)
	}
	// Loop fusion computes the chain in one kernel: no temporaries.
	require.Equal(t, 1, st.Dispatches)
	require.Equal(t, 1, exe.Stats.Kernels)
	align := int64(rt.Target().StorageAlign)
	require.Equal(t, int64(3*20)+(20+align-1)/align*align, st.PeakDeviceBytes, "2 params, 1 constant, the result in the arena")
}

// tolerance is the largest error in units in the last place that a
// device result may have for op; 0 means bit-exact. Vulkan allows 2.5 ulp
// for division and inherits sqrt's bound from inversesqrt's 2 ulp.
func tolerance(op hlo.Opcode) int64 {
	switch op {
	case hlo.OpDivide, hlo.OpSqrt:
		return 3
	}
	for _, c := range accuracyCases { // the device math library's bounds
		if c.op == op.String() {
			return c.bound
		}
	}
	return 0
}

// TestElementwiseDifferential runs every supported elementwise op and
// type on the device and compares with the reference evaluator, on sizes
// 0, 1, and sizes that are not multiples of the workgroup size.
func TestElementwiseDifferential(t *testing.T) {
	defer noValidationMessages(t)
	// 1032 elements make vector kernels (8 per invocation, vector.go).
	for _, n := range []int64{0, 1, 67, 1000, 1032} {
		ran := 0
		cases := hlotest.ElementwiseCases(n)
		for _, ft := range []hlo.ElementType{hlo.F32, hlo.F64, hlo.BF16, hlo.F16} {
			cases = append(cases, hlotest.TotalOrderCases(ft, n)...)
		}
		for _, c := range cases {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err)
			exe, err := rt.Compile(m, vkjit.CompileOptions{})
			if err != nil {
				require.Contains(t, err.Error(), c.Op.String())
				continue
			}
			ran++
			ts, want, outs := runBoth(t, exe, m, uint64(n)*7919+uint64(len(c.Name)), c.Name)
			w := want.Leaves()[0]
			g := outs[0]
			require.Equal(t, w.Shape.Elem, g.Type, c.Name)
			tol := tolerance(c.Op)
			for i := int64(0); i < n; i++ {
				wv := (&vkjit.Tensor{Type: w.Shape.Elem, Dims: w.Shape.Dims, Data: w.Data}).Float64At(i)
				gv := g.Float64At(i)
				if g.Type.IsFloat() {
					if d := hlotest.ULPs(g.Type, wv, gv); d > tol {
						t.Errorf("%s[%d] of %d: want %v, got %v (%d ulp; inputs %s)", c.Name, i, n, wv, gv, d, describeInputs(ts, i))
					}
					continue
				}
				wb := w.Data[i*int64(w.Shape.Elem.Bytes()) : (i+1)*int64(w.Shape.Elem.Bytes())]
				gb := g.Data[i*int64(g.Type.Bytes()) : (i+1)*int64(g.Type.Bytes())]
				if string(wb) != string(gb) {
					t.Errorf("%s[%d] of %d: want %v, got %v (inputs %s)", c.Name, i, n, wv, gv, describeInputs(ts, i))
				}
			}
		}
		require.Greater(t, ran, 200)
	}
}

// runBoth runs exe on random inputs and the reference evaluator on the
// same inputs, closes exe, and returns the inputs and both results.
func runBoth(t *testing.T, exe *vkjit.Executable, m *hlo.Module, seed uint64, name string) ([]*vkjit.Tensor, *eval.Value, []*vkjit.Tensor) {
	return runBothOn(t, exe, m, hlotest.Inputs(m, seed), name)
}

func runBothOn(t *testing.T, exe *vkjit.Executable, m *hlo.Module, args []*hlo.Literal, name string) ([]*vkjit.Tensor, *eval.Value, []*vkjit.Tensor) {
	t.Helper()
	defer exe.Close()
	want, err := eval.Run(m, args...)
	require.NoError(t, err, name)
	ts := make([]*vkjit.Tensor, len(args))
	for i, a := range args {
		ts[i] = &vkjit.Tensor{Type: a.Shape.Elem, Dims: a.Shape.Dims, Data: a.Data}
	}
	outs, _, err := exe.Run(ts...)
	require.NoError(t, err, name)
	return ts, want, outs
}

// requireExact compiles a module, runs it on the device and in the
// reference evaluator on the same inputs, and requires every result leaf
// to match bit for bit: with fusion and buffer reuse, and without.
func requireExact(t *testing.T, name, text string, inputs func(*hlo.Module) []*hlo.Literal) {
	t.Helper()
	m, err := hlo.Parse(name, text)
	require.NoError(t, err, text)
	require.NoError(t, hlo.Verify(m), name)
	for _, opts := range []lower.Options{{}, {NoFuse: true, NoReuse: true}} {
		exe, err := rt.Compile(m, vkjit.CompileOptions{Lower: opts})
		require.NoError(t, err, name)
		_, want, outs := runBothOn(t, exe, m, inputs(m), name)
		for i, w := range want.Leaves() {
			require.Equal(t, string(w.Data), string(outs[i].Data), "%s out%d (%+v)", name, i, opts)
		}
	}
}

// edgeInputs and smallInts choose requireExact's inputs: edge cases
// (NaN, infinities, extremes), or small integers for ops whose
// accumulation order would otherwise show.
func edgeInputs(seed uint64) func(*hlo.Module) []*hlo.Literal {
	return func(m *hlo.Module) []*hlo.Literal { return hlotest.Inputs(m, seed) }
}

func smallInts(seed uint64) func(*hlo.Module) []*hlo.Literal {
	return func(m *hlo.Module) []*hlo.Literal { return hlotest.SmallIntInputs(m, seed) }
}

func describeInputs(ts []*vkjit.Tensor, i int64) string {
	s := ""
	for j, x := range ts {
		if j > 0 {
			s += ", "
		}
		s += fmt.Sprint(x.Float64At(i))
	}
	return s
}

// TestLargeGrid crosses maxComputeWorkGroupCount[0] workgroups, so the
// dispatch needs a second grid dimension.
func TestLargeGrid(t *testing.T) {
	defer noValidationMessages(t)
	const n = 65535*64 + 100
	exe, err := rt.CompileText("big.hlo", fmt.Sprintf(`HloModule big
ENTRY main {
  x = s32[%d] parameter(0)
  y = s32[%d] parameter(1)
  ROOT s = s32[%d] add(x, y)
}`, n, n, n), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	xs, ys := make([]int32, n), make([]int32, n)
	for i := range xs {
		xs[i], ys[i] = int32(i), int32(3*i)
	}
	x, _ := vkjit.Int32s([]int64{n}, xs)
	y, _ := vkjit.Int32s([]int64{n}, ys)
	outs, _, err := exe.Run(x, y)
	require.NoError(t, err)
	for _, i := range []int64{0, 1, 65535 * 64, n - 1} {
		require.Equal(t, float64(4*i), outs[0].Float64At(i), "element %d", i)
	}
}

func TestArgumentErrors(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("args.hlo", `HloModule args
ENTRY main {
  a = f32[2,3] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[2,3], s32[]) tuple(a, b)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	good, _ := vkjit.Float32s([]int64{2, 3}, make([]float32, 6))
	scalar, _ := vkjit.Int32s(nil, []int32{7})
	wrongShape, _ := vkjit.Float32s([]int64{3, 2}, make([]float32, 6))
	wrongType, _ := vkjit.Int32s([]int64{2, 3}, make([]int32, 6))

	_, _, err = exe.Run(good)
	require.ErrorContains(t, err, "takes 2 arguments, got 1")
	_, _, err = exe.Run(wrongShape, scalar)
	require.ErrorContains(t, err, "argument 0 (parameter a): want shape f32[2,3], got f32[3,2]")
	_, _, err = exe.Run(good, good)
	require.ErrorContains(t, err, "argument 1 (parameter b): want element type s32, got f32")
	_, _, err = exe.Run(wrongType, scalar)
	require.ErrorContains(t, err, "parameter a")

	outs, _, err := exe.Run(good, scalar)
	require.NoError(t, err)
	require.Len(t, outs, 2, "a tuple result is flattened")
	require.Equal(t, float64(7), outs[1].Float64At(0))
}

func TestConcurrentRuns(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("conc.hlo", `HloModule conc
ENTRY main {
  x = f32[100] parameter(0)
  ROOT y = f32[100] multiply(x, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			v := make([]float32, 100)
			for i := range v {
				v[i] = float32(g)
			}
			x, _ := vkjit.Float32s([]int64{100}, v)
			for r := 0; r < 5; r++ {
				outs, _, err := exe.Run(x)
				if err != nil {
					errs <- err
					return
				}
				if got := outs[0].Float64At(99); got != float64(g*g) {
					errs <- fmt.Errorf("goroutine %d: got %v", g, got)
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		require.NoError(t, <-errs)
	}
}

// TestDataMovementDifferential runs every data-movement op on the device
// for several element types and requires bit-exact agreement with the
// reference evaluator.
func TestDataMovementDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.PRED, hlo.F64, hlo.BF16, hlo.F16, hlo.S8, hlo.U16} {
		for _, c := range hlotest.DataMovementCases(ty) {
			if c.Name == "iota_pred" {
				continue
			}
			requireExact(t, c.Name, c.Text, edgeInputs(99))
		}
	}
}

// TestReduceDifferential runs reductions on the device. They fold in the
// evaluator's order, so results agree exactly (up to flushed denormals).
func TestReduceDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.BF16, hlo.S8, hlo.U16} {
		for _, c := range hlotest.ReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, vkjit.CompileOptions{})
			require.NoError(t, err, c.Name)
			_, want, outs := runBoth(t, exe, m, 5, c.Name)
			for i, w := range want.Leaves() {
				g := outs[i]
				for j := int64(0); j < g.NumElements(); j++ {
					wv := (&vkjit.Tensor{Type: w.Shape.Elem, Dims: w.Shape.Dims, Data: w.Data}).Float64At(j)
					if g.Type.IsFloat() {
						require.Zero(t, hlotest.ULPs(g.Type, wv, g.Float64At(j)), "%s out%d[%d]: want %v got %v", c.Name, i, j, wv, g.Float64At(j))
					} else {
						require.Equal(t, wv, g.Float64At(j), "%s out%d[%d]", c.Name, i, j)
					}
				}
			}
		}
	}
}

// TestCallsAndFusionsInline runs a module whose work sits in called and
// fused computations, with parameters listed out of order.
func TestCallsAndFusionsInline(t *testing.T) {
	defer noValidationMessages(t)
	m, err := hlo.Parse("calls.hlo", `HloModule calls
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  x = f32[4,3] parameter(0)
  y = f32[3] parameter(1)
  b = f32[4,3] broadcast(y), dimensions={1}
  ROOT m = f32[4,3] multiply(x, b)
}
inner {
  p = f32[4,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY main {
  y = f32[3] parameter(1)
  x = f32[4,3] parameter(0)
  f = f32[4,3] fusion(x, y), kind=kLoop, calls=fused
  o = f32[4,3] opt-barrier(f)
  ROOT c = f32[4] call(o), to_apply=inner
}`)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, len(exe.Program().Steps), "broadcast and multiply fused into the reduce")
	_, want, outs := runBoth(t, exe, m, 11, "calls")
	require.Equal(t, string(want.Leaves()[0].Data), string(outs[0].Data))
}

// TestDotDifferential runs dots and convolutions on small-integer data,
// where every accumulation order is exact, and requires bit-exact results.
func TestDotDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range append(hlotest.DotCases(), hlotest.ConvolutionCases()...) {
		requireExact(t, c.Name, c.Text, smallInts(3))
	}
}

// TestReduceWindowDifferential runs reduce-window on the device, in the
// evaluator's order: results agree exactly.
func TestReduceWindowDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.BF16} {
		for _, c := range hlotest.ReduceWindowCases(ty) {
			requireExact(t, c.Name, c.Text, smallInts(8))
		}
	}
}

// TestControlFlow runs while loops and conditionals (pred and index
// forms) on the device, the predicate read back to the host.
func TestControlFlow(t *testing.T) {
	defer noValidationMessages(t)
	for name, text := range map[string]string{
		"while": `HloModule w
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4] add(x, x)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}`,
		"conditional": `HloModule c
neg {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
dbl {
  a = f32[3] parameter(0)
  ROOT n = f32[3] add(a, a)
}
ENTRY main {
  x = f32[3] parameter(0)
  k = s32[] constant(7)
  c1 = f32[3] conditional(k, x, x), branch_computations={neg, dbl}
  p = pred[] constant(true)
  ROOT c2 = f32[3] conditional(p, c1, x), true_computation=neg, false_computation=dbl
}`,
		"conditional_false_first": `HloModule c
neg {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
dbl {
  a = f32[3] parameter(0)
  ROOT n = f32[3] add(a, a)
}
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] multiply(x, x)
  p = pred[] constant(true)
  ROOT c = f32[3] conditional(p, x, y), false_computation=dbl, true_computation=neg
}`,
		"tuple_param": `HloModule tp
ENTRY main {
  t = (f32[2], s32[2]) parameter(0)
  a = f32[2] get-tuple-element(t), index=0
  ROOT b = f32[2] multiply(a, a)
}`,
	} {
		requireExact(t, name, text, smallInts(2))
	}
}

// TestScatterDifferential runs scatter and gather on the device: scatter
// applies updates in the evaluator's order, so results agree exactly.
func TestScatterDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.BF16, hlo.U8} {
		for _, c := range append(hlotest.ScatterCases(ty), hlotest.GatherCases(ty)...) {
			requireExact(t, c.Name, c.Text, smallInts(4))
		}
	}
}

func TestWideConcatenate(t *testing.T) {
	defer noValidationMessages(t)
	var params, names []string
	for i := 0; i < 70; i++ {
		params = append(params, fmt.Sprintf("  p%d = s32[1,3] parameter(%d)", i, i))
		names = append(names, fmt.Sprintf("p%d", i))
	}
	src := "HloModule wide\nENTRY e {\n" + strings.Join(params, "\n") + "\n  ROOT c = s32[70,3] concatenate(" + strings.Join(names, ", ") + "), dimensions={0}\n}"
	requireExact(t, "wide.hlo", src, edgeInputs(1))
}

// accuracyCase is one function of the device math library: inputs (one
// or two operands per element), the float64 reference and the largest
// error allowed, in f32 ulp.
type accuracyCase struct {
	op    string
	ref   func(x, y float64) float64
	gen   func(rng *rand.Rand, i, n int) (x, y float32)
	bound int64
}

// anyBits is a random f32 over the whole domain: subnormals, infinities
// and NaN included.
func anyBits(rng *rand.Rand) float32 { return math.Float32frombits(rng.Uint32()) }

// sweep is the i-th of n points spread evenly over [lo, hi].
func sweep(i, n int, lo, hi float64) float32 { return float32(lo + (hi-lo)*float64(i)/float64(n)) }

// unary makes a generator that alternates random bit patterns with a
// dense sweep of [lo, hi].
func unary(lo, hi float64) func(*rand.Rand, int, int) (float32, float32) {
	return func(rng *rand.Rand, i, n int) (float32, float32) {
		if i%2 == 0 {
			return sweep(i, n, lo, hi), 0
		}
		return anyBits(rng), 0
	}
}

var accuracyCases = []accuracyCase{
	{"exponential", func(x, _ float64) float64 { return math.Exp(x) }, unary(-104, 89), 2},
	{"exponential-minus-one", func(x, _ float64) float64 { return math.Expm1(x) }, unary(-2, 2), 3},
	{"log", func(x, _ float64) float64 { return math.Log(x) }, func(rng *rand.Rand, i, n int) (float32, float32) {
		if i%2 == 0 {
			return float32(math.Exp(-90 + 180*float64(i)/float64(n))), 0
		}
		return anyBits(rng), 0
	}, 2},
	{"log-plus-one", func(x, _ float64) float64 { return math.Log1p(x) }, unary(-1, 2), 2},
	{"logistic", func(x, _ float64) float64 { return 1 / (1 + math.Exp(-x)) }, unary(-100, 100), 4},
	{"tanh", func(x, _ float64) float64 { return math.Tanh(x) }, unary(-10, 10), 2},
	{"sine", func(x, _ float64) float64 { return math.Sin(x) }, unary(-100, 100), 3},
	{"cosine", func(x, _ float64) float64 { return math.Cos(x) }, unary(-100, 100), 3},
	{"tan", func(x, _ float64) float64 { return math.Tan(x) }, unary(-10, 10), 3},
	{"erf", func(x, _ float64) float64 { return math.Erf(x) }, unary(-5, 5), 3},
	{"cbrt", func(x, _ float64) float64 { return math.Cbrt(x) }, unary(-1000, 1000), 2},
	{"rsqrt", func(x, _ float64) float64 { return 1 / math.Sqrt(x) }, unary(0, 1000), 3},
	{"atan2", math.Atan2, func(rng *rand.Rand, i, n int) (float32, float32) {
		if i%2 == 0 {
			return float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		return anyBits(rng), anyBits(rng)
	}, 4},
	{"power", math.Pow, func(rng *rand.Rand, i, n int) (float32, float32) {
		switch i % 4 {
		case 0:
			return float32(rng.Float64() * 10), float32(rng.Float64()*60 - 30)
		case 1:
			return float32(-rng.Float64() * 4), float32(math.Round(rng.Float64()*40 - 20)) // negative bases, integer powers
		case 2:
			// Powers of two (of either sign) to powers whose results lie
			// near overflow and underflow: 2^(k y) for k y in [110, 150]
			// or [-160, -120], integer or not.
			k := float64(rng.IntN(32) - 16)
			if k == 0 {
				k = 1
			}
			e := 110 + 40*rng.Float64()
			if rng.IntN(2) == 0 {
				e = -120 - 40*rng.Float64()
			}
			if rng.IntN(2) == 0 {
				e = math.Round(e)
			}
			x := float32(math.Ldexp(1, int(k)))
			if rng.IntN(4) == 0 {
				x = -x
			}
			return x, float32(e / k)
		}
		return anyBits(rng), anyBits(rng)
	}, 3},
	{"remainder", math.Mod, func(rng *rand.Rand, i, n int) (float32, float32) {
		if i%2 == 0 {
			return float32(rng.NormFloat64() * 1e6), float32(rng.NormFloat64())
		}
		return anyBits(rng), anyBits(rng)
	}, 0},
}

// TestTranscendentalAccuracy measures the largest error, in ulp, of each
// function of the device math library against float64 rounded to f32,
// over a million inputs each. docs/ACCURACY.md records the figures; the
// bounds here keep them from regressing.
func TestTranscendentalAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 20
	for _, tc := range accuracyCases {
		t.Run(tc.op, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			xs, ys := make([]float32, n), make([]float32, n)
			for i := range xs {
				xs[i], ys[i] = tc.gen(rng, i, n)
			}
			op, _ := hlo.LookupOpcode(tc.op)
			binary := op.Arity() == 2
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT r = f32[%d] %s(x)\n}", n, n, tc.op)
			if binary {
				src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  y = f32[%d] parameter(1)\n  ROOT r = f32[%d] %s(x, y)\n}", n, n, n, tc.op)
			}
			exe, err := rt.CompileText(tc.op, src, vkjit.CompileOptions{})
			require.NoError(t, err)
			args := []*vkjit.Tensor{must(vkjit.Float32s([]int64{n}, xs))}
			if binary {
				args = append(args, must(vkjit.Float32s([]int64{n}, ys)))
			}
			outs, _, err := exe.Run(args...)
			exe.Close()
			require.NoError(t, err)
			got, _ := outs[0].AsFloat32()
			worst, at := int64(0), 0
			for i := range xs {
				want := float64(float32(tc.ref(float64(xs[i]), float64(ys[i]))))
				if d := hlotest.ULPs(hlo.F32, want, float64(got[i])); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s: max error %d ulp (at x=%g y=%g: got %g, want %g)", tc.op, worst, xs[at], ys[at], got[at], float32(tc.ref(float64(xs[at]), float64(ys[at]))))
			require.LessOrEqual(t, worst, tc.bound, tc.op)
		})
	}
}

// TestExpNonPositive: softmax's exponentials, exp(v - max(v)) with the
// max taken over v's row, use mathlib.go's expNonPositive; fused and
// unfused, their bits are exp's over [-110, 0] (subnormal results and
// -inf included), and NaN in a row gives NaN across it.
func TestExpNonPositive(t *testing.T) {
	defer noValidationMessages(t)
	const rows, cols = 64, 4096
	xs := make([]float32, rows*cols)
	for i := range xs {
		xs[i] = sweep(i, len(xs), -110, 0)
		if i%cols == 0 {
			xs[i] = 0 // each row's max, so that v - max is v
		}
	}
	xs[7], xs[9], xs[11] = float32(math.Inf(-1)), float32(math.Copysign(0, -1)), -math.SmallestNonzeroFloat32
	nanRow := 5
	xs[nanRow*cols+100] = float32(math.NaN())
	shifted := fmt.Sprintf(`HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[%[1]d,%[2]d] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[%[1]d] reduce(x, ninf), dimensions={1}, to_apply=mx
  b = f32[%[1]d,%[2]d] broadcast(m), dimensions={0}
  d = f32[%[1]d,%[2]d] subtract(x, b)
  ROOT e = f32[%[1]d,%[2]d] exponential(d)
}`, rows, cols)
	plain := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%[1]d,%[2]d] parameter(0)\n  ROOT e = f32[%[1]d,%[2]d] exponential(x)\n}", rows, cols)
	run := func(src string, opts vkjit.CompileOptions) []float32 {
		exe, err := rt.CompileText("exp", src, opts)
		require.NoError(t, err)
		defer exe.Close()
		outs, _, err := exe.Run(must(vkjit.Float32s([]int64{rows, cols}, xs)))
		require.NoError(t, err)
		got, _ := outs[0].AsFloat32()
		return got
	}
	want := run(plain, vkjit.CompileOptions{})
	for _, opts := range []vkjit.CompileOptions{{}, {Lower: lower.Options{NoFuse: true}}} {
		got := run(shifted, opts)
		for i := range got {
			if i/cols == nanRow {
				require.True(t, math.IsNaN(float64(got[i])), "NaN row, element %d: %g", i, got[i])
				continue
			}
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "exp(%g) (no-fuse %v): %g against %g", xs[i], opts.Lower.NoFuse, got[i], want[i])
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSortDifferential runs stable sorts on the device; with ties in the
// keys, the positions (an iota operand) show stability.
func TestSortDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.BF16, hlo.U16} {
		for _, c := range hlotest.SortCases(ty) {
			requireExact(t, c.Name, c.Text, smallInts(6))
		}
	}
}

func TestTopK(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f32", "bf16"} {
		for _, largest := range []bool{true, false} {
			src := fmt.Sprintf("HloModule topk\nENTRY e {\n  x = %s[3,17] parameter(0)\n  ROOT t = (%s[3,5], s32[3,5]) topk(x), k=5, largest=%v\n}", ty, ty, largest)
			name := fmt.Sprintf("topk_%s_largest_%v", ty, largest)
			requireExact(t, name, src, edgeInputs(3)) // edge cases: NaN, inf, ties
			// Long rows: cut into chunks of 1000 first (expand.go,
			// topKChunk), or sorted whole (4099 has no divisor to cut by);
			// small integers tie often, so the lower index must win.
			for _, n := range []int{6000, 4099} {
				src := fmt.Sprintf("HloModule topk\nENTRY e {\n  x = %s[2,%d] parameter(0)\n  ROOT t = (%s[2,7], s32[2,7]) topk(x), k=7, largest=%v\n}", ty, n, ty, largest)
				requireExact(t, fmt.Sprintf("%s_%d_edges", name, n), src, edgeInputs(4))
				requireExact(t, fmt.Sprintf("%s_%d_ties", name, n), src, smallInts(5))
			}
		}
	}
}

// TestLongReductions: reductions longer than one invocation may loop on
// llvmpipe (65535 iterations) are split into partial reductions. Integer
// sums and argmax (ties to the lower index) must be exact; an f32 sum
// agrees to rounding.
func TestLongReductions(t *testing.T) {
	defer noValidationMessages(t)
	add := "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
	requireExact(t, "sum_s32", "HloModule m\n"+add+"ENTRY e {\n  x = s32[200003] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add\n}", smallInts(1))
	requireExact(t, "sum_s32_2d", "HloModule m\n"+add+"ENTRY e {\n  x = s32[5,300,700] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[5] reduce(x, z), dimensions={2,1}, to_apply=add\n}", smallInts(2))
	argmax := `HloModule m
cmp {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  eqlt = pred[] and(eq, lt)
  pick = pred[] or(gt, eqlt)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[3,70001] parameter(0)
  ix = s32[3,70001] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(x, ix, ninf, z), dimensions={1}, to_apply=cmp
}`
	requireExact(t, "argmax", argmax, smallInts(3)) // small integers: many ties
	m, err := hlo.Parse("sum_f32", "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[1000000] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}")
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs := runBoth(t, exe, m, 4, "sum_f32")
	w := (&vkjit.Tensor{Type: hlo.F32, Data: want.Leaves()[0].Data}).Float64At(0)
	require.InEpsilon(t, w, outs[0].Float64At(0), 1e-5)
}

// TestTiledGemm runs dots big enough for the register-tiled kernel, with
// edges that are not multiples of the tile, batch dimensions, a
// contracting dimension in either position and a bias-and-ReLU epilogue,
// against the reference evaluator (which sums in float64: the device's
// f32 sums agree to a few units of rounding of the largest partial sum).
func TestTiledGemm(t *testing.T) {
	defer noValidationMessages(t)
	for _, src := range []string{
		"HloModule m\nENTRY e {\n  a = f32[250,301] parameter(0)\n  b = f32[301,260] parameter(1)\n  ROOT c = f32[250,260] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"HloModule m\nENTRY e {\n  a = f32[2,300,203] parameter(0)\n  b = f32[2,150,300] parameter(1)\n  ROOT c = f32[2,203,150] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}\n}",
		"HloModule m\nENTRY e {\n  x = f32[256,300] parameter(0)\n  w = f32[300,257] parameter(1)\n  b = f32[257] parameter(2)\n  h = f32[256,257] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = f32[256,257] broadcast(b), dimensions={1}\n  z = f32[256,257] add(h, bb)\n  zero = f32[] constant(0)\n  zs = f32[256,257] broadcast(zero), dimensions={}\n  ROOT y = f32[256,257] maximum(z, zs)\n}",
		// vec4 operands (k and n multiples of 4): odd m, a partial last
		// column tile, batch dimensions, an epilogue.
		"HloModule m\nENTRY e {\n  a = f32[2,203,300] parameter(0)\n  b = f32[2,300,148] parameter(1)\n  ROOT c = f32[2,203,148] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  x = f32[255,300] parameter(0)\n  w = f32[300,260] parameter(1)\n  b = f32[260] parameter(2)\n  h = f32[255,260] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = f32[255,260] broadcast(b), dimensions={1}\n  z = f32[255,260] add(h, bb)\n  ROOT y = f32[255,260] tanh(z)\n}",
		// Transposed operands read as vec4s across rows (lhs) and along
		// k (rhs); one operand vec4, the other scalar (n = 10); one
		// buffer as both operands; an epilogue reading an operand.
		"HloModule m\nENTRY e {\n  a = f32[300,252] parameter(0)\n  b = f32[260,300] parameter(1)\n  ROOT c = f32[252,260] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[4000,512] parameter(0)\n  b = f32[512,10] parameter(1)\n  ROOT c = f32[4000,10] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"HloModule m\nENTRY e {\n  a = f32[256,300] parameter(0)\n  ROOT c = f32[256,256] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] parameter(1)\n  h = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT y = f32[256,256] multiply(h, a)\n}",
		// Octets (wide loads with storage loads): the rhs across columns with a
		// last tile of 8 columns and batches; both operands across, the
		// last rhs octet clamped.
		"HloModule m\nENTRY e {\n  a = f32[2,96,64] parameter(0)\n  b = f32[2,64,136] parameter(1)\n  ROOT c = f32[2,96,136] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[64,200] parameter(0)\n  b = f32[64,264] parameter(1)\n  ROOT c = f32[200,264] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}",
	} {
		m, err := hlo.Parse("gemm", src)
		require.NoError(t, err)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		name := exe.Program().Kernels[0].Name
		require.Contains(t, name, "gemm8x", "the tiled kernel")
		vec := !strings.Contains(src, "301") // k a multiple of 4
		require.Equal(t, vec, strings.Contains(name, "_vec4"), "%s: %s", name, src)
		args := hlotest.UniformInputs(m, 5)
		_, want, outs := runBothOn(t, exe, m, args, "gemm")
		w := want.Leaves()[0]
		for i := int64(0); i < w.Shape.NumElements(); i++ {
			wv := (&vkjit.Tensor{Type: hlo.F32, Data: w.Data}).Float64At(i)
			require.InDelta(t, wv, outs[0].Float64At(i), 1e-4, "element %d", i)
		}
		// The GPUs' form, blocks staged through shared memory (forced on
		// lavapipe): the same sums in the same order, bit for bit.
		exe, err = rt.Compile(m, vkjit.CompileOptions{Lower: lower.Options{SharedGemm: true}})
		require.NoError(t, err)
		require.Contains(t, exe.Program().Kernels[0].Name, "_shared64x64", src)
		_, _, shared := runBothOn(t, exe, m, args, "gemm shared")
		require.Equal(t, outs[0].Data, shared[0].Data, src)
		// The other ways to read the operands on lavapipe, storage loads
		// of octets or of vec4s instead of texel fetches: the same values.
		for _, opts := range []lower.Options{{StorageLoads: true}, {StorageLoads: true, Vec4Access: true}} {
			exe, err = rt.Compile(m, vkjit.CompileOptions{Lower: opts})
			require.NoError(t, err)
			_, _, other := runBothOn(t, exe, m, args, "gemm storage loads")
			require.Equal(t, outs[0].Data, other[0].Data, "%s %+v", src, opts)
		}
	}
}

// TestTiledGemmNarrow: bf16 and f16 dots take the tiled kernel too (8x8
// tiles, operands widened as loaded, sums in f32 as the general kernel
// makes them, the result rounded once), with an epilogue, and with a
// reshape of the result as JAX writes a batched dot's (stored at the
// same row-major positions); narrow results within an ulp of the
// reference's (f32 ones within 1e-5), and the same bits with storage
// loads as through texel views.
func TestTiledGemmNarrow(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ src, kernel string }{
		{"HloModule m\nENTRY e {\n  a = bf16[130,200] parameter(0)\n  b = bf16[200,70] parameter(1)\n  ROOT c = bf16[130,70] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", "gemm8x8_bf16"},
		{"HloModule m\nENTRY e {\n  a = f16[3,64,100] parameter(0)\n  b = f16[3,100,72] parameter(1)\n  ROOT c = f32[3,64,72] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}", "gemm8x8_f16_f32"},
		{"HloModule m\nENTRY e {\n  x = bf16[128,96] parameter(0)\n  w = bf16[96,100] parameter(1)\n  b = bf16[100] parameter(2)\n  h = bf16[128,100] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = bf16[128,100] broadcast(b), dimensions={1}\n  ROOT y = bf16[128,100] add(h, bb)\n}", "gemm8x8_bf16_add"},
		{"HloModule m\nENTRY e {\n  a = bf16[12,128,64] parameter(0)\n  b = bf16[12,64,96] parameter(1)\n  d = bf16[12,128,96] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n  ROOT r = bf16[1,12,128,96] reshape(d)\n}", "gemm8x8_bf16_reshape"},
	} {
		m, err := hlo.Parse("gemm", c.src)
		require.NoError(t, err)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		require.Equal(t, c.kernel, exe.Program().Kernels[0].Name, c.src)
		args := hlotest.UniformInputs(m, 5)
		_, want, outs := runBothOn(t, exe, m, args, "gemm")
		w := want.Leaves()[0]
		wt := &vkjit.Tensor{Type: w.Shape.Elem, Dims: w.Shape.Dims, Data: w.Data}
		for i := range w.Shape.NumElements() {
			wv, gv := wt.Float64At(i), outs[0].Float64At(i)
			if w.Shape.Elem == hlo.F32 { // sums of 100 products: a few f32 ulps from the reference's order
				require.InDelta(t, wv, gv, 1e-5*math.Max(1, math.Abs(wv)), "%s: element %d", c.kernel, i)
				continue
			}
			require.LessOrEqual(t, hlotest.ULPs(w.Shape.Elem, wv, gv), int64(1), "%s: element %d", c.kernel, i)
		}
		exe, err = rt.Compile(m, vkjit.CompileOptions{Lower: lower.Options{StorageLoads: true}})
		require.NoError(t, err)
		_, _, other := runBothOn(t, exe, m, args, "gemm storage loads")
		require.Equal(t, outs[0].Data, other[0].Data, c.kernel)
	}
}

// TestManyRuns: 1000 runs of one executable keep device memory and the
// Go heap flat (finished runs' buffers are reused, not leaked).
func TestManyRuns(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("loop", `HloModule m
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[64] exponential(x)
  z = f32[64] negate(y)
  ROOT t = (s32[], f32[64]) tuple(i1, z)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64]) tuple(zero, x)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT r = f32[64] get-tuple-element(w), index=1
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x, _ := vkjit.Float32s([]int64{64}, make([]float32, 64))
	var peak int64
	var ms runtime.MemStats
	var heap uint64
	var mem pool.Stats
	for i := 0; i < 1000; i++ {
		_, st, err := exe.Run(x)
		require.NoError(t, err)
		if i == 0 {
			peak = st.PeakDeviceBytes
			mem = must(rt.MemoryStats())
		}
		require.Equal(t, peak, st.PeakDeviceBytes, "run %d", i)
		if i == 99 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc >= heap+1<<20 {
		// Something else of the process may have allocated once (it
		// happened in one full staged run of the package: 1.2 MB); a
		// leak keeps growing over the next 900 runs.
		heap = ms.HeapAlloc
		for i := 0; i < 900; i++ {
			_, _, err := exe.Run(x)
			require.NoError(t, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
	}
	require.Less(t, ms.HeapAlloc, heap+1<<20, "the Go heap grew by more than 1 MiB over 900 runs")
	after := must(rt.MemoryStats())
	require.Equal(t, mem.ReservedBytes, after.ReservedBytes, "device memory reserved after run 1 and run 1000")
	require.Equal(t, mem.InUseBytes, after.InUseBytes, "between runs only the constants are in use")
	require.Equal(t, mem.Allocations, after.Allocations)
}

// log64 is math.Log, except for subnormals, where Go's amd64 math.Log
// is wrong (math.Log(1e-310) gives -709.08 instead of -713.80).
func log64(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// TestTranscendentalAccuracy64 measures the f64 library against Go's
// math package (itself within 1 ulp), over random bit patterns and a
// sweep of the interesting range.
func TestTranscendentalAccuracy64(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 18
	for _, tc := range []struct {
		op     string
		ref    func(float64) float64
		lo, hi float64
		bound  int64
	}{
		{"exponential", eval.Exp, -745, 709.78, 2}, // Go's amd64 math.Exp overflows from 709.44
		{"exponential-minus-one", math.Expm1, -3, 3, 2},
		{"log", log64, 1e-300, 1e300, 2},
		{"log-plus-one", math.Log1p, -1, 3, 2},
		{"logistic", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -40, 40, 4},
		{"tanh", math.Tanh, -5, 5, 3},
		{"cbrt", math.Cbrt, -1000, 1000, 2},
		{"erf", math.Erf, -6, 6, 2},
		// Random bit patterns reach every magnitude: the reduction is
		// Payne and Hanek's throughout (eval's reference is exact).
		{"sine", eval.Sin, -100, 100, 2},
		{"cosine", eval.Cos, -100, 100, 2},
		{"tan", eval.Tan, -100, 100, 3},
	} {
		t.Run(tc.op, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			xs := make([]float64, n)
			for i := range xs {
				if i%2 == 0 {
					if tc.op == "log" {
						xs[i] = math.Exp(-690 + 1380*float64(i)/n)
					} else {
						xs[i] = tc.lo + (tc.hi-tc.lo)*float64(i)/n
					}
				} else {
					xs[i] = math.Float64frombits(rng.Uint64())
				}
			}
			exe, err := rt.CompileText(tc.op, fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  ROOT r = f64[%d] %s(x)\n}", n, n, tc.op), vkjit.CompileOptions{})
			require.NoError(t, err)
			data := make([]byte, 8*n)
			for i, x := range xs {
				binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
			}
			outs, _, err := exe.Run(&vkjit.Tensor{Type: hlo.F64, Dims: []int64{n}, Data: data})
			exe.Close()
			require.NoError(t, err)
			worst, at := int64(0), 0
			for i, x := range xs {
				if d := hlotest.ULPs(hlo.F64, tc.ref(x), outs[0].Float64At(int64(i))); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s f64: max error %d ulp (at x=%g: got %g, want %g)", tc.op, worst, xs[at], outs[0].Float64At(int64(at)), tc.ref(xs[at]))
			require.LessOrEqual(t, worst, tc.bound)
		})
	}
	// atan2: normal pairs and random bit patterns (zeros, infinities,
	// NaN, subnormals among them), against Go's math.Atan2.
	t.Run("atan2", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		ys, xs := make([]float64, n), make([]float64, n)
		for i := range xs {
			if i%2 == 0 {
				ys[i], xs[i] = rng.NormFloat64()*math.Pow(2, float64(rng.IntN(60)-30)), rng.NormFloat64()
			} else {
				ys[i], xs[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
			}
		}
		ys[0], xs[0], ys[2], xs[2], ys[4], xs[4] = 0, math.Copysign(0, -1), math.Copysign(0, -1), -1, math.Inf(1), math.Inf(-1)
		exe, err := rt.CompileText("atan2", fmt.Sprintf("HloModule m\nENTRY e {\n  y = f64[%d] parameter(0)\n  x = f64[%d] parameter(1)\n  ROOT r = f64[%d] atan2(y, x)\n}", n, n, n), vkjit.CompileOptions{})
		require.NoError(t, err)
		outs, _, err := exe.Run(f64Tensor(ys), f64Tensor(xs))
		exe.Close()
		require.NoError(t, err)
		worst, at := int64(0), 0
		for i := range xs {
			want, got := eval.Atan2(ys[i], xs[i]), outs[0].Float64At(int64(i))
			d := hlotest.ULPs(hlo.F64, want, got)
			if math.Signbit(want) != math.Signbit(got) && !math.IsNaN(want) {
				d = 1 << 20 // a signed zero or angle on the wrong side
			}
			if d > worst {
				worst, at = d, i
			}
		}
		t.Logf("atan2 f64: max error %d ulp (at y=%g x=%g: got %g, want %g)", worst, ys[at], xs[at], outs[0].Float64At(int64(at)), eval.Atan2(ys[at], xs[at]))
		require.LessOrEqual(t, worst, int64(3))
	})
	// power: positive bases over the whole range with exponents that
	// keep the result finite, negative bases with integer exponents, and
	// random bit patterns (C99's special values among them).
	t.Run("power", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			switch i % 4 {
			case 0, 1:
				xs[i] = math.Exp(rng.Float64()*1400 - 700)
				ys[i] = (rng.Float64()*2 - 1) * 700 / math.Max(math.Abs(math.Log(xs[i])), 1)
			case 2:
				xs[i], ys[i] = -math.Exp(rng.Float64()*20-10), float64(rng.IntN(61)-30)
			default:
				xs[i], ys[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
			}
		}
		exe, err := rt.CompileText("pow", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  y = f64[%d] parameter(1)\n  ROOT r = f64[%d] power(x, y)\n}", n, n, n), vkjit.CompileOptions{})
		require.NoError(t, err)
		outs, _, err := exe.Run(f64Tensor(xs), f64Tensor(ys))
		exe.Close()
		require.NoError(t, err)
		worst, at := int64(0), 0
		for i := range xs {
			if d := hlotest.ULPs(hlo.F64, eval.Pow(xs[i], ys[i]), outs[0].Float64At(int64(i))); d > worst {
				worst, at = d, i
			}
		}
		t.Logf("power f64: max error %d ulp (at x=%g y=%g: got %g, want %g)", worst, xs[at], ys[at], outs[0].Float64At(int64(at)), eval.Pow(xs[at], ys[at]))
		require.LessOrEqual(t, worst, int64(4))
	})
	// remainder: exact, for random pairs over the whole domain and for
	// quotients up to 2^1000.
	rng := rand.New(rand.NewPCG(5, 6))
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		if i%2 == 0 {
			xs[i], ys[i] = rng.NormFloat64()*math.Pow(2, float64(rng.IntN(2000)-1000)), rng.NormFloat64()
		} else {
			xs[i], ys[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
		}
	}
	exe, err := rt.CompileText("rem", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  y = f64[%d] parameter(1)\n  ROOT r = f64[%d] remainder(x, y)\n}", n, n, n), vkjit.CompileOptions{})
	require.NoError(t, err)
	enc := func(v []float64) *vkjit.Tensor {
		data := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
		}
		return &vkjit.Tensor{Type: hlo.F64, Dims: []int64{int64(len(v))}, Data: data}
	}
	outs, _, err := exe.Run(enc(xs), enc(ys))
	exe.Close()
	require.NoError(t, err)
	for i := range xs {
		want, got := math.Mod(xs[i], ys[i]), outs[0].Float64At(int64(i))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "fmod(%g, %g)", xs[i], ys[i])
			continue
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "fmod(%g, %g) = %g, got %g", xs[i], ys[i], want, got)
	}
}

// TestOutOfDeviceMemory: a run that needs more than the pool's limit
// fails with pool.ErrOutOfMemory and leaves the arguments and the
// runtime usable: a smaller run on the same runtime succeeds.
func TestOutOfDeviceMemory(t *testing.T) {
	defer noValidationMessages(t)
	small, err := vkjit.Open(vkjit.Options{NoCache: true, Memory: pool.Config{BlockBytes: 1 << 20, LimitBytes: 4 << 20}})
	require.NoError(t, err)
	defer small.Close()
	const text = `HloModule m
ENTRY e {
  x = f32[%d] parameter(0)
  y = f32[%d] exponential(x)
  ROOT z = f32[%d] negate(y)
}`
	big, err := small.CompileText("big", fmt.Sprintf(text, 1<<20, 1<<20, 1<<20), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer big.Close()
	x, _ := vkjit.Float32s([]int64{1 << 20}, make([]float32, 1<<20))
	before := append([]byte(nil), x.Data...)
	_, _, err = big.Run(x)
	require.ErrorIs(t, err, pool.ErrOutOfMemory)
	require.Equal(t, before, x.Data, "the argument is untouched")
	require.Zero(t, must(small.MemoryStats()).InUseBytes, "a failed run gives back what it took")

	little, err := small.CompileText("little", fmt.Sprintf(text, 1024, 1024, 1024), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer little.Close()
	y, _ := vkjit.Float32s([]int64{1024}, make([]float32, 1024))
	out, _, err := little.Run(y)
	require.NoError(t, err)
	require.Equal(t, -1.0, out[0].Float64At(0))
}

// TestDeviceTensors chains two executables through device tensors, with
// results that share an arena, results copied out of one, and a result
// that is an argument; releasing everything gives the memory back.
func TestDeviceTensors(t *testing.T) {
	defer noValidationMessages(t)
	first, err := rt.CompileText("first", `HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  e = f32[1000] exponential(x)
  n = f32[1000] negate(e)
  ROOT t = (f32[1000], f32[1000], f32[1000]) tuple(n, e, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer first.Close()
	second, err := rt.CompileText("second", `HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  s = f32[1000] add(a, b)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer second.Close()
	base := must(rt.MemoryStats())

	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(i%17) / 10
	}
	x, _ := vkjit.Float32s([]int64{1000}, vals)
	host, _, err := first.Run(x)
	require.NoError(t, err)
	want, _, err := second.Run(host[0], host[1])
	require.NoError(t, err)

	dx, err := rt.Upload(x)
	require.NoError(t, err)
	outs, _, err := first.RunDevice(dx)
	require.NoError(t, err)
	require.Len(t, outs, 3)
	for i, o := range outs {
		h, err := o.ToHost()
		require.NoError(t, err)
		require.Equal(t, host[i].Data, h.Data, "output %d", i)
	}
	dx.Release()
	got, _, err := second.RunDevice(outs[0], outs[1])
	require.NoError(t, err)
	h, err := got[0].ToHost()
	require.NoError(t, err)
	require.Equal(t, want[0].Data, h.Data, "device tensors chain to the same result as host ones")

	_, _, err = second.RunDevice(outs[0], got[0])
	require.ErrorContains(t, err, "want shape")
	outs[2].Release()
	_, _, err = second.RunDevice(outs[0], outs[2])
	require.ErrorContains(t, err, "was released")
	for _, o := range append(outs, got...) {
		o.Release()
		o.Release() // harmless
	}
	require.Equal(t, base.InUseBytes, must(rt.MemoryStats()).InUseBytes, "released tensors give their memory back")
}

// TestStream runs 12 argument lists through Stream: results arrive in
// order and equal Run's; a bad argument list fails alone.
func TestStream(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("stream", `HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  y = f32[4096] tanh(x)
  ROOT z = f32[4096] multiply(y, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	base := must(rt.MemoryStats())
	in := make(chan []*vkjit.Tensor)
	var args [][]*vkjit.Tensor
	for i := range 12 {
		v := make([]float32, 4096)
		for j := range v {
			v[j] = float32(i) - float32(j%7)
		}
		dims := []int64{4096}
		if i == 5 {
			dims, v = []int64{2048}, v[:2048]
		}
		x, _ := vkjit.Float32s(dims, v)
		args = append(args, []*vkjit.Tensor{x})
	}
	go func() {
		for _, a := range args {
			in <- a
		}
		close(in)
	}()
	i := 0
	for res := range exe.Stream(in) {
		if i == 5 {
			require.ErrorContains(t, res.Err, "want shape")
		} else {
			require.NoError(t, res.Err)
			want, _, err := exe.Run(args[i]...)
			require.NoError(t, err)
			require.Equal(t, want[0].Data, res.Outputs[0].Data, "run %d", i)
		}
		i++
	}
	require.Equal(t, 12, i)
	require.Equal(t, base.InUseBytes, must(rt.MemoryStats()).InUseBytes)
}

// TestSubgroupReductions runs row reductions with a subgroup per output
// (forced on lavapipe, which does not choose them): integer, pred and
// max results equal the sequential reference exactly; float sums and
// argmax (whose ties and NaNs depend on the order) are checked on inputs
// without edge cases, sums to a tolerance for their different order.
func TestSubgroupReductions(t *testing.T) {
	defer noValidationMessages(t)
	opts := vkjit.CompileOptions{Lower: lower.Options{SubgroupReduce: true}}
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.S8} {
		for _, c := range hlotest.RowReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.Name)
			if ty != hlo.PRED {
				require.Contains(t, exe.Program().Kernels[len(exe.Program().Kernels)-1].Name, "_subgroup", c.Name)
			}
			requireRowReduction(t, exe, m, c.Name, ty, 11)
		}
	}
	// A row softmax: the max is a prologue of the sum's kernel, and both
	// take a subgroup per row.
	src, err := os.ReadFile("bench/workloads/softmax.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("softmax", strings.ReplaceAll(strings.ReplaceAll(string(src), "4096,1024", "64,200"), "f32[4096]", "f32[64]"))
	require.NoError(t, err)
	exe, err := rt.Compile(m, opts)
	require.NoError(t, err)
	require.Len(t, exe.Program().Kernels, 2)
	require.Contains(t, exe.Program().Kernels[0].Name, "_subgroup")
	requireSoftmax(t, exe, m)
}

// requireRowReduction runs a row reduction case on the device and in the
// reference: exactly equal for integers and max, within a tolerance for
// float sums (the lanes fold in another order).
func requireRowReduction(t *testing.T, exe *vkjit.Executable, m *hlo.Module, name string, ty hlo.ElementType, seed uint64) {
	t.Helper()
	exact := !ty.IsFloat() || strings.Contains(name, "max") && !strings.Contains(name, "argmax")
	args := hlotest.Inputs(m, seed)
	if !exact {
		args = hlotest.UniformInputs(m, seed)
	}
	_, want, outs := runBothOn(t, exe, m, args, name)
	for i, w := range want.Leaves() {
		g := outs[i]
		for j := int64(0); j < g.NumElements(); j++ {
			wv := (&vkjit.Tensor{Type: w.Shape.Elem, Dims: w.Shape.Dims, Data: w.Data}).Float64At(j)
			gv := g.Float64At(j)
			if exact || !g.Type.IsFloat() {
				if !(math.IsNaN(wv) && math.IsNaN(gv)) {
					require.Equal(t, wv, gv, "%s out%d[%d]", name, i, j)
				}
			} else {
				require.InDelta(t, wv, gv, 1e-4*float64(w.Shape.NumElements()+400), "%s out%d[%d]", name, i, j)
			}
		}
	}
}

// requireSoftmax runs a softmax on uniform inputs and checks it against
// the reference; it returns the device's results.
func requireSoftmax(t *testing.T, exe *vkjit.Executable, m *hlo.Module) []*vkjit.Tensor {
	t.Helper()
	_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 3), "softmax")
	w := want.Leaves()[0]
	for j := int64(0); j < w.Shape.NumElements(); j++ {
		require.InDelta(t, (&vkjit.Tensor{Type: hlo.F32, Data: w.Data}).Float64At(j), outs[0].Float64At(j), 1e-6)
	}
	return outs
}

// TestWorkgroupReductions runs the row reductions long enough for it
// (4 elements per lane) with a workgroup per output, as GPUs do, on
// lavapipe: each must match the reference as the subgroup ones do, and
// softmax's two reductions (one a prologue of the other) each get their
// own shared memory.
func TestWorkgroupReductions(t *testing.T) {
	defer noValidationMessages(t)
	opts := vkjit.CompileOptions{Lower: lower.Options{WorkgroupReduce: true}}
	lanes := 4 * rt.Target().SubgroupSize
	ran := 0
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.S8} {
		for _, c := range hlotest.RowReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.Name)
			red := m.Entry.Root
			count := red.Operands[0].Shape.NumElements() / max(red.Shape.Leaves()[0].NumElements(), 1)
			name := exe.Program().Kernels[len(exe.Program().Kernels)-1].Name
			if count < 4*int64(lanes) {
				require.NotContains(t, name, "_workgroup", c.Name)
			} else {
				require.Contains(t, name, "_workgroup", c.Name)
				ran++
			}
			requireRowReduction(t, exe, m, c.Name, ty, 13)
		}
	}
	require.Greater(t, ran, 8)
	src, err := os.ReadFile("bench/workloads/softmax.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("softmax", strings.ReplaceAll(strings.ReplaceAll(string(src), "4096,1024", "64,600"), "f32[4096]", "f32[64]"))
	require.NoError(t, err)
	exe, err := rt.Compile(m, opts)
	require.NoError(t, err)
	require.Contains(t, exe.Program().Kernels[0].Name, "_workgroup")
	outs := requireSoftmax(t, exe, m)
	// Fused and unfused agree bit for bit: the tree's order is the code's.
	exe, err = rt.Compile(m, vkjit.CompileOptions{Lower: lower.Options{WorkgroupReduce: true, NoFuse: true}})
	require.NoError(t, err)
	_, _, plain := runBothOn(t, exe, m, hlotest.UniformInputs(m, 3), "softmax")
	require.Equal(t, outs[0].Data, plain[0].Data)
}

// TestProfile: Profile gives one entry per dispatch, loop iterations
// included, with the kernel and instruction, and the results of Run.
func TestProfile(t *testing.T) {
	defer noValidationMessages(t)
	src, err := os.ReadFile("tests/testdata/while_loop/graph.hlo")
	require.NoError(t, err)
	exe, err := rt.CompileText("while", string(src), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	var args []*vkjit.Tensor
	for i := range exe.Program().ParamShapes {
		a, err := vkjit.ReadNPYFile(fmt.Sprintf("tests/testdata/while_loop/arg%d.npy", i))
		require.NoError(t, err)
		args = append(args, a)
	}
	times, st, err := exe.Profile(args...)
	require.NoError(t, err)
	require.Len(t, times, st.Dispatches, "an entry per dispatch")
	require.Greater(t, st.Dispatches, 40, "the loop's 40 iterations are in it")
	for _, d := range times {
		require.NotEmpty(t, d.Kernel)
		require.NotEmpty(t, d.Inst)
		require.GreaterOrEqual(t, d.Ms, 0.0)
	}
}

// TestConvGemm runs 2-D NHWC convolutions as implicit GEMMs (strides,
// asymmetric padding, kernel dilation, a partial column tile, a bias and
// ReLU epilogue) against the reference; 3 input features take the direct
// kernel.
func TestConvGemm(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		x, k, out, window string
		tiled             bool
	}{
		{"f32[4,33,35,32]", "f32[3,3,32,12]", "f32[4,33,35,12]", "size=3x3 pad=1_1x1_1", true},
		{"f32[6,40,42,32]", "f32[3,3,32,20]", "f32[6,20,21,20]", "size=3x3 stride=2x2 pad=1_0x0_1", true},
		{"f32[4,40,40,32]", "f32[3,3,32,16]", "f32[4,36,36,16]", "size=3x3 rhs_dilate=2x2", true},
		{"f32[4,30,30,3]", "f32[3,3,3,16]", "f32[4,30,30,16]", "size=3x3 pad=1_1x1_1", false},
	} {
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  x = %s parameter(0)
  k = %s parameter(1)
  b = f32[%s] parameter(2)
  c = %s convolution(x, k), window={%s}, dim_labels=b01f_01io->b01f
  bb = %s broadcast(b), dimensions={3}
  z = %s add(c, bb)
  zero = f32[] constant(0)
  zs = %s broadcast(zero), dimensions={}
  ROOT y = %s maximum(z, zs)
}`, c.x, c.k, c.k[strings.LastIndex(c.k, ",")+1:len(c.k)-1], c.out, c.window, c.out, c.out, c.out, c.out)
		m, err := hlo.Parse("conv", src)
		require.NoError(t, err, src)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err, src)
		name := exe.Program().Kernels[0].Name
		require.Equal(t, c.tiled, strings.HasPrefix(name, "gemm"), "%s: %s", name, c.window)
		_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 9), "conv")
		w := want.Leaves()[0]
		for i := int64(0); i < w.Shape.NumElements(); i++ {
			require.InDelta(t, (&vkjit.Tensor{Type: hlo.F32, Data: w.Data}).Float64At(i), outs[0].Float64At(i), 1e-4, "%s element %d", c.window, i)
		}
	}
}

// TestGemmFlushesSubnormals: the tiled kernel reads subnormal operands
// as zeros, as XLA's CPU and GPU backends (which flush denormals) do;
// lavapipe computes with subnormals 8x slower.
func TestGemmFlushesSubnormals(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("gemm", "HloModule m\nENTRY e {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] parameter(1)\n  ROOT c = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	require.Contains(t, exe.Program().Kernels[0].Name, "gemm")
	av, bv := make([]float32, 256*256), make([]float32, 256*256)
	for i := range av {
		av[i], bv[i] = 1e-39, 1e30 // a subnormal times a huge value: 1e-9 unflushed
	}
	av[0] = 1 // one normal value: row 0 gets 1e30
	a, _ := vkjit.Float32s([]int64{256, 256}, av)
	b, _ := vkjit.Float32s([]int64{256, 256}, bv)
	outs, _, err := exe.Run(a, b)
	require.NoError(t, err)
	require.InEpsilon(t, 1e30, outs[0].Float64At(0), 1e-6)
	require.Zero(t, outs[0].Float64At(256), "row 1 reads only subnormals: flushed to zero")
}

func f64Tensor(v []float64) *vkjit.Tensor {
	data := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
	}
	return &vkjit.Tensor{Type: hlo.F64, Dims: []int64{int64(len(v))}, Data: data}
}

// TestHoistedLoop runs lower/testdata/licm.hlo (a while body with an
// invariant sum, hoisted before the loop) against the reference: the
// same result, and one dispatch per iteration fewer than without hoisting
// would take (the body keeps its small kernels only).
func TestHoistedLoop(t *testing.T) {
	defer noValidationMessages(t)
	src, err := os.ReadFile("lower/testdata/licm.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("licm.hlo", string(src))
	require.NoError(t, err)
	want, err := eval.Run(m)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	outs, st, err := exe.Run()
	require.NoError(t, err)
	require.Equal(t, want.Leaves()[0].Data, outs[0].Data)
	require.Less(t, st.Dispatches, 2*200+10, "200 iterations: the condition and the body's one kernel each, not the sum")
}

// TestConvertF64ToNarrow converts f64 values just off a tie of f16 or
// bf16 (and one just under the f16 overflow, and an f16 subnormal tie),
// and integers to bf16: rounding to f32 first would land on the tie and
// round it to even, away from the nearest value.
func TestConvertF64ToNarrow(t *testing.T) {
	defer noValidationMessages(t)
	m, err := hlo.Parse("f64_narrow", `HloModule f64_narrow
ENTRY main {
  x = f64[6] parameter(0)
  h = f16[6] convert(x)
  b = bf16[6] convert(x)
  ROOT t = (f16[6], bf16[6]) tuple(h, b)
}`)
	require.NoError(t, err)
	xs := []float64{1 + 0x1p-11 + 0x1p-40, -(1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-11 - 0x1p-40, 65519.99999999, 0x1.8p-24 + 0x1p-60}
	data := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
	}
	arg := &hlo.Literal{Shape: hlo.ArrayShape(hlo.F64, int64(len(xs))), Data: data}
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs := runBothOn(t, exe, m, []*hlo.Literal{arg}, "f64_narrow")
	for i, w := range want.Leaves() {
		require.Equal(t, w.Data, outs[i].Data, "out%d", i)
	}
	// The f16 of 1 + 2^-11 + 2^-40 is 1 + 2^-10 (0x3c01), not 1.
	require.Equal(t, []byte{0x01, 0x3c}, outs[0].Data[:2])

	// Integers to bf16: 2^30 + 2^22 + 1 rounds to the f32 2^30 + 2^22, a
	// bf16 tie.
	m, err = hlo.Parse("int_bf16", `HloModule int_bf16
ENTRY main {
  a = s32[6] parameter(0)
  b = u64[4] parameter(1)
  c = bf16[6] convert(a)
  d = bf16[4] convert(b)
  ROOT t = (bf16[6], bf16[4]) tuple(c, d)
}`)
	require.NoError(t, err)
	var s32s, u64s []byte
	for _, v := range []int32{1<<30 + 1<<22 + 1, -(1<<30 + 1<<22 + 1), 1<<30 + 1<<22, math.MinInt32, 0, -1} {
		s32s = binary.LittleEndian.AppendUint32(s32s, uint32(v))
	}
	for _, v := range []uint64{1<<40 + 1<<32 + 1, math.MaxUint64, 1<<63 + 1<<55, 12345} {
		u64s = binary.LittleEndian.AppendUint64(u64s, v)
	}
	exe, err = rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs = runBothOn(t, exe, m, []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.S32, 6), Data: s32s}, {Shape: hlo.ArrayShape(hlo.U64, 4), Data: u64s}}, "int_bf16")
	for i, w := range want.Leaves() {
		require.Equal(t, w.Data, outs[i].Data, "int_bf16 out%d", i)
	}
	require.Equal(t, []byte{0x81, 0x4e}, outs[0].Data[:2]) // 2^30 + 2^23
}

// TestTexelLoads: on a CPU device with texel buffer views, kernels fetch
// their read-only 32-bit inputs through views of their buffers
// (Kernel.Texel: vec4 texels in vector, row and tiled GEMM kernels,
// single elements elsewhere); the results are bit for bit those of the
// storage buffer loads (Options.StorageLoads), under the validation
// layer.
func TestTexelLoads(t *testing.T) {
	defer noValidationMessages(t)
	if !rt.Target().CPU || !rt.Target().TexelLoads {
		t.Skip("texel loads are for CPU devices with R32G32B32A32_UINT texel buffers")
	}
	views := map[int]int{} // texel views by texel bytes
	for _, src := range []string{
		// A vector kernel with a scalar-read bias row and an s32 input.
		"HloModule m\nENTRY e {\n  a = f32[64,256] parameter(0)\n  b = f32[256] parameter(1)\n  i = s32[64,256] parameter(2)\n  bb = f32[64,256] broadcast(b), dimensions={1}\n  c = f32[64,256] convert(i)\n  x = f32[64,256] multiply(a, bb)\n  ROOT y = f32[64,256] add(x, c)\n}",
		rowCases()[0].text,
		"HloModule m\nENTRY e {\n  x = f32[2,96,64] parameter(0)\n  w = f32[2,64,136] parameter(1)\n  ROOT c = f32[2,96,136] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  x = f32[4,16,16,32] parameter(0)\n  w = f32[3,3,32,64] parameter(1)\n  ROOT c = f32[4,16,16,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}",
		// Single elements: a transpose, a column reduction of u32, a
		// gather with s32 indices, pred read as its u32 storage.
		"HloModule m\nENTRY e {\n  x = f32[96,130] parameter(0)\n  ROOT y = f32[130,96] transpose(x), dimensions={1,0}\n}",
		"HloModule m\nadd {\n  a = u32[] parameter(0)\n  b = u32[] parameter(1)\n  ROOT s = u32[] add(a, b)\n}\nENTRY e {\n  x = u32[300,40] parameter(0)\n  z = u32[] constant(7)\n  ROOT y = u32[40] reduce(x, z), dimensions={0}, to_apply=add\n}",
		"HloModule m\nENTRY e {\n  x = f32[50,8] parameter(0)\n  i = s32[20,1] parameter(1)\n  ROOT g = f32[20,8] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n}",
		"HloModule m\nENTRY e {\n  p = pred[64,33] parameter(0)\n  x = f32[64,33] parameter(1)\n  z = f32[64,33] negate(x)\n  s = f32[64,33] select(p, x, z)\n  ROOT y = f32[33,64] transpose(s), dimensions={1,0}\n}",
		// Other widths: bf16 and s8 in a vector kernel (8 elements as
		// 16 or 8 bytes) and transposed (single 2- and 1-byte texels),
		// f64 transposed (8-byte texels); an empty u64 reduction (a
		// binding smaller than its texel).
		"HloModule m\nENTRY e {\n  x = bf16[64,128] parameter(0)\n  y = bf16[64,128] parameter(1)\n  m = bf16[64,128] multiply(x, y)\n  ROOT t = bf16[128,64] transpose(m), dimensions={1,0}\n}",
		"HloModule m\nENTRY e {\n  x = s8[64,128] parameter(0)\n  y = s8[64,128] parameter(1)\n  m = s8[64,128] add(x, y)\n  ROOT t = s8[128,64] transpose(m), dimensions={1,0}\n}",
		"HloModule m\nENTRY e {\n  x = f64[40,70] parameter(0)\n  ROOT t = f64[70,40] transpose(x), dimensions={1,0}\n}",
		"HloModule m\nadd {\n  a = u64[] parameter(0)\n  b = u64[] parameter(1)\n  ROOT s = u64[] add(a, b)\n}\nENTRY e {\n  x = u64[0,5] parameter(0)\n  z = u64[] constant(3)\n  ROOT y = u64[5] reduce(x, z), dimensions={0}, to_apply=add\n}",
	} {
		m, err := hlo.Parse("texel", src)
		require.NoError(t, err)
		args := hlotest.UniformInputs(m, 7)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		texel := 0
		for _, k := range exe.Program().Kernels {
			texel += len(k.Texel)
			for _, v := range k.Texel {
				views[v.Bytes]++
			}
		}
		require.Positive(t, texel, "no kernel fetches through a texel view: %s", src)
		_, _, got := runBothOn(t, exe, m, args, "texel")
		exe, err = rt.Compile(m, vkjit.CompileOptions{Lower: lower.Options{StorageLoads: true}})
		require.NoError(t, err)
		for _, k := range exe.Program().Kernels {
			require.Empty(t, k.Texel, k.Name)
		}
		_, _, want := runBothOn(t, exe, m, args, "storage")
		for i := range want {
			require.Equal(t, want[i].Data, got[i].Data, "%s out%d", src, i)
		}
	}
	for _, bytes := range []int{1, 2, 4, 8, 16} {
		require.Positive(t, views[bytes], "views of %d-byte texels", bytes)
	}
}

// TestMathEdges: values at the edges of the math library's ranges, each
// with its correctly rounded answer worked out by hand (powers of two are
// exact), on the device fused and unfused and in the evaluator, bit for
// bit: pow overflowing to +inf where the base is a power of two (it gave
// NaN: the tail multiply of an infinity), logistic's subnormal results
// for x below -88.72 (it gave 0), and IEEE 754-2019 maximum and minimum
// on signed zeros (-0 < +0, as the StableHLO spec's tests have it).
func TestMathEdges(t *testing.T) {
	defer noValidationMessages(t)
	inf := math.Inf(1)
	type c struct{ x, y, want float64 }
	zeros := map[string][]c{
		"maximum": {
			{0, math.Copysign(0, -1), 0}, {math.Copysign(0, -1), 0, 0},
			{math.Copysign(0, -1), math.Copysign(0, -1), math.Copysign(0, -1)}, {-1, math.Copysign(0, -1), math.Copysign(0, -1)},
		},
		"minimum": {
			{0, math.Copysign(0, -1), math.Copysign(0, -1)}, {math.Copysign(0, -1), 0, math.Copysign(0, -1)},
			{0, 0, 0}, {1, 0, 0},
		},
	}
	f64 := map[string][]c{
		"power": {
			{2, 1024, inf}, {4, 512, inf}, {0.5, -1024, inf}, {2, 1023, 0x1p1023}, {0x1p-512, -2, inf},
			{2, -1074, 0x1p-1074}, {2, -1076, 0}, {-2, 1025, -inf}, {1024, 102, 0x1p1020}, {1024, 103, inf},
		},
		"logistic": {{-740, 0, math.Exp(-740)}, {-720, 0, math.Exp(-720)}, {-800, 0, 0}, {-inf, 0, 0}, {inf, 0, 1}},
	}
	f32 := map[string][]c{
		"power": {
			{2, 128, inf}, {4, 64, inf}, {65536, 8, inf}, {0.5, -128, inf}, {2, 127, 0x1p127},
			{0.25, -64, inf}, {16, 32, inf}, {2, 200, inf}, {0.5, 200, 0},
			{2, -149, 0x1p-149}, {2, -126, 0x1p-126}, {4, -70, 0x1p-140}, {2, -151, 0},
			{-2, 128, inf}, {-2, 129, -inf}, {-0.5, -129, -inf}, {8, 42, 0x1p126}, {8, 43, inf},
		},
		"logistic": {
			// e^x / (1 + e^x), rounded to the type when encoded.
			{-90, 0, math.Exp(-90)}, {-100, 0, math.Exp(-100)}, {-88.75, 0, math.Exp(-88.75)},
			{-103, 0, math.Exp(-103)}, {-20, 0, math.Exp(-20) / (1 + math.Exp(-20))},
			{-110, 0, math.Exp(-110)}, {-inf, 0, 0}, {inf, 0, 1}, {0, 0, 0.5},
		},
	}
	for ty, cases := range map[hlo.ElementType]map[string][]c{hlo.F32: f32, hlo.F64: f64, hlo.F16: zeros, hlo.BF16: zeros} {
		maps.Copy(cases, zeros)
		for op, cs := range cases {
			n := len(cs)
			hop, _ := hlo.LookupOpcode(op)
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  ROOT r = %[1]s[%[2]d] %[3]s(x)\n}", ty, n, op)
			if hop.Arity() == 2 {
				// The op between two others, so that fusion puts it inside a kernel.
				src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  y = %[1]s[%[2]d] parameter(1)\n  a = %[1]s[%[2]d] copy(x)\n  r = %[1]s[%[2]d] %[3]s(a, y)\n  ROOT n = %[1]s[%[2]d] copy(r)\n}", ty, n, op)
			}
			m, err := hlo.Parse(op, src)
			require.NoError(t, err)
			es := ty.Bytes()
			enc := func(v float64) []byte {
				b := make([]byte, 8)
				binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(ty, v))
				return b[:es]
			}
			var xb, yb []byte
			for _, cc := range cs {
				xb, yb = append(xb, enc(cc.x)...), append(yb, enc(cc.y)...)
			}
			shape := hlo.ArrayShape(ty, int64(n))
			args := []*hlo.Literal{{Shape: shape, Data: xb}}
			if hop.Arity() == 2 {
				args = append(args, &hlo.Literal{Shape: shape, Data: yb})
			}
			check := func(where string, got []byte) {
				for i, cc := range cs {
					g := got[i*es : (i+1)*es]
					bits := make([]byte, 8)
					copy(bits, g)
					require.Equal(t, enc(cc.want), g, "%s %s(%g, %g) on %s: got %g, want %g", ty, op, cc.x, cc.y, where, hlo.DecodeFloat(ty, binary.LittleEndian.Uint64(bits)), cc.want)
				}
			}
			ref, err := eval.Run(m, args...)
			require.NoError(t, err)
			check("the evaluator", ref.Leaves()[0].Data)
			for _, opts := range []lower.Options{{}, {NoFuse: true}} {
				exe, err := rt.Compile(m, vkjit.CompileOptions{Lower: opts})
				require.NoError(t, err)
				var ts []*vkjit.Tensor
				for _, a := range args {
					ts = append(ts, &vkjit.Tensor{Type: ty, Dims: []int64{int64(n)}, Data: a.Data})
				}
				outs, _, err := exe.Run(ts...)
				exe.Close()
				require.NoError(t, err)
				check(fmt.Sprintf("the device (no-fuse %v)", opts.NoFuse), outs[0].Data)
			}
		}
	}
}

// TestConstantZeros: IEEE arithmetic with a zero the kernel knows. inf*0
// and NaN*0 are NaN, -0+0 and 0-0 are +0, 0/0 is NaN, and a sum starts
// from +0. llvmpipe folds x*0 to 0, x+0 to x, 0-x to -x and 0/x to 0
// wherever it sees a constant zero, whatever the float controls say: a
// fused iota fed a dot its zero column so (the random-program fuzzer's
// dot(iota, x) gave 9.625 where x held -inf and the answer is NaN).
func TestConstantZeros(t *testing.T) {
	defer noValidationMessages(t)
	specials := func(m *hlo.Module) []*hlo.Literal {
		var out []*hlo.Literal
		for _, p := range m.Entry.Params {
			vals := []float64{math.Inf(-1), math.Copysign(0, -1), math.NaN(), 0, math.Inf(1), -2.5, 1, 3}
			data := make([]byte, 0, p.Shape.NumElements()*int64(p.Shape.Elem.Bytes()))
			for i := int64(0); i < p.Shape.NumElements(); i++ {
				b := make([]byte, 8)
				binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(p.Shape.Elem, vals[i%int64(len(vals))]))
				data = append(data, b[:p.Shape.Elem.Bytes()]...)
			}
			out = append(out, &hlo.Literal{Shape: p.Shape, Data: data})
		}
		return out
	}
	for _, ty := range []string{"f32", "f64", "f16", "bf16"} {
		requireExact(t, "zeros_"+ty, strings.ReplaceAll(`HloModule zeros
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = $T[] add(a, b)
}
ENTRY e {
  x = $T[8,8] parameter(0)
  z = $T[] constant(0)
  zb = $T[8,8] broadcast(z), dimensions={}
  mul = $T[8,8] multiply(x, zb)
  sum = $T[8,8] add(x, zb)
  sub = $T[8,8] subtract(zb, x)
  div = $T[8,8] divide(zb, x)
  i = $T[5,8] iota(), iota_dimension=1
  dot = $T[5,8] dot(i, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ic = s32[8,8] iota(), iota_dimension=0
  cv = $T[8,8] convert(ic)
  mc = $T[8,8] multiply(cv, x)
  r = $T[8] reduce(x, z), dimensions={1}, to_apply=add
  ROOT out = ($T[8,8], $T[8,8], $T[8,8], $T[8,8], $T[5,8], $T[8,8], $T[8]) tuple(mul, sum, sub, div, dot, mc, r)
}`, "$T", ty), specials)
	}
}

// TestZeroSize: empty arrays flow through elementwise ops, reductions and
// data movement; their kernels are skipped, and the planner once refused
// a reduce of an empty exponential ("reads temporary y before any step
// writes it") without fusion.
func TestZeroSize(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "zero_size", `HloModule zero
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[0,5] parameter(0)
  y = f32[0,5] exponential(x)
  z = f32[] constant(0)
  r = f32[5] reduce(y, z), dimensions={0}, to_apply=add
  t = f32[5,0] transpose(y), dimensions={1,0}
  s = f32[5] reduce(t, z), dimensions={1}, to_apply=add
  c = f32[3,5] pad(y, z), padding=1_2x0_0
  ROOT out = (f32[5], f32[5], f32[3,5], f32[0,5]) tuple(r, s, c, y)
}`, edgeInputs(1))
}

// TestIndexTypes: start indices of every integer type, in dynamic-slice,
// dynamic-update-slice, gather and scatter, fused and unfused. A u8 or
// s8 index once made invalid SPIR-V (an OpUConvert of a 32-bit register
// to u32), which only the validation layer caught.
func TestIndexTypes(t *testing.T) {
	defer noValidationMessages(t)
	for _, it := range []string{"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"} {
		src := fmt.Sprintf(`HloModule idx_%[1]s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[6,5] parameter(0)
  i = %[1]s[] parameter(1)
  j = %[1]s[] parameter(2)
  u = f32[2,3] parameter(3)
  ix = %[1]s[3,1] parameter(4)
  ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  dus = f32[6,5] dynamic-update-slice(x, u, j, i)
  g = f32[3,5] gather(x, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
  up = f32[3,5] parameter(5)
  sc = f32[6,5] scatter(x, ix, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[2,3], f32[6,5], f32[3,5], f32[6,5]) tuple(ds, dus, g, sc)
}`, it)
		requireExact(t, "idx_"+it, src, smallInts(3))
		requireExact(t, "idx_"+it+"_edges", src, edgeInputs(3))
	}
}

// TestSqrtEdges: sqrt and rsqrt at and below zero, as IEEE has them,
// alone and fused: GLSL leaves them undefined there, and a fused
// abs(rsqrt(-0)) once gave -inf (Mesa took inversesqrt to be positive
// and dropped the abs).
func TestSqrtEdges(t *testing.T) {
	defer noValidationMessages(t)
	inf, nan := math.Inf(1), math.NaN()
	want := [][]float64{
		{math.Inf(-1), inf, nan, nan, 0, nan},                  // rsqrt
		{inf, inf, nan, nan, 0, nan},                           // abs(rsqrt)
		{math.Copysign(0, -1), 0, nan, nan, inf, nan},          // sqrt
		{0, math.Copysign(0, -1), nan, nan, math.Inf(-1), nan}, // -sqrt
	}
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16} {
		src := fmt.Sprintf(`HloModule sqrt_edges
ENTRY e {
  x = %[1]s[6] constant({-0, 0, -1, -inf, inf, nan})
  r = %[1]s[6] rsqrt(x)
  a = %[1]s[6] abs(r)
  s = %[1]s[6] sqrt(x)
  n = %[1]s[6] negate(s)
  ROOT t = (%[1]s[6], %[1]s[6], %[1]s[6], %[1]s[6]) tuple(r, a, s, n)
}`, ty)
		for _, opts := range []lower.Options{{}, {NoFuse: true}} {
			exe, err := rt.CompileText("sqrt_edges", src, vkjit.CompileOptions{Lower: opts})
			require.NoError(t, err)
			outs, _, err := exe.Run()
			exe.Close()
			require.NoError(t, err)
			for i, w := range want {
				for j, wv := range w {
					g := outs[i].Float64At(int64(j))
					same := g == wv && math.Signbit(g) == math.Signbit(wv) || math.IsNaN(g) && math.IsNaN(wv)
					require.True(t, same, "%s out%d[%d] (no-fuse %v): got %v, want %v", ty, i, j, opts.NoFuse, g, wv)
				}
			}
		}
	}
}

// TestControlResultAliases: a conditional whose branch returns its
// operand hands the operand's buffer on as its result, so the operand
// must live as long as the result: once a later value (the iota) took
// its memory. A while loop that runs no iteration does the same.
func TestControlResultAliases(t *testing.T) {
	defer noValidationMessages(t)
	for _, name := range []string{"conditional_alias", "while_alias"} {
		src, err := os.ReadFile("testdata/" + name + ".hlo")
		require.NoError(t, err)
		requireExact(t, name, string(src), smallInts(5))
		requireExact(t, name+"_edges", string(src), edgeInputs(5))
	}
}

// TestCompileStableHLO: the library takes StableHLO where it takes HLO
// text, told apart by content. A program in both forms compiles (text
// and file, with the compile cache on) and gives the same bits, and
// ParseText reads both.
func TestCompileStableHLO(t *testing.T) {
	defer noValidationMessages(t)
	mlirPath := filepath.Join("hlo", "stablehlo", "testdata", "mlp_layer.mlir")
	mlir, err := os.ReadFile(mlirPath)
	require.NoError(t, err)
	text, err := os.ReadFile(filepath.Join("hlo", "stablehlo", "testdata", "mlp_layer.hlo"))
	require.NoError(t, err)
	twin, err := hlo.Parse("mlp_layer.hlo", string(text))
	require.NoError(t, err)
	args := hlotest.Inputs(twin, 7)
	ts := make([]*vkjit.Tensor, len(args))
	for i, a := range args {
		ts[i] = &vkjit.Tensor{Type: a.Shape.Elem, Dims: a.Shape.Dims, Data: a.Data}
	}
	run := func(exe *vkjit.Executable, err error) []byte {
		t.Helper()
		require.NoError(t, err)
		defer exe.Close()
		outs, _, err := exe.Run(ts...)
		require.NoError(t, err)
		require.Len(t, outs, 1)
		return outs[0].Data
	}
	want := run(rt.CompileText("mlp_layer.hlo", string(text), vkjit.CompileOptions{}))
	require.Equal(t, want, run(rt.CompileText("mlp_layer.mlir", string(mlir), vkjit.CompileOptions{})))
	require.Equal(t, want, run(rt.CompileText("mlp_layer.mlir", string(mlir), vkjit.CompileOptions{})), "a cache hit")
	require.Equal(t, want, run(rt.CompileFile(mlirPath, vkjit.CompileOptions{})))
	ms, err := vkjit.ParseText("mlp_layer.mlir", string(mlir))
	require.NoError(t, err)
	require.Len(t, ms, 1)
	ref, err := eval.Run(twin, args...)
	require.NoError(t, err)
	require.Equal(t, ref.Leaves()[0].Data, want)

	_, err = rt.CompileText("bad.mlir", "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", vkjit.CompileOptions{})
	require.ErrorContains(t, err, "bad.mlir:2:")
}

// TestBitcastConvert: bitcast-convert between types of one width keeps
// every bit, NaN payloads (signaling ones too) and -0 included, alone,
// fused after an integer op, and there and back; a change of width is
// refused by name.
func TestBitcastConvert(t *testing.T) {
	defer noValidationMessages(t)
	patterns := map[int][]uint64{
		2: {0x7d01, 0xfe01, 0x7f81, 0xff80, 0x8000, 0x7c00, 0x0001},
		4: {0x7f800001, 0xffc00123, 0x7fa00000, 0x80000000, 0x7f800000, 0x00000001},
		8: {0x7ff0000000000001, 0xfff8000000000123, 0x8000000000000000, 0x7ff0000000000000, 1},
		1: {0x80, 0x7f, 0xff},
	}
	randomBits := func(m *hlo.Module) []*hlo.Literal {
		rng := rand.New(rand.NewPCG(3, 1))
		var out []*hlo.Literal
		for _, p := range m.Entry.Params {
			es := p.Shape.Elem.Bytes()
			data := make([]byte, p.Shape.NumElements()*int64(es))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			for j, pat := range patterns[es] {
				for b := 0; b < es; b++ {
					data[j*es+b] = byte(pat >> (8 * b))
				}
			}
			out = append(out, &hlo.Literal{Shape: p.Shape, Data: data})
		}
		return out
	}
	pairs := [][2]string{
		{"f32", "u32"}, {"u32", "f32"}, {"s32", "f32"}, {"f32", "s32"},
		{"f64", "s64"}, {"u64", "f64"}, {"f64", "u64"},
		{"f16", "u16"}, {"u16", "f16"}, {"bf16", "s16"}, {"s16", "bf16"}, {"f16", "bf16"}, {"bf16", "f16"},
		{"u8", "s8"}, {"s8", "u8"}, {"s16", "u16"},
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		// The bitcast alone, after an integer op on the source's bits
		// (fused into one kernel) where the source is an integer, and
		// there and back.
		src := "x"
		ops := ""
		if !strings.HasPrefix(from, "f") && from != "bf16" {
			src = "xi"
			ops = fmt.Sprintf("  xo = %[1]s[4096] xor(x, x)\n  xi = %[1]s[4096] or(xo, x)\n", from)
		}
		requireExact(t, "bitcast_"+from+"_"+to, fmt.Sprintf(`HloModule bitcast
ENTRY e {
  x = %[1]s[4096] parameter(0)
%[4]s  a = %[2]s[4096] bitcast-convert(x)
  b = %[2]s[4096] bitcast-convert(%[3]s)
  c = %[1]s[4096] bitcast-convert(a)
  ROOT out = (%[2]s[4096], %[2]s[4096], %[1]s[4096]) tuple(a, b, c)
}`, from, to, src, ops), randomBits)
	}
	_, err := rt.CompileText("wide.hlo", `HloModule wide
ENTRY e {
  x = f32[4] parameter(0)
  ROOT b = u8[4,4] bitcast-convert(x)
}`, vkjit.CompileOptions{})
	require.ErrorContains(t, err, "bitcast-convert from f32 to u8 is not supported on the device yet")
}

// TestSelectAndScatter: the gradient of a max pool (select GE, scatter
// add) and of a min pool, with windows that overlap (stride below size),
// padding, ties (small integers) and a window larger than the stride in
// one dimension only, in f32, bf16 and s32, and edge values (NaN, inf,
// -0) in f32, bit for bit with the evaluator, fused and unfused.
func TestSelectAndScatter(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		ty, dir, window, operand, source string
	}{
		{"f32", "GE", "size=2x2 stride=2x2", "4,6", "2,3"},
		{"f32", "GE", "size=3x3 stride=1x1 pad=1_1x1_1", "5,4", "5,4"},
		{"f32", "LE", "size=3x2 stride=2x1 pad=0_1x1_0", "6,5", "3,5"},
		{"bf16", "GE", "size=2x3 stride=1x2", "5,7", "4,3"},
		{"s32", "GE", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "2,5,5,3", "2,3,3,3"},
	} {
		src := fmt.Sprintf(`HloModule sas
select {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=%[2]s
}
add {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT c = %[1]s[] add(a, b)
}
ENTRY e {
  x = %[1]s[%[4]s] parameter(0)
  g = %[1]s[%[5]s] parameter(1)
  z = %[1]s[] constant(0)
  ROOT s = %[1]s[%[4]s] select-and-scatter(x, g, z), window={%[3]s}, select=select, scatter=add
}`, c.ty, c.dir, c.window, c.operand, c.source)
		requireExact(t, "select_and_scatter_"+c.ty, src, smallInts(5))
		if c.ty == "f32" { // NaN, infinities and -0 among the values
			requireExact(t, "select_and_scatter_edges", src, edgeInputs(6))
		}
	}
}

// TestReducePrecision: reduce-precision to f16's, bf16's and smaller
// formats (with no mantissa bit left, NaN becomes +inf) from f64, f32,
// f16 and bf16, on edge values, bit for bit with the evaluator, fused
// and unfused.
func TestReducePrecision(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f64", "f32", "f16", "bf16"} {
		for _, f := range [][2]int{{5, 10}, {8, 7}, {5, 2}, {3, 1}, {2, 0}, {8, 23}, {11, 52}} {
			src := fmt.Sprintf(`HloModule rp
ENTRY e {
  x = %[1]s[64] parameter(0)
  y = %[1]s[64] multiply(x, x)
  r = %[1]s[64] reduce-precision(x), exponent_bits=%[2]d, mantissa_bits=%[3]d
  s = %[1]s[64] reduce-precision(y), exponent_bits=%[2]d, mantissa_bits=%[3]d
  ROOT out = (%[1]s[64], %[1]s[64]) tuple(r, s)
}`, ty, f[0], f[1])
			requireExact(t, fmt.Sprintf("reduce_precision_%s_e%dm%d", ty, f[0], f[1]), src, edgeInputs(uint64(f[0]*100+f[1])))
		}
	}
}

// TestReducerCalls: a reducer or comparator that calls a function of its
// own (JAX writes jnp.logaddexp in a cumulative reduction so) runs with
// the call inlined: reduce, reduce-window, sort, and a reduce inside a
// while loop's body (exact ops on small integers, so bit for bit).
func TestReducerCalls(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "reducer_calls", `HloModule calls
sum_max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  s = f32[] add(a, b)
  ROOT r = f32[] add(m, s)
}
reducer {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] call(a, b), to_apply=sum_max
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] call(a, b), to_apply=lt
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  z = f32[] constant(0)
  r = f32[] reduce(v, z), dimensions={0}, to_apply=reducer
  rb = f32[8] broadcast(r), dimensions={}
  w = f32[8] subtract(v, rb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, w)
}
ENTRY e {
  x = f32[6,8] parameter(0)
  z = f32[] constant(0)
  r = f32[6] reduce(x, z), dimensions={1}, to_apply=reducer
  c = f32[6,8] reduce-window(x, z), window={size=1x8 pad=0_0x7_0}, to_apply=reducer
  s = f32[6,8] sort(x), dimensions={1}, to_apply=less
  v = f32[1,8] slice(x), slice={[0:1], [0:8]}
  v1 = f32[8] reshape(v)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, v1)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  l = f32[8] get-tuple-element(loop), index=1
  ROOT out = (f32[6], f32[6,8], f32[6,8], f32[8]) tuple(r, c, s, l)
}`, smallInts(2))
}
