package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/hlo/stablehlo"
	"github.com/vkjit/vkjit/lower"
)

func TestMain(m *testing.M) {
	os.Setenv("VKJIT_VALIDATE", "1") // run fails if the layer reports anything
	dir, err := os.MkdirTemp("", "vkjit-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("VKJIT_CACHE_DIR", dir) // the tests' own compile cache
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func vkjitCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeArgs(t *testing.T, dir string) (string, string) {
	x, _ := vkjit.Float32s([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	y, _ := vkjit.Float32s([]int64{2, 3}, []float32{-1, 0, 1, -100, 2, 0.5})
	return writeNPY(t, filepath.Join(dir, "x.npy"), x), writeNPY(t, filepath.Join(dir, "y.npy"), y)
}

// writeNPY writes x to the .npy file path and returns path.
func writeNPY(t *testing.T, path string, x *vkjit.Tensor) string {
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, vkjit.WriteNPY(f, x))
	require.NoError(t, f.Close())
	return path
}

func TestDevices(t *testing.T) {
	code, out, errs := vkjitCmd("devices")
	require.Equal(t, 0, code, errs)
	for _, want := range []string{"0: ", "type:", "driver:", "api version:", "subgroup size:", "memory heaps:"} {
		require.Contains(t, out, want)
	}
}

func TestRunWritesNPZAndStats(t *testing.T) {
	dir := t.TempDir()
	px, py := writeArgs(t, dir)
	npz, stats := filepath.Join(dir, "out.npz"), filepath.Join(dir, "stats.json")
	// Flags after the positional arguments work too.
	code, _, errs := vkjitCmd("run", "--stats-json", stats, "testdata/chain.hlo", px, py, "--out", npz)
	require.Equal(t, 0, code, errs)
	res, err := vkjit.ReadNPZ(npz)
	require.NoError(t, err)
	require.Len(t, res, 2, "a tuple result is flattened to out0, out1")
	got, err := res["out0"].AsFloat32()
	require.NoError(t, err)
	// -((x+y)*x): x=[1..6], y=[-1,0,1,-100,2,0.5]
	require.Equal(t, []float32{float32(math.Copysign(0, -1)), -4, -12, 384, -35, -39}, got)
	require.True(t, math.Signbit(float64(got[0])), "-(0*1) is -0")
	require.Equal(t, []byte{0, 1, 1, 0, 1, 1}, res["out1"].Data, "-((x+y)*x) < y")
	require.Equal(t, []int64{2, 3}, res["out1"].Dims)

	var s map[string]any
	b, err := os.ReadFile(stats)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	for _, k := range []string{"compile_ms", "run_ms", "kernels", "dispatches", "peak_device_bytes", "cache_hits", "cache_misses"} {
		require.Contains(t, s, k)
	}
	// One kernel: add and multiply are computed inside negate (loop
	// fusion), and compare's kernel computes negate alongside and writes
	// both results (multi-output fusion).
	require.Equal(t, float64(1), s["kernels"])
	require.Equal(t, float64(1), s["dispatches"])
	require.Equal(t, float64(0), s["cache_hits"])
	// Two 24-byte parameters, then the arena: negate's result and the
	// pred result (6 words), each aligned as the device requires.
	require.Equal(t, float64(2*24)+s["arena_bytes"].(float64), s["peak_device_bytes"])
	require.GreaterOrEqual(t, s["arena_bytes"].(float64), float64(2*24))
	require.Equal(t, s["arena_bytes"], s["liveness_bound_bytes"], "both results live to the end")
	require.Greater(t, s["compile_ms"].(float64), 0.0)
}

func TestRunPrints(t *testing.T) {
	px, py := writeArgs(t, t.TempDir())
	code, out, errs := vkjitCmd("run", "testdata/chain.hlo", px, py)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "out0: f32[2,3] [-0 -4 -12 384 -35 -39]")
	require.Contains(t, out, "out1: pred[2,3] [false true true false true true]")
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	px, py := writeArgs(t, dir)
	bad := filepath.Join(dir, "bad.hlo")
	require.NoError(t, os.WriteFile(bad, []byte("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] sine(x, x)\n}\n"), 0o644))
	syntax := filepath.Join(dir, "syntax.hlo")
	require.NoError(t, os.WriteFile(syntax, []byte("HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n"), 0o644))
	s8 := filepath.Join(dir, "s8.npy")
	f, _ := os.Create(s8)
	vkjit.WriteNPY(f, &vkjit.Tensor{Type: vkjit.S8, Dims: []int64{2, 3}, Data: make([]byte, 6)})
	f.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "testdata/chain.hlo", px}, "takes 2 arguments (f32[2,3], f32[2,3]), got 1"},
		{[]string{"run", "testdata/chain.hlo", px, s8}, "argument 1 (parameter y.2): want element type f32, got s8"},
		{[]string{"run", "testdata/chain.hlo", px, filepath.Join(dir, "nope.npy")}, "nope.npy"},
		{[]string{"run", bad, px}, "bad.hlo:4:3: y (sine): takes 1 operands, has 2"},
		{[]string{"run", syntax, px}, "syntax.hlo:4:1: expected \")\""},
		{[]string{"run", "--bogus", "x.hlo"}, "flag provided but not defined"},
		{[]string{"run"}, "no HLO file"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"run", "--device", "no-such-device", "testdata/chain.hlo", px, py}, "no device name contains"},
	} {
		code, _, errs := vkjitCmd(tc.args...)
		require.Equal(t, 1, code, "%v", tc.args)
		require.Contains(t, errs, tc.want, "%v", tc.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
		require.True(t, strings.HasPrefix(errs, "vkjit: "))
	}
}

