package mathlib

import (
	"math"

	"github.com/vkjit/vkjit/spirv"
)

// The device math library: f32 elementary functions written with
// operations whose accuracy Vulkan guarantees (add, subtract and multiply
// correctly rounded; integer ops exact), because GLSL.std.450's sin, cos,
// tan, tanh, atan2, pow and exp are far looser on real drivers (see
// docs/ACCURACY.md for what was measured on lavapipe, and for each
// function's error against float64). f16 and bf16 compute in f32 and
// round. Where a step relies on an error-free transformation (two-sum,
// Dekker's product), its operations carry NoContraction so that a driver
// may not fuse or reassociate them.

// fm emits float math of one width (f32 here; f64.go's dm embeds it for
// f64) into function fn of module bd; its methods keep the formulas
// below readable.
type fm struct {
	bd             *spirv.Builder
	fn             *spirv.Function
	w              int      // 32 or 64
	f, u, s, b, u2 spirv.ID // the float type, u32, s32, bool, struct{u32,u32}
	d              Driver
}

func newF32(bd *spirv.Builder, fn *spirv.Function, d Driver) fm {
	u := bd.TypeInt(32, false)
	return fm{bd: bd, fn: fn, w: 32, f: bd.TypeFloat(32), u: u, s: bd.TypeInt(32, true), b: bd.TypeBool(), u2: bd.TypeStruct(u, u), d: d}
}

// loop runs body n times (n a u32), counting in a function variable.
func (m fm) loop(n spirv.ID, body func(i spirv.ID) error) error {
	iv := m.fn.LocalVariable(m.bd.TypePointer(spirv.StorageFunction, m.u))
	m.fn.Store(iv, m.bd.ConstU32(0))
	var i spirv.ID
	return m.fn.While(func() spirv.ID {
		i = m.fn.Load(m.u, iv)
		return m.fn.ULessThan(m.b, i, n)
	}, func() error { return body(i) }, func() {
		m.fn.Store(iv, m.fn.IAdd(m.u, m.fn.Load(m.u, iv), m.bd.ConstU32(1)))
	})
}

// c is a float constant of m's width.
func (m fm) c(v float64) spirv.ID {
	if m.w == 64 {
		bits := math.Float64bits(v)
		return m.bd.Constant(m.f, uint32(bits), uint32(bits>>32))
	}
	return m.bd.ConstF32(float32(v))
}
func (m fm) cu(v uint32) spirv.ID { return m.bd.ConstU32(v) }
func (m fm) cs(v int32) spirv.ID  { return m.bd.ConstS32(v) }

func (m fm) op(o spirv.Op, t spirv.ID, args ...spirv.ID) spirv.ID {
	id := m.fn.Apply(o, t, args...)
	if m.d.Contracts {
		switch o {
		case spirv.OpFAdd, spirv.OpFSub, spirv.OpFMul, spirv.OpFDiv:
			m.bd.Decorate(id, spirv.DecorationNoContraction) // Driver.Contracts
		}
	}
	return id
}

func (m fm) add(a, b spirv.ID) spirv.ID { return m.op(spirv.OpFAdd, m.f, a, b) }
func (m fm) sub(a, b spirv.ID) spirv.ID { return m.op(spirv.OpFSub, m.f, a, b) }
func (m fm) mul(a, b spirv.ID) spirv.ID { return m.op(spirv.OpFMul, m.f, a, b) }

// div is a/b. Where the driver's f32 division is not exact (Vulkan
// allows 2.5 ulps; NVIDIA's multiplies by a reciprocal, which flushes to
// 0 for a divisor beyond 2^126: abs(2e38+2e38i) came out 2e38) and the
// device has f64, the quotient is taken in f64 and rounded to f32: a
// quotient of 24-bit significands lies at least about 2^-49 (relative)
// from the nearest point halfway between two f32s, farther than an f64
// quotient within Vulkan's 2.5 ulps (2^-51.7) strays, so the rounding
// is IEEE's; and the f64 range holds every f32 operand's reciprocal.
func (m fm) div(a, b spirv.ID) spirv.ID {
	if m.d.IEEEDivSqrt || !m.d.Float64 || m.w != 32 {
		return m.op(spirv.OpFDiv, m.f, a, b)
	}
	f64 := m.bd.TypeFloat(64)
	wide := func(x spirv.ID) spirv.ID { return m.fn.Apply(spirv.OpFConvert, f64, x) }
	return m.fn.Apply(spirv.OpFConvert, m.f, m.exactOf(f64, spirv.OpFDiv, wide(a), wide(b)))
}

// sqrt is the square root of x > 0 (an infinity or NaN passes through
// the driver's). Where the driver's is not exact (Vulkan bounds it only
// as 1/inversesqrt) and the device has f64, the root is taken in f64,
// corrected once by Newton's step s + (x - s*s)*(0.5/s) to within about
// 2^-53, and rounded to f32: the root of a 24-bit significand lies at
// least about 2^-51 from a point halfway between two f32s (sqrt of
// 0x1.fffffep127 is that close), so the rounding is IEEE's.
func (m fm) sqrt(x spirv.ID) spirv.ID {
	s0 := m.fn.Ext(m.f, spirv.GLSLSqrt, x)
	if m.d.IEEEDivSqrt || !m.d.Float64 || m.w != 32 {
		return s0
	}
	f64 := m.bd.TypeFloat(64)
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return m.exactOf(f64, o, a, b) }
	xw := m.fn.Apply(spirv.OpFConvert, f64, x)
	s := m.fn.Ext(f64, spirv.GLSLSqrt, xw)
	half := m.bd.Constant(f64, 0, 0x3fe00000) // 0.5
	s = op(spirv.OpFAdd, s, op(spirv.OpFMul, op(spirv.OpFSub, xw, op(spirv.OpFMul, s, s)), op(spirv.OpFDiv, half, s)))
	finite := m.lt(x, m.c(math.Inf(1)))
	return m.self(finite, m.fn.Apply(spirv.OpFConvert, m.f, s), s0)
}

