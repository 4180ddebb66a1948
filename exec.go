package vkjit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// Executable is a compiled module bound to a device.
type Executable struct {
	rt    *Runtime
	prog  *lower.Program
	root  *loaded
	Stats CompileStats

	life    life       // runs in flight; Close waits for them
	closeMu sync.Mutex // held while the device objects are freed
}

// loaded is a program with its device objects: pipelines, constant
// buffers, and the sub-programs of its while and conditional steps.
type loaded struct {
	prog    *lower.Program
	kernels []*vk.Kernel
	consts  map[int]*vk.Buffer // uploaded once, from pool
	subs    []*loaded
	pool    *pool.Pool

	// Recorded command lists by the dispatches they hold (kernels, the
	// memory each binding names, push constants): a run or loop
	// iteration that binds the same buffers as an earlier one (runs and
	// iterations reuse spare buffers) replays the list instead of
	// recording it again.
	mu    sync.Mutex
	lists map[string]*vk.CommandList
}

// maxLists bounds the recorded command lists one program keeps.
const maxLists = 64

// dispatchKey identifies a list of dispatches for the replay cache.
func dispatchKey(ds []vk.Dispatch) string {
	// Binary, not fmt: a host-driven loop builds one per iteration.
	b := make([]byte, 0, 64*len(ds))
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	for _, d := range ds {
		u64(uint64(uintptr(unsafe.Pointer(d.Kernel))))
		u64(uint64(len(d.Push)))
		b = append(b, d.Push...)
		for _, g := range d.Groups {
			u64(uint64(g))
		}
		if d.AfterWrites {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		u64(uint64(len(d.Buffers)))
		for _, x := range d.Buffers {
			for _, v := range x.Identity() {
				u64(v)
			}
		}
	}
	return string(b)
}

// submit runs dispatches, replaying a list recorded for the same ones.
// A list is taken out of the cache while it runs, so that two runs never
// submit one command buffer at once.
func (l *loaded) submit(dev *vk.Device, ds []vk.Dispatch) error {
	key := dispatchKey(ds)
	l.mu.Lock()
	cl := l.lists[key]
	delete(l.lists, key)
	l.mu.Unlock()
	if cl == nil {
		var err error
		if cl, err = dev.Record(ds); err != nil {
			return err
		}
	}
	err := cl.Submit(vk.ReadyAll(ds))
	l.mu.Lock()
	if l.lists == nil {
		l.lists = map[string]*vk.CommandList{}
	}
	if err == nil && len(l.lists) < maxLists {
		l.lists[key], cl = cl, nil
	}
	l.mu.Unlock()
	if cl != nil {
		cl.Destroy()
	}
	return err
}

func (r *Runtime) compile(m *hlo.Module, opts CompileOptions, start time.Time) (*Executable, error) {
	t0 := time.Now()
	prog, hit, err := r.cachedProgram(m, opts)
	if err != nil {
		return nil, err
	}
	return r.finish(prog, hit, time.Since(t0), start)
}

// compileSource compiles HLO text through the cache (no parse on a hit).
func (r *Runtime) compileSource(name string, src []byte, opts CompileOptions, start time.Time) (*Executable, error) {
	t0 := time.Now()
	prog, hit, err := r.sourceProgram(name, src, opts)
	if err != nil {
		return nil, err
	}
	return r.finish(prog, hit, time.Since(t0), start)
}

// finish makes the executable of a program: pipelines and constants.
func (r *Runtime) finish(prog *lower.Program, hit bool, codegen time.Duration, start time.Time) (*Executable, error) {
	var err error
	e := &Executable{rt: r, prog: prog}
	t1 := time.Now()
	if e.root, err = r.load(prog); err != nil {
		return nil, err
	}
	warmed := r.warm(e.root)
	r.mu.Lock()
	r.exes[e] = true
	r.mu.Unlock()
	e.Stats = CompileStats{Compile: time.Since(start), Codegen: codegen, Pipeline: time.Since(t1), Warmed: warmed}
	var count func(l *loaded)
	count = func(l *loaded) {
		e.Stats.Kernels += len(l.kernels)
		for _, s := range l.subs {
			count(s)
		}
	}
	count(e.root)
	if hit {
		e.Stats.CacheHits = e.Stats.Kernels
	} else {
		e.Stats.CacheMisses = e.Stats.Kernels
	}
	return e, nil
}

func (r *Runtime) load(p *lower.Program) (*loaded, error) {
	l := &loaded{prog: p, consts: map[int]*vk.Buffer{}, pool: r.pool}
	var err error
	if l.kernels, err = r.pipelines(p.Kernels); err != nil {
		return nil, err
	}
	var writes []pool.Write
	for i, b := range p.Buffers {
		if b.Kind != lower.BufConstant {
			continue
		}
		buf, err := r.pool.Alloc(b.Size)
		if err != nil {
			l.close()
			return nil, fmt.Errorf("vkjit: constant %s: %w", b.Name, err)
		}
		l.consts[i] = buf
		writes = append(writes, pool.Write{Dst: buf, Data: b.Data})
	}
	if err := r.pool.Upload(writes...); err != nil {
		l.close()
		return nil, err
	}
	for _, sp := range p.Subs {
		sl, err := r.load(sp)
		if err != nil {
			l.close()
			return nil, err
		}
		l.subs = append(l.subs, sl)
	}
	return l, nil
}

// deviceKernel creates kernel k's pipeline on d.
func deviceKernel(d *vk.Device, k *lower.Kernel) (*vk.Kernel, error) {
	texel := make([]vk.TexelView, len(k.Texel))
	for j, t := range k.Texel {
		texel[j] = vk.TexelView{Binding: t.Binding, Bytes: t.Bytes}
	}
	dk, err := d.NewKernel(k.Name, k.Words, k.Bindings, uint32(k.PushSize), texel...)
	if err != nil {
		return nil, err
	}
	if err := dk.ByAddress(k.Addressed); err != nil {
		dk.Destroy()
		return nil, err
	}
	return dk, nil
}

// pipelines creates the kernels' pipelines, on as many threads as the
// process may use: the driver translates each one's SPIR-V as it is
// created (lavapipe: 2.7 ms a kernel of the DLRM training step, 131 of
// them), and Vulkan lets pipelines be created, through one pipeline
// cache, from several threads at once.
func (r *Runtime) pipelines(ks []*lower.Kernel) ([]*vk.Kernel, error) {
	out := make([]*vk.Kernel, len(ks))
	errs := make([]error, len(ks))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = deviceKernel(r.dev, ks[i])
			}
		}()
	}
	for i := range ks {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, k := range out {
			if k != nil {
				k.Destroy()
			}
		}
		return nil, err
	}
	return out, nil
}

