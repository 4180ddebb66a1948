package lower

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

func compileText(t *testing.T, text string) (*Program, error) {
	t.Helper()
	m, err := hlo.Parse("test.hlo", text)
	if err != nil {
		return nil, err
	}
	return Compile(m, DefaultTarget, Options{})
}

// TestElementwiseKernelsValidate compiles every elementwise op and type
// and runs spirv-val on each kernel. Only transcendental ops and float
// remainder (whose accurate device versions come with the kernel work)
// may be refused, by an error that names the op.
func TestElementwiseKernelsValidate(t *testing.T) {
	supported, refused := 0, 0
	for _, c := range hlotest.ElementwiseCases(5) {
		prog, err := compileText(t, c.Text)
		if err != nil {
			require.Contains(t, err.Error(), c.Op.String(), c.Name)
			require.Contains(t, err.Error(), "test.hlo:", "errors carry a position")
			fmod := c.Op == hlo.OpRemainder && c.Type.IsFloat()
			require.True(t, c.Transcendental || fmod, "%s refused: %v", c.Name, err)
			refused++
			continue
		}
		supported++
		require.Len(t, prog.Kernels, 1, c.Name)
		require.NoError(t, spirv.Validate(prog.Kernels[0].Words), c.Name)
	}
	t.Logf("%d op/type cases compile and validate, %d refused by name", supported, refused)
}

func TestGrid(t *testing.T) {
	tg := DefaultTarget
	g, err := grid(65535*64+1, 64, tg)
	require.NoError(t, err)
	require.Equal(t, [3]uint32{65535, 2, 1}, g)
	g, err = grid(1, 64, tg)
	require.NoError(t, err)
	require.Equal(t, [3]uint32{1, 1, 1}, g)
}

func TestErrorsNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] custom-call(a), custom_call_target=\"x\"\n}", "test.hlo:4:3: b (custom-call): custom-call target \"x\" is not supported"},
		{"HloModule m\nENTRY e {\n  a = pred[1,4,4,1] parameter(0)\n  k = pred[3,3,1,1] parameter(1)\n  ROOT c = pred[1,2,2,1] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f\n}", "test.hlo:5:3: c (convolution): pred convolutions are not supported"},
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT c = f32[4] add(a, b)\n}", "test.hlo:5:3: c (add): operands a and b differ"},
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT c = f32[4] exponential(a, a)\n}", "takes 1 operands, has 2"},
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT c = pred[4] compare(a, a), direction=XX\n}", "direction"},
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT g = f32[8] all-gather(a), dimensions={0}, replica_groups={{0,1}}\n}", "test.hlo:4:3: g (all-gather): all-gather joins processes other than this one"},
		// Effects no result depends on are refused, not dropped as dead.
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  t = token[] after-all()\n  o = token[] outfeed(a, t)\n  ROOT b = f32[4] negate(a)\n}", "test.hlo:5:3: o (outfeed): outfeed sends values to the host"},
		{"HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  p = f32[4] custom-call(a), custom_call_target=\"xla_ffi_python_cpu_callback\", custom_call_has_side_effect=true\n  ROOT b = f32[4] negate(a)\n}", "test.hlo:4:3: p (custom-call): custom-call target \"xla_ffi_python_cpu_callback\" is not supported: a host callback"},
	} {
		_, err := compileText(t, tc.text)
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), tc.want), "%q does not contain %q", err, tc.want)
	}
}

// TestDeadPureCallsAreDropped: what no result depends on and has no
// side effect is not computed, as XLA's dead code elimination drops it,
// even where the device could not compute it.
func TestDeadPureCallsAreDropped(t *testing.T) {
	p, err := compileText(t, "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  p = f32[4] custom-call(a), custom_call_target=\"pin\"\n  ROOT b = f32[4] negate(a)\n}")
	require.NoError(t, err)
	require.Len(t, p.Steps, 1)
}

func TestStorageConversion(t *testing.T) {
	dev := ToStorage(hlo.PRED, []byte{0, 1, 7, 0}, DefaultTarget)
	require.Equal(t, []byte{0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, dev)
	host, err := FromStorage(hlo.PRED, dev, 4, DefaultTarget)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 1, 1, 0}, host)
	_, err = FromStorage(hlo.F32, make([]byte, 4), 2, DefaultTarget)
	require.Error(t, err)
}

