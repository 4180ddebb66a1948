package eval

import "math"

// The f32 exp, expm1, log, log1p, tanh, logistic, sine, cosine,
// tangent, erf, cube root, power and atan2 of the device
// (lower/mathlib), step for step, for f32 and the floats computed
// through it (f16, bf16, the f8 types). Folding an op of constants with them gives what the device
// gives for the same op of parameters, so a program's result does not
// depend on which of its inputs were constants. exp, and expm1 beyond
// 1/2, are XLA's CPU backend's (its Cephes-derived expf, whose bits the
// StableHLO suite's expected values are; its multiply-adds, fused there,
// are not here: see mathlib's ma). Their error against float64 is in
// docs/ACCURACY.md.
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

// expFrom32 is mathlib's expFrom: (1 + p) 2^n.
func expFrom32(x float32, n int, p float32) float32 { return expScaled32(x, n, p+1) }

// expScaled32 is y 2^n, scaled in two steps so that a subnormal result
// rounds once, and the range's edges of e^x (mathlib's scale and its
// selects).
func expScaled32(x float32, n int, y float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283935546875:
		return float32(math.Inf(1))
	case x < -103.972084:
		return 0
	}
	half := n >> 1
	return float32(float32(y*pow2f(half)) * pow2f(n-half))
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

// Log1pF32 is the device's f32 ln(1 + x): ln of u = fl(1 + x), plus
// (x - (u - 1))/u for the low bits of x that u lost.
func Log1pF32(x float32) float32 {
	switch {
	case x != x || math.IsInf(float64(x), 1):
		return x
	case x == -1:
		return float32(math.Inf(-1))
	case x < -1:
		return float32(math.NaN())
	}
	u := 1 + x
	if u == 1 {
		return x // keeps -0
	}
	var corr float32
	if x < 0x1p24 && x > -0x1p24 {
		corr = (x - (u - 1)) / u
	}
	return LogF32(u) + corr
}

// TanhF32 is the device's f32 tanh: t/(t + 2) with t = e^(2|x|) - 1 =
// 2^n p + (2^n - 1), |x| clamped to 9.02, x's sign.
func TanhF32(x float32) float32 {
	if x != x {
		return x
	}
	ax := float32(math.Abs(float64(x)))
	if ax > 9.02 {
		ax = 9.02
	}
	n, p := expReduce32(ax + ax)
	s := pow2f(n)
	t := float32(s*p) + (s - 1)
	return float32(math.Copysign(float64(t/(t+2)), float64(x)))
}

// LogisticF32 is the device's f32 logistic: from e = e^-|x|, 1/(1 + e)
// for x >= 0 and e/(1 + e) below.
func LogisticF32(x float32) float32 {
	e := ExpF32(-float32(math.Abs(float64(x))))
	n := float32(1)
	if x < 0 {
		n = e
	}
	return n / (1 + e)
}

// twoOverPi32 is mathlib's twoOverPi: the bits of 2/pi after the binary
// point, 32 to a word.
var twoOverPi32 = [7]uint32{0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB}

// twoSum32 and twoProd32 are mathlib's error-free sum and product.
func twoSum32(a, b float32) (s, e float32) {
	s = a + b
	bv := s - a
	av := s - bv
	return s, (a - av) + (b - bv)
}

func split32(a float32) (hi, lo float32) {
	t := float32(a * 4097)
	hi = t - (t - a)
	return hi, a - hi
}

func twoProd32(a, b float32) (p, e float32) {
	p = float32(a * b)
	ah, al := split32(a)
	bh, bl := split32(b)
	e = float32(ah*bh) - p
	e += float32(ah * bl)
	e += float32(al * bh)
	e += float32(al * bl)
	return p, e
}

