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
// tests) through `vkjit test` with the validation layer on, fused and
// with fusion and buffer reuse off. Every module must pass its checks,
// be skipped for a stated reason (dynamic shapes, quantized types,
// collectives, host transfers, probes), or be listed in
// testdata/stablehlo_failures.txt with the failure it gives; a listed
// module that passes fails the run, so the list only shrinks.
func TestStableHLOSuite(t *testing.T) {
	suite := shared.Dir(t, "stablehlo-suite")
	summary := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed, (\d+) skipped \((\d+) modules fail as stablehlo_failures.txt expects\)$`)
	for _, mode := range [][]string{nil, {"--no-fuse", "--no-reuse"}} {
		args := append([]string{"test", "--validate", "--expected", "testdata/stablehlo_failures.txt"}, mode...)
		cmd := exec.Command(vkjitBin, append(args, suite)...)
		cmd.Env = append(os.Environ(), "VKJIT_VALIDATE=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", mode, out)
		m := summary.FindSubmatch(out)
		require.NotNil(t, m, "%v: no summary line in %s", mode, out)
		passed, _ := strconv.Atoi(string(m[1]))
		t.Logf("%v: %s", mode, m[0])
		// The suite has 2075 modules; most of them run.
		require.GreaterOrEqual(t, passed, 1990, "%v", mode)
	}
}

// TestStableHLOExpectedList: the runner holds its list to account. The
// list --write-expected writes makes the run pass; a module taken off it
// fails the run, and an entry for a module that passes does too.
func TestStableHLOExpectedList(t *testing.T) {
	suite := shared.Dir(t, "stablehlo-suite")
	list := filepath.Join(t.TempDir(), "list.txt")
	file := filepath.Join(suite, "interpret", "constant.mlir")
	run := func(flag string) (string, error) {
		out, err := exec.Command(vkjitBin, "test", flag, list, file).CombinedOutput()
		return string(out), err
	}
	out, err := run("--write-expected")
	require.Error(t, err, out) // constant.mlir's f6 and f4 cases fail
	written, err := os.ReadFile(list)
	require.NoError(t, err)
	var entries []string
	for _, ln := range strings.Split(string(written), "\n") {
		if ln != "" && !strings.HasPrefix(ln, "#") {
			entries = append(entries, ln)
		}
	}
	require.Contains(t, entries, "constant.mlir:99: stablehlo.constant: element type f4E2M1FN (sub-byte constants) is not supported")
	out, err = run("--expected")
	require.NoError(t, err, out)

	require.NoError(t, os.WriteFile(list, []byte(strings.Join(entries[1:], "\n")), 0o644))
	out, err = run("--expected")
	require.Error(t, err, out)
	require.Contains(t, out, "FAIL "+file+":100:8")

	require.NoError(t, os.WriteFile(list, []byte(strings.Join(append(entries, "constant.mlir:3: passes"), "\n")), 0o644))
	out, err = run("--expected")
	require.Error(t, err, out)
	require.Contains(t, out, "constant.mlir:3 is listed")
}
