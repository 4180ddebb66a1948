package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// A select-and-scatter (jax.grad of a max pooling) gives each operand
// element the scatter of the source values of the windows that select
// it. Computed per operand element as written (kgen's
// selectAndScatterValue), each element chooses again the element of
// every window that holds it: a 3x3 stride-2 pooling's gradient of
// f32[8,112,112,64] makes each of its 6.4 million elements pick the
// maximum of 4 windows of 9, 147 ms on lavapipe. Choosing once per
// window is a reduce-window of (value, position) pairs whose reducer is
// the select computation's choice (XLA's GPU emitter finds the selected
// index the same way, then scatters with atomics). Each operand element
// then reads, for the few windows that hold it, the position that
// window chose, and applies the scatter computation to the windows that
// chose it: elementwise ops over the chosen positions and the source
// upsampled by the stride, which fuse into one kernel. The windows are
// taken in the order the evaluator takes them (the source's row-major
// order), so the results are the same bit for bit.

// maxSelectCandidates bounds the windows that may hold one operand
// element (the fused kernel reads each one's choice); past it, the
// direct kernel.
const maxSelectCandidates = 64

// splitSelectAndScatters chooses each window's element of every
// select-and-scatter once, before the scatter (selectedScatter).
func splitSelectAndScatters(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpSelectAndScatter: (*expander).selectedScatter})
}

// selectedScatter is select-and-scatter in as the reduce-window that
// chooses each window's element (its flat position in the operand, -1
// where it holds none) and the fold, at each operand element, of the
// source values of the windows that hold the element and chose it.
func (b *expander) selectedScatter(in *hlo.Instruction) (*hlo.Instruction, error) {
	x, src, init := in.Operands[0], in.Operands[1], in.Operands[2]
	sel, scat := in.SelectAndScatterComputations()
	t, rank := x.Shape.Elem, x.Shape.Rank()
	n := x.Shape.NumElements()
	if selectAndScatterSupport(in) != nil || rank == 0 || n == 0 || n >= 1<<31-1 || src.Shape.NumElements() == 0 {
		return in, nil
	}
	w := in.A.Window
	box := make([]int64, rank) // the windows that may hold an element, along each dimension
	candidates := int64(1)
	for d, wd := range w.Dims {
		box[d] = (wd.Size + wd.Stride - 1) / wd.Stride
		candidates *= box[d]
	}
	if candidates > maxSelectCandidates {
		return in, nil
	}

	// The choice: each window's first element, replaced by each later
	// one that select does not prefer it to (the evaluator's rule and
	// XLA's), as a fold of (value, position) pairs in window order.
	pos := b.reshape(b.iota(hlo.S32, 0, n), x.Shape.Dims...)
	none := b.constant(hlo.S32, -1)
	rw := b.inst(hlo.OpReduceWindow, hlo.TupleShape(src.Shape, hlo.ArrayShape(hlo.S32, src.Shape.Dims...)),
		x, pos, b.constant(t, 0), none)
	chooser := &hlo.Window{Dims: make([]hlo.WindowDim, rank)}
	for d, wd := range w.Dims {
		chooser.Dims[d] = hlo.WindowDim{Size: wd.Size, Stride: wd.Stride, PadLo: wd.PadLo, PadHi: wd.PadHi, LhsDilate: 1, RhsDilate: 1}
	}
	withWindow(rw, chooser)
	rw.Called = []*hlo.Computation{b.chooser(sel, t)}
	chosen := b.gte(rw, 1)

	// Window w holds element p where w = floor((p + pad_lo)/stride) - j
	// for j in [0, box): read at p from the choices and the source
	// padded by box-1 before (and after as far as the last element
	// reads) and repeated stride times along each dimension.
	padded := func(v *hlo.Instruction, fill *hlo.Instruction) *hlo.Instruction {
		pads := make([]hlo.PadDim, rank)
		spread, bdims := make([]int64, 0, 2*rank), make([]int64, rank)
		for d, wd := range w.Dims {
			m := v.Shape.Dims[d]
			need := (wd.PadLo+(box[d]-1)*wd.Stride+x.Shape.Dims[d]+wd.Stride-1)/wd.Stride - (box[d] - 1)
			pads[d] = hlo.PadDim{Lo: box[d] - 1, Hi: max(0, need-m)}
			spread = append(spread, box[d]-1+max(m, need), wd.Stride)
			bdims[d] = int64(2 * d)
		}
		p := b.pad(v, pads, fill)
		bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(v.Shape.Elem, spread...), p)
		bc.A.Dimensions, bc.A.HasDimensions = bdims, true
		up := make([]int64, rank)
		for d := range up {
			up[d] = spread[2*d] * spread[2*d+1]
		}
		return b.reshape(bc, up...)
	}
	upChosen, upSrc := padded(chosen, none), padded(src, b.constant(t, 0))
	at := func(v *hlo.Instruction, j []int64) *hlo.Instruction {
		starts := make([]int64, rank)
		for d, wd := range w.Dims {
			starts[d] = wd.PadLo + (box[d]-1-j[d])*wd.Stride
		}
		return b.block(v, starts, x.Shape.Dims)
	}
	// The windows that hold p in the source's row-major order: j in
	// reverse row-major order.
	acc := b.bcast(init, x.Shape.Dims...)
	js := combinations(box)
	for _, j := range slices.Backward(js) {
		mine := b.compare(at(upChosen, j), pos, "EQ")
		acc = b.sel(mine, b.mapped(scat, acc, at(upSrc, j)), acc)
	}
	return acc, nil
}

// selectAndScatterSupport names what of select-and-scatter in the
// device cannot run: computations of other than scalar elementwise ops
// on its element type, dilated or negatively padded windows.
func selectAndScatterSupport(in *hlo.Instruction) error {
	for _, c := range in.Called {
		if !c.IsScalarElementwise() {
			return in.Errorf("select-and-scatter's computation %s is not made of scalar elementwise ops; not supported on the device yet", c.Name)
		}
		for _, p := range c.Params {
			if p.Shape.Elem != in.Shape.Elem {
				return in.Errorf("select-and-scatter's computation %s takes %s where the operand is %s; not supported on the device yet: convert the operand first", c.Name, p.Shape.Elem, in.Shape.Elem)
			}
		}
	}
	for _, d := range in.A.Window.Dims {
		if d.LhsDilate > 1 || d.RhsDilate > 1 || d.PadLo < 0 || d.PadHi < 0 || d.Stride < 1 {
			return in.Errorf("select-and-scatter with dilated or negatively padded windows is not supported on the device")
		}
	}
	return nil
}

// chooser is the reducer of (value, position) pairs of type t that
// keeps a pair while select prefers it to the next one: (a, i) then
// (v, k) gives (v, k) where there is no choice yet (i < 0), or k is an
// element and select(a, v) is false.
func (b *expander) chooser(sel *hlo.Computation, t hlo.ElementType) *hlo.Computation {
	c := b.scalarComputation("/choose", t, hlo.S32, t, hlo.S32)
	inner := &expander{from: b.from, n: b.n}
	a, i, v, k := c.Params[0], c.Params[1], c.Params[2], c.Params[3]
	zero := inner.constant(hlo.S32, 0)
	keep := inner.mapped(sel, a, v)
	take := inner.binary(hlo.OpAnd, inner.compare(k, zero, "GE"),
		inner.binary(hlo.OpOr, inner.compare(i, zero, "LT"), inner.inst(hlo.OpNot, keep.Shape, keep)))
	c.Root = inner.tuple(inner.sel(take, v, a), inner.sel(take, k, i))
	c.Instructions = append(c.Instructions, inner.out...)
	return c
}
