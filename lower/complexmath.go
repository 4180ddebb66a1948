package lower

import (
	"encoding/binary"
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// rexpr builds real elementwise ops of one shape for a complex op.
type rexpr struct {
	x    *cx
	in   *hlo.Instruction
	t    hlo.ElementType
	dims []int64
}

func (f *rexpr) sh() hlo.Shape { return hlo.ArrayShape(f.t, f.dims...) }

func (f *rexpr) op(op hlo.Opcode, ops ...*hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, op, f.sh(), ops...)
}

// k is the constant v broadcast to the shape.
func (f *rexpr) k(v float64) *hlo.Instruction {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	if f.t == hlo.F32 {
		b = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	}
	lit, _ := hlo.NewLiteral(hlo.ArrayShape(f.t), b)
	c := f.x.inst(f.in, hlo.OpConstant, hlo.ArrayShape(f.t))
	c.Literal = lit
	if len(f.dims) == 0 {
		return c
	}
	bc := f.x.inst(f.in, hlo.OpBroadcast, f.sh(), c)
	bc.A.HasDimensions = true
	return bc
}

func (f *rexpr) add(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpAdd, a, b) }

func (f *rexpr) sub(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpSubtract, a, b) }

func (f *rexpr) mul(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpMultiply, a, b) }

func (f *rexpr) div(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpDivide, a, b) }

func (f *rexpr) neg(a *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpNegate, a) }

func (f *rexpr) abs(a *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpAbs, a) }

func (f *rexpr) pred(op hlo.Opcode, ops ...*hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, op, hlo.ArrayShape(hlo.PRED, f.dims...), ops...)
}

func (f *rexpr) cmp(a *hlo.Instruction, dir string, b *hlo.Instruction) *hlo.Instruction {
	c := f.pred(hlo.OpCompare, a, b)
	c.A.Direction = dir
	return c
}

func (f *rexpr) and(a, b *hlo.Instruction) *hlo.Instruction { return f.pred(hlo.OpAnd, a, b) }

func (f *rexpr) or(a, b *hlo.Instruction) *hlo.Instruction { return f.pred(hlo.OpOr, a, b) }

func (f *rexpr) not(a *hlo.Instruction) *hlo.Instruction { return f.pred(hlo.OpNot, a) }

func (f *rexpr) isInf(a *hlo.Instruction) *hlo.Instruction {
	return f.cmp(f.abs(a), "EQ", f.k(math.Inf(1)))
}

func (f *rexpr) isNaN(a *hlo.Instruction) *hlo.Instruction { return f.cmp(a, "NE", a) }

func (f *rexpr) finite(a *hlo.Instruction) *hlo.Instruction {
	return f.pred(hlo.OpIsFinite, a)
}

func (f *rexpr) sel(p, a, b *hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, hlo.OpSelect, a.Shape, p, a, b)
}

func (f *rexpr) convert(a *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	return f.x.inst(f.in, hlo.OpConvert, hlo.ArrayShape(t, f.dims...), a)
}

// copySign is |m| with the sign of s.
func (f *rexpr) copySign(m, s *hlo.Instruction) *hlo.Instruction {
	neg := f.cmp(s, "LT", f.k(0))
	negZero := f.and(f.cmp(s, "EQ", f.k(0)), f.cmp(f.div(f.k(1), s), "LT", f.k(0)))
	return f.sel(f.or(neg, negZero), f.neg(f.abs(m)), f.abs(m))
}

// hypot is sqrt(a^2 + b^2) without overflow or underflow: the larger
// magnitude times sqrt(1 + (smaller/larger)^2); infinite when either is,
// NaN when either is NaN and neither infinite.
func (f *rexpr) hypot(a, b *hlo.Instruction) *hlo.Instruction {
	x, y := f.abs(a), f.abs(b)
	hi, lo := f.op(hlo.OpMaximum, x, y), f.op(hlo.OpMinimum, x, y)
	q := f.div(lo, hi)
	r := f.mul(hi, f.op(hlo.OpSqrt, f.add(f.k(1), f.mul(q, q))))
	r = f.sel(f.cmp(hi, "EQ", f.k(0)), f.k(0), r)
	return f.sel(f.or(f.isInf(a), f.isInf(b)), f.k(math.Inf(1)), r)
}

// cmul is (a + bi)(c + di).
func (f *rexpr) cmul(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	return f.sub(f.mul(x[0], y[0]), f.mul(x[1], y[1])), f.add(f.mul(x[0], y[1]), f.mul(x[1], y[0]))
}

