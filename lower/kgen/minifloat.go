package kgen

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// The small float types (f8, f6, f4: hlo.IsMiniFloat) are held in f32
// registers, on the type's grid (normalize rounds a result of the type:
// roundMini). Lower's widen f8 computes their arithmetic in f32 and
// rounds each result by a conversion to the type and back; only an
// entry's parameters and results keep the type, stored as their codes, a
// byte each (StorageType: u8, or u32 without 8-bit storage), as the host
// holds them. A load of such an element decodes its code to the f32
// value (decodeMini) and a store encodes the f32 value, which is on the
// grid, back to its code (encodeMini): a quarter of the memory and of
// the traffic f32 buffers took, and no conversion on the host.
//
// A NaN keeps its code: decoding makes it the f32 quiet NaN with NaNMark
// set and the code in the low byte (and the sign of a code that has
// one), which copies and data movement carry as they are, and encoding
// gives that code back; any other NaN, such as arithmetic makes, encodes
// as the type's NaN, with its sign where the type's NaNs have one (as
// hlo's encoding and XLA's conversions keep it), and rounding makes it
// that NaN in the register too (typeNaN). XLA's bitcast of an f8 NaN
// reads its bits; so does vkjit's.
const (
	NaNMark     = 0x7fc00100
	NaNMarkMask = 0x003fff00 // the bits that hold the mark (the code aside)
)

// MarkedNaN is the f32 bits that carry NaN code c of format f.
func MarkedNaN(f hlo.MiniFloatFormat, c uint32) uint32 {
	b := NaNMark | c&0xff
	if c&f.SignBit != 0 {
		b |= 0x80000000
	}
	return b
}

func isMini(t hlo.ElementType) bool { return hlo.IsMiniFloat(t) }

// decodeMini is the f32 value of code c (a u32) of small float type t.
func (k *kernelBuilder) decodeMini(c spirv.ID, t hlo.ElementType) spirv.ID {
	f, _ := hlo.MiniFloatFormatOf(t)
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	and := func(a spirv.ID, m uint32) spirv.ID { return k.uop(spirv.OpBitwiseAnd, a, k.cu32(m)) }
	eq := func(a spirv.ID, v uint32) spirv.ID { return k.boolOp(spirv.OpIEqual, a, k.cu32(v)) }
	c = and(c, 1<<f.Bits-1)
	var bits, nan spirv.ID
	if f.PowersOfTwo {
		// 2^(c-127): the f32 exponent field; code 0 is the f32 subnormal 2^-127.
		bits = k.selU32(eq(c, 0), k.cu32(0x400000), k.uop(spirv.OpShiftLeftLogical, c, k.cu32(23)))
		nan = eq(c, 0xff)
		return k.f.Bitcast(f32, k.selU32(nan, k.uop(spirv.OpBitwiseOr, c, k.cu32(NaNMark)), bits))
	}
	mag := and(c, f.SignBit-1)
	ex := k.uop(spirv.OpShiftRightLogical, mag, k.cu32(uint32(f.Man)))
	m := and(mag, 1<<f.Man-1)
	// Normal: the exponent rebased and the mantissa moved up in place;
	// subnormal: m units of the smallest subnormal, exact in f32.
	normal := k.uop(spirv.OpIAdd, k.uop(spirv.OpShiftLeftLogical, mag, k.cu32(uint32(23-f.Man))), k.cu32(uint32(127-f.Bias)<<23))
	subF := k.f.FMul(f32, k.f.Apply(spirv.OpConvertUToF, f32, m), k.b.ConstF32(float32(math.Ldexp(1, f.Emin-f.Man))))
	bits = k.selU32(eq(ex, 0), k.f.Bitcast(u32, subF), normal)
	allOnes := eq(ex, 1<<f.Exp-1)
	switch {
	case f.Inf:
		bits = k.selU32(allOnes, k.cu32(0x7f800000), bits)
		nan = k.boolOp(spirv.OpLogicalAnd, allOnes, k.boolOp(spirv.OpINotEqual, m, k.cu32(0)))
	case f.Saturate: // no NaN
	case !f.NegZero: // fnuz: the code of a negative zero is NaN
		nan = eq(c, f.NaN)
	default: // fn: the magnitude all ones
		nan = eq(mag, f.SignBit-1)
	}
	signed := k.codeSign(c, f)
	bits = k.uop(spirv.OpBitwiseOr, bits, signed)
	if nan != 0 {
		bits = k.selU32(nan, k.markedBits(c, signed), bits)
	}
	return k.f.Bitcast(f32, bits)
}

