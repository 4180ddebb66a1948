package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Loop-invariant code motion (XLA's WhileLoopInvariantCodeMotion): a
// value a while body computes with a loop of its own (a reduction, a dot,
// a convolution, a window) from nothing that changes between iterations
// (constants and the elements of the loop state the body passes on
// unchanged: hlo.Computation.PassThrough) is computed once before the
// loop and carried in the loop state, so
// that each iteration reads it instead of computing it again (a JAX
// fori_loop body that sums a constant iota of 10^6 elements every
// iteration does one sum in all). Cheap invariants (constants, iotas,
// broadcasts) stay where they are: carried, they would cost memory for
// nothing. Results are unchanged: the same computation runs once.

// hoistInvariants rewrites the entry's while loops (called computations
// are copied, never changed: the user's module is left as it was). A
// while's sub-program is compiled by the same pipeline, so loops nested
// in its body are hoisted within it in turn.
func hoistInvariants(s *state) error {
	entry := s.mod.Entry
	repl := map[*hlo.Instruction]*hlo.Instruction{}
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op != hlo.OpWhile {
			out = append(out, in)
			continue
		}
		for i, o := range in.Operands {
			if r, ok := repl[o]; ok {
				in.Operands[i] = r
			}
		}
		added, result := hoistFrom(in)
		out = append(out, added...)
		if result != in {
			repl[in] = result
		}
	}
	if len(repl) == 0 {
		return nil
	}
	for _, in := range out {
		for i, o := range in.Operands {
			if r, ok := repl[o]; ok {
				in.Operands[i] = r
			}
		}
	}
	if r, ok := repl[entry.Root]; ok {
		entry.Root = r
	}
	entry.Instructions = out
	return nil
}

// pureOp reports ops that compute their result from their operands
// alone: those may move out of a loop.
func pureOp(in *hlo.Instruction) bool {
	switch {
	case in.Op == hlo.OpRngBitGenerator:
		return false
	case kgen.OpKind(in.Op) != kgen.KindNone:
		return true
	case in.Op == hlo.OpConstant, in.Op == hlo.OpTuple, in.Op == hlo.OpGetTupleElement:
		return true
	}
	return false
}

// hoistFrom returns the instructions that replace while loop w in the
// entry (w itself when nothing is invariant) and the instruction that
// stands for w's result.
func hoistFrom(w *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction) {
	ci, bi := whileIndices(w)
	body := w.Called[bi].Flatten(w.Called[bi].Name)
	if len(body.Params) != 1 || !body.Params[0].Shape.IsTuple() || !w.Shape.IsTuple() {
		return []*hlo.Instruction{w}, w
	}
	pass := body.PassThrough() // the loop's initial values, every iteration
	variant := map[*hlo.Instruction]bool{}
	loops := map[*hlo.Instruction]bool{} // invariant, with a loop in its graph
	for _, in := range body.Instructions {
		if pass[in] {
			continue
		}
		v := in.Op == hlo.OpParameter || !pureOp(in)
		l := expensive(in)
		for _, o := range in.Operands {
			v = v || variant[o]
			l = l || loops[o]
		}
		variant[in] = v
		loops[in] = !v && l
	}
	// The values to carry: invariant arrays with a loop in their graph
	// that something variant reads.
	var roots []*hlo.Instruction
	seen := map[*hlo.Instruction]bool{}
	for _, in := range body.Instructions {
		if !variant[in] {
			continue
		}
		for _, o := range in.Operands {
			if loops[o] && o.Shape.IsArray() && !seen[o] {
				seen[o] = true
				roots = append(roots, o)
			}
		}
	}
	if len(roots) == 0 {
		return []*hlo.Instruction{w}, w
	}
	n := len(w.Shape.Tuple)
	var added []*hlo.Instruction
	newInst := func(in *hlo.Instruction) *hlo.Instruction {
		in.Pos = w.Pos
		added = append(added, in)
		return in
	}
	gte := func(t *hlo.Instruction, i int, name string) *hlo.Instruction { return newGTE(t, i, name, w.Pos) }
	tuple := func(name string, elems []*hlo.Instruction) *hlo.Instruction { return newTuple(name, elems, w.Pos) }
	// The invariant graphs, copied into the entry ahead of the loop.
	clones := map[*hlo.Instruction]*hlo.Instruction{}
	var clone func(in *hlo.Instruction) *hlo.Instruction
	clone = func(in *hlo.Instruction) *hlo.Instruction {
		if c, ok := clones[in]; ok {
			return c
		}
		cp := *in
		cp.Name = w.Name + "/hoisted/" + in.Name
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			cp.Operands[i] = clone(o)
		}
		clones[in] = newInst(&cp)
		return &cp
	}
	init := w.Operands[0]
	elems := make([]*hlo.Instruction, 0, n+len(roots))
	for i := range n {
		elems = append(elems, newInst(gte(init, i, fmt.Sprintf("%s/init.%d", w.Name, i))))
	}
	for in := range pass { // read from the loop's initial state
		clones[in] = elems[in.A.Index]
	}
	for _, r := range roots {
		elems = append(elems, clone(r))
	}
	newInit := newInst(tuple(w.Name+"/init", elems))
	state := newInit.Shape

	// The body reads the carried values from its parameter and passes
	// them on; the condition only gets the wider parameter.
	nb := rebuild(body, w.Called[bi].Name+".hoisted", state, n, roots)
	nc := rebuild(w.Called[ci].Flatten(w.Called[ci].Name), w.Called[ci].Name+".hoisted", state, n, nil)

	nw := *w
	nw.Operands = []*hlo.Instruction{newInit}
	nw.Shape = state
	nw.Called = make([]*hlo.Computation, 2)
	nw.Called[ci], nw.Called[bi] = nc, nb
	nw.Attrs = append([]hlo.Attr{}, w.Attrs...)
	for i := range nw.Attrs {
		switch nw.Attrs[i].Name {
		case "condition":
			nw.Attrs[i].Value = nc.Name
		case "body":
			nw.Attrs[i].Value = nb.Name
		}
	}
	loop := newInst(&nw)
	outs := make([]*hlo.Instruction, n)
	for i := range outs {
		outs[i] = newInst(gte(loop, i, fmt.Sprintf("%s/out.%d", w.Name, i)))
	}
	return added, newInst(tuple(w.Name+"/result", outs))
}

