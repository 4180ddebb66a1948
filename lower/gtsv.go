package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// gtsv is LAPACK's gtsv (hlo.CallGtsv) over a batch of tridiagonal
// systems, as the evaluator computes it (hlo/eval's gtsv): a while loop
// of Gaussian elimination with partial pivoting, a step per row, then
// one of back substitution, a row per step, every system of the batch
// at once. A step reads and writes the diagonals and b's rows at its
// position by dynamic slices, its two branches (rows kept or swapped)
// as selects; a system whose pivot was zero keeps what it had (info
// says where), as LAPACK returns there. Results: (dl, d, du, x, info).
func (b *expander) gtsv(in *hlo.Instruction) []*hlo.Instruction {
	dl0, d0, du0, b0 := in.Operands[0], in.Operands[1], in.Operands[2], in.Operands[3]
	vsh, bsh, infoSh := d0.Shape, b0.Shape, in.Shape.Tuple[4]
	r := vsh.Rank()
	n := vsh.Dims[r-1]
	batch := vsh.Dims[:r-1]
	if n == 0 {
		return []*hlo.Instruction{dl0, d0, du0, b0, b.zeros(infoSh)}
	}
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), vsh, vsh, vsh, bsh, infoSh)
	sys := newTridiagonal(vsh, bsh)
	one, row := sys.one, sys.row
	flag := hlo.ArrayShape(hlo.PRED, batch...)
	at, set, rowAt, setRow, spread, plus := sys.at, sys.set, sys.rowAt, sys.setRow, sys.spread, addS32
	var err error
	defer mustBuild(&err)

	// Elimination, c = 0 .. n-2 (LAPACK's i = c+1): D(i) = d[c], D(i+1) =
	// d[c+1], DL(i) = dl[c+1] (JAX's dl[0] is unused), DU(i) = du[c],
	// DU(i+1) = du[c+1], B(i) = b[c], B(i+1) = b[c+1].
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), dl0, d0, du0, b0, b.zeros(infoSh))
	elim := b.whileLoop(in, in.Name+".gtsv", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, n-1), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		c, dl, d, du, bm, info := e[0], e[1], e[2], e[3], e[4], e[5]
		c1 := plus(lb, c, 1)
		f := lb.expr(one, &err)
		fr := lb.expr(row, &err)
		dc, dc1, dlc, duc, duc1 := at(lb, d, c), at(lb, d, c1), at(lb, dl, c1), at(lb, du, c), at(lb, du, c1)
		bc, bc1 := rowAt(lb, bm, c), rowAt(lb, bm, c1)
		last := lb.full(lb.compare(c, lb.constant(hlo.S32, n-2), "EQ"), pred(one))
		keep := lb.compare(lb.abs1(dc), lb.abs1(dlc), "GE") // rows kept; NaN swaps
		zeroPiv := lb.inst(hlo.OpAnd, keep.Shape, keep, lb.compare(dc, lb.zeros(one), "EQ"))
		// Rows kept: fact = DL(i)/D(i), D(i+1) -= fact DU(i), B(i+1) -=
		// fact B(i), DL(i) = 0 (not at the last step).
		kFact := f.Div(dlc, dc)
		kD1 := f.Sub(dc1, f.Mul(kFact, duc))
		kB1 := fr.Sub(bc1, fr.Mul(spread(lb, kFact, row), bc))
		kDL := f.Sel(last, dlc, lb.zeros(one))
		// Rows swapped: fact = D(i)/DL(i), D(i) = DL(i), D(i+1) = DU(i) -
		// fact D(i+1), DL(i) = DU(i+1) and DU(i+1) = -fact DL(i) (not at
		// the last step), DU(i) = D(i+1), B(i) = B(i+1), B(i+1) = B(i) -
		// fact B(i+1).
		sFact := f.Div(dc, dlc)
		sD1 := f.Sub(duc, f.Mul(sFact, dc1))
		sDL := f.Sel(last, dlc, duc1)
		sDU1 := f.Sel(last, duc1, f.Mul(f.Neg(sFact), duc1))
		sB1 := fr.Sub(bc, fr.Mul(spread(lb, sFact, row), bc1))
		// Only systems still running (info 0) past a nonzero pivot move.
		running := lb.compare(info, lb.zeros(infoSh), "EQ")
		goOn := lb.inst(hlo.OpAnd, flag, running, lb.reshape(lb.inst(hlo.OpNot, zeroPiv.Shape, zeroPiv), batch...))
		move, moveRow := spread(lb, goOn, pred(one)), spread(lb, goOn, pred(row))
		keepRow := spread(lb, keep, pred(row))
		pick := func(kv, sv, old *hlo.Instruction) *hlo.Instruction { return f.Sel(move, f.Sel(keep, kv, sv), old) }
		pickRow := func(kv, sv, old *hlo.Instruction) *hlo.Instruction {
			return fr.Sel(moveRow, fr.Sel(keepRow, kv, sv), old)
		}
		d = set(lb, d, pick(dc, dlc, dc), c)
		d = set(lb, d, pick(kD1, sD1, dc1), c1)
		dl = set(lb, dl, pick(kDL, sDL, dlc), c1)
		du = set(lb, du, pick(duc, dc1, duc), c)
		du = set(lb, du, pick(duc1, sDU1, duc1), c1)
		bm = setRow(lb, bm, pickRow(bc, bc1, bc), c)
		bm = setRow(lb, bm, pickRow(kB1, sB1, bc1), c1)
		stop := lb.inst(hlo.OpAnd, flag, running, lb.reshape(zeroPiv, batch...))
		info = lb.sel(stop, lb.full(c1, infoSh), info)
		return []*hlo.Instruction{c1, dl, d, du, bm, info}
	})
	dl, d, du := b.element(elim, 1), b.element(elim, 2), b.element(elim, 3)
	bm, info := b.element(elim, 4), b.element(elim, 5)
	// A zero last pivot: info n.
	nIdx := b.constant(hlo.S32, n-1)
	dn := at(b, d, nIdx)
	zn := b.inst(hlo.OpAnd, flag, b.compare(info, b.zeros(infoSh), "EQ"), b.reshape(b.compare(dn, b.zeros(one), "EQ"), batch...))
	info = b.sel(zn, b.full(b.constant(hlo.S32, n), infoSh), info)

	// Back substitution, c = n-1 .. 0: B(i) = (B(i) - DU(i) B(i+1) -
	// DL(i) B(i+2)) / D(i), the terms past the last row left out.
	// (The diagonals ride in the loop's state: a body reads nothing from
	// outside it.)
	state2 := hlo.TupleShape(hlo.ArrayShape(hlo.S32), bsh, vsh, vsh, vsh)
	init2 := b.inst(hlo.OpTuple, state2, b.constant(hlo.S32, 0), bm, dl, d, du)
	solved := b.countedLoop(in, in.Name+".gtsv.back", state2, n, init2, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, x, dl, d, du := e[0], e[1], e[2], e[3], e[4]
		c := lb.inst(hlo.OpSubtract, j.Shape, lb.constant(hlo.S32, n-1), j)
		v := sys.backRow(lb, x, c, n, at(lb, du, c), at(lb, dl, plus(lb, c, 1)), &err)
		v = lb.expr(row, &err).Div(v, spread(lb, at(lb, d, c), row))
		return []*hlo.Instruction{plus(lb, j, 1), setRow(lb, x, v, c), dl, d, du}
	})
	ok := spread(b, b.compare(info, b.zeros(infoSh), "EQ"), pred(bsh))
	return []*hlo.Instruction{dl, d, du, b.sel(ok, solved, bm), info}
}

