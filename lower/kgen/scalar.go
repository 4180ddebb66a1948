package kgen

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/mathlib"
	"github.com/vkjit/vkjit/spirv"
)

// This file emits one elementwise HLO op on scalar values, following
// XLA's operation semantics where SPIR-V leaves a case undefined (integer
// division by zero, shifts past the bit width, NaN in max/min,
// float-to-integer overflow). Fused kernels reuse it unchanged.

// Scalar emitters share helpers for typed constants and ops.

func (k *kernelBuilder) op(o spirv.Op, t hlo.ElementType, args ...spirv.ID) val {
	ops := make([]uint32, len(args))
	for i, a := range args {
		ops[i] = uint32(a)
	}
	id := k.f.Op(o, k.scalarType(t), ops...)
	switch o {
	case spirv.OpFAdd, spirv.OpFSub, spirv.OpFMul, spirv.OpFDiv:
		// An HLO op rounds once, as IEEE says. Without NoContraction a
		// driver may fuse a multiply into an add or reassociate (Mesa
		// does, once fusion puts a constant next to a chain), which
		// would make fused and unfused programs differ.
		k.b.Decorate(id, spirv.DecorationNoContraction)
	}
	return val{id, t}
}

func (k *kernelBuilder) boolOp(o spirv.Op, args ...spirv.ID) spirv.ID {
	ops := make([]uint32, len(args))
	for i, a := range args {
		ops[i] = uint32(a)
	}
	return k.f.Op(o, k.boolT(), ops...)
}

func (k *kernelBuilder) ext(inst spirv.GLSLInst, t hlo.ElementType, args ...spirv.ID) val {
	return val{k.f.Ext(k.scalarType(t), inst, args...), t}
}

func (k *kernelBuilder) sel(cond spirv.ID, a, b val) val {
	return val{k.f.Select(k.scalarType(a.t), cond, a.id, b.id), a.t}
}

// constInt makes an integer constant of type t from the low bits of v.
func (k *kernelBuilder) constInt(t hlo.ElementType, v uint64) spirv.ID {
	typ := k.scalarType(t)
	if isNarrow(t) { // held extended to 32 bits, as registers hold narrow values
		shift := 64 - uint(t.Bits())
		if t.Kind() == hlo.KindSigned {
			v = uint64(int64(v<<shift) >> shift)
		} else {
			v = v << shift >> shift
		}
	}
	if t.Bits() == 64 {
		return k.b.Constant(typ, uint32(v), uint32(v>>32))
	}
	return k.b.Constant(typ, uint32(v))
}

// constFloat makes a float constant of type t; a zero of either sign is
// hidden from a driver that folds it (Target.FoldsZeros): llvmpipe
// built x - (-0) as x, so that (0 + 0i) * (c + di) of a complex iota
// gave a real part of -0 where XLA gives +0 (the fuzzer).
func (k *kernelBuilder) constFloat(t hlo.ElementType, v float64) spirv.ID {
	typ := k.scalarType(t)
	if v == 0 && k.zeroU32 != 0 {
		z := k.hiddenZero(typ, regBits(t))
		if math.Signbit(v) {
			z = k.f.FNegate(typ, z)
		}
		if k.zeros == nil {
			k.zeros = map[spirv.ID]float64{}
		}
		k.zeros[z] = v
		return z
	}
	if t == hlo.F64 {
		bits := math.Float64bits(v)
		return k.b.Constant(typ, uint32(bits), uint32(bits>>32))
	}
	return k.b.Constant(typ, math.Float32bits(float32(v)))
}

// hiddenZero is +0 of float type typ (width bits) made from zeroU32: a
// value, not a constant, so that the driver builds x*0 as a multiply.
func (k *kernelBuilder) hiddenZero(typ spirv.ID, bits int) spirv.ID {
	if bits == 64 {
		v2 := k.f.CompositeConstruct(k.b.TypeVector(k.u32(), 2), k.zeroU32, k.zeroU32)
		return k.f.Bitcast(typ, v2)
	}
	return k.f.Bitcast(typ, k.zeroU32)
}

// hideInt ors x (an integer register of type typ, width bits) with
// zeroU32 where the driver folds zeros: an integer converted to float
// (an iota's index, a constant) then cannot become a constant zero to it.
func (k *kernelBuilder) hideInt(x spirv.ID, typ spirv.ID, bits int) spirv.ID {
	if k.zeroU32 == 0 {
		return x
	}
	z := k.zeroU32
	if bits == 64 {
		z = k.f.UConvert(k.b.TypeInt(64, false), z)
	}
	return k.f.BitwiseOr(typ, x, z)
}

func (k *kernelBuilder) zero(t hlo.ElementType) spirv.ID {
	switch t.Kind() {
	case hlo.KindFloat:
		return k.constFloat(t, 0)
	case hlo.KindBool:
		return k.b.ConstantBool(false)
	}
	return k.constInt(t, 0)
}

func minInt(t hlo.ElementType) uint64 { return 1 << uint(t.Bits()-1) }

func allOnes(t hlo.ElementType) uint64 {
	if t.Bits() == 64 {
		return math.MaxUint64
	}
	return 1<<uint(t.Bits()) - 1
}

func (k *kernelBuilder) isNaN(x val) spirv.ID { return k.boolOp(spirv.OpIsNan, x.id) }

