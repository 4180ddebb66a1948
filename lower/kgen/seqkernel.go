package kgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

const (
	seqElems  = 64    // most elements of a value the loop holds in registers
	seqUnroll = 16    // nested loops of at most this many known iterations are unrolled
	seqOps    = 16384 // most element operations one device loop kernel may emit
	// SeqWords bounds a device loop kernel's SPIR-V: the driver compiles
	// it as straight-line code (lavapipe: 25k words in ~50 ms, 279k words
	// of f32[64] sines in 3.8 s, more than 10,000 host iterations cost).
	// At 65536 the complex QR sweep (zgeev.go, 106,946 words) stayed a
	// host loop of about 40 dispatches an iteration: a c64[2,12,12] geev
	// ran 113,607 dispatches in 6.6 s, against 4,243 in 0.17 s as a device
	// loop, its cold compile 1.45 s -> 1.15 s (Zen 1, lavapipe 8 lanes).
	SeqWords = 131072
	// With a known trip count, a device loop kernel may have at most
	// seqWordsPerTrip words an iteration, or seqFewWords whatever the
	// count (LoopWords): lavapipe compiles a kernel at a process's first
	// dispatch unless Mesa's shader cache holds it (a new machine, CI),
	// 10-140 us a word, where a host loop's iteration costs about a
	// millisecond (a submit, a read-back and its dispatches). First
	// runs, fresh caches (Zen 5, lavapipe 16 lanes): 9 iterations of
	// lower/testdata/loops/computed_reads.hlo, 35,471 words, 4.9-5.1 s
	// -> 0.43-0.46 s as a host loop; 7 of a c64[3,4,4] cholesky (FuzzMutants),
	// 119,340 words, 3.1-4.9 s -> 0.4 s, and at 700 iterations 3.3 s
	// -> 1.3 s.
	seqWordsPerTrip = 64
	seqFewWords     = 4096
	seqGPUBudget    = 1 << 16 // iterations per dispatch on devices without a loop bound (a dispatch stays short of a GPU watchdog)
)

// Loop is a while loop planned to run on the device.
type Loop struct {
	Kernel  *Kernel
	Big     []bool // per state leaf: kept in a buffer, not registers
	Updated []bool // per state leaf: a big leaf the body writes (copied before the loop)
	Flag    int    // the buffer the kernel writes its state to: 0 done, 1 not yet, 2 stuck
	// Scratch: a workgroup loop's scratch buffers on CPU devices
	// (seqwide.go), bound after the flag.
	Scratch []hlo.Shape
	// CopyInit: the small leaves' initial values are copied into their
	// result buffers before the loop too, and the kernel reads them
	// there from the first dispatch on: one binding a small leaf instead
	// of two, for loops whose state has more leaves than the device
	// has bindings for both (diffrax's outer loop: 40 of lavapipe's 32).
	CopyInit bool
	// Columns: the dots whose loop-invariant operand's column each
	// invocation keeps in registers from before the first iteration
	// (colCache).
	Columns []string
	// Dispatches, where not 0, is how many dispatches surely end the
	// loop, whatever the state: its trip count is known, no nested loop
	// runs a count of its own, and each dispatch runs at least so many
	// iterations within its budget (dispatchesNeeded). The runtime need
	// not read the flag back between them, nor before what follows (a
	// submit and a wait each); it checks the flag once the batch is done.
	// A dispatch after the loop ended reads its state and writes it back.
	Dispatches int
}

// Copied reports the state leaves copied into their result buffers
// before the loop: the big ones the body updates, and every small one
// under CopyInit.
func (l *Loop) Copied(j int) bool { return l.Updated[j] || l.CopyInit && !l.Big[j] }

// loopBinding is one binding of a device loop kernel: state leaf leaf's
// operand buffer (init) or result buffer, or (leaf -1) the flag.
type loopBinding struct {
	Leaf     int
	Init     bool
	ReadOnly bool
}

