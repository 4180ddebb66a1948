package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Fusion: an elementwise or data-movement instruction whose every user
// is a kernel is not given a buffer; each consumer's kernel computes its
// elements where it reads them, so the intermediate never touches memory
// and costs no dispatch (XLA's loop fusion). A dot, convolution, reduce
// or reduce-window with a single consumer that reads each element once
// is computed by that consumer too, which makes the consumer's chain an
// epilogue (XLA's output fusion: bias and activation after a dot). The
// decision is this pass's; emission goes through the kernels' ordinary
// operand reads (kernelBuilder.load), which compute a fused operand
// instead of loading it.

// readCount says how often a consumer reads each element of an operand.
type readCount uint8

const (
	readsNone readCount = iota // not a kernel: needs its operands in buffers
	readsOnce                  // about once per operand element
	readsDup                   // once by each of a few consumers: cheap elementwise work may be recomputed
	readsMany                  // many times (dot, convolution, broadcast...)
)

// maxDuplicates bounds how many consumers may each recompute a cheap
// elementwise producer (softmax's exp(x - max) feeds its sum and its
// division).
const maxDuplicates = 3

// maxIndexCopies bounds the copies of an index-only producer (a
// broadcast of a constant read by many fused ops): cheap each, but each
// is code.
const maxIndexCopies = 64

// smallFanOut is the most copies of each operand element a broadcast
// may make and still count as a few reads (a row of 10 logits): beyond
// it, only index-only producers are recomputed per copy.
const smallFanOut = 16

// consumerReads classifies how consumer in reads its operands.
func consumerReads(in *hlo.Instruction) readCount {
	switch {
	case in.Op == hlo.OpBroadcast:
		if n := in.Operands[0].Shape.NumElements(); n > 0 && in.Shape.NumElements()/n <= smallFanOut {
			return readsDup
		}
		return readsMany
	case in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduceWindow,
		in.Op == hlo.OpSort, in.Op == hlo.OpScatter, in.Op == hlo.OpGather, in.Op == hlo.OpPad:
		return readsMany
	case in.Op.IsElementwise(), remapOps[in.Op], kernelOps[in.Op]:
		return readsOnce
	}
	return readsNone
}

// indexOnly ops move or make elements without arithmetic: recomputing
// them per read costs index math only.
func indexOnly(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpBroadcast, hlo.OpReshape, hlo.OpBitcast, hlo.OpTranspose, hlo.OpSlice, hlo.OpIota, hlo.OpReverse:
		return true
	case hlo.OpConstant:
		return in.Shape.IsArray() && in.Shape.NumElements() == 1
	}
	return false
}

// fusible reports the producers that can be computed inside consumers.
func fusible(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() {
		return false
	}
	switch {
	case in.Op == hlo.OpConstant:
		return indexOnly(in)
	case in.Op == hlo.OpConcatenate, in.Op == hlo.OpDynamicUpdateSlice, in.Op == hlo.OpGather:
		return false // their kernels write whole regions; keep them materialized
	case in.Op.IsElementwise() && in.Op != hlo.OpRngBitGenerator, remapOps[in.Op]:
		return true
	case in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduce, in.Op == hlo.OpReduceWindow:
		// Output fusion: one invocation computes one output element, so
		// a single consumer that reads each element once can take the
		// whole computation, epilogue and all (bias, activation).
		return true
	}
	return false
}

// expensive ops do a loop of work per element.
func expensive(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpDot, hlo.OpConvolution, hlo.OpReduce, hlo.OpReduceWindow:
		return true
	}
	return false
}

// work estimates the multiply-adds (or loop steps) an instruction's
// kernel does: its elements times the loop each one runs.
func work(in *hlo.Instruction) int64 {
	if !in.Shape.IsArray() {
		return 0
	}
	n := in.Shape.NumElements()
	switch in.Op {
	case hlo.OpDot:
		for _, d := range in.A.Dot.LhsContract {
			n *= in.Operands[0].Shape.Dims[d]
		}
	case hlo.OpConvolution:
		kr := in.Operands[1].Shape
		n *= kr.Dims[in.A.ConvDims.KIn]
		for _, d := range in.A.ConvDims.KSpatial {
			n *= kr.Dims[d]
		}
	case hlo.OpReduce:
		if m := in.Shape.NumElements(); m > 0 {
			n = in.Operands[0].Shape.NumElements()
		}
	case hlo.OpReduceWindow:
		for _, d := range in.A.Window.Dims {
			n *= d.Size
		}
	}
	return n
}

