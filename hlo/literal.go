package hlo

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Literal is a constant array value: its shape and its elements packed
// little-endian in row-major order, the same bytes a .npy file holds.
type Literal struct {
	Shape  Shape
	Data   []byte
	Elided bool // printed as {...}: the values were left out of the text
}

// ParseLiteralValue converts one element's text ("1.5", "-inf", "true",
// "0x7fc00000") to bytes of type t, rounding to nearest even.
func appendElement(dst []byte, t ElementType, text string) ([]byte, error) {
	s := strings.TrimSpace(text)
	switch t.Kind() {
	case KindBool:
		switch s {
		case "true", "1":
			return append(dst, 1), nil
		case "false", "0":
			return append(dst, 0), nil
		}
		return nil, fmt.Errorf("bad pred literal %q", s)
	case KindSigned, KindUnsigned:
		var bits uint64
		if t.Kind() == KindSigned {
			v, err := strconv.ParseInt(s, 0, t.Bits())
			if err != nil {
				return nil, fmt.Errorf("bad %s literal %q", t, s)
			}
			bits = uint64(v)
		} else {
			v, err := strconv.ParseUint(s, 0, t.Bits())
			if err != nil {
				return nil, fmt.Errorf("bad %s literal %q", t, s)
			}
			bits = v
		}
		return appendBits(dst, bits, t.Bytes()), nil
	case KindFloat:
		v, err := parseFloat(s)
		if err != nil {
			return nil, fmt.Errorf("bad %s literal %q", t, s)
		}
		switch t {
		case F32:
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v))), nil
		case F64:
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)), nil
		case F16:
			return binary.LittleEndian.AppendUint16(dst, F16FromFloat64(v)), nil
		case BF16:
			return binary.LittleEndian.AppendUint16(dst, BF16FromFloat64(v)), nil
		}
		if IsMiniFloat(t) {
			// f4 values are stored one per byte, as XLA's literals hold them.
			return append(dst, byte(MiniFloatFromFloat64(t, v))), nil
		}
	}
	return nil, fmt.Errorf("literals of type %s are not supported", t)
}

func parseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "+nan":
		return math.NaN(), nil
	case "-nan":
		return math.Copysign(math.NaN(), -1), nil
	}
	return strconv.ParseFloat(s, 64)
}

func appendBits(dst []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// F16FromFloat64 rounds v to IEEE half precision, nearest even.
func F16FromFloat64(v float64) uint16 {
	if math.IsNaN(v) {
		return uint16(math.Float32bits(float32(v))>>16)&0x8000 | 0x7e00
	}
	return uint16(roundBinary(v, 10, 15))
}

// roundBinary rounds v (not NaN) to nearest even in a binary format of
// man stored mantissa bits and exponent bias, subnormals included, and
// returns its bits (sign, exponent, mantissa). It rounds from float64 in
// one step: going through float32 first rounds twice, which moves a
// value just off a tie onto it (1 + 2^-11 + 2^-40 became f16 1, not
// 1 + 2^-10).
func roundBinary(v float64, man, bias int) uint64 {
	var sign uint64
	if math.Signbit(v) {
		sign = 1 << (man + exponentBits(bias))
	}
	a := math.Abs(v)
	inf := sign | uint64(2*bias+1)<<man
	if math.IsInf(a, 0) {
		return inf
	}
	if a < math.Ldexp(1, 1-bias) { // subnormal: multiples of 2^(1-bias-man)
		q := math.RoundToEven(math.Ldexp(a, bias-1+man))
		return sign | uint64(q) // 2^man is the smallest normal's bits
	}
	f, e := math.Frexp(a)                       // a = f * 2^e, f in [0.5, 1)
	q := math.RoundToEven(math.Ldexp(f, man+1)) // in [2^man, 2^(man+1)]
	e--
	if q == math.Ldexp(1, man+1) {
		q /= 2
		e++
	}
	if e+bias >= 2*bias+1 {
		return inf
	}
	return sign | uint64(e+bias)<<man | (uint64(q) - 1<<man)
}

// exponentBits is the width of a binary format's exponent of this bias.
func exponentBits(bias int) int {
	n := 0
	for 1<<n < 2*bias+2 {
		n++
	}
	return n
}

// BF16FromFloat64 rounds v to bfloat16, nearest even, in one step (as
// F16FromFloat64).
func BF16FromFloat64(v float64) uint16 {
	if math.IsNaN(v) {
		return uint16(math.Float32bits(float32(v))>>16) | 0x40
	}
	return uint16(roundBinary(v, 7, 127))
}

// parseLiteral reads a constant's text for an array shape: a scalar
// ("1.5"), nested braces ("{ {1, 2}, {3, 4} }"), or the elided "{...}".
func parseLiteral(text string, s Shape) (*Literal, error) {
	lit := &Literal{Shape: s}
	if strings.ReplaceAll(text, " ", "") == "{...}" {
		lit.Elided = true
		return lit, nil
	}
	if !s.IsArray() {
		return nil, fmt.Errorf("constants of shape %s are not supported yet", s)
	}
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return r == '{' || r == '}' || r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ')'
	})
	// A complex element is written as a pair: (re, im).
	per, et := int64(1), s.Elem
	switch s.Elem {
	case C64:
		per, et = 2, F32
	case C128:
		per, et = 2, F64
	}
	if int64(len(fields)) != per*s.NumElements() {
		return nil, fmt.Errorf("constant of shape %s has %d values, want %d", s.DimsString(), int64(len(fields))/per, s.NumElements())
	}
	lit.Data = make([]byte, 0, s.ByteSize())
	for _, f := range fields {
		var err error
		if lit.Data, err = appendElement(lit.Data, et, f); err != nil {
			return nil, err
		}
	}
	return lit, nil
}

