package gomlx

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit"
)

// Buffer is a GoMLX buffer: a vkjit DeviceTensor and its GoMLX shape.
//
// A shared buffer (NewSharedBuffer, BufferData) also has the Go slice
// GoMLX reads and writes: the device memory itself where the device's
// memory is mapped and holds the dtype at its Go width (inPlace: no copy
// either way), else a host copy that becomes the buffer's truth, written
// to the device before each run that reads it (pred, say, which devices
// store as 32-bit words).
type Buffer struct {
	mu        sync.Mutex
	dt        *vkjit.DeviceTensor
	shape     shapes.Shape
	b         *Backend
	finalized atomic.Bool
	flat      any
	inPlace   bool
}

// DeviceTensor is the vkjit tensor behind buf, for programs that mix
// GoMLX with vkjit's own API. It stays the buffer's: closing it
// invalidates the buffer.
func DeviceTensor(buf backends.Buffer) (*vkjit.DeviceTensor, error) {
	b, ok := buf.(*Buffer)
	if !ok || b == nil {
		return nil, fmt.Errorf("vkjit backend: %T is not a vkjit buffer", buf)
	}
	return b.device()
}

// device is the buffer's device tensor, with a shared buffer's host copy
// written to it first.
func (vb *Buffer) device() (*vkjit.DeviceTensor, error) {
	vb.mu.Lock()
	defer vb.mu.Unlock()
	if vb.flat == nil || vb.inPlace {
		return vb.dt, nil
	}
	data, err := flatBytes(vb.flat, vb.shape.DType, vb.shape.Size())
	if err != nil {
		return nil, err
	}
	hs, err := hloShape(vb.shape)
	if err != nil {
		return nil, err
	}
	t, err := vkjit.NewTensor(vkjit.DType(hs.Elem), hs.Dims, data)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	dt, err := vb.b.rt.Upload(t)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	vb.dt.Close()
	vb.dt = dt
	return dt, nil
}

// typedFlat is a slice of dtype's Go type over data (n elements), which
// it aliases.
func typedFlat(data []byte, s shapes.Shape) any {
	typ := reflect.SliceOf(s.DType.GoType())
	n := s.Size()
	if n == 0 {
		return reflect.MakeSlice(typ, 0, 0).Interface()
	}
	arr := reflect.NewAt(reflect.ArrayOf(n, s.DType.GoType()), unsafe.Pointer(unsafe.SliceData(data)))
	return arr.Elem().Slice(0, n).Interface()
}

func (b *Backend) buffer(buf backends.Buffer, what string) (*Buffer, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	vb, ok := buf.(*Buffer)
	switch {
	case buf == nil || (ok && vb == nil):
		return nil, fmt.Errorf("vkjit backend: %s: nil buffer", what)
	case !ok:
		return nil, fmt.Errorf("vkjit backend: %s: buffer of type %T is not the vkjit backend's", what, buf)
	case vb.b != b:
		return nil, fmt.Errorf("vkjit backend: %s: buffer belongs to another vkjit backend", what)
	case vb.finalized.Load():
		return nil, fmt.Errorf("vkjit backend: %s: buffer used after it was finalized (or donated)", what)
	}
	return vb, nil
}

func (b *Backend) wrap(dt *vkjit.DeviceTensor, s shapes.Shape) *Buffer {
	return &Buffer{dt: dt, shape: s, b: b}
}

// BufferFinalize implements backends.DataInterface: the device memory
// goes back to vkjit's pool now. Finalizing twice is harmless.
func (b *Backend) BufferFinalize(buf backends.Buffer) error {
	vb, ok := buf.(*Buffer)
	if !ok || vb == nil {
		return fmt.Errorf("vkjit backend: BufferFinalize: buffer of type %T is not the vkjit backend's", buf)
	}
	if vb.finalized.CompareAndSwap(false, true) {
		vb.mu.Lock()
		vb.dt.Close()
		vb.flat = nil
		vb.mu.Unlock()
	}
	return nil
}

// BufferShape implements backends.DataInterface.
func (b *Backend) BufferShape(buf backends.Buffer) (shapes.Shape, error) {
	vb, err := b.buffer(buf, "BufferShape")
	if err != nil {
		return shapes.Invalid(), err
	}
	return vb.shape.Clone(), nil
}

// BufferDeviceNum implements backends.DataInterface.
func (b *Backend) BufferDeviceNum(buf backends.Buffer) (backends.DeviceNum, error) {
	if _, err := b.buffer(buf, "BufferDeviceNum"); err != nil {
		return 0, err
	}
	return 0, nil
}

