package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// A dot's kernels loop, per output element (or per tile of them), over
// its contraction: on a device that bounds a loop's iterations
// (llvmpipe stops at 65535) a dot contracting more elements could not
// run (jnp.dot of two vectors of 100,000). Split, as XLA's split-K
// GEMM does for its own reasons, it contracts parts of at most half the
// bound each, an extra batch dimension of the parts (the contraction
// zero-padded to whole parts), and adds the partial products: the same
// products, summed in another order, as any dot's order is its
// implementation's.

// splitLongDots splits each dot whose contraction is longer than one
// invocation may loop over.
func splitLongDots(s *state) error {
	return expandWithinBound(s, hlo.OpDot, func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error) {
		return b.splitDot(in, budget/2)
	})
}

// splitDot is dot in as a sum of dots over parts of at most part of its
// contraction, or in itself where the contraction is no longer.
func (b *expander) splitDot(in *hlo.Instruction, part int64) (*hlo.Instruction, error) {
	lhs, rhs := in.Operands[0], in.Operands[1]
	dd := in.A.Dot
	if dd == nil || !in.Shape.IsArray() {
		return in, nil
	}
	k := int64(1)
	for _, d := range dd.LhsContract {
		k *= lhs.Shape.Dims[d]
	}
	if k <= part {
		return in, nil
	}
	parts := (k + part - 1) / part
	kp := (k + parts - 1) / parts
	lFree, rFree := dd.FreeDims(lhs.Shape.Rank(), rhs.Shape.Rank())
	nb := len(dd.LhsBatch)
	dims := func(x *hlo.Instruction, ds []int64) []int64 {
		out := make([]int64, len(ds))
		for i, d := range ds {
			out[i] = x.Shape.Dims[d]
		}
		return out
	}
	// Each operand as [batch..., free..., k] (lhs) or [batch..., k,
	// free...] (rhs), k padded to parts*kp with zeros, then k as [parts,
	// kp].
	arrange := func(x *hlo.Instruction, batch, free, contract []int64, kLast bool) *hlo.Instruction {
		order := slices.Concat(batch, free, contract)
		shape := slices.Concat(dims(x, batch), dims(x, free), []int64{k})
		if !kLast {
			order = slices.Concat(batch, contract, free)
			shape = slices.Concat(dims(x, batch), []int64{k}, dims(x, free))
		}
		v := b.reshape(b.transpose(x, order...), shape...)
		kd := len(batch) + len(free)
		if !kLast {
			kd = len(batch)
		}
		if parts*kp > k {
			v = b.padAlong(v, kd, 0, parts*kp-k, b.constant(x.Shape.Elem, 0))
		}
		split := slices.Concat(shape[:kd], []int64{parts, kp}, shape[kd+1:])
		return b.reshape(v, split...)
	}
	l := arrange(lhs, dd.LhsBatch, lFree, dd.LhsContract, true)
	r := arrange(rhs, dd.RhsBatch, rFree, dd.RhsContract, false)
	// The parts a batch dimension after the dot's own: lhs [batch...,
	// free..., parts, kp], rhs [batch..., parts, kp, free...].
	lp := int64(nb + len(lFree))
	bd := make([]int64, nb)
	for i := range bd {
		bd[i] = int64(i)
	}
	partial := slices.Concat(in.Shape.Dims[:nb], []int64{parts}, in.Shape.Dims[nb:])
	d := b.inst(hlo.OpDot, hlo.ArrayShape(in.Shape.Elem, partial...), l, r)
	d.A = in.A
	d.A.Dot = &hlo.DotDims{
		LhsBatch: append(slices.Clone(bd), lp), RhsBatch: append(slices.Clone(bd), int64(nb)),
		LhsContract: []int64{lp + 1}, RhsContract: []int64{int64(nb) + 1},
	}
	return b.reduceDim(d, nb, hlo.OpAdd, b.constant(in.Shape.Elem, 0)), nil
}

// splitLongWindows rewrites each reduce-window whose window holds more
// elements than one invocation may loop over, on a device that bounds
// loops, where its windows tile the operand (stride the window's size,
// no padding or dilation, each dimension a whole number of windows: a
// global pooling over large images): a reduce of the operand reshaped to
// [d0/w0, w0, d1/w1, w1, ...] over the w dimensions, which split long
// reductions then splits. Other long windows stay refused by name.
func splitLongWindows(s *state) error {
	return expandWithinBound(s, hlo.OpReduceWindow, (*expander).tiledWindows)
}

