package lower

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// TestComplexLowering compiles a module that uses complex numbers in
// every way lowerComplex rewrites (arithmetic, functions, structure,
// data movement, dot, reductions, sort, a while loop's state) with the
// verifier run after the pass (TestMain): no buffer holds a complex
// type, every kernel validates, and the program's API keeps the entry's
// complex shapes. The device tests in the root package check the values.
func TestComplexLowering(t *testing.T) {
	text := `HloModule m
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
mul {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] multiply(a, b)
}
less {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ra = f32[] real(a)
  rb = f32[] real(b)
  ROOT lt = pred[] compare(ra, rb), direction=LT
}
cond {
  s = (s32[], c64[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], c64[4,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = c64[4,4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = c64[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = c64[4,4] exponential(y)
  q = c64[4,4] divide(e, x)
  ROOT t = (s32[], c64[4,4]) tuple(j, q)
}
ENTRY e {
  x = c64[4,4] parameter(0)
  r = f32[4,4] parameter(1)
  c = c64[] constant((1, -2))
  cb = c64[4,4] broadcast(c), dimensions={}
  z = c64[4,4] complex(r, r)
  m = c64[4,4] multiply(x, z)
  s = c64[4,4] sqrt(m)
  l = c64[4,4] log-plus-one(s)
  t = c64[4,4] tanh(l)
  p = c64[4,4] power(t, cb)
  a = f32[4,4] abs(p)
  zero = c64[] constant((0, 0))
  one = c64[] constant((1, 0))
  sum = c64[4] reduce(p, zero), dimensions={1}, to_apply=add
  prod = c64[4] reduce(p, one), dimensions={1}, to_apply=mul
  tr = c64[4,4] transpose(x), dimensions={1,0}
  sl = c64[2,4] slice(tr), slice={[0:2], [0:4]}
  srt = c64[4,4] sort(x), dimensions={1}, to_apply=less
  i0 = s32[] constant(0)
  st = (s32[], c64[4,4]) tuple(i0, srt)
  w = (s32[], c64[4,4]) while(st), condition=cond, body=body
  wx = c64[4,4] get-tuple-element(w), index=1
  eq = pred[4,4] compare(wx, x), direction=NE
  ROOT out = (f32[4,4], c64[4], c64[4], c64[2,4], pred[4,4], c64[4,4]) tuple(a, sum, prod, sl, eq, wx)
}`
	for _, opts := range []Options{{}, {NoFuse: true, NoReuse: true}} {
		m, err := hlo.Parse("test.hlo", text)
		require.NoError(t, err)
		prog, err := Compile(m, DefaultTarget, opts)
		require.NoError(t, err)
		require.Equal(t, []hlo.Shape{hlo.ArrayShape(hlo.C64, 4, 4), hlo.ArrayShape(hlo.F32, 4, 4)}, prog.ParamShapes)
		require.Equal(t, hlo.C64, prog.OutputShapes[1].Elem)
		var check func(p *Program)
		check = func(p *Program) {
			for _, b := range p.Buffers {
				_, isComplex := b.Shape.Elem.ComplexPart()
				require.False(t, isComplex, "buffer %s holds %s", b.Name, b.Shape)
			}
			for _, k := range p.Kernels {
				require.NoError(t, spirv.Validate(k.Words), k.Name)
			}
			for _, s := range p.Subs {
				check(s)
			}
		}
		check(prog)
		// The c64[4,4] parameter's buffer is its memory form: the same
		// 128 bytes as interleaved pairs.
		require.Equal(t, int64(128), prog.Buffers[prog.Params[0]].Size)
	}
	// What the rewrite cannot do is named.
	_, err := compileText(t, "HloModule m\nENTRY e {\n  a = c64[4] parameter(0)\n  ROOT f = c64[4] custom-call(a), custom_call_target=\"x\"\n}")
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), `custom-call target "x" is not supported`), "%v", err)
}

// TestSubByteWidening: a module of s4 and u4 values (arithmetic, a
// reduction, a while loop, constants) compiles with the verifier run
// after the pass; no buffer keeps a 4-bit type and the API keeps them.
func TestSubByteWidening(t *testing.T) {
	text := `HloModule m
add {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  ROOT s = s4[] add(a, b)
}
cond {
  s = (s32[], u4[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], u4[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = u4[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = u4[8] multiply(x, x)
  ROOT t = (s32[], u4[8]) tuple(j, y)
}
ENTRY e {
  x = s4[8] parameter(0)
  u = u4[8] parameter(1)
  c = s4[8] constant({-8, -1, 0, 1, 2, 3, 7, -3})
  m = s4[8] multiply(x, c)
  z = s4[] constant(0)
  r = s4[] reduce(m, z), dimensions={0}, to_apply=add
  i0 = s32[] constant(0)
  st = (s32[], u4[8]) tuple(i0, u)
  w = (s32[], u4[8]) while(st), condition=cond, body=body
  wu = u4[8] get-tuple-element(w), index=1
  ROOT out = (s4[], u4[8]) tuple(r, wu)
}`
	m, err := hlo.Parse("test.hlo", text)
	require.NoError(t, err)
	prog, err := Compile(m, DefaultTarget, Options{})
	require.NoError(t, err)
	require.Equal(t, hlo.S4, prog.ParamShapes[0].Elem)
	require.Equal(t, hlo.U4, prog.OutputShapes[1].Elem)
	var check func(p *Program)
	check = func(p *Program) {
		for _, b := range p.Buffers {
			_, narrow := narrowInt(b.Shape.Elem)
			require.False(t, narrow, "buffer %s holds %s", b.Name, b.Shape)
		}
		for _, s := range p.Subs {
			check(s)
		}
	}
	check(prog)
}

// TestComplexPartsInPlace: a parts kernel reads each operand's parts at
// its own elements (the invocation's), so a donated complex operand
// holds the result: nothing of the arena.
func TestComplexPartsInPlace(t *testing.T) {
	m, err := hlo.Parse("m.hlo", `HloModule m
ENTRY main {
  a = c64[37] parameter(0)
  b = c64[37] parameter(1)
  p = c64[37] multiply(a, b)
  ROOT e = c64[37] exponential(p)
}
`)
	require.NoError(t, err)
	p, err := Compile(m, LlvmpipeTarget, Options{Donate: []int{0}})
	require.NoError(t, err)
	require.Len(t, p.Kernels, 1)
	k := p.Kernels[0]
	require.Equal(t, 2, k.Vector, k.Name)
	require.Equal(t, []bool{true, true}, k.InPlace)
	require.Zero(t, p.ArenaSize, "the result in a's memory")
}