// dupBudget is the share of a computation's work that recomputing an
// expensive producer in several consumers may add: a small dot feeding a
// log-softmax is cheaper to redo than to store and dispatch separately.
const dupBudget = 16

// fuseLoops marks the instructions of the entry computation that
// consumers compute inline (state.fused). Users are decided before
// their operands (reverse definition order), so a producer knows how
// its users will be read: into a consumer that reads many times only
// index-only producers go; a producer with several consumers is
// recomputed by each, which is fine for index-only ones and, up to
// maxDuplicates consumers, for cheap elementwise ones; a dot,
// convolution or reduction is fused only into a single consumer that
// reads it once.
func fuseLoops(s *state) error {
	s.fused = map[*hlo.Instruction]bool{}
	if s.opts.NoFuse {
		return nil
	}
	c := s.mod.Entry
	users := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			users[o] = append(users[o], in)
		}
	}
	var total int64
	for _, in := range c.Instructions {
		total += work(in)
	}
	// reads[in]: how in's operands are read, all the way out to the
	// materialized kernel that computes in; copies[in]: how many times
	// kernels compute it (1 for a materialized value).
	reads := map[*hlo.Instruction]readCount{}
	copies := map[*hlo.Instruction]int{}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		in := c.Instructions[i]
		reads[in] = consumerReads(in)
		copies[in] = 1
		us := users[in]
		if in == c.Root || len(us) == 0 || !fusible(in) {
			continue
		}
		ctx := readsOnce
		distinct := map[*hlo.Instruction]bool{}
		n := 0 // the copies of in that fusing it would emit
		for _, u := range us {
			distinct[u] = true
			n += copies[u]
			ctx = max(ctx, reads[u])
			if reads[u] == readsNone {
				ctx = readsNone
				break
			}
		}
		if len(distinct) > 1 && ctx != readsNone {
			ctx = max(ctx, readsDup)
		}
		ok := false
		switch {
		case ctx == readsNone:
		case indexOnly(in):
			ok = n <= maxIndexCopies
		case n > maxDuplicates:
			// A value used twice by a value used twice... doubles at each
			// level (a polynomial recurrence of 30 steps would be emitted
			// 2^30 times): past a few copies it is stored instead.
		case ctx == readsOnce:
			ok = true
		case ctx == readsDup:
			// A reduce's own inputs may be whole fused clusters, so its
			// cost per element is unbounded: never duplicate one. Dots,
			// convolutions and windows read through index-only producers.
			ok = len(distinct) <= maxDuplicates && (!expensive(in) ||
				in.Op != hlo.OpReduce && maxDuplicates*work(in) <= total/dupBudget)
		}
		if !ok {
			continue
		}
		s.fused[in] = true
		copies[in] = n
		reads[in] = max(ctx, reads[in])
	}
	defer func() {
		for in := range s.fused {
			if n, err := StorageBytes(in.Shape, s.tg); err == nil {
				s.prog.FusedBytes += alignUp(paddedSize(n), int64(s.tg.StorageAlign))
			}
		}
	}()
	// A kernel binds its cluster's inputs; past the device's limit,
	// unfuse the cluster's producers (and look again, as they are now
	// kernels themselves). Likewise a kernel whose loops would run past
	// the device's loop bound gives up its expensive producers.
	budget := loopBudget(s.tg)
	for changed := true; changed; {
		changed = false
		for _, in := range c.Instructions {
			if s.fused[in] || consumerReads(in) == readsNone {
				continue
			}
			inputs, cluster := s.clusterInputs(in)
			if s.loopIters(in) > budget {
				for _, p := range cluster {
					if ownLoop(p) > 0 {
						delete(s.fused, p)
						changed = true
					}
				}
				if changed {
					continue
				}
			}
			limit := int(s.tg.MaxStorageBuffers) - len(in.Shape.Leaves())
			if in.Op == hlo.OpSort {
				limit -= 2 // scratch positions
			}
			if s.tg.MaxStorageBuffers != 0 && inputs > limit {
				for _, p := range cluster {
					delete(s.fused, p)
				}
				changed = len(cluster) > 0
			}
		}
	}
	return nil
}

