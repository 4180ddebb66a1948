package lower

import (
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// geev is LAPACK's geev of a batch of real square matrices, as the
// evaluator computes it (hlo/eval/geev.go, whose comment gives the
// steps): one matrix at a time (perMatrix); scaled into range
// (normScaleEach) and balanced (balance: loops of row and column pairs); the
// Hessenberg reduction a loop of a reflector per column, each applied
// by matrix-vector dots; dlahqr as one while loop whose iteration
// deflates the active block's trailing 1 x 1 or 2 x 2 block or makes a
// double-shift sweep (a device loop of 3 x 3 reflectors applied a block
// at a time; the sweep of a deflating iteration runs no steps); then the
// vectors by a row loop of back substitution and one of forward
// substitution in the complex Schur form. The matrices are padded by
// sweepChunk rows and columns of zeros, so that a sweep's last reflector
// (of two rows) reads and writes a 3-row block like the others, its
// third row untouched, and so that a sweep step's idle phases have a
// corner of zeros to read and write. It returns (wr, wi, vl, vr, info).
func (b *expander) geev(in *hlo.Instruction, c *hlo.CustomCall) []*hlo.Instruction {
	if in.Operands[0].Shape.Elem.IsComplex() { // cgeev, zgeev: (w, vl, vr, info)
		return b.perMatrix(in, in.Shape.Tuple[:4], func(lb *expander, m *hlo.Instruction) []*hlo.Instruction {
			w, vl, vr, info := lb.geevC(in, m, c.Left, c.Right)
			return []*hlo.Instruction{w, vl, vr, info}
		})
	}
	return b.perMatrix(in, in.Shape.Tuple[:5], func(lb *expander, m *hlo.Instruction) []*hlo.Instruction {
		wr, wi, vl, vr, info := lb.geev1(in, m, c.Left, c.Right)
		return []*hlo.Instruction{wr, wi, vl, vr, info}
	})
}

// gees is LAPACK's gees (no sorting) of a batch of real square matrices,
// as the evaluator computes it: geev's Hessenberg reduction and dlahqr,
// whose H and Z are the real Schur form T and the Schur vectors (a = Z T
// Z^T), the eigenvalues in T's diagonal order. It returns (T, Z, zeros
// when mode is 'N'; wr, wi, sdim (0), info).
func (b *expander) gees(in *hlo.Instruction, c *hlo.CustomCall) []*hlo.Instruction {
	if in.Operands[0].Shape.Elem.IsComplex() { // cgees, zgees: (T, Z, w, sdim, info)
		return b.perMatrix(in, in.Shape.Tuple[:5], func(lb *expander, m *hlo.Instruction) []*hlo.Instruction {
			T, Z, w, info := lb.geesC(in, m)
			if !c.Right {
				Z = lb.zeros(Z.Shape)
			}
			return []*hlo.Instruction{T, Z, w, lb.constant(hlo.S32, 0), info}
		})
	}
	return b.perMatrix(in, in.Shape.Tuple[:6], func(lb *expander, m *hlo.Instruction) []*hlo.Instruction {
		m, bal := lb.isolate(in, m)
		m, k := lb.normScaleEach(m)
		T, Z, wr, wi, info := lb.schur(in, m)
		Z = lb.rowsAt(Z, bal.at)
		ulp, _ := thresholds(T.Shape.Elem, T.Shape.Dims[0])
		T, Z = lb.schurCanonical(T, Z, wi, tieTolerance(ulp, T.Shape.Dims[0]))
		T, wr, wi = lb.scaleBy(T, k, -1), lb.scaleBy(wr, k, -1), lb.scaleBy(wi, k, -1)
		if !c.Right {
			Z = lb.zeros(Z.Shape)
		}
		return []*hlo.Instruction{T, Z, wr, wi, lb.constant(hlo.S32, 0), info}
	})
}

// gehrd is LAPACK's gehrd (low 1, high n) of a batch of real square
// matrices, as the evaluator computes it: geev's Hessenberg reduction
// with each reflector's tail stored below the subdiagonal. It returns
// (h and the reflectors, tau [..., n-1], info (0)).
func (b *expander) gehrd(in *hlo.Instruction) []*hlo.Instruction {
	return b.perMatrix(in, in.Shape.Tuple[:3], func(lb *expander, m *hlo.Instruction) []*hlo.Instruction {
		h, _, taus := lb.hessenberg(in, m, true)
		return []*hlo.Instruction{h, taus, lb.constant(hlo.S32, 0)}
	})
}

// perMatrix computes fn of each n x n matrix of in's operand, one after
// another in a while loop (each takes its own number of QR sweeps and
// deflates at its own rows), fn's results stacked into outs' shapes
// (the batch's dimensions, then fn's).
func (b *expander) perMatrix(in *hlo.Instruction, outs []hlo.Shape, fn func(lb *expander, m *hlo.Instruction) []*hlo.Instruction) []*hlo.Instruction {
	a := in.Operands[0]
	t := a.Shape.Elem
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	nb := int64(1)
	for _, d := range a.Shape.Dims[:r-2] {
		nb *= d
	}
	var res []*hlo.Instruction
	if nb == 0 || n == 0 {
		for _, o := range outs {
			res = append(res, b.zeros(o))
		}
		return res
	}
	// Each result as [nb, its own dimensions...].
	flat := make([]hlo.Shape, len(outs))
	for i, o := range outs {
		flat[i] = hlo.ArrayShape(o.Elem, append([]int64{nb}, o.Dims[r-2:]...)...)
	}
	a3 := b.reshape(a, nb, n, n)
	s32 := hlo.ArrayShape(hlo.S32)
	state := hlo.TupleShape(append([]hlo.Shape{s32, a3.Shape}, flat...)...)
	inits := []*hlo.Instruction{b.constant(hlo.S32, 0), a3}
	for _, f := range flat {
		inits = append(inits, b.zeros(f))
	}
	init := b.inst(hlo.OpTuple, state, inits...)
	w := b.whileLoop(in, in.Name+".matrices", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, nb), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		bi, zero := e[0], lb.constant(hlo.S32, 0)
		ds := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(t, 1, n, n), e[1], bi, zero, zero)
		ds.A.DynSliceSizes = []int64{1, n, n}
		next := []*hlo.Instruction{lb.inst(hlo.OpAdd, s32, bi, lb.constant(hlo.S32, 1)), e[1]}
		for i, x := range fn(lb, lb.reshape(ds, n, n)) {
			starts := []*hlo.Instruction{e[2+i], lb.reshape(x, append([]int64{1}, x.Shape.Dims...)...), bi}
			for range x.Shape.Dims {
				starts = append(starts, zero)
			}
			next = append(next, lb.inst(hlo.OpDynamicUpdateSlice, e[2+i].Shape, starts...))
		}
		return next
	})
	for i, o := range outs {
		res = append(res, b.reshape(b.element(w, 2+i), o.Dims...))
	}
	return res
}

// geev1 is geev of one n x n matrix m: (wr, wi [n], vl, vr [n, n]
// complex, info []).
func (b *expander) geev1(in, m *hlo.Instruction, left, right bool) (wr, wi, vl, vr, info *hlo.Instruction) {
	t := m.Shape.Elem
	n := m.Shape.Dims[0]
	ulp, smlnum := thresholds(t, n)
	m, bal := b.isolate(in, m)
	m, k := b.normScaleEach(m)
	m, bal.d = b.balance(in, m, bal)
	T, Z, wr, wi, info := b.schur(in, m)
	wr, wi = b.scaleBy(wr, k, -1), b.scaleBy(wi, k, -1)
	ct, _ := t.ComplexOf()
	vz := b.zeros(hlo.ArrayShape(ct, n, n))
	if !left && !right { // eigenvalues only (jnp.linalg.eigvals)
		wr, wi, _ = b.eigenOrder(in, wr, wi)
		return wr, wi, vz, vz, info
	}
	vr0, vl0 := b.schurVectors(T, Z, wi, bal, n, ulp, smlnum)
	wr, wi, onehot := b.eigenOrder(in, wr, wi)
	vr0, vl0 = b.columnsBy(vr0, onehot), b.columnsBy(vl0, onehot)
	var err error
	defer mustBuild(&err)
	ei := b.expr(hlo.ArrayShape(hlo.S32), &err)
	ok := b.full(ei.Cmp(info, "EQ", ei.K(0)), hlo.ArrayShape(hlo.PRED, n, n))
	vr, vl = vz, vz
	if right {
		vr = b.sel(ok, vr0, vz)
	}
	if left {
		vl = b.sel(ok, vl0, vz)
	}
	return wr, wi, vl, vr, info
}

// schur is the real Schur form of the n x n m: the Hessenberg reduction,
// then hqr on h and z padded by sweepChunk rows and columns. It returns
// (T, Z, wr, wi, info), T and Z unpadded.
func (b *expander) schur(in, m *hlo.Instruction) (T, Z, wr, wi, info *hlo.Instruction) {
	t := m.Shape.Elem
	n := m.Shape.Dims[0]
	ulp, smlnum := thresholds(t, n)
	h, z, _ := b.hessenberg(in, m, false)
	np := n + sweepChunk
	pad := func(x *hlo.Instruction) *hlo.Instruction {
		p := b.inst(hlo.OpPad, hlo.ArrayShape(t, np, np), x, b.constant(t, 0))
		p.A.Padding = []hlo.PadDim{{Hi: sweepChunk}, {Hi: sweepChunk}}
		return p
	}
	return b.hqr(in, pad(h), pad(z), n, ulp, smlnum)
}

// sweepChunk is how many columns (rows) of the rows (columns) a sweep's
// reflector touches one step of its loop reads and writes (a 3 x 8
// block; a device loop holds values of at most 64 elements, and every
// step computes each phase's block: 16 ran 64x64 geev in 858-898 ms
// against 8's 683-740, its loop kernel 37,502 words against 21,162);
// h and z are padded by as many rows and columns of zeros, where a step
// writes back the zeros it read for the phases it is not in.
const sweepChunk = 8

// larfg is LAPACK's larfg on scalars of e, from alpha and the norm of
// x: beta = -sign(alpha) |(alpha, x)| (a zero of either sign taken as
// +0; alpha where x is zero), tau (0 where x is zero), the scale of x
// (1 / (alpha - beta)) and whether x is zero.
func larfg(e *formula.Builder, alpha, xnorm *hlo.Instruction) (beta, tau, scale, zero *hlo.Instruction) {
	hyp := e.Hypot(alpha, xnorm)
	b0 := e.Sel(e.Cmp(alpha, "LT", e.K(0)), hyp, e.Neg(hyp))
	zero = e.Cmp(xnorm, "EQ", e.K(0))
	return e.Sel(zero, alpha, b0), e.Sel(zero, e.K(0), e.Div(e.Sub(b0, alpha), b0)), e.Div(e.K(1), e.Sub(alpha, b0)), zero
}

// thresholds are dlahqr's ulp and smlnum for order n matrices of real
// type t, as the evaluator's (hlo/eval/geev.go).
func thresholds(t hlo.ElementType, n int64) (ulp, smlnum float64) {
	ulp = 2 * epsilon(t)
	return ulp, smallestNormal(t) * (float64(n) / ulp)
}

// epsilon and smallestNormal are the real type t's unit roundoff and
// smallest normal number (lapack.go's epsBits and smallestNormalBits).
func epsilon(t hlo.ElementType) float64 { return floatOfBits(t, epsBits[t]) }

func smallestNormal(t hlo.ElementType) float64 { return floatOfBits(t, smallestNormalBits[t]) }

