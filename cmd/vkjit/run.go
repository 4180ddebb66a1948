package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/hlo/stablehlo"
	"github.com/vkjit/vkjit/internal/outfile"
)

// runStats is the --stats-json object.
type runStats struct {
	CompileMs       float64 `json:"compile_ms"`
	CodegenMs       float64 `json:"codegen_ms"`  // reading the file to SPIR-V and plan (a cache lookup on a hit)
	PipelineMs      float64 `json:"pipeline_ms"` // the driver's pipeline creation, and warming
	Warmed          int     `json:"warmed"`      // dispatches compiled ahead of the first run (lavapipe)
	RunMs           float64 `json:"run_ms"`
	Kernels         int     `json:"kernels"`
	Dispatches      int     `json:"dispatches"`
	Submits         int     `json:"submits"`
	PeakDeviceBytes int64   `json:"peak_device_bytes"`
	CacheHits       int     `json:"cache_hits"`
	CacheMisses     int     `json:"cache_misses"`
	ArenaBytes      int64   `json:"arena_bytes"`          // temporaries' memory as planned
	LiveBoundBytes  int64   `json:"liveness_bound_bytes"` // no arena can be smaller
	SavedByFusion   int64   `json:"saved_by_fusion_bytes"`
	SavedByReuse    int64   `json:"saved_by_reuse_bytes"`
	Device          string  `json:"device"`
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "write results to this .npz")
	statsPath := fs.String("stats-json", "", "write statistics JSON here")
	device := fs.String("device", "", "device index or name substring")
	validate := fs.Bool("validate", false, "enable the Khronos validation layer")
	randomArgs := fs.Bool("random-args", false, "fill the arguments with random values")
	seed := fs.Uint64("seed", 0, "seed for --random-args")
	compare := fs.Bool("compare", false, "also run the reference evaluator and compare")
	noFuse := fs.Bool("no-fuse", false, "compile every instruction to its own kernel and buffer (to compare against)")
	noReuse := fs.Bool("no-reuse", false, "give every temporary its own memory (to compare against)")
	hostLoops := fs.Bool("host-loops", false, "run every while loop from the host, not as a device loop (to compare against)")
	deviceLoops := fs.Bool("device-loops", false, "run every while loop that fits a device loop as one, even where its known trip count is too short to repay the kernel's compile")
	vec4Access := fs.Bool("vec4-access", false, "on a CPU device, load GEMM operands and store vector results as vec4s, not 32-byte words (to compare against)")
	invocationTiles := fs.Bool("invocation-tiles", false, "on a CPU device, compute a GEMM tile per invocation, not per subgroup (to compare against)")
	storageLoads := fs.Bool("storage-loads", false, "on a CPU device, read inputs from storage buffers only, not through texel buffer views (to compare against)")
	addressAbove := fs.Int64("address-above", 0, "reach every array of more bytes through its buffer device address, as arrays past maxStorageBufferRange are (to test and compare against)")
	showStats := fs.Bool("stats", false, "print kernels, dispatches and memory figures")
	profile := fs.Bool("profile", false, "after the run, run again measuring each dispatch's device time (timestamps) and print them, longest first")
	budget := fs.Int64("memory-budget", 0, "plan at most this many device bytes, recomputing values instead of keeping them")
	cacheDir := fs.String("cache-dir", "", "the compile cache's directory (default: VKJIT_CACHE_DIR, else the user cache directory's vkjit)")
	noCache := fs.Bool("no-cache", false, "neither read nor write the compile cache")
	donate := fs.String("donate", "", "parameter leaves whose memory the program may reuse once dead: \"all\" or a list such as 2,3")
	memProfile := fs.String("memprofile", "", "write the device memory at the planned peak here, in pprof format")
	module := fs.String("module", "", "in a file of several modules (// -----), the one to run: its 1-based index or its name")
	rtol := fs.Float64("rtol", -1, "relative tolerance for --compare (default by type)")
	atol := fs.Float64("atol", -1, "absolute tolerance for --compare (default by type)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if len(pos) == 0 {
		return fmt.Errorf("run: no HLO file given (usage: vkjit run [flags] GRAPH.hlo [ARG.npy ...])")
	}
	graph, argFiles := pos[0], pos[1:]
	if *budget < 0 {
		return fmt.Errorf("run: --memory-budget=%d is not a byte count (0, the default, plans without a budget)", *budget)
	}

	start := time.Now() // compile_ms counts from reading the file
	src, err := os.ReadFile(graph)
	if err != nil {
		return err
	}
	// The module is parsed here only when something besides compiling
	// needs it; otherwise a compile-cache hit skips the parse too. A
	// StableHLO file's check ops (conformance tests) are evaluated after
	// the run, as vkjit test does.
	var mod *hlo.Module
	var checked *stablehlo.Translated
	var read []*vkjit.Tensor // the .npy arguments, where read before compiling
	parseMs := 0.0
	if stablehlo.IsMLIR(string(src)) {
		// The arguments' shapes refine an entry of dynamic shapes
		// (jax.export's symbolic shapes); a static one ignores them.
		var shapes []hlo.Shape
		if !*randomArgs && len(argFiles) > 0 {
			if read, err = readNPYs(argFiles); err != nil {
				return err
			}
			for _, t := range read {
				shapes = append(shapes, hlo.ArrayShape(hlo.ElementType(t.Type), t.Dims...))
			}
		}
		if checked, err = pickProgram(graph, string(src), *module, shapes); err != nil {
			return err
		}
		mod = checked.HLO
		if len(checked.Checks) == 0 {
			checked = nil
		}
		parseMs = ms(time.Since(start))
	} else if *compare || *donate == "all" || *module != "" {
		if mod, err = pickModule(graph, string(src), *module); err != nil {
			return err
		}
		parseMs = ms(time.Since(start))
	}
	rt, err := vkjit.Open(vkjit.Options{Device: *device, Validate: toggle(*validate), CacheDir: *cacheDir, NoCache: *noCache, Warn: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	defer rt.Close()
	donated, err := parseDonate(*donate, mod)
	if err != nil {
		return err
	}
	copts := vkjit.CompileOptions{NoFuse: *noFuse, NoReuse: *noReuse, HostLoops: *hostLoops, DeviceLoops: *deviceLoops, Vec4Access: *vec4Access, StorageLoads: *storageLoads, AddressAbove: *addressAbove, InvocationTiles: *invocationTiles, MemoryBudget: *budget, Donate: donated}
	var exe *vkjit.Executable
	if mod != nil {
		exe, err = rt.Compile(mod, copts)
	} else {
		exe, err = rt.CompileText(graph, string(src), copts)
	}
	if err != nil {
		return moduleHint(err)
	}
	defer exe.Close()
	compileMs := ms(time.Since(start))
	if *memProfile != "" {
		if err := outfile.WriteWith(*memProfile, exe.WriteMemoryProfile); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}

	var tensors []*vkjit.Tensor
	if *randomArgs {
		if len(argFiles) > 0 {
			return fmt.Errorf("--random-args and .npy arguments exclude each other")
		}
		// From the executable's parameters, not the module's: a cache
		// hit skips the parse (the DLRM step's 11-14 ms).
		var leaves []hlo.Shape
		for _, p := range exe.Params() {
			leaves = append(leaves, hlo.ArrayShape(hlo.ElementType(p.Type), p.Dims...))
		}
		for _, l := range hlotest.UniformLeaves(leaves, *seed) {
			tensors = append(tensors, &vkjit.Tensor{Type: vkjit.DType(l.Shape.Elem), Dims: l.Shape.Dims, Data: l.Data})
		}
	} else if tensors, err = readArgs(graph, exe, argFiles, read); err != nil {
		return err
	}
	results, st, err := exe.Run(context.Background(), tensors...)
	if err != nil {
		return err
	}
	if msgs := vkjit.ValidationMessages(); len(msgs) > 0 {
		for _, m := range msgs {
			fmt.Fprintln(stderr, "validation:", m)
		}
		return fmt.Errorf("the validation layer reported %d problem(s)", len(msgs))
	}
	// A comparison that fails still lets the results and statistics be
	// written (--out, --stats-json): they are what one inspects next.
	var compareErr error
	if *compare {
		compareErr = compareWithReference(stdout, mod, tensors, results, *rtol, *atol)
	}
	mem := exe.MemoryPlan()
	s := runStats{
		CompileMs:       compileMs,
		CodegenMs:       parseMs + ms(exe.Stats.Codegen),
		PipelineMs:      ms(exe.Stats.Pipeline),
		Warmed:          exe.Stats.Warmed,
		RunMs:           ms(st.Wall),
		Kernels:         exe.Stats.Kernels,
		Dispatches:      st.Dispatches,
		Submits:         st.Submits,
		PeakDeviceBytes: st.PeakDeviceBytes,
		CacheHits:       exe.Stats.CacheHits,
		CacheMisses:     exe.Stats.CacheMisses,
		ArenaBytes:      mem.ArenaBytes,
		LiveBoundBytes:  mem.LiveBoundBytes,
		SavedByFusion:   mem.FusedBytes,
		SavedByReuse:    mem.TempBytes - mem.ArenaBytes,
		Device:          rt.Device().Name,
	}
	if *showStats {
		printStats(stdout, s)
	}
	if *profile {
		times, _, err := exe.Profile(context.Background(), tensors...)
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		printProfile(stdout, times)
	}
	if *statsPath != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		if err := outfile.WriteFile(*statsPath, append(b, '\n')); err != nil {
			return fmt.Errorf("--stats-json: %w", err)
		}
	}
	if err := writeResults(stdout, *out, results, checked); err != nil {
		return err
	}
	return compareErr
}

