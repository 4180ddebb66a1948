package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestTransposedConvs: convolutions of dilated inputs as JAX writes
// them (the input gradient of strided convolutions in any dimension
// order, 1-D to 3-D, feature groups, a dilation longer than the kernel
// so that phases have no taps, padding beyond the input and negative
// padding, a dilation beside a stride) become dense convolutions, and
// the evaluator finds them equal to the original bit for bit on small
// integers; those past maxPhases, or dilated only where a stride is,
// stay.
func TestTransposedConvs(t *testing.T) {
	cases := []struct {
		name, typ, x, k, labels, window, attrs string
		split                                  bool
	}{
		{"stride-2 3x3 gradient, NHWC", "s32", "2,7,9,8", "3,3,4,8", "b01f_01oi->b01f", "size=3x3 pad=1_2x1_2 lhs_dilate=2x2", "", true},
		{"NCHW, OIHW", "f32", "2,3,5,6", "4,3,4,4", "bf01_oi01->bf01", "size=4x4 pad=2_2x1_3 lhs_dilate=2x2", "", true},
		{"1-D, dilation 3", "s32", "2,3,11", "2,3,5", "bf0_oi0->bf0", "size=5 pad=4_4 lhs_dilate=3", "", true},
		{"3-D, one dimension not dilated", "s32", "1,4,3,5,2", "3,2,3,2,3", "b012f_012io->b012f", "size=3x2x3 pad=2_1x0_1x1_2 lhs_dilate=2x1x2", "", true},
		{"feature groups", "s32", "2,6,6,4", "3,3,2,6", "b01f_01io->b01f", "size=3x3 pad=1_1x2_0 lhs_dilate=2x3", "feature_group_count=2", true},
		{"kernel shorter than the dilation", "s32", "1,5,2", "1,2,3", "b0f_0io->b0f", "size=1 pad=0_3 lhs_dilate=4", "", true},
		{"padding beyond the input", "s32", "1,2,1", "2,1,2", "b0f_0io->b0f", "size=2 pad=7_6 lhs_dilate=3", "", true},
		{"negative padding", "s32", "1,9,2", "3,2,2", "b0f_0io->b0f", "size=3 pad=-3_-2 lhs_dilate=2", "", true},
		{"beside a stride", "s32", "1,6,7,2", "2,3,2,2", "b01f_01io->b01f", "size=2x3 stride=2x1 pad=0_1x2_2 lhs_dilate=2x2", "", true},
		{"a stride in the only dilated dimension", "s32", "1,6,2", "3,2,2", "b0f_0io->b0f", "size=3 stride=2 pad=1_1 lhs_dilate=2", "", false},
		{"too many phases", "s32", "1,3,3,2", "2,2,2,2", "b01f_01io->b01f", "size=2x2 lhs_dilate=9x9", "", false},
	}
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]s] parameter(0)\n  k = %[1]s[%[3]s] parameter(1)\n  ROOT c = %[4]s convolution(x, k), window={%[5]s}, dim_labels=%[6]s%[7]s\n}\n",
				c.typ, c.x, c.k, out, c.window, c.labels, map[bool]string{true: ", " + c.attrs}[c.attrs != ""])
		}
		src, user, m := inferredModule(t, c.name, c.typ, text)
		s := &state{mod: m}
		require.NoError(t, splitDilatedInputs(s), c.name)
		convs, dilated := 0, 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				convs++
				for _, i := range dilatedDims(in) {
					if in.A.Window.Dims[i].LhsDilate > 1 {
						dilated++
					}
				}
			}
		}
		if !c.split {
			require.Equal(t, hlo.OpConvolution, m.Entry.Root.Op, c.name)
			require.Equal(t, 1, convs, c.name)
			continue
		}
		require.Zero(t, dilated, "%s: no phase dilated where it could be split", c.name)
		requireValidKernels(t, c.name, src)
		requireSameValues(t, c.name, user, m.Entry, 3)
	}
}