// tridiagonal addresses a batch of tridiagonal systems, position i of
// every system at once: diagonals [batch..., n] (at, set: [batch..., 1]
// elements) and right-hand sides [batch..., n, k] (rowAt, setRow: [batch...,
// 1, k] rows), by dynamic slices.
type tridiagonal struct {
	t        hlo.ElementType
	batch    []int64
	one, row hlo.Shape
}

// newTridiagonal addresses systems of diagonals of shape vsh and
// right-hand sides of shape bsh.
func newTridiagonal(vsh, bsh hlo.Shape) tridiagonal {
	r := vsh.Rank()
	batch := vsh.Dims[:r-1]
	return tridiagonal{
		t: vsh.Elem, batch: batch,
		one: hlo.ArrayShape(vsh.Elem, append(slices.Clone(batch), 1)...),
		row: hlo.ArrayShape(vsh.Elem, append(slices.Clone(batch), 1, bsh.Dims[r])...),
	}
}

// at is element i of each system's vector v, [batch..., 1].
func (s tridiagonal) at(lb *expander, v, i *hlo.Instruction) *hlo.Instruction {
	d := lb.inst(hlo.OpDynamicSlice, s.one, append([]*hlo.Instruction{v}, lb.batched(s.t, s.batch).starts(i)...)...)
	d.A.DynSliceSizes = s.one.Dims
	return d
}

// set writes x ([batch..., 1]) at element i of each system's vector v.
func (s tridiagonal) set(lb *expander, v, x, i *hlo.Instruction) *hlo.Instruction {
	return lb.inst(hlo.OpDynamicUpdateSlice, v.Shape, append([]*hlo.Instruction{v, x}, lb.batched(s.t, s.batch).starts(i)...)...)
}

// rowAt and setRow read and write row i of each system's right-hand
// sides m: the batched matrix helpers, at column 0.
func (s tridiagonal) rowAt(lb *expander, m, i *hlo.Instruction) *hlo.Instruction {
	return lb.batched(s.t, s.batch).slice(m, s.row.Dims, i, lb.constant(hlo.S32, 0))
}

func (s tridiagonal) setRow(lb *expander, m, x, i *hlo.Instruction) *hlo.Instruction {
	return lb.batched(s.t, s.batch).update(m, x, i, lb.constant(hlo.S32, 0))
}

// spread widens a [batch..., 1] value (or a [batch...] flag) over sh.
func (s tridiagonal) spread(lb *expander, v *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	return lb.batched(s.t, s.batch).spread(v, sh)
}

// backRow is row c of each system's x less first times row c+1 and
// second times row c+2 (first and second [batch..., 1]), the terms past
// the last of the n rows left out: back substitution's right-hand side.
func (s tridiagonal) backRow(lb *expander, x, c *hlo.Instruction, n int64, first, second *hlo.Instruction, err *error) *hlo.Instruction {
	fr := lb.expr(s.row, err)
	v := s.rowAt(lb, x, c)
	for i, f := range []*hlo.Instruction{first, second} {
		next := addS32(lb, c, int64(i+1))
		has := lb.full(lb.compare(next, lb.constant(hlo.S32, n), "LT"), pred(s.row))
		v = fr.Sel(has, fr.Sub(v, fr.Mul(s.spread(lb, f, s.row), s.rowAt(lb, x, next))), v)
	}
	return v
}

// addS32 is the s32 i plus c.
func addS32(lb *expander, i *hlo.Instruction, c int64) *hlo.Instruction {
	return lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, c))
}

// pred is sh's dimensions as a predicate array's shape.
func pred(sh hlo.Shape) hlo.Shape { return hlo.ArrayShape(hlo.PRED, sh.Dims...) }
