package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// complexCases are the ops lower/complex.go rewrites into real
// arithmetic, each with a complex128 reference (Go's math/cmplx, an
// implementation of its own), the range of the real and imaginary parts
// sampled (log-uniform magnitudes, both signs), and the most error
// allowed, in ulps of the part type relative to |reference|.
var complexCases = []struct {
	op         string
	binary     bool
	ref        func(x, y complex128) complex128
	reLo, reHi float64 // magnitudes of the real part
	imLo, imHi float64 // and of the imaginary part
	bound      float64
	realResult bool
	skip       func(x, y complex128) bool
}{
	{op: "add", binary: true, ref: func(x, y complex128) complex128 { return x + y }, reLo: 1e-3, reHi: 1e3, imLo: 1e-3, imHi: 1e3, bound: 1,
		skip: func(x, y complex128) bool { return cmplx.Abs(x+y) < 1e-3*cmplx.Abs(x) }},
	{op: "multiply", binary: true, ref: func(x, y complex128) complex128 { return x * y }, reLo: 1e-3, reHi: 1e3, imLo: 1e-3, imHi: 1e3, bound: 4,
		skip: func(x, y complex128) bool { return cmplx.Abs(x*y) < 1e-3*cmplx.Abs(x)*cmplx.Abs(y) }},
	{op: "divide", binary: true, ref: func(x, y complex128) complex128 { return x / y }, reLo: 1e-3, reHi: 1e3, imLo: 1e-3, imHi: 1e3, bound: 6},
	{op: "abs", ref: func(x, _ complex128) complex128 { return complex(cmplx.Abs(x), 0) }, reLo: 1e-30, reHi: 1e30, imLo: 1e-30, imHi: 1e30, bound: 2, realResult: true},
	{op: "sign", ref: func(x, _ complex128) complex128 { return x / complex(cmplx.Abs(x), 0) }, reLo: 1e-30, reHi: 1e30, imLo: 1e-30, imHi: 1e30, bound: 4},
	{op: "sqrt", ref: func(x, _ complex128) complex128 { return cmplx.Sqrt(x) }, reLo: 1e-30, reHi: 1e30, imLo: 1e-30, imHi: 1e30, bound: 4},
	{op: "rsqrt", ref: func(x, _ complex128) complex128 { return 1 / cmplx.Sqrt(x) }, reLo: 1e-10, reHi: 1e10, imLo: 1e-10, imHi: 1e10, bound: 8},
	{op: "exponential", ref: func(x, _ complex128) complex128 { return cmplx.Exp(x) }, reLo: 1e-3, reHi: 60, imLo: 1e-3, imHi: 100, bound: 8},
	{op: "exponential-minus-one", ref: func(x, _ complex128) complex128 { return expm1Ref(x) }, reLo: 1e-6, reHi: 30, imLo: 1e-6, imHi: 10, bound: 16},
	{op: "log", ref: func(x, _ complex128) complex128 { return cmplx.Log(x) }, reLo: 1e-20, reHi: 1e20, imLo: 1e-20, imHi: 1e20, bound: 8,
		skip: func(x, _ complex128) bool { return math.Abs(cmplx.Abs(x)-1) < 0.1 }},
	{op: "log-plus-one", ref: func(x, _ complex128) complex128 { return log1pRef(x) }, reLo: 1e-6, reHi: 1e6, imLo: 1e-6, imHi: 1e6, bound: 16,
		skip: func(x, _ complex128) bool { return math.Abs(cmplx.Abs(1+x)-1) < 0.1 && cmplx.Abs(x) > 0.5 }},
	{op: "sine", ref: func(x, _ complex128) complex128 { return cmplx.Sin(x) }, reLo: 1e-3, reHi: 100, imLo: 1e-3, imHi: 20, bound: 16},
	{op: "cosine", ref: func(x, _ complex128) complex128 { return cmplx.Cos(x) }, reLo: 1e-3, reHi: 100, imLo: 1e-3, imHi: 20, bound: 16},
	{op: "tan", ref: func(x, _ complex128) complex128 { return cmplx.Tan(x) }, reLo: 1e-3, reHi: 10, imLo: 1e-3, imHi: 20, bound: 32},
	{op: "tanh", ref: func(x, _ complex128) complex128 { return -1i * cmplx.Tan(1i*x) }, reLo: 1e-3, reHi: 20, imLo: 1e-3, imHi: 10, bound: 32},
	{op: "power", binary: true, ref: func(x, y complex128) complex128 { return cmplx.Pow(x, y) }, reLo: 0.1, reHi: 10, imLo: 0.1, imHi: 10, bound: 64},
	{op: "cbrt", ref: func(x, _ complex128) complex128 { r, t := cmplx.Polar(x); return cmplx.Rect(math.Cbrt(r), t/3) }, reLo: 1e-10, reHi: 1e10, imLo: 1e-10, imHi: 1e10, bound: 8},
}