// TestCommandHelp: each command's -h or --help prints its flags to
// stdout and succeeds (it printed "flag: help requested" as an error).
func TestCommandHelp(t *testing.T) {
	for _, tc := range []struct{ cmd, flag string }{
		{"run", "-compare"}, {"bench", "-iterations"}, {"test", "-expected"}, {"fmt", "-hlo"}, {"graph", "-o"}, {"devices", ""},
	} {
		for _, h := range []string{"-h", "--help"} {
			code, out, errs := vkjitCmd(tc.cmd, h)
			require.Equal(t, 0, code, "%s %s: %s", tc.cmd, h, errs)
			require.Empty(t, errs)
			require.Contains(t, out, "Flags of vkjit "+tc.cmd)
			require.Contains(t, out, tc.flag)
		}
	}
}

func TestFmtFixedPoint(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.hlo")
	require.NoError(t, os.WriteFile(in, []byte(`HloModule a
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}
ENTRY %main (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add
}
// -----
HloModule b
ENTRY e {
  p0 = f64[3] parameter(0)
  ROOT out = add(p0, p0)
}
`), 0o644))
	code, out1, errs := vkjitCmd("fmt", in)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out1, "\n// -----\n")
	require.Contains(t, out1, "ROOT out = f64[3] add(p0, p0)", "the omitted shape is filled in")
	require.Contains(t, out1, "ROOT s = f32[] add(x, y)", "typed operands and sigils are dropped")
	again := filepath.Join(dir, "again.hlo")
	require.NoError(t, os.WriteFile(again, []byte(out1), 0o644))
	code, out2, errs := vkjitCmd("fmt", again)
	require.Equal(t, 0, code, errs)
	require.Equal(t, out1, out2, "fmt of fmt's output is byte-identical")

	code, _, errs = vkjitCmd("fmt", filepath.Join(dir, "missing.hlo"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, "missing.hlo")
}

// TestCompareFailureWritesResults: a --compare that fails exits 1 and
// still writes --out and --stats-json, the results one inspects next
// (they were dropped, and a session had to run again without --compare
// to see them). exp of 4096 values against the evaluator's correctly
// rounded ones with --rtol 0 --atol 0: lavapipe's exp differs in the
// last bit on some (367 of 4096).
func TestCompareFailureWritesResults(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "exp.hlo")
	require.NoError(t, os.WriteFile(src, []byte("HloModule e\nENTRY e {\n  x = f32[4096] parameter(0)\n  ROOT y = f32[4096] exponential(x)\n}\n"), 0o644))
	npz, stats := filepath.Join(dir, "out.npz"), filepath.Join(dir, "stats.json")
	code, out, errs := vkjitCmd("run", "--random-args", "--compare", "--rtol", "0", "--atol", "0", "--out", npz, "--stats-json", stats, src)
	if code == 0 {
		t.Skip("this device's exp matched the evaluator's bit for bit: no failing comparison to make")
	}
	require.Equal(t, 1, code, errs)
	require.Contains(t, out, "FAIL")
	require.Contains(t, errs, "differ from the reference evaluator")
	got, err := vkjit.ReadNPZ(npz)
	require.NoError(t, err)
	require.Len(t, got["out0"].Data, 4*4096)
	_, err = os.Stat(stats)
	require.NoError(t, err)
}