// rebuild copies computation c (one tuple parameter of n elements) with
// its parameter widened to state: the old parameter becomes a tuple of
// the first n elements, each of carried (instructions of c) becomes a
// read of the element after them, and the root passes those elements
// on (when there are any).
func rebuild(c *hlo.Computation, name string, state hlo.Shape, n int, carried []*hlo.Instruction) *hlo.Computation {
	extra := len(carried)
	nc := &hlo.Computation{Name: name, Pos: c.Pos}
	old := c.Params[0]
	param := &hlo.Instruction{Name: old.Name, Op: hlo.OpParameter, Shape: state, Pos: old.Pos}
	nc.Params = []*hlo.Instruction{param}
	nc.Instructions = append(nc.Instructions, param)
	add := func(in *hlo.Instruction) *hlo.Instruction {
		nc.Instructions = append(nc.Instructions, in)
		return in
	}
	gte := func(t *hlo.Instruction, i int, name string) *hlo.Instruction { return add(newGTE(t, i, name, old.Pos)) }
	tuple := func(name string, elems []*hlo.Instruction) *hlo.Instruction {
		return add(newTuple(name, elems, old.Pos))
	}
	view := make([]*hlo.Instruction, n)
	for i := range view {
		view[i] = gte(param, i, fmt.Sprintf("%s.%d", old.Name, i))
	}
	m := map[*hlo.Instruction]*hlo.Instruction{old: tuple(old.Name+".state", view)}
	for j, r := range carried {
		m[r] = gte(param, n+j, fmt.Sprintf("%s.carried", r.Name))
	}
	for _, in := range c.Instructions {
		if _, ok := m[in]; ok || in == old {
			continue
		}
		cp := *in
		cp.Operands = make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			cp.Operands[i] = m[o]
		}
		m[in] = add(&cp)
	}
	root := m[c.Root]
	if extra == 0 {
		nc.Root = root
		return nc
	}
	elems := make([]*hlo.Instruction, 0, n+extra)
	for i := range n {
		elems = append(elems, gte(root, i, fmt.Sprintf("%s.next.%d", name, i)))
	}
	for j := range extra {
		elems = append(elems, gte(param, n+j, fmt.Sprintf("%s.pass.%d", name, j)))
	}
	nc.Root = tuple(name+".next", elems)
	return nc
}

// newGTE is get-tuple-element i of t.
func newGTE(t *hlo.Instruction, i int, name string, pos hlo.Pos) *hlo.Instruction {
	x := &hlo.Instruction{Name: name, Op: hlo.OpGetTupleElement, Shape: t.Shape.Tuple[i], Operands: []*hlo.Instruction{t}, Pos: pos}
	x.A.Index = int64(i)
	return x
}

// newTuple is a tuple of elems.
func newTuple(name string, elems []*hlo.Instruction, pos hlo.Pos) *hlo.Instruction {
	shapes := make([]hlo.Shape, len(elems))
	for i, e := range elems {
		shapes[i] = e.Shape
	}
	return &hlo.Instruction{Name: name, Op: hlo.OpTuple, Shape: hlo.TupleShape(shapes...), Operands: elems, Pos: pos}
}
