package lower

// The passes that change element types (lower complex, widen sub-byte
// integers, widen f8) share what is here: leaf predicates over shapes, and
// retype, which keeps the API's shapes before the first of them runs.

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// anyLeaf reports whether an array leaf of s has an element type p
// accepts.
func anyLeaf(s hlo.Shape, p func(hlo.ElementType) bool) bool {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if anyLeaf(e, p) {
				return true
			}
		}
		return false
	}
	return p(s.Elem)
}

// mapLeaves is s with each array leaf replaced by f of it.
func mapLeaves(s hlo.Shape, f func(hlo.Shape) hlo.Shape) hlo.Shape {
	if s.IsTuple() {
		out := hlo.Shape{Elem: hlo.Tuple, Tuple: make([]hlo.Shape, len(s.Tuple))}
		for i, e := range s.Tuple {
			out.Tuple[i] = mapLeaves(e, f)
		}
		return out
	}
	return f(s)
}

// hasOp reports whether c, or a computation it calls, has an op q
// accepts.
func hasOp(c *hlo.Computation, q func(hlo.Opcode) bool) bool {
	return touches(c, func(hlo.ElementType) bool { return false }, q)
}

// touches reports whether c, or a computation it calls, has a value or
// an operand with a leaf whose element type p accepts, or an op q
// accepts (q may be nil).
func touches(c *hlo.Computation, p func(hlo.ElementType) bool, q func(hlo.Opcode) bool) bool {
	for _, in := range c.Instructions {
		if anyLeaf(in.Shape, p) || q != nil && q(in.Op) {
			return true
		}
		for _, o := range in.Operands {
			if anyLeaf(o.Shape, p) {
				return true
			}
		}
		for _, cc := range in.Called {
			if touches(cc, p, q) {
				return true
			}
		}
	}
	return false
}

// apiShapes is what the entry looked like before a pass changed its
// element types (complex numbers to their parts' type, 2- and 4-bit
// integers to 8-bit ones): the program's API keeps those shapes, its
// buffers hold the same bytes in a type the device has.
type apiShapes struct {
	params []hlo.Shape // parameter leaves, depth-first
	root   hlo.Shape
}

// keepAPI records the entry's shapes before the first pass that changes
// them.
func (s *state) keepAPI() {
	if s.api != nil {
		return
	}
	entry := s.mod.Entry
	b := &apiShapes{root: entry.Root.Shape}
	for _, in := range entry.Params {
		b.params = append(b.params, in.Shape.Leaves()...)
	}
	s.api = b
}

// retype runs a pass that changes element types (lowerComplex,
// widenSubByte) on the entry, when needs says it has any: the API's
// shapes are kept first, and the entry (rewrite's copy, with the
// computations it calls rewritten too) replaces the module's.
func (s *state) retype(needs func(*hlo.Computation) bool, rewrite func(*hlo.Computation) (*hlo.Computation, error)) error {
	if !needs(s.mod.Entry) {
		return nil
	}
	s.keepAPI()
	c, err := rewrite(s.mod.Entry)
	if err != nil {
		return err
	}
	mod := *s.mod
	mod.Entry = c
	s.mod = &mod
	return nil
}

// retyper rewrites the computations a retyping pass needs changed
// (needs), each once, however many instructions call it: every
// instruction is copied with its operands replaced, its shape retyped
// (shape) and the computations it calls rewritten, by the pass's rule
// (rule), which may add instructions around the copy and says what
// replaces the instruction. Instructions it adds are named after the one
// they help compute, with tag and a number.
type retyper struct {
	needs func(*hlo.Computation) bool
	shape func(hlo.Shape) hlo.Shape
	rule  func(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error)
	tag   string
	done  map[*hlo.Computation]*hlo.Computation
	n     int
}

// retyping is one computation being rewritten: its new instructions so
// far.
type retyping struct {
	*retyper
	out []*hlo.Instruction
}

// add appends a new instruction computing part of from's value.
func (r *retyping) add(from *hlo.Instruction, op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	return r.place(from, &hlo.Instruction{Op: op, Shape: sh, Operands: ops})
}

// place appends in, named after from, which it helps compute.
func (r *retyping) place(from, in *hlo.Instruction) *hlo.Instruction {
	r.n++
	in.Name, in.Pos = fmt.Sprintf("%s.%s%d", from.Name, r.tag, r.n), from.Pos
	r.out = append(r.out, in)
	return in
}

// isParamOf reports whether in is one of computation c's parameters (a
// called computation's parameter may have a number c has none of).
func isParamOf(c *hlo.Computation, in *hlo.Instruction) bool {
	return in.Op == hlo.OpParameter && in.ParamNum >= 0 && int(in.ParamNum) < len(c.Params) && c.Params[in.ParamNum] == in
}

// leafwise is x with f applied to each array leaf (its shape in api),
// tuples taken apart and put back together; the new instructions help
// compute in.
func (r *retyping) leafwise(in, x *hlo.Instruction, api hlo.Shape, f func(x *hlo.Instruction, leaf hlo.Shape) *hlo.Instruction) *hlo.Instruction {
	if !api.IsTuple() {
		return f(x, api)
	}
	elems := make([]*hlo.Instruction, len(api.Tuple))
	for i, e := range api.Tuple {
		elems[i] = r.leafwise(in, r.place(in, newGTE(x, i, "", in.Pos)), e, f)
	}
	return r.place(in, newTuple("", elems, in.Pos))
}

// expr is a builder of elementwise ops of shape s that help compute
// from, its errors recorded in *err.
func (r *retyping) expr(from *hlo.Instruction, s hlo.Shape, err *error) *formula.Builder {
	return formula.New(func(in *hlo.Instruction) *hlo.Instruction { return r.place(from, in) }, s, err)
}

// copy appends in with operands ops, its shape retyped and the
// computations it calls rewritten.
func (r *retyping) copy(in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	nc := *in
	nc.Shape, nc.Operands = r.shape(in.Shape), ops
	if len(in.Called) > 0 {
		nc.Called = make([]*hlo.Computation, len(in.Called))
		for i, cc := range in.Called {
			c, err := r.rewrite(cc)
			if err != nil {
				return nil, err
			}
			nc.Called[i] = c
		}
	}
	r.out = append(r.out, &nc)
	return &nc, nil
}

// rewrite returns c retyped (c itself where it needs nothing).
func (r *retyper) rewrite(c *hlo.Computation) (*hlo.Computation, error) {
	if d := r.done[c]; d != nil {
		return d, nil
	}
	if !r.needs(c) {
		return c, nil
	}
	step := &retyping{retyper: r}
	repl := map[*hlo.Instruction]*hlo.Instruction{}
	for _, in := range c.Instructions {
		ops := make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = repl[o]
		}
		v, err := r.rule(step, in, ops)
		if err != nil {
			return nil, err
		}
		repl[in] = v
	}
	nc := *c
	nc.Params = make([]*hlo.Instruction, len(c.Params))
	for i, p := range c.Params {
		nc.Params[i] = repl[p]
	}
	nc.Root = repl[c.Root]
	nc.Instructions = step.out
	r.done[c] = &nc
	return &nc, nil
}

// run retypes the module's entry (state.retype).
func (r *retyper) run(s *state) error {
	r.done = map[*hlo.Computation]*hlo.Computation{}
	return s.retype(r.needs, r.rewrite)
}
