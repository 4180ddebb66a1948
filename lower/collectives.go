package lower

import (
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
// zeros without any pair, and replica-id and partition-id are 0. JAX
// prints these for a program sharded over a mesh of one device. A
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
		pairs, _ := in.AttrValue("source_target_pairs")
		switch strings.ReplaceAll(pairs, " ", "") {
		case "{{0,0}}":
			return b.inst(hlo.OpReshape, in.Shape, in.Operands[0]), nil
		case "", "{}":
			return b.zeros(in.Shape), nil
		}
		return in, nil
	}
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpReplicaID: id, hlo.OpPartitionID: id,
		hlo.OpAllReduce: collective, hlo.OpAllGather: collective, hlo.OpReduceScatter: collective,
		hlo.OpAllToAll: collective, hlo.OpCollectiveBroadcast: collective,
		hlo.OpCollectivePermute: permute,
	})
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
