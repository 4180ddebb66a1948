package kgen

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// convert follows XLA: float to integer truncates toward zero and
// saturates at the integer's range, NaN gives 0; anything to pred is
// x != 0; pred to a number is 0 or 1. Narrow results are normalized.
func (k *kernelBuilder) convert(in *hlo.Instruction, x val, to hlo.ElementType) (val, error) {
	v, err := k.convertWide(x, to)
	if err != nil {
		return v, err
	}
	return k.normalize(v), nil
}

// toOddF32 converts an f64 to f32 rounding to odd (toward zero, the
// last bit set when inexact), tagged as narrow type to: normalize's
// rounding to f16 or bf16 is then the one correct rounding of the f64
// (rounding to nearest twice may land on a tie that was not one).
func (k *kernelBuilder) toOddF32(x val, to hlo.ElementType) val {
	u32 := k.u32()
	f := k.f.FConvert(k.b.TypeFloat(32), x.id)
	back := k.f.FConvert(k.b.TypeFloat(64), f)
	bits := k.f.Bitcast(u32, f)
	abs := func(v, t spirv.ID) spirv.ID { return k.f.Ext(t, spirv.GLSLFAbs, v) }
	away := k.boolOp(spirv.OpFOrdGreaterThan, abs(back, k.b.TypeFloat(64)), abs(x.id, k.b.TypeFloat(64)))
	bits = k.f.Select(u32, away, k.f.ISub(u32, bits, k.cu32(1)), bits)
	inexact := k.boolOp(spirv.OpFUnordNotEqual, back, x.id)
	bits = k.f.Select(u32, inexact, k.f.BitwiseOr(u32, bits, k.cu32(1)), bits)
	return val{k.f.Bitcast(k.scalarType(to), bits), to}
}

// intToOddF32 converts a 32- or 64-bit integer to f32 rounding to odd,
// tagged as narrow float type to, for the same reason as toOddF32: an
// s32 of 2^30 + 2^22 + 1 rounds to the f32 2^30 + 2^22, a bf16 tie. The
// magnitude keeps its top 24 bits, the lowest of them set when any bit
// below was: that converts exactly. (f16 needs none of this: integers
// below 2^24 are exact in f32, and larger ones overflow f16 either way.)
func (k *kernelBuilder) intToOddF32(x val, to hlo.ElementType) val {
	w := x.t.Bits()
	ut := hlo.U32
	if w == 64 {
		ut = hlo.U64
	}
	uT := k.scalarType(ut)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, uT, a, b) }
	c := func(v uint64) spirv.ID { return k.constInt(ut, v) }
	a := k.f.Bitcast(uT, x.id)
	neg := k.b.ConstantBool(false)
	if x.t.Kind() == hlo.KindSigned {
		neg = k.boolOp(spirv.OpSLessThan, x.id, k.zero(x.t))
		a = k.f.Select(uT, neg, k.f.SNegate(uT, a), a)
	}
	u32 := k.u32()
	var msb spirv.ID // as a u32; -1 (all ones) for 0
	if w == 32 {
		msb = k.f.Ext(u32, spirv.GLSLFindUMsb, a)
	} else {
		hi := k.f.UConvert(u32, op(spirv.OpShiftRightLogical, a, c(32)))
		lo := k.f.UConvert(u32, a)
		hiMsb := k.f.IAdd(u32, k.f.Ext(u32, spirv.GLSLFindUMsb, hi), k.cu32(32))
		msb = k.f.Select(u32, k.boolOp(spirv.OpINotEqual, hi, k.cu32(0)), hiMsb, k.f.Ext(u32, spirv.GLSLFindUMsb, lo))
	}
	big := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpUGreaterThan, msb, k.cu32(23)), k.boolOp(spirv.OpINotEqual, msb, k.cu32(0xffffffff)))
	shift := k.f.Select(u32, big, k.f.ISub(u32, msb, k.cu32(23)), k.cu32(0))
	if w == 64 {
		shift = k.f.UConvert(uT, shift)
	}
	unit := op(spirv.OpShiftLeftLogical, c(1), shift)
	mask := op(spirv.OpISub, unit, c(1))
	sticky := k.boolOp(spirv.OpINotEqual, op(spirv.OpBitwiseAnd, a, mask), c(0))
	t := op(spirv.OpBitwiseAnd, a, k.f.Not(uT, mask))
	t = k.f.Select(uT, sticky, op(spirv.OpBitwiseOr, t, unit), t)
	f32 := k.b.TypeFloat(32)
	f := k.f.ConvertUToF(f32, k.hideInt(t, uT, w))
	f = k.f.Select(f32, neg, k.f.FNegate(f32, f), f)
	return val{f, to}
}

