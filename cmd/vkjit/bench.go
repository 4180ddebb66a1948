package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// benchResult is `vkjit bench --json`'s object.
type benchResult struct {
	Module           string  `json:"module"`
	Device           string  `json:"device"`
	MedianMs         float64 `json:"median_ms"`
	MinMs            float64 `json:"min_ms"`
	MaxMs            float64 `json:"max_ms"`
	Iterations       int     `json:"iterations"`
	Warmup           int     `json:"warmup"`
	CompileMs        float64 `json:"compile_ms"`
	IncludeTransfers bool    `json:"include_transfers"`
	UploadMs         float64 `json:"upload_ms"`   // median host time writing arguments (0 with --device-args)
	DownloadMs       float64 `json:"download_ms"` // median time fetching the results (0 with --device-args)
	DeviceArgs       bool    `json:"device_args,omitempty"`
	Dispatches       int     `json:"dispatches"`
	Submits          int     `json:"submits"`
	PeakDeviceBytes  int64   `json:"peak_device_bytes"`
	NoFuse           bool    `json:"no_fuse"`
	HostLoops        bool    `json:"host_loops"`
	DeviceLoops      bool    `json:"device_loops,omitempty"`
	Vec4Access       bool    `json:"vec4_access"`
	InvocationTiles  bool    `json:"invocation_tiles"`
	StorageLoads     bool    `json:"storage_loads"`
	AddressAbove     int64   `json:"address_above,omitempty"`
	HostCPU          string  `json:"host_cpu"`
	HostCores        int     `json:"host_cores"` // the CPUs this process may use (CPUID's count is the VM host's: 254 on a 2-CPU guest)
	HostSIMDBits     int     `json:"host_simd_bits"`
	LPNumThreads     string  `json:"lp_num_threads"` // lavapipe's worker threads ("" = its default)

	// --stream N: N runs with transfers one after another, and the same
	// N through Executable.Stream (uploads of run i+1 during run i).
	StreamRuns          int     `json:"stream_runs,omitempty"`
	SequentialMsPerRun  float64 `json:"sequential_ms_per_run,omitempty"`
	StreamMsPerRun      float64 `json:"stream_ms_per_run,omitempty"`
	StreamOverlapGained float64 `json:"stream_overlap_gained,omitempty"` // 1 - stream / sequential
}

// simdBits is the widest vector the host CPU has: what a CPU Vulkan
// device such as lavapipe compiles kernels to.
func simdBits() int {
	switch {
	case cpuid.CPU.Supports(cpuid.AVX512F):
		return 512
	case cpuid.CPU.Supports(cpuid.AVX2), cpuid.CPU.Supports(cpuid.AVX):
		return 256
	case cpuid.CPU.Supports(cpuid.SSE2), cpuid.CPU.Supports(cpuid.ASIMD):
		return 128
	}
	return 0
}