// knownFloat is x's value where it is a float constant of the kernel (a
// zero hidden from the driver included).
func (k *kernelBuilder) knownFloat(x val) (float64, bool) {
	if v, ok := k.zeros[x.id]; ok && x.t.Kind() == hlo.KindFloat {
		return v, true
	}
	w, ok := k.b.ConstantWords(x.id)
	if !ok || x.t.Kind() != hlo.KindFloat {
		return 0, false
	}
	switch regBits(x.t) {
	case 32:
		if len(w) == 1 {
			return float64(math.Float32frombits(w[0])), true
		}
	case 64:
		if len(w) == 2 {
			return math.Float64frombits(uint64(w[1])<<32 | uint64(w[0])), true
		}
	}
	return 0, false
}

// unsupported names the op and type combination that has no emitter yet.
func unsupported(in *hlo.Instruction, t hlo.ElementType) error {
	return in.Errorf("not supported on the device for element type %s yet", t)
}

// emitScalar computes instruction in on scalar operand values, and
// normalizes a result of a narrow type (see normalize).
func (k *kernelBuilder) emitScalar(in *hlo.Instruction, a []val) (val, error) {
	v, err := k.emitWide(in, a)
	if err != nil || in.Op == hlo.OpBitcastConvert {
		return v, err // a bitcast's value is its type's already, a NaN's payload kept
	}
	if keepsGrid(in.Op, v.t) {
		return v, nil
	}
	return k.normalize(v), nil
}

// keepsGrid reports an op whose result of type t needs no rounding (60
// to 280 words an element): f16's and bf16's operands are on their
// type's grid already, and so is the result of the ops of gridOps. (The
// f8 types and smaller compute in f32 by the time kernels are made, a
// rounding op after each of theirs: widenF8; a format without -0, the
// fnuz ones, would need its zeros made +0 all the same.)
func keepsGrid(op hlo.Opcode, t hlo.ElementType) bool {
	return (t == hlo.F16 || t == hlo.BF16) && gridOps[op]
}

// gridOps are the ops whose float result lies on the grid its operands
// lie on: one of them up to its sign (maximum, minimum, clamp, select,
// negate, abs; sign's +-1 and signed zeros), or an integer next to one,
// which is the operand itself where the grid's spacing is 1 or more,
// and below that of a magnitude whose every integer the grid holds (p
// significant bits space floats by 1 or more from 2^(p-1), and hold
// every integer up to 2^p).
var gridOps = map[hlo.Opcode]bool{
	hlo.OpMaximum: true, hlo.OpMinimum: true, hlo.OpClamp: true, hlo.OpSelect: true,
	hlo.OpNegate: true, hlo.OpAbs: true, hlo.OpSign: true,
	hlo.OpFloor: true, hlo.OpCeil: true, hlo.OpRoundNearestEven: true, hlo.OpRoundNearestAfz: true,
}

// reducePrecision rounds x to a float of expBits exponent and manBits
// mantissa bits and back, on the bits of x's own format as XLA does:
// the mantissa to nearest even, an exponent beyond the narrow range to
// infinity or (signed) zero; a NaN stays itself unless no mantissa bit
// is left, when it becomes +inf.
func (k *kernelBuilder) reducePrecision(x val, expBits, manBits int64) val {
	t := x.t
	e, m := t.FloatFields()
	srcExp, srcMan := int64(e), int64(m)
	w := 32
	if t == hlo.F64 {
		w = 64
	}
	ut := k.b.TypeInt(w, false)
	c := func(v uint64) spirv.ID {
		if w == 64 {
			return k.b.Constant(ut, uint32(v), uint32(v>>32))
		}
		return k.cu32(uint32(v))
	}
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, ut, a, b) }
	var bits spirv.ID
	if isNarrow(t) {
		bits = k.narrowBits(x.id, t)
	} else {
		bits = k.f.Bitcast(ut, x.id)
	}
	if manBits < srcMan {
		shift := uint64(srcMan - manBits)
		last := uint64(1) << shift
		lsb := op(spirv.OpShiftRightLogical, op(spirv.OpBitwiseAnd, bits, c(last)), c(shift))
		bits = op(spirv.OpIAdd, bits, op(spirv.OpIAdd, lsb, c(last>>1-1)))
		bits = op(spirv.OpBitwiseAnd, bits, k.f.Not(ut, c(last-1)))
	}
	if expBits < srcExp {
		signMask := uint64(1) << (srcExp + srcMan)
		expMask := (uint64(1)<<srcExp - 1) << srcMan
		bias := uint64(1)<<(srcExp-1) - 1
		rbias := uint64(1)<<(expBits-1) - 1
		e := op(spirv.OpBitwiseAnd, bits, c(expMask))
		signed := op(spirv.OpBitwiseAnd, bits, c(signMask))
		over := k.boolOp(spirv.OpUGreaterThan, e, c((bias+rbias)<<srcMan))
		under := k.boolOp(spirv.OpULessThanEqual, e, c((bias-rbias)<<srcMan))
		bits = k.f.Select(ut, over, op(spirv.OpBitwiseOr, signed, c(expMask)), bits)
		bits = k.f.Select(ut, under, signed, bits)
	}
	if isNarrow(t) {
		bits = op(spirv.OpBitwiseAnd, bits, c(1<<(srcExp+srcMan+1)-1))
	}
	var r val
	if isNarrow(t) {
		r = val{k.widenBits(bits, t), t}
	} else {
		r = val{k.f.Bitcast(k.scalarType(t), bits), t}
	}
	// The rounding may carry a NaN's mantissa into its exponent, even its
	// sign: XLA keeps the NaN, and with no mantissa bits left makes it +inf.
	keep := x
	if manBits == 0 {
		keep = val{k.constFloat(t, math.Inf(1)), t}
	}
	return k.sel(k.isNaN(x), keep, r)
}