func TestRandomArgsCompare(t *testing.T) {
	code, out, errs := vkjitCmd("run", "--random-args", "--seed", "7", "--compare", "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "out0: f32[2,3] max abs err 0, max rel err 0: ok")
	require.Contains(t, out, "out1: pred[2,3] max abs err 0, max rel err 0: ok")
	code, _, errs = vkjitCmd("run", "--random-args", "testdata/chain.hlo", "x.npy")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "exclude each other")
	// Without --compare the module is not parsed (its arguments come
	// from the executable's parameters, twice: the second run a cache
	// hit): the same arguments as hlotest.UniformInputs makes.
	m, err := hlo.ParseFile("testdata/chain.hlo")
	require.NoError(t, err)
	want, err := eval.Run(m[0], hlotest.UniformInputs(m[0], 7)...)
	require.NoError(t, err)
	for range 2 {
		npz := filepath.Join(t.TempDir(), "out.npz")
		code, _, errs = vkjitCmd("run", "--random-args", "--seed", "7", "--out", npz, "testdata/chain.hlo")
		require.Equal(t, 0, code, errs)
		got, err := vkjit.ReadNPZ(npz)
		require.NoError(t, err)
		for i, w := range want.Leaves() {
			require.Equal(t, w.Data, got[fmt.Sprintf("out%d", i)].Data, "out%d", i)
		}
	}
}

func TestCompareOutputs(t *testing.T) {
	got, _ := vkjit.Float32s([]int64{3}, []float32{1, 2.001, float32(math.NaN())})
	want := &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, 3), Data: got.Data}
	var b strings.Builder
	require.True(t, compareOutputs(&b, []*vkjit.Tensor{got}, []*hlo.Literal{want}, nil, -1, -1))
	off, _ := vkjit.Float32s([]int64{3}, []float32{1, 2, float32(math.NaN())})
	b.Reset()
	require.False(t, compareOutputs(&b, []*vkjit.Tensor{got}, []*hlo.Literal{{Shape: want.Shape, Data: off.Data}}, nil, -1, -1))
	require.Contains(t, b.String(), "FAIL: 1 of 3 elements beyond rtol=0.0001 atol=1e-05")
	require.True(t, compareOutputs(&b, []*vkjit.Tensor{got}, []*hlo.Literal{{Shape: want.Shape, Data: off.Data}}, nil, 1e-3, 0), "--rtol loosens it")

	// Infinities match only themselves, whatever the tolerance: NaN or a
	// finite value where the reference has +inf is a difference.
	inf := float32(math.Inf(1))
	for _, tc := range []struct{ got, want float32 }{
		{float32(math.NaN()), inf}, {inf, float32(math.NaN())}, {3e38, inf}, {inf, 3e38}, {-inf, inf}, {inf, 1},
	} {
		g, _ := vkjit.Float32s([]int64{2}, []float32{1, tc.got})
		w, _ := vkjit.Float32s([]int64{2}, []float32{1, tc.want})
		b.Reset()
		require.False(t, compareOutputs(&b, []*vkjit.Tensor{g}, []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F32, 2), Data: w.Data}}, nil, 1, 1), "got %v want %v", tc.got, tc.want)
		require.Contains(t, b.String(), "FAIL: 1 of 2")
	}
	g, _ := vkjit.Float32s([]int64{2}, []float32{-inf, inf})
	b.Reset()
	require.True(t, compareOutputs(&b, []*vkjit.Tensor{g}, []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F32, 2), Data: g.Data}}, nil, -1, -1))
}