// Bindings lists the kernel's Bindings in order, the ones read only
// first: the small leaves' initial values, the big leaves read only,
// the big leaves updated, the small leaves' results, the flag.
func (l *Loop) Bindings() []loopBinding {
	var out []loopBinding
	add := func(want func(j int) bool, b loopBinding) {
		for j := range l.Big {
			if want(j) {
				b.Leaf = j
				out = append(out, b)
			}
		}
	}
	if !l.CopyInit {
		add(func(j int) bool { return !l.Big[j] }, loopBinding{Init: true, ReadOnly: true})
	}
	add(func(j int) bool { return l.Big[j] && !l.Updated[j] }, loopBinding{ReadOnly: true})
	add(func(j int) bool { return l.Updated[j] }, loopBinding{})
	add(func(j int) bool { return !l.Big[j] }, loopBinding{})
	return append(out, loopBinding{Leaf: -1})
}

// notSeq says why a loop stays on the host.
type notSeq struct{ why string }

func (e notSeq) Error() string { return "not a device loop: " + e.why }

func notSeqf(format string, args ...any) error { return notSeq{fmt.Sprintf(format, args...)} }

// ShortLoop says that a loop of a known trip count fits a device loop
// kernel only past the words its iterations repay (LoopWords): the
// caller may weigh it against the loop's host form instead.
type ShortLoop struct {
	Words int
	Trips int64
}

func (e ShortLoop) Error() string {
	return fmt.Sprintf("not a device loop: a kernel of %d SPIR-V words for %d iterations", e.Words, e.Trips)
}

// leafSource returns the state leaf that leaf i of x passes through
// unchanged (x built from tuples and get-tuple-elements of parameter p),
// or -1.
func leafSource(x, p *hlo.Instruction, i int) int {
	switch x.Op {
	case hlo.OpParameter:
		if x == p {
			return i
		}
	case hlo.OpTuple:
		for _, o := range x.Operands {
			n := len(o.Shape.Leaves())
			if i < n {
				return leafSource(o, p, i)
			}
			i -= n
		}
	case hlo.OpGetTupleElement:
		return leafSource(x.Operands[0], p, x.Operands[0].Shape.LeafOffset(int(x.A.Index))+i)
	}
	return -1
}

// seqLeaf is one array of a value in a device loop kernel: its elements
// in registers, or (big >= 0) a state leaf kept in its buffer, with the
// updates the iteration makes to it.
type seqLeaf struct {
	shape  hlo.Shape
	elems  []val
	big    int
	writes []func() error
	// wide: a workgroup loop's value wider than registers (seqwide.go):
	// the binding it is read through, its shared array's or (computed
	// inline) a virtual one; iters is the loop iterations computing one
	// element of an inline one runs.
	wide  int
	iters int64
	// arrays are the shared arrays the value reads (its own, an inline
	// one's operands', a big leaf's pending wide updates'), held while
	// it lives.
	arrays []int
}

type seqValue []seqLeaf

// seqEmitter generates a device loop kernel.
type seqEmitter struct {
	k         *kernelBuilder
	bigBind   []int    // binding of each big state leaf
	used      spirv.ID // u32 variable: loop iterations run by this invocation
	abort     spirv.ID // bool variable: a nested loop reached the bound
	budget    uint32
	ops       int
	loops     int // nested loops emitted as loops, not unrolled
	flattened map[*hlo.Computation]*hlo.Computation

	// A workgroup loop's (seqwide.go): its invocations (1: a device loop
	// of one), the invocation's index, the shared memory taken, the
	// loop iterations its phases and wide reads count (phaseIters), the
	// iterations each check keeps back for them (reserve), whether
	// shared or big arrays were read since the last barrier, and each
	// computation's users.
	local       uint32
	lid         spirv.ID
	sharedBytes int64
	phaseIters  int64
	reserve     uint32
	unsynced    bool
	scratch     []scratchBuf // a CPU device's scratch buffers (nil: shared memory)
	flag        int          // the flag's binding, 0 until the end (wideZero)
	shuffle     bool         // subgroups are whole: phases may shuffle (kernelBuilder.shuffleDot)
	widest      int64        // the most elements of a phase
	phases      int          // phases emitted
	wider       []bool       // per state leaf: small, but the body computes it as a wide value
	refs        map[int]int  // values holding each shared array the body computes
	free        []int        // shared arrays no value holds, to be taken again
	users       map[*hlo.Computation]map[*hlo.Instruction][]*hlo.Instruction
}

