package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// TestTriangularSolve runs triangular-solve in all its forms (left and
// right side, lower and upper, a, a^T and a^H, unit diagonal or not) on
// the device, over a batch of well-conditioned matrices in f32, f64 and
// c64, and compares with the evaluator's substitution in float64 or
// complex128. The triangle a solve does not read holds NaN, which must
// not reach the result.
func TestTriangularSolve(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(7, 8))
	const n, m = 5, 3
	for _, ty := range []string{"f32", "f64", "c64"} {
		for _, left := range []bool{true, false} {
			for _, lower := range []bool{true, false} {
				for _, tr := range []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"} {
					for _, unit := range []bool{false, true} {
						name := fmt.Sprintf("%s left=%v lower=%v %s unit=%v", ty, left, lower, tr, unit)
						bDims := []int64{2, n, m}
						if !left {
							bDims = []int64{2, m, n}
						}
						src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n  b = %s%s parameter(1)\n  ROOT x = %s%s triangular-solve(a, b), left_side=%v, lower=%v, unit_diagonal=%v, transpose_a=%s\n}",
							ty, n, n, ty, dimsText(bDims), ty, dimsText(bDims), left, lower, unit, tr)
						a := randomMatrix(rng, ty, 2, n, lower)
						b := randomArray(rng, ty, bDims)
						exe, err := rt.CompileText("ts", src, vkjit.CompileOptions{})
						require.NoError(t, err, name)
						res, _, err := exe.Run(context.Background(), a, b)
						require.NoError(t, err, name)
						exe.Close()
						mod, err := hlo.Parse("ts", src)
						require.NoError(t, err)
						want, err := eval.Run(mod, literalOf(a), literalOf(b))
						require.NoError(t, err, name)
						w := want.Leaves()[0]
						wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
						tol := 1e-5
						if ty == "f64" {
							tol = 1e-12
						}
						for i := range wt.NumElements() {
							g, e := valueAt(res[0], i), valueAt(wt, i)
							require.False(t, cmplx.IsNaN(g), "%s: element %d is NaN (the unread triangle leaked)", name, i)
							require.LessOrEqual(t, cmplx.Abs(g-e), tol*math.Max(1, cmplx.Abs(e)), "%s: element %d: %v, want %v", name, i, g, e)
						}
					}
				}
			}
		}
	}
}

func dimsText(d []int64) string {
	s := "["
	for i, x := range d {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s + "]"
}

// randomMatrix is a batch of n x n matrices whose triangle (lower or
// upper) is well conditioned (a dominant diagonal) and whose other
// triangle is NaN.
func randomMatrix(rng *rand.Rand, ty string, batch, n int, lower bool) *vkjit.Tensor {
	vals := make([]complex128, batch*n*n)
	for bt := range batch {
		for i := range n {
			for j := range n {
				v := complex(2*rng.Float64()-1, 0)
				if ty == "c64" {
					v = complex(real(v), 2*rng.Float64()-1)
				}
				switch {
				case i == j:
					v += complex(float64(n)+1, 0)
				case lower && j > i || !lower && j < i:
					v = complex(math.NaN(), math.NaN())
				}
				vals[(bt*n+i)*n+j] = v
			}
		}
	}
	return tensorOf(ty, []int64{int64(batch), int64(n), int64(n)}, vals)
}

func randomArray(rng *rand.Rand, ty string, dims []int64) *vkjit.Tensor {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]complex128, n)
	for i := range vals {
		vals[i] = complex(2*rng.Float64()-1, 0)
		if ty == "c64" {
			vals[i] = complex(real(vals[i]), 2*rng.Float64()-1)
		}
	}
	return tensorOf(ty, dims, vals)
}

// tensorOf is a tensor of type ty (f32, f64, c64, c128, s32) holding vals,
// real parts only for the real types.
func tensorOf(ty string, dims []int64, vals []complex128) *vkjit.Tensor {
	typ := must(vkjit.ParseDType(ty))
	parts := 1
	if typ == vkjit.C64 || typ == vkjit.C128 {
		parts = 2
	}
	var data []byte
	for _, v := range vals {
		for _, part := range []float64{real(v), imag(v)}[:parts] {
			if typ == vkjit.S32 {
				data = binary.LittleEndian.AppendUint32(data, uint32(int32(part)))
			} else if typ == vkjit.F32 || typ == vkjit.C64 {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(part)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(part))
			}
		}
	}
	return must(vkjit.NewTensor(typ, dims, data))
}

// TestCholesky runs cholesky, lower and upper, on the device over a
// batch of positive definite matrices (f32, f64, c64) whose unread
// triangle holds NaN, against the evaluator's column algorithm, and
// checks that l l^H gives a back.
func TestCholesky(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 6
	for _, ty := range []string{"f32", "f64", "c64"} {
		for _, lower := range []bool{true, false} {
			name := fmt.Sprintf("%s lower=%v", ty, lower)
			// a = m m^H + n I, positive definite.
			m := make([]complex128, 2*n*n)
			for i := range m {
				m[i] = complex(2*rng.Float64()-1, 0)
				if ty == "c64" {
					m[i] += complex(0, 2*rng.Float64()-1)
				}
			}
			full := make([]complex128, 2*n*n)
			vals := make([]complex128, 2*n*n)
			for b := range 2 {
				for i := range n {
					for j := range n {
						var s complex128
						for k := range n {
							s += m[(b*n+i)*n+k] * cmplx.Conj(m[(b*n+j)*n+k])
						}
						if i == j {
							s += n
						}
						full[(b*n+i)*n+j] = s
						vals[(b*n+i)*n+j] = s
						if lower && j > i || !lower && j < i {
							vals[(b*n+i)*n+j] = complex(math.NaN(), math.NaN())
						}
					}
				}
			}
			a := tensorOf(ty, []int64{2, n, n}, vals)
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n  ROOT l = %s[2,%d,%d] cholesky(a), lower=%v\n}", ty, n, n, ty, n, n, lower)
			exe, err := rt.CompileText("chol", src, vkjit.CompileOptions{})
			require.NoError(t, err, name)
			res, _, err := exe.Run(context.Background(), a)
			require.NoError(t, err, name)
			exe.Close()
			mod, err := hlo.Parse("chol", src)
			require.NoError(t, err)
			want, err := eval.Run(mod, literalOf(a))
			require.NoError(t, err, name)
			w := want.Leaves()[0]
			wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
			tol := 1e-5
			if ty == "f64" {
				tol = 1e-12
			}
			got := func(b, i, j int) complex128 { return valueAt(res[0], int64((b*n+i)*n+j)) }
			for b := range 2 {
				for i := range n {
					for j := range n {
						g, e := got(b, i, j), valueAt(wt, int64((b*n+i)*n+j))
						require.LessOrEqual(t, cmplx.Abs(g-e), tol*math.Max(1, cmplx.Abs(e)), "%s [%d,%d,%d]: %v, want %v", name, b, i, j, g, e)
						// l l^H (or u^H u) is a.
						var s complex128
						for k := range n {
							if lower {
								s += got(b, i, k) * cmplx.Conj(got(b, j, k))
							} else {
								s += cmplx.Conj(got(b, k, i)) * got(b, k, j)
							}
						}
						require.LessOrEqual(t, cmplx.Abs(s-full[(b*n+i)*n+j]), 10*tol*float64(n), "%s: the product at [%d,%d,%d]", name, b, i, j)
					}
				}
			}
		}
	}
}

// TestLapackCalls runs the LAPACK calls JAX's CPU lowering makes for
// jnp.linalg (geqrf and orgqr/ungqr for QR, trsm, potrf) on the device
// in f32, f64 and c64, against the evaluator's unblocked LAPACK
// (checked against LAPACK itself in hlo/eval), and checks that Q has
// orthonormal columns and Q R gives a back. potrf's second matrix is
// not positive definite: info names the failing minor.
func TestLapackCalls(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const m, n = 6, 4
	for _, ty := range []string{"f32", "f64", "c64"} {
		letter, orgqr, tol := map[string]string{"f32": "s", "f64": "d", "c64": "c"}[ty], "orgqr", 2e-5
		if ty == "c64" {
			orgqr = "ungqr"
		}
		if ty == "f64" {
			tol = 1e-12
		}
		a := randomArray(rng, ty, []int64{2, m, n})
		spd := make([]complex128, 2*n*n) // batch 0 positive definite, batch 1 not
		for b := range 2 {
			for i := range n {
				for j := range n {
					v := complex(0.1*float64(i+j), 0)
					if i == j {
						v = complex(float64(n)*float64(1-2*b*(j/2)), 0)
					}
					spd[(b*n+i)*n+j] = v
				}
			}
		}
		p := tensorOf(ty, []int64{2, n, n}, spd)
		tri := randomMatrix(rng, ty, 2, n, false)
		rhs := randomArray(rng, ty, []int64{2, n, 3})
		src := fmt.Sprintf(`HloModule lapack
ENTRY e {
  a = %[1]s[2,%[2]d,%[3]d] parameter(0)
  p = %[1]s[2,%[3]d,%[3]d] parameter(1)
  u = %[1]s[2,%[3]d,%[3]d] parameter(2)
  b = %[1]s[2,%[3]d,3] parameter(3)
  qr = (%[1]s[2,%[2]d,%[3]d], %[1]s[2,%[3]d]) custom-call(a), custom_call_target="lapack_%[4]sgeqrf_ffi"
  h = %[1]s[2,%[2]d,%[3]d] get-tuple-element(qr), index=0
  tau = %[1]s[2,%[3]d] get-tuple-element(qr), index=1
  q = %[1]s[2,%[2]d,%[3]d] custom-call(h, tau), custom_call_target="lapack_%[4]s%[5]s_ffi"
  ch = (%[1]s[2,%[3]d,%[3]d], s32[2]) custom-call(p), custom_call_target="lapack_%[4]spotrf_ffi", backend_config={uplo = 76 : ui8}
  l = %[1]s[2,%[3]d,%[3]d] get-tuple-element(ch), index=0
  info = s32[2] get-tuple-element(ch), index=1
  x = %[1]s[2,%[3]d,3] custom-call(u, b), custom_call_target="lapack_%[4]strsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}
  ROOT out = (%[1]s[2,%[2]d,%[3]d], %[1]s[2,%[3]d], %[1]s[2,%[2]d,%[3]d], %[1]s[2,%[3]d,%[3]d], s32[2], %[1]s[2,%[3]d,3]) tuple(h, tau, q, l, info, x)
}`, ty, m, n, letter, orgqr)
		res, want := deviceAndEval(t, ty, src, a, p, tri, rhs)
		for o, w := range want.Leaves() {
			wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
			for i := range wt.NumElements() {
				g, e := valueAt(res[o], i), valueAt(wt, i)
				if o == 3 && cmplx.IsNaN(e) {
					require.True(t, cmplx.IsNaN(g), "%s potrf element %d: %v, want NaN", ty, i, g)
					continue
				}
				require.LessOrEqual(t, cmplx.Abs(g-e), tol*math.Max(1, cmplx.Abs(e)), "%s output %d element %d: %v, want %v", ty, o, i, g, e)
			}
		}
		require.Equal(t, []complex128{0, 3}, []complex128{valueAt(res[4], 0), valueAt(res[4], 1)}, "%s potrf info", ty)
		// Q^H Q = I and Q R = a, R the upper triangle of h.
		at := func(x *vkjit.Tensor, b, i, j, cols int) complex128 { return valueAt(x, int64((b*m+i)*cols+j)) }
		for b := range 2 {
			for i := range n {
				for j := range n {
					var s complex128
					for k := range m {
						s += cmplx.Conj(at(res[2], b, k, i, n)) * at(res[2], b, k, j, n)
					}
					if i == j {
						s--
					}
					require.LessOrEqual(t, cmplx.Abs(s), 10*tol, "%s Q^H Q at [%d,%d,%d]", ty, b, i, j)
				}
			}
			for i := range m {
				for j := range n {
					var s complex128
					for k := 0; k <= j; k++ {
						s += at(res[2], b, i, k, n) * at(res[0], b, k, j, n)
					}
					require.LessOrEqual(t, cmplx.Abs(s-at(a, b, i, j, n)), 10*tol, "%s Q R at [%d,%d,%d]", ty, b, i, j)
				}
			}
		}
	}
}