// codeSign is the f32 sign bit of code c (a u32) of format f: 0 where
// the format has no sign (e8m0fnu).
func (k *kernelBuilder) codeSign(c spirv.ID, f hlo.MiniFloatFormat) spirv.ID {
	if f.SignBit == 0 {
		return k.cu32(0)
	}
	has := k.boolOp(spirv.OpINotEqual, k.uop(spirv.OpBitwiseAnd, c, k.cu32(f.SignBit)), k.cu32(0))
	return k.selU32(has, k.cu32(0x80000000), k.cu32(0))
}

// markedBits is MarkedNaN in the kernel: the f32 bits that carry NaN
// code c (a u32), signed (codeSign).
func (k *kernelBuilder) markedBits(c, signed spirv.ID) spirv.ID {
	return k.uop(spirv.OpBitwiseOr, k.uop(spirv.OpBitwiseOr, k.cu32(NaNMark), c), signed)
}

// encodeMini is the code (a u32, in the low bits) of f32 value x of
// small float type t, which is on the type's grid (normalize rounds
// every value of the type to it: roundMini).
func (k *kernelBuilder) encodeMini(x spirv.ID, t hlo.ElementType) spirv.ID {
	f, _ := hlo.MiniFloatFormatOf(t)
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	bits := k.f.Bitcast(u32, x)
	a := k.uop(spirv.OpBitwiseAnd, bits, k.cu32(0x7fffffff))
	var code spirv.ID
	if f.PowersOfTwo {
		code = k.uop(spirv.OpShiftRightLogical, a, k.cu32(23)) // 2^-127, f32's 0x400000, is code 0
	} else {
		normal := k.uop(spirv.OpISub, k.uop(spirv.OpShiftRightLogical, a, k.cu32(uint32(23-f.Man))), k.cu32(uint32(127-f.Bias)<<f.Man))
		abs := k.f.Bitcast(f32, a)
		sub := k.f.Apply(spirv.OpConvertFToU, u32, k.f.FMul(f32, abs, k.b.ConstF32(float32(math.Ldexp(1, f.Man-f.Emin)))))
		code = k.selU32(k.boolOp(spirv.OpUGreaterThanEqual, a, k.cu32(uint32(127+f.Emin)<<23)), normal, sub)
		if f.Inf {
			code = k.selU32(k.boolOp(spirv.OpIEqual, a, k.cu32(0x7f800000)), k.cu32(uint32(1<<f.Exp-1)<<f.Man), code)
		}
		neg := k.boolOp(spirv.OpUGreaterThanEqual, bits, k.cu32(0x80000000))
		if !f.NegZero { // no negative zero
			neg = k.boolOp(spirv.OpLogicalAnd, neg, k.boolOp(spirv.OpINotEqual, a, k.cu32(0)))
		}
		code = k.uop(spirv.OpBitwiseOr, code, k.selU32(neg, k.cu32(f.SignBit), k.cu32(0)))
	}
	if f.Saturate {
		return code // no NaN on the grid
	}
	marked := k.boolOp(spirv.OpIEqual, k.uop(spirv.OpBitwiseAnd, bits, k.cu32(NaNMarkMask)), k.cu32(NaNMark&NaNMarkMask))
	nan := k.selU32(marked, k.uop(spirv.OpBitwiseAnd, bits, k.cu32(0xff)), k.nanCode(bits, f))
	return k.selU32(k.boolOp(spirv.OpUGreaterThan, a, k.cu32(0x7f800000)), nan, code)
}

// nanCode is the code of format f's NaN with the sign of f32 bits where
// f's NaNs have one (hlo's encoding, as XLA's conversions keep it).
func (k *kernelBuilder) nanCode(bits spirv.ID, f hlo.MiniFloatFormat) spirv.ID {
	if !f.SignedNaN {
		return k.cu32(f.NaN)
	}
	return k.selU32(k.boolOp(spirv.OpUGreaterThanEqual, bits, k.cu32(0x80000000)), k.cu32(f.NaN|f.SignBit), k.cu32(f.NaN))
}

