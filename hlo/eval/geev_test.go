package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestGeevAgainstLapack: the evaluator's geev gives LAPACK's
// eigenvalues (geev through NumPy: testdata/eig.py) to 1e-12 relative
// to the matrix's norm, each matched to the nearest of LAPACK's, sorted
// by real part, then imaginary magnitude, a pair adjacent with the
// positive imaginary part first, and a real one's imaginary part
// exactly zero where LAPACK's is; right eigenvectors
// LAPACK's up to each one's phase where the eigenvalue is simple; and
// for every eigenpair a v = lambda v and u^H a = lambda u^H to 1e-12,
// norm 1 and the first largest element (to 8 n ulp: a tie goes to the
// first) real and positive. Random
// matrices of orders 1 to 40, a rotation, a triangular matrix, a
// companion matrix (1, 2, 3, +-i), a Hessenberg matrix that splits, and
// a Jordan block of order 25 (defective: its vectors' substitution
// overflows float64 unless scaled) and a permuted block triangular
// matrix (gebal's permutation isolates five of its eigenvalues).
func TestGeevAgainstLapack(t *testing.T) {
	for _, c := range eigCases(t) {
		n := c.N
		am, wv, vv := values(t, c.A, false), values(t, c.W, true), values(t, c.V, true)
		name := fmt.Sprintf("f64[%d,%d]", n, n)
		src := fmt.Sprintf(`HloModule eig
ENTRY e {
  a = f64[%[1]d,%[1]d] parameter(0)
  ROOT r = (f64[%[1]d], f64[%[1]d], c128[%[1]d,%[1]d], c128[%[1]d,%[1]d], s32[]) custom-call(a), custom_call_target="lapack_dgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`, n)
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Check(m), name)
		out, err := Run(m, lit64(hlo.F64, []int64{int64(n), int64(n)}, am))
		require.NoError(t, err, name)
		got := out.Leaves()
		require.Equal(t, int64(0), get(got[4], 0).i, "%s info", name)
		w := make([]complex128, n)
		for j := range n {
			w[j] = complex(get(got[0], int64(j)).f, get(got[1], int64(j)).f)
		}
		checkEigen(t, name, n, am, w, complexes(got[2]), complexes(got[3]), wv, vv, true)
	}
}

// checkEigen checks geev's eigenvalues w and eigenvectors vl, vr of the
// n x n am against LAPACK's wv and vv as TestGeevAgainstLapack says; a
// real matrix's real eigenvalues must be real and its pairs adjacent.
func checkEigen(t *testing.T, name string, n int, am, w, vl, vr, wv, vv []complex128, realMatrix bool) {
	var norm float64
	for _, x := range am {
		norm = math.Hypot(norm, cmplx.Abs(x))
	}
	tol := 1e-12 * norm // relative: a matrix of 1e-30 too
	for j := range n {
		// LAPACK's nearest eigenvalue, and whether it is simple.
		best, simple := 0, true
		for k := range n {
			if cmplx.Abs(wv[k]-w[j]) < cmplx.Abs(wv[best]-w[j]) {
				best = k
			}
		}
		for k := range n {
			if k != best && cmplx.Abs(wv[k]-wv[best]) < 1e-6 {
				simple = false
			}
		}
		require.LessOrEqual(t, cmplx.Abs(wv[best]-w[j]), tol, "%s eigenvalue %d: %v, LAPACK's %v", name, j, w[j], wv[best])
		if realMatrix && imag(wv[best]) == 0 {
			require.Zero(t, imag(w[j]), "%s eigenvalue %d: real", name, j)
		}
		if j > 0 {
			// In order: by real part, then imaginary magnitude; of a
			// complex matrix, parts within 8 n ulp of the largest
			// magnitude count as equal (eigenOrderNear).
			p, tie := w[j-1], 0.0
			if !realMatrix {
				for _, x := range w {
					tie = max(tie, cmplx.Abs(x))
				}
				tie *= 8 * float64(n) * 0x1p-52
			}
			require.True(t, real(p) < real(w[j])-tie || math.Abs(real(p)-real(w[j])) <= tie && math.Abs(imag(p)) <= math.Abs(imag(w[j]))+tie, "%s eigenvalues %d, %d: %v, %v out of order", name, j-1, j, p, w[j])
		}
		if realMatrix && imag(w[j]) > 0 {
			require.Equal(t, cmplx.Conj(w[j]), w[j+1], "%s eigenvalue %d: its conjugate next", name, j)
		}
		col := func(v []complex128, i int) complex128 { return v[i*n+j] }
		for _, v := range [][]complex128{vl, vr} {
			var nrm, top float64
			for i := range n {
				nrm = math.Hypot(nrm, cmplx.Abs(col(v, i)))
				top = max(top, cmplx.Abs(col(v, i)))
			}
			big := 0 // the first element within 8 n ulp of the largest: ties go first
			for cmplx.Abs(col(v, big)) < top*(1-8*float64(n)*0x1p-52) {
				big++
			}
			require.InDelta(t, 1, nrm, 1e-14*float64(n), "%s eigenvector %d: norm", name, j)
			require.True(t, imag(col(v, big)) == 0 && real(col(v, big)) > 0, "%s eigenvector %d: largest element %v", name, j, col(v, big))
		}
		for i := range n {
			var av, ua complex128 // (a v)_i, (u^H a)_i
			for k := range n {
				av += am[i*n+k] * col(vr, k)
				ua += cmplx.Conj(col(vl, k)) * am[k*n+i]
			}
			require.LessOrEqual(t, cmplx.Abs(av-w[j]*col(vr, i)), tol, "%s: a v = w v at [%d,%d]", name, i, j)
			require.LessOrEqual(t, cmplx.Abs(ua-w[j]*cmplx.Conj(col(vl, i))), tol, "%s: u^H a = w u^H at [%d,%d]", name, i, j)
		}
		if simple {
			big := 0
			for i := range n {
				if cmplx.Abs(col(vr, i)) > cmplx.Abs(col(vr, big)) {
					big = i
				}
			}
			turn := vv[big*n+best] / col(vr, big)
			turn /= complex(cmplx.Abs(turn), 0)
			for i := range n {
				require.LessOrEqual(t, cmplx.Abs(vv[i*n+best]-turn*col(vr, i)), 1e-9, "%s eigenvector %d element %d", name, j, i)
			}
		}
	}
}

