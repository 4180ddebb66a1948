// Package tests holds end-to-end tests: real programs run through the
// vkjit command on the Vulkan device, with the validation layer on,
// checked against results computed independently of vkjit (NumPy,
// committed as .npy files beside each program).
package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/spirv"
)

var vkjitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vkjit-e2e")
	if err != nil {
		panic(err)
	}
	vkjitBin = filepath.Join(dir, "vkjit")
	// The tests' own compile cache, not the user's.
	os.Setenv("VKJIT_CACHE_DIR", filepath.Join(dir, "cache"))
	if bin := os.Getenv("VKJIT_TEST_BIN"); bin != "" {
		// A vkjit built elsewhere, for a machine without Go (a lent GPU
		// runs `go test -c`'s binary beside one built here).
		if vkjitBin, err = filepath.Abs(bin); err != nil {
			panic(err)
		}
	} else {
		build := exec.Command("go", "build", "-o", vkjitBin, "../cmd/vkjit")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			panic("building vkjit: " + err.Error())
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestElementwiseProgram runs tests/testdata/elementwise through
// `vkjit run` with the validation layer on and compares with NumPy.
func TestElementwiseProgram(t *testing.T) {
	dir := filepath.Join("testdata", "elementwise")
	graph := filepath.Join(dir, "graph.hlo")
	out := filepath.Join(t.TempDir(), "out.npz")
	cmd := exec.Command(vkjitBin, "run", graph, filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy"), "--out", out)
	cmd.Env = append(os.Environ(), "VKJIT_VALIDATE=1")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.Empty(t, string(msg), "the validation layer and vkjit stay silent")

	got, err := vkjit.ReadNPZ(out)
	require.NoError(t, err)
	want0, err := vkjit.ReadNPYFile(filepath.Join(dir, "want_out0.npy"))
	require.NoError(t, err)
	want1, err := vkjit.ReadNPYFile(filepath.Join(dir, "want_out1.npy"))
	require.NoError(t, err)

	g0, err := got["out0"].AsFloat32()
	require.NoError(t, err)
	w0, err := want0.AsFloat32()
	require.NoError(t, err)
	require.Equal(t, want0.Dims, got["out0"].Dims)
	worst := int64(0)
	for i := range w0 {
		d := hlotest.ULPs(hlo.F32, float64(w0[i]), float64(g0[i]))
		worst = max(worst, d)
		// Vulkan allows 2.5 ulp for division and a few for sqrt.
		require.LessOrEqual(t, d, int64(4), "out0[%d]: want %v, got %v", i, w0[i], g0[i])
	}
	t.Logf("largest difference from NumPy: %d ulp", worst)
	require.Equal(t, want1.Data, got["out1"].Data, "out1 (the comparison) matches exactly")

	// Every kernel the program compiles to passes spirv-val.
	m, err := hlo.ParseFile(graph)
	require.NoError(t, err)
	prog, err := lower.Compile(m[0], lower.DefaultTarget, lower.Options{})
	require.NoError(t, err)
	for _, k := range prog.Kernels {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestNoDevice points the loader at a driver list that does not exist:
// vkjit must say what to install, in one line, and exit non-zero.
func TestNoDevice(t *testing.T) {
	for _, args := range [][]string{{"devices"}, {"run", filepath.Join("testdata", "elementwise", "graph.hlo")}} {
		cmd := exec.Command(vkjitBin, args...)
		cmd.Env = append(os.Environ(), "VK_ICD_FILENAMES=/nonexistent/icd.json", "VK_DRIVER_FILES=/nonexistent/icd.json")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		require.Contains(t, string(out), "apt-get install libvulkan1 mesa-vulkan-drivers")
		require.Equal(t, 1, strings.Count(string(out), "\n"), "%s", out)
	}
}

// TestPrograms runs the programs users would write (an MLP training
// step, a transformer block, a small CNN, a while loop) through `vkjit
// run` with the validation layer on, and compares every output with
// NumPy's (tests/testdata/programs.py). Both sides compute in f32 but sum
// in different orders, so outputs agree to 1e-5 of the
// output's largest magnitude, not to the bit. Each program is given
// twice: as HLO text (graph.hlo) and as StableHLO, the form JAX prints
// by default (graph.mlir); mlp_train also as JAX prints it with Shardy's
// meshes and shardings (graph_shardy.mlir).
func TestPrograms(t *testing.T) {
	for _, name := range []string{"mlp_train", "transformer", "cnn", "while_loop"} {
		for _, form := range []string{"graph.hlo", "graph.mlir", "graph_shardy.mlir"} {
			if _, err := os.Stat(filepath.Join("testdata", name, form)); form == "graph_shardy.mlir" && err != nil {
				continue
			}
			t.Run(name+"/"+form, func(t *testing.T) { testProgram(t, name, form) })
		}
	}
}

func testProgram(t *testing.T, name, form string) {
	dir := filepath.Join("testdata", name)
	graph := filepath.Join(dir, form)
	stats := filepath.Join(t.TempDir(), "stats.json")
	args := append([]string{"run", graph, "--out", filepath.Join(t.TempDir(), "out.npz"), "--stats-json", stats}, argFiles(dir)...)
	cmd := exec.Command(vkjitBin, args...)
	cmd.Env = append(os.Environ(), "VKJIT_VALIDATE=1")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	require.Empty(t, string(msg), "the validation layer and vkjit stay silent")
	got, err := vkjit.ReadNPZ(args[3])
	require.NoError(t, err)
	// Memory planning: the arena within 10% of the liveness bound.
	var st struct {
		Arena int64 `json:"arena_bytes"`
		Bound int64 `json:"liveness_bound_bytes"`
	}
	js, err := os.ReadFile(stats)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &st))
	require.LessOrEqual(t, 10*st.Arena, 11*st.Bound, "arena %d, liveness bound %d", st.Arena, st.Bound)
	// Fusion and buffer reuse never change a result.
	plainOut := filepath.Join(t.TempDir(), "plain.npz")
	plain := exec.Command(vkjitBin, append([]string{"run", "--no-fuse", "--no-reuse", graph, "--out", plainOut}, args[6:]...)...)
	msg, err = plain.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	unfused, err := vkjit.ReadNPZ(plainOut)
	require.NoError(t, err)
	for k, v := range got {
		require.Equal(t, v.Data, unfused[k].Data, "%s with --no-fuse --no-reuse", k)
	}
	for i := 0; ; i++ {
		want, err := vkjit.ReadNPYFile(filepath.Join(dir, fmt.Sprintf("want_out%d.npy", i)))
		if errors.Is(err, os.ErrNotExist) {
			require.Len(t, got, i, "one output per want_out file")
			break
		}
		require.NoError(t, err)
		g := got[fmt.Sprintf("out%d", i)]
		require.NotNil(t, g, "out%d", i)
		require.Equal(t, want.Dims, g.Dims, "out%d", i)
		w32, err := want.AsFloat32()
		require.NoError(t, err)
		g32, err := g.AsFloat32()
		require.NoError(t, err)
		scale := 0.0
		for _, v := range w32 {
			scale = max(scale, math.Abs(float64(v)))
		}
		worst := 0.0
		for j := range w32 {
			d := math.Abs(float64(g32[j]) - float64(w32[j]))
			worst = max(worst, d/scale)
			require.LessOrEqual(t, d, 1e-5*scale, "out%d[%d]: want %v, got %v", i, j, w32[j], g32[j])
		}
		t.Logf("out%d: largest difference from NumPy %.2g of the largest magnitude", i, worst)
	}
	m, err := vkjit.ParseFile(graph)
	require.NoError(t, err)
	prog, err := lower.Compile(m[0], lower.DefaultTarget, lower.Options{})
	require.NoError(t, err)
	for _, k := range prog.Kernels {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestMemoryBudget runs the MLP training step with --memory-budget below
// its default peak, and with its parameters donated: the measured peak
// must drop and every result stay bit-identical.
func TestMemoryBudget(t *testing.T) {
	dir := filepath.Join("testdata", "mlp_train")
	args := argFiles(dir)
	runWith := func(extra ...string) (map[string]*vkjit.Tensor, int64) {
		tmp := t.TempDir()
		out, stats := filepath.Join(tmp, "out.npz"), filepath.Join(tmp, "stats.json")
		cmd := exec.Command(vkjitBin, append(append([]string{"run", filepath.Join(dir, "graph.hlo"), "--out", out, "--stats-json", stats}, extra...), args...)...)
		msg, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", msg)
		res, err := vkjit.ReadNPZ(out)
		require.NoError(t, err)
		var st struct {
			Peak int64 `json:"peak_device_bytes"`
		}
		js, err := os.ReadFile(stats)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(js, &st))
		return res, st.Peak
	}
	want, peak := runWith()
	got, lower := runWith("--memory-budget", fmt.Sprint(peak-1))
	t.Logf("peak %d bytes by default, %d under a budget of %d", peak, lower, peak-1)
	require.Less(t, lower, peak)
	for k, v := range want {
		require.Equal(t, v.Data, got[k].Data, k)
	}
	// Donating the parameters (as jax.jit's donate_argnums) lowers the
	// peak too, and changes no result.
	got, donated := runWith("--donate", "all")
	t.Logf("peak %d bytes with every parameter donated", donated)
	require.Less(t, donated, peak)
	for k, v := range want {
		require.Equal(t, v.Data, got[k].Data, k)
	}
	cmd := exec.Command(vkjitBin, append([]string{"run", filepath.Join(dir, "graph.hlo"), "--memory-budget", "1000"}, args...)...)
	msg, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(msg), "memory budget is below the smallest peak vkjit could reach")
}

// TestCompileCache: a second run of a program in a new process takes
// every kernel from the compile cache and gives the same results; a
// damaged entry is dropped with a warning and rebuilt.
func TestCompileCache(t *testing.T) {
	dir := filepath.Join("testdata", "transformer")
	cacheDir := t.TempDir()
	args := argFiles(dir)
	type stats struct {
		Hits    int     `json:"cache_hits"`
		Misses  int     `json:"cache_misses"`
		Codegen float64 `json:"codegen_ms"`
	}
	runOnce := func() (stats, map[string]*vkjit.Tensor, string) {
		tmp := t.TempDir()
		out, st := filepath.Join(tmp, "out.npz"), filepath.Join(tmp, "stats.json")
		cmd := exec.Command(vkjitBin, append([]string{"run", filepath.Join(dir, "graph.hlo"), "--cache-dir", cacheDir, "--out", out, "--stats-json", st}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		var s stats
		js, err := os.ReadFile(st)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(js, &s))
		res, err := vkjit.ReadNPZ(out)
		require.NoError(t, err)
		return s, res, stderr.String()
	}
	first, want, _ := runOnce()
	require.Zero(t, first.Hits)
	require.Positive(t, first.Misses)
	second, got, _ := runOnce()
	require.Equal(t, first.Misses, second.Hits, "every kernel from the cache")
	require.Zero(t, second.Misses)
	t.Logf("codegen %.2f ms cold, %.2f ms from the cache", first.Codegen, second.Codegen)
	require.Equal(t, want["out0"].Data, got["out0"].Data)
	// Damage the entry: the next run warns, misses and rebuilds it.
	entries, err := filepath.Glob(filepath.Join(cacheDir, "*.vkjit"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	b, err := os.ReadFile(entries[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(entries[0], b[:len(b)/2], 0o644))
	third, got, warn := runOnce()
	require.Contains(t, warn, "vkjit cache: dropping")
	require.Zero(t, third.Hits)
	require.Equal(t, want["out0"].Data, got["out0"].Data)
	fourth, _, warn := runOnce()
	require.Empty(t, warn)
	require.Equal(t, first.Misses, fourth.Hits, "rebuilt")
}

// TestCacheManyProcesses: 8 vkjit processes compile and run programs at
// once on one cache directory; all succeed, and a later run of each
// program takes everything from the cache, which they left whole. The
// processes do not warm pipelines, so that the cache holds the
// programs' entries alone (warming adds a marker of its own where it
// pays on the host: TestWarmPipelines).
func TestCacheManyProcesses(t *testing.T) {
	cacheDir := t.TempDir()
	programs := []string{"mlp_train", "transformer", "cnn", "while_loop"}
	run := func(name string) (*exec.Cmd, *bytes.Buffer) {
		dir := filepath.Join("testdata", name)
		args := append([]string{"run", filepath.Join(dir, "graph.hlo"), "--cache-dir", cacheDir, "--stats-json", filepath.Join(t.TempDir(), "s.json")}, argFiles(dir)...)
		cmd := exec.Command(vkjitBin, args...)
		cmd.Env = append(os.Environ(), "VKJIT_WARM_PIPELINES=0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd, &out
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 8; i++ {
		cmd, out := run(programs[i%len(programs)])
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "process %d: %s", i, outs[i])
		require.NotContains(t, outs[i].String(), "vkjit cache:", "no damaged entry seen")
	}
	entries, err := filepath.Glob(filepath.Join(cacheDir, "*.vkjit"))
	require.NoError(t, err)
	require.Len(t, entries, len(programs))
	for _, name := range programs {
		cmd, out := run(name)
		stats := cmd.Args[6]
		require.NoError(t, cmd.Run(), "%s", out)
		var st struct {
			Misses int `json:"cache_misses"`
		}
		js, err := os.ReadFile(stats)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(js, &st))
		require.Zero(t, st.Misses, name)
	}
}

// argFiles lists a program folder's arg0.npy, arg1.npy, ... in order.
func argFiles(dir string) []string {
	var files []string
	for i := 0; ; i++ {
		a := filepath.Join(dir, fmt.Sprintf("arg%d.npy", i))
		if _, err := os.Stat(a); err != nil {
			return files
		}
		files = append(files, a)
	}
}