func (l *loaded) close() {
	l.mu.Lock()
	for _, cl := range l.lists {
		cl.Destroy()
	}
	l.lists = nil
	l.mu.Unlock()
	for _, k := range l.kernels {
		k.Destroy()
	}
	l.kernels = nil
	for _, b := range l.consts {
		l.pool.Free(b)
	}
	l.consts = nil
	for _, s := range l.subs {
		s.close()
	}
	l.subs = nil
}

// Params are the entry's parameter leaves, in the order Run takes them.
func (e *Executable) Params() []TensorSpec {
	out := make([]TensorSpec, len(e.prog.Params))
	for i, bi := range e.prog.Params {
		out[i] = specOf(e.prog.Buffers[bi].Name, e.prog.ParamShapes[i])
	}
	return out
}

// Results are the entry's result leaves, in the order Run returns them.
func (e *Executable) Results() []TensorSpec {
	out := make([]TensorSpec, len(e.prog.Outputs))
	for i, bi := range e.prog.Outputs {
		out[i] = specOf(e.prog.Buffers[bi].Name, e.prog.OutputShapes[i])
	}
	return out
}

// MemoryPlan is what memory planning decided for an executable, its
// loops' and branches' programs included.
type MemoryPlan struct {
	ArenaBytes     int64 // one allocation holds every temporary, at planned offsets
	LiveBoundBytes int64 // the most bytes live at once: no plan can need less
	TempBytes      int64 // the temporaries' sizes summed: the arena without reuse
	FusedBytes     int64 // the intermediates fusion keeps out of memory
}