func expm1Ref(x complex128) complex128 {
	re, im := real(x), imag(x)
	s := math.Sin(im / 2)
	return complex(math.Expm1(re)*math.Cos(im)-2*s*s, math.Exp(re)*math.Sin(im))
}

func log1pRef(x complex128) complex128 {
	re, im := real(x), imag(x)
	if math.Abs(re) < 0.5 && math.Abs(im) < 0.5 {
		return complex(0.5*math.Log1p(re*(re+2)+im*im), math.Atan2(im, re+1))
	}
	return cmplx.Log(1 + x)
}

// TestComplexAccuracy runs each complex op on the device in c64 and c128
// and measures its error against the complex128 reference, relative to
// the reference's magnitude, in ulps of the part type (docs/ACCURACY.md).
// c128's reference has c128's own precision, so its bounds also cover
// math/cmplx's few ulps.
func TestComplexAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	const samples = 1 << 12
	for _, tc := range complexCases {
		for _, ty := range []string{"c64", "c128"} {
			t.Run(tc.op+"_"+ty, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, 6))
				mag := func(lo, hi float64) float64 {
					v := math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
					if rng.IntN(2) == 0 {
						return -v
					}
					return v
				}
				eps := math.Ldexp(1, -23)
				if ty == "c128" {
					eps = math.Ldexp(1, -52)
				}
				round := func(v float64) float64 {
					if ty == "c64" {
						return float64(float32(v))
					}
					return v
				}
				xs, ys := make([]complex128, samples), make([]complex128, samples)
				for i := range xs {
					xs[i] = complex(round(mag(tc.reLo, tc.reHi)), round(mag(tc.imLo, tc.imHi)))
					ys[i] = complex(round(mag(tc.reLo, tc.reHi)), round(mag(tc.imLo, tc.imHi)))
				}
				src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(x)\n}", ty, samples, ty, samples, tc.op)
				args := []*vkjit.Tensor{complexTensor(ty, xs)}
				out := ty
				if tc.realResult {
					out = map[string]string{"c64": "f32", "c128": "f64"}[ty]
				}
				if tc.binary {
					src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  y = %s[%d] parameter(1)\n  ROOT r = %s[%d] %s(x, y)\n}", ty, samples, ty, samples, out, samples, tc.op)
					args = append(args, complexTensor(ty, ys))
				} else {
					src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(x)\n}", ty, samples, out, samples, tc.op)
				}
				exe, err := rt.CompileText(tc.op, src, vkjit.CompileOptions{})
				require.NoError(t, err)
				defer exe.Close()
				res, _, err := exe.Run(context.Background(), args...)
				require.NoError(t, err)
				worst, at := 0.0, 0
				for i := range xs {
					if tc.skip != nil && tc.skip(xs[i], ys[i]) {
						continue
					}
					want := tc.ref(xs[i], ys[i])
					var got complex128
					if tc.realResult {
						got = complex(res[0].Float64At(int64(i)), 0)
					} else {
						got = complexAt(res[0], i)
					}
					if cmplx.IsInf(want) || cmplx.IsNaN(want) || cmplx.Abs(want) > math.MaxFloat32/4 && ty == "c64" {
						continue
					}
					e := cmplx.Abs(got-want) / math.Max(cmplx.Abs(want), math.SmallestNonzeroFloat64) / eps
					if math.IsNaN(e) || e > worst {
						worst, at = e, i
						if math.IsNaN(e) {
							worst = math.Inf(1)
						}
					}
				}
				t.Logf("%s %s: max error %.2f ulp at %v", tc.op, ty, worst, xs[at])
				if worst > tc.bound {
					got := complex(res[0].Float64At(int64(at)), 0)
					if !tc.realResult {
						got = complexAt(res[0], at)
					}
					t.Errorf("%s(%v, %v) = %v, want %v: %.2f ulp, bound %g", tc.op, xs[at], ys[at], got, tc.ref(xs[at], ys[at]), worst, tc.bound)
				}
			})
		}
	}
}

