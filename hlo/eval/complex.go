package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// Complex numbers are computed in complex128 with Go's math/cmplx, an
// implementation independent of the device's (lower/complex.go rewrites
// them into real arithmetic of its own), and each part rounded to the
// result type after each op, as real floats are. Where XLA's elemental
// emitter gives infinities and NaN other values than math/cmplx's C99
// cases (exp, sin, cos, sqrt, power), its formula and cases are written
// out here; TestComplexSpecialValues in the root package holds the
// device to the same values.

// partType is the real type of a complex type's parts.
func partType(t hlo.ElementType) hlo.ElementType {
	p, _ := t.ComplexPart()
	return p
}

func getComplex(l *hlo.Literal, i int64) scalar {
	pt := partType(l.Shape.Elem)
	n := int64(pt.Bytes())
	part := func(k int64) float64 {
		var bits uint64
		b := l.Data[(2*i+k)*n : (2*i+k+1)*n]
		for j := len(b) - 1; j >= 0; j-- {
			bits = bits<<8 | uint64(b[j])
		}
		return decodeFloat(pt, bits)
	}
	return scalar{c: complex(part(0), part(1))}
}

func putComplex(dst []byte, t hlo.ElementType, i int64, s scalar) {
	pt := partType(t)
	putBits(dst, pt, 2*i, encodeFloat(pt, real(s.c)))
	putBits(dst, pt, 2*i+1, encodeFloat(pt, imag(s.c)))
}

// roundC rounds each part to complex type t.
func roundC(t hlo.ElementType, c complex128) complex128 {
	pt := partType(t)
	return complex(round(pt, real(c)), round(pt, imag(c)))
}

// cmul is x*y of complex type t as XLA computes it on hardware with a
// fused multiply-add: (fma(a, c, -bd), fma(b, c, ad)), each product and
// fma rounded to t's parts (lower/complexmath.go's cmul says why).
func cmul(t hlo.ElementType, x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	if partType(t) == hlo.F32 {
		bd, ad := float64(float32(b*d)), float64(float32(a*d))
		return complex(fma32(a, c, -bd), fma32(b, c, ad))
	}
	return complex(math.FMA(a, c, -float64(b*d)), math.FMA(b, c, float64(a*d)))
}

// fma32 is x*y + z rounded once to f32, for f32 values x, y and z: x*y
// is exact in f64, and its sum with z rounded to odd in f64 (53 bits,
// two more than f32's 24 twice over) rounds to f32 as the exact sum
// would (Boldo and Melquiond).
func fma32(x, y, z float64) float64 {
	p := float64(x * y)
	s := p + z
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float64(float32(s))
	}
	pv := s - z
	e := (z - (s - pv)) + (p - pv)
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e < 0) != (s < 0) {
			bits--
		} else {
			bits++
		}
		s = math.Float64frombits(bits)
	}
	return float64(float32(s))
}

// applyComplex computes one element of an elementwise op on complex
// operands; abs, real, imag and compare give real results.
func applyComplex(in *hlo.Instruction, a []scalar) (scalar, error) {
	v, err := complexOp(in.Op, in.Shape.Elem, in.A.Direction, in.Operands, a)
	if err != nil {
		return v, in.Errorf("%w", err)
	}
	return v, nil
}

// cexp is e^x with the evaluator's exactly reduced sine and cosine:
// math/cmplx reduces a huge imaginary part through math.Sincos, which
// is tens of ulps off past 1e20 (cos(1e30)). It is XLA's formula, e^a
// cos b + i e^a sin b, for every value (exp(inf + inf i) is NaN, not
// C99's (inf, NaN)), but that a zero b is the imaginary part, as the
// device gives it: e^inf is not multiplied by sin 0.
func cexp(x complex128) complex128 {
	a, b := real(x), imag(x)
	r := math.Exp(a)
	if b == 0 {
		return complex(r, b)
	}
	return complex(r*Cos(b), r*Sin(b))
}

// csqrt is the principal square root, math/cmplx's but for a NaN real
// part beside a finite imaginary one, which XLA's (and C99's) make NaN
// in both parts where Go keeps the imaginary part.
func csqrt(x complex128) complex128 {
	if math.IsNaN(real(x)) && !math.IsInf(imag(x), 0) {
		return complex(math.NaN(), math.NaN())
	}
	return cmplx.Sqrt(x)
}

