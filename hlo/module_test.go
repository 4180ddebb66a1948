package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCalledComputations: a while's condition and body, and a
// conditional's branches, are told apart by their attributes whatever
// order the text gives them in.
func TestCalledComputations(t *testing.T) {
	m, err := Parse("t.hlo", `HloModule m
c {
  p = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(p, ten), direction=LT
}
b {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(p, one)
}
t {
  p = s32[] parameter(0)
  ROOT n = s32[] negate(p)
}
f {
  p = s32[] parameter(0)
  ROOT q = s32[] abs(p)
}
ENTRY e {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  w = s32[] while(x), body=b, condition=c
  k = pred[] parameter(2)
  ROOT r = s32[] conditional(k, x, y), false_computation=f, true_computation=t
}`)
	require.NoError(t, err)
	var w, r *Instruction
	for _, in := range m.Entry.Instructions {
		switch in.Name {
		case "w":
			w = in
		case "r":
			r = in
		}
	}
	cond, body := w.WhileComputations()
	require.Equal(t, "c", cond.Name)
	require.Equal(t, "b", body.Name)
	branches, args := r.Branches()
	require.Equal(t, "t", branches[0].Name, "the true branch first")
	require.Equal(t, "f", branches[1].Name)
	require.Equal(t, []string{"x", "y"}, []string{args[0].Name, args[1].Name}, "the true operand comes first whatever the attributes' order")
}
