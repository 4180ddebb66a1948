package hlotest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestRandomPrograms: every generated program verifies, prints and
// parses back to the same text, and its ops and types cover the set.
func TestRandomPrograms(t *testing.T) {
	ops, types := map[hlo.Opcode]int{}, map[hlo.ElementType]int{}
	for seed := uint64(0); seed < 2000; seed++ {
		m, err := RandomProgram(seed, 30)
		require.NoError(t, err, "seed %d", seed)
		text := m.String()
		m2, err := hlo.Parse("again", text)
		require.NoError(t, err, "seed %d:\n%s", seed, text)
		require.NoError(t, hlo.Verify(m2), "seed %d:\n%s", seed, text)
		require.Equal(t, text, m2.String(), "seed %d", seed)
		for _, c := range m.Computations {
			for _, in := range c.Instructions {
				ops[in.Op]++
				for _, l := range in.Shape.Leaves() {
					if l.Elem != hlo.Token { // after-all's, not an array's
						types[l.Elem]++
					}
				}
			}
		}
	}
	t.Logf("%d ops, %d types: %v %v", len(ops), len(types), ops, types)
	require.GreaterOrEqual(t, len(ops), 60)
	require.Len(t, types, 29, "every array type the device stores but e8m0fnu")
}
