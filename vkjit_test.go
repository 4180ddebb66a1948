package vkjit_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
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
	rt, err = vkjit.Open(vkjit.Options{Validate: vkjit.On, CacheDir: cacheDir})
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
	got, want := vkjit.TargetOf(rt), lower.LlvmpipeTarget
	got.Cores = want.Cores
	if strings.Contains(d.Name, "512 bits") {
		// 16 lanes: vkjit runs lavapipe 512 bits wide on AMD AVX-512
		// hosts (vk.WideLavapipeHost); the rest is the same.
		want.SubgroupSize = 16
	}
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
	outs, st, err := exe.Run(context.Background(), x, y)
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
	align := int64(vkjit.TargetOf(rt).StorageAlign)
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
	for _, c := range chloCases { // the expansions of sinh, acos and the like
		if c.op == op.String() {
			return int64(max(c.bound32, c.bound64))
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
			require.Equal(t, vkjit.DType(w.Shape.Elem), g.Type, c.Name)
			tol := tolerance(c.Op)
			for i := int64(0); i < n; i++ {
				wv := (&vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}).Float64At(i)
				gv := g.Float64At(i)
				if g.Type.IsFloat() {
					if d := hlotest.ULPs(hlo.ElementType(g.Type), wv, gv); d > tol {
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
		ts[i] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
	}
	outs, _, err := exe.Run(context.Background(), ts...)
	require.NoError(t, err, name)
	return ts, want, outs
}

// requireExact compiles a module, runs it on the device and in the
// reference evaluator on the same inputs, and requires every result leaf
// to match bit for bit: with fusion and buffer reuse, and without. The
// fused program runs every while loop that fits one on the device, the
// unfused one as the default decides (loops of few iterations from the
// host: kgen.LoopWords).
func requireExact(t *testing.T, name, text string, inputs func(*hlo.Module) []*hlo.Literal) {
	t.Helper()
	m, err := hlo.Parse(name, text)
	require.NoError(t, err, text)
	require.NoError(t, hlo.Verify(m), name)
	for _, opts := range []vkjit.CompileOptions{{DeviceLoops: true}, {NoFuse: true, NoReuse: true}} {
		exe, err := rt.Compile(m, opts)
		require.NoError(t, err, name)
		_, want, outs := runBothOn(t, exe, m, inputs(m), name)
		for i, w := range want.Leaves() {
			requireSameValues(t, w.Shape.Elem, w.Data, outs[i].Data, "%s out%d (%+v)", name, i, opts)
		}
	}
}

// requireSameValues requires two results of element type et to hold the
// same bits, a NaN matching any NaN (hlotest.CanonicalNaNs says why).
func requireSameValues(t *testing.T, et hlo.ElementType, want, got []byte, msg ...any) {
	t.Helper()
	w, g := hlotest.CanonicalNaNs(et, want), hlotest.CanonicalNaNs(et, got)
	if string(w) == string(g) {
		return
	}
	require.Equal(t, len(w), len(g), msg...)
	n := et.Bytes()
	value := func(b []byte) string {
		var bits uint64
		for j := len(b) - 1; j >= 0; j-- {
			bits = bits<<8 | uint64(b[j])
		}
		if et.IsFloat() {
			return fmt.Sprintf("%g (%#x)", hlo.DecodeFloat(et, bits), bits)
		}
		return fmt.Sprintf("%#x", bits)
	}
	first, count := -1, 0
	for i := 0; i+n <= len(w); i += n {
		if string(w[i:i+n]) != string(g[i:i+n]) {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	require.Fail(t, fmt.Sprintf("%d of %d elements differ; the first, element %d: want %s, got %s",
		count, len(w)/n, first/n, value(w[first:first+n]), value(g[first:first+n])), msg...)
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
	outs, _, err := exe.Run(context.Background(), x, y)
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

	_, _, err = exe.Run(context.Background(), good)
	require.ErrorContains(t, err, "takes 2 arguments, got 1")
	_, _, err = exe.Run(context.Background(), wrongShape, scalar)
	require.ErrorContains(t, err, "argument 0 (parameter a): want shape f32[2,3], got f32[3,2]")
	_, _, err = exe.Run(context.Background(), good, good)
	require.ErrorContains(t, err, "argument 1 (parameter b): want element type s32, got f32")
	_, _, err = exe.Run(context.Background(), wrongType, scalar)
	require.ErrorContains(t, err, "parameter a")

	outs, _, err := exe.Run(context.Background(), good, scalar)
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
				outs, _, err := exe.Run(context.Background(), x)
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
					wv := (&vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}).Float64At(j)
					if g.Type.IsFloat() {
						require.Zero(t, hlotest.ULPs(hlo.ElementType(g.Type), wv, g.Float64At(j)), "%s out%d[%d]: want %v got %v", c.Name, i, j, wv, g.Float64At(j))
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
	require.Equal(t, 1, len(vkjit.ProgramOf(exe).Steps), "broadcast and multiply fused into the reduce")
	_, want, outs := runBoth(t, exe, m, 11, "calls")
	require.Equal(t, string(want.Leaves()[0].Data), string(outs[0].Data))
}

// TestMapInlined: a map of a scalar computation (a call inside, a
// constant, a compare and a select) becomes that computation's ops over
// the arrays, fused into one kernel, bit for bit the evaluator's.
func TestMapInlined(t *testing.T) {
	defer noValidationMessages(t)
	m, err := hlo.Parse("map.hlo", `HloModule m
sq {
  a = f32[] parameter(0)
  ROOT s = f32[] multiply(a, a)
}
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(3)
  p = f32[] multiply(a, b)
  q = f32[] call(p), to_apply=sq
  gt = pred[] compare(q, c), direction=GT
  ROOT r = f32[] select(gt, q, c)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[64,32] parameter(1)
  ROOT m = f32[64,32] map(x, y), dimensions={0,1}, to_apply=f
}`)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	require.Len(t, vkjit.ProgramOf(exe).Steps, 1, "the map's ops fused into one kernel")
	_, want, outs := runBoth(t, exe, m, 12, "map")
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
	const branches = `neg {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
dbl {
  a = f32[3] parameter(0)
  ROOT n = f32[3] add(a, a)
}`
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
` + branches + `
ENTRY main {
  x = f32[3] parameter(0)
  k = s32[] constant(7)
  c1 = f32[3] conditional(k, x, x), branch_computations={neg, dbl}
  p = pred[] constant(true)
  ROOT c2 = f32[3] conditional(p, c1, x), true_computation=neg, false_computation=dbl
}`,
		"conditional_false_first": `HloModule c
` + branches + `
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

// structuredTail is the part the structured-op tests share
// (TestMiniFloatStructuredOps, TestNarrowIntegerStructuredOps,
// TestComplexStructuredOps): on s and y, $T[8,16] each, a scatter with
// repeated row indices and combiner $SC, a gather that reads one row
// twice, a transpose, a reverse, a pad with $PAD and a concatenation.
// structuredTailOuts lists its results' shapes and names, for the
// tests' ROOT tuples.
const structuredTail = `  idx = s32[8,1] constant({{0},{3},{3},{7},{1},{0},{5},{3}})
  sc = $T[8,16] scatter(s, idx, y), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=$SC
  gi = s32[4,1] constant({{6},{0},{2},{6}})
  g = $T[4,16] gather(s, gi), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  tr = $T[16,8] transpose(s), dimensions={1,0}
  rv = $T[8,16] reverse(s), dimensions={0,1}
  p = $T[10,18] pad(s, $PAD), padding=1_1x1_1
  cc = $T[8,32] concatenate(s, y), dimensions={1}
`

var structuredTailOuts = [2]string{"$T[8,16], $T[4,16], $T[16,8], $T[8,16], $T[10,18], $T[8,32]", "sc, g, tr, rv, p, cc"}

// scalarComps are scalar computations of element type $T named as
// keys: a binary op ("maximum", applied to the two parameters) or a
// compare ("compare:LT", with any further attributes after the
// direction, as "compare:LT, type=TOTALORDER").
func scalarComps(comps map[string]string) string {
	names := slices.Sorted(maps.Keys(comps))
	var b strings.Builder
	for _, name := range names {
		op, result := comps[name], "$T"
		if dir, ok := strings.CutPrefix(op, "compare:"); ok {
			op, result = "compare", "pred"
			fmt.Fprintf(&b, "%s {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT r = %s[] %s(a, b), direction=%s\n}\n", name, result, op, dir)
			continue
		}
		fmt.Fprintf(&b, "%s {\n  a = $T[] parameter(0)\n  b = $T[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n", name, result, op)
	}
	return b.String()
}
