package lower

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestTreeScans: each form of cumulative reduction JAX and XLA write
// (forward and reversed, inclusive and exclusive, along any dimension,
// lengths that are no multiple of a block; inits that are the reducer's
// identity, and inits that are not, folded once by the flagged scan)
// becomes a tree scan whose values the evaluator finds equal to the
// reduce-window's, bit for bit on small integers; the reduce-windows it
// may not reassociate, or that are no scan, stay as they are.
func TestTreeScans(t *testing.T) {
	reducer := func(op, typ string) string {
		if op == "add_zero" { // several ops, a constant among them
			return fmt.Sprintf("r_%[2]s {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  s = %[1]s[] add(a, b)\n  z = %[1]s[] constant(0)\n  ROOT o = %[1]s[] add(s, z)\n}\n", typ, op)
		}
		return fmt.Sprintf("r_%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT s = %s[] %s(a, b)\n}\n", op, typ, typ, typ, op)
	}
	cases := []struct {
		name, typ, op, init, x, out, window string
		tree                                bool
	}{
		{"cumsum along the middle", "f32", "add", "0", "4,300,3", "4,300,3", "size=1x300x1 pad=0_0x299_0x0_0", true},
		{"reversed, along the first", "f32", "add", "-0", "1000,2", "1000,2", "size=1000x1 pad=0_999x0_0", true},
		{"exclusive", "s32", "add", "0", "2,1000", "2,1001", "size=1x1000 pad=0_0x1000_0", true},
		{"exclusive reversed", "s32", "add", "0", "2,1000", "2,1001", "size=1x1000 pad=0_0x0_1000", true},
		{"cumprod", "s32", "multiply", "1", "3,700", "3,700", "size=1x700 pad=0_0x699_0", true},
		{"cummax", "f32", "maximum", "-inf", "777", "777", "size=777 pad=776_0", true},
		{"cummin from any init", "s32", "minimum", "2", "900", "900", "size=900 pad=0_899", true},
		{"all", "pred", "and", "true", "600", "600", "size=600 pad=599_0", true},
		{"xor", "u32", "xor", "0", "1024", "1024", "size=1024 pad=1023_0", true},
		{"a sum from 1, init folded once", "f32", "add", "1", "1000", "1000", "size=1000 pad=999_0", true},
		{"a product from 2, reversed", "s32", "multiply", "2", "3,1000", "3,1000", "size=1x1000 pad=0_0x0_999", true},
		{"a difference, not associative", "s32", "subtract", "0", "700", "700", "size=700 pad=699_0", false},
		{"exclusive from 3", "s32", "add", "3", "2,1000", "2,1001", "size=1x1000 pad=0_0x1000_0", true},
		{"a reducer of several ops, reversed from 2", "s32", "add_zero", "2", "3,1000", "3,1000", "size=1x1000 pad=0_0x0_999", true},
		{"a window short of the dimension", "f32", "add", "0", "1000", "1000", "size=999 pad=998_0", false},
		{"two dimensions", "f32", "add", "0", "40,40", "40,40", "size=40x40 pad=39_0x39_0", false},
		{"little work", "f32", "add", "0", "100", "100", "size=100 pad=99_0", false},
	}
	for _, c := range cases {
		text := reducer(c.op, c.typ) + fmt.Sprintf("ENTRY e {\n  x = %s[%s] parameter(0)\n  i = %s[] constant(%s)\n  ROOT r = %s[%s] reduce-window(x, i), window={%s}, to_apply=r_%s\n}\n",
			c.typ, c.x, c.typ, c.init, c.typ, c.out, c.window, c.op)
		text = "HloModule m\n" + text
		user, err := hlo.Parse("scan.hlo", text)
		require.NoError(t, err, c.name)
		m, err := hlo.Parse("scan.hlo", text)
		require.NoError(t, err, c.name)
		s := &state{mod: m}
		require.NoError(t, simplify(s), c.name)
		require.NoError(t, treeScans(s), c.name)
		windows := 0
		for _, in := range s.mod.Entry.Instructions {
			if in.Op == hlo.OpReduceWindow {
				windows++
				require.True(t, in.Called[0].IsScalarElementwise(), "%s: %s's reducer, as the device's windows need", c.name, in.Name)
				if c.tree {
					for _, w := range in.A.Window.Dims {
						require.LessOrEqual(t, w.Size, int64(scanBase), c.name)
					}
				}
			}
		}
		if !c.tree {
			require.Equal(t, hlo.OpReduceWindow, s.mod.Entry.Root.Op, c.name)
			require.Equal(t, 1, windows, c.name)
			continue
		}
		require.Greater(t, windows, 1, c.name)
		// The kernels a device without a loop bound gets, through
		// spirv-val (the flagged scans' pred windows among them).
		requireValidKernels(t, c.name, text)
		requireSameValues(t, c.name, user, s.mod.Entry, 3)
	}
}

// calledFrom lists entry and the computations it calls, callees first.
func calledFrom(entry *hlo.Computation) []*hlo.Computation {
	seen := map[*hlo.Computation]bool{}
	var out []*hlo.Computation
	var visit func(c *hlo.Computation)
	visit = func(c *hlo.Computation) {
		if seen[c] {
			return
		}
		seen[c] = true
		for _, in := range c.Instructions {
			for _, cc := range in.Called {
				visit(cc)
			}
		}
		out = append(out, c)
	}
	visit(entry)
	return out
}
