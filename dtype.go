package vkjit

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// DType is a tensor's element type, named as XLA names them.
type DType uint8

// The element types a tensor may hold. Each has the value of hlo's
// element type of the same name, so that the two convert directly.
const (
	PRED          = DType(hlo.PRED)
	S2            = DType(hlo.S2)
	S4            = DType(hlo.S4)
	S8            = DType(hlo.S8)
	S16           = DType(hlo.S16)
	S32           = DType(hlo.S32)
	S64           = DType(hlo.S64)
	U2            = DType(hlo.U2)
	U4            = DType(hlo.U4)
	U8            = DType(hlo.U8)
	U16           = DType(hlo.U16)
	U32           = DType(hlo.U32)
	U64           = DType(hlo.U64)
	F16           = DType(hlo.F16)
	BF16          = DType(hlo.BF16)
	F32           = DType(hlo.F32)
	F64           = DType(hlo.F64)
	C64           = DType(hlo.C64)
	C128          = DType(hlo.C128)
	F4E2M1FN      = DType(hlo.F4E2M1FN)
	F6E2M3FN      = DType(hlo.F6E2M3FN)
	F6E3M2FN      = DType(hlo.F6E3M2FN)
	F8E3M4        = DType(hlo.F8E3M4)
	F8E4M3        = DType(hlo.F8E4M3)
	F8E4M3FN      = DType(hlo.F8E4M3FN)
	F8E4M3FNUZ    = DType(hlo.F8E4M3FNUZ)
	F8E4M3B11FNUZ = DType(hlo.F8E4M3B11FNUZ)
	F8E5M2        = DType(hlo.F8E5M2)
	F8E5M2FNUZ    = DType(hlo.F8E5M2FNUZ)
	F8E8M0FNU     = DType(hlo.F8E8M0FNU)
)

func (t DType) elem() hlo.ElementType { return hlo.ElementType(t) }

// String is the type's name in HLO text: f32, bf16, pred, s8, ...
func (t DType) String() string { return t.elem().String() }

// Bits is the width of one element.
func (t DType) Bits() int { return t.elem().Bits() }

// Bytes is the size of one element in a Tensor's Data.
func (t DType) Bytes() int { return t.elem().Bytes() }

// IsFloat reports a floating-point type.
func (t DType) IsFloat() bool { return t.elem().IsFloat() }

// Valid reports whether t is an element type a tensor may hold.
func (t DType) Valid() bool { return t.elem().IsArray() }

// ParseDType reads a type's HLO name ("f32", "bf16", ...).
func ParseDType(s string) (DType, error) {
	e, ok := hlo.ParseElementType(s)
	if !ok || !e.IsArray() {
		return 0, fmt.Errorf("vkjit: %q is not an element type", s)
	}
	return DType(e), nil
}

// TensorSpec is one parameter or result of an executable: its name in
// the module, element type and dimensions.
type TensorSpec struct {
	Name string
	Type DType
	Dims []int64
}

// String prints the spec as HLO text does: "f32[2,3]".
func (s TensorSpec) String() string { return s.shape().DimsString() }

func (s TensorSpec) shape() hlo.Shape { return hlo.ArrayShape(s.Type.elem(), s.Dims...) }

func specOf(name string, sh hlo.Shape) TensorSpec {
	return TensorSpec{Name: name, Type: DType(sh.Elem), Dims: append([]int64{}, sh.Dims...)}
}
