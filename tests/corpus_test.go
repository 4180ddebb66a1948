package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestCorpus runs every module ../shared/hlo-corpus/SOURCES.md marks E2E
// through `vkjit run --random-args --compare` with the validation layer
// on: each must match the reference evaluator within the default
// tolerances (complex results part by part), or be refused by name.
// On a CPU device (lavapipe) the same run without fusion and buffer reuse
// must give bit-identical results; a GPU's two kernels for a dot sum it
// differently (NVIDIA's: xnn_parallel_dots' f32 sums 1 to 17 ulps
// apart), and there both runs are held to the reference alone. A module
// whose arguments alone pass hlotest.LongWorkload runs only with
// VKJIT_LONG_TESTS=1 (make test-long), and then fused only.
func TestCorpus(t *testing.T) {
	refused := regexp.MustCompile(`is not supported`)
	ran, skipped := 0, 0
	devs, err := vkjit.ListDevices()
	require.NoError(t, err)
	bitwise := false
	for _, d := range devs {
		bitwise = bitwise || d.DefaultChoice && d.Type == "cpu"
	}
	files, root := hlotest.CorpusE2E(t)
	for _, file := range files {
		name, _ := filepath.Rel(root, file)
		mods, err := hlo.ParseFile(file)
		require.NoError(t, err, file)
		long := hlotest.ArgumentBytes(mods[0]) > hlotest.LongWorkload
		if long && !hlotest.RunLong() {
			t.Logf("%s: not run: %d MiB of arguments (VKJIT_LONG_TESTS=1 runs it)", name, hlotest.ArgumentBytes(mods[0])>>20)
			skipped++
			continue
		}
		dir := t.TempDir()
		fused, plain := filepath.Join(dir, "fused.npz"), filepath.Join(dir, "plain.npz")
		cmd := exec.Command(vkjitBin, "run", "--random-args", "--compare", "--out", fused, file)
		cmd.Env = append(os.Environ(), "VKJIT_VALIDATE=1")
		out, err := cmd.CombinedOutput()
		if err != nil && refused.Match(out) {
			t.Logf("%s: refused: %s", name, strings.TrimSpace(string(out)))
			skipped++
			continue
		}
		require.NoError(t, err, "%s: %s", name, out)
		if long {
			t.Logf("%s: %s", name, strings.TrimSpace(string(out)))
			ran++
			continue
		}
		args := []string{"run", "--random-args", "--no-fuse", "--no-reuse", "--out", plain, file}
		if !bitwise {
			args = append(args, "--compare")
		}
		cmd = exec.Command(vkjitBin, args...)
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
		a, err := vkjit.ReadNPZ(fused)
		require.NoError(t, err)
		b, err := vkjit.ReadNPZ(plain)
		require.NoError(t, err)
		require.Equal(t, len(a), len(b), name)
		if bitwise {
			for k, v := range a {
				require.Equal(t, v.Data, b[k].Data, "%s %s: fused and unfused results differ", name, k)
			}
		}
		ran++
	}
	t.Logf("%d E2E modules ran and matched; %d not run", ran, skipped)
	want := 74 // all but the one hlotest.LongWorkload leaves to make test-long
	if hlotest.RunLong() {
		want = 75
	}
	require.GreaterOrEqual(t, ran, want)
}