// readArgs reads the entry's arguments from .npy files, one a parameter
// leaf.
func readArgs(graph string, exe *vkjit.Executable, files []string, read []*vkjit.Tensor) ([]*vkjit.Tensor, error) {
	params := exe.Params()
	if len(files) != len(params) {
		return nil, fmt.Errorf("%s takes %d arguments (%s), got %d .npy files", graph, len(params), describeParams(exe), len(files))
	}
	if read == nil {
		var err error
		if read, err = readNPYs(files); err != nil {
			return nil, err
		}
	}
	for i, t := range read {
		if params[i].Type == vkjit.BF16 && t.Type == vkjit.U16 {
			t.Type = vkjit.BF16 // bf16 travels as raw bits in uint16
		}
	}
	return read, nil
}

// readNPYs reads the arguments' .npy files.
func readNPYs(files []string) ([]*vkjit.Tensor, error) {
	tensors := make([]*vkjit.Tensor, len(files))
	for i, f := range files {
		t, err := vkjit.ReadNPYFile(f)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		tensors[i] = t
	}
	return tensors, nil
}

// compareWithReference runs the reference evaluator on the same
// arguments and compares its results with the device's.
func compareWithReference(stdout io.Writer, mod *hlo.Module, args, results []*vkjit.Tensor, rtol, atol float64) error {
	lits := make([]*hlo.Literal, len(args))
	for i, t := range args {
		lits[i] = literal(t)
	}
	// The interpreter's garbage is mostly short-lived copies (a scatter
	// in a loop copies its operand each iteration); fewer collections
	// halve a loop-heavy module's reference run (the corpus's in-place
	// update loop: 60 -> 34 s).
	gc := debug.SetGCPercent(400)
	want, err := eval.Run(mod, lits...)
	debug.SetGCPercent(gc)
	if err != nil {
		return fmt.Errorf("reference evaluator: %w", err)
	}
	if !compareOutputs(stdout, results, want.Leaves(), computedIn(mod), rtol, atol) {
		return fmt.Errorf("results differ from the reference evaluator beyond tolerance")
	}
	return nil
}