// clusterInputs counts the distinct materialized values root's kernel
// reads, and lists the fused producers it computes.
func (s *state) clusterInputs(root *hlo.Instruction) (int, []*hlo.Instruction) {
	seen := map[*hlo.Instruction]bool{}
	var fused []*hlo.Instruction
	inputs := 0
	var walk func(in *hlo.Instruction)
	walk = func(in *hlo.Instruction) {
		for _, o := range in.Operands {
			if seen[o] {
				continue
			}
			seen[o] = true
			if s.fused[o] {
				fused = append(fused, o)
				walk(o)
			} else {
				inputs++
			}
		}
	}
	walk(root)
	return inputs, fused
}

// kernelEnv is what kernel generators need from the compilation.
type kernelEnv struct {
	tg       Target
	local    uint32
	fused    map[*hlo.Instruction]bool
	prologue map[*hlo.Instruction][]*hlo.Instruction
}

func (e kernelEnv) builder(pushFields int) *kernelBuilder {
	k := newKernelBuilder(e.tg, e.local, pushFields)
	k.fused = e.fused
	k.bound = map[*hlo.Instruction]int{}
	return k
}

// prologue is what a kernel computes first for the kernels fused into it
// (fuseReductions): their operands' bindings, the registers their values
// are read from, and their result bindings.
type prologue struct {
	pro   []*hlo.Instruction
	binds [][]int
	regs  []*val
	outs  []int
}

// bindPrologue binds the operands of the kernels fused ahead of in and
// makes in's reads of them come from registers. Call it before binding
// in's own operands.
func (k *kernelBuilder) bindPrologue(env kernelEnv, in *hlo.Instruction) (*prologue, error) {
	ps := &prologue{pro: env.prologue[in]}
	for _, p := range ps.pro {
		b, err := k.bindOperands(p)
		if err != nil {
			return nil, err
		}
		ps.binds = append(ps.binds, b)
		ps.regs = append(ps.regs, k.inRegister(p))
	}
	return ps, nil
}

// bindResults binds the prologue's results, after in's.
func (ps *prologue) bindResults(k *kernelBuilder) error {
	for _, p := range ps.pro {
		o, err := k.bindResults(p)
		if err != nil {
			return err
		}
		ps.outs = append(ps.outs, o...)
	}
	return nil
}

// emit computes each prologue kernel's element idx into its register.
func (ps *prologue) emit(k *kernelBuilder, idx spirv.ID) error {
	for i, p := range ps.pro {
		v := k.compute(fusedOperand{in: p, binds: ps.binds[i]}, idx)
		if k.err != nil {
			return k.err
		}
		*ps.regs[i] = v
	}
	return nil
}

// store writes the prologue's results at idx. Kernels call it after
// every read: a result may share memory with an input (an in-place
// update) that the kernel's own computation still reads at idx.
func (ps *prologue) store(k *kernelBuilder, idx spirv.ID) {
	for i := range ps.pro {
		k.store(ps.outs[i], idx, *ps.regs[i])
	}
}

// inRegister makes the kernel read o from a register set later (before
// any read is emitted) instead of a buffer, and returns the register.
func (k *kernelBuilder) inRegister(o *hlo.Instruction) *val {
	r := new(val)
	k.virtual = append(k.virtual, fusedOperand{in: o, reg: r})
	k.bound[o] = virtualBase + len(k.virtual) - 1
	return r
}

// virtualBase numbers the bindings of fused operands: load computes
// them instead of reading a buffer.
const virtualBase = 1 << 20