// MemoryPlan returns the executable's memory plan.
func (e *Executable) MemoryPlan() MemoryPlan {
	m := e.prog.Memory()
	return MemoryPlan{ArenaBytes: m.Arena, LiveBoundBytes: m.LiveBound, TempBytes: m.Temps, FusedBytes: m.Fused}
}

// Plan describes the compiled program for people: its buffers, its
// steps and the kernel plan they came from (what `vkjit fmt --plan`
// prints).
func (e *Executable) Plan() string {
	var b strings.Builder
	e.prog.Describe(&b) // a strings.Builder does not fail
	return b.String()
}

// Close waits for the executable's runs in flight, then releases its
// device objects. Runs after it return ErrClosed; a second Close does
// nothing.
func (e *Executable) Close() {
	e.life.close()
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.root == nil {
		return
	}
	e.root.close()
	e.root = nil
	e.rt.mu.Lock()
	delete(e.rt.exes, e)
	e.rt.mu.Unlock()
}

// enter starts a call that uses the executable on its device: ErrClosed
// when either is closed. The caller defers the function it returns.
func (e *Executable) enter() (func(), error) {
	if err := e.life.enter(); err != nil {
		return nil, err
	}
	if err := e.rt.life.enter(); err != nil {
		e.life.exit()
		return nil, err
	}
	return func() { e.rt.life.exit(); e.life.exit() }, nil
}

// source is what a parameter donated to the arena is copied from: host
// bytes in storage form, or a device buffer; given, when set, gives that
// buffer back once the copy is done (a DeviceTensor the caller donated).
type source struct {
	data  []byte
	buf   *vk.Buffer
	given func()
}

// toHost copies a device buffer holding an array of shape to a tensor.
func (r *Runtime) toHost(b *vk.Buffer, shape hlo.Shape) (*Tensor, error) {
	raw := make([]byte, b.Size())
	if err := r.pool.Download(b, raw); err != nil {
		return nil, err
	}
	data, err := lower.FromStorage(lower.BufferType(shape.Elem), raw, lower.BufferElems(shape.Elem, shape.NumElements()), r.tg)
	if err != nil {
		return nil, err
	}
	// data is the fresh download, or converted from it: the tensor's own.
	return &Tensor{Type: DType(shape.Elem), Dims: append([]int64{}, shape.Dims...), Data: data}, nil
}

// exec runs program l with its parameter buffers bound to inputs, or, for
// parameters donated to the arena, copied there from uploads. It
// returns the output buffers and the buffers it allocated that the caller
// must free: the arena (outputs are views of it, or inputs or constants,
// which the caller does not own) and what loops and branches allocated.
func (r *run) exec(l *loaded, inputs []*vk.Buffer, uploads []source) (outs, owned []*vk.Buffer, err error) {
	b := &batch{owner: l}
	outs, owned, err = r.execInto(l, inputs, uploads, b)
	if err == nil {
		err = r.flush(b)
	}
	return outs, owned, err
}

// batch is dispatches waiting for one submit: what they compute (kept
// for Profile only), and the program whose replay cache keeps the
// recorded list.
type batch struct {
	owner *loaded
	ds    []vk.Dispatch
	names []DispatchTime
	loops []lower.Step // device loops of a known count of dispatches in ds, their flags in flags
	flags []*vk.Buffer
}

// flush submits the batch's dispatches and empties it.
func (r *run) flush(b *batch) error {
	if len(b.ds) == 0 {
		return nil
	}
	if err := r.ctx.Err(); err != nil {
		return err // the caller stopped waiting: submit nothing more
	}
	var err error
	if r.prof {
		err = r.profiled(b.ds, b.names)
	} else {
		err = b.owner.submit(r.e.rt.dev, b.ds)
	}
	r.dispatches += len(b.ds)
	r.submits++
	loops, flags := b.loops, b.flags
	b.ds, b.names, b.loops, b.flags = b.ds[:0], b.names[:0], b.loops[:0], b.flags[:0]
	if err != nil {
		return err
	}
	// The batch is done (a submit waits for it): the flag of each loop
	// run in a known count of dispatches says whether it ended as its
	// kernel promised.
	for i, s := range loops {
		if err := r.loopEnded(s, flags[i]); err != nil {
			return fmt.Errorf("vkjit: %s: %w", s.Inst, err)
		}
	}
	return nil
}