// writeResults evaluates a StableHLO module's checks on its results (a
// failed check is an error), then writes the entry's own results to the
// .npz out, or prints them.
func writeResults(stdout io.Writer, out string, results []*vkjit.Tensor, checked *stablehlo.Translated) error {
	var checkFails []string
	if checked != nil {
		lits := make([]*hlo.Literal, len(results))
		for i, r := range results {
			lits[i] = literal(r)
		}
		checkFails = evalChecks(checked, lits)
		results = results[:resultLeaves(checked)] // the entry function's own results
	}
	names := make([]string, len(results))
	for i := range results {
		names[i] = fmt.Sprintf("out%d", i)
	}
	if out != "" {
		if err := vkjit.WriteNPZ(out, names, results); err != nil {
			return err
		}
	} else {
		for i, r := range results {
			fmt.Fprintf(stdout, "%s: %s\n", names[i], r)
		}
	}
	if checked == nil {
		return nil
	}
	for _, f := range checkFails {
		fmt.Fprintf(stdout, "FAIL %s\n", f)
	}
	if len(checkFails) > 0 {
		return fmt.Errorf("%d of %d checks failed", len(checkFails), len(checked.Checks))
	}
	fmt.Fprintf(stdout, "%d checks passed\n", len(checked.Checks))
	return nil
}