// floatOfBits is the f32 or f64 whose bits are bits.
func floatOfBits(t hlo.ElementType, bits uint64) float64 {
	if t == hlo.F64 {
		return math.Float64frombits(bits)
	}
	return float64(math.Float32frombits(uint32(bits)))
}

// contract is the product of p and q over p's dimension lc and q's
// first (p and q vectors or matrices, no batch): m v (lc 1), v^T m (a
// vector p, lc 0), p q (lc 1), p^T q (lc 0).
func (b *expander) contract(p, q *hlo.Instruction, lc int64) *hlo.Instruction {
	var dims []int64
	for i, d := range p.Shape.Dims {
		if int64(i) != lc {
			dims = append(dims, d)
		}
	}
	dims = append(dims, q.Shape.Dims[1:]...)
	return b.batched(p.Shape.Elem, nil).dot(hlo.ArrayShape(p.Shape.Elem, dims...), p, q, lc, 0)
}

// outer is the matrix x y^T.
func (b *expander) outer(x, y *hlo.Instruction) *hlo.Instruction {
	sh := hlo.ArrayShape(x.Shape.Elem, x.Shape.Dims[0], y.Shape.Dims[0])
	return b.inst(hlo.OpMultiply, sh, b.along(x, sh, 0), b.along(y, sh, 1))
}

// along broadcasts vector x over matrix shape sh as its dimension d.
func (b *expander) along(x *hlo.Instruction, sh hlo.Shape, d int64) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, sh.Dims...), x)
	bc.A.Dimensions, bc.A.HasDimensions = []int64{d}, true
	return bc
}

// scalarAt is element (i, j) of matrix m, and setAt writes scalar x
// there.
func (b *expander) scalarAt(m, i, j *hlo.Instruction) *hlo.Instruction {
	x := b.batched(m.Shape.Elem, nil)
	return b.reshape(x.slice(m, []int64{1, 1}, i, j))
}

func (b *expander) setAt(m, x, i, j *hlo.Instruction) *hlo.Instruction {
	return b.batched(m.Shape.Elem, nil).update(m, b.reshape(x, 1, 1), i, j)
}

// hessenberg is the evaluator's hessenbergC (gehd2, zgehd2): a loop over
// the columns i < n-1 (n-2 for a real matrix, whose last reflector is
// the identity; a complex one's is the phase that makes h(n-1, n-2)
// real), each reflector (householder) applied to h from the right,
// then as its adjoint from the left to the columns after i, column i
// then set (below its subdiagonal zeros, or with reflectors the
// reflector's tail, as LAPACK's gehrd stores it), and to z from the
// right. It returns (h, z, the taus [n-1]).
func (b *expander) hessenberg(in, m *hlo.Instruction, reflectors bool) (h, z, taus *hlo.Instruction) {
	t := m.Shape.Elem
	n := m.Shape.Dims[0]
	sh := m.Shape
	eye := b.identity(sh)
	tauSh := hlo.ArrayShape(t, max(n-1, 0))
	steps := n - 1
	if !t.IsComplex() {
		steps = n - 2
	}
	if steps <= 0 {
		return m, eye, b.zeros(tauSh)
	}
	s32 := hlo.ArrayShape(hlo.S32)
	state := hlo.TupleShape(s32, sh, sh, tauSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), m, eye, b.zeros(tauSh))
	w := b.whileLoop(in, in.Name+".hessenberg", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, steps), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		i, h, z := e[0], e[1], e[2]
		x := lb.batched(t, nil)
		zero := lb.constant(hlo.S32, 0)
		i1 := lb.inst(hlo.OpAdd, s32, i, lb.constant(hlo.S32, 1))
		colSh := hlo.ArrayShape(t, n, 1)
		col := x.slice(h, []int64{n, 1}, zero, i)
		rows := lb.iota(hlo.S32, 0, n, 1)
		below := lb.compare(rows, lb.full(i1, rows.Shape), "GT") // rows i+2 on
		at := lb.compare(rows, lb.full(i1, rows.Shape), "EQ")
		v, tau, beta, skip := lb.householder(x, col, x.slice(h, []int64{1, 1}, i1, i), below, at)
		vv, tau := lb.reshape(v, n), lb.reshape(tau)
		// h -= tau (h v) v^H; then h -= conj(tau) v (v^H h) right of
		// column i (gehrd keeps reflectors left of it).
		h = lb.inst(hlo.OpSubtract, sh, h, lb.inst(hlo.OpMultiply, sh, lb.full(tau, sh), lb.outer(lb.contract(h, vv, 1), lb.conj(vv))))
		cols := lb.iota(hlo.S32, 0, n)
		vh := lb.sel(lb.compare(cols, lb.full(i, cols.Shape), "GT"), lb.contract(lb.conj(vv), h, 0), lb.zeros(hlo.ArrayShape(t, n)))
		h = lb.inst(hlo.OpSubtract, sh, h, lb.inst(hlo.OpMultiply, sh, lb.full(lb.conj(tau), sh), lb.outer(vv, vh)))
		now := x.slice(h, []int64{n, 1}, zero, i)
		under := lb.zeros(colSh) // below the subdiagonal: zeros, or the reflector's tail (gehrd)
		if reflectors {
			under = v
		}
		fixed := lb.sel(at, lb.full(lb.reshape(beta), colSh), lb.sel(below, under, now))
		fixed = lb.sel(lb.full(lb.reshape(skip), hlo.ArrayShape(hlo.PRED, n, 1)), now, fixed)
		h = x.update(h, fixed, zero, i)
		z = lb.inst(hlo.OpSubtract, sh, z, lb.inst(hlo.OpMultiply, sh, lb.full(tau, sh), lb.outer(lb.contract(z, vv, 1), lb.conj(vv))))
		return []*hlo.Instruction{i1, h, z, lb.setVec(e[3], tau, i)}
	})
	g := func(k int) *hlo.Instruction { return b.element(w, k) }
	return g(1), g(2), g(3)
}

// hqr is the evaluator's hqr (dlahqr) on the padded Hessenberg h and its
// transformations z ([n+sweepChunk, n+sweepChunk]), one while loop whose
// iteration finds the active block's top l (the last negligible
// subdiagonal element at or below the last top), then deflates the
// block's trailing 1 x 1 or 2 x 2 block when l >= i-1 (the 2 x 2 put in
// standard form by dlanv2's rotation, applied to the rest of h and to
// z), else makes one double-shift sweep from the row sweepStart finds.
// It returns (T, Z unpadded, wr, wi, info).
func (b *expander) hqr(in, h, z *hlo.Instruction, n int64, ulp, smlnum float64) (T, Z, wr, wi, info *hlo.Instruction) {
	t := h.Shape.Elem
	np := h.Shape.Dims[0]
	s32 := hlo.ArrayShape(hlo.S32)
	wSh := hlo.ArrayShape(t, n)
	itmax := 30 * max(10, n)
	state := hlo.TupleShape(s32, s32, s32, s32, h.Shape, z.Shape, wSh, wSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, n-1), b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), h, z, b.zeros(wSh), b.zeros(wSh))
	w := b.whileLoop(in, in.Name+".hqr", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		var err error
		defer mustBuild(&err)
		ei := cb.expr(s32, &err)
		return ei.And(ei.Cmp(e[0], "GE", ei.K(0)), ei.Cmp(e[3], "LE", ei.K(float64(itmax))))
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		i, l, kdefl, its, H, Z, wr, wi := e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]
		es, ei := lb.expr(hlo.ArrayShape(t), &err), lb.expr(s32, &err)
		ev, evi := lb.expr(hlo.ArrayShape(t, np), &err), lb.expr(hlo.ArrayShape(hlo.S32, np), &err)
		vec := func(x *hlo.Instruction) *hlo.Instruction { return lb.full(x, ev.Shape()) }
		ivec := func(x *hlo.Instruction) *hlo.Instruction { return lb.full(x, evi.Shape()) }
		kk := lb.iota(hlo.S32, 0, np)
		d, s, u := lb.diagonals(H)
		lnew := lb.blockTop(d, s, u, l, i, ulp, smlnum)
		pos := ei.Max(lnew, ei.K(1))
		H = lb.setAt(H, es.Sel(ei.Cmp(lnew, "GT", ei.K(0)), es.K(0), lb.scalarAt(H, pos, ei.Sub(pos, ei.K(1)))), pos, ei.Sub(pos, ei.K(1)))
		defl := ei.Cmp(lnew, "GE", ei.Sub(i, ei.K(1)))
		one := ei.Cmp(lnew, "EQ", i)
		two := ei.And(defl, ei.Not(one))

		// Deflation: a 1 x 1 block's eigenvalue, or a 2 x 2 block's.
		iSafe := ei.Max(i, ei.K(0))
		wr1 := lb.setVec(wr, lb.scalarAt(H, iSafe, iSafe), iSafe)
		H2, Z2, wr2, wi2 := H, Z, wr, wi
		if n >= 2 {
			H2, Z2, wr2, wi2 = lb.standardize(H, Z, wr, wi, i, ulp)
		} else {
			two = lb.constant(hlo.PRED, 0) // no 2 x 2 block in a 1 x 1 matrix
		}

		// A sweep's shifts: the trailing 2 x 2's eigenvalues, or exceptional.
		kd1 := ei.Add(kdefl, ei.K(1))
		rem := func(k int64) *hlo.Instruction {
			return ei.Cmp(lb.inst(hlo.OpRemainder, s32, kd1, ei.K(float64(k))), "EQ", ei.K(0))
		}
		ex20, ex10 := rem(20), rem(10)
		ii := ei.Max(i, ei.K(2))
		ll := ei.Min(ei.Max(lnew, ei.K(0)), ei.K(float64(n-1)))
		h1 := func(r, c int64, base *hlo.Instruction) *hlo.Instruction {
			return lb.scalarAt(H, ei.Add(base, ei.K(float64(r))), ei.Add(base, ei.K(float64(c))))
		}
		hII, hI1I1, hI1I, hII1, hI1I2 := h1(0, 0, ii), h1(-1, -1, ii), h1(-1, 0, ii), h1(0, -1, ii), h1(-1, -2, ii)
		hLL, hL1L, hL2L1 := h1(0, 0, ll), h1(1, 0, ll), h1(2, 1, ll)
		s20 := es.Add(es.Abs(hII1), es.Abs(hI1I2))
		s10 := es.Add(es.Abs(hL1L), es.Abs(hL2L1))
		exc := func(s *hlo.Instruction, base *hlo.Instruction) *hlo.Instruction {
			return es.Add(es.Mul(es.K(0.75), s), base)
		}
		h11 := es.Sel(ex20, exc(s20, hII), es.Sel(ex10, exc(s10, hLL), hI1I1))
		h12 := es.Sel(ex20, es.Mul(es.K(-0.4375), s20), es.Sel(ex10, es.Mul(es.K(-0.4375), s10), hI1I))
		h21 := es.Sel(ex20, s20, es.Sel(ex10, s10, hII1))
		h22 := es.Sel(ex20, h11, es.Sel(ex10, h11, hII))
		sc := es.Add(es.Add(es.Add(es.Abs(h11), es.Abs(h12)), es.Abs(h21)), es.Abs(h22))
		zeroS := es.Cmp(sc, "EQ", es.K(0))
		scs := es.Sel(zeroS, es.K(1), sc)
		h11, h21, h12, h22 = es.Div(h11, scs), es.Div(h21, scs), es.Div(h12, scs), es.Div(h22, scs)
		tr := es.Div(es.Add(h11, h22), es.K(2))
		det := es.Sub(es.Mul(es.Sub(h11, tr), es.Sub(h22, tr)), es.Mul(h12, h21))
		rtdisc := es.Sqrt(es.Abs(det))
		pair := es.Cmp(det, "GE", es.K(0))
		r1, r2 := es.Add(tr, rtdisc), es.Sub(tr, rtdisc)
		pick := es.Sel(es.Cmp(es.Abs(es.Sub(r1, h22)), "LE", es.Abs(es.Sub(r2, h22))), r1, r2)
		rt1r := es.Sel(zeroS, es.K(0), es.Sel(pair, es.Mul(tr, sc), es.Mul(pick, sc)))
		rt1i := es.Sel(zeroS, es.K(0), es.Sel(pair, es.Mul(rtdisc, sc), es.K(0)))
		rt2r, rt2i := rt1r, es.Neg(rt1i)
		rt2i = es.Sel(es.Cmp(rt1i, "EQ", es.K(0)), es.K(0), rt2i)

		// sweepStart for every m at once: where it may start, the largest.
		// Only s[lnew] changed since diagonals: h(lnew, lnew-1), zeroed above.
		s = ev.Sel(evi.And(evi.Cmp(kk, "EQ", ivec(lnew)), evi.Cmp(kk, "GT", evi.K(0))), ev.K(0), s)
		hmm, h21v, h12v, hm1m1 := d, lb.shiftLeft(s), lb.shiftLeft(u), lb.shiftLeft(d)
		h32, hmm1, hm1 := lb.shiftLeft(lb.shiftLeft(s)), s, lb.shiftRight(d)
		s1 := ev.Add(ev.Add(ev.Abs(ev.Sub(hmm, vec(rt2r))), vec(es.Abs(rt2i))), ev.Abs(h21v))
		h21s := ev.Div(h21v, s1)
		v1 := ev.Sub(ev.Add(ev.Mul(h21s, h12v), ev.Mul(ev.Sub(hmm, vec(rt1r)), ev.Div(ev.Sub(hmm, vec(rt2r)), s1))), ev.Mul(vec(rt1i), ev.Div(vec(rt2i), s1)))
		v2 := ev.Mul(h21s, ev.Sub(ev.Sub(ev.Add(hmm, hm1m1), vec(rt1r)), vec(rt2r)))
		v3 := ev.Mul(h21s, h32)
		s2 := ev.Add(ev.Add(ev.Abs(v1), ev.Abs(v2)), ev.Abs(v3))
		v1, v2, v3 = ev.Div(v1, s2), ev.Div(v2, s2), ev.Div(v3, s2)
		h00 := ev.Mul(ev.Abs(hmm1), ev.Add(ev.Abs(v2), ev.Abs(v3)))
		h01 := ev.Mul(ev.Mul(ev.K(ulp), ev.Abs(v1)), ev.Add(ev.Add(ev.Abs(hm1), ev.Abs(hmm)), ev.Abs(hm1m1)))
		okm := evi.And(ev.Cmp(h00, "LE", h01), evi.And(evi.Cmp(kk, "GT", ivec(lnew)), evi.Cmp(kk, "LE", ivec(ei.Sub(i, ei.K(2))))))
		mstar := ei.Max(lb.reduceDim(evi.Sel(okm, kk, ivec(ei.K(-1))), 0, hlo.OpMaximum, lb.constant(hlo.S32, -1)), lnew)
		onehot := evi.Cmp(kk, "EQ", ivec(mstar))
		pickV := func(x *hlo.Instruction) *hlo.Instruction {
			return lb.reshape(lb.reduceDim(ev.Sel(onehot, x, ev.K(0)), 0, hlo.OpAdd, lb.constant(t, 0)), 1)
		}
		v0 := lb.concat(0, pickV(v1), pickV(v2), pickV(v3))
		kend := ei.Sel(defl, mstar, i)
		Hc, Zc := lb.sweep(in, H, Z, v0, mstar, kend, lnew)

		H = lb.sel(lb.full(two, H.Shape), H2, Hc)
		Z = lb.sel(lb.full(two, Z.Shape), Z2, Zc)
		wrN := lb.sel(lb.full(one, wSh), wr1, lb.sel(lb.full(two, wSh), wr2, wr))
		wiN := lb.sel(lb.full(two, wSh), wi2, wi)
		i1 := ei.Sel(defl, ei.Sub(lnew, ei.K(1)), i)
		l1 := ei.Sel(defl, ei.K(0), lnew)
		kd := ei.Sel(defl, ei.K(0), kd1)
		its1 := ei.Sel(defl, ei.K(0), ei.Add(its, ei.K(1)))
		return []*hlo.Instruction{i1, l1, kd, its1, H, Z, wrN, wiN}
	})
	g := func(k int) *hlo.Instruction { return b.element(w, k) }
	var err error
	defer mustBuild(&err)
	ei := b.expr(s32, &err)
	iEnd := g(0)
	info = ei.Sel(ei.Cmp(iEnd, "GE", ei.K(0)), ei.Add(iEnd, ei.K(1)), ei.K(0))
	T = b.slice(b.slice(g(4), 0, 0, n), 1, 0, n)
	Z = b.slice(b.slice(g(5), 0, 0, n), 1, 0, n)
	return T, Z, g(6), g(7), info
}

