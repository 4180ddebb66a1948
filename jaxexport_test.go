package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/stablehlo"
)

// TestJAXExportedComplexLapack runs StableHLO that JAX exported for its
// CPU backward-compatibility tests (testdata/jax) and compares with the
// values LAPACK computed there: cgehrd's Hessenberg form, reflectors and
// taus of two 4x4 matrices (all of them: the reduction is unique), and
// cgeev's two simple eigenpairs of the rank-2 4x4 iota (the double zero
// eigenvalue's vectors are any basis of its space; its eigenvalues come
// out within roundoff of zero).
func TestJAXExportedComplexLapack(t *testing.T) {
	defer noValidationMessages(t)
	run := func(file string) []*vkjit.Tensor {
		exe, err := rt.CompileFile(file, vkjit.CompileOptions{})
		require.NoError(t, err, file)
		defer exe.Close()
		res, _, err := exe.Run(context.Background())
		require.NoError(t, err, file)
		return res
	}
	near := func(what string, got, want complex128, tol float64) {
		t.Helper()
		require.LessOrEqual(t, cmplx.Abs(got-want), tol, "%s: %v, LAPACK's %v", what, got, want)
	}

	h := run("testdata/jax/hessenberg_c64.mlir")
	wantH := []complex128{
		5.2023945 - 0.878671i, -2.8841915 - 0.47488597i, 1.3024182 + 0.6651789i, 4.9291854 - 1.9147056i,
		6.3457894, 1.6869383 - 4.6557646i, 0.88955224 - 1.7617276i, 2.9149916 + 4.342665i,
		-0.2465725 - 0.5776757i, -5.3007755, -0.9786545 - 0.0633831i, -1.3690261 - 1.5921416i,
		0.35462287 + 0.35993803i, -0.38403815 - 0.46558398i, 2.8020499, 0.5636822 - 6.218306i,

		1.0687767 - 3.88293i, -4.0144 - 2.5885587i, 5.3900986 - 0.8850739i, 2.079677 + 3.5515747i,
		7.5675693, 0.5971966 - 3.6699948i, 2.246994 - 1.0858283i, -0.8870981 - 0.022960603i,
		-0.2183232 + 0.10552277i, 5.860886, -5.091036 + 6.2841997i, 5.008773 + 1.8765848i,
		0.1378771 + 0.427895i, 0.63263524 - 0.3470098i, 6.4528017, -4.233642 - 0.84165764i,
	}
	wantTau := []complex128{1.0933675 - 0.3605358i, 1.1987956 + 0.5659744i, 1.9999101 - 0.013409062i,
		1.4504763 - 0.44363326i, 1.3110259 - 0.07426627i, 1.227255 + 0.97383535i}
	for i, w := range wantH {
		near("cgehrd h", valueAt(h[0], int64(i)), w, 1e-5)
	}
	for i, w := range wantTau {
		near("cgehrd tau", valueAt(h[1], int64(i)), w, 1e-6)
	}

	e := run("testdata/jax/eig_c64.mlir")
	// vkjit sorts by real part: -2.46, the two near zero, 32.46; LAPACK
	// returned 32.46 first, then -2.46.
	type pair struct {
		col    int64
		w      complex128
		vl, vr []complex128
	}
	for _, p := range []pair{
		{3, 32.464249, []complex128{0.40377736, 0.4648074, 0.52583736, 0.5868672}, []complex128{0.114176415, 0.3300045, 0.5458329, 0.7616609}},
		{0, -2.4642491, []complex128{0.8288328, 0.43714643, 0.04545992, -0.34622622}, []complex128{0.73277825, 0.2897482, -0.15328139, -0.59631103}},
	} {
		near("cgeev w", valueAt(e[0], p.col), p.w, 2e-5*32.5)
		for i := range int64(4) {
			near("cgeev vl", valueAt(e[1], i*4+p.col), p.vl[i], 1e-5)
			near("cgeev vr", valueAt(e[2], i*4+p.col), p.vr[i], 1e-5)
		}
	}
	for _, c := range []int64{1, 2} {
		require.Less(t, cmplx.Abs(valueAt(e[0], c)), 1e-5*32.5, "cgeev: the double zero eigenvalue")
	}
}

