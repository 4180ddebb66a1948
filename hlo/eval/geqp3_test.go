package eval

import (
	"encoding/json"
	"fmt"
	"math/cmplx"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestGeqp3AgainstLapack: the evaluator's geqp3 gives LAPACK's own
// dgeqp3 and zgeqp3 (testdata/geqp3.json, through ctypes: geqp3.py) to
// 1e-13 and its permutation exactly: tall, wide and square matrices, a
// rank-deficient one (a repeated and a zero column: past its rank the
// reflectors are made of roundoff, and only R is compared there) and
// initial pivots that fix columns (as many as rows, and more).
func TestGeqp3AgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/geqp3.json")
	require.NoError(t, err)
	var cases []struct {
		M, N, Rank int
		Complex    bool
		A, R, Tau  json.RawMessage
		JpvtIn     []int32 `json:"jpvt_in"`
		JpvtOut    []int32 `json:"jpvt"`
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 20)
	for _, c := range cases {
		m, n, k := c.M, c.N, min(c.M, c.N)
		ty, call, et := "f64", "lapack_dgeqp3_ffi", hlo.F64
		if c.Complex {
			ty, call, et = "c128", "lapack_zgeqp3_ffi", hlo.C128
		}
		name := fmt.Sprintf("%s[%d,%d] jpvt %v", ty, m, n, c.JpvtIn)
		src := fmt.Sprintf(`HloModule qp3
ENTRY e {
  a = %[1]s[%[2]d,%[3]d] parameter(0)
  p = s32[%[3]d] parameter(1)
  ROOT r = (%[1]s[%[2]d,%[3]d], s32[%[3]d], %[1]s[%[4]d]) custom-call(a, p), custom_call_target="%[5]s"
}`, ty, m, n, k, call)
		mod, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Check(mod), name)
		a := values(t, c.A, true)
		jp := make([]complex128, n)
		for i, v := range c.JpvtIn {
			jp[i] = complex(float64(v), 0)
		}
		jl := literal(hlo.S32, []int64{int64(n)}, jp)
		out, err := Run(mod, lit64(et, []int64{int64(m), int64(n)}, a), jl)
		require.NoError(t, err, name)
		got := out.Leaves()
		gp := complexes(got[1])
		for i, w := range c.JpvtOut {
			require.Equal(t, float64(w), real(gp[i]), "%s jpvt[%d]", name, i)
		}
		for o, want := range [][]complex128{values(t, c.R, true), values(t, c.Tau, true)} {
			g := complexes(got[[]int{0, 2}[o]])
			require.Len(t, g, len(want), name)
			for i, w := range want {
				col, reflector := i, false // tau's index, or r's column and whether below the diagonal
				if o == 0 {
					col, reflector = i%n, i/n > i%n
				}
				if col >= c.Rank && (o == 1 || reflector) {
					continue
				}
				require.LessOrEqual(t, cmplx.Abs(g[i]-w), 1e-13, "%s output %d element %d: %v, LAPACK's %v", name, o, i, g[i], w)
			}
		}
	}
}
