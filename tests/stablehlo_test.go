package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/internal/shared"
)

// TestStableHLOSuite runs StableHLO's conformance files (programs JAX
// wrote with the values XLA computed, and the spec authors' interpreter
// tests) through `vkjit test` with the validation layer on: fused, with
// each module's array constants passed as arguments (the files' inputs
// are constants, which the compiler would fold on the host with the
// reference evaluator; as arguments the device computes every op, as
// for a program JAX runs on arguments), and with fusion and buffer
// reuse off and the constants left to the folder. Every module must
// pass its checks, be skipped for a stated reason (modules with no
// checks, outfeed), or be listed in testdata/stablehlo_failures.txt with
// the failure it gives; a listed module that passes fails the run, so
// the list only shrinks.
func TestStableHLOSuite(t *testing.T) {
	suite := shared.Dir(t, "stablehlo-suite")
	summary := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed, (\d+) skipped \((\d+) modules fail as stablehlo_failures.txt expects\)$`)
	for _, mode := range [][]string{{"--constants-as-args"}, {"--no-fuse", "--no-reuse"}} {
		args := append([]string{"test", "--validate", "--expected", "testdata/stablehlo_failures.txt"}, mode...)
		cmd := exec.Command(vkjitBin, append(args, suite)...)
		cmd.Env = append(os.Environ(), "VKJIT_VALIDATE=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", mode, out)
		m := summary.FindSubmatch(out)
		require.NotNil(t, m, "%v: no summary line in %s", mode, out)
		passed, _ := strconv.Atoi(string(m[1]))
		t.Logf("%v: %s", mode, m[0])
		// The suite has 2075 modules: 2066 pass, 1 is listed, 8 are
		// skipped. Fewer passing is a regression.
		require.GreaterOrEqual(t, passed, 2066, "%v", mode)
	}
}

// TestStableHLOExpectedList: the runner holds its list to account. The
// list --write-expected writes makes the run pass; a module taken off it
// fails the run, and an entry for a module that passes does too.
func TestStableHLOExpectedList(t *testing.T) {
	suite := shared.Dir(t, "stablehlo-suite")
	list := filepath.Join(t.TempDir(), "list.txt")
	file := filepath.Join(suite, "testdata", "triangular_solve_float32_2_8_8_float32_2_10_8.mlir")
	run := func(flag string) (string, error) {
		out, err := exec.Command(vkjitBin, "test", flag, list, file).CombinedOutput()
		return string(out), err
	}
	out, err := run("--write-expected")
	require.Error(t, err, out) // XLA's solve by an inverse, 7 ulp from the substitution's value
	written, err := os.ReadFile(list)
	require.NoError(t, err)
	var entries []string
	for _, ln := range strings.Split(string(written), "\n") {
		if ln != "" && !strings.HasPrefix(ln, "#") {
			entries = append(entries, ln)
		}
	}
	require.Len(t, entries, 1)
	require.True(t, strings.HasPrefix(entries[0], "triangular_solve_float32_2_8_8_float32_2_10_8.mlir:7: check.expect_close at ["), entries[0])
	out, err = run("--expected")
	require.NoError(t, err, out)

	require.NoError(t, os.WriteFile(list, nil, 0o644))
	out, err = run("--expected")
	require.Error(t, err, out)
	require.Contains(t, out, "FAIL "+file+":")

	other := filepath.Join(suite, "interpret", "constant.mlir")
	require.NoError(t, os.WriteFile(list, []byte("constant.mlir:3: passes\n"), 0o644))
	raw, err := exec.Command(vkjitBin, "test", "--expected", list, other).CombinedOutput()
	require.Error(t, err, string(raw))
	require.Contains(t, string(raw), "constant.mlir:3 is listed")
}
