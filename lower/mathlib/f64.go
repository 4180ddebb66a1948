package mathlib

import (
	"math"

	"github.com/vkjit/vkjit/spirv"
)

// The f64 math library: exp, expm1, log, log1p, logistic, tanh, sin,
// cos, tan (trig64.go), erf, cbrt, atan2, pow and an exact remainder,
// with fdlibm's (and Cephes') reductions and polynomials (each within
// 1-3 ulp of the true value; docs/ACCURACY.md). Exponent and significand
// are taken apart through the two 32-bit halves of the double, so a
// device needs shaderFloat64 but not shaderInt64.

// dm emits f64 math: fm's arithmetic at width 64, and the double's two
// 32-bit words.
type dm struct {
	fm
	uv2 spirv.ID // uvec2
}

func newF64(bd *spirv.Builder, fn *spirv.Function, d Driver) dm {
	u := bd.TypeInt(32, false)
	return dm{fm: fm{bd: bd, fn: fn, w: 64, f: bd.TypeFloat(64), u: u, s: bd.TypeInt(32, true), b: bd.TypeBool(), u2: bd.TypeStruct(u, u), d: d}, uv2: bd.TypeVector(u, 2)}
}

// halves splits x into its low and high 32-bit words.
func (m dm) halves(x spirv.ID) (lo, hi spirv.ID) {
	v := m.op(spirv.OpBitcast, m.uv2, x)
	return m.fn.Extract(m.u, v, 0), m.fn.Extract(m.u, v, 1)
}

// join makes a double from its words.
func (m dm) join(lo, hi spirv.ID) spirv.ID {
	return m.op(spirv.OpBitcast, m.f, m.op(spirv.OpCompositeConstruct, m.uv2, lo, hi))
}

// pow2 is 2^n for an s32 n in [-1022, 1023].
func (m dm) pow2(n spirv.ID) spirv.ID {
	hi := m.op(spirv.OpShiftLeftLogical, m.u, m.op(spirv.OpBitcast, m.u, m.op(spirv.OpIAdd, m.s, n, m.bd.ConstS32(1023))), m.bd.ConstU32(20))
	return m.join(m.bd.ConstU32(0), hi)
}

// scale multiplies y by 2^n (|n| up to 2044) in two steps.
func (m dm) scale(y, n spirv.ID) spirv.ID {
	half := m.op(spirv.OpShiftRightArithmetic, m.s, n, m.bd.ConstS32(1))
	return m.mul(m.mul(y, m.pow2(half)), m.pow2(m.op(spirv.OpISub, m.s, n, half)))
}

const (
	ln2Hi64 = 6.93147180369123816490e-01 // ln2's top 32 bits: n*ln2Hi is exact
	ln2Lo64 = 1.90821492927058770002e-10
)

// expParts reduces x (clamped) to e^x = 2^n e^r, r = hi - lo, and returns
// n (s32), r, and e^r - 1 (fdlibm's rational form).
func (m dm) expParts(x spirv.ID) (n, r, em1 spirv.ID) {
	xc := m.fn.Ext(m.f, spirv.GLSLFClamp, x, m.c(-745.2), m.c(709.8))
	nf := m.fn.Ext(m.f, spirv.GLSLRoundEven, m.mul(xc, m.c(math.Log2E)))
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

// expTail is e^(x + tl), the tail applied before the scaling (fm.expTail).
func (m dm) expTail(x, tl spirv.ID) spirv.ID {
	n, _, em1 := m.expParts(x)
	y := m.add(m.c(1), em1)
	y = m.scale(m.add(y, m.mul(y, tl)), n)
	y = m.self(m.gt(x, m.c(709.782712893383973096)), m.c(math.Inf(1)), y)
	y = m.self(m.lt(x, m.c(-745.13321910194110842)), m.c(0), y)
	return m.self(m.isNaN(x), x, y)
}

// expNonPositive is exp: f64 exponentials keep exp's two-step scaling.
func (m dm) expNonPositive(x spirv.ID) spirv.ID { return m.exp(x) }

// expm1 is 2^n (e^r - 1) + (2^n - 1), both terms exact where it matters.
func (m dm) expm1(x spirv.ID) spirv.ID {
	n, _, em1 := m.expParts(x)
	small := m.op(spirv.OpSLessThanEqual, m.b, m.fn.Ext(m.s, spirv.GLSLSAbs, n), m.bd.ConstS32(100))
	nc := m.op(spirv.OpSelect, m.s, small, n, m.bd.ConstS32(0))
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
	k := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.op(spirv.OpShiftRightLogical, m.u, hi, m.bd.ConstU32(20))), m.bd.ConstS32(1023))
	k = m.op(spirv.OpISub, m.s, k, m.op(spirv.OpSelect, m.s, sub, m.bd.ConstS32(54), m.bd.ConstS32(0)))
	mhi := m.op(spirv.OpBitwiseOr, m.u, m.op(spirv.OpBitwiseAnd, m.u, hi, m.bd.ConstU32(0x000fffff)), m.bd.ConstU32(0x3ff00000))
	mant := m.join(lo, mhi) // in [1, 2)
	big := m.gt(mant, m.c(math.Sqrt2))
	mant = m.self(big, m.mul(mant, m.c(0.5)), mant)
	k = m.op(spirv.OpSelect, m.s, big, m.op(spirv.OpIAdd, m.s, k, m.bd.ConstS32(1)), k)
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
	sign := m.op(spirv.OpBitwiseAnd, m.u, func() spirv.ID { _, hi := m.halves(x); return hi }(), m.bd.ConstU32(0x80000000))
	lo, hi := m.halves(y)
	y = m.join(lo, m.op(spirv.OpBitwiseXor, m.u, hi, sign))
	y = m.self(m.eq(x, m.c(0)), x, y) // keeps -0
	return m.self(m.isNaN(x), x, y)
}

