package vkjit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// RunStats describes one run.
type RunStats struct {
	Wall            time.Duration // the call's wall time, transfers included
	Exec            time.Duration // the program's execution: dispatches and loop control, without Upload and Download
	Upload          time.Duration // Run and Profile: the host's time converting arguments and writing them to the device (a staging device's transfer itself runs before the first kernel that reads it, in Exec)
	Download        time.Duration // Run and Profile: the time from the last kernel to the results on the host
	Dispatches      int           // kernel dispatches, loop iterations included
	Submits         int           // batches of dispatches the host submitted and waited for: one, and one more for each value it reads back to decide what runs next (a host loop's condition, a conditional's branch, a device loop that may need another dispatch)
	PeakDeviceBytes int64         // the most device memory the run held at once, the executable's constants included
}

// DispatchTime is one dispatch's device time, from Profile.
type DispatchTime struct {
	Kernel string   // the kernel's name
	Inst   string   // the instruction it computes
	Fused  []string // instructions computed inside it
	Time   time.Duration
}

// run is the state of one call of the program: device memory held, for
// the peak, and the context that may stop it.
type run struct {
	e          *Executable
	ctx        context.Context
	held, peak int64
	dispatches int
	submits    int
	mu         sync.Mutex

	profile []DispatchTime // Profile: each dispatch's device time
	prof    bool

	copies vk.Ticket // the last device-to-device copy the run made

	upload   time.Duration // host arguments written to the device so far
	download time.Duration // results read back to the host
}

func (r *run) alloc(name string, size int64) (*vk.Buffer, error) {
	buf, err := r.e.rt.pool.Alloc(size)
	if err != nil {
		if errors.Is(err, pool.ErrOutOfMemory) {
			return nil, fmt.Errorf("vkjit: %s (%d bytes; this run holds %d): %w", name, size, r.held, err)
		}
		return nil, err
	}
	r.mu.Lock()
	r.held += lower.PaddedSize(size)
	r.peak = max(r.peak, r.held)
	r.mu.Unlock()
	return buf, nil
}

// free gives buffers this run allocated back to the pool.
func (r *run) free(bs []*vk.Buffer) {
	for _, b := range bs {
		if b == nil {
			continue // a parameter donated to the arena
		}
		r.mu.Lock()
		r.held -= lower.PaddedSize(b.Size())
		r.mu.Unlock()
		r.e.rt.pool.Free(b)
	}
}

// Run executes the program with args (the leaves of the entry
// parameters, in order) and returns the result leaves in depth-first
// order. It is safe to call from several goroutines at once. When ctx is
// done the run stops before its next submission to the device (a host
// loop's iteration, a device loop's dispatch) and returns ctx's error.
func (e *Executable) Run(ctx context.Context, args ...*Tensor) ([]*Tensor, RunStats, error) {
	return e.runHost(ctx, &run{e: e}, args)
}

// Profile is Run that also measures every dispatch's device time with
// timestamps (dispatches serialized by barriers, command lists recorded
// afresh: slower than Run; for finding where the time goes).
func (e *Executable) Profile(ctx context.Context, args ...*Tensor) ([]DispatchTime, RunStats, error) {
	r := &run{e: e, prof: true}
	_, st, err := e.runHost(ctx, r, args)
	return r.profile, st, err
}