// BufferToFlatData implements backends.DataInterface: it copies the
// buffer into flat, a slice of its dtype's Go type and exact length.
func (b *Backend) BufferToFlatData(buf backends.Buffer, flat any) error {
	vb, err := b.buffer(buf, "BufferToFlatData")
	if err != nil {
		return err
	}
	dst, err := flatBytes(flat, vb.shape.DType, vb.shape.Size())
	if err != nil {
		return err
	}
	vb.mu.Lock()
	defer vb.mu.Unlock()
	if vb.flat != nil { // a shared buffer's slice is its contents
		src, err := flatBytes(vb.flat, vb.shape.DType, vb.shape.Size())
		if err != nil {
			return err
		}
		copy(dst, src)
		return nil
	}
	if mem, ok := vb.dt.Mapped(); ok {
		copy(dst, mem)
		return nil
	}
	t, err := vb.dt.ToHost()
	if err != nil {
		return fmt.Errorf("vkjit backend: %w", err)
	}
	copy(dst, t.Data)
	return nil
}

// BufferFromFlatData implements backends.DataInterface: it uploads flat,
// a slice of the shape's dtype's Go type, to the device.
func (b *Backend) BufferFromFlatData(deviceNum backends.DeviceNum, flat any, shape shapes.Shape) (backends.Buffer, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if deviceNum != 0 {
		return nil, fmt.Errorf("vkjit backend: no device #%d (the backend drives one)", deviceNum)
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, err
	}
	data, err := flatBytes(flat, shape.DType, shape.Size())
	if err != nil {
		return nil, err
	}
	t, err := vkjit.NewTensor(vkjit.DType(hs.Elem), hs.Dims, data)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	dt, err := b.rt.Upload(t)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	return b.wrap(dt, shape.Clone()), nil
}

// HasSharedBuffers implements backends.DataInterface: where the device's
// memory is mapped (lavapipe, integrated GPUs: not a discrete GPU's
// staged memory), GoMLX reads and writes buffers through Go slices, in
// place for the dtypes the device holds at their Go width.
func (b *Backend) HasSharedBuffers() bool { return !b.info.Staged }

// NewSharedBuffer implements backends.DataInterface: a buffer of zeros
// and the Go slice of its contents.
func (b *Backend) NewSharedBuffer(deviceNum backends.DeviceNum, shape shapes.Shape) (backends.Buffer, any, error) {
	if err := b.check(); err != nil {
		return nil, nil, err
	}
	if !b.HasSharedBuffers() {
		return nil, nil, fmt.Errorf("vkjit backend: no shared buffers on %s (its memory is staged)", b.info.Name)
	}
	if deviceNum != 0 {
		return nil, nil, fmt.Errorf("vkjit backend: no device #%d (the backend drives one)", deviceNum)
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, nil, err
	}
	dt, err := b.rt.Zeros(vkjit.DType(hs.Elem), hs.Dims)
	if err != nil {
		return nil, nil, fmt.Errorf("vkjit backend: %w", err)
	}
	vb := b.wrap(dt, shape.Clone())
	if err := vb.share(); err != nil {
		dt.Close()
		return nil, nil, err
	}
	return vb, vb.flat, nil
}

// share makes vb's Go slice: its device memory in place where it can,
// else a host copy of it.
func (vb *Buffer) share() error {
	if mem, ok := vb.dt.Mapped(); ok {
		vb.flat, vb.inPlace = typedFlat(mem, vb.shape), true
		return nil
	}
	t, err := vb.dt.ToHost()
	if err != nil {
		return fmt.Errorf("vkjit backend: %w", err)
	}
	vb.flat = typedFlat(t.Data, vb.shape)
	return nil
}

// BufferData implements backends.DataInterface: the Go slice of the
// buffer's contents (made shared if it was not), valid until the buffer
// is finalized.
func (b *Backend) BufferData(buf backends.Buffer) (any, error) {
	vb, err := b.buffer(buf, "BufferData")
	if err != nil {
		return nil, err
	}
	if !b.HasSharedBuffers() {
		return nil, fmt.Errorf("vkjit backend: no shared buffers on %s (its memory is staged)", b.info.Name)
	}
	vb.mu.Lock()
	defer vb.mu.Unlock()
	if vb.flat == nil {
		if err := vb.share(); err != nil {
			return nil, err
		}
	}
	return vb.flat, nil
}

// BufferCopyToDevice implements backends.DataInterface: there is no other
// device to copy to.
func (b *Backend) BufferCopyToDevice(source backends.Buffer, deviceNum backends.DeviceNum) (backends.Buffer, error) {
	if _, err := b.buffer(source, "BufferCopyToDevice"); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("vkjit backend: no device #%d to copy to (the backend drives one)", deviceNum)
}
