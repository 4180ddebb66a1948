package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// batchMin is the fewest scalars of one library function batchScalars
// computes as a vector: fewer save less code than the kernel the vector
// takes of its own.
const batchMin = 4

// batchScalars computes each group of independent scalar calls of one
// library function (sine, cosine, exp, log, pow and the rest of
// kgen.LibraryWords) on operands of one type as one op over the vector
// of their operands (a concatenate), each scalar then a slice of the
// result. A program of many scalar transcendentals (a robot's joint
// angles: the corpus's jit_mass_matrix_35 takes 103 sines and cosines
// of single elements) otherwise computes each where it is read, the
// function's code once per scalar in the kernels that read them (933
// SPIR-V words a sine in f32, 2580 in f64), compiled by the driver at a
// process's first run, and its readers bind a buffer per scalar. As a
// vector, the function's code is in one kernel of k invocations, and
// its readers bind one buffer.
//
// Scalars at one depth of the program's graph (the longest path from
// its leaves) cannot read one another, so each group is the calls of
// one function, operand types and depth. The entry computation only,
// and only where fusion runs: a loop's body keeps its scalars in
// registers, and unfused, each op is its own kernel anyway.
func batchScalars(s *state) error {
	if s.opts.NoFuse {
		return nil
	}
	c := s.mod.Entry
	depth := make(map[*hlo.Instruction]int, len(c.Instructions))
	groups := map[string][]*hlo.Instruction{}
	var keys []string
	for _, in := range c.Instructions {
		d := 0
		for _, o := range in.Operands {
			d = max(d, depth[o]+1)
		}
		depth[in] = d
		if in == c.Root || !batchable(in) {
			continue
		}
		key := batchKey(in, d)
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], in)
	}
	changed := false
	n := 0
	for _, key := range keys {
		if g := groups[key]; len(g) >= batchMin {
			batchGroup(g, &n)
			changed = true
		}
	}
	if changed {
		c.Instructions = topoOrder(c.Instructions)
	}
	return nil
}

// batchable reports a scalar call of a library function on scalars.
func batchable(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() || in.Shape.Rank() != 0 || !in.Op.IsElementwise() || kgen.LibraryWords(in.Op, in.Shape.Elem) == 0 || len(in.Called) > 0 {
		return false
	}
	for _, o := range in.Operands {
		if !o.Shape.IsArray() || o.Shape.Rank() != 0 {
			return false
		}
	}
	return true
}

// batchKey names a scalar call's group: its op, its operands' types
// and its result's, and its depth.
func batchKey(in *hlo.Instruction, depth int) string {
	var b strings.Builder
	b.WriteString(in.Op.String())
	b.WriteByte(' ')
	b.WriteString(in.Shape.Elem.String())
	for _, o := range in.Operands {
		b.WriteByte(' ')
		b.WriteString(o.Shape.Elem.String())
	}
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(depth))
	return b.String()
}

// batchGroup rewrites the scalar calls of g as one call over a vector of
// their operands: operand j of the vector op is the concatenate of each
// call's operand j (as a [1]); each call becomes a reshape of its slice
// of the result, keeping its name, so that its readers need no change.
// The new instructions, built by an expander and named after the group,
// are placed by topoOrder.
func batchGroup(g []*hlo.Instruction, n *int) {
	*n++
	first := g[0]
	count := 0
	b := &expander{from: &hlo.Instruction{Name: fmt.Sprintf("%s.batch%d", first.Name, *n), Pos: first.Pos}, n: &count}
	operands := make([]*hlo.Instruction, len(first.Operands))
	for j := range operands {
		parts := make([]*hlo.Instruction, len(g))
		for i, m := range g {
			parts[i] = b.reshape(m.Operands[j], 1)
		}
		operands[j] = b.concat(0, parts...)
	}
	v := b.inst(first.Op, hlo.ArrayShape(first.Shape.Elem, int64(len(g))), operands...)
	v.A, v.Name = first.A, b.from.Name+".vector0"
	for i, m := range g {
		sl := b.slice(v, 0, int64(i), int64(i)+1)
		*m = hlo.Instruction{Name: m.Name, Op: hlo.OpReshape, Shape: m.Shape, Operands: []*hlo.Instruction{sl}, Pos: m.Pos}
	}
}

// topoOrder orders instructions so that each follows its operands,
// keeping the given order where it already does: each is placed after
// what it reads that is not placed yet (the instructions a rewrite
// added are reached through their readers' operands).
func topoOrder(ins []*hlo.Instruction) []*hlo.Instruction {
	placed := make(map[*hlo.Instruction]bool, len(ins))
	out := make([]*hlo.Instruction, 0, len(ins))
	type frame struct {
		in   *hlo.Instruction
		next int
	}
	var stack []frame
	for _, root := range ins {
		if placed[root] {
			continue
		}
		stack = append(stack[:0], frame{in: root})
		placed[root] = true
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(top.in.Operands) {
				o := top.in.Operands[top.next]
				top.next++
				if !placed[o] {
					placed[o] = true
					stack = append(stack, frame{in: o})
				}
				continue
			}
			out = append(out, top.in)
			stack = stack[:len(stack)-1]
		}
	}
	return slices.Clip(out)
}
