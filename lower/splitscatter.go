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
// the result so far: an element's updates still apply in position order,
// chunk after chunk, so the results are the same bit for bit.

// splitLongScatters splits each scatter of the flattened form
// (flatPositions) with more positions than one invocation may loop over.
func splitLongScatters(s *state) error {
	budget := loopBudget(s.tg)
	if s.tg.MaxLoopIterations == 0 || budget < 128 {
		return nil
	}
	chunk := int64(1)
	for 2*chunk+64 <= budget {
		chunk *= 2
	}
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpScatter: func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		return b.chunkedScatter(in, chunk)
	}})
}

// chunkedScatter is scatter in as a while loop over its positions in
// chunks of chunk, or in itself where it has no more positions, or is
// of another form. The indices (as s32) and updates are padded to whole
// chunks with positions whose index is past the operand, which the
// scatter skips (and which sort after every other, so sorted indices
// stay sorted).
func (b *expander) chunkedScatter(in *hlo.Instruction, chunk int64) (*hlo.Instruction, error) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	od, ok := kgen.OneIndexRows(in)
	if !ok {
		return in, nil
	}
	count, window, ok := flatPositions(in)
	dim := in.Operands[0].Shape.Dims[od]
	if !ok || count <= chunk || dim >= 1<<31-1 {
		return in, nil
	}
	chunks := (count + chunk - 1) / chunk
	padded := chunks * chunk
	w := len(window)

	idx := b.reshape(in.Operands[n], count)
	if t := idx.Shape.Elem; t != hlo.S32 {
		// Exact in s32 below 32 bits; u32 and 64-bit indices of 2^31 or
		// more, or below -2^31, are outside the operand and become so.
		valid := b.compare(idx, b.bcast(b.constant(t, dim), count), "LT")
		if t.Kind() == hlo.KindSigned {
			valid = b.inst(hlo.OpAnd, valid.Shape, valid, b.compare(idx, b.zeros(idx.Shape), "GE"))
		}
		idx = b.sel(valid, b.convert(idx, hlo.S32), b.bcast(b.constant(hlo.S32, dim), count))
	}
	if padded > count {
		idx = b.concat(0, idx, b.bcast(b.constant(hlo.S32, dim), padded-count))
	}
	idx = b.reshape(idx, padded, 1)
	ups := make([]*hlo.Instruction, n)
	for j, u := range in.Operands[n+1:] {
		flat := b.reshape(u, append([]int64{count}, window...)...)
		if padded > count {
			flat = b.concat(0, flat, b.zeros(hlo.ArrayShape(u.Shape.Elem, append([]int64{padded - count}, window...)...)))
		}
		ups[j] = flat
	}

	// The loop's state: the chunk's number, the operands so far, the
	// indices and the updates.
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
		return cb.compare(e[0], cb.constant(hlo.S32, chunks), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		i, outs, idx, ups := e[0], e[1:1+n], e[1+n], e[2+n:]
		start := lb.inst(hlo.OpMultiply, i.Shape, i, lb.constant(hlo.S32, chunk))
		zero := lb.constant(hlo.S32, 0)
		slice := func(x *hlo.Instruction) *hlo.Instruction {
			sizes := append([]int64{chunk}, x.Shape.Dims[1:]...)
			starts := []*hlo.Instruction{x, start}
			for range x.Shape.Dims[1:] {
				starts = append(starts, zero)
			}
			d := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(x.Shape.Elem, sizes...), starts...)
			d.A.DynSliceSizes = sizes
			return d
		}
		ops := append([]*hlo.Instruction{}, outs...)
		ops = append(ops, slice(idx))
		for _, u := range ups {
			ops = append(ops, slice(u))
		}
		sc := lb.inst(hlo.OpScatter, in.Shape, ops...)
		sc.Called = in.Called
		sc.A.Scatter = &hlo.ScatterDims{
			UpdateWindowDims: iotaDims(w + 1)[1:], InsertedWindowDims: sd.InsertedWindowDims,
			ScatterDimsToOperandDims: sd.ScatterDimsToOperandDims, IndexVectorDim: 1,
			IndicesAreSorted: sd.IndicesAreSorted, UniqueIndices: sd.UniqueIndices,
		}
		next := []*hlo.Instruction{lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, 1))}
		if n == 1 {
			next = append(next, sc)
		} else {
			for j := range n {
				next = append(next, lb.element(sc, j))
			}
		}
		next = append(next, idx)
		return append(next, ups...)
	})
	if n == 1 {
		return b.element(loop, 1), nil
	}
	res := make([]*hlo.Instruction, n)
	for j := range res {
		res[j] = b.element(loop, 1+j)
	}
	return b.inst(hlo.OpTuple, in.Shape, res...), nil
}
