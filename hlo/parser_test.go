package hlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The three printing styles XLA has used, for the same computation.
var styles = map[string]string{
	"current": `HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}

ENTRY main.4 {
  a.1 = f32[2]{0} parameter(0)
  b.2 = f32[2]{0} parameter(1)
  ROOT add.3 = f32[2]{0} add(a.1, b.2), metadata={op_name="jit(f)/add" source_file="f.py" source_line=3}
}
`,
	"sigils": `HloModule m

ENTRY %main.4 (a.1: f32[2], b.2: f32[2]) -> f32[2] {
  %a.1 = f32[2]{0} parameter(0)
  %b.2 = f32[2]{0} parameter(1)
  ROOT %add.3 = f32[2]{0} add(%a.1, %b.2)
}
`,
	"typed operands": `HloModule m:

%main.4 (a.1: f32[2], b.2: f32[2]) -> f32[2] {
  %a.1 = f32[2]{0} parameter(0)
  %b.2 = f32[2]{0} parameter(1)
  ROOT %add.3 = f32[2]{0} add(f32[2]{0} %a.1, f32[2]{0} %b.2)
}
`,
}

func TestStyles(t *testing.T) {
	for name, src := range styles {
		m, err := Parse(name, src)
		require.NoError(t, err, name)
		require.NoError(t, Verify(m), name)
		require.Equal(t, "m", m.Name)
		e := m.Entry
		require.Equal(t, "main.4", e.Name)
		require.Len(t, e.Params, 2)
		require.Equal(t, OpAdd, e.Root.Op)
		require.Equal(t, []*Instruction{e.Params[0], e.Params[1]}, e.Root.Operands)
		require.Equal(t, "f32[2]{0}", e.Root.Shape.String())
	}
}

func TestShapesAndLiterals(t *testing.T) {
	m, err := Parse("t.hlo", `HloModule m
ENTRY e {
  c = f32[2,3]{1,0} constant({ {1, 2.5, -inf}, {nan, 1e-3, -0} })
  p = pred[2] constant({true, false})
  s = s32[] constant(-7)
  u = u64[2] constant({18446744073709551615, 0})
  tiled = f32[8,128]{1,0:T(8,128)} parameter(0)
  dyn = s32[<=4,2] parameter(1)
  /* a comment */ tok = token[] after-all()
  ROOT t = (f32[2,3], pred[2], (s32[], u64[2])) tuple(c, p, s, u) // trailing
}`)
	require.NoError(t, err)
	in := m.Entry.Instructions
	require.Equal(t, int64(24), int64(len(in[0].Literal.Data)))
	require.Equal(t, []byte{1, 0}, in[1].Literal.Data)
	require.Equal(t, []byte{0xf9, 0xff, 0xff, 0xff}, in[2].Literal.Data)
	require.Equal(t, "T(8,128)", in[4].Shape.Layout.Extra)
	require.Equal(t, []int64{1, 0}, in[4].Shape.Layout.MinorToMajor)
	require.Equal(t, []bool{true, false}, in[5].Shape.Dynamic)
	require.Equal(t, "s32[<=4,2]", in[5].Shape.String())
	require.Equal(t, Token, in[6].Shape.Elem)
	require.Equal(t, "(f32[2,3], pred[2], (s32[], u64[2]))", m.Entry.Root.Shape.String())
}