func TestDotKernelsValidate(t *testing.T) {
	for _, c := range append(hlotest.DotCases(), hlotest.ConvolutionCases()...) {
		prog, err := compileText(t, c.Text)
		require.NoError(t, err, c.Name)
		for _, k := range prog.Kernels {
			require.NoError(t, spirv.Validate(k.Words), c.Name)
		}
	}
}

func TestDataMovementKernelsValidate(t *testing.T) {
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S64, hlo.PRED} {
		cases := append(hlotest.DataMovementCases(ty), hlotest.ReduceCases(ty)...)
		cases = append(append(cases, hlotest.ScatterCases(ty)...), hlotest.GatherCases(ty)...)
		cases = append(cases, hlotest.SortCases(ty)...)
		for _, c := range append(cases, hlotest.ReduceWindowCases(ty)...) {
			prog, err := compileText(t, c.Text)
			require.NoError(t, err, c.Name)
			for _, k := range prog.Kernels {
				require.NoError(t, spirv.Validate(k.Words), c.Name)
			}
		}
	}
}

// TestVectorKernels: a kernel that writes only at its own element computes
// four per invocation with vec4 access (and validates), reading operands
// it does not read elementwise (a broadcast row, a transpose's input)
// per lane; a count that is not a multiple of four and 64-bit elements
// stay scalar.
func TestVectorKernels(t *testing.T) {
	for _, c := range []struct {
		text   string
		vector int
	}{
		{`HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  y = s32[64,64] parameter(1)
  c = f32[] constant(1.5)
  b = f32[64,64] broadcast(c), dimensions={}
  m = f32[64,64] multiply(x, b)
  t = f32[64,64] tanh(m)
  f = f32[64,64] convert(y)
  s = f32[64,64] add(t, f)
  p = pred[64,64] compare(s, x), direction=LT
  ROOT r = (f32[64,64], pred[64,64]) tuple(s, p)
}`, kgen.VectorWidth},
		{`HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  v = f32[64] parameter(1)
  b = f32[64,64] broadcast(v), dimensions={1}
  ROOT s = f32[64,64] add(x, b)
}`, kgen.VectorWidth},
		{`HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  ROOT t = f32[64,64] transpose(x), dimensions={1,0}
}`, kgen.VectorWidth},
		{`HloModule m
ENTRY e {
  x = f32[1025] parameter(0)
  ROOT s = f32[1025] negate(x)
}`, 1},
		{`HloModule m
ENTRY e {
  x = f64[4096] parameter(0)
  ROOT s = f64[4096] negate(x)
}`, 1},
	} {
		prog, err := compileText(t, c.text)
		require.NoError(t, err)
		require.Len(t, prog.Kernels, 1)
		k := prog.Kernels[0]
		require.Equal(t, c.vector, k.Vector, c.text)
		require.NoError(t, spirv.Validate(k.Words))
		n := prog.Buffers[prog.Outputs[0]].Shape.NumElements()
		require.Equal(t, uint32(n/int64(c.vector)), prog.Steps[0].Push[0], "the dispatch counts invocations")
	}
}

