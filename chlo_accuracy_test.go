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
)

// chloCases are CHLO's special functions as the StableHLO reader expands
// them (hlo/chlo), each with a float64 reference, a domain,
// and floor: below it the error is counted in units of floor's ulp
// (where a function crosses zero, as lgamma at 1 and 2, its relative
// error is unbounded for any formula that computes it from differences).
var chloCases = []struct {
	op         string
	ref        func(x float64) float64
	lo, hi     float64
	floor      float64
	bound32    float64 // most ulps allowed in f32
	bound64    float64 // and in f64
	logDomain  bool    // sample |x| log-uniformly, both signs when lo < 0
	skipPoints func(x float64) bool
	edges      [][2]float64 // arguments and the results C99 and XLA define there
}{
	{op: "sinh", edges: [][2]float64{{0, 0}, {math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1)}, {math.NaN(), math.NaN()}}, ref: math.Sinh, lo: -80, hi: 80, logDomain: true, bound32: 24, bound64: 17},
	{op: "cosh", edges: [][2]float64{{0, 1}, {math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(1)}, {math.NaN(), math.NaN()}}, ref: math.Cosh, lo: -80, hi: 80, logDomain: true, bound32: 24, bound64: 17},
	{op: "asin", edges: [][2]float64{{1, math.Pi / 2}, {-1, -math.Pi / 2}, {0, 0}, {1.5, math.NaN()}}, ref: asinRef, lo: -1, hi: 1, bound32: 3, bound64: 3},
	{op: "acos", edges: [][2]float64{{1, 0}, {-1, math.Pi}, {2, math.NaN()}}, ref: acosRef, lo: -1, hi: 1, bound32: 3, bound64: 3},
	{op: "atan", edges: [][2]float64{{math.Inf(1), math.Pi / 2}, {math.Inf(-1), -math.Pi / 2}, {0, 0}}, ref: math.Atan, lo: -1e6, hi: 1e6, logDomain: true, bound32: 3, bound64: 3},
	{op: "asinh", edges: [][2]float64{{math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1)}, {0, 0}, {math.NaN(), math.NaN()}}, ref: math.Asinh, lo: -1e30, hi: 1e30, logDomain: true, bound32: 3, bound64: 3},
	{op: "acosh", edges: [][2]float64{{1, 0}, {math.Inf(1), math.Inf(1)}, {0.5, math.NaN()}, {-1, math.NaN()}, {-3e9, math.NaN()}, {-1e30, math.NaN()}, {math.Inf(-1), math.NaN()}}, ref: math.Acosh, lo: 1, hi: 1e30, logDomain: true, bound32: 3, bound64: 3},
	{op: "atanh", edges: [][2]float64{{1, math.Inf(1)}, {-1, math.Inf(-1)}, {2, math.NaN()}, {0, 0}}, ref: math.Atanh, lo: -1, hi: 1, bound32: 3, bound64: 3},
	{op: "erfc", edges: [][2]float64{{math.Inf(1), 0}, {math.Inf(-1), 2}, {0, 1}, {math.NaN(), math.NaN()}}, ref: math.Erfc, lo: -6, hi: 9, bound32: 12, bound64: 12},
	{op: "erf_inv", edges: [][2]float64{{1, math.Inf(1)}, {-1, math.Inf(-1)}, {0, 0}, {2, math.NaN()}}, ref: erfInvRef, lo: -1, hi: 1, bound32: 8, bound64: 8},
	{op: "lgamma", edges: [][2]float64{{1, 0}, {2, 0}, {math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(1)}, {0, math.Inf(1)}, {-3, math.Inf(1)}}, ref: func(x float64) float64 { v, _ := math.Lgamma(x); return v }, lo: -10, hi: 30, floor: 1, bound32: 40, bound64: 40,
		skipPoints: func(x float64) bool { return x <= 0 && x == math.Floor(x) }},
	{op: "digamma", edges: [][2]float64{{0, math.Inf(-1)}, {-2, math.NaN()}, {math.Inf(1), math.Inf(1)}, {1, -0.5772156649015329}}, ref: digammaRef, lo: -10, hi: 30, floor: 1, bound32: 16, bound64: 16,
		skipPoints: func(x float64) bool { return x <= 0 && x == math.Floor(x) }},
	{op: "bessel_i1e", edges: [][2]float64{{0, 0}, {math.Inf(1), 0}, {math.NaN(), math.NaN()}}, ref: besselI1eRef, lo: -30, hi: 30, bound32: 16, bound64: 16},
}

