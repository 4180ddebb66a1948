package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// The f64 math library: exp, expm1, log, log1p, logistic, tanh and an
// exact remainder, with
// fdlibm's reductions and polynomials (each within 1-2 ulp of the true
// value; docs/ACCURACY.md). Exponent and significand are taken apart
// through the two 32-bit halves of the double, so a device needs
// shaderFloat64 but not shaderInt64. The other transcendentals are f32
// only and refused for f64 by name.

// dm emits f64 math: fm's arithmetic at width 64, and the double's two
// 32-bit words.
type dm struct {
	fm
	uv2 spirv.ID // uvec2
}

func (k *kernelBuilder) math64() dm {
	u := k.u32()
	return dm{fm: fm{k: k, w: 64, f: k.b.TypeFloat(64), u: u, s: k.b.TypeInt(32, true), b: k.boolT()}, uv2: k.b.TypeVector(u, 2)}
}

// halves splits x into its low and high 32-bit words.
func (m dm) halves(x spirv.ID) (lo, hi spirv.ID) {
	v := m.op(spirv.OpBitcast, m.uv2, x)
	return m.op(spirv.OpCompositeExtract, m.u, v, 0), m.op(spirv.OpCompositeExtract, m.u, v, 1)
}

// join makes a double from its words.
func (m dm) join(lo, hi spirv.ID) spirv.ID {
	return m.op(spirv.OpBitcast, m.f, m.op(spirv.OpCompositeConstruct, m.uv2, lo, hi))
}

// pow2 is 2^n for an s32 n in [-1022, 1023].
func (m dm) pow2(n spirv.ID) spirv.ID {
	hi := m.op(spirv.OpShiftLeftLogical, m.u, m.op(spirv.OpBitcast, m.u, m.op(spirv.OpIAdd, m.s, n, m.k.b.ConstS32(1023))), m.k.cu32(20))
	return m.join(m.k.cu32(0), hi)
}

// scale multiplies y by 2^n (|n| up to 2044) in two steps.
func (m dm) scale(y, n spirv.ID) spirv.ID {
	half := m.op(spirv.OpShiftRightArithmetic, m.s, n, m.k.b.ConstS32(1))
	return m.mul(m.mul(y, m.pow2(half)), m.pow2(m.op(spirv.OpISub, m.s, n, half)))
}

const (
	ln2Hi64 = 6.93147180369123816490e-01 // ln2's top 32 bits: n*ln2Hi is exact
	ln2Lo64 = 1.90821492927058770002e-10
)

// expParts reduces x (clamped) to e^x = 2^n e^r, r = hi - lo, and returns
// n (s32), r, and e^r - 1 (fdlibm's rational form).
func (m dm) expParts(x spirv.ID) (n, r, em1 spirv.ID) {
	xc := m.k.f.Ext(m.f, spirv.GLSLFClamp, x, m.c(-745.2), m.c(709.8))
	nf := m.k.f.Ext(m.f, spirv.GLSLRoundEven, m.mul(xc, m.c(math.Log2E)))
	n = m.op(spirv.OpConvertFToS, m.s, nf)
	hi := m.sub(xc, m.mul(nf, m.c(ln2Hi64)))
	lo := m.mul(nf, m.c(ln2Lo64))
	r = m.sub(hi, lo)
	t := m.mul(r, r)
	p := m.c(4.13813679705723846039e-08)
	for _, c := range []float64{-1.65339022054652515390e-06, 6.61375632143793436117e-05, -2.77777777770155933842e-03, 1.66666666666666019037e-01} {
		p = m.add(m.mul(p, t), m.c(c))
	}
	c := m.sub(r, m.mul(t, p))
	// e^r - 1 = r + r*c/(2-c), with the rounding of r = hi - lo put back.
	em1 = m.add(m.sub(hi, lo), m.div(m.mul(r, c), m.sub(m.c(2), c)))
	return n, r, em1
}

func (m dm) exp(x spirv.ID) spirv.ID {
	n, _, em1 := m.expParts(x)
	y := m.scale(m.add(m.c(1), em1), n)
	y = m.self(m.gt(x, m.c(709.782712893383973096)), m.c(math.Inf(1)), y)
	y = m.self(m.lt(x, m.c(-745.13321910194110842)), m.c(0), y)
	return m.self(m.isNaN(x), x, y)
}

