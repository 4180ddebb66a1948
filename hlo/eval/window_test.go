package eval

import (
	"encoding/binary"
	"fmt"
	"math"
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

// TestSuffixWindows: reduce-windows whose windows all end at a
// dimension's last element (cumulative reductions from the end, the
// gradient of a cumsum), folded once per line from the end
// (suffixFolds), against the same windows one at a time: the same
// integers, floats within rounding; and only reducers that reorder
// freely take it.
func TestSuffixWindows(t *testing.T) {
	reducer := func(ty, op string) string {
		return fmt.Sprintf("r {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  ROOT s = %[1]s[] %[2]s(a, b)\n}\n", ty, op)
	}
	cases := []struct {
		name, ty, op, out, window string
		suffix, reorders          bool
	}{
		{"reverse cumsum", "s32", "add", "[3,500]", "size=1x500 pad=0_0x0_499", true, true},
		{"reverse exclusive", "s32", "add", "[3,501]", "size=1x500 pad=0_0x0_500", true, true},
		{"reverse cummax", "s32", "maximum", "[3,500]", "size=1x500 pad=0_0x0_499", true, true},
		{"xor, padded both sides", "s32", "xor", "[3,502]", "size=1x502 pad=0_0x2_501", true, true},
		{"float sums", "f32", "add", "[3,500]", "size=1x500 pad=0_0x0_499", true, true},
		{"wrapping products", "s32", "multiply", "[3,500]", "size=1x500 pad=0_0x0_499", true, true},
		{"differences", "s32", "subtract", "[3,500]", "size=1x500 pad=0_0x0_499", true, false},
		{"forward", "s32", "add", "[3,500]", "size=1x500 pad=0_0x499_0", false, true},
		{"sliding", "s32", "add", "[3,251]", "size=1x250", false, true},
	}
	defer func(old float64) { exactSuffixMax = old }(exactSuffixMax)
	for _, c := range cases {
		var got [2]*Value
		for k, most := range []float64{0, 1 << 40} { // from the end; one window at a time
			exactSuffixMax = most
			text := "HloModule m\n" + reducer(c.ty, c.op) + "ENTRY e {\n  x = " + c.ty + "[3,500] parameter(0)\n  i = " + c.ty + "[] constant(1)\n  ROOT w = " + c.ty + c.out + " reduce-window(x, i), window={" + c.window + "}, to_apply=r\n}\n"
			m, err := hlo.Parse("w.hlo", text)
			require.NoError(t, err, c.name)
			require.NoError(t, hlo.Verify(m), c.name)
			w := m.Entry.Root
			_, ok := suffixWindows(w.A.Window, w.Operands[0].Shape.Dims)
			require.Equal(t, c.suffix, ok, c.name)
			require.Equal(t, c.reorders, reordersFreely(w.Called[0]), c.name)
			got[k], err = Run(m, hlotest.UniformInputs(m, 5)...)
			require.NoError(t, err, c.name)
		}
		a, b := got[0].Leaves()[0], got[1].Leaves()[0]
		if c.ty == "s32" || !(c.suffix && c.reorders) {
			require.Equal(t, b.Data, a.Data, c.name)
			continue
		}
		require.NotEqual(t, b.Data, a.Data, "%s: no rounding told the orders apart", c.name)
		for i := 0; i < len(a.Data); i += 4 {
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(a.Data[i:])))
			y := float64(math.Float32frombits(binary.LittleEndian.Uint32(b.Data[i:])))
			require.InDelta(t, y, x, 1e-5*max(1, math.Abs(y)), "%s [%d]", c.name, i/4)
		}
	}
}
