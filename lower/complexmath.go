package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// rexpr builds real elementwise ops of one shape for a complex op: the
// parts' arithmetic below over formula's elementwise ops.
type rexpr struct{ *formula.Builder }

// expr is a builder of real ops of type t and dimensions dims that help
// compute in; their errors are the pass's.
func (x *cx) expr(in *hlo.Instruction, t hlo.ElementType, dims []int64) *rexpr {
	place := func(n *hlo.Instruction) *hlo.Instruction { return x.place(in, n) }
	return &rexpr{formula.New(place, hlo.ArrayShape(t, dims...), &x.err)}
}

// cmul is (a + bi)(c + di) as XLA computes it: its elemental emitter
// writes ac - bd and ad + bc, and LLVM fuses a multiply into each on
// hardware with a fused multiply-add (x86 CPUs since Haswell, every GPU),
// which leaves fma(a, c, -bd) and fma(b, c, ad). The suite's expected
// values (JAX on XLA's CPU) are these bit for bit (docs/ACCURACY.md).
func (f *rexpr) cmul(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b, c, d := x[0], x[1], y[0], y[1]
	return f.FMA(a, c, f.Neg(f.Mul(b, d))), f.FMA(b, c, f.Mul(a, d))
}

// cmulRounded is (a + bi)(c + di) with each product and sum rounded on
// its own, ac - bd and ad + bc: the FFT's twiddle products, as ducc
// computes them.
func (f *rexpr) cmulRounded(x, y [2]*hlo.Instruction) [2]*hlo.Instruction {
	a, b, c, d := x[0], x[1], y[0], y[1]
	return [2]*hlo.Instruction{f.Sub(f.Mul(a, c), f.Mul(b, d)), f.Add(f.Mul(a, d), f.Mul(b, c))}
}

// cdiv is (a + bi) / (c + di) by Smith's algorithm (no overflow where the
// quotient is representable), and where that gives NaN in both parts,
// XLA's corner cases in its order: a zero denominator (the numerator not
// all NaN) gives infinities signed by c, a and b; an infinite numerator
// over a finite denominator infinities; a finite numerator over an
// infinite denominator zeros.
func (f *rexpr) cdiv(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b, c, d := x[0], x[1], y[0], y[1]
	big := f.Cmp(f.Abs(c), "GE", f.Abs(d))
	r := f.Sel(big, f.Div(d, c), f.Div(c, d))
	den := f.Sel(big, f.Add(c, f.Mul(d, r)), f.Add(d, f.Mul(c, r)))
	re = f.Div(f.Sel(big, f.Add(a, f.Mul(b, r)), f.Add(f.Mul(a, r), b)), den)
	im = f.Div(f.Sel(big, f.Sub(b, f.Mul(a, r)), f.Sub(f.Mul(b, r), a)), den)
	nan := f.And(f.IsNaN(re), f.IsNaN(im))
	inf := f.K(math.Inf(1))
	unit := func(v *hlo.Instruction) *hlo.Instruction { return f.CopySign(f.Sel(f.IsInf(v), f.K(1), f.K(0)), v) }
	// Applied from the last case to the first, so that the first wins.
	infDen := f.And(f.Or(f.IsInf(c), f.IsInf(d)), f.And(f.Finite(a), f.Finite(b)))
	uc, ud := unit(c), unit(d)
	re = f.Sel(f.And(nan, infDen), f.Mul(f.K(0), f.Add(f.Mul(a, uc), f.Mul(b, ud))), re)
	im = f.Sel(f.And(nan, infDen), f.Mul(f.K(0), f.Sub(f.Mul(b, uc), f.Mul(a, ud))), im)
	infNum := f.And(f.Or(f.IsInf(a), f.IsInf(b)), f.And(f.Finite(c), f.Finite(d)))
	ua, ub := unit(a), unit(b)
	re = f.Sel(f.And(nan, infNum), f.Mul(inf, f.Add(f.Mul(ua, c), f.Mul(ub, d))), re)
	im = f.Sel(f.And(nan, infNum), f.Mul(inf, f.Sub(f.Mul(ub, c), f.Mul(ua, d))), im)
	zero := f.And(f.And(f.Cmp(c, "EQ", f.K(0)), f.Cmp(d, "EQ", f.K(0))), f.Not(f.And(f.IsNaN(a), f.IsNaN(b))))
	sc := f.CopySign(inf, c)
	re = f.Sel(f.And(nan, zero), f.Mul(sc, a), re)
	im = f.Sel(f.And(nan, zero), f.Mul(sc, b), im)
	return re, im
}

// csqrt is the principal square root, its branch cut along the negative
// real axis: t = sqrt((|a| + |z|) / 2) (halved before the sum, which
// cannot then overflow), and sqrt(z) = (t, b/2t) for a >= 0, (|b|/2t,
// copysign(t, b)) below; sqrt(0 + bi) for b = +-0 is itself, and an
// infinite b gives (inf, b).
func (f *rexpr) csqrt(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	t := f.Op(hlo.OpSqrt, f.Add(f.Mul(f.K(0.5), f.Abs(a)), f.Mul(f.K(0.5), f.Hypot(a, b))))
	u := f.Div(f.Mul(f.K(0.5), f.Abs(b)), t)
	pos := f.Cmp(a, "GE", f.K(0))
	re = f.Sel(pos, t, u)
	im = f.Sel(pos, f.CopySign(u, b), f.CopySign(t, b))
	zero := f.And(f.Cmp(a, "EQ", f.K(0)), f.Cmp(b, "EQ", f.K(0)))
	re = f.Sel(zero, f.K(0), re)
	im = f.Sel(zero, b, im)
	bInf := f.IsInf(b)
	return f.Sel(bInf, f.K(math.Inf(1)), re), f.Sel(bInf, b, im)
}

