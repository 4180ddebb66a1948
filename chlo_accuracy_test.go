package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// chloCases are CHLO's special functions as the StableHLO reader expands
// them (hlo/stablehlo/chlo.go), each with a float64 reference, a domain,
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
	{op: "acosh", edges: [][2]float64{{1, 0}, {math.Inf(1), math.Inf(1)}, {0.5, math.NaN()}}, ref: math.Acosh, lo: 1, hi: 1e30, logDomain: true, bound32: 3, bound64: 3},
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