// TestJAXExportedTridiagonalSolve runs jax.lax.linalg.tridiagonal_solve
// as JAX exported it for its CPU backward-compatibility tests (LAPACK's
// gtsv, testdata/jax/tridiagonal_solve_*.mlir) on those tests' inputs,
// and compares the device's and the evaluator's solutions with the ones
// LAPACK computed there (.npz, want): f32 (the device's elimination and
// substitution are LAPACK's steps in f32) and c128.
func TestJAXExportedTridiagonalSolve(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		name string
		tol  float64 // relative to the solution's largest element
	}{{"f32", 2e-6}, {"c128", 1e-14}} {
		t.Run(c.name, func(t *testing.T) {
			file := "testdata/jax/tridiagonal_solve_" + c.name
			data, err := vkjit.ReadNPZ(file + ".npz")
			require.NoError(t, err)
			args := []*vkjit.Tensor{data["dl"], data["d"], data["du"], data["b"]}
			exe, err := rt.CompileFile(file+".mlir", vkjit.CompileOptions{})
			require.NoError(t, err)
			defer exe.Close()
			res, _, err := exe.Run(context.Background(), args...)
			require.NoError(t, err)
			want := data["want"]
			scale := 0.0
			for i := range want.NumElements() {
				scale = max(scale, cmplx.Abs(valueAt(want, i)))
			}
			src, err := os.ReadFile(file + ".mlir")
			require.NoError(t, err)
			mod, err := stablehlo.ParseModule(file+".mlir", string(src))
			require.NoError(t, err)
			lits := make([]*hlo.Literal, len(args))
			for i, a := range args {
				lits[i] = literalOf(a)
			}
			ev, err := eval.Run(mod, lits...)
			require.NoError(t, err)
			e := ev.Leaves()[0]
			et := &vkjit.Tensor{Type: vkjit.DType(e.Shape.Elem), Dims: e.Shape.Dims, Data: e.Data}
			for i := range want.NumElements() {
				w := valueAt(want, i)
				require.LessOrEqual(t, cmplx.Abs(valueAt(res[0], i)-w), c.tol*scale, "device, element %d", i)
				require.LessOrEqual(t, cmplx.Abs(valueAt(et, i)-w), c.tol*scale, "evaluator, element %d", i)
			}
		})
	}
}