// execInto is exec that leaves its last dispatches in batch b for the
// caller to submit, after more of its own (a loop's body and its next
// condition go in one submit).
func (r *run) execInto(l *loaded, inputs []*vk.Buffer, uploads []source, b *batch) (outs, owned []*vk.Buffer, err error) {
	p := l.prog
	first := true
	bufs := make([]*vk.Buffer, len(p.Buffers))
	for i, bi := range p.Params {
		bufs[bi] = inputs[i]
	}
	var arena *vk.Buffer // every temporary, at the offset memory planning chose
	if p.ArenaSize > 0 {
		if arena, err = r.alloc(p.Module+" arena", p.ArenaSize); err != nil {
			return nil, owned, err
		}
		owned = append(owned, arena)
	}
	var writes []pool.Write
	for i, b := range p.Buffers {
		switch b.Kind {
		case lower.BufConstant:
			bufs[i] = l.consts[i]
		case lower.BufTemp:
			if b.Alias != 0 {
				continue // in its donated parameter's buffer (below)
			}
			if bufs[i], err = arena.View(b.Offset, b.Size); err != nil {
				return nil, owned, err
			}
		case lower.BufParam:
			if !b.Donated || bufs[i] != nil {
				continue // read where it is (or, donated, written over)
			}
			if b.InArena() {
				if bufs[i], err = arena.View(b.Offset, b.Size); err != nil {
					return nil, owned, err
				}
			} else {
				// A result takes this parameter's memory, and the
				// argument is not the run's to write over: the run's copy.
				if bufs[i], err = r.alloc(b.Name, b.Size); err != nil {
					return nil, owned, err
				}
				owned = append(owned, bufs[i])
			}
			src := uploads[b.Param]
			if src.buf == nil {
				writes = append(writes, pool.Write{Dst: bufs[i], Data: src.data})
				continue
			}
			t, err := r.e.rt.pool.Copy(bufs[i], src.buf)
			if err != nil {
				return nil, owned, err
			}
			r.copies = max(r.copies, t)
		}
	}
	for i, b := range p.Buffers {
		if b.Kind == lower.BufTemp && b.Alias != 0 {
			bufs[i] = bufs[b.Alias-1] // a result written over its donated parameter
		}
	}
	if len(writes) > 0 {
		t0 := time.Now()
		err := r.e.rt.pool.Upload(writes...)
		r.upload += time.Since(t0)
		if err != nil {
			return nil, owned, err
		}
	}
	// Donated device tensors are copied into the arena by now (once the
	// copies finish): their memory goes back before the run computes.
	waited := false
	for _, u := range uploads {
		if u.given == nil {
			continue
		}
		if !waited {
			if err := r.e.rt.pool.Wait(r.copies); err != nil {
				return nil, owned, err
			}
			waited = true
		}
		u.given()
	}
	for _, s := range p.Steps {
		switch s.Kind {
		case lower.StepDispatch:
			d := vk.Dispatch{Kernel: l.kernels[s.Kernel], Push: s.PushBytes(), Groups: s.Groups, AfterWrites: s.AfterWrites}
			if first && len(b.ds) > 0 {
				d.AfterWrites = true // reads what the batch's earlier program wrote
			}
			first = false
			for _, x := range s.Buffers {
				d.Buffers = append(d.Buffers, bufs[x])
			}
			b.ds = append(b.ds, d)
			if r.prof {
				b.names = append(b.names, DispatchTime{Kernel: p.Kernels[s.Kernel].Name, Inst: s.Inst, Fused: s.Fused})
			}
			continue
		}
		if s.Kind != lower.StepLoop {
			if err := r.flush(b); err != nil {
				return nil, owned, err
			}
		}
		var res, resOwned []*vk.Buffer
		switch s.Kind {
		case lower.StepLoop:
			err = r.deviceLoop(l, s, bufs, b)
			first = first && s.Dispatches == 0
		case lower.StepWhile:
			writable := map[*vk.Buffer]bool{} // initial state dead after the loop
			for _, b := range s.InPlace {
				writable[bufs[b]] = true
			}
			res, resOwned, err = r.while(l.subs[s.Cond], l.subs[s.Body], pick(bufs, s.In[0]), writable, s.Counter)
		case lower.StepConditional:
			res, resOwned, err = r.conditional(l, s, bufs)
		}
		owned = append(owned, resOwned...)
		if err != nil {
			return nil, owned, fmt.Errorf("vkjit: %s: %w", s.Inst, err)
		}
		for i, bi := range s.Out {
			bufs[bi] = res[i]
		}
	}
	return pick(bufs, p.Outputs), owned, nil
}

