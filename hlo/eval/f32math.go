package eval

import "math"

// The f32 exp, expm1 and log of the device (lower/mathlib), step for
// step, for f32 and the floats computed through it (f16, bf16, the f8
// types). Folding an op of constants with them gives what the device
// gives for the same op of parameters, so a program's result does not
// depend on which of its inputs were constants. exp, and expm1 beyond
// 1/2, are XLA's CPU backend's (its Cephes-derived expf, whose bits the
// StableHLO suite's expected values are; its multiply-adds, fused
// there, are not here: see mathlib's ma). Their error against float64
// is in docs/ACCURACY.md (1, 2 and 1 ulp).
//
// Products are rounded by explicit conversions: Go may otherwise fuse
// a*b + c into one rounding.

// ma is a*b + c in two roundings, as mathlib's ma.
func ma(a, b, c float32) float32 { return float32(a*b) + c }

// pow2f is 2^e for e in [-126, 127].
func pow2f(e int) float32 { return math.Float32frombits(uint32(e+127) << 23) }

// expReduce32 is mathlib's expReduce: e^x = 2^n (1 + p).
func expReduce32(x float32) (n int, p float32) {
	nf := float32(math.Floor(float64(ma(x, 1.44269504088896341, 0.5))))
	r := ma(nf, -0.693359375, x)
	r = ma(nf, 2.12194440e-4, r)
	q := ma(r, 1.9875691500e-4, 1.3981999507e-3)
	for _, c := range []float32{8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		q = ma(q, r, c)
	}
	return int(nf), ma(q, float32(r*r), r)
}

// expFrom32 is mathlib's expFrom: (1 + p) 2^n, scaled in two steps so
// that a subnormal result rounds once, and the range's edges.
func expFrom32(x float32, n int, p float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283935546875:
		return float32(math.Inf(1))
	case x < -103.972084:
		return 0
	}
	half := n >> 1
	return float32(float32((p+1)*pow2f(half)) * pow2f(n-half))
}

// ExpF32 is the device's f32 e^x.
func ExpF32(x float32) float32 {
	if x != x || x > 89 || x < -104 {
		return expFrom32(x, 0, 0)
	}
	n, p := expReduce32(x)
	return expFrom32(x, n, p)
}

// Expm1F32 is the device's f32 e^x - 1: XLA's e^x - 1 beyond |x| = 1/2,
// 2^n p + (2^n - 1) nearer 0.
func Expm1F32(x float32) float32 {
	switch {
	case x != x || x == 0:
		return x
	case x > 0.5 || x < -0.5:
		return ExpF32(x) - 1
	}
	n, p := expReduce32(x)
	t := pow2f(n)
	return float32(t*p) + (t - 1)
}

// LogF32 is the device's f32 ln x: the exponent split off by bits
// (subnormal x rescaled first), Cephes logf's polynomial by Horner's
// rule in z = m - 1, ln 2 in two parts.
func LogF32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < 0:
		return float32(math.NaN())
	case x == 0:
		return float32(math.Inf(-1))
	case math.IsInf(float64(x), 1):
		return x
	}
	bias := 126
	if x < 0x1p-126 {
		x, bias = float32(x*0x1p23), 126+23
	}
	bits := math.Float32bits(x)
	e := int(bits>>23) - bias
	mant := math.Float32frombits(bits&0x007fffff | 0x3f000000)
	var z float32
	if mant < 0.707106781186547524 {
		e--
		z = (mant + mant) - 1
	} else {
		z = mant - 1
	}
	ef := float32(e)
	zz := float32(z * z)
	y := float32(7.0376836292e-2)
	for _, c := range []float32{-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1} {
		y = float32(y*z) + c
	}
	tail := float32(float32(y*z)*zz) + float32(zz*-0.5)
	r := z + (float32(ef*-2.12194440e-4) + tail)
	return r + float32(ef*0.693359375)
}
