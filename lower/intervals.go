package lower

// timeIndex holds live ranges over the half steps 0..n-1 for the
// question memory planning asks of every buffer: which of those placed
// so far are live at some time in [lo, hi]? A segment tree: each range
// is kept at the O(log n) nodes that tile it, and a query visits the
// nodes over [lo, hi] and their ancestors, so it costs the length of the
// query plus what it returns, not the number of ranges held.
type timeIndex struct {
	size  int     // leaves: a power of two >= n
	nodes [][]int // per node, the ids of the ranges that tile it there
	seen  []int   // per id, the query that last returned it
	query int
}

func newTimeIndex(n int) *timeIndex {
	size := 1
	for size < n {
		size *= 2
	}
	return &timeIndex{size: size, nodes: make([][]int, 2*size)}
}

// add holds range id over [lo, hi] (clamped to the index).
func (t *timeIndex) add(id int, lo, hi int) {
	lo, hi = max(lo, 0), min(hi, t.size-1)
	for id >= len(t.seen) {
		t.seen = append(t.seen, 0)
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
}

// each calls f once for every range held that meets [lo, hi].
func (t *timeIndex) each(lo, hi int, f func(id int)) {
	lo, hi = max(lo, 0), min(hi, t.size-1)
	if lo > hi {
		return
	}
	t.query++
	for l, r := lo+t.size, hi+t.size; l >= 1; l, r = l/2, r/2 {
		for n := l; n <= r; n++ {
			for _, id := range t.nodes[n] {
				if t.seen[id] != t.query {
					t.seen[id] = t.query
					f(id)
				}
			}
		}
	}
}
