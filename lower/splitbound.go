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
// reductions then splits. Other long windows of a reducer that may
// reassociate, from an init it absorbs, fold bands of their window
// (windowBands); the rest stay refused by name.
func splitLongWindows(s *state) error {
	return expandWithinBound(s, hlo.OpReduceWindow, func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error) {
		r, err := b.tiledWindows(in, budget)
		if r != in || err != nil {
			return r, err
		}
		// Overlapping windows (a moving sum of 70,000): bands of the
		// window folded by the reducer, where it may reassociate and its
		// init, folded once a band, leaves a fold as it was.
		if len(in.Operands) != 2 || len(in.Called) != 1 || !in.Shape.IsArray() || in.Shape.NumElements() == 0 ||
			!regroups(in.Called[0].ReducerOp(), in.Operands[1]) || windowTaps(in) <= budget {
			return in, nil
		}
		return b.windowBands(in, in.Operands[0], in.Operands[1], budget/2), nil
	})
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
// than one invocation may loop over into bands of at most half of that
// (room for what fusion adds to the loop). One within the bound stays
// whole: split, its bands fused into one kernel ran slower (a depthwise
// kernel gradient of 32,768 taps, 150 -> 228 ms).
func splitLongConvs(s *state) error {
	return expandWithinBound(s, hlo.OpConvolution, func(b *expander, in *hlo.Instruction, budget int64) (*hlo.Instruction, error) {
		if in.A.ConvDims == nil || in.A.Window == nil || !in.Shape.IsArray() || in.Shape.NumElements() == 0 || windowTaps(in) <= budget {
			return in, nil
		}
		return b.windowBands(in, in.Operands[0], in.Operands[1], budget/2), nil
	})
}

// windowTaps is what one output element of a convolution or
// reduce-window loops over: a convolution's kernel input features
// times its window's taps, a reduce-window's taps.
func windowTaps(in *hlo.Instruction) int64 {
	n := int64(1)
	if in.Op == hlo.OpConvolution {
		n = in.Operands[1].Shape.Dims[in.A.ConvDims.KIn]
	}
	for _, d := range in.A.Window.Dims {
		n *= d.Size
	}
	return n
}

// windowBands is in (a convolution or a reduce-window of one operand,
// or its template with operands x and y: the kernel or the init) as the
// sum, or the reducer's fold, of ones of at most part taps each, where
// its window allows, else in itself. A reduce-window's bands each fold
// the init: the caller sees that the reducer's init absorbs it.
func (b *expander) windowBands(in, x, y *hlo.Instruction, part int64) *hlo.Instruction {
	place := func() *hlo.Instruction {
		c := *in
		c.Operands = []*hlo.Instruction{x, y}
		return b.place(&c)
	}
	taps := windowTaps(in)
	if taps <= part {
		return place()
	}
	// The outermost dimension whose taps can be split: the input's
	// elements not interleaved with holes (a band's shift is then a
	// slice of it) and its taps not reversed.
	i := slices.IndexFunc(in.A.Window.Dims, func(d hlo.WindowDim) bool {
		return d.Size > 1 && max(d.LhsDilate, 1) == 1 && !d.Reversal
	})
	if i < 0 {
		return place() // check loop bounds names it
	}
	wd := in.A.Window.Dims[i]
	rest := taps / wd.Size
	band := max(part/rest, 1)
	xd, kd, _ := windowAxes(in, i)
	rd := max(wd.RhsDilate, 1)
	var parts []*hlo.Instruction
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
		yb := y
		if in.Op == hlo.OpConvolution {
			yb = b.slice(y, kd, a, e)
		}
		bc := *in
		w := &hlo.Window{Dims: slices.Clone(in.A.Window.Dims)}
		w.Dims[i].Size, w.Dims[i].PadLo, w.Dims[i].PadHi = e-a, max(lo, 0), max(hi, 0)
		withWindow(&bc, w)
		parts = append(parts, b.windowBands(&bc, xb, yb, part))
	}
	switch {
	case len(parts) == 0:
		return b.unfolded(in, y, in.Shape.Dims) // only padding
	case in.Op == hlo.OpReduceWindow:
		return b.foldTree(in.Called[0].ReducerOp(), parts)
	}
	return b.foldTree(hlo.OpAdd, parts)
}

// foldTree folds xs (one shape, at least one) by binary op in a
// balanced tree.
func (b *expander) foldTree(op hlo.Opcode, xs []*hlo.Instruction) *hlo.Instruction {
	for len(xs) > 1 {
		var next []*hlo.Instruction
		for j := 0; j+1 < len(xs); j += 2 {
			next = append(next, b.binary(op, xs[j], xs[j+1]))
		}
		if len(xs)%2 == 1 {
			next = append(next, xs[len(xs)-1])
		}
		xs = next
	}
	return xs[0]
}