// tiledWindows is reduce-window in as a reduce where its windows tile
// its operands and hold more than limit elements, or in itself.
func (b *expander) tiledWindows(in *hlo.Instruction, limit int64) (*hlo.Instruction, error) {
	n := len(in.Operands) / 2
	if in.A.Window == nil || n == 0 {
		return in, nil
	}
	x := in.Operands[0].Shape
	size := int64(1)
	var split, reduced []int64
	for d, w := range in.A.Window.Dims {
		if w.Stride != w.Size || w.PadLo != 0 || w.PadHi != 0 || max(w.LhsDilate, 1) != 1 || max(w.RhsDilate, 1) != 1 || w.Reversal || w.Size == 0 || x.Dims[d]%w.Size != 0 {
			return in, nil
		}
		size *= w.Size
		split = append(split, x.Dims[d]/w.Size, w.Size)
		reduced = append(reduced, int64(2*d+1))
	}
	if size <= limit {
		return in, nil
	}
	ops := make([]*hlo.Instruction, 0, 2*n)
	for _, o := range in.Operands[:n] {
		ops = append(ops, b.reshape(o, split...))
	}
	ops = append(ops, in.Operands[n:]...)
	r := b.inst(hlo.OpReduce, in.Shape, ops...)
	r.Called = in.Called
	r.A.Dimensions, r.A.HasDimensions = reduced, true
	return r, nil
}

// A convolution's kernels loop, per output element, over its kernel's
// input features and window taps. The weight gradient of a convolution
// is one whose window is the whole image and whose input features are
// the batch: for a 3x3 convolution of f32[32,64,64,64], 131,072 taps an
// output, which llvmpipe cannot run. As a dot's, the contraction is
// split: the window in bands of taps along its outermost splittable
// dimension (single taps, then the next dimension, where one tap of it
// is too long), each band a convolution of the input shifted to it, the
// bands' results added in a balanced tree.

// splitLongConvs splits each convolution whose contraction is longer
// than one invocation may loop over.
func splitLongConvs(s *state) error {
	return expandWithinBound(s, hlo.OpConvolution, func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error) {
		if in.A.ConvDims == nil || in.A.Window == nil || !in.Shape.IsArray() || in.Shape.NumElements() == 0 || convTaps(in) <= budget/2 {
			return in, nil
		}
		return b.convBands(in, in.Operands[0], in.Operands[1], budget/2), nil
	})
}

// convTaps is the contraction of conv: its kernel's input features
// times its window's taps.
func convTaps(conv *hlo.Instruction) int64 {
	n := conv.Operands[1].Shape.Dims[conv.A.ConvDims.KIn]
	for _, d := range conv.A.Window.Dims {
		n *= d.Size
	}
	return n
}

// convBands is conv (or its template) of input x and kernel k as the
// sum of convolutions of at most part taps each, where its window
// allows, else conv itself.
func (b *expander) convBands(conv, x, k *hlo.Instruction, part int64) *hlo.Instruction {
	place := func() *hlo.Instruction {
		c := *conv
		c.Operands = []*hlo.Instruction{x, k}
		c.Attrs = withAttr(conv.Attrs, "window", conv.A.Window.String())
		return b.place(&c)
	}
	taps := convTaps(conv)
	if taps <= part {
		return place()
	}
	// The outermost dimension whose taps can be split: the input's
	// elements not interleaved with zeros (a band's shift is then a
	// slice of it) and its taps not reversed.
	cd := conv.A.ConvDims
	i := slices.IndexFunc(conv.A.Window.Dims, func(d hlo.WindowDim) bool {
		return d.Size > 1 && max(d.LhsDilate, 1) == 1 && !d.Reversal
	})
	if i < 0 {
		return place() // check loop bounds names it
	}
	wd := conv.A.Window.Dims[i]
	rest := taps / wd.Size
	band := max(part/rest, 1)
	xd, kd := int(cd.InSpatial[i]), int(cd.KSpatial[i])
	rd := max(wd.RhsDilate, 1)
	var sums []*hlo.Instruction
	for a := int64(0); a < wd.Size; a += band {
		e := min(a+band, wd.Size)
		// Taps [a, e): the window shifted by a taps, as many outputs.
		lo, hi := wd.PadLo-a*rd, wd.PadHi-(wd.Size-e)*rd
		xb := x
		h := x.Shape.Dims[xd]
		from, to := max(-lo, 0), h-max(-hi, 0)
		if from >= to {
			continue // the band reads padding only
		}
		if from > 0 || to < h {
			xb = b.slice(x, xd, from, to)
		}
		a2, kdims := sliceAlong(k.Shape.Dims, kd, a, e, 1)
		kb := b.inst(hlo.OpSlice, hlo.ArrayShape(k.Shape.Elem, kdims...), k)
		kb.A.Slice = a2
		bc := *conv
		bc.A.Window = &hlo.Window{Dims: slices.Clone(conv.A.Window.Dims)}
		bc.A.Window.Dims[i].Size, bc.A.Window.Dims[i].PadLo, bc.A.Window.Dims[i].PadHi = e-a, max(lo, 0), max(hi, 0)
		sums = append(sums, b.convBands(&bc, xb, kb, part))
	}
	if len(sums) == 0 {
		return b.zeros(conv.Shape)
	}
	return b.sumTree(sums)
}

// sumTree adds xs (one shape, at least one) in a balanced tree.
func (b *expander) sumTree(xs []*hlo.Instruction) *hlo.Instruction {
	for len(xs) > 1 {
		var next []*hlo.Instruction
		for j := 0; j+1 < len(xs); j += 2 {
			next = append(next, b.binary(hlo.OpAdd, xs[j], xs[j+1]))
		}
		if len(xs)%2 == 1 {
			next = append(next, xs[len(xs)-1])
		}
		xs = next
	}
	return xs[0]
}