// trigReduce32 is mathlib's trigReduce: |x| = q pi/2 + r (mod 2 pi),
// r in [-pi/4, pi/4], by Payne and Hanek's reduction in integers beyond
// pi/4.
func trigReduce32(ax float32) (r float32, q uint32) {
	if ax < math.Pi/4 {
		return ax, 0
	}
	bits := math.Float32bits(ax)
	e := int32(bits>>23) - 150
	mant := bits&0x7fffff | 0x800000
	var p [8]uint32
	carry := uint32(0)
	for i := len(twoOverPi32) - 1; i >= 0; i-- {
		prod := uint64(mant) * uint64(twoOverPi32[i])
		sum := uint32(prod) + carry
		wrapped := uint32(0)
		if sum < carry {
			wrapped = 1
		}
		p[i+1] = sum
		carry = uint32(prod>>32) + wrapped
	}
	p[0] = carry
	j0 := min(max((e+30)>>5, 0), 4)
	sh := uint32(e + 30 - j0<<5)
	sh = min(sh, 31) // an unsigned clamp, as mathlib's
	funnel := func(x, y uint32) uint32 { return x<<sh | y>>1>>(31-sh) }
	hiW, loW := funnel(p[j0], p[j0+1]), funnel(p[j0+1], p[j0+2])
	q = (hiW>>30 + hiW>>29&1) & 3
	fh := hiW<<2 | loW>>30
	fl := loW << 2
	fa := float32(int32(fh)>>8) * 0x1p-24
	fb := float32(fh<<24|fl>>8) * 0x1p-56
	hi, lo := twoSum32(fa, fb)
	rh, re := twoProd32(hi, piHalf1)
	return rh + (re + (float32(hi*float32(piHalf2)) + float32(lo*piHalf1))), q
}

// pi/2 in two parts, as mathlib's trigReduce takes it (the tail a
// float64 rounded to f32 where it is used).
const piHalf1 = float32(math.Pi / 2)

var piHalf2 = math.Pi/2 - float64(piHalf1)

// poly32 is mathlib's poly (Horner's rule, two roundings a step).
func poly32(x float32, cs ...float32) float32 {
	y := cs[0]
	for _, c := range cs[1:] {
		y = float32(y*x) + c
	}
	return y
}

// SinCosF32 is the device's f32 sine (cos false) or cosine: Cephes's
// polynomials on the reduced argument, the quadrant's sign.
func SinCosF32(x float32, cos bool) float32 {
	if x != x || math.IsInf(float64(x), 0) {
		return float32(math.NaN())
	}
	r, q := trigReduce32(float32(math.Abs(float64(x))))
	z := float32(r * r)
	s := float32(float32(poly32(z, -1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)*z)*r) + r
	cy := float32(float32(poly32(z, 2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)*z) * z)
	c := (cy - float32(z*0.5)) + 1
	if cos {
		q++
	}
	y := s
	if q&1 != 0 {
		y = c
	}
	sign := (q & 2) << 30
	if !cos {
		sign ^= math.Float32bits(x) & 0x80000000
	}
	return math.Float32frombits(math.Float32bits(y) ^ sign)
}

// TanF32 is the device's f32 tangent: Cephes tanf's polynomial on the
// reduced argument, -1/tan r in odd quadrants.
func TanF32(x float32) float32 {
	if x != x || math.IsInf(float64(x), 0) {
		return float32(math.NaN())
	}
	r, q := trigReduce32(float32(math.Abs(float64(x))))
	z := float32(r * r)
	y := float32(float32(poly32(z, 9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2, 1.33387994085e-1, 3.33331568548e-1)*z)*r) + r
	if q&1 != 0 {
		y = -1 / y
	}
	return math.Float32frombits(math.Float32bits(y) ^ math.Float32bits(x)&0x80000000)
}

