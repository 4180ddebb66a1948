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
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		switch in.Op {
		case hlo.OpReplicaID, hlo.OpPartitionID:
			*in = hlo.Instruction{Name: in.Name, Op: hlo.OpConstant, Shape: in.Shape, Literal: hlo.ScalarLiteral(in.Shape.Elem, 0), Pos: in.Pos}
		case hlo.OpAllReduce, hlo.OpAllGather, hlo.OpReduceScatter, hlo.OpAllToAll, hlo.OpCollectiveBroadcast:
			if !onlyProcessZero(in, "replica_groups") || !passesOperands(in) {
				break
			}
			ops := in.Operands
			if len(ops) == 1 && in.Shape.IsArray() {
				*in = hlo.Instruction{Name: in.Name, Op: hlo.OpReshape, Shape: in.Shape, Operands: ops, Pos: in.Pos}
			} else {
				*in = hlo.Instruction{Name: in.Name, Op: hlo.OpTuple, Shape: in.Shape, Operands: ops, Pos: in.Pos}
			}
		case hlo.OpCollectivePermute:
			pairs, _ := in.AttrValue("source_target_pairs")
			pairs = strings.ReplaceAll(pairs, " ", "")
			if len(in.Operands) != 1 || !in.Shape.IsArray() || !in.Shape.Equal(in.Operands[0].Shape) {
				break
			}
			switch pairs {
			case "{{0,0}}":
				*in = hlo.Instruction{Name: in.Name, Op: hlo.OpReshape, Shape: in.Shape, Operands: in.Operands, Pos: in.Pos}
			case "", "{}":
				scalar := hlo.ArrayShape(in.Shape.Elem)
				lit, err := hlo.NewLiteral(scalar, make([]byte, scalar.ByteSize()))
				if err != nil {
					return in.Errorf("%w", err)
				}
				zero := &hlo.Instruction{Name: in.Name + "/zero", Op: hlo.OpConstant, Shape: scalar, Literal: lit, Pos: in.Pos}
				out = append(out, zero)
				*in = hlo.Instruction{Name: in.Name, Op: hlo.OpBroadcast, Shape: in.Shape, Operands: []*hlo.Instruction{zero}, Pos: in.Pos}
			}
		}
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
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
