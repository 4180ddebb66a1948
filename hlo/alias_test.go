package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInputOutputAlias(t *testing.T) {
	m, err := Parse("a.hlo", "HloModule f, input_output_alias={ {0}: (1, {}, may-alias), {1, 2}: (0, {3}, must-alias), {}: (0, {}) }\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT t = (f32[2], f32[2]) tuple(a, b)\n}")
	require.NoError(t, err)
	al, err := m.InputOutputAlias()
	require.NoError(t, err)
	require.Equal(t, []Alias{
		{Output: []int64{0}, Param: 1, ParamIndex: []int64{}},
		{Output: []int64{1, 2}, Param: 0, ParamIndex: []int64{3}, Must: true},
		{Output: []int64{}, Param: 0, ParamIndex: []int64{}},
	}, al)
	m, err = Parse("b.hlo", "HloModule f, input_output_alias={ {0}: (7, {}, may-alias) }\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}")
	require.NoError(t, err)
	_, err = m.InputOutputAlias()
	require.ErrorContains(t, err, "b.hlo:1:")
	require.ErrorContains(t, err, "parameter 7 does not exist")
}