func describeParams(exe *vkjit.Executable) string {
	var s []string
	for _, p := range exe.Params() {
		s = append(s, p.String())
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// printStats writes the --stats table.
func printStats(w io.Writer, s runStats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, v any, note string) { fmt.Fprintf(tw, "%s\t%v\t %s\n", name, v, note) }
	row("kernels", s.Kernels, "")
	if s.Warmed > 0 {
		row("warmed", s.Warmed, "dispatches compiled ahead of the first run, on several threads")
	}
	row("dispatches", s.Dispatches, "loop iterations included")
	row("submits", s.Submits, "batches of dispatches waited for: 1, and 1 for each value read back to decide what runs next")
	row("peak device memory", s.PeakDeviceBytes, "bytes")
	row("arena", s.ArenaBytes, fmt.Sprintf("bytes of temporaries; liveness lower bound %d", s.LiveBoundBytes))
	row("saved by fusion", s.SavedByFusion, "bytes of intermediates never stored")
	row("saved by reuse", s.SavedByReuse, "bytes shared between temporaries whose lives do not overlap")
	row("compile", fmt.Sprintf("%.1f", s.CompileMs), "ms")
	row("run", fmt.Sprintf("%.1f", s.RunMs), "ms, transfers included")
	tw.Flush()
}

// parseDonate reads --donate: "all" or comma-separated parameter leaf
// numbers (parameters in order, tuple parameters flattened depth-first).
func parseDonate(v string, m *hlo.Module) ([]int, error) {
	if v == "" {
		return nil, nil
	}
	if v == "all" {
		n := 0
		for _, p := range m.Entry.Params {
			n += len(p.Shape.Leaves())
		}
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--donate: %q is not a parameter number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// printProfile writes the --profile table: device time per kernel and
// instruction, summed over its dispatches (loop iterations), longest
// first.
func printProfile(w io.Writer, times []vkjit.DispatchTime) {
	type row struct {
		kernel, inst string
		fused        int
		ms           float64
		calls        int
	}
	var rows []*row
	by := map[string]*row{}
	total := 0.0
	for _, t := range times {
		key := t.Kernel + "|" + t.Inst
		r := by[key]
		if r == nil {
			r = &row{kernel: t.Kernel, inst: t.Inst, fused: len(t.Fused)}
			by[key] = r
			rows = append(rows, r)
		}
		r.ms += ms(t.Time)
		r.calls++
		total += ms(t.Time)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ms > rows[j].ms })
	fmt.Fprintf(w, "device time %.3f ms in %d dispatches (serialized; timestamps)\n", total, len(times))
	fmt.Fprintf(w, "%10s %6s %6s  %-28s %s\n", "ms", "%", "calls", "kernel", "instruction (+fused)")
	for _, r := range rows {
		pct := 0.0
		if total > 0 {
			pct = 100 * r.ms / total
		}
		inst := r.inst
		if r.fused > 0 {
			inst = fmt.Sprintf("%s (+%d)", inst, r.fused)
		}
		fmt.Fprintf(w, "%10.3f %6.1f %6d  %-28s %s\n", r.ms, pct, r.calls, r.kernel, inst)
	}
}

// moduleHint names --module in the error of a file of several modules.
func moduleHint(err error) error {
	var he *hlo.Error
	if errors.As(err, &he) && strings.HasPrefix(he.Msg, "expected one module") {
		return fmt.Errorf("%w (--module N or --module NAME picks one)", err)
	}
	return err
}

// pickModule parses the HLO module of src that which names (its 1-based
// index or its name among the file's // ----- separated modules; the
// file's only module when empty).
func pickModule(file, src, which string) (*hlo.Module, error) {
	if which == "" {
		m, err := hlo.Parse(file, src)
		return m, moduleHint(err)
	}
	mods, err := hlo.ParseModules(file, src)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.Name
	}
	i, err := pickIndex(file, which, names)
	if err != nil {
		return nil, err
	}
	return mods[i], nil
}

// pickProgram translates the StableHLO program of src that which names,
// as pickModule does.
func pickProgram(file, src, which string, args []hlo.Shape) (*stablehlo.Translated, error) {
	o := stablehlo.Options{Args: args}
	if which == "" {
		t, err := stablehlo.ParseOneWith(file, src, o)
		if err != nil && strings.Contains(err.Error(), "programs, where one is compiled") {
			return nil, fmt.Errorf("%w; --module N or --module NAME picks one", err)
		}
		return t, err
	}
	ts, errs, err := stablehlo.ParseWith(file, src, o)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		if t.HLO != nil {
			names[i] = t.HLO.Name
		}
	}
	i, err := pickIndex(file, which, names)
	if err != nil {
		return nil, err
	}
	return ts[i], errs[i]
}

// pickIndex finds which (a 1-based index, or one of names) among names.
func pickIndex(file, which string, names []string) (int, error) {
	if n, err := strconv.Atoi(which); err == nil {
		if n < 1 || n > len(names) {
			return 0, fmt.Errorf("%s: --module %d: the file holds %d modules", file, n, len(names))
		}
		return n - 1, nil
	}
	for i, name := range names {
		if name == which {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s: --module %q: no module of that name (the file's: %s)", file, which, strings.Join(names, ", "))
}
