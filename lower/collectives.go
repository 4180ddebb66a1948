package lower

import (
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// oneProcess rewrites the collectives of a program for the one process
// vkjit runs it as (one device: one replica, one partition) into what
// they compute there, as XLA defines them for a group of one:
// all-reduce, all-gather, reduce-scatter, all-to-all and
// collective-broadcast pass their operands on (a reshape to the same
// dimensions, which simplify takes out, or a tuple of them),
// collective-permute copies its operand with a {0,0} pair and makes
// zeros without any pair, and replica-id and partition-id are 0; the
// asynchronous forms (all-reduce-start and -done, all-gather's,
// collective-permute's) alike, the start holding the results and the
// done reading them. JAX prints these for a program sharded over a mesh
// of one device, XLA's scheduler the asynchronous forms. A
// collective whose groups or shapes name other processes is left as it
// is, for checkSupport to name.
func oneProcess(s *state) error {
	id := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		return b.constant(in.Shape.Elem, 0), nil
	}
	collective := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		if !onlyProcessZero(in, "replica_groups") || !passesOperands(in) {
			return in, nil
		}
		if len(in.Operands) == 1 && in.Shape.IsArray() {
			return b.inst(hlo.OpReshape, in.Shape, in.Operands[0]), nil
		}
		return b.inst(hlo.OpTuple, in.Shape, in.Operands...), nil
	}
	permute := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		if len(in.Operands) != 1 || !in.Shape.IsArray() || !in.Shape.Equal(in.Operands[0].Shape) {
			return in, nil
		}
		switch r := permuted(b, in); {
		case r == nil:
			return in, nil
		case r[0] == in.Operands[0]:
			return b.inst(hlo.OpReshape, in.Shape, r[0]), nil
		default:
			return r[0], nil // zeros
		}
	}
	// The asynchronous forms: a start whose shape is the results (or
	// the tuple of operands, results and contexts of XLA's older form)
	// and a done that reads the results out of it.
	start := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		results := in.Operands
		if in.Op == hlo.OpCollectivePermuteStart {
			if results = permuted(b, in); results == nil {
				return in, nil
			}
		} else if !onlyProcessZero(in, "replica_groups") {
			return in, nil
		}
		return startValue(b, in, results), nil
	}
	finish := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		st := in.Operands[0]
		switch {
		case st.Op != hlo.OpTuple && st.Op != hlo.OpReshape:
			return in, nil // a start left as it is: refused by name
		case in.Shape.Equal(st.Shape):
			return b.inst(hlo.OpReshape, in.Shape, st), nil
		case st.Op == hlo.OpTuple && in.Shape.IsArray() && len(st.Operands) >= 2 && in.Shape.Equal(st.Operands[1].Shape):
			return b.inst(hlo.OpReshape, in.Shape, st.Operands[1]), nil
		case st.Op == hlo.OpTuple && in.Shape.IsTuple() && len(st.Operands) >= 2*len(in.Shape.Tuple):
			n := len(in.Shape.Tuple)
			if t := b.tuple(st.Operands[n : 2*n]...); t.Shape.Equal(in.Shape) {
				return t, nil
			}
		}
		return in, nil
	}
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpReplicaID: id, hlo.OpPartitionID: id,
		hlo.OpAllReduce: collective, hlo.OpAllGather: collective, hlo.OpReduceScatter: collective,
		hlo.OpAllToAll: collective, hlo.OpCollectiveBroadcast: collective,
		hlo.OpCollectivePermute: permute,
		// The asynchronous forms.
		hlo.OpAllReduceStart: start, hlo.OpAllReduceDone: finish,
		hlo.OpAllGatherStart: start, hlo.OpAllGatherDone: finish,
		hlo.OpCollectivePermuteStart: start, hlo.OpCollectivePermuteDone: finish,
	})
}

// permuted is what a collective-permute (or its start) gives in a
// program of one process: its operands with a {0,0} pair, zeros of
// their shapes without any pair; nil for pairs naming other processes.
func permuted(b *expander, in *hlo.Instruction) []*hlo.Instruction {
	switch hlo.OneProcessPermute(in) {
	case hlo.PermuteSelf:
		return in.Operands
	case hlo.PermuteNone:
		var zs []*hlo.Instruction
		for _, o := range in.Operands {
			zs = append(zs, b.zeros(o.Shape))
		}
		return zs
	}
	return nil
}

// startValue is what a collective's start is in a program of one
// process, given the results: the results (one array, or a tuple of
// them), or XLA's older tuple of operands, results and contexts (zeros);
// in itself where its shape is neither.
func startValue(b *expander, in *hlo.Instruction, results []*hlo.Instruction) *hlo.Instruction {
	sh := in.Shape
	if sh.IsArray() {
		if len(results) == 1 && sh.Equal(results[0].Shape) {
			return b.inst(hlo.OpReshape, sh, results[0])
		}
		return in
	}
	n := len(results)
	var parts []*hlo.Instruction
	switch {
	case len(sh.Tuple) == n && n > 1:
		parts = results
	case len(sh.Tuple) >= 2*n:
		parts = append(slices.Clone(in.Operands), results...)
		for _, t := range sh.Tuple[2*n:] {
			if !t.IsArray() {
				return in
			}
			parts = append(parts, b.zeros(t))
		}
	default:
		return in
	}
	t := b.tuple(parts...)
	if !t.Shape.Equal(sh) {
		return in
	}
	return t
}

// onlyProcessZero: the groups attribute, if any, names process 0 alone
// ({} is one group of every process: here, the one).
func onlyProcessZero(in *hlo.Instruction, attr string) bool {
	v, ok := in.AttrValue(attr)
	if !ok {
		return true
	}
	switch strings.ReplaceAll(v, " ", "") {
	case "{}", "{{}}", "{{0}}", "[1,1]<=[1]":
		return true
	}
	return false
}

// passesOperands: each result has its operand's shape (a group of one
// gathers, scatters and exchanges nothing).
func passesOperands(in *hlo.Instruction) bool {
	if len(in.Operands) == 1 && in.Shape.IsArray() {
		return in.Shape.Equal(in.Operands[0].Shape)
	}
	if !in.Shape.IsTuple() || len(in.Shape.Tuple) != len(in.Operands) {
		return false
	}
	for i, o := range in.Operands {
		if !in.Shape.Tuple[i].Equal(o.Shape) {
			return false
		}
	}
	return true
}
