package mathlib

import (
	"math"
	"math/big"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// f64 sin, cos and tan: Payne and Hanek's reduction in 32-bit integer
// words (no shaderInt64 needed, as for the rest of the f64 library), the
// reduced argument kept as a double-double, and fdlibm's kernels on it
// (within 1 ulp for sin and cos, 2 for tan, whatever the magnitude:
// docs/ACCURACY.md).

// twoOverPi64 is 2/pi's fraction bits, 32 to a word, most significant
// first: enough for the largest double's exponent (the reduction reads
// 7 words from word (e-2)/32, e up to 971).
var twoOverPi64 = twoOverPiWords(40)

// twoOverPiWords is the first n words of 2/pi's fraction bits (64 guard
// bits below them).
func twoOverPiWords(n int) []uint32 {
	prec := uint(32*n + 64)
	q := new(big.Int).Div(new(big.Int).Lsh(big.NewInt(1), 2*prec+1), hlo.Pi(prec)) // 2/pi * 2^prec
	q.Rsh(q, prec-uint(32*n))
	words := make([]uint32, n)
	mask := big.NewInt(0xffffffff)
	for i := n - 1; i >= 0; i-- {
		words[i] = uint32(new(big.Int).And(q, mask).Uint64())
		q.Rsh(q, 32)
	}
	return words
}

// uadd is a + b + carry (u32s; carry 0 or 1) and the carry out.
func (m dm) uadd(a, b, carry spirv.ID) (sum, out spirv.ID) {
	s := m.uop(spirv.OpIAdd, a, b)
	c1 := m.op(spirv.OpULessThan, m.b, s, a)
	s2 := m.uop(spirv.OpIAdd, s, carry)
	c2 := m.op(spirv.OpULessThan, m.b, s2, s)
	one, zero := m.cu(1), m.cu(0)
	return s2, m.uop(spirv.OpIAdd, m.sel(m.u, c1, one, zero), m.sel(m.u, c2, one, zero))
}

// mulWords is x (u32) times the little-endian words t: len(t)+1 words.
func (m dm) mulWords(x spirv.ID, t []spirv.ID) []spirv.ID {
	out := make([]spirv.ID, len(t)+1)
	carry := m.cu(0)
	for i, w := range t {
		prod := m.op(spirv.OpUMulExtended, m.u2, x, w)
		lo := m.fn.Extract(m.u, prod, 0)
		hi := m.fn.Extract(m.u, prod, 1)
		var c spirv.ID
		out[i], c = m.uadd(lo, carry, m.cu(0))
		carry = m.uop(spirv.OpIAdd, hi, c) // hi is at most 2^32 - 2
	}
	out[len(t)] = carry
	return out
}

// trigReduce64 returns |x| = q*pi/2 + (rh + rl) (mod 2pi) with rh + rl in
// [-pi/4, pi/4] as a double-double and q (u32, 0..3), for finite ax =
// |x|. The 53-bit significand times 224 bits of 2/pi, taken from the
// word where the exponent makes them matter, is exact; the 128 bits
// around the binary point give the quadrant and a 126-bit fraction, so
// even the doubles closest to a multiple of pi/2 (2^-61 away) keep 60
// good bits.
func (m dm) trigReduce64(ax spirv.ID) (rh, rl, q spirv.ID) {
	lo, hi := m.halves(ax)
	s32 := func(v int32) spirv.ID { return m.bd.ConstS32(v) }
	e := m.op(spirv.OpISub, m.s, m.op(spirv.OpBitcast, m.s, m.uop(spirv.OpBitwiseAnd, m.uop(spirv.OpShiftRightLogical, hi, m.cu(20)), m.cu(0x7ff))), s32(1075))
	mh := m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpBitwiseAnd, hi, m.cu(0xfffff)), m.cu(0x100000))
	j0 := m.op(spirv.OpShiftRightArithmetic, m.s, m.op(spirv.OpISub, m.s, e, s32(2)), s32(5))
	j0 = m.fn.Ext(m.s, spirv.GLSLSClamp, j0, s32(0), s32(int32(len(twoOverPi64)-7)))
	// The table, a constant variable indexed by j0: its loads are
	// invariant, so that sin x and cos x of one x (complex sin, cos, tan
	// and exp take both) share one reduction.
	n := len(twoOverPi64)
	arr := m.bd.TypeArray(m.u, m.bd.ConstU32(uint32(n)), 0)
	parts := make([]spirv.ID, n)
	for i, w := range twoOverPi64 {
		parts[i] = m.cu(w)
	}
	tv := m.bd.ConstVariable(m.bd.TypePointer(spirv.StoragePrivate, arr), m.bd.ConstantComposite(arr, parts...))
	ptr := m.bd.TypePointer(spirv.StoragePrivate, m.u)
	t := make([]spirv.ID, 7) // little-endian: t[0] is word j0+6
	for i := range t {
		at := m.op(spirv.OpIAdd, m.s, j0, s32(int32(6-i)))
		t[i] = m.fn.LoadInvariant(m.u, m.fn.AccessChain(ptr, tv, at))
	}
	a, b := m.mulWords(lo, t), m.mulWords(mh, t) // 8 words each
	p := make([]spirv.ID, 9)                     // a + b*2^32, little-endian
	p[0] = a[0]
	carry := m.cu(0)
	for i := 1; i < 8; i++ {
		p[i], carry = m.uadd(a[i], b[i-1], carry)
	}
	p[8] = m.uop(spirv.OpIAdd, b[7], carry)
	// Bit i of p weighs 2^(i + e - 32(j0+7)); the 2^1 bit is at
	// 225 - d, d = e - 32 j0, and the 128 bits down from it start at
	// s = 98 - d, in words ws = s/32 (2..4) and up.
	d := m.op(spirv.OpISub, m.s, e, m.op(spirv.OpShiftLeftLogical, m.s, j0, s32(5)))
	s := m.op(spirv.OpBitcast, m.u, m.op(spirv.OpISub, m.s, s32(98), d))
	ws := m.uop(spirv.OpShiftRightLogical, s, m.cu(5))
	sh := m.uop(spirv.OpBitwiseAnd, s, m.cu(31))
	pick := func(off int) spirv.ID {
		w := p[2+off]
		for j := 3; j <= 4; j++ {
			w = m.sel(m.u, m.op(spirv.OpIEqual, m.b, ws, m.cu(uint32(j))), p[j+off], w)
		}
		return w
	}
	// (hiW:loW) >> sh, low word; defined for sh = 0 too.
	funnel := func(loW, hiW spirv.ID) spirv.ID {
		return m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpShiftRightLogical, loW, sh),
			m.uop(spirv.OpShiftLeftLogical, m.uop(spirv.OpShiftLeftLogical, hiW, m.cu(1)), m.uop(spirv.OpISub, m.cu(31), sh)))
	}
	var w [4]spirv.ID
	for i := range w {
		w[i] = funnel(pick(i), pick(i+1))
	}
	// w[3]'s top two bits are the quadrant, rounded to nearest by the
	// next bit, which makes the rest a signed fraction.
	q = m.uop(spirv.OpIAdd, m.uop(spirv.OpShiftRightLogical, w[3], m.cu(30)), m.uop(spirv.OpBitwiseAnd, m.uop(spirv.OpShiftRightLogical, w[3], m.cu(29)), m.cu(1)))
	q = m.uop(spirv.OpBitwiseAnd, q, m.cu(3))
	shl2 := func(x, y spirv.ID) spirv.ID {
		return m.uop(spirv.OpBitwiseOr, m.uop(spirv.OpShiftLeftLogical, x, m.cu(2)), m.uop(spirv.OpShiftRightLogical, y, m.cu(30)))
	}
	f3, f2, f1 := shl2(w[3], w[2]), shl2(w[2], w[1]), shl2(w[1], w[0])
	// The fraction f3*2^-32 (signed) + f2*2^-64 + f1*2^-96 as a
	// double-double, times pi/2 (itself a double-double).
	fa := m.mul(m.op(spirv.OpConvertSToF, m.f, m.op(spirv.OpBitcast, m.s, f3)), m.c(0x1p-32))
	fb := m.mul(m.op(spirv.OpConvertUToF, m.f, f2), m.c(0x1p-64))
	fc := m.mul(m.op(spirv.OpConvertUToF, m.f, f1), m.c(0x1p-96))
	h, l := m.twoSum(fa, fb)
	h, l = m.twoSum(h, m.add(l, fc))
	const p1 = math.Pi / 2
	p2 := 6.123233995736766e-17 // pi/2 - p1
	ph, pe := m.twoProd(h, m.c(p1))
	pe = m.add(pe, m.add(m.mul(h, m.c(p2)), m.mul(l, m.c(p1))))
	rh, rl = m.twoSum(ph, pe)
	small := m.lt(ax, m.c(math.Pi/4))
	return m.self(small, ax, rh), m.self(small, m.c(0), rl), m.sel(m.u, small, m.cu(0), q)
}