func (m fm) neg(a spirv.ID) spirv.ID { return m.op(spirv.OpFNegate, m.f, a) }
func (m fm) abs(a spirv.ID) spirv.ID { return m.fn.Ext(m.f, spirv.GLSLFAbs, a) }

// exact emits a float op that the driver must round exactly as written.
func (m fm) exact(o spirv.Op, a, b spirv.ID) spirv.ID { return m.exactOf(m.f, o, a, b) }

// exactOf is exact for a float type t other than m's (div and sqrt's f64).
func (m fm) exactOf(t spirv.ID, o spirv.Op, a, b spirv.ID) spirv.ID {
	id := m.fn.Apply(o, t, a, b)
	m.bd.Decorate(id, spirv.DecorationNoContraction)
	return id
}

// sel picks a or b (of type t) by cond.
func (m fm) sel(t, cond, a, b spirv.ID) spirv.ID { return m.op(spirv.OpSelect, t, cond, a, b) }
func (m fm) self(cond, a, b spirv.ID) spirv.ID   { return m.sel(m.f, cond, a, b) }

func (m fm) lt(a, b spirv.ID) spirv.ID  { return m.op(spirv.OpFOrdLessThan, m.b, a, b) }
func (m fm) gt(a, b spirv.ID) spirv.ID  { return m.op(spirv.OpFOrdGreaterThan, m.b, a, b) }
func (m fm) ge(a, b spirv.ID) spirv.ID  { return m.op(spirv.OpFOrdGreaterThanEqual, m.b, a, b) }
func (m fm) eq(a, b spirv.ID) spirv.ID  { return m.op(spirv.OpFOrdEqual, m.b, a, b) }
func (m fm) or(a, b spirv.ID) spirv.ID  { return m.op(spirv.OpLogicalOr, m.b, a, b) }
func (m fm) and(a, b spirv.ID) spirv.ID { return m.op(spirv.OpLogicalAnd, m.b, a, b) }
func (m fm) not(a spirv.ID) spirv.ID    { return m.op(spirv.OpLogicalNot, m.b, a) }
func (m fm) isNaN(a spirv.ID) spirv.ID  { return m.op(spirv.OpIsNan, m.b, a) }
func (m fm) isInf(a spirv.ID) spirv.ID  { return m.op(spirv.OpIsInf, m.b, a) }

func (m fm) bits(x spirv.ID) spirv.ID     { return m.op(spirv.OpBitcast, m.u, x) }
func (m fm) fromBits(u spirv.ID) spirv.ID { return m.op(spirv.OpBitcast, m.f, u) }
func (m fm) uop(o spirv.Op, a, b spirv.ID) spirv.ID {
	return m.op(o, m.u, a, b)
}

// signBit is x's sign bit alone (as u32), -0 and NaN included.
func (m fm) signBit(x spirv.ID) spirv.ID {
	return m.uop(spirv.OpBitwiseAnd, m.bits(x), m.cu(0x80000000))
}

// xorSign flips mag's sign where sign (a u32 holding only a sign bit) is set.
func (m fm) xorSign(mag, sign spirv.ID) spirv.ID {
	return m.fromBits(m.uop(spirv.OpBitwiseXor, m.bits(mag), sign))
}

// poly evaluates c[0]*x^(n-1) + ... + c[n-1] by Horner's rule.
func (m fm) poly(x spirv.ID, cs ...float64) spirv.ID {
	y := m.c(cs[0])
	for _, c := range cs[1:] {
		y = m.add(m.mul(y, x), m.c(c))
	}
	return y
}

// twoSum returns s = fl(a+b) and the exact error e: a + b = s + e.
func (m fm) twoSum(a, b spirv.ID) (s, e spirv.ID) {
	s = m.exact(spirv.OpFAdd, a, b)
	bv := m.exact(spirv.OpFSub, s, a)
	av := m.exact(spirv.OpFSub, s, bv)
	e = m.exact(spirv.OpFAdd, m.exact(spirv.OpFSub, a, av), m.exact(spirv.OpFSub, b, bv))
	return s, e
}

// split is Veltkamp's: a = hi + lo with hi holding the top 12 bits.
func (m fm) split(a spirv.ID) (hi, lo spirv.ID) {
	c := 4097.0 // 2^ceil(24/2) + 1
	if m.w == 64 {
		c = 134217729 // 2^ceil(53/2) + 1
	}
	t := m.exact(spirv.OpFMul, a, m.c(c))
	hi = m.exact(spirv.OpFSub, t, m.exact(spirv.OpFSub, t, a))
	return hi, m.exact(spirv.OpFSub, a, hi)
}

// twoProd returns p = fl(a*b) and the exact error e (Dekker): a*b = p + e,
// barring overflow and underflow.
func (m fm) twoProd(a, b spirv.ID) (p, e spirv.ID) {
	p = m.exact(spirv.OpFMul, a, b)
	ah, al := m.split(a)
	bh, bl := m.split(b)
	e = m.exact(spirv.OpFSub, m.exact(spirv.OpFMul, ah, bh), p)
	e = m.exact(spirv.OpFAdd, e, m.exact(spirv.OpFMul, ah, bl))
	e = m.exact(spirv.OpFAdd, e, m.exact(spirv.OpFMul, al, bh))
	e = m.exact(spirv.OpFAdd, e, m.exact(spirv.OpFMul, al, bl))
	return p, e
}