// TestDilatedWindows: reduce-windows of a dilated input (the gradient of
// a strided average pooling as jax.grad writes it: a pad of zeros with
// interior padding, edges in the same pad or another; a max from the
// lowest value; a window's own input dilation) become windows of their
// phases, folding the same elements in the same order as the evaluator
// finds; a pad of another value than the init, and a strided window,
// stay.
func TestDilatedWindows(t *testing.T) {
	reducer := "r_add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n" +
		"r_max {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] maximum(a, b)\n}\n" +
		"r_fadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
	cases := []struct {
		name, body string
		split      bool
	}{
		{"average pooling's gradient", "  g = s32[2,7,9,3] parameter(0)\n  z = s32[] constant(0)\n  p = s32[2,15,19,3] pad(g, z), padding=0_0x1_1_1x1_1_1x0_0\n" +
			"  ROOT r = s32[2,13,17,3] reduce-window(p, z), window={size=1x3x3x1}, to_apply=r_add", true},
		{"edges in another pad", "  g = s32[2,7,9,3] parameter(0)\n  z = s32[] constant(0)\n  p = s32[2,13,17,3] pad(g, z), padding=0_0x0_0_1x0_0_1x0_0\n" +
			"  p2 = s32[2,16,18,3] pad(p, z), padding=0_0x1_2x0_1x0_0\n  ROOT r = s32[2,14,16,3] reduce-window(p2, z), window={size=1x3x3x1}, to_apply=r_add", true},
		{"max from the lowest", "  g = s32[11,5] parameter(0)\n  m = s32[] constant(-2147483648)\n  p = s32[35,5] pad(g, m), padding=2_2_2x0_0\n" +
			"  ROOT r = s32[33,5] reduce-window(p, m), window={size=3x1}, to_apply=r_max", true},
		{"the window's own dilation", "  g = f32[3,10] parameter(0)\n  z = f32[] constant(0)\n" +
			"  ROOT r = f32[3,20] reduce-window(g, z), window={size=1x4 pad=0_0x2_2 lhs_dilate=1x2}, to_apply=r_fadd", true},
		{"a pad of another value", "  g = s32[2,7,9,3] parameter(0)\n  z = s32[] constant(0)\n  o = s32[] constant(1)\n  p = s32[2,15,19,3] pad(g, o), padding=0_0x1_1_1x1_1_1x0_0\n" +
			"  ROOT r = s32[2,13,17,3] reduce-window(p, z), window={size=1x3x3x1}, to_apply=r_add", false},
		{"a strided window", "  g = s32[2,7,9,3] parameter(0)\n  z = s32[] constant(0)\n  p = s32[2,15,19,3] pad(g, z), padding=0_0x1_1_1x1_1_1x0_0\n" +
			"  ROOT r = s32[2,7,17,3] reduce-window(p, z), window={size=1x3x3x1 stride=1x2x1x1}, to_apply=r_add", false},
	}
	for _, c := range cases {
		src := "HloModule m\n" + reducer + "ENTRY e {\n" + c.body + "\n}\n"
		user, err := hlo.Parse("rw.hlo", src)
		require.NoError(t, err, c.name)
		require.NoError(t, hlo.Verify(user), c.name)
		m, err := hlo.Parse("rw.hlo", src)
		require.NoError(t, err, c.name)
		require.NoError(t, splitDilatedInputs(&state{mod: m}), c.name)
		windows := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpReduceWindow {
				windows++
				if c.split {
					for _, d := range in.A.Window.Dims {
						require.LessOrEqual(t, d.LhsDilate, int64(1), "%s: %s", c.name, in.Name)
					}
					require.NotEqual(t, hlo.OpPad, in.Operands[0].Op, "%s: %s", c.name, in.Name)
				}
			}
		}
		if !c.split {
			require.Equal(t, 1, windows, c.name)
			require.Equal(t, hlo.OpReduceWindow, m.Entry.Root.Op, c.name)
			require.Equal(t, hlo.OpPad, m.Entry.Root.Operands[0].Op, c.name)
			continue
		}
		require.Greater(t, windows, 1, c.name)
		requireValidKernels(t, c.name, src)
		requireSameValues(t, c.name, user, m.Entry, 3)
	}
}
