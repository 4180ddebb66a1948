package lower

import (
	"bytes"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// A transposed convolution (lhs_dilate L > 1: the gradient of a strided
// convolution with respect to its input, a decoder's upsampling layer)
// convolves an input with L-1 zeros between its elements. Computed as
// written, L-1 of every L products along each dilated dimension are of
// those zeros, and no kernel takes it as a GEMM: JAX's input gradient of
// a 3x3 stride-2 convolution of f32[8,64,64,64] ran 2.4 s on lavapipe,
// 180 times its forward convolution. Split into its L phases (the
// sub-pixel decomposition cuDNN's and TensorRT's deconvolutions use),
// the outputs at positions r, r+L, r+2L... read only the kernel taps
// c, c+L, c+2L... for one c, and each phase is a dense convolution of
// the undilated input with those taps: the same products, none of them
// by a zero, and an implicit GEMM each. The phases' results are
// interleaved back along the dimension.
//
// A reduce-window of a dilated input is the same: the gradient of a
// strided average pooling is a sum over windows of the output gradient
// padded with zeros between its elements, and its phases are windows of
// the undilated input (a reduce-window folds the elements it finds, in
// window order; holes are not folded, so the phases fold the same
// elements in the same order).

// maxPhases bounds the convolutions one transposed convolution becomes
// (L^d of them for d dilated dimensions); past it, the direct kernel.
const maxPhases = 64

// splitDilatedInputs splits each convolution or reduce-window of a
// dilated input into the dense ones of its phases.
func splitDilatedInputs(s *state) error {
	split := func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		if in.Op == hlo.OpReduceWindow {
			in = b.undilatedPad(in)
		}
		phases := int64(1)
		for _, i := range dilatedDims(in) {
			phases *= in.A.Window.Dims[i].LhsDilate
		}
		if phases == 1 || phases > maxPhases || in.Shape.NumElements() == 0 || in.Operands[0].Shape.NumElements() == 0 {
			if in != b.from {
				return b.place(in), nil
			}
			return in, nil
		}
		return b.phases(in, in.Operands[0], in.Operands[1])
	}
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpConvolution: split, hlo.OpReduceWindow: split})
}

// dilatedDims are the spatial dimensions (window indices) of a
// convolution or a reduce-window of one operand that the phase split
// takes: dilated input, stride 1, no kernel dilation or reversal (a
// stride or kernel dilation would make the taps of a phase depend on
// the output position too).
func dilatedDims(in *hlo.Instruction) []int {
	w := in.A.Window
	if w == nil || !in.Shape.IsArray() || len(in.Operands) != 2 || in.Op == hlo.OpConvolution && in.A.ConvDims == nil {
		return nil
	}
	var out []int
	for i, d := range w.Dims {
		if d.LhsDilate > 1 && max(d.Stride, 1) == 1 && max(d.RhsDilate, 1) == 1 && !d.Reversal && d.Size > 0 {
			out = append(out, i)
		}
	}
	return out
}