// limit is what a loop's check holds the iterations run below: the
// budget less what one iteration's phases may run past it.
func (e *seqEmitter) limit() spirv.ID { return e.k.cu32(e.budget - e.reserve) }

func (e *seqEmitter) flat(c *hlo.Computation) *hlo.Computation {
	if f, ok := e.flattened[c]; ok {
		return f
	}
	f := c.Flatten(c.Name)
	// Only what the root reads: a body keeps the instructions loop
	// invariant code motion hoisted out of it.
	f.Instructions = f.Reachable()
	e.flattened[c] = f
	return f
}

// DeviceLoopKernel generates the device loop kernel of while loop w, of
// at most maxWords SPIR-V words (LoopWords, or SeqWords), or says why it
// does not fit one: a loop of one invocation where every
// value fits its registers, else a workgroup loop (seqwide.go), whose
// checks keep back the iterations its phases run (a first generation
// counts them).
func DeviceLoopKernel(w *hlo.Instruction, tg Target, maxWords int) (*Loop, error) {
	local, reserve := uint32(1), uint32(0)
	var wider []bool         // small state leaves the body computes as wide values
	var cols map[string]bool // dots whose invariant operand's columns are loaded first (colCache)
	noCols := false          // a generation with them failed
	// Each generation after the first adds to wider or cols, lowers
	// local or raises reserve, so the loop ends; the bound is a guard.
	for range 16 {
		l, e, err := deviceLoop(w, tg, local, reserve, wider, cols, min(maxWords, SeqWords))
		switch {
		case errors.Is(err, errWide) && local == 1:
			local = widestLocal(tg)
			continue
		case err != nil && len(cols) > 0 && !noCols:
			// The columns' code past a bound the loop fit without
			// them (SeqWords, seqOps): generated again without.
			cols, noCols = nil, true
			continue
		case err != nil:
			return nil, err
		case grows(wider, e.wider):
			// Kept in shared arrays too: the body computes them there,
			// and every invocation reading them into registers each
			// iteration costs more than the phases that read them.
			if wider == nil {
				wider = make([]bool, len(e.wider))
			}
			for i, x := range e.wider {
				wider[i] = wider[i] || x
			}
			continue
		case local > 1 && fewer(e.widest, tg) < local:
			// Idle invocations would compute the small values too, and
			// a phase with idle lanes shuffles no operand.
			local = fewer(e.widest, tg)
			continue
		case e.phaseIters > int64(reserve):
			if e.phaseIters > int64(e.budget/2) {
				return nil, notSeqf("an iteration's wide values run %d loop iterations", e.phaseIters)
			}
			reserve = uint32(e.phaseIters)
			continue
		case !noCols && newNames(cols, e.k.colsWanted):
			if cols == nil {
				cols = map[string]bool{}
			}
			for n := range e.k.colsWanted {
				cols[n] = true
			}
			continue
		}
		return l, nil
	}
	return nil, notSeqf("no workgroup loop settled")
}

// LoopWords is the most SPIR-V words w's device loop kernel may have:
// SeqWords, or for a loop of a known trip count what compiles in about
// the time its host loop's iterations would take (seqWordsPerTrip);
// past it, DeviceLoopKernel says ShortLoop, and the caller may weigh the
// loop's host form, which compiles kernels of its own.
func LoopWords(w *hlo.Instruction) int {
	condC, bodyC := w.WhileComputations()
	trips, ok := TripCount(w, condC, bodyC)
	if !ok {
		return SeqWords
	}
	return int(max(seqFewWords, min(trips, SeqWords/seqWordsPerTrip)*seqWordsPerTrip))
}

