package lower

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

// TestAtomicScatterForms: the scatters that apply their updates by
// atomic operations are those of one 32-bit integer or pred operand
// whose combiner commutes and associates exactly, large enough to pay
// for a second dispatch; floats, 64-bit and narrow integers, products,
// variadic scatters and small ones keep the ordered kernels.
func TestAtomicScatterForms(t *testing.T) {
	scatter := func(ty, op string, positions int) string {
		return fmt.Sprintf("HloModule m\nc {\n  a = %[1]s[] parameter(0)\n  b = %[1]s[] parameter(1)\n  ROOT c = %[1]s[] %[2]s(a, b)\n}\n"+
			"ENTRY e {\n  x = %[1]s[100] parameter(0)\n  i = s32[%[3]d,1] parameter(1)\n  u = %[1]s[%[3]d] parameter(2)\n"+
			"  ROOT r = %[1]s[100] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c\n}\n", ty, op, positions)
	}
	for _, c := range []struct {
		ty, op    string
		positions int
		atomic    bool
	}{
		{"s32", "add", 1000, true}, {"u32", "maximum", 1000, true}, {"s32", "minimum", 1000, true},
		{"u32", "xor", 1000, true}, {"s32", "and", 1000, true}, {"pred", "or", 1000, true}, {"pred", "and", 1000, true},
		{"s32", "add", 100, false}, // 10,000 steps walked: one dispatch
		{"f32", "add", 1000, false}, {"f32", "maximum", 1000, false}, {"s64", "add", 1000, false},
		{"s8", "add", 1000, false}, {"s32", "multiply", 1000, false}, {"s32", "subtract", 1000, false},
	} {
		m, err := hlo.Parse("s.hlo", scatter(c.ty, c.op, c.positions))
		require.NoError(t, err)
		require.NoError(t, hlo.Verify(m))
		require.Equal(t, c.atomic, atomicScatter(m.Entry.Root), "%s %s %d", c.ty, c.op, c.positions)
		if !c.atomic {
			continue
		}
		// Both targets' programs: the atomic kernel, through spirv-val.
		for _, tg := range []kgen.Target{DefaultTarget, kgen.LlvmpipeTarget} {
			prog, err := Compile(m, tg, Options{})
			require.NoError(t, err)
			atomic := false
			for _, k := range prog.Kernels {
				require.NoError(t, spirv.Validate(k.Words), k.Name)
				atomic = atomic || strings.HasPrefix(k.Name, "scatter_atomic")
			}
			require.True(t, atomic, "%s %s", c.ty, c.op)
		}
	}
}
