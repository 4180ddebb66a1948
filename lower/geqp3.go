package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// geqp3 is LAPACK's geqp3 (hlo.CallGeqp3) over a batch of m x n
// matrices, as the evaluator computes it (hlo/eval's qp3), every matrix
// at once, one column per iteration of a while loop: step i swaps a
// pivot column to i, then (i < min(m, n)) reflects it (reflectColumn).
// While i is below the matrix's count of fixed columns (jpvt != 0 on
// entry) the pivot is the first fixed column at or after i: LAPACK
// swaps them to the front in the same order before it factors, and a
// column swap commutes with the reflectors of the columns before it.
// After them the pivot is the first column of largest remaining norm
// (rows i on, computed afresh at the first such step), and the others'
// norms are downdated by laqp2's rule (recomputed where the downdate
// loses more than sqrt(eps) of them). Matrices with fewer rows than
// fixed columns go on swapping past min(m, n). Results: (a, jpvt
// 1-based, tau).
func (b *expander) geqp3(in *hlo.Instruction) []*hlo.Instruction {
	a, jp0 := in.Operands[0], in.Operands[1]
	sh, jpSh, tauSh := a.Shape, jp0.Shape, in.Shape.Tuple[2]
	t := sh.Elem
	rt, _ := t.ComplexPart()
	r := sh.Rank()
	m, n := sh.Dims[r-2], sh.Dims[r-1]
	k := min(m, n)
	batch := sh.Dims[:r-2]
	if n == 0 {
		return []*hlo.Instruction{a, jp0, b.zeros(tauSh)}
	}
	vnSh := hlo.ArrayShape(rt, jpSh.Dims...)
	flagSh := hlo.ArrayShape(hlo.S32, jpSh.Dims...)
	nbSh := hlo.ArrayShape(hlo.S32, batch...)
	s32 := hlo.ArrayShape(hlo.S32)
	tol3z := math.Sqrt(epsilon(rt))

	fixed := b.convert(b.compare(jp0, b.zeros(jpSh), "NE"), hlo.S32) // 1 where fixed, moving with the swaps
	nfxd := b.reduceDim(fixed, r-2, hlo.OpAdd, b.constant(hlo.S32, 0))
	most := nfxd // the most fixed columns of any matrix
	if len(batch) > 0 {
		most = b.reduceDims(nfxd, iotaDims(r-2), hlo.OpMaximum, b.constant(hlo.S32, 0))
	}
	steps := b.inst(hlo.OpMaximum, s32, b.constant(hlo.S32, k), most)
	jpvt := b.inst(hlo.OpAdd, jpSh, b.iota(hlo.S32, r-2, jpSh.Dims...), b.full(b.constant(hlo.S32, 1), jpSh))
	state := hlo.TupleShape(s32, sh, jpSh, tauSh, vnSh, vnSh, flagSh, nbSh, s32)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), a, jpvt, b.zeros(tauSh), b.zeros(vnSh), b.zeros(vnSh), fixed, nfxd, steps)
	w := b.whileLoop(in, in.Name+".geqp3", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], e[8], "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		i, am, jpvt, taus, vn1, vn2, fixed, nfxd := e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]
		x := lb.batched(t, batch)
		perVec := func(p *hlo.Instruction) *hlo.Instruction { // a [batch...] value over [batch..., n]
			bc := lb.inst(hlo.OpBroadcast, hlo.ArrayShape(p.Shape.Elem, jpSh.Dims...), p)
			bc.A.Dimensions, bc.A.HasDimensions = x.dims(), true
			return bc
		}
		cols := lb.iota(hlo.S32, r-2, jpSh.Dims...)
		atOrAfter := lb.compare(cols, lb.full(i, flagSh), "GE")
		fixedStep := lb.compare(lb.full(i, nbSh), nfxd, "LT")     // [batch...]
		fresh := perVec(lb.compare(lb.full(i, nbSh), nfxd, "EQ")) // the first pivoted step: norms afresh
		active := lb.compare(i, lb.constant(hlo.S32, k), "LT")
		// Norms afresh of rows i on.
		now := lb.columnNorms(am, i, "GE")
		vn1, vn2 = lb.sel(fresh, now, vn1), lb.sel(fresh, now, vn2)
		// The pivot: the first fixed column at or after i, or the first
		// of largest norm (none where NaNs: i itself).
		minusOne := lb.full(lb.convert(lb.constant(hlo.S32, -1), rt), vnSh)
		fixedCol := lb.firstOfMax(lb.sel(atOrAfter, lb.convert(fixed, rt), minusOne), r-2)
		normCol := lb.firstOfMax(lb.sel(atOrAfter, vn1, minusOne), r-2)
		pvt := lb.sel(fixedStep, fixedCol, lb.sel(lb.full(active, nbSh), normCol, lb.full(i, nbSh)))
		pvt = lb.sel(lb.compare(pvt, lb.full(lb.constant(hlo.S32, n), nbSh), "EQ"), lb.full(i, nbSh), pvt)
		// Columns i and pvt swapped, in a and in the vectors.
		isP, isI := lb.compare(cols, perVec(pvt), "EQ"), lb.compare(cols, lb.full(i, flagSh), "EQ")
		swapVec := func(v *hlo.Instruction) *hlo.Instruction { return lb.swapAlong(v, r-2, isI, isP) }
		jpvt, vn1, vn2, fixed = swapVec(jpvt), swapVec(vn1), swapVec(vn2), swapVec(fixed)
		colsM := lb.iota(hlo.S32, r-1, sh.Dims...)
		pM := lb.inst(hlo.OpBroadcast, hlo.ArrayShape(hlo.S32, sh.Dims...), pvt)
		pM.A.Dimensions, pM.A.HasDimensions = x.dims(), true
		isPM, isIM := lb.compare(colsM, pM, "EQ"), lb.compare(colsM, lb.full(i, hlo.ArrayShape(hlo.S32, sh.Dims...)), "EQ")
		swapped := lb.swapAlong(am, r-1, isIM, isPM)
		if k == 0 { // no rows: only the fixed columns move
			i1 := lb.inst(hlo.OpAdd, s32, i, lb.constant(hlo.S32, 1))
			return []*hlo.Instruction{i1, swapped, jpvt, taus, vn1, vn2, fixed, nfxd, e[8]}
		}
		// The reflector of column i, while i < min(m, n).
		ic := lb.inst(hlo.OpMinimum, s32, i, lb.constant(hlo.S32, k-1)) // in range where inactive
		reflected, tau := lb.reflectColumn(x, swapped, ic)
		next := lb.sel(lb.full(active, pred(sh)), reflected, swapped)
		tauAt := lb.inst(hlo.OpDynamicUpdateSlice, tauSh, append([]*hlo.Instruction{taus, lb.reshape(tau, x.sizes(1)...)}, x.starts(ic)...)...)
		taus = lb.sel(lb.full(active, pred(tauSh)), tauAt, taus)
		// The norms of the columns after i, past the fixed ones: downdated
		// by row i's element, or recomputed over the rows after i.
		rowI := lb.inst(hlo.OpAbs, hlo.ArrayShape(rt, x.sizes(1, n)...), x.slice(next, x.sizes(1, n), ic, x.zero))
		rowI = lb.reshape(rowI, jpSh.Dims...)
		var err error
		defer mustBuild(&err)
		f := lb.expr(vnSh, &err)
		ratio := f.Div(rowI, vn1)
		temp := f.Max(f.Sub(f.K(1), f.Mul(ratio, ratio)), f.K(0))
		q := f.Div(vn1, vn2)
		recompute := f.Cmp(f.Mul(temp, f.Mul(q, q)), "LE", f.K(tol3z))
		after := lb.columnNorms(next, ic, "GT")
		move := lb.inst(hlo.OpAnd, pred(vnSh), lb.compare(cols, lb.full(i, flagSh), "GT"), lb.compare(vn1, lb.zeros(vnSh), "NE"))
		move = lb.inst(hlo.OpAnd, pred(vnSh), move, perVec(lb.inst(hlo.OpAnd, pred(nbSh), lb.inst(hlo.OpNot, pred(nbSh), fixedStep), lb.full(active, pred(nbSh)))))
		nvn1 := f.Sel(move, f.Sel(recompute, after, f.Mul(vn1, f.Sqrt(temp))), vn1)
		nvn2 := f.Sel(lb.inst(hlo.OpAnd, pred(vnSh), move, recompute), after, vn2)
		i1 := lb.inst(hlo.OpAdd, s32, i, lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{i1, next, jpvt, taus, nvn1, nvn2, fixed, nfxd, e[8]}
	})
	return []*hlo.Instruction{b.element(w, 1), b.element(w, 2), b.element(w, 3)}
}

// columnNorms is the Euclidean norm of each column of the batch of
// matrices am over its rows whose index compares to row as dir (rows
// "GE" i, or "GT" i), scaled as nrm2 scales it (scaledNorm): [batch...,
// n], real.
func (lb *expander) columnNorms(am, row *hlo.Instruction, dir string) *hlo.Instruction {
	sh := am.Shape
	rt, _ := sh.Elem.ComplexPart()
	r := sh.Rank()
	mag := lb.inst(hlo.OpAbs, hlo.ArrayShape(rt, sh.Dims...), am)
	rows := lb.iota(hlo.S32, r-2, sh.Dims...)
	mag = lb.sel(lb.compare(rows, lb.full(row, rows.Shape), dir), mag, lb.zeros(mag.Shape))
	return lb.scaledNorm(mag, lb.reduceDim(mag, r-2, hlo.OpMaximum, lb.constant(rt, 0)), r-2)
}
