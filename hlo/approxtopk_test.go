package hlo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestApproxTopKOutputSize: each branch of XLA's
// ApproxTopKReductionOutputSize, worked by hand from its formula. Rank 2
// tiles by 128, rank 1 by 1024; with k = 10 and recall 0.95 the windows
// are M = (1 - 10) / ln 0.95 = 175.46 -> 175, so 10000 elements reduce
// 2^min(floor(log2(10000/175)), ceil(log2(78))) = 2^5 fold: ceil(79 / 32)
// * 128 = 384; 1000 reduce 2^2 fold: ceil(8 / 4) * 128 = 256; rank 1's
// 100000 take M = 1024 windows, 2^6 fold: ceil(98 / 64) * 1024 = 2048.
func TestApproxTopKOutputSize(t *testing.T) {
	for _, c := range []struct {
		n, rank, k int64
		recall     float32
		aggregate  bool
		override   int64
		want       int64
		err        string
	}{
		{1000, 2, 10, 0.95, true, -1, 10, ""},
		{100, 2, 10, 0.95, false, -1, 100, ""},        // short rows stay whole
		{1000, 1, 10, 0.95, false, -1, 1000, ""},      // rank 1's tiling
		{10000, 2, 1, 0.95, false, -1, 128, ""},       // k = 1: the tiling
		{10000, 2, 10, 1, false, -1, 10000, ""},       // recall 1
		{10000, 2, 10, 0.95, false, -1, 384, ""},      // 2^5 fold
		{1000, 2, 10, 0.95, false, -1, 256, ""},       // 2^2 fold
		{100000, 1, 10, 0.95, false, -1, 2048, ""},    // 2^6 fold
		{10000, 2, 10, 0.95, false, 1 << 20, 128, ""}, // a larger logical size folds more, to ceil(log2(78)) = 7: ceil(79/128) * 128
		{300, 2, 10, 0.999, false, -1, 300, ""},       // M = 9 / 0.0010005 = 8995 > n: no fold
		{1000, 2, 10, 0.95, false, 999, 0, "reduction_input_size_override 999"},
		{1000, 2, 10, 0, false, -1, 0, "recall_target 0"},
		{10, 2, 11, 0.95, true, -1, 0, "top_k 11 of 10"},
	} {
		got, err := ApproxTopKOutputSize(c.n, c.rank, c.k, c.recall, c.aggregate, c.override)
		name := fmt.Sprintf("%+v", c)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, name)
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}
}

// TestApproxTopKChecks: what KnownCustomCall refuses of an ApproxTopK,
// each with words that say what is wrong.
func TestApproxTopKChecks(t *testing.T) {
	const cmp = `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=GT
}
`
	call := func(result, cfg string) string {
		return "HloModule m\n" + cmp + `ENTRY e {
  x = f32[4,300] parameter(0)
  ix = s32[4,300] iota(), iota_dimension=1
  init = f32[] constant(-inf)
  none = s32[] constant(-1)
  ROOT t = ` + result + ` custom-call(x, ix, init, none), custom_call_target="ApproxTopK", backend_config={` + cfg + `}, called_computations={cmp}
}`
	}
	for _, c := range []struct{ text, want string }{
		{call("(f32[4,5], s32[4,5])", "reduction_dim = 1, top_k = 5"), ""},
		{call("(f32[4,256], s32[4,256])", "aggregate_to_topk = false, recall_target = 0.9, reduction_dim = 1, top_k = 10"), ""},
		{call("(f32[4,6], s32[4,6])", "reduction_dim = 1, top_k = 5"), "result 0 is f32[4,6] where top_k 5 of 300 along dimension 1 gives f32[4,5]"},
		{call("(f32[4,5], s32[4,5])", "reduction_dim = 2, top_k = 5"), "reduction_dim 2 of a rank 2 operand"},
		{call("(f32[4,5], s32[4,5])", "top_k = 5"), "backend_config has no reduction_dim"},
		{call("(f32[4,5], s32[4,5])", "reduction_dim = 1, top_k = 5, aggregate_to_topk = maybe"), "aggregate_to_topk = maybe"},
		{call("(f32[4,5], s32[4,5], s32[4,5])", "reduction_dim = 1, top_k = 5"), "returns one array per operand, 2, not 3"},
	} {
		m, err := Parse("m", c.text)
		require.NoError(t, err)
		require.NoError(t, Verify(m), c.text)
		got, err := KnownCustomCall(m.Entry.Root)
		if c.want == "" {
			require.NoError(t, err, c.text)
			require.Equal(t, CallApproxTopK, got.Kind)
			require.Equal(t, int64(1), got.Dim)
			continue
		}
		require.ErrorContains(t, err, c.want, c.text)
	}
}