// undilatedPad is reduce-window in with its operand's interior padding
// taken as the window's input dilation, where that folds the same
// elements (an unplaced instruction), else in: the pad's value is the
// reduce-window's init, and folding that again leaves a fold as it was
// (an identity, or an idempotent reducer), so the pad's elements, edges
// and holes, may go unfolded as the window's own padding and holes do.
// XLA writes the gradient of an average pooling so.
func (b *expander) undilatedPad(in *hlo.Instruction) *hlo.Instruction {
	if len(in.Operands) != 2 || in.A.Window == nil || len(in.Called) != 1 {
		return in
	}
	init := in.Operands[1]
	op, li := in.Called[0].ReducerOp(), constLiteral(init)
	if li == nil || !regroups(op, init) {
		return in
	}
	// Pads of init's value, any number of edges around one of interior
	// padding (jax.grad of avg_pool writes one).
	w := &hlo.Window{Dims: slices.Clone(in.A.Window.Dims)}
	x, interior := in.Operands[0], false
	for x.Op == hlo.OpPad && !interior {
		if lv := constLiteral(x.Operands[1]); lv == nil || !bytes.Equal(lv.Data, li.Data) {
			return in
		}
		for d, p := range x.A.Padding {
			wd := &w.Dims[d]
			if p.Lo < 0 || p.Hi < 0 || max(wd.LhsDilate, 1) > 1 {
				return in
			}
			if p.Interior > 0 && (max(wd.Stride, 1) != 1 || max(wd.RhsDilate, 1) != 1 || wd.Reversal) {
				return in // not a dimension the phases would split
			}
			interior = interior || p.Interior > 0
			wd.PadLo, wd.PadHi = wd.PadLo+p.Lo, wd.PadHi+p.Hi
		}
		if interior {
			for d, p := range x.A.Padding {
				w.Dims[d].LhsDilate = p.Interior + 1
			}
		}
		x = x.Operands[0]
	}
	if !interior {
		return in
	}
	rw := *in
	rw.Operands = []*hlo.Instruction{x, init}
	withWindow(&rw, w)
	return &rw
}

// phase is one dimension's part of a phase r: the outputs r, r+L, ...
// (t of them, of at most tMax), read by taps c, c+L, ... (j of them) at
// input t+q, ..., as a window of the input taken as [from, to) and
// padded lo below and hi above; empty where no tap reads an input
// element.
type phase struct {
	t, c, j, from, to, lo, hi int64
	empty                     bool
}

// phaseOf is phase r of a dimension of input length h dilated by L, a
// window of K taps padded padLo below, and ho outputs.
func phaseOf(r, L, K, padLo, h, ho int64) phase {
	// Output o = r + L*t, tap k: dilated input position o + k - padLo,
	// an input element where that is a multiple of L: k = c + L*j with
	// c = (padLo - r) mod L, at input index t + j + q.
	p := phase{t: max((ho-r+L-1)/L, 0), c: ((padLo-r)%L + L) % L}
	p.j = max((K-p.c+L-1)/L, 0)
	q := (r + p.c - padLo) / L
	if p.t == 0 || p.j == 0 || q >= h || q+p.t+p.j-2 < 0 {
		p.empty = true
		return p
	}
	// Padding -q below, and above what leaves t outputs; negative
	// padding taken off the input instead.
	lo, hi := -q, p.t-1+p.j-h+q
	p.from, p.to, p.lo, p.hi = max(-lo, 0), h-max(-hi, 0), max(lo, 0), max(hi, 0)
	return p
}

