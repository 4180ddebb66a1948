package vkjit_test

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// TestCsrMatmul runs jaxlib's cpu_csr_sparse_dense_ffi (a BCSR matrix
// times a dense one on JAX's CPU backend) on the device: matrices with
// empty rows (the first and last too), a dense row, a vector and a
// matrix on the right, f32, f64, c64 and s32 with s32 and s64 indices, and
// one of 40,000 nonzeros; against the evaluator bit for bit (both sum a
// row's products in its order from zero, as Eigen does) and against the
// dense product of the same matrix in float64 within rounding.
func TestCsrMatmul(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(41, 42))
	list := func(v []int64) string { return strings.Trim(strings.ReplaceAll(fmt.Sprint(v), " ", ", "), "[]") }
	for _, c := range []struct {
		ty, it            string
		rows, cols, cols2 int64 // cols2 0: a vector on the right
		density           float64
	}{
		{"f32", "s32", 6, 5, 3, 0.4},
		{"f64", "s64", 7, 4, 0, 0.5},
		{"c64", "s32", 5, 6, 2, 0.5},
		{"f32", "s64", 400, 300, 4, 1.0 / 3},
		{"s32", "s32", 9, 8, 3, 0.5},
	} {
		// A random pattern; row 0 and the last row empty, row 1 dense.
		var indptr, indices []int64
		indptr = append(indptr, 0)
		for r := range c.rows {
			for j := range c.cols {
				if r != 0 && r != c.rows-1 && (r == 1 || rng.Float64() < c.density) {
					indices = append(indices, j)
				}
			}
			indptr = append(indptr, int64(len(indices)))
		}
		nnz := int64(len(indices))
		rhsDims, outDims := []int64{c.cols}, []int64{c.rows}
		if c.cols2 > 0 {
			rhsDims, outDims = append(rhsDims, c.cols2), append(outDims, c.cols2)
		}
		dims := func(d []int64) string { return strings.ReplaceAll(list(d), " ", "") }
		src := fmt.Sprintf(`HloModule csr
ENTRY e {
  data = %[1]s[%[2]d] parameter(0)
  indptr = %[3]s[%[4]d] constant({%[5]s})
  indices = %[3]s[%[2]d] constant({%[6]s})
  x = %[1]s[%[7]s] parameter(1)
  ROOT y = %[1]s[%[8]s] custom-call(data, indptr, indices, x), custom_call_target="cpu_csr_sparse_dense_ffi"
}`, c.ty, nnz, c.it, c.rows+1, list(indptr), list(indices), dims(rhsDims), dims(outDims))
		name := fmt.Sprintf("csr_%s_%s_%dx%d_nnz%d", c.ty, c.it, c.rows, c.cols, nnz)
		data, x := randomArray(rng, c.ty, []int64{nnz}), randomArray(rng, c.ty, rhsDims)
		if c.ty == "s32" {
			ints := func(d ...int64) *vkjit.Tensor {
				n := int64(1)
				for _, k := range d {
					n *= k
				}
				v := make([]complex128, n)
				for i := range v {
					v[i] = complex(float64(rng.IntN(2001)-1000), 0)
				}
				return tensorOf(c.ty, d, v)
			}
			data, x = ints(nnz), ints(rhsDims...)
		}
		res, want := deviceAndEval(t, name, src, data, x)
		w := want.Leaves()[0]
		wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
		require.Equal(t, wt.Data, res[0].Data, "%s: device against evaluator", name)
		n := max(c.cols2, 1)
		tol := 1e-5
		if c.ty == "f64" {
			tol = 1e-13
		}
		for r := range c.rows {
			for j := range n {
				var dense complex128
				for p := indptr[r]; p < indptr[r+1]; p++ {
					dense += valueAt(data, p) * valueAt(x, indices[p]*n+j)
				}
				require.LessOrEqual(t, cmplx.Abs(valueAt(res[0], r*n+j)-dense), tol*float64(c.cols), "%s: [%d, %d]", name, r, j)
			}
		}
	}
}
