package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// TestLongConvs: convolutions contracting more taps than a bounded loop
// allows (a target whose loop budget is 2048: bands of at most 1024 taps)
// become sums of convolutions over bands of their windows (the weight
// gradient's form, bands of single taps split again along the next
// dimension, strides and kernel dilation, a dilated input beside, feature
// groups, negative padding with bands that read padding only), each
// within the bound, equal to the original bit for bit on small integers;
// one within the bound stays whole.
func TestLongConvs(t *testing.T) {
	cases := []struct{ name, x, k, labels, window, attrs string }{
		{"weight gradient", "24,10,10,3", "24,10,10,4", "f01b_i01o->01bf", "size=10x10 pad=1_1x1_1", ""},
		{"one tap too long", "1,4,4,600", "3,3,600,2", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", ""},
		{"strided, dilated kernel", "1,50,5,128", "20,1,128,2", "b01f_01io->b01f", "size=20x1 stride=3x1 pad=3_5x0_0 rhs_dilate=2x1", ""},
		{"beside a dilated input", "1,5,9,128", "5,5,128,2", "b01f_01io->b01f", "size=5x5 stride=2x1 pad=2_2x2_2 lhs_dilate=2x1", ""},
		{"feature groups", "1,7,7,256", "5,5,128,4", "b01f_01io->b01f", "size=5x5 pad=2_2x2_2", "feature_group_count=2"},
		{"padding only", "1,3,6,128", "5,5,128,2", "b01f_01io->b01f", "size=5x5 pad=-2_4x2_2", ""},
		{"1-D, NCW", "2,500,9", "3,500,5", "bf0_oi0->bf0", "size=5 pad=2_2", ""},
	}
	tg := kgen.LlvmpipeTarget
	tg.MaxLoopIterations = 2048 + 2048
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = s32[%s] parameter(0)\n  k = s32[%s] parameter(1)\n  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s%s\n}\n",
				c.x, c.k, out, c.window, c.labels, map[bool]string{true: ", " + c.attrs}[c.attrs != ""])
		}
		_, user, m := inferredModule(t, c.name, "s32", text)
		require.Greater(t, windowTaps(user.Entry.Root), tg.LoopBudget(), c.name)
		require.NoError(t, splitLongConvs(&state{mod: m, tg: tg}), c.name)
		convs := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				convs++
				require.LessOrEqual(t, windowTaps(in), tg.LoopBudget()/2, "%s: %s", c.name, in.Name)
			}
		}
		require.Positive(t, convs, c.name)
		requireSameValues(t, c.name, user, m.Entry, 3)
	}
	// Within the bound (1600 taps, more than a band's 1024), whole.
	m, err := hlo.Parse("conv.hlo", "HloModule m\nENTRY e {\n  x = s32[16,10,10,3] parameter(0)\n  k = s32[16,10,10,4] parameter(1)\n"+
		"  ROOT c = s32[3,3,3,4] convolution(x, k), window={size=10x10 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf\n}\n")
	require.NoError(t, err)
	require.NoError(t, splitLongConvs(&state{mod: m, tg: tg}))
	require.Len(t, m.Entry.Instructions, 3)
}

// TestLongWindows: reduce-windows of overlapping windows longer than a
// bounded loop allows (the same target as TestLongConvs) fold bands of
// their windows by the reducer (a moving sum, a 2-D moving max with
// strides, padding and a dilated window, a band that reads padding
// only), equal to the original bit for bit on small integers; a
// reducer that may not reassociate, or an init it does not absorb,
// stays.
func TestLongWindows(t *testing.T) {
	reducers := "r_add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n" +
		"r_max {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] maximum(a, b)\n}\n" +
		"r_sub {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] subtract(a, b)\n}\n"
	cases := []struct {
		name, x, op, init, window string
		split                     bool
	}{
		{"moving sum", "3000", "add", "0", "size=2200", true},
		{"2-D moving max", "90,120", "max", "-2147483648", "size=40x60 stride=3x2 pad=5_7x0_9 rhs_dilate=1x2", true},
		{"padding only in a band", "2,1200", "add", "0", "size=4x700 pad=0_3x0_0", true},
		{"a difference", "5000", "sub", "0", "size=3000", false},
		{"a sum from 1", "5000", "add", "1", "size=3000", false},
	}
	tg := kgen.LlvmpipeTarget
	tg.MaxLoopIterations = 2048 + 2048
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\n%sENTRY e {\n  x = s32[%s] parameter(0)\n  i = s32[] constant(%s)\n  ROOT r = %s reduce-window(x, i), window={%s}, to_apply=r_%s\n}\n",
				reducers, c.x, c.init, out, c.window, c.op)
		}
		_, user, m := inferredModule(t, c.name, "s32", text)
		require.NoError(t, splitLongWindows(&state{mod: m, tg: tg}), c.name)
		if !c.split {
			require.Equal(t, hlo.OpReduceWindow, m.Entry.Root.Op, c.name)
			require.Equal(t, user.Entry.Root.A.Window.String(), m.Entry.Root.A.Window.String(), c.name)
			continue
		}
		windows := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpReduceWindow {
				windows++
				require.LessOrEqual(t, windowTaps(in), tg.LoopBudget()/2, "%s: %s", c.name, in.Name)
			}
		}
		require.Greater(t, windows, 1, c.name)
		requireSameValues(t, c.name, user, m.Entry, 2)
	}
}
