package eval

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// lapackCase is one matrix of testdata/lapack.json: LAPACK's own geqrf
// (h, tau) and Q (orgqr, ungqr), as NumPy returned them (lapack.py).
type lapackCase struct {
	M, N    int64
	Complex bool
	A, H    json.RawMessage
	Tau, Q  json.RawMessage
}

// values reads a list of numbers, or of [re, im] pairs.
func values(t *testing.T, raw json.RawMessage, isComplex bool) []complex128 {
	if len(raw) == 0 {
		return nil
	}
	if isComplex {
		var ps [][2]float64
		require.NoError(t, json.Unmarshal(raw, &ps))
		out := make([]complex128, len(ps))
		for i, p := range ps {
			out[i] = complex(p[0], p[1])
		}
		return out
	}
	var fs []float64
	require.NoError(t, json.Unmarshal(raw, &fs))
	out := make([]complex128, len(fs))
	for i, f := range fs {
		out[i] = complex(f, 0)
	}
	return out
}

func lit64(t hlo.ElementType, dims []int64, v []complex128) *hlo.Literal {
	l := &hlo.Literal{Shape: hlo.ArrayShape(t, dims...), Data: make([]byte, int64(len(v))*int64(t.Bytes()))}
	for i, x := range v {
		if t == hlo.C128 {
			binary.LittleEndian.PutUint64(l.Data[16*i:], math.Float64bits(real(x)))
			binary.LittleEndian.PutUint64(l.Data[16*i+8:], math.Float64bits(imag(x)))
		} else {
			binary.LittleEndian.PutUint64(l.Data[8*i:], math.Float64bits(real(x)))
		}
	}
	return l
}

// TestLapackAgainstNumPy: the evaluator's geqrf and orgqr (ungqr) give
// LAPACK's own reflectors, taus and Q (computed by NumPy's LAPACK, not
// here) to within rounding, for tall, wide and square matrices, real and
// complex, one with a zero below a pivot.
func TestLapackAgainstNumPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/lapack.json")
	require.NoError(t, err)
	var cases []lapackCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 5)
	for _, c := range cases {
		ty, letter, orgqr := "f64", "d", "orgqr"
		et := hlo.F64
		if c.Complex {
			ty, letter, orgqr, et = "c128", "z", "ungqr", hlo.C128
		}
		k := min(c.M, c.N)
		name := fmt.Sprintf("%s[%d,%d]", ty, c.M, c.N)
		src := fmt.Sprintf(`HloModule qr
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  qr = (%[1]s[%[2]d,%[3]d], %[1]s[%[4]d]) custom-call(a), custom_call_target="lapack_%[5]sgeqrf_ffi"
  h = %[1]s[%[2]d,%[3]d] get-tuple-element(qr), index=0
  tau = %[1]s[%[4]d] get-tuple-element(qr), index=1
  ROOT out = (%[1]s[%[2]d,%[3]d], %[1]s[%[4]d]) tuple(h, tau)
}`, ty, c.M, c.N, k, letter)
		if c.M >= c.N {
			src = fmt.Sprintf(`HloModule qr
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  qr = (%[1]s[%[2]d,%[3]d], %[1]s[%[4]d]) custom-call(a), custom_call_target="lapack_%[5]sgeqrf_ffi"
  h = %[1]s[%[2]d,%[3]d] get-tuple-element(qr), index=0
  tau = %[1]s[%[4]d] get-tuple-element(qr), index=1
  q = %[1]s[%[2]d,%[3]d] custom-call(h, tau), custom_call_target="lapack_%[5]s%[6]s_ffi"
  ROOT out = (%[1]s[%[2]d,%[3]d], %[1]s[%[4]d], %[1]s[%[2]d,%[3]d]) tuple(h, tau, q)
}`, ty, c.M, c.N, k, letter, orgqr)
		}
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, hlo.Verify(m), name)
		require.NoError(t, Check(m), name)
		out, err := Run(m, lit64(et, []int64{c.M, c.N}, values(t, c.A, c.Complex)))
		require.NoError(t, err, name)
		got := out.Leaves()
		wants := [][]complex128{values(t, c.H, c.Complex), values(t, c.Tau, c.Complex), values(t, c.Q, c.Complex)}
		for o, l := range got {
			for i, w := range wants[o] {
				s := get(l, int64(i))
				g := complex(s.f, 0)
				if c.Complex {
					g = s.c
				}
				require.LessOrEqual(t, cmplx.Abs(g-w), 1e-13*math.Max(1, cmplx.Abs(w)), "%s output %d element %d: %v, LAPACK's %v", name, o, i, g, w)
			}
		}
	}
}