// TestGtsv holds the device's gtsv to the evaluator's on what the
// exported tests leave out: every output (the factored diagonals and
// info too), a batch where one system meets a zero pivot (LAPACK stops
// there: info is the pivot's row + 1, and JAX makes that system's x NaN)
// beside one that pivots, one row, and the f64 and c64 kernels.
func TestGtsv(t *testing.T) {
	defer noValidationMessages(t)
	prog := func(ty string, batch, n, k int) string {
		letter := map[string]string{"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[ty]
		return tridiagonalCall(ty, batch, n, k, fmt.Sprintf("(%[1]s[%[2]d,%[3]d], %[1]s[%[2]d,%[3]d], %[1]s[%[2]d,%[3]d], %[1]s[%[2]d,%[3]d,%[4]d], s32[%[2]d])", ty, batch, n, k), "lapack_"+letter+"gtsv_ffi")
	}
	// tensor holds v + i v/2 (v alone for the real types).
	tensor := func(ty string, dims []int64, vals []float64) *vkjit.Tensor {
		cs := make([]complex128, len(vals))
		for i, v := range vals {
			cs[i] = complex(v, v/2)
		}
		return tensorOf(ty, dims, cs)
	}
	// System 0 pivots at row 1 (|dl| > |d|) and meets a zero pivot at
	// row 3; system 1 keeps its rows.
	dl := []float64{0, 3, 0, 0, 0, 0.5, 0.25, 0.125}
	d := []float64{1, 2, 0, 4, 4, 5, 6, 7}
	du := []float64{2, 6, 1, 0, 1, 1, 1, 0}
	b := []float64{1, 2, 3, 4, 5, 6, 7, 8, 1, -1, 2, -2, 3, -3, 4, -4}
	for _, ty := range []string{"f32", "f64", "c64", "c128"} {
		res, want := deviceAndEval(t, "gtsv "+ty, prog(ty, 2, 4, 2),
			tensor(ty, []int64{2, 4}, dl), tensor(ty, []int64{2, 4}, d), tensor(ty, []int64{2, 4}, du), tensor(ty, []int64{2, 4, 2}, b))
		require.Equal(t, []int32{3, 0}, []int32{int32(real(valueAt(res[4], 0))), int32(real(valueAt(res[4], 1)))}, "%s info", ty)
		requireNearEval(t, "gtsv "+ty, res, want, 1e-5)
		res, want = deviceAndEval(t, "gtsv one row "+ty, prog(ty, 1, 1, 1),
			tensor(ty, []int64{1, 1}, []float64{9}), tensor(ty, []int64{1, 1}, []float64{4}), tensor(ty, []int64{1, 1}, []float64{9}), tensor(ty, []int64{1, 1, 1}, []float64{2}))
		requireNearEval(t, "gtsv one row "+ty, res, want, 0)
		if x := valueAt(res[3], 0); ty == "f32" || ty == "f64" {
			require.Equal(t, complex(0.5, 0), x, "2/4")
		}
	}
}

// TestShardyRoundTripCalls: HLO that JAX prints with Shardy on carries
// its manual computations and result shardings as custom-calls
// (xla.sdy.GlobalToLocalShape of several operands, LocalToGlobalShape,
// PropagationBarrier, FuncResultSharding); on a mesh of one device each
// passes its operands on.
func TestShardyRoundTripCalls(t *testing.T) {
	defer noValidationMessages(t)
	src := `HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=1]>}}

body {
  a = f32[8,4] parameter(0)
  b = f32[4] parameter(1)
  bb = f32[8,4] broadcast(b), dimensions={1}
  ROOT m = f32[8,4] multiply(a, bb)
}

ENTRY main {
  x = f32[8,4] parameter(0)
  y = f32[4] parameter(1)
  g = (f32[8,4], f32[4]) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true
  g0 = f32[8,4] get-tuple-element(g), index=0
  g1 = f32[4] get-tuple-element(g), index=1
  c = f32[8,4] call(g0, g1), to_apply=body
  l = f32[8,4] custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape"
  p = f32[8,4] custom-call(l), custom_call_target="xla.sdy.PropagationBarrier"
  ROOT r = f32[8,4] custom-call(p), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
}`
	x, y := make([]float64, 32), []float64{1, -2, 0.5, 3}
	for i := range x {
		x[i] = float64(i) - 7.5
	}
	f32s := func(dims []int64, v []float64) *vkjit.Tensor {
		cs := make([]complex128, len(v))
		for i, f := range v {
			cs[i] = complex(f, 0)
		}
		return tensorOf("f32", dims, cs)
	}
	res, want := deviceAndEval(t, "sdy round trip", src, f32s([]int64{8, 4}, x), f32s([]int64{4}, y))
	requireNearEval(t, "sdy round trip", res, want, 0)
	for i := range int64(32) {
		require.Equal(t, complex(float64(float32(x[i]*y[i%4])), 0), valueAt(res[0], i))
	}
}

// TestJAXExportedTridiagonal runs jax.lax.linalg.tridiagonal as JAX
// exported it for its CPU backward-compatibility tests (LAPACK's ssytrd
// and chetrd, lower triangle, testdata/jax/tridiagonal_*.mlir) and holds
// every result, on the device and in the evaluator, to the values
// LAPACK computed there: the matrix with the tridiagonal form and the
// reflectors in its lower triangle (its upper triangle as it was, a
// Hermitian diagonal made real), d, e and tau.
func TestJAXExportedTridiagonal(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		name string
		want [4][]complex128 // a, d, e, tau
	}{
		{"f32", [4][]complex128{
			{-0.8395241, 0.156272, -1.6810869, 0.23832119, -2.985257, -5.571, -0.22652794, -0.83806676,
				0.27237308, -1.6295947, 2.0042834, -1.148861, -0.17183593, 0.57464546, 0.5536146, -4.206357,
				1.7666914, 2.569005, -0.86576384, -0.1617768, -5.143918, 5.0426254, -3.7237067, 4.383015,
				0.33311516, -1.5299042, -8.854181, -2.896776, 0.3419102, 0.2669245, -2.8250606, 5.752488},
			{-0.8395241, -5.571, 2.0042834, -4.206357, 1.7666914, 5.0426254, -8.854181, 5.752488},
			{-2.985257, -1.6295947, 0.5536146, -5.143918, -1.5299042, -2.8250606},
			{1.8120625, 1.5035137, 0, 1.6288393, 1.8669801, 0},
		}},
		{"c64", [4][]complex128{
			{3.3228416, -1.9756439 + 4.593356i, 7.367708 + 0.88518727i, -8.659938 + 1.6132793i,
				-6.9206004, -3.6362798, 3.3011198 - 4.644362i, -4.8589935 - 0.61439794i,
				0.64957 + 0.060723424i, 6.620491, 0.2882607, -1.0288142 + 1.8544064i,
				-0.05458622 + 0.10473086i, -0.15611424 + 0.06925995i, -4.431866, 2.364208,
				-4.1803885, 0.5670845 + 0.6913016i, 2.675204 - 0.23881845i, -0.41825035 - 1.4060576i,
				8.33625, 2.6144838, -2.4941807 - 1.9316154i, 0.6687787 - 2.209776i,
				0.019031923 + 0.17462212i, 2.7034955, -0.70924187, 2.7962255 + 1.5316825i,
				-0.057821754 + 0.023692288i, -0.62805307 - 0.0882424i, 6.6364865, -1.698973},
			{3.3228416, -3.6362798, 0.2882607, 2.364208, -4.1803885, 2.6144838, -0.70924187, -1.698973},
			{-6.9206004, 6.620491, -4.431866, 8.33625, 2.7034955, 6.6364865},
			{1.360567 + 0.1977107i, 1.7586378 - 0.56989706i, 1.5772758 - 0.8165493i,
				1.9152443 - 0.1834492i, 1.1593437 + 0.55631363i, 1.6889225 - 0.724835i},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := "testdata/jax/tridiagonal_" + c.name + ".mlir"
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			mod, err := stablehlo.ParseModule(file, string(src))
			require.NoError(t, err)
			ev, err := eval.Run(mod)
			require.NoError(t, err)
			// The matrix, a constant in the file, as the argument it is
			// in a program: the compiler would fold the call with the
			// evaluator otherwise.
			args := vkjit.ConstantsAsParameters(mod)
			require.Len(t, args, 1)
			require.Equal(t, 3, len(args[0].Dims))
			exe, err := rt.Compile(mod, vkjit.CompileOptions{})
			require.NoError(t, err)
			defer exe.Close()
			res, _, err := exe.Run(context.Background(), args...)
			require.NoError(t, err)
			for o, want := range c.want {
				e := ev.Leaves()[o]
				et := &vkjit.Tensor{Type: vkjit.DType(e.Shape.Elem), Dims: e.Shape.Dims, Data: e.Data}
				for i, w := range want {
					// f32 rounding of values up to 9: LAPACK's blocked
					// products and these loops differ by a few ulp.
					tol := 4e-6 * max(1, cmplx.Abs(w))
					require.LessOrEqual(t, cmplx.Abs(valueAt(res[o], int64(i))-w), tol, "device, output %d element %d", o, i)
					require.LessOrEqual(t, cmplx.Abs(valueAt(et, int64(i))-w), tol, "evaluator, output %d element %d", o, i)
				}
			}
		})
	}
}

