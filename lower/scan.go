package lower

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
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
// A reducer of one op whose identity init is (add, or and xor from
// zero, multiply from one, and from all ones; max and min from any init,
// being idempotent: identityInit) lets the blocks fold init in again.
// Any other reducer of scalar elementwise ops, or init, is scanned with
// a flag per fold that says whether it holds an element
// (flaggedScanner), so that init is folded in once, first, as each
// window folds it: a cumulative logsumexp (-inf and jnp.logaddexp), a
// sum from 1. XLA asks a reducer to be associative; one op known not to
// be (subtract, divide) keeps its window. A float sum is summed in
// another order, block by block, as XLA's GPU backend sums it: each
// output is a fold of a few folds of scanBase elements, whose rounding
// error grows with scanBase times the tree's levels, not n.

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

// scanForm is a reduce-window that is a cumulative reduction along
// dimension d of its operand: reverse folds from the end; exclusive
// results have one element more, the init value first (last, reversed).
type scanForm struct {
	d                  int
	reverse, exclusive bool
}

// scanOf reports whether in is a cumulative reduction of one operand
// that a tree scan may reassociate: its reducer one associative op, or
// scalar elementwise ops that XLA asks to be associative (a cumulative
// logsumexp's); one op known not to be (subtract, divide) keeps its
// window's order.
func scanOf(in *hlo.Instruction) (scanForm, bool) {
	f := scanForm{d: -1}
	if len(in.Operands) != 2 || in.A.Window == nil || !in.Shape.IsArray() || len(in.Called) != 1 ||
		!in.Called[0].IsScalarElementwise() || in.Called[0].Root.Op == hlo.OpTuple {
		return f, false
	}
	if op := in.Called[0].ReducerOp(); op != hlo.OpParameter && !associative[op] {
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

// associative are the binary ops a reducer of one op may reassociate.
var associative = map[hlo.Opcode]bool{
	hlo.OpAdd: true, hlo.OpMultiply: true, hlo.OpMaximum: true, hlo.OpMinimum: true,
	hlo.OpAnd: true, hlo.OpOr: true, hlo.OpXor: true,
}

// regroups reports whether a fold by op from init may be cut into
// folds of parts, each from init, whose results are folded by op: op
// associative, and init folded again leaving a fold as it was.
func regroups(op hlo.Opcode, init *hlo.Instruction) bool {
	return associative[op] && identityInit(op, init)
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
	x, init, c := in.Operands[0], in.Operands[1], in.Called[0]
	if n := x.Shape.Dims[f.d]; n <= scanBase || in.Shape.NumElements()*n < minScanWork {
		return in, nil
	}
	var r *hlo.Instruction
	if op := c.ReducerOp(); identityInit(op, init) {
		r = b.scan([]*hlo.Instruction{x}, b.plainScanner(init, c, op), f)[0]
	} else {
		// Every element's fold folds init first, once: init, then the
		// elements' fold, which the scan makes without init.
		r = b.scan([]*hlo.Instruction{x, b.full(b.predConstant(true), hlo.ArrayShape(hlo.PRED, x.Shape.Dims...))}, b.flaggedScanner(init, c), f)[0]
		r = b.mapped(c, b.full(init, x.Shape), r)
	}
	if f.exclusive {
		lo, hi := int64(1), int64(0)
		if f.reverse {
			lo, hi = 0, 1
		}
		r = b.padAlong(r, f.d, lo, hi, init)
	}
	return r, nil
}

// A scanner is what a tree scan folds: one value an element per array,
// each array's init value, the reducer of a window over them all, and
// how the folds of two runs of elements combine, elementwise.
type scanner struct {
	inits   []*hlo.Instruction
	reducer *hlo.Computation
	// combine is the fold of first's elements followed by last's.
	combine func(first, last []*hlo.Instruction) []*hlo.Instruction
}

// plainScanner folds by reducer c, one op whose identity (or an
// idempotent op's value) init is: init may be folded in again anywhere.
func (b *expander) plainScanner(init *hlo.Instruction, c *hlo.Computation, op hlo.Opcode) scanner {
	return scanner{[]*hlo.Instruction{init}, c, func(first, last []*hlo.Instruction) []*hlo.Instruction {
		return []*hlo.Instruction{b.binary(op, first[0], last[0])}
	}}
}

// flaggedScanner folds by any reducer c without folding init: each fold
// carries a pred, whether it holds an element, init (false) where it
// holds none, so that a window's padding and a block's are no element;
// a fold with none leaves the other as it is. XLA asks a reducer to be
// associative, not init to be its identity (a cumulative logsumexp's
// -inf is; a sum from 1 is not).
func (b *expander) flaggedScanner(init *hlo.Instruction, c *hlo.Computation) scanner {
	t := init.Shape.Elem
	fc := b.scalarComputation("/flagged", t, hlo.PRED, t, hlo.PRED)
	inner := &expander{from: b.from, n: b.n}
	folds := inner.flaggedFold(c, fc.Params[:2], fc.Params[2:])
	fc.Instructions = append(fc.Instructions, inner.out...)
	fc.Root = inner.tuple(folds...)
	fc.Instructions = append(fc.Instructions, fc.Root)
	return scanner{[]*hlo.Instruction{init, b.predConstant(false)}, fc, func(first, last []*hlo.Instruction) []*hlo.Instruction {
		return b.flaggedFold(c, first, last)
	}}
}

// flaggedFold is the fold by c of flagged folds first and last (value,
// holds an element), elementwise: c of both where both hold one, else
// the one that does.
func (b *expander) flaggedFold(c *hlo.Computation, first, last []*hlo.Instruction) []*hlo.Instruction {
	both := b.mapped(c, first[0], last[0])
	v := b.sel(first[1], b.sel(last[1], both, first[0]), last[0])
	return []*hlo.Instruction{v, b.binary(hlo.OpOr, first[1], last[1])}
}

// mapped applies scalar computation c to xs (of one shape) elementwise.
func (b *expander) mapped(c *hlo.Computation, xs ...*hlo.Instruction) *hlo.Instruction {
	*b.n++
	return hlo.MapOver(c, xs, xs[0].Shape.Dims, fmt.Sprintf("%s.map%d/", b.from.Name, *b.n), b.from.Pos, func(in *hlo.Instruction) { b.out = append(b.out, in) })
}

// predConstant is a pred scalar.
func (b *expander) predConstant(v bool) *hlo.Instruction {
	if v {
		return b.constant(hlo.PRED, 1)
	}
	return b.constant(hlo.PRED, 0)
}

// scan is the inclusive cumulative fold of xs along f.d by sc.
func (b *expander) scan(xs []*hlo.Instruction, sc scanner, f scanForm) []*hlo.Instruction {
	dims := xs[0].Shape.Dims
	n := dims[f.d]
	if n <= scanBase {
		return b.windowScan(xs, sc, f)
	}
	// Blocks of scanBase along d, the last filled out with init.
	m := (n + scanBase - 1) / scanBase
	tiled := slices.Concat(dims[:f.d], []int64{m, scanBase}, dims[f.d+1:])
	blocks := make([]*hlo.Instruction, len(xs))
	for i, x := range xs {
		if m*scanBase > n {
			lo, hi := int64(0), m*scanBase-n
			if f.reverse {
				lo, hi = hi, lo
			}
			x = b.padAlong(x, f.d, lo, hi, sc.inits[i])
		}
		blocks[i] = b.reshape(x, tiled...)
	}
	inner := b.windowScan(blocks, sc, scanForm{d: f.d + 1, reverse: f.reverse})
	// Each block's total, its scan's last element (first, reversed), and
	// the fold of the blocks before it: the totals' scan shifted by one,
	// init first.
	last := int64(scanBase - 1)
	if f.reverse {
		last = 0
	}
	totalDims := slices.Concat(dims[:f.d], []int64{m}, dims[f.d+1:])
	totals := make([]*hlo.Instruction, len(xs))
	for i, x := range inner {
		totals[i] = b.reshape(b.slice(x, f.d+1, last, last+1), totalDims...)
	}
	kept := make([]int64, 0, len(totalDims))
	for d := range totalDims {
		kept = append(kept, int64(d+min(1, max(0, d-f.d))))
	}
	spread := b.scan(totals, sc, f)
	for i, before := range spread {
		if f.reverse {
			before = b.slice(b.padAlong(before, f.d, 0, 1, sc.inits[i]), f.d, 1, m+1)
		} else {
			before = b.slice(b.padAlong(before, f.d, 1, 0, sc.inits[i]), f.d, 0, m)
		}
		spread[i] = b.inst(hlo.OpBroadcast, hlo.ArrayShape(before.Shape.Elem, tiled...), before)
		spread[i].A.Dimensions, spread[i].A.HasDimensions = kept, true
	}
	// The blocks before fold first, the blocks after last (reversed).
	out := sc.combine(spread, inner)
	if f.reverse {
		out = sc.combine(inner, spread)
	}
	for i, x := range out {
		x = b.reshape(x, slices.Concat(dims[:f.d], []int64{m * scanBase}, dims[f.d+1:])...)
		if m*scanBase > n {
			lo := int64(0)
			if f.reverse {
				lo = m*scanBase - n
			}
			x = b.slice(x, f.d, lo, lo+n)
		}
		out[i] = x
	}
	return out
}

// windowScan is the inclusive cumulative fold of xs along f.d by sc as
// one reduce-window.
func (b *expander) windowScan(xs []*hlo.Instruction, sc scanner, f scanForm) []*hlo.Instruction {
	w := &hlo.Window{Dims: make([]hlo.WindowDim, xs[0].Shape.Rank())}
	for d := range w.Dims {
		w.Dims[d] = hlo.WindowDim{Size: 1, Stride: 1, LhsDilate: 1, RhsDilate: 1}
	}
	n := xs[0].Shape.Dims[f.d]
	w.Dims[f.d].Size, w.Dims[f.d].PadLo = n, n-1
	if f.reverse {
		w.Dims[f.d].PadLo, w.Dims[f.d].PadHi = 0, n-1
	}
	r := b.inst(hlo.OpReduceWindow, variadicShape(xs), slices.Concat(xs, sc.inits)...)
	r.A.Window, r.Called = w, []*hlo.Computation{sc.reducer}
	return b.leaves(r, len(xs))
}