// expm1 is 2^n (e^r - 1) + (2^n - 1), both terms exact where it matters.
func (m dm) expm1(x spirv.ID) spirv.ID {
	n, _, em1 := m.expParts(x)
	small := m.op(spirv.OpSLessThanEqual, m.b, m.k.f.Ext(m.s, spirv.GLSLSAbs, n), m.k.b.ConstS32(100))
	nc := m.op(spirv.OpSelect, m.s, small, n, m.k.b.ConstS32(0))
	t := m.pow2(nc)
	y := m.add(m.mul(t, em1), m.sub(t, m.c(1)))
	y = m.self(small, y, m.self(m.gt(x, m.c(0)), m.exp(x), m.c(-1)))
	y = m.self(m.eq(x, m.c(0)), x, y)
	return m.self(m.isNaN(x), x, y)
}

// log is fdlibm's: x = 2^k (1+f), 1+f in [sqrt(1/2), sqrt(2)),
// log(1+f) = f - hfsq + s(hfsq + R(s^2)), s = f/(2+f).
func (m dm) log(x spirv.ID) spirv.ID {
	sub := m.lt(x, m.c(0x1p-1022)) // subnormals: scale up first
	xs := m.self(sub, m.mul(x, m.c(0x1p54)), x)
	lo, hi := m.halves(xs)
	k := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.op(spirv.OpShiftRightLogical, m.u, hi, m.k.cu32(20))), m.k.b.ConstS32(1023))
	k = m.op(spirv.OpISub, m.s, k, m.op(spirv.OpSelect, m.s, sub, m.k.b.ConstS32(54), m.k.b.ConstS32(0)))
	mhi := m.op(spirv.OpBitwiseOr, m.u, m.op(spirv.OpBitwiseAnd, m.u, hi, m.k.cu32(0x000fffff)), m.k.cu32(0x3ff00000))
	mant := m.join(lo, mhi) // in [1, 2)
	big := m.gt(mant, m.c(math.Sqrt2))
	mant = m.self(big, m.mul(mant, m.c(0.5)), mant)
	k = m.op(spirv.OpSelect, m.s, big, m.op(spirv.OpIAdd, m.s, k, m.k.b.ConstS32(1)), k)
	f := m.sub(mant, m.c(1))
	kf := m.op(spirv.OpConvertSToF, m.f, k)
	s := m.div(f, m.add(m.c(2), f))
	z := m.mul(s, s)
	w := m.mul(z, z)
	t1 := m.mul(w, m.add(m.c(3.999999999940941908e-01), m.mul(w, m.add(m.c(2.222219843214978396e-01), m.mul(w, m.c(1.531383769920937332e-01))))))
	t2 := m.mul(z, m.add(m.c(6.666666666666735130e-01), m.mul(w, m.add(m.c(2.857142874366239149e-01), m.mul(w, m.add(m.c(1.818357216161805012e-01), m.mul(w, m.c(1.479819860511658591e-01))))))))
	rr := m.add(t2, t1)
	hfsq := m.mul(m.mul(m.c(0.5), f), f)
	r := m.sub(m.mul(kf, m.c(ln2Hi64)), m.sub(m.sub(hfsq, m.add(m.mul(s, m.add(hfsq, rr)), m.mul(kf, m.c(ln2Lo64)))), f))
	r = m.self(m.eq(x, m.c(0)), m.c(math.Inf(-1)), r)
	r = m.self(m.lt(x, m.c(0)), m.c(math.NaN()), r)
	r = m.self(m.eq(x, m.c(math.Inf(1))), x, r)
	return m.self(m.isNaN(x), x, r)
}

