package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// The complex eigenproblem calls (cgeev, zgeev, cgees, zgees) as the
// evaluator computes them (hlo/eval/zgeev.go, whose comment gives the
// steps): the real calls' scaling, balancing and Hessenberg reduction
// (normScaleEach, balance and hessenberg take complex matrices), then
// zlahqr's single-shift QR as one while loop (hqrC) whose iteration
// deflates the active block's last row or makes one sweep (sweepC: the
// real sweep's device loop, sweepStep, for 2 x 2 reflectors), and the
// vectors by triangularVectors, which the real geev runs on its complex
// Schur form. cgehrd and zgehrd are hessenberg's, as the real gehrd.

// geevC is geev of one complex n x n matrix m: (w [n], vl, vr [n, n],
// info []), the eigenvalues in eigenOrderNear's order.
func (b *expander) geevC(in, m *hlo.Instruction, left, right bool) (w, vl, vr, info *hlo.Instruction) {
	t := m.Shape.Elem
	rt := realPart(t)
	n := m.Shape.Dims[0]
	ulp, smlnum := thresholds(rt, n)
	m, bal := b.isolate(in, m)
	m, k := b.normScaleEach(m)
	m, bal.d = b.balance(in, m, bal)
	h, z, _ := b.hessenberg(in, m, false)
	T, Z, w, info := b.hqrC(in, h, z, ulp, smlnum)
	w = b.scaleBy(w, k, -1)
	rel := tieTolerance(ulp, n)
	wr, wi, onehot := b.eigenOrderNear(in, b.realOf(w), b.imagOf(w), rel)
	w = b.inst(hlo.OpComplex, w.Shape, wr, wi)
	vz := b.zeros(m.Shape)
	if !left && !right { // eigenvalues only (jnp.linalg.eigvals)
		return w, vz, vz, info
	}
	vr0, vl0 := b.triangularVectors(T, Z, bal, ulp, smlnum)
	vr0, vl0 = b.columnsBy(b.eigenColumns(vr0, nil, rel), onehot), b.columnsBy(b.eigenColumns(vl0, nil, rel), onehot)
	ok := b.full(b.compare(info, b.constant(hlo.S32, 0), "EQ"), hlo.ArrayShape(hlo.PRED, n, n))
	vr, vl = vz, vz
	if right {
		vr = b.sel(ok, vr0, vz)
	}
	if left {
		vl = b.sel(ok, vl0, vz)
	}
	return w, vl, vr, info
}

// eigenOrderNear is the evaluator's eigenOrderNear: a complex matrix's
// eigenvalues (wr, wi) sorted by (keyRe, keyIm, -wi), stably, keyRe
// the smallest real part within rel of the largest magnitude of each
// (every pair at once, [n, n]), keyIm so the smallest imaginary
// magnitude among those of the same keyRe; so that parts equal in exact
// arithmetic and split by rounding (a real matrix's conjugate pairs)
// sort alike on the device and in the evaluator. It returns the sorted
// (wr, wi) and the one-hot permutation that puts columns in that order.
func (b *expander) eigenOrderNear(in, wr, wi *hlo.Instruction, rel float64) (*hlo.Instruction, *hlo.Instruction, *hlo.Instruction) {
	t := wr.Shape.Elem
	n := wr.Shape.Dims[0]
	msh := hlo.ArrayShape(t, n, n)
	var err error
	defer mustBuild(&err)
	es, ev, sq := b.expr(hlo.ArrayShape(t), &err), b.expr(wr.Shape, &err), b.expr(msh, &err)
	mine := func(x *hlo.Instruction) *hlo.Instruction { return b.along(x, msh, 0) }  // x_i at [i, j]
	other := func(x *hlo.Instruction) *hlo.Instruction { return b.along(x, msh, 1) } // x_j at [i, j]
	inf := es.K(math.Inf(1))
	tol := b.full(es.Mul(es.K(rel), b.reduceDim(ev.Hypot(wr, wi), 0, hlo.OpMaximum, es.K(0))), msh)
	near := func(x *hlo.Instruction) *hlo.Instruction { return sq.Cmp(sq.Abs(sq.Sub(other(x), mine(x))), "LE", tol) }
	least := func(mask, x *hlo.Instruction) *hlo.Instruction {
		return b.reduceDim(sq.Sel(mask, other(x), b.full(inf, msh)), 1, hlo.OpMinimum, inf)
	}
	kre := least(near(wr), wr)
	mag := ev.Abs(wi)
	kim := least(sq.And(sq.Cmp(other(kre), "EQ", mine(kre)), near(mag)), mag)
	_, at, onehot := b.orderBy(in, kre, kim, ev.Neg(wi))
	negZero := es.K(math.Copysign(0, -1)) // x + -0 = x, for every x
	pick := func(x *hlo.Instruction) *hlo.Instruction {
		return b.reduceDim(sq.Sel(at, mine(x), b.full(negZero, msh)), 0, hlo.OpAdd, negZero)
	}
	return pick(wr), pick(wi), onehot
}

