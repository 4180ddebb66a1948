package eval

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestPrefixWindows: reduce-windows whose windows all start at a
// dimension's first element (cumulative reductions) are folded once per
// line (prefixFolds) with the very bits of a window each: against the
// same windows with a window dilation of a size-1 window dimension,
// which changes nothing but takes the general path, on floats whose
// sums depend on their order, and a variadic argmax-style fold.
func TestPrefixWindows(t *testing.T) {
	const add = "r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
	const argmax = `r {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
`
	cases := []struct {
		name, comp, body string // body's window ends in %s, where a dilation goes
		prefix           bool
	}{
		{"cumsum", add, "ROOT w = f32[3,500] reduce-window(x, i), window={size=1x500 pad=0_0x499_0%s}, to_apply=r", true},
		{"exclusive", add, "ROOT w = f32[3,501] reduce-window(x, i), window={size=1x500 pad=0_0x500_0%s}, to_apply=r", true},
		{"whole dimension", add, "ROOT w = f32[3,1] reduce-window(x, i), window={size=1x500%s}, to_apply=r", true},
		{"wider than it", add, "ROOT w = f32[3,501] reduce-window(x, i), window={size=1x503 pad=0_0x502_1%s}, to_apply=r", true},
		{"reversed", add, "ROOT w = f32[3,500] reduce-window(x, i), window={size=1x500 pad=0_0x0_499%s}, to_apply=r", false},
		{"sliding", add, "ROOT w = f32[3,251] reduce-window(x, i), window={size=1x250%s}, to_apply=r", false},
		{"argmax so far", argmax, "io = s32[3,500] iota(), iota_dimension=1\n  z = s32[] constant(0)\n  ROOT w = (f32[3,500], s32[3,500]) reduce-window(x, io, i, z), window={size=1x500 pad=0_0x499_0%s}, to_apply=r", true},
	}
	for _, c := range cases {
		var got [2]*Value
		// The second: a dilation of the first dimension's size-1 window,
		// which changes no window, but makes them no prefix windows.
		for k, extra := range []string{"", " rhs_dilate=2x1"} {
			text := "HloModule m\n" + c.comp + "ENTRY e {\n  x = f32[3,500] parameter(0)\n  i = f32[] constant(1.5)\n  " + fmt.Sprintf(c.body, extra) + "\n}\n"
			m, err := hlo.Parse("w.hlo", text)
			require.NoError(t, err, c.name)
			require.NoError(t, hlo.Verify(m), c.name)
			w := m.Entry.Root
			_, ok := prefixWindows(w.A.Window, w.Operands[0].Shape.Dims)
			require.Equal(t, c.prefix && k == 0, ok, "%s %d", c.name, k)
			got[k], err = Run(m, hlotest.UniformInputs(m, 9)...)
			require.NoError(t, err, c.name)
		}
		for o, l := range got[0].Leaves() {
			require.Equal(t, got[1].Leaves()[o].Data, l.Data, c.name)
		}
	}
}