// blockTop is the active block's top in hqr's and hqrC's iteration:
// the largest k in (l, i] whose subdiagonal element h(k, k-1) is
// negligible, else l, by every row's test at once (the evaluator's
// negligibleBy, in abs1: |x| for a real H, |re| + |im| for a complex
// one), from H's diagonals d, s and u (diagonals).
func (b *expander) blockTop(d, s, u, l, i *hlo.Instruction, ulp, smlnum float64) *hlo.Instruction {
	n := d.Shape.Dims[0]
	var err error
	defer mustBuild(&err)
	ev, evi := b.expr(hlo.ArrayShape(realPart(d.Shape.Elem), n), &err), b.expr(hlo.ArrayShape(hlo.S32, n), &err)
	ivec := func(x *hlo.Instruction) *hlo.Instruction { return b.full(x, evi.Shape()) }
	kk := b.iota(hlo.S32, 0, n)
	right := b.shiftRight(d)
	hk, ua := b.abs1(s), b.abs1(u)
	tst0 := ev.Add(b.abs1(right), b.abs1(d))
	tst := ev.Sel(ev.Cmp(tst0, "EQ", ev.K(0)), ev.Add(b.abs1(b.shiftRight(s)), b.abs1(b.shiftLeft(s))), tst0)
	ab, ba := ev.Max(hk, ua), ev.Min(hk, ua)
	dd := b.abs1(b.inst(hlo.OpSubtract, d.Shape, right, d))
	aa, bb := ev.Max(b.abs1(d), dd), ev.Min(b.abs1(d), dd)
	ss := ev.Add(aa, ab)
	at := ev.And(ev.Cmp(hk, "LE", ev.Mul(ev.K(ulp), tst)),
		ev.Cmp(ev.Mul(ba, ev.Div(ab, ss)), "LE", ev.Max(ev.K(smlnum), ev.Mul(ev.K(ulp), ev.Mul(bb, ev.Div(aa, ss))))))
	neg := ev.Or(ev.Cmp(hk, "LE", ev.K(smlnum)), at)
	inBlock := evi.And(evi.Cmp(kk, "GT", ivec(l)), evi.Cmp(kk, "LE", ivec(i)))
	return b.reduceDim(evi.Sel(evi.And(neg, inBlock), kk, ivec(l)), 0, hlo.OpMaximum, b.constant(hlo.S32, -1))
}

// diagonals are the square m's diagonal, subdiagonal and superdiagonal
// as vectors indexed by row k: m(k, k), m(k, k-1) and m(k-1, k) (zero
// at k = 0).
func (b *expander) diagonals(m *hlo.Instruction) (d, s, u *hlo.Instruction) {
	n := m.Shape.Dims[0]
	t := m.Shape.Elem
	rows, cols := b.iota(hlo.S32, 0, n, n), b.iota(hlo.S32, 1, n, n)
	one := b.full(b.constant(hlo.S32, 1), rows.Shape)
	pick := func(p *hlo.Instruction, dim int) *hlo.Instruction {
		return b.reduceDim(b.sel(p, m, b.zeros(m.Shape)), dim, hlo.OpAdd, b.constant(t, 0))
	}
	d = pick(b.compare(rows, cols, "EQ"), 1)
	s = pick(b.compare(rows, b.inst(hlo.OpAdd, cols.Shape, cols, one), "EQ"), 1)
	u = pick(b.compare(b.inst(hlo.OpAdd, rows.Shape, rows, one), cols, "EQ"), 0)
	return d, s, u
}

// shiftRight is vector v moved one place up the index (v[k-1] at k,
// zero at 0); shiftLeft one place down (v[k+1] at k, zero at the end).
func (b *expander) shiftRight(v *hlo.Instruction) *hlo.Instruction {
	n := v.Shape.Dims[0]
	return b.concat(0, b.zeros(hlo.ArrayShape(v.Shape.Elem, 1)), b.slice(v, 0, 0, n-1))
}

func (b *expander) shiftLeft(v *hlo.Instruction) *hlo.Instruction {
	n := v.Shape.Dims[0]
	return b.concat(0, b.slice(v, 0, 1, n), b.zeros(hlo.ArrayShape(v.Shape.Elem, 1)))
}

// setVec writes scalar x at index i of vector v.
func (b *expander) setVec(v, x, i *hlo.Instruction) *hlo.Instruction {
	return b.inst(hlo.OpDynamicUpdateSlice, v.Shape, v, b.reshape(x, 1), i)
}

// standardize is hqr's deflation of the 2 x 2 block at rows and columns
// i-1, i: dlanv2's standard form written there, its rotation applied to
// rows i-1 and i right of the block, to columns i-1 and i above it and
// to z's columns i-1 and i; the block's eigenvalues into wr and wi.
func (b *expander) standardize(h, z, wr, wi, i *hlo.Instruction, ulp float64) (*hlo.Instruction, *hlo.Instruction, *hlo.Instruction, *hlo.Instruction) {
	t := h.Shape.Elem
	np := h.Shape.Dims[0]
	n := z.Shape.Dims[0]
	var err error
	defer mustBuild(&err)
	es, ei := b.expr(hlo.ArrayShape(t), &err), b.expr(hlo.ArrayShape(hlo.S32), &err)
	p := ei.Max(ei.Sub(i, ei.K(1)), ei.K(0))
	p1 := ei.Add(p, ei.K(1))
	a, bb, c, d, cs, sn := b.dlanv2(es, b.scalarAt(h, p, p), b.scalarAt(h, p, p1), b.scalarAt(h, p1, p), b.scalarAt(h, p1, p1), ulp)
	x := b.batched(t, nil)
	zero := b.constant(hlo.S32, 0)
	rot := func(e *formula.Builder, u, v, mask *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
		c, s := b.full(cs, u.Shape), b.full(sn, u.Shape)
		nu, nv := e.Add(e.Mul(c, u), e.Mul(s, v)), e.Sub(e.Mul(c, v), e.Mul(s, u))
		if mask == nil {
			return nu, nv
		}
		return e.Sel(mask, nu, u), e.Sel(mask, nv, v)
	}
	ev := b.expr(hlo.ArrayShape(t, np), &err)
	evi := b.expr(hlo.ArrayShape(hlo.S32, np), &err)
	idx := b.iota(hlo.S32, 0, np)
	rows := x.slice(h, []int64{2, np}, p, zero)
	r0, r1 := rot(ev, b.reshape(b.slice(rows, 0, 0, 1), np), b.reshape(b.slice(rows, 0, 1, 2), np), evi.Cmp(idx, "GT", b.full(i, idx.Shape)))
	h = x.update(h, b.concat(0, b.reshape(r0, 1, np), b.reshape(r1, 1, np)), p, zero)
	cols := x.slice(h, []int64{np, 2}, zero, p)
	c0, c1 := rot(ev, b.reshape(b.slice(cols, 1, 0, 1), np), b.reshape(b.slice(cols, 1, 1, 2), np), evi.Cmp(idx, "LT", b.full(p, idx.Shape)))
	h = x.update(h, b.concat(1, b.reshape(c0, np, 1), b.reshape(c1, np, 1)), zero, p)
	h = b.setAt(b.setAt(b.setAt(b.setAt(h, a, p, p), bb, p, p1), c, p1, p), d, p1, p1)
	ez := b.expr(hlo.ArrayShape(t, n), &err)
	zc := x.slice(z, []int64{n, 2}, zero, p)
	z0, z1 := rot(ez, b.reshape(b.slice(zc, 1, 0, 1), n), b.reshape(b.slice(zc, 1, 1, 2), n), nil)
	z = x.update(z, b.concat(1, b.reshape(z0, n, 1), b.reshape(z1, n, 1)), zero, p)
	complexPair := es.Cmp(c, "NE", es.K(0))
	im := es.Sel(complexPair, es.Mul(es.Sqrt(es.Abs(bb)), es.Sqrt(es.Abs(c))), es.K(0))
	wr = b.inst(hlo.OpDynamicUpdateSlice, wr.Shape, wr, b.concat(0, b.reshape(a, 1), b.reshape(d, 1)), p)
	wi = b.inst(hlo.OpDynamicUpdateSlice, wi.Shape, wi, b.concat(0, b.reshape(im, 1), b.reshape(es.Sel(complexPair, es.Neg(im), es.K(0)), 1)), p)
	return h, z, wr, wi
}