// kSin and kCos are fdlibm's __kernel_sin and __kernel_cos (as in musl):
// sin and cos of x + y, |x + y| <= pi/4, y the tail of a double-double.
func (m dm) kSin(x, y spirv.ID) spirv.ID {
	z := m.mul(x, x)
	w := m.mul(z, z)
	// S2 + z(S3 + z S4) + z w (S5 + z S6)
	r := m.add(m.c(8.33333333332248946124e-03), m.mul(z, m.add(m.c(-1.98412698298579493134e-04), m.mul(z, m.c(2.75573137070700676789e-06)))))
	r = m.add(r, m.mul(m.mul(z, w), m.add(m.c(-2.50507602534068634195e-08), m.mul(z, m.c(1.58969099521155010221e-10)))))
	v := m.mul(z, x)
	// x - ((z*(y/2 - v*r) - y) - v*S1)
	inner := m.sub(m.mul(z, m.sub(m.mul(m.c(0.5), y), m.mul(v, r))), y)
	return m.sub(x, m.sub(inner, m.mul(v, m.c(-1.66666666666666324348e-01))))
}

func (m dm) kCos(x, y spirv.ID) spirv.ID {
	z := m.mul(x, x)
	w := m.mul(z, z)
	r := m.mul(z, m.add(m.c(4.16666666666666019037e-02), m.mul(z, m.add(m.c(-1.38888888888741095749e-03), m.mul(z, m.c(2.48015872894767294178e-05))))))
	r = m.add(r, m.mul(m.mul(w, w), m.add(m.c(-2.75573143513906633035e-07), m.mul(z, m.add(m.c(2.08757232129817482790e-09), m.mul(z, m.c(-1.13596475577881948265e-11)))))))
	hz := m.mul(m.c(0.5), z)
	w = m.sub(m.c(1), hz)
	// w + (((1 - w) - hz) + (z*r - x*y))
	return m.add(w, m.add(m.sub(m.sub(m.c(1), w), hz), m.sub(m.mul(z, r), m.mul(x, y))))
}

