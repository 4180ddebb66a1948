package eval

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

func (e *evaluator) while(in *hlo.Instruction, init *Value) (*Value, error) {
	cond, body := in.WhileComputations()
	prev := e.loopMemo[body]
	e.loopMemo[body] = map[*hlo.Instruction]*Value{} // this loop's invariants
	defer func() { e.loopMemo[body] = prev }()
	state := init
	for trip := 0; ; trip++ {
		if trip == e.maxTrips {
			return nil, in.Errorf("ran %d iterations without finishing: %w", e.maxTrips, ErrTooManyTrips)
		}
		c, err := e.call(cond, []*Value{state})
		if err != nil {
			return nil, err
		}
		if get(c.Lit, 0).u == 0 {
			return state, nil
		}
		if state, err = e.call(body, []*Value{state}); err != nil {
			return nil, err
		}
	}
}

// conditional runs one branch: for a pred selector, true runs branch 0;
// an s32 index out of range runs the last branch.
func (e *evaluator) conditional(in *hlo.Instruction, ops []*Value) (*Value, error) {
	sel := ops[0].Lit
	n := len(in.Called)
	branches, _ := in.Branches()
	var b int
	if sel.Shape.Elem == hlo.PRED {
		b = 1
		if get(sel, 0).u != 0 {
			b = 0
		}
	} else {
		b = int(get(sel, 0).i)
		if b < 0 || b >= n {
			b = n - 1
		}
	}
	return e.call(branches[b], []*Value{ops[b+1]})
}

// scan runs XLA's scan: to_apply on each step's slice of the inputs
// along the scan dimension (from its end for is_reverse) and the
// carries, its outputs written at the step into arrays that start at
// zero, the carries passed on; it returns the arrays, then the final
// carries.
func (e *evaluator) scan(in *hlo.Instruction, ops []*Value) (*Value, error) {
	k := int(in.A.NumCarries)
	inputs, carries := ops[:len(ops)-k], ops[len(ops)-k:]
	d := int(in.A.Dimensions[0])
	res := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		res = in.Shape.Tuple
	}
	m := len(res) - k
	outs := make([]*hlo.Literal, m)
	for j := range outs {
		outs[j] = newLit(res[j].Elem, res[j].Dims)
	}
	n := in.Operands[0].Shape.Dims[d]
	for step := int64(0); step < n; step++ {
		at := step
		if in.A.IsReverse {
			at = n - 1 - step
		}
		args := make([]*Value, 0, len(ops))
		for _, x := range inputs {
			args = append(args, &Value{Lit: alongAt(x.Lit, d, at, nil)})
		}
		args = append(args, carries...)
		r, err := e.call(in.Called[0], args)
		if err != nil {
			return nil, err
		}
		vals := []*Value{r}
		if r.Tuple != nil {
			vals = r.Tuple
		}
		for j, o := range outs {
			alongAt(o, d, at, vals[j].Lit)
		}
		carries = vals[m:]
	}
	all := make([]*Value, 0, len(res))
	for _, o := range outs {
		all = append(all, &Value{Lit: o})
	}
	all = append(all, carries...)
	if !in.Shape.IsTuple() {
		return all[0], nil
	}
	return &Value{Tuple: all}, nil
}

// alongAt is the slice of x at position at of dimension d, that
// dimension dropped; given a slice (set), it writes it there instead.
func alongAt(x *hlo.Literal, d int, at int64, set *hlo.Literal) *hlo.Literal {
	dims := x.Shape.Dims
	outer, inner := aroundDim(dims, d)
	sl := set
	if sl == nil {
		sl = newLit(x.Shape.Elem, append(slices.Clone(dims[:d]), dims[d+1:]...))
	}
	for o := int64(0); o < outer; o++ {
		for r := int64(0); r < inner; r++ {
			full, part := (o*dims[d]+at)*inner+r, o*inner+r
			if set == nil {
				copyElem(sl, part, x, full)
			} else {
				copyElem(x, full, sl, part)
			}
		}
	}
	return sl
}