// dlanv2 is the evaluator's dlanv2 over scalars, its branches all
// computed and the one that applies selected: (a, b, c, d, cs, sn).
func (b *expander) dlanv2(e *formula.Builder, a, bv, c, d *hlo.Instruction, eps float64) (ra, rb, rc, rd, cs, sn *hlo.Instruction) {
	zero, one := e.K(0), e.K(1)
	abs := e.Abs
	sign1 := func(x *hlo.Instruction) *hlo.Instruction { return e.CopySign(one, x) }
	eq := func(x, y *hlo.Instruction) *hlo.Instruction { return e.Cmp(x, "EQ", y) }
	cZero, bZero := eq(c, zero), eq(bv, zero)
	// Signs differ (as sign bits): the case of a standard form already.
	signsDiffer := e.Cmp(sign1(bv), "NE", sign1(c))
	standard := e.And(eq(e.Sub(a, d), zero), signsDiffer)
	temp := e.Sub(a, d)
	p := e.Div(temp, e.K(2))
	bcmax := e.Max(abs(bv), abs(c))
	bcmis := e.Mul(e.Mul(e.Min(abs(bv), abs(c)), sign1(bv)), sign1(c))
	scale := e.Max(abs(p), bcmax)
	zz := e.Add(e.Mul(e.Div(p, scale), p), e.Mul(e.Div(bcmax, scale), bcmis))
	realEig := e.Cmp(zz, "GE", e.K(4*eps))
	// Real eigenvalues.
	z1 := e.Add(p, e.CopySign(e.Mul(e.Sqrt(scale), e.Sqrt(zz)), p))
	aR := e.Add(d, z1)
	dR := e.Sub(d, e.Mul(e.Div(bcmax, z1), bcmis))
	tauR := e.Hypot(c, z1)
	csR, snR := e.Div(z1, tauR), e.Div(c, tauR)
	bR := e.Sub(bv, c)
	// Complex or nearly equal: make the diagonal equal.
	sigma := e.Add(bv, c)
	tau := e.Hypot(sigma, temp)
	csC := e.Sqrt(e.Div(e.Add(one, e.Div(abs(sigma), tau)), e.K(2)))
	snC := e.Mul(e.Neg(e.Div(p, e.Mul(tau, csC))), sign1(sigma))
	aa, bb := e.Add(e.Mul(a, csC), e.Mul(bv, snC)), e.Add(e.Mul(e.Neg(a), snC), e.Mul(bv, csC))
	cc, dd := e.Add(e.Mul(c, csC), e.Mul(d, snC)), e.Add(e.Mul(e.Neg(c), snC), e.Mul(d, csC))
	b2 := e.Add(e.Mul(bb, csC), e.Mul(dd, snC))
	c2 := e.Add(e.Mul(e.Neg(aa), snC), e.Mul(cc, csC))
	a2 := e.Add(e.Mul(aa, csC), e.Mul(cc, snC))
	d2 := e.Add(e.Mul(e.Neg(bb), snC), e.Mul(dd, csC))
	mid := e.Div(e.Add(a2, d2), e.K(2))
	c2nz, b2nz := e.Not(eq(c2, zero)), e.Not(eq(b2, zero))
	// Real after all (b2 and c2 of one sign): triangular.
	tri := e.And(e.And(c2nz, b2nz), e.Cmp(sign1(b2), "EQ", sign1(c2)))
	sab, sac := e.Sqrt(abs(b2)), e.Sqrt(abs(c2))
	pT := e.CopySign(e.Mul(sab, sac), c2)
	tauT := e.Div(one, e.Sqrt(abs(e.Add(b2, c2))))
	cs1, sn1 := e.Mul(sab, tauT), e.Mul(sac, tauT)
	csT, snT := e.Sub(e.Mul(csC, cs1), e.Mul(snC, sn1)), e.Add(e.Mul(csC, sn1), e.Mul(snC, cs1))
	// c2 nonzero, b2 zero: swap.
	swap := e.And(c2nz, e.Not(b2nz))
	aC := e.Sel(tri, e.Add(mid, pT), mid)
	dC := e.Sel(tri, e.Sub(mid, pT), mid)
	bC := e.Sel(tri, e.Sub(b2, c2), e.Sel(swap, e.Neg(c2), b2))
	cC := e.Sel(e.Or(tri, swap), zero, c2)
	csCf := e.Sel(tri, csT, e.Sel(swap, e.Neg(snC), csC))
	snCf := e.Sel(tri, snT, e.Sel(swap, csC, snC))
	// The general case: real or complex.
	aG, bG, cG, dG := e.Sel(realEig, aR, aC), e.Sel(realEig, bR, bC), e.Sel(realEig, zero, cC), e.Sel(realEig, dR, dC)
	csG, snG := e.Sel(realEig, csR, csCf), e.Sel(realEig, snR, snCf)
	keep := e.Or(cZero, e.And(e.Not(bZero), standard)) // as it is
	pick := func(k, sw, g *hlo.Instruction) *hlo.Instruction {
		return e.Sel(keep, k, e.Sel(bZero, sw, g))
	}
	return pick(a, d, aG), pick(bv, e.Neg(c), bG), pick(c, zero, cG), pick(d, a, dG), pick(one, zero, csG), pick(zero, one, snG)
}

// sweep is hqr's double-shift sweep over rows and columns m..kend of
// the padded h (kend = i; kend = m for no steps), a while loop whose
// iteration is one step of one phase for the current k, so that it runs
// on the device (lower/seqloop.go: small values, the big arrays read and
// written in blocks at computed indices, every read before every
// write): phase 0 makes the reflector of (v0 at k = m, else h(k:k+3,
// k-1), its third element zero at the last k) by larfg and sets column
// k-1 as dlahqr does; phase 1 applies it from the left to rows k..k+2,
// a block of sweepChunk columns a step from column k on; phase 2 from
// the right to columns k..k+2, a block of rows a step down to row
// min(k+3, i); phase 3 to z's columns k..k+2. The last k's third row
// and column are left as they are. A step reads and writes back,
// unchanged, the zeros of the padding's corner for the phases it is not
// in, so that their writes cannot overlap its own. It returns (h, z).
func (b *expander) sweep(in, h, z, v0, m, kend, l *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	t := h.Shape.Elem
	C := int64(sweepChunk)
	s32 := hlo.ArrayShape(hlo.S32)
	one := hlo.ArrayShape(t)
	// (k, kend, m, l, phase, chunk, h, z, v0, t1, v2, v3)
	state := hlo.TupleShape(s32, s32, s32, s32, s32, s32, h.Shape, z.Shape, v0.Shape, one, one, one)
	init := b.inst(hlo.OpTuple, state, m, kend, m, l, b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), h, z, v0, b.zeros(one), b.zeros(one), b.zeros(one))
	w := b.whileLoop(in, in.Name+".sweep", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], e[1], "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		k, kend, m, l, phase, chunk, H, Z, v, t1, v2, v3 := e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11]
		es, ei := lb.expr(one, &err), lb.expr(s32, &err)
		e3 := lb.expr(hlo.ArrayShape(t, 3), &err)
		x := lb.batched(t, nil)
		nr3 := ei.Cmp(k, "LT", ei.Sub(kend, ei.K(1)))
		first := ei.Cmp(k, "EQ", m)
		lowest := ei.Min(ei.Add(k, ei.K(3)), kend)
		sp := lb.sweepStep(ei, x, H, Z, k, phase, chunk, 3)
		in0, in1, in2, in3 := sp.in[0], sp.in[1], sp.in[2], sp.in[3]
		c0, rowsBlk, colsBlk, zBlk := sp.c0, sp.rows, sp.cols, sp.z
		col := lb.reshape(sp.col, 3)

		// Phase 0: the reflector, and column k-1.
		lane := lb.iota(hlo.S32, 0, 3)
		third := lb.compare(lane, lb.full(lb.constant(hlo.S32, 2), lane.Shape), "EQ")
		cut := lb.inst(hlo.OpAnd, third.Shape, third, lb.full(ei.Not(nr3), third.Shape))
		fetched := e3.Sel(cut, e3.K(0), col)
		vv := e3.Sel(lb.full(first, fetched.Shape), v, fetched)
		part := func(x *hlo.Instruction, j int64) *hlo.Instruction { return lb.reshape(lb.slice(x, 0, j, j+1)) }
		alpha, x1, x2 := part(vv, 0), part(vv, 1), part(vv, 2)
		beta, nt1, sc, skip := larfg(es, alpha, es.Hypot(x1, x2))
		nv2, nv3 := es.Sel(skip, x1, es.Mul(x1, sc)), es.Sel(skip, x2, es.Mul(x2, sc))
		cc0, cc1, cc2 := part(col, 0), part(col, 1), part(col, 2)
		scaled := ei.Cmp(m, "GT", l)
		n0 := es.Sel(first, es.Sel(scaled, es.Mul(cc0, es.Sub(es.K(1), nt1)), cc0), beta)
		n1 := es.Sel(first, cc1, es.K(0))
		n2 := es.Sel(first, cc2, es.Sel(nr3, es.K(0), cc2))
		newCol := lb.concat(0, lb.reshape(n0, 1), lb.reshape(n1, 1), lb.reshape(n2, 1))
		newCol = e3.Sel(lb.full(in0, newCol.Shape), newCol, col)
		t1 = es.Sel(in0, nt1, t1)
		v2, v3 = es.Sel(in0, nv2, v2), es.Sel(in0, nv3, v3)
		t2, t3 := es.Mul(t1, v2), es.Mul(t1, v3)

		// apply reflects the three vectors p0, p1, p2 where mask holds.
		apply := func(p0, p1, p2, mask *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction, *hlo.Instruction) {
			e := lb.expr(p0.Shape, &err)
			f := func(s *hlo.Instruction) *hlo.Instruction { return lb.full(s, p0.Shape) }
			sum := e.Add(p0, e.Mul(f(v2), p1))
			sum = e.Sel(f(nr3), e.Add(sum, e.Mul(f(v3), p2)), sum)
			q0, q1, q2 := e.Sub(p0, e.Mul(sum, f(t1))), e.Sub(p1, e.Mul(sum, f(t2))), e.Sub(p2, e.Mul(sum, f(t3)))
			m3 := lb.inst(hlo.OpAnd, mask.Shape, mask, f(nr3))
			return e.Sel(mask, q0, p0), e.Sel(mask, q1, p1), e.Sel(m3, q2, p2)
		}
		idx := lb.iota(hlo.S32, 0, C)
		pos := lb.inst(hlo.OpAdd, idx.Shape, idx, lb.full(c0, idx.Shape)) // the block's columns (rows)
		and := func(p, q *hlo.Instruction) *hlo.Instruction { return lb.inst(hlo.OpAnd, p.Shape, p, q) }
		// Phase 1: rows k..k+2, columns c0.. from k on.
		row := func(j int64) *hlo.Instruction { return lb.reshape(lb.slice(rowsBlk, 0, j, j+1), C) }
		m1 := and(lb.compare(pos, lb.full(k, pos.Shape), "GE"), lb.full(in1, pos.Shape))
		q0, q1, q2 := apply(row(0), row(1), row(2), m1)
		newRows := lb.concat(0, lb.reshape(q0, 1, C), lb.reshape(q1, 1, C), lb.reshape(q2, 1, C))
		// Phase 2: columns k..k+2, rows c0.. down to min(k+3, i).
		colOf := func(c *hlo.Instruction, j int64) *hlo.Instruction { return lb.reshape(lb.slice(c, 1, j, j+1), C) }
		m2 := and(lb.compare(pos, lb.full(lowest, pos.Shape), "LE"), lb.full(in2, pos.Shape))
		p0, p1, p2 := apply(colOf(colsBlk, 0), colOf(colsBlk, 1), colOf(colsBlk, 2), m2)
		newCols := lb.concat(1, lb.reshape(p0, C, 1), lb.reshape(p1, C, 1), lb.reshape(p2, C, 1))
		// Phase 3: z's columns k..k+2.
		z0, z1, z2 := apply(colOf(zBlk, 0), colOf(zBlk, 1), colOf(zBlk, 2), lb.full(in3, pos.Shape))
		newZ := lb.concat(1, lb.reshape(z0, C, 1), lb.reshape(z1, C, 1), lb.reshape(z2, C, 1))

		H, Z = sp.write(H, Z, lb.reshape(newCol, 3, 1), newRows, newCols, newZ)
		nextK, nextPhase, nextChunk := sp.next(lowest)
		return []*hlo.Instruction{nextK, kend, m, l, nextPhase, nextChunk, H, Z, v, t1, v2, v3}
	})
	g := func(k int) *hlo.Instruction { return b.element(w, k) }
	return g(6), g(7)
}

