package lower

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRankSet checks the sweep's ordered set against a sorted list.
func TestRankSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	for _, n := range []int{1, 2, 7, 64, 300} {
		s := newRankSet(n)
		var want []int
		for range 2000 {
			x := r.IntN(n)
			i, found := slices.BinarySearch(want, x)
			switch {
			case found && r.IntN(2) == 0:
				s.remove(x)
				want = slices.Delete(want, i, i+1)
			case !found && r.IntN(3) > 0:
				s.add(x)
				want = slices.Insert(want, i, x)
			case !found:
				lo, hi := s.neighbours(x)
				wlo, whi := -1, -1
				if i > 0 {
					wlo = want[i-1]
				}
				if i < len(want) {
					whi = want[i]
				}
				require.Equal(t, [2]int{wlo, whi}, [2]int{lo, hi}, "n %d, neighbours of %d in %v", n, x, want)
			}
		}
	}
}

// TestCheckSharing compares the sweep with every pair of random
// temporaries, placed and timed so that some plans are right (values
// live together apart; in-place pairs exactly on each other) and some
// are not.
func TestCheckSharing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 2))
	var clashes, lined, misaligned, fine int
	for trial := range 3000 {
		n := 2 + r.IntN(12)
		p := &Program{}
		lr := map[int]liveRange{}
		for b := range n {
			first := r.IntN(20)
			size := int64(16 * (1 + r.IntN(4)))
			if r.IntN(8) == 0 {
				size = 0
			}
			p.Buffers = append(p.Buffers, Buffer{Name: fmt.Sprint("t", b), Kind: BufTemp, Size: size, Offset: int64(16 * r.IntN(6))})
			lr[b] = liveRange{first, first + r.IntN(6)}
		}
		want := ""
		for a := range n {
			for b := range n {
				if a == b || !p.span(a).overlaps(p.span(b)) {
					continue
				}
				if lr[a].overlaps(lr[b]) {
					want = "live at once"
				} else if lr[a].adjacent(lr[b]) && p.Buffers[a].Offset != p.Buffers[b].Offset && want == "" {
					want = "does not line up"
				} else if lr[a].adjacent(lr[b]) {
					lined++
				}
			}
		}
		err := checkSharing(p, lr)
		if want == "" {
			fine++
			require.NoError(t, err, "trial %d", trial)
			continue
		}
		require.Error(t, err, "trial %d: want %q", trial, want)
		require.Contains(t, err.Error(), want, "trial %d", trial)
		if want == "live at once" {
			clashes++
		} else {
			misaligned++
		}
	}
	// The trials cover each outcome.
	require.Positive(t, clashes)
	require.Positive(t, misaligned)
	require.Positive(t, lined)
	require.Positive(t, fine)
	t.Logf("%d right plans, %d with values live at once in one place, %d with an in-place pair out of line (%d pairs in line)", fine, clashes, misaligned, lined)
}

// TestOccupancy checks each query's unions against every range held:
// the bytes each held range covers are in the unions exactly when the
// range meets the query's times, bytes no range covers are never in
// them, and lowestFree finds the lowest offset clear of the ranges met.
func TestOccupancy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	type held struct {
		lo, hi   int
		off, end int64
	}
	for _, n := range []int{1, 5, 64, 200} {
		o := newOccupancy(n)
		var hs []held
		for range 1500 {
			lo := r.IntN(n)
			hi := lo + r.IntN(n-lo)
			if r.IntN(2) == 0 {
				off := int64(16 * r.IntN(40))
				h := held{lo, hi, off, off + int64(16*(1+r.IntN(4)))}
				o.add(h.lo, h.hi, h.off, h.end)
				hs = append(hs, h)
				continue
			}
			sets := o.sets(lo, hi, nil)
			var want ranges // the union of the ranges met, built plainly
			for _, h := range hs {
				if h.lo <= hi && lo <= h.hi {
					want.add(h.off, h.end)
				}
			}
			for b := int64(0); b < 16*50; b += 8 {
				require.Equal(t, want.overlaps(b, b+8), anyOverlaps(sets, b, b+8), "n %d: bytes %d in the query [%d, %d]", n, b, lo, hi)
			}
			size := int64(16 * (1 + r.IntN(6)))
			free := lowestFree(sets, nil, size)
			require.False(t, want.overlaps(free, free+size), "n %d: %d bytes at %d", n, size, free)
			for b := int64(0); b < free; b += 16 {
				require.True(t, want.overlaps(b, b+size), "n %d: %d bytes at %d are free, below %d", n, size, b, free)
			}
		}
	}
}

// TestSpanSet checks the union of spans against every span added.
func TestSpanSet(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	for range 200 {
		var set spanSet
		var held []span
		for range 60 {
			x := span{space: r.IntN(3) - 1, lo: int64(r.IntN(100))}
			if len(held) > 0 && r.IntN(3) == 0 { // just after a held span
				y := held[r.IntN(len(held))]
				x.space, x.lo = y.space, y.hi
			}
			x.hi = x.lo + 1 + int64(r.IntN(12))
			want := false
			for _, y := range held {
				want = want || x.overlaps(y)
			}
			require.Equal(t, want, set.overlaps(x), "%v against %v", x, held)
			if r.IntN(2) == 0 {
				set.add(x)
				held = append(held, x)
			}
			if r.IntN(40) == 0 {
				set.clear()
				held = nil
			}
		}
	}
}
