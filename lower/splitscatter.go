package lower

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// A scatter's kernel loops, per operand element, over every update
// position (kgen.ScatterKernel) or, over sorted indices, over its own
// updates after two binary searches (kgen.SortedRows), which may be all
// of them: on a device that bounds a loop's iterations (llvmpipe stops
// at 65535) a scatter of more positions could not run (a CSR product of
// a million nonzeros, the gradient of a large embedding lookup). Split,
// it is a while loop over chunks of its positions, each a scatter into
// the result so far, and a scatter of the rest: an element's updates
// still apply in position order, chunk after chunk, so the results are
// the same bit for bit. The chunks are as long as the bound allows: each
// chunk's sorted kernel searches every element's range again (a CSR
// product of a million nonzeros: 880 ms in chunks of 32,768 with the
// rest padded, 195 ms in chunks of 62,463 and the rest apart).

// splitLongScatters splits each scatter of the flattened form
// (flatPositions) with more positions than one invocation may loop over:
// chunks of the budget less room for the sorted form's two binary
// searches (62,463 positions on lavapipe).
func splitLongScatters(s *state) error {
	return expandWithinBound(s, hlo.OpScatter, func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error) {
		return b.chunkedScatter(in, budget-1024)
	})
}

// expandWithinBound expands each op instruction by expand, given the
// iterations a kernel may loop (Target.LoopBudget), on a device that bounds
// loops; elsewhere it changes nothing.
func expandWithinBound(s *state, op hlo.Opcode, expand func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error)) error {
	budget := s.tg.LoopBudget()
	if s.tg.MaxLoopIterations == 0 || budget < 2048 {
		return nil
	}
	return expandEach(s, map[hlo.Opcode]expansion{op: func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		return expand(b, in, budget)
	}})
}

// chunkedScatter is scatter in as a while loop over its positions in
// whole chunks of chunk, then a scatter of the rest, or in itself where
// it has no more positions, or is of another form.
func (b *expander) chunkedScatter(in *hlo.Instruction, chunk int64) (*hlo.Instruction, error) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	if _, ok := kgen.OneIndexRows(in); !ok || atomicScatter(in) {
		return in, nil
	}
	count, window, ok := flatPositions(in)
	if !ok || count <= chunk {
		return in, nil
	}
	whole := count / chunk
	w := len(window)
	idx := b.reshape(in.Operands[n], count, 1)
	ups := make([]*hlo.Instruction, n)
	for j, u := range in.Operands[n+1:] {
		ups[j] = b.reshape(u, append([]int64{count}, window...)...)
	}
	// scatter applies positions [from, from+size) of idx and ups to outs,
	// the slices' starts from (an s32) or, where it is nil, at.
	scatter := func(lb *expander, outs []*hlo.Instruction, idx *hlo.Instruction, ups []*hlo.Instruction, from *hlo.Instruction, at, size int64) []*hlo.Instruction {
		slice := func(x *hlo.Instruction) *hlo.Instruction {
			if from == nil {
				return lb.slice(x, 0, at, at+size)
			}
			sizes := append([]int64{size}, x.Shape.Dims[1:]...)
			starts := []*hlo.Instruction{x, from}
			for range x.Shape.Dims[1:] {
				starts = append(starts, lb.constant(from.Shape.Elem, 0))
			}
			d := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(x.Shape.Elem, sizes...), starts...)
			d.A.DynSliceSizes = sizes
			return d
		}
		ops := append(append([]*hlo.Instruction{}, outs...), slice(idx))
		for _, u := range ups {
			ops = append(ops, slice(u))
		}
		sc := lb.flatScatter(in, ops, w, sd.IndicesAreSorted, sd.UniqueIndices)
		if n == 1 {
			return []*hlo.Instruction{sc}
		}
		res := make([]*hlo.Instruction, n)
		for j := range res {
			res[j] = lb.element(sc, j)
		}
		return res
	}

	// The loop's state: the chunk's number, the operands so far, the
	// indices and the updates (a body reads nothing from outside it).
	shapes := []hlo.Shape{hlo.ArrayShape(hlo.S32)}
	init := []*hlo.Instruction{b.constant(hlo.S32, 0)}
	for _, o := range in.Operands[:n] {
		shapes, init = append(shapes, o.Shape), append(init, o)
	}
	shapes, init = append(shapes, idx.Shape), append(init, idx)
	for _, u := range ups {
		shapes, init = append(shapes, u.Shape), append(init, u)
	}
	state := hlo.TupleShape(shapes...)
	loop := b.whileLoop(in, in.Name+".chunks", state, b.inst(hlo.OpTuple, state, init...), func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, whole), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		i, outs, idx, ups := e[0], e[1:1+n], e[1+n], e[2+n:]
		from := lb.inst(hlo.OpMultiply, i.Shape, i, lb.constant(hlo.S32, chunk))
		next := []*hlo.Instruction{lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, 1))}
		next = append(next, scatter(lb, outs, idx, ups, from, 0, chunk)...)
		next = append(next, idx)
		return append(next, ups...)
	})
	outs := make([]*hlo.Instruction, n)
	for j := range outs {
		outs[j] = b.element(loop, 1+j)
	}
	if rest := count - whole*chunk; rest > 0 {
		outs = scatter(b, outs, idx, ups, nil, whole*chunk, rest)
	}
	if n == 1 {
		return outs[0], nil
	}
	return b.inst(hlo.OpTuple, in.Shape, outs...), nil
}