// phases is in (a convolution or reduce-window with operands x and y:
// the kernel or the init) as the dense ones of its phases (every
// combination of a phase of each dilated dimension), interleaved by one
// transpose of them stacked.
func (b *expander) phases(in, x, y *hlo.Instruction) (*hlo.Instruction, error) {
	dims := dilatedDims(in)
	ls := make([]int64, len(dims))
	padded := slices.Clone(in.Shape.Dims) // each phase's result, padded to tMax outputs
	for n, i := range dims {
		_, _, od := windowAxes(in, i)
		ls[n] = in.A.Window.Dims[i].LhsDilate
		padded[od] = (in.Shape.Dims[od] + ls[n] - 1) / ls[n]
	}
	var stack []*hlo.Instruction
	for _, rs := range combinations(ls) {
		ph := make([]phase, len(dims))
		empty := false
		for n, i := range dims {
			xd, _, od := windowAxes(in, i)
			wd := in.A.Window.Dims[i]
			ph[n] = phaseOf(rs[n], wd.LhsDilate, wd.Size, wd.PadLo, x.Shape.Dims[xd], in.Shape.Dims[od])
			empty = empty || ph[n].empty
		}
		var p *hlo.Instruction
		if empty {
			p = b.unfolded(in, y, padded)
		} else {
			c := *in
			w := &hlo.Window{Dims: slices.Clone(in.A.Window.Dims)}
			c.Shape = hlo.ArrayShape(in.Shape.Elem, slices.Clone(in.Shape.Dims)...)
			xp, yp := x, y
			for n, i := range dims {
				xd, kd, od := windowAxes(in, i)
				f := ph[n]
				if f.from > 0 || f.to < xp.Shape.Dims[xd] {
					xp = b.slice(xp, xd, f.from, f.to)
				}
				if in.Op == hlo.OpConvolution {
					yp = b.strided(yp, kd, f.c, in.A.Window.Dims[i].Size, ls[n])
				}
				w.Dims[i] = hlo.WindowDim{Size: f.j, Stride: 1, PadLo: f.lo, PadHi: f.hi, LhsDilate: 1, RhsDilate: 1}
				c.Shape.Dims[od] = f.t
			}
			c.Operands = []*hlo.Instruction{xp, yp}
			withWindow(&c, w)
			if s, err := hlo.InferShape(&c); err != nil || !s.SameDims(c.Shape) {
				return nil, in.Errorf("internal error: a phase of the dilated input's %s has shape %v, not %v (%v)", in.Op, s, c.Shape, err)
			}
			p = b.place(&c)
			for n, i := range dims {
				_, _, od := windowAxes(in, i)
				if t := ph[n].t; t < padded[od] {
					p = b.padAlong(p, od, 0, padded[od]-t, b.constant(p.Shape.Elem, 0)) // cut again below
				}
			}
		}
		stack = append(stack, b.reshape(p, slices.Concat([]int64{1}, padded)...))
	}
	// Stacked [phases, out...] as [L..., out...], each L moved after its
	// output dimension, the two made one, the tails past the outputs cut.
	st := b.reshape(b.concat(0, stack...), slices.Concat(ls, padded)...)
	var perm []int64
	for e := range padded {
		perm = append(perm, int64(len(ls)+e))
		for n, i := range dims {
			if _, _, od := windowAxes(in, i); od == e {
				perm = append(perm, int64(n))
			}
		}
	}
	merged := slices.Clone(padded)
	for n, i := range dims {
		_, _, od := windowAxes(in, i)
		merged[od] *= ls[n]
	}
	out := b.reshape(b.transposeIf(st, perm), merged...)
	for _, i := range dims {
		if _, _, od := windowAxes(in, i); merged[od] > in.Shape.Dims[od] {
			out = b.slice(out, od, 0, in.Shape.Dims[od])
		}
	}
	return out, nil
}

// combinations are every tuple (r_0, ..., r_n-1) with 0 <= r_i < ls[i],
// the last varying fastest.
func combinations(ls []int64) [][]int64 {
	out := [][]int64{{}}
	for _, l := range ls {
		var next [][]int64
		for _, c := range out {
			for r := range l {
				next = append(next, append(slices.Clone(c), r))
			}
		}
		out = next
	}
	return out
}

// windowAxes are the input, kernel and output dimensions of window
// dimension i of a convolution (kernel -1 for a reduce-window, whose
// window dimensions are its operand's and result's).
func windowAxes(in *hlo.Instruction, i int) (xd, kd, od int) {
	if cd := in.A.ConvDims; in.Op == hlo.OpConvolution {
		return int(cd.InSpatial[i]), int(cd.KSpatial[i]), int(cd.OutSpatial[i])
	}
	return i, -1, i
}

// withWindow gives template c window w, its text too.
func withWindow(c *hlo.Instruction, w *hlo.Window) {
	c.A.Window = w
	c.Attrs = withAttr(c.Attrs, "window", w.String())
}

// unfolded is what a convolution or reduce-window of operands x and y
// (the kernel or the init) gives where no window finds an input element,
// in dimensions dims: zeros, or the init.
func (b *expander) unfolded(in, y *hlo.Instruction, dims []int64) *hlo.Instruction {
	if in.Op == hlo.OpReduceWindow {
		return b.bcast(y, dims...)
	}
	return b.zeros(hlo.ArrayShape(in.Shape.Elem, dims...))
}