// bitcastConvert reinterprets x's bits as type to, of the same width,
// NaN payloads included (XLA changes no bit). A change of width changes
// the shape, and pred has no bits of its own here (a 32-bit 0 or 1):
// both are refused by name.
func (k *kernelBuilder) bitcastConvert(in *hlo.Instruction, x val, to hlo.ElementType) (val, error) {
	from := x.t
	if from.Bits() != to.Bits() || from == hlo.PRED || to == hlo.PRED {
		return val{}, in.Errorf("bitcast-convert from %s to %s is not supported on the device yet (only between types of one width, pred excluded)", from, to)
	}
	if !from.IsFloat() && to.IsFloat() {
		// An integer the driver can fold to 0 (x xor x) would be a
		// constant +0 to it, and 0/y came out +0 for a negative y.
		x.id = k.hideInt(x.id, k.scalarType(from), regBits(from))
	}
	if !isNarrow(from) { // 32 and 64 bits: the registers are the types
		return val{k.f.Bitcast(k.scalarType(to), x.id), to}, nil
	}
	return val{k.widenBits(k.narrowBits(x.id, from), to), to}, nil
}

// normalize brings a 32-bit register value back into the range of its
// narrow type: integers wrap (sign- or zero-extended), f16 and bf16 round
// to nearest even.
func (k *kernelBuilder) normalize(v val) val {
	t := v.t
	if isMini(t) {
		return val{k.roundMini(v.id, t), t}
	}
	if !isNarrow(t) {
		return v
	}
	u32 := k.u32()
	switch t.Kind() {
	case hlo.KindSigned:
		sh := k.cu32(uint32(32 - t.Bits()))
		x := k.f.ShiftLeftLogical(k.scalarType(t), v.id, sh)
		return val{k.f.ShiftRightArithmetic(k.scalarType(t), x, sh), t}
	case hlo.KindUnsigned:
		return val{k.f.BitwiseAnd(k.scalarType(t), v.id, k.cu32(1<<uint(t.Bits())-1)), t}
	}
	bits := k.f.Bitcast(u32, v.id)
	var r spirv.ID
	if t == hlo.BF16 {
		// Round to the upper 16 bits, ties to even; NaN stays NaN.
		lsb := k.f.BitwiseAnd(u32, k.f.ShiftRightLogical(u32, bits, k.cu32(16)), k.cu32(1))
		bias := k.f.IAdd(u32, k.cu32(0x7fff), lsb)
		rounded := k.f.BitwiseAnd(u32, k.f.IAdd(u32, bits, bias), k.cu32(0xffff0000))
		nan := k.f.BitwiseOr(u32, k.f.BitwiseAnd(u32, bits, k.cu32(0xffff0000)), k.cu32(0x00400000))
		r = k.f.Select(u32, k.isNaN(v), nan, rounded)
	} else {
		r = k.roundF16(bits, v)
	}
	return val{k.f.Bitcast(k.scalarType(t), r), t}
}

// roundF16 rounds f32 bits to the nearest f16 value (ties to even),
// subnormals included, returned as f32 bits: the magnitude is rounded to
// a multiple of the f16 spacing at its exponent with the carry trick.
func (k *kernelBuilder) roundF16(bits spirv.ID, v val) spirv.ID {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	sign := op(spirv.OpBitwiseAnd, bits, k.cu32(0x80000000))
	mag := op(spirv.OpBitwiseAnd, bits, k.cu32(0x7fffffff))
	exp := op(spirv.OpShiftRightLogical, mag, k.cu32(23)) // biased f32 exponent
	// Bits to drop: 13 for normal f16 (exponent >= 113, i.e. 2^-14), more
	// below, up to 24.
	drop := k.f.Select(u32, k.boolOp(spirv.OpUGreaterThanEqual, exp, k.cu32(113)),
		k.cu32(13), op(spirv.OpISub, k.cu32(126), exp))
	drop = k.f.Ext(u32, spirv.GLSLUMin, drop, k.cu32(24))
	one := k.cu32(1)
	half := op(spirv.OpISub, op(spirv.OpShiftLeftLogical, one, op(spirv.OpISub, drop, one)), one)
	lsb := op(spirv.OpBitwiseAnd, op(spirv.OpShiftRightLogical, mag, drop), one)
	mask := k.f.Not(u32, op(spirv.OpISub, op(spirv.OpShiftLeftLogical, one, drop), one))
	rounded := op(spirv.OpBitwiseAnd, op(spirv.OpIAdd, mag, op(spirv.OpIAdd, half, lsb)), mask)
	// Below 2^-24, the smallest subnormal, the spacing is no longer a
	// power of two within the binade the carry trick works in (it made
	// (2^-25, 2^-24) 2^-25, then 0): above 2^-25 the value rounds up to
	// 2^-24, at or below it (a tie goes to the even 0) to 0.
	rounded = k.f.Select(u32, k.boolOp(spirv.OpULessThan, exp, k.cu32(103)),
		k.f.Select(u32, k.boolOp(spirv.OpUGreaterThan, mag, k.cu32(0x33000000)), k.cu32(0x33800000), k.cu32(0)), rounded)
	// Beyond the largest f16 (65504) the result is infinity.
	rounded = k.f.Select(u32, k.boolOp(spirv.OpUGreaterThan, rounded, k.cu32(0x477fe000)),
		k.cu32(0x7f800000), rounded)
	r := op(spirv.OpBitwiseOr, sign, rounded)
	nan := op(spirv.OpBitwiseOr, bits, k.cu32(0x00400000))
	inf := k.boolOp(spirv.OpIsInf, v.id)
	r = k.f.Select(u32, inf, bits, r)
	return k.f.Select(u32, k.isNaN(v), nan, r)
}