// sweepStep is one iteration of a sweep's device loop (sweep, sweepC),
// the reflector r rows high, on H and Z padded by sweepChunk rows and
// columns: k, the phase (in[p]: phase p is this iteration's; 0 the
// reflector, 1 rows, 2 columns, 3 Z's columns) and the chunk (from row
// or column c0), and every read of the iteration, from H and Z before
// any write: the column below row k-1 (col, [r, 1]), the r rows from
// column c0 (rows), the r columns from row c0 (cols) and Z's (z), each
// at the padding's corner when its phase is idle, where writing back
// what it read changes nothing.
type sweepStep struct {
	ei                 *formula.Builder
	x                  batched
	k, chunk, c0       *hlo.Instruction
	in                 [4]*hlo.Instruction
	col, rows, cols, z *hlo.Instruction
	at                 [4][2]*hlo.Instruction // where each block was read
	lastCol            int64                  // the last column (row) chunk
}

func (lb *expander) sweepStep(ei *formula.Builder, x batched, H, Z, k, phase, chunk *hlo.Instruction, r int64) *sweepStep {
	n := H.Shape.Dims[0] - sweepChunk
	C := int64(sweepChunk)
	s := &sweepStep{ei: ei, x: x, k: k, chunk: chunk, c0: ei.Mul(chunk, ei.K(float64(C))), lastCol: (n - 1) / C}
	corner := ei.K(float64(n))
	for p := range s.in {
		s.in[p] = ei.Cmp(phase, "EQ", ei.K(float64(p)))
	}
	place := func(p int, row, col *hlo.Instruction) [2]*hlo.Instruction {
		return [2]*hlo.Instruction{ei.Sel(s.in[p], row, corner), ei.Sel(s.in[p], col, corner)}
	}
	s.at = [4][2]*hlo.Instruction{place(0, k, ei.Max(ei.Sub(k, ei.K(1)), ei.K(0))), place(1, k, s.c0), place(2, s.c0, k), place(3, s.c0, k)}
	s.col = x.slice(H, []int64{r, 1}, s.at[0][0], s.at[0][1])
	s.rows = x.slice(H, []int64{r, C}, s.at[1][0], s.at[1][1])
	s.cols = x.slice(H, []int64{C, r}, s.at[2][0], s.at[2][1])
	s.z = x.slice(Z, []int64{C, r}, s.at[3][0], s.at[3][1])
	return s
}

// write puts the iteration's blocks back where they were read, after
// every read.
func (s *sweepStep) write(H, Z, col, rows, cols, z *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	H = s.x.update(H, col, s.at[0][0], s.at[0][1])
	H = s.x.update(H, rows, s.at[1][0], s.at[1][1])
	H = s.x.update(H, cols, s.at[2][0], s.at[2][1])
	return H, s.x.update(Z, z, s.at[3][0], s.at[3][1])
}

// next is the following iteration's (k, phase, chunk): phase 0 -> 1
// (from k's chunk) -> 2 (down to row lowest's chunk) -> 3 -> the next k.
func (s *sweepStep) next(lowest *hlo.Instruction) (k, phase, chunk *hlo.Instruction) {
	ei, in := s.ei, s.in
	lastCol := ei.K(float64(s.lastCol))
	done1 := ei.Cmp(s.chunk, "GE", lastCol)
	done2 := ei.Cmp(s.chunk, "GE", ei.Div(lowest, ei.K(float64(sweepChunk))))
	done3 := ei.Cmp(s.chunk, "GE", lastCol)
	phase = ei.Sel(in[0], ei.K(1), ei.Sel(in[1], ei.Sel(done1, ei.K(2), ei.K(1)), ei.Sel(in[2], ei.Sel(done2, ei.K(3), ei.K(2)), ei.Sel(done3, ei.K(0), ei.K(3)))))
	chunk = ei.Sel(in[0], ei.Div(s.k, ei.K(float64(sweepChunk))),
		ei.Sel(ei.Or(ei.And(in[1], done1), ei.Or(ei.And(in[2], done2), ei.And(in[3], done3))), ei.K(0), ei.Add(s.chunk, ei.K(1))))
	k = ei.Sel(ei.And(in[3], done3), ei.Add(s.k, ei.K(1)), s.k)
	return k, phase, chunk
}

// schurVectors is the evaluator's schurVectors: from the real Schur
// form T and its transformations Z ([n, n]) and the eigenvalues'
// imaginary parts wi, W (each pair's block made triangular), Tc = W^H
// T W and Zc = Z W in the complex type, the right eigenvectors of Tc by
// a loop over its rows upward (row i of every vector at once) and the
// left ones by a loop downward, taken back by Zc and put in LAPACK's
// form (eigenColumns). It returns (right, left).
func (b *expander) schurVectors(T, Z, wi *hlo.Instruction, bal balancing, n int64, ulp, smlnum float64) (*hlo.Instruction, *hlo.Instruction) {
	t := T.Shape.Elem
	ct, _ := t.ComplexOf()
	var err error
	defer mustBuild(&err)
	ev, evi := b.expr(hlo.ArrayShape(t, n), &err), b.expr(hlo.ArrayShape(hlo.S32, n), &err)
	csh := hlo.ArrayShape(ct, n, n)
	_, s, u := b.diagonals(T)
	bq, cq := b.shiftLeft(u), b.shiftLeft(s) // T(j, j+1), T(j+1, j)
	first := ev.Cmp(wi, "GT", ev.K(0))
	second := b.shiftRight(b.convert(first, hlo.S32))
	second = evi.Cmp(second, "EQ", evi.K(1)) // a pair's second column
	nrm := ev.Sqrt(ev.Add(ev.Abs(bq), ev.Abs(cq)))
	nrm = ev.Sel(first, nrm, ev.K(1))
	u0 := ev.Sel(first, ev.Div(ev.Sqrt(ev.Abs(bq)), nrm), ev.K(1))
	u1 := ev.Sel(first, ev.CopySign(ev.Div(ev.Sqrt(ev.Abs(cq)), nrm), bq), ev.K(0))
	cplx := func(re, im *hlo.Instruction) *hlo.Instruction {
		return b.inst(hlo.OpComplex, hlo.ArrayShape(ct, re.Shape.Dims...), re, im)
	}
	zero := ev.K(0)
	diag := cplx(ev.Sel(first, u0, ev.Sel(second, b.shiftRight(u0), ev.K(1))), zero)
	sub := cplx(zero, u1)               // W(c+1, c) of a pair's first column c
	sup := cplx(zero, b.shiftRight(u1)) // W(c-1, c) of its second
	sup = b.sel(second, sup, cplx(zero, zero))
	rows, cols := b.iota(hlo.S32, 0, n, n), b.iota(hlo.S32, 1, n, n)
	one := b.full(b.constant(hlo.S32, 1), rows.Shape)
	colv := func(x *hlo.Instruction) *hlo.Instruction { return b.along(x, csh, 1) }
	W := b.sel(b.compare(rows, cols, "EQ"), colv(diag),
		b.sel(b.compare(rows, b.inst(hlo.OpAdd, cols.Shape, cols, one), "EQ"), colv(sub),
			b.sel(b.compare(b.inst(hlo.OpAdd, rows.Shape, rows, one), cols, "EQ"), colv(sup), b.zeros(csh))))
	mm := func(p, q *hlo.Instruction) *hlo.Instruction { return b.contract(p, q, 1) }
	right, left := b.triangularVectors(mm(b.conjT(W), mm(b.convert(T, ct), W)), mm(b.convert(Z, ct), W), bal, ulp, smlnum)
	rel := tieTolerance(ulp, n)
	return b.eigenColumns(right, wi, rel), b.eigenColumns(left, wi, rel)
}