// newNames reports whether more has a name that have lacks.
func newNames(have, more map[string]bool) bool {
	for n := range more {
		if !have[n] {
			return true
		}
	}
	return false
}

// grows reports whether more has a leaf that have lacks.
func grows(have, more []bool) bool {
	for i, x := range more {
		if x && (have == nil || !have[i]) {
			return true
		}
	}
	return false
}

// widestLocal is the most invocations a workgroup loop takes on tg:
// wideLocal, or fewer where the device allows fewer.
func widestLocal(tg Target) uint32 { return min(wideLocal, max(tg.MaxWorkgroupSize, 1)) }

// fewer is a workgroup loop's invocations for a widest phase of n
// elements: n in whole subgroups, at most widestLocal.
func fewer(n int64, tg Target) uint32 {
	s := int64(max(tg.SubgroupSize, 1))
	return uint32(min(max((n+s-1)/s*s, s), int64(widestLocal(tg))))
}

// deviceLoop generates w's device loop kernel as a loop of local
// invocations, each check keeping reserve iterations back, of at most
// maxWords SPIR-V words.
func deviceLoop(w *hlo.Instruction, tg Target, local, reserve uint32, wider []bool, cols map[string]bool, maxWords int) (*Loop, *seqEmitter, error) {
	leaves := w.Shape.Leaves()
	condC, bodyC := w.WhileComputations()
	e := &seqEmitter{flattened: map[*hlo.Computation]*hlo.Computation{}, local: local, reserve: reserve,
		users: map[*hlo.Computation]map[*hlo.Instruction][]*hlo.Instruction{},
		refs:  map[int]int{}}
	cond, body := e.flat(condC), e.flat(bodyC)
	l := &Loop{Big: make([]bool, len(leaves)), Updated: make([]bool, len(leaves))}
	wide := make([]bool, len(leaves)) // leaves kept in shared memory
	e.wider = make([]bool, len(leaves))
	for i, s := range leaves {
		n := s.NumElements()
		switch {
		case (n > seqElems || wider != nil && wider[i]) && n <= wideElems && !inPlace(body.Root, body.Params[0], i):
			// Computed anew each iteration: held in shared memory.
			if local == 1 {
				return nil, nil, errWide
			}
			wide[i] = true
		case n > seqElems:
			l.Big[i] = true
			l.Updated[i] = leafSource(body.Root, body.Params[0], i) != i
		}
	}
	e.budget = seqGPUBudget
	if tg.MaxLoopIterations > 0 {
		e.budget = uint32(tg.MaxLoopIterations - tg.MaxLoopIterations/16) // a margin below the driver's count
	}
	if n := len(l.Bindings()); tg.MaxStorageBuffers > 0 && n > int(tg.MaxStorageBuffers) {
		l.CopyInit = true
	}
	ins, outs, flag, err := e.bindLoop(w, l, tg)
	if err != nil {
		return nil, nil, err
	}
	k := e.k
	k.begin()
	u32, boolT := k.u32(), k.boolT()
	newVar := func(t spirv.ID, init spirv.ID) spirv.ID {
		v := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, t))
		k.f.Store(v, init)
		return v
	}
	first := k.boolOp(spirv.OpINotEqual, k.push(1), k.cu32(0))
	// The state in function variables (wide leaves in shared arrays,
	// loaded below): the loop's operand on the first dispatch, the
	// previous dispatch's results after it (under CopyInit the operand
	// is in the results before the first).
	notVars := make([]bool, len(leaves)) // the leaves kept elsewhere
	for i := range leaves {
		notVars[i] = l.Big[i] || wide[i]
	}
	vars := e.stateVars(leaves, notVars)
	shared := make([]int, len(leaves))
	si := 0
	for i, s := range leaves {
		if l.Big[i] {
			continue
		}
		for j, v := range vars[i] {
			idx := k.cu32(uint32(j))
			b := k.load(outs[si], idx, s.Elem)
			if !l.CopyInit {
				b = k.sel(first, k.load(ins[si], idx, s.Elem), b)
			}
			k.f.Store(v, b.id)
		}
		si++
	}
	state := func() seqValue {
		v := e.loadState(leaves, vars, l.Big)
		for i, b := range shared {
			if b != 0 {
				v[i] = seqLeaf{shape: leaves[i], big: -1, wide: b}
			}
		}
		return v
	}
	e.used = newVar(u32, k.cu32(0))
	e.abort = newVar(boolT, k.b.ConstantBool(false))
	status := newVar(u32, k.cu32(1)) // 1 running, 0 done, 2 stuck, 3 stopped by a nested loop
	iters := newVar(u32, k.cu32(0))
	if local > 1 {
		e.lid = k.localIndex()
		if tg.SubgroupShuffle && tg.SubgroupSize > 1 && local%tg.SubgroupSize == 0 {
			e.shuffle = true // subgroups are whole: dots shuffle their uniform operand
			k.sgLane = k.laneID()
		}
		if e.scratch != nil {
			// The flag holds 0 until the end: scratch reads add it.
			e.flag = flag
			k.wideZero = newVar(u32, k.cu32(0))
			if err := e.single(func() error { k.store(flag, k.cu32(0), val{k.cu32(0), hlo.U32}); return nil }); err != nil {
				return nil, nil, err
			}
		}
		si = 0
		for i, s := range leaves {
			if l.Big[i] {
				continue
			}
			if wide[i] {
				init := -1
				if !l.CopyInit {
					init = ins[si]
				}
				if shared[i], err = e.wideState(s, init, outs[si], first, fmt.Sprintf("state %d", i)); err != nil {
					return nil, nil, err
				}
			}
			si++
		}
		e.barrier(false)
		if e.scratch != nil && e.shuffle {
			if err := e.loadColumns(body, l, cols); err != nil {
				return nil, nil, err
			}
		}
	}
	load := func(v, t spirv.ID) spirv.ID { return k.f.Load(t, v) }
	store := func(v, x spirv.ID) { k.f.Store(v, x) }
	not := func(c spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalNot, c) }
	and := func(a, b spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalAnd, a, b) }
	pre := e.phaseIters // counted before the first check
	err = e.whileLoop(func() spirv.ID {
		running := k.boolOp(spirv.OpIEqual, load(status, u32), k.cu32(1))
		return and(running, k.boolOp(spirv.OpULessThan, load(e.used, u32), e.limit()))
	}, func() error {
		store(e.abort, k.b.ConstantBool(false))
		cur := state()
		p, err := e.condition(cond, cur)
		if err != nil {
			return err
		}
		ok := not(load(e.abort, boolT))
		if err := k.f.If(and(not(p), ok), func() error { store(status, k.cu32(0)); return nil }); err != nil {
			return err
		}
		if err := k.f.If(and(p, ok), func() error {
			next, err := e.emit(body, []seqValue{cur})
			if err != nil {
				return err
			}
			return k.f.If(not(load(e.abort, boolT)), func() error {
				if err := e.commit(l, next, vars, shared); err != nil {
					return err
				}
				k.increment(iters)
				return nil
			})
		}); err != nil {
			return err
		}
		return k.f.If(load(e.abort, boolT), func() error {
			none := k.boolOp(spirv.OpIEqual, load(iters, u32), k.cu32(0))
			store(status, k.f.Select(u32, none, k.cu32(2), k.cu32(3)))
			return nil
		})
	})
	if err != nil {
		return nil, nil, err
	}
	if e.ops > seqOps {
		return nil, nil, notSeqf("%d element operations", e.ops)
	}
	each := e.phaseIters - pre // counted by an iteration's phases
	final := state()
	si = 0
	for i := range leaves {
		if l.Big[i] {
			continue
		}
		if shared[i] != 0 {
			if err := e.storeWide(outs[si], shared[i], leaves[i].NumElements(), leaves[i].Elem); err != nil {
				return nil, nil, err
			}
			si++
			continue
		}
		o := outs[si]
		if err := e.single(func() error {
			for j, v := range final[i].elems {
				k.store(o, k.cu32(uint32(j)), v)
			}
			return nil
		}); err != nil {
			return nil, nil, err
		}
		si++
	}
	st := load(status, u32)
	stopped := k.boolOp(spirv.OpIEqual, st, k.cu32(3))
	if err := e.single(func() error {
		k.store(flag, k.cu32(0), val{k.f.Select(u32, stopped, k.cu32(1), st), hlo.U32})
		return nil
	}); err != nil {
		return nil, nil, err
	}
	for _, sb := range e.scratch {
		l.Scratch = append(l.Scratch, hlo.ArrayShape(sb.t, max(sb.n, 1)))
	}
	l.Dispatches = e.dispatchesNeeded(w, cond, body, pre, each)
	l.Kernel = k.finish("loop_" + strings.TrimPrefix(w.Name, "%"))
	if n := len(l.Kernel.Words); n > maxWords {
		if trips, ok := TripCount(w, cond, body); ok && maxWords < SeqWords {
			return nil, nil, ShortLoop{Words: n, Trips: trips}
		}
		return nil, nil, notSeqf("a kernel of %d SPIR-V words", n)
	}
	return l, e, nil
}

