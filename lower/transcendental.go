package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Accurate f32 exp and log, replacing GLSL.std.450's (measured up to 28
// ulp on lavapipe). Cody-Waite range reduction and the Cephes expf/logf
// polynomials, evaluated with separately rounded multiplies and adds (all
// Vulkan guarantees): errors measured against float64 are in
// docs/ACCURACY.md. f16 and bf16 use them and round; f64 is not covered.

func (k *kernelBuilder) f32c(v float64) spirv.ID { return k.b.ConstF32(float32(v)) }

// fma2 is a*b + c with two roundings.
func (k *kernelBuilder) fma2(a, b, c spirv.ID) spirv.ID {
	f32 := k.b.TypeFloat(32)
	return k.f.Op(spirv.OpFAdd, f32, uint32(k.f.Op(spirv.OpFMul, f32, uint32(a), uint32(b))), uint32(c))
}

// expF32 returns e^x for an f32 register value.
func (k *kernelBuilder) expF32(x spirv.ID) spirv.ID {
	f32, s32 := k.b.TypeFloat(32), k.b.TypeInt(32, true)
	fop := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Op(o, f32, uint32(a), uint32(b)) }
	// Clamp first so that n stays in range; the edges are fixed below.
	xc := k.f.Ext(f32, spirv.GLSLFClamp, x, k.f32c(-104), k.f32c(89))
	n := k.f.Ext(f32, spirv.GLSLRoundEven, fop(spirv.OpFMul, xc, k.f32c(math.Log2E)))
	// r = x - n*ln2, with ln2 split so that n*ln2hi is exact.
	r := fop(spirv.OpFSub, xc, fop(spirv.OpFMul, n, k.f32c(0.693359375)))
	r = fop(spirv.OpFSub, r, fop(spirv.OpFMul, n, k.f32c(-2.12194440e-4)))
	p := k.f32c(1.9875691500e-4)
	for _, c := range []float64{1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		p = k.fma2(p, r, k.f32c(c))
	}
	y := fop(spirv.OpFAdd, k.fma2(fop(spirv.OpFMul, p, r), r, r), k.f32c(1))
	// Scale by 2^n in two steps so that 2^n itself never overflows or
	// becomes subnormal.
	ni := k.f.Op(spirv.OpConvertFToS, s32, uint32(n))
	half := k.f.Op(spirv.OpShiftRightArithmetic, s32, uint32(ni), uint32(k.b.ConstS32(1)))
	rest := k.f.Op(spirv.OpISub, s32, uint32(ni), uint32(half))
	pow2 := func(e spirv.ID) spirv.ID { // 2^e for e in [-126, 127], built from its bits
		bits := k.f.Op(spirv.OpShiftLeftLogical, s32, uint32(k.f.Op(spirv.OpIAdd, s32, uint32(e), uint32(k.b.ConstS32(127)))), uint32(k.b.ConstS32(23)))
		return k.f.Op(spirv.OpBitcast, f32, uint32(bits))
	}
	y = fop(spirv.OpFMul, fop(spirv.OpFMul, y, pow2(half)), pow2(rest))
	y = k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpFOrdGreaterThan, x, k.f32c(88.72283935546875))), uint32(k.f32c(math.Inf(1))), uint32(y))
	y = k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpFOrdLessThan, x, k.f32c(-103.972084))), uint32(k.f32c(0)), uint32(y))
	return k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpIsNan, x)), uint32(x), uint32(y))
}