// triangularVectors are the right and left eigenvectors (a column each,
// not yet normalized) of a = D Zc Tc Zc^H D^-1 from its complex Schur
// form Tc (upper triangular, [n, n]), its vectors Zc and the balancing
// (D and the permutation): the right ones by a loop over Tc's rows
// upward (row i of every vector at once), the left ones by a loop
// downward, taken back by Zc, D and the permutation, as the evaluator's
// triangularVectors.
func (b *expander) triangularVectors(Tc, Zc *hlo.Instruction, bal balancing, ulp, smlnum float64) (*hlo.Instruction, *hlo.Instruction) {
	ct := Tc.Shape.Elem
	t := realPart(ct)
	n := Tc.Shape.Dims[0]
	csh := Tc.Shape
	mm := func(p, q *hlo.Instruction) *hlo.Instruction { return b.contract(p, q, 1) }
	var err error
	defer mustBuild(&err)
	ev := b.expr(hlo.ArrayShape(t, n), &err)
	lambda, _, _ := b.diagonals(Tc)
	lamMag := ev.Add(ev.Abs(b.realOf(lambda)), ev.Abs(b.imagOf(lambda)))
	smin := ev.Max(ev.Mul(ev.K(ulp), lamMag), ev.K(smlnum))
	// den is Tc(i, i) - lambda_j, raised to smin where smaller.
	den := func(e *expander, tc, lambda, smin, i *hlo.Instruction) *hlo.Instruction {
		var err error
		defer mustBuild(&err)
		ev := e.expr(hlo.ArrayShape(t, n), &err)
		tii := e.full(e.scalarAt(tc, i, i), lambda.Shape)
		d := e.inst(hlo.OpSubtract, lambda.Shape, tii, lambda)
		small := ev.Cmp(ev.Add(ev.Abs(e.realOf(d)), ev.Abs(e.imagOf(d))), "LT", smin)
		return e.sel(small, e.convert(smin, ct), d)
	}
	solve := func(name string, upward bool) *hlo.Instruction {
		s32 := hlo.ArrayShape(hlo.S32)
		state := hlo.TupleShape(s32, csh, csh, lambda.Shape, smin.Shape)
		init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.identity(csh), Tc, lambda, smin)
		return b.countedLoop(b.from, b.from.Name+name, state, n-1, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
			var err error
			defer mustBuild(&err)
			ei := lb.expr(s32, &err)
			evi := lb.expr(hlo.ArrayShape(hlo.S32, n), &err)
			step, X, tc := e[0], e[1], e[2]
			x := lb.batched(ct, nil)
			zero := lb.constant(hlo.S32, 0)
			idx := lb.iota(hlo.S32, 0, n)
			var i, coeff, mask *hlo.Instruction
			if upward { // row i = n-2-step of Tc x_j = lambda_j x_j
				i = ei.Sub(ei.K(float64(n-2)), step)
				coeff = lb.reshape(x.slice(tc, []int64{1, n}, i, zero), n)
				mask = evi.Cmp(idx, "GT", lb.full(i, idx.Shape))
			} else { // row i = step+1 of Tc^H y_j = conj(lambda_j) y_j
				i = ei.Add(step, ei.K(1))
				coeff = lb.conj(lb.reshape(x.slice(tc, []int64{n, 1}, zero, i), n))
				mask = evi.Cmp(idx, "LT", lb.full(i, idx.Shape))
			}
			coeff = lb.sel(mask, coeff, lb.zeros(coeff.Shape))
			r := lb.contract(coeff, X, 0)
			dn := den(lb, tc, e[3], e[4], i)
			if !upward {
				dn = lb.conj(dn)
			}
			// Growth held off by powers of two per column, as dtrevc3
			// scales: r first where r / dn could pass 2^growthLimit (a
			// divisor raised only to smin), then the quotient and its
			// column into [0, 1) by |.|_1, so that the next row's sums
			// cannot overflow either (a defective eigenvalue's vector
			// grows by 1/smin a row: 2^23 in f32, past f32's range by
			// order 7). eigenColumns divides the columns' norms out.
			none := evi.K(0)
			k1 := evi.Sub(evi.Sub(lb.exponentOf(lb.abs1(r)), lb.exponentOf(lb.abs1(dn))), evi.K(float64(growthLimit(t))))
			k1 = evi.Sel(mask, evi.Max(k1, none), none)
			q := lb.inst(hlo.OpNegate, r.Shape, lb.inst(hlo.OpDivide, r.Shape, lb.scaleEach(r, k1), dn))
			k2 := evi.Sel(mask, evi.Max(lb.exponentOf(lb.abs1(q)), none), none)
			q = lb.scaleEach(q, k2)
			X = lb.scaleEach(X, lb.along(evi.Add(k1, k2), csh, 1))
			old := lb.reshape(x.slice(X, []int64{1, n}, i, zero), n)
			X = x.update(X, lb.reshape(lb.sel(mask, q, old), 1, n), i, zero)
			return []*hlo.Instruction{ei.Add(step, ei.K(1)), X, tc, e[3], e[4]}
		})
	}
	X, Y := solve(".right", true), solve(".left", false)
	// Balancing undone (D v, D^-1 u, the rows' order).
	dc := b.along(b.convert(bal.d, ct), csh, 0)
	right := b.inst(hlo.OpMultiply, csh, mm(Zc, X), dc)
	left := b.inst(hlo.OpDivide, csh, mm(Zc, Y), dc)
	return b.rowsAt(right, bal.at), b.rowsAt(left, bal.at)
}

// eigenColumns is the evaluator's eigenColumns: each column normalized
// (by its largest magnitude first) and turned so that its first largest
// element is real and positive; of a real matrix (wi its eigenvalues'
// imaginary parts; nil for a complex matrix), a real eigenvalue's
// column real and a pair's second column the conjugate of its first.
func (b *expander) eigenColumns(v, wi *hlo.Instruction, rel float64) *hlo.Instruction {
	sh := v.Shape
	n := sh.Dims[0]
	rt, _ := sh.Elem.ComplexPart()
	var err error
	defer mustBuild(&err)
	ev := b.expr(hlo.ArrayShape(rt, n), &err)
	colv := func(x *hlo.Instruction) *hlo.Instruction { return b.along(x, sh, 1) }
	asReal := func(x *hlo.Instruction) *hlo.Instruction {
		return b.inst(hlo.OpComplex, sh, b.realOf(x), b.zeros(hlo.ArrayShape(rt, sh.Dims...)))
	}
	var realCols *hlo.Instruction
	if wi != nil {
		realCols = b.along(ev.Cmp(wi, "EQ", ev.K(0)), hlo.ArrayShape(hlo.PRED, n, n), 1)
		v = b.sel(realCols, asReal(v), v)
	}
	mag := b.inst(hlo.OpAbs, hlo.ArrayShape(rt, n, n), v)
	mx := b.reduceDim(mag, 0, hlo.OpMaximum, b.constant(rt, 0))
	safe := ev.Sel(ev.Cmp(mx, "EQ", ev.K(0)), ev.K(1), mx)
	q := b.inst(hlo.OpDivide, mag.Shape, mag, b.along(safe, mag.Shape, 1))
	nrm := ev.Mul(mx, ev.Sqrt(b.reduceDim(b.inst(hlo.OpMultiply, q.Shape, q, q), 0, hlo.OpAdd, b.constant(rt, 0))))
	big := b.firstNear(mag, 0, rel)
	ph := b.inst(hlo.OpDivide, hlo.ArrayShape(sh.Elem, n), b.leadPhaseAt(v, nil, big), b.convert(nrm, sh.Elem))
	v = b.inst(hlo.OpMultiply, sh, v, colv(ph))
	rows := b.iota(hlo.S32, 0, n, n)
	v = b.sel(b.compare(rows, b.along(big, rows.Shape, 1), "EQ"), asReal(v), v)
	if wi == nil {
		return v
	}
	v = b.sel(realCols, asReal(v), v) // +0 imaginary parts
	pairSecond := ev.And(ev.Cmp(wi, "LT", ev.K(0)), ev.Cmp(b.shiftRight(wi), "GT", ev.K(0)))
	prev := b.concat(1, b.zeros(hlo.ArrayShape(sh.Elem, n, 1)), b.slice(v, 1, 0, n-1))
	return b.sel(b.along(pairSecond, hlo.ArrayShape(hlo.PRED, n, n), 1), b.conj(prev), v)
}

// imagOf is complex x's imaginary part.
func (b *expander) imagOf(x *hlo.Instruction) *hlo.Instruction {
	rt, _ := x.Shape.Elem.ComplexPart()
	return b.inst(hlo.OpImag, hlo.ArrayShape(rt, x.Shape.Dims...), x)
}

// eigenOrder sorts the eigenvalues (wr, wi) by their real parts, then
// their imaginary parts' magnitudes, then the positive one first (a
// pair stays adjacent), stably, as the evaluator's eigenOrder does: the
// order dlahqr deflates in hangs on rounding (a QR sweep in f32 and one
// in f64 may find the same eigenvalues in different rows), LAPACK leaves
// it unspecified, and a fixed order makes the device's and the
// evaluator's agree. It returns the sorted (wr, wi) and the one-hot
// permutation [n, n] whose dot from the right puts columns in that
// order.
func (b *expander) eigenOrder(in, wr, wi *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction, *hlo.Instruction) {
	var err error
	defer mustBuild(&err)
	ev := b.expr(wr.Shape, &err)
	srt, _, onehot := b.orderBy(in, wr, ev.Abs(wi), ev.Neg(wi))
	return b.element(srt, 0), ev.Neg(b.element(srt, 2)), onehot
}

// orderBy sorts keys a, b, c (vectors of one float type) by
// lexicographic's comparator, stably, with their indices: it returns
// the sort (a, b, c and the indices sorted), where each index went
// (at[i, j]: index i is the j-th) and that one-hot permutation as
// floats, whose dot from the right puts columns in that order.
func (b *expander) orderBy(in, a, bk, c *hlo.Instruction) (srt, at, onehot *hlo.Instruction) {
	t := a.Shape.Elem
	n := a.Shape.Dims[0]
	idx := b.iota(hlo.S32, 0, n)
	srt = b.inst(hlo.OpSort, hlo.TupleShape(a.Shape, a.Shape, a.Shape, idx.Shape), a, bk, c, idx)
	srt.Called = []*hlo.Computation{lexicographic(in.Name+"/eigenorder", t, 3)}
	srt.A.Dimensions, srt.A.HasDimensions, srt.A.IsStable = []int64{0}, true, true
	msh := hlo.ArrayShape(t, n, n)
	rows := b.iota(hlo.S32, 0, n, n)
	at = b.compare(rows, b.along(b.element(srt, 3), rows.Shape, 1), "EQ")
	return srt, at, b.sel(at, b.full(b.constant(t, 1), msh), b.zeros(msh))
}

// columnsBy puts the columns of the complex v in the order of the
// one-hot permutation p (v p).
func (b *expander) columnsBy(v, p *hlo.Instruction) *hlo.Instruction {
	return b.contract(v, b.convert(p, v.Shape.Elem), 1)
}

// lexicographic builds a sort's comparator over k keys of type t and an
// s32 index: key 0 less, or equal and key 1 less, and so on (plain
// comparisons: zeros of either sign equal).
func lexicographic(name string, t hlo.ElementType, k int) *hlo.Computation {
	c := &hlo.Computation{Name: name}
	add := func(in *hlo.Instruction) *hlo.Instruction {
		in.Name = fmt.Sprintf("%s/%d", name, len(c.Instructions))
		c.Instructions = append(c.Instructions, in)
		return in
	}
	for i := range 2*k + 2 {
		pt := t
		if i >= 2*k {
			pt = hlo.S32
		}
		p := add(&hlo.Instruction{Op: hlo.OpParameter, Shape: hlo.ArrayShape(pt), ParamNum: i})
		c.Params = append(c.Params, p)
	}
	pred := hlo.ArrayShape(hlo.PRED)
	cmp := func(x, y *hlo.Instruction, dir string) *hlo.Instruction {
		in := add(&hlo.Instruction{Op: hlo.OpCompare, Shape: pred, Operands: []*hlo.Instruction{x, y}})
		in.A.Direction = dir
		return in
	}
	// From the last key up: less = lt_i or (eq_i and less_{i+1}).
	var less *hlo.Instruction
	for i := k - 1; i >= 0; i-- {
		a, bb := c.Params[2*i], c.Params[2*i+1]
		lt := cmp(a, bb, "LT")
		if less != nil {
			both := add(&hlo.Instruction{Op: hlo.OpAnd, Shape: pred, Operands: []*hlo.Instruction{cmp(a, bb, "EQ"), less}})
			lt = add(&hlo.Instruction{Op: hlo.OpOr, Shape: pred, Operands: []*hlo.Instruction{lt, both}})
		}
		less = lt
	}
	c.Root = less
	return c
}

