package chlo

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// complexFunctions expand CHLO's functions of complex numbers into HLO's
// complex ops (which vkjit's compiler rewrites into real arithmetic): sinh
// and cosh from their real parts' (csinhCosh); atan as atan2(z, 1), as
// the legalization does; atanh as (log1p(z) - log1p(-z)) / 2;
// asin and acos by Hull, Fairgrieve and Tang's algorithm, as XLA's
// legalization computes them, and asinh and acosh from those by the
// identities asinh z = -i asin(iz) and acosh z = +-i acos z.
var complexFunctions = map[string]func(e *expr, z *hlo.Instruction) *hlo.Instruction{
	"sinh": func(e *expr, z *hlo.Instruction) *hlo.Instruction { return csinhCosh(e, z, false) },
	"cosh": func(e *expr, z *hlo.Instruction) *hlo.Instruction { return csinhCosh(e, z, true) },
	"atan": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		return e.Op(hlo.OpAtan2, z, e.kc(1))
	},
	"atanh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		return e.Mul(e.kc(0.5), e.Sub(e.Log1p(z), e.Log1p(e.Neg(z))))
	},
	"asinh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		// asinh z = -i asin(iz).
		w := casin(e, e.timesI(z))
		return e.timesI(e.Neg(w))
	},
	"acosh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		// acosh z = +-i acos z, the sign that makes the real part >= 0:
		// (|im w|, re w with the sign of im z), w = acos z.
		w := cacos(e, z)
		p := e.part()
		return e.cplx(p.Abs(e.im(w)), p.CopySign(e.re(w), e.im(z)))
	},
	"asin": casin,
	"acos": cacos,
}

// csinhCosh is sinh z (or cosh z) for z = a + bi as sinh a cos b +
// i cosh a sin b (cosh a cos b + i sinh a sin b), with sinh a and cosh a
// as the real functions compute them (halves: XLA's e^(a + log(1/2))
// -+ e^(-a + log(1/2)), sinh a from expm1 below |a| = 1). The legalization's
// e^(z + log(1/2)) - e^(-z + log(1/2)) is the same sum, but through four
// complex exponentials, each its own sin b and cos b, which in c128 made
// a kernel lavapipe took 5.4 s to compile (now one sine and one cosine).
// A zero b is the imaginary part (cosh: with a's sign), as C99 has it,
// where an infinite a would make inf * 0.
func csinhCosh(e *expr, z *hlo.Instruction, cosh bool) *hlo.Instruction {
	p := e.part()
	a, b := e.re(z), e.im(z)
	ep, em := halves(p, a)
	sh, ch := sinhFrom(p, a, ep, em), p.Add(ep, em)
	cb, sb := p.Op(hlo.OpCos, b), p.Op(hlo.OpSin, b)
	re, im, zeroIm := p.Mul(sh, cb), p.Mul(ch, sb), b
	if cosh {
		re, im, zeroIm = p.Mul(ch, cb), p.Mul(sh, sb), p.Mul(b, p.Op(hlo.OpSign, a))
	}
	return e.cplx(re, p.Sel(p.Cmp(b, "EQ", p.K(0)), zeroIm, im))
}

// casin is asin z by Hull et al.'s algorithm (hullAsin), the signs of
// z's parts given to the result's.
func casin(e *expr, z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	re, im := e.re(z), e.im(z)
	ar, _, ai := hullAsin(p, p.Abs(re), p.Abs(im))
	return e.cplx(p.CopySign(ar, re), p.CopySign(ai, im))
}

// cacos is acos z by Hull et al.'s algorithm: pi minus the first
// quadrant's real part for re z < 0, the imaginary part of the opposite
// sign to im z's.
func cacos(e *expr, z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	re, im := e.re(z), e.im(z)
	_, cr, ai := hullAsin(p, p.Abs(re), p.Abs(im))
	cr = p.Sel(p.Cmp(re, "LT", p.K(0)), p.Sub(p.K(math.Pi), cr), cr)
	return e.cplx(cr, p.Neg(p.CopySign(ai, im)))
}