// ilogb is the unbiased exponent of a finite nonzero double, subnormals
// included, from its high and low words.
func (m dm) ilogb(x spirv.ID) spirv.ID {
	lo, hi := m.halves(x)
	hi = m.op(spirv.OpBitwiseAnd, m.u, hi, m.bd.ConstU32(0x7fffffff))
	s32 := func(v spirv.ID) spirv.ID { return m.op(spirv.OpBitcast, m.s, v) }
	normal := m.op(spirv.OpISub, m.s, s32(m.op(spirv.OpShiftRightLogical, m.u, hi, m.bd.ConstU32(20))), m.bd.ConstS32(1023))
	// Subnormal: the top set bit of the 52-bit significand, at 2^-1074.
	msbHi := m.op(spirv.OpIAdd, m.s, m.fn.Ext(m.s, spirv.GLSLFindUMsb, hi), m.bd.ConstS32(32))
	msb := m.op(spirv.OpSelect, m.s, m.op(spirv.OpINotEqual, m.b, hi, m.bd.ConstU32(0)), msbHi, m.fn.Ext(m.s, spirv.GLSLFindUMsb, lo))
	subnormal := m.op(spirv.OpISub, m.s, msb, m.bd.ConstS32(1074))
	return m.op(spirv.OpSelect, m.s, m.op(spirv.OpUGreaterThanEqual, m.b, hi, m.bd.ConstU32(0x00100000)), normal, subnormal)
}

// fmod is C's fmod for doubles, exact (fmodBy).
func (m dm) fmod(x, y spirv.ID) (spirv.ID, error) {
	return m.fmodBy(x, y, m.ilogb, func(r, x spirv.ID) spirv.ID {
		lo, hi := m.halves(r)
		_, xhi := m.halves(x)
		return m.join(lo, m.op(spirv.OpBitwiseOr, m.u, hi, m.op(spirv.OpBitwiseAnd, m.u, xhi, m.bd.ConstU32(0x80000000))))
	})
}

// negative reports x's sign bit (from its high word: -0 included).
func (m dm) negative(x spirv.ID) spirv.ID {
	_, hi := m.halves(x)
	return m.op(spirv.OpINotEqual, m.b, m.op(spirv.OpBitwiseAnd, m.u, hi, m.bd.ConstU32(0x80000000)), m.bd.ConstU32(0))
}

// withSignOf gives r (not negative) the sign of x.
func (m dm) withSignOf(r, x spirv.ID) spirv.ID { return m.self(m.negative(x), m.neg(r), r) }

// cbrt: |x| = 2^3q s with s in [1, 8), the f32 library's cube root of s
// as a seed, two Newton steps, and a last one with the residual s - r^3
// computed exactly (Dekker's products).
func (m dm) cbrt(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	e := m.ilogb(ax)
	// q = floor(e/3) for e in [-1074, 1023], by division of e + 3*400.
	q := m.op(spirv.OpISub, m.s, m.op(spirv.OpSDiv, m.s, m.op(spirv.OpIAdd, m.s, e, m.bd.ConstS32(1200)), m.bd.ConstS32(3)), m.bd.ConstS32(400))
	xs := m.scale(ax, m.op(spirv.OpIMul, m.s, q, m.bd.ConstS32(-3)))
	f32 := m.bd.TypeFloat(32)
	seed := newF32(m.bd, m.fn, m.d).cbrt(m.op(spirv.OpFConvert, f32, xs))
	r := m.op(spirv.OpFConvert, m.f, seed)
	third := m.c(1.0 / 3)
	for range 2 {
		r = m.add(r, m.mul(m.sub(m.div(xs, m.mul(r, r)), r), third))
	}
	r2, r2e := m.twoProd(r, r)
	r3, r3e := m.twoProd(r2, r)
	res := m.sub(m.sub(m.sub(xs, r3), r3e), m.mul(r2e, r))
	r = m.add(r, m.div(res, m.mul(m.c(3), r2)))
	r = m.scale(r, q)
	r = m.self(m.or(m.eq(ax, m.c(0)), m.isInf(ax)), ax, r)
	return m.self(m.isNaN(x), x, m.withSignOf(r, x))
}

