package hlo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCountedLoop: the counted loops fori_loop and scan write, in each
// direction and step, their iteration counts from a start, and the
// loops whose counters would wrap around or never meet their limit
// (not counted).
func TestCountedLoop(t *testing.T) {
	loop := func(ty, limit, compare, next, step string) string {
		return fmt.Sprintf(`HloModule t
cond {
  p = (%[1]s[], f32[]) parameter(0)
  i = %[1]s[] get-tuple-element(p), index=0
  n = %[1]s[] constant(%[2]s)
  ROOT c = pred[] %[3]s
}
body {
  p = (%[1]s[], f32[]) parameter(0)
  i = %[1]s[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  k = %[1]s[] constant(%[5]s)
  j = %[1]s[] %[4]s
  ROOT t = (%[1]s[], f32[]) tuple(j, x)
}
ENTRY main {
  x = f32[] parameter(0)
  z = %[1]s[] parameter(1)
  t = (%[1]s[], f32[]) tuple(z, x)
  ROOT w = (%[1]s[], f32[]) while(t), condition=cond, body=body
}`, ty, limit, compare, next, step)
	}
	const (
		lt, le, gt, ge, ne = "compare(i, n), direction=LT", "compare(i, n), direction=LE", "compare(i, n), direction=GT", "compare(i, n), direction=GE", "compare(i, n), direction=NE"
		nGT                = "compare(n, i), direction=GT" // i < n
		add, kAdd, sub     = "add(i, k)", "add(k, i)", "subtract(i, k)"
	)
	for _, c := range []struct {
		ty, limit, compare, step, next string
		start, n                       int64
		ok                             bool
	}{
		{"s32", "5", lt, "1", add, 0, 5, true},
		{"s32", "4", lt, "1", kAdd, -3, 7, true},
		{"s32", "4", lt, "1", add, 9, 0, true},
		{"s32", "5", lt, "2", add, 0, 3, true}, // 0 2 4
		{"s32", "5", le, "1", add, 0, 6, true},
		{"s32", "5", nGT, "1", add, 0, 5, true},
		{"s32", "0", gt, "1", sub, 10, 10, true},
		{"s32", "0", ge, "3", sub, 10, 4, true}, // 10 7 4 1
		{"s32", "0", ge, "-3", add, 10, 4, true},
		{"s32", "6", ne, "2", add, 0, 3, true},
		{"s64", "-6", ne, "2", sub, 0, 3, true},
		{"s32", "5", ne, "2", add, 0, 0, false},  // steps over its limit
		{"s32", "5", lt, "-1", add, 0, 0, false}, // away from it: until it wraps
		{"s32", "5", lt, "-1", add, 9, 0, true},  // away from it, but done at once
		{"s32", "2147483647", lt, "4", add, 2147483640, 0, false},
		{"s32", "2147483647", le, "1", add, 0, 0, false},
		{"s32", "2147483647", lt, "1", add, 0, 2147483647, true},
		{"s8", "127", lt, "1", add, -128, 255, true},
		{"u32", "10", lt, "1", add, 3, 7, true},
		{"u32", "0", gt, "1", sub, 3, 3, true},
		{"u32", "10", lt, "1", add, -1, 0, false}, // no u32 starts there
		{"s64", "9223372036854775807", lt, "1", add, -9223372036854775808, 0, false},
		{"s64", "9223372036854775806", lt, "1", add, 9223372036854775805, 1, true},
	} {
		m, err := Parse("t", loop(c.ty, c.limit, c.compare, c.next, c.step))
		require.NoError(t, err, "%+v", c)
		require.NoError(t, Verify(m), "%+v", c)
		cond, body := m.Entry.Root.WhileComputations()
		ctr, ok := CountedLoop(cond, body)
		require.True(t, ok, "%+v", c)
		n, ok := ctr.Iterations(c.start)
		require.Equal(t, c.ok, ok, "%+v", c)
		require.Equal(t, c.n, n, "%+v", c)
	}
	for _, c := range []struct{ compare, next string }{
		{"compare(i, i), direction=LT", add},                // no constant limit
		{lt, "multiply(i, k)"},                              // no step
		{lt, "add(i, i)"},                                   // no constant step
		{"compare(i, n), direction=LT, type=UNSIGNED", add}, // s32 compared as u32
	} {
		m, err := Parse("t", loop("s32", "5", c.compare, c.next, "1"))
		require.NoError(t, err, "%+v", c)
		cond, body := m.Entry.Root.WhileComputations()
		_, ok := CountedLoop(cond, body)
		require.False(t, ok, "%+v", c)
	}
}

// TestCountedLoopThroughTuples: a body whose results are elements of a
// tuple it builds (as loop invariant code motion rewrites a body: the
// root a tuple of get-tuple-elements of the old root) is a counted loop
// all the same, and an element of a tuple of the counter is no counter
// of another element's.
func TestCountedLoopThroughTuples(t *testing.T) {
	const text = `HloModule t
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  k = s32[] constant(2)
  j = s32[] add(i, k)
  old = (s32[], f32[]) tuple(%s, x)
  j0 = s32[] get-tuple-element(old), index=0
  x1 = f32[] get-tuple-element(old), index=1
  ROOT t = (s32[], f32[]) tuple(j0, x1)
}
ENTRY main {
  x = f32[] parameter(0)
  z = s32[] constant(1)
  t = (s32[], f32[]) tuple(z, x)
  ROOT w = (s32[], f32[]) while(t), condition=cond, body=body
}`
	for _, c := range []struct {
		next string
		ok   bool
	}{{"j", true}, {"i", false}} {
		m, err := Parse("t", fmt.Sprintf(text, c.next))
		require.NoError(t, err)
		require.NoError(t, Verify(m))
		cond, body := m.Entry.Root.WhileComputations()
		ctr, ok := CountedLoop(cond, body)
		require.Equal(t, c.ok, ok, c.next)
		if ok {
			n, ok := ctr.Iterations(1)
			require.True(t, ok)
			require.Equal(t, int64(3), n, "1 3 5")
		}
	}
}