func TestGraph(t *testing.T) {
	code, out, errs := vkjitCmd("graph", "../../bench/workloads/softmax.hlo")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "digraph \"jit_softmax\"")
	require.Equal(t, 1, strings.Count(out, "subgraph cluster_"), "softmax is one row kernel on lavapipe:\n%s", out)
	code, out, errs = vkjitCmd("graph", "testdata/recompute.hlo")
	require.Equal(t, 0, code, errs)
	require.Equal(t, 2, strings.Count(out, "subgraph cluster_"), out)
	require.Contains(t, out, "recomputed in dispatches 0, 1", "exp(x) is recomputed by the row and the column sum")
	dotFile := filepath.Join(t.TempDir(), "g.dot")
	code, _, errs = vkjitCmd("graph", "-o", dotFile, "--no-fuse", "../../bench/workloads/softmax.hlo")
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(dotFile)
	require.NoError(t, err)
	require.Equal(t, 7, strings.Count(string(b), "subgraph cluster_"), "unfused: a dispatch per instruction")
	code, _, errs = vkjitCmd("graph", "-o", filepath.Join(t.TempDir(), "g.txt"), "../../bench/workloads/softmax.hlo")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "write .dot, .svg or .png")
}

func TestMemProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "mem.pprof")
	stats := filepath.Join(t.TempDir(), "stats.json")
	code, _, errs := vkjitCmd("run", "--random-args", "--memprofile", prof, "--stats-json", stats, "../../tests/testdata/mlp_train/graph.hlo")
	require.Equal(t, 0, code, errs)
	f, err := os.Open(prof)
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err)
	require.Equal(t, "space", p.SampleType[0].Type)
	var total int64
	names := map[string]bool{}
	for _, s := range p.Sample {
		total += s.Value[0]
		names[s.Location[0].Line[0].Function.Name] = true
	}
	require.True(t, names["w1"], "parameters are live at the peak")
	b, err := os.ReadFile(stats)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(b, &st))
	require.LessOrEqual(t, float64(total), st["peak_device_bytes"].(float64), "the profile holds what is live at the peak")
	require.Greater(t, total, int64(6*1000))
}

func TestCacheCommand(t *testing.T) {
	code, out, errs := vkjitCmd("cache", "dir")
	require.Equal(t, 0, code, errs)
	require.Equal(t, os.Getenv("VKJIT_CACHE_DIR")+"\n", out)
	code, _, errs = vkjitCmd("run", "--random-args", "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	code, out, _ = vkjitCmd("cache", "stats")
	require.Equal(t, 0, code)
	require.Regexp(t, `entries\s+[1-9]`, out)
	code, _, _ = vkjitCmd("cache", "clear")
	require.Equal(t, 0, code)
	_, out, _ = vkjitCmd("cache", "stats")
	require.Regexp(t, `entries\s+0\n`, out)
	code, _, errs = vkjitCmd("cache", "shrink")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "unknown subcommand")
}

func TestRunProfile(t *testing.T) {
	code, out, errs := vkjitCmd("run", "--random-args", "--profile", "../../bench/workloads/softmax.hlo")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "device time")
	require.Contains(t, out, "in 1 dispatches")
	require.Contains(t, out, "row_divide_f32_vec4")
}

func TestBench(t *testing.T) {
	code, out, errs := vkjitCmd("bench", "--json", "--iterations", "3", "--warmup", "1", "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	for _, k := range []string{"median_ms", "min_ms", "max_ms", "iterations", "compile_ms"} {
		require.Contains(t, res, k)
	}
	require.Equal(t, float64(3), res["iterations"])
	require.LessOrEqual(t, res["min_ms"].(float64), res["median_ms"].(float64))
	require.LessOrEqual(t, res["median_ms"].(float64), res["max_ms"].(float64))
	code, out, errs = vkjitCmd("bench", "--json", "--iterations", "1", "--stream", "4", "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	res = nil
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, float64(4), res["stream_runs"])
	require.Greater(t, res["stream_ms_per_run"].(float64), 0.0)
	require.Greater(t, res["sequential_ms_per_run"].(float64), 0.0)
	code, _, errs = vkjitCmd("bench", "--iterations", "0", "testdata/chain.hlo")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "--iterations must be at least 1")
	// Arguments on the device, results left there: as JAX's peer times.
	code, out, errs = vkjitCmd("bench", "--json", "--iterations", "2", "--warmup", "1", "--device-args", "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	res = nil
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, true, res["device_args"])
	require.Greater(t, res["median_ms"].(float64), 0.0)
	code, _, errs = vkjitCmd("bench", "--device-args", "--include-transfers", "testdata/chain.hlo")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "not with --include-transfers")
}