// maxBatchedDispatches bounds Loop.Dispatches: a longer loop is read
// back after each dispatch, as one of unknown trips (a batch of more
// dispatches would hold as many in one command buffer for a saving of
// a wait each, 50-150 us on lavapipe, against dispatches of tens of ms).
const maxBatchedDispatches = 64

// dispatchesNeeded is how many dispatches of w's kernel, as emitted,
// surely end the loop (Loop.Dispatches), or 0. A dispatch counts pre
// loop iterations before its first check (the phases that load the
// state) and at most 1 + each an iteration (the check's own and the
// phases of the condition and the body, all that the loop's code
// emits), so after j iterations it has counted at most pre + j*(1 +
// each), and its check before iteration j+1 passes while that is below
// the limit: at least m checks a dispatch. The loop needs trips + 1
// checks (the last sees its condition false). A nested loop of its own
// count may run any number of iterations: 0.
func (e *seqEmitter) dispatchesNeeded(w *hlo.Instruction, cond, body *hlo.Computation, pre, each int64) int {
	trips, ok := TripCount(w, cond, body)
	limit, c := int64(e.budget-e.reserve), 1+each
	if !ok || e.loops > 0 || limit <= pre || trips >= limit*maxBatchedDispatches {
		return 0
	}
	m := (limit - pre + c - 1) / c
	if n := (trips + 1 + m - 1) / m; n <= maxBatchedDispatches {
		return int(n)
	}
	return 0
}

