package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// zeigData is testdata/zeig.json (zeig.py): LAPACK's zgeev of complex
// matrices (through NumPy) and its zgehrd (through ctypes).
type zeigData struct {
	Eig   []eigCase
	Gehrd []struct {
		N         int
		A, H, Tau json.RawMessage
	}
}

func zeigCases(t *testing.T) zeigData {
	raw, err := os.ReadFile("testdata/zeig.json")
	require.NoError(t, err)
	var d zeigData
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Len(t, d.Eig, 15)
	require.Len(t, d.Gehrd, 6)
	return d
}

// runC128 runs a one-instruction module of the custom-call target on
// the n x n complex128 a, with its result tuple and backend config.
func runC128(t *testing.T, name, target, result, config string, n int, a []complex128) []*hlo.Literal {
	src := fmt.Sprintf(`HloModule m
ENTRY e {
  a = c128[%[1]d,%[1]d] parameter(0)
  ROOT r = %[2]s custom-call(a), custom_call_target="%[3]s", backend_config={%[4]s}
}`, n, result, target, config)
	m, err := hlo.Parse(name, src)
	require.NoError(t, err, name)
	require.NoError(t, Check(m), name)
	out, err := Run(m, lit64(hlo.C128, []int64{int64(n), int64(n)}, a))
	require.NoError(t, err, name)
	return out.Leaves()
}

// TestGeevComplexAgainstLapack: the evaluator's zgeev gives LAPACK's
// eigenvalues and right eigenvectors (testdata/zeig.json) as
// TestGeevAgainstLapack checks the real geev's: to 1e-12 of the
// matrix's norm, sorted, each eigenpair's a v = lambda v and u^H a =
// lambda u^H, norm 1 and the first largest element real and positive,
// and LAPACK's vectors up to phase where the eigenvalue is simple.
// Random matrices of orders 1 to 30, a real matrix of rank 2, a
// Hermitian and a triangular matrix, a cyclic permutation, a badly
// scaled and a tiny matrix, a Jordan block of order 12 at 1 + i, and a
// permuted block triangular matrix (gebal's permutation isolates five
// of its eigenvalues).
func TestGeevComplexAgainstLapack(t *testing.T) {
	for _, c := range zeigCases(t).Eig {
		n := c.N
		am, wv, vv := values(t, c.A, true), values(t, c.W, true), values(t, c.V, true)
		name := fmt.Sprintf("c128[%d,%d]", n, n)
		got := runC128(t, name, "lapack_zgeev_ffi", fmt.Sprintf("(c128[%[1]d], c128[%[1]d,%[1]d], c128[%[1]d,%[1]d], s32[])", n),
			"compute_left = 86 : ui8, compute_right = 86 : ui8", n, am)
		require.Equal(t, int64(0), get(got[3], 0).i, "%s info", name)
		checkEigen(t, name, n, am, complexes(got[0]), complexes(got[1]), complexes(got[2]), wv, vv, false)
	}
}

// TestGeesComplex: the evaluator's zgees of testdata/zeig.json's
// matrices gives a complex Schur form: a = Z T Z^H and Z^H Z = I to
// 1e-12, T upper triangular with w on its diagonal, those LAPACK's
// eigenvalues (zgeev's, nearest) to 1e-12 of the matrix's norm, and each
// column of Z with its first largest element real and positive; mode
// 'N' leaves Z zero.
func TestGeesComplex(t *testing.T) {
	for _, c := range zeigCases(t).Eig {
		n := c.N
		am, wv := values(t, c.A, true), values(t, c.W, true)
		var norm float64
		for _, x := range am {
			norm = math.Hypot(norm, cmplx.Abs(x))
		}
		tol := 1e-12 * math.Max(norm, 1e-300)
		for _, mode := range []int{'V', 'N'} {
			name := fmt.Sprintf("c128[%d,%d] mode %c", n, n, mode)
			got := runC128(t, name, "lapack_zgees_ffi", fmt.Sprintf("(c128[%[1]d,%[1]d], c128[%[1]d,%[1]d], c128[%[1]d], s32[], s32[])", n),
				fmt.Sprintf("mode = %d : ui8, sort = 78 : ui8", mode), n, am)
			require.Equal(t, int64(0), get(got[4], 0).i, "%s info", name)
			T, Z, w := complexes(got[0]), complexes(got[1]), complexes(got[2])
			for i := range n {
				for j := range i {
					require.Zero(t, T[i*n+j], "%s: T below its diagonal at [%d,%d]", name, i, j)
				}
				require.Equal(t, T[i*n+i], w[i], "%s: w on T's diagonal at %d", name, i)
				best := math.Inf(1)
				for _, x := range wv {
					best = math.Min(best, cmplx.Abs(x-w[i]))
				}
				require.LessOrEqual(t, best, tol, "%s eigenvalue %d: %v", name, i, w[i])
			}
			if mode == 'N' {
				for i := range Z {
					require.Zero(t, Z[i], "%s: Z not asked for", name)
				}
				continue
			}
			for i := range n {
				for j := range n {
					var zt, zz complex128 // (Z T Z^H)_ij, (Z^H Z)_ij
					for k := range n {
						zz += cmplx.Conj(Z[k*n+i]) * Z[k*n+j]
						for l := range n {
							zt += Z[i*n+k] * T[k*n+l] * cmplx.Conj(Z[j*n+l])
						}
					}
					require.LessOrEqual(t, cmplx.Abs(zt-am[i*n+j]), tol, "%s: a = Z T Z^H at [%d,%d]", name, i, j)
					require.LessOrEqual(t, cmplx.Abs(zz-map[bool]complex128{true: 1}[i == j]), 1e-13*float64(n), "%s: Z unitary at [%d,%d]", name, i, j)
				}
			}
			for j := range n {
				big := leadNear(Z, int64(n), int64(j), tieTolerance(0x1p-52, n))
				require.True(t, imag(Z[big*int64(n)+int64(j)]) == 0 && real(Z[big*int64(n)+int64(j)]) > 0, "%s: Schur vector %d's largest element %v", name, j, Z[big*int64(n)+int64(j)])
			}
		}
	}
}

// TestGehrdComplexAgainstLapack: the evaluator's zgehrd gives LAPACK's
// own (testdata/zeig.json, through ctypes), the Hessenberg form with the
// reflectors below it and tau, to 1e-13, for orders 1 to 13.
func TestGehrdComplexAgainstLapack(t *testing.T) {
	for _, c := range zeigCases(t).Gehrd {
		n := c.N
		name := fmt.Sprintf("c128[%d,%d]", n, n)
		got := runC128(t, name, "lapack_zgehrd_ffi", fmt.Sprintf("(c128[%[1]d,%[1]d], c128[%[2]d], s32[])", n, n-1),
			fmt.Sprintf("high = %d : i32, low = 1 : i32", n), n, values(t, c.A, true))
		for o, want := range [][]complex128{values(t, c.H, true), values(t, c.Tau, true)} {
			out := complexes(got[o])
			for i, w := range want {
				require.LessOrEqual(t, cmplx.Abs(w-out[i]), 1e-13, "%s output %d element %d: %v, LAPACK's %v", name, o, i, out[i], w)
			}
		}
	}
}