// fusedOperand is a fused producer as a kernel sees it: the instruction
// and the bindings (real or virtual) of its own operands.
type fusedOperand struct {
	in    *hlo.Instruction
	binds []int
	reg   *val // a value the kernel computed earlier at its output index
}

// operandBinding returns the binding through which a kernel reads o:
// a storage buffer (one per distinct input of the kernel) or, for a fused
// producer, a virtual binding.
func (k *kernelBuilder) operandBinding(o *hlo.Instruction, name string) (int, error) {
	if b, ok := k.bound[o]; ok {
		return b, nil
	}
	if k.fused[o] {
		binds := make([]int, len(o.Operands))
		for i, p := range o.Operands {
			b, err := k.operandBinding(p, fmt.Sprintf("%s_in%d", name, i))
			if err != nil {
				return 0, err
			}
			binds[i] = b
		}
		k.virtual = append(k.virtual, fusedOperand{in: o, binds: binds})
		b := virtualBase + len(k.virtual) - 1
		k.bound[o] = b
		return b, nil
	}
	b, err := k.addBuffer(o.Shape.Elem, name, true)
	if err != nil {
		return 0, o.Errorf("%v", err)
	}
	k.bound[o] = b
	k.inputs = append(k.inputs, o)
	k.inputBinds = append(k.inputBinds, b)
	return b, nil
}

// compute emits element idx of a fused producer.
func (k *kernelBuilder) compute(f fusedOperand, idx spirv.ID) val {
	in := f.in
	if f.reg != nil {
		return *f.reg
	}
	var v val
	var err error
	switch {
	case in.Op == hlo.OpConstant:
		v = k.scalarConst(in.Literal)
	case remapOps[in.Op]:
		v, err = k.remapValue(in, f.binds, idx)
	case in.Op == hlo.OpDot:
		v, err = k.dotValue(in, f.binds, idx)
	case in.Op == hlo.OpConvolution:
		v, err = k.convValue(in, f.binds, idx)
	case in.Op == hlo.OpReduce, in.Op == hlo.OpReduceWindow:
		var vs []val
		if in.Op == hlo.OpReduce {
			vs, err = k.reduceValues(in, f.binds, idx)
		} else {
			vs, err = k.reduceWindowValues(in, f.binds, idx)
		}
		if err == nil {
			v = vs[0]
		}
	default:
		args := make([]val, len(in.Operands))
		for i, o := range in.Operands {
			at := idx
			if o.Shape.Rank() == 0 && in.Shape.Rank() > 0 {
				at = k.cu32(0)
			}
			args[i] = k.load(f.binds[i], at, o.Shape.Elem)
		}
		v, err = k.emitScalar(in, args)
	}
	if err != nil {
		if k.err == nil {
			k.err = err
		}
		return val{k.zero(in.Shape.Elem), in.Shape.Elem}
	}
	return v
}

// Reduction fusion: a reduce R2 whose input reads another reduce R1 of
// the same output shape only at R2's own output index (softmax's sum
// reads the row max through a broadcast along the reduced dimension;
// layer norm's variance reads the mean) computes R1 first, in the same
// invocation, keeps it in a register for its own loop and also stores it
// for R1's other readers: one dispatch instead of two, and R1 is never
// read back. R1's computation moves to R2's step, so no other kernel may
// read R1 between them.

// space says where in a reduce's index space a value of its input
// cluster is read.
type space uint8

const (
	inputSpace  space = iota // at the reduce's input index (output and reduced dims)
	outputSpace              // at the reduce's output index only
	otherSpace               // anywhere else
)

