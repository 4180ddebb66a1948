package kgen

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Index arithmetic that knows what the kernel knows about its indices.
// An invocation that computes several consecutive elements (a vector
// kernel's lanes, a parts kernel's parts: parts.go) indexes them as
// an aligned base plus a constant, and two elements that read the same
// operand element should read it at the same id, so that what the
// kernel computes from it is computed once (kernelBuilder.compute and
// spirv.Function.Op reuse values by id). A complex value's parts are
// the elements 2i and 2i+1 of its memory form, and both read element i
// of the real and imaginary arrays: with divisions written out per lane
// they were two ids and every complex function ran twice per element.
// So division and remainder by the constant strides of unravel fold
// where the alignment decides them, constants fold, and ravel drops
// zero terms.

// alignedIdx is an index known to be base + off with base a multiple of
// align and off < align.
type alignedIdx struct {
	base       spirv.ID
	off, align uint32
}

// scaledIndex is x * m, recorded as such, so that a division of it by
// a divisor of m is x * (m / s): the parts of a parts kernel's
// invocation i read element i of their operands at i itself, an own
// element (noteIndex) as in-place updates need.
func (k *kernelBuilder) scaledIndex(x spirv.ID, m uint32) spirv.ID {
	id := k.f.IMul(k.u32(), x, k.cu32(m))
	if k.scaled == nil {
		k.scaled = map[spirv.ID]scaledIdx{}
	}
	k.scaled[id] = scaledIdx{x, m}
	return id
}

// scaledIdx is an index known to be x * m.
type scaledIdx struct {
	x spirv.ID
	m uint32
}

// divExact is b / s for b a multiple of s.
func (k *kernelBuilder) divExact(b spirv.ID, s uint32) spirv.ID {
	if p, ok := k.scaled[b]; ok && p.m%s == 0 {
		if p.m == s {
			return p.x
		}
		return k.scaledIndex(p.x, p.m/s)
	}
	return k.f.UDiv(k.u32(), b, k.cu32(s))
}

// offsetIndex is base + off, recorded as aligned: base is a multiple of
// align, off < align.
func (k *kernelBuilder) offsetIndex(base spirv.ID, off, align uint32) spirv.ID {
	id := base
	if off != 0 {
		id = k.f.IAdd(k.u32(), base, k.cu32(off))
	}
	if align > 1 {
		if k.aligned == nil {
			k.aligned = map[spirv.ID]alignedIdx{}
		}
		k.aligned[id] = alignedIdx{base, off, align}
	}
	return id
}

// constU32 is the value of id where it is a u32 constant made by cu32.
func (k *kernelBuilder) constU32(id spirv.ID) (uint32, bool) {
	v, ok := k.u32Consts[id]
	return v, ok
}

// divMod is idx / s and idx % s for a constant s, folded where idx is a
// constant or aligned so that the alignment decides them: for idx = b +
// o (b a multiple of a, o < a), where s divides a the quotient is b/s +
// o/s and the remainder o%s; where a divides s the quotient is b/s
// (b%s is at most s-a) and the remainder b%s + o.
func (k *kernelBuilder) divMod(idx spirv.ID, s uint32) (q, r spirv.ID) {
	u32 := k.u32()
	if s == 1 {
		return idx, k.cu32(0)
	}
	if s != 0 {
		if c, ok := k.constU32(idx); ok {
			return k.cu32(c / s), k.cu32(c % s)
		}
		if a, ok := k.aligned[idx]; ok {
			switch {
			case a.align%s == 0:
				return k.offsetIndex(k.divExact(a.base, s), a.off/s, a.align/s), k.cu32(a.off % s)
			case s%a.align == 0:
				return k.f.UDiv(u32, a.base, k.cu32(s)), k.offsetIndex(k.f.UMod(u32, a.base, k.cu32(s)), a.off, a.align)
			}
		}
	}
	return k.f.UDiv(u32, idx, k.cu32(s)), k.f.UMod(u32, idx, k.cu32(s))
}

// raveledIdx is an index known to be ravel(ix, dims), each ix[d] below
// dims[d].
type raveledIdx struct {
	ix   []spirv.ID
	dims []int64
}

