package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// effectsModule has an outfeed in a loop body nothing reads, a custom
// call marked with a side effect, one that is not, and an outfeed in a
// computation nothing calls.
const effectsModule = `HloModule m

body {
  s = f32[4] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(s, t)
  ROOT n = f32[4] negate(s)
}

cond {
  s = f32[4] parameter(0)
  ROOT f = pred[] constant(false)
}

unused {
  s = f32[4] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(s, t)
  ROOT n = f32[4] negate(s)
}

ENTRY e {
  a = f32[4] parameter(0)
  w = f32[4] while(a), condition=cond, body=body
  log = f32[4] custom-call(a), custom_call_target="log", custom_call_has_side_effect=true
  pin = f32[4] custom-call(a), custom_call_target="pin"
  lapack = f32[4] custom-call(a), custom_call_target="Sharding", custom_call_has_side_effect=true
  ROOT b = f32[4] negate(a)
}
`

func TestSideEffects(t *testing.T) {
	m, err := Parse("effects.hlo", effectsModule)
	require.NoError(t, err)
	var names []string
	for _, in := range m.SideEffects() {
		names = append(names, in.Pos.String()+" "+in.Name)
	}
	// The loop's outfeed and the unknown effectful call; not the call
	// without the mark, not a known target's, not the uncalled outfeed.
	require.Equal(t, []string{"effects.hlo:25:3 log", "effects.hlo:6:3 o"}, names)
	require.Contains(t, SideEffectError(m.SideEffects()[0]), `custom-call target "log" is not supported`)
	require.Contains(t, SideEffectError(m.SideEffects()[1]), "outfeed sends values to the host")

	var live []string
	for _, c := range m.LiveComputations() {
		live = append(live, c.Name)
	}
	require.Equal(t, []string{"e"}, live, "the loop is read by nothing")
}
