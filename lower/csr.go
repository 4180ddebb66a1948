package lower

import (
	"math/bits"

	"github.com/vkjit/vkjit/hlo"
)

// csrMatmul is jaxlib's CSR sparse-dense product (hlo.CallCsrMatmul):
// each nonzero's product with its row of b (a gather), summed into its
// row of the result by a scatter-add whose indices are sorted (the row
// of each nonzero is non-decreasing along them), which adds a row's
// products in their order from zero, as Eigen's product does; its
// kernel finds each row's nonzeros by binary search (kgen.SortedRows),
// in chunks of positions where the device bounds loops
// (splitscatter.go).
// A nonzero's row is the last i with indptr[i] <= p, found by a binary
// search over indptr unrolled into log2(rows) steps of elementwise ops
// and a gather; nonzeros outside indptr[0] .. indptr[rows] add zero.
func (b *expander) csrMatmul(in *hlo.Instruction) *hlo.Instruction {
	data, indptr, indices, rhs := in.Operands[0], in.Operands[1], in.Operands[2], in.Operands[3]
	t, it := data.Shape.Elem, indptr.Shape.Elem
	nnz, rows := data.Shape.Dims[0], in.Shape.Dims[0]
	if nnz == 0 || rows == 0 {
		return b.zeros(in.Shape)
	}
	window := rhs.Shape.Dims[1:] // [] (a vector) or [n]
	w := len(window)
	updates := append([]int64{nnz}, window...)
	// take gathers x's rows (dimension 0) at the s32 or s64 positions at
	// [nnz], clamped into x.
	take := func(x, at *hlo.Instruction) *hlo.Instruction {
		sh := hlo.ArrayShape(x.Shape.Elem, append([]int64{nnz}, x.Shape.Dims[1:]...)...)
		g := b.inst(hlo.OpGather, sh, x, b.reshape(at, nnz, 1))
		g.A.Gather = &hlo.GatherDims{
			OffsetDims: iotaDims(x.Shape.Rank())[1:], CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0},
			IndexVectorDim: 1, SliceSizes: append([]int64{1}, x.Shape.Dims[1:]...),
		}
		return g
	}
	prod := b.binary(hlo.OpMultiply, b.inst(hlo.OpBroadcast, hlo.ArrayShape(t, updates...), data), take(rhs, indices))
	prod.Operands[0].A.Dimensions = []int64{0}

	// Upper bound of p in indptr[1 .. rows]: the first i with indptr[i]
	// > p, each step halving [lo, hi) while lo < hi.
	k := func(v int64) *hlo.Instruction { return b.bcast(b.constant(it, v), nnz) }
	p := b.iota(it, 0, nnz)
	lo, hi := k(1), k(rows)
	for range bits.Len64(uint64(rows)) {
		open := b.compare(lo, hi, "LT")
		mid := b.inst(hlo.OpShiftRightLogical, lo.Shape, b.binary(hlo.OpAdd, lo, hi), k(1))
		above := b.compare(take(indptr, mid), p, "GT")
		toLeft := b.inst(hlo.OpAnd, open.Shape, open, above)
		toRight := b.inst(hlo.OpAnd, open.Shape, open, b.inst(hlo.OpNot, above.Shape, above))
		hi = b.sel(toLeft, mid, hi)
		lo = b.sel(toRight, b.binary(hlo.OpAdd, mid, k(1)), lo)
	}
	row := b.binary(hlo.OpSubtract, lo, k(1))
	row = b.sel(b.compare(row, k(rows-1), "GT"), k(rows-1), row) // past the last row: p >= indptr[rows]

	first := take(indptr, k(0))
	last := take(indptr, k(rows))
	inside := b.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, nnz), b.compare(p, first, "GE"), b.compare(p, last, "LT"))
	mask := b.inst(hlo.OpBroadcast, hlo.ArrayShape(hlo.PRED, updates...), inside)
	mask.A.Dimensions = []int64{0}
	prod = b.sel(mask, prod, b.zeros(prod.Shape))

	sc := b.inst(hlo.OpScatter, in.Shape, b.zeros(in.Shape), b.reshape(row, nnz, 1), prod)
	sc.Called = []*hlo.Computation{b.binaryComputation("/add", t, hlo.OpAdd)}
	sc.A.Scatter = &hlo.ScatterDims{
		UpdateWindowDims: iotaDims(w + 1)[1:], InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, IndicesAreSorted: true,
	}
	return sc
}
