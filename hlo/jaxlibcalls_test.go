package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCsrMatmulChecks: what KnownCustomCall refuses of jaxlib's
// cpu_csr_sparse_dense_ffi, each with words that say what is wrong.
func TestCsrMatmulChecks(t *testing.T) {
	call := func(data, indptr, indices, x, out string) string {
		return `HloModule m
ENTRY e {
  data = ` + data + ` parameter(0)
  indptr = ` + indptr + ` parameter(1)
  indices = ` + indices + ` parameter(2)
  x = ` + x + ` parameter(3)
  ROOT y = ` + out + ` custom-call(data, indptr, indices, x), custom_call_target="cpu_csr_sparse_dense_ffi"
}`
	}
	for _, c := range []struct{ text, want string }{
		{call("f32[7]", "s32[5]", "s32[7]", "f32[6,3]", "f32[4,3]"), ""},
		{call("c128[7]", "s64[5]", "s64[7]", "c128[6]", "c128[4]"), ""},
		{call("f32[7]", "s32[5]", "s32[7]", "f32[6,3]", "f32[5,3]"), "returns f32[4,3] for 4 rows, not f32[5,3]"},
		{call("f32[7]", "s32[5]", "s64[7]", "f32[6,3]", "f32[4,3]"), "indptr and indices of one type"},
		{call("f16[7]", "s32[5]", "s32[7]", "f16[6,3]", "f16[4,3]"), "not f16"},
		{call("f32[7]", "s32[5]", "s32[6]", "f32[6,3]", "f32[4,3]"), "data and indices [nnz]"},
		{call("f32[7]", "s32[5]", "s32[7]", "f64[6,3]", "f32[4,3]"), "multiplies by a f32 vector or matrix, not f64[6,3]"},
		{call("f32[7]", "s32[5]", "s32[7]", "f32[0,3]", "f32[4,3]"), "which has no rows"},
	} {
		m, err := Parse("m", c.text)
		require.NoError(t, err)
		got, err := KnownCustomCall(m.Entry.Root)
		if c.want == "" {
			require.NoError(t, err, c.text)
			require.Equal(t, CallCsrMatmul, got.Kind)
			continue
		}
		require.ErrorContains(t, err, c.want, c.text)
	}
}