// Every file vkjit writes for a user goes through what is at the path: a
// device is written through (as root, /dev/null was once replaced by a
// regular file), a write error fails the run, a symbolic link is followed
// and a regular file keeps its mode.
func TestOutputPaths(t *testing.T) {
	px, py := writeArgs(t, t.TempDir())
	for _, flagName := range []string{"--out", "--stats-json", "--memprofile"} {
		code, _, errs := vkjitCmd("run", flagName, "/dev/null", "testdata/chain.hlo", px, py)
		require.Equal(t, 0, code, "%s /dev/null: %s", flagName, errs)
		fi, err := os.Stat("/dev/null")
		require.NoError(t, err)
		require.NotZero(t, fi.Mode()&os.ModeCharDevice, "%s replaced /dev/null", flagName)
		if _, err := os.Stat("/dev/full"); err == nil {
			code, _, errs = vkjitCmd("run", flagName, "/dev/full", "testdata/chain.hlo", px, py)
			require.Equal(t, 1, code, "%s /dev/full must fail", flagName)
			require.Contains(t, errs, "no space left on device", flagName)
		}
	}
	dot := filepath.Join(t.TempDir(), "g.dot")
	require.NoError(t, os.WriteFile(dot, []byte("old"), 0o600))
	code, _, errs := vkjitCmd("graph", "-o", dot, "testdata/chain.hlo")
	require.Equal(t, 0, code, errs)
	fi, _ := os.Stat(dot)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "graph -o keeps the mode too")

	dir := t.TempDir()
	real := filepath.Join(dir, "real.npz")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o640))
	require.NoError(t, os.Chmod(real, 0o640))
	link := filepath.Join(dir, "link.npz")
	require.NoError(t, os.Symlink(real, link))
	code, _, errs = vkjitCmd("run", "--out", link, "testdata/chain.hlo", px, py)
	require.Equal(t, 0, code, errs)
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link stays a link")
	res, err := vkjit.ReadNPZ(real)
	require.NoError(t, err)
	require.Len(t, res, 2)
	fi, _ = os.Stat(real)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "a replaced file keeps its mode")
}

// A cache entry copied over another module's entry is refused, not run:
// each entry carries its own key (once, the copy's program ran for the
// other module and exited 0 with its results).
func TestCacheEntryUnderAnotherKey(t *testing.T) {
	dir := t.TempDir()
	px, py := writeArgs(t, t.TempDir())
	entries := func() map[string]bool {
		m := map[string]bool{}
		names, _ := filepath.Glob(filepath.Join(dir, "*.vkjit"))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	other := filepath.Join(t.TempDir(), "other.hlo")
	require.NoError(t, os.WriteFile(other, []byte("HloModule other\nENTRY e {\n  x = f32[2,3] parameter(0)\n  y = f32[2,3] parameter(1)\n  ROOT s = f32[2,3] subtract(x, y)\n}\n"), 0o644))
	code, want, errs := vkjitCmd("run", "--cache-dir", dir, other, px, py)
	require.Equal(t, 0, code, errs)
	before := entries()
	require.Len(t, before, 1)
	code, _, errs = vkjitCmd("run", "--cache-dir", dir, "testdata/chain.hlo", px, py)
	require.Equal(t, 0, code, errs)
	var chainEntry, otherEntry string
	for n := range entries() {
		if !before[n] {
			chainEntry = n
		}
	}
	for n := range before {
		otherEntry = n
	}
	b, err := os.ReadFile(chainEntry)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(otherEntry, b, 0o644))
	code, out, errs := vkjitCmd("run", "--cache-dir", dir, other, px, py)
	require.Equal(t, 0, code, errs)
	require.Equal(t, want, out, "the module's own program ran")
	require.Contains(t, errs, "copied or renamed?")
}