// roundMini rounds f32 value x to small float type t, as XLA's
// conversion does: with e the exponent of |x| (at least the smallest
// normal one), |x| / 2^(e - man) rounded to an integer, ties to even,
// and scaled back (exact: the scale is a power of two); beyond the
// largest finite value infinity, NaN, or for the types without either
// the largest value; the sign kept, except on the zero of the fnuz
// types; a NaN stays as it is, a code it carries with it (0 where the
// type has no NaN). The result is an f32 on the type's grid, which is
// how registers hold the type.
func (k *kernelBuilder) roundMini(x spirv.ID, t hlo.ElementType) spirv.ID {
	f, _ := hlo.MiniFloatFormatOf(t)
	if f.PowersOfTwo {
		return k.roundPowerOfTwo(x)
	}
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	fv := func(v float64) spirv.ID { return k.constFloat(hlo.F32, v) }
	a := k.f.Ext(f32, spirv.GLSLFAbs, x)
	bits := k.f.Bitcast(u32, a)
	// The exponent field of |x|, at least that of the smallest normal
	// value and at most the largest finite one (an infinity stays one);
	// the scale 2^(e - man) and its inverse made from it, multiplied by
	// rather than divided by (Vulkan allows division 2.5 ulp).
	field := k.f.Ext(u32, spirv.GLSLUClamp, k.uop(spirv.OpShiftRightLogical, bits, k.cu32(23)), k.cu32(uint32(127+f.Emin)), k.cu32(254))
	scale := k.f.Bitcast(f32, k.uop(spirv.OpShiftLeftLogical, k.uop(spirv.OpISub, field, k.cu32(uint32(f.Man))), k.cu32(23)))
	inv := k.f.Bitcast(f32, k.uop(spirv.OpShiftLeftLogical, k.uop(spirv.OpISub, k.cu32(uint32(254+f.Man)), field), k.cu32(23)))
	r := k.f.FMul(f32, k.f.Ext(f32, spirv.GLSLRoundEven, k.f.FMul(f32, a, inv)), scale)
	over := k.boolOp(spirv.OpFOrdGreaterThan, r, fv(f.Max))
	switch {
	case f.Inf:
		r = k.f.Select(f32, over, fv(math.Inf(1)), r)
	case f.Saturate:
		r = k.f.Select(f32, over, fv(f.Max), r)
	}
	// The sign back: x's, a negative zero's included, except in the fnuz
	// types, whose zero has none.
	sign := k.uop(spirv.OpBitwiseAnd, k.f.Bitcast(u32, x), k.cu32(0x80000000))
	if !f.NegZero {
		sign = k.selU32(k.boolOp(spirv.OpFOrdEqual, r, fv(0)), k.cu32(0), sign)
	}
	r = k.f.Bitcast(f32, k.uop(spirv.OpBitwiseOr, k.f.Bitcast(u32, r), sign))
	if f.Saturate {
		return k.f.Select(f32, k.f.IsNan(k.boolT(), x), fv(0), r) // no NaN to keep
	}
	if !f.Inf { // the finite types overflow to their NaN, signed as x
		r = k.f.Select(f32, over, k.typeNaN(x, f), r)
	}
	return k.f.Select(f32, k.f.IsNan(k.boolT(), x), k.ownNaN(x, f), r)
}

// typeNaN is format f's NaN with x's sign (where f's NaNs have one) as
// registers hold it: the value its code decodes to (MarkedNaN). A NaN
// that arithmetic or an overflow makes is this one, not the f32 NaN it
// was: the store encodes a NaN without a code as f's NaN, so a value
// kept in a register must be that NaN too, or a total-order comparison
// in the kernel that computes it sees another NaN than one that loads
// it (an fnuz type's only NaN, 0x80, is negative, where its overflow was
// f32's +NaN).
func (k *kernelBuilder) typeNaN(x spirv.ID, f hlo.MiniFloatFormat) spirv.ID {
	f32 := k.b.TypeFloat(32)
	pos := k.f.Bitcast(f32, k.cu32(MarkedNaN(f, f.NaN)))
	if !f.SignedNaN {
		return pos
	}
	neg := k.f.Bitcast(f32, k.cu32(MarkedNaN(f, f.NaN|f.SignBit)))
	return k.f.Select(f32, k.boolOp(spirv.OpUGreaterThanEqual, k.f.Bitcast(k.u32(), x), k.cu32(0x80000000)), neg, pos)
}

