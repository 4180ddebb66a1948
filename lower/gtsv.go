package lower

import "github.com/vkjit/vkjit/hlo"

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
	t := vsh.Elem
	r := vsh.Rank()
	n, k := vsh.Dims[r-1], bsh.Dims[r]
	batch := vsh.Dims[:r-1]
	if n == 0 {
		return []*hlo.Instruction{dl0, d0, du0, b0, b.zeros(infoSh)}
	}
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), vsh, vsh, vsh, bsh, infoSh)
	one := hlo.ArrayShape(t, append(append([]int64{}, batch...), 1)...)
	row := hlo.ArrayShape(t, append(append([]int64{}, batch...), 1, k)...)
	flag := hlo.ArrayShape(hlo.PRED, batch...)
	zero := func(lb *expander) *hlo.Instruction { return lb.constant(hlo.S32, 0) }
	// at is element i of each system's vector v, [batch..., 1].
	at := func(lb *expander, v, i *hlo.Instruction) *hlo.Instruction {
		s := lb.inst(hlo.OpDynamicSlice, one, append([]*hlo.Instruction{v}, lb.batched(t, batch).starts(i)...)...)
		s.A.DynSliceSizes = one.Dims
		return s
	}
	set := func(lb *expander, v, x, i *hlo.Instruction) *hlo.Instruction {
		return lb.inst(hlo.OpDynamicUpdateSlice, v.Shape, append([]*hlo.Instruction{v, x}, lb.batched(t, batch).starts(i)...)...)
	}
	// rowAt and setRow read and write row i of each system's b: the
	// batched matrix helpers, at column 0.
	rowAt := func(lb *expander, m, i *hlo.Instruction) *hlo.Instruction {
		return lb.batched(t, batch).slice(m, row.Dims, i, zero(lb))
	}
	setRow := func(lb *expander, m, x, i *hlo.Instruction) *hlo.Instruction {
		return lb.batched(t, batch).update(m, x, i, zero(lb))
	}
	// spread widens a [batch..., 1] value (or a [batch...] flag) over sh.
	spread := func(lb *expander, v *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
		return lb.batched(t, batch).spread(v, sh)
	}
	plus := func(lb *expander, i *hlo.Instruction, c int64) *hlo.Instruction {
		return lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, c))
	}
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
		c1, c2 := plus(lb, c, 1), plus(lb, c, 2)
		fr := lb.expr(row, &err)
		rowFlag := func(p *hlo.Instruction) *hlo.Instruction { return lb.full(p, pred(row)) }
		v := rowAt(lb, x, c)
		has1 := rowFlag(lb.compare(c1, lb.constant(hlo.S32, n), "LT"))
		has2 := rowFlag(lb.compare(c2, lb.constant(hlo.S32, n), "LT"))
		v = fr.Sel(has1, fr.Sub(v, fr.Mul(spread(lb, at(lb, du, c), row), rowAt(lb, x, c1))), v)
		v = fr.Sel(has2, fr.Sub(v, fr.Mul(spread(lb, at(lb, dl, c1), row), rowAt(lb, x, c2))), v)
		v = fr.Div(v, spread(lb, at(lb, d, c), row))
		return []*hlo.Instruction{plus(lb, j, 1), setRow(lb, x, v, c), dl, d, du}
	})
	ok := spread(b, b.compare(info, b.zeros(infoSh), "EQ"), pred(bsh))
	return []*hlo.Instruction{dl, d, du, b.sel(ok, solved, bm), info}
}

// pred is sh's dimensions as a predicate array's shape.
func pred(sh hlo.Shape) hlo.Shape { return hlo.ArrayShape(hlo.PRED, sh.Dims...) }
