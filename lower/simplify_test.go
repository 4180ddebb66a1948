package lower

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
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

// form prints x as op(operand ops), depth levels down.
func form(x *hlo.Instruction, depth int) string {
	if len(x.Operands) == 0 || depth == 0 {
		return x.Op.String()
	}
	var ops []string
	for _, o := range x.Operands {
		ops = append(ops, form(o, depth-1))
	}
	return x.Op.String() + "(" + strings.Join(ops, " ") + ")"
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
		{"a constant between reshapes, folded", "c = f32[] constant(2)\n  b = f32[16] broadcast(c), dimensions={}\n  e = f32[16] exponential(b)\n  r2 = f32[4,4] reshape(e)\n  ROOT n = f32[4,4] add(r2, x)", "reshape(broadcast(constant))"},
		{"an op of constants", "c = f32[2,2] constant({{1,2},{3,4}})\n  s = f32[2,2] subtract(c, c)\n  ROOT n = f32[2,2] add(s, x)", "constant"},
		{"a slice of the whole array", "s = f32[4,4] slice(x), slice={[0:4], [0:4]}\n  ROOT n = f32[4,4] negate(s)", "parameter"},
		{"a slice of part of it", "s = f32[4,2] slice(x), slice={[0:4], [0:4:2]}\n  ROOT n = f32[4,2] negate(s)", "slice(parameter)"},
		{"a slice of a constant", "c = f32[4,8] constant({...})\n  s = f32[4,4] slice(c), slice={[0:4], [0:4]}\n  ROOT n = f32[4,4] add(s, x)", "slice(constant)"},
		{"an op of broadcast constants", "c = f32[] constant(3)\n  b = f32[4,4] broadcast(c), dimensions={}\n  s = f32[4,4] subtract(b, b)\n  ROOT n = f32[4,4] add(s, x)", "broadcast(constant)"},
		{"a pad of a constant, which would grow", "c = f32[2,2] constant({{1,2},{3,4}})\n  z = f32[] constant(0)\n  p = f32[4,4] pad(c, z), padding=1_1x1_1\n  ROOT n = f32[4,4] add(p, x)", "pad(constant constant)"},
		{"max with -inf", "i = f32[] constant(-inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(b, x)\n  ROOT n = f32[4,4] negate(mx)", "parameter"},
		{"min with +inf", "i = f32[] constant(inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mn = f32[4,4] minimum(x, b)\n  ROOT n = f32[4,4] negate(mn)", "parameter"},
		{"max with +inf", "i = f32[] constant(inf)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(x, b)\n  ROOT n = f32[4,4] negate(mx)", "maximum(parameter broadcast(constant))"},
		{"max with 0", "i = f32[] constant(0)\n  b = f32[4,4] broadcast(i), dimensions={}\n  mx = f32[4,4] maximum(x, b)\n  ROOT n = f32[4,4] negate(mx)", "maximum(parameter broadcast(constant))"},
	}
	for _, c := range cases {
		text := "HloModule m\nENTRY e {\n  x = f32[4,4] parameter(0)\n  " + c.body + "\n}"
		entry, user := simplified(t, text)
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

// TestDotOfBroadcasts: a sum of products of broadcasts (GoMLX's gradient
// of a dot) becomes a dot where every dimension of the product comes
// from an operand and every summed one from both, with a transpose to
// the reduce's order; near misses stay. The rewritten entry computes
// what the original did (the evaluator on both).
func TestDotOfBroadcasts(t *testing.T) {
	const sum = "add {\n  a = T[] parameter(0)\n  b = T[] parameter(1)\n  ROOT s = T[] add(a, b)\n}\n"
	cases := []struct {
		name, typ, params, body, root string
	}{
		{"weight gradient (sum over the batch)", "f32", "x = T[6,5] parameter(0)\n  g = T[6,4] parameter(1)",
			"bx = T[6,5,4] broadcast(x), dimensions={0,1}\n  bg = T[6,5,4] broadcast(g), dimensions={0,2}\n  m = T[6,5,4] multiply(bx, bg)\n  z = T[] constant(0)\n  r = T[5,4] reduce(m, z), dimensions={0}, to_apply=add",
			"dot(parameter parameter)"},
		{"input gradient (sum over the outputs)", "f32", "g = T[6,4] parameter(0)\n  w = T[5,4] parameter(1)",
			"bg = T[6,5,4] broadcast(g), dimensions={0,2}\n  bw = T[6,5,4] broadcast(w), dimensions={1,2}\n  m = T[6,5,4] multiply(bg, bw)\n  z = T[] constant(0)\n  r = T[6,5] reduce(m, z), dimensions={2}, to_apply=add",
			"dot(parameter parameter)"},
		{"b's dimensions first", "f64", "a = T[3,4] parameter(0)\n  b = T[2,4] parameter(1)",
			"ba = T[2,3,4] broadcast(a), dimensions={1,2}\n  bb = T[2,3,4] broadcast(b), dimensions={0,2}\n  m = T[2,3,4] multiply(ba, bb)\n  z = T[] constant(0)\n  r = T[2,3] reduce(m, z), dimensions={2}, to_apply=add",
			"transpose(dot(parameter parameter))"},
		{"batched", "s32", "a = T[2,3,4] parameter(0)\n  b = T[2,4,5] parameter(1)",
			"ba = T[2,3,4,5] broadcast(a), dimensions={0,1,2}\n  bb = T[2,3,4,5] broadcast(b), dimensions={0,2,3}\n  m = T[2,3,4,5] multiply(ba, bb)\n  z = T[] constant(0)\n  r = T[2,3,5] reduce(m, z), dimensions={2}, to_apply=add",
			"dot(parameter parameter)"},
		{"outer product, nothing summed both have", "f32", "a = T[3] parameter(0)\n  b = T[4] parameter(1)",
			"ba = T[3,4] broadcast(a), dimensions={0}\n  bb = T[3,4] broadcast(b), dimensions={1}\n  m = T[3,4] multiply(ba, bb)\n  z = T[] constant(0)\n  r = T[3] reduce(m, z), dimensions={1}, to_apply=add",
			"reduce(multiply(broadcast broadcast) constant)"},
		{"bf16 sums stay reduces", "bf16", "g = T[6,4] parameter(0)\n  w = T[5,4] parameter(1)",
			"bg = T[6,5,4] broadcast(g), dimensions={0,2}\n  bw = T[6,5,4] broadcast(w), dimensions={1,2}\n  m = T[6,5,4] multiply(bg, bw)\n  z = T[] constant(0)\n  r = T[6,5] reduce(m, z), dimensions={2}, to_apply=add",
			"reduce(multiply(broadcast broadcast) constant)"},
		{"an init value other than 0", "f32", "g = T[6,4] parameter(0)\n  w = T[5,4] parameter(1)",
			"bg = T[6,5,4] broadcast(g), dimensions={0,2}\n  bw = T[6,5,4] broadcast(w), dimensions={1,2}\n  m = T[6,5,4] multiply(bg, bw)\n  z = T[] constant(1)\n  r = T[6,5] reduce(m, z), dimensions={2}, to_apply=add",
			"reduce(multiply(broadcast broadcast) constant)"},
		{"a size-1 dimension broadcast wider", "f32", "g = T[6,1] parameter(0)\n  w = T[5,4] parameter(1)",
			"bg = T[6,5,4] broadcast(g), dimensions={0,2}\n  bw = T[6,5,4] broadcast(w), dimensions={1,2}\n  m = T[6,5,4] multiply(bg, bw)\n  z = T[] constant(0)\n  r = T[6,5] reduce(m, z), dimensions={2}, to_apply=add",
			"reduce(multiply(broadcast broadcast) constant)"},
		{"a product no larger than an operand (a row's dot with itself)", "f32", "x = T[6,4] parameter(0)\n  w = T[4] parameter(1)",
			"bw = T[6,4] broadcast(w), dimensions={1}\n  m = T[6,4] multiply(x, bw)\n  z = T[] constant(0)\n  r = T[6] reduce(m, z), dimensions={1}, to_apply=add",
			"reduce(multiply(parameter broadcast) constant)"},
	}
	for _, c := range cases {
		// The root is not simplified: the reduce goes into a tuple.
		shape := c.body[strings.LastIndex(c.body, "r = ")+4 : strings.LastIndex(c.body, " reduce(")]
		body := c.body + "\n  ROOT t = (" + shape + ") tuple(r)"
		text := strings.ReplaceAll("HloModule m\n"+sum+"ENTRY e {\n  "+c.params+"\n  "+body+"\n}", "T[", c.typ+"[")
		entry, user := simplified(t, text)
		require.Equal(t, c.root, form(entry.Root.Operands[0], 2), c.name)
		rewritten := &hlo.Module{Name: "m", Computations: []*hlo.Computation{user.Computations[0], entry}, Entry: entry}
		require.NoError(t, hlo.Verify(rewritten), c.name)
		args := hlotest.SmallIntInputs(user, 1)
		want, err := eval.Run(user, args...)
		require.NoError(t, err, c.name)
		got, err := eval.Run(rewritten, args...)
		require.NoError(t, err, c.name)
		require.Equal(t, want.Leaves()[0].Data, got.Leaves()[0].Data, c.name)
	}
}

// TestSimplifyCalled: the computations the entry calls are simplified
// in copies (a device loop's body is compiled as it stands), a
// computation where nothing applies is kept as it is, and the user's
// module is left alone.
func TestSimplifyCalled(t *testing.T) {
	src, err := os.ReadFile("../testdata/fuzz/loop_body_fold.hlo")
	require.NoError(t, err)
	text := strings.Replace(string(src), "ENTRY main {", `sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {`, 1)
	text = strings.Replace(text, "ROOT r = f32[8] get-tuple-element(w), index=1", `r = f32[8] get-tuple-element(w), index=1
  zero = f32[] constant(0)
  ROOT total = f32[] reduce(r, zero), dimensions={0}, to_apply=sum`, 1)
	entry, user := simplified(t, text)
	var w, red *hlo.Instruction
	for _, in := range entry.Instructions {
		switch in.Op {
		case hlo.OpWhile:
			w = in
		case hlo.OpReduce:
			red = in
		}
	}
	require.NotNil(t, w)
	_, body := w.WhileComputations()
	_, userBody := user.Entry.Instructions[3].WhileComputations()
	require.NotSame(t, userBody, body, "the body is copied")
	for _, in := range body.Instructions {
		require.NotEqual(t, hlo.OpSubtract, in.Op, "c - c is folded in the body")
	}
	require.Equal(t, "multiply(broadcast(constant) get-tuple-element(parameter))", form(body.Root.Operands[1], 3))
	found := false
	for _, in := range userBody.Instructions {
		found = found || in.Op == hlo.OpSubtract
	}
	require.True(t, found, "the user's body keeps its subtract")
	require.Same(t, user.Entry.Root.Called[0], red.Called[0], "a reducer where nothing applies is not copied")
}