// ctan is tan(a + bi) as the device computes it (lower's ctan): re =
// sin a cos a / d and im = tanh b (1 + sin^2 a / d), d = cos^2 a +
// sinh^2 b, which stays finite where math/cmplx's (sin 2a + i sinh 2b) /
// (cos 2a + cosh 2b) is inf / inf: |b| past 355 (a tanh of a real part
// past 355 was NaN, not +-1). XLA's corner cases: an infinite b gives
// (0, +-1) whatever a is, and a zero a a real part of +0.
func ctan(x complex128) complex128 {
	a, b := real(x), imag(x)
	s, co, sh := Sin(a), Cos(a), math.Sinh(b)
	d := co*co + sh*sh
	re, im := s*co/d, math.Tanh(b)*(1+s*s/d)
	if math.IsInf(b, 0) {
		im = math.Copysign(1, b)
		if math.IsInf(a, 0) || math.IsNaN(a) {
			re = 0
		}
	}
	if a == 0 {
		re = 0
	}
	return complex(re, im)
}

// csinhCosh is sinh x (cosh x) as XLA's expansion computes it from the
// real parts' (hlo/chlo's csinhCosh): sinh a cos b + i cosh a sin b, with
// sinh a and cosh a from e^(a + log(1/2)) -+ e^(-a + log(1/2)) (sinh a
// from expm1 below |a| = 1, as the real sinh), and a zero b the
// imaginary part (cosh: with a's sign), as C99's.
func csinhCosh(x complex128, cosh bool) complex128 {
	a, b := real(x), imag(x)
	lh := math.Log(0.5)
	ep, em := math.Exp(a+lh), math.Exp(lh-a)
	ch, sh := ep+em, ep-em
	if math.Abs(a) < 1 {
		m := math.Expm1(a)
		sh = 0.5 * (m + m/(m+1))
	}
	re, im, zeroIm := sh*Cos(b), ch*Sin(b), b
	if cosh {
		re, im, zeroIm = ch*Cos(b), sh*Sin(b), b*signOf(a)
	}
	if b == 0 {
		im = zeroIm
	}
	return complex(re, im)
}

// signOf is XLA's sign of a float: +-1, a zero itself, NaN for NaN.
func signOf(a float64) float64 {
	if math.IsNaN(a) || a == 0 {
		return a
	}
	return math.Copysign(1, a)
}

// cexpm1 is e^x - 1: e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b/2), no
// cancellation near 0. A zero b is the imaginary part, as in XLA (whose
// emitter selects it), so that an infinite a does not meet inf * 0.
func cexpm1(x complex128) complex128 {
	re, im := real(x), imag(x)
	s := Sin(im / 2)
	if im == 0 {
		return complex(math.Expm1(re), im)
	}
	return complex(math.Expm1(re)*Cos(im)-2*s*s, math.Exp(re)*Sin(im))
}

// clog1p is log(1 + x) without cancellation near 0.
func clog1p(x complex128) complex128 {
	re, im := real(x), imag(x)
	if math.Abs(re) < 0.5 && math.Abs(im) < 0.5 {
		return complex(0.5*math.Log1p(re*(re+2)+im*im), math.Atan2(im, re+1))
	}
	// Not log(1 + x): Go's complex sum adds 0i, and -0's sign (which
	// side of the cut) is lost.
	return complex(math.Log(math.Hypot(re+1, im)), math.Atan2(im, re+1))
}

// casin is asin z by Hull, Fairgrieve and Tang's algorithm ("Implementing
// the complex arcsine and arccosine functions using exception handling",
// ACM TOMS 1997) on the first quadrant, the signs of z's parts given to
// the result's: Go's cmplx.Asin forms 1 - z^2, which overflows past
// 1e154 and cancels near the real axis.
func casin(z complex128) complex128 {
	ar, _, ai := hullAsin(math.Abs(real(z)), math.Abs(imag(z)))
	return complex(math.Copysign(ar, real(z)), math.Copysign(ai, imag(z)))
}

// cacos is acos z: pi minus the first quadrant's real part where
// re z < 0, the imaginary part of the opposite sign to im z's.
func cacos(z complex128) complex128 {
	_, cr, ai := hullAsin(math.Abs(real(z)), math.Abs(imag(z)))
	if real(z) < 0 {
		cr = math.Pi - cr
	}
	return complex(cr, -math.Copysign(ai, imag(z)))
}