// emitWide computes instruction in on scalar operand values in register
// width; emitScalar normalizes narrow results.
func (k *kernelBuilder) emitWide(in *hlo.Instruction, a []val) (val, error) {
	out := in.Shape.Elem
	var t hlo.ElementType
	if len(a) > 0 {
		t = a[0].t
	}
	kind := t.Kind()
	isF, isS, isU, isB := kind == hlo.KindFloat, kind == hlo.KindSigned, kind == hlo.KindUnsigned, kind == hlo.KindBool
	if isF { // vkjit's math library (lower/mathlib)
		if v, ok, err := k.mathOp(in.Op, a, in.Op == hlo.OpExp && len(in.Operands) == 1 && BelowRowMax(in.Operands[0])); ok || err != nil {
			return v, err
		}
	}
	switch in.Op {
	case hlo.OpPower:
		switch {
		case isF:
			return val{}, in.Errorf("not supported on the device for %s yet: vkjit's math library computes power in f16, bf16, f32 and f64", t)
		case isS || isU:
			return k.ipow(a[0], a[1])
		}
	case hlo.OpCopy:
		return a[0], nil
	case hlo.OpNegate:
		switch {
		case isF:
			return k.op(spirv.OpFNegate, t, a[0].id), nil
		case isS || isU:
			return k.op(spirv.OpSNegate, t, a[0].id), nil
		}
	case hlo.OpAbs:
		switch {
		case isF:
			return k.ext(spirv.GLSLFAbs, t, a[0].id), nil
		case isS:
			// |INT_MIN| wraps to INT_MIN as in XLA; SAbs is defined for it.
			neg := k.op(spirv.OpSNegate, t, a[0].id)
			return k.sel(k.boolOp(spirv.OpSLessThan, a[0].id, k.zero(t)), neg, a[0]), nil
		case isU:
			return a[0], nil
		}
	case hlo.OpSign:
		switch {
		case isF:
			// FSign gives ±1, but 0 for ±0 with the sign GLSL leaves open
			// (lavapipe's is +0 for -0, where XLA's sign(-0) is -0: an
			// atan2 by it was 0 for -pi, the fuzzer found), and NaN must
			// stay NaN: both take x itself (unordered or equal to 0).
			s := k.ext(spirv.GLSLFSign, t, a[0].id)
			return k.sel(k.boolOp(spirv.OpFUnordEqual, a[0].id, k.zero(t)), a[0], s), nil
		case isS:
			return k.ext(spirv.GLSLSSign, t, a[0].id), nil
		case isU:
			nz := k.boolOp(spirv.OpINotEqual, a[0].id, k.zero(t))
			return k.sel(nz, val{k.constInt(t, 1), t}, val{k.zero(t), t}), nil
		}
	case hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestEven, hlo.OpRoundNearestAfz:
		if !isF {
			break
		}
		switch in.Op {
		case hlo.OpFloor:
			return k.ext(spirv.GLSLFloor, t, a[0].id), nil
		case hlo.OpCeil:
			return k.ext(spirv.GLSLCeil, t, a[0].id), nil
		case hlo.OpRoundNearestEven:
			if regBits(t) != 64 {
				return k.signOf(a[0], k.ext(spirv.GLSLRoundEven, t, a[0].id)), nil
			}
			// lavapipe's double RoundEven takes ties toward zero and
			// 0.5000000000000001 to 0 (docs/ACCURACY.md): the
			// fraction's form below, ties to the even neighbour.
		}
		// Halves away from zero (doubles' round-nearest-even: to the
		// even neighbour). GLSL Round leaves .5 to the implementation,
		// and floor(|x|+0.5) is wrong for the largest float below 0.5,
		// so use the exact fraction x - trunc(x).
		tr := k.trunc(a[0])
		frac := k.ext(spirv.GLSLFAbs, t, k.op(spirv.OpFSub, t, a[0].id, tr.id).id)
		up := k.boolOp(spirv.OpFOrdGreaterThanEqual, frac.id, k.constFloat(t, 0.5))
		if in.Op == hlo.OpRoundNearestEven { // a tie goes up only from an odd trunc(x)
			half := k.op(spirv.OpFMul, t, tr.id, k.constFloat(t, 0.5))
			odd := k.boolOp(spirv.OpFOrdNotEqual, half.id, k.trunc(half).id)
			above := k.boolOp(spirv.OpFOrdGreaterThan, frac.id, k.constFloat(t, 0.5))
			up = k.boolOp(spirv.OpLogicalOr, above, k.boolOp(spirv.OpLogicalAnd, up, odd))
		}
		step := k.ext(spirv.GLSLFSign, t, a[0].id)
		return k.signOf(a[0], k.sel(up, k.op(spirv.OpFAdd, t, tr.id, step.id), tr)), nil
	case hlo.OpSqrt, hlo.OpRsqrt:
		// Vulkan bounds sqrt and inversesqrt within a few ulp (measured
		// against float64 in vkjit's differential tests).
		if !isF {
			break
		}
		// GLSL leaves both undefined below and at zero, and Mesa's range
		// analysis takes inversesqrt to be positive: abs(rsqrt(-0))
		// came out -inf in a fused kernel (the mutation fuzzer). IEEE's
		// answers are made explicit: sqrt(±0) = ±0, rsqrt(±0) = ±inf,
		// both NaN below zero.
		x := a[0]
		zero := k.boolOp(spirv.OpFOrdEqual, x.id, k.constFloat(t, 0))
		neg := k.boolOp(spirv.OpFOrdLessThan, x.id, k.constFloat(t, 0))
		nan := val{k.constFloat(t, math.NaN()), t}
		// sqrt is x's square root, correctly rounded: the driver's where
		// its sqrt is IEEE's, else mathlib's (f16 and bf16 too: one
		// rounding from f32's).
		sqrt := func() val {
			if regBits(t) == 32 && !k.tg.IEEEDivSqrt {
				return val{mathlib.F32(k.b, k.f, k.mathDriver()).Sqrt(x.id), t}
			}
			return k.ext(spirv.GLSLSqrt, t, x.id)
		}
		if in.Op == hlo.OpSqrt {
			return k.sel(neg, nan, k.sel(zero, x, sqrt())), nil
		}
		signed := k.sel(k.signSet(x), val{k.constFloat(t, math.Inf(-1)), t}, val{k.constFloat(t, math.Inf(1)), t})
		var inv val
		switch {
		case regBits(t) != 32:
			inv = k.ext(spirv.GLSLInverseSqrt, t, x.id)
		default:
			// 1 / sqrt(x), the sqrt above and the division as divide
			// does it, each correctly rounded (within an ulp): one
			// formula on every device, where InverseSqrt is each
			// driver's own (Vulkan allows 2 ulp), which the folder and
			// the evaluator repeat bit for bit (hlo/eval RsqrtF32). An
			// ulp matters: a batch norm with scale = offset cancels
			// 30-fold after it (FuzzPrograms seed 545).
			one, root := k.constFloat(t, 1), sqrt().id
			if k.tg.IEEEDivSqrt {
				inv = k.op(spirv.OpFDiv, t, one, root)
			} else {
				inv = val{mathlib.F32(k.b, k.f, k.mathDriver()).Div(one, root), t}
			}
		}
		r := k.sel(zero, signed, inv)
		return k.sel(neg, nan, r), nil
	case hlo.OpExp, hlo.OpExpm1, hlo.OpLog, hlo.OpLog1p, hlo.OpLogistic, hlo.OpTanh, hlo.OpSin, hlo.OpCos,
		hlo.OpTan, hlo.OpErf, hlo.OpCbrt, hlo.OpAtan2:
		if isF {
			// mathOp took f16, bf16, f32 and f64; GLSL.std.450's
			// versions are far from XLA's accuracy on real drivers
			// (docs/ACCURACY.md), so any other float type is refused
			// rather than given silently wrong answers.
			return val{}, in.Errorf("not supported on the device for %s yet: vkjit's math library computes %s in f16, bf16, f32 and f64", t, in.Op)
		}
	case hlo.OpIsFinite:
		if !isF {
			break
		}
		bad := k.boolOp(spirv.OpLogicalOr, k.isNaN(a[0]), k.boolOp(spirv.OpIsInf, a[0].id))
		return val{k.boolOp(spirv.OpLogicalNot, bad), hlo.PRED}, nil
	case hlo.OpNot:
		switch {
		case isB:
			return val{k.boolOp(spirv.OpLogicalNot, a[0].id), t}, nil
		case isS || isU:
			return k.op(spirv.OpNot, t, a[0].id), nil
		}
	case hlo.OpPopcnt:
		if (isS || isU) && t.Bits() <= 32 {
			return k.op(spirv.OpBitCount, t, k.masked(a[0]).id), nil
		}
		if isS || isU { // 64 bits: BitCount takes 32-bit words (Vulkan)
			lo, hi := k.words(a[0])
			u32 := k.u32()
			n := k.f.IAdd(u32, k.f.BitCount(u32, lo), k.f.BitCount(u32, hi))
			return k.fromWord(n, t), nil
		}
	case hlo.OpClz:
		if (isS || isU) && t.Bits() <= 32 {
			// FindUMsb(0) is -1, so bits-1 - msb gives the width for zero.
			msb := k.ext(spirv.GLSLFindUMsb, t, k.masked(a[0]).id)
			return k.op(spirv.OpISub, t, k.constInt(t, uint64(t.Bits()-1)), msb.id), nil
		}
		if isS || isU { // 64 bits, by 32-bit words: the high one's, else 32 + the low one's
			lo, hi := k.words(a[0])
			u32 := k.u32()
			clz := func(w spirv.ID) spirv.ID {
				return k.f.ISub(u32, k.cu32(31), k.f.Ext(u32, spirv.GLSLFindUMsb, w))
			}
			hiZero := k.boolOp(spirv.OpIEqual, hi, k.cu32(0))
			n := k.f.Select(u32, hiZero, k.f.IAdd(u32, k.cu32(32), clz(lo)), clz(hi))
			return k.fromWord(n, t), nil
		}
	case hlo.OpConvert:
		return k.convert(in, a[0], out)
	case hlo.OpBitcastConvert:
		return k.bitcastConvert(in, a[0], out)
	case hlo.OpReducePrecision:
		if isF {
			return k.reducePrecision(a[0], in.A.ExponentBits, in.A.MantissaBits), nil
		}
	case hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply:
		fo := map[hlo.Opcode]spirv.Op{hlo.OpAdd: spirv.OpFAdd, hlo.OpSubtract: spirv.OpFSub, hlo.OpMultiply: spirv.OpFMul}[in.Op]
		io := map[hlo.Opcode]spirv.Op{hlo.OpAdd: spirv.OpIAdd, hlo.OpSubtract: spirv.OpISub, hlo.OpMultiply: spirv.OpIMul}[in.Op]
		switch {
		case isF:
			return k.op(fo, t, a[0].id, a[1].id), nil
		case isS || isU:
			return k.op(io, t, a[0].id, a[1].id), nil
		case isB && in.Op == hlo.OpAdd: // pred arithmetic is logical, as in XLA's evaluator
			return val{k.boolOp(spirv.OpLogicalOr, a[0].id, a[1].id), t}, nil
		case isB && in.Op == hlo.OpMultiply:
			return val{k.boolOp(spirv.OpLogicalAnd, a[0].id, a[1].id), t}, nil
		}
	case hlo.OpDivide:
		switch {
		case isF && regBits(t) == 32 && !k.tg.IEEEDivSqrt:
			// f16 and bf16 too: an exact f32 quotient rounds once to them.
			return val{mathlib.F32(k.b, k.f, k.mathDriver()).Div(a[0].id, a[1].id), t}, nil
		case isF:
			return k.op(spirv.OpFDiv, t, a[0].id, a[1].id), nil
		case isS:
			// XLA: x/0 = -1; INT_MIN/-1 = INT_MIN (SDiv by 1 gives that).
			dz := k.boolOp(spirv.OpIEqual, a[1].id, k.zero(t))
			ovf := k.boolOp(spirv.OpLogicalAnd,
				k.boolOp(spirv.OpIEqual, a[0].id, k.constInt(t, minInt(t))),
				k.boolOp(spirv.OpIEqual, a[1].id, k.constInt(t, allOnes(t))))
			one := val{k.constInt(t, 1), t}
			d := k.sel(k.boolOp(spirv.OpLogicalOr, dz, ovf), one, a[1])
			q := k.op(spirv.OpSDiv, t, a[0].id, d.id)
			return k.sel(dz, val{k.constInt(t, allOnes(t)), t}, q), nil
		case isU:
			dz := k.boolOp(spirv.OpIEqual, a[1].id, k.zero(t))
			d := k.sel(dz, val{k.constInt(t, 1), t}, a[1])
			q := k.op(spirv.OpUDiv, t, a[0].id, d.id)
			return k.sel(dz, val{k.constInt(t, allOnes(t)), t}, q), nil
		}
	case hlo.OpRemainder:
		switch {
		case isF:
			// OpFRem is computed as x - y*trunc(x/y) by drivers (lavapipe
			// even in single precision for f64), wrong by up to the whole
			// result for large quotients; vkjit's exact fmod is f32-only.
			return val{}, in.Errorf("not supported on the device for %s yet: vkjit's math library computes remainder in f16, bf16, f32 and f64", t)
		case isS:
			// XLA: x%0 = x; INT_MIN % -1 = 0.
			dz := k.boolOp(spirv.OpIEqual, a[1].id, k.zero(t))
			m1 := k.boolOp(spirv.OpIEqual, a[1].id, k.constInt(t, allOnes(t)))
			one := val{k.constInt(t, 1), t}
			d := k.sel(k.boolOp(spirv.OpLogicalOr, dz, m1), one, a[1])
			return k.sel(dz, a[0], k.srem(a[0], d)), nil
		case isU:
			dz := k.boolOp(spirv.OpIEqual, a[1].id, k.zero(t))
			d := k.sel(dz, val{k.constInt(t, 1), t}, a[1])
			r := k.op(spirv.OpUMod, t, a[0].id, d.id)
			return k.sel(dz, a[0], r), nil
		}
	case hlo.OpMaximum, hlo.OpMinimum:
		isMax := in.Op == hlo.OpMaximum
		switch {
		case isF:
			// IEEE 754-2019 maximum and minimum, as hlo/eval: NaN
			// propagates (GLSL FMax/FMin leave it undefined) and -0 is
			// below +0: equal operands (only zeros differ) combine
			// their bits, AND for the maximum, OR for the minimum.
			cmp, bitOp := spirv.OpFOrdGreaterThan, spirv.OpBitwiseAnd
			if !isMax {
				cmp, bitOp = spirv.OpFOrdLessThan, spirv.OpBitwiseOr
			}
			// Against a constant that is not NaN, only the other operand
			// can be NaN; and unless the constant is the zero the
			// result would not take (-0 for the maximum, +0 for the
			// minimum), an operand equal to it has its bits, so that
			// x beyond c ? x : c is the whole answer: relu's max(x, 0)
			// in 4 instructions instead of 10.
			for i := range 2 {
				c, ok := k.knownFloat(a[i])
				if !ok || math.IsNaN(c) || c == 0 && math.Signbit(c) == isMax {
					continue
				}
				x := a[1-i]
				r := k.sel(k.boolOp(cmp, x.id, a[i].id), x, a[i])
				return k.sel(k.isNaN(x), x, r), nil
			}
			r := k.sel(k.boolOp(cmp, a[0].id, a[1].id), a[0], a[1])
			ut := k.u32()
			if regBits(t) == 64 { // as two words: the device may lack shaderInt64
				ut = k.b.TypeVector(ut, 2)
			}
			bits := func(v val) spirv.ID { return k.f.Bitcast(ut, v.id) }
			both := val{k.f.Bitcast(k.scalarType(t), k.f.Apply(bitOp, ut, bits(a[0]), bits(a[1]))), t}
			r = k.sel(k.boolOp(spirv.OpFOrdEqual, a[0].id, a[1].id), both, r)
			r = k.sel(k.isNaN(a[1]), a[1], r)
			return k.sel(k.isNaN(a[0]), a[0], r), nil
		case isS:
			return k.ext(map[bool]spirv.GLSLInst{true: spirv.GLSLSMax, false: spirv.GLSLSMin}[isMax], t, a[0].id, a[1].id), nil
		case isU:
			return k.ext(map[bool]spirv.GLSLInst{true: spirv.GLSLUMax, false: spirv.GLSLUMin}[isMax], t, a[0].id, a[1].id), nil
		case isB:
			o := spirv.OpLogicalOr
			if !isMax {
				o = spirv.OpLogicalAnd
			}
			return val{k.boolOp(o, a[0].id, a[1].id), t}, nil
		}
	case hlo.OpAnd, hlo.OpOr, hlo.OpXor:
		if isB {
			o := map[hlo.Opcode]spirv.Op{hlo.OpAnd: spirv.OpLogicalAnd, hlo.OpOr: spirv.OpLogicalOr, hlo.OpXor: spirv.OpLogicalNotEqual}[in.Op]
			return val{k.boolOp(o, a[0].id, a[1].id), t}, nil
		}
		if isS || isU {
			o := map[hlo.Opcode]spirv.Op{hlo.OpAnd: spirv.OpBitwiseAnd, hlo.OpOr: spirv.OpBitwiseOr, hlo.OpXor: spirv.OpBitwiseXor}[in.Op]
			return k.op(o, t, a[0].id, a[1].id), nil
		}
	case hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		if !(isS || isU) {
			break
		}
		// A shift by the bit width or more (as unsigned) is 0 in XLA, or
		// all sign bits for an arithmetic shift; SPIR-V leaves it undefined.
		ut := hlo.U32
		if t.Bits() == 64 {
			ut = hlo.U64
		}
		amt := a[1].id
		if t != ut {
			amt = k.op(spirv.OpBitcast, ut, a[1].id).id
		}
		big := k.boolOp(spirv.OpUGreaterThanEqual, amt, k.constInt(ut, uint64(t.Bits())))
		safe := k.sel(big, val{k.constInt(ut, 0), ut}, val{amt, ut})
		switch in.Op {
		case hlo.OpShiftLeft:
			return k.sel(big, val{k.zero(t), t}, k.op(spirv.OpShiftLeftLogical, t, a[0].id, safe.id)), nil
		case hlo.OpShiftRightLogical:
			return k.sel(big, val{k.zero(t), t}, k.op(spirv.OpShiftRightLogical, t, k.masked(a[0]).id, safe.id)), nil
		}
		maxShift := k.sel(big, val{k.constInt(ut, uint64(t.Bits()-1)), ut}, val{amt, ut})
		x := a[0]
		if isNarrow(t) && isU { // the sign bit is the narrow type's top bit
			sh := k.cu32(uint32(32 - t.Bits()))
			x = k.op(spirv.OpShiftRightArithmetic, t, k.op(spirv.OpShiftLeftLogical, t, x.id, sh).id, sh)
		}
		return k.op(spirv.OpShiftRightArithmetic, t, x.id, maxShift.id), nil
	case hlo.OpCompare:
		return k.compare(in, a[0], a[1])
	case hlo.OpSelect:
		return k.sel(a[0].id, a[1], a[2]), nil
	case hlo.OpClamp:
		// clamp(lo, x, hi) = min(max(x, lo), hi) with XLA's max/min.
		mx, err := k.emitScalar(&hlo.Instruction{Name: in.Name, Op: hlo.OpMaximum, Shape: in.Shape, Pos: in.Pos}, []val{a[1], a[0]})
		if err != nil {
			return val{}, err
		}
		return k.emitScalar(&hlo.Instruction{Name: in.Name, Op: hlo.OpMinimum, Shape: in.Shape, Pos: in.Pos}, []val{mx, a[2]})
	}
	return val{}, unsupported(in, t)
}

