package vkjit_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// countLoop counts to n in a while loop run from the host: one submit and
// one read-back per iteration, so that a run of it lasts long enough to be
// stopped in the middle.
const countLoop = `HloModule count
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(1000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[64] sine(x)
  ROOT t = (s32[], f32[64]) tuple(j, y)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[64]) tuple(zero, x)
  w = (s32[], f32[64]) while(s), condition=cond, body=body
  ROOT r = f32[64] get-tuple-element(w), index=1
}`

// TestRunContext: a run whose context is done stops before its next
// submission and returns the context's error, holding no memory after;
// a context done before the call runs nothing.
func TestRunContext(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("count", countLoop, vkjit.CompileOptions{HostLoops: true})
	require.NoError(t, err)
	defer exe.Close()
	x := must(vkjit.Float32s([]int64{64}, make([]float32, 64)))
	d := must(rt.Upload(x))
	defer d.Close()
	base := must(rt.MemoryStats()).InUseBytes

	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, st, err := exe.Run(done, x)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, st.Dispatches)
	_, _, err = exe.RunDevice(done, d)
	require.ErrorIs(t, err, context.Canceled)

	// A million host iterations take minutes; the deadline ends the run
	// within one of them.
	short, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer stop()
	_, _, err = exe.Run(short, x)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	short, stop = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer stop()
	_, _, err = exe.RunDevice(short, d)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, base, must(rt.MemoryStats()).InUseBytes, "a stopped run frees what it allocated")
}

// TestStreamCancel: a caller that stops reading and cancels leaks no
// goroutine and no device memory, while its producer never closes in.
func TestStreamCancel(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("stream", `HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  ROOT y = f32[4096] tanh(x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x := must(vkjit.Float32s([]int64{4096}, make([]float32, 4096)))
	base := must(rt.MemoryStats()).InUseBytes
	goroutines := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	in := make(chan []*vkjit.Tensor)
	produced := make(chan bool)
	go func() { // a producer that stops only when ctx does
		defer close(produced)
		for {
			select {
			case in <- []*vkjit.Tensor{x}:
			case <-ctx.Done():
				return
			}
		}
	}()
	out := exe.Stream(ctx, in)
	for range 3 {
		r := <-out
		require.NoError(t, r.Err)
		require.Len(t, r.Outputs, 1)
	}
	// Let every stage fill its channel and block on its next send (a
	// few runs of 16 KiB: milliseconds), so that each must see ctx end.
	time.Sleep(200 * time.Millisecond)
	cancel() // and read no more
	<-produced
	// Polled by hand: require.Eventually runs its condition on
	// goroutines of its own.
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "Stream's goroutines return once ctx is done, though nobody reads")
	require.Equal(t, base, must(rt.MemoryStats()).InUseBytes, "every device tensor Stream made is closed")
	n := 0
	for range out { // closed, with at most the result sent before the cancel
		n++
	}
	require.LessOrEqual(t, n, 1)
}

// TestExecutableSpecs: Params, Results, MemoryPlan and Plan describe the
// compiled program in the root package's own types.
func TestExecutableSpecs(t *testing.T) {
	exe, err := rt.CompileText("specs", `HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = bf16[3] parameter(1)
  c = f32[3] convert(b)
  bc = f32[2,3] broadcast(c), dimensions={1}
  s = f32[2,3] add(a, bc)
  z = f32[] constant(0)
  r = f32[2] reduce(s, z), dimensions={1}, to_apply=add
  i = s32[2] convert(r)
  ROOT t = (f32[2,3], s32[2]) tuple(s, i)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	ps := exe.Params()
	require.Len(t, ps, 2)
	require.Equal(t, vkjit.TensorSpec{Name: "a", Type: vkjit.F32, Dims: []int64{2, 3}}, ps[0])
	require.Equal(t, vkjit.BF16, ps[1].Type)
	require.Equal(t, "bf16[3]", ps[1].String())
	rs := exe.Results()
	require.Len(t, rs, 2)
	require.Equal(t, vkjit.S32, rs[1].Type)
	require.Equal(t, []int64{2}, rs[1].Dims)
	require.Contains(t, exe.Plan(), "kernel")
	m := exe.MemoryPlan()
	require.GreaterOrEqual(t, m.ArenaBytes, m.LiveBoundBytes)
	require.GreaterOrEqual(t, m.TempBytes, m.ArenaBytes)

	dt, err := vkjit.ParseDType("bf16")
	require.NoError(t, err)
	require.Equal(t, vkjit.BF16, dt)
	require.Equal(t, 16, dt.Bits())
	_, err = vkjit.ParseDType("tuple")
	require.Error(t, err)
	_, err = vkjit.NewTensor(vkjit.DType(0), []int64{1}, []byte{0})
	require.Error(t, err)
}

// TestOpenRefusesBadEnvironment: a malformed variable fails Open, naming
// it, before any device work; an explicit option does not read it.
func TestOpenRefusesBadEnvironment(t *testing.T) {
	t.Setenv("VKJIT_MEM_FRACTION", "lots")
	_, err := vkjit.Open(vkjit.Options{NoCache: true})
	require.ErrorContains(t, err, "VKJIT_MEM_FRACTION")
	r, err := vkjit.Open(vkjit.Options{NoCache: true, Memory: vkjit.MemoryOptions{Fraction: 0.5}})
	require.NoError(t, err, "the explicit fraction wins over the variable")
	r.Close()
	t.Setenv("VKJIT_MEM_FRACTION", "")
	t.Setenv("VKJIT_STAGED", "sometimes")
	_, err = vkjit.Open(vkjit.Options{NoCache: true})
	require.ErrorContains(t, err, "VKJIT_STAGED")
	r, err = vkjit.Open(vkjit.Options{NoCache: true, Staged: vkjit.Off})
	require.NoError(t, err)
	require.False(t, r.Device().Staged, "Off wins over the variable")
	r.Close()
}