// pow2 is 2^e for an s32 e in [-126, 127], built from its bits.
func (m fm) pow2(e spirv.ID) spirv.ID {
	b := m.op(spirv.OpShiftLeftLogical, m.s, m.op(spirv.OpIAdd, m.s, e, m.cs(127)), m.cs(23))
	return m.fromBits(b)
}

// scale multiplies y by 2^n (n an s32 in [-252, 254]) in two steps, so
// that neither factor overflows or becomes subnormal.
func (m fm) scale(y, n spirv.ID) spirv.ID {
	half := m.op(spirv.OpShiftRightArithmetic, m.s, n, m.cs(1))
	rest := m.op(spirv.OpISub, m.s, n, half)
	return m.mul(m.mul(y, m.pow2(half)), m.pow2(rest))
}

// ma is a*b + c in two roundings. XLA's CPU code fuses the multiply-
// adds of its exp (LLVM contracts them there); Vulkan does not promise
// a fused GLSL.std.450 Fma (its precision is OpFMul's then OpFAdd's) and
// llvmpipe splits it, so they stay two operations here, the same on
// every driver: exp then differs from XLA's in the last bit at 3 of
// exp_float32's 400 values.
func (m fm) ma(a, b, c spirv.ID) spirv.ID { return m.add(m.mul(a, b), c) }

// expReduce splits e^x = 2^n * (1 + p) as XLA's CPU backend computes f32
// exp (xla/service/cpu/llvm_ir_runtime.cc, Cephes expf's polynomial;
// its multiply-adds unfused, see ma), so that exp, and expm1 beyond
// 1/2, give XLA's bits: n = floor(x log2(e) + 1/2) (float and s32),
// r = x - n ln2 with ln2 in two parts (n*ln2hi exact), p = r + r^2 q(r)
// with q of degree 5. exp's error is 0.98 ulp over [-87.3, 88.72] (a
// float64 simulation of these f32 steps over 8e6 arguments; vkjit's
// own degree-4 q had 0.99), and it matches 397 of exp_float32's 400 XLA
// values, where correctly rounded values match 359; the one value of
// sin_complex64 that no accurate exp passes (XLA's e^11.567824 is 0.67
// ulp low) is XLA's. Callers handle x outside [-104, 89] and NaN by
// selects.
func (m fm) expReduce(x spirv.ID) (n, ni, p spirv.ID) {
	n = m.fn.Ext(m.f, spirv.GLSLFloor, m.ma(x, m.c(1.44269504088896341), m.c(0.5)))
	r := m.ma(n, m.c(-0.693359375), x)
	r = m.ma(n, m.c(2.12194440e-4), r)
	q := m.ma(r, m.c(1.9875691500e-4), m.c(1.3981999507e-3))
	for _, c := range []float64{8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		q = m.ma(q, r, m.c(c))
	}
	p = m.ma(q, m.mul(r, r), r)
	return n, m.op(spirv.OpConvertFToS, m.s, n), p
}

// exp is e^x. x is not clamped: outside [-103.97, 88.72] (and for NaN)
// the selects replace whatever the reduction made of it, so a clamp
// (NaN-aware max and min, 6 instructions on lavapipe) would only cost:
// softmax 8.9-9.2 ms against 9.4 (min of 15, three interleaved rounds).
// Unlike XLA's, whose n stops at 127 (3.9 ulp near 88.7) and whose
// results below 2^-126 flush to 0, the scaling takes n = 128 and
// subnormal results in two steps.
func (m fm) exp(x spirv.ID) spirv.ID {
	_, ni, p := m.expReduce(x)
	return m.expFrom(x, ni, p)
}

// expFrom is exp's result from x's reduction.
func (m fm) expFrom(x, ni, p spirv.ID) spirv.ID {
	y := m.scale(m.add(p, m.c(1)), ni)
	y = m.self(m.gt(x, m.c(88.72283935546875)), m.c(math.Inf(1)), y)
	y = m.self(m.lt(x, m.c(-103.972084)), m.c(0), y)
	return m.self(m.isNaN(x), x, y)
}

// expTail is e^(x + tl) for |tl| far below x's ulp, as e^x (1 + tl)
// with the tail applied to the significand before the scaling by 2^n:
// after it (r + r*tl) an r that overflowed gives inf*0 or inf - inf,
// NaN, where the answer is inf (pow(2, 128), every base a power of two),
// and a result on the edge of overflow rounds once, where it belongs.
func (m fm) expTail(x, tl spirv.ID) spirv.ID {
	_, ni, p := m.expReduce(x)
	y := m.add(p, m.c(1))
	y = m.scale(m.add(y, m.mul(y, tl)), ni)
	y = m.self(m.gt(x, m.c(88.72283935546875)), m.c(math.Inf(1)), y)
	y = m.self(m.lt(x, m.c(-103.972084)), m.c(0), y)
	return m.self(m.isNaN(x), x, y)
}

