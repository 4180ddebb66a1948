package pool_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// TestStaging forces the staged path (device buffers unmapped, copies
// through a small staging ring on the transfer queue, ordered by
// timeline semaphores) and checks that bytes arrive intact: empty, odd
// and ring-sized transfers, batches larger than the ring, device copies,
// and several goroutines at once. The validation layer must stay silent
// (deviceWith checks).
func TestStaging(t *testing.T) {
	dev := deviceWith(t, vk.DeviceOptions{Staging: vk.StagingOn})
	require.True(t, dev.Staged(), "lavapipe has timeline semaphores: staging can be forced")
	// Chunks of 32 KiB: most transfers wrap the ring.
	p, err := pool.New(dev, pool.Config{BlockBytes: 1 << 20, StagingBytes: 65536})
	require.NoError(t, err)
	defer p.Close()

	b, err := p.Alloc(100)
	require.NoError(t, err)
	require.False(t, b.Mapped(), "staged buffers are not mapped")
	require.Error(t, b.Write(0, []byte{1}), "a direct write to device memory is refused")
	require.NoError(t, p.Free(b))

	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		d := make([]byte, n)
		for i := range d {
			d[i] = byte(rng.Uint32())
		}
		return d
	}
	// One batch of uploads of assorted sizes, 200 KiB in all (three
	// times the ring), then each read back.
	sizes := []int{0, 1, 3, 4, 5, 63, 64, 65, 4095, 32768, 32769, 65536, 100000}
	var ws []pool.Write
	for _, n := range sizes {
		b, err := p.Alloc(int64(n))
		require.NoError(t, err)
		ws = append(ws, pool.Write{Dst: b, Data: random(n)})
	}
	require.NoError(t, p.Upload(ws...))
	for _, w := range ws {
		got := make([]byte, len(w.Data))
		require.NoError(t, p.Download(w.Dst, got))
		require.True(t, bytes.Equal(w.Data, got), "%d bytes", len(w.Data))
	}
	// A device-to-device copy, then the source freed before the copy is
	// waited for: Free waits for copies into a buffer, and the copy's
	// destination is what a later reader waits on.
	src, dst := ws[len(ws)-1].Dst, ws[len(ws)-2].Dst
	big, err := p.Alloc(src.Size())
	require.NoError(t, err)
	tk, err := p.Copy(big, src)
	require.NoError(t, err)
	require.Equal(t, tk, big.Ready())
	got := make([]byte, src.Size())
	require.NoError(t, p.Download(big, got))
	require.True(t, bytes.Equal(ws[len(ws)-1].Data, got))
	_ = dst
	for _, w := range ws {
		require.NoError(t, p.Free(w.Dst))
	}
	require.NoError(t, p.Free(big))

	// Several goroutines upload and download at once through one ring.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 20 {
				n := 1 + r.IntN(80000)
				data := make([]byte, n)
				for j := range data {
					data[j] = byte(r.Uint32())
				}
				b, err := p.Alloc(int64(n))
				if err != nil {
					errs <- err
					return
				}
				if err := p.Upload(pool.Write{Dst: b, Data: data}); err != nil {
					errs <- err
					return
				}
				got := make([]byte, n)
				if err := p.Download(b, got); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(data, got) {
					errs <- fmt.Errorf("goroutine %d transfer %d: %d bytes differ", g, i, n)
					return
				}
				if err := p.Free(b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, p.Check())
	require.Zero(t, p.Stats().InUseBytes)
}