// TestComplexEdges: XLA's (and C99's) values where the formulas meet
// zeros, infinities and NaN.
func TestComplexEdges(t *testing.T) {
	defer noValidationMessages(t)
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		op   string
		x, y complex128
		want complex128
	}{
		{"divide", complex(1, 1), 0, complex(inf, inf)},
		{"divide", complex(inf, 0), complex(1, 1), complex(inf, -inf)},
		{"divide", complex(1, 1), complex(inf, 0), 0},
		{"divide", complex(1e30, 1e30), complex(1e30, 1e30), 1},
		{"abs", complex(2e38, 2e38), 0, complex(2.8284271247461903e38, 0)},
		{"abs", complex(inf, nan), 0, complex(inf, 0)},
		{"sqrt", complex(-4, 0), 0, complex(0, 2)},
		{"sqrt", complex(-4, math.Copysign(0, -1)), 0, complex(0, -2)},
		{"sqrt", complex(0, 0), 0, 0},
		{"sqrt", complex(1, inf), 0, complex(inf, inf)},
		{"sqrt", complex(-inf, 1), 0, complex(0, inf)},
		{"exponential", complex(inf, 0), 0, complex(inf, 0)},
		{"exponential", complex(-inf, 1), 0, 0},
		{"log", 0, 0, complex(-inf, 0)},
		{"log", complex(-1, 0), 0, complex(0, math.Pi)},
		{"tanh", complex(100, 1), 0, complex(1, 0)},
		{"tan", complex(1, 100), 0, complex(0, 1)},
		// XLA's corner cases of tanh (elemental_ir_emitter), tan being
		// -i tanh(iz): an infinite imaginary part wins over any real one,
		// a zero real part stays +0 beside a NaN.
		{"tan", complex(-inf, inf), 0, complex(0, 1)},
		{"tan", complex(nan, -inf), 0, complex(0, -1)},
		{"tan", complex(math.Copysign(0, -1), nan), 0, complex(0, nan)},
		{"tan", complex(inf, 2), 0, complex(nan, nan)},
		{"tanh", complex(inf, inf), 0, complex(1, 0)},
		{"tanh", complex(-inf, nan), 0, complex(-1, 0)},
		{"tanh", complex(nan, math.Copysign(0, -1)), 0, complex(nan, 0)},
		{"tanh", complex(2, inf), 0, complex(nan, nan)},
		{"power", 0, 0, 1},
		{"power", 0, complex(2, 0), 0},
	} {
		ty := "c64"
		out := ty
		if tc.op == "abs" {
			out = "f32"
		}
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = c64[1] parameter(0)\n  ROOT r = %s[1] %s(x)\n}", out, tc.op)
		args := []*vkjit.Tensor{complexTensor(ty, []complex128{tc.x})}
		if tc.op == "divide" || tc.op == "power" {
			src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = c64[1] parameter(0)\n  y = c64[1] parameter(1)\n  ROOT r = c64[1] %s(x, y)\n}", tc.op)
			args = append(args, complexTensor(ty, []complex128{tc.y}))
		}
		exe, err := rt.CompileText(tc.op, src, vkjit.CompileOptions{})
		require.NoError(t, err)
		res, _, err := exe.Run(context.Background(), args...)
		require.NoError(t, err)
		exe.Close()
		var got complex128
		if out == "f32" {
			got = complex(res[0].Float64At(0), 0)
		} else {
			got = complexAt(res[0], 0)
		}
		same := func(a, b float64) bool {
			return a == b && math.Signbit(a) == math.Signbit(b) || math.IsNaN(a) && math.IsNaN(b) ||
				a != 0 && b != 0 && math.Abs(a-b) <= 1e-6*math.Abs(b)
		}
		require.True(t, same(real(got), real(tc.want)) && same(imag(got), imag(tc.want)),
			"%s(%v, %v) = %v, want %v", tc.op, tc.x, tc.y, got, tc.want)
	}
}

// complexTensor is a vector of complex values of type ty (c64, c128).
func complexTensor(ty string, v []complex128) *vkjit.Tensor {
	return tensorOf(ty, []int64{int64(len(v))}, v)
}

func complexAt(x *vkjit.Tensor, i int) complex128 {
	if x.Type == vkjit.C128 {
		return complex(math.Float64frombits(binary.LittleEndian.Uint64(x.Data[16*i:])), math.Float64frombits(binary.LittleEndian.Uint64(x.Data[16*i+8:])))
	}
	return complex(float64(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[8*i:]))), float64(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[8*i+4:]))))
}

