package stablehlo

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Compare applies check c to the actual value and the expected one (an
// output, or c.Const), with the StableHLO interpreter's rules
// (stablehlo/tools/StablehloTranslateMain.cpp, tests/CheckOps.cpp):
// expect_eq exact (floats by value, -0 equal to +0, NaN to NaN);
// expect_almost_eq within an absolute tolerance (0.001 unless given);
// expect_close at most MaxULP apart (3 unless given), both NaN equal,
// other non-finite values bit for bit. Complex numbers compare part by
// part. It returns "" or the first difference, with its index.
func Compare(c Check, actual, expected *hlo.Literal) string {
	if expected == nil {
		expected = c.Const
	}
	a, e := actual.Shape, expected.Shape
	if a.Elem != e.Elem || !a.SameDims(e) {
		return fmt.Sprintf("actual %s, expected %s", shapeText(a), shapeText(e))
	}
	t := a.Elem
	n := a.NumElements()
	parts, part := 1, t
	if p, ok := t.ComplexPart(); ok {
		parts, part = 2, p
	}
	pb := part.Bytes()
	for i := int64(0); i < n; i++ {
		for j := 0; j < parts; j++ {
			off := (i*int64(parts) + int64(j)) * int64(pb)
			x, y := bitsAt(actual.Data, off, pb), bitsAt(expected.Data, off, pb)
			if !match(c, part, x, y) {
				return fmt.Sprintf("at %s: actual %s, expected %s", indexText(i, a.Dims), valueText(actual, i), valueText(expected, i))
			}
		}
	}
	return ""
}

func bitsAt(data []byte, off int64, n int) uint64 {
	var b [8]byte
	copy(b[:], data[off:off+int64(n)])
	return binary.LittleEndian.Uint64(b[:])
}

// match compares one element (or complex part) of type t.
func match(c Check, t hlo.ElementType, x, y uint64) bool {
	if !t.IsFloat() {
		return x == y
	}
	fx, fy := hlo.DecodeFloat(t, x), hlo.DecodeFloat(t, y)
	if math.IsNaN(fx) || math.IsNaN(fy) {
		return math.IsNaN(fx) && math.IsNaN(fy)
	}
	switch c.Kind {
	case CheckEq:
		return fx == fy
	case CheckAlmostEq:
		if math.IsInf(fx, 0) || math.IsInf(fy, 0) {
			return fx == fy
		}
		return math.Abs(fx-fy) <= c.Tolerance
	}
	if math.IsInf(fx, 0) || math.IsInf(fy, 0) {
		return x == y
	}
	d := ulpDistance(t, x, y)
	return d <= c.MaxULP && d >= c.MinULP
}

// ulpDistance counts the floats of type t between bits x and y.
func ulpDistance(t hlo.ElementType, x, y uint64) int64 {
	w := uint(t.Bits())
	sign := uint64(1) << (w - 1)
	ord := func(b uint64) int64 {
		if b&sign != 0 {
			return -int64(b &^ sign)
		}
		return int64(b)
	}
	d := ord(x) - ord(y)
	if d < 0 {
		d = -d
	}
	return d
}

func shapeText(s hlo.Shape) string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range s.Dims {
		fmt.Fprintf(&b, "%dx", d)
	}
	b.WriteString(mlirName(s.Elem) + ">")
	return b.String()
}

// indexText is element i's multi-index, [1, 2].
func indexText(i int64, dims []int64) string {
	idx := make([]string, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 0 {
			idx[d] = fmt.Sprint(i % dims[d])
			i /= dims[d]
		}
	}
	return "[" + strings.Join(idx, ", ") + "]"
}

// valueText prints element i of l.
func valueText(l *hlo.Literal, i int64) string {
	t := l.Shape.Elem
	switch t.Kind() {
	case hlo.KindComplex:
		part, pb := hlo.F32, 4
		if t == hlo.C128 {
			part, pb = hlo.F64, 8
		}
		re := hlo.DecodeFloat(part, bitsAt(l.Data, 2*i*int64(pb), pb))
		im := hlo.DecodeFloat(part, bitsAt(l.Data, (2*i+1)*int64(pb), pb))
		return fmt.Sprintf("(%v, %v)", re, im)
	case hlo.KindFloat:
		return fmt.Sprint(hlo.DecodeFloat(t, bitsAt(l.Data, i*int64(t.Bytes()), t.Bytes())))
	case hlo.KindBool:
		return fmt.Sprint(l.Data[i] != 0)
	case hlo.KindSigned:
		v := bitsAt(l.Data, i*int64(t.Bytes()), t.Bytes())
		s := uint(64 - t.Bits())
		return fmt.Sprint(int64(v<<s) >> s)
	}
	return fmt.Sprint(bitsAt(l.Data, i*int64(t.Bytes()), t.Bytes()))
}
