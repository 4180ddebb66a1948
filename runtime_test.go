package vkjit_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// TestManyRuns: 1000 runs of one executable keep device memory and the
// Go heap flat (finished runs' buffers are reused, not leaked).
func TestManyRuns(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("loop", `HloModule m
cond {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[64] exponential(x)
  z = f32[64] negate(y)
  ROOT t = (s32[], f32[64]) tuple(i1, z)
}
ENTRY e {
  x = f32[64] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[64]) tuple(zero, x)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT r = f32[64] get-tuple-element(w), index=1
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x, _ := vkjit.Float32s([]int64{64}, make([]float32, 64))
	var peak int64
	var ms runtime.MemStats
	var heap uint64
	var mem vkjit.MemoryStats
	for i := 0; i < 1000; i++ {
		_, st, err := exe.Run(context.Background(), x)
		require.NoError(t, err)
		if i == 0 {
			peak = st.PeakDeviceBytes
			mem = must(rt.MemoryStats())
		}
		require.Equal(t, peak, st.PeakDeviceBytes, "run %d", i)
		if i == 99 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc >= heap+1<<20 {
		// Something else of the process may have allocated once (it
		// happened in one full staged run of the package: 1.2 MB); a
		// leak keeps growing over the next 900 runs.
		heap = ms.HeapAlloc
		for i := 0; i < 900; i++ {
			_, _, err := exe.Run(context.Background(), x)
			require.NoError(t, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
	}
	require.Less(t, ms.HeapAlloc, heap+1<<20, "the Go heap grew by more than 1 MiB over 900 runs")
	after := must(rt.MemoryStats())
	require.Equal(t, mem.ReservedBytes, after.ReservedBytes, "device memory reserved after run 1 and run 1000")
	require.Equal(t, mem.InUseBytes, after.InUseBytes, "between runs only the constants are in use")
	require.Equal(t, mem.Allocations, after.Allocations)
}

// log64 is math.Log, except for subnormals, where Go's amd64 math.Log
// is wrong (math.Log(1e-310) gives -709.08 instead of -713.80).
func log64(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// TestOutOfDeviceMemory: a run that needs more than the pool's limit
// fails with vkjit.ErrOutOfMemory and leaves the arguments and the
// runtime usable: a smaller run on the same runtime succeeds.
func TestOutOfDeviceMemory(t *testing.T) {
	defer noValidationMessages(t)
	small, err := vkjit.Open(vkjit.Options{NoCache: true, Memory: vkjit.MemoryOptions{BlockBytes: 1 << 20, LimitBytes: 4 << 20}})
	require.NoError(t, err)
	defer small.Close()
	const text = `HloModule m
ENTRY e {
  x = f32[%d] parameter(0)
  y = f32[%d] exponential(x)
  ROOT z = f32[%d] negate(y)
}`
	big, err := small.CompileText("big", fmt.Sprintf(text, 1<<20, 1<<20, 1<<20), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer big.Close()
	x, _ := vkjit.Float32s([]int64{1 << 20}, make([]float32, 1<<20))
	before := append([]byte(nil), x.Data...)
	_, _, err = big.Run(context.Background(), x)
	require.ErrorIs(t, err, vkjit.ErrOutOfMemory)
	require.Equal(t, before, x.Data, "the argument is untouched")
	require.Zero(t, must(small.MemoryStats()).InUseBytes, "a failed run gives back what it took")

	little, err := small.CompileText("little", fmt.Sprintf(text, 1024, 1024, 1024), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer little.Close()
	y, _ := vkjit.Float32s([]int64{1024}, make([]float32, 1024))
	out, _, err := little.Run(context.Background(), y)
	require.NoError(t, err)
	require.Equal(t, -1.0, out[0].Float64At(0))
}

// TestDeviceTensors chains two executables through device tensors, with
// results that share an arena, results copied out of one, and a result
// that is an argument; releasing everything gives the memory back.
func TestDeviceTensors(t *testing.T) {
	defer noValidationMessages(t)
	first, err := rt.CompileText("first", `HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  e = f32[1000] exponential(x)
  n = f32[1000] negate(e)
  ROOT t = (f32[1000], f32[1000], f32[1000]) tuple(n, e, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer first.Close()
	second, err := rt.CompileText("second", `HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  s = f32[1000] add(a, b)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(s, z), dimensions={0}, to_apply=add
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer second.Close()
	base := must(rt.MemoryStats())

	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(i%17) / 10
	}
	x, _ := vkjit.Float32s([]int64{1000}, vals)
	host, _, err := first.Run(context.Background(), x)
	require.NoError(t, err)
	want, _, err := second.Run(context.Background(), host[0], host[1])
	require.NoError(t, err)

	dx, err := rt.Upload(x)
	require.NoError(t, err)
	outs, _, err := first.RunDevice(context.Background(), dx)
	require.NoError(t, err)
	require.Len(t, outs, 3)
	for i, o := range outs {
		h, err := o.ToHost()
		require.NoError(t, err)
		require.Equal(t, host[i].Data, h.Data, "output %d", i)
	}
	dx.Close()
	got, _, err := second.RunDevice(context.Background(), outs[0], outs[1])
	require.NoError(t, err)
	h, err := got[0].ToHost()
	require.NoError(t, err)
	require.Equal(t, want[0].Data, h.Data, "device tensors chain to the same result as host ones")

	_, _, err = second.RunDevice(context.Background(), outs[0], got[0])
	require.ErrorContains(t, err, "want shape")
	outs[2].Close()
	_, _, err = second.RunDevice(context.Background(), outs[0], outs[2])
	require.ErrorContains(t, err, "was closed")
	for _, o := range append(outs, got...) {
		o.Close()
		o.Close() // harmless
	}
	require.Equal(t, base.InUseBytes, must(rt.MemoryStats()).InUseBytes, "closed tensors give their memory back")
}

// TestStream runs 12 argument lists through Stream: results arrive in
// order and equal Run's; a bad argument list fails alone.
func TestStream(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("stream", `HloModule m
ENTRY e {
  x = f32[4096] parameter(0)
  y = f32[4096] tanh(x)
  ROOT z = f32[4096] multiply(y, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	base := must(rt.MemoryStats())
	in := make(chan []*vkjit.Tensor)
	var args [][]*vkjit.Tensor
	for i := range 12 {
		v := make([]float32, 4096)
		for j := range v {
			v[j] = float32(i) - float32(j%7)
		}
		dims := []int64{4096}
		if i == 5 {
			dims, v = []int64{2048}, v[:2048]
		}
		x, _ := vkjit.Float32s(dims, v)
		args = append(args, []*vkjit.Tensor{x})
	}
	go func() {
		for _, a := range args {
			in <- a
		}
		close(in)
	}()
	i := 0
	for res := range exe.Stream(context.Background(), in) {
		if i == 5 {
			require.ErrorContains(t, res.Err, "want shape")
		} else {
			require.NoError(t, res.Err)
			want, _, err := exe.Run(context.Background(), args[i]...)
			require.NoError(t, err)
			require.Equal(t, want[0].Data, res.Outputs[0].Data, "run %d", i)
		}
		i++
	}
	require.Equal(t, 12, i)
	require.Equal(t, base.InUseBytes, must(rt.MemoryStats()).InUseBytes)
}

// TestProfile: Profile gives one entry per dispatch, loop iterations
// included (a loop run from the host: as a workgroup loop this one is
// 3 dispatches), with the kernel and instruction, and the results of
// Run.
func TestProfile(t *testing.T) {
	defer noValidationMessages(t)
	src, err := os.ReadFile("tests/testdata/while_loop/graph.hlo")
	require.NoError(t, err)
	exe, err := rt.CompileText("while", string(src), vkjit.CompileOptions{HostLoops: true})
	require.NoError(t, err)
	defer exe.Close()
	var args []*vkjit.Tensor
	for i := range vkjit.ProgramOf(exe).ParamShapes {
		a, err := vkjit.ReadNPYFile(fmt.Sprintf("tests/testdata/while_loop/arg%d.npy", i))
		require.NoError(t, err)
		args = append(args, a)
	}
	times, st, err := exe.Profile(context.Background(), args...)
	require.NoError(t, err)
	require.Len(t, times, st.Dispatches, "an entry per dispatch")
	require.Greater(t, st.Dispatches, 40, "the loop's 40 iterations are in it")
	for _, d := range times {
		require.NotEmpty(t, d.Kernel)
		require.NotEmpty(t, d.Inst)
		require.GreaterOrEqual(t, d.Time, time.Duration(0))
	}
}

// TestMappedTensors: on a device whose memory the host maps, a device
// tensor of a type stored at its host width is readable and writable in
// place, and runs see what the host wrote; pred (stored widened) and a
// staging device (VKJIT_STAGED=1) have no such view.
func TestMappedTensors(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("double.hlo", `HloModule double
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] add(x, x)
}`, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x, err := rt.Zeros(vkjit.F32, []int64{4})
	require.NoError(t, err)
	defer x.Close()
	staged := rt.Device().Staged
	mem, ok := x.Mapped()
	require.Equal(t, !staged, ok)
	if staged {
		host, err := x.ToHost()
		require.NoError(t, err)
		require.Equal(t, make([]byte, 16), host.Data, "Zeros")
		return
	}
	require.Equal(t, make([]byte, 16), mem, "Zeros")
	src, _ := vkjit.Float32s([]int64{4}, []float32{1, -2, 3.5, 0})
	copy(mem, src.Data)
	res, _, err := exe.RunDevice(context.Background(), x)
	require.NoError(t, err)
	defer res[0].Close()
	out, ok := res[0].Mapped()
	require.True(t, ok)
	want, _ := vkjit.Float32s([]int64{4}, []float32{2, -4, 7, 0})
	require.Equal(t, want.Data, out)

	p, err := rt.Zeros(vkjit.PRED, []int64{3})
	require.NoError(t, err)
	defer p.Close()
	_, ok = p.Mapped()
	require.False(t, ok, "pred is stored as 32-bit words")
	x.Close()
	_, ok = x.Mapped()
	require.False(t, ok, "closed")
}

// TestDonateDeviceTensor: an executable that donates its parameter
// writes its result over the argument a caller gives up (Donate): no
// copy, no second allocation, the result in the argument's memory; an
// argument not given up is copied and left as it was. An executable that
// does not donate reads the given-up argument and closes it after.
func TestDonateDeviceTensor(t *testing.T) {
	defer noValidationMessages(t)
	const text = `HloModule inc
ENTRY e {
  x = f32[1024] parameter(0)
  one = f32[] constant(1)
  b = f32[1024] broadcast(one), dimensions={}
  ROOT y = f32[1024] add(x, b)
}`
	v := make([]float32, 1024)
	for i := range v {
		v[i] = float32(i)
	}
	host, _ := vkjit.Float32s([]int64{1024}, v)
	check := func(d *vkjit.DeviceTensor, first, last float32) {
		t.Helper()
		out, err := d.ToHost()
		require.NoError(t, err)
		got, _ := out.AsFloat32()
		require.Equal(t, []float32{first, last}, []float32{got[0], got[1023]})
	}
	for _, donate := range [][]int{{0}, nil} {
		exe, err := rt.CompileText("inc.hlo", text, vkjit.CompileOptions{Donate: donate})
		require.NoError(t, err)

		kept, err := rt.Upload(host)
		require.NoError(t, err)
		res, _, err := exe.RunDevice(context.Background(), kept)
		require.NoError(t, err)
		check(kept, 0, 1023) // not given up: as it was
		check(res[0], 1, 1024)
		res[0].Close()
		kept.Close()

		x, err := rt.Upload(host)
		require.NoError(t, err)
		mem, mapped := x.Mapped()
		before, err := rt.MemoryStats()
		require.NoError(t, err)
		res, _, err = exe.RunDevice(context.Background(), x.Donate())
		require.NoError(t, err)
		_, err = x.ToHost()
		require.Error(t, err, "donated: closed by the run (donate %v)", donate)
		after, err := rt.MemoryStats()
		require.NoError(t, err)
		require.Equal(t, before.InUseBytes, after.InUseBytes, "the result took the argument's place in memory (donate %v)", donate)
		check(res[0], 1, 1024)
		if out, ok := res[0].Mapped(); ok && mapped && donate != nil {
			require.Equal(t, unsafe.SliceData(mem), unsafe.SliceData(out), "written over the argument, not copied")
		}
		res[0].Close()
		exe.Close()
	}
}

// TestRunStatsTransfers: Run's statistics put the host's copies in
// Upload and Download, apart from Exec, even for a donated argument that
// the run writes into its arena (Exec used to include that copy). The
// three are disjoint parts of the call, so they sum to at most Wall;
// counting the arena's copy twice breaks that by the copy's time (4 MiB).
func TestRunStatsTransfers(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 20
	exe, err := rt.CompileText("stats", fmt.Sprintf(`HloModule m
ENTRY e {
  x = f32[%d] parameter(0)
  y = f32[%d] parameter(1)
  ROOT s = f32[%d] add(x, y)
}`, n, n, n), vkjit.CompileOptions{Donate: []int{0}})
	require.NoError(t, err)
	defer exe.Close()
	x, _ := vkjit.Float32s([]int64{n}, make([]float32, n))
	y, _ := vkjit.Float32s([]int64{n}, make([]float32, n))
	for i := 0; i < 5; i++ {
		_, st, err := exe.Run(context.Background(), x, y)
		require.NoError(t, err)
		require.Positive(t, st.Upload)
		require.Positive(t, st.Download)
		require.Positive(t, st.Exec)
		require.LessOrEqual(t, st.Upload+st.Exec+st.Download, st.Wall, "%+v", st)
	}
	dx, err := rt.Upload(x)
	require.NoError(t, err)
	defer dx.Close()
	dy, err := rt.Upload(y)
	require.NoError(t, err)
	defer dy.Close()
	outs, st, err := exe.RunDevice(context.Background(), dx, dy)
	require.NoError(t, err)
	outs[0].Close()
	require.Zero(t, st.Upload)
	require.Zero(t, st.Download)
	require.Positive(t, st.Exec)
	require.LessOrEqual(t, st.Exec, st.Wall)
}
