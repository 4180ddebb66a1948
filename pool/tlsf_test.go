package pool

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMapping(t *testing.T) {
	// Every size maps into range, and a search class's every member
	// holds the request.
	for s := int64(1); s < 1<<20; s += 1 + s/7 {
		fl, sl := mapping(s)
		require.Less(t, fl, flCount)
		require.Less(t, sl, slCount)
		sfl, ssl := searchClass(s)
		require.True(t, sfl > fl || (sfl == fl && ssl >= sl), "search class below the size's own class at %d", s)
		// The smallest size in the search class is at least s.
		lo := classMin(sfl, ssl)
		require.GreaterOrEqual(t, lo, s, "class (%d,%d) starts at %d < %d", sfl, ssl, lo, s)
	}
}

// classMin is the smallest size in class (fl, sl).
func classMin(fl, sl int) int64 {
	if fl == 0 {
		return int64(sl)
	}
	top := fl + slBits - 1
	return int64(slCount+sl) << (top - slBits)
}

// TestRangesStress runs 100,000 random allocations and frees against a
// model of the live ranges: no two overlap, all lie inside the block,
// the invariants hold throughout, and everything freed leaves the block
// one free range again.
func TestRangesStress(t *testing.T) {
	const size, granule = 64 << 20, 256
	r := NewRanges(size, granule)
	rng := rand.New(rand.NewPCG(1, 2))
	live := map[int64]int64{} // offset -> bytes asked
	var offsets []int64
	fails := 0
	for op := range 100_000 {
		if len(offsets) > 0 && (rng.IntN(2) == 0 || fails > 0) {
			i := rng.IntN(len(offsets))
			off := offsets[i]
			offsets[i] = offsets[len(offsets)-1]
			offsets = offsets[:len(offsets)-1]
			require.True(t, r.Free(off))
			require.False(t, r.Free(off), "a second free of %d", off)
			delete(live, off)
			fails = 0
		} else {
			// Mostly small, sometimes large requests, as arenas are.
			n := int64(rng.IntN(4096)) + 1
			if rng.IntN(20) == 0 {
				n = int64(rng.IntN(8<<20)) + 1
			}
			off, ok := r.Alloc(n)
			if !ok {
				fails++
				continue
			}
			require.Zero(t, off%granule)
			require.LessOrEqual(t, off+n, int64(size))
			live[off] = n
			offsets = append(offsets, off)
		}
		if op%5000 == 0 {
			require.NoError(t, r.Check())
			noOverlap(t, live)
		}
	}
	require.NoError(t, r.Check())
	noOverlap(t, live)
	for _, off := range offsets {
		require.True(t, r.Free(off))
	}
	require.NoError(t, r.Check())
	require.Zero(t, r.InUse())
	require.Zero(t, r.Allocations())
	require.Equal(t, int64(size), r.LargestFree(), "freeing everything merges the block back into one range")
}

func noOverlap(t *testing.T, live map[int64]int64) {
	offs := make([]int64, 0, len(live))
	for o := range live {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for i := 1; i < len(offs); i++ {
		require.LessOrEqual(t, offs[i-1]+live[offs[i-1]], offs[i], "ranges at %d and %d overlap", offs[i-1], offs[i])
	}
}

func TestRangesEdges(t *testing.T) {
	r := NewRanges(101*64, 64)
	off, ok := r.Alloc(101 * 64)
	require.True(t, ok, "the whole block is one allocation, even when its size is not a class boundary")
	require.Zero(t, off)
	_, ok = r.Alloc(1)
	require.False(t, ok, "a full block refuses")
	require.True(t, r.Free(0))
	// Zero-byte requests take a granule, so that each has its own offset.
	a, ok1 := r.Alloc(0)
	b, ok2 := r.Alloc(0)
	require.True(t, ok1 && ok2)
	require.NotEqual(t, a, b)
	require.False(t, r.Free(a+1), "an offset that is not an allocation")
	_, ok = r.Alloc(-1)
	require.False(t, ok)
	require.NoError(t, r.Check())
	// Freed neighbours merge both ways.
	require.True(t, r.Free(a))
	require.True(t, r.Free(b))
	require.Equal(t, int64(101*64), r.LargestFree())
}

func BenchmarkRanges(b *testing.B) {
	r := NewRanges(1<<30, 256)
	rng := rand.New(rand.NewPCG(1, 2))
	offs := make([]int64, 0, 1024)
	for range 512 {
		off, _ := r.Alloc(int64(rng.IntN(1 << 16)))
		offs = append(offs, off)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(offs)
		r.Free(offs[j])
		offs[j], _ = r.Alloc(int64(rng.IntN(1 << 16)))
	}
}
