package lower

import (
	"maps"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// steps is the graph fuseSiblings and fuseRows merge kernels in: one of
// steps, not instructions. A value moved into another's kernel is
// computed in that step, after all of that step's inputs; owner is the
// step computing a moved value, a step's inputs the materialized values
// its members read but for the members themselves.
type steps struct {
	s       *state
	inputs  map[*hlo.Instruction]map[*hlo.Instruction]bool // each kernel's materialized inputs (visitInputs), made once
	stepIn  map[*hlo.Instruction]map[*hlo.Instruction]bool // each step's (stepInputs), made when asked, dropped when its members change
	sched   map[*hlo.Instruction]int                       // each kernel's place in the schedule the steps came from
	last    map[*hlo.Instruction]int                       // each value's last reader's place there
	owner   map[*hlo.Instruction]*hlo.Instruction
	readers map[*hlo.Instruction][]*hlo.Instruction // the live kernels that read each value, in instruction order
	ord     *stepOrder
}

// scheduledSteps schedules s's kernels as the plan has them and returns
// their steps in the schedule's order, with that order (sched): the
// kernels it leaves out are dead, in no step.
func scheduledSteps(s *state) (*steps, map[*hlo.Instruction]int, error) {
	if err := schedule(s); err != nil {
		return nil, nil, err
	}
	sched := map[*hlo.Instruction]int{}
	for i, in := range s.order {
		sched[in] = i
	}
	s.order, s.live = nil, nil
	return newSteps(s, sched), sched, nil
}

// newSteps is the steps of s's live kernels (those in sched), each a
// kernel with the values its prologue computes first, in the schedule's
// order: a topological order of the steps, kept one as merges join them.
func newSteps(s *state, sched map[*hlo.Instruction]int) *steps {
	g := &steps{
		s:       s,
		inputs:  map[*hlo.Instruction]map[*hlo.Instruction]bool{},
		stepIn:  map[*hlo.Instruction]map[*hlo.Instruction]bool{},
		sched:   sched,
		last:    map[*hlo.Instruction]int{},
		owner:   map[*hlo.Instruction]*hlo.Instruction{},
		readers: map[*hlo.Instruction][]*hlo.Instruction{},
		ord:     &stepOrder{at: maps.Clone(sched)},
	}
	for k, kp := range s.plan.kernels {
		for _, p := range kp.Prologue {
			g.owner[p] = k
		}
	}
	for _, x := range s.mod.Entry.Instructions {
		if _, live := sched[x]; live && !s.plan.fused[x] {
			for o := range g.inputsOf(x) {
				g.readers[o] = append(g.readers[o], x)
				if l, ok := g.last[o]; !ok || sched[x] > l {
					g.last[o] = sched[x]
				}
			}
		}
	}
	return g
}

// inputsOf is the materialized values x's kernel reads.
func (g *steps) inputsOf(x *hlo.Instruction) map[*hlo.Instruction]bool {
	if m, ok := g.inputs[x]; ok {
		return m
	}
	m := map[*hlo.Instruction]bool{}
	g.s.visitInputs(x, func(o *hlo.Instruction) { m[o] = true })
	g.inputs[x] = m
	return m
}

// of is the step that computes x.
func (g *steps) of(x *hlo.Instruction) *hlo.Instruction {
	if o, ok := g.owner[x]; ok {
		return o
	}
	return x
}

// stepInputs is what step reads, with extra as members too. The map is
// the steps' own: not to be changed.
func (g *steps) stepInputs(step *hlo.Instruction, extra ...*hlo.Instruction) map[*hlo.Instruction]bool {
	if m, ok := g.stepIn[step]; ok && len(extra) == 0 {
		return m
	}
	members := append(g.s.plan.members(step), extra...)
	m := map[*hlo.Instruction]bool{}
	for _, x := range members {
		for o := range g.inputsOf(x) {
			m[o] = true
		}
	}
	for _, x := range members {
		delete(m, x)
	}
	if len(extra) == 0 {
		g.stepIn[step] = m
	}
	return m
}

// eachInput calls f on what step reads (its members' inputs that are
// not members) until f returns true, and reports whether one did. A
// value read twice may be met twice.
func (g *steps) eachInput(step *hlo.Instruction, f func(*hlo.Instruction) bool) bool {
	if g.member(step, step, f) {
		return true
	}
	for _, p := range g.s.plan.prologue(step) {
		if g.member(step, p, f) {
			return true
		}
	}
	return false
}

func (g *steps) member(step, x *hlo.Instruction, f func(*hlo.Instruction) bool) bool {
	for o := range g.inputsOf(x) {
		if g.of(o) != step && f(o) {
			return true
		}
	}
	return false
}

// needs and deps are a step's edges: the steps it reads from, and the
// steps that read from it.
func (g *steps) needs(step *hlo.Instruction, f func(*hlo.Instruction)) {
	for o := range g.stepInputs(step) {
		f(g.of(o))
	}
}

func (g *steps) deps(step *hlo.Instruction, f func(*hlo.Instruction)) {
	for _, m := range g.s.plan.members(step) {
		for _, r := range g.readers[m] {
			if st := g.of(r); st != step {
				f(st)
			}
		}
	}
}

// reaches reports whether any of the values read needs a target: is
// one, or is computed in a step that needs one. ord is a topological
// order of the steps, so a step no later than every target's step needs
// none of them: the search stays among the steps between, not the whole
// program.
func (g *steps) reaches(read, targets map[*hlo.Instruction]bool) bool {
	lo := len(g.ord.at)
	for t := range targets {
		lo = min(lo, g.ord.of(g.of(t)))
	}
	needs := map[*hlo.Instruction]bool{} // by step
	var need func(step *hlo.Instruction) bool
	need = func(step *hlo.Instruction) bool {
		if t, ok := g.ord.at[step]; ok && t <= lo {
			return false
		}
		if v, ok := needs[step]; ok {
			return v
		}
		needs[step] = false
		// What the step's members read, less the members themselves,
		// walked in place: a map of them made for every step visited
		// was most of the search's cost.
		r := g.eachInput(step, func(o *hlo.Instruction) bool { return targets[o] || need(g.of(o)) })
		needs[step] = r
		return r
	}
	for o := range read {
		if targets[o] || need(g.of(o)) {
			return true
		}
	}
	return false
}

// formsCycle reports whether computing k1 in k2's step, with what k1's
// kernel computes first (k1's group), would make a step need itself, or
// make the group and the step's earlier partners need each other (within
// one step they are computed side by side, each from registers of its
// own element only): some input of the merged step needs one of its
// members, through the steps as they are (k1 moved into k2 once read a
// value whose step needed k2's first result, and the schedule ran a
// kernel before the one writing its input).
func (g *steps) formsCycle(k1, k2 *hlo.Instruction) bool {
	pro := g.s.plan.prologue(k2)
	group := g.s.plan.members(k1)
	members := map[*hlo.Instruction]bool{k2: true}
	earlier, joining := map[*hlo.Instruction]bool{}, map[*hlo.Instruction]bool{}
	for _, p := range pro {
		members[p], earlier[p] = true, true
	}
	for _, m := range group {
		members[m], joining[m] = true, true
	}
	if g.reaches(g.stepInputs(k2, group...), members) {
		return true
	}
	if len(pro) == 0 {
		return false
	}
	// What the group reads is k1's step's inputs (kept); its members'
	// reads of one another are in that step already.
	return g.reaches(g.stepInputs(k1), earlier) || g.reaches(g.inputsOfAll(pro), joining)
}

// lengthensLives reports whether computing k1 (with what k1's kernel
// computes first) in k2's step would keep more than pullBytes of values
// longer than the schedule does: k2's results, where a step before k2
// reads one of k1's and k2's step would run that early (a
// rematerialized copy computed with the value it copies); or inputs of
// k1's step that k2's does not read and whose last reader in the
// schedule comes before k2 (an independent kernel's input held until
// the kernel it joins). Scalars and small vectors may move: their memory
// is nothing, a dispatch is 30 us.
func (g *steps) lengthensLives(k1, k2 *hlo.Instruction) bool {
	var results int64
	for _, m := range g.s.plan.members(k2) {
		results += m.Shape.ByteSize()
	}
	if results > pullBytes {
		at := g.ord.of(k2)
		for _, m := range g.s.plan.members(k1) {
			for _, r := range g.readers[m] {
				if st := g.of(r); st != k1 && st != k2 && g.ord.of(st) < at {
					return true
				}
			}
		}
	}
	in2 := g.stepInputs(k2)
	var held int64
	for o := range g.stepInputs(k1) {
		if in2[o] || o.Op == hlo.OpParameter || o.Op == hlo.OpConstant || g.last[o] >= g.sched[k2] {
			continue
		}
		if o.Shape.IsArray() {
			held += o.Shape.ByteSize()
		} else {
			for _, l := range o.Shape.Leaves() {
				held += l.ByteSize()
			}
		}
	}
	return held > pullBytes
}

// pullBytes is the most a merge may hold longer than the schedule does
// (lengthensLives).
const pullBytes = 1024

// inputsOfAll is the materialized values the kernels of xs read (a
// step's prologue, without its root).
func (g *steps) inputsOfAll(xs []*hlo.Instruction) map[*hlo.Instruction]bool {
	if len(xs) == 1 {
		return g.inputsOf(xs[0])
	}
	m := map[*hlo.Instruction]bool{}
	for _, x := range xs {
		for o := range g.inputsOf(x) {
			m[o] = true
		}
	}
	return m
}

// bindingsFit reports whether k2's kernel with k1 (and what k1's kernel
// computes first) computed first still binds no more buffers than the
// device allows: what either step reads that the other does not
// compute, then every result.
func (g *steps) bindingsFit(k1, k2 *hlo.Instruction) bool {
	limit := int(g.s.tg.MaxStorageBuffers)
	if limit == 0 {
		return true
	}
	in1, in2 := g.stepInputs(k1), g.stepInputs(k2)
	n := 0
	for o := range in1 {
		if !in2[o] && g.of(o) != k2 {
			n++
		}
	}
	for o := range in2 {
		if g.of(o) != k1 {
			n++
		}
	}
	for _, x := range append(g.s.plan.members(k1), g.s.plan.members(k2)...) {
		n += len(x.Shape.Leaves())
	}
	return n <= limit
}

// merge records values computed in k2's step, all at once (a row
// kernel takes values that read each other): that step now needs what
// they read, and their readers need it. The caller has checked that no
// value the step reads needs one of them (reaches).
func (g *steps) merge(k2 *hlo.Instruction, values ...*hlo.Instruction) {
	delete(g.stepIn, k2)
	for _, p := range values {
		delete(g.stepIn, g.of(p)) // its step, which may lose members (a row kernel's take)
		g.owner[p] = k2
	}
	for _, p := range values {
		for o := range g.inputsOf(p) {
			g.ord.before(g.of(o), k2, g.needs, g.deps)
		}
		for _, r := range g.readers[p] {
			if st := g.of(r); st != k2 {
				g.ord.before(k2, st, g.needs, g.deps)
			}
		}
	}
}

// stepOrder is a topological order of the steps (every step
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