// --compare of a module whose root shape is left out, twice: the second
// run's compile comes from the cache, so nothing verified the module and
// the evaluator saw a shape of no element type.
func TestCompareInferredShapeCached(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "inferred.hlo")
	require.NoError(t, os.WriteFile(src, []byte("HloModule m\nENTRY e {\n  x = f64[3] parameter(0)\n  y = f64[3] parameter(1)\n  ROOT out = add(x, y)\n}\n"), 0o644))
	for i := 0; i < 2; i++ {
		code, out, errs := vkjitCmd("run", "--cache-dir", dir, "--random-args", "--compare", src)
		require.Equal(t, 0, code, "run %d: %s", i, errs)
		require.Contains(t, out, "out0: f64[3] max abs err 0, max rel err 0: ok")
	}
}

// Bad settings are errors, whichever way they come (a bad
// VKJIT_MEM_LIMIT_BYTES always was; these were ignored), and no message
// says "vkjit:" twice.
func TestBadSettings(t *testing.T) {
	px, py := writeArgs(t, t.TempDir())
	for _, tc := range []struct {
		env, val string
		args     []string
		want     string
	}{
		{"", "", []string{"--memory-budget", "-5"}, "--memory-budget=-5 is not a byte count"},
		{"VKJIT_CACHE_MAX_BYTES", "abc", nil, `VKJIT_CACHE_MAX_BYTES="abc" is not a positive byte count`},
		{"VKJIT_CACHE_MAX_BYTES", "-1", nil, `VKJIT_CACHE_MAX_BYTES="-1" is not a positive byte count`},
		{"VKJIT_VALIDATE", "maybe", nil, `VKJIT_VALIDATE="maybe" is not true or false`},
		{"VKJIT_MEM_LIMIT_BYTES", "abc", nil, `VKJIT_MEM_LIMIT_BYTES="abc" is not a positive byte count`},
	} {
		if tc.env != "" {
			t.Setenv(tc.env, tc.val)
		}
		args := append(append([]string{"run"}, tc.args...), "testdata/chain.hlo", px, py)
		code, _, errs := vkjitCmd(args...)
		require.Equal(t, 1, code, "%s=%s %v", tc.env, tc.val, tc.args)
		require.Contains(t, errs, tc.want)
		require.NotContains(t, errs, "vkjit: vkjit:")
		if tc.env != "" {
			os.Unsetenv(tc.env)
		}
	}
	code, _, errs := vkjitCmd("run", "--out", "/nonexistent-dir/x.npz", "testdata/chain.hlo", px, py)
	require.Equal(t, 1, code)
	require.NotContains(t, errs, "vkjit: vkjit:")
	t.Setenv("VKJIT_CACHE_MAX_BYTES", "abc")
	code, _, errs = vkjitCmd("cache", "stats")
	require.Equal(t, 1, code)
	require.Contains(t, errs, `VKJIT_CACHE_MAX_BYTES="abc"`)
}

// TestRunStableHLO: vkjit run takes StableHLO with .npy arguments,
// evaluates its check ops (a failed one: exit status 1) and writes only
// the entry's own results with --out, pass or fail; fmt --hlo prints
// the HLO it becomes, and fmt without it refuses.
func TestRunStableHLO(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join("testdata", "checked.mlir")
	for _, c := range []struct {
		x    []float32
		code int
		says string
	}{{[]float32{1, 5, 6}, 0, "1 checks passed"}, {[]float32{3, 5, 6}, 1, "checked.mlir:7:3: check.expect_eq_const"}} {
		x, _ := vkjit.Float32s([]int64{3}, c.x)
		px := writeNPY(t, filepath.Join(dir, "x.npy"), x)
		out := filepath.Join(dir, "out.npz")
		os.Remove(out)
		code, stdout, stderr := vkjitCmd("run", graph, px, "--out", out)
		require.Equal(t, c.code, code, "%s%s", stdout, stderr)
		require.Contains(t, stdout+stderr, c.says)
		got, err := vkjit.ReadNPZ(out)
		require.NoError(t, err)
		require.Len(t, got, 1, "the entry's result only, not the checks' values")
		y, err := got["out0"].AsFloat32()
		require.NoError(t, err)
		require.Equal(t, []float32{c.x[0] + 1, c.x[1] + 1, c.x[2] + 1}, y)
	}
	code, stdout, _ := vkjitCmd("fmt", "--hlo", graph)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "add(")
	code, _, stderr := vkjitCmd("fmt", graph)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--hlo prints the HLO it becomes")
}