// mustBuild panics with the error a formula builder recorded: a shape
// geev's expansion could not infer is a bug here, not bad input, and
// runPass reports the panic as an internal error naming the pass.
func mustBuild(err *error) {
	if *err != nil {
		panic(fmt.Sprintf("geev's expansion: %v", *err))
	}
}

// schurCanonical puts the Schur form T, Z in one form of the several
// equally valid ones, as the evaluator's: a 2 x 2 block [[a, b], [c,
// a]] with |b| < |c| turned a quarter (Z's two columns (z1, z2) -> (z2,
// -z1), T's rows and columns with them: the block [[a, -c], [-b, a]]);
// a normal pair's (c = -b to rel: the block is the same in every basis
// of its plane) rotated so that z1 is positive and z2 zero in the first
// row where the pair's rows are largest; then each Schur vector (column
// of Z) turned so that its first largest element (to rel: tieTolerance)
// is positive, T's rows and columns with it (T' = S T S, Z' = Z S).
// Which of these forms a QR sweep ends in hangs on rounding (a pair's
// block turns from sweep to sweep), and a fixed one makes the device's
// and the evaluator's agree.
func (b *expander) schurCanonical(T, Z, wi *hlo.Instruction, rel float64) (*hlo.Instruction, *hlo.Instruction) {
	sh := Z.Shape
	t := sh.Elem
	n := sh.Dims[0]
	var err error
	defer mustBuild(&err)
	ev := b.expr(hlo.ArrayShape(t, n), &err)
	_, sd, su := b.diagonals(T)
	bq, cq := b.shiftLeft(su), b.shiftLeft(sd) // T(j, j+1), T(j+1, j)
	first := ev.Cmp(wi, "GT", ev.K(0))
	second := ev.Cmp(b.shiftRight(b.convert(first, t)), "EQ", ev.K(1))
	turn := ev.And(first, ev.Cmp(ev.Abs(bq), "LT", ev.Abs(cq)))
	// A normal pair's block (c = -b, to rel) is the same in every basis
	// of its plane: its Schur vectors rotated so that, in the first row
	// where the pair's rows are largest (to rel), z1 is positive and z2
	// zero, and the block kept as it was (R^T B R = B).
	normal := ev.And(first, ev.Cmp(ev.Abs(ev.Add(bq, cq)), "LE", ev.Mul(ev.K(rel), ev.Add(ev.Abs(bq), ev.Abs(cq)))))
	next := b.concat(1, b.slice(Z, 1, 1, n), b.zeros(hlo.ArrayShape(t, n, 1))) // Z(:, j+1) at column j
	rn := b.inst(hlo.OpSqrt, sh, b.inst(hlo.OpAdd, sh, b.inst(hlo.OpMultiply, sh, Z, Z), b.inst(hlo.OpMultiply, sh, next, next)))
	kRow := b.firstNear(rn, 0, rel)
	rows, cols := b.iota(hlo.S32, 0, n, n), b.iota(hlo.S32, 1, n, n)
	atK := b.compare(rows, b.along(kRow, rows.Shape, 1), "EQ")
	pick := func(x *hlo.Instruction) *hlo.Instruction {
		return b.reduceDim(b.sel(atK, x, b.zeros(sh)), 0, hlo.OpAdd, b.constant(t, 0))
	}
	r := pick(rn)
	normal = ev.And(normal, ev.Cmp(r, "GT", ev.K(0)))
	safe := ev.Sel(normal, r, ev.K(1))
	one := ev.K(1)
	// R: the identity but for each pair at (p, p+1): [[cs, -sn], [sn,
	// cs]], a quarter turn (0, 1) for a turned pair, the rotation above
	// for a normal one.
	cs := ev.Sel(normal, ev.Div(pick(Z), safe), ev.Sel(turn, ev.K(0), one))
	sn := ev.Sel(normal, ev.Div(pick(next), safe), ev.Sel(turn, one, ev.K(0)))
	diag := ev.Sel(first, cs, ev.Sel(second, b.shiftRight(cs), one))
	sub := ev.Sel(first, sn, ev.K(0))                        // R(c+1, c)
	sup := ev.Sel(second, ev.Neg(b.shiftRight(sn)), ev.K(0)) // R(c-1, c)
	ones := b.full(b.constant(hlo.S32, 1), rows.Shape)
	R := b.sel(b.compare(rows, cols, "EQ"), b.along(diag, sh, 1),
		b.sel(b.compare(rows, b.inst(hlo.OpAdd, cols.Shape, cols, ones), "EQ"), b.along(sub, sh, 1),
			b.sel(b.compare(b.inst(hlo.OpAdd, rows.Shape, rows, ones), cols, "EQ"), b.along(sup, sh, 1), b.zeros(sh))))
	T0 := T
	T = b.contract(R, b.contract(T, R, 1), 0) // R^T (T R)
	Z = b.contract(Z, R, 1)
	// Each normal pair's block as it was: (i, j) both in one normal pair.
	normS := b.shiftRight(b.convert(normal, t)) // a normal pair's second column
	inPair := ev.Or(normal, ev.Cmp(normS, "EQ", one))
	pair := b.inst(hlo.OpSubtract, hlo.ArrayShape(hlo.S32, n), b.iota(hlo.S32, 0, n), b.convert(normS, hlo.S32)) // i's pair's first index
	psh := hlo.ArrayShape(hlo.PRED, n, n)
	both := b.inst(hlo.OpAnd, psh, b.along(inPair, psh, 0), b.along(inPair, psh, 1))
	keep := b.inst(hlo.OpAnd, psh, both, b.compare(b.along(pair, rows.Shape, 0), b.along(pair, rows.Shape, 1), "EQ"))
	T = b.sel(keep, T0, T)
	sg := b.leadPhaseAt(Z, nil, b.firstNear(b.inst(hlo.OpAbs, sh, Z), 0, rel)) // +-1 for a real Z
	return b.inst(hlo.OpMultiply, sh, T, b.outer(sg, sg)), b.inst(hlo.OpMultiply, sh, Z, b.along(sg, sh, 1))
}

// normScaleExp is e of normScale's range [2^e, 2^-e): the largest power
// of two at most sqrt(smallest normal) / ulp, as the evaluator's.
func normScaleExp(t hlo.ElementType) int64 {
	if t == hlo.F64 {
		return -459
	}
	return -40
}

// scaleBy is x times 2^(sign k), k an s32 scalar (scaleEach).
func (b *expander) scaleBy(x, k *hlo.Instruction, sign int64) *hlo.Instruction {
	var err error
	defer mustBuild(&err)
	ei := b.expr(hlo.ArrayShape(hlo.S32), &err)
	return b.scaleEach(x, b.full(ei.Mul(k, ei.K(float64(-sign))), hlo.ArrayShape(hlo.S32, x.Shape.Dims...)))
}

// balance is the evaluator's balance (gebal, job 'S') of the active
// block [bal.lo, bal.hi] isolate left: passes (a while loop, until one
// scales nothing or meets a NaN) of a loop over its i, each scaling row
// i by 1/f and column i by f, f the power of two gebal's two loops find
// from their 2-norms within the block (c, r) and largest magnitudes
// (ca, ra). It returns (D^-1 m D, D's diagonal).
func (b *expander) balance(in, m *hlo.Instruction, bal balancing) (*hlo.Instruction, *hlo.Instruction) {
	rt := realPart(m.Shape.Elem)
	n := m.Shape.Dims[0]
	sh := m.Shape
	dSh := hlo.ArrayShape(rt, n)
	pred, s32 := hlo.ArrayShape(hlo.PRED), hlo.ArrayShape(hlo.S32)
	ones := b.full(b.constant(rt, 1), dSh)
	// (more passes, a NaN seen, m, d, lo, hi)
	state := hlo.TupleShape(pred, pred, sh, dSh, s32, s32)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.PRED, 1), b.constant(hlo.PRED, 0), m, ones, bal.lo, bal.hi)
	w := b.whileLoop(in, in.Name+".balance", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.inst(hlo.OpAnd, pred, e[0], cb.inst(hlo.OpNot, pred, e[1]))
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		// One pass: (i, changed, nan, m, d, lo, hi).
		ps := hlo.TupleShape(s32, pred, pred, sh, dSh, s32, s32)
		pinit := lb.inst(hlo.OpTuple, ps, e[4], lb.constant(hlo.PRED, 0), e[1], e[2], e[3], e[4], e[5])
		pw := lb.whileLoop(in, in.Name+".balance.pass", ps, pinit, func(cb *expander, pe []*hlo.Instruction) *hlo.Instruction {
			return cb.inst(hlo.OpAnd, pred, cb.compare(pe[0], pe[6], "LE"), cb.inst(hlo.OpNot, pred, pe[2]))
		}, func(pb *expander, pe []*hlo.Instruction) []*hlo.Instruction {
			return pb.balanceStep(in, pe)
		})
		get := func(k int) *hlo.Instruction { return lb.element(pw, k) }
		return []*hlo.Instruction{get(1), get(2), get(3), get(4), e[4], e[5]}
	})
	get := func(k int) *hlo.Instruction { return b.element(w, k) }
	return get(2), get(3)
}