// TestCHLOAccuracy runs each expansion on the device over its domain in
// f32 and f64 and measures its error against the float64 reference.
func TestCHLOAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	const samples = 1 << 16
	for _, tc := range chloCases {
		for _, ty := range []string{"f32", "f64"} {
			t.Run(tc.op+"_"+ty, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				xs := make([]float64, samples)
				for i := range xs {
					u := rng.Float64()
					if tc.logDomain {
						lo := math.Max(math.Abs(tc.lo), 1e-30)
						if tc.lo < 0 {
							lo = 1e-30
						}
						x := math.Exp(math.Log(lo) + u*(math.Log(tc.hi)-math.Log(lo)))
						if tc.lo < 0 && rng.IntN(2) == 0 {
							x = -x
						}
						xs[i] = x
					} else {
						xs[i] = tc.lo + u*(tc.hi-tc.lo)
					}
					if ty == "f32" {
						xs[i] = float64(float32(xs[i]))
					}
				}
				for _, ed := range tc.edges {
					xs = append(xs, ed[0])
				}
				n := int64(len(xs))
				src := fmt.Sprintf("func.func @main(%%x: tensor<%dx%s>) -> tensor<%dx%s> {\n  %%0 = chlo.%s %%x : tensor<%dx%s> -> tensor<%dx%s>\n  return %%0 : tensor<%dx%s>\n}\n",
					n, ty, n, ty, tc.op, n, ty, n, ty, n, ty)
				exe, err := rt.CompileText(tc.op+".mlir", src, vkjit.CompileOptions{})
				require.NoError(t, err)
				defer exe.Close()
				var arg *vkjit.Tensor
				if ty == "f32" {
					x32 := make([]float32, n)
					for i, x := range xs {
						x32[i] = float32(x)
					}
					arg = must(vkjit.Float32s([]int64{n}, x32))
				} else {
					b := make([]byte, 8*n)
					for i, x := range xs {
						binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
					}
					arg = must(vkjit.NewTensor(vkjit.F64, []int64{n}, b))
				}
				outs, _, err := exe.Run(context.Background(), arg)
				require.NoError(t, err)
				got := make([]float64, n)
				for i := range got {
					if ty == "f32" {
						got[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(outs[0].Data[4*i:])))
					} else {
						got[i] = math.Float64frombits(binary.LittleEndian.Uint64(outs[0].Data[8*i:]))
					}
				}
				worst, at := 0.0, 0
				for i, x := range xs {
					if tc.skipPoints != nil && tc.skipPoints(x) {
						continue
					}
					want := tc.ref(x)
					if i >= len(xs)-len(tc.edges) {
						want = tc.edges[i-(len(xs)-len(tc.edges))][1]
					}
					if ty == "f32" {
						want = float64(float32(want))
					}
					e := chloErr(ty, want, got[i], tc.floor)
					if e > worst {
						worst, at = e, i
					}
				}
				bound := tc.bound32
				if ty == "f64" {
					bound = tc.bound64
				}
				t.Logf("chlo.%s %s: max error %.2f ulp (at x=%.17g: got %.17g, want %.17g)", tc.op, ty, worst, xs[at], got[at], tc.ref(xs[at]))
				require.LessOrEqual(t, worst, bound, "chlo.%s %s", tc.op, ty)
			})
		}
	}
}

// chloErr is |got - want| in ulps of max(|want|, floor) of type ty;
// infinities and NaNs must match exactly.
func chloErr(ty string, want, got, floor float64) float64 {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		if math.IsNaN(want) && math.IsNaN(got) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		if want == got {
			return 0
		}
		return math.Inf(1)
	}
	m := math.Max(math.Abs(want), floor)
	var ulp float64
	if ty == "f32" {
		m32 := float32(m)
		ulp = float64(math.Nextafter32(m32, float32(math.Inf(1))) - m32)
		ulp = math.Max(ulp, 0x1p-149)
	} else {
		ulp = math.Nextafter(m, math.Inf(1)) - m
		ulp = math.Max(ulp, 0x1p-1074)
	}
	return math.Abs(got-want) / ulp
}

