package eval

import (
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
