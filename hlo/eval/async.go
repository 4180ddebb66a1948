package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// The asynchronous pairs, as one device computes them where they stand:
// a start's value holds what its done returns.

// started is an async-start's or copy-start's value: the tuple of
// first (the operands, or the copied array), r (the result) and zero
// contexts for the rest of in's shape.
func started(in *hlo.Instruction, first, r *Value) (*Value, error) {
	sh := in.Shape
	if !sh.IsTuple() || len(sh.Tuple) < 2 {
		return nil, in.Errorf("%s's shape must be a tuple of (operands, result, contexts...), is %s", in.Op, sh)
	}
	v := &Value{Tuple: []*Value{first, r}}
	for _, t := range sh.Tuple[2:] {
		if !t.IsArray() {
			return nil, in.Errorf("%s's context %s is not an array", in.Op, t)
		}
		v.Tuple = append(v.Tuple, &Value{Lit: zeros(t)})
	}
	return v, nil
}

// startedCollective is a collective's start in a program of one
// process, given its results: the results (one array or a tuple of
// them), or XLA's older tuple of operands, results and zero contexts.
func startedCollective(in *hlo.Instruction, ops, results []*Value) (*Value, error) {
	sh, n := in.Shape, len(results)
	switch {
	case sh.IsArray() && n == 1:
		return results[0], nil
	case sh.IsTuple() && len(sh.Tuple) == n && n > 1:
		return &Value{Tuple: results}, nil
	case sh.IsTuple() && len(sh.Tuple) >= 2*n:
		v := &Value{Tuple: append(append([]*Value{}, ops...), results...)}
		for _, t := range sh.Tuple[2*n:] {
			if !t.IsArray() {
				return nil, in.Errorf("%s's context %s is not an array", in.Op, t)
			}
			v.Tuple = append(v.Tuple, &Value{Lit: zeros(t)})
		}
		return v, nil
	}
	return nil, in.Errorf("%s's shape %s holds neither its results nor its operands and results", in.Op, sh)
}

// finished is a done's value: its start's result, element 1 of the
// start's tuple (elements n to 2n for a done of n results), or the
// start's value itself where that is the result.
func finished(in *hlo.Instruction, st *Value) (*Value, error) {
	from := in.Operands[0].Shape
	switch {
	case in.Shape.Equal(from):
		return st, nil
	case from.IsTuple() && in.Shape.IsArray() && len(st.Tuple) >= 2 && in.Shape.Equal(from.Tuple[1]):
		return st.Tuple[1], nil
	case from.IsTuple() && in.Shape.IsTuple() && len(st.Tuple) >= 2*len(in.Shape.Tuple):
		n := len(in.Shape.Tuple)
		return &Value{Tuple: st.Tuple[n : 2*n]}, nil
	}
	return nil, in.Errorf("%s of %s cannot give %s", in.Op, from, in.Shape)
}
