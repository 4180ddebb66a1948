package lower

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// TestMain checks every pass's result before the next runs, in every
// test of the package (checkPasses).
func TestMain(m *testing.M) {
	checkPasses = true
	os.Exit(m.Run())
}

// TestPlanCheck: the checker finds each kind of broken plan.
func TestPlanCheck(t *testing.T) {
	text := `HloModule m
region_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=region_add
  b = f32[64,1024] broadcast(sum), dimensions={0}
  ROOT y = f32[64,1024] divide(x, b)
}`
	planned := func() *state {
		m, err := hlo.Parse("test.hlo", text)
		require.NoError(t, err)
		s := &state{mod: m, tg: LlvmpipeTarget, prog: &Program{}, plan: newPlan(), values: map[*hlo.Instruction][]int{}, kernel: map[string]int{}}
		for _, p := range passes {
			if p.name == "assign buffers" {
				break
			}
			require.NoError(t, runPass(p, s), p.name)
		}
		require.NoError(t, s.plan.check(s))
		return s
	}
	byName := func(s *state, name string) *hlo.Instruction {
		for _, in := range s.mod.Entry.Instructions {
			if in.Name == name {
				return in
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	s := planned()
	require.Equal(t, []string{"y row rows of 1 dims; first sum; in registers sum; inline b zero"}, s.prog.Plan, "a row kernel computing its sum first, for itself alone")
	for _, c := range []struct {
		name, want string
		breakIt    func(s *state)
	}{
		{"root fused", "the root y is fused", func(s *state) { s.plan.fused[s.mod.Entry.Root] = true }},
		{"fused and moved", "both fused and moved", func(s *state) { s.plan.fused[byName(s, "sum")] = true }},
		{"moved nowhere", "moved into no kernel", func(s *state) { s.plan.moved[byName(s, "x")] = true }},
		{"prologue not moved", "not marked moved", func(s *state) { delete(s.plan.moved, byName(s, "sum")) }},
		{"two prologues", "prologues of both", func(s *state) {
			s.plan.kernel(byName(s, "x")).Prologue = []*hlo.Instruction{byName(s, "sum")}
		}},
		{"registers of another's value", "keeps x in registers but does not compute it", func(s *state) {
			kp := s.plan.kernel(s.mod.Entry.Root)
			kp.Registers = map[*hlo.Instruction]bool{byName(s, "x"): true}
		}},
		{"bad rows", "indexes rows by 2", func(s *state) { s.plan.kernel(s.mod.Entry.Root).RowDims = 2 }},
		{"row kind without rows", "row kernel without rows", func(s *state) { s.plan.kernel(s.mod.Entry.Root).Row = false }},
		{"planned twice", "planned twice", func(s *state) { s.plan.order = append(s.plan.order, s.plan.order...) }},
		{"gemm without tiles", "gemm kernel with tiles false", func(s *state) { s.plan.order[0].Kind = kgen.KindGemm }},
	} {
		s := planned()
		c.breakIt(s)
		err := s.plan.check(s)
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
	}
}
