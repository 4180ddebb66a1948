package lower

import (
	"math/bits"
	"slices"
)

// timeIndex holds live ranges over the half steps 0..n-1 for the
// question memory planning asks of every buffer: which of those placed
// so far are live at some time in [lo, hi]? Such a range either holds
// lo or starts after it, never both, so a query asks two structures
// and meets each range once: a segment tree keeping each range at the
// O(log n) nodes that tile it, whose nodes on the path from lo's leaf
// to the root hold the ranges over lo; and the ranges by start, under
// a tree of counts that leads to the starts in (lo, hi] past the empty
// times. A query costs about log n plus what it returns, however long
// it is: a training step's activations each live across most of the
// program, and one that cost its length, or log n for each range it
// returned, made planning quadratic in practice.
type timeIndex struct {
	size   int     // leaves: a power of two >= n
	nodes  [][]int // per node, the ids of the ranges that tile it there
	starts [][]int // per time, the ids of the ranges that start there
	count  []int   // per node, the ranges that start under it
}

func newTimeIndex(n int) *timeIndex {
	size := 1
	for size < n {
		size *= 2
	}
	return &timeIndex{size: size, nodes: make([][]int, 2*size), starts: make([][]int, size), count: make([]int, 2*size)}
}

// add holds range id over [lo, hi] (clamped to the index).
func (t *timeIndex) add(id int, lo, hi int) {
	lo, hi = max(lo, 0), min(hi, t.size-1)
	if lo > hi {
		return
	}
	for l, r := lo+t.size, hi+t.size+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			t.nodes[l] = append(t.nodes[l], id)
			l++
		}
		if r&1 == 1 {
			r--
			t.nodes[r] = append(t.nodes[r], id)
		}
	}
	t.starts[lo] = append(t.starts[lo], id)
	for n := lo + t.size; n >= 1; n /= 2 {
		t.count[n]++
	}
}

// each calls f once for every range held that meets [lo, hi].
func (t *timeIndex) each(lo, hi int, f func(id int)) {
	lo, hi = max(lo, 0), min(hi, t.size-1)
	if lo > hi {
		return
	}
	for n := lo + t.size; n >= 1; n /= 2 {
		for _, id := range t.nodes[n] {
			f(id)
		}
	}
	t.startsIn(1, 0, t.size-1, lo+1, hi, f)
}

// startsIn calls f for the ranges starting in [lo, hi] under node, which
// covers the times [nlo, nhi], entering only nodes that hold a start.
func (t *timeIndex) startsIn(node, nlo, nhi, lo, hi int, f func(id int)) {
	if t.count[node] == 0 || nhi < lo || hi < nlo {
		return
	}
	if nlo == nhi {
		for _, id := range t.starts[nlo] {
			f(id)
		}
		return
	}
	mid := (nlo + nhi) / 2
	t.startsIn(2*node, nlo, mid, lo, hi, f)
	t.startsIn(2*node+1, mid+1, nhi, lo, hi, f)
}

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

// spanSet is the union of spans, per memory space a sorted list of
// disjoint ranges (touching ones merged), that answers whether a span
// overlaps any in O(log n): barrier planning asks it of every binding
// against all memory touched since the last barrier, which in a program
// of many independent kernels is most of the program.
type spanSet struct {
	spaces map[int][]span
}

// index is the first range of list that ends after lo.
func spanAfter(list []span, lo int64) int {
	i, _ := slices.BinarySearchFunc(list, lo, func(r span, lo int64) int {
		if r.hi <= lo {
			return -1
		}
		return 1
	})
	return i
}

func (s *spanSet) overlaps(x span) bool {
	list := s.spaces[x.space]
	i := spanAfter(list, x.lo)
	return i < len(list) && list[i].overlaps(x)
}

func (s *spanSet) add(x span) {
	if x.lo >= x.hi {
		return
	}
	if s.spaces == nil {
		s.spaces = map[int][]span{}
	}
	list := s.spaces[x.space]
	// The ranges that overlap or touch x: from the first ending at or
	// after x.lo to the last starting at or before x.hi.
	i := spanAfter(list, x.lo-1)
	j := i
	for j < len(list) && list[j].lo <= x.hi {
		x.lo, x.hi = min(x.lo, list[j].lo), max(x.hi, list[j].hi)
		j++
	}
	s.spaces[x.space] = slices.Replace(list, i, j, x)
}

func (s *spanSet) clear() { clear(s.spaces) }
