package lower

import (
	"encoding/binary"
	"math"

	"github.com/vkjit/vkjit/hlo"
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
		v := roundF8(in, nc, f, r.add)
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
func roundF8(from, x *hlo.Instruction, f hlo.MiniFloatFormat, add func(*hlo.Instruction, hlo.Opcode, hlo.Shape, ...*hlo.Instruction) *hlo.Instruction) *hlo.Instruction {
	sh := x.Shape
	ish := hlo.ArrayShape(hlo.S32, sh.Dims...)
	pred := hlo.ArrayShape(hlo.PRED, sh.Dims...)
	kf := func(v float64) *hlo.Instruction {
		c := add(from, hlo.OpConstant, hlo.ArrayShape(hlo.F32))
		c.Literal, _ = hlo.NewLiteral(c.Shape, binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v))))
		b := add(from, hlo.OpBroadcast, sh, c)
		b.A.HasDimensions = true
		return b
	}
	ki := func(v int64) *hlo.Instruction {
		c := add(from, hlo.OpConstant, hlo.ArrayShape(hlo.S32))
		c.Literal = hlo.ScalarLiteral(hlo.S32, float64(v))
		b := add(from, hlo.OpBroadcast, ish, c)
		b.A.HasDimensions = true
		return b
	}
	cmp := func(a *hlo.Instruction, dir string, b *hlo.Instruction) *hlo.Instruction {
		c := add(from, hlo.OpCompare, pred, a, b)
		c.A.Direction = dir
		return c
	}
	if f.PowersOfTwo {
		return roundPowerOfTwo(from, x, kf, ki, cmp, add)
	}
	a := add(from, hlo.OpAbs, sh, x)
	bits := add(from, hlo.OpBitcastConvert, ish, a)
	e := add(from, hlo.OpSubtract, ish, add(from, hlo.OpShiftRightLogical, ish, bits, ki(23)), ki(127))
	e = add(from, hlo.OpMaximum, ish, e, ki(int64(f.Emin)))
	// scale = 2^(e - man), made from its exponent field.
	field := add(from, hlo.OpShiftLeft, ish, add(from, hlo.OpAdd, ish, e, ki(int64(127-f.Man))), ki(23))
	scale := add(from, hlo.OpBitcastConvert, sh, field)
	r := add(from, hlo.OpMultiply, sh, add(from, hlo.OpRoundNearestEven, sh, add(from, hlo.OpDivide, sh, a, scale)), scale)
	over := kf(math.NaN())
	switch {
	case f.Inf:
		over = kf(math.Inf(1))
	case f.Saturate:
		over = kf(f.Max)
	}
	r = add(from, hlo.OpSelect, sh, cmp(r, "GT", kf(f.Max)), over, r)
	// The sign back: -r where x is negative (a negative zero stays one,
	// except in the fnuz types), NaN where x is.
	neg := cmp(x, "LT", kf(0))
	if f.NegZero {
		negZero := add(from, hlo.OpAnd, pred, cmp(x, "EQ", kf(0)), cmp(add(from, hlo.OpDivide, sh, kf(1), x), "LT", kf(0)))
		neg = add(from, hlo.OpOr, pred, neg, negZero)
	}
	r = add(from, hlo.OpSelect, sh, neg, add(from, hlo.OpNegate, sh, r), r)
	if !f.NegZero {
		r = add(from, hlo.OpSelect, sh, cmp(r, "EQ", kf(0)), kf(0), r)
	}
	nan := kf(math.NaN())
	if f.Saturate {
		nan = kf(0) // no NaN to keep
	}
	return add(from, hlo.OpSelect, sh, cmp(x, "NE", x), nan, r)
}

// roundPowerOfTwo rounds f32 values to e8m0fnu's powers of two as its
// conversion does, to nearest, ties to the even exponent: the f32 bits
// plus half an exponent step, less one unless the exponent is odd, with
// the mantissa cleared (subnormal f32 inputs compared with the midpoint). A negative number or NaN becomes NaN, as does
// what rounds beyond 2^127; zero and what rounds below 2^-127 become
// 2^-127, the smallest value (an f32 subnormal: a device that flushes
// subnormals reads it as zero).
func roundPowerOfTwo(from, x *hlo.Instruction, kf func(float64) *hlo.Instruction, ki func(int64) *hlo.Instruction,
	cmp func(a *hlo.Instruction, dir string, b *hlo.Instruction) *hlo.Instruction,
	add func(*hlo.Instruction, hlo.Opcode, hlo.Shape, ...*hlo.Instruction) *hlo.Instruction) *hlo.Instruction {
	sh := x.Shape
	ish := hlo.ArrayShape(hlo.S32, sh.Dims...)
	bits := add(from, hlo.OpBitcastConvert, ish, add(from, hlo.OpAbs, sh, x))
	odd := add(from, hlo.OpAnd, ish, add(from, hlo.OpShiftRightLogical, ish, bits, ki(23)), ki(1))
	up := add(from, hlo.OpAdd, ish, add(from, hlo.OpAdd, ish, bits, ki(0x3fffff)), odd)
	field := add(from, hlo.OpShiftRightLogical, ish, up, ki(23))
	// Below 2^-126 the f32 is subnormal and its bits are not its log:
	// 2^-126 (field 1) above the midpoint 1.5 * 2^-127, else 2^-127 (a
	// tie goes to the even field, 0).
	sub := add(from, hlo.OpSelect, ish, cmp(bits, "GT", ki(0x600000)), ki(1), ki(0))
	field = add(from, hlo.OpSelect, ish, cmp(bits, "LT", ki(0x800000)), sub, field)
	r := add(from, hlo.OpBitcastConvert, sh, add(from, hlo.OpShiftLeft, ish, field, ki(23)))
	r = add(from, hlo.OpSelect, sh, cmp(field, "EQ", ki(0)), kf(0x1p-127), r)
	bad := add(from, hlo.OpOr, hlo.ArrayShape(hlo.PRED, sh.Dims...), cmp(x, "LT", kf(0)), cmp(field, "GE", ki(255)))
	bad = add(from, hlo.OpOr, bad.Shape, bad, cmp(x, "NE", x))
	return add(from, hlo.OpSelect, sh, bad, kf(math.NaN()), r)
}
