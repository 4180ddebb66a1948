package lower

import (
	"slices"
	"strconv"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// space says where in a kernel's index space (a reduce's: output and
// reduced dimensions) a value of its cluster is read.
type space uint8

const (
	inputSpace  space = iota // at the reduce's input index (output and reduced dims)
	outputSpace              // at the reduce's output index only
	otherSpace               // anywhere else
)

// readsOnlyAtOutput reports whether r2's kernel reads each of rs only
// at r2's own output index (each a materialized value of r2's shape):
// then their elements can come from registers computed in the same
// invocation.
func (s *state) readsOnlyAtOutput(r2 *hlo.Instruction, rs ...*hlo.Instruction) bool {
	ok := true
	// red is the innermost reduce whose input index the walk is at: a
	// broadcast along the dimensions its output keeps reads at the
	// output index. Each value once per space and reduce: fused values
	// that several ops read make the cluster a DAG, which a walk of its
	// paths takes exponential time over.
	type visit struct {
		x, red *hlo.Instruction
		sp     space
	}
	seen := map[visit]bool{}
	kept := map[*hlo.Instruction][]int64{}
	var walk func(x *hlo.Instruction, sp space, red *hlo.Instruction)
	walk = func(x *hlo.Instruction, sp space, red *hlo.Instruction) {
		v := visit{x, red, sp}
		if !ok || seen[v] {
			return
		}
		seen[v] = true
		if slices.Contains(rs, x) {
			ok = sp == outputSpace
			return
		}
		if !s.plan.fused[x] {
			return // another materialized input: read from its buffer
		}
		if x.Op == hlo.OpReduce && sp == outputSpace {
			// A fused reduce at the output index (log-softmax's sum
			// inside its log): its elements are read at its input
			// index, which its kept dimensions map back.
			walkReduce(x, walk)
			return
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
			case x.Op == hlo.OpBroadcast && sp == inputSpace && red != nil:
				if kept[red] == nil {
					kept[red] = keptDims(red)
				}
				if kgen.EqualDims(x.A.Dimensions, kept[red]) {
					next = outputSpace
				}
			}
			walk(o, next, red)
		}
	}
	switch {
	case r2.Op == hlo.OpReduce:
		walkReduce(r2, walk)
	case r2.Op.IsElementwise():
		for _, o := range r2.Operands {
			sp := outputSpace
			if o.Shape.Rank() == 0 && r2.Shape.Rank() > 0 {
				sp = otherSpace
			}
			walk(o, sp, nil)
		}
	default:
		for _, o := range r2.Operands {
			walk(o, otherSpace, nil)
		}
	}
	return ok
}

// keptDims are the dimensions of reduce r's input that its output keeps.
func keptDims(r *hlo.Instruction) []int64 {
	reduced := map[int64]bool{}
	for _, d := range r.A.Dimensions {
		reduced[d] = true
	}
	kept := []int64{}
	for d := range r.Operands[0].Shape.Dims {
		if !reduced[int64(d)] {
			kept = append(kept, int64(d))
		}
	}
	return kept
}

// walkReduce walks reduce r's operands: its inputs at its input index,
// its init values elsewhere.
func walkReduce(r *hlo.Instruction, walk func(*hlo.Instruction, space, *hlo.Instruction)) {
	n := len(r.Operands) / 2
	for _, o := range r.Operands[:n] {
		walk(o, inputSpace, r)
	}
	for _, o := range r.Operands[n:] {
		walk(o, otherSpace, r)
	}
}

