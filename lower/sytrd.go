package lower

import "github.com/vkjit/vkjit/hlo"

// sytrd is LAPACK's sytrd (hetrd) over a batch of symmetric (Hermitian)
// matrices (hlo.CallSytrd), as the evaluator computes it (hlo/eval's
// sytd2Lower), every matrix of the batch at once: a while loop over the
// columns i < n-1 on the whole Hermitian matrix w that the read
// triangle stands for (its diagonal real), where column i's reflector
// (householder: v = 1 at row i+1, its tail below) gives p = tau w v on
// the rows after i, p -= (tau/2) (p^H v) v, and w -= v p^H + p v^H;
// column i then holds beta at row i+1 and v's tail below it. The rows
// and columns a step updates are the ones after i, so column i, and
// the reflectors stored in it, stay as written. The upper form is the
// lower form of the matrix with its rows and columns reversed, and its
// results reversed back (as the evaluator's sytrd says). Results: (a,
// d, e, tau, info 0).
func (b *expander) sytrd(in *hlo.Instruction, lower bool) []*hlo.Instruction {
	a := in.Operands[0]
	sh := a.Shape
	t := sh.Elem
	rt, isComplex := t.ComplexPart()
	r := sh.Rank()
	n := sh.Dims[r-1]
	batch := sh.Dims[:r-2]
	dSh, eSh, tauSh, infoSh := in.Shape.Tuple[1], in.Shape.Tuple[2], in.Shape.Tuple[3], in.Shape.Tuple[4]
	if n == 0 {
		return []*hlo.Instruction{a, b.zeros(dSh), b.zeros(eSh), b.zeros(tauSh), b.zeros(infoSh)}
	}
	if !lower {
		a = b.reverse(a, int64(r-2), int64(r-1))
	}
	rows, cols := b.iota(hlo.S32, r-2, sh.Dims...), b.iota(hlo.S32, r-1, sh.Dims...)
	diag := b.compare(rows, cols, "EQ")
	// realDiag makes a Hermitian matrix's diagonal real (in lb's
	// computation: a loop body reads nothing from outside it).
	realDiag := func(lb *expander, m *hlo.Instruction) *hlo.Instruction {
		if !isComplex {
			return m
		}
		d := lb.compare(lb.iota(hlo.S32, r-2, sh.Dims...), lb.iota(hlo.S32, r-1, sh.Dims...), "EQ")
		return lb.sel(d, lb.convert(lb.realOf(m), t), m)
	}
	w := realDiag(b, b.sel(b.compare(rows, cols, "GE"), a, b.conjT(a)))
	taus := b.zeros(tauSh)
	if n > 1 {
		state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), sh, tauSh)
		init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), w, taus)
		loop := b.whileLoop(in, in.Name+".sytrd", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
			return cb.compare(e[0], cb.constant(hlo.S32, n-1), "LT")
		}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
			i, w, taus := e[0], e[1], e[2]
			x := lb.batched(t, batch)
			i1 := lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, 1))
			colSh := hlo.ArrayShape(t, x.sizes(n, 1)...)
			one := hlo.ArrayShape(t, x.sizes(1, 1)...)
			col := x.slice(w, colSh.Dims, x.zero, i)
			ri := lb.iota(hlo.S32, r-2, colSh.Dims...)
			below := lb.compare(ri, lb.full(i1, ri.Shape), "GT")
			at := lb.compare(ri, lb.full(i1, ri.Shape), "EQ")
			v, tau, beta, skip := lb.householder(x, col, x.slice(w, one.Dims, i1, i), below, at)
			// p = tau w v on the rows after i (w v's rows up to i hold
			// column i's and earlier products, which are not the block's).
			p := x.dot(colSh, w, v, int64(r-1), int64(r-2))
			p = lb.sel(lb.compare(ri, lb.full(i, ri.Shape), "GT"), lb.inst(hlo.OpMultiply, colSh, p, x.spread(tau, colSh)), lb.zeros(colSh))
			// p -= (tau/2) (p^H v) v.
			pv := x.dot(one, lb.conj(p), v, int64(r-2), int64(r-2))
			half := lb.full(lb.realScalar(t, -0.5), one)
			k := lb.inst(hlo.OpMultiply, one, half, lb.inst(hlo.OpMultiply, one, tau, pv))
			p = lb.inst(hlo.OpAdd, colSh, p, lb.inst(hlo.OpMultiply, colSh, v, x.spread(k, colSh)))
			// w -= v p^H + p v^H.
			vp := x.dot(sh, v, lb.swapLast(lb.conj(p)), int64(r-1), int64(r-2))
			pv2 := x.dot(sh, p, lb.swapLast(lb.conj(v)), int64(r-1), int64(r-2))
			upd := realDiag(lb, lb.inst(hlo.OpSubtract, sh, lb.inst(hlo.OpSubtract, sh, w, vp), pv2))
			stored := lb.sel(at, x.spread(beta, colSh), lb.sel(below, v, col))
			stored = lb.sel(x.spread(skip, pred(colSh)), col, stored)
			next := x.update(upd, stored, x.zero, i)
			tauAt := lb.inst(hlo.OpDynamicUpdateSlice, tauSh, append([]*hlo.Instruction{taus, lb.reshape(tau, x.sizes(1)...)}, x.starts(i)...)...)
			return []*hlo.Instruction{i1, next, tauAt}
		})
		w, taus = b.element(loop, 1), b.element(loop, 2)
	}
	// d and e: w's diagonal and subdiagonal, real.
	pick := func(p *hlo.Instruction) *hlo.Instruction {
		return b.realOf(b.reduceDim(b.sel(p, w, b.zeros(sh)), r-1, hlo.OpAdd, b.constant(t, 0)))
	}
	d := pick(diag)
	sub := b.compare(rows, b.inst(hlo.OpAdd, cols.Shape, cols, b.full(b.constant(hlo.S32, 1), cols.Shape)), "EQ")
	e := b.slice(pick(sub), r-2, 1, n)
	// The read triangle's diagonals and reflectors; the other as it was.
	out := b.sel(b.compare(rows, cols, "GE"), w, a)
	if !lower {
		out, d, e, taus = b.reverse(out, int64(r-2), int64(r-1)), b.reverse(d, int64(r-2)), b.reverse(e, int64(r-2)), b.reverse(taus, int64(r-2))
	}
	return []*hlo.Instruction{out, b.convert(d, rt), b.convert(e, rt), taus, b.zeros(infoSh)}
}
