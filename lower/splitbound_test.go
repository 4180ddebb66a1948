package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower/kgen"
)

// TestLongConvs: convolutions contracting more taps than a bounded loop
// allows (a target whose loop budget is 2048: bands of at most 1024 taps)
// become sums of convolutions over bands of their windows (the weight
// gradient's form, bands of single taps split again along the next
// dimension, strides and kernel dilation, a dilated input beside, feature
// groups, negative padding with bands that read padding only), each
// within the bound, equal to the original bit for bit on small integers.
func TestLongConvs(t *testing.T) {
	cases := []struct{ name, x, k, labels, window, attrs string }{
		{"weight gradient", "16,10,10,3", "16,10,10,4", "f01b_i01o->01bf", "size=10x10 pad=1_1x1_1", ""},
		{"one tap too long", "1,4,4,600", "3,3,600,2", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", ""},
		{"strided, dilated kernel", "1,50,5,64", "20,1,64,2", "b01f_01io->b01f", "size=20x1 stride=3x1 pad=3_5x0_0 rhs_dilate=2x1", ""},
		{"beside a dilated input", "1,5,9,64", "5,5,64,2", "b01f_01io->b01f", "size=5x5 stride=2x1 pad=2_2x2_2 lhs_dilate=2x1", ""},
		{"feature groups", "1,7,7,128", "5,5,64,4", "b01f_01io->b01f", "size=5x5 pad=2_2x2_2", "feature_group_count=2"},
		{"padding only", "1,3,6,64", "5,5,64,2", "b01f_01io->b01f", "size=5x5 pad=-2_4x2_2", ""},
		{"1-D, NCW", "2,300,9", "3,300,5", "bf0_oi0->bf0", "size=5 pad=2_2", ""},
	}
	tg := kgen.LlvmpipeTarget
	tg.MaxLoopIterations = 2048 + 2048
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = s32[%s] parameter(0)\n  k = s32[%s] parameter(1)\n  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s%s\n}\n",
				c.x, c.k, out, c.window, c.labels, map[bool]string{true: ", " + c.attrs}[c.attrs != ""])
		}
		probe, err := hlo.Parse("conv.hlo", text("s32[1]"))
		require.NoError(t, err, c.name)
		shape, err := hlo.InferShape(probe.Entry.Root)
		require.NoError(t, err, c.name)
		src := text(shape.DimsString())
		user, err := hlo.Parse("conv.hlo", src)
		require.NoError(t, err, c.name)
		require.Greater(t, convTaps(user.Entry.Root), tg.LoopBudget()/2, c.name)
		m, err := hlo.Parse("conv.hlo", src)
		require.NoError(t, err, c.name)
		require.NoError(t, splitLongConvs(&state{mod: m, tg: tg}), c.name)
		convs := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				convs++
				require.LessOrEqual(t, convTaps(in), tg.LoopBudget()/2, "%s: %s", c.name, in.Name)
			}
		}
		require.Positive(t, convs, c.name)
		require.NoError(t, hlo.Verify(m), c.name)
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
