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

// TestTimeIndex checks each query against every range held, each range
// met once.
func TestTimeIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	for _, n := range []int{1, 5, 64, 200} {
		x := newTimeIndex(n)
		var held []liveRange
		for range 1500 {
			lo, hi := r.IntN(n+4)-2, r.IntN(n+4)-2
			if r.IntN(2) == 0 {
				x.add(len(held), lo, hi)
				held = append(held, liveRange{lo, hi})
				continue
			}
			got := map[int]int{}
			x.each(lo, hi, func(id int) { got[id]++ })
			for id, h := range held {
				// Ranges and queries are clamped to the index's times.
				a, b := max(h.first, 0), min(h.last, x.size-1)
				c, d := max(lo, 0), min(hi, x.size-1)
				meets := a <= b && c <= d && a <= d && c <= b
				if meets {
					require.Equal(t, 1, got[id], "n %d: range %v in query [%d, %d]", n, h, lo, hi)
				} else {
					require.Zero(t, got[id], "n %d: range %v outside query [%d, %d]", n, h, lo, hi)
				}
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