// geesC is gees of one complex n x n matrix m: (T, Z, w in T's
// diagonal order, info), Z's columns each turned so that its first
// largest element (to tieTolerance) is real and positive, T = S^H T S
// with them (its diagonal kept as it was), as the evaluator's geesC.
func (b *expander) geesC(in, m *hlo.Instruction) (T, Z, w, info *hlo.Instruction) {
	t := m.Shape.Elem
	sh := m.Shape
	n := sh.Dims[0]
	ulp, smlnum := thresholds(realPart(t), n)
	m, bal := b.isolate(in, m)
	m, k := b.normScaleEach(m)
	h, z, _ := b.hessenberg(in, m, false)
	T, Z, w, info = b.hqrC(in, h, z, ulp, smlnum)
	Z = b.rowsAt(Z, bal.at)
	big := b.firstNear(b.inst(hlo.OpAbs, hlo.ArrayShape(realPart(t), n, n), Z), 0, tieTolerance(ulp, n))
	ph := b.leadPhaseAt(Z, nil, big)
	rows, cols := b.iota(hlo.S32, 0, n, n), b.iota(hlo.S32, 1, n, n)
	turned := b.inst(hlo.OpMultiply, sh, T, b.outer(b.conj(ph), ph))
	T = b.sel(b.compare(rows, cols, "EQ"), T, turned)
	Z = b.inst(hlo.OpMultiply, sh, Z, b.along(ph, sh, 1))
	rt := realPart(t)
	asReal := b.inst(hlo.OpComplex, sh, b.realOf(Z), b.zeros(hlo.ArrayShape(rt, n, n)))
	Z = b.sel(b.compare(rows, b.along(big, rows.Shape, 1), "EQ"), asReal, Z) // real, not within rounding of it
	return b.scaleBy(T, k, -1), Z, b.scaleBy(w, k, -1), info
}

