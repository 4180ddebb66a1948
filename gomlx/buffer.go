package gomlx

import (
	"fmt"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit"
)

// Buffer is a GoMLX buffer: a vkjit DeviceTensor and its GoMLX shape.
type Buffer struct {
	dt        *vkjit.DeviceTensor
	shape     shapes.Shape
	b         *Backend
	finalized atomic.Bool
}

// DeviceTensor is the vkjit tensor behind buf, for programs that mix
// GoMLX with vkjit's own API. It stays the buffer's: closing it
// invalidates the buffer.
func DeviceTensor(buf backends.Buffer) (*vkjit.DeviceTensor, error) {
	b, ok := buf.(*Buffer)
	if !ok {
		return nil, fmt.Errorf("vkjit backend: %T is not a vkjit buffer", buf)
	}
	return b.dt, nil
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
		vb.dt.Close()
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

// HasSharedBuffers implements backends.DataInterface: buffers live in
// device memory that the host reaches through vkjit's copies.
func (b *Backend) HasSharedBuffers() bool { return false }

// NewSharedBuffer implements backends.DataInterface; the backend has no
// shared buffers (HasSharedBuffers).
func (b *Backend) NewSharedBuffer(deviceNum backends.DeviceNum, shape shapes.Shape) (backends.Buffer, any, error) {
	return nil, nil, fmt.Errorf("vkjit backend: no shared buffers (HasSharedBuffers is false)")
}

// BufferData implements backends.DataInterface; the backend has no
// shared buffers (HasSharedBuffers).
func (b *Backend) BufferData(buf backends.Buffer) (any, error) {
	return nil, fmt.Errorf("vkjit backend: no shared buffers (HasSharedBuffers is false)")
}

// BufferCopyToDevice implements backends.DataInterface: there is no other
// device to copy to.
func (b *Backend) BufferCopyToDevice(source backends.Buffer, deviceNum backends.DeviceNum) (backends.Buffer, error) {
	if _, err := b.buffer(source, "BufferCopyToDevice"); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("vkjit backend: no device #%d to copy to (the backend drives one)", deviceNum)
}
