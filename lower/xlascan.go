package lower

import (
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// expandScans rewrites XLA's scan op as XLA's ScanExpander does: a while
// loop over the scan dimension whose state is a counter, the carries,
// the inputs and the output arrays (zeros at first); each iteration
// takes every input's slice at the step (counted from the end for
// is_reverse), applies to_apply (inlined) to the slices and the carries,
// writes its outputs into their arrays at the step and passes its new
// carries on. is_associative, a hint to XLA's parallel rewrites, changes
// nothing here: the scan runs in its order, as the evaluator's does. The
// loop is then a loop like any other: a device loop where its values are
// small, whatever the inputs' length.
func expandScans(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpScan: (*expander).xlaScan})
}

func (b *expander) xlaScan(in *hlo.Instruction) (*hlo.Instruction, error) {
	k := len(in.Operands) - int(in.A.NumCarries)
	inputs, inits := in.Operands[:k], in.Operands[k:]
	d := int(in.A.Dimensions[0])
	n := inputs[0].Shape.Dims[d]
	res := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		res = in.Shape.Tuple
	}
	m := len(res) - len(inits) // outputs
	// The counter's type, and the slices' starts'.
	ct := hlo.S32
	if n > math.MaxInt32 {
		ct = hlo.S64
	}
	// The state: the counter, the carries, the inputs, the outputs.
	shapes := []hlo.Shape{hlo.ArrayShape(ct)}
	init := []*hlo.Instruction{b.constant(ct, 0)}
	for _, x := range inits {
		shapes, init = append(shapes, x.Shape), append(init, x)
	}
	for _, x := range inputs {
		shapes, init = append(shapes, x.Shape), append(init, x)
	}
	for _, r := range res[:m] {
		shapes, init = append(shapes, r), append(init, b.zeros(r))
	}
	state := hlo.TupleShape(shapes...)
	carry, input, output := 1, 1+len(inits), 1+len(inits)+len(inputs)
	// starts indexes the whole array but for dimension d, at i.
	starts := func(lb *expander, rank int, i *hlo.Instruction) []*hlo.Instruction {
		zero := lb.constant(ct, 0)
		st := make([]*hlo.Instruction, rank)
		for j := range st {
			st[j] = zero
		}
		st[d] = i
		return st
	}
	to := in.Called[0]
	w := b.whileLoop(in, in.Name+".scan", state, b.inst(hlo.OpTuple, state, init...),
		func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
			return cb.compare(e[0], cb.constant(ct, n), "LT")
		},
		func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
			at := e[0]
			if in.A.IsReverse {
				at = lb.binary(hlo.OpSubtract, lb.constant(ct, n-1), e[0])
			}
			var args []*hlo.Instruction
			for j, x := range e[input:output] {
				sizes := slices.Clone(x.Shape.Dims)
				sizes[d] = 1
				ds := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(x.Shape.Elem, sizes...), append([]*hlo.Instruction{x}, starts(lb, len(sizes), at)...)...)
				ds.A.DynSliceSizes = sizes
				args = append(args, lb.reshape(ds, to.Params[j].Shape.Dims...))
			}
			args = append(args, e[carry:input]...)
			call := lb.inst(hlo.OpCall, to.Root.Shape, args...)
			call.Called = []*hlo.Computation{to}
			vals := []*hlo.Instruction{call}
			if to.Root.Shape.IsTuple() {
				vals = lb.leaves(call, len(to.Root.Shape.Tuple))
			}
			next := []*hlo.Instruction{lb.binary(hlo.OpAdd, e[0], lb.constant(ct, 1))}
			next = append(next, vals[m:]...)
			next = append(next, e[input:output]...)
			for j, a := range e[output:] {
				sizes := slices.Clone(a.Shape.Dims)
				sizes[d] = 1
				u := lb.reshape(vals[j], sizes...)
				next = append(next, lb.inst(hlo.OpDynamicUpdateSlice, a.Shape, append([]*hlo.Instruction{a, u}, starts(lb, len(sizes), at)...)...))
			}
			return next
		})
	// to_apply inlined into the body (the pass that inlines calls ran).
	w.Called[1] = w.Called[1].Flatten(w.Called[1].Name)
	var out []*hlo.Instruction
	for j := range res[:m] {
		out = append(out, b.element(w, output+j))
	}
	for j := range inits {
		out = append(out, b.element(w, carry+j))
	}
	if !in.Shape.IsTuple() {
		return out[0], nil
	}
	return b.inst(hlo.OpTuple, in.Shape, out...), nil
}
