package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
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
	if in.Op == hlo.OpBitcastConvert && (isF8(in.Shape.Elem) || isF8(in.Operands[0].Shape.Elem)) {
		return bitcastF8(r, in, ops[0])
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
	// Copies and selects give one of their operands, on the grid already
	// (and a NaN with its code: markedNaN).
	if in.Shape.IsArray() && isF8(in.Shape.Elem) && in.Op != hlo.OpConstant && in.Op != hlo.OpParameter &&
		in.Op != hlo.OpCopy && in.Op != hlo.OpSelect &&
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
func roundF8(e *formula.Builder, x *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
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
func roundPowerOfTwo(e *formula.Builder, x *hlo.Instruction) *hlo.Instruction {
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

// A NaN of a small float type keeps its code on the device: decoding
// (ToBuffer, and bitcasts to the type) makes it the f32 quiet NaN with
// nanMark set and the code in the low byte (and the sign of a code that
// has one), which copies and data movement carry as they are, and
// encoding (FromBuffer, bitcasts from the type) gives that code back;
// any other NaN, such as arithmetic makes, encodes as the type's NaN.
// XLA's bitcast of an f8 NaN reads its bits; so does vkjit's.
const (
	nanMark     = 0x7fc00100
	nanMarkMask = 0x003fff00 // the bits that hold the mark (the code aside)
)

// markedNaN is the f32 bits that carry NaN code c of format f.
func markedNaN(f hlo.MiniFloatFormat, c uint32) uint32 {
	b := nanMark | c&0xff
	if c&f.SignBit != 0 {
		b |= 0x80000000
	}
	return b
}

// encodeMini is the code (u32, in the low f.Bits bits) of f32 values x,
// each on format f's grid.
func encodeMini(e *formula.Builder, x *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
	ue := e.With(hlo.U32)
	bits := ue.Make(hlo.OpBitcastConvert, ue.Shape(), x)
	a := ue.And(bits, ue.Bits(0x7fffffff))
	var code *hlo.Instruction
	if f.PowersOfTwo {
		code = ue.Op(hlo.OpShiftRightLogical, a, ue.Bits(23)) // 2^-127, f32's 0x400000, is code 0
	} else {
		// Normal: the f32 exponent and top mantissa bits rebased;
		// subnormal: |x| in units of the smallest subnormal.
		normal := ue.Sub(ue.Op(hlo.OpShiftRightLogical, a, ue.Bits(uint64(23-f.Man))), ue.Bits(uint64(127-f.Bias)<<f.Man))
		abs := e.Make(hlo.OpBitcastConvert, e.Shape(), a)
		sub := e.Convert(e.Mul(abs, e.K(math.Ldexp(1, f.Man-f.Emin))), hlo.U32)
		code = ue.Sel(ue.Cmp(a, "GE", ue.Bits(uint64(127+f.Emin)<<23)), normal, sub)
		if f.Inf {
			code = ue.Sel(ue.Cmp(a, "EQ", ue.Bits(0x7f800000)), ue.Bits(uint64(1<<f.Exp-1)<<f.Man), code)
		}
		neg := ue.Cmp(bits, "GE", ue.Bits(0x80000000))
		if !f.NegZero {
			neg = ue.And(neg, ue.Cmp(a, "NE", ue.Bits(0))) // no negative zero
		}
		code = ue.Or(code, ue.Sel(neg, ue.Bits(uint64(f.SignBit)), ue.Bits(0)))
	}
	if f.Saturate {
		return code // no NaN on the grid
	}
	marked := ue.Cmp(ue.And(bits, ue.Bits(nanMarkMask)), "EQ", ue.Bits(nanMark&nanMarkMask))
	nan := ue.Sel(marked, ue.And(bits, ue.Bits(0xff)), ue.Bits(uint64(f.NaN)))
	return ue.Sel(ue.Cmp(a, "GT", ue.Bits(0x7f800000)), nan, code)
}

// decodeMini is the f32 value of codes c (u32) of format f, a NaN code
// marked as markedNaN says.
func decodeMini(ue *formula.Builder, c *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
	e := ue.With(hlo.F32)
	c = ue.And(c, ue.Bits(1<<f.Bits-1))
	var bits, nan *hlo.Instruction
	if f.PowersOfTwo {
		bits = ue.Sel(ue.Cmp(c, "EQ", ue.Bits(0)), ue.Bits(0x400000), ue.Op(hlo.OpShiftLeft, c, ue.Bits(23)))
		nan = ue.Cmp(c, "EQ", ue.Bits(0xff))
	} else {
		mag := ue.And(c, ue.Bits(uint64(f.SignBit-1)))
		ex := ue.Op(hlo.OpShiftRightLogical, mag, ue.Bits(uint64(f.Man)))
		m := ue.And(mag, ue.Bits(1<<f.Man-1))
		normal := ue.Add(ue.Op(hlo.OpShiftLeft, mag, ue.Bits(uint64(23-f.Man))), ue.Bits(uint64(127-f.Bias)<<23))
		subF := e.Mul(e.Make(hlo.OpConvert, e.Shape(), m), e.K(math.Ldexp(1, f.Emin-f.Man)))
		sub := ue.Make(hlo.OpBitcastConvert, ue.Shape(), subF)
		bits = ue.Sel(ue.Cmp(ex, "EQ", ue.Bits(0)), sub, normal)
		allOnes := ue.Cmp(ex, "EQ", ue.Bits(1<<f.Exp-1))
		switch {
		case f.Inf:
			bits = ue.Sel(allOnes, ue.Bits(0x7f800000), bits)
			nan = ue.And(allOnes, ue.Cmp(m, "NE", ue.Bits(0)))
		case f.Saturate:
		case !f.NegZero: // fnuz: the code of a negative zero is NaN
			nan = ue.Cmp(c, "EQ", ue.Bits(uint64(f.NaN)))
		default: // fn: the magnitude all ones
			nan = ue.Cmp(mag, "EQ", ue.Bits(uint64(f.SignBit-1)))
		}
		neg := ue.Cmp(ue.And(c, ue.Bits(uint64(f.SignBit))), "NE", ue.Bits(0))
		signed := ue.Sel(neg, ue.Bits(0x80000000), ue.Bits(0))
		bits = ue.Or(bits, signed)
		if nan != nil {
			marked := ue.Or(ue.Or(ue.Bits(nanMark), c), signed)
			bits = ue.Sel(nan, marked, bits)
		}
		return e.Make(hlo.OpBitcastConvert, e.Shape(), bits)
	}
	bits = ue.Sel(nan, ue.Or(ue.Bits(nanMark), c), bits)
	return e.Make(hlo.OpBitcastConvert, e.Shape(), bits)
}

// bitcastF8 rewrites a bitcast-convert from or to an 8-bit small float
// type (expand sub-byte bitcasts has taken the narrower ones apart) on
// x, in's operand retyped: the f8 side's codes from or to its f32 values
// (encodeMini, decodeMini), through a bitcast to or from u8 codes where
// the other side is wider, which split bitcast widths takes on.
func bitcastF8(r *retyping, in, x *hlo.Instruction) (*hlo.Instruction, error) {
	from, to := in.Operands[0].Shape.Elem, in.Shape.Elem
	if from.Bits()%8 != 0 || to.Bits()%8 != 0 || from == hlo.PRED || to == hlo.PRED {
		return nil, in.Errorf("bitcast-convert from %s to %s is not supported on the device yet", from, to)
	}
	var err error
	// codes: the f8 side's codes as u32, in the f8 side's dimensions.
	dims := in.Shape.Dims
	if isF8(from) {
		dims = in.Operands[0].Shape.Dims
	}
	ue := r.expr(in, hlo.ArrayShape(hlo.U32, dims...), &err)
	var codes *hlo.Instruction
	switch {
	case isF8(from):
		f, _ := hlo.MiniFloatFormatOf(from)
		codes = encodeMini(r.expr(in, x.Shape, &err), x, f)
	default: // 8 bits or wider, to u8 codes
		codes = ue.Convert(ue.Make(hlo.OpBitcastConvert, hlo.ArrayShape(hlo.U8, dims...), x), hlo.U32)
	}
	var v *hlo.Instruction
	switch {
	case isF8(to):
		f, _ := hlo.MiniFloatFormatOf(to)
		v = decodeMini(ue, codes, f)
	case to.Bits() == 8:
		v = ue.Convert(codes, to) // u32 to an 8-bit integer keeps the low byte
	default: // u8 codes [..., r] to the wider type
		v = ue.Make(hlo.OpBitcastConvert, in.Shape, ue.Convert(codes, hlo.U8))
	}
	if err != nil {
		return nil, in.Errorf("bitcast-convert from %s to %s: %v", from, to, err)
	}
	v.Name = in.Name
	return v, nil
}
