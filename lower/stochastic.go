package lower

import (
	"math"
	"strconv"

	"github.com/vkjit/vkjit/hlo"
)

// stochasticConvert writes stochastic-convert (a float to a signed
// integer, rounded up or down at random) out op for op as XLA's
// StochasticConvertDecomposer does: |x|'s fraction, scaled by 2^bits of
// the random value (f16 in f32, whose range holds 2^16), is compared with
// the random bits; the truncated magnitude goes up by one where the
// bits are below it, takes x's sign, and saturates at the type's limits
// (those limits converted to x's type, as XLA's constants are).
func (b *expander) stochasticConvert(in *hlo.Instruction) (*hlo.Instruction, error) {
	x, random := in.Operands[0], in.Operands[1]
	ft, rt, to := x.Shape.Elem, random.Shape.Elem, in.Shape.Elem
	dims := x.Shape.Dims
	like := func(t hlo.ElementType, v float64) *hlo.Instruction {
		c := b.inst(hlo.OpConstant, hlo.ArrayShape(t))
		c.Literal = hlo.ScalarLiteral(t, v)
		return b.bcast(c, dims...)
	}
	// The type's limits, exact as integers and rounded to x's type
	// (2^31 - 1 is 2^31 in f32, -2^31 is -inf in f16).
	lo, hi := int64(-1)<<(to.Bits()-1), int64(1)<<(to.Bits()-1)-1
	limit := func(v int64) *hlo.Instruction {
		c := b.inst(hlo.OpConstant, hlo.ArrayShape(to))
		c.Literal, _ = hlo.ParseLiteral(strconv.FormatInt(v, 10), hlo.ArrayShape(to))
		return b.bcast(c, dims...)
	}
	un := func(op hlo.Opcode, v *hlo.Instruction) *hlo.Instruction { return b.inst(op, v.Shape, v) }
	bin := func(op hlo.Opcode, p, q *hlo.Instruction) *hlo.Instruction { return b.inst(op, p.Shape, p, q) }
	neg := b.compare(un(hlo.OpSign, x), like(ft, 0), "LT")
	mag := un(hlo.OpAbs, x)
	whole := un(hlo.OpFloor, mag)
	wide := ft // the fraction's type: f16 cannot hold 2^16
	if ft == hlo.F16 {
		wide = hlo.F32
	}
	frac := b.convert(bin(hlo.OpSubtract, mag, whole), wide)
	fixed := bin(hlo.OpMultiply, frac, like(frac.Shape.Elem, math.Ldexp(1, rt.Bits())))
	up := b.compare(random, b.convert(fixed, rt), "LT")
	t := b.convert(whole, to)
	t = b.sel(up, bin(hlo.OpAdd, t, like(to, 1)), t)
	r := b.sel(neg, un(hlo.OpNegate, t), t)
	r = b.sel(b.compare(x, like(ft, float64(lo)), "LE"), limit(lo), r)
	r = b.sel(b.compare(x, like(ft, float64(hi)), "GE"), limit(hi), r)
	return r, nil
}
