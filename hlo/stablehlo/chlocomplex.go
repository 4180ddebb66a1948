package stablehlo

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// CHLO's functions of complex numbers, in HLO's complex ops.

// complexRules expand CHLO's functions of complex numbers into HLO's
// complex ops (which vkjit's compiler rewrites into real arithmetic): sinh
// and cosh as XLA computes them, through exp with log(1/2) folded in
// (sinh near 0 from expm1); atan as atan2(z, 1), as the legalization
// does; atanh as (log1p(z) - log1p(-z)) / 2;
// asin and acos by Hull, Fairgrieve and Tang's algorithm, as XLA's
// legalization computes them, and asinh and acosh from those by the
// identities asinh z = -i asin(iz) and acosh z = +-i acos z.
var complexRules = map[string]func(e *expr, z *hlo.Instruction) *hlo.Instruction{
	"chlo.sinh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		small := e.mul(e.kc(0.5), e.sub(e.op(hlo.OpExpm1, z), e.op(hlo.OpExpm1, e.neg(z))))
		lh := e.kc(math.Log(0.5))
		large := e.sub(e.exp(e.add(z, lh)), e.exp(e.sub(lh, z)))
		return e.sel(e.part().cmp(e.cabs(z), "LT", e.part().k(1)), small, large)
	},
	"chlo.cosh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		lh := e.kc(math.Log(0.5))
		return e.add(e.exp(e.add(z, lh)), e.exp(e.sub(lh, z)))
	},
	"chlo.atan": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		return e.op(hlo.OpAtan2, z, e.kc(1))
	},
	"chlo.atanh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		return e.mul(e.kc(0.5), e.sub(e.log1p(z), e.log1p(e.neg(z))))
	},
	"chlo.asinh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		// asinh z = -i asin(iz).
		w := casin(e, e.timesI(z))
		return e.timesI(e.neg(w))
	},
	"chlo.acosh": func(e *expr, z *hlo.Instruction) *hlo.Instruction {
		// acosh z = +-i acos z, the sign that makes the real part >= 0:
		// (|im w|, re w with the sign of im z), w = acos z.
		w := cacos(e, z)
		p := e.part()
		return e.cplx(p.abs(e.im(w)), p.copySign(e.re(w), e.im(z)))
	},
	"chlo.asin": casin,
	"chlo.acos": cacos,
}

// casin is asin z by Hull et al.'s algorithm (hullAsin), the signs of
// z's parts given to the result's.
func casin(e *expr, z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	re, im := e.re(z), e.im(z)
	ar, _, ai := hullAsin(p, p.abs(re), p.abs(im))
	return e.cplx(p.copySign(ar, re), p.copySign(ai, im))
}

// cacos is acos z by Hull et al.'s algorithm: pi minus the first
// quadrant's real part for re z < 0, the imaginary part of the opposite
// sign to im z's.
func cacos(e *expr, z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	re, im := e.re(z), e.im(z)
	_, cr, ai := hullAsin(p, p.abs(re), p.abs(im))
	cr = p.sel(p.cmp(re, "LT", p.k(0)), p.sub(p.k(math.Pi), cr), cr)
	return e.cplx(cr, p.neg(p.copySign(ai, im)))
}