// expNonPositive is exp for x known to be at most 0 or NaN (x - max
// over x's row: softmax's exponentials), with exp's bits (NaN gives a
// NaN, not necessarily x's): no overflow select, and 2^n for n in
// [-150, 0] applied by two multiplies, by 2^(n+25) (normal, so exact)
// and by 2^-25, which rounds as scale's second step does; a NaN x
// stays NaN through them, so no NaN select either (scale's two steps
// and the two selects are 12 instructions, these 5): softmax ran 6%,
// then 2% faster (interleaved pairs).
func (m fm) expNonPositive(x spirv.ID) spirv.ID {
	_, ni, p := m.expReduce(x)
	f := m.fromBits(m.op(spirv.OpShiftLeftLogical, m.s, m.op(spirv.OpIAdd, m.s, ni, m.cs(127+25)), m.cs(23)))
	y := m.mul(m.mul(m.add(p, m.c(1)), f), m.c(0x1p-25))
	return m.self(m.lt(x, m.c(-103.972084)), m.c(0), y)
}

// expm1 is e^x - 1 as XLA computes it beyond |x| = 1/2: its exp, then
// the subtraction (1.69 ulp at worst there, by the simulation above).
// Nearer 0, where XLA's tanh(x/2)(e^x + 1) with its rational tanh errs
// by 5.5 ulp, it is 2^n*p + (2^n - 1) from the same reduction, n in
// {-1, 0, 1}: both terms are exact, so the one rounding of their sum is
// the only error beyond p's.
func (m fm) expm1(x spirv.ID) spirv.ID {
	_, ni, p := m.expReduce(x)
	t := m.pow2(m.fn.Ext(m.s, spirv.GLSLSClamp, ni, m.cs(-1), m.cs(1)))
	y := m.add(m.mul(t, p), m.sub(t, m.c(1)))
	y = m.self(m.gt(m.abs(x), m.c(0.5)), m.sub(m.expFrom(x, ni, p), m.c(1)), y)
	y = m.self(m.eq(x, m.c(0)), x, y) // keeps -0
	return m.self(m.isNaN(x), x, y)
}

// logParts returns ln x = e*ln2 + z + tail for positive normal or
// subnormal x, with z = m - 1 exact (m the significand scaled into
// [sqrt(1/2), sqrt(2))) and tail the small polynomial remainder, so that
// callers can sum them in the precision they need.
func (m fm) logParts(x spirv.ID) (ef, z, tail spirv.ID) {
	sub := m.lt(x, m.c(0x1p-126)) // subnormals: scale into the normal range first
	xs := m.self(sub, m.mul(x, m.c(0x1p23)), x)
	bias := m.sel(m.s, sub, m.cs(126+23), m.cs(126))
	bits := m.bits(xs)
	e := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.uop(spirv.OpShiftRightLogical, bits, m.cu(23))), bias)
	mant := m.fromBits(m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpBitwiseAnd, bits, m.cu(0x007fffff)), m.cu(0x3f000000)))
	// mant in [0.5, 1): below sqrt(1/2) use 2*mant - 1 and e-1, else mant - 1.
	low := m.lt(mant, m.c(0.707106781186547524))
	e = m.sel(m.s, low, m.op(spirv.OpISub, m.s, e, m.cs(1)), e)
	z = m.self(low, m.sub(m.add(mant, mant), m.c(1)), m.sub(mant, m.c(1)))
	ef = m.op(spirv.OpConvertSToF, m.f, e)
	zz := m.mul(z, z)
	y := m.poly(z, 7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
	tail = m.add(m.mul(m.mul(y, z), zz), m.mul(zz, m.c(-0.5)))
	return ef, z, tail
}

// logEdges applies log's special values for input x to result r.
func (m fm) logEdges(x, r spirv.ID) spirv.ID {
	r = m.self(m.eq(x, m.c(0)), m.c(math.Inf(-1)), r)
	r = m.self(m.lt(x, m.c(0)), m.c(math.NaN()), r)
	r = m.self(m.eq(x, m.c(math.Inf(1))), x, r)
	return m.self(m.isNaN(x), x, r)
}

// log is ln x (Cephes logf's polynomial, ln2 split in two).
func (m fm) log(x spirv.ID) spirv.ID {
	ef, z, tail := m.logParts(x)
	y := m.add(m.mul(ef, m.c(-2.12194440e-4)), tail)
	r := m.add(m.add(z, y), m.mul(ef, m.c(0.693359375)))
	return m.logEdges(x, r)
}

// log1p is ln(1+x): u = fl(1+x) loses the low bits of x, which
// (x - (u-1))/u puts back to first order.
func (m fm) log1p(x spirv.ID) spirv.ID {
	u := m.exact(spirv.OpFAdd, m.c(1), x)
	corr := m.div(m.exact(spirv.OpFSub, x, m.exact(spirv.OpFSub, u, m.c(1))), u)
	// For huge x the correction is meaningless (and inf - inf is NaN).
	corr = m.self(m.lt(m.abs(x), m.c(0x1p24)), corr, m.c(0))
	r := m.add(m.log(u), corr)
	r = m.self(m.eq(u, m.c(1)), x, r) // tiny x: ln(1+x) = x (keeps -0)
	r = m.self(m.eq(x, m.c(-1)), m.c(math.Inf(-1)), r)
	r = m.self(m.lt(x, m.c(-1)), m.c(math.NaN()), r)
	r = m.self(m.eq(x, m.c(math.Inf(1))), x, r)
	return m.self(m.isNaN(x), x, r)
}

// twoOverPi holds the bits of 2/pi after the binary point, 32 to a word,
// most significant first (checked against a 330-bit value of pi in
// mathlib_test.go).
var twoOverPi = [7]uint32{0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB}