// erf is fdlibm's (as Go's math.Erf): rational approximations on [0,
// 0.84375) and [0.84375, 1.25), 1 - erfc with erfc = e^(-z^2-0.5625)
// e^((z-x)(z+x)+R/S)/x up to 6 (z is x with its low word cleared, so z^2
// is exact), 1 beyond.
func (m dm) erf(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	z := m.mul(ax, ax)
	small := m.add(ax, m.mul(ax, m.div(
		m.poly(z, -2.37630166566501626084e-05, -5.77027029648944159157e-03, -2.84817495755985104766e-02, -3.25042107247001499370e-01, 1.28379167095512558561e-01),
		m.poly(z, -3.96022827877536812320e-06, 1.32494738004321644526e-04, 5.08130628187576562776e-03, 6.50222499887672944485e-02, 3.97917223959155352819e-01, 1))))
	tiny := m.mul(m.c(0.125), m.add(m.mul(m.c(8), ax), m.mul(m.c(1.02703333676410069053e+00), ax)))
	small = m.self(m.lt(ax, m.c(0x1p-28)), tiny, small)
	s := m.sub(ax, m.c(1))
	mid := m.add(m.c(8.45062911510467529297e-01), m.div(
		m.poly(s, -2.16637559486879084300e-03, 3.54783043256182359371e-02, -1.10894694282396677476e-01, 3.18346619901161753674e-01, -3.72207876035701323847e-01, 4.14856118683748331666e-01, -2.36211856075265944077e-03),
		m.poly(s, 1.19844998467991074170e-02, 1.36370839120290507362e-02, 1.26171219808761642112e-01, 7.18286544141962662868e-02, 5.40397917702171048937e-01, 1.06420880400844228286e-01, 1)))
	xc := m.fn.Ext(m.f, spirv.GLSLFClamp, ax, m.c(1), m.c(6))
	w := m.div(m.c(1), m.mul(xc, xc))
	near := m.lt(xc, m.c(1/0.35))
	rr := m.self(near,
		m.poly(w, -9.81432934416914548592e+00, -8.12874355063065934246e+01, -1.84605092906711035994e+02, -1.62396669462573470355e+02, -6.23753324503260060396e+01, -1.05586262253232909814e+01, -6.93858572707181764372e-01, -9.86494403484714822705e-03),
		m.poly(w, -4.83519191608651397019e+02, -1.02509513161107724954e+03, -6.37566443368389627722e+02, -1.60636384855821916062e+02, -1.77579549177547519889e+01, -7.99283237680523006574e-01, -9.86494292470009928597e-03))
	ss := m.self(near,
		m.poly(w, -6.04244152148580987438e-02, 6.57024977031928170135e+00, 1.08635005541779435134e+02, 4.29008140027567833386e+02, 6.45387271733267880336e+02, 4.34565877475229228821e+02, 1.37657754143519042600e+02, 1.96512716674392571292e+01, 1),
		m.poly(w, -2.24409524465858183362e+01, 4.74528541206955367215e+02, 2.55305040643316442583e+03, 3.19985821950859553908e+03, 1.53672958608443695994e+03, 3.25792512996573918826e+02, 3.03380607434824582924e+01, 1))
	lo, hi := m.halves(xc)
	_ = lo
	zc := m.join(m.bd.ConstU32(0), hi)
	tail := m.mul(m.exp(m.sub(m.neg(m.mul(zc, zc)), m.c(0.5625))), m.exp(m.add(m.mul(m.sub(zc, xc), m.add(zc, xc)), m.div(rr, ss))))
	big := m.sub(m.c(1), m.div(tail, xc))
	r := m.self(m.lt(ax, m.c(0.84375)), small, m.self(m.lt(ax, m.c(1.25)), mid, m.self(m.lt(ax, m.c(6)), big, m.c(1))))
	return m.self(m.isNaN(x), x, m.withSignOf(r, x))
}

