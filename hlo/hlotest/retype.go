package hlotest

import (
	"encoding/binary"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// Retype returns a copy of m with every float or complex type in to's
// keys replaced by its value: in shapes, parameters, constants and
// conversions alike. Widened (f16, bf16, f32 to f64) it computes the
// same program with rounding errors some 2^29 smaller, so that how far
// m's own results move with rounding can be measured: what a
// differential test may allow between two correct implementations. Modules whose meaning
// depends on a float's bits (bitcast-convert, reduce-precision, random
// bits) are refused.
func Retype(m *hlo.Module, to map[hlo.ElementType]hlo.ElementType) (*hlo.Module, error) {
	c, err := hlo.Parse(m.Name, m.String())
	if err != nil {
		return nil, err
	}
	mapShape := func(s *hlo.Shape) {
		var walk func(s *hlo.Shape)
		walk = func(s *hlo.Shape) {
			if s.IsTuple() {
				for i := range s.Tuple {
					walk(&s.Tuple[i])
				}
				return
			}
			if t, ok := to[s.Elem]; ok {
				s.Elem = t
			}
		}
		walk(s)
	}
	for _, comp := range c.Computations {
		for _, in := range comp.Instructions {
			switch in.Op {
			case hlo.OpBitcastConvert, hlo.OpBitcast:
				// Only a bitcast from or to a retyped type reads a
				// float's bits (an s32 to u32 one reads none).
				if retyped(in.Shape, to) || retyped(in.Operands[0].Shape, to) {
					return nil, fmt.Errorf("hlotest: %s's meaning depends on its types; it cannot be retyped", in.Op)
				}
			case hlo.OpReducePrecision, hlo.OpRngBitGenerator, hlo.OpRng:
				return nil, fmt.Errorf("hlotest: %s's meaning depends on its types; it cannot be retyped", in.Op)
			}
			mapShape(&in.Shape)
			if in.Literal != nil {
				l, err := retypeLiteral(in.Literal, to)
				if err != nil {
					return nil, in.Errorf("%w", err)
				}
				in.Literal = l
			}
		}
	}
	if err := hlo.Verify(c); err != nil {
		return nil, err
	}
	return c, nil
}

// retyped reports whether a leaf of s has a type to retypes.
func retyped(s hlo.Shape, to map[hlo.ElementType]hlo.ElementType) bool {
	for _, l := range s.Leaves() {
		if _, ok := to[l.Elem]; ok {
			return true
		}
	}
	return false
}

func retypeLiteral(l *hlo.Literal, to map[hlo.ElementType]hlo.ElementType) (*hlo.Literal, error) {
	from := l.Shape.Elem
	t, ok := to[from]
	if !ok || !l.Shape.IsArray() {
		return l, nil
	}
	if l.Elided {
		return nil, fmt.Errorf("an elided constant cannot be retyped")
	}
	out := &hlo.Literal{Shape: hlo.ArrayShape(t, l.Shape.Dims...), Data: make([]byte, 0, l.Shape.NumElements()*int64(t.Bytes()))}
	// A complex literal is its parts': two floats an element.
	fromPart, _ := from.ComplexPart()
	part, _ := t.ComplexPart()
	n := int64(len(l.Data) / fromPart.Bytes())
	for i := int64(0); i < n; i++ {
		out.Data = appendFloat(out.Data, part, floatAt(l.Data, fromPart, i))
	}
	return out, nil
}

// RetypeInputs converts arguments made for m to the types Retype gave
// its parameters.
func RetypeInputs(args []*hlo.Literal, to map[hlo.ElementType]hlo.ElementType) []*hlo.Literal {
	out := make([]*hlo.Literal, len(args))
	for i, a := range args {
		l, err := retypeLiteral(a, to)
		if err != nil {
			panic(err)
		}
		out[i] = l
	}
	return out
}

// floatAt is the i-th float of type t in data.
func floatAt(data []byte, t hlo.ElementType, i int64) float64 {
	b := make([]byte, 8)
	copy(b, data[i*int64(t.Bytes()):(i+1)*int64(t.Bytes())])
	return hlo.DecodeFloat(t, binary.LittleEndian.Uint64(b))
}

func appendFloat(dst []byte, t hlo.ElementType, v float64) []byte {
	bits := hlo.EncodeFloat(t, v)
	for j := 0; j < t.Bytes(); j++ {
		dst = append(dst, byte(bits>>(8*j)))
	}
	return dst
}

// Widened maps every float type narrower than f64 (f16, bf16, f32, and
// the f8, f6 and f4 types) to f64 and c64 to c128; Narrowed maps f64 to
// f32 and c128 to c64.
var (
	Widened  = widened()
	Narrowed = map[hlo.ElementType]hlo.ElementType{hlo.F64: hlo.F32, hlo.C128: hlo.C64}
)

func widened() map[hlo.ElementType]hlo.ElementType {
	m := map[hlo.ElementType]hlo.ElementType{hlo.F16: hlo.F64, hlo.BF16: hlo.F64, hlo.F32: hlo.F64, hlo.C64: hlo.C128}
	for i := range 256 {
		if t := hlo.ElementType(i); hlo.IsMiniFloat(t) {
			m[t] = hlo.F64
		}
	}
	return m
}
