package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Narrow storage: 8- and 16-bit elements held as they are in buffers
// (StorageType), loaded into 32-bit registers and stored back. Only
// loads, stores and conversions touch the narrow types, which is all
// 8/16-bit storage allows; a vector kernel (vector.go) reads and writes
// its 8 elements of a narrow buffer as u32 words instead (a uvec4 of
// 16-bit elements, a uvec2 of 8-bit ones) and takes them apart with
// shifts. A register already holds a value of the
// narrow type (kernels normalize every result), so both directions are
// exact. f16 goes through its bits with integer operations rather than
// OpFConvert: a driver may flush f16 subnormals in conversions
// (shaderDenormPreserveFloat16 is optional); bf16 is the top half of an
// f32.

// storageElem is the SPIR-V type of a buffer element of storage type st:
// an unsigned integer of the narrow width for every narrow type (storage
// capabilities allow width-only conversions, so a signed value is sign
// extended by shifts once widened).
func (k *kernelBuilder) storageElem(st hlo.ElementType) spirv.ID {
	if isNarrow(st) {
		return k.b.TypeStorageUint(st.Bits())
	}
	return k.scalarType(st)
}

// widen turns a loaded narrow element into its 32-bit register value.
func (k *kernelBuilder) widen(raw spirv.ID, st hlo.ElementType) spirv.ID {
	if !isNarrow(st) {
		return raw
	}
	return k.widenBits(k.f.UConvert(k.u32(), raw), st)
}

// widenBits is the register value of a narrow element's bits (a u32,
// the bits at the bottom, zeros above).
func (k *kernelBuilder) widenBits(bits spirv.ID, st hlo.ElementType) spirv.ID {
	switch st {
	case hlo.S8, hlo.S16: // sign-extend: up to the top, arithmetic shift down
		sh := k.cu32(uint32(32 - st.Bits()))
		s32 := k.b.TypeInt(32, true)
		up := k.f.Bitcast(s32, k.uop(spirv.OpShiftLeftLogical, bits, sh))
		return k.f.ShiftRightArithmetic(s32, up, sh)
	case hlo.BF16:
		return k.f.Bitcast(k.b.TypeFloat(32), k.uop(spirv.OpShiftLeftLogical, bits, k.cu32(16)))
	case hlo.F16:
		return k.halfToFloat(bits)
	}
	return bits // u8, u16
}

// narrow turns a 32-bit register value into the narrow element stored.
func (k *kernelBuilder) narrow(id spirv.ID, st hlo.ElementType) spirv.ID {
	return k.f.UConvert(k.storageElem(st), k.narrowBits(id, st))
}

// narrowBits is the bits (a u32, at the bottom, zeros above) of the
// narrow element that register value id holds.
func (k *kernelBuilder) narrowBits(id spirv.ID, st hlo.ElementType) spirv.ID {
	u32 := k.u32()
	switch st {
	case hlo.BF16:
		// The top half, a NaN's payload with it (bitcast-convert and
		// copies keep every bit); a NaN whose payload sits in the low
		// half only must stay a NaN (made quiet), not become an infinity.
		bits := k.f.Bitcast(u32, id)
		top := k.uop(spirv.OpShiftRightLogical, bits, k.cu32(16))
		lost := k.boolOp(spirv.OpLogicalAnd, k.f.IsNan(k.boolT(), id),
			k.f.IEqual(k.boolT(), k.uop(spirv.OpBitwiseAnd, top, k.cu32(0x7f)), k.cu32(0)))
		return k.selU32(lost, k.uop(spirv.OpBitwiseOr, top, k.cu32(0x40)), top)
	case hlo.F16:
		return k.floatToHalf(id)
	}
	mask := k.cu32(uint32(1)<<st.Bits() - 1)
	return k.uop(spirv.OpBitwiseAnd, k.f.Bitcast(u32, id), mask)
}

func (k *kernelBuilder) uop(o spirv.Op, a, b spirv.ID) spirv.ID {
	return k.f.Apply(o, k.u32(), a, b)
}

