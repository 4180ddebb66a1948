package hlo

import "math"

// miniFloat describes a small floating-point format: the f8 and f4 types
// (ml_dtypes' definitions, which XLA follows) and MLIR's f6 types.
type miniFloat struct {
	exp, man int  // field widths
	bias     int  // exponent bias
	ieee     bool // all-ones exponent holds inf and NaN (e5m2, e4m3, e3m4)
	fn       bool // finite: only the all-ones pattern (sign aside) is NaN (e4m3fn)
	uz       bool // unsigned zero: 0x80 is the only NaN, no -0 (the *fnuz types)
	unsigned bool // no sign bit (e8m0fnu)
	noNaN    bool // no NaN at all; overflow saturates (f4e2m1fn, the f6 types)
}

var miniFloats = map[ElementType]miniFloat{
	F8E5M2:        {exp: 5, man: 2, bias: 15, ieee: true},
	F8E4M3:        {exp: 4, man: 3, bias: 7, ieee: true},
	F8E3M4:        {exp: 3, man: 4, bias: 3, ieee: true},
	F8E4M3FN:      {exp: 4, man: 3, bias: 7, fn: true},
	F8E4M3FNUZ:    {exp: 4, man: 3, bias: 8, uz: true},
	F8E5M2FNUZ:    {exp: 5, man: 2, bias: 16, uz: true},
	F8E4M3B11FNUZ: {exp: 4, man: 3, bias: 11, uz: true},
	F8E8M0FNU:     {exp: 8, man: 0, bias: 127, unsigned: true},
	F4E2M1FN:      {exp: 2, man: 1, bias: 1, noNaN: true},
	F6E2M3FN:      {exp: 2, man: 3, bias: 1, noNaN: true},
	F6E3M2FN:      {exp: 3, man: 2, bias: 3, noNaN: true},
}

func (f miniFloat) signBit() uint32 {
	if f.unsigned {
		return 0
	}
	return 1 << uint(f.exp+f.man)
}

// nan is the format's NaN code, positive: the IEEE-like types' quiet
// NaN has the top mantissa bit set and no other (IEEE 754's quiet NaN,
// ml_dtypes' quiet_NaN: e5m2's 0x7e, e4m3's 0x7c, e3m4's 0x78); the fn
// types have one NaN pair, the magnitude all ones; fnuz one code, 0x80.
func (f miniFloat) nan() uint32 {
	switch {
	case f.uz:
		return 0x80
	case f.unsigned:
		return 0xff
	case f.ieee:
		return (1<<uint(f.exp)-1)<<uint(f.man) | 1<<uint(f.man-1)
	}
	return (1<<uint(f.exp)-1)<<uint(f.man) | (1<<uint(f.man) - 1)
}

// maxField is the largest finite encoding (sign aside).
func (f miniFloat) maxField() uint32 {
	all := uint32(1)<<uint(f.exp+f.man) - 1
	switch {
	case f.ieee:
		return (1<<uint(f.exp)-2)<<uint(f.man) | (1<<uint(f.man) - 1)
	case f.fn:
		return all - 1
	case f.unsigned:
		return 0xfe
	}
	return all
}

func (f miniFloat) decode(bits uint32) float64 {
	sign := 1.0
	if !f.unsigned && bits&f.signBit() != 0 {
		sign = -1
	}
	mag := bits &^ f.signBit()
	// A NaN keeps its code's sign: XLA's total order puts a NaN whose
	// sign bit is set (fnuz's only NaN, 0x80, among them) below -inf.
	nan := math.Copysign(math.NaN(), sign)
	switch {
	case f.uz && bits == 0x80, f.unsigned && bits == 0xff:
		return nan
	case f.fn && mag == f.nan():
		return nan
	case f.ieee && mag>>uint(f.man) == 1<<uint(f.exp)-1:
		if mag&(1<<uint(f.man)-1) != 0 {
			return nan
		}
		return math.Inf(int(sign))
	}
	e := int(mag >> uint(f.man))
	m := float64(mag & (1<<uint(f.man) - 1))
	if f.unsigned {
		return math.Ldexp(1, e-f.bias)
	}
	if e == 0 {
		return sign * math.Ldexp(m, 1-f.bias-f.man)
	}
	return sign * math.Ldexp(1+m/float64(int(1)<<uint(f.man)), e-f.bias)
}

// signedNaN reports a format whose NaN codes come in both signs (the
// IEEE-like and the fn ones; the fnuz ones have one NaN, e8m0fnu no sign).
func (f miniFloat) signedNaN() bool { return !f.uz && !f.unsigned && !f.noNaN }

