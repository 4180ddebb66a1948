package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/spirv"
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
		probe, err := hlo.Parse("conv.hlo", text(c.typ+"[1]"))
		require.NoError(t, err, c.name)
		shape, err := hlo.InferShape(probe.Entry.Root)
		require.NoError(t, err, c.name)
		src := text(shape.DimsString())
		user, err := hlo.Parse("conv.hlo", src)
		require.NoError(t, err, c.name)
		m, err := hlo.Parse("conv.hlo", src)
		require.NoError(t, err, c.name)
		s := &state{mod: m}
		require.NoError(t, splitTransposedConvs(s), c.name)
		convs, dilated := 0, 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				convs++
				for i := range dilatedDims(in) {
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
		require.NoError(t, hlo.Verify(m), c.name)
		fresh, err := hlo.Parse("conv.hlo", src)
		require.NoError(t, err, c.name)
		prog, err := Compile(fresh, DefaultTarget, Options{})
		require.NoError(t, err, c.name)
		for _, k := range prog.Kernels {
			require.NoError(t, spirv.Validate(k.Words), "%s: %s", c.name, k.Name)
		}
		for seed := range uint64(3) {
			args := hlotest.SmallIntInputs(user, seed)
			want, err := eval.Run(user, args...)
			require.NoError(t, err, c.name)
			got, err := eval.Run(m, args...)
			require.NoError(t, err, c.name)
			require.Equal(t, want.Leaves()[0].Data, got.Leaves()[0].Data, c.name)
		}
	}
}