// commit makes an iteration's results the loop's state: the big leaves'
// updates, the wide leaves' new values copied into their arrays and the
// small ones into their variables. A workgroup waits before (the
// iteration's reads of what it overwrites are done) and after (the
// next iteration reads what it wrote).
func (e *seqEmitter) commit(l *Loop, next seqValue, vars [][]spirv.ID, shared []int) error {
	k := e.k
	// Small leaves computed as wide values are read first: the barrier
	// below ends those reads before the next iteration writes again.
	small := make([][]val, len(next))
	for i, x := range next {
		if !l.Big[i] && shared[i] == 0 {
			small[i] = e.elems(x)
			e.wider[i] = x.wide != 0 && x.shape.NumElements() > 1
		}
	}
	if e.local > 1 && e.unsynced {
		e.barrier(false)
	}
	wrote := false
	for i, x := range next {
		if !l.Big[i] {
			continue
		}
		if x.big != i || !l.Updated[i] && len(x.writes) > 0 {
			return notSeqf("state leaf %d is computed, not updated in place", i)
		}
		for _, wr := range x.writes {
			if err := wr(); err != nil {
				return err
			}
			wrote = true
		}
	}
	copied, err := e.copyArrays(shared, next, "the state")
	if err != nil {
		return err
	}
	if e.local > 1 && (wrote || copied) {
		e.barrier(wrote)
	}
	for i, xs := range small {
		for j, v := range xs {
			k.f.Store(vars[i][j], v.id)
		}
	}
	return nil
}

