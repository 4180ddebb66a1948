package gomlx

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
)

// elemTypes maps GoMLX's dtypes to HLO's element types, one to one. It
// holds the dtypes GoMLX can hold in a Go slice (dtypes.DType.GoType):
// the f8 and sub-byte types that vkjit also computes have no Go type in
// GoMLX v0.26.0, so no GoMLX program can make or read one.
var elemTypes = map[dtypes.DType]hlo.ElementType{
	dtypes.Bool:       hlo.PRED,
	dtypes.Int8:       hlo.S8,
	dtypes.Int16:      hlo.S16,
	dtypes.Int32:      hlo.S32,
	dtypes.Int64:      hlo.S64,
	dtypes.Uint8:      hlo.U8,
	dtypes.Uint16:     hlo.U16,
	dtypes.Uint32:     hlo.U32,
	dtypes.Uint64:     hlo.U64,
	dtypes.Float16:    hlo.F16,
	dtypes.BFloat16:   hlo.BF16,
	dtypes.Float32:    hlo.F32,
	dtypes.Float64:    hlo.F64,
	dtypes.Complex64:  hlo.C64,
	dtypes.Complex128: hlo.C128,
}

var dtypesOf = func() map[hlo.ElementType]dtypes.DType {
	m := map[hlo.ElementType]dtypes.DType{}
	for d, t := range elemTypes {
		m[t] = d
	}
	return m
}()

// elemOf is dt's HLO element type.
func elemOf(dt dtypes.DType) (hlo.ElementType, error) {
	if t, ok := elemTypes[dt]; ok {
		return t, nil
	}
	return hlo.Invalid, fmt.Errorf("vkjit backend: dtype %s is not supported", dt)
}

// hloShape is s in HLO's terms.
func hloShape(s shapes.Shape) (hlo.Shape, error) {
	t, err := elemOf(s.DType)
	if err != nil {
		return hlo.Shape{}, err
	}
	dims := make([]int64, len(s.Dimensions))
	for i, d := range s.Dimensions {
		if d < 0 {
			return hlo.Shape{}, fmt.Errorf("vkjit backend: shape %s has a negative dimension", s)
		}
		dims[i] = int64(d)
	}
	return hlo.ArrayShape(t, dims...), nil
}

// gomlxShape is s in GoMLX's terms.
func gomlxShape(s hlo.Shape) (shapes.Shape, error) {
	dt, ok := dtypesOf[s.Elem]
	if !ok || !s.IsArray() {
		return shapes.Invalid(), fmt.Errorf("vkjit backend: %s has no GoMLX dtype", s)
	}
	dims := make([]int, len(s.Dims))
	for i, d := range s.Dims {
		dims[i] = int(d)
	}
	return shapes.Make(dt, dims...), nil
}

// flatBytes is the memory of a flat Go slice of dtype's Go type holding
// n elements, without a copy: Go lays out bool, the integers, the floats
// (float16 and bfloat16 as their bits) and complex numbers exactly as an
// HLO array's little-endian bytes on every platform Go and Vulkan share.
func flatBytes(flat any, dtype dtypes.DType, n int) ([]byte, error) {
	if flat == nil {
		return nil, fmt.Errorf("vkjit backend: nil flat slice")
	}
	v := reflect.ValueOf(flat)
	if v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("vkjit backend: flat data must be a slice, got %T", flat)
	}
	if _, ok := elemTypes[dtype]; !ok {
		return nil, fmt.Errorf("vkjit backend: dtype %s is not supported", dtype)
	}
	if want, got := dtype.GoType(), v.Type().Elem(); !sameLayout(got, want) {
		return nil, fmt.Errorf("vkjit backend: flat data of type %T for dtype %s (want []%s)", flat, dtype, want)
	}
	if v.Len() != n {
		return nil, fmt.Errorf("vkjit backend: flat data has %d elements, the shape %d", v.Len(), n)
	}
	size := int(v.Type().Elem().Size())
	if n == 0 {
		return []byte{}, nil
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n*size), nil
}

// sameLayout reports whether elements of type got are laid out as
// elements of want: the same kind and size (int is int64 where it is 64
// bits wide, as GoMLX reads it).
func sameLayout(got, want reflect.Type) bool {
	if got.Size() != want.Size() {
		return false
	}
	gk, wk := got.Kind(), want.Kind()
	return gk == wk || gk == reflect.Int && wk == reflect.Int64 || gk == reflect.Uint && wk == reflect.Uint64
}

// dtypeOfSlice is the dtype of a flat slice's elements (InvalidDType for
// what is not a slice of a dtype's Go type).
func dtypeOfSlice(flat any) dtypes.DType {
	t := reflect.TypeOf(flat)
	if t == nil || t.Kind() != reflect.Slice {
		return dtypes.InvalidDType
	}
	return dtypes.FromGoType(t.Elem())
}