// trigReduce returns r in [-pi/4, pi/4] and the quadrant q (u32, 0..3)
// with |x| = q*pi/2 + r (mod 2pi), for any finite |x|. Beyond pi/4 it
// is Payne and Hanek's reduction in integer arithmetic: the 24-bit
// significand times 224 bits of 2/pi, from which the bits around the
// binary point give the quadrant and a 62-bit fraction; exact whatever
// the magnitude, so sin(1e30) is right where the driver's is ±1.
func (m fm) trigReduce(ax spirv.ID) (r, q spirv.ID) {
	bits := m.bits(ax)
	e := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.uop(spirv.OpShiftRightLogical, bits, m.cu(23))), m.cs(150))
	mant := m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpBitwiseAnd, bits, m.cu(0x7fffff)), m.cu(0x800000))
	// Product words p[0] (most significant) .. p[7] of mant * 2/pi.
	var p [8]spirv.ID
	carry := m.cu(0)
	for i := len(twoOverPi) - 1; i >= 0; i-- {
		prod := m.op(spirv.OpUMulExtended, m.u2, mant, m.cu(twoOverPi[i]))
		lo := m.fn.Extract(m.u, prod, 0)
		hi := m.fn.Extract(m.u, prod, 1)
		sum := m.uop(spirv.OpIAdd, lo, carry)
		wrapped := m.op(spirv.OpULessThan, m.b, sum, carry)
		p[i+1] = sum
		carry = m.uop(spirv.OpIAdd, hi, m.sel(m.u, wrapped, m.cu(1), m.cu(0)))
	}
	p[0] = carry
	// Bit b of word j weighs 2^(b + e - 32j). Word j0 holds the 2^1 bit
	// at position b0 = 1 - e + 32*j0; the 96 bits from there down are
	// words j0..j0+2, shifted left by sh = 31 - b0.
	j0 := m.op(spirv.OpShiftRightArithmetic, m.s, m.op(spirv.OpIAdd, m.s, e, m.cs(30)), m.cs(5))
	j0 = m.fn.Ext(m.s, spirv.GLSLSClamp, j0, m.cs(0), m.cs(4))
	sh := m.op(spirv.OpBitcast, m.u, m.op(spirv.OpISub, m.s, m.op(spirv.OpIAdd, m.s, e, m.cs(30)), m.op(spirv.OpShiftLeftLogical, m.s, j0, m.cs(5))))
	sh = m.fn.Ext(m.u, spirv.GLSLUClamp, sh, m.cu(0), m.cu(31))
	pick := func(off int) spirv.ID {
		w := p[off]
		for j := 1; j <= 4; j++ {
			w = m.sel(m.u, m.op(spirv.OpIEqual, m.b, j0, m.cs(int32(j))), p[j+off], w)
		}
		return w
	}
	a, b, c := pick(0), pick(1), pick(2)
	// b >> (32 - sh), defined for sh = 0 too.
	funnel := func(x, y spirv.ID) spirv.ID {
		return m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpShiftLeftLogical, x, sh),
			m.uop(spirv.OpShiftRightLogical, m.uop(spirv.OpShiftRightLogical, y, m.cu(1)), m.uop(spirv.OpISub, m.cu(31), sh)))
	}
	hiW, loW := funnel(a, b), funnel(b, c)
	// hiW's top two bits are the quadrant; round it to nearest by the
	// next bit, which makes the remaining 62-bit fraction signed.
	q = m.uop(spirv.OpIAdd, m.uop(spirv.OpShiftRightLogical, hiW, m.cu(30)), m.uop(spirv.OpBitwiseAnd, m.uop(spirv.OpShiftRightLogical, hiW, m.cu(29)), m.cu(1)))
	q = m.uop(spirv.OpBitwiseAnd, q, m.cu(3))
	fh := m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpShiftLeftLogical, hiW, m.cu(2)), m.uop(spirv.OpShiftRightLogical, loW, m.cu(30)))
	fl := m.uop(spirv.OpShiftLeftLogical, loW, m.cu(2))
	// fraction = (fh:fl as signed 64 bits) * 2^-64 = t*2^-24 + mid*2^-56.
	t := m.op(spirv.OpShiftRightArithmetic, m.s, m.op(spirv.OpBitcast, m.s, fh), m.cs(8))
	mid := m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpShiftLeftLogical, fh, m.cu(24)), m.uop(spirv.OpShiftRightLogical, fl, m.cu(8)))
	fa := m.mul(m.op(spirv.OpConvertSToF, m.f, t), m.c(0x1p-24))
	fb := m.mul(m.op(spirv.OpConvertUToF, m.f, mid), m.c(0x1p-56))
	hi, lo := m.twoSum(fa, fb)
	// r = (hi + lo) * pi/2 with pi/2 = P1 + P2.
	const p1 = float32(math.Pi / 2)
	p2 := math.Pi/2 - float64(p1)
	rh, re := m.twoProd(hi, m.c(float64(p1)))
	corr := m.add(re, m.add(m.mul(hi, m.c(p2)), m.mul(lo, m.c(float64(p1)))))
	r = m.add(rh, corr)
	small := m.lt(ax, m.c(math.Pi/4))
	return m.self(small, ax, r), m.sel(m.u, small, m.cu(0), q)
}

// sinPoly and cosPoly are Cephes sinf and cosf on [-pi/4, pi/4].
func (m fm) sinPoly(r spirv.ID) spirv.ID {
	z := m.mul(r, r)
	return m.add(m.mul(m.mul(m.poly(z, -1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1), z), r), r)
}

func (m fm) cosPoly(r spirv.ID) spirv.ID {
	z := m.mul(r, r)
	y := m.mul(m.mul(m.poly(z, 2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2), z), z)
	return m.add(m.sub(y, m.mul(z, m.c(0.5))), m.c(1))
}