// RunDevice is Run on device tensors: the arguments are read where they
// are (parameters the program donates to its arena are copied there, and
// the argument is left as it was), and the results stay on the device.
// An argument marked with Donate is given back by the run: as soon as it
// is copied into the arena where the program donates its parameter,
// else once the run is over.
// A result shares the run's arena when results fill at least half of it;
// otherwise it is copied into an allocation of its own, so that a large
// arena is not held for a small result.
func (e *Executable) RunDevice(ctx context.Context, args ...*DeviceTensor) ([]*DeviceTensor, RunStats, error) {
	defer func() {
		for _, a := range args {
			if a != nil && a.donated.Load() {
				a.Close() // read in place, or closed already once copied
			}
		}
	}()
	if err := e.checkDeviceArgs(args); err != nil {
		return nil, RunStats{}, err
	}
	p := e.prog
	var results []*DeviceTensor
	bind := func(r *run) ([]*vk.Buffer, []source, []*vk.Buffer, error) {
		inputs := make([]*vk.Buffer, len(p.Params))
		uploads := make([]source, len(p.Params))
		uses := map[*vk.Buffer]int{}
		for _, a := range args {
			uses[a.buf]++
		}
		for i, bi := range p.Params {
			b, a := p.Buffers[bi], args[i]
			// A tensor the caller gave up (Donate) and passes once is the
			// run's: written over where a result takes the parameter's
			// memory, given back once copied where the arena holds it.
			mine := a.donated.Load() && uses[a.buf] == 1
			switch {
			case b.InArena():
				uploads[i].buf = a.buf
				if mine {
					uploads[i].given = a.Close
				}
			case b.Alias != 0 && !mine:
				uploads[i].buf = a.buf // copied for the result to take over
			default:
				inputs[i] = a.buf
			}
		}
		return inputs, uploads, nil, nil
	}
	deliver := func(r *run, outs, owned []*vk.Buffer) (kept map[*vk.Buffer]bool, err error) {
		given := map[*vk.Buffer]*deviceMem{} // donated arguments results may take over
		for _, a := range args {
			if a.donated.Load() {
				given[a.buf.Root()] = a.mem
			}
		}
		results, kept, err = e.keepOnDevice(r, outs, owned, given)
		return kept, err
	}
	st, err := e.execute(ctx, &run{e: e}, bind, deliver)
	if err != nil {
		return nil, st, err
	}
	return results, st, nil
}

