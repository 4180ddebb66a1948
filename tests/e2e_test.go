// Package tests holds end-to-end tests: real programs run through the
// vkjit command on the Vulkan device, with the validation layer on,
// checked against results computed independently of vkjit (NumPy,
// committed as .npy files beside each program).
package tests

import (
	"archive/zip"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
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
	build := exec.Command("go", "build", "-o", vkjitBin, "../cmd/vkjit")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		panic("building vkjit: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func readNPZ(t *testing.T, path string) map[string]*vkjit.Tensor {
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string]*vkjit.Tensor{}
	for _, f := range zr.File {
		r, err := f.Open()
		require.NoError(t, err)
		x, err := vkjit.ReadNPY(r)
		require.NoError(t, err)
		r.Close()
		out[strings.TrimSuffix(f.Name, ".npy")] = x
	}
	return out
}

// ulpDiff is the distance between two float32 values in units in the
// last place.
func ulpDiff(a, b float32) int64 {
	ord := func(f float32) int64 {
		v := int64(int32(math.Float32bits(f)))
		if v < 0 {
			v = math.MinInt32 - v
		}
		return v
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
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

	got := readNPZ(t, out)
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
		d := ulpDiff(w0[i], g0[i])
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