// retag reinterprets a register value as type to (same register width),
// bitcasting only when the SPIR-V types differ.
func (k *kernelBuilder) retag(x val, to hlo.ElementType) val {
	if k.scalarType(x.t) == k.scalarType(to) {
		return val{x.id, to}
	}
	return k.op(spirv.OpBitcast, to, x.id)
}

func (k *kernelBuilder) convertWide(x val, to hlo.ElementType) (val, error) {
	from := x.t
	if from == to {
		return x, nil
	}
	fk, tk := from.Kind(), to.Kind()
	switch {
	case tk == hlo.KindBool:
		if fk == hlo.KindFloat {
			return val{k.boolOp(spirv.OpFUnordNotEqual, x.id, k.zero(from)), to}, nil
		}
		return val{k.boolOp(spirv.OpINotEqual, x.id, k.zero(from)), to}, nil
	case fk == hlo.KindBool:
		one := val{k.constOne(to), to}
		return k.sel(x.id, one, val{k.zero(to), to}), nil
	case fk == hlo.KindFloat && tk == hlo.KindFloat:
		if regBits(from) == regBits(to) {
			return val{x.id, to}, nil // f16/bf16 <-> f32: the register holds it; normalize rounds
		}
		if from == hlo.F64 && isNarrow(to) {
			return k.toOddF32(x, to), nil
		}
		return k.op(spirv.OpFConvert, to, x.id), nil
	case fk == hlo.KindFloat:
		// Saturate in the float domain. The bounds are the integer limits
		// rounded to the float type; the limits themselves are
		// representable only as powers of two, so compare with >= 2^(n-1)
		// (signed) or 2^n (unsigned) and substitute the exact limit.
		var lo, hi float64
		var loBits, hiBits uint64
		if tk == hlo.KindSigned {
			lo, hi = -math.Ldexp(1, to.Bits()-1), math.Ldexp(1, to.Bits()-1)
			loBits, hiBits = minInt(to), minInt(to)-1
		} else {
			lo, hi = 0, math.Ldexp(1, to.Bits())
			loBits, hiBits = 0, allOnes(to)
		}
		cv := spirv.OpConvertFToS
		if tk == hlo.KindUnsigned {
			cv = spirv.OpConvertFToU
		}
		tooBig := k.boolOp(spirv.OpFOrdGreaterThanEqual, x.id, k.constFloat(from, hi))
		tooSmall := k.boolOp(spirv.OpFOrdLessThanEqual, x.id, k.constFloat(from, lo))
		nan := k.isNaN(x)
		bad := k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpLogicalOr, tooBig, tooSmall), nan)
		safe := k.sel(bad, val{k.zero(from), from}, x)
		r := k.op(cv, to, safe.id)
		r = k.sel(tooBig, val{k.constInt(to, hiBits), to}, r)
		return k.sel(tooSmall, val{k.constInt(to, loBits), to}, r), nil
	case tk == hlo.KindFloat:
		if to == hlo.BF16 && from.Bits() >= 32 {
			return k.intToOddF32(x, to), nil
		}
		cv := spirv.OpConvertSToF
		if fk == hlo.KindUnsigned {
			cv = spirv.OpConvertUToF
		}
		return k.op(cv, to, k.hideInt(x.id, k.scalarType(from), regBits(from))), nil
	}
	// Integer to integer: extend or truncate by the source's signedness
	// to the target's register width, then reinterpret; normalize wraps.
	fw, tw := regBits(from), regBits(to)
	if fw == tw {
		return k.retag(x, to), nil
	}
	mid := map[bool]hlo.ElementType{true: hlo.S32, false: hlo.U32}[fk == hlo.KindSigned]
	if tw == 64 {
		mid = map[bool]hlo.ElementType{true: hlo.S64, false: hlo.U64}[fk == hlo.KindSigned]
	}
	if fk == hlo.KindSigned && tw == 64 {
		return k.retag(k.signExtend64(x), to), nil
	}
	cv := spirv.OpSConvert
	if fk == hlo.KindUnsigned {
		cv = spirv.OpUConvert
	}
	return k.retag(k.op(cv, mid, x.id), to), nil
}