// hqrC is the evaluator's hqrC (zlahqr) on the complex Hessenberg h and
// its transformations z ([n, n]): one while loop whose iteration finds
// the active block's top l (the last negligible subdiagonal element in
// (l, i], by every row's test at once), then deflates row i when l = i,
// else makes one single-shift sweep over rows l..i (sweepC; a deflating
// iteration's sweep runs no steps), on h and z padded by sweepChunk rows
// and columns for the sweep. It returns (T, Z unpadded, w, info).
func (b *expander) hqrC(in, h, z *hlo.Instruction, ulp, smlnum float64) (T, Z, w, info *hlo.Instruction) {
	t := h.Shape.Elem
	rt := realPart(t)
	n := h.Shape.Dims[0]
	np := n + sweepChunk
	pad := func(x *hlo.Instruction) *hlo.Instruction {
		p := b.inst(hlo.OpPad, hlo.ArrayShape(t, np, np), x, b.zeros(hlo.ArrayShape(t)))
		p.A.Padding = []hlo.PadDim{{Hi: sweepChunk}, {Hi: sweepChunk}}
		return p
	}
	h, z = pad(h), pad(z)
	s32 := hlo.ArrayShape(hlo.S32)
	wSh := hlo.ArrayShape(t, n)
	itmax := 30 * max(10, n)
	state := hlo.TupleShape(s32, s32, s32, h.Shape, z.Shape, wSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, n-1), b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), h, z, b.zeros(wSh))
	loop := b.whileLoop(in, in.Name+".hqr", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		var err error
		defer mustBuild(&err)
		ei := cb.expr(s32, &err)
		return ei.And(ei.Cmp(e[0], "GE", ei.K(0)), ei.Cmp(e[2], "LE", ei.K(float64(itmax))))
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		i, l, its, H, Z, w := e[0], e[1], e[2], e[3], e[4], e[5]
		es, ei := lb.expr(hlo.ArrayShape(rt), &err), lb.expr(s32, &err)
		d, s, u := lb.diagonals(H)
		lnew := lb.blockTop(d, s, u, l, i, ulp, smlnum)
		pos := ei.Max(lnew, ei.K(1))
		if n > 1 {
			H = lb.setAt(H, lb.sel(ei.Cmp(lnew, "GT", ei.K(0)), lb.zeros(hlo.ArrayShape(t)), lb.scalarAt(H, pos, ei.Sub(pos, ei.K(1)))), pos, ei.Sub(pos, ei.K(1)))
		}
		defl := ei.Cmp(lnew, "GE", i)
		iSafe := ei.Max(i, ei.K(0))
		wN := lb.sel(lb.full(defl, wSh), lb.setVec(w, lb.scalarAt(H, iSafe, iSafe), iSafe), w)
		its1 := ei.Add(its, ei.K(1))
		if n > 1 {
			ll := ei.Min(ei.Max(lnew, ei.K(0)), ei.K(float64(n-2)))
			ll1 := ei.Add(ll, ei.K(1))
			shift := lb.shiftC(H, ll, ei.Max(i, ei.K(1)), its1)
			v0 := lb.concat(0, lb.reshape(lb.inst(hlo.OpSubtract, hlo.ArrayShape(t), lb.scalarAt(H, ll, ll), shift), 1, 1), lb.reshape(lb.scalarAt(H, ll1, ll), 1, 1))
			sv := es.Add(lb.abs1(lb.scalarAt(v0, lb.constant(hlo.S32, 0), lb.constant(hlo.S32, 0))), lb.abs1(lb.scalarAt(v0, lb.constant(hlo.S32, 1), lb.constant(hlo.S32, 0))))
			v0 = lb.inst(hlo.OpDivide, v0.Shape, v0, lb.full(lb.convert(sv, t), v0.Shape))
			kend := ei.Sel(defl, lnew, i)
			H, Z = lb.sweepC(in, H, Z, v0, lnew, kend, i)
		}
		i1 := ei.Sel(defl, ei.Sub(lnew, ei.K(1)), i)
		l1 := ei.Sel(defl, ei.K(0), lnew)
		itsN := ei.Sel(defl, ei.K(0), its1)
		return []*hlo.Instruction{i1, l1, itsN, H, Z, wN}
	})
	g := func(k int) *hlo.Instruction { return b.element(loop, k) }
	var err error
	defer mustBuild(&err)
	ei := b.expr(s32, &err)
	iEnd := g(0)
	info = ei.Sel(ei.Cmp(iEnd, "GE", ei.K(0)), ei.Add(iEnd, ei.K(1)), ei.K(0))
	unpad := func(x *hlo.Instruction) *hlo.Instruction { return b.slice(b.slice(x, 0, 0, n), 1, 0, n) }
	return unpad(g(3)), unpad(g(4)), g(5), info
}