// hullAsin is Hull et al.'s core on x = |re z|, y = |im z|: with
// r = |z + 1|, s = |z - 1|, A = (r + s)/2 and B = x/A, asin's real part
// is asin B and acos's acos B, or where B is near 1 the angle of a
// triangle whose sides are formed without cancellation; both imaginary
// parts' magnitude is log(A + sqrt(A^2 - 1)), through log1p of A - 1
// formed without cancellation, or log 2 + log A where A^2 overflows.
func hullAsin(x, y float64) (asinRe, acosRe, im float64) {
	r, s := math.Hypot(x+1, y), math.Hypot(x-1, y)
	a := (r + s) / 2
	b := x / a
	y2 := y * y
	rp := r + (x + 1)
	sm, sp := s-(x-1), s+(x-1) // s + 1 - x and s + x - 1, x - 1 exact
	if b > 0.6417 {
		apx := a + x
		var side float64
		if x <= 1 {
			side = math.Sqrt(apx / 2 * (y2/rp + sm))
		} else {
			side = y * math.Sqrt(apx/2*(1/rp+1/sp))
		}
		asinRe, acosRe = math.Atan2(x, side), math.Atan2(side, x)
	} else {
		asinRe, acosRe = math.Asin(b), math.Acos(b)
	}
	var am1 float64
	if x < 1 {
		am1 = (y2/rp + y2/sm) / 2
	} else {
		am1 = (y2/rp + sp) / 2
	}
	switch {
	case a > math.Sqrt(math.MaxFloat64)/8:
		im = math.Ln2 + math.Log(a)
	case y < 0x1p-511 && x < 1: // y^2 subnormal: the limits as y goes to 0
		im = y / math.Sqrt((1-x)*(1+x))
	case y < 0x1p-511 && x == 1:
		im = math.Sqrt(y)
	default:
		im = math.Log1p(am1 + math.Sqrt(am1*(a+1)))
	}
	return asinRe, acosRe, im
}

// cpow is x^y as XLA's elemental emitter computes it, |x|^c e^(-d arg x)
// (cos q + i sin q), q = c arg x + d ln|x| for y = c + di, with its
// cases, each over the ones before: 0^c is 1 for c = 0 and 0 for c > 0;
// x^0 is 1; 1^y is 1; inf^c is inf for c > 0 and 0 for c < 0.
func cpow(x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	abs, arg := cmplx.Abs(x), math.Atan2(b, a)
	coeff := math.Pow(abs, c) * math.Exp(-d*arg)
	q := c*arg + d*math.Log(abs)
	switch {
	case a == math.Inf(1) && b == 0 && d == 0 && c < 0:
		return 0
	case a == math.Inf(1) && b == 0 && d == 0 && c > 0:
		return complex(math.Inf(1), 0)
	case a == 1 && b == 0, c == 0 && d == 0:
		return 1
	case abs == 0 && d == 0 && c >= 0:
		return 0 // c = 0 was the case above
	}
	return complex(coeff*Cos(q), coeff*Sin(q))
}

