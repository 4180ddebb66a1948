package vkjit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
)

// TestDeviceLoops runs the while loops of lower/testdata/loops, which
// run as device loops (lower/seqloop.go): jit_compute_while's shape (a
// counter, an accumulator, a large array read at the counter) for more
// iterations than one dispatch runs on lavapipe; in-place scatter and
// dynamic-update-slice into a large array that is also returned
// unchanged; nested loops, unrolled (a fori_loop of 5 over u32[2] with
// slices and concatenates) and not (a trip count from the data, more
// iterations in all than one dispatch's bound, so dispatches end inside
// an outer iteration and repeat it); narrow and pred state with a small
// reduce. Each must match the reference evaluator bit for bit, with and
// without fusion, and (where that takes seconds, not minutes) with
// host-driven loops.
func TestDeviceLoops(t *testing.T) {
	defer noValidationMessages(t)
	files, err := filepath.Glob("lower/testdata/loops/*.hlo")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".hlo")
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		m, err := hlo.Parse(file, string(text))
		require.NoError(t, err, name)
		require.NoError(t, hlo.Verify(m), name)
		args := hlotest.SmallIntInputs(m, 3)
		all := []vkjit.CompileOptions{{}, {NoFuse: true, NoReuse: true}, {HostLoops: true}}
		if name == "nested" || name == "gather_sum" {
			all = all[:2] // ~10^5 host round trips: a minute
		}
		for _, opts := range all {
			start := time.Now()
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, name)
			loops := 0
			for _, s := range vkjit.ProgramOf(exe).Steps {
				if s.Kind == lower.StepLoop {
					loops++
				}
			}
			require.Equal(t, !opts.HostLoops, loops == 1, "%s (%+v): %d device loops", name, opts, loops)
			_, want, outs := runBothOn(t, exe, m, args, name)
			for i, w := range want.Leaves() {
				require.Equal(t, string(w.Data), string(outs[i].Data), "%s out%d (%+v)", name, i, opts)
			}
			t.Logf("%s (%+v): %v", name, opts, time.Since(start))
		}
	}
}

// TestDeviceLoopBound runs a loop whose iterations each run a nested
// loop of a length given as the argument: two of 40000 take two
// dispatches (the second outer iteration does not fit the first
// dispatch's bound and runs again in the next); one of 100000 cannot
// run in one invocation at all, which must be an error that says so,
// not a result cut short.
func TestDeviceLoopBound(t *testing.T) {
	defer noValidationMessages(t)
	if vkjit.TargetOf(rt).MaxLoopIterations == 0 {
		t.Skip("the device has no loop bound")
	}
	exe, err := rt.CompileFile("lower/testdata/long_inner_loop.hlo", vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	run := func(lim int32) ([]*vkjit.Tensor, vkjit.RunStats, error) {
		arg := &vkjit.Tensor{Type: vkjit.S32, Data: []byte{byte(lim), byte(lim >> 8), byte(lim >> 16), byte(lim >> 24)}}
		return exe.Run(context.Background(), arg)
	}
	outs, st, err := run(40000)
	require.NoError(t, err)
	require.Equal(t, []byte{0x40, 0x9c, 0, 0}, outs[0].Data)
	require.Equal(t, 2, st.Dispatches)
	_, _, err = run(100000)
	require.ErrorContains(t, err, "loop iterations than the device allows one invocation")
}