// TestCholeskyNotPositiveDefinite: as XLA's cholesky_expander defines
// it, a matrix with a negative pivot is NaN throughout (NaN + 0i for
// complex types, whose pivots are square roots of real parts) and the
// other matrices of the batch are factored as usual; the evaluator
// agrees.
func TestCholeskyNotPositiveDefinite(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f32", "c64"} {
		// batch 0: diag(4, 9); batch 1: [[1, 2], [2, 1]], pivot 1 - 4 < 0.
		a := tensorOf(ty, []int64{2, 2, 2}, []complex128{4, 0, 0, 9, 1, 2, 2, 1})
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = %s[2,2,2] parameter(0)\n  ROOT l = %s[2,2,2] cholesky(a), lower=true\n}", ty, ty)
		res, want := deviceAndEval(t, ty, src, a)
		w := want.Leaves()[0]
		wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
		require.Equal(t, []complex128{2, 0, 0, 3}, []complex128{valueAt(res[0], 0), valueAt(res[0], 1), valueAt(res[0], 2), valueAt(res[0], 3)}, ty)
		for i := int64(4); i < 8; i++ {
			g, e := valueAt(res[0], i), valueAt(wt, i)
			require.True(t, math.IsNaN(real(g)) && imag(g) == 0, "%s element %d: %v, want NaN", ty, i, g)
			require.True(t, math.IsNaN(real(e)) && imag(e) == 0, "%s evaluator element %d: %v, want NaN", ty, i, e)
		}
	}
}

// TestGetrf runs LAPACK's getrf as JAX's CPU lowering calls it (for
// jnp.linalg.solve, det, inv) on the device, square, tall and wide, in
// f32, f64 and c64, one matrix of each batch singular (a zero column:
// info 3), against the evaluator's getf2 (checked against LAPACK itself
// in hlo/eval): the same pivots and info, the factors within rounding.
// The older jaxlib's trsm with an alpha operand scales b.
func TestGetrf(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, ty := range []string{"f32", "f64", "c64"} {
		letter, tol := map[string]string{"f32": "s", "f64": "d", "c64": "c"}[ty], 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for _, d := range [][2]int64{{5, 5}, {6, 4}, {4, 6}} {
			m, n := d[0], d[1]
			k := min(m, n)
			name := fmt.Sprintf("%s[2,%d,%d]", ty, m, n)
			a := randomArray(rng, ty, []int64{2, m, n})
			for i := range m { // matrix 1's column 2 zero
				copy(a.Data[int((m*n+i*n+2)*int64(a.Type.Bytes())):], make([]byte, a.Type.Bytes()))
			}
			src := fmt.Sprintf(`HloModule lu
ENTRY e {
  a = %[1]s[2,%[2]d,%[3]d] parameter(0)
  lu = (%[1]s[2,%[2]d,%[3]d], s32[2,%[4]d], s32[2]) custom-call(a), custom_call_target="lapack_%[5]sgetrf_ffi"
  f = %[1]s[2,%[2]d,%[3]d] get-tuple-element(lu), index=0
  p = s32[2,%[4]d] get-tuple-element(lu), index=1
  i = s32[2] get-tuple-element(lu), index=2
  u = %[1]s[2,%[4]d,%[4]d] slice(f), slice={[0:2], [0:%[4]d], [0:%[4]d]}
  half = %[1]s[] constant(%[6]s)
  x = %[1]s[2,%[4]d,%[4]d] custom-call(u, u, half), custom_call_target="lapack_%[5]strsm_ffi", backend_config={diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  ROOT out = (%[1]s[2,%[2]d,%[3]d], s32[2,%[4]d], s32[2], %[1]s[2,%[4]d,%[4]d]) tuple(f, p, i, x)
}`, ty, m, n, k, letter, map[bool]string{false: "0.5", true: "(0.5, 0)"}[ty == "c64"])
			res, want := deviceAndEval(t, name, src, a)
			for o, w := range want.Leaves() {
				wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
				for i := range wt.NumElements() {
					g, e := valueAt(res[o], i), valueAt(wt, i)
					if o == 1 || o == 2 {
						require.Equal(t, e, g, "%s output %d element %d", name, o, i)
						continue
					}
					require.LessOrEqual(t, cmplx.Abs(g-e), tol*math.Max(1, cmplx.Abs(e)), "%s output %d element %d: %v, want %v", name, o, i, g, e)
				}
			}
			require.Equal(t, complex128(3), valueAt(res[2], 1), "%s: matrix 1's info", name)
		}
	}
}

// TestCholeskyOrderOne: XLA's expander factors a block of one as its
// square root, sqrt(a) bit for bit (0 for 0), where its unblocked loop
// divides the whole column, the diagonal w / sqrt(w) too, which rounds
// twice (1 ulp off for about half of all f32 values; 0/0 for 0). A
// negative element is a failed factorization: NaN. Device and
// evaluator.
func TestCholeskyOrderOne(t *testing.T) {
	defer noValidationMessages(t)
	xs := []float32{0, 2, 3, 68.25, 4.26171875, 1e-30, -1}
	a := must(vkjit.Float32s([]int64{int64(len(xs)), 1, 1}, xs))
	for _, lower := range []bool{true, false} {
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = f32[%d,1,1] parameter(0)\n  ROOT l = f32[%d,1,1] cholesky(a), lower=%v\n}", len(xs), len(xs), lower)
		got, ev := deviceAndEvalF32(t, "cholesky 1x1", src, a)
		for i, x := range xs {
			r := float32(math.Sqrt(float64(x)))
			if x < 0 {
				require.True(t, math.IsNaN(float64(got[i])) && math.IsNaN(float64(ev[i])), "sqrt(%v): %v, %v", x, got[i], ev[i])
				continue
			}
			require.Equal(t, math.Float32bits(r), math.Float32bits(got[i]), "device, sqrt(%v): %v", x, got[i])
			require.Equal(t, math.Float32bits(r), math.Float32bits(ev[i]), "evaluator, sqrt(%v): %v", x, ev[i])
		}
	}
}

// TestGetrfKeepsSignedZeros: the row swap moves a -0 as it is (each
// row is summed out of the matrix masked to -0, not to +0, which made
// it +0): [[-0, 1], [2, -0]] pivots on 2 and factors into [[2, -0], [-0,
// 1]], bit for bit, on the device and in the evaluator.
func TestGetrfKeepsSignedZeros(t *testing.T) {
	defer noValidationMessages(t)
	nz := float32(math.Copysign(0, -1))
	a := must(vkjit.Float32s([]int64{1, 2, 2}, []float32{nz, 1, 2, nz}))
	src := `HloModule lu
ENTRY e {
  a = f32[1,2,2] parameter(0)
  lu = (f32[1,2,2], s32[1,2], s32[1]) custom-call(a), custom_call_target="lapack_sgetrf_ffi"
  ROOT f = f32[1,2,2] get-tuple-element(lu), index=0
}`
	got, ev := deviceAndEvalF32(t, "getrf -0", src, a)
	for i, v := range []float32{2, nz, nz, 1} {
		require.Equal(t, math.Float32bits(v), math.Float32bits(got[i]), "device, element %d: %v", i, got[i])
		require.Equal(t, math.Float32bits(v), math.Float32bits(ev[i]), "evaluator, element %d: %v", i, ev[i])
	}
}