// complexOp is applyComplex for op with result type out (dir: compare's
// direction; operands, where known, for bitcast-convert's type).
func complexOp(op hlo.Opcode, out hlo.ElementType, dir string, operands []*hlo.Instruction, a []scalar) (scalar, error) {
	c := func(v complex128) (scalar, error) { return scalar{c: roundC(out, v)}, nil }
	f := func(v float64) (scalar, error) { return scalar{f: round(out, v)}, nil }
	x := a[0].c
	switch op {
	case hlo.OpCopy:
		return a[0], nil
	case hlo.OpNegate:
		return c(-x)
	case hlo.OpAdd:
		return c(x + a[1].c)
	case hlo.OpSubtract:
		return c(x - a[1].c)
	case hlo.OpMultiply:
		return c(cmul(out, x, a[1].c))
	case hlo.OpDivide:
		return c(x / a[1].c)
	case hlo.OpAbs:
		return f(cmplx.Abs(x))
	case hlo.OpReal:
		return f(real(x))
	case hlo.OpImag:
		return f(imag(x))
	case hlo.OpSign:
		// XLA divides each part by |x| (so -inf+1i is NaN+0i, where
		// complex division would make NaN+NaNi); zero stays itself.
		r := cmplx.Abs(x)
		if r == 0 {
			return c(x)
		}
		return c(complex(real(x)/r, imag(x)/r))
	case hlo.OpSqrt:
		return c(csqrt(x))
	case hlo.OpRsqrt:
		return c(1 / csqrt(x))
	case hlo.OpCbrt:
		r, t := cmplx.Polar(x)
		return c(cmplx.Rect(math.Cbrt(r), t/3))
	case hlo.OpExp:
		return c(cexp(x))
	case hlo.OpExpm1:
		return c(cexpm1(x))
	case hlo.OpLog:
		return c(cmplx.Log(x))
	case hlo.OpLog1p:
		return c(clog1p(x))
	case hlo.OpLogistic:
		return c(1 / (1 + cexp(-x)))
	case hlo.OpSin:
		// XLA's formula for every value, infinities and NaN too (sin(-inf
		// + 0i) is NaN * 1 + i NaN * 0, where C99's csin gives (NaN, 0)).
		return c(complex(Sin(real(x))*math.Cosh(imag(x)), Cos(real(x))*math.Sinh(imag(x))))
	case hlo.OpCos:
		return c(complex(Cos(real(x))*math.Cosh(imag(x)), -Sin(real(x))*math.Sinh(imag(x))))
	case hlo.OpTan:
		return c(ctan(x))
	case hlo.OpTanh:
		// tanh(z) = -i tan(iz); 0 - re, not -re, so that a zero
		// imaginary part is +0, as XLA gives it.
		t := ctan(complex(-imag(x), real(x)))
		return c(complex(imag(t), 0-real(t)))
	case hlo.OpSinh, hlo.OpCosh:
		return c(csinhCosh(x, op == hlo.OpCosh))
	case hlo.OpAsin:
		return c(casin(x))
	case hlo.OpAcos:
		return c(cacos(x))
	case hlo.OpAsinh:
		// asinh z = -i asin(iz).
		w := casin(complex(-imag(x), real(x)))
		return c(complex(imag(w), -real(w)))
	case hlo.OpAcosh:
		// acosh z = +-i acos z, the sign that makes the real part >= 0.
		w := cacos(x)
		return c(complex(math.Abs(imag(w)), math.Copysign(real(w), imag(x))))
	case hlo.OpAtanh:
		return c((clog1p(x) - clog1p(-x)) / 2)
	case hlo.OpPower:
		return c(cpow(x, a[1].c))
	case hlo.OpAtan2:
		// -i log((x + iy) / sqrt(x^2 + y^2)), as StableHLO defines it.
		y, xx := x, a[1].c
		return c(-1i * cmplx.Log((xx+1i*y)/csqrt(xx*xx+y*y)))
	case hlo.OpMaximum, hlo.OpMinimum:
		// A NaN part propagates, as a real maximum's NaN does (not
		// cmplx.IsNaN, false where the other part is infinite).
		p, q := x, a[1].c
		if math.IsNaN(real(p)) || math.IsNaN(imag(p)) {
			return c(p)
		}
		if math.IsNaN(real(q)) || math.IsNaN(imag(q)) {
			return c(q)
		}
		first := real(p) > real(q) || real(p) == real(q) && imag(p) > imag(q)
		if op == hlo.OpMinimum {
			first = real(p) < real(q) || real(p) == real(q) && imag(p) < imag(q)
		}
		if first {
			return c(p)
		}
		return c(q)
	case hlo.OpCompare:
		switch dir {
		case "EQ":
			return scalar{u: b2u(x == a[1].c)}, nil
		case "NE":
			return scalar{u: b2u(x != a[1].c)}, nil
		}
	case hlo.OpSelect:
		if a[0].u != 0 {
			return a[1], nil
		}
		return a[2], nil
	case hlo.OpBitcastConvert:
		if len(operands) == 1 && operands[0].Shape.Elem == out {
			return a[0], nil
		}
	}
	return scalar{}, &Unsupported{op.String() + " of complex numbers"}
}

// convertComplex converts to or from a complex type: a real value is the
// real part, and a complex value converts to a real type by its real
// part.
func convertComplex(from, to hlo.ElementType, x scalar) scalar {
	switch {
	case from.IsComplex() && to.IsComplex():
		return scalar{c: roundC(to, x.c)}
	case from.IsComplex():
		return convert(partType(from), to, scalar{f: real(x.c)})
	}
	re := convert(from, partType(to), x)
	return scalar{c: complex(re.f, 0)}
}

// dotComplex is dot's accumulation in complex128.
func dotComplex(l, r *hlo.Literal) (L, R []complex128) {
	dec := func(x *hlo.Literal) []complex128 {
		n := x.Shape.NumElements()
		out := make([]complex128, n)
		for j := int64(0); j < n; j++ {
			if x.Shape.Elem.IsComplex() {
				out[j] = get(x, j).c
			} else {
				out[j] = complex(toF(get(x, j), x.Shape.Elem), 0)
			}
		}
		return out
	}
	return dec(l), dec(r)
}