// TestNarrowStorage: with 8- and 16-bit storage every elementwise op of
// a narrow type compiles to kernels that load and store the narrow
// elements (spirv-val passes with the storage capabilities only, no
// Int8, Int16 or Float16), buffers take the narrow size, and the host
// bytes go to the device unchanged.
func TestNarrowStorage(t *testing.T) {
	tg := desktop
	tg.Storage8, tg.Storage16 = true, true
	narrow := map[hlo.ElementType]bool{hlo.S8: true, hlo.U8: true, hlo.S16: true, hlo.U16: true, hlo.F16: true, hlo.BF16: true}
	n := 0
	for _, c := range hlotest.ElementwiseCases(1000) {
		if !narrow[c.Type] {
			continue
		}
		m, err := hlo.Parse("test.hlo", c.Text)
		require.NoError(t, err)
		prog, err := Compile(m, tg, Options{})
		if err != nil {
			continue // refused by name, as with widened storage
		}
		n++
		for _, k := range prog.Kernels {
			require.NoError(t, spirv.Validate(k.Words), c.Name)
		}
		for _, b := range prog.Buffers {
			if b.Kind == BufParam && narrow[b.Shape.Elem] {
				require.Equal(t, b.Shape.NumElements()*int64(b.Shape.Elem.Bytes()), b.Size, "%s: %s", c.Name, b.Name)
			}
		}
	}
	require.Greater(t, n, 100)
	// A vector kernel reads and writes 8 narrow elements as words.
	for _, ty := range []string{"bf16", "f16", "s8", "u16"} {
		m, err := hlo.Parse("v.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[4096] parameter(0)\n  y = %[1]s[4096] parameter(1)\n  ROOT s = %[1]s[4096] multiply(x, y)\n}", ty))
		require.NoError(t, err)
		prog, err := Compile(m, tg, Options{})
		require.NoError(t, err)
		require.Equal(t, kgen.VectorWidth, prog.Kernels[0].Vector, ty)
		require.NoError(t, spirv.Validate(prog.Kernels[0].Words), ty)
	}
	host := []byte{1, 0x80, 0xff, 0x7f}
	require.Equal(t, host, ToStorage(hlo.BF16, host, tg))
	require.Len(t, ToStorage(hlo.BF16, host, desktop), 8, "widened to f32 without 16-bit storage")
	back, err := FromStorage(hlo.S8, host, 4, tg)
	require.NoError(t, err)
	require.Equal(t, host, back)
}

// TestFloatControls: on a device that keeps subnormals on request
// (DenormPreserve32/64) every kernel asks for it, for f64 where it
// computes in f64, and passes spirv-val; on one that cannot, none asks.
// f16 is rounded by vkjit's own integer code everywhere: no kernel
// declares a 16-bit float (NVIDIA's conversion to f16 rounded toward zero
// and turned an overflow into garbage, RoundingModeRTE declared or not).
func TestFloatControls(t *testing.T) {
	tg := desktop
	tg.Storage8, tg.Storage16 = true, true
	keep := tg
	keep.DenormPreserve32, keep.DenormPreserve64 = true, true
	n, f64 := 0, 0
	for _, c := range hlotest.ElementwiseCases(1000) {
		if c.Type != hlo.F16 && c.Type != hlo.F32 && c.Type != hlo.F64 {
			continue
		}
		m, err := hlo.Parse("test.hlo", c.Text)
		require.NoError(t, err)
		a, err := Compile(m, keep, Options{})
		if err != nil {
			continue
		}
		b, err := Compile(m, tg, Options{})
		require.NoError(t, err, c.Name)
		n++
		for i, k := range a.Kernels {
			require.NoError(t, spirv.Validate(k.Words), c.Name)
			dis, err := spirv.Disassemble(k.Words)
			require.NoError(t, err)
			require.NotContains(t, dis, "OpTypeFloat 16", c.Name)
			require.Contains(t, dis, "DenormPreserve 32", c.Name)
			if strings.Contains(dis, "OpTypeFloat 64") {
				f64++
				require.Contains(t, dis, "DenormPreserve 64", c.Name)
			}
			other, err := spirv.Disassemble(b.Kernels[i].Words)
			require.NoError(t, err)
			require.NotContains(t, other, "DenormPreserve", c.Name)
		}
	}
	require.Greater(t, n, 60)
	require.Greater(t, f64, 10, "f64 kernels")
}

// TestScalarReduceWindowWithoutWindow: a scalar's reduce-window with its
// window left out compiles (loop fusion dereferenced the missing window).
func TestScalarReduceWindowWithoutWindow(t *testing.T) {
	_, err := compileText(t, "HloModule rw\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT c = f64[] add(a, b)\n}\nENTRY e {\n  x = f64[] parameter(0)\n  i = f64[] parameter(1)\n  ROOT r = f64[] reduce-window(x, i), to_apply=add\n}\n")
	require.NoError(t, err)
}