// TestFmtPlan: fmt --plan prints what a module compiles to, without a
// device: the row softmax is one row kernel on lavapipe, three kernels
// unfused or more; --target names the device.
func TestFmtPlan(t *testing.T) {
	graph := filepath.Join("..", "..", "shaders", "programs", "softmax.hlo")
	code, stdout, stderr := vkjitCmd("fmt", "--plan", graph)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "plan y row rows of 1 dims; first rowmax rowsum")
	require.Contains(t, stdout, "1 kernels, 1 steps")
	code, stdout, _ = vkjitCmd("fmt", "--plan", "--no-fuse", "--target", "minimum", graph)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "plan rowmax reduce")
	require.NotContains(t, stdout, " row ")
	code, _, stderr = vkjitCmd("fmt", "--plan", "--target", "tpu", graph)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "want lavapipe, lavapipe-512 or minimum")
	// lavapipe 512 bits wide: a GEMM's subgroup tiles of 16 lanes, two
	// lhs rows a lane.
	gemm := filepath.Join("..", "..", "shaders", "programs", "gemm.hlo")
	code, stdout, stderr = vkjitCmd("fmt", "--plan", "--target", "lavapipe-512", gemm)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "gemm32x64_f32_lanes16_")
}

// TestRunModule: in a file of several modules (XLA's lit tests, a
// StableHLO file of // ----- separated programs), --module picks one by
// its 1-based index or its name; without it the error says how.
func TestRunModule(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.hlo")
	require.NoError(t, os.WriteFile(two, []byte(`HloModule first
ENTRY e {
  x = f32[2] parameter(0)
  ROOT y = f32[2] add(x, x)
}

// -----

HloModule second
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[3] multiply(x, x)
}
`), 0o644))
	code, _, errs := vkjitCmd("run", "--random-args", two)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "expected one module, found 2 (--module N or --module NAME picks one)")
	code, out, errs := vkjitCmd("run", "--random-args", "--compare", "--module", "2", two)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "out0: f32[3] max abs err 0, max rel err 0: ok")
	code, out, errs = vkjitCmd("run", "--random-args", "--compare", "--module", "first", two)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "out0: f32[2] max abs err 0, max rel err 0: ok")
	code, _, errs = vkjitCmd("run", "--random-args", "--module", "3", two)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "--module 3: the file holds 2 modules")
	code, _, errs = vkjitCmd("run", "--random-args", "--module", "third", two)
	require.Equal(t, 1, code)
	require.Contains(t, errs, `--module "third": no module of that name (the file's: first, second)`)

	mlir := filepath.Join(dir, "two.mlir")
	require.NoError(t, os.WriteFile(mlir, []byte(`module @a {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = stablehlo.add %x, %x : tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
// -----
module @b {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %y = stablehlo.multiply %x, %x : tensor<3xf32>
    return %y : tensor<3xf32>
  }
}
`), 0o644))
	code, _, errs = vkjitCmd("run", "--random-args", mlir)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "--module N or --module NAME picks one")
	code, out, errs = vkjitCmd("run", "--random-args", "--compare", "--module", "b", mlir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "out0: f32[3] max abs err 0, max rel err 0: ok")
}