// cdiv is (a + bi) / (c + di) by Smith's algorithm (no overflow where the
// quotient is representable), with C99 Annex G's infinities: a nonzero
// over zero is infinite, an infinite over a finite is infinite, a
// finite over an infinite is zero.
func (f *rexpr) cdiv(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b, c, d := x[0], x[1], y[0], y[1]
	big := f.cmp(f.abs(c), "GE", f.abs(d))
	r := f.sel(big, f.div(d, c), f.div(c, d))
	den := f.sel(big, f.add(c, f.mul(d, r)), f.add(d, f.mul(c, r)))
	re = f.div(f.sel(big, f.add(a, f.mul(b, r)), f.add(f.mul(a, r), b)), den)
	im = f.div(f.sel(big, f.sub(b, f.mul(a, r)), f.sub(f.mul(b, r), a)), den)
	inf := f.k(math.Inf(1))
	// Zero denominator, numerator not NaN: infinities signed by a and b.
	zero := f.and(f.and(f.cmp(c, "EQ", f.k(0)), f.cmp(d, "EQ", f.k(0))), f.not(f.and(f.isNaN(a), f.isNaN(b))))
	sc := f.copySign(inf, c)
	re = f.sel(zero, f.mul(sc, a), re)
	im = f.sel(zero, f.mul(sc, b), im)
	// Infinite numerator, finite denominator.
	unit := func(v *hlo.Instruction) *hlo.Instruction { return f.copySign(f.sel(f.isInf(v), f.k(1), f.k(0)), v) }
	infNum := f.and(f.or(f.isInf(a), f.isInf(b)), f.and(f.finite(c), f.finite(d)))
	ua, ub := unit(a), unit(b)
	re = f.sel(infNum, f.mul(inf, f.add(f.mul(ua, c), f.mul(ub, d))), re)
	im = f.sel(infNum, f.mul(inf, f.sub(f.mul(ub, c), f.mul(ua, d))), im)
	// Finite numerator, infinite denominator.
	infDen := f.and(f.or(f.isInf(c), f.isInf(d)), f.and(f.finite(a), f.finite(b)))
	uc, ud := unit(c), unit(d)
	re = f.sel(infDen, f.mul(f.k(0), f.add(f.mul(a, uc), f.mul(b, ud))), re)
	im = f.sel(infDen, f.mul(f.k(0), f.sub(f.mul(b, uc), f.mul(a, ud))), im)
	return re, im
}

// csqrt is the principal square root, its branch cut along the negative
// real axis: t = sqrt((|a| + |z|) / 2) (halved before the sum, which
// cannot then overflow), and sqrt(z) = (t, b/2t) for a >= 0, (|b|/2t,
// copysign(t, b)) below; sqrt(0 + bi) for b = +-0 is itself, and an
// infinite b gives (inf, b).
func (f *rexpr) csqrt(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	t := f.op(hlo.OpSqrt, f.add(f.mul(f.k(0.5), f.abs(a)), f.mul(f.k(0.5), f.hypot(a, b))))
	u := f.div(f.mul(f.k(0.5), f.abs(b)), t)
	pos := f.cmp(a, "GE", f.k(0))
	re = f.sel(pos, t, u)
	im = f.sel(pos, f.copySign(u, b), f.copySign(t, b))
	zero := f.and(f.cmp(a, "EQ", f.k(0)), f.cmp(b, "EQ", f.k(0)))
	re = f.sel(zero, f.k(0), re)
	im = f.sel(zero, b, im)
	bInf := f.isInf(b)
	return f.sel(bInf, f.k(math.Inf(1)), re), f.sel(bInf, b, im)
}

// cexp is e^a (cos b + i sin b); b = 0 gives (e^a, b), so that an
// infinite a does not meet inf * 0.
func (f *rexpr) cexp(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	e := f.op(hlo.OpExp, a)
	noIm := f.cmp(b, "EQ", f.k(0))
	return f.sel(noIm, e, f.mul(e, f.op(hlo.OpCos, b))), f.sel(noIm, b, f.mul(e, f.op(hlo.OpSin, b)))
}

// clog is log|z| + i atan2(b, a).
func (f *rexpr) clog(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	return f.op(hlo.OpLog, f.hypot(z[0], z[1])), f.op(hlo.OpAtan2, z[1], z[0])
}

// coshSinh is cosh b and sinh b, sinh from expm1 so that it keeps its
// accuracy near 0.
func (f *rexpr) coshSinh(b *hlo.Instruction) (ch, sh *hlo.Instruction) {
	half := f.k(0.5)
	ch = f.mul(half, f.add(f.op(hlo.OpExp, b), f.op(hlo.OpExp, f.neg(b))))
	sh = f.mul(half, f.sub(f.op(hlo.OpExpm1, b), f.op(hlo.OpExpm1, f.neg(b))))
	return ch, sh
}

// ctan is tan(a + bi) = (sin 2a + i sinh 2b) / (cos 2a + cosh 2b) with
// the denominator as 2(cos^2 a + sinh^2 b), a sum of squares that does
// not cancel near the poles (a near pi/2, b near 0) as cos 2a + cosh 2b
// does: re = sin a cos a / d and im = tanh b (1 + sin^2 a / d), d =
// cos^2 a + sinh^2 b, which for a large |b| (d infinite) are 0 and +-1.
func (f *rexpr) ctan(a, b *hlo.Instruction) (re, im *hlo.Instruction) {
	s, c := f.op(hlo.OpSin, a), f.op(hlo.OpCos, a)
	_, sh := f.coshSinh(b)
	d := f.add(f.mul(c, c), f.mul(sh, sh))
	re = f.div(f.mul(s, c), d)
	im = f.mul(f.op(hlo.OpTanh, b), f.add(f.k(1), f.div(f.mul(s, s), d)))
	return re, im
}

// cpow is x^y = e^(y log x); 0^y is 1 for y = 0 and 0 otherwise.
func (f *rexpr) cpow(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	lr, li := f.clog(x)
	pr, pi := f.cmul(y, [2]*hlo.Instruction{lr, li})
	re, im = f.cexp([2]*hlo.Instruction{pr, pi})
	xZero := f.and(f.cmp(x[0], "EQ", f.k(0)), f.cmp(x[1], "EQ", f.k(0)))
	yZero := f.and(f.cmp(y[0], "EQ", f.k(0)), f.cmp(y[1], "EQ", f.k(0)))
	one := f.sel(yZero, f.k(1), f.k(0))
	return f.sel(xZero, one, re), f.sel(xZero, f.k(0), im)
}
