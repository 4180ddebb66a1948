package hlotest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

func TestULPs(t *testing.T) {
	one32 := float64(math.Nextafter32(1, 2))
	require.Equal(t, int64(1), ULPs(hlo.F32, 1, one32))
	require.Equal(t, int64(2), ULPs(hlo.F32, float64(math.Nextafter32(1, 0)), one32))
	require.Equal(t, int64(1), ULPs(hlo.F64, 1, math.Nextafter(1, 2)))
	require.Equal(t, int64(0), ULPs(hlo.F32, 0, math.Copysign(0, -1)))
	require.Equal(t, int64(1<<24), ULPs(hlo.F32, -0x1p-126, 0x1p-126), "the denormals lie between")
	require.Equal(t, int64(0), ULPs(hlo.F64, math.NaN(), math.NaN()))
	require.Equal(t, int64(math.MaxInt64), ULPs(hlo.F64, 1, math.NaN()))
	require.Greater(t, ULPs(hlo.F32, math.Inf(1), math.MaxFloat32), int64(0))
}

func TestCasesParseAndVerify(t *testing.T) {
	cases := ElementwiseCases(3)
	require.Greater(t, len(cases), 250)
	for _, c := range cases {
		m, err := hlo.Parse(c.Name, c.Text)
		require.NoError(t, err, c.Text)
		require.NoError(t, hlo.Verify(m), c.Text)
		args := Inputs(m, 1)
		require.Len(t, args, len(m.Entry.Params))
		for i, a := range args {
			require.Equal(t, m.Entry.Params[i].Shape.ByteSize(), int64(len(a.Data)))
		}
	}
}