// shiftC is the evaluator's shiftC for the sweep over rows l..i of the
// complex H, its the sweep's number since the last deflation:
// exceptional at 10 (from the top) and 20 (from the bottom), else
// Wilkinson's, the trailing 2 x 2's eigenvalue nearer h(i, i).
func (b *expander) shiftC(H, l, i, its *hlo.Instruction) *hlo.Instruction {
	t := H.Shape.Elem
	rt := realPart(t)
	cs, rs := hlo.ArrayShape(t), hlo.ArrayShape(rt)
	var err error
	defer mustBuild(&err)
	es, ei := b.expr(rs, &err), b.expr(hlo.ArrayShape(hlo.S32), &err)
	at := func(r, c int64, base *hlo.Instruction) *hlo.Instruction {
		return b.scalarAt(H, ei.Add(base, ei.K(float64(r))), ei.Add(base, ei.K(float64(c))))
	}
	op := func(o hlo.Opcode, x, y *hlo.Instruction) *hlo.Instruction { return b.inst(o, cs, x, y) }
	c := func(x *hlo.Instruction) *hlo.Instruction { return b.convert(x, t) }
	exc := func(sub, diag *hlo.Instruction) *hlo.Instruction {
		return op(hlo.OpAdd, c(es.Mul(es.K(0.75), b.abs1(sub))), diag)
	}
	hII := at(0, 0, i)
	u := op(hlo.OpMultiply, b.inst(hlo.OpSqrt, cs, at(-1, 0, i)), b.inst(hlo.OpSqrt, cs, at(0, -1, i)))
	s := b.abs1(u)
	x := op(hlo.OpMultiply, op(hlo.OpSubtract, at(-1, -1, i), hII), c(es.K(0.5)))
	sx := b.abs1(x)
	sm := es.Max(s, sx)
	sc := c(es.Sel(es.Cmp(sm, "EQ", es.K(0)), es.K(1), sm))
	xs, us := op(hlo.OpDivide, x, sc), op(hlo.OpDivide, u, sc)
	y := op(hlo.OpMultiply, sc, b.inst(hlo.OpSqrt, cs, op(hlo.OpAdd, op(hlo.OpMultiply, xs, xs), op(hlo.OpMultiply, us, us))))
	xn := op(hlo.OpDivide, x, c(es.Sel(es.Cmp(sx, "EQ", es.K(0)), es.K(1), sx)))
	dot := es.Add(es.Mul(b.realOf(xn), b.realOf(y)), es.Mul(b.imagOf(xn), b.imagOf(y)))
	y = b.sel(es.And(es.Cmp(sx, "GT", es.K(0)), es.Cmp(dot, "LT", es.K(0))), b.inst(hlo.OpNegate, cs, y), y)
	wilk := op(hlo.OpSubtract, hII, op(hlo.OpMultiply, u, op(hlo.OpDivide, u, op(hlo.OpAdd, x, y))))
	wilk = b.sel(es.Cmp(s, "EQ", es.K(0)), hII, wilk)
	return b.sel(ei.Cmp(its, "EQ", ei.K(10)), exc(at(1, 0, l), at(0, 0, l)),
		b.sel(ei.Cmp(its, "EQ", ei.K(20)), exc(at(0, -1, i), hII), wilk))
}