// hullAsin is the core of Hull, Fairgrieve and Tang's complex arcsine
// and arccosine ("Implementing the complex arcsine and arccosine
// functions using exception handling", ACM TOMS 1997), on x = |re z|,
// y = |im z|: r = |z + 1|, s = |z - 1|, A = (r + s)/2 and B = x/A, from
// which asin's real part is asin B (or, where B is near 1 and asin
// loses digits, an atan of exactly formed sides), acos's real part acos
// B (or the atan of the same sides the other way up), and both
// imaginary parts' magnitude log(A + sqrt(A^2 - 1)), through log1p of
// A - 1 formed without cancellation where A is near 1, and as log 2 +
// log A where A^2 would overflow.
func hullAsin(p *expr, x, y *hlo.Instruction) (asinRe, acosRe, im *hlo.Instruction) {
	asinOf := func(p *expr, v *hlo.Instruction) *hlo.Instruction { return asinExpr(p, v) }
	acosOf := func(p *expr, v *hlo.Instruction) *hlo.Instruction { return acosExpr(p, v) }
	one, half := p.k(1), p.k(0.5)
	xp1, xm1 := p.add(x, one), p.sub(x, one)
	r := p.hypot(xp1, y)
	s := p.hypot(xm1, y)
	a := p.mul(half, p.add(r, s))
	b := p.div(x, a)
	y2 := p.mul(y, y)
	rp := p.add(r, xp1) // r + (x + 1)
	below := p.cmp(x, "LE", one)
	// Where B > 0.6417 the sides of the triangle whose angle the real
	// part is: sqrt((A + x)/2 * (y^2/(r + x + 1) + (s + 1 - x))) for x <= 1,
	// y sqrt((A + x)/2 * (1/(r + x + 1) + 1/(s + x - 1))) above.
	apx := p.add(a, x)
	sideLo := p.sqrt(p.mul(p.mul(half, apx), p.add(p.div(y2, rp), p.sub(s, xm1))))
	sideHi := p.mul(y, p.sqrt(p.mul(half, p.add(p.div(apx, rp), p.div(apx, p.add(s, xm1))))))
	side := p.sel(below, sideLo, sideHi)
	near := p.cmp(b, "GT", p.k(0.6417))
	asinRe = p.sel(near, p.op(hlo.OpAtan2, x, side), asinOf(p, b))
	acosRe = p.sel(near, p.op(hlo.OpAtan2, side, x), acosOf(p, b))
	// A - 1 = (y^2/(r + x + 1) + y^2/(s + 1 - x))/2 for x < 1, and
	// (y^2/(r + x + 1) + (s + x - 1))/2 above.
	sm := p.sub(s, xm1) // s + 1 - x
	am1 := p.sel(p.cmp(x, "LT", one),
		p.mul(half, p.add(p.div(y2, rp), p.div(y2, sm))),
		p.mul(half, p.add(p.div(y2, rp), p.add(s, xm1))))
	small := p.log1p(p.add(am1, p.sqrt(p.mul(am1, p.add(a, one)))))
	mid := p.log(p.add(a, p.sqrt(p.sub(p.mul(a, a), one))))
	big := p.add(p.k(math.Ln2), p.log(a))
	im = p.sel(p.cmp(a, "LE", p.k(1.5)), small, p.sel(p.cmp(a, "GT", p.k(math.Sqrt(p.maxFloat())/8)), big, mid))
	return asinRe, acosRe, im
}

// hypot is sqrt(a^2 + b^2) of non-negative a and b without overflow.
func (e *expr) hypot(a, b *hlo.Instruction) *hlo.Instruction {
	hi, lo := e.op(hlo.OpMaximum, a, b), e.op(hlo.OpMinimum, a, b)
	q := e.div(lo, hi)
	r := e.mul(hi, e.sqrt(e.add(e.k(1), e.mul(q, q))))
	return e.sel(e.cmp(hi, "EQ", e.k(0)), e.k(0), r)
}

// copySign is |m| with the sign of s (a negative zero counts as
// positive).
func (e *expr) copySign(m, s *hlo.Instruction) *hlo.Instruction {
	return e.sel(e.cmp(s, "LT", e.k(0)), e.neg(e.abs(m)), e.abs(m))
}

// part is a builder over e's dimensions in its complex type's part type.
func (e *expr) part() *expr {
	t := hlo.F32
	if e.s.Elem == hlo.C128 {
		t = hlo.F64
	}
	return e.with(t)
}

func (e *expr) re(z *hlo.Instruction) *hlo.Instruction {
	return e.cb.Op(hlo.OpReal, z).WithShape(e.part().s).Instruction
}

func (e *expr) im(z *hlo.Instruction) *hlo.Instruction {
	return e.cb.Op(hlo.OpImag, z).WithShape(e.part().s).Instruction
}

func (e *expr) cabs(z *hlo.Instruction) *hlo.Instruction {
	return e.cb.Op(hlo.OpAbs, z).WithShape(e.part().s).Instruction
}

func (e *expr) cplx(re, im *hlo.Instruction) *hlo.Instruction {
	return e.cb.Op(hlo.OpComplex, re, im).WithShape(e.s).Instruction
}

// kc is the complex constant v + 0i.
func (e *expr) kc(v float64) *hlo.Instruction {
	p := e.part()
	return e.cplx(p.k(v), p.k(0))
}

// timesI is i z = -im z + i re z.
func (e *expr) timesI(z *hlo.Instruction) *hlo.Instruction {
	p := e.part()
	return e.cplx(p.neg(e.im(z)), e.re(z))
}