// Go's math.Asin and Acos lose digits near ±1 (acos as pi/2 - asin);
// these references do not: atan2 of exactly formed sides.
func asinRef(x float64) float64 { return math.Atan2(x, math.Sqrt((1-x)*(1+x))) }
func acosRef(x float64) float64 { return math.Atan2(math.Sqrt((1-x)*(1+x)), x) }

// erfInvRef is Go's Erfinv refined by a Newton step on erf, through erfc
// where x is near ±1 so that the residual keeps its digits.
func erfInvRef(x float64) float64 {
	y := math.Erfinv(x)
	if math.IsInf(y, 0) || math.IsNaN(y) {
		return y
	}
	var r float64 // erf(y) - x
	switch {
	case x > 0.5:
		r = (1 - x) - math.Erfc(y)
	case x < -0.5:
		r = math.Erfc(-y) - (1 + x)
	default:
		r = math.Erf(y) - x
	}
	return y - r/(2/math.SqrtPi*math.Exp(-y*y))
}

// digammaRef is digamma in float64: the reflection below 1/2 (its
// cotangent taken at x's distance to the nearest integer, exact), the
// recurrence up to 10, then the asymptotic series.
func digammaRef(x float64) float64 {
	if x < 0.5 {
		return digammaRef(1-x) - math.Pi/math.Tan(math.Pi*(x-math.Round(x)))
	}
	r := 0.0
	for ; x < 10; x++ {
		r -= 1 / x
	}
	f := 1 / (x * x)
	s := f * (1.0/12 - f*(1.0/120-f*(1.0/252-f*(1.0/240-f*(1.0/132-f*(691.0/32760-f/12))))))
	return r + math.Log(x) - 0.5/x - s
}

// besselI1eRef is e^-|x| I1(x) by I1's power series (every term
// positive, so no cancellation) up to |x| = 30.
func besselI1eRef(x float64) float64 {
	a := math.Abs(x)
	term, sum := a/2, a/2
	for k := 1; k < 200; k++ {
		term *= (a / 2) * (a / 2) / float64(k*(k+1))
		sum += term
		if term < sum*1e-18 {
			break
		}
	}
	return math.Copysign(sum*math.Exp(-a), x)
}