// TestJAXExportedApproxTopK runs jax.lax.approx_max_k as JAX exports it:
// XLA's ApproxTopK custom-call, for TPU (JAX's own test file) and as its
// CPU lowering writes it (is_fallback), against the values and indices
// JAX's tests expect, on the device and in the evaluator.
func TestJAXExportedApproxTopK(t *testing.T) {
	defer noValidationMessages(t)
	x := make([]float32, 24)
	for i := range x {
		x[i] = float32(i)
	}
	arange, err := vkjit.Float32s([]int64{24}, x)
	require.NoError(t, err)
	down := func(from, to float64) []float64 {
		var v []float64
		for x := from; x >= to; x-- {
			v = append(v, x)
		}
		return v
	}
	for _, c := range []struct {
		file            string
		args            []*vkjit.Tensor
		values, indices []float64
	}{
		{"approx_top_k_tpu", nil, []float64{7, 6, 5}, []float64{6, 5, 4}},
		{"approx_top_k_cpu", []*vkjit.Tensor{arange}, down(23, 4), down(23, 4)},
	} {
		t.Run(c.file, func(t *testing.T) {
			file := "testdata/jax/" + c.file + ".mlir"
			exe, err := rt.CompileFile(file, vkjit.CompileOptions{})
			require.NoError(t, err)
			defer exe.Close()
			res, _, err := exe.Run(context.Background(), c.args...)
			require.NoError(t, err)
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			mod, err := stablehlo.ParseModule(file, string(src))
			require.NoError(t, err)
			var lits []*hlo.Literal
			for _, a := range c.args {
				lits = append(lits, literalOf(a))
			}
			ev, err := eval.Run(mod, lits...)
			require.NoError(t, err)
			var evs []*vkjit.Tensor
			for _, e := range ev.Leaves() {
				evs = append(evs, &vkjit.Tensor{Type: vkjit.DType(e.Shape.Elem), Dims: e.Shape.Dims, Data: e.Data})
			}
			for what, got := range map[string][]*vkjit.Tensor{"device": res, "evaluator": evs} {
				require.Len(t, got, 2, what)
				require.Equal(t, int64(len(c.values)), got[0].NumElements(), what)
				for i := range c.values {
					require.Equal(t, c.values[i], got[0].Float64At(int64(i)), "%s value %d", what, i)
					require.Equal(t, c.indices[i], got[1].Float64At(int64(i)), "%s index %d", what, i)
				}
			}
		})
	}
}

