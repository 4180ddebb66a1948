package lower

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// chain is a module of n elementwise ops on f32[4096], each reading the
// one before (and the parameter, for binary ops), cycling through ops.
func chain(n int, ops ...string) string {
	var b strings.Builder
	b.WriteString("HloModule chain\nENTRY main {\n  x0 = f32[4096] parameter(0)\n")
	for i := 1; i <= n; i++ {
		root := ""
		if i == n {
			root = "ROOT "
		}
		op := ops[i%len(ops)]
		if o, _ := hlo.LookupOpcode(op); o.Arity() == 1 {
			fmt.Fprintf(&b, "  %sx%d = f32[4096] %s(x%d)\n", root, i, op, i-1)
		} else {
			fmt.Fprintf(&b, "  %sx%d = f32[4096] %s(x%d, x0)\n", root, i, op, i-1)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestKernelSizeBounded: fusion stops a kernel at maxKernelCost (fuse
// loops, and fuse siblings, which would otherwise put two such kernels
// in one), so a long chain becomes kernels of bounded size rather than
// one kernel the driver takes minutes to compile; library functions
// weigh more than adds.
func TestKernelSizeBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       int
		ops     []string
		kernels int
	}{
		{"adds", 5000, []string{"add", "multiply", "subtract", "maximum"}, 3},
		{"sines", 400, []string{"sine", "multiply"}, 2}, // 200 sines at 16 and 200 multiplies at 1: 3,400
		{"short", 100, []string{"add", "multiply"}, 1},
	} {
		m, err := hlo.Parse("chain", chain(c.n, c.ops...))
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, c.name)
		require.Len(t, p.Kernels, c.kernels, c.name)
		for _, line := range p.Plan {
			_, inline, _ := strings.Cut(line, "; inline ")
			cost := 0
			for _, name := range strings.Fields(inline) {
				cost += kgen.OpCost(opOf(m, name))
			}
			require.LessOrEqual(t, cost, maxKernelCost, "%s: %s", c.name, line[:40])
		}
	}
}

func opOf(m *hlo.Module, name string) hlo.Opcode {
	for _, in := range m.Entry.Instructions {
		if in.Name == name {
			return in.Op
		}
	}
	return hlo.OpParameter
}

// TestLargeKernelsStayScalar: a kernel whose element takes more than
// vectorMaxLaneWords is not made a vector kernel (eight lanes of the
// same code); a short one is.
func TestLargeKernelsStayScalar(t *testing.T) {
	for _, c := range []struct {
		n      int
		vector int
	}{{4, kgen.VectorWidth}, {60, 1}} {
		m, err := hlo.Parse("chain", chain(c.n, "sine", "multiply"))
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1)
		require.Equal(t, c.vector, p.Kernels[0].Vector, "%d ops, %d words", c.n, len(p.Kernels[0].Words))
	}
}