// TestComplexSpecialValues: on every pair of parts from zeros of both
// signs, finite values, infinities and NaN, the device's complex
// functions agree with the evaluator's (both following XLA's elemental
// emitter or, for sinh to atanh, its expansions, with their corner cases)
// on which parts are NaN, which infinite
// and with what sign, and on the finite values, in c64 and c128.
func TestComplexSpecialValues(t *testing.T) {
	defer noValidationMessages(t)
	inf, nan := math.Inf(1), math.NaN()
	parts := []float64{0, math.Copysign(0, -1), -1, 2.5, inf, -inf, nan}
	var zs []complex128
	for _, a := range parts {
		for _, b := range parts {
			zs = append(zs, complex(a, b))
		}
	}
	// Binary ops take every pair of those.
	var xs, ys []complex128
	for _, x := range zs {
		for _, y := range zs {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	unary := []string{"exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt",
		"sine", "cosine", "tan", "tanh", "logistic", "sign", "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh"}
	for _, ty := range []string{"c64", "c128"} {
		for _, op := range append(unary, "multiply", "divide", "power", "atan2", "maximum", "minimum") {
			checkSpecialValues(t, ty, op, slices.Contains(unary, op), zs, xs, ys)
		}
	}
}

// checkSpecialValues runs op of type ty on the device and in the
// evaluator: on zs, or on the pairs xs, ys.
func checkSpecialValues(t *testing.T, ty, op string, unary bool, zs, xs, ys []complex128) {
	args := []*vkjit.Tensor{complexTensor(ty, zs)}
	src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  ROOT r = %[1]s[%[2]d] %[3]s(x)\n}", ty, len(zs), op)
	if !unary {
		args = []*vkjit.Tensor{complexTensor(ty, xs), complexTensor(ty, ys)}
		src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  y = %[1]s[%[2]d] parameter(1)\n  ROOT r = %[1]s[%[2]d] %[3]s(x, y)\n}", ty, len(xs), op)
	}
	m, err := hlo.Parse(op, src)
	require.NoError(t, err)
	lits := make([]*hlo.Literal, len(args))
	for i, a := range args {
		lits[i] = &hlo.Literal{Shape: hlo.ArrayShape(hlo.ElementType(a.Type), a.Dims...), Data: a.Data}
	}
	want, err := eval.Run(m, lits...)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	got, _, err := exe.Run(context.Background(), args...)
	require.NoError(t, err)
	exe.Close()
	w := &vkjit.Tensor{Type: got[0].Type, Dims: want.Lit.Shape.Dims, Data: want.Lit.Data}
	tol := map[string]float64{"c64": 1e-5, "c128": 1e-9}[ty]
	for i := range int(args[0].Dims[0]) {
		g, e := complexAt(got[0], i), complexAt(w, i)
		// Finite parts within tol of the modulus: a part that cancels
		// is as far off as the number's rounding.
		same := func(a, b float64) bool {
			if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
				return a == b || math.IsNaN(a) && math.IsNaN(b)
			}
			scale := cmplx.Abs(e)
			if math.IsNaN(scale) || math.IsInf(scale, 0) {
				scale = math.Abs(a)
			}
			return math.Abs(a-b) <= tol*max(1, scale)
		}
		in := fmt.Sprint(complexAt(args[0], i))
		if len(args) == 2 {
			in += fmt.Sprint(", ", complexAt(args[1], i))
		}
		require.True(t, same(real(g), real(e)) && same(imag(g), imag(e)), "%s %s(%s): device %v, evaluator %v", ty, op, in, g, e)
	}
}

// TestComplexDotOfRealOperand: a real operand of a complex dot is the
// complex (x, 0), as XLA upcasts mixed operands (the rewrite took the
// parts of the pred operand itself: an internal error).
func TestComplexDotOfRealOperand(t *testing.T) {
	m, err := hlo.Parse("d", `HloModule d
ENTRY e {
  a = c64[3] parameter(0)
  b = pred[3,2] parameter(1)
  ROOT r = c64[2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`)
	require.NoError(t, err)
	a := complexTensor("c64", []complex128{1 + 2i, -3 + 0.5i, 4 - 1i})
	b := &vkjit.Tensor{Type: vkjit.PRED, Dims: []int64{3, 2}, Data: []byte{1, 0, 1, 1, 0, 1}}
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	got, _, err := exe.Run(context.Background(), a, b)
	require.NoError(t, err)
	require.Equal(t, []complex128{-2 + 2.5i, 1 - 0.5i}, []complex128{complexAt(got[0], 0), complexAt(got[0], 1)})
}