// profiled runs dispatches with timestamps and records their times.
func (r *run) profiled(ds []vk.Dispatch, names []DispatchTime) error {
	cl, err := r.e.rt.dev.RecordProfiled(ds)
	if err != nil {
		return err
	}
	defer cl.Destroy()
	if err := cl.Submit(vk.ReadyAll(ds)); err != nil {
		return err
	}
	times, err := cl.Timings()
	if err != nil {
		return err
	}
	for i, d := range names {
		d.Time = times[i]
		r.profile = append(r.profile, d)
	}
	return nil
}

func pick(bufs []*vk.Buffer, idx []int) []*vk.Buffer {
	out := make([]*vk.Buffer, len(idx))
	for i, b := range idx {
		out[i] = bufs[b]
	}
	return out
}

// readScalar reads element 0 of a device buffer holding a pred or an
// integer (both stored as 32-bit or wider words). On a device that stages
// it is a copy through the staging ring and a wait for it.
func (r *run) readScalar(b *vk.Buffer) (int64, error) {
	d := make([]byte, min(b.Size(), 8))
	if err := r.e.rt.pool.Download(b, d); err != nil {
		return 0, err
	}
	var v uint64
	for i := min(len(d), 8) - 1; i >= 0; i-- {
		v = v<<8 | uint64(d[i])
	}
	if len(d) == 4 {
		return int64(int32(uint32(v))), nil
	}
	return int64(v), nil
}

// while runs the loop from the host: each iteration runs the condition,
// reads its pred back, and runs the body on the state. Buffers that no
// state refers to any more are freed every iteration.
//
// The body updates in place the state elements its plan gives a result
// (lower: a while body's state is donated), so that a loop over large
// arrays needs no second copy of them. The loop writes over only
// buffers that are its own to write: writable ones (its caller's
// temporaries that die with the loop, Step.InPlace, and what earlier
// iterations made) that no other element shares. It copies any other
// element the body writes over, once; the copy is its own from then on.
//
// A counted loop (ctr, lower.Counter) whose iterations follow from its
// counter's start runs them without reading the condition back: the
// iterations go into submits of countedBatch dispatches or more.
func (r *run) while(cond, body *loaded, state []*vk.Buffer, writable map[*vk.Buffer]bool, ctr *lower.Counter) ([]*vk.Buffer, []*vk.Buffer, error) {
	if ctr != nil {
		start, err := r.readScalar(state[ctr.Leaf])
		if err != nil {
			return nil, nil, err
		}
		if n, ok := ctr.Iterations(start); ok {
			return r.counted(body, state, writable, n)
		}
	}
	var mine []*vk.Buffer // state buffers this loop allocated
	c, cOwned, err := r.exec(cond, state, nil)
	for {
		if err != nil {
			r.free(cOwned)
			return nil, mine, err
		}
		v, rerr := r.readScalar(c[0])
		r.free(cOwned)
		if rerr != nil {
			return nil, mine, rerr
		}
		if v == 0 {
			return state, mine, nil
		}
		copies, oerr := r.ownState(body, state, writable, nil)
		mine = append(mine, copies...)
		if oerr != nil {
			return nil, mine, oerr
		}
		// The body and the next condition go in one submit: one round
		// trip per iteration.
		b := &batch{owner: body}
		next, bOwned, berr := r.execInto(body, state, nil, b)
		if berr != nil {
			r.free(bOwned)
			return nil, mine, berr
		}
		writable = nextWritable(writable, next, bOwned)
		c, cOwned, err = r.execInto(cond, next, nil, b)
		if err == nil {
			err = r.flush(b)
		}
		still, drop := stateMemory(next, append(mine, bOwned...))
		r.free(drop)
		mine, state = still, next
	}
}