// bindLoop makes the device loop kernel's builder and binds its buffers
// in Loop.Bindings' order: the state's initial values (ins) and results
// (outs), its big leaves (bigBind) and the status flag.
func (e *seqEmitter) bindLoop(w *hlo.Instruction, l *Loop, tg Target) (ins, outs []int, flag int, err error) {
	leaves := w.Shape.Leaves()
	k := newKernelBuilder(tg, e.local, 2)
	k.bound = map[*hlo.Instruction]int{}
	e.k = k
	e.bigBind = make([]int, len(leaves))
	for _, lb := range l.Bindings() {
		var b int
		switch {
		case lb.Leaf < 0:
			flag, err = k.addBuffer(hlo.U32, "flag", false, 1)
		case lb.Init:
			b, err = k.addBuffer(leaves[lb.Leaf].Elem, fmt.Sprintf("init%d", lb.Leaf), true, leaves[lb.Leaf].NumElements())
			ins = append(ins, b)
		case l.Big[lb.Leaf]:
			e.bigBind[lb.Leaf], err = k.addBuffer(leaves[lb.Leaf].Elem, fmt.Sprintf("array%d", lb.Leaf), lb.ReadOnly, leaves[lb.Leaf].NumElements())
		default:
			b, err = k.addBuffer(leaves[lb.Leaf].Elem, fmt.Sprintf("state%d", lb.Leaf), false, leaves[lb.Leaf].NumElements())
			outs = append(outs, b)
		}
		if err != nil {
			return nil, nil, 0, w.Errorf("%v", err)
		}
	}
	if e.local > 1 && scratchBuffers(tg) {
		condC, bodyC := w.WhileComputations()
		for _, t := range wideTypes(condC, bodyC) {
			b, err := k.addBuffer(t, "scratch_"+t.String(), false, wideElems)
			if err != nil {
				return nil, nil, 0, w.Errorf("%v", err)
			}
			e.scratch = append(e.scratch, scratchBuf{t: t, bind: b})
		}
	}
	if tg.MaxStorageBuffers > 0 && len(k.bindings) > int(tg.MaxStorageBuffers) {
		return nil, nil, 0, notSeqf("%d bindings, beyond the device's %d", len(k.bindings), tg.MaxStorageBuffers)
	}
	return ins, outs, flag, nil
}

// whileLoop emits `for check() { body(); used++ }`: every iteration of
// every loop of the kernel counts against its budget.
func (e *seqEmitter) whileLoop(check func() spirv.ID, body func() error) error {
	return e.k.f.While(check, body, func() { e.k.increment(e.used) })
}

// stateVars makes a function variable per element of each leaf of a
// state of these shapes (none for big[i]).
func (e *seqEmitter) stateVars(shapes []hlo.Shape, big []bool) [][]spirv.ID {
	k := e.k
	vars := make([][]spirv.ID, len(shapes))
	for i, s := range shapes {
		if big != nil && big[i] {
			continue
		}
		for j := int64(0); j < s.NumElements(); j++ {
			vars[i] = append(vars[i], k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(s.Elem))))
		}
	}
	return vars
}