// selU32 is cond ? a : b on u32s.
func (k *kernelBuilder) selU32(cond, a, b spirv.ID) spirv.ID {
	return k.f.Select(k.u32(), cond, a, b)
}

// halfToFloat is the f32 of f16 bits h (a u32).
func (k *kernelBuilder) halfToFloat(h spirv.ID) spirv.ID {
	u32, f32, b := k.u32(), k.b.TypeFloat(32), k.boolT()
	c := k.cu32
	sign := k.uop(spirv.OpShiftLeftLogical, k.uop(spirv.OpBitwiseAnd, h, c(0x8000)), c(16))
	e := k.uop(spirv.OpBitwiseAnd, k.uop(spirv.OpShiftRightLogical, h, c(10)), c(0x1f))
	m := k.uop(spirv.OpBitwiseAnd, h, c(0x3ff))
	mant := k.uop(spirv.OpShiftLeftLogical, m, c(13))
	normal := k.uop(spirv.OpBitwiseOr, k.uop(spirv.OpShiftLeftLogical, k.uop(spirv.OpIAdd, e, c(112)), c(23)), mant)
	special := k.uop(spirv.OpBitwiseOr, c(0x7f800000), mant) // infinity, NaN
	// A subnormal (or zero) is m * 2^-24: exact in f32, and normal there.
	sub := k.f.FMul(f32, k.f.ConvertUToF(f32, m), k.b.ConstF32(0x1p-24))
	subBits := k.f.Bitcast(u32, sub)
	mag := k.selU32(k.f.IEqual(b, e, c(0)), subBits, k.selU32(k.f.IEqual(b, e, c(0x1f)), special, normal))
	return k.f.Bitcast(f32, k.uop(spirv.OpBitwiseOr, sign, mag))
}

// floatToHalf is the f16 bits (a u32) of x, an f32 holding a value f16
// represents; a NaN keeps the top 10 bits of its payload (those an f16
// NaN's widening put there), made quiet only where they are all zero.
func (k *kernelBuilder) floatToHalf(x spirv.ID) spirv.ID {
	u32, b := k.u32(), k.boolT()
	c := k.cu32
	bits := k.f.Bitcast(u32, x)
	sign := k.uop(spirv.OpBitwiseAnd, k.uop(spirv.OpShiftRightLogical, bits, c(16)), c(0x8000))
	e := k.uop(spirv.OpBitwiseAnd, k.uop(spirv.OpShiftRightLogical, bits, c(23)), c(0xff))
	m := k.uop(spirv.OpBitwiseAnd, bits, c(0x7fffff))
	normal := k.uop(spirv.OpBitwiseOr, k.uop(spirv.OpShiftLeftLogical, k.uop(spirv.OpISub, e, c(112)), c(10)), k.uop(spirv.OpShiftRightLogical, m, c(13)))
	// Subnormal f16: (1.m) * 2^(e-127) = ((m | 2^23) >> (126 - e)) * 2^-24,
	// for e in [103, 112].
	shift := k.uop(spirv.OpISub, c(126), k.f.Ext(u32, spirv.GLSLUClamp, e, c(103), c(126)))
	sub := k.uop(spirv.OpShiftRightLogical, k.uop(spirv.OpBitwiseOr, m, c(0x800000)), shift)
	nan := k.f.INotEqual(b, m, c(0))
	payload := k.uop(spirv.OpShiftRightLogical, m, c(13))
	payload = k.selU32(k.f.IEqual(b, payload, c(0)), c(0x200), payload)
	special := k.selU32(nan, k.uop(spirv.OpBitwiseOr, c(0x7c00), payload), c(0x7c00))
	mag := k.selU32(k.f.UGreaterThan(b, e, c(112)), normal, k.selU32(k.f.UGreaterThanEqual(b, e, c(103)), sub, c(0)))
	mag = k.selU32(k.f.IEqual(b, e, c(0xff)), special, mag)
	return k.uop(spirv.OpBitwiseOr, sign, mag)
}