// TestKnownCustomCalls: a target vkjit does not know, and a known one
// used against its definition, are refused before any work, by name.
func TestKnownCustomCalls(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT b = f32[4] custom-call(a), custom_call_target="mystery"
}`, "custom-call mystery"},
		{`HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT b = (f32[3,3], f32[2]) custom-call(a), custom_call_target="lapack_sgeqrf_ffi"
}`, "returns (its shape, tau of min(m, n) per matrix)"},
		{`HloModule m
ENTRY e {
  a = f64[3,3] parameter(0)
  b = f64[3,2] parameter(1)
  ROOT x = f64[3,2] custom-call(a, b), custom_call_target="lapack_strsm_ffi"
}`, "takes f32 arrays"},
		{`HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT r = (f32[3], f32[3], c64[3,3], f32[3,3], s32[]) custom-call(a), custom_call_target="lapack_sgeev_ffi"
}`, "returns (wr, wi, vl and vr as complex, s32 info per matrix)"},
		{`HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT r = (f32[3], f32[3], c64[3,3], c64[3,3], s32[]) custom-call(a), custom_call_target="lapack_cgeev_ffi"
}`, "returns (w, vl, vr, s32 info per matrix)"},
		{`HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT r = (c64[3,3], c64[3,3], f32[3], f32[3], s32[], s32[]) custom-call(a), custom_call_target="lapack_cgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
}`, "returns (T, Z in its shape, w, s32 sdim and info per matrix)"},
		{`HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT r = (f32[3,3], f32[3,3], f32[3], f32[3], s32[], s32[]) custom-call(a), custom_call_target="lapack_sgees_ffi", backend_config={mode = 86 : ui8, sort = 83 : ui8}
}`, "custom-call lapack_sgees_ffi"},
		{`HloModule m
ENTRY e {
  x = f32[8,4] parameter(0)
  ROOT g = f32[4,4] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape"
}`, "custom-call xla.sdy.GlobalToLocalShape of one device takes arrays and returns them, of their shapes"},
		{`HloModule m
ENTRY e {
  dl = f32[2,4] parameter(0)
  d = f32[2,4] parameter(1)
  du = f32[2,3] parameter(2)
  b = f32[2,4,3] parameter(3)
  ROOT r = (f32[2,4], f32[2,4], f32[2,3], f32[2,4,3], s32[2]) custom-call(dl, d, du, b), custom_call_target="lapack_sgtsv_ffi"
}`, "takes dl, d, du [..., n] and b [..., n, nrhs]"},
		{`HloModule m
