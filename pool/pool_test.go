package pool_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

func device(t *testing.T) *vk.Device {
	t.Helper()
	return deviceWith(t, vk.DeviceOptions{})
}

func deviceWith(t *testing.T, opts vk.DeviceOptions) *vk.Device {
	t.Helper()
	inst, err := vk.NewInstance(true)
	require.NoError(t, err)
	devs, err := inst.Devices()
	require.NoError(t, err)
	idx, err := vk.ChooseDevice(devs, "")
	require.NoError(t, err)
	dev, err := inst.OpenDevice(idx, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		dev.Destroy()
		inst.Destroy()
		require.Empty(t, vk.ValidationMessages())
	})
	return dev
}

func TestPoolSuballocates(t *testing.T) {
	dev := device(t)
	p, err := pool.New(dev, pool.Config{BlockBytes: 1 << 20})
	require.NoError(t, err)
	defer p.Close()
	var bufs []*vk.Buffer
	for i := range 10 {
		b, err := p.Alloc(int64(1000 * (i + 1)))
		require.NoError(t, err)
		require.Zero(t, b.Identity()[1]%uint64(p.Granule()))
		require.NoError(t, p.Upload(pool.Write{Dst: b, Data: []byte{byte(i), 1, 2, 3}}))
		bufs = append(bufs, b)
	}
	for i, b := range bufs {
		got := make([]byte, 4)
		require.NoError(t, p.Download(b, got))
		require.Equal(t, []byte{byte(i), 1, 2, 3}, got, "buffers do not overlap")
	}
	s := p.Stats()
	require.Equal(t, 1, s.Blocks, "small buffers share one block")
	require.Equal(t, 10, s.Allocations)
	// A request over half a block gets a block of its own.
	big, err := p.Alloc(3 << 20)
	require.NoError(t, err)
	require.Equal(t, 2, p.Stats().Blocks)
	require.NoError(t, p.Free(big))
	require.Error(t, p.Free(big), "a double free is refused")
	for _, b := range bufs {
		require.NoError(t, p.Free(b))
	}
	require.NoError(t, p.Check())
	s = p.Stats()
	require.Zero(t, s.InUseBytes)
	require.Zero(t, s.Fragmentation)
	require.Equal(t, int64(1<<20+3<<20), p.Trim())
	require.Zero(t, p.Stats().ReservedBytes)
}

// TestPoolOutOfMemory: a request over the budget is ErrOutOfMemory, after
// which smaller ones succeed; empty blocks are trimmed and the request
// retried before giving up.
func TestPoolOutOfMemory(t *testing.T) {
	dev := device(t)
	p, err := pool.New(dev, pool.Config{BlockBytes: 1 << 20, LimitBytes: 4 << 20})
	require.NoError(t, err)
	defer p.Close()
	a, err := p.Alloc(3 << 20)
	require.NoError(t, err)
	_, err = p.Alloc(2 << 20)
	require.ErrorIs(t, err, pool.ErrOutOfMemory)
	small, err := p.Alloc(512 << 10)
	require.NoError(t, err, "after an out-of-memory error a smaller request succeeds")
	require.NoError(t, p.Free(small))
	require.NoError(t, p.Free(a))
	// Two empty blocks (3 MiB dedicated, 1 MiB) fill the budget; a
	// 4 MiB request needs them trimmed first.
	require.Equal(t, 2, p.Stats().Blocks)
	b, err := p.Alloc(4 << 20)
	require.NoError(t, err, "empty blocks are given back and the request retried")
	require.Equal(t, 1, p.Stats().Blocks)
	require.NoError(t, p.Free(b))
	require.NoError(t, p.Check())
	_, err = p.Alloc(5 << 20)
	require.True(t, errors.Is(err, pool.ErrOutOfMemory))
}

// TestPoolConfigRefused: a fraction outside (0, 1] or a staging ring
// too small to hold a chunk is an error, not a pool that misbehaves.
func TestPoolConfigRefused(t *testing.T) {
	dev := device(t)
	_, err := pool.New(dev, pool.Config{Fraction: 2})
	require.ErrorContains(t, err, "fraction")
	_, err = pool.New(dev, pool.Config{StagingBytes: 100})
	require.ErrorContains(t, err, "staging")
}

func TestPoolPreallocate(t *testing.T) {
	dev := device(t)
	p, err := pool.New(dev, pool.Config{BlockBytes: 1 << 20, LimitBytes: 3 << 20, Preallocate: true})
	require.NoError(t, err)
	defer p.Close()
	s := p.Stats()
	require.Equal(t, int64(3<<20), s.ReservedBytes, "the whole limit is reserved at once")
	b, err := p.Alloc(100)
	require.NoError(t, err)
	require.NoError(t, p.Free(b))
	require.Zero(t, p.Trim(), "preallocated blocks stay")
	require.Equal(t, 3, p.Stats().Blocks)
}