func TestMultiModuleFile(t *testing.T) {
	src := "HloModule a\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n// -----\nHloModule b\nENTRY e {\n  ROOT x = f32[] parameter(0)\n  oops\n}\n"
	_, err := ParseModules("multi.hlo", src)
	require.ErrorContains(t, err, "multi.hlo:10:1: expected \"=\"", "positions count lines of the whole file")
	mods, err := ParseModules("multi.hlo", strings.Replace(src, "  oops\n", "", 1))
	require.NoError(t, err)
	require.Len(t, mods, 2)
	require.Equal(t, "b", mods[1].Name)
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] frobnicate(x)\n}", "t.hlo:4:19: unknown opcode \"frobnicate\""},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x, z)\n}", "t.hlo:4:26: y: unknown operand \"z\""},
		{"HloModule m\nENTRY e {\n  x = q32[2] parameter(0)\n}", "t.hlo:3:7: unknown element type \"q32\""},
		{"HloModule m\nENTRY e {\n  x = f32[2] constant({1, 2, 3})\n}", "t.hlo:3:23: x: constant of shape f32[2] has 3 values, want 2"},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n", "expected instruction name, found end of input"},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0), metadata={op_name=\"a}\n}", "unterminated string"},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  x = f32[2] parameter(1)\n}", "t.hlo:4:3: instruction \"x\" defined twice"},
		{"", "no HLO module"},
		{"HloModule m\nENTRY e {\n  x = s32[] constant(99999999999)\n}", "bad s32 literal"},
		{"HloModule m\nENTRY e {\n  ROOT x = f32[2] add(a, b), to_apply=nowhere\n}", "unknown"},
		// A parameter's number past the parameters is an error before it
		// sizes anything (4294967295 asked for a 32 GB table).
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(4294967295)\n}", "t.hlo:4:3: y (parameter): parameter number 4294967295, but computation \"e\" has 2 parameters"},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(2)\n}", "t.hlo:4:3: y (parameter): parameter number 2, but"},
		{"HloModule m\nENTRY e {\n  x = f32[2] parameter(1)\n  y = f32[2] parameter(1)\n}", "parameter number 1 used twice"},
		{"HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf17_bf16_f32\n}", "t.hlo:4:"},
		{"HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf17_bf16_f32\n}", "unknown dot algorithm \"dot_bf17_bf16_f32\" (XLA's: dot_any_f8_any_f8_f32"},
	} {
		_, err := Parse("t.hlo", tc.src)
		require.Error(t, err, tc.src)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestVerifyErrors(t *testing.T) {
	m, err := Parse("v.hlo", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = s32[2] parameter(1)\n  ROOT z = f32[2] add(x, y)\n}")
	require.NoError(t, err)
	require.ErrorContains(t, Verify(m), "v.hlo:5:3: z (add): operands x and y differ")
	m, err = Parse("v.hlo", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT z = f32[3] negate(x)\n}")
	require.NoError(t, err)
	require.ErrorContains(t, Verify(m), "shape is f32[3], but its operands give f32[2]")
}

func TestInferredRootShape(t *testing.T) {
	m, err := Parse("t.hlo", "HloModule m\nENTRY e {\n  p0 = f64[3] parameter(0)\n  p1 = f64[3] parameter(1)\n  ROOT out = add(p0, p1)\n}")
	require.NoError(t, err)
	require.Equal(t, "out = add(p0, p1)", m.Entry.Root.String(), "printed as written until verified")
	require.NoError(t, Verify(m))
	require.Equal(t, "f64[3]", m.Entry.Root.Shape.String())
	require.Equal(t, "out = f64[3] add(p0, p1)", m.Entry.Root.String())

	m, err = Parse("t.hlo", "HloModule m\nENTRY e {\n  p0 = f64[3] parameter(0)\n  ROOT out = reshape(p0)\n}")
	require.NoError(t, err)
	require.ErrorContains(t, Verify(m), "t.hlo:4:3: out (reshape): reshape needs its result shape")
}

// TestWindowString: a window printed by Window.String reads back as the
// same window, the fields at their defaults left out.
func TestWindowString(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"{size=3x3}", "{size=3x3}"},
		{"{size=3x3 stride=1x1 pad=0_0x0_0 lhs_dilate=1x1}", "{size=3x3}"},
		{"{size=3x2 stride=2x1 pad=1_-2x0_0 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}", "{size=3x2 stride=2x1 pad=1_-2x0_0 lhs_dilate=1x2 rhs_dilate=3x1 rhs_reversal=0x1}"},
		{"{size=2 stride=0}", "{size=2 stride=0}"},
		{"{}", "{}"},
	} {
		w, err := parseWindow(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.out, w.String(), c.in)
		back, err := parseWindow(w.String())
		require.NoError(t, err, c.in)
		require.Equal(t, w, back, c.in)
	}
}