// unraveled is idx split over dims where idx is known as the ravel of
// a multi-index over dims, or over dimensions that dims split or merge
// (a reshape's): a fused chain of remaps (a slice of a reshape of a
// broadcast of a pad: jnp.repeat, an upsampling, selectscatter.go's
// windows) otherwise divides each element's index by every stride of
// every array it passes through, and the divisions, by constants that
// are no powers of two, were most of such a kernel's time.
func (k *kernelBuilder) unraveled(idx spirv.ID, dims []int64) ([]spirv.ID, bool) {
	r, ok := k.raveled[idx]
	if !ok {
		return nil, false
	}
	if slices.Equal(r.dims, dims) {
		return slices.Clone(r.ix), true
	}
	if g, ok := splitGroups(r.dims, dims); ok { // dims split r.dims
		out := make([]spirv.ID, 0, len(dims))
		for i, x := range r.ix {
			out = append(out, k.unravel(x, dims[g[i]:g[i+1]])...)
		}
		return out, true
	}
	if g, ok := splitGroups(dims, r.dims); ok { // dims merge r.dims
		out := make([]spirv.ID, len(dims))
		for i := range out {
			out[i] = k.ravel(r.ix[g[i]:g[i+1]], r.dims[g[i]:g[i+1]])
		}
		return out, true
	}
	return nil, false
}

// splitGroups reports whether fine splits each dimension of coarse into
// consecutive ones (dimensions of 1 anywhere), and where: coarse[i] is
// the product of fine[g[i]:g[i+1]].
func splitGroups(coarse, fine []int64) ([]int, bool) {
	g := make([]int, len(coarse)+1)
	j := 0
	for i, c := range coarse {
		prod := int64(1)
		for j < len(fine) && fine[j] > 0 && c%(prod*fine[j]) == 0 {
			prod *= fine[j]
			j++
		}
		if prod != c {
			return nil, false
		}
		g[i+1] = j
	}
	return g, j == len(fine)
}

// unravel splits a linear u32 index into a multi-index over dims.
func (k *kernelBuilder) unravel(idx spirv.ID, dims []int64) []spirv.ID {
	if ix, ok := k.unraveled(idx, dims); ok {
		return ix
	}
	out := make([]spirv.ID, len(dims))
	rest := idx
	st := hlo.RowMajorStrides(dims)
	for d := range dims {
		switch {
		case dims[d] == 1:
			// Within the array the position is 0 and rest, below the
			// stride, stays.
			out[d] = k.cu32(0)
		case d == len(dims)-1:
			out[d] = rest
		default:
			out[d], rest = k.divMod(rest, uint32(st[d]))
		}
	}
	return out
}

// ravel combines a multi-index over dims into a linear u32 index; zero
// terms and constants fold.
func (k *kernelBuilder) ravel(ix []spirv.ID, dims []int64) spirv.ID {
	u32 := k.u32()
	st := hlo.RowMajorStrides(dims)
	var lin spirv.ID
	konst := uint32(0)
	for d, x := range ix {
		if c, ok := k.constU32(x); ok {
			konst += c * uint32(st[d])
			continue
		}
		term := x
		if st[d] != 1 {
			term = k.f.IMul(u32, x, k.cu32(uint32(st[d])))
		}
		if lin == 0 {
			lin = term
		} else {
			lin = k.f.IAdd(u32, lin, term)
		}
	}
	switch {
	case lin == 0:
		return k.cu32(konst)
	case konst != 0:
		lin = k.f.IAdd(u32, lin, k.cu32(konst))
	}
	// Not where lin is one of ix (one term, stride 1): the split of lin
	// would be the split of itself.
	if _, known := k.raveled[lin]; !known && !slices.Contains(ix, lin) && !slices.Contains(dims, 0) {
		if k.raveled == nil {
			k.raveled = map[spirv.ID]raveledIdx{}
		}
		k.raveled[lin] = raveledIdx{slices.Clone(ix), slices.Clone(dims)}
	}
	return lin
}