// TestGeesAgainstLapack: the evaluator's gees on testdata/eig.json's
// matrices gives a real Schur form: a = Z T Z^T and Z^T Z = I to 1e-12,
// T zero below its subdiagonal, each nonzero subdiagonal element in a
// standardized 2 x 2 block (equal diagonal, off-diagonal elements of
// opposite signs) whose eigenvalues are wr +- i wi, a 1 x 1 block's
// t_ii = wr, and those eigenvalues LAPACK's (dgeev's, nearest) to 1e-12
// of the matrix's norm; mode 'N' leaves Z zero.
func TestGeesAgainstLapack(t *testing.T) {
	for _, c := range eigCases(t) {
		n := c.N
		am, wv := values(t, c.A, false), values(t, c.W, true)
		for _, mode := range []int{'V', 'N'} {
			name := fmt.Sprintf("f64[%d,%d] mode %c", n, n, mode)
			src := fmt.Sprintf(`HloModule schur
ENTRY e {
  a = f64[%[1]d,%[1]d] parameter(0)
  ROOT r = (f64[%[1]d,%[1]d], f64[%[1]d,%[1]d], f64[%[1]d], f64[%[1]d], s32[], s32[]) custom-call(a), custom_call_target="lapack_dgees_ffi", backend_config={mode = %[2]d : ui8, sort = 78 : ui8}
}`, n, mode)
			m, err := hlo.Parse(name, src)
			require.NoError(t, err, name)
			require.NoError(t, Check(m), name)
			out, err := Run(m, lit64(hlo.F64, []int64{int64(n), int64(n)}, am))
			require.NoError(t, err, name)
			got := out.Leaves()
			require.Equal(t, int64(0), get(got[5], 0).i, "%s info", name)
			T, Z := complexes(got[0]), complexes(got[1])
			var norm float64
			for _, x := range am {
				norm = math.Hypot(norm, real(x))
			}
			tol := 1e-12 * math.Max(1, norm)
			at := func(m []complex128, i, j int) float64 { return real(m[i*n+j]) }
			if mode == 'N' {
				for i := range Z {
					require.Zero(t, Z[i], "%s: Z not asked for", name)
				}
			} else {
				for i := range n {
					for j := range n {
						var zt, ztz float64 // (Z T Z^T)_ij, (Z^T Z)_ij
						for k := range n {
							ztz += at(Z, k, i) * at(Z, k, j)
							for l := range n {
								zt += at(Z, i, k) * at(T, k, l) * at(Z, j, l)
							}
						}
						require.InDelta(t, real(am[i*n+j]), zt, tol, "%s: a = Z T Z^T at [%d,%d]", name, i, j)
						require.InDelta(t, map[bool]float64{true: 1, false: 0}[i == j], ztz, 1e-13*float64(n), "%s: Z orthogonal at [%d,%d]", name, i, j)
					}
				}
			}
			for i := range n {
				for j := 0; j+1 < i; j++ {
					require.Zero(t, at(T, i, j), "%s: T below its subdiagonal at [%d,%d]", name, i, j)
				}
				wr, wi := get(got[2], int64(i)).f, get(got[3], int64(i)).f
				best := math.Inf(1)
				for _, w := range wv {
					best = math.Min(best, cmplx.Abs(w-complex(wr, wi)))
				}
				require.LessOrEqual(t, best, tol, "%s eigenvalue %d: %v", name, i, complex(wr, wi))
				if wi > 0 { // a block at rows i, i+1
					require.Equal(t, at(T, i, i), at(T, i+1, i+1), "%s: block %d's diagonal", name, i)
					require.Less(t, at(T, i, i+1)*at(T, i+1, i), 0.0, "%s: block %d's off-diagonal signs", name, i)
					require.Equal(t, wr, at(T, i, i), "%s: block %d's wr", name, i)
					require.InDelta(t, wi, math.Sqrt(-at(T, i, i+1)*at(T, i+1, i)), 1e-15*math.Max(1, wi), "%s: block %d's wi", name, i)
				} else if wi == 0 {
					require.Equal(t, wr, at(T, i, i), "%s: t_ii = wr at %d", name, i)
					if i+1 < n {
						require.Zero(t, at(T, i+1, i), "%s: subdiagonal after a real eigenvalue at %d", name, i)
					}
				}
			}
		}
	}
}