// sinCos is sin x (cos false) or cos x.
func (m fm) sinCos(x spirv.ID, cos bool) spirv.ID {
	ax := m.abs(x)
	finite := m.not(m.or(m.isNaN(x), m.isInf(x)))
	r, q := m.trigReduce(m.self(finite, ax, m.c(0)))
	s, c := m.sinPoly(r), m.cosPoly(r)
	if cos {
		q = m.uop(spirv.OpIAdd, q, m.cu(1)) // cos x = sin(x + pi/2)
	}
	odd := m.op(spirv.OpINotEqual, m.b, m.uop(spirv.OpBitwiseAnd, q, m.cu(1)), m.cu(0))
	y := m.self(odd, c, s)
	// Quadrants 2 and 3 negate; sin is odd in x, cos even.
	sign := m.uop(spirv.OpShiftLeftLogical, m.uop(spirv.OpBitwiseAnd, q, m.cu(2)), m.cu(30))
	if !cos {
		sign = m.uop(spirv.OpBitwiseXor, sign, m.signBit(x))
	}
	y = m.xorSign(y, sign)
	return m.self(finite, y, m.c(math.NaN()))
}

// tan uses Cephes tanf's polynomial on the reduced argument; odd
// quadrants give -1/tan r.
func (m fm) tan(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	finite := m.not(m.or(m.isNaN(x), m.isInf(x)))
	r, q := m.trigReduce(m.self(finite, ax, m.c(0)))
	z := m.mul(r, r)
	y := m.add(m.mul(m.mul(m.poly(z, 9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2, 1.33387994085e-1, 3.33331568548e-1), z), r), r)
	odd := m.op(spirv.OpINotEqual, m.b, m.uop(spirv.OpBitwiseAnd, q, m.cu(1)), m.cu(0))
	y = m.self(odd, m.div(m.c(-1), y), y)
	y = m.xorSign(y, m.signBit(x))
	return m.self(finite, y, m.c(math.NaN()))
}

// tanh is t/(t + 2) with t = e^(2|x|) - 1, |x| clamped to 9.02 (where
// tanh rounds to 1 in f32): the expm1 form has no cancellation near 0,
// so one formula serves every x, and for 2|x| <= 18.04 both 2^n*p and
// 2^n - 1 are exact, so it needs none of expm1's range handling (2 ulp;
// Cephes tanhf's polynomial below 0.625 and 1 - 2e/(1 + e) above, 1 ulp,
// cost chain8 a tenth more: it spends half its time here).
func (m fm) tanh(x spirv.ID) spirv.ID {
	ax := m.fn.Ext(m.f, spirv.GLSLFMin, m.abs(x), m.c(9.02))
	_, n, p := m.expReduce(m.add(ax, ax))
	s := m.pow2(n)
	t := m.add(m.mul(s, p), m.sub(s, m.c(1)))
	y := m.xorSign(m.div(t, m.add(t, m.c(2))), m.signBit(x))
	return m.self(m.isNaN(x), x, y)
}

// atan01 is atan a for a in [0, 1] (Cephes atanf's reduction and
// polynomial).
func (m fm) atan01(a spirv.ID) spirv.ID {
	mid := m.gt(a, m.c(0.4142135623730950))
	t := m.self(mid, m.div(m.sub(a, m.c(1)), m.add(a, m.c(1))), a)
	z := m.mul(t, t)
	y := m.add(m.mul(m.mul(m.poly(z, 8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1), z), t), t)
	return m.self(mid, m.add(y, m.c(math.Pi/4)), y)
}

// atanRatio folds atan2's arguments into the first octant, at m's width:
// the smaller of |y| and |x| over the larger (0 for two zeros, 1 for two
// infinities, 0 for a finite over an infinite one), and whether |y| was
// the larger.
func (m fm) atanRatio(y, x spirv.ID) (a, swap spirv.ID) {
	ay, ax := m.abs(y), m.abs(x)
	swap = m.gt(ay, ax)
	num, den := m.self(swap, ax, ay), m.self(swap, ay, ax)
	a = m.div(num, den)
	a = m.self(m.eq(den, m.c(0)), m.c(0), a)               // both zero
	a = m.self(m.and(m.isInf(ax), m.isInf(ay)), m.c(1), a) // both infinite
	a = m.self(m.and(m.isInf(den), m.not(m.isInf(num))), m.c(0), a)
	return a, swap
}

// atan2 follows C's atan2 for every sign, zero, infinity and NaN: the
// smaller of |y|, |x| over the larger gives the angle in the first
// octant, which symmetry moves into place.
func (m fm) atan2(y, x spirv.ID) spirv.ID {
	a, swap := m.atanRatio(y, x)
	r := m.atan01(a)
	r = m.self(swap, m.sub(m.c(math.Pi/2), r), r)
	xneg := m.op(spirv.OpINotEqual, m.b, m.signBit(x), m.cu(0))
	r = m.self(xneg, m.sub(m.c(math.Pi), r), r)
	r = m.xorSign(r, m.signBit(y))
	return m.self(m.or(m.isNaN(x), m.isNaN(y)), m.c(math.NaN()), r)
}

