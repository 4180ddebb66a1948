package hlo

import (
	"fmt"
	"strings"
)

// Shape is an array shape (element type, dimensions, optional layout), a
// tuple of shapes, or a token.
type Shape struct {
	Elem    ElementType
	Dims    []int64
	Dynamic []bool  // per dimension: bounded dynamic ("<=N"), Dims holds the bound
	Layout  *Layout // nil when the text gave none
	Tuple   []Shape // when Elem == Tuple
	Buffer  bool    // printed as b(...): XLA's buffer shape wrapper
}

// Layout is an array's physical layout. vkjit always computes in the
// row-major (descending minor-to-major) order XLA uses by default; other
// layouts are kept so that they print back, and tiling and memory-space
// suffixes are kept verbatim in Extra.
type Layout struct {
	MinorToMajor []int64
	Extra        string // text after ':' inside the braces, e.g. "T(8,128)S(1)"
}

// ArrayShape is a convenience constructor.
func ArrayShape(t ElementType, dims ...int64) Shape {
	return Shape{Elem: t, Dims: append([]int64(nil), dims...)}
}

// TupleShape makes a tuple shape.
func TupleShape(elems ...Shape) Shape { return Shape{Elem: Tuple, Tuple: elems} }

// IsTuple reports a tuple shape.
func (s Shape) IsTuple() bool { return s.Elem == Tuple }

// IsArray reports an array shape.
func (s Shape) IsArray() bool { return s.Elem.IsArray() }

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s.Dims) }

// NumElements is the product of the dimensions (1 for a scalar).
func (s Shape) NumElements() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// ByteSize is the dense size of an array shape in bytes on the host.
// Types narrower than a byte (s4, u4, f4e2m1fn, s2, u2) take one byte per
// element, as in XLA's literals and NumPy's ml_dtypes arrays.
func (s Shape) ByteSize() int64 {
	return s.NumElements() * int64(s.Elem.Bytes())
}

// SameDims reports equal dimensions, ignoring element type and layout.
func (s Shape) SameDims(o Shape) bool {
	if len(s.Dims) != len(o.Dims) {
		return false
	}
	for i := range s.Dims {
		if s.Dims[i] != o.Dims[i] {
			return false
		}
	}
	return true
}

// Equal compares element types, dimensions and tuple structure; layouts
// are ignored (XLA's ShapeUtil::Compatible plus the element type).
func (s Shape) Equal(o Shape) bool {
	if s.Elem != o.Elem {
		return false
	}
	if s.IsTuple() {
		if len(s.Tuple) != len(o.Tuple) {
			return false
		}
		for i := range s.Tuple {
			if !s.Tuple[i].Equal(o.Tuple[i]) {
				return false
			}
		}
		return true
	}
	return s.SameDims(o)
}

// Leaves returns the array shapes of s in depth-first order (s itself for
// an array).
func (s Shape) Leaves() []Shape {
	if !s.IsTuple() {
		return []Shape{s}
	}
	var out []Shape
	for _, e := range s.Tuple {
		out = append(out, e.Leaves()...)
	}
	return out
}

// LeafOffset returns where tuple element i's leaves start among s's
// leaves (depth first): what a get-tuple-element selects.
func (s Shape) LeafOffset(i int) int {
	off := 0
	for _, e := range s.Tuple[:i] {
		off += len(e.Leaves())
	}
	return off
}

// String prints the shape as HLO text, layout included when present.
func (s Shape) String() string {
	var b strings.Builder
	s.write(&b, true)
	return b.String()
}

// DimsString prints the shape without its layout ("f32[2,3]").
func (s Shape) DimsString() string {
	var b strings.Builder
	s.write(&b, false)
	return b.String()
}

func (s Shape) write(b *strings.Builder, layout bool) {
	switch {
	case s.IsTuple():
		b.WriteByte('(')
		for i, e := range s.Tuple {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b, layout)
		}
		b.WriteByte(')')
		return
	case s.Buffer:
		b.WriteString("b(")
		inner := s
		inner.Buffer = false
		inner.write(b, layout)
		b.WriteString(")")
		return
	case s.Elem == Token || s.Elem == Opaque:
		b.WriteString(s.Elem.String())
		b.WriteString("[]")
		return
	}
	b.WriteString(s.Elem.String())
	b.WriteByte('[')
	for i, d := range s.Dims {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < len(s.Dynamic) && s.Dynamic[i] {
			if d < 0 {
				b.WriteString("?")
				continue
			}
			b.WriteString("<=")
		}
		fmt.Fprint(b, d)
	}
	b.WriteByte(']')
	if layout && s.Layout != nil {
		b.WriteByte('{')
		for i, d := range s.Layout.MinorToMajor {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(b, d)
		}
		if s.Layout.Extra != "" {
			b.WriteByte(':')
			b.WriteString(s.Layout.Extra)
		}
		b.WriteByte('}')
	}
}

// RowMajorStrides returns the element strides of a row-major array with
// the given dimensions (the last dimension varies fastest).
func RowMajorStrides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	n := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = n
		n *= dims[i]
	}
	return s
}