// F16ToFloat64 widens IEEE half-precision bits.
func F16ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(man, -24)
	case 0x1f:
		if man != 0 {
			return math.Copysign(math.NaN(), sign) // the sign kept, as f32's conversion keeps it
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+man/1024, exp-15)
}

// EncodeFloat rounds v to float type t (nearest even) and returns its bits.
func EncodeFloat(t ElementType, v float64) uint64 {
	switch t {
	case F32:
		return uint64(math.Float32bits(float32(v)))
	case F64:
		return math.Float64bits(v)
	case F16:
		return uint64(F16FromFloat64(v))
	case BF16:
		return uint64(BF16FromFloat64(v))
	}
	return uint64(MiniFloatFromFloat64(t, v))
}

// DecodeFloat widens the bits of a value of float type t.
func DecodeFloat(t ElementType, bits uint64) float64 {
	switch t {
	case F32:
		return float64(math.Float32frombits(uint32(bits)))
	case F64:
		return math.Float64frombits(bits)
	case F16:
		return F16ToFloat64(uint16(bits))
	case BF16:
		return float64(math.Float32frombits(uint32(bits) << 16))
	}
	return MiniFloatToFloat64(t, uint32(bits))
}

// ParseLiteral reads a literal's text ("1.5", "{1, 2}", "-inf") as an
// array of shape s.
func ParseLiteral(text string, s Shape) (*Literal, error) { return parseLiteral(text, s) }

// Ints returns the elements of a literal of 8- to 64-bit integers as
// int64s: signed types sign-extended, unsigned ones as they are (a u64
// past MaxInt64 is an error).
func (l *Literal) Ints() ([]int64, error) {
	t := l.Shape.Elem
	k := t.Kind()
	if l.Elided || k != KindSigned && k != KindUnsigned || t.Bits() < 8 {
		return nil, fmt.Errorf("%s literal is not integers", t)
	}
	n := int64(t.Bytes())
	out := make([]int64, int64(len(l.Data))/n)
	for i := range out {
		raw := l.Data[int64(i)*n : int64(i+1)*n]
		var bits uint64
		for j := len(raw) - 1; j >= 0; j-- {
			bits = bits<<8 | uint64(raw[j])
		}
		switch {
		case k == KindSigned:
			shift := 64 - uint(8*n)
			out[i] = int64(bits<<shift) >> shift
		case bits > math.MaxInt64:
			return nil, fmt.Errorf("%d does not fit an int64", bits)
		default:
			out[i] = int64(bits)
		}
	}
	return out, nil
}