// ownNaN is NaN x as a value of format f: as it is where it is the NaN
// a code of f's decodes to (a value of f moved or bitcast), else f's
// NaN (typeNaN), which is what a store makes of it: arithmetic's NaN
// carries no code, and the code a conversion brings from another format
// may be a number of f's (e4m3fn's NaN 0x7f is e4m3b11fnuz's 30).
func (k *kernelBuilder) ownNaN(x spirv.ID, f hlo.MiniFloatFormat) spirv.ID {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	eq := func(a spirv.ID, v uint32) spirv.ID { return k.boolOp(spirv.OpIEqual, a, k.cu32(v)) }
	and := func(a spirv.ID, m uint32) spirv.ID { return k.uop(spirv.OpBitwiseAnd, a, k.cu32(m)) }
	bits := k.f.Bitcast(u32, x)
	c := and(bits, 0xff)
	var own spirv.ID // whether code c is one of f's NaNs
	switch {
	case f.PowersOfTwo:
		own = eq(c, 0xff)
	case f.Saturate:
		return x // no NaN: roundMini makes it 0
	case f.Inf: // the exponent all ones, the mantissa not zero
		ex := and(k.uop(spirv.OpShiftRightLogical, c, k.cu32(uint32(f.Man))), 1<<f.Exp-1)
		own = k.boolOp(spirv.OpLogicalAnd, eq(ex, 1<<f.Exp-1), k.boolOp(spirv.OpINotEqual, and(c, 1<<f.Man-1), k.cu32(0)))
	case !f.NegZero: // fnuz: the code of a negative zero
		own = eq(c, f.NaN)
	default: // fn: the magnitude all ones
		own = eq(and(c, f.SignBit-1), f.SignBit-1)
	}
	// Exactly the NaN code c decodes to: a negated one (XLA's negate
	// flips a NaN's sign) stores as c, so it is c's NaN again here.
	keep := k.boolOp(spirv.OpLogicalAnd, own, k.boolOp(spirv.OpIEqual, bits, k.markedBits(c, k.codeSign(c, f))))
	return k.f.Select(f32, keep, x, k.typeNaN(x, f))
}

// roundPowerOfTwo rounds f32 value x to e8m0fnu's powers of two as its
// conversion does, to nearest, ties to the even exponent: the f32 bits
// plus half an exponent step, less one unless the exponent is odd, with
// the mantissa cleared (subnormal f32 inputs compared with the midpoint).
// A negative number or NaN becomes NaN, as does what rounds beyond
// 2^127; zero and what rounds below 2^-127 become 2^-127, the smallest
// value (an f32 subnormal).
func (k *kernelBuilder) roundPowerOfTwo(x spirv.ID) spirv.ID {
	u32, f32 := k.u32(), k.b.TypeFloat(32)
	bits := k.f.Bitcast(u32, k.f.Ext(f32, spirv.GLSLFAbs, x))
	odd := k.uop(spirv.OpBitwiseAnd, k.uop(spirv.OpShiftRightLogical, bits, k.cu32(23)), k.cu32(1))
	up := k.uop(spirv.OpIAdd, k.uop(spirv.OpIAdd, bits, k.cu32(0x3fffff)), odd)
	field := k.uop(spirv.OpShiftRightLogical, up, k.cu32(23))
	// Below 2^-126 the f32 is subnormal and its bits are not its log:
	// 2^-126 (field 1) above the midpoint 1.5 * 2^-127, else 2^-127 (a
	// tie goes to the even field, 0).
	sub := k.selU32(k.boolOp(spirv.OpUGreaterThan, bits, k.cu32(0x600000)), k.cu32(1), k.cu32(0))
	field = k.selU32(k.boolOp(spirv.OpULessThan, bits, k.cu32(0x800000)), sub, field)
	r := k.selU32(k.boolOp(spirv.OpIEqual, field, k.cu32(0)), k.cu32(0x400000), k.uop(spirv.OpShiftLeftLogical, field, k.cu32(23)))
	bad := k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpFOrdLessThan, x, k.constFloat(hlo.F32, 0)), k.boolOp(spirv.OpUGreaterThanEqual, field, k.cu32(255)))
	r = k.f.Select(f32, bad, k.constFloat(hlo.F32, math.NaN()), k.f.Bitcast(f32, r))
	f, _ := hlo.MiniFloatFormatOf(hlo.F8E8M0FNU)
	return k.f.Select(f32, k.f.IsNan(k.boolT(), x), k.ownNaN(x, f), r)
}