ENTRY e {
  a = c64[2,4,4] parameter(0)
  ROOT r = (c64[2,4,4], f32[2,4], f32[2,3], f32[2,3], s32[2]) custom-call(a), custom_call_target="lapack_chetrd_ffi", backend_config={uplo = 76 : ui8}
}`, "returns (its shape, real d of n and e of n-1, tau of n-1 per matrix, s32 info per matrix)"},
		{`HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT r = (f32[4,4], f32[4], f32[3], f32[3], s32[]) custom-call(a), custom_call_target="lapack_ssytrd_ffi"
}`, "uplo = 76 ('L') or 85 ('U'), not 0"},
		{`HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  ROOT r = (f32[4,4], f32[4], f32[3], f32[3], s32[]) custom-call(a), custom_call_target="lapack_shetrd_ffi", backend_config={uplo = 76 : ui8}
}`, "does not run custom-call lapack_shetrd_ffi"},
		{`HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  p = f32[3] parameter(1)
  ROOT r = (f32[4,3], f32[3], f32[3]) custom-call(a, p), custom_call_target="lapack_sgeqp3_ffi"
}`, "takes a matrix [..., m, n] and s32 jpvt [..., n]"},
	} {
		m, err := hlo.Parse("t.hlo", c.src)
		require.NoError(t, err)
		err = Check(m)
		require.Error(t, err)
		require.ErrorContains(t, err, c.want)
	}
}

// TestGetrfAgainstLapack: the evaluator's getrf gives LAPACK's own LU,
// pivots and info (testdata/getrf.json, from LAPACK's dgetrf and zgetrf
// through ctypes: getrf.py) for square, tall, wide, singular and
// complex matrices.
func TestGetrfAgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/getrf.json")
	require.NoError(t, err)
	var cases []struct {
		M, N    int64
		Complex bool
		A, LU   json.RawMessage
		Ipiv    []int32
		Info    int32
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 5)
	for _, c := range cases {
		ty, letter, et := "f64", "d", hlo.F64
		if c.Complex {
			ty, letter, et = "c128", "z", hlo.C128
		}
		k := min(c.M, c.N)
		name := fmt.Sprintf("%s[%d,%d]", ty, c.M, c.N)
		src := fmt.Sprintf(`HloModule lu
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  ROOT lu = (%[1]s[%[2]d,%[3]d], s32[%[4]d], s32[]) custom-call(a), custom_call_target="lapack_%[5]sgetrf_ffi"
}`, ty, c.M, c.N, k, letter)
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Check(m), name)
		out, err := Run(m, lit64(et, []int64{c.M, c.N}, values(t, c.A, c.Complex)))
		require.NoError(t, err, name)
		got := out.Leaves()
		for i, w := range values(t, c.LU, c.Complex) {
			s := get(got[0], int64(i))
			g := complex(s.f, 0)
			if c.Complex {
				g = s.c
			}
			require.LessOrEqual(t, cmplx.Abs(g-w), 1e-13*math.Max(1, cmplx.Abs(w)), "%s lu element %d: %v, LAPACK's %v", name, i, g, w)
		}
		for i, w := range c.Ipiv {
			require.Equal(t, int64(w), get(got[1], int64(i)).i, "%s ipiv %d", name, i)
		}
		require.Equal(t, int64(c.Info), get(got[2], 0).i, "%s info", name)
	}
}

// TestSyevdAgainstLapack: the evaluator's Jacobi eigendecomposition
// gives LAPACK's eigenvalues (syevd and heevd through NumPy:
// testdata/eigh.py) to 1e-13, and its eigenvectors up to each column's
// sign (phase, for complex types) to 1e-12; the lower and upper
// triangles read give the same.
func TestSyevdAgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/eigh.json")
	require.NoError(t, err)
	var cases []struct {
		N       int64
		Complex bool
		A, W, V json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 6)
	for _, c := range cases {
		ty, wty, target, et := "f64", "f64", "dsyevd", hlo.F64
		if c.Complex {
			ty, target, et = "c128", "zheevd", hlo.C128
		}
		av, wv, vv := values(t, c.A, c.Complex), values(t, c.W, false), values(t, c.V, c.Complex)
		n := int(c.N)
		for _, uplo := range []int{'L', 'U'} {
			name := fmt.Sprintf("%s[%d,%d] uplo %c", ty, n, n, uplo)
			src := fmt.Sprintf(`HloModule eigh