// logDF is ln x for positive finite x as an unevaluated sum hi + lo,
// accurate to about 2^-40 relative: ln x = e*ln2 + 2 atanh(s) with s =
// z/(2+z) carried in two floats and the series tail (at most 3.4e-3)
// in one.
func (m fm) logDF(x spirv.ID) (hi, lo spirv.ID) {
	ef, z, _ := m.logParts(x)
	dh, dl := m.twoSum(m.c(2), z)
	sh := m.div(z, dh)
	ph, pl := m.twoProd(sh, dh)
	sl := m.div(m.sub(m.sub(m.sub(z, ph), pl), m.mul(sh, dl)), dh)
	s2 := m.mul(sh, sh)
	tail := m.mul(m.mul(m.mul(sh, s2), m.c(2)), m.poly(s2, 1.0/13, 1.0/11, 1.0/9, 1.0/7, 1.0/5, 1.0/3))
	// ln2 = L1 + L2, L1 with 16 bits so that e*L1 is exact.
	const l1 = 0.693145751953125
	l2 := math.Ln2 - l1
	h, e1 := m.twoSum(m.mul(ef, m.c(l1)), m.add(sh, sh))
	lo = m.add(e1, m.add(m.add(sl, sl), m.add(tail, m.mul(ef, m.c(l2)))))
	return m.twoSum(h, lo)
}

// pow follows C's pow. |x|^y = e^(y ln|x|) with ln|x| carried in two
// floats and the product y*ln|x| made exact, because e^t turns an
// absolute error in t into the same relative error in the result.
func (m fm) pow(x, y spirv.ID) spirv.ID {
	lh, ll := m.logDF(m.abs(x))
	negative := func(v spirv.ID) spirv.ID { return m.op(spirv.OpINotEqual, m.b, m.signBit(v), m.cu(0)) }
	// e^t overflows past 88.72 and is 0 below -104; beyond 2^24 every
	// float is an even integer.
	return m.powFrom(x, y, lh, ll, m.expTail, negative, 88.72283935546875, -104, 0x1p24)
}

// powFrom finishes pow at m's width from ln|x| = lh + ll: e^(y ln|x|)
// with the product made exact (Dekker) and a first-order tail, then C99
// Annex F's special values. expTail is m's e^(th + tl) (expTail above),
// negative reports a sign bit, e^t overflows above maxT and vanishes
// below minT, and every value from intLimit up is an even integer.
func (m fm) powFrom(x, y, lh, ll spirv.ID, expTail func(th, tl spirv.ID) spirv.ID, negative func(spirv.ID) spirv.ID, maxT, minT, intLimit float64) spirv.ID {
	ax := m.abs(x)
	th, te := m.twoProd(y, lh)
	tl := m.add(te, m.mul(y, ll))
	th, tl = m.twoSum(th, tl)
	r := expTail(th, tl)
	// Overflow and underflow, decided on the plain product (Dekker's
	// split overflows for huge |y|, where the answer is 0 or inf anyway).
	t := m.mul(y, lh)
	r = m.self(m.gt(t, m.c(maxT)), m.c(math.Inf(1)), r)
	r = m.self(m.lt(t, m.c(minT)), m.c(0), r)

	// Special values, as C99 Annex F lists them. Whole numbers are
	// told by floor, which is exact on every device: lavapipe's double
	// Trunc is not (on an AVX2 host it returned -283319788.5013971 as it
	// is, so pow(-2, that) gave 0 where C gives NaN).
	whole := func(v spirv.ID) spirv.ID { return m.eq(m.fn.Ext(m.f, spirv.GLSLFloor, v), v) }
	yInt := whole(y)
	half := m.mul(y, m.c(0.5))
	yOdd := m.and(m.and(yInt, m.not(whole(half))), m.lt(m.abs(y), m.c(intLimit)))
	negate := m.and(negative(x), yOdd)
	yNeg := m.lt(y, m.c(0))
	// x = ±0 and x = ±inf: 0 or inf by the sign of y (inverted for inf).
	zeroOrInf := m.self(yNeg, m.c(math.Inf(1)), m.c(0))
	infOrZero := m.self(yNeg, m.c(0), m.c(math.Inf(1)))
	r = m.self(m.eq(ax, m.c(0)), zeroOrInf, r)
	r = m.self(m.isInf(ax), infOrZero, r)
	r = m.self(negate, m.neg(r), r)
	// Negative finite x with non-integer finite y has no real result.
	r = m.self(m.and(m.and(m.lt(x, m.c(0)), m.not(m.isInf(x))), m.and(m.not(yInt), m.not(m.isInf(y)))), m.c(math.NaN()), r)
	// y = ±inf: 1 for |x| = 1, else 0 or inf by |x| < 1 and the sign of y.
	below := m.lt(ax, m.c(1))
	yinf := m.self(m.op(spirv.OpLogicalNotEqual, m.b, below, yNeg), m.c(0), m.c(math.Inf(1)))
	yinf = m.self(m.eq(ax, m.c(1)), m.c(1), yinf)
	r = m.self(m.isInf(y), yinf, r)
	r = m.self(m.or(m.isNaN(x), m.isNaN(y)), m.c(math.NaN()), r)
	r = m.self(m.eq(x, m.c(1)), m.c(1), r) // pow(1, y) = 1, NaN y included
	return m.self(m.eq(y, m.c(0)), m.c(1), r)
}

// erf uses Cephes erff below |x| = 1 and 1 - erfc(|x|) above, with erfc
// = e^(-x^2) * R(1/x^2)/x; f32's erf is 1 beyond 3.92.
func (m fm) erf(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	z := m.mul(x, x)
	small := m.mul(x, m.poly(z, 7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3, -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1, 1.128379165726710))
	q := m.div(m.c(1), ax)
	w := m.mul(q, q)
	p := m.self(m.lt(ax, m.c(2)),
		m.poly(w, 2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1, -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1, 3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1),
		m.poly(w, -1.047766399936249e1, 1.297719955372516e1, -7.495518717768503, 2.921019019210786, -1.015265279202700, 4.218463358204948e-1, -2.820767439740514e-1, 5.641895067754075e-1))
	erfc := m.mul(m.mul(m.exp(m.neg(z)), q), p)
	big := m.xorSign(m.sub(m.c(1), erfc), m.signBit(x))
	big = m.self(m.gt(ax, m.c(4)), m.xorSign(m.c(1), m.signBit(x)), big)
	y := m.self(m.lt(ax, m.c(1)), small, big)
	return m.self(m.isNaN(x), x, y)
}