// logF32 returns ln x for an f32 register value.
func (k *kernelBuilder) logF32(x spirv.ID) spirv.ID {
	f32, u32, s32 := k.b.TypeFloat(32), k.u32(), k.b.TypeInt(32, true)
	fop := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Op(o, f32, uint32(a), uint32(b)) }
	// Subnormals: scale into the normal range first.
	sub := k.boolOp(spirv.OpFOrdLessThan, x, k.f32c(0x1p-126))
	xs := k.f.Op(spirv.OpSelect, f32, uint32(sub), uint32(fop(spirv.OpFMul, x, k.f32c(0x1p23))), uint32(x))
	bias := k.f.Op(spirv.OpSelect, s32, uint32(sub), uint32(k.b.ConstS32(126+23)), uint32(k.b.ConstS32(126)))
	bits := k.f.Op(spirv.OpBitcast, u32, uint32(xs))
	e := k.f.Op(spirv.OpISub, s32, uint32(k.f.Op(spirv.OpBitcast, s32, uint32(k.f.Op(spirv.OpShiftRightLogical, u32, uint32(bits), uint32(k.cu32(23)))))), uint32(bias))
	m := k.f.Op(spirv.OpBitcast, f32, uint32(k.f.Op(spirv.OpBitwiseOr, u32, uint32(k.f.Op(spirv.OpBitwiseAnd, u32, uint32(bits), uint32(k.cu32(0x007fffff)))), uint32(k.cu32(0x3f000000)))))
	// m in [0.5, 1): below sqrt(1/2) use 2m-1 and e-1, else m-1.
	low := k.boolOp(spirv.OpFOrdLessThan, m, k.f32c(0.707106781186547524))
	e = k.f.Op(spirv.OpSelect, s32, uint32(low), uint32(k.f.Op(spirv.OpISub, s32, uint32(e), uint32(k.b.ConstS32(1)))), uint32(e))
	z := k.f.Op(spirv.OpSelect, f32, uint32(low), uint32(fop(spirv.OpFSub, fop(spirv.OpFAdd, m, m), k.f32c(1))), uint32(fop(spirv.OpFSub, m, k.f32c(1))))
	ef := k.f.Op(spirv.OpConvertSToF, f32, uint32(e))
	zz := fop(spirv.OpFMul, z, z)
	y := k.f32c(7.0376836292e-2)
	for _, c := range []float64{-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1} {
		y = k.fma2(y, z, k.f32c(c))
	}
	y = fop(spirv.OpFMul, fop(spirv.OpFMul, y, z), zz)
	y = k.fma2(ef, k.f32c(-2.12194440e-4), y)
	y = k.fma2(zz, k.f32c(-0.5), y)
	r := fop(spirv.OpFAdd, z, y)
	r = k.fma2(ef, k.f32c(0.693359375), r)
	// Edges: log(±0) = -inf, log(x<0) = NaN (-inf included), log(inf) =
	// inf, NaN stays.
	r = k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpFOrdEqual, x, k.f32c(0))), uint32(k.f32c(math.Inf(-1))), uint32(r))
	r = k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpFOrdLessThan, x, k.f32c(0))), uint32(k.f32c(math.NaN())), uint32(r))
	r = k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpFOrdEqual, x, k.f32c(math.Inf(1)))), uint32(x), uint32(r))
	return k.f.Op(spirv.OpSelect, f32, uint32(k.boolOp(spirv.OpIsNan, x)), uint32(x), uint32(r))
}

// accurateUnary emits exp, log and logistic for f32 (and f16/bf16, which
// compute in f32 and round); ok is false for other types.
func (k *kernelBuilder) accurateUnary(op hlo.Opcode, x val) (val, bool) {
	if x.t != hlo.F32 && x.t != hlo.F16 && x.t != hlo.BF16 {
		return val{}, false
	}
	f32 := k.b.TypeFloat(32)
	switch op {
	case hlo.OpExp:
		return val{k.expF32(x.id), x.t}, true
	case hlo.OpLog:
		return val{k.logF32(x.id), x.t}, true
	case hlo.OpLogistic:
		// 1 / (1 + e^-x); e^-x overflows to inf for x < -88.7, giving 0.
		e := k.expF32(k.f.Op(spirv.OpFNegate, f32, uint32(x.id)))
		d := k.f.Op(spirv.OpFAdd, f32, uint32(k.f32c(1)), uint32(e))
		return val{k.f.Op(spirv.OpFDiv, f32, uint32(k.f32c(1)), uint32(d)), x.t}, true
	}
	return val{}, false
}
