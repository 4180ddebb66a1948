package vkjit

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Tensor is a dense array on the host: element type, dimensions, and the
// elements row-major and little-endian, exactly as a .npy file holds them
// (pred is one byte per element, bf16 its raw 16 bits).
type Tensor struct {
	Type DType
	Dims []int64
	Data []byte
}

// NewTensor wraps data, checking that its length fits type and dims.
func NewTensor(t DType, dims []int64, data []byte) (*Tensor, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("vkjit: %s is not an array element type", t)
	}
	x := &Tensor{Type: t, Dims: append([]int64{}, dims...), Data: data}
	if want := x.shape().ByteSize(); int64(len(data)) != want {
		return nil, fmt.Errorf("vkjit: %s needs %d bytes, got %d", x.shape().DimsString(), want, len(data))
	}
	return x, nil
}

// Float32s makes an f32 tensor.
func Float32s(dims []int64, v []float32) (*Tensor, error) {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return NewTensor(F32, dims, b)
}

// Int32s makes an s32 tensor.
func Int32s(dims []int64, v []int32) (*Tensor, error) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return NewTensor(S32, dims, b)
}

// shape is the tensor's HLO array shape.
func (x *Tensor) shape() hlo.Shape { return hlo.ArrayShape(x.Type.elem(), x.Dims...) }

// NumElements is the product of the dimensions.
func (x *Tensor) NumElements() int64 { return x.shape().NumElements() }

// Spec is the tensor's element type and dimensions.
func (x *Tensor) Spec() TensorSpec {
	return TensorSpec{Type: x.Type, Dims: append([]int64{}, x.Dims...)}
}

// AsFloat32 returns the elements of an f32 tensor.
func (x *Tensor) AsFloat32() ([]float32, error) {
	if x.Type != F32 {
		return nil, fmt.Errorf("vkjit: tensor is %s, not f32", x.Type)
	}
	out := make([]float32, len(x.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(x.Data[4*i:]))
	}
	return out, nil
}

// Float64At returns element i converted to float64, for printing and
// comparisons (exact for every type except 64-bit integers beyond 2^53;
// a complex element gives its real part, as XLA's convert does).
func (x *Tensor) Float64At(i int64) float64 {
	t := x.Type.elem()
	if pt, ok := complexPart(x.Type); ok {
		t, i = pt.elem(), 2*i
	}
	n := int64(t.Bytes())
	var bits uint64
	for j := n - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(x.Data[i*n+j])
	}
	switch t.Kind() {
	case hlo.KindFloat:
		return hlo.DecodeFloat(t, bits)
	case hlo.KindSigned:
		shift := 64 - uint(t.Bits())
		return float64(int64(bits<<shift) >> shift)
	}
	return float64(bits)
}

// String prints the shape and up to the first 8 elements.
func (x *Tensor) String() string {
	var b strings.Builder
	b.WriteString(x.shape().DimsString())
	b.WriteString(" [")
	n := x.NumElements()
	for i := int64(0); i < n && i < 8; i++ {
		if i > 0 {
			b.WriteString(" ")
		}
		if rt, ok := complexPart(x.Type); ok {
			w := int64(rt.Bytes())
			part := &Tensor{Type: rt, Dims: []int64{2}, Data: x.Data[2*w*i : 2*w*(i+1)]}
			fmt.Fprintf(&b, "(%.7g, %.7g)", part.Float64At(0), part.Float64At(1))
			continue
		}
		v := x.Float64At(i)
		switch {
		case x.Type == PRED:
			fmt.Fprint(&b, v != 0)
		case x.Type.IsFloat():
			fmt.Fprintf(&b, "%.7g", v)
		case x.Type == U64:
			fmt.Fprint(&b, binary.LittleEndian.Uint64(x.Data[8*i:]))
		case x.Type == S64:
			fmt.Fprint(&b, int64(binary.LittleEndian.Uint64(x.Data[8*i:])))
		default:
			fmt.Fprintf(&b, "%.0f", v)
		}
	}
	if n > 8 {
		fmt.Fprintf(&b, " ... (%d elements)", n)
	}
	b.WriteString("]")
	return b.String()
}

// complexPart is the type of a complex type's real and imaginary parts.
func complexPart(t DType) (DType, bool) {
	p, ok := t.elem().ComplexPart()
	return DType(p), ok
}
