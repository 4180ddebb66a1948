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
