package vkjit

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// DeviceTensor is a tensor that lives in device memory, like a
// jax.Array: RunDevice takes and returns them, so that chained calls
// skip the round trip through host memory. Release gives its memory
// back; ToHost copies it out. A DeviceTensor belongs to the Runtime that
// made it.
type DeviceTensor struct {
	Type hlo.ElementType
	Dims []int64
	rt   *Runtime
	buf  *vk.Buffer // the tensor's bytes, in storage form
	mem  *deviceMem
	done atomic.Bool
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

// Shape is the tensor's shape.
func (d *DeviceTensor) Shape() hlo.Shape { return hlo.ArrayShape(d.Type, d.Dims...) }

// Release gives the tensor's device memory back (when no other tensor
// shares it). Releasing twice is harmless.
func (d *DeviceTensor) Release() {
	if d.done.CompareAndSwap(false, true) {
		d.mem.release()
	}
}

// ToHost copies the tensor to host memory.
func (d *DeviceTensor) ToHost() (*Tensor, error) {
	if d.done.Load() {
		return nil, fmt.Errorf("vkjit: ToHost of a released device tensor")
	}
	if err := d.rt.life.enter(); err != nil {
		return nil, err
	}
	defer d.rt.life.exit()
	return d.rt.toHost(d.buf, d.Shape())
}

// Upload copies a host tensor to the device.
func (r *Runtime) Upload(t *Tensor) (*DeviceTensor, error) {
	if t == nil {
		return nil, fmt.Errorf("vkjit: Upload of a nil tensor")
	}
	if int64(len(t.Data)) != t.Shape().ByteSize() {
		return nil, fmt.Errorf("vkjit: tensor of shape %s holds %d bytes, needs %d", t.Shape().DimsString(), len(t.Data), t.Shape().ByteSize())
	}
	if err := r.life.enter(); err != nil {
		return nil, err
	}
	defer r.life.exit()
	data := lower.ToStorage(t.Type, t.Data, r.tg)
	buf, err := r.pool.Alloc(int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("vkjit: uploading %s: %w", t.Shape(), err)
	}
	if err := r.pool.Upload(pool.Write{Dst: buf, Data: data}); err != nil {
		r.pool.Free(buf)
		return nil, err
	}
	return r.own(t.Type, t.Dims, buf), nil
}

// own makes a device tensor that alone holds allocation buf.
func (r *Runtime) own(t hlo.ElementType, dims []int64, buf *vk.Buffer) *DeviceTensor {
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
			return &ArgError{i, name, "was released"}
		case a.rt != e.rt:
			return &ArgError{i, name, "belongs to another runtime"}
		case a.Type != ps[i].Elem:
			return &ArgError{i, name, fmt.Sprintf("want element type %s, got %s", ps[i].Elem, a.Type)}
		case !a.Shape().SameDims(ps[i]):
			return &ArgError{i, name, fmt.Sprintf("want shape %s, got %s", ps[i].DimsString(), a.Shape().DimsString())}
		}
	}
	return nil
}

