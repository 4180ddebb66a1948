package lower

import (
	"maps"
	"slices"

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

// readsOnlyAtOutput reports whether r2's kernel reads r1 only at r2's
// own output index (r1 being a materialized value of r2's shape): then
// r1's element can come from a register computed in the same invocation.
func (s *state) readsOnlyAtOutput(r2, r1 *hlo.Instruction) bool {
	ok := true
	// kept is the dimensions of the innermost reduce's input that its
	// output keeps: a broadcast along them reads at the output index.
	var walk func(x *hlo.Instruction, sp space, kept []int64)
	walk = func(x *hlo.Instruction, sp space, kept []int64) {
		if !ok {
			return
		}
		if x == r1 {
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
			walkReduce(x, keptDims(x), walk)
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
			case x.Op == hlo.OpBroadcast && sp == inputSpace && kgen.EqualDims(x.A.Dimensions, kept):
				next = outputSpace
			}
			walk(o, next, kept)
		}
	}
	switch {
	case r2.Op == hlo.OpReduce:
		walkReduce(r2, keptDims(r2), walk)
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

// walkReduce walks a reduce's operands: its inputs at its input index,
// its init values elsewhere.
func walkReduce(r *hlo.Instruction, kept []int64, walk func(*hlo.Instruction, space, []int64)) {
	n := len(r.Operands) / 2
	for _, o := range r.Operands[:n] {
		walk(o, inputSpace, kept)
	}
	for _, o := range r.Operands[n:] {
		walk(o, otherSpace, kept)
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
// of the same operands). K1's result is kept in a register for K2's reads
// and stored for everyone else: one dispatch and one read of the shared
// input instead of two. The schedule runs K1's readers after K2's step.
func fuseSiblings(s *state) error {
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
	// Only merge k1 into a kernel the depth-first schedule runs after
	// it: k1 is then computed later than alone, never earlier, so no
	// value lives longer (a rematerialized copy stays late).
	if err := schedule(s); err != nil {
		return err
	}
	// Its order also tells the live kernels: dead code is fused with
	// nothing (the schedule drops it).
	sched := map[*hlo.Instruction]int{}
	for i, in := range s.order {
		sched[in] = i
	}
	s.order, s.live = nil, nil
	live := func(in *hlo.Instruction) bool { _, ok := sched[in]; return ok }
	// ord starts as the schedule, a topological order of the steps while
	// each is one instruction, and is kept one as merges join steps.
	ord := &stepOrder{at: maps.Clone(sched)}
	// The graph the schedule orders is one of steps, not instructions: a
	// value moved into another's kernel is computed in that step, after
	// all of that step's inputs. owner is the step computing a value;
	// stepInputs the materialized values a step reads (its members'
	// inputs but for the members).
	owner := map[*hlo.Instruction]*hlo.Instruction{}
	stepOf := func(x *hlo.Instruction) *hlo.Instruction {
		if o, ok := owner[x]; ok {
			return o
		}
		return x
	}
	stepInputs := func(step *hlo.Instruction, extra ...*hlo.Instruction) map[*hlo.Instruction]bool {
		members := append(append([]*hlo.Instruction{step}, s.plan.prologue(step)...), extra...)
		m := map[*hlo.Instruction]bool{}
		for _, x := range members {
			for o := range inputsOf(x) {
				m[o] = true
			}
		}
		for _, x := range members {
			delete(m, x)
		}
		return m
	}
	// reaches reports whether any of the values read needs a target: is
	// one, or is computed in a step that needs one. ord is a topological
	// order of the steps, so a step no later than every target's step
	// needs none of them: the search stays among the steps between, not
	// the whole program.
	reaches := func(read, targets map[*hlo.Instruction]bool) bool {
		lo := len(sched)
		for t := range targets {
			lo = min(lo, ord.of(stepOf(t)))
		}
		needs := map[*hlo.Instruction]bool{} // by step
		var need func(step *hlo.Instruction) bool
		need = func(step *hlo.Instruction) bool {
			if t, ok := ord.at[step]; ok && t <= lo {
				return false
			}
			if v, ok := needs[step]; ok {
				return v
			}
			needs[step] = false
			r := false
			for o := range stepInputs(step) {
				if targets[o] || need(stepOf(o)) {
					r = true
					break
				}
			}
			needs[step] = r
			return r
		}
		for o := range read {
			if targets[o] || need(stepOf(o)) {
				return true
			}
		}
		return false
	}
	// formsCycle reports whether computing k1 in k2's step would make a
	// step need itself, or make k1 and the step's earlier partners need
	// each other (within one step they are computed side by side, each
	// from registers of its own element only): some input of the merged
	// step needs one of its members, through the steps as they are (k1
	// moved into k2 once read a value whose step needed k2's first
	// result, and the schedule ran a kernel before the one writing its
	// input).
	formsCycle := func(k1, k2 *hlo.Instruction) bool {
		members := map[*hlo.Instruction]bool{k1: true, k2: true}
		for _, p := range s.plan.prologue(k2) {
			members[p] = true
		}
		if reaches(stepInputs(k2, k1), members) {
			return true
		}
		for _, p := range s.plan.prologue(k2) {
			if reaches(inputsOf(k1), map[*hlo.Instruction]bool{p: true}) || reaches(inputsOf(p), map[*hlo.Instruction]bool{k1: true}) {
				return true
			}
		}
		return false
	}
	// Whether a kernel computes its elements one per invocation depends
	// on the fused set alone, which this pass leaves as it is: decided
	// once per kernel, not once per pair.
	// size is each kernel's code (kgen.OpCost of its members and their
	// clusters), kept under maxKernelCost as fuseLoops keeps it.
	elem := map[*hlo.Instruction]bool{}
	size := map[*hlo.Instruction]int{}
	for _, in := range c.Instructions {
		if live(in) && s.perElement(in) {
			elem[in] = true
			_, cluster := s.clusterInputs(in)
			size[in] = kgen.OpCost(in.Op)
			for _, x := range cluster {
				size[in] += kgen.OpCost(x.Op)
			}
		}
	}
	// A pair is considered only where k2 reads k1 or shares an input
	// with it, so k2's candidates are its inputs and the other readers
	// of its inputs (readers: by value, in instruction order), not every
	// kernel before it: linear in the program, not quadratic.
	readers := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, x := range c.Instructions {
		if elem[x] {
			for o := range inputsOf(x) {
				readers[o] = append(readers[o], x)
			}
		}
	}
	// allReaders are the steps' members that read each value, for the
	// rule below that keeps the schedule a topological order of steps.
	allReaders := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, x := range c.Instructions {
		if live(x) && !s.plan.fused[x] {
			for o := range inputsOf(x) {
				allReaders[o] = append(allReaders[o], x)
			}
		}
	}
	// needs and deps are a step's edges: the steps it reads from, and
	// the steps that read from it.
	needs := func(step *hlo.Instruction, f func(*hlo.Instruction)) {
		for o := range stepInputs(step) {
			f(stepOf(o))
		}
	}
	deps := func(step *hlo.Instruction, f func(*hlo.Instruction)) {
		for _, m := range append([]*hlo.Instruction{step}, s.plan.prologue(step)...) {
			for _, r := range allReaders[m] {
				if st := stepOf(r); st != step {
					f(st)
				}
			}
		}
	}
	limit := int(s.tg.MaxStorageBuffers)
	for _, k2 := range c.Instructions {
		if !elem[k2] || s.plan.moved[k2] {
			continue
		}
		in2 := inputsOf(k2)
		for _, k1 := range siblingCandidates(k2, in2, elem, readers, pos) {
			if s.plan.moved[k1] || len(s.plan.prologue(k1)) > 0 || !kgen.EqualDims(k1.Shape.Dims, k2.Shape.Dims) || sched[k1] > sched[k2] {
				continue
			}
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
			if size[k1]+size[k2] > maxKernelCost || formsCycle(k1, k2) || s.kernelIters(k2)+s.loopIters(k1) > loopBudget(s.tg) {
				continue
			}
			// Bindings: the union of the inputs, then every result.
			union := map[*hlo.Instruction]bool{}
			outs := len(k2.Shape.Leaves()) + 1
			for _, x := range append([]*hlo.Instruction{k1, k2}, s.plan.prologue(k2)...) {
				for o := range inputsOf(x) {
					union[o] = true
				}
			}
			delete(union, k1)
			for _, p := range s.plan.prologue(k2) {
				delete(union, p)
				outs++
			}
			if limit != 0 && len(union)+outs > limit {
				continue
			}
			kp := s.plan.kernel(k2)
			kp.Prologue = append(kp.Prologue, k1)
			s.plan.moved[k1] = true
			owner[k1] = k2
			size[k2] += size[k1]
			// k2's step now needs what k1 read, and k1's readers need it.
			for o := range inputsOf(k1) {
				ord.before(stepOf(o), k2, needs, deps)
			}
			for _, r := range allReaders[k1] {
				if st := stepOf(r); st != k2 {
					ord.before(k2, st, needs, deps)
				}
			}
		}
	}
	return nil
}

// siblingCandidates are the kernels before k2 (by pos) that k2 reads or
// that share a non-constant input with it (in2: k2's inputs), in
// instruction order.
func siblingCandidates(k2 *hlo.Instruction, in2, elem map[*hlo.Instruction]bool, readers map[*hlo.Instruction][]*hlo.Instruction, pos map[*hlo.Instruction]int) []*hlo.Instruction {
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
		for _, k1 := range readers[o] {
			if pos[k1] >= pos[k2] {
				break
			}
			add(k1)
		}
	}
	slices.SortFunc(out, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
	return out
}

// stepOrder is a topological order of fuseSiblings' steps (every step
// after the steps it reads from), kept one as merges add edges, by
// Pearce and Kelly's algorithm ("A dynamic topological sort algorithm
// for directed acyclic graphs", 2007): an edge against the order
// reorders only the steps between its ends.
type stepOrder struct {
	at map[*hlo.Instruction]int
}

// of is step's place; values outside the schedule come first.
func (o *stepOrder) of(step *hlo.Instruction) int {
	if i, ok := o.at[step]; ok {
		return i
	}
	return -1
}

// before makes x come before y, given the graph's edges (needs: the
// steps one reads from; deps: the steps that read from it). The caller
// has checked that y does not reach x.
func (o *stepOrder) before(x, y *hlo.Instruction, needs, deps func(*hlo.Instruction, func(*hlo.Instruction))) {
	lb, ub := o.of(y), o.of(x)
	if x == y || ub < lb || lb < 0 {
		return
	}
	// The steps after y that come no later than x, and the steps before
	// x that come no earlier than y: the second go first.
	var fwd, back []*hlo.Instruction
	seen := map[*hlo.Instruction]bool{}
	var walkF, walkB func(*hlo.Instruction)
	walkF = func(n *hlo.Instruction) {
		seen[n] = true
		fwd = append(fwd, n)
		deps(n, func(m *hlo.Instruction) {
			if i := o.of(m); !seen[m] && i >= 0 && i < ub {
				walkF(m)
			}
		})
	}
	walkB = func(n *hlo.Instruction) {
		seen[n] = true
		back = append(back, n)
		needs(n, func(m *hlo.Instruction) {
			if i := o.of(m); !seen[m] && i > lb {
				walkB(m)
			}
		})
	}
	walkF(y)
	walkB(x)
	byOrder := func(a, b *hlo.Instruction) int { return o.at[a] - o.at[b] }
	slices.SortFunc(fwd, byOrder)
	slices.SortFunc(back, byOrder)
	var places []int
	for _, n := range append(back, fwd...) {
		places = append(places, o.at[n])
	}
	slices.Sort(places)
	for i, n := range append(back, fwd...) {
		o.at[n] = places[i]
	}
}