ENTRY e {
  a = %[1]s[%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[%[2]d,%[2]d], %[3]s[%[2]d], s32[]) custom-call(a), custom_call_target="lapack_%[4]s_ffi", backend_config={mode = 86 : ui8, uplo = %[5]d : ui8}
}`, ty, n, wty, target, uplo)
			m, err := hlo.Parse(name, src)
			require.NoError(t, err, name)
			require.NoError(t, Check(m), name)
			a := make([]complex128, len(av))
			for i, x := range av {
				a[i] = x
				if r, col := i/n, i%n; uplo == 'L' && col > r || uplo == 'U' && col < r {
					a[i] = complex(math.NaN(), math.NaN()) // the triangle not read
				}
			}
			out, err := Run(m, lit64(et, []int64{c.N, c.N}, a))
			require.NoError(t, err, name)
			got := out.Leaves()
			vg := complexes(got[0])
			for j, w := range wv {
				require.InDelta(t, real(w), get(got[1], int64(j)).f, 1e-13*math.Max(1, cmplx.Abs(w)), "%s eigenvalue %d", name, j)
				// Column j up to its phase: LAPACK's largest element's.
				big := 0
				for i := range n {
					if cmplx.Abs(vv[i*n+j]) > cmplx.Abs(vv[big*n+j]) {
						big = i
					}
				}
				ph := vv[big*n+j] / vg[big*n+j]
				ph /= complex(cmplx.Abs(ph), 0)
				for i := range n {
					require.LessOrEqual(t, cmplx.Abs(vv[i*n+j]-ph*vg[i*n+j]), 1e-12, "%s eigenvector %d element %d", name, j, i)
				}
			}
			require.Equal(t, int64(0), get(got[2], 0).i)
		}
	}
}

// TestGesddAgainstLapack: the evaluator's one-sided Jacobi SVD gives
// LAPACK's singular values (gesdd through NumPy: testdata/svd.py) to
// 1e-13 and its singular vectors up to each pair's phase to 1e-12, in
// modes 'A' (u and vt square and unitary, their completions included)
// and 'S', tall, wide, square and complex.
func TestGesddAgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/svd.json")
	require.NoError(t, err)
	var cases []struct {
		M, N        int64
		Complex     bool
		A, U, S, Vh json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 5)
	for _, c := range cases {
		ty, letter, et := "f64", "d", hlo.F64
		if c.Complex {
			ty, letter, et = "c128", "z", hlo.C128
		}
		m, n := c.M, c.N
		k := min(m, n)
		av, uw, sw, vw := values(t, c.A, c.Complex), values(t, c.U, c.Complex), values(t, c.S, false), values(t, c.Vh, c.Complex)
		for _, mode := range []byte{'A', 'S'} {
			ur, vr := m, n // u [m, ur], vt [vr, n]
			if mode == 'S' {
				ur, vr = k, k
			}
			name := fmt.Sprintf("%s[%d,%d] mode %c", ty, m, n, mode)
			src := fmt.Sprintf(`HloModule svd
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  ROOT r = (%[1]s[%[2]d,%[3]d], f64[%[4]d], %[1]s[%[2]d,%[5]d], %[1]s[%[6]d,%[3]d], s32[]) custom-call(a), custom_call_target="lapack_%[7]sgesdd_ffi", backend_config={mode = %[8]d : ui8}
}`, ty, m, n, k, ur, vr, letter, mode)
			mod, err := hlo.Parse(name, src)
			require.NoError(t, err, name)
			require.NoError(t, Check(mod), name)
			out, err := Run(mod, lit64(et, []int64{m, n}, av))
			require.NoError(t, err, name)
			got := out.Leaves()
			u, vt := complexes(got[2]), complexes(got[3])
			for j := int64(0); j < k; j++ {
				require.InDelta(t, real(sw[j]), get(got[1], j).f, 1e-13, "%s s[%d]", name, j)
				// The pair's phase from vt's row j against LAPACK's.
				var dot complex128
				for i := int64(0); i < n; i++ {
					dot += vt[j*n+i] * conj(vw[j*n+i])
				}
				ph := dot / complex(cmplx.Abs(dot), 0)
				for i := int64(0); i < n; i++ {
					require.LessOrEqual(t, cmplx.Abs(vt[j*n+i]-ph*vw[j*n+i]), 1e-12, "%s vt[%d,%d]", name, j, i)
				}
				for i := int64(0); i < m; i++ {
					require.LessOrEqual(t, cmplx.Abs(u[i*ur+j]-conj(ph)*uw[i*m+j]), 1e-12, "%s u[%d,%d]", name, i, j)
				}
			}
			// u^H u = I and vt vt^H = I, completions included.
			for _, q := range []struct {
				x          []complex128
				rows, cols int64
				byCols     bool
			}{{u, m, ur, true}, {vt, vr, n, false}} {
				size := q.cols
				if !q.byCols {
					size = q.rows
				}
				for p := int64(0); p < size; p++ {
					for r := int64(0); r < size; r++ {
						var s complex128
						if q.byCols {
							for i := int64(0); i < q.rows; i++ {
								s += conj(q.x[i*q.cols+p]) * q.x[i*q.cols+r]
							}
						} else {
							for i := int64(0); i < q.cols; i++ {
								s += q.x[p*q.cols+i] * conj(q.x[r*q.cols+i])
							}
						}
						if p == r {
							s--
						}
						require.LessOrEqual(t, cmplx.Abs(s), 1e-12, "%s: not unitary at [%d,%d]", name, p, r)
					}
				}
			}
		}
	}
}
