package lower

import (
	"bytes"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Cumulative reductions. JAX lowers jnp.cumsum, cumprod, cummax and
// cummin (off TPU) to a reduce-window whose window spans the whole
// dimension, padded by its length less one before it (after it,
// reversed): output i folds elements 0..i. As a kernel each output
// loops over the whole window, n*n steps for n elements, and past
// llvmpipe's loop bound it cannot run at all. As XLA's
// ReduceWindowRewriter does, a scan of more than scanBase elements
// becomes scans of blocks of scanBase, a scan of the blocks' totals (the
// same rewrite again where they are many), and the reducer applied to
// each block's scan and the fold of the blocks before it: about
// n*scanBase steps in a few kernels.
//
// The blocks fold the init value in again, which is exact only where
// doing so changes nothing: add, or and xor from zero, multiply from
// one, and from all ones, max and min from any init (identityInit);
// other reducers and inits keep the reduce-window. A float sum is then
// summed in another order, block by block, as XLA's GPU backend sums
// it: each output is a fold of a few folds of scanBase elements, whose
// rounding error grows with scanBase times the tree's levels, not n.

// scanBase is the block length of a tree scan: a reduce-window of 8
// steps an element, a kernel per level (4096 elements: 4 levels). Rows
// of f32[1024,4096] (bench/workloads/cumsum_rows, lavapipe on a Zen 5
// host): the whole-row window 11,493 ms; blocks of 64 190 ms, 32 13.8,
// 16 11.2, 8 8.1, 4 12.6 (NumPy's cumsum 14.1).
const scanBase = 8

// minScanWork is the least loop steps a cumulative reduction's own
// kernel would run (outputs times its length) for a tree scan to pay
// for the kernels it adds, a few tens of microseconds each on lavapipe:
// one row of 512 took 0.19 ms as one window and 0.22 as a tree of 5
// kernels, one of 2048 2.5 against 0.23.
const minScanWork = 1 << 18

// treeScans rewrites each cumulative reduction of more than scanBase
// elements whose own kernel would run minScanWork steps as a tree scan.
func treeScans(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpReduceWindow: (*expander).treeScan})
}

// scanForm is a reduce-window that is a cumulative reduction by op along
// dimension d of its operand: reverse folds from the end; exclusive
// results have one element more, the init value first (last, reversed).
type scanForm struct {
	d                  int
	op                 hlo.Opcode
	reverse, exclusive bool
}

// scanOf reports whether in is a cumulative reduction it may reassociate.
func scanOf(in *hlo.Instruction) (scanForm, bool) {
	f := scanForm{d: -1}
	if len(in.Operands) != 2 || in.A.Window == nil || !in.Shape.IsArray() || len(in.Called) != 1 {
		return f, false
	}
	f.op = kgen.ReducerOp(in.Called[0])
	if !identityInit(f.op, in.Operands[1]) {
		return f, false
	}
	x := in.Operands[0].Shape
	for d, w := range in.A.Window.Dims {
		if w.Stride != 1 || w.LhsDilate > 1 || w.RhsDilate > 1 || w.Reversal {
			return f, false
		}
		if w.Size == 1 && w.PadLo == 0 && w.PadHi == 0 {
			continue
		}
		n := x.Dims[d]
		lo, hi := w.PadLo, w.PadHi
		if f.d >= 0 || w.Size != n || n < 2 {
			return f, false
		}
		f.d, f.reverse = d, lo == 0
		if f.reverse {
			lo, hi = hi, lo
		}
		if hi != 0 || lo != n-1 && lo != n {
			return f, false
		}
		f.exclusive = lo == n
	}
	return f, f.d >= 0
}

// identityInit reports whether folding init into a fold by op again
// leaves its result as it was: init is op's identity (+0 for add, which
// gives -0 only from two -0s, so that no fold from it is -0), or op is
// idempotent (max, min).
func identityInit(op hlo.Opcode, init *hlo.Instruction) bool {
	switch op {
	case hlo.OpMaximum, hlo.OpMinimum:
		return true
	}
	l := constLiteral(init)
	if l == nil || l.Shape.Rank() != 0 {
		return false
	}
	t := l.Shape.Elem
	switch op {
	case hlo.OpAdd, hlo.OpOr, hlo.OpXor:
		return zeroConst(init) || t.Kind() == hlo.KindFloat && bytes.Equal(l.Data, hlo.ScalarLiteral(t, math.Copysign(0, -1)).Data)
	case hlo.OpMultiply:
		return t != hlo.PRED && bytes.Equal(l.Data, hlo.ScalarLiteral(t, 1).Data)
	case hlo.OpAnd:
		return (t == hlo.PRED || t.IsInteger()) && !slices.ContainsFunc(l.Data, func(b byte) bool {
			return b != 0xff && !(t == hlo.PRED && b == 1)
		})
	}
	return false
}

