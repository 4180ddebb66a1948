package lower

import "github.com/vkjit/vkjit/hlo"

// gtsvPerturbed is jaxlib's tridiagonal_solve_perturbed_ffi
// (hlo.CallGtsvPerturbed) over a batch of tridiagonal systems, in the
// steps the evaluator takes (hlo/eval's gtsvPerturbed, jaxlib's lagtf
// and lagts): a while loop of elimination with partial pivoting by
// scaled pivots, a row per step, that keeps U's three diagonals (u0, u1,
// u2) and L^-1 P b in x, then one of back substitution, a row per step,
// whose pivot a nested while loop perturbs (perturbPivot). Every system
// of the batch runs each step, its three branches (the subdiagonal
// zero, rows kept, rows swapped) as selects. u0 and u1 start as d and
// du and x as b: a step reads the next row's d, du and b before it
// writes them.
func (b *expander) gtsvPerturbed(in *hlo.Instruction) *hlo.Instruction {
	dl0, d0, du0, b0 := in.Operands[0], in.Operands[1], in.Operands[2], in.Operands[3]
	vsh, bsh := d0.Shape, b0.Shape
	t := vsh.Elem
	rt, _ := t.ComplexPart()
	r := vsh.Rank()
	n, k := vsh.Dims[r-1], bsh.Dims[r]
	if n == 0 || k == 0 {
		return b0
	}
	sys := newTridiagonal(vsh, bsh)
	one, row := sys.one, sys.row
	oneR := hlo.ArrayShape(rt, one.Dims...)
	at, set, rowAt, setRow, spread, plus := sys.at, sys.set, sys.rowAt, sys.setRow, sys.spread, addS32
	mag := (*expander).magnitude
	and := func(lb *expander, x, y *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpAnd, x.Shape, x, y) }
	not := func(lb *expander, x *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpNot, x.Shape, x) }
	// numeric_limits' epsilon (twice LAPACK's unit roundoff) and the
	// safe minimum (lamch's: the smallest normal), as jaxlib's.
	eps, safemin := 2*epsilon(rt), smallestNormal(rt)
	var err error
	defer mustBuild(&err)

	if n == 1 { // x = b / d, its pivot perturbed by eps |d|
		p := b.reshape(d0, one.Dims...)
		g := b.expr(oneR, &err)
		perturb := g.Mul(g.Broadcast(g.K(eps)), mag(b, p))
		v := b.reshape(b0, row.Dims...)
		p, v = b.perturbPivot(in, p, v, perturb, safemin)
		return b.reshape(b.expr(row, &err).Div(v, spread(b, p, row)), bsh.Dims...)
	}

	// Elimination, c = 0 .. n-2: state (c, u0, u1, u2, x, scale1,
	// max |U|, dl).
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), vsh, vsh, vsh, bsh, oneR, oneR, vsh)
	f0 := b.expr(oneR, &err)
	d00, du00 := b.reshape(b.slice(d0, r-1, 0, 1), one.Dims...), b.reshape(b.slice(du0, r-1, 0, 1), one.Dims...)
	maxU := f0.Max(mag(b, d00), mag(b, du00))
	scale1 := f0.Add(mag(b, d00), mag(b, du00))
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), d0, du0, b.zeros(vsh), b0, scale1, maxU, dl0)
	elim := b.whileLoop(in, in.Name+".lagtf", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, n-1), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		c, u0, u1, u2, x, scale1, maxU, dl := e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]
		c1 := plus(lb, c, 1)
		f, fr, g := lb.expr(one, &err), lb.expr(row, &err), lb.expr(oneR, &err)
		dlc1, dc1, duc1, u0c, u1c := at(lb, dl, c1), at(lb, u0, c1), at(lb, u1, c1), at(lb, u0, c), at(lb, u1, c)
		xc, xc1 := rowAt(lb, x, c), rowAt(lb, x, c1)
		notLast := lb.full(lb.compare(c, lb.constant(hlo.S32, n-2), "LT"), pred(oneR))
		zr := lb.zeros(oneR)
		scale2 := g.Add(g.Add(mag(lb, dlc1), mag(lb, dc1)), g.Sel(notLast, mag(lb, duc1), zr))
		zeroSub := lb.compare(dlc1, lb.zeros(one), "EQ")
		piv1 := g.Sel(lb.compare(u0c, lb.zeros(one), "EQ"), zr, g.Div(mag(lb, u0c), scale1))
		piv2 := g.Div(mag(lb, dlc1), scale2)
		keep := lb.compare(piv2, piv1, "LE") // rows kept (NaN swaps)
		// Rows kept: factor = dl / u0[c], u0[c+1] = d - factor u1[c],
		// x[c+1] = b[c+1] - factor x[c].
		kF := f.Div(dlc1, u0c)
		kU0c1 := f.Sub(dc1, f.Mul(kF, u1c))
		kXc1 := fr.Sub(xc1, fr.Mul(spread(lb, kF, row), xc))
		// Rows swapped: factor = u0[c] / dl; u0[c] = dl, u0[c+1] = u1[c] -
		// factor d, u1[c] = d, and (not at the last step) u2[c] = du,
		// u1[c+1] = -factor du; x[c+1] = x[c] - factor b[c+1], x[c] =
		// b[c+1].
		sF := f.Div(u0c, dlc1)
		sU0c1 := f.Sub(u1c, f.Mul(sF, dc1))
		sU2c := f.Sel(notLast, duc1, lb.zeros(one))
		sU1c1 := f.Sel(notLast, f.Neg(f.Mul(sF, duc1)), duc1)
		sXc1 := fr.Sub(xc, fr.Mul(spread(lb, sF, row), xc1))
		swap := and(lb, not(lb, zeroSub), not(lb, keep))
		kept := and(lb, not(lb, zeroSub), keep)
		swapRow := spread(lb, swap, pred(row))
		nu0c := f.Sel(swap, dlc1, u0c)
		nu1c := f.Sel(swap, dc1, u1c)
		nu2c := f.Sel(swap, sU2c, lb.zeros(one))
		nu0c1 := f.Sel(swap, sU0c1, f.Sel(kept, kU0c1, dc1))
		nu1c1 := f.Sel(swap, sU1c1, duc1)
		nxc := fr.Sel(swapRow, xc1, xc)
		nxc1 := fr.Sel(swapRow, sXc1, fr.Sel(spread(lb, kept, pred(row)), kXc1, xc1))
		scale1 = g.Sel(swap, g.Add(mag(lb, nu0c1), mag(lb, nu1c1)), scale2)
		grown := g.Max(g.Max(g.Max(maxU, mag(lb, nu0c)), mag(lb, nu1c)), mag(lb, nu2c))
		maxU = g.Sel(notLast, grown, maxU)
		u0 = set(lb, set(lb, u0, nu0c, c), nu0c1, c1)
		u1 = set(lb, set(lb, u1, nu1c, c), nu1c1, c1)
		u2 = set(lb, u2, nu2c, c)
		x = setRow(lb, setRow(lb, x, nxc, c), nxc1, c1)
		return []*hlo.Instruction{c1, u0, u1, u2, x, scale1, maxU, dl}
	})
	u0, u1, u2, x, maxU := b.element(elim, 1), b.element(elim, 2), b.element(elim, 3), b.element(elim, 4), b.element(elim, 6)
	g := b.expr(oneR, &err)
	maxU = g.Max(maxU, mag(b, at(b, u0, b.constant(hlo.S32, n-1))))
	perturb := g.Mul(g.Broadcast(g.K(eps)), maxU)

	// Back substitution, c = n-1 .. 0: x[c] = (x[c] - u1[c] x[c+1] -
	// u2[c] x[c+2]) * (1 / p), p = u0[c] perturbed, the terms past the
	// last row left out.
	state2 := hlo.TupleShape(hlo.ArrayShape(hlo.S32), bsh, vsh, vsh, vsh, oneR)
	init2 := b.inst(hlo.OpTuple, state2, b.constant(hlo.S32, 0), x, u0, u1, u2, perturb)
	return b.countedLoop(in, in.Name+".lagts", state2, n, init2, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, x, u0, u1, u2, perturb := e[0], e[1], e[2], e[3], e[4], e[5]
		c := lb.inst(hlo.OpSubtract, j.Shape, lb.constant(hlo.S32, n-1), j)
		v := sys.backRow(lb, x, c, n, at(lb, u1, c), at(lb, u2, c), &err)
		p, v := lb.perturbPivot(in, at(lb, u0, c), v, perturb, safemin)
		inv := lb.expr(one, &err).Div(lb.full(lb.one(t), one), p)
		v = lb.expr(row, &err).Mul(v, spread(lb, inv, row))
		return []*hlo.Instruction{plus(lb, j, 1), setRow(lb, x, v, c), u0, u1, u2, perturb}
	})
}