// RunDevice is Run on device tensors: the arguments are read where they
// are (parameters the program donates to its arena are copied there, and
// the argument is left as it was), and the results stay on the device.
// A result shares the run's arena when results fill at least half of it;
// otherwise it is copied into an allocation of its own, so that a large
// arena is not held for a small result.
func (e *Executable) RunDevice(args ...*DeviceTensor) ([]*DeviceTensor, RunStats, error) {
	start := time.Now()
	var st RunStats
	if err := e.checkDeviceArgs(args); err != nil {
		return nil, st, err
	}
	exit, err := e.enter()
	if err != nil {
		return nil, st, err
	}
	defer exit()
	r := &run{e: e}
	p := e.prog
	inputs := make([]*vk.Buffer, len(p.Params))
	uploads := make([]source, len(p.Params))
	for i, bi := range p.Params {
		if p.Buffers[bi].Donated {
			uploads[i].buf = args[i].buf
		} else {
			inputs[i] = args[i].buf
		}
	}
	t0 := time.Now()
	outs, owned, err := r.exec(e.root, inputs, uploads)
	st.ExecMs = ms(time.Since(t0))
	if err != nil {
		r.free(owned)
		return nil, st, err
	}
	// Results in memory the run allocated may keep it; the rest are
	// copied (constants and arguments belong to others).
	mine := map[*vk.Buffer]int64{} // allocation -> result bytes in it
	for _, b := range owned {
		mine[b] = 0
	}
	for _, b := range outs {
		if n, ok := mine[b.Root()]; ok {
			mine[b.Root()] = n + b.Size()
		}
	}
	shared := map[*vk.Buffer]*deviceMem{}
	results := make([]*DeviceTensor, len(outs))
	// unshared is what the run allocated that no result keeps (a shared
	// allocation is freed by its last result's Release).
	unshared := func() []*vk.Buffer {
		var rest []*vk.Buffer
		for _, b := range owned {
			if shared[b] == nil {
				rest = append(rest, b)
			}
		}
		return rest
	}
	fail := func(err error) ([]*DeviceTensor, RunStats, error) {
		e.rt.pool.Wait(r.copies) // copies that read what is freed here
		r.free(unshared())
		for _, d := range results {
			if d != nil {
				d.Release()
			}
		}
		return nil, st, err
	}
	for i, b := range outs {
		shape := p.OutputShapes[i]
		root := b.Root()
		if n, ok := mine[root]; ok && 2*n >= root.Size() {
			m := shared[root]
			if m == nil {
				m = &deviceMem{buf: root, rt: e.rt}
				shared[root] = m
			}
			m.refs.Add(1)
			results[i] = &DeviceTensor{Type: shape.Elem, Dims: append([]int64{}, shape.Dims...), rt: e.rt, buf: b, mem: m}
			continue
		}
		nb, err := r.alloc(fmt.Sprintf("result %d", i), b.Size())
		if err != nil {
			return fail(err)
		}
		results[i] = e.rt.own(shape.Elem, shape.Dims, nb)
		t, err := e.rt.pool.Copy(nb, b)
		if err != nil {
			return fail(err)
		}
		r.copies = max(r.copies, t)
	}
	// The copies read the arena and the arguments: done before the arena
	// is freed and the caller may release an argument.
	if err := e.rt.pool.Wait(r.copies); err != nil {
		return fail(err)
	}
	st.Dispatches = r.dispatches
	st.PeakDeviceBytes = r.peak
	r.free(unshared())
	st.RunMs = ms(time.Since(start))
	return results, st, nil
}

// StreamResult is one run's outcome from Stream.
type StreamResult struct {
	Outputs []*Tensor
	Stats   RunStats
	Err     error
}

// Stream runs the executable once for each argument list received from
// in, in order, and sends each run's results, in the same order, on the
// channel it returns, which closes after in closes. The arguments of run
// i+1 are uploaded while run i computes, and run i's results are read
// back while run i+1 computes. The caller must drain the returned channel.
func (e *Executable) Stream(in <-chan []*Tensor) <-chan StreamResult {
	type uploaded struct {
		args []*DeviceTensor
		err  error
	}
	up := make(chan uploaded, 1)
	go func() {
		defer close(up)
		for args := range in {
			var u uploaded
			if u.err = e.CheckArgs(args); u.err == nil {
				for _, a := range args {
					d, err := e.rt.Upload(a)
					if err != nil {
						u.err = err
						break
					}
					u.args = append(u.args, d)
				}
			}
			up <- u
		}
	}()
	type ran struct {
		res []*DeviceTensor
		st  RunStats
		err error
	}
	results := make(chan ran, 1)
	go func() { // runs
		defer close(results)
		for u := range up {
			x := ran{err: u.err}
			if x.err == nil {
				x.res, x.st, x.err = e.RunDevice(u.args...)
			}
			for _, a := range u.args {
				a.Release()
			}
			results <- x
		}
	}()
	out := make(chan StreamResult, 1)
	go func() { // downloads
		defer close(out)
		for x := range results {
			r := StreamResult{Stats: x.st, Err: x.err}
			for _, d := range x.res {
				if r.Err == nil {
					t, err := d.ToHost()
					r.Outputs, r.Err = append(r.Outputs, t), err
				}
				d.Release()
			}
			if r.Err != nil {
				r.Outputs = nil
			}
			out <- r
		}
	}()
	return out
}
