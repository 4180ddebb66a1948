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

// TestSytrdAgainstLapack: the evaluator's sytrd and hetrd give LAPACK's
// own dsytrd and zhetrd (testdata/sytrd.json, through ctypes: sytrd.py)
// to 1e-13, both triangles, orders 1 to 13: the matrix with the
// tridiagonal form and the reflectors in the read triangle (the other
// as it was), d, e and tau.
func TestSytrdAgainstLapack(t *testing.T) {
	raw, err := os.ReadFile("testdata/sytrd.json")
	require.NoError(t, err)
	var cases []struct {
		N               int
		Complex, Lower  bool
		A, T, D, E, Tau json.RawMessage
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 24)
	for _, c := range cases {
		n := c.N
		ty, rt, call, uplo := "f64", "f64", "lapack_dsytrd_ffi", 85
		et := hlo.F64
		if c.Complex {
			ty, call, et = "c128", "lapack_zhetrd_ffi", hlo.C128
		}
		if c.Lower {
			uplo = 76
		}
		name := fmt.Sprintf("%s[%d,%d] uplo %c", ty, n, n, uplo)
		src := fmt.Sprintf(`HloModule tridiagonal
ENTRY e {
  a = %[1]s[%[3]d,%[3]d] parameter(0)
  ROOT r = (%[1]s[%[3]d,%[3]d], %[2]s[%[3]d], %[2]s[%[4]d], %[1]s[%[4]d], s32[]) custom-call(a), custom_call_target="%[5]s", backend_config={uplo = %[6]d : ui8}
}`, ty, rt, n, n-1, call, uplo)
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Check(m), name)
		all := func(raw json.RawMessage) []complex128 { return values(t, raw, true) }
		a := all(c.A)
		if !c.Complex {
			for i := range a {
				a[i] = complex(real(a[i]), 0)
			}
		}
		out, err := Run(m, lit64(et, []int64{int64(n), int64(n)}, a))
		require.NoError(t, err, name)
		got := out.Leaves()
		for o, want := range [][]complex128{all(c.T), all(c.D), all(c.E), all(c.Tau)} {
			g := complexes(got[o])
			require.Len(t, g, len(want), name)
			for i, w := range want {
				require.LessOrEqual(t, cmplx.Abs(g[i]-w), 1e-13, "%s output %d element %d: %v, LAPACK's %v", name, o, i, g[i], w)
			}
		}
	}
}