// log1p adds back what 1+x lost: log(u) + (x - (u-1))/u.
func (m dm) log1p(x spirv.ID) spirv.ID {
	u := m.exact(spirv.OpFAdd, m.c(1), x)
	corr := m.div(m.exact(spirv.OpFSub, x, m.exact(spirv.OpFSub, u, m.c(1))), u)
	corr = m.self(m.lt(m.abs(x), m.c(0x1p53)), corr, m.c(0))
	r := m.add(m.log(u), corr)
	r = m.self(m.eq(u, m.c(1)), x, r)
	r = m.self(m.eq(x, m.c(-1)), m.c(math.Inf(-1)), r)
	r = m.self(m.lt(x, m.c(-1)), m.c(math.NaN()), r)
	r = m.self(m.eq(x, m.c(math.Inf(1))), x, r)
	return m.self(m.isNaN(x), x, r)
}

// tanh is expm1(2x) / (expm1(2x) + 2), ±1 beyond 22.
func (m dm) tanh(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	e := m.expm1(m.add(ax, ax))
	y := m.div(e, m.add(e, m.c(2)))
	y = m.self(m.gt(ax, m.c(22)), m.c(1), y)
	sign := m.op(spirv.OpBitwiseAnd, m.u, func() spirv.ID { _, hi := m.halves(x); return hi }(), m.k.cu32(0x80000000))
	lo, hi := m.halves(y)
	y = m.join(lo, m.op(spirv.OpBitwiseXor, m.u, hi, sign))
	y = m.self(m.eq(x, m.c(0)), x, y) // keeps -0
	return m.self(m.isNaN(x), x, y)
}

// math64Op emits the f64 library functions; ok is false for the others.
func (k *kernelBuilder) math64Op(op hlo.Opcode, a []val) (val, bool, error) {
	if a[0].t != hlo.F64 {
		return val{}, false, nil
	}
	m := k.math64()
	x := a[0].id
	var r spirv.ID
	switch op {
	case hlo.OpExp:
		r = m.exp(x)
	case hlo.OpExpm1:
		r = m.expm1(x)
	case hlo.OpLog:
		r = m.log(x)
	case hlo.OpLog1p:
		r = m.log1p(x)
	case hlo.OpLogistic:
		r = m.div(m.c(1), m.add(m.c(1), m.exp(m.neg(x))))
	case hlo.OpTanh:
		r = m.tanh(x)
	case hlo.OpRemainder:
		var err error
		if r, err = m.fmod(x, a[1].id); err != nil {
			return val{}, false, err
		}
	default:
		return val{}, false, nil
	}
	return val{r, hlo.F64}, true, nil
}

// ilogb is the unbiased exponent of a finite nonzero double, subnormals
// included, from its high and low words.
func (m dm) ilogb(x spirv.ID) spirv.ID {
	lo, hi := m.halves(x)
	hi = m.op(spirv.OpBitwiseAnd, m.u, hi, m.k.cu32(0x7fffffff))
	s32 := func(v spirv.ID) spirv.ID { return m.op(spirv.OpBitcast, m.s, v) }
	normal := m.op(spirv.OpISub, m.s, s32(m.op(spirv.OpShiftRightLogical, m.u, hi, m.k.cu32(20))), m.k.b.ConstS32(1023))
	// Subnormal: the top set bit of the 52-bit significand, at 2^-1074.
	msbHi := m.op(spirv.OpIAdd, m.s, m.k.f.Ext(m.s, spirv.GLSLFindUMsb, hi), m.k.b.ConstS32(32))
	msb := m.op(spirv.OpSelect, m.s, m.op(spirv.OpINotEqual, m.b, hi, m.k.cu32(0)), msbHi, m.k.f.Ext(m.s, spirv.GLSLFindUMsb, lo))
	subnormal := m.op(spirv.OpISub, m.s, msb, m.k.b.ConstS32(1074))
	return m.op(spirv.OpSelect, m.s, m.op(spirv.OpUGreaterThanEqual, m.b, hi, m.k.cu32(0x00100000)), normal, subnormal)
}

// fmod is C's fmod for doubles, exact (fmodBy).
func (m dm) fmod(x, y spirv.ID) (spirv.ID, error) {
	return m.fmodBy(x, y, m.ilogb, func(r, x spirv.ID) spirv.ID {
		lo, hi := m.halves(r)
		_, xhi := m.halves(x)
		return m.join(lo, m.op(spirv.OpBitwiseOr, m.u, hi, m.op(spirv.OpBitwiseAnd, m.u, xhi, m.k.cu32(0x80000000))))
	})
}