// perturbPivot is jaxlib's MaybePerturbPivot (LAPACK's lagts) for every
// system of a batch at once: p [batch..., 1] a pivot, v [batch..., 1, k]
// its row, perturb [batch..., 1] (real) eps times U's largest element. A
// pivot below 1 in magnitude grows by perturb (its sign p's real part's,
// at least the safe minimum), doubled each time, while the row's
// largest element over it could overflow; one below the safe minimum
// that is not negligible beside the row is scaled with the row by
// 1/safemin instead, once. A while loop runs until no system of the
// batch still grows its pivot (at most some hundred doublings: from the
// safe minimum to 1).
func (b *expander) perturbPivot(in *hlo.Instruction, p, v, perturb *hlo.Instruction, safemin float64) (*hlo.Instruction, *hlo.Instruction) {
	t := p.Shape.Elem
	rt, isComplex := t.ComplexPart()
	one, row := p.Shape, v.Shape
	oneR := hlo.ArrayShape(rt, one.Dims...)
	batch := one.Dims[:one.Rank()-1]
	var err error
	defer mustBuild(&err)
	g := b.expr(oneR, &err)
	mag := (*expander).magnitude
	// The row's largest magnitude, NaN where one is.
	maxFactor := b.reshape(b.reduceDim(mag(b, v), row.Rank()-1, hlo.OpMaximum, b.constant(rt, 0)), one.Dims...)
	step := g.CopySign(g.Max(g.Abs(perturb), g.Broadcast(g.K(safemin))), b.realOf(p))
	active := b.compare(mag(b, p), g.Broadcast(g.K(1)), "LT")
	state := hlo.TupleShape(one, row, oneR, hlo.ArrayShape(hlo.PRED, one.Dims...), oneR)
	init := b.inst(hlo.OpTuple, state, p, v, step, active, maxFactor)
	w := b.whileLoop(in, in.Name+".perturb", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.reduceDim(cb.reshape(e[3], e[3].Shape.NumElements()), 0, hlo.OpOr, cb.constant(hlo.PRED, 0))
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		p, v, step, active, maxFactor := e[0], e[1], e[2], e[3], e[4]
		g := lb.expr(oneR, &err)
		f, fr := lb.expr(one, &err), lb.expr(row, &err)
		and := func(x, y *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpAnd, x.Shape, x, y) }
		or := func(x, y *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpOr, x.Shape, x, y) }
		not := func(x *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpNot, x.Shape, x) }
		abs := mag(lb, p)
		tiny := lb.compare(abs, g.Broadcast(g.K(safemin)), "LT")
		negligible := or(lb.compare(abs, lb.zeros(oneR), "EQ"), lb.compare(g.Mul(maxFactor, g.Broadcast(g.K(safemin))), abs, "GT"))
		overflows := lb.compare(maxFactor, g.Mul(abs, g.Broadcast(g.K(1/safemin))), "GT")
		grow := and(active, or(and(tiny, negligible), and(not(tiny), overflows)))
		scale := and(active, and(tiny, not(negligible)))
		add := step
		big := g.Broadcast(g.K(1 / safemin))
		if isComplex {
			add = lb.inst(hlo.OpComplex, one, step, lb.zeros(oneR))
			big = lb.inst(hlo.OpComplex, one, big, lb.zeros(oneR))
		}
		np := f.Sel(grow, f.Add(p, add), f.Sel(scale, f.Mul(p, big), p))
		nv := fr.Sel(lb.batched(t, batch).spread(scale, hlo.ArrayShape(hlo.PRED, row.Dims...)), fr.Mul(v, lb.batched(t, batch).spread(big, row)), v)
		nstep := g.Sel(grow, g.Add(step, step), step)
		nactive := and(grow, lb.compare(mag(lb, np), g.Broadcast(g.K(1)), "LT"))
		return []*hlo.Instruction{np, nv, nstep, nactive, maxFactor}
	})
	return b.element(w, 0), b.element(w, 1)
}

// magnitude is |x|, of x's real type (the modulus of a complex x).
func (b *expander) magnitude(x *hlo.Instruction) *hlo.Instruction {
	rt, _ := x.Shape.Elem.ComplexPart()
	return b.inst(hlo.OpAbs, hlo.ArrayShape(rt, x.Shape.Dims...), x)
}
