package hlo

import (
	"fmt"
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

func TestBufferDonors(t *testing.T) {
	m, err := Parse("a.hlo", "HloModule f, buffer_donor={ (0, {}), (1, {1}) }\nENTRY e {\n  a = f32[2] parameter(0)\n  b = (f32[2], f32[3]) parameter(1)\n  ROOT n = f32[2] negate(a)\n}")
	require.NoError(t, err)
	d, err := m.BufferDonors()
	require.NoError(t, err)
	require.Equal(t, []Alias{{Param: 0, ParamIndex: []int64{}}, {Param: 1, ParamIndex: []int64{1}}}, d)
	for _, c := range []struct{ attr, want string }{
		{"{ (2, {}) }", "parameter 2 does not exist"},
		{"{ (0, {} }", "unterminated"},
		{"{ 0 }", "unterminated"},
		{"(0, {})", "want {"},
	} {
		m, err := Parse("b.hlo", "HloModule f, buffer_donor="+c.attr+"\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}")
		if err != nil {
			require.ErrorContains(t, err, "b.hlo:1:", c.attr)
			continue
		}
		_, err = m.BufferDonors()
		require.ErrorContains(t, err, "b.hlo:1:", c.attr)
		require.ErrorContains(t, err, c.want, c.attr)
	}
}

// TestUnknownCustomCall: a target vkjit cannot run is named with why:
// a host callback, a GPU library's call, or neither.
func TestUnknownCustomCall(t *testing.T) {
	for target, want := range map[string]string{
		"xla_ffi_python_cpu_callback": "a host callback (jax.debug.print",
		"xla_python_gpu_callback":     "a host callback",
		"__cublas$lt$matmul":          "a GPU library's call",
		"cusolver_getrf_ffi":          "a GPU library's call",
		"mystery":                     `custom-call target "mystery" is not supported (vkjit runs JAX's LAPACK calls`,
	} {
		msg := UnknownCustomCall(target)
		require.Contains(t, msg, want, target)
		require.Contains(t, msg, fmt.Sprintf("custom-call target %q is not supported", target))
		require.Contains(t, msg, "gtsv", "the list of what runs")
	}
}