// TestSyevd runs LAPACK's syevd and heevd as JAX's CPU lowering calls
// them for jnp.linalg.eigh on the device (Jacobi sweeps in while loops),
// for orders 1, 2, 7 and 17, both triangles, f32, f64 and c64, against
// the evaluator (which matches LAPACK itself in hlo/eval): eigenvalues
// within rounding, ascending, eigenvectors too (both turn each so that
// its first largest element is real and positive), and a v = w v. The
// triangle not read holds NaN.
func TestSyevd(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, ty := range []string{"f32", "f64", "c64"} {
		target := map[string]string{"f32": "ssyevd", "f64": "dsyevd", "c64": "cheevd"}[ty]
		wty, tol := map[string]string{"f32": "f32", "f64": "f64", "c64": "f32"}[ty], 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for _, n := range []int{1, 2, 7, 17} {
			for _, uplo := range []byte{'L', 'U'} {
				name := fmt.Sprintf("%s[2,%d,%d] uplo %c", ty, n, n, uplo)
				full := make([]complex128, 2*n*n)
				vals := make([]complex128, 2*n*n)
				for b := range 2 {
					for i := range n {
						for j := 0; j <= i; j++ {
							v := complex(2*rng.Float64()-1, 0)
							if ty == "c64" && i != j {
								v += complex(0, 2*rng.Float64()-1)
							}
							full[(b*n+i)*n+j], full[(b*n+j)*n+i] = v, cmplx.Conj(v)
						}
					}
					for i := range n {
						for j := range n {
							v := full[(b*n+i)*n+j]
							if uplo == 'L' && j > i || uplo == 'U' && j < i {
								v = complex(math.NaN(), math.NaN())
							}
							vals[(b*n+i)*n+j] = v
						}
					}
				}
				a := tensorOf(ty, []int64{2, int64(n), int64(n)}, vals)
				src := fmt.Sprintf(`HloModule eigh
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[2]d], %[3]s[2,%[2]d], s32[2]) custom-call(a), custom_call_target="lapack_%[4]s_ffi", backend_config={mode = 86 : ui8, uplo = %[5]d : ui8}
}`, ty, n, wty, target, uplo)
				res, want := deviceAndEval(t, name, src, a)
				wl := want.Leaves()
				wv := &vkjit.Tensor{Type: vkjit.DType(wl[0].Shape.Elem), Dims: wl[0].Shape.Dims, Data: wl[0].Data}
				ww := &vkjit.Tensor{Type: vkjit.DType(wl[1].Shape.Elem), Dims: wl[1].Shape.Dims, Data: wl[1].Data}
				for b := range 2 {
					for j := range n {
						g, e := real(valueAt(res[1], int64(b*n+j))), real(valueAt(ww, int64(b*n+j)))
						require.InDelta(t, e, g, tol*math.Max(1, math.Abs(e)), "%s eigenvalue [%d,%d]", name, b, j)
						if j > 0 {
							require.LessOrEqual(t, real(valueAt(res[1], int64(b*n+j-1))), g, "%s: ascending", name)
						}
						v := func(x *vkjit.Tensor, i int) complex128 { return valueAt(x, int64((b*n+i)*n+j)) }
						for i := range n {
							require.LessOrEqual(t, cmplx.Abs(v(wv, i)-v(res[0], i)), 50*tol, "%s eigenvector [%d,%d] element %d: %v, want %v", name, b, j, i, v(res[0], i), v(wv, i))
							var s complex128 // (a v_j)_i
							for k := range n {
								s += full[(b*n+i)*n+k] * v(res[0], k)
							}
							require.LessOrEqual(t, cmplx.Abs(complex(g, 0)*v(res[0], i)-s), 50*tol*float64(n), "%s: a v = w v at [%d,%d,%d]", name, b, i, j)
						}
					}
				}
			}
		}
	}
}

// TestGeev runs LAPACK's geev as JAX's CPU lowering calls it for
// jnp.linalg.eig on the device (Hessenberg reduction, dlahqr's
// double-shift QR and the vectors' substitutions as while loops), f32
// and f64, batches of orders 1 to 17 (random, so with complex pairs; a
// rotation; a triangular matrix), left and right vectors, one of them or
// neither (jnp.linalg.eigvals),
// against the evaluator (which matches LAPACK itself in hlo/eval):
// eigenvalues and vectors within rounding, a v = lambda v and u^H a =
// lambda u^H, pairs adjacent and conjugate, and the vectors not asked
// for zero.
func TestGeev(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for _, ty := range []string{"f32", "f64"} {
		letter, cty, tol := map[string]string{"f32": "s", "f64": "d"}[ty], map[string]string{"f32": "c64", "f64": "c128"}[ty], 2e-4
		if ty == "f64" {
			tol = 1e-11
		}
		for ci, n := range []int{1, 2, 3, 6, 17, 5} {
			left, right := ci%3 != 1 && ci != 5, ci%3 != 2 && ci != 5 // the last: eigenvalues only
			name := fmt.Sprintf("%s[2,%d,%d] left %v right %v", ty, n, n, left, right)
			a := randomArray(rng, ty, []int64{2, int64(n), int64(n)})
			full := make([]complex128, 2*n*n)
			for i := range full {
				full[i] = valueAt(a, int64(i))
			}
			if n == 2 { // the second: a rotation, eigenvalues +-i
				copy(full[4:], []complex128{0, -1, 1, 0})
			}
			if n == 6 { // the second: upper triangular, a Schur form already
				for i := range n {
					for j := range i {
						full[n*n+i*n+j] = 0
					}
				}
			}
			a = tensorOf(ty, []int64{2, int64(n), int64(n)}, full)
			job := map[bool]int{true: 'V', false: 'N'}
			src := fmt.Sprintf(`HloModule eig
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d], %[1]s[2,%[2]d], %[3]s[2,%[2]d,%[2]d], %[3]s[2,%[2]d,%[2]d], s32[2]) custom-call(a), custom_call_target="lapack_%[4]sgeev_ffi", backend_config={compute_left = %[5]d : ui8, compute_right = %[6]d : ui8}
}`, ty, n, cty, letter, job[left], job[right])
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			for b := range 2 {
				require.Zero(t, valueAt(res[4], int64(b)), "%s info", name)
				for j := range n {
					lam := complex(real(valueAt(res[0], int64(b*n+j))), real(valueAt(res[1], int64(b*n+j))))
					if imag(lam) > 0 {
						next := complex(real(valueAt(res[0], int64(b*n+j+1))), real(valueAt(res[1], int64(b*n+j+1))))
						require.Equal(t, cmplx.Conj(lam), next, "%s: a pair's second", name)
					}
					requireEigenpair(t, name, full, b, n, j, lam, res[2], res[3], left, right, 50*tol*float64(n))
				}
			}
		}
	}
}

// requireEigenpair holds eigenpair j of matrix b of the batch full ([...,
// n, n]) to tol: a v = lam v for the right vector (column j of matrix b
// of vr) and u^H a = lam u^H for the left one (of vl), each zero where
// not asked for.
func requireEigenpair(t *testing.T, name string, full []complex128, b, n, j int, lam complex128, vl, vr *vkjit.Tensor, left, right bool, tol float64) {
	t.Helper()
	v := func(x *vkjit.Tensor, i int) complex128 { return valueAt(x, int64((b*n+i)*n+j)) }
	for i := range n {
		var av, ua complex128
		for k := range n {
			av += full[(b*n+i)*n+k] * v(vr, k)
			ua += cmplx.Conj(v(vl, k)) * full[(b*n+k)*n+i]
		}
		if right {
			require.LessOrEqual(t, cmplx.Abs(av-lam*v(vr, i)), tol, "%s: a v = w v at [%d,%d,%d]", name, b, i, j)
		} else {
			require.Zero(t, v(vr, i), "%s: right vectors not asked for", name)
		}
		if left {
			require.LessOrEqual(t, cmplx.Abs(ua-lam*cmplx.Conj(v(vl, i))), tol, "%s: u^H a = w u^H at [%d,%d,%d]", name, b, i, j)
		} else {
			require.Zero(t, v(vl, i), "%s: left vectors not asked for", name)
		}
	}
}

