package vkjit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/cache"
)

// TestSavedPipelineCache: a saved pipeline cache is loaded only for the
// running driver version and device; a mismatched one is dropped (with
// a warning when its header names another device) and the runtime works.
func TestSavedPipelineCache(t *testing.T) {
	dir := t.TempDir()
	var warnings []string
	open := func() *Runtime {
		warnings = nil
		r, err := Open(Options{CacheDir: dir, Warn: func(s string) { warnings = append(warnings, s) }})
		require.NoError(t, err)
		return r
	}
	r := open()
	header, err := r.dev.PipelineCacheData()
	require.NoError(t, err)
	key, version := r.pipelineCacheKey(), r.dev.Info.DriverVersion
	r.Close()
	c, err := cache.Open(dir, cache.DefaultLimit)
	require.NoError(t, err)

	// This device's data, this driver: loaded silently.
	require.NoError(t, c.Put(key, joinPipelineCache(version, header)))
	r = open()
	require.Empty(t, warnings)
	require.Equal(t, len(header), r.pipelineData)
	r.Close()

	// Another driver version: not loaded, no warning (drivers update).
	require.NoError(t, c.Put(key, joinPipelineCache(version+1, header)))
	r = open()
	require.Empty(t, warnings)
	require.Zero(t, r.pipelineData)
	r.Close()

	// Another device's header under this device's key: refused, said.
	bad := append([]byte(nil), header...)
	bad[12] ^= 0xff // deviceID
	require.NoError(t, c.Put(key, joinPipelineCache(version, bad)))
	r = open()
	require.Len(t, warnings, 1)
	require.True(t, strings.Contains(warnings[0], "saved pipeline cache not used"), warnings[0])
	exe, err := r.CompileText("m", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n", CompileOptions{})
	require.NoError(t, err, "the runtime works with an empty pipeline cache")
	exe.Close()
	r.Close()
}
