package vkjit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMesaDiskCache follows Mesa's rules for where its shader cache is
// and whether it is on: warming is wasted work where it is not.
func TestMesaDiskCache(t *testing.T) {
	for _, v := range []string{"MESA_SHADER_CACHE_DISABLE", "MESA_GLSL_CACHE_DISABLE", "MESA_SHADER_CACHE_DIR", "MESA_GLSL_CACHE_DIR", "XDG_CACHE_HOME"} {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	require.True(t, mesaDiskCache(), "$HOME/.cache")
	require.DirExists(t, filepath.Join(home, ".cache", "mesa_shader_cache"))

	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	require.True(t, mesaDiskCache())
	require.DirExists(t, filepath.Join(xdg, "mesa_shader_cache"))

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	t.Setenv("MESA_SHADER_CACHE_DIR", filepath.Join(file, "cache"))
	require.False(t, mesaDiskCache(), "a directory that cannot be made")
	t.Setenv("MESA_SHADER_CACHE_DIR", t.TempDir())
	require.True(t, mesaDiskCache())
	entries, err := os.ReadDir(os.Getenv("MESA_SHADER_CACHE_DIR"))
	require.NoError(t, err)
	require.Empty(t, entries, "the probe file is removed")

	for _, v := range []string{"1", "true", "YES"} {
		t.Setenv("MESA_SHADER_CACHE_DISABLE", v)
		require.False(t, mesaDiskCache(), "MESA_SHADER_CACHE_DISABLE=%s", v)
	}
	t.Setenv("MESA_SHADER_CACHE_DISABLE", "false")
	require.True(t, mesaDiskCache())
	t.Setenv("MESA_GLSL_CACHE_DISABLE", "1")
	require.False(t, mesaDiskCache(), "the older name")
}

// TestWarmPlan: warming takes the threads the kernels' sizes can use,
// the largest first each to the least loaded, and saves the serial
// compile less the longest thread's (in SPIR-V words).
func TestWarmPlan(t *testing.T) {
	for _, c := range []struct {
		words          []int
		procs          int
		threads, saved int
	}{
		{[]int{22300, 22292, 15861, 1494}, 2, 2, 23794}, // mlp_forward: 22300+1494 against 22292+15861
		{[]int{22300}, 2, 1, 0},
		{nil, 2, 0, 0},
		{[]int{1000, 1000, 1000, 1000, 1000}, 2, 2, 2000},
		{[]int{50000, 1000, 1000}, 16, 2, 2000}, // no thread beyond what the largest leaves to share
		{[]int{100, 100, 100, 100}, 16, 4, 300},
		{[]int{100, 100, 100, 100}, 1, 1, 0},
	} {
		threads, saved := warmPlan(c.words, c.procs)
		require.Equal(t, c.threads, threads, "%v on %d", c.words, c.procs)
		require.Equal(t, c.saved, saved, "%v on %d", c.words, c.procs)
	}
}