// sweepC is the evaluator's single-shift sweep over rows l..i of the
// complex Hessenberg H and its Z, both padded by sweepChunk rows and
// columns of zeros: a device loop of one step of one phase per
// iteration, as the real sweep's (every read from the iteration's H and
// Z before every write; an idle phase reads and writes back the
// padding's corner). For each k from l to kend-1 (none when kend = l):
// phase 0 the 2 x 2 reflector G (householder) of v0 at k = l, else of
// (h(k, k-1), h(k+1, k-1)), which it sets to (beta, 0); phase 1 G^H on
// rows k and k+1, sweepChunk columns at a time from k's chunk on
// (columns before k kept); phase 2 G on columns k and k+1, sweepChunk
// rows at a time down to row min(k+2, i); phase 3 G on Z's columns k
// and k+1. It returns (H, Z).
func (b *expander) sweepC(in, H, Z, v0, l, kend, i *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	t := H.Shape.Elem
	C := int64(sweepChunk)
	s32 := hlo.ArrayShape(hlo.S32)
	one := hlo.ArrayShape(t)
	// (k, kend, l, i, phase, chunk, H, Z, v0, t1, v2)
	state := hlo.TupleShape(s32, s32, s32, s32, s32, s32, H.Shape, Z.Shape, v0.Shape, one, one)
	init := b.inst(hlo.OpTuple, state, l, kend, l, i, b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), H, Z, v0, b.zeros(one), b.zeros(one))
	w := b.whileLoop(in, in.Name+".sweep", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], e[1], "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		k, l, i, phase, chunk, H, Z, v0, t1, v2 := e[0], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10]
		ei := lb.expr(s32, &err)
		x := lb.batched(t, nil)
		zero := lb.constant(hlo.S32, 0)
		first := ei.Cmp(k, "EQ", l)
		lowest := ei.Min(ei.Add(k, ei.K(2)), i)
		sp := lb.sweepStep(ei, x, H, Z, k, phase, chunk, 2)
		in0, in1, in2, in3 := sp.in[0], sp.in[1], sp.in[2], sp.in[3]
		c0, col, rowsBlk, colsBlk, zBlk := sp.c0, sp.col, sp.rows, sp.cols, sp.z

		// Phase 0: the reflector, and column k-1.
		pairP := hlo.ArrayShape(hlo.PRED, 2, 1)
		vv := lb.sel(lb.full(first, pairP), v0, col)
		r2i := lb.iota(hlo.S32, 0, 2, 1)
		below, top := lb.compare(r2i, lb.full(lb.constant(hlo.S32, 1), r2i.Shape), "EQ"), lb.compare(r2i, lb.zeros(r2i.Shape), "EQ")
		v, tau, beta, _ := lb.householder(x, vv, x.slice(vv, []int64{1, 1}, zero, zero), below, top)
		newCol := lb.sel(top, lb.full(lb.reshape(beta), col.Shape), lb.zeros(col.Shape))
		newCol = lb.sel(lb.full(ei.And(in0, ei.Not(first)), pairP), newCol, col)
		t1 = lb.sel(in0, lb.reshape(tau), t1)
		v2 = lb.sel(in0, lb.reshape(x.slice(v, []int64{1, 1}, lb.constant(hlo.S32, 1), zero)), v2)
		t2 := lb.inst(hlo.OpMultiply, one, t1, v2)

		// apply: p0 -= sum, p1 -= sum w where mask holds, sum = a p0 + b p1.
		apply := func(p0, p1, a, bb, w, mask *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
			f := func(s *hlo.Instruction) *hlo.Instruction { return lb.full(s, p0.Shape) }
			op := func(o hlo.Opcode, p, q *hlo.Instruction) *hlo.Instruction { return lb.inst(o, p0.Shape, p, q) }
			sum := op(hlo.OpAdd, op(hlo.OpMultiply, f(a), p0), op(hlo.OpMultiply, f(bb), p1))
			return lb.sel(mask, op(hlo.OpSubtract, p0, sum), p0), lb.sel(mask, op(hlo.OpSubtract, p1, op(hlo.OpMultiply, sum, f(w))), p1)
		}
		idx := lb.iota(hlo.S32, 0, C)
		pos := lb.inst(hlo.OpAdd, idx.Shape, idx, lb.full(c0, idx.Shape)) // the block's columns (rows)
		and := func(p, q *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpAnd, p.Shape, p, q) }
		vecOf := func(m *hlo.Instruction, d int, j int64) *hlo.Instruction {
			return lb.reshape(lb.slice(m, d, j, j+1), C)
		}
		// Phase 1: G^H on rows k, k+1 from column k on.
		m1 := and(lb.compare(pos, lb.full(k, pos.Shape), "GE"), lb.full(in1, pos.Shape))
		q0, q1 := apply(vecOf(rowsBlk, 0, 0), vecOf(rowsBlk, 0, 1), lb.conj(t1), lb.conj(t2), v2, m1)
		newRows := lb.concat(0, lb.reshape(q0, 1, C), lb.reshape(q1, 1, C))
		// Phase 2: G on columns k, k+1 down to min(k+2, i).
		m2 := and(lb.compare(pos, lb.full(lowest, pos.Shape), "LE"), lb.full(in2, pos.Shape))
		p0, p1 := apply(vecOf(colsBlk, 1, 0), vecOf(colsBlk, 1, 1), t1, t2, lb.conj(v2), m2)
		newCols := lb.concat(1, lb.reshape(p0, C, 1), lb.reshape(p1, C, 1))
		// Phase 3: G on Z's columns k, k+1.
		z0, z1 := apply(vecOf(zBlk, 1, 0), vecOf(zBlk, 1, 1), t1, t2, lb.conj(v2), lb.full(in3, pos.Shape))
		newZ := lb.concat(1, lb.reshape(z0, C, 1), lb.reshape(z1, C, 1))

		H, Z = sp.write(H, Z, newCol, newRows, newCols, newZ)
		nextK, nextPhase, nextChunk := sp.next(lowest)
		return []*hlo.Instruction{nextK, e[1], l, i, nextPhase, nextChunk, H, Z, v0, t1, v2}
	})
	return b.element(w, 6), b.element(w, 7)
}
