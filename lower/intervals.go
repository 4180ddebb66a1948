package lower

// The ordered set and unions of byte ranges that keep memory planning,
// its check and barrier planning (memory.go) in proportion to the
// program, however many values are live at once.

import (
	"math/bits"
	"slices"
)

// rankSet is a set of the ranks 0..n-1 (a Fenwick tree of counts) that
// finds a rank's nearest members below and above in O(log n): the
// ordered set a sweep keeps of what is live, by address.
type rankSet struct {
	tree  []int // tree[i]: the members in (i - i&-i, i], 1-based
	count int
}

func newRankSet(n int) *rankSet { return &rankSet{tree: make([]int, n+1)} }

func (s *rankSet) update(r, d int) {
	s.count += d
	for i := r + 1; i < len(s.tree); i += i & -i {
		s.tree[i] += d
	}
}

func (s *rankSet) add(r int)    { s.update(r, 1) }
func (s *rankSet) remove(r int) { s.update(r, -1) }

// below counts the members under rank r.
func (s *rankSet) below(r int) int {
	c := 0
	for i := r; i > 0; i -= i & -i {
		c += s.tree[i]
	}
	return c
}

// kth is the k-th smallest member (k from 1), by descending the tree.
func (s *rankSet) kth(k int) int {
	pos := 0
	for step := 1 << (bits.Len(uint(len(s.tree))) - 1); step > 0; step /= 2 {
		if next := pos + step; next < len(s.tree) && s.tree[next] < k {
			pos = next
			k -= s.tree[next]
		}
	}
	return pos // 0-based: the (pos+1)-th slot
}

// neighbours are the members nearest below and above rank r (not a
// member itself), or -1 where there is none.
func (s *rankSet) neighbours(r int) (lo, hi int) {
	lo, hi = -1, -1
	c := s.below(r)
	if c > 0 {
		lo = s.kth(c)
	}
	if c < s.count {
		hi = s.kth(c + 1)
	}
	return lo, hi
}

// byteRange is the bytes [lo, hi).
type byteRange struct{ lo, hi int64 }

// ranges is a union of byte ranges: sorted, disjoint, touching ones
// merged, so that a union of many adjacent buffers is one range.
type ranges []byteRange

// after is the index of the first range that ends after lo.
func (s ranges) after(lo int64) int {
	i, _ := slices.BinarySearchFunc(s, lo, func(r byteRange, lo int64) int {
		if r.hi <= lo {
			return -1
		}
		return 1
	})
	return i
}

func (s ranges) overlaps(lo, hi int64) bool {
	i := s.after(lo)
	return i < len(s) && s[i].lo < hi
}

func (s *ranges) add(lo, hi int64) {
	if lo >= hi {
		return
	}
	// The ranges that overlap or touch [lo, hi): from the first ending
	// at or after lo to the last starting at or before hi.
	i := s.after(lo - 1)
	j := i
	for j < len(*s) && (*s)[j].lo <= hi {
		lo, hi = min(lo, (*s)[j].lo), max(hi, (*s)[j].hi)
		j++
	}
	*s = slices.Replace(*s, i, j, byteRange{lo, hi})
}

// spanSet is the union of spans, per memory space, that answers whether
// a span overlaps any in O(log n): barrier planning asks it of every
// binding against all memory touched since the last barrier, which in a
// program of many independent kernels is most of the program.
type spanSet struct {
	spaces map[int]ranges
}

func (s *spanSet) overlaps(x span) bool { return s.spaces[x.space].overlaps(x.lo, x.hi) }

func (s *spanSet) add(x span) {
	if s.spaces == nil {
		s.spaces = map[int]ranges{}
	}
	r := s.spaces[x.space]
	r.add(x.lo, x.hi)
	s.spaces[x.space] = r
}

func (s *spanSet) clear() { clear(s.spaces) }

// occupancy is the memory of placed temporaries over time (half steps
// 0..n-1), for the question memory planning asks of each new one: what
// memory do those live at some time in [lo, hi] hold? A segment tree
// over the times keeps each live range at the O(log n) nodes that tile
// it: own, per node, the union of the memory of the ranges kept there;
// sub, the union of those kept anywhere under it. A range meets [lo,
// hi] where one of its nodes does: a node inside [lo, hi], under one of
// the query's own tiles (in that tile's sub), or one holding lo or hi,
// on the paths from their leaves to the root (in its own). So the
// answer is O(log n) unions, and a union of buffers stacked one on
// another is one range: a training step's thousands of activations,
// live together, cost a placement a few ranges, not thousands of
// neighbours (first fit over a list of them is quadratic in practice).
type occupancy struct {
	size     int
	own, sub []ranges
}

func newOccupancy(n int) *occupancy {
	size := 1
	for size < n {
		size *= 2
	}
	return &occupancy{size: size, own: make([]ranges, 2*size), sub: make([]ranges, 2*size)}
}

// add records the bytes [off, end) held over the times [lo, hi].
func (o *occupancy) add(lo, hi int, off, end int64) {
	lo, hi = max(lo, 0), min(hi, o.size-1)
	if lo > hi {
		return
	}
	for l, r := lo+o.size, hi+o.size+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			o.own[l].add(off, end)
			o.sub[l].add(off, end)
			l++
		}
		if r&1 == 1 {
			r--
			o.own[r].add(off, end)
			o.sub[r].add(off, end)
		}
	}
	// Every tile's ancestors lie on the paths from lo's and hi's leaves
	// (a tile's parent straddles lo or hi); the nodes on those paths
	// under a tile meet the range too, so holding it in their sub is
	// true of any query that reaches them.
	for l, r := lo+o.size, hi+o.size; l >= 1; l, r = l/2, r/2 {
		o.sub[l].add(off, end)
		if r != l {
			o.sub[r].add(off, end)
		}
	}
}

// sets appends to out the unions whose union is the memory held at some
// time in [lo, hi] (empty ones left out).
func (o *occupancy) sets(lo, hi int, out []ranges) []ranges {
	lo, hi = max(lo, 0), min(hi, o.size-1)
	if lo > hi {
		return out
	}
	keep := func(r ranges) {
		if len(r) > 0 {
			out = append(out, r)
		}
	}
	for l, r := lo+o.size, hi+o.size+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			keep(o.sub[l])
			l++
		}
		if r&1 == 1 {
			r--
			keep(o.sub[r])
		}
	}
	for l, r := lo+o.size, hi+o.size; l >= 1; l, r = l/2, r/2 {
		keep(o.own[l])
		if r != l {
			keep(o.own[r])
		}
	}
	return out
}

// anyOverlaps reports whether [lo, hi) meets a range of sets.
func anyOverlaps(sets []ranges, lo, hi int64) bool {
	for _, s := range sets {
		if s.overlaps(lo, hi) {
			return true
		}
	}
	return false
}

// lowestFree is the lowest offset from which size bytes meet no range
// of sets nor of extra: from 0, past the end of whatever range blocks
// the bytes, until none does. No offset below a blocking range's end
// is free, so the first free one found is the lowest.
func lowestFree(sets []ranges, extra []byteRange, size int64) int64 {
	off := int64(0)
	for moved := true; moved; {
		moved = false
		for _, s := range sets {
			if i := s.after(off); i < len(s) && s[i].lo < off+size {
				off, moved = s[i].hi, true
			}
		}
		for _, r := range extra {
			if r.lo < off+size && off < r.hi {
				off, moved = r.hi, true
			}
		}
	}
	return off
}