// TestHLOSpecialFunctions runs HLO's opcodes of CHLO's functions (sinh,
// cosh, asin, acos, asinh, acosh, atanh: XLA's HLO text has them, and
// lower expands them as the StableHLO reader expands CHLO's ops) in
// every type they take, on their domains and special values, against
// the evaluator's float64 functions: within chloCases' bounds in ulps of
// f32 and f64, 1 ulp in the narrower floats (computed in f32 and rounded
// once), and a complex result within a relative 4e-6 (c64, 34 ulp) or
// 1e-14 (c128, 45 ulp) of its modulus on finite values from 1e-170 to
// 1e20 (measured: 5.9e-7 and 1.9e-16, sinh and cosh; the rest 1.1e-7
// and 2.1e-16).
func TestHLOSpecialFunctions(t *testing.T) {
	defer noValidationMessages(t)
	bounds := map[string][2]float64{}
	domains := map[string]int{}
	for i, tc := range chloCases {
		bounds[tc.op] = [2]float64{tc.bound32, tc.bound64}
		domains[tc.op] = i
	}
	for _, op := range []string{"sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh"} {
		tc := chloCases[domains[op]]
		for _, ty := range []hlo.ElementType{hlo.F8E4M3FN, hlo.F8E5M2, hlo.F16, hlo.BF16, hlo.F32, hlo.F64} {
			rng := rand.New(rand.NewPCG(7, 8))
			xs := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, math.Inf(1), math.Inf(-1), math.NaN()}
			for range 256 {
				lo, hi := tc.lo, math.Min(tc.hi, 1e4) // past 1e4 the narrow types overflow
				x := lo + rng.Float64()*(hi-lo)
				if tc.logDomain {
					x = math.Copysign(math.Exp(math.Log(1e-6)+rng.Float64()*(math.Log(hi)-math.Log(1e-6))), x)
				}
				xs = append(xs, hlo.DecodeFloat(ty, hlo.EncodeFloat(ty, x)))
			}
			lit := floatLiteral(ty, xs)
			src := fmt.Sprintf("HloModule %[1]s\nENTRY e {\n  x = %[2]s[%[3]d] parameter(0)\n  ROOT r = %[2]s[%[3]d] %[1]s(x)\n}\n", op, ty, len(xs))
			got, want := deviceAndEval(t, op, src, &vkjit.Tensor{Type: vkjit.DType(ty), Dims: lit.Shape.Dims, Data: lit.Data})
			bound := 1.0
			switch ty {
			case hlo.F32:
				bound = bounds[op][0]
			case hlo.F64:
				bound = bounds[op][1]
			}
			for i, x := range xs {
				g := decodeAt(ty, got[0].Data, i)
				w := decodeAt(ty, want.Lit.Data, i)
				require.LessOrEqual(t, ulpsOf(ty, w, g), bound, "%s %s(%g): device %g, evaluator %g", op, ty, x, g, w)
			}
		}
		for _, ty := range []string{"c64", "c128"} {
			// (A part whose square is subnormal: 1e-20 in c64, 1e-170 in c128.)
			parts := []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1, -1, 2.5, -2.5, 1e-20, -1e-20, 1e-170, -1e-170, 30, -30}
			if op != "sinh" && op != "cosh" { // whose large arguments overflow
				parts = append(parts, 1e20, -1e20)
			}
			var zs []complex128
			for _, a := range parts {
				for _, b := range parts {
					zs = append(zs, complex(a, b))
				}
			}
			src := fmt.Sprintf("HloModule %[1]s\nENTRY e {\n  x = %[2]s[%[3]d] parameter(0)\n  ROOT r = %[2]s[%[3]d] %[1]s(x)\n}\n", op, ty, len(zs))
			got, want := deviceAndEval(t, op, src, complexTensor(ty, zs))
			w := &vkjit.Tensor{Type: got[0].Type, Dims: want.Lit.Shape.Dims, Data: want.Lit.Data}
			tol := map[string]float64{"c64": 4e-6, "c128": 1e-14}[ty]
			for i, z := range zs {
				g, e := complexAt(got[0], i), complexAt(w, i)
				same := cmplx.Abs(g-e) <= tol*cmplx.Abs(e)
				if cmplx.IsInf(e) || cmplx.IsNaN(e) { // at the poles: the same parts
					same = sameFloat(real(g), real(e)) && sameFloat(imag(g), imag(e))
				}
				require.True(t, same, "%s %s(%v): device %v, evaluator %v", op, ty, z, g, e)
			}
		}
	}
}

// sameFloat: a == b, or both NaN.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// floatLiteral is xs as a rank-1 literal of float type ty.
func floatLiteral(ty hlo.ElementType, xs []float64) *hlo.Literal {
	n, w := len(xs), ty.Bytes()
	data := make([]byte, n*w)
	b := make([]byte, 8)
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(ty, x))
		copy(data[i*w:], b[:w])
	}
	return &hlo.Literal{Shape: hlo.ArrayShape(ty, int64(n)), Data: data}
}

// decodeAt is element i of data, an array of float type ty.
func decodeAt(ty hlo.ElementType, data []byte, i int) float64 {
	b := make([]byte, 8)
	w := ty.Bytes()
	copy(b, data[i*w:(i+1)*w])
	return hlo.DecodeFloat(ty, binary.LittleEndian.Uint64(b))
}

// ulpsOf is |got - want| in units of the spacing of type ty's values at
// |want| (NaNs and infinities must match exactly).
func ulpsOf(ty hlo.ElementType, want, got float64) float64 {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		if math.IsNaN(want) && math.IsNaN(got) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(want, 0) || math.IsInf(got, 0) || want == got:
		if want == got {
			return 0
		}
		return math.Inf(1)
	}
	m := math.Abs(want)
	code := hlo.EncodeFloat(ty, m)
	ulp := hlo.DecodeFloat(ty, code+1) - m
	if math.IsNaN(ulp) || math.IsInf(ulp, 0) { // the largest finite value
		ulp = m - hlo.DecodeFloat(ty, code-1)
	}
	return math.Abs(got-want) / ulp
}