// sinCos is sin x (cos false) or cos x.
func (m dm) sinCos(x spirv.ID, cos bool) spirv.ID {
	ax := m.abs(x)
	finite := m.not(m.or(m.isNaN(x), m.isInf(x)))
	rh, rl, q := m.trigReduce64(m.self(finite, ax, m.c(0)))
	s, c := m.kSin(rh, rl), m.kCos(rh, rl)
	if cos {
		q = m.uop(spirv.OpIAdd, q, m.cu(1)) // cos x = sin(x + pi/2)
	}
	odd := m.op(spirv.OpINotEqual, m.b, m.uop(spirv.OpBitwiseAnd, q, m.cu(1)), m.cu(0))
	y := m.self(odd, c, s)
	// Quadrants 2 and 3 negate; sin is odd in x, cos even.
	flip := m.op(spirv.OpINotEqual, m.b, m.uop(spirv.OpBitwiseAnd, q, m.cu(2)), m.cu(0))
	if !cos {
		flip = m.op(spirv.OpLogicalNotEqual, m.b, flip, m.negative(x))
	}
	y = m.self(flip, m.neg(y), y)
	return m.self(finite, y, m.c(math.NaN()))
}

// tan is sin r / cos r, or -cos r / sin r in odd quadrants.
func (m dm) tan(x spirv.ID) spirv.ID {
	ax := m.abs(x)
	finite := m.not(m.or(m.isNaN(x), m.isInf(x)))
	rh, rl, q := m.trigReduce64(m.self(finite, ax, m.c(0)))
	s, c := m.kSin(rh, rl), m.kCos(rh, rl)
	odd := m.op(spirv.OpINotEqual, m.b, m.uop(spirv.OpBitwiseAnd, q, m.cu(1)), m.cu(0))
	y := m.self(odd, m.neg(m.div(c, s)), m.div(s, c))
	y = m.self(m.negative(x), m.neg(y), y)
	return m.self(finite, y, m.c(math.NaN()))
}