// readsOnlyAtOutput reports whether reduce r2 reads r1 only at r2's
// output index (r1 being a materialized value of r2's shape).
func (s *state) readsOnlyAtOutput(r2, r1 *hlo.Instruction) bool {
	kept := []int64{}
	reduced := map[int64]bool{}
	for _, d := range r2.A.Dimensions {
		reduced[d] = true
	}
	for d := range r2.Operands[0].Shape.Dims {
		if !reduced[int64(d)] {
			kept = append(kept, int64(d))
		}
	}
	ok := true
	var walk func(x *hlo.Instruction, sp space)
	walk = func(x *hlo.Instruction, sp space) {
		if !ok {
			return
		}
		if x == r1 {
			ok = sp == outputSpace
			return
		}
		if !s.fused[x] {
			return // another materialized input: read from its buffer
		}
		for _, o := range x.Operands {
			next := otherSpace
			switch {
			case o.Shape.Rank() == 0 && x.Shape.Rank() > 0:
				// Read at index 0: the output index when r2 is a full reduction.
				if r2.Shape.Rank() == 0 {
					next = outputSpace
				}
			case x.Op.IsElementwise():
				next = sp
			case x.Op == hlo.OpBroadcast && sp == inputSpace && equalDims(x.A.Dimensions, kept):
				next = outputSpace
			}
			walk(o, next)
		}
	}
	switch {
	case r2.Op == hlo.OpReduce:
		for _, o := range r2.Operands[:len(r2.Operands)/2] {
			walk(o, inputSpace)
		}
		for _, o := range r2.Operands[len(r2.Operands)/2:] {
			walk(o, otherSpace)
		}
	case r2.Op.IsElementwise():
		for _, o := range r2.Operands {
			sp := outputSpace
			if o.Shape.Rank() == 0 && r2.Shape.Rank() > 0 {
				sp = otherSpace
			}
			walk(o, sp)
		}
	default:
		for _, o := range r2.Operands {
			walk(o, otherSpace)
		}
	}
	return ok
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// perElement reports a materialized instruction whose kernel computes
// each element of its one array result in its own invocation and writes
// it there: such kernels can compute others of the same shape alongside.
func (s *state) perElement(in *hlo.Instruction) bool {
	if s.fused[in] || !in.Shape.IsArray() || in.Op == hlo.OpRngBitGenerator {
		return false
	}
	switch {
	case in.Op.IsElementwise(), remapOps[in.Op]:
		return true
	case in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduce, in.Op == hlo.OpReduceWindow:
		return true
	}
	return false
}

// Multi-output fusion: a kernel K2 also computes, first and at its own
// output index, an earlier kernel K1 of the same shape that it reads only
// at that index (softmax's row max inside its row sum; layer norm's mean
// inside its variance), or that shares an input with it (siblings: the
// mean and the mean of squares of one tensor, or two elementwise results
// of the same operands). K1's result is kept in a register for K2's reads
// and stored for everyone else: one dispatch and one read of the shared
// input instead of two. The schedule runs K1's readers after K2's step.
func fuseReductions(s *state) error {
	s.prologue = map[*hlo.Instruction][]*hlo.Instruction{}
	s.moved = map[*hlo.Instruction]bool{}
	if s.opts.NoFuse {
		return nil
	}
	c := s.mod.Entry
	pos := map[*hlo.Instruction]int{}
	for i, in := range c.Instructions {
		pos[in] = i
	}
	inputs := map[*hlo.Instruction]map[*hlo.Instruction]bool{}
	inputsOf := func(x *hlo.Instruction) map[*hlo.Instruction]bool {
		if m, ok := inputs[x]; ok {
			return m
		}
		m := map[*hlo.Instruction]bool{}
		s.visitInputs(x, func(o *hlo.Instruction) { m[o] = true })
		inputs[x] = m
		return m
	}
	// dependsOn reports whether materialized x's value needs y (through
	// materialized values, y's kernel's partner included).
	memo := map[[2]*hlo.Instruction]bool{}
	var dependsOn func(x, y *hlo.Instruction) bool
	dependsOn = func(x, y *hlo.Instruction) bool {
		key := [2]*hlo.Instruction{x, y}
		if v, ok := memo[key]; ok {
			return v
		}
		memo[key] = false
		r := false
		for o := range inputsOf(x) {
			if o == y || dependsOn(o, y) {
				r = true
				break
			}
		}
		memo[key] = r
		return r
	}
	// Only merge k1 into a kernel the depth-first schedule runs after
	// it: k1 is then computed later than alone, never earlier, so no
	// value lives longer (a rematerialized copy stays late).
	if err := schedule(s); err != nil {
		return err
	}
	sched := map[*hlo.Instruction]int{}
	for i, in := range s.order {
		sched[in] = i
	}
	s.order, s.live = nil, nil
	limit := int(s.tg.MaxStorageBuffers)
	for _, k2 := range c.Instructions {
		if !s.perElement(k2) || s.moved[k2] || !s.reachable(k2) {
			continue
		}
		for _, k1 := range c.Instructions[:pos[k2]] {
			if !s.perElement(k1) || s.moved[k1] || len(s.prologue[k1]) > 0 || !equalDims(k1.Shape.Dims, k2.Shape.Dims) || !s.reachable(k1) || sched[k1] > sched[k2] {
				continue
			}
			in2 := inputsOf(k2)
			reads := in2[k1]
			shares := false
			for o := range inputsOf(k1) {
				if in2[o] && o.Op != hlo.OpConstant {
					shares = true
				}
			}
			if !reads && !shares || reads && !s.readsOnlyAtOutput(k2, k1) {
				continue
			}
			// No input of k2 (other than k1 itself) may need k1: k1 is
			// computed in k2's step.
			cycle := false
			for o := range in2 {
				if o != k1 && dependsOn(o, k1) {
					cycle = true
				}
			}
			for _, p := range s.prologue[k2] {
				if dependsOn(k1, p) || dependsOn(p, k1) {
					cycle = true
				}
			}
			if cycle || s.kernelIters(k2)+s.loopIters(k1) > loopBudget(s.tg) {
				continue
			}
			// Bindings: the union of the inputs, then every result.
			union := map[*hlo.Instruction]bool{}
			outs := len(k2.Shape.Leaves()) + 1
			for _, x := range append([]*hlo.Instruction{k1, k2}, s.prologue[k2]...) {
				for o := range inputsOf(x) {
					union[o] = true
				}
			}
			delete(union, k1)
			for _, p := range s.prologue[k2] {
				delete(union, p)
				outs++
			}
			if limit != 0 && len(union)+outs > limit {
				continue
			}
			s.prologue[k2] = append(s.prologue[k2], k1)
			s.moved[k1] = true
			for x := range inputs {
				delete(inputs, x) // k2's kernel now reads k1's inputs too
			}
			for key := range memo {
				delete(memo, key)
			}
		}
	}
	return nil
}

// reachable reports whether the root depends on in (dead code is not fused
// with anything: the schedule drops it).
func (s *state) reachable(in *hlo.Instruction) bool {
	if s.reach == nil {
		s.reach = map[*hlo.Instruction]bool{}
		var walk func(x *hlo.Instruction)
		walk = func(x *hlo.Instruction) {
			if s.reach[x] {
				return
			}
			s.reach[x] = true
			for _, o := range x.Operands {
				walk(o)
			}
		}
		walk(s.mod.Entry.Root)
	}
	return s.reach[in]
}

// checkLoopBounds refuses, by name, a kernel that would run more loop
// iterations per invocation than the device allows even unfused, rather
// than let the driver cut it short.
func checkLoopBounds(s *state) error {
	if s.tg.MaxLoopIterations == 0 {
		return nil
	}
	for _, in := range s.mod.Entry.Instructions {
		if s.fused[in] || s.moved[in] || consumerReads(in) == readsNone {
			continue
		}
		if n := s.kernelIters(in); n > loopBudget(s.tg) {
			return in.Errorf("one invocation of its kernel would run %d loop iterations, beyond the device's bound of %d (llvmpipe stops loops there); not supported on this device yet", n, s.tg.MaxLoopIterations)
		}
	}
	return nil
}

// ownLoop is how many iterations computing one element of in runs in its
// own loop (reads of its operands happen inside it).
func ownLoop(in *hlo.Instruction) int64 {
	switch in.Op {
	case hlo.OpReduce:
		return reducedCount(in)
	case hlo.OpDot, hlo.OpConvolution, hlo.OpReduceWindow:
		if in.Shape.IsArray() && in.Shape.NumElements() > 0 {
			return work(in) / in.Shape.NumElements()
		}
		w := int64(1)
		if in.Op == hlo.OpReduceWindow {
			for _, d := range in.A.Window.Dims {
				w *= d.Size
			}
		}
		return w
	case hlo.OpScatter:
		n := len(in.Operands) / 2
		upd := in.Operands[n+1].Shape
		window := map[int64]bool{}
		for _, d := range in.A.Scatter.UpdateWindowDims {
			window[d] = true
		}
		count := int64(1)
		for d, x := range upd.Dims {
			if !window[int64(d)] {
				count *= x
			}
		}
		return count
	case hlo.OpSort:
		length := in.Operands[0].Shape.Dims[in.A.Dimensions[0]]
		passes := int64(1)
		for w := int64(1); w < length; w *= 2 {
			passes++
		}
		if length < longSort {
			return length * (passes + 2)
		}
		return passes // a binary search per merge pass
	}
	return 0
}

// loopIters estimates the loop iterations one invocation of in's kernel
// runs: its own loop around the reads of its operands, and the loops of
// the producers it computes inline.
func (s *state) loopIters(in *hlo.Instruction) int64 {
	var inner int64
	for _, o := range in.Operands {
		if s.fused[o] {
			inner += s.loopIters(o)
		}
	}
	if l := ownLoop(in); l > 0 {
		return l * (1 + inner)
	}
	return inner
}

// kernelIters is loopIters for a materialized kernel, its prologue
// reductions included.
func (s *state) kernelIters(in *hlo.Instruction) int64 {
	n := s.loopIters(in)
	for _, p := range s.prologue[in] {
		n += s.loopIters(p)
	}
	return n
}

// loopBudget is the iterations a kernel may plan for: the device's bound
// with room for the short loops of the math library (fmod, integer power).
func loopBudget(tg Target) int64 {
	if tg.MaxLoopIterations == 0 {
		return 1 << 62
	}
	return tg.MaxLoopIterations - 2048
}

// schedule orders the steps depth first from the root: each kernel runs
// just before the first kernel that needs it, so values computed for
// late users (rematerialized copies among them) are not held across the
// program (XLA's DFS memory scheduler does the same). A reduce computed
// in another's kernel (prologue) is scheduled as that kernel. Dead
// instructions are not run.
func schedule(s *state) error {
	c := s.mod.Entry
	stepOf := map[*hlo.Instruction]*hlo.Instruction{}
	for r2, ps := range s.prologue {
		for _, p := range ps {
			stepOf[p] = r2
		}
	}
	done := map[*hlo.Instruction]bool{}
	var visit func(x *hlo.Instruction)
	visit = func(x *hlo.Instruction) {
		if r2, ok := stepOf[x]; ok {
			x = r2
		}
		if done[x] {
			return
		}
		done[x] = true
		for _, p := range s.prologue[x] {
			done[p] = true
		}
		// The values the step reads: its cluster's materialized inputs,
		// and those of the reduces it computes first.
		roots := append([]*hlo.Instruction{x}, s.prologue[x]...)
		for _, r := range roots {
			if consumerReads(r) == readsNone {
				for _, o := range r.Operands {
					visit(o)
				}
				continue
			}
			s.visitInputs(r, visit)
		}
		s.order = append(s.order, x)
	}
	visit(c.Root)
	s.live = done
	return nil
}

// visitInputs calls f on each distinct materialized value in's kernel
// reads, in operand order.
func (s *state) visitInputs(in *hlo.Instruction, f func(*hlo.Instruction)) {
	seen := map[*hlo.Instruction]bool{}
	var walk func(x *hlo.Instruction)
	walk = func(x *hlo.Instruction) {
		for _, o := range x.Operands {
			if seen[o] {
				continue
			}
			seen[o] = true
			if s.fused[o] {
				walk(o)
			} else {
				f(o)
			}
		}
	}
	walk(in)
}