// cbrt starts from the exponent divided by three (in the bits) and
// takes Newton steps; the last in two floats' worth of residual.
func (m fm) cbrt(x spirv.ID) spirv.ID {
	// Below 2^-78 x is scaled by 2^72 (a cube, root 2^24), so that the
	// final step's residual, down to 2^-48 of x, stays normal: on a
	// device that flushes subnormals (NVIDIA's) it was lost below there
	// and cbrt(-5.3e-35) erred by 1213 ulps.
	ax := m.abs(x)
	sub := m.lt(ax, m.c(0x1p-78))
	xs := m.self(sub, m.mul(ax, m.c(0x1p72)), ax)
	guess := m.fromBits(m.uop(spirv.OpIAdd, m.uop(spirv.OpUDiv, m.bits(xs), m.cu(3)), m.cu(709958130)))
	r := guess
	third := m.c(1.0 / 3)
	for i := 0; i < 3; i++ { // r += (x/r^2 - r)/3
		r = m.add(r, m.mul(m.sub(m.div(xs, m.mul(r, r)), r), third))
	}
	// Final step with the residual x - r^3 computed exactly.
	r2, r2e := m.twoProd(r, r)
	r3, r3e := m.twoProd(r2, r)
	res := m.sub(m.sub(m.sub(xs, r3), r3e), m.mul(r2e, r))
	r = m.add(r, m.div(res, m.mul(m.c(3), r2)))
	r = m.self(sub, m.mul(r, m.c(0x1p-24)), r)
	r = m.self(m.or(m.eq(ax, m.c(0)), m.isInf(ax)), ax, r)
	r = m.xorSign(r, m.signBit(x))
	return m.self(m.isNaN(x), x, r)
}

// ilogb is the unbiased exponent of a finite nonzero x, subnormals
// included.
func (m fm) ilogb(x spirv.ID) spirv.ID {
	bits := m.uop(spirv.OpBitwiseAnd, m.bits(x), m.cu(0x7fffffff))
	normal := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.uop(spirv.OpShiftRightLogical, bits, m.cu(23))), m.cs(127))
	subnormal := m.op(spirv.OpISub, m.s, m.fn.Ext(m.s, spirv.GLSLFindUMsb, bits), m.cs(149))
	return m.sel(m.s, m.op(spirv.OpUGreaterThanEqual, m.b, bits, m.cu(0x800000)), normal, subnormal)
}

// fmod is C's fmod for f32, exact (fmodBy).
func (m fm) fmod(x, y spirv.ID) (spirv.ID, error) {
	return m.fmodBy(x, y, m.ilogb, func(r, x spirv.ID) spirv.ID { return m.xorSign(r, m.signBit(x)) })
}

// fmodBy is C's fmod at m's width, exact: |x| loses the largest y*2^k not
// above it, one binade per step (each subtraction is exact because both
// values lie within a factor of two), so the loop runs at most
// ilogb(x)-ilogb(y)+1 times: 278 at worst for f32, 2100 for f64, and
// once or not at all for |x| < 2|y|. ilogb is the exponent of a finite
// nonzero value; withSign gives the non-negative r the sign of x.
func (m fm) fmodBy(x, y spirv.ID, ilogb func(spirv.ID) spirv.ID, withSign func(r, x spirv.ID) spirv.ID) (spirv.ID, error) {
	ax, ay := m.abs(x), m.abs(y)
	finite := func(v spirv.ID) spirv.ID { return m.not(m.or(m.isNaN(v), m.isInf(v))) }
	work := m.and(m.and(finite(x), finite(y)), m.and(m.ge(ax, ay), m.not(m.eq(ay, m.c(0)))))
	ey := ilogb(ay)
	steps := m.op(spirv.OpIAdd, m.s, m.op(spirv.OpISub, m.s, ilogb(ax), ey), m.cs(1))
	n := m.op(spirv.OpBitcast, m.u, m.sel(m.s, work, steps, m.cs(0)))
	rv := m.fn.LocalVariable(m.bd.TypePointer(spirv.StorageFunction, m.f))
	m.fn.Store(rv, ax)
	err := m.loop(n, func(spirv.ID) error {
		r := m.op(spirv.OpLoad, m.f, rv)
		t := m.fn.Ext(m.f, spirv.GLSLLdexp, ay, m.op(spirv.OpISub, m.s, ilogb(r), ey))
		t = m.self(m.gt(t, r), m.mul(t, m.c(0.5)), t)
		r = m.self(m.ge(r, ay), m.sub(r, t), r)
		m.fn.Store(rv, r)
		return nil
	})
	if err != nil {
		return 0, err
	}
	r := withSign(m.op(spirv.OpLoad, m.f, rv), x)
	// fmod(x, ±inf) = x; y = 0, infinite x or NaN give NaN.
	r = m.self(m.and(finite(x), m.isInf(y)), x, r)
	bad := m.or(m.or(m.isNaN(x), m.isNaN(y)), m.or(m.isInf(x), m.eq(ay, m.c(0))))
	return m.self(bad, m.c(math.NaN()), r), nil
}
