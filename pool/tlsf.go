package pool

import (
	"fmt"
	"math/bits"
)

// Ranges is a two-level segregated fit (TLSF) allocator over the byte
// range [0, size) of one block of device memory. Allocate and free take
// constant time: free ranges sit in lists by size class, two bitmaps say
// which lists are non-empty, and a freed range merges at once with free
// neighbours. Every offset and size is a multiple of the granule, which
// the pool sets to the device's strictest alignment, so no request needs
// alignment padding of its own.
//
// The classes: a size of s granules is in first-level class fl =
// floor(log2 s) and, within it, one of 2^slBits equal second-level
// classes; sizes under 2^slBits granules have a class each. An
// allocation rounds its size up to the next class boundary, so that any
// range in the first non-empty list at or above that class fits: the
// search is two bit scans, never a list walk.
type Ranges struct {
	granule int64
	size    int64 // granules
	inUse   int64 // granules
	used    map[int64]*span
	first   *span // lowest offset: the physical list's head

	flMap uint64
	slMap [flCount]uint32
	free  [flCount][slCount]*span
}

const (
	slBits  = 4
	slCount = 1 << slBits
	flCount = 64 - slBits + 1
)

// span is a free or used range, linked to its physical neighbours and,
// when free, into its class's free list.
type span struct {
	offset, size       int64 // granules
	isFree             bool
	prevPhys, nextPhys *span
	prevFree, nextFree *span
}

// NewRanges manages size bytes (rounded down to granules) in units of
// granule bytes, a power of two.
func NewRanges(size, granule int64) *Ranges {
	if granule <= 0 || granule&(granule-1) != 0 {
		panic(fmt.Sprintf("pool: granule %d is not a power of two", granule))
	}
	r := &Ranges{granule: granule, size: size / granule, used: map[int64]*span{}}
	if r.size > 0 {
		r.first = &span{size: r.size, isFree: true}
		r.insert(r.first)
	}
	return r
}

// mapping is the class of a range of s granules.
func mapping(s int64) (fl, sl int) {
	if s < slCount {
		return 0, int(s)
	}
	top := bits.Len64(uint64(s)) - 1 // >= slBits
	return top - slBits + 1, int(s>>(top-slBits)) - slCount
}

// searchClass is the lowest class whose every range holds s granules.
func searchClass(s int64) (fl, sl int) {
	if s >= slCount {
		top := bits.Len64(uint64(s)) - 1
		s += 1<<(top-slBits) - 1
	}
	return mapping(s)
}

func (r *Ranges) insert(b *span) {
	fl, sl := mapping(b.size)
	b.isFree = true
	b.prevFree, b.nextFree = nil, r.free[fl][sl]
	if b.nextFree != nil {
		b.nextFree.prevFree = b
	}
	r.free[fl][sl] = b
	r.flMap |= 1 << fl
	r.slMap[fl] |= 1 << sl
}

func (r *Ranges) remove(b *span) {
	fl, sl := mapping(b.size)
	if b.prevFree != nil {
		b.prevFree.nextFree = b.nextFree
	} else {
		r.free[fl][sl] = b.nextFree
	}
	if b.nextFree != nil {
		b.nextFree.prevFree = b.prevFree
	}
	b.prevFree, b.nextFree = nil, nil
	b.isFree = false
	if r.free[fl][sl] == nil {
		r.slMap[fl] &^= 1 << sl
		if r.slMap[fl] == 0 {
			r.flMap &^= 1 << fl
		}
	}
}

// find returns a free range of at least s granules, or nil.
func (r *Ranges) find(s int64) *span {
	fl, sl := searchClass(s)
	if fl >= flCount {
		return nil
	}
	if m := r.slMap[fl] &^ (1<<sl - 1); m != 0 {
		return r.free[fl][bits.TrailingZeros32(m)]
	}
	m := r.flMap &^ (1<<(fl+1) - 1)
	if m == 0 {
		return nil
	}
	fl = bits.TrailingZeros64(m)
	return r.free[fl][bits.TrailingZeros32(r.slMap[fl])]
}

