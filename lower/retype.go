package lower

// The passes that change element types (lower complex, widen sub-byte
// integers, widen f8) share what is here: leaf predicates over shapes, and
// retype, which keeps the API's shapes before the first of them runs.

import (
	"github.com/vkjit/vkjit/hlo"
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
