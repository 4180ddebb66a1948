package hlo

// What gather's and scatter's dimension numbers mean for indexing, worked
// out once here for the evaluator and the compiler: which dimensions of
// the result (or the updates) walk the start indices, which operand
// dimensions the window covers, and how a batch position spreads over
// the indices' dimensions.

// Indexing is the dimension bookkeeping of one gather or scatter.
type Indexing struct {
	// BatchDims are the dimensions of a gather's result (a scatter's
	// updates) that are not offset (update window) dims: they index the
	// start indices, in order.
	BatchDims []int64
	// WindowDims are the operand dimensions the offset (update window)
	// dims walk, in order: all but the collapsed (inserted) and batching
	// dimensions.
	WindowDims []int64
	// IndexDims are the start indices' dimensions other than
	// index_vector_dim, in order: BatchDims[k] indexes IndexDims[k].
	IndexDims []int64
	// IndexCount is how many start indices a batch position has: the
	// index vector's length, or 1 when index_vector_dim is the indices'
	// rank (an implicit trailing dimension of size 1).
	IndexCount int64
}

// BatchPos is the position of indices dimension d among IndexDims.
func (x Indexing) BatchPos(d int64) int {
	for i, e := range x.IndexDims {
		if e == d {
			return i
		}
	}
	return -1
}

// MaxStart is the largest start along operand dimension d, of size n,
// that a start index is clamped to so that the slice fits. A collapsed
// dimension's slice of size 0 (which XLA allows) reads as one of size
// 1: the spec leaves reads past the operand to the implementation, and
// vkjit's evaluator and device both read the last element.
func (g *GatherDims) MaxStart(d, n int64) int64 {
	return n - max(g.SliceSizes[d], 1)
}

// Indexing works out a gather's bookkeeping for an operand of rank
// operandRank, start indices of shape indices and a result of rank
// outRank.
func (g *GatherDims) Indexing(operandRank int, indices Shape, outRank int) Indexing {
	return indexing(outRank, g.OffsetDims, operandRank, g.CollapsedSliceDims, g.OperandBatchingDims, indices, g.IndexVectorDim)
}

// Indexing works out a scatter's bookkeeping for an operand of rank
// operandRank, scatter indices of shape indices and updates of rank
// updRank.
func (s *ScatterDims) Indexing(operandRank int, indices Shape, updRank int) Indexing {
	return indexing(updRank, s.UpdateWindowDims, operandRank, s.InsertedWindowDims, s.InputBatchingDims, indices, s.IndexVectorDim)
}

func indexing(rank int, windowOf []int64, operandRank int, notWindow, batching []int64, indices Shape, ivd int64) Indexing {
	var x Indexing
	isWindow := map[int64]bool{}
	for _, d := range windowOf {
		isWindow[d] = true
	}
	for d := 0; d < rank; d++ {
		if !isWindow[int64(d)] {
			x.BatchDims = append(x.BatchDims, int64(d))
		}
	}
	skip := map[int64]bool{}
	for _, d := range notWindow {
		skip[d] = true
	}
	for _, d := range batching {
		skip[d] = true
	}
	for d := 0; d < operandRank; d++ {
		if !skip[int64(d)] {
			x.WindowDims = append(x.WindowDims, int64(d))
		}
	}
	for d := 0; d < indices.Rank(); d++ {
		if int64(d) != ivd {
			x.IndexDims = append(x.IndexDims, int64(d))
		}
	}
	x.IndexCount = 1
	if ivd < int64(indices.Rank()) {
		x.IndexCount = indices.Dims[ivd]
	}
	return x
}