// TestGees runs LAPACK's gees (no sorting) as JAX's CPU lowering calls
// it for jax.scipy.linalg.schur on the device, f32 and f64, batches of
// orders 1 to 12, Schur vectors or not, against the evaluator (the same
// Hessenberg reduction and dlahqr, in float64; a Schur form is not
// unique, and these matrices are small enough that both deflate in the
// same rows): T, Z, wr and wi within rounding, a = Z T Z^T, Z
// orthogonal, T zero below its subdiagonal.
func TestGees(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, ty := range []string{"f32", "f64"} {
		letter, tol := map[string]string{"f32": "s", "f64": "d"}[ty], 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for ci, n := range []int{1, 2, 5, 12} {
			mode := map[bool]int{true: 'V', false: 'N'}[ci != 2]
			name := fmt.Sprintf("%s[2,%d,%d] mode %c", ty, n, n, mode)
			a := randomArray(rng, ty, []int64{2, int64(n), int64(n)})
			src := fmt.Sprintf(`HloModule schur
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[2]d], %[1]s[2,%[2]d,%[2]d], %[1]s[2,%[2]d], %[1]s[2,%[2]d], s32[2], s32[2]) custom-call(a), custom_call_target="lapack_%[3]sgees_ffi", backend_config={mode = %[4]d : ui8, sort = 78 : ui8}
}`, ty, n, letter, mode)
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			at := func(x *vkjit.Tensor, b, i, j int) float64 { return real(valueAt(x, int64((b*n+i)*n+j))) }
			for b := range 2 {
				require.Zero(t, valueAt(res[5], int64(b)), "%s info", name)
				for i := range n {
					for j := range n {
						if j+1 < i {
							require.Zero(t, at(res[0], b, i, j), "%s: T below its subdiagonal", name)
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

// TestGehrd runs LAPACK's gehrd as JAX's CPU lowering calls it for
// jax.scipy.linalg.hessenberg on the device, f32 and f64, batches of
// orders 1 to 12, against the evaluator (which matches LAPACK's own
// dgehrd in hlo/eval), and checks that Q, made from the reflectors
// below the subdiagonal and tau, takes a to the Hessenberg form above
// it: Q^T a Q = h.
func TestGehrd(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, ty := range []string{"f32", "f64"} {
		letter, tol := map[string]string{"f32": "s", "f64": "d"}[ty], 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for _, n := range []int{1, 2, 5, 12} {
			name := fmt.Sprintf("%s[2,%d,%d]", ty, n, n)
			a := randomArray(rng, ty, []int64{2, int64(n), int64(n)})
			src := fmt.Sprintf(`HloModule hessenberg
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[2]d], %[1]s[2,%[3]d], s32[2]) custom-call(a), custom_call_target="lapack_%[4]sgehrd_ffi", backend_config={high = %[2]d : i32, low = 1 : i32}
}`, ty, n, n-1, letter)
			res, want := deviceAndEval(t, name, src, a)
			requireNearEval(t, name, res, want, 10*tol)
			for b := range 2 {
				h := func(i, j int) float64 { return real(valueAt(res[0], int64((b*n+i)*n+j))) }
				q := reflectorsQ(res[0], res[1], b, n)
				for i := range n {
					for j := range n {
						var s float64 // (Q^T a Q)_ij
						for k := range n {
							for l := range n {
								s += real(q[k*n+i]) * real(valueAt(a, int64((b*n+k)*n+l))) * real(q[l*n+j])
							}
						}
						want := 0.0
						if i <= j+1 {
							want = h(i, j)
						}
						require.InDelta(t, want, s, 20*tol*float64(n), "%s: Q^T a Q at [%d,%d,%d]", name, b, i, j)
					}
				}
			}
		}
	}
}

// TestGeevScaling: f32 matrices LAPACK scales or balances before its QR
// (one of magnitudes 1e-30, whose products underflow; one of 1e30; one
// badly scaled, D a D^-1 with D from 1e-6 to 1e6) give the evaluator's
// eigenvalues to 1e-5 of the largest and residuals a v - w v to 1e-5 of
// the matrix's norm on the device: without the scaling the first was 2.5e-2
// off and the last 49 times its largest eigenvalue.
func TestGeevScaling(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(25, 26))
	n := 6
	full := make([]complex128, 3*n*n)
	d := []float64{1e6, 1, 1e-6, 1, 1e3, 1e-3}
	for i := range n {
		for j := range n {
			x := 2*rng.Float64() - 1
			full[i*n+j] = complex(x*1e-30, 0)
			full[n*n+i*n+j] = complex(x*1e30, 0)
			full[2*n*n+i*n+j] = complex(d[i]*(2*rng.Float64()-1)/d[j], 0)
		}
	}
	a := tensorOf("f32", []int64{3, int64(n), int64(n)}, full)
	src := `HloModule eig
ENTRY e {
  a = f32[3,6,6] parameter(0)
  ROOT r = (f32[3,6], f32[3,6], c64[3,6,6], c64[3,6,6], s32[3]) custom-call(a), custom_call_target="lapack_sgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`
	res, want := deviceAndEval(t, "scaling", src, a)
	wl := want.Leaves()
	ww := []*vkjit.Tensor{{Type: vkjit.DType(wl[0].Shape.Elem), Dims: wl[0].Shape.Dims, Data: wl[0].Data}, {Type: vkjit.DType(wl[1].Shape.Elem), Dims: wl[1].Shape.Dims, Data: wl[1].Data}}
	for b := range 3 {
		var big, norm float64
		for j := range n {
			big = math.Max(big, cmplx.Abs(complex(real(valueAt(ww[0], int64(b*n+j))), real(valueAt(ww[1], int64(b*n+j))))))
		}
		for i := range n * n {
			norm = math.Hypot(norm, real(full[b*n*n+i]))
		}
		for j := range n {
			g := complex(real(valueAt(res[0], int64(b*n+j))), real(valueAt(res[1], int64(b*n+j))))
			e := complex(real(valueAt(ww[0], int64(b*n+j))), real(valueAt(ww[1], int64(b*n+j))))
			require.LessOrEqual(t, cmplx.Abs(g-e), 1e-5*big, "matrix %d eigenvalue %d: %v, want %v", b, j, g, e)
			for i := range n {
				var av complex128
				for k := range n {
					av += full[(b*n+i)*n+k] * valueAt(res[3], int64((b*n+k)*n+j))
				}
				require.LessOrEqual(t, cmplx.Abs(av-g*valueAt(res[3], int64((b*n+i)*n+j))), 1e-5*norm, "matrix %d: a v = w v at [%d,%d]", b, i, j)
			}
		}
	}
}

// TestGeevDefective: Jordan blocks, one eigenvalue of algebraic
// multiplicity n and one eigenvector, e_1 (left: e_n). The vectors'
// substitution divides by smin where T(i,i) - lambda is zero and grows
// by 1/smin a row: without dtrevc3's scaling every vector was NaN from
// order 7 in f32 (2^23 a row) and 21 in f64. Each vector comes back as
// LAPACK's: e_1 (e_n) to rounding, on the device as in the evaluator.
func TestGeevDefective(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		ty, cty, letter string
		n               int
		tol             float64
	}{{"f32", "c64", "s", 12, 1e-6}, {"f64", "c128", "d", 25, 1e-14}} {
		n := c.n
		full := make([]complex128, 2*n*n)
		for i := range n {
			full[i*n+i] = 1 // the second matrix nilpotent: eigenvalue 0
			if i+1 < n {
				full[i*n+i+1], full[n*n+i*n+i+1] = 1, 1
			}
		}
		name := fmt.Sprintf("%s[2,%d,%d] Jordan blocks", c.ty, n, n)
		src := fmt.Sprintf(`HloModule eig
ENTRY e {
  a = %[1]s[2,%[2]d,%[2]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d], %[1]s[2,%[2]d], %[3]s[2,%[2]d,%[2]d], %[3]s[2,%[2]d,%[2]d], s32[2]) custom-call(a), custom_call_target="lapack_%[4]sgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`, c.ty, n, c.cty, c.letter)
		res, want := deviceAndEval(t, name, src, tensorOf(c.ty, []int64{2, int64(n), int64(n)}, full))
		requireNearEval(t, name, res, want, c.tol)
		for b := range 2 {
			for j := range n {
				require.Equal(t, float64(1-b), real(valueAt(res[0], int64(b*n+j))), "%s eigenvalue [%d,%d]", name, b, j)
				for i := range n {
					v, u := valueAt(res[3], int64((b*n+i)*n+j)), valueAt(res[2], int64((b*n+i)*n+j))
					require.InDelta(t, map[bool]float64{true: 1, false: 0}[i == 0], cmplx.Abs(v), c.tol, "%s right vector [%d,%d] element %d: %v", name, b, j, i, v)
					require.InDelta(t, map[bool]float64{true: 1, false: 0}[i == n-1], cmplx.Abs(u), c.tol, "%s left vector [%d,%d] element %d: %v", name, b, j, i, u)
				}
			}
		}
	}
}

// TestEigTies: a cyclic permutation's eigenvectors (the Fourier
// vectors) have components of equal magnitude, so which is "largest",
// the one geev's form makes real and positive, was a tie that rounding
// decided, differently in f32 on the device and in float64 in the
// evaluator (vectors 0.59 apart under `vkjit run --compare`, both
// valid). Elements within 8 n ulp of the largest now count as largest,
// the first of them wins: the device's geev agrees with the
// evaluator's, and each eigenvector's first element is the real one.
// gees of it too: a normal matrix's pair of Schur vectors is unique only
// up to a rotation in its plane, now the one that makes the first
// vector positive and the second zero in the first largest row. The same
// for syevd and gesdd of the 12x12 Laplacian tridiag(-1, 2, -1), whose
// vectors' first and last elements tie (device and evaluator 0.78
// apart before).
func TestEigTies(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []struct{ ty, cty, letter string }{{"f32", "c64", "s"}, {"f64", "c128", "d"}} {
		const n = 7
		full := make([]complex128, n*n)
		for i := range n {
			full[i*n+(i+1)%n] = 1
		}
		a := tensorOf(ty.ty, []int64{n, n}, full)
		name := ty.ty + " geev of a cyclic permutation"
		res, want := deviceAndEval(t, name, fmt.Sprintf(`HloModule eig
ENTRY e {
  a = %[1]s[7,7] parameter(0)
  ROOT r = (%[1]s[7], %[1]s[7], %[2]s[7,7], %[2]s[7,7], s32[]) custom-call(a), custom_call_target="lapack_%[3]sgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`, ty.ty, ty.cty, ty.letter), a)
		requireNearEval(t, name, res, want, 1e-5)
		name = ty.ty + " gees of a cyclic permutation"
		sres, swant := deviceAndEval(t, name, fmt.Sprintf(`HloModule schur
ENTRY e {
  a = %[1]s[7,7] parameter(0)
  ROOT r = (%[1]s[7,7], %[1]s[7,7], %[1]s[7], %[1]s[7], s32[], s32[]) custom-call(a), custom_call_target="lapack_%[2]sgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
}`, ty.ty, ty.letter), a)
		requireNearEval(t, name, sres, swant, 1e-5)
		const m = 12
		lap := make([]complex128, m*m)
		for i := range m {
			lap[i*m+i] = 2
			if i+1 < m {
				lap[i*m+i+1], lap[(i+1)*m+i] = -1, -1
			}
		}
		for _, c := range []struct{ name, src string }{
			{"syevd", `HloModule eigh
ENTRY e {
  a = %[1]s[12,12] parameter(0)
  ROOT r = (%[1]s[12,12], %[1]s[12], s32[]) custom-call(a), custom_call_target="lapack_%[2]ssyevd_ffi", backend_config={mode = 86 : ui8, uplo = 76 : ui8}
}`},
			{"gesdd", `HloModule svd
ENTRY e {
  a = %[1]s[12,12] parameter(0)
  ROOT r = (%[1]s[12,12], %[1]s[12], %[1]s[12,12], %[1]s[12,12], s32[]) custom-call(a), custom_call_target="lapack_%[2]sgesdd_ffi", backend_config={mode = 83 : ui8}
}`},
		} {
			lname := ty.ty + " " + c.name + " of a Laplacian"
			lres, lwant := deviceAndEval(t, lname, fmt.Sprintf(c.src, ty.ty, ty.letter), tensorOf(ty.ty, []int64{m, m}, lap))
			requireNearEval(t, lname, lres, lwant, 1e-5)
		}
		for j := range n {
			for _, o := range []int{2, 3} {
				v := valueAt(res[o], int64(j))
				require.Zero(t, imag(v), "%s output %d vector %d: first element %v", name, o, j, v)
				require.Greater(t, real(v), 0.0, "%s output %d vector %d", name, o, j)
			}
		}
	}
}

// onesF32 is the f32 n x n matrix of ones: rank 1.
func onesF32(n int) *vkjit.Tensor {
	full := make([]complex128, n*n)
	for i := range full {
		full[i] = 1
	}
	return tensorOf("f32", []int64{int64(n), int64(n)}, full)
}

// TestGeqrfRankDeficient: QR of a matrix of ones (rank 1): after the
// first reflector every column is roundoff, shrinking a column at a
// time, until 1 / (alpha - beta) overflowed and the reflectors became
// 0 * inf = NaN (f32 from the eighth of twelve columns). Tiny columns
// are now scaled by a power of two first, as LAPACK's larfg rescales:
// every result finite, Q orthogonal and Q R = A to f32's rounding.
func TestGeqrfRankDeficient(t *testing.T) {
	defer noValidationMessages(t)
	const n = 12
	src := `HloModule qr
ENTRY e {
  a = f32[12,12] parameter(0)
  qr = (f32[12,12], f32[12]) custom-call(a), custom_call_target="lapack_sgeqrf_ffi"
  h = f32[12,12] get-tuple-element(qr), index=0
  tau = f32[12] get-tuple-element(qr), index=1
  q = f32[12,12] custom-call(h, tau), custom_call_target="lapack_sorgqr_ffi"
  ROOT r = (f32[12,12], f32[12,12]) tuple(h, q)
}`
	res, _ := deviceAndEval(t, "qr of ones", src, onesF32(n))
	at := func(x *vkjit.Tensor, i, j int) float64 { return real(valueAt(x, int64(i*n+j))) }
	for i := range n {
		for j := range n {
			var qr, qtq float64
			for k := range n {
				if k <= j {
					qr += at(res[1], i, k) * at(res[0], k, j) // R: h's upper triangle
				}
				qtq += at(res[1], k, i) * at(res[1], k, j)
			}
			require.InDelta(t, 1, qr, 1e-5, "(Q R)[%d,%d]", i, j)
			require.InDelta(t, map[bool]float64{true: 1, false: 0}[i == j], qtq, 1e-5, "(Q^T Q)[%d,%d]", i, j)
		}
	}
}

// TestGeesRankDeficient: the Hessenberg reduction of gees (and geev,
// gehrd) met the same shrinking roundoff columns as QR on a matrix of
// ones, and its T and Z came back NaN (f32, 12x12); scaled likewise,
// Z T Z^T = A and Z^T Z = I to f32's rounding, eigenvalues 12 and ~0.
func TestGeesRankDeficient(t *testing.T) {
	defer noValidationMessages(t)
	const n = 12
	res, _ := deviceAndEval(t, "schur of ones", `HloModule schur
ENTRY e {
  a = f32[12,12] parameter(0)
  ROOT r = (f32[12,12], f32[12,12], f32[12], f32[12], s32[], s32[]) custom-call(a), custom_call_target="lapack_sgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
}`, onesF32(n))
	at := func(x *vkjit.Tensor, i, j int) float64 { return real(valueAt(x, int64(i*n+j))) }
	for i := range n {
		for j := range n {
			var ztz, a float64
			for k := range n {
				ztz += at(res[1], k, i) * at(res[1], k, j)
				for l := range n {
					a += at(res[1], i, k) * at(res[0], k, l) * at(res[1], j, l)
				}
			}
			require.InDelta(t, 1, a, 1e-5, "(Z T Z^T)[%d,%d]", i, j)
			require.InDelta(t, map[bool]float64{true: 1, false: 0}[i == j], ztz, 1e-5, "(Z^T Z)[%d,%d]", i, j)
		}
	}
	var sum float64
	for j := range n {
		sum += math.Abs(real(valueAt(res[2], int64(j))))
	}
	require.InDelta(t, 12, sum, 1e-4, "eigenvalues 12 and zeros")
}

// TestJacobiScaling: syevd and gesdd of f32 matrices of magnitudes
// 1e-30, 1e10 and 1e30. Their Jacobi sweeps' sums of squares under- or
// overflowed: syevd stopped at once and returned the diagonal (residual
// 0.35 of the norm at 1e-30 and 1e30), gesdd's convergence bound
// sqrt(d_p d_q) overflowed from magnitudes ~3e9 (singular values 40%
// off at 1e10, +Inf at 1e30). Each matrix is now scaled by a power of
// two into range first, as LAPACK's syevd and gesdd scale, and the
// bound is sqrt(d_p) sqrt(d_q): values within 1e-5 of the largest of the
// evaluator's, vectors within 1e-4.
func TestJacobiScaling(t *testing.T) {
	defer noValidationMessages(t)
	const n = 12
	rng := rand.New(rand.NewPCG(31, 32))
	scales := []float64{1e-30, 1e10, 1e30}
	full := make([]complex128, 3*n*n)
	for b, s := range scales {
		for i := range n {
			for j := range n {
				full[(b*n+i)*n+j] = complex(s*(2*rng.Float64()-1), 0)
			}
		}
		for i := range n { // symmetric, for syevd
			for j := range i {
				full[(b*n+j)*n+i] = full[(b*n+i)*n+j]
			}
		}
	}
	a := tensorOf("f32", []int64{3, n, n}, full)
	for _, c := range []struct{ name, src string }{
		{"syevd", `HloModule eigh
ENTRY e {
  a = f32[3,12,12] parameter(0)
  ROOT r = (f32[3,12,12], f32[3,12], s32[3]) custom-call(a), custom_call_target="lapack_ssyevd_ffi", backend_config={mode = 86 : ui8, uplo = 76 : ui8}
}`},
		{"gesdd", `HloModule svd
ENTRY e {
  a = f32[3,12,12] parameter(0)
  ROOT r = (f32[3,12,12], f32[3,12], f32[3,12,12], f32[3,12,12], s32[3]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={mode = 83 : ui8}
}`},
	} {
		res, want := deviceAndEval(t, c.name, c.src, a)
		wl := want.Leaves()
		for o, w := range wl {
			wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
			per := wt.NumElements() / 3
			for b := range 3 {
				tol := 1e-4 // vectors: unit columns
				if w.Shape.Rank() == 2 {
					var big float64 // values: relative to the largest
					for i := range per {
						big = math.Max(big, math.Abs(real(valueAt(wt, int64(b)*per+i))))
					}
					tol = 1e-5 * big
				}
				for i := range per {
					g, e := valueAt(res[o], int64(b)*per+i), valueAt(wt, int64(b)*per+i)
					require.LessOrEqual(t, cmplx.Abs(g-e), tol, "%s scale %g output %d element %d: %v, want %v", c.name, scales[b], o, i, g, e)
				}
			}
		}
	}
}

// TestGeevNaN: a matrix with a NaN never deflates; geev stops after
// its sweeps with info 4 (the last row unconverged) and zero vectors, on
// the device as in the evaluator, rather than loop without end.
func TestGeevNaN(t *testing.T) {
	defer noValidationMessages(t)
	vals := make([]complex128, 16)
	for i := range vals {
		vals[i] = complex(float64(i%5)-2, 0)
	}
	vals[6] = complex(math.NaN(), 0)
	src := `HloModule eig
ENTRY e {
  a = f64[4,4] parameter(0)
  ROOT r = (f64[4], f64[4], c128[4,4], c128[4,4], s32[]) custom-call(a), custom_call_target="lapack_dgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`
	res, want := deviceAndEval(t, "nan", src, tensorOf("f64", []int64{4, 4}, vals))
	require.Equal(t, int64(4), int64(real(valueAt(res[4], 0))))
	require.Equal(t, int32(4), int32(binary.LittleEndian.Uint32(want.Leaves()[4].Data)))
	for o := 2; o < 4; o++ {
		for i := range int64(16) {
			require.Zero(t, valueAt(res[o], i), "output %d element %d", o, i)
		}
	}
}

// TestGesdd runs LAPACK's gesdd as JAX's CPU lowering calls it for
// jnp.linalg.svd on the device (one-sided Jacobi sweeps), tall, wide and
// square, modes 'A' and 'S', f32, f64 and c64, the second matrix of each
// batch with a zero column or row (a zero singular value, whose vectors the QR
// completion makes), against the evaluator (which matches LAPACK itself
// in hlo/eval): s, u and vt within rounding, u diag(s) vt = a, and u and
// vt unitary. gesvd (jax.lax.linalg.svd's SvdAlgorithm.QR: the same
// operands, attributes and results) takes every other shape and mode.
func TestGesdd(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(17, 18))
	for _, ty := range []string{"f32", "f64", "c64"} {
		letter, sty, tol := map[string]string{"f32": "s", "f64": "d", "c64": "c"}[ty], map[string]string{"f32": "f32", "f64": "f64", "c64": "f32"}[ty], 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for di, d := range [][2]int{{6, 4}, {3, 7}, {5, 5}} {
			for mi, mode := range []byte{'A', 'S'} {
				routine := []string{"gesdd", "gesvd"}[(di+mi)%2]
				m, n := d[0], d[1]
				k := min(m, n)
				ur, vr := m, n
				if mode == 'S' {
					ur, vr = k, k
				}
				name := fmt.Sprintf("%s %s[2,%d,%d] mode %c", routine, ty, m, n, mode)
				a := randomArray(rng, ty, []int64{2, int64(m), int64(n)})
				for i := range m { // matrix 1's column 1 zero (row 1, when wide): rank k-1
					for j := range n {
						if m >= n && j == 1 || m < n && i == 1 {
							copy(a.Data[(m*n+i*n+j)*a.Type.Bytes():], make([]byte, a.Type.Bytes()))
						}
					}
				}
				src := fmt.Sprintf(`HloModule svd
ENTRY e {
  a = %[1]s[2,%[2]d,%[3]d] parameter(0)
  ROOT r = (%[1]s[2,%[2]d,%[3]d], %[4]s[2,%[5]d], %[1]s[2,%[2]d,%[6]d], %[1]s[2,%[7]d,%[3]d], s32[2]) custom-call(a), custom_call_target="lapack_%[8]s%[10]s_ffi", backend_config={mode = %[9]d : ui8}
}`, ty, m, n, sty, k, ur, vr, letter, mode, routine)
				res, want := deviceAndEval(t, name, src, a)
				for o, w := range want.Leaves()[1:4] {
					wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
					for i := range wt.NumElements() {
						g, e := valueAt(res[o+1], i), valueAt(wt, i)
						require.LessOrEqual(t, cmplx.Abs(g-e), 10*tol, "%s output %d element %d: %v, want %v", name, o+1, i, g, e)
					}
				}
				u := func(b, i, j int) complex128 { return valueAt(res[2], int64((b*m+i)*ur+j)) }
				vt := func(b, i, j int) complex128 { return valueAt(res[3], int64((b*vr+i)*n+j)) }
				for b := range 2 {
					require.Equal(t, complex128(0), valueAt(res[1], int64(b*k+k-1))*complex(float64(b), 0), "%s: the zero column's singular value", name)
					for i := range m {
						for j := range n {
							var s complex128
							for l := range k {
								s += u(b, i, l) * valueAt(res[1], int64(b*k+l)) * vt(b, l, j)
							}
							require.LessOrEqual(t, cmplx.Abs(s-valueAt(a, int64((b*m+i)*n+j))), 20*tol, "%s: u s vt at [%d,%d,%d]", name, b, i, j)
						}
					}
					for p := range ur {
						for q := range ur {
							var s complex128
							for i := range m {
								s += cmplx.Conj(u(b, i, p)) * u(b, i, q)
							}
							if p == q {
								s--
							}
							require.LessOrEqual(t, cmplx.Abs(s), 20*tol, "%s: u^H u at [%d,%d,%d]", name, b, p, q)
						}
					}
					for p := range vr {
						for q := range vr {
							var s complex128
							for j := range n {
								s += vt(b, p, j) * cmplx.Conj(vt(b, q, j))
							}
							if p == q {
								s--
							}
							require.LessOrEqual(t, cmplx.Abs(s), 20*tol, "%s: vt vt^H at [%d,%d,%d]", name, b, p, q)
						}
					}
				}
			}
		}
	}
}

// TestGesddTall: columns taller than a device loop holds in registers
// (80 rows) are rotated in chunks of rows, their Gram sums summed chunk
// by chunk (svdStep): the singular values agree with the evaluator's,
// u s vt gives a back and u's columns are orthonormal.
func TestGesddTall(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(19, 20))
	const m, n = 80, 16
	a := randomArray(rng, "f32", []int64{m, n})
	src := fmt.Sprintf(`HloModule svd
ENTRY e {
  a = f32[%[1]d,%[2]d] parameter(0)
  ROOT r = (f32[%[1]d,%[2]d], f32[%[2]d], f32[%[1]d,%[2]d], f32[%[2]d,%[2]d], s32[]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={mode = 83 : ui8}
}`, m, n)
	res, want := deviceAndEval(t, "svd", src, a)
	w := want.Leaves()[1]
	ws := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
	for j := range int64(n) {
		require.InDelta(t, real(valueAt(ws, j)), real(valueAt(res[1], j)), 2e-5*real(valueAt(ws, 0)), "s[%d]", j)
	}
	u := func(i, j int) float64 { return real(valueAt(res[2], int64(i*n+j))) }
	vt := func(i, j int) float64 { return real(valueAt(res[3], int64(i*n+j))) }
	for i := range m {
		for j := range n {
			var s float64
			for l := range n {
				s += u(i, l) * real(valueAt(res[1], int64(l))) * vt(l, j)
			}
			require.InDelta(t, real(valueAt(a, int64(i*n+j))), s, 1e-4, "u s vt at [%d,%d]", i, j)
		}
	}
	for p := range n {
		for q := range n {
			var s float64
			for i := range m {
				s += u(i, p) * u(i, q)
			}
			if p == q {
				s--
			}
			require.InDelta(t, 0, s, 1e-4, "u^T u at [%d,%d]", p, q)
		}
	}
}

// TestGetrfRows: one matrix of 9 to 32 rows and columns takes getrf's
// row loop on the device (getrfRows): square, tall and wide, f32 and
// c64, one with a zero column (info), against the evaluator: the same
// pivots and info, the factors within rounding.
func TestGetrfRows(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, ty := range []string{"f32", "c64"} {
		letter := map[string]string{"f32": "s", "c64": "c"}[ty]
		for _, d := range [][2]int64{{16, 16}, {20, 12}, {12, 20}, {24, 24}} {
			m, n := d[0], d[1]
			k := min(m, n)
			name := fmt.Sprintf("%s[%d,%d]", ty, m, n)
			a := randomArray(rng, ty, []int64{m, n})
			if m == 24 { // column 3 zero: info 4
				for i := range m {
					copy(a.Data[(i*n+3)*int64(a.Type.Bytes()):], make([]byte, a.Type.Bytes()))
				}
			}
			src := fmt.Sprintf(`HloModule lu
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  ROOT lu = (%[1]s[%[2]d,%[3]d], s32[%[4]d], s32[]) custom-call(a), custom_call_target="lapack_%[5]sgetrf_ffi"
}`, ty, m, n, k, letter)
			res, want := deviceAndEval(t, name, src, a)
			for o, w := range want.Leaves() {
				wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
				for i := range wt.NumElements() {
					g, e := valueAt(res[o], i), valueAt(wt, i)
					if o > 0 {
						require.Equal(t, e, g, "%s output %d element %d", name, o, i)
						continue
					}
					require.LessOrEqual(t, cmplx.Abs(g-e), 1e-4*math.Max(1, cmplx.Abs(e)), "%s lu element %d: %v, want %v", name, i, g, e)
				}
			}
			if m == 24 {
				require.Equal(t, complex128(4), valueAt(res[2], 0), "%s info", name)
			}
		}
	}
}

// deviceAndEval compiles src, runs it on the device and on the evaluator
// with args, and returns the device's results and the evaluator's.
// requireNearEval requires every element of the device's results within
// tol of the evaluator's.
func requireNearEval(t *testing.T, name string, res []*vkjit.Tensor, want *eval.Value, tol float64) {
	t.Helper()
	for o, w := range want.Leaves() {
		wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
		for i := range wt.NumElements() {
			g, e := valueAt(res[o], i), valueAt(wt, i)
			require.LessOrEqual(t, cmplx.Abs(g-e), tol, "%s output %d element %d: %v, want %v", name, o, i, g, e)
		}
	}
}

// deviceAndEvalF32 is deviceAndEval's first result, an f32 array, from
// the device and from the evaluator.
func deviceAndEvalF32(t *testing.T, name, src string, args ...*vkjit.Tensor) (device, evaluator []float32) {
	t.Helper()
	res, want := deviceAndEval(t, name, src, args...)
	device, err := res[0].AsFloat32()
	require.NoError(t, err)
	w := want.Leaves()[0]
	evaluator, err = (&vkjit.Tensor{Type: vkjit.F32, Dims: w.Shape.Dims, Data: w.Data}).AsFloat32()
	require.NoError(t, err)
	return device, evaluator
}

func deviceAndEval(t *testing.T, name, src string, args ...*vkjit.Tensor) ([]*vkjit.Tensor, *eval.Value) {
	t.Helper()
	exe, err := rt.CompileText(name, src, vkjit.CompileOptions{})
	require.NoError(t, err, name)
	res, _, err := exe.Run(context.Background(), args...)
	require.NoError(t, err, name)
	exe.Close()
	mod, err := hlo.Parse(name, src)
	require.NoError(t, err)
	lits := make([]*hlo.Literal, len(args))
	for i, a := range args {
		lits[i] = literalOf(a)
	}
	want, err := eval.Run(mod, lits...)
	require.NoError(t, err, name)
	return res, want
}

// TestEigIsolated: gebal's permutation. Matrices P B P^T, B block upper
// triangular with triangular corners (two rows and columns of each
// order 7 matrix, every row of the second, which is lower triangular
// before its permutation), hold eigenvalues that a permutation of rows
// and columns isolates on the diagonal; LAPACK's geev and gees permute
// first and return them exactly, where the QR iteration rounds them
// (the first matrix's four came back 1 to 3 ulp off in f32 before
// vkjit permuted). geev (real and complex) and gees on the device and in the
// evaluator: those eigenvalues bit for bit, the rest within rounding, a
// v = lambda v and u^H a = lambda u^H, and a = Z T Z^H with T's diagonal
// holding the isolated values.
func TestEigIsolated(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(41, 42))
	const n = 7
	perm := rng.Perm(n)
	corners := []float64{3, -1.5, 0.25, 7} // B's (0,0), (1,1), (5,5), (6,6)
	quarter := func() float64 { return math.Round(8*(2*rng.Float64()-1)) / 4 }
	// full is the real matrices, fullC the complex ones: the same with
	// imaginary parts off the diagonal where the real ones are nonzero.
	full, fullC := make([]complex128, 2*n*n), make([]complex128, 2*n*n)
	for i := range n {
		for j := range n {
			var bij, lij float64 // B (block upper triangular), L (lower triangular)
			switch {
			case i == j && i < 2:
				bij = corners[i]
			case i == j && i > 4:
				bij = corners[i-3]
			case i <= j || i >= 2 && i <= 4 && j >= 2 && j <= 4:
				bij = quarter()
			}
			switch {
			case i == j:
				lij = float64(1 + i)
			case j < i:
				lij = quarter()
			}
			for k, x := range []float64{bij, lij} {
				at := k*n*n + perm[i]*n + perm[j]
				full[at], fullC[at] = complex(x, 0), complex(x, 0)
				if x != 0 && i != j {
					fullC[at] = complex(x, quarter())
				}
			}
		}
	}
	isolated := [][]float64{corners, {1, 2, 3, 4, 5, 6, 7}}
	requireIsolated := func(name string, w []complex128, b int) {
		t.Helper()
		for _, x := range isolated[b] {
			found := false
			for _, g := range w {
				found = found || g == complex(x, 0)
			}
			require.True(t, found, "%s matrix %d: eigenvalue %v exactly, got %v", name, b, x, w)
		}
	}
	for _, ty := range []struct {
		ty, cty, letter string
		tol             float64
	}{{"f32", "c64", "s", 1e-4}, {"f64", "c128", "d", 1e-11}, {"c64", "c64", "c", 1e-4}, {"c128", "c128", "z", 1e-11}} {
		complexType := ty.ty == ty.cty
		mats := full
		if complexType {
			mats = fullC
		}
		a := tensorOf(ty.ty, []int64{2, n, n}, mats)
		w := fmt.Sprintf("%[1]s[2,7], %[1]s[2,7]", ty.ty) // wr, wi
		if complexType {
			w = ty.ty + "[2,7]"
		}
		geev := fmt.Sprintf(`HloModule eig
ENTRY e {
  a = %[1]s[2,7,7] parameter(0)
  ROOT r = (%[4]s, %[2]s[2,7,7], %[2]s[2,7,7], s32[2]) custom-call(a), custom_call_target="lapack_%[3]sgeev_ffi", backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}`, ty.ty, ty.cty, ty.letter, w)
		outs := map[bool][4]int{false: {0, 2, 3, 4}, true: {0, 1, 2, 3}} // real: (wr, wi, vl, vr, info); complex: (w, vl, vr, info)
		name := ty.ty + " geev of permuted triangular matrices"
		res, want := deviceAndEval(t, name, geev, a)
		requireNearEval(t, name, res, want, ty.tol)
		wl := want.Leaves()
		o := outs[complexType]
		for b := range 2 {
			require.Zero(t, valueAt(res[o[3]], int64(b)), "%s info", name)
			var dw, ew []complex128
			for j := range n {
				k := int64(b*n + j)
				wt := func(x *hlo.Literal) *vkjit.Tensor {
					return &vkjit.Tensor{Type: vkjit.DType(x.Shape.Elem), Dims: x.Shape.Dims, Data: x.Data}
				}
				if complexType {
					dw, ew = append(dw, valueAt(res[0], k)), append(ew, valueAt(wt(wl[0]), k))
				} else {
					dw = append(dw, complex(real(valueAt(res[0], k)), real(valueAt(res[1], k))))
					ew = append(ew, complex(real(valueAt(wt(wl[0]), k)), real(valueAt(wt(wl[1]), k))))
				}
			}
			requireIsolated(name+" (device)", dw, b)
			requireIsolated(name+" (evaluator)", ew, b)
			for j := range n {
				requireEigenpair(t, name, mats, b, n, j, dw[j], res[o[1]], res[o[2]], true, true, 100*ty.tol)
			}
		}
		if complexType {
			continue
		}
		gees := fmt.Sprintf(`HloModule schur
ENTRY e {
  a = %[1]s[2,7,7] parameter(0)
  ROOT r = (%[1]s[2,7,7], %[1]s[2,7,7], %[1]s[2,7], %[1]s[2,7], s32[2], s32[2]) custom-call(a), custom_call_target="lapack_%[2]sgees_ffi", backend_config={mode = 86 : ui8, sort = 78 : ui8}
}`, ty.ty, ty.letter)
		name = ty.ty + " gees of permuted triangular matrices"
		res, want = deviceAndEval(t, name, gees, a)
		requireNearEval(t, name, res, want, ty.tol)
		for b := range 2 {
			var diag []complex128
			for i := range n {
				diag = append(diag, valueAt(res[0], int64((b*n+i)*n+i)))
				for j := range n {
					requireSchurAt(t, name, a, res[0], res[1], b, n, i, j, 100*ty.tol)
				}
			}
			requireIsolated(name, diag, b)
		}
	}
}

// TestSytrd holds the device's sytrd and hetrd (jax.lax.linalg.
// tridiagonal) to the evaluator's, lower and upper, in f32, f64, c64
// and c128, on a batch of a random matrix, one whose first column is
// already reduced (its reflector is the identity: tau 0) and a diagonal
// one, and of order 1; the triangle neither reads holds NaN (returned
// as it was) and a Hermitian diagonal's imaginary parts are ignored.
// Apart from the evaluator, the device's results must give the matrix
// back as LAPACK defines them: Q T Q^H with T tridiagonal from d and e,
// Q = H(0) ... H(n-2) (upper: H(n-2) ... H(0)), H(i) = I - tau_i v v^H
// with v read from the returned matrix as LAPACK stores it.
func TestSytrd(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(21, 22))
	prog := func(ty string, batch, n int64, lower bool) string {
		rt, name, uplo := ty, "sytrd", 85
		switch ty {
		case "c64":
			rt, name = "f32", "hetrd"
		case "c128":
			rt, name = "f64", "hetrd"
		}
		if lower {
			uplo = 76
		}
		return fmt.Sprintf(`HloModule sytrd
ENTRY e {
  a = %[1]s[%[3]d,%[4]d,%[4]d] parameter(0)
  ROOT r = (%[1]s[%[3]d,%[4]d,%[4]d], %[2]s[%[3]d,%[4]d], %[2]s[%[3]d,%[5]d], %[1]s[%[3]d,%[5]d], s32[%[3]d]) custom-call(a), custom_call_target="lapack_%[6]s%[7]s_ffi", backend_config={uplo = %[8]d : ui8}
}`, ty, rt, batch, n, max(n-1, 0), map[string]string{"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[ty], name, uplo)
	}
	nan := complex(math.NaN(), math.NaN())
	// matrices fills the read triangle, NaN in the other.
	matrices := func(ty string, batch, n int, lower bool, fill func(b, i, j int) complex128) []complex128 {
		a := make([]complex128, batch*n*n)
		for b := range batch {
			for i := range n {
				for j := range n {
					v := nan
					if i == j || (i > j) == lower {
						v = fill(b, i, j)
					}
					if ty == "f32" || ty == "f64" {
						v = complex(real(v), 0)
						if cmplx.IsNaN(v) {
							v = complex(math.NaN(), 0)
						}
					}
					a[(b*n+i)*n+j] = v
				}
			}
		}
		return a
	}
	same := func(g, w complex128, tol float64) bool {
		if cmplx.IsNaN(w) {
			return cmplx.IsNaN(g)
		}
		return cmplx.Abs(g-w) <= tol
	}
	for _, ty := range []string{"f32", "f64", "c64", "c128"} {
		tol := 2e-5
		if ty == "f64" || ty == "c128" {
			tol = 1e-12
		}
		for _, lower := range []bool{true, false} {
			const batch, n = 3, 6
			name := fmt.Sprintf("sytrd %s lower=%v", ty, lower)
			a := matrices(ty, batch, n, lower, func(b, i, j int) complex128 {
				v := complex(rng.Float64()*4-2, rng.Float64()*4-2)
				// Matrix 1's first reduced column (lower: column 0;
				// upper: column n-1) has zeros past the off-diagonal
				// and a real element on it.
				first, off := j == 0 && i > 1, j == 0 && i == 1
				if !lower {
					first, off = j == n-1 && i < n-2, j == n-1 && i == n-2
				}
				switch {
				case b == 1 && first, b == 2 && i != j:
					return 0
				case b == 1 && off:
					return complex(real(v), 0)
				}
				return v
			})
			res, want := deviceAndEval(t, name, prog(ty, batch, n, lower), tensorOf(ty, []int64{batch, n, n}, a))
			for o, w := range want.Leaves() {
				wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
				for i := range wt.NumElements() {
					g, e := valueAt(res[o], i), valueAt(wt, i)
					require.True(t, same(g, e, tol*4), "%s output %d element %d: %v, want %v", name, o, i, g, e)
				}
			}
			for b := range batch {
				if b == 1 { // the reduced column's reflector is the identity
					k := int64(b * (n - 1))
					if !lower {
						k += n - 2
					}
					require.Equal(t, complex128(0), valueAt(res[3], k), "%s: tau of a reduced column", name)
				}
				checkTridiagonal(t, name, res, a, b, n, lower, tol*float64(n))
			}
		}
		res, want := deviceAndEval(t, "sytrd order 1 "+ty, prog(ty, 1, 1, true), tensorOf(ty, []int64{1, 1, 1}, []complex128{3 + 4i}))
		requireNearEval(t, "sytrd order 1 "+ty, res, want, 0)
		require.Equal(t, complex(3, 0), valueAt(res[0], 0), "a Hermitian diagonal is real")
		require.Equal(t, complex(3, 0), valueAt(res[1], 0))
	}
}

// checkTridiagonal rebuilds matrix b of the batch from sytrd's results
// res (a, d, e, tau) as LAPACK defines them and compares it with the
// Hermitian matrix a's read triangle stands for.
func checkTridiagonal(t *testing.T, name string, res []*vkjit.Tensor, a []complex128, b, n int, lower bool, tol float64) {
	t.Helper()
	at := func(x *vkjit.Tensor, base, i int) complex128 { return valueAt(x, int64(base+i)) }
	// q starts as the identity; each H(i) multiplies it on the right in
	// LAPACK's order.
	q := make([]complex128, n*n)
	for i := range n {
		q[i*n+i] = 1
	}
	steps := make([]int, n-1)
	for i := range steps {
		steps[i] = i
		if !lower {
			steps[i] = n - 2 - i
		}
	}
	for _, i := range steps {
		v := make([]complex128, n)
		if lower {
			v[i+1] = 1
			for r := i + 2; r < n; r++ {
				v[r] = at(res[0], b*n*n, r*n+i)
			}
		} else {
			v[i] = 1
			for r := 0; r < i; r++ {
				v[r] = at(res[0], b*n*n, r*n+i+1)
			}
		}
		tau := at(res[3], b*(n-1), i)
		for r := range n { // q = q (I - tau v v^H)
			var s complex128
			for c := range n {
				s += q[r*n+c] * v[c]
			}
			for c := range n {
				q[r*n+c] -= tau * s * cmplx.Conj(v[c])
			}
		}
	}
	tri := func(i, j int) complex128 {
		switch {
		case i == j:
			return at(res[1], b*n, i)
		case i == j+1:
			return at(res[2], b*(n-1), j)
		case j == i+1:
			return at(res[2], b*(n-1), i)
		}
		return 0
	}
	for i := range n {
		for j := range n {
			var s complex128
			for k := range n {
				for l := range n {
					s += q[i*n+k] * tri(k, l) * cmplx.Conj(q[j*n+l])
				}
			}
			w := a[(b*n+i)*n+j]
			if i == j {
				w = complex(real(w), 0)
			} else if (i > j) != lower {
				w = cmplx.Conj(a[(b*n+j)*n+i])
			}
			require.LessOrEqual(t, cmplx.Abs(s-w), tol*4, "%s: matrix %d (%d, %d) of Q T Q^H: %v, a's %v", name, b, i, j, s, w)
		}
	}
}

// TestGeqp3 holds the device's geqp3 (jax.lax.linalg.qr with
// pivoting=True) to the evaluator's in f32, f64, c64 and c128: a batch
// of tall matrices, one with a zero column, with no column fixed and
// with different columns fixed per matrix, a wide batch with more
// fixed columns than rows, and a 24x16 batch (its column norms in
// vector kernels). Apart from the evaluator, the device's
// results must be a pivoted QR as LAPACK defines it: a P = Q R with Q
// = H(0) ... H(k-1) from the stored reflectors, P from jpvt a
// permutation, and |r_ii| not increasing over the pivoted columns.
func TestGeqp3(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(23, 24))
	prog := func(ty string, batch, m, n int64) string {
		return fmt.Sprintf(`HloModule qp3
ENTRY e {
  a = %[1]s[%[2]d,%[3]d,%[4]d] parameter(0)
  p = s32[%[2]d,%[4]d] parameter(1)
  ROOT r = (%[1]s[%[2]d,%[3]d,%[4]d], s32[%[2]d,%[4]d], %[1]s[%[2]d,%[5]d]) custom-call(a, p), custom_call_target="lapack_%[6]sgeqp3_ffi"
}`, ty, batch, m, n, min(m, n), map[string]string{"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[ty])
	}
	for _, ty := range []string{"f32", "f64", "c64", "c128"} {
		tol := 2e-5
		if ty == "f64" || ty == "c128" {
			tol = 1e-12
		}
		isComplex := ty == "c64" || ty == "c128"
		for _, c := range []struct {
			m, n  int
			fixed [][]int32 // per matrix
		}{
			{7, 5, [][]int32{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}},
			{7, 5, [][]int32{{0, 1, 0, 0, 1}, {1, 0, 0, 0, 0}}},
			{3, 6, [][]int32{{1, 0, 1, 1, 0, 1}, {0, 0, 0, 0, 0, 0}}},
			{24, 16, [][]int32{make([]int32, 16), make([]int32, 16)}}, // vector kernels' column norms
		} {
			name := fmt.Sprintf("geqp3 %s %dx%d fixed %v", ty, c.m, c.n, c.fixed)
			batch := len(c.fixed)
			a := make([]complex128, batch*c.m*c.n)
			for i := range a {
				a[i] = complex(rng.Float64()*2-1, 0)
				if isComplex {
					a[i] += complex(0, rng.Float64()*2-1)
				}
				if i < c.m*c.n && i%c.n == 2 { // matrix 0's third column: zero
					a[i] = 0
				}
			}
			var jp []complex128
			for _, f := range c.fixed {
				for _, v := range f {
					jp = append(jp, complex(float64(v), 0))
				}
			}
			res, want := deviceAndEval(t, name, prog(ty, int64(batch), int64(c.m), int64(c.n)),
				tensorOf(ty, []int64{int64(batch), int64(c.m), int64(c.n)}, a), tensorOf("s32", []int64{int64(batch), int64(c.n)}, jp))
			requireNearEval(t, name, res, want, tol*4)
			for b := range batch {
				checkPivotedQR(t, name, res, a, b, c.m, c.n, c.fixed[b], tol*float64(c.m))
			}
		}
	}
}

// checkPivotedQR rebuilds matrix b of the batch from geqp3's results
// (r and the reflectors, jpvt, tau) as LAPACK defines them: a P = Q R.
func checkPivotedQR(t *testing.T, name string, res []*vkjit.Tensor, a []complex128, b, m, n int, fixed []int32, tol float64) {
	t.Helper()
	k := min(m, n)
	perm := make([]int, n)
	seen := make([]bool, n)
	nfxd := 0
	for j := range n {
		perm[j] = int(real(valueAt(res[1], int64(b*n+j)))) - 1
		require.True(t, perm[j] >= 0 && perm[j] < n && !seen[perm[j]], "%s: jpvt of matrix %d is not a permutation", name, b)
		seen[perm[j]] = true
		if fixed[j] != 0 {
			nfxd++
		}
	}
	for j := range nfxd { // the fixed columns first, in order
		require.NotZero(t, fixed[perm[j]], "%s: matrix %d column %d is not fixed", name, b, j)
	}
	rAt := func(i, j int) complex128 { return valueAt(res[0], int64((b*m+i)*n+j)) }
	q := make([]complex128, m*m)
	for i := range m {
		q[i*m+i] = 1
	}
	for j := range k { // q = q H(j)
		v := make([]complex128, m)
		v[j] = 1
		for i := j + 1; i < m; i++ {
			v[i] = rAt(i, j)
		}
		tau := valueAt(res[2], int64(b*k+j))
		for i := range m {
			var s complex128
			for l := range m {
				s += q[i*m+l] * v[l]
			}
			for l := range m {
				q[i*m+l] -= tau * s * cmplx.Conj(v[l])
			}
		}
	}
	for i := range m {
		for j := range n {
			var s complex128
			for l := range min(j+1, m) {
				s += q[i*m+l] * rAt(l, j)
			}
			w := a[(b*m+i)*n+perm[j]]
			require.LessOrEqual(t, cmplx.Abs(s-w), tol, "%s: matrix %d (%d, %d) of Q R: %v, a P's %v", name, b, i, j, s, w)
		}
	}
	for j := max(nfxd, 0) + 1; j < k; j++ {
		require.LessOrEqual(t, cmplx.Abs(rAt(j, j)), cmplx.Abs(rAt(j-1, j-1))*(1+tol), "%s: matrix %d: |r_jj| grows at %d", name, b, j)
	}
}

// TestOrmqr runs LAPACK's ormqr and unmqr (jax.lax.linalg.ormqr) on
// geqrf's reflectors of tall, square and wide matrices: Q^H a gives R
// (geqrf's upper triangle, zeros below), Q^H (Q c) gives c back from the
// left and (c Q) Q^H from the right, in f32, f64 and c64, on the device
// and in the evaluator.
func TestOrmqr(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, ty := range []string{"f32", "f64", "c64"} {
		letter := map[string]string{"f32": "sormqr", "f64": "dormqr", "c64": "cunmqr"}[ty]
		geqrf := map[string]string{"f32": "sgeqrf", "f64": "dgeqrf", "c64": "cgeqrf"}[ty]
		tol := 2e-5
		if ty == "f64" {
			tol = 1e-12
		}
		for _, d := range [][2]int{{6, 4}, {5, 5}, {3, 5}} {
			m, n := d[0], d[1]
			k := min(m, n)
			call := func(left, adjoint bool, c string) string {
				return fmt.Sprintf(`custom-call(qa, tau, %s), custom_call_target="lapack_%s_ffi", backend_config={left = %v, transpose = %v}`, c, letter, left, adjoint)
			}
			src := fmt.Sprintf(`HloModule ormqr
ENTRY e {
  a = %[1]s[2,%[2]d,%[3]d] parameter(0)
  c = %[1]s[2,%[2]d,3] parameter(1)
  cr = %[1]s[2,3,%[2]d] parameter(2)
  qr = (%[1]s[2,%[2]d,%[3]d], %[1]s[2,%[4]d]) custom-call(a), custom_call_target="lapack_%[5]s_ffi"
  qa = %[1]s[2,%[2]d,%[3]d] get-tuple-element(qr), index=0
  tau = %[1]s[2,%[4]d] get-tuple-element(qr), index=1
  rfull = %[1]s[2,%[2]d,%[3]d] %[6]s
  qc = %[1]s[2,%[2]d,3] %[7]s
  back = %[1]s[2,%[2]d,3] %[8]s
  cq = %[1]s[2,3,%[2]d] %[9]s
  backr = %[1]s[2,3,%[2]d] %[10]s
  ROOT r = (%[1]s[2,%[2]d,%[3]d], %[1]s[2,%[2]d,%[3]d], %[1]s[2,%[2]d,3], %[1]s[2,%[2]d,3], %[1]s[2,3,%[2]d]) tuple(qa, rfull, qc, back, backr)
}`, ty, m, n, k, geqrf, call(true, true, "a"), call(true, false, "c"), call(true, true, "qc"), call(false, false, "cr"), call(false, true, "cq"))
			name := fmt.Sprintf("%s %dx%d", letter, m, n)
			a, c, cr := randomArray(rng, ty, []int64{2, int64(m), int64(n)}), randomArray(rng, ty, []int64{2, int64(m), 3}), randomArray(rng, ty, []int64{2, 3, int64(m)})
			res, want := deviceAndEval(t, name, src, a, c, cr)
			requireNearEval(t, name, res, want, 10*tol)
			for b := range 2 {
				for i := range m {
					for j := range n {
						got, r := valueAt(res[1], int64((b*m+i)*n+j)), complex128(0)
						if i <= j {
							r = valueAt(res[0], int64((b*m+i)*n+j))
						}
						require.LessOrEqual(t, cmplx.Abs(got-r), 10*tol, "%s: Q^H a at [%d,%d,%d]: %v, R %v", name, b, i, j, got, r)
					}
					for j := range 3 {
						require.LessOrEqual(t, cmplx.Abs(valueAt(res[3], int64((b*m+i)*3+j))-valueAt(c, int64((b*m+i)*3+j))), 10*tol, "%s: Q^H Q c at [%d,%d,%d]", name, b, i, j)
						require.LessOrEqual(t, cmplx.Abs(valueAt(res[4], int64((b*3+j)*m+i))-valueAt(cr, int64((b*3+j)*m+i))), 10*tol, "%s: c Q Q^H at [%d,%d,%d]", name, b, j, i)
					}
				}
			}
		}
	}
}