// Alloc reserves size bytes (at least one granule) and returns their
// offset; ok is false when no free range is large enough.
func (r *Ranges) Alloc(size int64) (offset int64, ok bool) {
	if size < 0 {
		return 0, false
	}
	s := max((size+r.granule-1)/r.granule, 1)
	b := r.find(s)
	if b == nil {
		// A range in s's own class may still fit (the rounded search
		// skips that class): one walk of one list, only when the block
		// is nearly full.
		fl, sl := mapping(s)
		for c := r.free[fl][sl]; c != nil && b == nil; c = c.nextFree {
			if c.size >= s {
				b = c
			}
		}
		if b == nil {
			return 0, false
		}
	}
	r.remove(b)
	if rest := b.size - s; rest > 0 {
		n := &span{offset: b.offset + s, size: rest, prevPhys: b, nextPhys: b.nextPhys}
		if b.nextPhys != nil {
			b.nextPhys.prevPhys = n
		}
		b.nextPhys, b.size = n, s
		r.insert(n)
	}
	r.used[b.offset] = b
	r.inUse += b.size
	return b.offset * r.granule, true
}

// Free releases the allocation at offset; it reports whether there was
// one.
func (r *Ranges) Free(offset int64) bool {
	b := r.used[offset/r.granule]
	if b == nil || offset%r.granule != 0 {
		return false
	}
	delete(r.used, b.offset)
	r.inUse -= b.size
	if p := b.prevPhys; p != nil && p.isFree {
		r.remove(p)
		r.unlink(b)
		p.size += b.size
		b = p
	}
	if n := b.nextPhys; n != nil && n.isFree {
		r.remove(n)
		r.unlink(n)
		b.size += n.size
	}
	r.insert(b)
	return true
}

// unlink takes b out of the physical list (its predecessor absorbs it).
func (r *Ranges) unlink(b *span) {
	if b.prevPhys != nil {
		b.prevPhys.nextPhys = b.nextPhys
	} else {
		r.first = b.nextPhys
	}
	if b.nextPhys != nil {
		b.nextPhys.prevPhys = b.prevPhys
	}
}

// Size is the managed size in bytes.
func (r *Ranges) Size() int64 { return r.size * r.granule }

// InUse is the bytes allocated, rounded to granules.
func (r *Ranges) InUse() int64 { return r.inUse * r.granule }

// Allocations is the number of live allocations.
func (r *Ranges) Allocations() int { return len(r.used) }

// LargestFree is the largest free range in bytes (a walk of the ranges:
// for statistics, not the allocation path).
func (r *Ranges) LargestFree() int64 {
	var m int64
	for b := r.first; b != nil; b = b.nextPhys {
		if b.isFree {
			m = max(m, b.size)
		}
	}
	return m * r.granule
}

// Check verifies the allocator's invariants: the ranges tile the block,
// no two free ranges touch, every free range is in its class's list and
// the bitmaps match the lists, and the used bytes add up.
func (r *Ranges) Check() error {
	var at, used, nfree int64
	var prev *span
	for b := r.first; b != nil; b = b.nextPhys {
		if b.offset != at || b.size <= 0 || b.prevPhys != prev {
			return fmt.Errorf("pool: range at %d (size %d) breaks the tiling at %d", b.offset, b.size, at)
		}
		if b.isFree {
			if prev != nil && prev.isFree {
				return fmt.Errorf("pool: free ranges at %d and %d were not merged", prev.offset, b.offset)
			}
			nfree++
		} else {
			if r.used[b.offset] != b {
				return fmt.Errorf("pool: used range at %d is not in the used map", b.offset)
			}
			used += b.size
		}
		at += b.size
		prev = b
	}
	if at != r.size {
		return fmt.Errorf("pool: ranges cover %d of %d granules", at, r.size)
	}
	if used != r.inUse || len(r.used) != int(r.countUsed()) {
		return fmt.Errorf("pool: %d granules used, counter says %d", used, r.inUse)
	}
	var listed int64
	for fl := range flCount {
		for sl := range slCount {
			head := r.free[fl][sl]
			if (head != nil) != (r.slMap[fl]&(1<<sl) != 0) {
				return fmt.Errorf("pool: bitmap disagrees with list (%d,%d)", fl, sl)
			}
			for b := head; b != nil; b = b.nextFree {
				if f, s := mapping(b.size); !b.isFree || f != fl || s != sl {
					return fmt.Errorf("pool: range at %d (size %d) is in list (%d,%d)", b.offset, b.size, fl, sl)
				}
				listed++
			}
		}
		if (r.slMap[fl] != 0) != (r.flMap&(1<<fl) != 0) {
			return fmt.Errorf("pool: first-level bitmap disagrees at %d", fl)
		}
	}
	if listed != nfree {
		return fmt.Errorf("pool: %d free ranges, %d listed", nfree, listed)
	}
	return nil
}

func (r *Ranges) countUsed() int64 {
	var n int64
	for b := r.first; b != nil; b = b.nextPhys {
		if !b.isFree {
			n++
		}
	}
	return n
}