// TestJAXExportedDynamicShapes runs modules of symbolic shapes as
// jax.export writes them, refined from their arguments' shapes
// (CompileOptions.Arguments): JAX's own shape-polymorphic exports of
// top_k (with a shape_assertion), approx_max_k (k symbolic) and
// rng_bit_generator (a shape computed from two dimension variables,
// sliced with a stride), against
// the values JAX's tests expect; and a softmax of several batch sizes
// (testdata/dynamic_softmax.mlir) against the evaluator and against
// NumPy's values for one batch, each size compiled by one runtime (the
// compile cache keeps the refinements apart).
func TestJAXExportedDynamicShapes(t *testing.T) {
	defer noValidationMessages(t)
	run := func(file string, args ...*vkjit.Tensor) []*vkjit.Tensor {
		var specs []vkjit.TensorSpec
		for _, a := range args {
			specs = append(specs, a.Spec())
		}
		exe, err := rt.CompileFile(file, vkjit.CompileOptions{Arguments: specs})
		require.NoError(t, err, file)
		defer exe.Close()
		res, _, err := exe.Run(context.Background(), args...)
		require.NoError(t, err, file)
		return res
	}
	floats := func(x *vkjit.Tensor) []float64 {
		v := make([]float64, x.NumElements())
		for i := range v {
			v[i] = x.Float64At(int64(i))
		}
		return v
	}

	x, err := vkjit.Float32s([]int64{4, 3}, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	require.NoError(t, err)
	top := run("testdata/jax/dynamic_top_k.mlir", x)
	require.Equal(t, []float64{2, 1, 5, 4, 8, 7, 11, 10}, floats(top[0]))
	require.Equal(t, []float64{2, 1, 2, 1, 2, 1, 2, 1}, floats(top[1]))

	ar := make([]float32, 24)
	for i := range ar {
		ar[i] = float32(i)
	}
	x24, err := vkjit.Float32s([]int64{24}, ar)
	require.NoError(t, err)
	approx := run("testdata/jax/dynamic_approx_top_k.mlir", x24)
	var down []float64
	for v := 23.0; v >= 4; v-- {
		down = append(down, v)
	}
	require.Equal(t, down, floats(approx[0]))
	require.Equal(t, down, floats(approx[1]))

	key := &vkjit.Tensor{Type: vkjit.U32, Dims: []int64{4}, Data: binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 42), 43), 44), 45)}
	a, err := vkjit.Float32s([]int64{2, 3}, make([]float32, 6))
	require.NoError(t, err)
	bits := run("testdata/jax/dynamic_rng_bit_generator.mlir", key, a)
	require.Equal(t, []int64{6, 4}, bits[0].Dims)
	require.Equal(t, []float64{
		2427392780, 1458059130, 393278117, 4094008499,
		2979149501, 2789479602, 236667834, 2209180022,
		3272265009, 654898663, 3518128447, 3522413436,
		3152133794, 2429726816, 183393703, 2087683200,
		2517633375, 3263052868, 344980918, 3676396031,
		3594828247, 2571774884, 3751275505, 2435848784,
	}, floats(bits[0]))

	rng := rand.New(rand.NewPCG(5, 6))
	src, err := os.ReadFile("testdata/dynamic_softmax.mlir")
	require.NoError(t, err)
	for _, b := range []int64{3, 1, 37} {
		v := make([]float32, b*8)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		if b == 3 { // NumPy's float32 softmax of these rows, plus the row index, squared three times, summed by rows
			copy(v, []float32{1, -1, 0.5, 2, 0, -0.25, 3, 1.5, -2, -1, 0, 1, 2, 3, -3, 0.75, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8})
		}
		xb, err := vkjit.Float32s([]int64{b, 8}, v)
		require.NoError(t, err)
		res := run("testdata/dynamic_softmax.mlir", xb)
		require.Equal(t, []int64{b, 8}, res[0].Dims)
		require.Equal(t, []int64{b}, res[1].Dims)
		tr, err := stablehlo.ParseOneWith("dynamic_softmax.mlir", string(src), stablehlo.Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, b, 8)}})
		require.NoError(t, err)
		ev, err := eval.Run(tr.HLO, literalOf(xb))
		require.NoError(t, err)
		for i, l := range ev.Leaves() {
			require.Equal(t, l.Data, res[i].Data, "b=%d result %d: device against evaluator", b, i)
		}
		if b == 3 {
			want := []float64{5.5238470e-03, 5.4225079e+01, 3.3431558e+03}
			for i, w := range want {
				require.InEpsilon(t, w, res[1].Float64At(int64(i)), 1e-5, "row %d against NumPy", i)
			}
		}
	}
}

