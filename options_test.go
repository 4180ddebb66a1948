package vkjit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/vk"
)

// TestOptionsPrecedence: each option set explicitly wins over its
// environment variable, which wins over the default.
func TestOptionsPrecedence(t *testing.T) {
	for _, v := range []string{"VKJIT_DEVICE", "VKJIT_VALIDATE", "VKJIT_STAGED", "VKJIT_MEM_FRACTION",
		"VKJIT_MEM_LIMIT_BYTES", "VKJIT_BLOCK_BYTES", "VKJIT_PREALLOCATE", "VKJIT_STAGING_BYTES", "VKJIT_CACHE_MAX_BYTES", "VKJIT_WARM_PIPELINES"} {
		t.Setenv(v, "")
	}
	r, err := Options{}.resolve()
	require.NoError(t, err)
	require.Equal(t, "", r.device)
	require.False(t, r.validate)
	require.Equal(t, vk.StagingAuto, r.staging)
	require.Zero(t, r.pool.Fraction, "the pool's own default")
	require.False(t, r.pool.Preallocate)
	require.Nil(t, r.warm, "warming left to the runtime")

	t.Setenv("VKJIT_DEVICE", "intel")
	t.Setenv("VKJIT_WARM_PIPELINES", "0")
	t.Setenv("VKJIT_VALIDATE", "1")
	t.Setenv("VKJIT_STAGED", "1")
	t.Setenv("VKJIT_MEM_FRACTION", "0.5")
	t.Setenv("VKJIT_PREALLOCATE", "yes")
	t.Setenv("VKJIT_STAGING_BYTES", "8192")
	r, err = Options{}.resolve()
	require.NoError(t, err)
	require.Equal(t, "intel", r.device)
	require.True(t, r.validate)
	require.Equal(t, vk.StagingOn, r.staging)
	require.Equal(t, 0.5, r.pool.Fraction)
	require.True(t, r.pool.Preallocate)
	require.Equal(t, int64(8192), r.pool.StagingBytes)
	require.False(t, *r.warm)

	r, err = Options{Device: "llvm", Validate: Off, Staged: Off, WarmPipelines: On,
		Memory: MemoryOptions{Fraction: 0.25, Preallocate: Off, StagingBytes: 1 << 20}}.resolve()
	require.NoError(t, err)
	require.Equal(t, "llvm", r.device)
	require.False(t, r.validate)
	require.Equal(t, vk.StagingOff, r.staging)
	require.Equal(t, 0.25, r.pool.Fraction)
	require.False(t, r.pool.Preallocate)
	require.Equal(t, int64(1<<20), r.pool.StagingBytes)
	require.True(t, *r.warm)

	t.Setenv("VKJIT_STAGED", "0")
	r, err = Options{}.resolve()
	require.NoError(t, err)
	require.Equal(t, vk.StagingOff, r.staging, "the variable turns staging off too")

	t.Setenv("VKJIT_PREALLOCATE", "maybe")
	_, err = Options{}.resolve()
	require.ErrorContains(t, err, "VKJIT_PREALLOCATE")
	_, err = Options{Memory: MemoryOptions{Preallocate: On}}.resolve()
	require.NoError(t, err, "an explicit value does not read the variable")
	_, err = Options{Memory: MemoryOptions{Fraction: 3}}.resolve()
	require.Error(t, err)
}
