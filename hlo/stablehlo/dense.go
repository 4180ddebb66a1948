package stablehlo

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// maxDenseBytes bounds a constant made from its text: a splat
// (dense<1.0> : tensor<100000000000xf32>) is a few characters for any
// number of elements.
const maxDenseBytes = 1 << 31

// splatMin is the fewest elements of a splat constant translated as its
// one value broadcast, not as a literal of every element: fusion then
// computes it where it is read, and no buffer holds it.
const splatMin = 1024

// denseSplat returns the one value of a splat dense<...> attribute of
// tensor type t (dense<v>, or the hex of one element) as a scalar
// literal, if t has at least splatMin elements. Anything else (a
// malformed body included, which denseLiteral then names) is not one.
func denseSplat(a *Attr, t Type) (*hlo.Literal, bool, error) {
	if t.Kind != TensorType || t.Dynamic || t.Elem == hlo.Invalid || t.Shape().NumElements() < splatMin {
		return nil, false, nil
	}
	raw, isHex, elems, err := denseBody(a)
	var data []byte
	switch {
	case err != nil:
		return nil, false, nil
	case isHex:
		if len(raw) != t.Elem.Bytes() {
			return nil, false, nil
		}
		data = raw
	case len(elems) == 1:
		if data, err = appendValue(nil, t.Elem, elems[0]); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, nil
	}
	return &hlo.Literal{Shape: hlo.ArrayShape(t.Elem), Data: data}, true, nil
}

// denseBody is a dense<...> attribute's contents: the bytes of a hex
// string ("0x...", isHex), or else the element texts of its values.
func denseBody(a *Attr) (raw []byte, isHex bool, elems []string, err error) {
	body := strings.TrimSpace(a.Text)
	if strings.HasPrefix(body, "\"0x") || strings.HasPrefix(body, "\"0X") {
		raw, err := hex.DecodeString(strings.Trim(body[3:], "\""))
		if err != nil {
			return nil, true, nil, fmt.Errorf("dense hex: %v", err)
		}
		return raw, true, nil, nil
	}
	elems, err = denseElements(body)
	return nil, false, elems, err
}

// denseLiteral turns a dense<...> attribute of tensor type t into an HLO
// literal: a hex string of the elements' bytes ("0x..."; one element's
// bytes make a splat), a splat value, or nested lists of values, each an
// integer, a float (or its bits in hex), true/false, or a complex pair
// (re, im).
func denseLiteral(a *Attr, t Type) (*hlo.Literal, error) {
	shape := t.Shape()
	if t.Kind != TensorType || t.Dynamic {
		return nil, fmt.Errorf("a dense constant of type %s", t.Text)
	}
	et := t.Elem
	if et == hlo.Invalid {
		return nil, unsupportedf(typesCategory, "element type %s", t.Text)
	}
	n := shape.NumElements()
	size := et.Bytes()
	if n > maxDenseBytes/int64(max(size, 1)) {
		return nil, fmt.Errorf("a dense constant of %d elements of %s is more than vkjit holds in memory (%d bytes at most)", n, et, maxDenseBytes)
	}
	raw, isHex, elems, err := denseBody(a)
	if err != nil {
		return nil, err
	}
	if isHex {
		switch {
		case int64(len(raw)) == n*int64(size):
		case len(raw) == size:
			raw = []byte(strings.Repeat(string(raw), int(n)))
		default:
			return nil, fmt.Errorf("dense hex of %d bytes for %s (%d bytes)", len(raw), t.Text, n*int64(size))
		}
		return &hlo.Literal{Shape: shape, Data: raw}, nil
	}
	if a.Kind == DenseResourceAttr {
		return nil, fmt.Errorf("dense_resource<%s> without its resource", a.Text)
	}
	if n == 0 {
		elems = nil // a splat of nothing
	}
	if len(elems) == 1 && n > 1 {
		for int64(len(elems)) < n {
			elems = append(elems, elems[0])
		}
	}
	if int64(len(elems)) != n {
		return nil, fmt.Errorf("dense has %d values for %s (%d elements)", len(elems), t.Text, n)
	}
	data := make([]byte, 0, n*int64(size))
	for _, e := range elems {
		if data, err = appendValue(data, et, e); err != nil {
			return nil, err
		}
	}
	return &hlo.Literal{Shape: shape, Data: data}, nil
}