// TestGtsvPerturbed runs jaxlib's tridiagonal_solve_perturbed_ffi
// (jax.lax.linalg.tridiagonal_solve with perturb_singular, which
// jax.scipy.linalg.eigh_tridiagonal's inverse iteration calls) on the
// device against the evaluator: a batch of random diagonally dominant
// systems (residual |T x - b| within rounding of |b|), one that pivots,
// a singular one (whose pivot the perturbation moves off zero: x is
// large along T's null vector (5, 0, -3) and exact where T pins it,
// x1 = 8 / 2), a single row, in f32, f64, c64 and c128.
func TestGtsvPerturbed(t *testing.T) {
	defer noValidationMessages(t)
	prog := func(ty string, batch, n, k int) string {
		return tridiagonalCall(ty, batch, n, k, fmt.Sprintf("%s[%d,%d,%d]", ty, batch, n, k), "tridiagonal_solve_perturbed_ffi")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, ty := range []string{"f32", "f64", "c64", "c128"} {
		tol := 1e-5
		if ty == "f64" || ty == "c128" {
			tol = 1e-12
		}
		complexType := ty == "c64" || ty == "c128"
		random := func(scale, shift float64) complex128 {
			v := complex(scale*(2*rng.Float64()-1)+shift, 0)
			if complexType {
				v += complex(0, scale*(2*rng.Float64()-1))
			}
			return v
		}
		// Three systems of 7 rows, 2 right-hand sides: the first two
		// diagonally dominant, the third with small diagonals (it pivots).
		const batch, n, k = 3, 7, 2
		dl, d, du, b := make([]complex128, batch*n), make([]complex128, batch*n), make([]complex128, batch*n), make([]complex128, batch*n*k)
		for s := range batch {
			for i := range n {
				shift := 4.0
				if s == 2 {
					shift = 0
				}
				dl[s*n+i], d[s*n+i], du[s*n+i] = random(1, 0), random(0.1, shift), random(1, 0)
			}
		}
		for i := range b {
			b[i] = random(1, 0)
		}
		args := []*vkjit.Tensor{tensorOf(ty, []int64{batch, n}, dl), tensorOf(ty, []int64{batch, n}, d), tensorOf(ty, []int64{batch, n}, du), tensorOf(ty, []int64{batch, n, k}, b)}
		res, want := deviceAndEval(t, "perturbed "+ty, prog(ty, batch, n, k), args...)
		requireNearEval(t, "perturbed "+ty, res, want, 100*tol)
		for s := range batch {
			for j := range k {
				x := func(i int) complex128 { return valueAt(res[0], int64((s*n+i)*k+j)) }
				for i := range n {
					r := valueAt(args[1], int64(s*n+i))*x(i) - valueAt(args[3], int64((s*n+i)*k+j))
					if i > 0 {
						r += valueAt(args[0], int64(s*n+i)) * x(i-1)
					}
					if i < n-1 {
						r += valueAt(args[2], int64(s*n+i)) * x(i+1)
					}
					require.LessOrEqual(t, cmplx.Abs(r), 100*tol, "%s system %d rhs %d row %d: residual", ty, s, j, i)
				}
			}
		}

		// Singular: [[0, 2, 0], [3, 0, 5], [0, 6, 0]] x = [8, 9, 10].
		sing := []*vkjit.Tensor{tensorOf(ty, []int64{1, 3}, []complex128{0, 3, 6}), tensorOf(ty, []int64{1, 3}, []complex128{0, 0, 0}),
			tensorOf(ty, []int64{1, 3}, []complex128{2, 5, 0}), tensorOf(ty, []int64{1, 3, 1}, []complex128{8, 9, 10})}
		res, want = deviceAndEval(t, "perturbed singular "+ty, prog(ty, 1, 3, 1), sing...)
		requireNearEval(t, "perturbed singular "+ty, res, want, 0)
		x0, x1, x2 := valueAt(res[0], 0), valueAt(res[0], 1), valueAt(res[0], 2)
		require.Equal(t, complex128(4), x1)
		require.Greater(t, cmplx.Abs(x0), 1e6, "%s: large along the null vector", ty)
		require.InDelta(t, -5.0/3, real(x0/x2), 1e-6, "%s: along (5, 0, -3)", ty)

		// One row: b / d, a zero d perturbed to the safe minimum.
		res, want = deviceAndEval(t, "perturbed one row "+ty, prog(ty, 2, 1, 1),
			tensorOf(ty, []int64{2, 1}, []complex128{0, 0}), tensorOf(ty, []int64{2, 1}, []complex128{4, 0}),
			tensorOf(ty, []int64{2, 1}, []complex128{0, 0}), tensorOf(ty, []int64{2, 1, 1}, []complex128{2, 1}))
		requireNearEval(t, "perturbed one row "+ty, res, want, 0)
		require.Equal(t, complex128(0.5), valueAt(res[0], 0))
		require.False(t, cmplx.IsInf(valueAt(res[0], 1)) || cmplx.IsNaN(valueAt(res[0], 1)), "%s: 1/0 perturbed: %v", ty, valueAt(res[0], 1))
	}
}

// tridiagonalCall is a module of custom-call target over dl, d, du of
// [batch, n] and b of [batch, n, k], all of type ty, returning result.
func tridiagonalCall(ty string, batch, n, k int, result, target string) string {
	return fmt.Sprintf(`HloModule tridiagonal
ENTRY e {
  dl = %[1]s[%[2]d,%[3]d] parameter(0)
  d = %[1]s[%[2]d,%[3]d] parameter(1)
  du = %[1]s[%[2]d,%[3]d] parameter(2)
  b = %[1]s[%[2]d,%[3]d,%[4]d] parameter(3)
  ROOT r = %[5]s custom-call(dl, d, du, b), custom_call_target="%[6]s"
}`, ty, batch, n, k, result, target)
}