// atan01 is atan on [0, 1] (Cephes' satan, as Go's math.Atan): the
// rational xatan up to 0.66, pi/4 + xatan((a-1)/(a+1)) above.
func (m dm) atan01(a spirv.ID) spirv.ID {
	const morebits = 6.123233995736765886130e-17 // pi/2 = float64(pi/2) + morebits
	big := m.gt(a, m.c(0.66))
	t := m.self(big, m.div(m.sub(a, m.c(1)), m.add(a, m.c(1))), a)
	z := m.mul(t, t)
	p := m.poly(z, -8.750608600031904122785e-01, -1.615753718733365076637e+01, -7.500855792314704667340e+01, -1.228866684490136173410e+02, -6.485021904942025371773e+01)
	q := m.poly(z, 1, 2.485846490142306297962e+01, 1.650270098316988542046e+02, 4.328810604912902668951e+02, 4.853903996359136964868e+02, 1.945506571482613964425e+02)
	r := m.add(m.mul(t, m.div(m.mul(z, p), q)), t)
	return m.self(big, m.add(m.add(m.c(math.Pi/4), r), m.c(0.5*morebits)), r)
}

// atan2 folds the ratio into [0, 1] (atanRatio, as the f32 version does),
// with C99's zeros, infinities and NaN.
func (m dm) atan2(y, x spirv.ID) spirv.ID {
	const morebits = 6.123233995736765886130e-17
	a, swap := m.atanRatio(y, x)
	r := m.atan01(a)
	r = m.self(swap, m.add(m.sub(m.c(math.Pi/2), r), m.c(morebits)), r)
	r = m.self(m.negative(x), m.add(m.sub(m.c(math.Pi), r), m.c(2*morebits)), r)
	r = m.withSignOf(r, y)
	return m.self(m.or(m.isNaN(x), m.isNaN(y)), m.c(math.NaN()), r)
}

// logDD is ln x for positive finite x as an unevaluated sum hi + lo
// (double-double, about 2^-100 relative): x = 2^e m with m in [sqrt(1/2),
// sqrt(2)), ln m = 2 atanh(s) with s = f/(2+f), f = m - 1 (exact), s
// carried in two doubles, the series tail (s^3/3 + ... + s^21/21, at most
// 1e-2 of the sum) in one.
func (m dm) logDD(x spirv.ID) (hi, lo spirv.ID) {
	sub := m.lt(x, m.c(0x1p-1022))
	xs := m.self(sub, m.mul(x, m.c(0x1p54)), x)
	xlo, xhi := m.halves(xs)
	e := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.op(spirv.OpShiftRightLogical, m.u, xhi, m.bd.ConstU32(20))), m.bd.ConstS32(1023))
	e = m.op(spirv.OpISub, m.s, e, m.op(spirv.OpSelect, m.s, sub, m.bd.ConstS32(54), m.bd.ConstS32(0)))
	mant := m.join(xlo, m.op(spirv.OpBitwiseOr, m.u, m.op(spirv.OpBitwiseAnd, m.u, xhi, m.bd.ConstU32(0x000fffff)), m.bd.ConstU32(0x3ff00000)))
	big := m.gt(mant, m.c(math.Sqrt2))
	mant = m.self(big, m.mul(mant, m.c(0.5)), mant)
	e = m.op(spirv.OpSelect, m.s, big, m.op(spirv.OpIAdd, m.s, e, m.bd.ConstS32(1)), e)
	ef := m.op(spirv.OpConvertSToF, m.f, e)
	f := m.exact(spirv.OpFSub, mant, m.c(1))
	dh, dl := m.twoSum(m.c(2), f)
	sh := m.div(f, dh)
	ph, pl := m.twoProd(sh, dh)
	sl := m.div(m.sub(m.sub(m.sub(f, ph), pl), m.mul(sh, dl)), dh)
	s2 := m.mul(sh, sh)
	tail := m.mul(m.mul(m.mul(sh, s2), m.c(2)), m.poly(s2, 1.0/21, 1.0/19, 1.0/17, 1.0/15, 1.0/13, 1.0/11, 1.0/9, 1.0/7, 1.0/5, 1.0/3))
	h, e1 := m.twoSum(m.mul(ef, m.c(ln2Hi64)), m.add(sh, sh))
	lo = m.add(e1, m.add(m.add(sl, sl), m.add(tail, m.mul(ef, m.c(ln2Lo64)))))
	return m.twoSum(h, lo)
}

// pow is the f32 pow's method at 64 bits: ln|x| in double-double, then
// powFrom (e^t overflows past 709.78 and is 0 below -745.13; from 2^53
// every double is an even integer).
func (m dm) pow(x, y spirv.ID) spirv.ID {
	lh, ll := m.logDD(m.abs(x))
	return m.powFrom(x, y, lh, ll, m.expTail, m.negative, 709.782712893384, -745.1332191019412, 0x1p53)
}
