package lower

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// simplified parses text and returns its entry after inlineCalls and
// simplify, and the module as parsed (which they must leave alone).
func simplified(t *testing.T, text string) (*hlo.Computation, *hlo.Module) {
	t.Helper()
	m, err := hlo.Parse("simplify.hlo", text)
	require.NoError(t, err)
	s := &state{mod: m}
	require.NoError(t, inlineCalls(s))
	require.NoError(t, simplify(s))
	return s.mod.Entry, m
}

// TestSimplifications: each rule, and a near miss that must stay.
func TestSimplifications(t *testing.T) {
	cases := []struct {
		name, body, root string // root: the root's operand 0 after simplify, as op(operand ops)
	}{
		{"reshape to the same dims", "r = f32[4,4] reshape(x)\n  ROOT n = f32[4,4] negate(r)", "parameter"},
		{"reshape to other dims", "r = f32[16] reshape(x)\n  r2 = f32[2,8] reshape(r)\n  ROOT n = f32[2,8] negate(r2)", "reshape(parameter)"},
		{"reshape back", "r = f32[16] reshape(x)\n  r2 = f32[4,4] reshape(r)\n  ROOT n = f32[4,4] negate(r2)", "parameter"},
		{"identity broadcast", "b = f32[4,4] broadcast(x), dimensions={0,1}\n  ROOT n = f32[4,4] negate(b)", "parameter"},
		{"transposing broadcast", "b = f32[4,4] broadcast(x), dimensions={1,0}\n  ROOT n = f32[4,4] negate(b)", "broadcast(parameter)"},
		{"unary between reshapes", "r = f32[16] reshape(x)\n  c = f64[16] convert(r)\n  r2 = f64[4,4] reshape(c)\n  ROOT n = f64[4,4] negate(r2)", "convert(parameter)"},
		{"unary between other reshapes", "r = f32[16] reshape(x)\n  c = f64[16] convert(r)\n  r2 = f64[2,8] reshape(c)\n  ROOT n = f64[2,8] negate(r2)", "reshape(convert(reshape(parameter)))"},
		{"elementwise ops between reshapes", "r = f32[16] reshape(x)\n  c = f32[] constant(2)\n  b = f32[16] broadcast(c), dimensions={}\n  d = f32[16] divide(r, b)\n  cv = f64[16] convert(d)\n  r2 = f64[4,4] reshape(cv)\n  ROOT n = f64[4,4] negate(r2)", "convert(divide(parameter broadcast(constant)))"},
		{"a constant between reshapes", "c = f32[] constant(2)\n  b = f32[16] broadcast(c), dimensions={}\n  e = f32[16] exponential(b)\n  r2 = f32[4,4] reshape(e)\n  ROOT n = f32[4,4] add(r2, x)", "reshape(exponential(broadcast(constant)))"},
		{"max with -inf", "i = f32[] constant(-inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(b, x)\n  ROOT n = f32[4,4] negate(mx)", "parameter"},
		{"min with +inf", "i = f32[] constant(inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mn = f32[4,4] minimum(x, b)\n  ROOT n = f32[4,4] negate(mn)", "parameter"},
		{"max with +inf", "i = f32[] constant(inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(x, b)\n  ROOT n = f32[4,4] negate(mx)", "maximum(parameter broadcast(constant))"},
		{"max with 0", "i = f32[] constant(0)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(x, b)\n  ROOT n = f32[4,4] negate(mx)", "maximum(parameter broadcast(constant))"},
	}
	for _, c := range cases {
		text := "HloModule m\nENTRY e {\n  x = f32[4,4] parameter(0)\n  " + c.body + "\n}"
		entry, user := simplified(t, text)
		var form func(x *hlo.Instruction, depth int) string
		form = func(x *hlo.Instruction, depth int) string {
			if len(x.Operands) == 0 || depth == 0 {
				return x.Op.String()
			}
			var ops []string
			for _, o := range x.Operands {
				ops = append(ops, form(o, depth-1))
			}
			return x.Op.String() + "(" + strings.Join(ops, " ") + ")"
		}
		require.Equal(t, c.root, form(entry.Root.Operands[0], 3), c.name)
		require.Equal(t, strings.Count(text, " = "), len(user.Entry.Instructions), "%s: the user's module is left as it was", c.name)
	}
}

// TestJaxSoftmax: jax.nn.softmax as JAX writes it (keepdims max and sum:
// max(reduce, -inf), reshapes to [n, 1] and back, identity broadcasts)
// compiles to the one-pass row kernel of the hand-written softmax.
func TestJaxSoftmax(t *testing.T) {
	src, err := os.ReadFile("testdata/jax_softmax.hlo")
	require.NoError(t, err)
	text := string(src)
	entry, _ := simplified(t, text)
	var sub *hlo.Instruction
	for _, in := range entry.Instructions {
		require.NotEqual(t, hlo.OpReshape, in.Op, in.Name)
		require.NotEqual(t, hlo.OpMaximum, in.Op, in.Name)
		if in.Op == hlo.OpSubtract {
			sub = in
		}
	}
	require.True(t, kgen.BelowRowMax(sub), "exp(x - max) seen as such")
	cpu := desktop
	cpu.CPU = true
	m, err := hlo.Parse("jax_softmax", text)
	require.NoError(t, err)
	p, err := Compile(m, cpu, Options{})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1)
	require.Equal(t, "row_divide_f32_vec4_online", p.Kernels[0].Name, "the plan of the hand-written softmax (TestRowKernelPlans)")
}

// TestJaxLayerNorm: a layer norm as JAX writes it (the row mean and
// variance computed in [1, n, 1] between reshapes) compiles to one row
// kernel.
func TestJaxLayerNorm(t *testing.T) {
	src, err := os.ReadFile("testdata/jax_layer_norm.hlo")
	require.NoError(t, err)
	cpu := desktop
	cpu.CPU = true
	m, err := hlo.Parse("jax_layer_norm", string(src))
	require.NoError(t, err)
	p, err := Compile(m, cpu, Options{})
	require.NoError(t, err)
	require.Len(t, p.Kernels, 1)
	require.True(t, strings.HasPrefix(p.Kernels[0].Name, "row_divide_bf16"), p.Kernels[0].Name)
}