// perElement reports a materialized instruction whose kernel computes
// each element of its one array result in its own invocation and writes
// it there: such kernels can compute others of the same shape alongside.
func (s *state) perElement(in *hlo.Instruction) bool {
	if s.plan.fused[in] || !in.Shape.IsArray() || in.Op == hlo.OpRngBitGenerator || s.hasTiledDot(in) {
		return false
	}
	switch {
	case in.Op.IsElementwise(), kgen.RemapOps[in.Op]:
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
// of the same operands), or that is independent of it (XLA's horizontal
// fusion: a random key's two halves, an optimizer's updates of two
// parameters of one shape). K1's result is kept in a register for K2's
// reads and stored for everyone else (if any: keepInRegisters): one
// dispatch instead of two, and one read of a shared input. The schedule runs K1's readers after K2's
// step.
func fuseSiblings(s *state) error {
	if s.opts.NoFuse {
		return nil
	}
	c := s.mod.Entry
	// Kernels are visited in the depth-first schedule's order, each
	// taking into its own the kernels of earlier siblings, whole (what
	// they took before included), so that many siblings make one kernel,
	// not pairs; the text's order would not do, as the schedule may run
	// independent values in its reverse (a chain of selects reads its
	// latest value first). A kernel taken is computed later than alone,
	// never earlier; no merge holds large values longer than the
	// schedule does (lengthensLives). The schedule also tells the live
	// kernels: dead code is fused with nothing.
	g, sched, err := scheduledSteps(s)
	if err != nil {
		return err
	}
	live := func(in *hlo.Instruction) bool { _, ok := sched[in]; return ok }
	// Whether a kernel computes its elements one per invocation depends
	// on the fused set alone, which this pass leaves as it is: decided
	// once per kernel, not once per pair; so are its costs.
	elem := map[*hlo.Instruction]bool{}
	cost := &stepCosts{size: map[*hlo.Instruction]int{}, iters: map[*hlo.Instruction]int64{}}
	for _, in := range c.Instructions {
		if live(in) && s.perElement(in) {
			elem[in] = true
			cost.size[in], cost.iters[in] = s.kernelCost(in), s.loopIters(in)
		}
	}
	sr := &siblingReaders{s: s, latest: map[*hlo.Instruction][]*hlo.Instruction{}, byDims: map[string][]*hlo.Instruction{}}
	for _, k2 := range inSchedule(elem, sched) {
		in2 := g.inputsOf(k2)
		// An update in place computes at its update's elements, not at
		// its result's: its prologues are fuseUpdates' and fuseScalars'.
		if s.plan.moved[k2] || updatesInPlace(k2) {
			sr.read(k2, in2)
			continue
		}
		for _, k1 := range sr.candidates(k2, in2, elem, sched) {
			if s.plan.moved[k1] || !kgen.EqualDims(k1.Shape.Dims, k2.Shape.Dims) {
				continue
			}
			if !s.readsGroupAtOutput(k2, k1, in2) || g.lengthensLives(k1, k2) {
				continue
			}
			if !s.fitsPrologue(g, k1, k2, cost) {
				continue
			}
			s.addPrologue(g, k1, k2, cost)
		}
		sr.read(k2, in2)
	}
	fuseUpdates(s, g, elem, cost, sched)
	fuseScalars(s, g, elem, cost, sched)
	return nil
}

// readsGroupAtOutput reports whether k2 reads k1, and what k1's kernel
// computes first, only at its own output index (in2: what k2 reads).
func (s *state) readsGroupAtOutput(k2, k1 *hlo.Instruction, in2 map[*hlo.Instruction]bool) bool {
	var read []*hlo.Instruction
	for _, m := range s.plan.members(k1) {
		if in2[m] {
			read = append(read, m)
		}
	}
	return len(read) == 0 || s.readsOnlyAtOutput(k2, read...)
}

// fuseUpdates makes the update step of each dynamic-update-slice done in
// place (updatesInPlace) compute its update's producer too: a kernel of
// as many elements, read through reshapes alone, which the update
// kernel computes at the update element's own index and stores beside
// the slice (kgen.UpdateSliceKernel). A scan's body computes its new
// carry and writes it into the stacked outputs in one dispatch, not two.
func fuseUpdates(s *state, g *steps, elem map[*hlo.Instruction]bool, cost *stepCosts, sched map[*hlo.Instruction]int) {
	for _, k2 := range inSchedule(elem, sched) {
		if !updatesInPlace(k2) || s.plan.moved[k2] || len(s.plan.prologue(k2)) > 0 {
			continue
		}
		k1 := k2.Operands[1]
		for s.plan.fused[k1] && (k1.Op == hlo.OpReshape || k1.Op == hlo.OpBitcast) && k1.Shape.Elem == k1.Operands[0].Shape.Elem {
			k1 = k1.Operands[0]
		}
		if !elem[k1] || s.plan.fused[k1] || s.plan.moved[k1] || len(s.plan.prologue(k1)) > 0 || sched[k1] > sched[k2] {
			continue
		}
		// k2 reads k1 through its update alone: the register holds k1
		// at the update element's index only.
		other := false
		for i, o := range k2.Operands {
			if i == 1 {
				continue
			}
			if o == k1 {
				other = true
			}
			if s.plan.fused[o] {
				s.visitInputs(o, func(x *hlo.Instruction) { other = other || x == k1 })
			}
		}
		if other || !s.fitsPrologue(g, k1, k2, cost) {
			continue
		}
		s.addPrologue(g, k1, k2, cost)
	}
}

// invocations is how many elements kernel k2 computes an invocation
// each: an update in place, its update's; an empty one none, so that
// nothing computed alongside would be.
func invocations(k2 *hlo.Instruction) int64 {
	if updatesInPlace(k2) {
		return k2.Operands[1].Shape.NumElements()
	}
	return k2.Shape.NumElements()
}

// inSchedule lists the kernels of set in their schedule's order.
func inSchedule(set map[*hlo.Instruction]bool, sched map[*hlo.Instruction]int) []*hlo.Instruction {
	order := make([]*hlo.Instruction, 0, len(set))
	for in := range set {
		order = append(order, in)
	}
	slices.SortFunc(order, func(a, b *hlo.Instruction) int { return sched[a] - sched[b] })
	return order
}

// stepCosts are each per-element kernel's costs with what it computes
// first, as fuseSiblings, fuseUpdates and fuseScalars merge them.
type stepCosts struct {
	size  map[*hlo.Instruction]int   // code: kgen.OpCost of the members and their clusters, under maxKernelCost as fuseLoops keeps it
	iters map[*hlo.Instruction]int64 // loop iterations an invocation runs (loopIters), within the device's bound
}

// fitsPrologue reports whether kernel k2 may compute k1 first, with what
// k1's kernel computes first: their code within maxKernelCost, their
// loops within the device's bound, their buffers within its bindings,
// and no cycle among the steps (the costliest test, last).
func (s *state) fitsPrologue(g *steps, k1, k2 *hlo.Instruction, cost *stepCosts) bool {
	return s.prologueSize(k1, cost)+cost.size[k2] <= maxKernelCost && cost.iters[k2]+cost.iters[k1] <= s.tg.LoopBudget() &&
		g.bindingsFit(k1, k2) && !g.formsCycle(k1, k2)
}

// kernelCost is the code of the kernel that computes in: kgen.OpCost
// of it and of the cluster it computes inline, as fusion counts it
// (maxKernelCost).
func (s *state) kernelCost(in *hlo.Instruction) int {
	_, cluster := s.clusterInputs(in)
	n := kgen.OpCost(in)
	for _, x := range cluster {
		n += kgen.OpCost(x)
	}
	return n
}

// prologueSize is kernel k1's code computed first in another kernel,
// with what k1's kernel computes first (cost.size[k1] counts it as it
// is there): a reduction there folds in its own kernel's lane order,
// with a copy of its fused producers for each lane's elements of a step
// (kgen.InlineFoldCopies).
func (s *state) prologueSize(k1 *hlo.Instruction, cost *stepCosts) int {
	pro, cluster := 0, cost.size[k1]
	for _, p := range s.plan.prologue(k1) {
		n := s.prologueSize(p, cost)
		pro, cluster = pro+n, cluster-n
	}
	own := kgen.OpCost(k1)
	return pro + own + kgen.InlineFoldCopies(k1, s.kernelEnv())*(cluster-own)
}

// addPrologue makes kernel k2 compute k1 first (its prologue), and what
// k1's kernel computed first: a third sibling joins the kernel of the
// first two, whichever of the three the schedule runs last. K1 comes
// after its own prologue, which it may read from registers (kgen binds
// a prologue's values in order).
func (s *state) addPrologue(g *steps, k1, k2 *hlo.Instruction, cost *stepCosts) {
	cost.size[k2] += s.prologueSize(k1, cost)
	cost.iters[k2] += cost.iters[k1]
	group := append(slices.Clone(s.plan.prologue(k1)), k1)
	if kp1 := s.plan.kernels[k1]; kp1 != nil {
		kp1.Prologue = nil
	}
	kp := s.plan.kernel(k2)
	kp.Prologue = append(kp.Prologue, group...)
	s.plan.moved[k1] = true
	g.merge(k2, group...)
}

// scalarTries is how many later kernels fuseScalars tries for each
// scalar kernel.
const scalarTries = 8

// fuseScalars lets each scalar elementwise kernel with no loop (a loop's
// counter step, i + 1), with the scalars it computes first, ride along
// with a later kernel of more elements that reads none of them: that
// kernel's invocation 0 computes and stores them (kgen's prologue), one
// dispatch fewer. A loop body's dispatches cost 30-45 us each on
// lavapipe, whatever they compute.
func fuseScalars(s *state, g *steps, elem map[*hlo.Instruction]bool, cost *stepCosts, sched map[*hlo.Instruction]int) {
	order := inSchedule(elem, sched)
	for i, k1 := range order {
		// A loop (a fused reduction's) would run in invocation 0 alone.
		// K1 may compute other scalars first (fuseSiblings'): they go
		// with it.
		members := s.plan.members(k1)
		if k1.Shape.Rank() != 0 || s.plan.moved[k1] || cost.iters[k1] > 0 || slices.ContainsFunc(members, func(m *hlo.Instruction) bool { return !m.Op.IsElementwise() }) {
			continue
		}
		tries := 0
		for _, k2 := range order[i+1:] {
			// A reshape's kernel may become a view of its operand
			// (planKernels): carrying the scalar would cost it its copy.
			in2 := g.stepInputs(k2)
			if k2.Shape.Rank() == 0 || k2.Op == hlo.OpReshape || invocations(k2) == 0 || s.plan.moved[k2] || slices.ContainsFunc(members, func(m *hlo.Instruction) bool { return in2[m] }) {
				continue
			}
			if tries++; tries > scalarTries {
				break
			}
			if !s.fitsPrologue(g, k1, k2, cost) {
				continue
			}
			s.addPrologue(g, k1, k2, cost)
			break
		}
	}
}

// siblingTries is how many of the latest earlier readers of each input
// fuseSiblings tries with a kernel: a value read by thousands of kernels
// (a parameter every step of an unrolled loop reads) would otherwise
// pair each reader with all the others, quadratic in the program.
const siblingTries = 16

// shapeTries is how many of the latest earlier kernels of its
// dimensions fuseSiblings tries with a kernel, siblings or not: each try
// costs what a sibling's does, and independent kernels of one shape that
// may share a step come close together in a schedule (an optimizer's
// updates).
const shapeTries = 4

// horizontalElements is the most elements of kernels merged for the
// dispatch alone (independent ones): where the work is larger, a
// dispatch saved is little, and a kernel of two element types may lose
// the vector form one of them alone would have.
const horizontalElements = 1 << 16

// siblingReaders keeps, for each value, the per-element kernels that read
// it in the schedule's order, those that might still join a later one.
type siblingReaders struct {
	s      *state
	latest map[*hlo.Instruction][]*hlo.Instruction
	byDims map[string][]*hlo.Instruction // the same, by the kernels' dimensions
}

// candidates are the per-element kernels (elem) before k2 in the
// schedule (pos) that k2 reads, and the latest siblingTries that might
// still join a kernel among the readers of each of its non-constant
// inputs (in2), and the latest shapeTries among the kernels of its
// dimensions (of at most horizontalElements), in the schedule's order. A kernel moved into another joins no more: it leaves
// the lists when met.
func (sr *siblingReaders) candidates(k2 *hlo.Instruction, in2, elem map[*hlo.Instruction]bool, pos map[*hlo.Instruction]int) []*hlo.Instruction {
	seen := map[*hlo.Instruction]bool{}
	var out []*hlo.Instruction
	add := func(k1 *hlo.Instruction) {
		if !seen[k1] {
			seen[k1] = true
			out = append(out, k1)
		}
	}
	for o := range in2 {
		if elem[o] && pos[o] < pos[k2] {
			add(o)
		}
		if o.Op == hlo.OpConstant {
			continue
		}
		sr.latest[o] = sr.latestOf(sr.latest[o], siblingTries, add)
	}
	if k2.Shape.NumElements() <= horizontalElements {
		d := dimsKey(k2.Shape.Dims)
		sr.byDims[d] = sr.latestOf(sr.byDims[d], shapeTries, add)
	}
	slices.SortFunc(out, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
	return out
}

// latestOf passes the latest n kernels of l that are not moved to add,
// and returns l without the moved ones it met.
func (sr *siblingReaders) latestOf(l []*hlo.Instruction, n int, add func(*hlo.Instruction)) []*hlo.Instruction {
	for i, tries := len(l)-1, 0; i >= 0 && tries < n; i-- {
		if sr.s.plan.moved[l[i]] {
			l = slices.Delete(l, i, i+1)
			continue
		}
		add(l[i])
		tries++
	}
	return l
}

// dimsKey names a kernel's dimensions.
func dimsKey(dims []int64) string {
	b := make([]byte, 0, 8*len(dims))
	for _, d := range dims {
		b = strconv.AppendInt(append(b, ','), d, 10)
	}
	return string(b)
}

// read records k, a per-element kernel, among its inputs' readers and
// the kernels of its dimensions.
func (sr *siblingReaders) read(k *hlo.Instruction, inputs map[*hlo.Instruction]bool) {
	d := dimsKey(k.Shape.Dims)
	sr.byDims[d] = append(sr.byDims[d], k)
	for o := range inputs {
		if o.Op != hlo.OpConstant {
			sr.latest[o] = append(sr.latest[o], k)
		}
	}
}