// storeState stores a value into its variables, and its wide leaves
// into their arrays (nil: none; wideVars); a big leaf has none (in,
// whose value it is, names it in the refusal).
func (e *seqEmitter) storeState(vars [][]spirv.ID, v seqValue, in *hlo.Instruction, arrays []int) error {
	v = slices.Clone(v)
	for i, x := range v {
		// Small leaves computed as wide values are read before the
		// barrier storeWideVars ends the reads with.
		if (arrays == nil || arrays[i] == 0) && x.wide != 0 && x.shape.NumElements() <= seqElems {
			v[i].elems, v[i].wide = e.elems(x), 0
		}
	}
	if arrays != nil {
		if err := e.storeWideVars(arrays, v, in); err != nil {
			return err
		}
	} else if e.local > 1 && e.unsynced {
		e.barrier(false)
	}
	for i, x := range v {
		if arrays != nil && arrays[i] != 0 {
			continue
		}
		if x.big >= 0 || x.wide != 0 {
			return notSeqf("%s carries a large array", in.Name)
		}
		for j, el := range x.elems {
			e.k.f.Store(vars[i][j], el.id)
		}
	}
	return nil
}

// loadState reads a loop state from its function variables: per leaf,
// its elements' variables, or (big[i]) state leaf i kept in its buffer.
func (e *seqEmitter) loadState(shapes []hlo.Shape, vars [][]spirv.ID, big []bool) seqValue {
	k := e.k
	v := make(seqValue, len(shapes))
	for i, s := range shapes {
		v[i] = seqLeaf{shape: s, big: -1}
		if big != nil && big[i] {
			v[i].big = i
			continue
		}
		for _, p := range vars[i] {
			v[i].elems = append(v[i].elems, val{k.f.Load(k.scalarType(s.Elem), p), s.Elem})
		}
	}
	return v
}

// condition emits a loop's condition on state cur and returns its
// bool.
func (e *seqEmitter) condition(cond *hlo.Computation, cur seqValue) (spirv.ID, error) {
	v, err := e.emit(cond, []seqValue{cur})
	if err != nil {
		return 0, err
	}
	if len(v) != 1 || v[0].big >= 0 || len(v[0].elems) != 1 || v[0].shape.Elem != hlo.PRED {
		return 0, notSeqf("condition is not a pred scalar")
	}
	return v[0].elems[0].id, nil
}

// loadColumns loads, before the loop, the columns of the dots of body
// named in cols (colCache): a dot whose operand that dotValue does not
// shuffle is a large state leaf the body passes on unchanged, at most
// colElems elements in all. It also starts colsWanted, so that the
// dots that would take them are known for the next generation. On CPU
// devices only: a GPU's registers would hold hundreds of floats.
func (e *seqEmitter) loadColumns(body *hlo.Computation, l *Loop, cols map[string]bool) error {
	k := e.k
	k.invariant, k.colsWanted, k.cols = map[int]bool{}, map[string]bool{}, map[*hlo.Instruction]*colCache{}
	for i, big := range l.Big {
		if big && !l.Updated[i] {
			k.invariant[e.bigBind[i]] = true
		}
	}
	total := int64(0)
	for _, in := range body.Instructions {
		if !cols[in.Name] || in.Op != hlo.OpDot {
			continue
		}
		side := 1 - shuffledSide(in)
		o := in.Operands[side]
		if o.Op != hlo.OpGetTupleElement || o.Operands[0] != body.Params[0] || !o.Shape.IsArray() {
			continue
		}
		leaf := o.Operands[0].Shape.LeafOffset(int(o.A.Index))
		count := ownIters(in)
		if leaf >= len(l.Big) || !l.Big[leaf] || l.Updated[leaf] || total+count > colElems {
			continue
		}
		cc, err := k.loadColumn(in, side, e.bigBind[leaf], e.lid)
		if err != nil {
			return err
		}
		k.cols[in] = cc
		l.Columns = append(l.Columns, in.Name)
		total += count
	}
	return nil
}
