package vkjit

import (
	"fmt"
	"sync/atomic"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// DeviceTensor is a tensor that lives in device memory, like a
// jax.Array: RunDevice takes and returns them, so that chained calls
// skip the round trip through host memory. Close gives its memory back;
// ToHost copies it out. A DeviceTensor belongs to the Runtime that made
// it.
type DeviceTensor struct {
	Type DType
	Dims []int64
	rt   *Runtime
	buf  *vk.Buffer // the tensor's bytes, in storage form
	mem  *deviceMem
	done atomic.Bool
	// donated: the next RunDevice that takes the tensor gives it back.
	donated atomic.Bool
}

// deviceMem is a pool allocation shared by the device tensors that live
// in it (several outputs of one run may share the run's arena).
type deviceMem struct {
	buf  *vk.Buffer
	refs atomic.Int32
	rt   *Runtime
}

// release drops a reference; the last gives the memory back, unless the
// runtime is closed (the memory went with its pool).
func (m *deviceMem) release() {
	if m.refs.Add(-1) == 0 && m.rt.life.enter() == nil {
		m.rt.pool.Free(m.buf)
		m.rt.life.exit()
	}
}

func (d *DeviceTensor) shape() hlo.Shape { return hlo.ArrayShape(d.Type.elem(), d.Dims...) }

// Spec is the tensor's element type and dimensions.
func (d *DeviceTensor) Spec() TensorSpec {
	return TensorSpec{Type: d.Type, Dims: append([]int64{}, d.Dims...)}
}

// Close gives the tensor's device memory back (when no other tensor
// shares it). Closing twice is harmless.
func (d *DeviceTensor) Close() {
	if d.done.CompareAndSwap(false, true) {
		d.mem.release()
	}
}

// Donate gives the tensor to the next RunDevice that takes it, as
// jax.jit's donate_argnums gives an argument: that run gives its memory
// back as soon as it has read it (copied it into the run's arena, where
// the executable donates the parameter, CompileOptions.Donate, so that
// the arena reuses that memory once the value is dead), and the tensor
// is closed after. It returns d, for use in the call.
func (d *DeviceTensor) Donate() *DeviceTensor {
	d.donated.Store(true)
	return d
}

// ToHost copies the tensor to host memory.
func (d *DeviceTensor) ToHost() (*Tensor, error) {
	if d.done.Load() {
		return nil, fmt.Errorf("vkjit: ToHost of a closed device tensor")
	}
	if err := d.rt.life.enter(); err != nil {
		return nil, err
	}
	defer d.rt.life.exit()
	return d.rt.toHost(d.buf, d.shape())
}

// Mapped returns the tensor's memory as the host sees it, laid out as a
// Tensor's Data, where the host can read and write it in place: the
// device's memory is mapped (not staged) and holds this element type at
// its host width (lower.SameBytes: pred and types stored widened do
// not). ok is false elsewhere. Runs see what the host wrote before they
// started; what a run wrote is there when it returns. The bytes are the
// tensor's until Close: the caller must not keep them past it, nor
// write them while a run reads the tensor.
func (d *DeviceTensor) Mapped() (data []byte, ok bool) {
	if d.done.Load() || d.rt.staged || !lower.SameBytes(d.Type.elem(), d.rt.tg) || !d.buf.Mapped() {
		return nil, false
	}
	n := d.shape().ByteSize()
	return d.buf.Bytes()[:n:n], true
}

// Zeros makes a device tensor of zeros: a home for results, or memory
// the host fills in place through Mapped.
func (r *Runtime) Zeros(t DType, dims []int64) (*DeviceTensor, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("vkjit: Zeros of element type %s", t)
	}
	x := &Tensor{Type: t, Dims: dims}
	x.Data = make([]byte, x.shape().ByteSize())
	return r.Upload(x)
}

// Upload copies a host tensor to the device.
func (r *Runtime) Upload(t *Tensor) (*DeviceTensor, error) {
	if t == nil {
		return nil, fmt.Errorf("vkjit: Upload of a nil tensor")
	}
	if !t.Type.Valid() {
		return nil, fmt.Errorf("vkjit: Upload of a tensor of element type %s", t.Type)
	}
	if sh := t.shape(); int64(len(t.Data)) != sh.ByteSize() {
		return nil, fmt.Errorf("vkjit: tensor of shape %s holds %d bytes, needs %d", sh.DimsString(), len(t.Data), sh.ByteSize())
	}
	if err := r.life.enter(); err != nil {
		return nil, err
	}
	defer r.life.exit()
	data := lower.ToStorage(lower.BufferType(t.Type.elem()), t.Data, r.tg)
	buf, err := r.pool.Alloc(int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("vkjit: uploading %s: %w", t.shape(), err)
	}
	if err := r.pool.Upload(pool.Write{Dst: buf, Data: data}); err != nil {
		r.pool.Free(buf)
		return nil, err
	}
	return r.own(t.Type, t.Dims, buf), nil
}

// own makes a device tensor that alone holds allocation buf.
func (r *Runtime) own(t DType, dims []int64, buf *vk.Buffer) *DeviceTensor {
	m := &deviceMem{buf: buf, rt: r}
	m.refs.Store(1)
	return &DeviceTensor{Type: t, Dims: append([]int64{}, dims...), rt: r, buf: buf, mem: m}
}

// checkDeviceArgs is CheckArgs for device tensors.
func (e *Executable) checkDeviceArgs(args []*DeviceTensor) error {
	ps := e.prog.ParamShapes
	if len(args) != len(ps) {
		return fmt.Errorf("vkjit: %s takes %d arguments, got %d", e.prog.Module, len(ps), len(args))
	}
	for i, a := range args {
		name := e.prog.Buffers[e.prog.Params[i]].Name
		switch {
		case a == nil:
			return &ArgError{i, name, "is nil"}
		case a.done.Load():
			return &ArgError{i, name, "was closed"}
		case a.rt != e.rt:
			return &ArgError{i, name, "belongs to another runtime"}
		case a.Type.elem() != ps[i].Elem:
			return &ArgError{i, name, fmt.Sprintf("want element type %s, got %s", ps[i].Elem, a.Type)}
		case !a.shape().SameDims(ps[i]):
			return &ArgError{i, name, fmt.Sprintf("want shape %s, got %s", ps[i].DimsString(), a.shape().DimsString())}
		}
	}
	return nil
}