// denseElements flattens a dense body's nested lists into element texts
// (a complex pair stays one element, "(re, im)").
func denseElements(body string) ([]string, error) {
	var out []string
	depth := 0
	cur := strings.Builder{}
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '(':
			depth++
			cur.WriteByte(c)
		case c == ')':
			depth--
			cur.WriteByte(c)
		case depth > 0:
			cur.WriteByte(c)
		case c == '[' || c == ']' || c == ',':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

// appendValue appends one element of type t, written as text.
func appendValue(dst []byte, t hlo.ElementType, text string) ([]byte, error) {
	switch t.Kind() {
	case hlo.KindBool:
		switch text {
		case "true", "1":
			return append(dst, 1), nil
		case "false", "0":
			return append(dst, 0), nil
		}
		return nil, fmt.Errorf("%q is not a boolean", text)
	case hlo.KindSigned, hlo.KindUnsigned:
		v, err := parseInt(text)
		if err != nil {
			return nil, err
		}
		if b := t.Bits(); b < 8 {
			// A 2- or 4-bit integer takes a byte, its value as an 8-bit
			// integer would hold it (sign-extended), as HLO text and
			// ml_dtypes store them.
			lo, hi := int64(0), int64(1)<<b-1
			if t.Kind() == hlo.KindSigned {
				lo, hi = -(int64(1) << (b - 1)), int64(1)<<(b-1)-1
			}
			if x := int64(v); x < lo || x > hi {
				return nil, fmt.Errorf("%s is out of range for %s", text, mlirName(t))
			}
		}
		return appendBits(dst, v, t.Bytes()), nil
	case hlo.KindFloat:
		bits, err := floatBits(t, text)
		if err != nil {
			return nil, err
		}
		return appendBits(dst, bits, t.Bytes()), nil
	case hlo.KindComplex:
		re, im, ok := strings.Cut(strings.Trim(text, "()"), ",")
		if !ok {
			return nil, fmt.Errorf("%q is not a complex pair (re, im)", text)
		}
		part := hlo.F32
		if t == hlo.C128 {
			part = hlo.F64
		}
		for _, x := range []string{re, im} {
			bits, err := floatBits(part, strings.TrimSpace(x))
			if err != nil {
				return nil, err
			}
			dst = appendBits(dst, bits, part.Bytes())
		}
		return dst, nil
	}
	return nil, fmt.Errorf("constants of %s", mlirName(t))
}

func parseInt(text string) (uint64, error) {
	neg := strings.HasPrefix(text, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(text, "-"), "+")
	base := 10
	if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X") {
		body, base = body[2:], 16
	}
	switch body {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	v, err := strconv.ParseUint(body, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", text)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// floatBits encodes text as a float of type t: a decimal (rounded once,
// to nearest even), inf/nan, or the value's bits in hex (0x7FC00000).
func floatBits(t hlo.ElementType, text string) (uint64, error) {
	if strings.HasPrefix(text, "0x") || strings.HasPrefix(text, "0X") {
		v, err := strconv.ParseUint(text[2:], 16, 64)
		if err != nil || (t.Bits() < 64 && v>>uint(t.Bits()) != 0) {
			return 0, fmt.Errorf("%q is not the bits of a %s", text, mlirName(t))
		}
		return v, nil
	}
	switch strings.TrimPrefix(text, "+") {
	case "inf":
		return hlo.EncodeFloat(t, math.Inf(1)), nil
	case "-inf":
		return hlo.EncodeFloat(t, math.Inf(-1)), nil
	case "nan", "-nan":
		return hlo.EncodeFloat(t, math.NaN()), nil
	}
	if t == hlo.F32 {
		v, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return 0, fmt.Errorf("%q is not a float", text)
		}
		return uint64(math.Float32bits(float32(v))), nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a float", text)
	}
	return hlo.EncodeFloat(t, v), nil
}

func appendBits(dst []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}