// cmdBench times a module's runs: random arguments unless .npy files are
// given; transfers excluded unless asked for.
func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	iters := fs.Int("iterations", 10, "timed runs")
	warmup := fs.Int("warmup", 2, "untimed runs first (lavapipe compiles shaders at first use)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	transfers := fs.Bool("include-transfers", false, "time the copies to and from the host too")
	deviceArgs := fs.Bool("device-args", false, "upload the arguments once and leave results on the device (Executable.RunDevice), as jax.device_put and block_until_ready time a jitted function")
	device := fs.String("device", "", "device index or name substring")
	noFuse := fs.Bool("no-fuse", false, "compile without fusion (to compare against)")
	hostLoops := fs.Bool("host-loops", false, "run while loops from the host, not on the device (to compare against)")
	deviceLoops := fs.Bool("device-loops", false, "run every while loop that fits a device loop as one, even where its known trip count is too short to repay the kernel's compile")
	vec4Access := fs.Bool("vec4-access", false, "on a CPU device, load GEMM operands and store vector results as vec4s, not 32-byte words (to compare against)")
	invocationTiles := fs.Bool("invocation-tiles", false, "on a CPU device, compute a GEMM tile per invocation, not per subgroup (to compare against)")
	storageLoads := fs.Bool("storage-loads", false, "on a CPU device, read inputs from storage buffers only, not through texel buffer views (to compare against)")
	addressAbove := fs.Int64("address-above", 0, "reach every array of more bytes through its buffer device address, as arrays past maxStorageBufferRange are (to test and compare against)")
	seed := fs.Uint64("seed", 0, "seed for the random arguments")
	stream := fs.Int("stream", 0, "also time N runs with transfers, sequential and streamed (uploads overlapping runs)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if len(pos) == 0 {
		return fmt.Errorf("bench: no HLO file given (usage: vkjit bench [flags] GRAPH.hlo [ARG.npy ...])")
	}
	if *iters < 1 || *warmup < 0 {
		return fmt.Errorf("bench: --iterations must be at least 1 and --warmup at least 0")
	}
	if *deviceArgs && (*transfers || *stream > 0) {
		return fmt.Errorf("bench: --device-args leaves the host copies out: not with --include-transfers or --stream")
	}
	start := time.Now()
	// .npy arguments are read first: their shapes refine a StableHLO
	// module of dynamic shapes (a static one ignores them).
	var tensors []*vkjit.Tensor
	var specs []vkjit.TensorSpec
	if len(pos) > 1 {
		if tensors, err = readNPYs(pos[1:]); err != nil {
			return err
		}
		for _, t := range tensors {
			specs = append(specs, t.Spec())
		}
	}
	mods, err := vkjit.ParseFileFor(pos[0], specs)
	if err != nil {
		return err
	}
	mod := mods[0]
	rt, err := vkjit.Open(vkjit.Options{Device: *device, Warn: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	defer rt.Close()
	exe, err := rt.Compile(mod, vkjit.CompileOptions{NoFuse: *noFuse, HostLoops: *hostLoops, DeviceLoops: *deviceLoops, Vec4Access: *vec4Access, StorageLoads: *storageLoads, AddressAbove: *addressAbove, InvocationTiles: *invocationTiles})
	if err != nil {
		return err
	}
	defer exe.Close()
	compileMs := ms(time.Since(start))
	if len(pos) == 1 {
		for _, l := range hlotest.UniformInputs(mod, *seed) {
			tensors = append(tensors, &vkjit.Tensor{Type: vkjit.DType(l.Shape.Elem), Dims: l.Shape.Dims, Data: l.Data})
		}
	}
	run := func() (vkjit.RunStats, error) {
		_, st, err := exe.Run(context.Background(), tensors...)
		return st, err
	}
	if *deviceArgs {
		var onDevice []*vkjit.DeviceTensor
		defer func() {
			for _, d := range onDevice {
				d.Close()
			}
		}()
		for _, t := range tensors {
			d, err := rt.Upload(t)
			if err != nil {
				return err
			}
			onDevice = append(onDevice, d)
		}
		run = func() (vkjit.RunStats, error) {
			outs, st, err := exe.RunDevice(context.Background(), onDevice...)
			for _, o := range outs {
				o.Close()
			}
			return st, err
		}
	}
	progress := isTerminal(stderr)
	var times, ups, downs []float64
	var last vkjit.RunStats
	for i := 0; i < *warmup+*iters; i++ {
		st, err := run()
		if err != nil {
			return err
		}
		last = st
		if i >= *warmup {
			t := st.Exec
			if *transfers {
				t = st.Wall
			}
			times = append(times, ms(t))
			ups, downs = append(ups, ms(st.Upload)), append(downs, ms(st.Download))
		}
		if progress {
			fmt.Fprintf(stderr, "\r%s: run %d of %d", pos[0], i+1, *warmup+*iters)
		}
	}
	if progress {
		fmt.Fprintln(stderr)
	}
	med := median(times)
	res := benchResult{Module: mod.Name, Device: rt.Device().Name, MedianMs: med, MinMs: times[0], MaxMs: times[len(times)-1],
		UploadMs: median(ups), DownloadMs: median(downs),
		Iterations: *iters, Warmup: *warmup, CompileMs: compileMs, IncludeTransfers: *transfers, DeviceArgs: *deviceArgs,
		Dispatches: last.Dispatches, Submits: last.Submits, PeakDeviceBytes: last.PeakDeviceBytes, NoFuse: *noFuse, HostLoops: *hostLoops, DeviceLoops: *deviceLoops,
		Vec4Access: *vec4Access, StorageLoads: *storageLoads, AddressAbove: *addressAbove, InvocationTiles: *invocationTiles,
		HostCPU: cpuid.CPU.BrandName, HostCores: runtime.NumCPU(), HostSIMDBits: simdBits(), LPNumThreads: os.Getenv("LP_NUM_THREADS")}
	if *stream > 0 {
		seq, str, err := streamBench(exe, tensors, *stream)
		if err != nil {
			return err
		}
		res.StreamRuns, res.SequentialMsPerRun, res.StreamMsPerRun = *stream, seq, str
		res.StreamOverlapGained = 1 - str/seq
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		_, err := fmt.Fprintln(stdout, string(b))
		return err
	}
	what := "execution"
	if *transfers {
		what = "run with transfers"
	}
	fmt.Fprintf(stdout, "%s on %s: %s median %.3f ms (min %.3f, max %.3f) over %d runs after %d warm-up; compile %.1f ms; %d dispatches in %d submits, peak %d device bytes\n",
		mod.Name, res.Device, what, med, res.MinMs, res.MaxMs, *iters, *warmup, compileMs, res.Dispatches, res.Submits, res.PeakDeviceBytes)
	if !*deviceArgs && !*transfers {
		fmt.Fprintf(stdout, "transfers apart: upload median %.3f ms, download median %.3f ms\n", res.UploadMs, res.DownloadMs)
	}
	if *stream > 0 {
		fmt.Fprintf(stdout, "%d runs with transfers: %.3f ms a run one after another, %.3f ms streamed (%.0f%% saved by overlap)\n",
			*stream, res.SequentialMsPerRun, res.StreamMsPerRun, 100*res.StreamOverlapGained)
	}
	return nil
}

// median sorts xs and returns its median.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}

// streamBench times n runs with transfers one after another and n runs
// through Stream, and returns milliseconds per run for each.
func streamBench(exe *vkjit.Executable, args []*vkjit.Tensor, n int) (seq, str float64, err error) {
	t0 := time.Now()
	for range n {
		if _, _, err := exe.Run(context.Background(), args...); err != nil {
			return 0, 0, err
		}
	}
	seq = ms(time.Since(t0)) / float64(n)
	in := make(chan []*vkjit.Tensor)
	go func() {
		for range n {
			in <- args
		}
		close(in)
	}()
	t0 = time.Now()
	for r := range exe.Stream(context.Background(), in) {
		if r.Err != nil && err == nil {
			err = r.Err
		}
	}
	str = ms(time.Since(t0)) / float64(n)
	return seq, str, err
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
