package hlotest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// TestHideNaNSigns: a total-order sort of +NaN and -NaN swaps them; with
// the signs hidden it keeps them in place (a stable sort of equals),
// while -0 still sorts before +0, and NaN after every number.
func TestHideNaNSigns(t *testing.T) {
	m, err := hlo.Parse("sort", `HloModule sort
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  k = f32[5] parameter(0)
  v = s32[5] iota(), iota_dimension=0
  s = (f32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
  ROOT p = s32[5] get-tuple-element(s), index=1
}`)
	require.NoError(t, err)
	keys := []float32{float32(math.NaN()), -float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1}
	data := make([]byte, 0, 20)
	for _, k := range keys {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(k))
	}
	arg := &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, 5), Data: data}
	order := func(m *hlo.Module) []int32 {
		v, err := eval.Run(m, arg)
		require.NoError(t, err)
		d := v.Leaves()[0].Data
		out := make([]int32, 5)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(d[4*i:]))
		}
		return out
	}
	require.Equal(t, []int32{1, 3, 2, 4, 0}, order(m))
	hidden, err := HideNaNSigns(m)
	require.NoError(t, err)
	require.Equal(t, []int32{3, 2, 4, 0, 1}, order(hidden))
}