// encode rounds v to the nearest representable value, ties to even.
// Values beyond the largest finite one become inf where the format has
// it, else NaN (or the largest value, for formats without NaN). A NaN,
// and an overflow to NaN, keeps v's sign where the format's NaNs have
// one, as XLA's conversions (ml_dtypes') keep it: negate flips a NaN's
// sign, and a total order sorts the two apart.
func (f miniFloat) encode(v float64) uint32 {
	if math.IsNaN(v) {
		if f.noNaN {
			return 0
		}
		if f.signedNaN() && math.Signbit(v) {
			return f.signBit() | f.nan()
		}
		return f.nan()
	}
	if f.unsigned && v < 0 {
		return f.nan() // no sign to keep
	}
	var sign uint32
	if math.Signbit(v) && !f.unsigned {
		sign = f.signBit()
	}
	a := math.Abs(v)
	overflow := func() uint32 {
		switch {
		case f.ieee:
			return sign | (1<<uint(f.exp)-1)<<uint(f.man)
		case f.noNaN:
			return sign | f.maxField()
		case f.signedNaN():
			return sign | f.nan()
		}
		return f.nan()
	}
	if math.IsInf(a, 0) {
		return overflow()
	}
	if f.unsigned { // powers of two only: round log2 to nearest, ties up to even exponent
		if a == 0 {
			return 0 // the smallest value, 2^-127: e8m0 has no zero
		}
		fr, e := math.Frexp(a) // a = fr * 2^e, fr in [0.5, 1)
		k := e - 1
		if fr > 0.75 || (fr == 0.75 && (k+f.bias)%2 == 1) {
			k++
		}
		field := k + f.bias
		switch {
		case field < 0:
			return 0
		case field > 0xfe:
			return f.nan()
		}
		return uint32(field)
	}
	if a == 0 {
		if f.uz {
			return 0
		}
		return sign
	}
	emin := 1 - f.bias
	_, e := math.Frexp(a)
	e-- // a in [2^e, 2^(e+1))
	if e < emin {
		e = emin
	}
	scaled := math.Ldexp(a, f.man-e) // mantissa with M fraction bits as an integer part
	m := math.RoundToEven(scaled)
	if m >= float64(uint32(2)<<uint(f.man)) {
		m /= 2
		e++
	}
	var field uint32
	if m < float64(uint32(1)<<uint(f.man)) { // subnormal
		field = uint32(m)
	} else {
		field = uint32(e+f.bias)<<uint(f.man) | (uint32(m) - 1<<uint(f.man))
	}
	if field > f.maxField() {
		return overflow()
	}
	if field == 0 && f.uz {
		return 0
	}
	return sign | field
}

// MiniFloatToFloat64 decodes an f8 or f4 value.
func MiniFloatToFloat64(t ElementType, bits uint32) float64 { return miniFloats[t].decode(bits) }

// MiniFloatFromFloat64 rounds v to an f8 or f4 type.
func MiniFloatFromFloat64(t ElementType, v float64) uint32 { return miniFloats[t].encode(v) }

// IsMiniFloat reports the f8 and f4 types.
func IsMiniFloat(t ElementType) bool { _, ok := miniFloats[t]; return ok }

// MiniFloatFormat is what a code generator needs to round to a small
// float type: its fields, its range, and what overflow, NaN and zero
// become.
type MiniFloatFormat struct {
	Bits        int     // width
	Exp, Bias   int     // exponent bits and bias
	SignBit     uint32  // the sign's bit; 0 for e8m0fnu, which has none
	NaN         uint32  // the code a NaN takes (formats with no NaN: 0), SignBit added for a negative one where SignedNaN
	Man         int     // mantissa bits
	Emin        int     // exponent of the smallest normal value
	Max         float64 // the largest finite value
	Inf         bool    // overflow is infinite (e5m2, e4m3, e3m4); else NaN, or Max where Saturate
	Saturate    bool    // no NaN: overflow is ±Max and NaN becomes 0 (f4e2m1fn, the f6 types)
	NegZero     bool    // zero keeps its sign (all but the fnuz types)
	PowersOfTwo bool    // e8m0fnu: unsigned powers of two, 2^-127 to 2^127; negatives are NaN
	SignedNaN   bool    // NaN codes of both signs (not the fnuz types, whose one NaN is 0x80, nor e8m0fnu)
}

// MiniFloatFormatOf describes an f8, f6 or f4 type.
func MiniFloatFormatOf(t ElementType) (MiniFloatFormat, bool) {
	f, ok := miniFloats[t]
	if !ok {
		return MiniFloatFormat{}, false
	}
	nan := f.nan()
	if f.noNaN {
		nan = 0
	}
	return MiniFloatFormat{
		Bits: f.exp + f.man + int(f.signBit()>>uint(f.exp+f.man)), Exp: f.exp, Bias: f.bias, SignBit: f.signBit(), NaN: nan,
		Man: f.man, Emin: 1 - f.bias, Max: f.decode(f.maxField()),
		Inf: f.ieee, Saturate: f.noNaN, NegZero: !f.uz && !f.unsigned, PowersOfTwo: f.unsigned, SignedNaN: f.signedNaN(),
	}, true
}
