package vkjit_test

import (
	"context"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
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