// treeScan is cumulative reduction in as a tree scan where it is one of
// more than scanBase elements, else in itself.
func (b *expander) treeScan(in *hlo.Instruction) (*hlo.Instruction, error) {
	f, ok := scanOf(in)
	if !ok {
		return in, nil
	}
	if n := in.Operands[0].Shape.Dims[f.d]; n <= scanBase || in.Shape.NumElements()*n < minScanWork {
		return in, nil
	}
	r := b.scan(in.Operands[0], in.Operands[1], in.Called[0], f)
	if f.exclusive {
		lo, hi := int64(1), int64(0)
		if f.reverse {
			lo, hi = 0, 1
		}
		r = b.padAlong(r, f.d, lo, hi, in.Operands[1])
	}
	return r, nil
}

// scan is the inclusive cumulative reduction of x along f.d by reducer
// c from init.
func (b *expander) scan(x, init *hlo.Instruction, c *hlo.Computation, f scanForm) *hlo.Instruction {
	dims := x.Shape.Dims
	n := dims[f.d]
	if n <= scanBase {
		return b.windowScan(x, init, c, f)
	}
	// Blocks of scanBase along d, the last filled out with init.
	m := (n + scanBase - 1) / scanBase
	xp := x
	if m*scanBase > n {
		lo, hi := int64(0), m*scanBase-n
		if f.reverse {
			lo, hi = hi, lo
		}
		xp = b.padAlong(x, f.d, lo, hi, init)
	}
	tiled := slices.Concat(dims[:f.d], []int64{m, scanBase}, dims[f.d+1:])
	inner := b.windowScan(b.reshape(xp, tiled...), init, c, scanForm{d: f.d + 1, op: f.op, reverse: f.reverse})
	// Each block's total, its scan's last element (first, reversed), and
	// the fold of the blocks before it: the totals' scan shifted by one,
	// init first.
	last := int64(scanBase - 1)
	if f.reverse {
		last = 0
	}
	totalDims := slices.Concat(dims[:f.d], []int64{m}, dims[f.d+1:])
	totals := b.reshape(b.slice(inner, f.d+1, last, last+1), totalDims...)
	before := b.scan(totals, init, c, scanForm{d: f.d, op: f.op, reverse: f.reverse})
	if f.reverse {
		before = b.slice(b.padAlong(before, f.d, 0, 1, init), f.d, 1, m+1)
	} else {
		before = b.slice(b.padAlong(before, f.d, 1, 0, init), f.d, 0, m)
	}
	kept := make([]int64, 0, len(totalDims))
	for d := range totalDims {
		kept = append(kept, int64(d+min(1, max(0, d-f.d))))
	}
	spread := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, tiled...), before)
	spread.A.Dimensions, spread.A.HasDimensions = kept, true
	// The blocks before fold first, the blocks after last (reversed).
	out := b.binary(f.op, spread, inner)
	if f.reverse {
		out = b.binary(f.op, inner, spread)
	}
	out = b.reshape(out, slices.Concat(dims[:f.d], []int64{m * scanBase}, dims[f.d+1:])...)
	if m*scanBase > n {
		lo := int64(0)
		if f.reverse {
			lo = m*scanBase - n
		}
		out = b.slice(out, f.d, lo, lo+n)
	}
	return out
}

// windowScan is the inclusive cumulative reduction of x along f.d as one
// reduce-window.
func (b *expander) windowScan(x, init *hlo.Instruction, c *hlo.Computation, f scanForm) *hlo.Instruction {
	w := &hlo.Window{Dims: make([]hlo.WindowDim, x.Shape.Rank())}
	for d := range w.Dims {
		w.Dims[d] = hlo.WindowDim{Size: 1, Stride: 1, LhsDilate: 1, RhsDilate: 1}
	}
	n := x.Shape.Dims[f.d]
	w.Dims[f.d].Size, w.Dims[f.d].PadLo = n, n-1
	if f.reverse {
		w.Dims[f.d].PadLo, w.Dims[f.d].PadHi = 0, n-1
	}
	r := b.inst(hlo.OpReduceWindow, x.Shape, x, init)
	r.A.Window, r.Called = w, []*hlo.Computation{c}
	return r
}

// padAlong pads dimension d of x with lo values v before and hi after.
func (b *expander) padAlong(x *hlo.Instruction, d int, lo, hi int64, v *hlo.Instruction) *hlo.Instruction {
	dims := slices.Clone(x.Shape.Dims)
	dims[d] += lo + hi
	p := b.inst(hlo.OpPad, hlo.ArrayShape(x.Shape.Elem, dims...), x, v)
	p.A.Padding = make([]hlo.PadDim, len(dims))
	p.A.Padding[d] = hlo.PadDim{Lo: lo, Hi: hi}
	return p
}