// TestGehrdAgainstLapack: the evaluator's gehrd gives LAPACK's own
// dgehrd (testdata/gehrd.json, through ctypes: gehrd.py), the
// Hessenberg form and the reflectors below it and tau, to 1e-13, for
// orders 1 to 13; a low or high other than the whole matrix is refused.
func TestGehrdAgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/gehrd.json")
	require.NoError(t, err)
	var cases []struct {
		N         int
		A, H, Tau json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 6)
	for _, c := range cases {
		n := c.N
		name := fmt.Sprintf("f64[%d,%d]", n, n)
		src := fmt.Sprintf(`HloModule hessenberg
ENTRY e {
  a = f64[%[1]d,%[1]d] parameter(0)
  ROOT r = (f64[%[1]d,%[1]d], f64[%[2]d], s32[]) custom-call(a), custom_call_target="lapack_dgehrd_ffi", backend_config={high = %[1]d : i32, low = 1 : i32}
}`, n, n-1)
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Check(m), name)
		out, err := Run(m, lit64(hlo.F64, []int64{int64(n), int64(n)}, values(t, c.A, false)))
		require.NoError(t, err, name)
		got := out.Leaves()
		for o, want := range [][]complex128{values(t, c.H, false), values(t, c.Tau, false)} {
			for i, w := range want {
				require.InDelta(t, real(w), get(got[o], int64(i)).f, 1e-13, "%s output %d element %d", name, o, i)
			}
		}
	}
	m, err := hlo.Parse("t.hlo", `HloModule hessenberg
ENTRY e {
  a = f64[4,4] parameter(0)
  ROOT r = (f64[4,4], f64[3], s32[]) custom-call(a), custom_call_target="lapack_dgehrd_ffi", backend_config={high = 3 : i32, low = 1 : i32}
}`)
	require.NoError(t, err)
	require.ErrorContains(t, Check(m), "low = 1 and high = 4")
}

// eigCase is one matrix of testdata/eig.json: a, and LAPACK's geev
// eigenvalues w and right vectors v (NumPy's np.linalg.eig: eig.py).
type eigCase struct {
	N       int
	A, W, V json.RawMessage
}

func eigCases(t *testing.T) []eigCase {
	raw, err := os.ReadFile("testdata/eig.json")
	require.NoError(t, err)
	var cases []eigCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 15)
	return cases
}

// TestIsolate: gebal's permutation of P B P^T, B with triangular corners
// of orders 2 and 3 around a dense block of 3, returns that block
// ([2, 4]), a permutation that leaves the corners triangular (zeros
// left of the diagonal in rows past hi, below it in columns before lo)
// and the matrix permuted by it; a lower triangular matrix is isolated
// whole (lo = hi = 0), a dense one not at all.
func TestIsolate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 8
	for _, c := range []struct {
		name   string
		nz     func(i, j int) bool // B's nonzeros
		lo, hi int
	}{
		{"corners", func(i, j int) bool { return i <= j || i >= 2 && i <= 4 && j >= 2 && j <= 4 }, 2, 4},
		{"lower triangular", func(i, j int) bool { return j <= i }, 0, 0},
		{"dense", func(i, j int) bool { return true }, 0, n - 1},
	} {
		perm := rng.Perm(n)
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				if c.nz(i, j) {
					a[perm[i]*n+perm[j]] = 1 + rng.Float64()
				}
			}
		}
		h := slices.Clone(a)
		bal := isolateMatrix(h, n)
		require.Equal(t, [2]int{c.lo, c.hi}, [2]int{bal.lo, bal.hi}, c.name)
		for r := range n {
			for q := range n {
				require.Equal(t, a[r*n+q], h[bal.at[r]*n+bal.at[q]], "%s: a(%d, %d)", c.name, r, q)
			}
		}
		for i := range n {
			for j := range n {
				if i > j && (i > bal.hi || j < bal.lo) {
					require.Zero(t, h[i*n+j], "%s: h(%d, %d) below the diagonal outside the block", c.name, i, j)
				}
			}
		}
	}
}