// signExtend64 widens a signed 32-bit register to s64 as the pair of its
// words (the value, and its sign shifted through): Mesa 22.3's lavapipe
// compiled OpSConvert from 32 to 64 bits followed by a signed compare
// wrongly (ilt(i2i64(x), 0) was false for negative x; TestWidenedCompare).
func (k *kernelBuilder) signExtend64(x val) val {
	u32 := k.u32()
	lo := k.f.Bitcast(u32, x.id)
	hi := k.f.Bitcast(u32, k.f.ShiftRightArithmetic(k.b.TypeInt(32, true), k.f.Bitcast(k.b.TypeInt(32, true), x.id), k.cu32(31)))
	pair := k.f.CompositeConstruct(k.b.TypeVector(u32, 2), lo, hi)
	return val{k.f.Bitcast(k.scalarType(hlo.S64), pair), hlo.S64}
}

// masked returns a narrow integer's bit pattern (its low t.Bits() bits),
// for the bit operations that must not see the sign extension.
// signSet reports a float register's sign bit (-0 included), read from
// its bits: 64-bit ones as two words, as the device may lack shaderInt64.
func (k *kernelBuilder) signSet(x val) spirv.ID {
	u32 := k.u32()
	var w spirv.ID
	if regBits(x.t) == 64 {
		w = k.f.Extract(u32, k.f.Bitcast(k.b.TypeVector(u32, 2), x.id), 1)
	} else {
		w = k.f.Bitcast(u32, x.id)
	}
	return k.boolOp(spirv.OpINotEqual, k.f.BitwiseAnd(u32, w, k.cu32(0x80000000)), k.cu32(0))
}

// words splits a 64-bit integer into its low and high 32-bit words.
func (k *kernelBuilder) words(x val) (lo, hi spirv.ID) {
	u64, u32 := k.b.TypeInt(64, false), k.u32()
	u := x.id
	if x.t.Kind() == hlo.KindSigned {
		u = k.f.Bitcast(u64, u)
	}
	lo = k.f.UConvert(u32, u)
	hi = k.f.UConvert(u32, k.f.ShiftRightLogical(u64, u, k.cu32(32)))
	return lo, hi
}

// fromWord widens a u32 count to the 64-bit integer type t.
func (k *kernelBuilder) fromWord(n spirv.ID, t hlo.ElementType) val {
	u64 := k.b.TypeInt(64, false)
	w := k.f.UConvert(u64, n)
	if t.Kind() == hlo.KindSigned {
		w = k.f.Bitcast(k.scalarType(t), w)
	}
	return val{w, t}
}

func (k *kernelBuilder) masked(x val) val {
	if !isNarrow(x.t) {
		return x
	}
	return val{k.f.BitwiseAnd(k.scalarType(x.t), x.id, k.b.Constant(k.scalarType(x.t), 1<<uint(x.t.Bits())-1)), x.t}
}

func (k *kernelBuilder) constOne(t hlo.ElementType) spirv.ID {
	if t.IsFloat() {
		return k.constFloat(t, 1)
	}
	return k.constInt(t, 1)
}
