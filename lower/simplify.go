package lower

import (
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// Simplification: rewrites of the entry that leave every value as it was
// but take out steps that do nothing, so that the patterns the fusion
// passes look for appear in graphs from JAX as they do in hand-written
// HLO. jax.nn.softmax writes its keepdims max as max(reduce_max(x),
// -inf), a reshape to [..., 1], a broadcast to the same shape and a
// reshape back before the broadcast along the rows, and its sum as a
// reshape, a convert and a broadcast and reshape of the same kind; left
// as they are, the row kernels (rowfuse.go, online.go) and softmax's
// exponentials (belowRowMax) do not see a reduction broadcast along its
// rows. Each rule returns what in may be replaced by (an instruction that
// exists, or a new one in in's place), or nil; the rules run on each
// instruction, in order, until none applies, and what the root no longer
// reaches is dropped (parameters stay).
var simplifications = []struct {
	name string
	rule func(in *hlo.Instruction) *hlo.Instruction
}{
	{"reshape to the same dimensions", func(in *hlo.Instruction) *hlo.Instruction {
		if in.Op == hlo.OpReshape && in.Shape.Equal(in.Operands[0].Shape) {
			return in.Operands[0]
		}
		return nil
	}},
	{"broadcast to the same dimensions, in order", func(in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if in.Op == hlo.OpBroadcast && in.Shape.Equal(x.Shape) && slices.Equal(in.A.Dimensions, iotaDims(x.Shape.Rank())) {
			return x
		}
		return nil
	}},
	{"reshape of a reshape", func(in *hlo.Instruction) *hlo.Instruction {
		if in.Op != hlo.OpReshape || in.Operands[0].Op != hlo.OpReshape {
			return nil
		}
		r := *in
		r.Operands = []*hlo.Instruction{in.Operands[0].Operands[0]}
		return &r
	}},
	{"reshape of a unary op of a reshape back", func(in *hlo.Instruction) *hlo.Instruction {
		// reshape(u(reshape(x))) with x's dimensions is u(x): a reshape
		// keeps the elements' row-major order and u acts on each alone.
		u := in.Operands[0]
		if in.Op != hlo.OpReshape || u.Op.Class() != hlo.ClassUnary || len(u.Operands) != 1 || u.Operands[0].Op != hlo.OpReshape {
			return nil
		}
		x := u.Operands[0].Operands[0]
		if !x.Shape.SameDims(in.Shape) {
			return nil
		}
		r := *u
		r.Name, r.Pos, r.Shape, r.Operands = in.Name, in.Pos, in.Shape, []*hlo.Instruction{x}
		return &r
	}},
	{"max with -inf, min with +inf", func(in *hlo.Instruction) *hlo.Instruction {
		// XLA's max(x, -inf) is x for every x, NaN included (and
		// min(x, +inf) likewise).
		if (in.Op != hlo.OpMaximum && in.Op != hlo.OpMinimum) || in.Shape.Elem.Kind() != hlo.KindFloat {
			return nil
		}
		inf := math.Inf(-1)
		if in.Op == hlo.OpMinimum {
			inf = math.Inf(1)
		}
		for i, c := range in.Operands {
			if c.Op == hlo.OpBroadcast && floatConst(c.Operands[0], inf) {
				return in.Operands[1-i]
			}
		}
		return nil
	}},
}

// simplify applies the simplifications to the entry computation (the
// copy inlineCalls made; the user's module is not modified).
func simplify(s *state) error {
	entry := s.mod.Entry
	repl := map[*hlo.Instruction]*hlo.Instruction{}
	listed := map[*hlo.Instruction]bool{}
	for _, in := range entry.Instructions {
		listed[in] = true
	}
	resolve := func(x *hlo.Instruction) *hlo.Instruction {
		for repl[x] != nil {
			x = repl[x]
		}
		return x
	}
	for i, in := range entry.Instructions {
		for j, o := range in.Operands {
			in.Operands[j] = resolve(o)
		}
		if in == entry.Root || in.Op == hlo.OpParameter {
			continue
		}
		cur := in
		for applied := true; applied; {
			applied = false
			for _, r := range simplifications {
				if len(cur.Operands) == 0 {
					break
				}
				if x := r.rule(cur); x != nil {
					if !listed[x] { // a new instruction takes in's place
						entry.Instructions[i], listed[x] = x, true
					}
					repl[in], cur, applied = x, x, true
					break
				}
			}
		}
	}
	entry.Root = resolve(entry.Root)
	entry.Instructions = reachable(entry)
	return nil
}

// reachable lists c's instructions that its root depends on, and its
// parameters, in c's order.
func reachable(c *hlo.Computation) []*hlo.Instruction {
	keep := map[*hlo.Instruction]bool{}
	var visit func(x *hlo.Instruction)
	visit = func(x *hlo.Instruction) {
		if keep[x] {
			return
		}
		keep[x] = true
		for _, o := range x.Operands {
			visit(o)
		}
	}
	visit(c.Root)
	var out []*hlo.Instruction
	for _, in := range c.Instructions {
		if keep[in] || in.Op == hlo.OpParameter {
			out = append(out, in)
		}
	}
	return out
}
