package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/hloexpr"
)

// The f8 types compute in f32, as XLA computes them: widenF8 retypes
// every f8 value as f32 and rounds each op's result to the f8 type's grid
// (to nearest, ties to even, subnormals included), overflow becoming the
// type's infinity or, for the finite types, NaN (the largest value, for
// the f4 and f6 types, which have no NaN), as XLA's conversion does; the
// f6 and f4 types go the same way. Buffers hold the f32 values; the runtime decodes f8 arguments
// and encodes f8 results on the host (ToBuffer, FromBuffer), exactly,
// since every value is on the grid.

// isF8 reports the small float types widen f8 computes in f32: the f8
// types, and the f6 and f4 ones too.
func isF8(t hlo.ElementType) bool { return hlo.IsMiniFloat(t) }

func widenF8(s *state) error {
	r := &retyper{
		needs: func(c *hlo.Computation) bool { return touches(c, isF8, nil) },
		shape: func(sh hlo.Shape) hlo.Shape {
			return mapLeaves(sh, func(l hlo.Shape) hlo.Shape {
				if isF8(l.Elem) {
					l.Elem = hlo.F32
				}
				return l
			})
		},
		rule: widenF8Op,
		tag:  "f",
	}
	return r.run(s)
}

// widenF8Op computes in in f32 and rounds an arithmetic result to its
// f8 type's grid.
func widenF8Op(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	if in.Op == hlo.OpBitcastConvert && (anyLeaf(in.Shape, isF8) || anyLeaf(in.Operands[0].Shape, isF8)) {
		return nil, in.Errorf("bitcast-convert of f8 types is not supported on the device yet")
	}
	nc, err := r.copy(in, ops)
	if err != nil {
		return nil, err
	}
	if in.Op == hlo.OpConstant && isF8(in.Shape.Elem) {
		lit, err := hlo.NewLiteral(nc.Shape, ToBuffer(in.Shape.Elem, in.Literal.Data))
		if err != nil {
			return nil, in.Errorf("%v", err)
		}
		nc.Literal = lit
	}
	if in.Shape.IsArray() && isF8(in.Shape.Elem) && in.Op != hlo.OpConstant && in.Op != hlo.OpParameter &&
		(in.Op.Class() == hlo.ClassUnary || in.Op.Class() == hlo.ClassBinary || in.Op.Class() == hlo.ClassTernary ||
			in.Op == hlo.OpDot || in.Op == hlo.OpConvolution || in.Op == hlo.OpReduce || in.Op == hlo.OpReduceWindow) {
		f, _ := hlo.MiniFloatFormatOf(in.Shape.Elem)
		var err error
		v := roundF8(r.expr(in, nc.Shape, &err), nc, f)
		if err != nil {
			return nil, in.Errorf("rounding to %s: %v", in.Shape.Elem, err)
		}
		nc.Name = in.Name + ".wide"
		v.Name = in.Name
		return v, nil
	}
	return nc, nil
}

// roundF8 rounds f32 values x to f8 format f: with e the exponent of |x|
// (at least the smallest normal one), |x| / 2^(e - man) rounded to an
// integer, ties to even, and scaled back; beyond the largest finite value
// infinity or NaN; the sign kept, except on the zero of the fnuz types.
func roundF8(e *hloexpr.Builder, x *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
	if f.PowersOfTwo {
		return roundPowerOfTwo(e, x)
	}
	ie := e.With(hlo.S32)
	a := e.Abs(x)
	bits := ie.Make(hlo.OpBitcastConvert, ie.Shape(), a)
	ex := ie.Sub(ie.Op(hlo.OpShiftRightLogical, bits, ie.K(23)), ie.K(127))
	ex = ie.Max(ex, ie.K(float64(f.Emin)))
	// scale = 2^(e - man), made from its exponent field.
	field := ie.Op(hlo.OpShiftLeft, ie.Add(ex, ie.K(float64(127-f.Man))), ie.K(23))
	scale := e.Make(hlo.OpBitcastConvert, e.Shape(), field)
	r := e.Mul(e.Op(hlo.OpRoundNearestEven, e.Div(a, scale)), scale)
	over := e.K(math.NaN())
	switch {
	case f.Inf:
		over = e.K(math.Inf(1))
	case f.Saturate:
		over = e.K(f.Max)
	}
	r = e.Sel(e.Cmp(r, "GT", e.K(f.Max)), over, r)
	// The sign back: x's, a negative zero's included, except in the
	// fnuz types, whose zero has none.
	if f.NegZero {
		r = e.CopySign(r, x)
	} else {
		r = e.Sel(e.Cmp(x, "LT", e.K(0)), e.Neg(r), r)
		r = e.Sel(e.Cmp(r, "EQ", e.K(0)), e.K(0), r)
	}
	nan := e.K(math.NaN())
	if f.Saturate {
		nan = e.K(0) // no NaN to keep
	}
	return e.Sel(e.IsNaN(x), nan, r)
}

// roundPowerOfTwo rounds f32 values to e8m0fnu's powers of two as its
// conversion does, to nearest, ties to the even exponent: the f32 bits
// plus half an exponent step, less one unless the exponent is odd, with
// the mantissa cleared (subnormal f32 inputs compared with the midpoint).
// A negative number or NaN becomes NaN, as does what rounds beyond
// 2^127; zero and what rounds below 2^-127 become 2^-127, the smallest
// value (an f32 subnormal: a device that flushes subnormals reads it as
// zero).
func roundPowerOfTwo(e *hloexpr.Builder, x *hlo.Instruction) *hlo.Instruction {
	ie := e.With(hlo.S32)
	bits := ie.Make(hlo.OpBitcastConvert, ie.Shape(), e.Abs(x))
	odd := ie.And(ie.Op(hlo.OpShiftRightLogical, bits, ie.K(23)), ie.K(1))
	up := ie.Add(ie.Add(bits, ie.K(0x3fffff)), odd)
	field := ie.Op(hlo.OpShiftRightLogical, up, ie.K(23))
	// Below 2^-126 the f32 is subnormal and its bits are not its log:
	// 2^-126 (field 1) above the midpoint 1.5 * 2^-127, else 2^-127 (a
	// tie goes to the even field, 0).
	sub := ie.Sel(ie.Cmp(bits, "GT", ie.K(0x600000)), ie.K(1), ie.K(0))
	field = ie.Sel(ie.Cmp(bits, "LT", ie.K(0x800000)), sub, field)
	r := e.Make(hlo.OpBitcastConvert, e.Shape(), ie.Op(hlo.OpShiftLeft, field, ie.K(23)))
	r = e.Sel(ie.Cmp(field, "EQ", ie.K(0)), e.K(0x1p-127), r)
	bad := e.Or(e.Cmp(x, "LT", e.K(0)), ie.Cmp(field, "GE", ie.K(255)))
	bad = e.Or(bad, e.IsNaN(x))
	return e.Sel(bad, e.K(math.NaN()), r)
}
