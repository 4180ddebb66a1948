package kgen

import (
	"errors"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Workgroup device loops. A device loop keeps each value in one
// invocation's registers, element by element, which stops at seqElems
// and leaves one invocation every product with a large array: a
// lax.scan of a 128-unit RNN cell (h = tanh(h @ w)) stayed a host loop,
// a dispatch an iteration, and lavapipe's ~45 us a dispatch made its
// 20,000 steps 7.7x NumPy's Python loop. Such a loop runs instead as
// one workgroup. Its wide values (up to wideElems elements) live in
// shared arrays (wideArray), each computed by a phase in which the
// invocations share its elements (the element forms every kernel uses,
// read through shared arrays, register arrays and the big leaves'
// buffers) and which ends at a barrier: values wider than registers,
// dots and reduces reading a big leaf, and elementwise and data-movement
// ops of wide values. A wide value read once, by an elementwise op of
// its size or by data movement, is computed inside its reader's phase
// instead (tanh(h @ w) is one phase). The small values stay in
// registers, computed alike by every invocation, so every branch and
// loop condition is uniform. The big leaves' updates and the wide
// state's new values are committed between barriers at the end of the
// iteration, the invocations sharing a wide update's elements and
// invocation 0 storing the small ones. The workgroup has as many
// invocations as the widest phase has elements, in whole subgroups, so
// that no lane idles and dots shuffle an operand every output reads
// alike (dotValue, kernelBuilder.shuffleDot).

const (
	wideElems = 4096 // most elements of a value a workgroup loop keeps in shared memory
	// wideShared bounds a workgroup loop's shared memory: Vulkan's least
	// maxComputeSharedMemorySize.
	wideShared = 16384
	// wideLocal is the most invocations of a workgroup loop: as many as
	// its widest phase's elements, in whole subgroups (fewer where the
	// device allows fewer).
	wideLocal = 128
	// wideBase numbers the bindings of shared arrays: load reads them
	// (sharedLoad).
	wideBase = 1 << 22
)

// errWide says a device loop needs a workgroup: DeviceLoopKernel
// generates it again as one.
var errWide = errors.New("a value wider than a device loop's registers")

// wideArray is a wide value's shared array: in shared memory, or on a
// CPU device a range of a scratch buffer. llvmpipe reads shared memory
// inside control flow lane by lane, each lane's load a trip through a
// loop whose state the barriers' coroutine frame holds: the RNN's
// 20,000 steps took 1,123 ms so (26 ms with those reads replaced by
// constants), where a texel fetch is 16 loads unrolled. The memory is
// the host's, coherent, so a scratch buffer written in the dispatch is
// read through its texel view after a barrier. But LLVM takes
// llvmpipe's texel fetches for reads of memory nothing writes: it
// hoisted a fetch at a constant index out of the loop and geqp3's read
// a stale column. So every index of such a read adds a zero loaded
// from the flag buffer after the latest barrier (wideZero), which no
// fetch can be moved above.
type wideArray struct {
	v, ptr spirv.ID // the Workgroup variable and its element pointer type
	st     spirv.ID // the element type stored (a u32 for pred)
	t      hlo.ElementType
	n      int64 // its elements
	buf    int   // the scratch buffer's binding (-1: shared memory)
	off    int64 // the array's first element in it
}

// sharedLoad reads element idx of a wide array.
func (k *kernelBuilder) sharedLoad(bind int, idx spirv.ID) val {
	a := k.wideArrays[bind-wideBase]
	if a.buf >= 0 {
		at := k.f.IAdd(k.u32(), k.addU(idx, a.off), k.f.Load(k.u32(), k.wideZero))
		raw := k.texelLoad1(a.buf, at)
		switch {
		case a.t == hlo.PRED:
			return val{k.f.INotEqual(k.boolT(), raw, k.cu32(0)), a.t}
		case isMini(a.t):
			return val{k.decodeMini(raw, a.t), a.t}
		}
		return val{raw, a.t}
	}
	id := k.f.Load(a.st, k.f.AccessChain(a.ptr, a.v, idx))
	if a.t == hlo.PRED {
		id = k.boolOp(spirv.OpINotEqual, id, k.cu32(0))
	}
	return val{id, a.t}
}

// sharedStore writes element idx of a wide array.
func (k *kernelBuilder) sharedStore(bind int, idx spirv.ID, v val) {
	a := k.wideArrays[bind-wideBase]
	if a.buf >= 0 {
		k.store(a.buf, k.addU(idx, a.off), v)
		return
	}
	id := v.id
	if v.t == hlo.PRED {
		id = k.selU32(id, k.cu32(1), k.cu32(0))
	}
	k.f.Store(k.f.AccessChain(a.ptr, a.v, idx), id)
}

// scratchBuffers reports whether a workgroup loop on tg keeps its wide
// values in scratch buffers (wideArray).
func scratchBuffers(tg Target) bool { return tg.CPU && tg.TexelReads }

// wideTypes lists the element types of the values of the computations
// c reaches that a workgroup loop may keep wide (asWide: arrays of 2 to
// wideElems elements), in order of first appearance: its scratch
// buffers' types.
func wideTypes(cs ...*hlo.Computation) []hlo.ElementType {
	var out []hlo.ElementType
	seen := map[*hlo.Computation]bool{}
	var walk func(c *hlo.Computation)
	walk = func(c *hlo.Computation) {
		if seen[c] {
			return
		}
		seen[c] = true
		for _, in := range c.Instructions {
			if n := in.Shape.NumElements(); in.Shape.IsArray() && n > 1 && n <= wideElems && !slices.Contains(out, in.Shape.Elem) {
				out = append(out, in.Shape.Elem)
			}
			for _, cc := range in.Called {
				walk(cc)
			}
		}
	}
	for _, c := range cs {
		walk(c)
	}
	return out
}

// newWide declares a shared array of n elements of t and returns its
// binding.
func (e *seqEmitter) newWide(t hlo.ElementType, n int64, name string) (int, error) {
	k := e.k
	for i, b := range e.free {
		if a := k.wideArrays[b-wideBase]; a.t == t && a.n >= n {
			// Every read of its last value is emitted; a read by every
			// invocation (fromWide) may not be done yet.
			e.free = slices.Delete(e.free, i, i+1)
			if e.unsynced {
				e.barrier(false)
			}
			e.refs[b] = 0
			return b, nil
		}
	}
	if e.scratch != nil {
		j := slices.IndexFunc(e.scratch, func(s scratchBuf) bool { return s.t == t })
		if j < 0 {
			return 0, notSeqf("%s: no scratch buffer of %s", name, t)
		}
		s := &e.scratch[j]
		k.wideArrays = append(k.wideArrays, wideArray{t: t, n: n, buf: s.bind, off: s.n})
		s.n += n
		return wideBase + len(k.wideArrays) - 1, nil
	}
	bytes := n * int64(regBits(t)/8)
	if e.sharedBytes+bytes > wideShared {
		return 0, notSeqf("%s: %d bytes of shared memory, beyond %d", name, e.sharedBytes+bytes, wideShared)
	}
	e.sharedBytes += bytes
	st := k.u32()
	if t != hlo.PRED {
		st = k.scalarType(t)
	}
	arr := k.b.TypeArray(st, k.cu32(uint32(n)), 0)
	a := wideArray{
		v:   k.b.Variable(k.b.TypePointer(spirv.StorageWorkgroup, arr), spirv.StorageWorkgroup),
		ptr: k.b.TypePointer(spirv.StorageWorkgroup, st),
		st:  st,
		t:   t,
		n:   n,
		buf: -1,
	}
	k.wideArrays = append(k.wideArrays, a)
	return wideBase + len(k.wideArrays) - 1, nil
}

// phase runs body at each of n elements, the workgroup's invocations
// taking lid, lid + local, ...; inner is the loop iterations computing
// one element runs, counted against the invocation's budget with the
// phase's own.
func (e *seqEmitter) phase(n, inner int64, body func(idx spirv.ID) error) error {
	k := e.k
	u32 := k.u32()
	l := int64(e.local)
	steps := (n + l - 1) / l
	e.widest = max(e.widest, n)
	e.phases++
	one := func(idx spirv.ID) error {
		if n%l == 0 {
			return body(idx)
		}
		return k.f.If(k.boolOp(spirv.OpULessThan, idx, k.cu32(uint32(n))), func() error { return body(idx) })
	}
	if e.shuffle && n%l == 0 { // every lane runs every step
		k.shuffleDot = k.tg.SubgroupSize
		k.colsHere = steps == 1 // at the invocation's own index (colCache)
		defer func() { k.shuffleDot, k.colsHere = 0, false }()
	}
	var err error
	cost := inner
	if steps == 1 {
		err = one(e.lid)
	} else {
		cost = steps * (1 + inner)
		err = k.loop(k.cu32(uint32(steps)), func(c spirv.ID) error {
			return one(k.f.IAdd(u32, e.lid, k.f.IMul(u32, c, k.cu32(uint32(l)))))
		})
	}
	if err != nil {
		return err
	}
	e.count(cost)
	return k.err
}

// count adds n loop iterations, run by code outside whileLoop, to the
// invocation's count.
func (e *seqEmitter) count(n int64) {
	if n == 0 {
		return
	}
	k := e.k
	e.phaseIters += n
	k.f.Store(e.used, k.f.IAdd(k.u32(), k.f.Load(k.u32(), e.used), k.cu32(uint32(min(n, 1<<31)))))
}

// barrier waits for the workgroup: its shared memory writes, and where
// buffers (the big leaves were written), those too, are visible after.
func (e *seqEmitter) barrier(buffers bool) {
	k := e.k
	sem := uint32(spirv.SemanticsAcquireRelease | spirv.SemanticsWorkgroupMemory)
	if buffers || e.scratch != nil {
		sem |= spirv.SemanticsUniformMemory | spirv.SemanticsImageMemory
	}
	k.f.Do(spirv.OpControlBarrier, k.cu32(spirv.ScopeWorkgroup), k.cu32(spirv.ScopeWorkgroup), k.cu32(sem))
	e.unsynced = false
	if e.scratch != nil {
		k.f.Store(k.wideZero, k.loadElem(e.flag, k.cu32(0)))
	}
}

// single runs body in invocation 0 alone where the loop is a workgroup:
// the stores of values every invocation holds.
func (e *seqEmitter) single(body func() error) error {
	if e.local == 1 {
		return body()
	}
	k := e.k
	return k.f.If(k.boolOp(spirv.OpIEqual, e.lid, k.cu32(0)), body)
}

// ownIters is the loop iterations computing one element of in runs in
// its element form's own loop.
func ownIters(in *hlo.Instruction) int64 {
	n := int64(1)
	switch in.Op {
	case hlo.OpDot:
		for _, d := range in.A.Dot.LhsContract {
			n *= in.Operands[0].Shape.Dims[d]
		}
	case hlo.OpReduce:
		for _, d := range in.A.Dimensions {
			n *= in.Operands[0].Shape.Dims[d]
		}
	case hlo.OpReduceWindow:
		for _, d := range in.A.Window.Dims {
			n *= d.Size
		}
	default:
		return 0
	}
	return n
}

// wideKind reports the kinds a workgroup loop computes by element forms.
func wideKind(k Kind) bool {
	switch k {
	case KindElementwise, KindRemap, KindDot, KindReduce, KindReduceWindow:
		return true
	}
	return false
}

// bindForm binds in's operands for its element form: wide values by
// their shared arrays (or inline), big leaves by their buffers (not
// while the iteration has updates of them pending), small ones as
// register arrays. iters is the loop iterations computing one element
// runs.
func (e *seqEmitter) bindForm(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) (binds []int, iters int64, err error) {
	binds = make([]int, len(in.Operands))
	var inner int64
	for i, o := range in.Operands {
		x := env[o]
		switch {
		case len(x) != 1:
			return nil, 0, notSeqf("%s reads a tuple", in.Name)
		case x[0].wide != 0:
			binds[i] = x[0].wide
			inner += x[0].iters
		case x[0].big >= 0:
			if len(x[0].writes) > 0 {
				return nil, 0, notSeqf("%s reads a large array the iteration updates", in.Name)
			}
			binds[i] = e.bigBind[x[0].big]
		case len(x[0].elems) == 0:
			return nil, 0, notSeqf("%s reads an empty array", in.Name)
		default:
			binds[i] = e.array(x[0].elems, 1)
		}
	}
	if own := ownIters(in); own > 0 {
		return binds, own * (1 + inner), nil
	}
	return binds, inner, nil
}

// asWide computes in as a wide value where it is one (ok): wider than
// registers; an elementwise or data-movement op of a wide value, a
// phase whatever its size (a reshape the same array), not every
// invocation's work; a dot or reduce reading a big leaf (a
// matrix-vector product with a large matrix), whose invocations share
// the outputs where one would run every product. In a loop of one
// invocation the last two say errWide.
func (e *seqEmitter) asWide(c *hlo.Computation, in *hlo.Instruction, env map[*hlo.Instruction]seqValue, intoBig bool) (seqLeaf, bool, error) {
	n, kind := in.Shape.NumElements(), OpKind(in.Op)
	inline := false
	switch {
	case intoBig:
		return seqLeaf{}, false, nil
	case n > seqElems:
		inline = e.inlined(c, in)
	case n < 2:
		return seqLeaf{}, false, nil
	case (kind == KindElementwise || kind == KindRemap) && readsWide(in, env):
		inline = e.inlined(c, in)
	case (kind == KindDot || kind == KindReduce) && readsBig(in, env):
		if e.local == 1 {
			return seqLeaf{}, false, errWide
		}
	default:
		return seqLeaf{}, false, nil
	}
	leaf, err := e.wide(in, env, inline)
	return leaf, err == nil, err
}

// wide computes in as a wide value (asWide says which are): into a
// shared array by a phase, or (inline) as a value its one reader
// computes where it reads it.
func (e *seqEmitter) wide(in *hlo.Instruction, env map[*hlo.Instruction]seqValue, inline bool) (seqLeaf, error) {
	k := e.k
	n := in.Shape.NumElements()
	if n > wideElems {
		return seqLeaf{}, notSeqf("%s has %d elements", in.Name, n)
	}
	kind := OpKind(in.Op)
	if !wideKind(kind) {
		return seqLeaf{}, notSeqf("%s is %s of %d elements", in.Name, in.Op, n)
	}
	if e.local == 1 {
		return seqLeaf{}, errWide
	}
	leaf := seqLeaf{shape: in.Shape, big: -1}
	if in.Op == hlo.OpReshape || in.Op == hlo.OpBitcast && in.Operands[0].Shape.Elem == in.Shape.Elem {
		if o := env[in.Operands[0]]; o[0].wide != 0 {
			// The same elements in the same order: the operand's array.
			leaf.wide, leaf.iters, leaf.arrays = o[0].wide, o[0].iters, o[0].arrays
			return leaf, nil
		}
	}
	binds, iters, err := e.bindForm(in, env)
	if err != nil {
		return seqLeaf{}, err
	}
	if inline {
		k.virtual = append(k.virtual, fusedOperand{in: in, binds: binds})
		leaf.wide, leaf.iters = virtualBase+len(k.virtual)-1, iters
		for _, o := range in.Operands {
			for _, x := range env[o] {
				leaf.arrays = append(leaf.arrays, x.arrays...)
			}
		}
		return leaf, nil
	}
	b, err := e.newWide(in.Shape.Elem, n, in.Name)
	if err != nil {
		return seqLeaf{}, err
	}
	e.refs[b] = 0 // the body's own: returned to the pool when no value holds it
	form, _ := formOf(kind)
	err = e.phase(n, iters, func(idx spirv.ID) error {
		vs, err := form.value(k, in, binds, idx)
		if err != nil {
			return err
		}
		k.sharedStore(b, idx, vs[0])
		return nil
	})
	if err != nil {
		return seqLeaf{}, err
	}
	e.barrier(false)
	e.ops++
	leaf.wide, leaf.arrays = b, []int{b}
	return leaf, nil
}

// fromWide computes a small value read from wide ones (a slice, a
// reduction, a dot product of wide vectors): every invocation computes
// its elements by the element form.
func (e *seqEmitter) fromWide(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) ([]val, error) {
	k := e.k
	kind := OpKind(in.Op)
	if !wideKind(kind) {
		return nil, notSeqf("%s is %s reading a wide value", in.Name, in.Op)
	}
	binds, iters, err := e.bindForm(in, env)
	if err != nil {
		return nil, err
	}
	form, _ := formOf(kind)
	n := in.Shape.NumElements()
	out := make([]val, 0, n)
	if e.shuffle { // every invocation computes every element
		k.shuffleDot = k.tg.SubgroupSize
		defer func() { k.shuffleDot = 0 }()
	}
	for j := range n {
		vs, err := form.value(k, in, binds, k.cu32(uint32(j)))
		if err != nil {
			return nil, err
		}
		out = append(out, vs[0])
	}
	e.count(n * iters)
	e.unsynced = true
	return out, k.err
}

// readsWide reports whether an operand of in is wide.
func readsWide(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) bool {
	for _, o := range in.Operands {
		for _, x := range env[o] {
			if x.wide != 0 {
				return true
			}
		}
	}
	return false
}

// readsBig reports whether an operand of in is a big state leaf.
func readsBig(in *hlo.Instruction, env map[*hlo.Instruction]seqValue) bool {
	for _, o := range in.Operands {
		for _, x := range env[o] {
			if x.big >= 0 {
				return true
			}
		}
	}
	return false
}

// inlined reports whether wide value in is computed inside its reader's
// phase: read once, by an elementwise op of its size (the same element)
// or by data movement that reads each element at most once.
func (e *seqEmitter) inlined(c *hlo.Computation, in *hlo.Instruction) bool {
	users, ok := e.users[c]
	if !ok {
		users = map[*hlo.Instruction][]*hlo.Instruction{}
		for _, x := range c.Instructions {
			for _, o := range x.Operands {
				users[o] = append(users[o], x)
			}
		}
		e.users[c] = users
	}
	us := users[in]
	if len(us) != 1 || in == c.Root {
		return false
	}
	switch u := us[0]; {
	case in.Op == hlo.OpReshape || in.Op == hlo.OpBitcast:
		return false // its operand's array already
	case OpKind(u.Op) == KindElementwise:
		return u.Shape.NumElements() == in.Shape.NumElements()
	case OpKind(u.Op) == KindRemap:
		return u.Op != hlo.OpBroadcast // an element read once, where a broadcast reads it many times
	}
	return false
}

// wideState loads a wide state leaf into a new shared array: at the
// first dispatch from init (unless CopyInit), else from its result
// buffer, where the previous dispatch left it.
func (e *seqEmitter) wideState(s hlo.Shape, init, out int, first spirv.ID, name string) (int, error) {
	k := e.k
	b, err := e.newWide(s.Elem, s.NumElements(), name)
	if err != nil {
		return 0, err
	}
	err = e.phase(s.NumElements(), 0, func(idx spirv.ID) error {
		v := k.load(out, idx, s.Elem)
		if init >= 0 {
			v = k.sel(first, k.load(init, idx, s.Elem), v)
		}
		k.sharedStore(b, idx, v)
		return nil
	})
	return b, err
}

// copyWide copies n elements of wide value src into shared array dst.
func (e *seqEmitter) copyWide(dst, src int, n int64, t hlo.ElementType) error {
	k := e.k
	return e.phase(n, 0, func(idx spirv.ID) error {
		k.sharedStore(dst, idx, k.load(src, idx, t))
		return nil
	})
}

// storeWide stores shared array src into buffer binding out.
func (e *seqEmitter) storeWide(out, src int, n int64, t hlo.ElementType) error {
	k := e.k
	return e.phase(n, 0, func(idx spirv.ID) error {
		k.store(out, idx, k.sharedLoad(src, idx))
		return nil
	})
}

// inPlace reports whether leaf want of x (a body's root) is state
// leaf want of parameter p updated in place: dynamic-update-slices and
// scatters over it.
func inPlace(x, p *hlo.Instruction, want int) bool {
	i := want
	for {
		switch {
		case x.Op == hlo.OpTuple:
			var next *hlo.Instruction
			for _, o := range x.Operands {
				if n := len(o.Shape.Leaves()); i >= n {
					i -= n
					continue
				}
				next = o
				break
			}
			if next == nil {
				return false
			}
			x = next
		case x.Op == hlo.OpGetTupleElement:
			i += x.Operands[0].Shape.LeafOffset(int(x.A.Index))
			x = x.Operands[0]
		case x.Op == hlo.OpDynamicUpdateSlice || x.Op == hlo.OpScatter && len(x.Operands) == 3:
			x = x.Operands[0]
		default:
			return leafSource(x, p, i) == want
		}
	}
}

// scratchBuf is a workgroup loop's scratch buffer of one element type
// (a CPU device's, wideArray): its binding and the elements its arrays
// take.
type scratchBuf struct {
	t    hlo.ElementType
	bind int
	n    int64
}

// hold adds d to the holds of the shared arrays value v reads; an array
// the body computed that no value holds any more returns to the pool
// (newWide).
func (e *seqEmitter) hold(v seqValue, d int) {
	for _, x := range v {
		for _, a := range x.arrays {
			n, owned := e.refs[a]
			if !owned {
				continue // a wide state leaf's
			}
			e.refs[a] = n + d
			if d < 0 && n+d == 0 {
				e.free = append(e.free, a)
			}
		}
	}
}

// lastUses is the index in c of each instruction's last reader (the
// root's, past the end: a result is not released).
func (e *seqEmitter) lastUses(c *hlo.Computation) map[*hlo.Instruction]int {
	last := map[*hlo.Instruction]int{}
	for j, in := range c.Instructions {
		for _, o := range in.Operands {
			last[o] = j
		}
	}
	last[c.Root] = len(c.Instructions)
	return last
}

// wideVars gives the wide leaves of a conditional's
// state arrays of their own (0 for the others; nil where none is wide).
func (e *seqEmitter) wideVars(shapes []hlo.Shape, wide []bool, name string) ([]int, error) {
	if !slices.Contains(wide, true) {
		return nil, nil
	}
	arrays := make([]int, len(shapes))
	for i, s := range shapes {
		if wide[i] {
			b, err := e.newWide(s.Elem, s.NumElements(), name)
			if err != nil {
				return nil, err
			}
			arrays[i] = b
		}
	}
	return arrays, nil
}

// storeWideVars copies v's wide leaves into their arrays, between
// barriers: the reads of what they held are done before, the copies
// visible after.
func (e *seqEmitter) storeWideVars(arrays []int, v seqValue, in *hlo.Instruction) error {
	if e.unsynced {
		e.barrier(false)
	}
	copied, err := e.copyArrays(arrays, v, in.Name)
	if err == nil && copied {
		e.barrier(false)
	}
	return err
}

// copyArrays copies each wide leaf of v into its array (arrays[i], 0:
// none) where it is not there already, and reports whether it copied
// any. A leaf held by another of the arrays (a swap) would be
// overwritten before it is read: refused, as is a leaf not wide.
func (e *seqEmitter) copyArrays(arrays []int, v seqValue, name string) (bool, error) {
	copied := false
	for i, a := range arrays {
		if a == 0 || v[i].wide == a {
			continue
		}
		if v[i].wide == 0 || slices.Contains(arrays, v[i].wide) {
			return false, notSeqf("%s: wide leaf %d is not computed anew", name, i)
		}
		if err := e.copyWide(a, v[i].wide, v[i].shape.NumElements(), v[i].shape.Elem); err != nil {
			return false, err
		}
		copied = true
	}
	return copied, nil
}

// withArrays makes the leaves of v that have arrays (wideVars) those
// arrays' values.
func (e *seqEmitter) withArrays(v seqValue, arrays []int) seqValue {
	for i, a := range arrays {
		if a != 0 {
			v[i] = seqLeaf{shape: v[i].shape, big: -1, wide: a}
		}
	}
	return v
}

// elems is x's register elements, read from its array where it is a
// wide value of a few elements (registers).
func (e *seqEmitter) elems(x seqLeaf) []val {
	if x.wide != 0 {
		return e.registers(x)
	}
	return x.elems
}

// registers reads a wide value of a few elements into every
// invocation's registers.
func (e *seqEmitter) registers(x seqLeaf) []val {
	n := x.shape.NumElements()
	out := make([]val, n)
	for j := range n {
		out[j] = e.k.load(x.wide, e.k.cu32(uint32(j)), x.shape.Elem)
	}
	e.count(n * x.iters)
	e.unsynced = true
	return out
}