// balanceStep is one i of balance's pass (state: i, changed, nan, m, d,
// lo, hi).
func (b *expander) balanceStep(in *hlo.Instruction, e []*hlo.Instruction) []*hlo.Instruction {
	i, changed, nan, m, d, lo, hi := e[0], e[1], e[2], e[3], e[4], e[5], e[6]
	t := m.Shape.Elem
	rt := realPart(t) // d's and the norms' type (a complex matrix's moduli)
	n := m.Shape.Dims[0]
	var err error
	defer mustBuild(&err)
	es, ei := b.expr(hlo.ArrayShape(rt), &err), b.expr(hlo.ArrayShape(hlo.S32), &err)
	ev := b.expr(hlo.ArrayShape(rt, n), &err)
	x := b.batched(t, nil)
	zero := b.constant(hlo.S32, 0)
	col := b.reshape(x.slice(m, []int64{n, 1}, zero, i), n)
	row := b.reshape(x.slice(m, []int64{1, n}, i, zero), n)
	// The 2-norms within the block (c, r: the largest magnitude there
	// times the norm of the column or row divided by it) and the
	// largest magnitudes (ca, ra).
	idx := b.iota(hlo.S32, 0, n)
	inBlock := func() *hlo.Instruction { // a mask each use: one computed once is a kernel of its own
		return b.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, n), b.compare(idx, b.full(lo, idx.Shape), "GE"), b.compare(idx, b.full(hi, idx.Shape), "LE"))
	}
	largest := func(mag *hlo.Instruction) *hlo.Instruction {
		return b.reduceDim(mag, 0, hlo.OpMaximum, b.constant(rt, 0))
	}
	norm := func(v *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) { // (2-norm within the block, largest magnitude)
		mag := b.inst(hlo.OpAbs, ev.Shape(), v)
		big := largest(ev.Sel(inBlock(), mag, ev.K(0)))
		safe := es.Sel(es.Cmp(big, "EQ", es.K(0)), es.K(1), big)
		q := ev.Div(ev.Sel(inBlock(), mag, ev.K(0)), b.full(safe, mag.Shape))
		return es.Mul(big, es.Sqrt(b.reduceDim(ev.Mul(q, q), 0, hlo.OpAdd, b.constant(rt, 0)))), largest(mag)
	}
	c, ca := norm(col)
	r, ra := norm(row)
	sfmin1 := smallestNormal(rt) / (2 * epsilon(rt))
	sfmax1 := 1 / sfmin1
	sfmin2 := sfmin1 * 2
	sfmax2 := 1 / sfmin2
	isNaN := es.IsNaN(es.Add(es.Add(es.Add(c, ca), r), ra))
	// gebal's two loops on (f, c, ca, r, g, ra), as while loops.
	one := hlo.ArrayShape(rt)
	fs := hlo.TupleShape(one, one, one, one, one, one)
	up := b.whileLoop(in, in.Name+".balance.up", fs, b.inst(hlo.OpTuple, fs, es.K(1), c, ca, r, es.Div(r, es.K(2)), ra), func(cb *expander, s []*hlo.Instruction) *hlo.Instruction {
		var err error
		defer mustBuild(&err)
		f := cb.expr(one, &err)
		return f.And(f.Cmp(s[1], "LT", s[4]), f.And(f.Cmp(f.Max(f.Max(s[0], s[1]), s[2]), "LT", f.K(sfmax2)), f.Cmp(f.Min(f.Min(s[3], s[4]), s[5]), "GT", f.K(sfmin2))))
	}, func(lb *expander, s []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		f := lb.expr(one, &err)
		two := f.K(2)
		return []*hlo.Instruction{f.Mul(s[0], two), f.Mul(s[1], two), f.Mul(s[2], two), f.Div(s[3], two), f.Div(s[4], two), f.Div(s[5], two)}
	})
	f0, c1, ca1, r1, ra1 := b.element(up, 0), b.element(up, 1), b.element(up, 2), b.element(up, 3), b.element(up, 5)
	down := b.whileLoop(in, in.Name+".balance.down", fs, b.inst(hlo.OpTuple, fs, f0, c1, ca1, r1, es.Div(c1, es.K(2)), ra1), func(cb *expander, s []*hlo.Instruction) *hlo.Instruction {
		var err error
		defer mustBuild(&err)
		f := cb.expr(one, &err)
		return f.And(f.Cmp(s[4], "GE", s[3]), f.And(f.Cmp(f.Max(s[3], s[5]), "LT", f.K(sfmax2)), f.Cmp(f.Min(f.Min(f.Min(s[0], s[1]), s[4]), s[2]), "GT", f.K(sfmin2))))
	}, func(lb *expander, s []*hlo.Instruction) []*hlo.Instruction {
		var err error
		defer mustBuild(&err)
		f := lb.expr(one, &err)
		two := f.K(2)
		return []*hlo.Instruction{f.Div(s[0], two), f.Div(s[1], two), f.Div(s[2], two), f.Mul(s[3], two), f.Div(s[4], two), f.Mul(s[5], two)}
	})
	f, cf, rf := b.element(down, 0), b.element(down, 1), b.element(down, 3)
	di := b.reshape(b.batched(rt, nil).slice(b.reshape(d, n, 1), []int64{1, 1}, i, zero))
	skip := es.Or(es.Or(es.Cmp(c, "EQ", es.K(0)), es.Cmp(r, "EQ", es.K(0))), es.Cmp(es.Add(cf, rf), "GE", es.Mul(es.K(0.95), es.Add(c, r))))
	skip = es.Or(skip, es.And(es.And(es.Cmp(f, "LT", es.K(1)), es.Cmp(di, "LT", es.K(1))), es.Cmp(es.Mul(f, di), "LE", es.K(sfmin1))))
	skip = es.Or(skip, es.And(es.And(es.Cmp(f, "GT", es.K(1)), es.Cmp(di, "GT", es.K(1))), es.Cmp(di, "GE", es.Div(es.K(sfmax1), f))))
	skip = es.Or(skip, isNaN)
	fUse := es.Sel(skip, es.K(1), f)
	fT := b.full(b.convert(fUse, t), row.Shape)
	newRow := b.inst(hlo.OpDivide, row.Shape, row, fT)
	m = x.update(m, b.reshape(newRow, 1, n), i, zero)
	colNow := b.reshape(x.slice(m, []int64{n, 1}, zero, i), n)
	m = x.update(m, b.reshape(b.inst(hlo.OpMultiply, colNow.Shape, colNow, fT), n, 1), zero, i)
	d = b.setVec(d, es.Mul(di, fUse), i)
	changed = es.Or(changed, es.Not(skip))
	nan = es.Or(nan, isNaN)
	return []*hlo.Instruction{ei.Add(i, ei.K(1)), changed, nan, m, d, lo, hi}
}

// realPart is the type of t's parts: t itself when real.
func realPart(t hlo.ElementType) hlo.ElementType {
	if rt, ok := t.ComplexPart(); ok {
		return rt
	}
	return t
}

// balancing is gebal's result as values of the program: the active
// block [lo, hi] (s32 scalars) its permutation leaves (isolate), where
// each row went (at, s32 [n]: row r of the matrix is row at[r] of the
// permuted one) and the scaling's diagonal D (d, [n] of the part type;
// nil for none).
type balancing struct{ lo, hi, at, d *hlo.Instruction }

// isolate is the evaluator's isolate (gebal's permutation, job 'P') of
// the n x n m: a while loop whose iteration pushes the last row with
// only zeros off the diagonal in the active columns [0, hi] down to hi,
// then one whose iteration pushes the first column with only zeros off
// the diagonal in the active rows [lo, hi] left to lo, each until no
// line qualifies. It returns the permuted m and the balancing (d nil).
func (b *expander) isolate(in, m *hlo.Instruction) (*hlo.Instruction, balancing) {
	n := m.Shape.Dims[0]
	pred, s32, atSh := hlo.ArrayShape(hlo.PRED), hlo.ArrayShape(hlo.S32), hlo.ArrayShape(hlo.S32, n)
	// (more, lo, hi, m, at)
	state := hlo.TupleShape(pred, s32, s32, m.Shape, atSh)
	phase := func(init *hlo.Instruction, rows bool) *hlo.Instruction {
		name := in.Name + ".isolate.columns"
		if rows {
			name = in.Name + ".isolate.rows"
		}
		return b.whileLoop(in, name, state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
			var err error
			defer mustBuild(&err)
			ei := cb.expr(s32, &err)
			return cb.expr(pred, &err).And(e[0], ei.Cmp(e[1], "LT", e[2]))
		}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
			return lb.isolateStep(e, rows)
		})
	}
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.PRED, 1), b.constant(hlo.S32, 0), b.constant(hlo.S32, n-1), m, b.iota(hlo.S32, 0, n))
	w := phase(init, true)
	get := func(w *hlo.Instruction, k int) *hlo.Instruction { return b.element(w, k) }
	w = phase(b.inst(hlo.OpTuple, state, b.constant(hlo.PRED, 1), get(w, 1), get(w, 2), get(w, 3), get(w, 4)), false)
	return get(w, 3), balancing{lo: get(w, 1), hi: get(w, 2), at: get(w, 4)}
}

// isolateStep is one iteration of isolate's loop over rows (rows) or
// columns (state: more, lo, hi, m, at): the line j found (the last
// qualifying row or the first qualifying column) exchanged with hi or
// lo, rows and columns both, and the block shrunk by it; more false
// when none qualifies.
func (b *expander) isolateStep(e []*hlo.Instruction, rows bool) []*hlo.Instruction {
	lo, hi, m, at := e[1], e[2], e[3], e[4]
	sh := m.Shape
	n := sh.Dims[0]
	var err error
	defer mustBuild(&err)
	ei, ev := b.expr(hlo.ArrayShape(hlo.S32), &err), b.expr(hlo.ArrayShape(hlo.S32, n), &err)
	ep, pv := b.expr(hlo.ArrayShape(hlo.PRED, sh.Dims...), &err), b.expr(hlo.ArrayShape(hlo.PRED, n), &err)
	r, c := b.iota(hlo.S32, 0, n, n), b.iota(hlo.S32, 1, n, n)
	full := func(x *hlo.Instruction) *hlo.Instruction { return b.full(x, r.Shape) }
	// Nonzero elements off the diagonal within the active lines: a
	// row's columns [0, hi]; a column's rows [lo, hi].
	off := ep.And(b.compare(m, b.zeros(sh), "NE"), b.compare(r, c, "NE"))
	line, across := int(0), c // the lines searched run along dimension 0 (rows), across dimension 1
	if !rows {
		line, across = 1, r
	}
	off = ep.And(off, b.compare(across, full(hi), "LE"))
	if !rows {
		off = ep.And(off, b.compare(across, full(lo), "GE"))
	}
	busy := b.reduceDim(off, 1-line, hlo.OpOr, b.constant(hlo.PRED, 0))
	idx := b.iota(hlo.S32, 0, n)
	inBlock := pv.And(ev.Cmp(idx, "GE", b.full(lo, idx.Shape)), ev.Cmp(idx, "LE", b.full(hi, idx.Shape)))
	cand := pv.And(pv.Not(busy), inBlock)
	var j, dest, found *hlo.Instruction
	if rows { // the last such row, to hi
		j = b.reduceDim(ev.Sel(cand, idx, ev.K(-1)), 0, hlo.OpMaximum, ei.K(-1))
		dest, found = hi, ei.Cmp(j, "GE", ei.K(0))
	} else { // the first such column, to lo
		j = b.reduceDim(ev.Sel(cand, idx, ev.K(float64(n))), 0, hlo.OpMinimum, ei.K(float64(n)))
		dest, found = lo, ei.Cmp(j, "LT", ei.K(float64(n)))
	}
	j = ei.Sel(found, j, dest) // none: an exchange of dest with itself
	m = b.exchange(m, j, dest)
	at = ev.Sel(ev.Cmp(at, "EQ", b.full(j, at.Shape)), b.full(dest, at.Shape),
		ev.Sel(ev.Cmp(at, "EQ", b.full(dest, at.Shape)), b.full(j, at.Shape), at))
	if rows {
		hi = ei.Sel(found, ei.Sub(hi, ei.K(1)), hi)
	} else {
		lo = ei.Sel(found, ei.Add(lo, ei.K(1)), lo)
	}
	return []*hlo.Instruction{found, lo, hi, m, at}
}

// exchange swaps rows i and j of the n x n m, then columns i and j (s32
// scalars; the same index leaves m as it is), by selects: exact.
func (b *expander) exchange(m, i, j *hlo.Instruction) *hlo.Instruction {
	sh := m.Shape
	n := sh.Dims[0]
	x := b.batched(sh.Elem, nil)
	zero := b.constant(hlo.S32, 0)
	swap := func(m *hlo.Instruction, d int) *hlo.Instruction {
		pos := b.iota(hlo.S32, d, n, n)
		sz := []int64{1, n}
		at := func(k *hlo.Instruction) *hlo.Instruction { // line k, spread over the matrix
			if d == 0 {
				return b.along(b.reshape(x.slice(m, sz, k, zero), n), sh, 1)
			}
			return b.along(b.reshape(x.slice(m, []int64{n, 1}, zero, k), n), sh, 0)
		}
		is := func(k *hlo.Instruction) *hlo.Instruction { return b.compare(pos, b.full(k, pos.Shape), "EQ") }
		return b.sel(is(i), at(j), b.sel(is(j), at(i), m))
	}
	return swap(swap(m, 0), 1)
}

// rowsAt is matrix v with its rows put back in the order of the matrix
// isolate permuted: row r is v's row at[r] (a gather).
func (b *expander) rowsAt(v, at *hlo.Instruction) *hlo.Instruction {
	n, cols := at.Shape.Dims[0], v.Shape.Dims[1]
	g := b.inst(hlo.OpGather, v.Shape, v, b.reshape(at, n, 1))
	g.A.Gather = &hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0},
		IndexVectorDim: 1, SliceSizes: []int64{1, cols}}
	return g
}
