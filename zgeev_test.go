package vkjit_test

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// complexMatrices is nb random n x n complex matrices of type ty (c64 or
// c128), both parts uniform in [-1, 1), and their values.
func complexMatrices(rng *rand.Rand, ty string, nb, n int) (*vkjit.Tensor, []complex128) {
	v := make([]complex128, nb*n*n)
	for i := range v {
		v[i] = complex(2*rng.Float64()-1, 2*rng.Float64()-1)
	}
	return tensorOf(ty, []int64{int64(nb), int64(n), int64(n)}, v), v
}

// complexTol is the tests' tolerance unit for ty: its roundoff, a few
// ulps up.
func complexTol(ty string) (string, float64) {
	if ty == "c64" {
		return "c", 2e-5
	}
	return "z", 1e-12
}

// TestGeevComplex runs LAPACK's cgeev and zgeev as JAX's CPU lowering
// calls them for jnp.linalg.eig of complex matrices on the device,
// batches of orders 1 to 12 with left and right vectors, either or
// neither, the second matrix of each batch real (its eigenvalues in
// conjugate pairs, whose real parts f32 and float64 round apart: the
// order had differed from the evaluator's), against the evaluator
// (whose zgeev matches LAPACK's in hlo/eval), and checks each
// eigenpair: a v = w v and u^H a = w u^H.
func TestGeevComplex(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, ty := range []string{"c64", "c128"} {
		letter, tol := complexTol(ty)
		for ci, n := range []int{1, 2, 5, 12} {
			left, right := ci != 1, ci != 2
			name := fmt.Sprintf("%s[2,%d,%d] left %v right %v", ty, n, n, left, right)
			_, full := complexMatrices(rng, ty, 2, n)
			for i := n * n; i < 2*n*n; i++ { // the second real: conjugate pairs, whose real parts rounding splits
				full[i] = complex(real(full[i]), 0)
			}
			a := tensorOf(ty, []int64{2, int64(n), int64(n)}, full)
			job := map[bool]int{true: 'V', false: 'N'}
			src := fmt.Sprintf(`HloModule eig
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d], %[1]s[2,%[2]d,%[2]d], %[1]s[2,%[2]d,%[2]d], s32[2]) custom-call(a), custom_call_target="lapack_%[3]sgeev_ffi", backend_config={compute_left = %[4]d : ui8, compute_right = %[5]d : ui8}
}`, ty, n, letter, job[left], job[right])
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			for b := range 2 {
				require.Zero(t, valueAt(res[3], int64(b)), "%s info", name)
				for j := range n {
					requireEigenpair(t, name, full, b, n, j, valueAt(res[0], int64(b*n+j)), res[1], res[2], left, right, 50*tol*float64(n))
				}
			}
		}
	}
}

// TestGeesComplex runs LAPACK's cgees and zgees (no sorting) as JAX's
// CPU lowering calls them for jax.scipy.linalg.schur of complex
// matrices on the device, batches of orders 1 to 12, Schur vectors or
// not, against the evaluator (the same Hessenberg reduction and zlahqr;
// these matrices are small enough that both deflate in the same rows),
// and checks the form: a = Z T Z^H, Z unitary, T upper triangular with
// w on its diagonal.
func TestGeesComplex(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, ty := range []string{"c64", "c128"} {
		letter, tol := complexTol(ty)
		for ci, n := range []int{1, 2, 5, 12} {
			mode := map[bool]int{true: 'V', false: 'N'}[ci != 2]
			name := fmt.Sprintf("%s[2,%d,%d] mode %c", ty, n, n, mode)
			a, _ := complexMatrices(rng, ty, 2, n)
			src := fmt.Sprintf(`HloModule schur
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[2]d], %[1]s[2,%[2]d,%[2]d], %[1]s[2,%[2]d], s32[2], s32[2]) custom-call(a), custom_call_target="lapack_%[3]sgees_ffi", backend_config={mode = %[4]d : ui8, sort = 78 : ui8}
}`, ty, n, letter, mode)
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			at := func(x *vkjit.Tensor, b, i, j int) complex128 { return valueAt(x, int64((b*n+i)*n+j)) }
			for b := range 2 {
				require.Zero(t, valueAt(res[4], int64(b)), "%s info", name)
				for i := range n {
					require.Equal(t, at(res[0], b, i, i), valueAt(res[2], int64(b*n+i)), "%s: w on T's diagonal", name)
					for j := range n {
						if j < i {
							require.Zero(t, at(res[0], b, i, j), "%s: T below its diagonal", name)
						}
						if mode == 'N' {
							require.Zero(t, at(res[1], b, i, j), "%s: Z not asked for", name)
							continue
						}
						requireSchurAt(t, name, a, res[0], res[1], b, n, i, j, 20*tol*float64(n))
					}
				}
			}
		}
	}
}