// TestComputedIn: an f32 result computed through bf16 or f16 values
// (a while body's included) is compared with that type's tolerance;
// one computed in f32 alone keeps f32's, whatever its inputs' types.
func TestComputedIn(t *testing.T) {
	m, err := hlo.Parse("t.hlo", `HloModule m
cond {
  p = (s32[], bf16[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], bf16[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = bf16[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = bf16[4] multiply(x, x)
  ROOT o = (s32[], bf16[4]) tuple(i1, y)
}
ENTRY e {
  a = f32[4] parameter(0)
  h = f16[4] parameter(1)
  b = bf16[4] parameter(2)
  z = s32[] constant(0)
  t = (s32[], bf16[4]) tuple(z, b)
  w = (s32[], bf16[4]) while(t), condition=cond, body=body
  r = bf16[4] get-tuple-element(w), index=1
  r32 = f32[4] convert(r)
  hh = f16[4] add(h, h)
  h32 = f32[4] convert(hh)
  s = f32[4] add(a, h32)
  h2 = f32[4] convert(h)
  plain = f32[4] multiply(a, h2)
  ROOT out = (f32[4], f32[4], f32[4]) tuple(r32, s, plain)
}
`)
	require.NoError(t, err)
	require.Equal(t, []hlo.ElementType{hlo.BF16, hlo.F16, hlo.Invalid}, computedIn(m))

	got, _ := vkjit.Float32s([]int64{2}, []float32{100, 200})
	off, _ := vkjit.Float32s([]int64{2}, []float32{100, 200.5})
	want := []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F32, 2), Data: off.Data}}
	var b strings.Builder
	require.False(t, compareOutputs(&b, []*vkjit.Tensor{got}, want, []hlo.ElementType{hlo.Invalid}, -1, -1))
	require.True(t, compareOutputs(&b, []*vkjit.Tensor{got}, want, []hlo.ElementType{hlo.BF16}, -1, -1), b.String())
}

// TestConstantsAsArgs: --constants-as-args turns a conformance module's
// array constants into parameters passed as arguments, so that the
// device computes the ops folding would compute on the host; both ways
// the module passes.
func TestConstantsAsArgs(t *testing.T) {
	file := filepath.Join("testdata", "folded.mlir")
	for _, flags := range [][]string{nil, {"--constants-as-args"}} {
		code, stdout, stderr := vkjitCmd(append(append([]string{"test"}, flags...), file)...)
		require.Equal(t, 0, code, "%v: %s%s", flags, stdout, stderr)
		require.Contains(t, stdout, "1 passed, 0 failed", "%v", flags)
	}
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	ts, errs, err := stablehlo.Parse(file, string(src))
	require.NoError(t, err)
	require.NoError(t, errs[0])
	m := ts[0].HLO
	args := vkjit.ConstantsAsParameters(m)
	require.Len(t, args, 2)
	require.Len(t, m.Entry.Params, 2)
	for i, p := range m.Entry.Params {
		require.Equal(t, hlo.OpParameter, p.Op)
		require.Equal(t, i, p.ParamNum)
		require.Equal(t, []int64{3}, args[i].Dims)
	}
	require.Equal(t, []byte{0x00, 0x00, 0x00, 0x3c, 0x4a, 0xcc}, args[0].Data) // 0, 1, -17.15625 as f16
	prog, err := lower.Compile(m, lower.LlvmpipeTarget, lower.Options{})
	require.NoError(t, err)
	require.NotEmpty(t, prog.Kernels, "the exponential runs on the device")
}

// TestRunDynamicShapes: run refines a module of symbolic shapes from its
// .npy arguments (--compare against the evaluator of the refined
// module), and says what to give where none are.
func TestRunDynamicShapes(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join("..", "..", "testdata", "dynamic_softmax.mlir")
	for _, b := range []int64{2, 5} {
		v := make([]float32, b*8)
		for i := range v {
			v[i] = float32(i%7) - 3
		}
		x, _ := vkjit.Float32s([]int64{b, 8}, v)
		px := writeNPY(t, filepath.Join(dir, "x.npy"), x)
		out := filepath.Join(dir, "out.npz")
		code, stdout, stderr := vkjitCmd("run", "--compare", graph, px, "--out", out)
		require.Equal(t, 0, code, "%s%s", stdout, stderr)
		got, err := vkjit.ReadNPZ(out)
		require.NoError(t, err)
		require.Equal(t, []int64{b, 8}, got["out0"].Dims)
		require.Equal(t, []int64{b}, got["out1"].Dims)
	}
	code, _, stderr := vkjitCmd("run", "--random-args", graph)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "a dynamic shape without the arguments' shapes to refine it from (vkjit run with .npy files")
}
