package eval

import "github.com/vkjit/vkjit/hlo"

// csrMatmul is jaxlib's cpu_csr_sparse_dense_ffi (hlo.CallCsrMatmul) as
// Eigen computes a row-major sparse matrix times a dense one: each row i
// of the result from zero, adding data[p] * b[indices[p]] for p from
// indptr[i] to indptr[i+1] in turn, each product and sum rounded as
// HLO's multiply and add. A column index past b reads its nearest row
// (gather's clamp, as the lowering reads it), and the range of p is kept
// within the nonzeros. indptr is non-decreasing, as CSR has it; where it
// is not, the lowering may sum otherwise.
func csrMatmul(sh hlo.Shape, data, indptr, indices, b *hlo.Literal) (*hlo.Literal, error) {
	t := sh.Elem
	out := zeros(sh)
	rows := sh.Dims[0]
	k := b.Shape.Dims[0]
	n := int64(1)
	if b.Shape.Rank() == 2 {
		n = b.Shape.Dims[1]
	}
	nnz := data.Shape.Dims[0]
	bound := func(v int64) int64 { return min(max(v, 0), nnz) }
	for i := range rows {
		from, to := bound(get(indptr, i).i), bound(get(indptr, i+1).i)
		for c := range n {
			acc := get(out, i*n+c)
			for p := from; p < to; p++ {
				j := min(max(get(indices, p).i, 0), k-1)
				prod, err := applyBinary(hlo.OpMultiply, t, get(data, p), get(b, j*n+c))
				if err != nil {
					return nil, err
				}
				if acc, err = applyBinary(hlo.OpAdd, t, acc, prod); err != nil {
					return nil, err
				}
			}
			put(out.Data, t, i*n+c, acc)
		}
	}
	return out, nil
}