// srem is x rem d truncated toward zero, the result taking x's sign, for
// signed x and d != 0 (d = -1 excluded by the caller where x may be the
// minimum): Vulkan leaves OpSRem and OpSMod undefined for a negative
// operand (NVIDIA's gave 4 for -2 rem 3), so the magnitudes go through
// OpUMod, the minimum's as the unsigned 2^(n-1) its negation wraps to.
func (k *kernelBuilder) srem(x, d val) val {
	t := x.t
	ut := hlo.U32
	if regBits(t) == 64 {
		ut = hlo.U64
	}
	abs := func(v val) (spirv.ID, spirv.ID) {
		neg := k.boolOp(spirv.OpSLessThan, v.id, k.zero(t))
		m := k.sel(neg, k.op(spirv.OpSNegate, t, v.id), v)
		return k.op(spirv.OpBitcast, ut, m.id).id, neg
	}
	ux, neg := abs(x)
	ud, _ := abs(d)
	r := k.op(spirv.OpBitcast, t, k.op(spirv.OpUMod, ut, ux, ud).id)
	return k.sel(neg, k.op(spirv.OpSNegate, t, r.id), r)
}

func (k *kernelBuilder) compare(in *hlo.Instruction, x, y val) (val, error) {
	dir := in.A.Direction
	t := x.t
	var o spirv.Op
	switch t.Kind() {
	case hlo.KindFloat:
		// Ordered comparisons are false with NaN, except NE, which is true.
		o = map[string]spirv.Op{"EQ": spirv.OpFOrdEqual, "NE": spirv.OpFUnordNotEqual, "LT": spirv.OpFOrdLessThan,
			"LE": spirv.OpFOrdLessThanEqual, "GT": spirv.OpFOrdGreaterThan, "GE": spirv.OpFOrdGreaterThanEqual}[dir]
	case hlo.KindSigned:
		o = map[string]spirv.Op{"EQ": spirv.OpIEqual, "NE": spirv.OpINotEqual, "LT": spirv.OpSLessThan,
			"LE": spirv.OpSLessThanEqual, "GT": spirv.OpSGreaterThan, "GE": spirv.OpSGreaterThanEqual}[dir]
	case hlo.KindUnsigned:
		o = map[string]spirv.Op{"EQ": spirv.OpIEqual, "NE": spirv.OpINotEqual, "LT": spirv.OpULessThan,
			"LE": spirv.OpULessThanEqual, "GT": spirv.OpUGreaterThan, "GE": spirv.OpUGreaterThanEqual}[dir]
	case hlo.KindBool:
		// false < true: compare as 0/1.
		xi := k.sel(x.id, val{k.cu32(1), hlo.U32}, val{k.cu32(0), hlo.U32})
		yi := k.sel(y.id, val{k.cu32(1), hlo.U32}, val{k.cu32(0), hlo.U32})
		return k.compare(in, xi, yi)
	}
	if o == 0 {
		return val{}, in.Errorf("bad comparison direction %q", dir)
	}
	if in.A.CompareType == "TOTALORDER" && t.IsFloat() {
		xs, ys := k.totalOrderBits(x), k.totalOrderBits(y)
		ti := &hlo.Instruction{Name: in.Name, Op: in.Op, Pos: in.Pos, A: in.A}
		ti.A.CompareType = ""
		return k.compare(ti, xs, ys)
	}
	return val{k.boolOp(o, x.id, y.id), hlo.PRED}, nil
}