// nextWritable is which elements of a loop's next state the loop may
// write over: those updated in place (writable before) and those in the
// memory the iteration allocated (made).
func nextWritable(writable map[*vk.Buffer]bool, next, made []*vk.Buffer) map[*vk.Buffer]bool {
	ours := map[*vk.Buffer]bool{}
	for _, o := range made {
		ours[o] = true
	}
	w := map[*vk.Buffer]bool{}
	for _, n := range next {
		if writable[n] || ours[n.Root()] {
			w[n] = true
		}
	}
	return w
}

// stateMemory splits the buffers a loop holds into those the state next
// lives in (still) and the rest (drop).
func stateMemory(next, held []*vk.Buffer) (still, drop []*vk.Buffer) {
	keep := map[*vk.Buffer]bool{}
	for _, b := range next {
		keep[b.Root()] = true
	}
	for _, b := range held {
		if keep[b] {
			still = append(still, b)
			delete(keep, b) // several state buffers may share one root
		} else {
			drop = append(drop, b)
		}
	}
	return still, drop
}

// countedBatch is how many dispatches of a counted loop's iterations
// go into one submit, at least: enough that a submit's round trip (50-150
// us on lavapipe) is small beside them. countedHeld bounds the memory
// the iterations of one submit leave behind (freed once it is done).
const (
	countedBatch = 256
	countedHeld  = 64 << 20
)

// counted runs n iterations of a loop's body with no condition between
// them, as while does otherwise: each iteration's dispatches join one
// batch, whose first waits for the iteration before (execInto). The
// memory an iteration leaves is freed only once the batch that reads it
// is done: another run on the runtime may allocate what is freed and
// write it before the batch's dispatches read it (the StableHLO suite's
// two jobs did, once, in a triangular solve's loop).
func (r *run) counted(body *loaded, state []*vk.Buffer, writable map[*vk.Buffer]bool, n int64) (_ []*vk.Buffer, mine []*vk.Buffer, err error) {
	b := &batch{owner: body}
	var held []*vk.Buffer // left by iterations in b, freed after it
	var heldBytes int64
	flush := func() error {
		err := r.flush(b)
		r.free(held)
		held, heldBytes = nil, 0
		return err
	}
	defer func() {
		if err != nil {
			r.flush(b) // what is recorded reads held memory: run it first
			r.free(held)
		}
	}()
	for range n {
		// A copy ownState makes reads the state where it is: what the
		// batch computes first.
		copies, err := r.ownState(body, state, writable, flush)
		mine = append(mine, copies...)
		if err != nil {
			return nil, mine, err
		}
		next, bOwned, err := r.execInto(body, state, nil, b)
		if err != nil {
			held = append(held, bOwned...)
			return nil, mine, err
		}
		writable = nextWritable(writable, next, bOwned)
		still, drop := stateMemory(next, append(mine, bOwned...))
		for _, x := range drop {
			held = append(held, x)
			heldBytes += x.Size()
		}
		mine, state = still, next
		if len(b.ds) >= countedBatch || heldBytes >= countedHeld {
			if err := flush(); err != nil {
				return nil, mine, err
			}
		}
	}
	return state, mine, flush()
}