// ErfF32 is the device's f32 erf: Cephes erff below |x| = 1, 1 - erfc
// above with erfc = e^(-x^2) R(1/x^2)/x, +-1 beyond 4.
func ErfF32(x float32) float32 {
	if x != x {
		return x
	}
	sign := math.Float32bits(x) & 0x80000000
	ax := math.Float32frombits(math.Float32bits(x) &^ 0x80000000)
	z := float32(x * x)
	switch {
	case ax < 1:
		return float32(x * poly32(z, 7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3, -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1, 1.128379165726710))
	case ax > 4:
		return math.Float32frombits(math.Float32bits(1) ^ sign)
	}
	q := 1 / ax
	w := float32(q * q)
	var p float32
	if ax < 2 {
		p = poly32(w, 2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1, -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1, 3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)
	} else {
		p = poly32(w, -1.047766399936249e1, 1.297719955372516e1, -7.495518717768503, 2.921019019210786, -1.015265279202700, 4.218463358204948e-1, -2.820767439740514e-1, 5.641895067754075e-1)
	}
	erfc := float32(float32(ExpF32(-z)*q) * p)
	return math.Float32frombits(math.Float32bits(1-erfc) ^ sign)
}

// CbrtF32 is the device's f32 cube root: a first guess from the bits
// (x below 2^-78 scaled by 2^72 first), three Newton steps, and a last
// one with the residual x - r^3 in two floats.
func CbrtF32(x float32) float32 {
	sign := math.Float32bits(x) & 0x80000000
	ax := math.Float32frombits(math.Float32bits(x) &^ 0x80000000)
	switch {
	case x != x:
		return x
	case ax == 0 || math.IsInf(float64(ax), 0):
		return x
	}
	sub := ax < 0x1p-78
	xs := ax
	if sub {
		xs = float32(ax * 0x1p72)
	}
	r := math.Float32frombits(math.Float32bits(xs)/3 + 709958130)
	const third = float32(1.0 / 3)
	for range 3 {
		r += float32((xs/float32(r*r) - r) * third)
	}
	r2, r2e := twoProd32(r, r)
	r3, r3e := twoProd32(r2, r)
	res := ((xs - r3) - r3e) - float32(r2e*r)
	r += res / float32(3*r2)
	if sub {
		r = float32(r * 0x1p-24)
	}
	return math.Float32frombits(math.Float32bits(r) ^ sign)
}

// atanRatio32 and atan01_32 are mathlib's atanRatio and atan01: the
// smaller of |y|, |x| over the larger (0 for two zeros or a finite over
// an infinity, 1 for two infinities), whether |y| was the larger, and
// Cephes atanf's reduction and polynomial on [0, 1].
func atanRatio32(y, x float32) (a float32, swap bool) {
	ay, ax := abs32(y), abs32(x)
	swap = ay > ax
	num, den := ay, ax
	if swap {
		num, den = ax, ay
	}
	a = num / den
	infX, infY := math.IsInf(float64(ax), 0), math.IsInf(float64(ay), 0)
	switch {
	case math.IsInf(float64(den), 0) && !math.IsInf(float64(num), 0):
		a = 0
	case infX && infY:
		a = 1
	case den == 0:
		a = 0
	}
	return a, swap
}

func atan01_32(a float32) float32 {
	mid := a > float32(0.4142135623730950)
	t := a
	if mid {
		t = (a - 1) / (a + 1)
	}
	z := float32(t * t)
	y := float32(float32(poly32(z, 8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)*z)*t) + t
	if mid {
		y += float32(math.Pi / 4)
	}
	return y
}

// Atan2F32 is the device's f32 atan2 (C's for every sign, zero,
// infinity and NaN): the first octant's angle moved into place.
func Atan2F32(y, x float32) float32 {
	if x != x || y != y {
		return float32(math.NaN())
	}
	a, swap := atanRatio32(y, x)
	r := atan01_32(a)
	if swap {
		r = float32(math.Pi/2) - r
	}
	if math.Signbit(float64(x)) {
		r = float32(math.Pi) - r
	}
	return math.Float32frombits(math.Float32bits(r) ^ math.Float32bits(y)&0x80000000)
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0x80000000) }