// totalOrderBits is float x's bits as a signed integer (s32, s64 for
// f64) whose order is the total order (-NaN < -inf < ... < -0 < +0 <
// ... < inf < NaN): the magnitude bits of negative values flipped.
// f16/bf16 are held as f32, which orders them the same way.
func (k *kernelBuilder) totalOrderBits(x val) val {
	it := hlo.S32
	if regBits(x.t) == 64 {
		it = hlo.S64
	}
	b := k.op(spirv.OpBitcast, it, x.id)
	sign := k.op(spirv.OpShiftRightArithmetic, it, b.id, k.constInt(it, uint64(regBits(x.t)-1)))
	mag := k.op(spirv.OpShiftRightLogical, it, sign.id, k.constInt(it, 1))
	return k.op(spirv.OpBitwiseXor, it, b.id, mag.id)
}

// trunc is x rounded toward zero. lavapipe's double Trunc leaves
// 2^52 - 0.5 as it is (and makes -0.3 +0); floor and ceil are exact.
func (k *kernelBuilder) trunc(x val) val {
	if regBits(x.t) != 64 {
		return k.ext(spirv.GLSLTrunc, x.t, x.id)
	}
	neg := k.boolOp(spirv.OpFOrdLessThan, x.id, k.constFloat(x.t, 0))
	return k.sel(neg, k.ext(spirv.GLSLCeil, x.t, x.id), k.ext(spirv.GLSLFloor, x.t, x.id))
}

// signOf gives r, x rounded to an integer, x's sign, as IEEE's
// roundings have it (-0.3 rounds to -0): lavapipe's double RoundEven
// and Trunc give +0 there (found by FuzzPrograms: y * round(-0) with y
// negative came out -0, testdata/fuzz/round_negative_zero_f64.hlo).
func (k *kernelBuilder) signOf(x, r val) val {
	abs := k.ext(spirv.GLSLFAbs, r.t, r.id)
	return k.sel(k.signSet(x), k.op(spirv.OpFNegate, r.t, abs.id), abs)
}