// TestGehrdComplex runs LAPACK's cgehrd and zgehrd as JAX's CPU lowering
// calls them for jax.scipy.linalg.hessenberg of complex matrices on the
// device, batches of orders 1 to 12, against the evaluator (which
// matches LAPACK's own zgehrd in hlo/eval), and checks that Q = H(0)
// ... H(n-2), H(k) = I - tau_k v_k v_k^H from the reflectors below the
// subdiagonal, takes a to the Hessenberg form above it: Q^H a Q = h, its
// subdiagonal real.
func TestGehrdComplex(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(45, 46))
	for _, ty := range []string{"c64", "c128"} {
		letter, tol := complexTol(ty)
		for _, n := range []int{1, 2, 5, 12} {
			name := fmt.Sprintf("%s[2,%d,%d]", ty, n, n)
			a, full := complexMatrices(rng, ty, 2, n)
			src := fmt.Sprintf(`HloModule hessenberg
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[2]d], %[1]s[2,%[3]d], s32[2]) custom-call(a), custom_call_target="lapack_%[4]sgehrd_ffi", backend_config={high = %[2]d : i32, low = 1 : i32}
}`, ty, n, n-1, letter)
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			for b := range 2 {
				h := func(i, j int) complex128 { return valueAt(res[0], int64((b*n+i)*n+j)) }
				q := reflectorsQ(res[0], res[1], b, n)
				for i := range n {
					if i > 0 {
						require.Zero(t, imag(h(i, i-1)), "%s: subdiagonal real at %d", name, i)
					}
					for j := range n {
						var s complex128 // (Q^H a Q)_ij
						for k := range n {
							for l := range n {
								s += cmplx.Conj(q[k*n+i]) * full[(b*n+k)*n+l] * q[l*n+j]
							}
						}
						var want complex128
						if i <= j+1 {
							want = h(i, j)
						}
						require.LessOrEqual(t, cmplx.Abs(want-s), 20*tol*float64(n), "%s: Q^H a Q at [%d,%d,%d]", name, b, i, j)
					}
				}
			}
		}
	}
}

// reflectorsQ is Q = H(0) H(1) ... H(n-2) of matrix b of gehrd's
// results h ([..., n, n], the reflectors below the subdiagonal) and tau
// ([..., n-1]): H(k) = I - tau_k v_k v_k^H, v_k 1 at row k+1 and h's
// column k below it.
func reflectorsQ(h, tau *vkjit.Tensor, b, n int) []complex128 {
	q := make([]complex128, n*n)
	for i := range n {
		q[i*n+i] = 1
	}
	for k := 0; k+1 < n; k++ {
		t := valueAt(tau, int64(b*(n-1)+k))
		v := make([]complex128, n)
		v[k+1] = 1
		for r := k + 2; r < n; r++ {
			v[r] = valueAt(h, int64((b*n+r)*n+k))
		}
		for r := range n { // q -= tau (q v) v^H
			var w complex128
			for c := range n {
				w += q[r*n+c] * v[c]
			}
			for c := range n {
				q[r*n+c] -= t * w * cmplx.Conj(v[c])
			}
		}
	}
	return q
}

// requireSchurAt holds element (i, j) of matrix b of the batch a ([...,
// n, n], real or complex) to its Schur form (T, Z) to tol: a = Z T Z^H
// there, and (Z^H Z)_ij the identity's (Z^T for a real Z).
func requireSchurAt(t *testing.T, name string, a, T, Z *vkjit.Tensor, b, n, i, j int, tol float64) {
	t.Helper()
	at := func(x *vkjit.Tensor, i, j int) complex128 { return valueAt(x, int64((b*n+i)*n+j)) }
	var zt, zz complex128
	for k := range n {
		zz += cmplx.Conj(at(Z, k, i)) * at(Z, k, j)
		for l := range n {
			zt += at(Z, i, k) * at(T, k, l) * cmplx.Conj(at(Z, j, l))
		}
	}
	require.LessOrEqual(t, cmplx.Abs(zt-at(a, i, j)), tol, "%s: a = Z T Z^H at [%d,%d,%d]", name, b, i, j)
	require.LessOrEqual(t, cmplx.Abs(zz-map[bool]complex128{true: 1}[i == j]), tol, "%s: Z unitary at [%d,%d,%d]", name, b, i, j)
}