// runHost is Run and Profile: host arguments uploaded, results
// downloaded.
func (e *Executable) runHost(ctx context.Context, r *run, args []*Tensor) ([]*Tensor, RunStats, error) {
	if err := e.CheckArgs(args); err != nil {
		return nil, RunStats{}, err
	}
	p := e.prog
	bind := func(r *run) ([]*vk.Buffer, []source, []*vk.Buffer, error) {
		t0 := time.Now()
		defer func() { r.upload += time.Since(t0) }()
		inputs := make([]*vk.Buffer, len(p.Params))
		uploads := make([]source, len(p.Params))
		var writes []pool.Write
		for i, bi := range p.Params {
			b := p.Buffers[bi]
			api := p.ParamShapes[i].Elem
			data := lower.ToStorage(lower.BufferType(api), args[i].Data, e.rt.tg)
			if b.Donated { // uploaded by exec, into the arena or a buffer a result takes over
				uploads[i].data = data
				continue
			}
			buf, err := r.alloc(b.Name, b.Size)
			if err != nil {
				return nil, nil, inputs, err
			}
			inputs[i] = buf
			writes = append(writes, pool.Write{Dst: buf, Data: data})
		}
		return inputs, uploads, inputs, e.rt.pool.Upload(writes...)
	}
	var results []*Tensor
	deliver := func(r *run, outs, owned []*vk.Buffer) (map[*vk.Buffer]bool, error) {
		t0 := time.Now()
		defer func() { r.download += time.Since(t0) }()
		results = make([]*Tensor, len(outs))
		for i, b := range outs {
			var err error
			if results[i], err = e.rt.toHost(b, p.OutputShapes[i]); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	st, err := e.execute(ctx, r, bind, deliver)
	if err != nil {
		return nil, st, err
	}
	return results, st, nil
}

// execute is the one path every call of the program takes (Run, Profile,
// RunDevice, Stream): it enters the executable, binds the arguments
// (bind returns the entry's parameter buffers, what donated parameters
// are copied from, and the buffers it allocated), runs the program, and
// hands its outputs to deliver while the run's memory is still held;
// then it frees what the run allocated, except the allocations deliver
// kept.
func (e *Executable) execute(ctx context.Context, r *run,
	bind func(*run) (inputs []*vk.Buffer, uploads []source, mine []*vk.Buffer, err error),
	deliver func(r *run, outs, owned []*vk.Buffer) (kept map[*vk.Buffer]bool, err error)) (RunStats, error) {
	start := time.Now()
	var st RunStats
	if ctx == nil {
		return st, fmt.Errorf("vkjit: nil context")
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	exit, err := e.enter()
	if err != nil {
		return st, err
	}
	defer exit()
	r.ctx = ctx
	for _, b := range e.root.consts {
		r.held += lower.PaddedSize(b.Size())
	}
	r.peak = r.held
	inputs, uploads, mine, err := bind(r)
	defer func() { r.free(mine) }()
	if err != nil {
		return st, err
	}
	t0, u0 := time.Now(), r.upload
	outs, owned, err := r.exec(e.root, inputs, uploads)
	st.Exec = time.Since(t0) - (r.upload - u0) // donated arguments are written inside
	var kept map[*vk.Buffer]bool
	if err == nil {
		kept, err = deliver(r, outs, owned)
	}
	st.Upload, st.Download = r.upload, r.download
	if err != nil {
		e.rt.pool.Wait(r.copies) // copies into what is freed here
	}
	var rest []*vk.Buffer
	for _, b := range owned {
		if !kept[b] {
			rest = append(rest, b)
		}
	}
	r.free(rest)
	if err != nil {
		return st, err
	}
	st.Dispatches, st.Submits = r.dispatches, r.submits
	st.PeakDeviceBytes = r.peak
	st.Wall = time.Since(start)
	return st, nil
}

// keepOnDevice makes RunDevice's results: an output in an allocation of
// the run's that results fill at least half of keeps it (the allocations
// kept), an output written over a donated argument takes over its memory
// (given: the arguments' allocations), and the others are copied into
// allocations of their own (constants and arguments belong to others).
func (e *Executable) keepOnDevice(r *run, outs, owned []*vk.Buffer, given map[*vk.Buffer]*deviceMem) ([]*DeviceTensor, map[*vk.Buffer]bool, error) {
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
	fail := func(err error) ([]*DeviceTensor, map[*vk.Buffer]bool, error) {
		e.rt.pool.Wait(r.copies) // copies that read what is freed after this
		for _, d := range results {
			if d != nil {
				d.Close()
			}
		}
		// The shared allocations went with their last result's Close.
		kept := map[*vk.Buffer]bool{}
		for b := range shared {
			kept[b] = true
		}
		return nil, kept, err
	}
	p := e.prog
	for i, b := range outs {
		shape := p.OutputShapes[i]
		root := b.Root()
		if m := given[root]; m != nil {
			m.refs.Add(1) // the argument's reference goes when RunDevice closes it
			results[i] = &DeviceTensor{Type: DType(shape.Elem), Dims: append([]int64{}, shape.Dims...), rt: e.rt, buf: b, mem: m}
			continue
		}
		if n, ok := mine[root]; ok && 2*n >= root.Size() {
			m := shared[root]
			if m == nil {
				m = &deviceMem{buf: root, rt: e.rt}
				shared[root] = m
			}
			m.refs.Add(1)
			results[i] = &DeviceTensor{Type: DType(shape.Elem), Dims: append([]int64{}, shape.Dims...), rt: e.rt, buf: b, mem: m}
			continue
		}
		nb, err := r.alloc(fmt.Sprintf("result %d", i), b.Size())
		if err != nil {
			return fail(err)
		}
		results[i] = e.rt.own(DType(shape.Elem), shape.Dims, nb)
		t, err := e.rt.pool.Copy(nb, b)
		if err != nil {
			return fail(err)
		}
		r.copies = max(r.copies, t)
	}
	// The copies read the arena and the arguments: done before the arena
	// is freed and the caller may close an argument.
	if err := e.rt.pool.Wait(r.copies); err != nil {
		return fail(err)
	}
	kept := map[*vk.Buffer]bool{}
	for b := range shared {
		kept[b] = true
	}
	return results, kept, nil
}