// hullAsin is the core of Hull, Fairgrieve and Tang's complex arcsine
// and arccosine ("Implementing the complex arcsine and arccosine
// functions using exception handling", ACM TOMS 1997), on x = |re z|,
// y = |im z|: r = |z + 1|, s = |z - 1|, A = (r + s)/2 and B = x/A, from
// which asin's real part is asin B (or, where B is near 1 and asin
// loses digits, an atan of exactly formed sides), acos's real part acos
// B (or the atan of the same sides the other way up), and both
// imaginary parts' magnitude log(A + sqrt(A^2 - 1)), through log1p of
// A - 1 formed without cancellation, and as log 2 + log A where A^2
// would overflow.
func hullAsin(p *expr, x, y *hlo.Instruction) (asinRe, acosRe, im *hlo.Instruction) {
	asinOf := func(p *expr, v *hlo.Instruction) *hlo.Instruction { return asinExpr(p, v) }
	acosOf := func(p *expr, v *hlo.Instruction) *hlo.Instruction { return acosExpr(p, v) }
	one, half := p.K(1), p.K(0.5)
	xp1, xm1 := p.Add(x, one), p.Sub(x, one)
	r := p.Hypot(xp1, y)
	s := p.Hypot(xm1, y)
	a := p.Mul(half, p.Add(r, s))
	b := p.Div(x, a)
	y2 := p.Mul(y, y)
	rp := p.Add(r, xp1) // r + (x + 1)
	below := p.Cmp(x, "LE", one)
	// Where B > 0.6417 the sides of the triangle whose angle the real
	// part is: sqrt((A + x)/2 * (y^2/(r + x + 1) + (s + 1 - x))) for x <= 1,
	// y sqrt((A + x)/2 * (1/(r + x + 1) + 1/(s + x - 1))) above.
	apx := p.Add(a, x)
	sideLo := p.Sqrt(p.Mul(p.Mul(half, apx), p.Add(p.Div(y2, rp), p.Sub(s, xm1))))
	sideHi := p.Mul(y, p.Sqrt(p.Mul(half, p.Add(p.Div(apx, rp), p.Div(apx, p.Add(s, xm1))))))
	side := p.Sel(below, sideLo, sideHi)
	near := p.Cmp(b, "GT", p.K(0.6417))
	asinRe = p.Sel(near, p.Op(hlo.OpAtan2, x, side), asinOf(p, b))
	acosRe = p.Sel(near, p.Op(hlo.OpAtan2, side, x), acosOf(p, b))
	// A - 1 = (y^2/(r + x + 1) + y^2/(s + 1 - x))/2 for x < 1, and
	// (y^2/(r + x + 1) + (s + x - 1))/2 above.
	sm := p.Sub(s, xm1) // s + 1 - x
	am1 := p.Sel(p.Cmp(x, "LT", one),
		p.Mul(half, p.Add(p.Div(y2, rp), p.Div(y2, sm))),
		p.Mul(half, p.Add(p.Div(y2, rp), p.Add(s, xm1))))
	// log1p of A - 1 so formed has no cancellation at any A (Hull et al.
	// switch to log(A + sqrt(A^2 - 1)) past A = 1.5, which loses a few
	// bits to A^2 - 1: the suite's acos_complex64 missed XLA's value by 4
	// ulp there); past sqrt(max)/8, where A^2 would overflow, log 2 + log A.
	finite := p.Log1p(p.Add(am1, p.Sqrt(p.Mul(am1, p.Add(a, one)))))
	big := p.Add(p.K(math.Ln2), p.Log(a))
	im = p.Sel(p.Cmp(a, "GT", p.K(math.Sqrt(p.MaxFloat())/8)), big, finite)
	// Where y^2 is subnormal it has lost its digits (c64's asin(1e-20i)
	// was 2.7e-6 off): Hull et al.'s y / sqrt((1 - x)(1 + x)) for x < 1,
	// and sqrt(y) at x = 1, the limits of the above as y goes to 0.
	tiny := p.Cmp(y, "LT", p.K(math.Sqrt(minNormal(p.Elem))))
	small := p.Sel(p.Cmp(x, "LT", one), p.Div(y, p.Sqrt(p.Mul(p.Sub(one, x), p.Add(one, x)))), p.Sqrt(y))
	im = p.Sel(p.And(tiny, below), small, im)
	return asinRe, acosRe, im
}

// minNormal is the smallest normal value of float type t.
func minNormal(t hlo.ElementType) float64 {
	if t == hlo.F64 {
		return 0x1p-1022
	}
	return 0x1p-126
}

// part is a builder over e's dimensions in its complex type's part type.
func (e *expr) part() *expr {
	t := hlo.F32
	if e.Elem == hlo.C128 {
		t = hlo.F64
	}
	return e.with(t)
}

func (e *expr) re(z *hlo.Instruction) *hlo.Instruction {
	return e.Make(hlo.OpReal, e.part().Shape(), z)
}

func (e *expr) im(z *hlo.Instruction) *hlo.Instruction {
	return e.Make(hlo.OpImag, e.part().Shape(), z)
}

func (e *expr) cabs(z *hlo.Instruction) *hlo.Instruction {
	return e.Make(hlo.OpAbs, e.part().Shape(), z)
}

func (e *expr) cplx(re, im *hlo.Instruction) *hlo.Instruction {
	return e.Make(hlo.OpComplex, e.Shape(), re, im)
}

// kc is the complex constant v + 0i.
func (e *expr) kc(v float64) *hlo.Instruction {
	p := e.part()
	return e.cplx(p.K(v), p.K(0))
}

// timesI is i z = -im z + i re z.
func (e *expr) timesI(z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	return e.cplx(p.Neg(e.im(z)), e.re(z))
}