// TestComplexPowRange: x^y where |x|^c leaves f32's range but |x|^c
// e^(-d arg x), the value's magnitude, does not (y = c + di): the
// magnitude within 1e-5 of the float64 value's, where the product of
// the two factors was +inf (or inf times 0, NaN: FuzzPrograms seed
// 1753). The angle's rounding moves the parts more than the magnitude.
func TestComplexPowRange(t *testing.T) {
	for _, tc := range []struct{ x, y complex128 }{
		{complex(3e20, 4e20), complex(2, 10)},    // |x|^2 = 2.5e41 times e^(-10 arg) = 9.4e-5
		{complex(3, 4), complex(56, 5)},          // 5^56 = 1.4e39 times e^(-5 arg) = 0.0097
		{complex(3e-20, 4e-20), complex(-2, 10)}, // 4e38 times 9.4e-5
		{complex(0.3, 0.4), complex(150, -30)},   // 0.5^150 = 7e-46, below the subnormals, times e^(30 arg) = 1.2e12
	} {
		src := "HloModule m\nENTRY e {\n  x = c64[1] parameter(0)\n  y = c64[1] parameter(1)\n  ROOT r = c64[1] power(x, y)\n}"
		exe, err := rt.CompileText("power", src, vkjit.CompileOptions{})
		require.NoError(t, err)
		res, _, err := exe.Run(context.Background(), complexTensor("c64", []complex128{tc.x}), complexTensor("c64", []complex128{tc.y}))
		require.NoError(t, err)
		exe.Close()
		x32 := complex(float64(float32(real(tc.x))), float64(float32(imag(tc.x))))
		want := cmplx.Abs(cmplx.Pow(x32, tc.y))
		got := complexAt(res[0], 0)
		require.False(t, cmplx.IsInf(got) || cmplx.IsNaN(got), "%v^%v = %v, want magnitude %g", tc.x, tc.y, got, want)
		require.InDelta(t, 1, cmplx.Abs(got)/want, 1e-5, "%v^%v = %v, want magnitude %g", tc.x, tc.y, got, want)
	}
}

// TestComplexStructuredOps: the ops that are not elementwise on complex
// values built in the kernel from real small-integer parts (so every sum
// and product is exact, and the order of a reduction cannot show): row
// and column sums, a product sum of c64 and c128, reduce-windows, a
// cumulative sum, a stable sort by the real part, scatter-add with
// repeated indices, gather, and data movement, exact against the
// evaluator fused and unfused.
func TestComplexStructuredOps(t *testing.T) {
	defer noValidationMessages(t)
	text := `HloModule structured
add {
  a = $C[] parameter(0)
  b = $C[] parameter(1)
  ROOT s = $C[] add(a, b)
}
lt {
  a = $C[] parameter(0)
  b = $C[] parameter(1)
  ra = $R[] real(a)
  rb = $R[] real(b)
  ROOT c = pred[] compare(ra, rb), direction=LT
}
ENTRY e {
  a = $R[8,16] parameter(0)
  b = $R[8,16] parameter(1)
  c = $R[8,16] parameter(2)
  x = $C[8,16] complex(a, b)
  y = $C[8,16] complex(c, a)
  k = $R[8,16] iota(), iota_dimension=1
  zr = $R[] constant(0)
  z0 = $R[8,16] broadcast(zr), dimensions={}
  kc = $C[8,16] complex(k, z0)
  s = $C[8,16] multiply(x, kc)
  z = $C[] constant((0, 0))
  rsum = $C[8] reduce(s, z), dimensions={1}, to_apply=add
  csum = $C[16] reduce(s, z), dimensions={0}, to_apply=add
  d = $C[8,8] dot(s, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  wsum = $C[8,16] reduce-window(s, z), window={size=3x3 pad=1_1x1_1}, to_apply=add
  cum = $C[8,16] reduce-window(s, z), window={size=1x16 pad=0_0x15_0}, to_apply=add
  srt = $C[8,16] sort(s), dimensions={1}, is_stable=true, to_apply=lt
` + strings.NewReplacer("$T", "$C", "$SC", "add", "$PAD", "z").Replace(structuredTail) + `  ROOT out = ($C[8], $C[16], $C[8,8], $C[8,16], $C[8,16], $C[8,16], ` + strings.ReplaceAll(structuredTailOuts[0], "$T", "$C") + `) tuple(rsum, csum, d, wsum, cum, srt, ` + structuredTailOuts[1] + `)
}`
	for _, ty := range [][2]string{{"c64", "f32"}, {"c128", "f64"}} {
		t.Run(ty[0], func(t *testing.T) {
			requireExact(t, "structured_"+ty[0], strings.NewReplacer("$C", ty[0], "$R", ty[1]).Replace(text), smallInts(7))
		})
	}
}