// ownState makes every state element that body writes over in place
// one the loop may write: writable and in no other element, or else a
// copy, which it returns (the loop's to free). before, where given, runs
// ahead of the first copy.
func (r *run) ownState(body *loaded, state []*vk.Buffer, writable map[*vk.Buffer]bool, before func() error) ([]*vk.Buffer, error) {
	p := body.prog
	uses := map[*vk.Buffer]int{}
	for _, b := range state {
		uses[b]++
	}
	var copies []*vk.Buffer
	var t vk.Ticket
	for i, pb := range p.Params {
		if p.Buffers[pb].Alias == 0 || writable[state[i]] && uses[state[i]] == 1 {
			continue
		}
		if len(copies) == 0 && before != nil {
			if err := before(); err != nil {
				return nil, err
			}
		}
		cp, err := r.alloc(p.Buffers[pb].Name, state[i].Size())
		if err != nil {
			return copies, err
		}
		copies = append(copies, cp)
		if t, err = r.e.rt.pool.Copy(cp, state[i]); err != nil {
			return copies, err
		}
		uses[state[i]]--
		state[i] = cp
		writable[cp] = true
	}
	if len(copies) > 0 {
		return copies, r.e.rt.pool.Wait(t)
	}
	return nil, nil
}

// deviceLoop runs a device loop's kernel (lower/seqloop.go): its first
// dispatch joins the batch (it reads what the batch computes), then each
// dispatch is submitted and its flag read back: 0 the loop is done, 1 it
// runs on (the bound on one invocation's iterations ended the dispatch),
// 2 one iteration needs more iterations than an invocation may run. A
// loop of a known count of dispatches (Step.Dispatches) puts them all in
// the batch, and flush reads its flag once the batch is done (it lives
// to the program's end).
func (r *run) deviceLoop(l *loaded, s lower.Step, bufs []*vk.Buffer, b *batch) error {
	push := append([]uint32{}, s.Push...)
	dispatch := func(first bool) {
		if !first {
			push[1] = 0 // the state is in the results now
		}
		st := s
		st.Push = push
		d := vk.Dispatch{Kernel: l.kernels[s.Kernel], Push: st.PushBytes(), Groups: s.Groups, AfterWrites: true, Buffers: pick(bufs, s.Buffers)}
		b.ds = append(b.ds, d)
		if r.prof {
			b.names = append(b.names, DispatchTime{Kernel: l.prog.Kernels[s.Kernel].Name, Inst: s.Inst})
		}
	}
	if s.Dispatches > 0 {
		for i := range s.Dispatches {
			dispatch(i == 0)
		}
		b.loops, b.flags = append(b.loops, s), append(b.flags, bufs[s.Pred])
		return nil
	}
	for first := true; ; first = false {
		dispatch(first)
		if err := r.flush(b); err != nil {
			return err
		}
		v, err := r.readScalar(bufs[s.Pred])
		if err != nil {
			return err
		}
		if v == 1 {
			continue
		}
		return r.loopFlag(v)
	}
}

// loopEnded reads the flag of loop s, run in its Dispatches, which must say done.
func (r *run) loopEnded(s lower.Step, flag *vk.Buffer) error {
	v, err := r.readScalar(flag)
	if err != nil {
		return err
	}
	if v == 1 {
		return fmt.Errorf("vkjit: internal error: a device loop planned to end in %d dispatches did not", s.Dispatches)
	}
	return r.loopFlag(v)
}

// loopFlag says what a device loop's flag v, other than 1 (run on), means.
func (r *run) loopFlag(v int64) error {
	switch v {
	case 0:
		return nil
	case 2:
		return fmt.Errorf("one iteration of the loop runs more loop iterations than the device allows one invocation (%d)", r.e.rt.tg.MaxLoopIterations)
	default:
		return fmt.Errorf("the device loop's kernel wrote flag %d", v)
	}
}

// conditional reads the predicate or branch index back and runs one
// branch: true runs branch 0; an index out of range runs the last branch.
func (r *run) conditional(l *loaded, s lower.Step, bufs []*vk.Buffer) ([]*vk.Buffer, []*vk.Buffer, error) {
	v, err := r.readScalar(bufs[s.Pred])
	if err != nil {
		return nil, nil, err
	}
	n := int64(len(s.Branches))
	var b int64
	if l.prog.Buffers[s.Pred].Shape.Elem == hlo.PRED {
		b = 1
		if v != 0 {
			b = 0
		}
	} else if b = v; b < 0 || b >= n {
		b = n - 1
	}
	return r.exec(l.subs[s.Branches[b]], pick(bufs, s.In[b]), nil)
}