// logParts32 is mathlib's logParts: ln x = ef ln2 + z + tail for
// positive x, z = m - 1 exact.
func logParts32(x float32) (ef, z, tail float32) {
	bias := 126
	if x < 0x1p-126 {
		x, bias = float32(x*0x1p23), 126+23
	}
	bits := math.Float32bits(x)
	e := int32(bits>>23) - int32(bias)
	mant := math.Float32frombits(bits&0x007fffff | 0x3f000000)
	if mant < 0.707106781186547524 {
		e--
		z = (mant + mant) - 1
	} else {
		z = mant - 1
	}
	zz := float32(z * z)
	y := poly32(z, 7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
	return float32(e), z, float32(float32(y*z)*zz) + float32(zz*-0.5)
}

// logDF32 is mathlib's logDF: ln x as hi + lo, to about 2^-40.
func logDF32(x float32) (hi, lo float32) {
	ef, z, _ := logParts32(x)
	dh, dl := twoSum32(2, z)
	sh := z / dh
	ph, pl := twoProd32(sh, dh)
	sl := (((z - ph) - pl) - float32(sh*dl)) / dh
	s2 := float32(sh * sh)
	tail := float32(float32(float32(sh*s2)*2) * poly32(s2, 1.0/13, 1.0/11, 1.0/9, 1.0/7, 1.0/5, 1.0/3))
	h, e1 := twoSum32(float32(ef*0.693145751953125), sh+sh)
	lo = e1 + ((sl + sl) + (tail + float32(ef*float32(ln2Lo))))
	return twoSum32(h, lo)
}

// ln2Lo is ln 2 less its first 16 bits (a float64, rounded to f32 where
// it is used, as mathlib's).
var ln2Lo = math.Ln2 - 0.693145751953125

// expTail32 is mathlib's expTail: e^(x + tl) as e^x (1 + tl), the tail
// applied before the scaling by 2^n.
func expTail32(x, tl float32) float32 {
	if x != x || x > 89 || x < -104 {
		return expScaled32(x, 0, 0)
	}
	n, p := expReduce32(x)
	y := p + 1
	return expScaled32(x, n, y+float32(y*tl))
}

// PowF32 is the device's f32 pow (C's special values): e^(y ln|x|) with
// ln|x| in two floats and the product made exact.
func PowF32(x, y float32) float32 {
	isInf := func(v float32) bool { return math.IsInf(float64(v), 0) }
	whole := func(v float32) bool { return float32(math.Floor(float64(v))) == v }
	switch {
	case y == 0 || x == 1:
		return 1
	case x != x || y != y:
		return float32(math.NaN())
	}
	ax := abs32(x)
	yNeg := y < 0
	if isInf(y) {
		switch {
		case ax == 1:
			return 1
		case (ax < 1) != yNeg:
			return 0
		}
		return float32(math.Inf(1))
	}
	yInt := whole(y)
	if x < 0 && !isInf(x) && !yInt {
		return float32(math.NaN())
	}
	var r float32
	switch {
	case isInf(ax) && yNeg, ax == 0 && !yNeg:
		r = 0
	case isInf(ax), ax == 0:
		r = float32(math.Inf(1))
	default:
		lh, ll := logDF32(ax)
		th, te := twoProd32(y, lh)
		th, tl := twoSum32(th, te+float32(y*ll))
		r = expTail32(th, tl)
		if t := float32(y * lh); t > 88.72283935546875 {
			r = float32(math.Inf(1))
		} else if t < -104 {
			r = 0
		}
	}
	if math.Signbit(float64(x)) && yInt && !whole(float32(y*0.5)) && abs32(y) < 0x1p24 {
		r = -r
	}
	return r
}

// RsqrtF32 is the device's f32 rsqrt: 1 / sqrt(x), each step correctly
// rounded (lower/kgen's rsqrt), so -0 gives -inf, +0 +inf, +inf 0.
func RsqrtF32(x float32) float32 {
	s := float32(math.Sqrt(float64(x)))
	return float32(1 / float64(s))
}