// cexp is e^a (cos b + i sin b); b = 0 gives (e^a, b), so that an
// infinite a does not meet inf * 0.
func (f *rexpr) cexp(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	e := f.Op(hlo.OpExp, a)
	noIm := f.Cmp(b, "EQ", f.K(0))
	return f.Sel(noIm, e, f.Mul(e, f.Op(hlo.OpCos, b))), f.Sel(noIm, b, f.Mul(e, f.Op(hlo.OpSin, b)))
}

// clog is log|z| + i atan2(b, a).
func (f *rexpr) clog(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	return f.Op(hlo.OpLog, f.Hypot(z[0], z[1])), f.Op(hlo.OpAtan2, z[1], z[0])
}

// coshSinh is cosh b and sinh b, sinh from expm1 so that it keeps its
// accuracy near 0.
func (f *rexpr) coshSinh(b *hlo.Instruction) (ch, sh *hlo.Instruction) {
	half := f.K(0.5)
	ch = f.Mul(half, f.Add(f.Op(hlo.OpExp, b), f.Op(hlo.OpExp, f.Neg(b))))
	sh = f.Mul(half, f.Sub(f.Op(hlo.OpExpm1, b), f.Op(hlo.OpExpm1, f.Neg(b))))
	return ch, sh
}

// ctan is tan(a + bi) = (sin 2a + i sinh 2b) / (cos 2a + cosh 2b) with
// the denominator as 2(cos^2 a + sinh^2 b), a sum of squares that does
// not cancel near the poles (a near pi/2, b near 0) as cos 2a + cosh 2b
// does: re = sin a cos a / d and im = tanh b (1 + sin^2 a / d), d =
// cos^2 a + sinh^2 b, which for a large |b| (d infinite) are 0 and +-1.
// XLA's corner cases (its elemental emitter's tanh, of which tan is
// -i tanh(iz)): an infinite b gives (0, +-1) whatever a is, infinite or
// NaN too, and a zero a gives a real part of +0, NaN b or not.
func (f *rexpr) ctan(a, b *hlo.Instruction) (re, im *hlo.Instruction) {
	s, c := f.Op(hlo.OpSin, a), f.Op(hlo.OpCos, a)
	_, sh := f.coshSinh(b)
	d := f.Add(f.Mul(c, c), f.Mul(sh, sh))
	re = f.Div(f.Mul(s, c), d)
	im = f.Mul(f.Op(hlo.OpTanh, b), f.Add(f.K(1), f.Div(f.Mul(s, s), d)))
	bInf := f.IsInf(b)
	re = f.Sel(f.Or(f.Cmp(a, "EQ", f.K(0)), f.And(bInf, f.Not(f.Finite(a)))), f.K(0), re)
	return re, f.Sel(bInf, f.CopySign(f.K(1), b), im)
}

// cpow is x^y as XLA's elemental emitter computes it: |x|^c e^(-d arg x)
// (cos q + i sin q), q = c arg x + d ln|x| for y = c + di (the real power
// is accurate, so only the exponential's and the angle's roundings grow
// with y), and its cases, each over the ones before: 0^c is 1 for c = 0
// and 0 for c > 0; x^0 is 1; 1^y is 1; inf^c is inf for c > 0 and 0 for
// c < 0.
func (f *rexpr) cpow(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b, c, d := x[0], x[1], y[0], y[1]
	abs := f.Hypot(a, b)
	arg := f.Op(hlo.OpAtan2, b, a)
	dArg := f.Mul(f.Neg(d), arg)
	coeff := f.Mul(f.Op(hlo.OpPower, abs, c), f.Op(hlo.OpExp, dArg))
	// Where that product leaves the range though the value is within it
	// (a power past the largest float times an exponential below 1, or
	// the reverse; inf times 0 is NaN: FuzzPrograms seed 1753), the
	// square of the halves' product, |x|^(c/2) e^(-d arg/2), whose
	// factors are within range where the value is.
	half := f.K(0.5)
	h := f.Mul(f.Op(hlo.OpPower, abs, f.Mul(c, half)), f.Op(hlo.OpExp, f.Mul(dArg, half)))
	coeff = f.Sel(f.And(f.Finite(coeff), f.Cmp(coeff, "NE", f.K(0))), coeff, f.Mul(h, h))
	q := f.Add(f.Mul(c, arg), f.Mul(d, f.Op(hlo.OpLog, abs)))
	re, im = f.Mul(coeff, f.Op(hlo.OpCos, q)), f.Mul(coeff, f.Op(hlo.OpSin, q))
	zero, one, inf := f.K(0), f.K(1), f.K(math.Inf(1))
	eq := func(v, w *hlo.Instruction) *hlo.Instruction { return f.Cmp(v, "EQ", w) }
	set := func(cond, r, i *hlo.Instruction) { re, im = f.Sel(cond, r, re), f.Sel(cond, i, im) }
	realY := eq(d, zero)
	set(f.And(f.And(eq(abs, zero), realY), f.Cmp(zero, "LE", c)), f.Sel(eq(c, zero), one, zero), zero)
	set(f.And(eq(c, zero), realY), one, zero)
	set(f.And(eq(a, one), eq(b, zero)), one, zero)
	infX := f.And(f.And(eq(a, inf), eq(b, zero)), realY)
	set(f.And(infX, f.Cmp(c, "GT", zero)), inf, zero)
	set(f.And(infX, f.Cmp(c, "LT", zero)), zero, zero)
	return re, im
}
