package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestSelectedScatters: a select-and-scatter becomes a reduce-window
// that chooses and a fold of the choices, which computes what the
// evaluator computes of the user's module bit for bit, on small integers
// (ties everywhere): max and min pools, the last of equal values (GT),
// windows that overlap, tile, leave gaps, hang over padding and lie in
// padding only, 1-D to 4-D, a product from 1, an s32 maximum and 3a + b
// (which tells the windows' order) as scatters. One of more windows an element than maxSelectCandidates
// stays.
func TestSelectedScatters(t *testing.T) {
	cases := []struct {
		name, ty, x, dir, scatter, init, window string
		split                                   bool
	}{
		{"max pool 3x3/2", "f32", "2,9,9,3", "GE", "add", "0", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0", true},
		{"max pool 2x2/2", "f32", "4,6", "GE", "add", "0", "size=2x2 stride=2x2", true},
		{"min pool, padded", "f32", "6,5", "LE", "add", "0", "size=3x2 stride=2x1 pad=0_1x1_0", true},
		{"last of ties", "f32", "5,7", "GT", "add", "0", "size=2x3 stride=1x2", true},
		{"gaps and padding only", "f32", "7,6", "GT", "add", "0", "size=2x3 stride=3x2 pad=2_0x0_1", true},
		{"1-D product", "f32", "11", "GE", "multiply", "1", "size=4 stride=1 pad=2_1", true},
		{"s32 maximum", "s32", "3,8,4", "LT", "maximum", "-5", "size=2x3x1 stride=1x2x1 pad=1_0x1_1x0_0", true},
		{"order of the windows", "s32", "9,8", "GE", "horner", "1", "size=3x3 stride=1x2 pad=1_1x1_1", true},
		{"81 windows an element", "f32", "10,9", "GE", "add", "0", "size=9x9 stride=1x1 pad=4_4x4_4", false},
	}
	for _, c := range cases {
		body := fmt.Sprintf("ROOT c = %[1]s[] %[2]s(a, b)", c.ty, c.scatter)
		if c.scatter == "horner" { // 3a + b: each window's value in its place
			body = fmt.Sprintf("k = %[1]s[] constant(3)\n  m = %[1]s[] multiply(a, k)\n  ROOT c = %[1]s[] add(m, b)", c.ty)
		}
		text := func(out string) string {
			return fmt.Sprintf(`HloModule m
sel {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=%[3]s
}
scat {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  %[4]s
}
ENTRY e {
  x = %[1]s[%[2]s] parameter(0)
  g = %[7]s parameter(1)
  i = %[1]s[] constant(%[5]s)
  ROOT r = %[1]s[%[2]s] select-and-scatter(x, g, i), window={%[6]s}, select=sel, scatter=scat
}
`, c.ty, c.x, c.dir, body, c.init, c.window, out)
		}
		src := text(windowsOf(t, c.ty, c.x, c.window))
		user, err := hlo.Parse(c.name, src)
		require.NoError(t, err, c.name)
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err, c.name)
		require.NoError(t, splitSelectAndScatters(&state{mod: m}), c.name)
		if !c.split {
			require.Equal(t, hlo.OpSelectAndScatter, m.Entry.Root.Op, c.name)
			continue
		}
		require.NotEqual(t, hlo.OpSelectAndScatter, m.Entry.Root.Op, c.name)
		requireSameValues(t, c.name, user, m.Entry, 3)
		requireValidKernels(t, c.name, src)
	}
}

// windowsOf is the shape of the values of windows w over an array of
// type ty and dimensions x: a select-and-scatter's source.
func windowsOf(t *testing.T, ty, x, w string) string {
	t.Helper()
	m, err := hlo.Parse("windows", fmt.Sprintf("HloModule w\nadd {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  ROOT c = %[1]s[] add(a, b)\n}\nENTRY e {\n  x = %[1]s[%[2]s] parameter(0)\n  z = %[1]s[] constant(0)\n  ROOT r = %[1]s[1] reduce-window(x, z), window={%[3]s}, to_apply=add\n}\n", ty, x, w))
	require.NoError(t, err, w)
	sh, err := hlo.InferShape(m.Entry.Root)
	require.NoError(t, err, w)
	return sh.String()
}
