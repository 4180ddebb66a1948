package hlo

import (
	"fmt"
	"slices"
)

// csrMatmul checks jaxlib's cpu_csr_sparse_dense_ffi (CallCsrMatmul):
// data [nnz] and b of one type among those jaxlib's kernel takes, indptr
// and indices of one index type, and a result of m rows and b's columns.
func csrMatmul(in *Instruction) (*CustomCall, error) {
	bad := func(why string, a ...any) error {
		return fmt.Errorf("custom-call cpu_csr_sparse_dense_ffi: "+why, a...)
	}
	if len(in.Operands) != 4 || !in.Shape.IsArray() {
		return nil, bad("takes data, indptr, indices and a dense matrix, and returns one array")
	}
	data, indptr, indices, b := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape, in.Operands[3].Shape
	for _, s := range []Shape{data, indptr, indices, b} {
		if !s.IsArray() {
			return nil, bad("takes arrays")
		}
	}
	switch data.Elem {
	case S32, S64, F32, F64, C64, C128:
	default:
		return nil, bad("multiplies s32, s64, f32, f64, c64 or c128, not %s", data.Elem)
	}
	if indptr.Elem != indices.Elem || indptr.Elem != S32 && indptr.Elem != S64 {
		return nil, bad("takes indptr and indices of one type, s32 or s64, not %s and %s", indptr.Elem, indices.Elem)
	}
	if data.Rank() != 1 || indices.Rank() != 1 || indptr.Rank() != 1 || data.Dims[0] != indices.Dims[0] {
		return nil, bad("takes data and indices [nnz] and indptr [rows+1], not %s, %s and %s", data, indices, indptr)
	}
	if b.Elem != data.Elem || b.Rank() < 1 || b.Rank() > 2 {
		return nil, bad("multiplies by a %s vector or matrix, not %s", data.Elem, b)
	}
	if b.Dims[0] == 0 && data.Dims[0] > 0 {
		return nil, bad("multiplies nonzeros by %s, which has no rows", b)
	}
	want := ArrayShape(data.Elem, append([]int64{indptr.Dims[0] - 1}, b.Dims[1:]...)...)
	if indptr.Dims[0] < 1 || !in.Shape.Equal(want) {
		return nil, bad("returns %s for %d rows, not %s", want, indptr.Dims[0]-1, in.Shape)
	}
	return &CustomCall{Kind: CallCsrMatmul}, nil
}

// gtsvPerturbed checks jaxlib's tridiagonal_solve_perturbed_ffi
// (CallGtsvPerturbed): dl, d, du [..., n] and b [..., n, nrhs] of one
// floating or complex type, and x of b's shape.
func gtsvPerturbed(in *Instruction) (*CustomCall, error) {
	o := in.Operands
	ok := len(o) == 4 && in.Shape.IsArray()
	if ok {
		d, b := o[1].Shape, o[3].Shape
		t := d.Elem
		ok = (t == F32 || t == F64 || t == C64 || t == C128) && d.Rank() >= 1 &&
			o[0].Shape.Equal(d) && o[2].Shape.Equal(d) && b.Elem == t && b.Rank() == d.Rank()+1 &&
			slices.Equal(b.Dims[:b.Rank()-1], d.Dims) && in.Shape.Equal(b)
	}
	if !ok {
		return nil, fmt.Errorf("custom-call tridiagonal_solve_perturbed_ffi takes dl, d, du [..., n] and b [..., n, nrhs] of one f32, f64, c64 or c128 type, and returns x in b's shape")
	}
	return &CustomCall{Kind: CallGtsvPerturbed}, nil
}
