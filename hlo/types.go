package hlo

import "fmt"

// ElementType is the primitive type of an array's elements, as XLA's
// PrimitiveType. Tuple and Token are the non-array shapes.
type ElementType uint8

const (
	Invalid ElementType = iota
	PRED
	S2
	S4
	S8
	S16
	S32
	S64
	U2
	U4
	U8
	U16
	U32
	U64
	F16
	BF16
	F32
	F64
	C64
	C128
	F4E2M1FN
	F6E2M3FN
	F6E3M2FN
	F8E3M4
	F8E4M3
	F8E4M3FN
	F8E4M3FNUZ
	F8E4M3B11FNUZ
	F8E5M2
	F8E5M2FNUZ
	F8E8M0FNU
	Token
	Tuple
	Opaque
	numElementTypes
)

// TypeKind groups element types by how arithmetic treats them.
type TypeKind uint8

const (
	KindOther TypeKind = iota
	KindBool
	KindSigned
	KindUnsigned
	KindFloat
	KindComplex
)

type typeInfo struct {
	name string
	bits int
	kind TypeKind
}

// typeTable is the one table of element types: the parser, printer,
// evaluator and code generator all read it.
var typeTable = [numElementTypes]typeInfo{
	Invalid:       {"invalid", 0, KindOther},
	PRED:          {"pred", 8, KindBool},
	S2:            {"s2", 2, KindSigned},
	S4:            {"s4", 4, KindSigned},
	S8:            {"s8", 8, KindSigned},
	S16:           {"s16", 16, KindSigned},
	S32:           {"s32", 32, KindSigned},
	S64:           {"s64", 64, KindSigned},
	U2:            {"u2", 2, KindUnsigned},
	U4:            {"u4", 4, KindUnsigned},
	U8:            {"u8", 8, KindUnsigned},
	U16:           {"u16", 16, KindUnsigned},
	U32:           {"u32", 32, KindUnsigned},
	U64:           {"u64", 64, KindUnsigned},
	F16:           {"f16", 16, KindFloat},
	BF16:          {"bf16", 16, KindFloat},
	F32:           {"f32", 32, KindFloat},
	F64:           {"f64", 64, KindFloat},
	C64:           {"c64", 64, KindComplex},
	C128:          {"c128", 128, KindComplex},
	F4E2M1FN:      {"f4e2m1fn", 4, KindFloat},
	F6E2M3FN:      {"f6e2m3fn", 6, KindFloat},
	F6E3M2FN:      {"f6e3m2fn", 6, KindFloat},
	F8E3M4:        {"f8e3m4", 8, KindFloat},
	F8E4M3:        {"f8e4m3", 8, KindFloat},
	F8E4M3FN:      {"f8e4m3fn", 8, KindFloat},
	F8E4M3FNUZ:    {"f8e4m3fnuz", 8, KindFloat},
	F8E4M3B11FNUZ: {"f8e4m3b11fnuz", 8, KindFloat},
	F8E5M2:        {"f8e5m2", 8, KindFloat},
	F8E5M2FNUZ:    {"f8e5m2fnuz", 8, KindFloat},
	F8E8M0FNU:     {"f8e8m0fnu", 8, KindFloat},
	Token:         {"token", 0, KindOther},
	Tuple:         {"tuple", 0, KindOther},
	Opaque:        {"opaque", 0, KindOther},
}

var typeByName = func() map[string]ElementType {
	m := map[string]ElementType{}
	for t := Invalid + 1; t < numElementTypes; t++ {
		m[typeTable[t].name] = t
	}
	return m
}()

// ParseElementType looks up a type by its HLO spelling ("f32", "pred").
func ParseElementType(s string) (ElementType, bool) {
	t, ok := typeByName[s]
	return t, ok
}

func (t ElementType) String() string {
	if t < numElementTypes {
		return typeTable[t].name
	}
	return fmt.Sprintf("ElementType(%d)", t)
}

// Bits is the storage width of one element in XLA's dense layout.
func (t ElementType) Bits() int { return typeTable[t].bits }

// Bytes is the size of one element rounded up to whole bytes.
func (t ElementType) Bytes() int { return (typeTable[t].bits + 7) / 8 }

// Kind says whether t is boolean, signed, unsigned, float or complex.
func (t ElementType) Kind() TypeKind { return typeTable[t].kind }

// IsFloat reports a real floating-point type.
func (t ElementType) IsFloat() bool { return t.Kind() == KindFloat }

// IsComplex reports c64 or c128.
func (t ElementType) IsComplex() bool { return t.Kind() == KindComplex }

// ComplexPart is the type of a complex type's real and imaginary parts
// (f32 for c64, f64 for c128); ok is false, and t returned, for the
// other types.
func (t ElementType) ComplexPart() (part ElementType, ok bool) {
	switch t {
	case C64:
		return F32, true
	case C128:
		return F64, true
	}
	return t, false
}

// ComplexOf is the complex type whose parts are of type t (f32: c64,
// f64: c128), ok false for other types.
func (t ElementType) ComplexOf() (ElementType, bool) {
	switch t {
	case F32:
		return C64, true
	case F64:
		return C128, true
	}
	return t, false
}

// FloatFields are a binary float type's exponent and mantissa widths
// (0, 0 for other types).
func (t ElementType) FloatFields() (exp, man int) {
	switch t {
	case F16:
		return 5, 10
	case BF16:
		return 8, 7
	case F32:
		return 8, 23
	case F64:
		return 11, 52
	}
	if f, ok := miniFloats[t]; ok {
		return f.exp, f.man
	}
	return 0, 0
}

// IsInteger reports a signed or unsigned integer type.
func (t ElementType) IsInteger() bool { k := t.Kind(); return k == KindSigned || k == KindUnsigned }

// UnsignedOfWidth is the unsigned integer type of bits bits, for the
// widths of 8 to 64 (a type's bits as a bitcast sees them); Invalid for
// others.
func UnsignedOfWidth(bits int) ElementType {
	switch bits {
	case 8:
		return U8
	case 16:
		return U16
	case 32:
		return U32
	case 64:
		return U64
	}
	return Invalid
}

// IsArray reports whether t is the element type of an array (not a tuple,
// token or opaque value).
func (t ElementType) IsArray() bool { return t > Invalid && t < Token }
