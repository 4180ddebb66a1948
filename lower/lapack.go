package lower

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// The custom-calls vkjit knows (hlo.KnownCustomCall) as the ops they are
// made of, expanded with triangular-solve and cholesky (expandLinalg):
// one device's sharding annotations pass their operand on; LAPACK's trsm
// and potrf, which JAX's CPU lowering calls for jnp.linalg's solves and
// Cholesky factors, are triangular-solve and cholesky with LAPACK's
// letters read; geqrf and orgqr (QR) are while loops of a Householder
// reflector per iteration, as LAPACK's unblocked geqr2 and org2r compute
// them, each step over the whole matrix with masks (the rows and columns
// a step does not touch selected back), so that a step is two dots. The
// evaluator computes the same calls apart (hlo/eval/lapack.go).

func (b *expander) customCall(in *hlo.Instruction) (*hlo.Instruction, error) {
	c, err := hlo.KnownCustomCall(in)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	if c == nil {
		return in, nil // checkSupport names it
	}
	as := func(op hlo.Opcode, sh hlo.Shape) *hlo.Instruction {
		x := &hlo.Instruction{Name: in.Name, Op: op, Shape: sh, Operands: in.Operands, Pos: in.Pos}
		x.A.LeftSide, x.A.Lower, x.A.UnitDiagonal, x.A.TransposeA = c.LeftSide, c.Lower, c.UnitDiagonal, c.Transpose
		return x
	}
	var res []*hlo.Instruction
	switch c.Kind {
	case hlo.CallIdentity:
		if in.Shape.IsTuple() {
			return b.inst(hlo.OpTuple, in.Shape, in.Operands...), nil
		}
		return b.inst(hlo.OpReshape, in.Shape, in.Operands[0]), nil
	case hlo.CallTrsm:
		ts := as(hlo.OpTriangularSolve, in.Shape)
		if c.Alpha { // older jaxlib: x = op(a)^-1 (alpha b)
			rhs := ts.Operands[1]
			ts.Operands = []*hlo.Instruction{ts.Operands[0], b.binary(hlo.OpMultiply, rhs, in.Operands[2])}
		}
		return b.triangularSolve(ts)
	case hlo.CallPotrf:
		return b.potrf(in, as(hlo.OpCholesky, in.Operands[0].Shape)), nil
	case hlo.CallGeqrf:
		h, tau := b.geqrf(in, in.Operands[0], in.Shape.Tuple[1])
		res = []*hlo.Instruction{h, tau}
	case hlo.CallGeqp3:
		res = b.geqp3(in)
	case hlo.CallOrgqr:
		res = []*hlo.Instruction{b.orgqr(in, in.Operands[0], in.Operands[1])}
	case hlo.CallGesdd:
		res = b.gesdd(in, c.Mode)
	case hlo.CallGetrf:
		// One matrix of 9 to 32 rows and columns: the row loop on the
		// device (16x16 14.5 -> 0.47 ms, 32x32 40.2 -> 3.0 ms); up to 64
		// elements the whole-matrix loop is a device loop already (8x8:
		// 0.26 ms against 0.53); from 64 rows the row loop's kernel spends
		// its iteration bound in many dispatches (64x64: 58.6 ms against
		// 1.74 s). vkjit bench --iterations 10.
		if d := in.Operands[0].Shape.Dims; in.Operands[0].Shape.NumElements() == d[len(d)-2]*d[len(d)-1] && d[len(d)-2]*d[len(d)-1] > 64 && d[len(d)-2] <= 32 && d[len(d)-1] <= 32 {
			return b.getrfRows(in), nil
		}
		return b.getrf(in), nil
	case hlo.CallSyevd:
		return b.syevd(in, c.Lower), nil
	case hlo.CallGeev:
		res = b.geev(in, c)
	case hlo.CallGees:
		res = b.gees(in, c)
	case hlo.CallGehrd:
		res = b.gehrd(in)
	case hlo.CallGtsv:
		res = b.gtsv(in)
	case hlo.CallSytrd:
		res = b.sytrd(in, c.Lower)
	case hlo.CallCsrMatmul:
		return b.csrMatmul(in), nil
	case hlo.CallOrmqr:
		return b.ormqr(in, c.LeftSide, c.Transpose == "ADJOINT"), nil
	case hlo.CallGtsvPerturbed:
		return b.gtsvPerturbed(in), nil
	case hlo.CallApproxTopK: // exact, as XLA's ApproxTopKFallback
		n := len(in.Operands) / 2
		size := in.Shape
		if size.IsTuple() {
			size = size.Tuple[0]
		}
		res = b.sortedFirst(in.Operands[:n], int(c.Dim), size.Dims[c.Dim], in.Called[0])
	case hlo.CallTopK: // topk with its own comparator, which expandTopK expands
		tk := b.inst(hlo.OpTopK, in.Shape, in.Operands...)
		tk.Called = in.Called
		tk.A.K = in.Shape.Tuple[0].Dims[in.Shape.Tuple[0].Rank()-1]
		return tk, nil
	default:
		return in, nil
	}
	if in.Shape.IsArray() {
		return res[0], nil
	}
	for _, i := range c.Zeros { // older jaxlib's info and work
		res = append(res, b.zeros(in.Shape.Tuple[i]))
	}
	return b.inst(hlo.OpTuple, in.Shape, res...), nil
}

// compare is x dir y, elementwise.
func (b *expander) compare(x, y *hlo.Instruction, dir string) *hlo.Instruction {
	c := b.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED, x.Shape.Dims...), x, y)
	c.A.Direction = dir
	return c
}

func (b *expander) sel(p, x, y *hlo.Instruction) *hlo.Instruction {
	return b.inst(hlo.OpSelect, x.Shape, p, x, y)
}

// full is scalar x broadcast to sh's dimensions.
func (b *expander) full(x *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	return b.bcast(x, sh.Dims...)
}

// swapAlong is v with the positions isA and isB mark along dimension d
// exchanged (one of each in every line along d; the same one where they
// coincide). Each side is summed out of v masked to -0, from -0, which
// gives the value bit for bit: its sign where it is a zero, NaNs and
// infinities as they are (a mask of +0 made -0 into +0). Matrices of a
// batch each swap their own lines: the positions are data, not slices.
func (b *expander) swapAlong(v *hlo.Instruction, d int, isA, isB *hlo.Instruction) *hlo.Instruction {
	t := v.Shape.Elem
	nz := b.inst(hlo.OpNegate, hlo.ArrayShape(t), b.constant(t, 0)) // -0 (-0 - 0i; 0 for integers)
	var others []int64
	for i := range v.Shape.Dims {
		if i != d {
			others = append(others, int64(i))
		}
	}
	at := func(mask *hlo.Instruction) *hlo.Instruction {
		line := b.reduceDim(b.sel(mask, v, b.full(nz, v.Shape)), d, hlo.OpAdd, nz)
		bc := b.inst(hlo.OpBroadcast, v.Shape, line)
		bc.A.Dimensions, bc.A.HasDimensions = others, true
		return bc
	}
	return b.sel(isA, at(isB), b.sel(isB, at(isA), v))
}

// one is 1 of type t (complex: 1 + 0i).
func (b *expander) one(t hlo.ElementType) *hlo.Instruction {
	rt, _ := t.ComplexPart()
	return b.convert(b.constant(rt, 1), t)
}

// ormqr is LAPACK's ormqr (hlo.CallOrmqr): Q made whole by orgqr's
// loop over a's first m columns (zero columns past its own, whose taus
// are none: H = I), then one dot with c, Q or its adjoint from the left
// or the right, as the evaluator computes it. (LAPACK applies the
// reflectors to c one by one; forming Q first is as stable, and one dot.)
func (b *expander) ormqr(in *hlo.Instruction, left, adjoint bool) *hlo.Instruction {
	a, tau, c := in.Operands[0], in.Operands[1], in.Operands[2]
	sh := a.Shape
	r := sh.Rank()
	m, ka := sh.Dims[r-2], sh.Dims[r-1]
	sq := a
	if ka > m {
		sq = b.slice(a, r-1, 0, m)
	} else if ka < m {
		sq = b.padAlong(a, r-1, 0, m-ka, b.constant(sh.Elem, 0))
	}
	q := b.orgqr(in, sq, tau)
	if adjoint {
		q = b.conj(q)
	}
	x := b.batched(sh.Elem, sh.Dims[:r-2])
	// op(Q)[i, p] is Q[i, p] or conj(Q[p, i]): the dot contracts Q's
	// columns or rows.
	qc := int64(r - 1)
	if adjoint {
		qc = int64(r - 2)
	}
	if left {
		return x.dot(c.Shape, q, c, qc, int64(r-2))
	}
	return x.dot(c.Shape, c, q, int64(r-1), int64(2*r-3)-qc)
}

// binaryComputation is op over two scalars of type t, a reducer's or a
// scatter's combiner, named after the instruction b expands and suffix.
func (b *expander) binaryComputation(suffix string, t hlo.ElementType, op hlo.Opcode) *hlo.Computation {
	c := b.scalarComputation(suffix, t, t)
	c.Root = &hlo.Instruction{Name: c.Name + "/op", Op: op, Shape: hlo.ArrayShape(t), Operands: c.Params, Pos: b.from.Pos}
	c.Instructions = append(c.Instructions, c.Root)
	return c
}

// scalarComputation is a computation of scalar parameters of types ts
// (named name/p0, name/p1, ...) and nothing else yet, named after the
// instruction b expands and suffix.
func (b *expander) scalarComputation(suffix string, ts ...hlo.ElementType) *hlo.Computation {
	name := b.from.Name + suffix
	c := &hlo.Computation{Name: name, Pos: b.from.Pos}
	for i, t := range ts {
		p := &hlo.Instruction{Name: fmt.Sprintf("%s/p%d", name, i), Op: hlo.OpParameter, Shape: hlo.ArrayShape(t), ParamNum: i, Pos: b.from.Pos}
		c.Params = append(c.Params, p)
		c.Instructions = append(c.Instructions, p)
	}
	return c
}

// reduceDim reduces dimension d of x by op from init.
func (b *expander) reduceDim(x *hlo.Instruction, d int, op hlo.Opcode, init *hlo.Instruction) *hlo.Instruction {
	return b.reduceDims(x, []int64{int64(d)}, op, init)
}

// reduceDims reduces dimensions ds of x (in increasing order) by op from
// init.
func (b *expander) reduceDims(x *hlo.Instruction, ds []int64, op hlo.Opcode, init *hlo.Instruction) *hlo.Instruction {
	t := x.Shape.Elem
	c := b.binaryComputation("/reducer", t, op)
	var dims []int64
	for d, k := range x.Shape.Dims {
		if !slices.Contains(ds, int64(d)) {
			dims = append(dims, k)
		}
	}
	r := b.inst(hlo.OpReduce, hlo.ArrayShape(t, dims...), x, init)
	r.A.Dimensions, r.A.HasDimensions = slices.Clone(ds), true
	r.Called = []*hlo.Computation{c}
	return r
}

// realOf is x's real part (x itself for real types).
func (b *expander) realOf(x *hlo.Instruction) *hlo.Instruction {
	rt, isComplex := x.Shape.Elem.ComplexPart()
	if !isComplex {
		return x
	}
	return b.inst(hlo.OpReal, hlo.ArrayShape(rt, x.Shape.Dims...), x)
}

// potrf is LAPACK's potrf by cholesky's column algorithm (ch, the
// cholesky it stands for): the factor in the uplo triangle, NaN
// throughout it for a matrix that is not positive definite, a's own
// elements in the other triangle, and info: 0, or one more than the
// first column whose pivot is not positive (or NaN), where LAPACK stops.
// The column algorithm's diagonal is NaN from that column on (0/0 for a
// zero pivot).
func (b *expander) potrf(in, ch *hlo.Instruction) *hlo.Instruction {
	a := in.Operands[0]
	sh := a.Shape
	r := sh.Rank()
	n := sh.Dims[r-1]
	l, _ := b.choleskyColumns(ch)
	rows, cols := b.iota(hlo.S32, r-2, sh.Dims...), b.iota(hlo.S32, r-1, sh.Dims...)
	d := b.realOf(b.sel(b.compare(rows, cols, "EQ"), l, b.zeros(sh)))
	piv := b.reduceDim(d, r-1, hlo.OpAdd, b.constant(d.Shape.Elem, 0)) // [batch..., n]: the diagonal
	ps := hlo.ArrayShape(hlo.S32, piv.Shape.Dims...)
	idx := b.binary(hlo.OpAdd, b.iota(hlo.S32, r-2, ps.Dims...), b.constant(hlo.S32, 1))
	none := b.constant(hlo.S32, n+1)
	first := b.reduceDim(b.sel(b.compare(piv, piv, "NE"), idx, b.full(none, ps)), r-2, hlo.OpMinimum, none)
	is := first.Shape
	failed := b.compare(first, b.full(none, is), "NE")
	info := b.sel(failed, first, b.zeros(is))
	l = b.sel(b.spreadBatch(failed, sh), b.nanLike(sh), l)
	dir := "GE"
	if !ch.A.Lower {
		l, dir = b.conjT(l), "LE"
	}
	f := b.sel(b.compare(rows, cols, dir), l, a)
	return b.inst(hlo.OpTuple, in.Shape, f, info)
}

// geqrf is LAPACK's geqr2 over a batch of m x n matrices: reflectColumn
// of column j at each iteration of a while loop.
func (b *expander) geqrf(in, a *hlo.Instruction, tauSh hlo.Shape) (h, tau *hlo.Instruction) {
	sh := a.Shape
	t := sh.Elem
	r := sh.Rank()
	k := tauSh.Dims[r-2]
	batch := sh.Dims[:r-2]
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), sh, tauSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), a, b.zeros(tauSh))
	out := b.countedLoop(in, in.Name+".geqrf", state, k, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, am, taus := e[0], e[1], e[2]
		x := lb.batched(t, batch)
		next, tau := lb.reflectColumn(x, am, j)
		tauAt := lb.inst(hlo.OpDynamicUpdateSlice, tauSh, append([]*hlo.Instruction{taus, lb.reshape(tau, x.sizes(1)...)}, x.starts(j)...)...)
		j1 := lb.inst(hlo.OpAdd, j.Shape, j, lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{j1, next, tauAt}
	})
	taus := b.inst(hlo.OpGetTupleElement, tauSh, out.Operands[0])
	taus.A.Index = 2
	return out, taus
}

// reflectColumn is geqr2's step j over the batch of m x n matrices am:
// larfg's reflector H(j) = I - tau v v^H, v(j) = 1, takes am(j:, j) to
// (beta, 0, ...) with beta = -sign(re alpha) |(alpha, x)| (a zero of
// either sign as +0) (norms scaled by their largest element, as nrm2
// and lapy3 avoid overflow), tau = (beta - alpha) / beta and v's tail x
// / (alpha - beta), or tau = 0 when x is zero and alpha real; H(j)^H is
// applied to the columns after j (a -= conj(tau) v (v^H a)), and column
// j becomes (r above it, beta, v's tail). It returns (am so updated,
// tau [..., 1, 1]).
func (lb *expander) reflectColumn(x batched, am, j *hlo.Instruction) (next, tau *hlo.Instruction) {
	sh := am.Shape
	t := sh.Elem
	r := sh.Rank()
	m, n := sh.Dims[r-2], sh.Dims[r-1]
	colSh := hlo.ArrayShape(t, x.sizes(m, 1)...)
	col := x.slice(am, x.sizes(m, 1), x.zero, j)
	ri := lb.iota(hlo.S32, r-2, colSh.Dims...)
	jc := lb.full(j, ri.Shape)
	below, at := lb.compare(ri, jc, "GT"), lb.compare(ri, jc, "EQ")
	alpha := x.slice(am, x.sizes(1, 1), j, j)
	vfull, tau, beta, skip := lb.householder(x, col, alpha, below, at)
	newCol := lb.sel(at, lb.sel(x.spread(skip, colSh), col, x.spread(beta, colSh)), lb.sel(below, vfull, col))
	// a(:, j+1:) -= conj(tau) v (v^H a).
	w := x.dot(hlo.ArrayShape(t, x.sizes(1, n)...), lb.conj(vfull), am, int64(r-2), int64(r-2))
	w = lb.inst(hlo.OpMultiply, w.Shape, w, x.spread(lb.conj(tau), w.Shape))
	upd := lb.inst(hlo.OpSubtract, sh, am, x.dot(sh, vfull, w, int64(r-1), int64(r-2)))
	after := lb.compare(lb.iota(hlo.S32, r-1, sh.Dims...), lb.full(j, hlo.ArrayShape(hlo.S32, sh.Dims...)), "GT")
	return x.update(lb.sel(after, upd, am), newCol, x.zero, j), tau
}

// householder is larfg (zlarfg) of the column col ([..., m, 1] in x's
// batch), alpha ([..., 1, 1]) its element at the row where at is true
// and x its rows where below is: the reflector H = I - tau v v^H with
// H^H col = beta e_at on those rows, v = 1 at at, x / (alpha - beta)
// below and zero elsewhere, beta = -sign(re alpha) |(alpha, x)| real (a
// zero of either sign as +0) (norms scaled by their largest element, as
// nrm2 and lapy3 avoid overflow), tau = (beta - alpha) / beta; or, where
// skip ([..., 1, 1]) is true (x zero and alpha real), tau = 0 and v =
// e_at. It returns (v, tau, beta as col's type, skip).
func (lb *expander) householder(x batched, col, alpha, below, at *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction, *hlo.Instruction, *hlo.Instruction) {
	colSh := col.Shape
	t := colSh.Elem
	rt, isComplex := t.ComplexPart()
	r := colSh.Rank()
	one := alpha.Shape
	oneR := hlo.ArrayShape(rt, one.Dims...)
	xs := lb.sel(below, col, lb.zeros(colSh))
	// A column of magnitudes below 2^-(bias/2) (a rank-deficient
	// matrix's roundoff, shrinking a column at a time) is scaled by a
	// power of two into [1/2, 1) first, as larfg rescales a tiny
	// beta: 1 / (alpha - beta) overflowed and v became 0 * inf =
	// NaN (a 12x12 of ones in f32 from its eighth column). beta is
	// scaled back; tau and v do not change with the scale.
	absx := lb.inst(hlo.OpAbs, hlo.ArrayShape(rt, colSh.Dims...), xs)
	s := lb.reshape(lb.reduceDim(absx, r-2, hlo.OpMaximum, lb.constant(rt, 0)), oneR.Dims...)
	k := lb.tinyScale(lb.inst(hlo.OpMaximum, oneR, s, lb.abs1(alpha)))
	xs, alpha, s = lb.scaleEach(xs, x.spread(k, hlo.ArrayShape(hlo.S32, colSh.Dims...))), lb.scaleEach(alpha, k), lb.scaleEach(s, k)
	absx = lb.inst(hlo.OpAbs, hlo.ArrayShape(rt, colSh.Dims...), xs)
	xnorm := lb.reshape(lb.scaledNorm(absx, lb.reshape(s, x.sizes(1)...), r-2), oneR.Dims...)
	zeroR, oneRc := lb.zeros(oneR), lb.full(lb.constant(rt, 1), oneR)
	// |(alpha, x)| = hi sqrt(1 + (lo/hi)^2).
	aabs := lb.inst(hlo.OpAbs, oneR, alpha)
	hi, lo := lb.inst(hlo.OpMaximum, oneR, aabs, xnorm), lb.inst(hlo.OpMinimum, oneR, aabs, xnorm)
	ratio := lb.inst(hlo.OpDivide, oneR, lo, lb.sel(lb.compare(hi, zeroR, "EQ"), oneRc, hi))
	norm := lb.inst(hlo.OpMultiply, oneR, hi, lb.inst(hlo.OpSqrt, oneR, lb.inst(hlo.OpAdd, oneR, oneRc, lb.inst(hlo.OpMultiply, oneR, ratio, ratio))))
	// beta = -sign(re alpha) norm, a zero of either sign as +0 (the
	// evaluator's rule: the reflector does not hang on a zero's sign).
	negative := lb.compare(lb.realOf(alpha), zeroR, "LT")
	beta := lb.convert(lb.sel(negative, norm, lb.inst(hlo.OpNegate, oneR, norm)), t)
	skip := lb.compare(xnorm, zeroR, "EQ")
	if isComplex {
		im := lb.inst(hlo.OpImag, oneR, alpha)
		skip = lb.inst(hlo.OpAnd, skip.Shape, skip, lb.compare(im, zeroR, "EQ"))
	}
	tau := lb.sel(skip, lb.zeros(one), lb.inst(hlo.OpDivide, one, lb.inst(hlo.OpSubtract, one, beta, alpha), beta))
	scale := lb.inst(hlo.OpDivide, one, lb.full(lb.one(t), one), lb.inst(hlo.OpSubtract, one, alpha, beta))
	skipC := x.spread(skip, colSh)
	v := lb.sel(skipC, xs, lb.inst(hlo.OpMultiply, colSh, xs, x.spread(scale, colSh)))
	vfull := lb.sel(at, lb.full(lb.one(t), colSh), v)
	return vfull, tau, lb.scaleEach(beta, lb.inst(hlo.OpNegate, k.Shape, k)), skip
}

// scaledNorm is the Euclidean norm of the real magnitudes mag along
// their dimension d, s their largest there (mag's shape without d): s
// sqrt(sum (mag / s)^2), as nrm2 keeps the squares from overflowing
// and underflowing; 0 where s is.
func (b *expander) scaledNorm(mag, s *hlo.Instruction, d int) *hlo.Instruction {
	rt := mag.Shape.Elem
	safe := b.sel(b.compare(s, b.zeros(s.Shape), "EQ"), b.full(b.constant(rt, 1), s.Shape), s)
	sb := b.inst(hlo.OpBroadcast, mag.Shape, safe)
	for i := range mag.Shape.Rank() {
		if i != d {
			sb.A.Dimensions = append(sb.A.Dimensions, int64(i))
		}
	}
	sb.A.HasDimensions = true
	q := b.inst(hlo.OpDivide, mag.Shape, mag, sb)
	ss := b.reduceDim(b.inst(hlo.OpMultiply, q.Shape, q, q), d, hlo.OpAdd, b.constant(rt, 0))
	return b.inst(hlo.OpMultiply, s.Shape, s, b.inst(hlo.OpSqrt, s.Shape, ss))
}

// orgqr is LAPACK's org2r (ung2r): Q = H(0) ... H(k-1) applied to the
// m x n identity, the last reflector first (Q -= tau v (v^H Q)), v read
// from geqrf's column below the diagonal with v(i) = 1. Each reflector
// leaves the columns before its own as the identity's, so the product
// applied to whole columns is org2r's column by column.
func (b *expander) orgqr(in, a, tau *hlo.Instruction) *hlo.Instruction {
	sh := a.Shape // the result's (its first element, for older jaxlib's tuple)
	t := sh.Elem
	r := sh.Rank()
	m, n := sh.Dims[r-2], sh.Dims[r-1]
	k := tau.Shape.Dims[r-2]
	batch := sh.Dims[:r-2]
	eye := b.identity(sh)
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), sh, sh, tau.Shape)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), eye, a, tau)
	return b.countedLoop(in, in.Name+".orgqr", state, k, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, q, am, taus := e[0], e[1], e[2], e[3]
		x := lb.batched(t, batch)
		i := lb.inst(hlo.OpSubtract, j.Shape, lb.constant(hlo.S32, k-1), j)
		colSh := hlo.ArrayShape(t, x.sizes(m, 1)...)
		col := x.slice(am, x.sizes(m, 1), x.zero, i)
		ri := lb.iota(hlo.S32, r-2, colSh.Dims...)
		ic := lb.full(i, ri.Shape)
		v := lb.sel(lb.compare(ri, ic, "EQ"), lb.full(lb.one(t), colSh), lb.sel(lb.compare(ri, ic, "GT"), col, lb.zeros(colSh)))
		ti := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(t, x.sizes(1)...), append([]*hlo.Instruction{taus}, x.starts(i)...)...)
		ti.A.DynSliceSizes = x.sizes(1)
		w := x.dot(hlo.ArrayShape(t, x.sizes(1, n)...), lb.conj(v), q, int64(r-2), int64(r-2))
		w = lb.inst(hlo.OpMultiply, w.Shape, w, x.spread(lb.reshape(ti, x.sizes(1, 1)...), w.Shape))
		next := lb.inst(hlo.OpSubtract, sh, q, x.dot(sh, v, w, int64(r-1), int64(r-2)))
		j1 := lb.inst(hlo.OpAdd, j.Shape, j, lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{j1, next, am, taus}
	})
}

// getrf is LAPACK's getf2 over a batch of m x n matrices, a column per
// iteration of a while loop: the pivot is the first row at or below j
// of largest |re| + |im| (i?amax), found by a max and a min over masked
// rows (each matrix its own, so rows are swapped by masks, not by
// dynamic slices); the column below the pivot is scaled by its
// reciprocal (divided by it below the smallest normal, where the
// reciprocal overflows), the trailing block updated by one dot, and a
// zero pivot leaves the column and records info.
func (b *expander) getrf(in *hlo.Instruction) *hlo.Instruction {
	a := in.Operands[0]
	sh, pivSh, infoSh := a.Shape, in.Shape.Tuple[1], in.Shape.Tuple[2]
	t := sh.Elem
	rt, _ := t.ComplexPart()
	r := sh.Rank()
	m, n := sh.Dims[r-2], sh.Dims[r-1]
	k := pivSh.Dims[r-2]
	batch := sh.Dims[:r-2]
	sfmin := smallestNormalBits[rt]
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), sh, pivSh, infoSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), a, b.zeros(pivSh), b.zeros(infoSh))
	out := b.countedLoop(in, in.Name+".getrf", state, k, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, am, ipiv, info := e[0], e[1], e[2], e[3]
		x := lb.batched(t, batch)
		colSh := hlo.ArrayShape(t, x.sizes(m, 1)...)
		one := hlo.ArrayShape(t, x.sizes(1, 1)...)
		col := x.slice(am, x.sizes(m, 1), x.zero, j)
		ri := lb.iota(hlo.S32, r-2, colSh.Dims...)
		jc := lb.full(j, ri.Shape)
		// The pivot row p: the first of largest |re| + |im| at or below j.
		mag := lb.abs1(col)
		mag = lb.sel(lb.compare(ri, jc, "GE"), mag, lb.full(lb.convert(lb.constant(hlo.S32, -1), rt), mag.Shape))
		p := lb.reshape(lb.firstOfMax(mag, r-2), x.sizes(1, 1)...)
		p = lb.sel(lb.compare(p, lb.full(lb.constant(hlo.S32, m), p.Shape), "EQ"), lb.full(j, p.Shape), p) // NaNs: no row is largest
		// Rows j and p swapped.
		isP := lb.compare(lb.iota(hlo.S32, r-2, sh.Dims...), x.spread(p, sh), "EQ")
		isJ := lb.compare(lb.iota(hlo.S32, r-2, sh.Dims...), lb.full(j, hlo.ArrayShape(hlo.S32, sh.Dims...)), "EQ")
		swapped := lb.swapAlong(am, r-2, isJ, isP)
		// The column below the pivot scaled, unless the pivot is zero.
		col = x.slice(swapped, x.sizes(m, 1), x.zero, j)
		piv := x.slice(swapped, x.sizes(1, 1), j, j)
		zero := lb.compare(piv, lb.zeros(one), "EQ")
		small := lb.compare(lb.inst(hlo.OpAbs, hlo.ArrayShape(rt, one.Dims...), piv), lb.full(lb.floatBits(rt, sfmin), hlo.ArrayShape(rt, one.Dims...)), "LT")
		recip := lb.inst(hlo.OpDivide, one, lb.full(lb.one(t), one), piv)
		scaled := lb.sel(x.spread(small, colSh), lb.inst(hlo.OpDivide, colSh, col, x.spread(piv, colSh)), lb.inst(hlo.OpMultiply, colSh, col, x.spread(recip, colSh)))
		below := lb.compare(ri, jc, "GT")
		l := lb.sel(below, lb.sel(x.spread(zero, colSh), col, scaled), lb.zeros(colSh))
		withCol := x.update(swapped, lb.sel(below, l, col), x.zero, j)
		// a(j+1:, j+1:) -= l u, u row j right of the pivot.
		u := x.slice(withCol, x.sizes(1, n), j, x.zero)
		cols := lb.iota(hlo.S32, r-1, sh.Dims...)
		after := lb.compare(cols, lb.full(j, cols.Shape), "GT")
		upd := lb.inst(hlo.OpSubtract, sh, withCol, x.dot(sh, l, u, int64(r-1), int64(r-2)))
		next := lb.sel(after, upd, withCol)
		p1 := lb.inst(hlo.OpAdd, p.Shape, p, lb.full(lb.constant(hlo.S32, 1), p.Shape))
		ipiv = lb.inst(hlo.OpDynamicUpdateSlice, pivSh, append([]*hlo.Instruction{ipiv, lb.reshape(p1, x.sizes(1)...)}, x.starts(j)...)...)
		j1 := lb.inst(hlo.OpAdd, j.Shape, j, lb.constant(hlo.S32, 1))
		first := lb.inst(hlo.OpAnd, infoSh, lb.reshape(zero, batch...), lb.compare(info, lb.zeros(infoSh), "EQ"))
		info = lb.sel(first, lb.full(j1, infoSh), info)
		return []*hlo.Instruction{j1, next, ipiv, info}
	})
	w := out.Operands[0]
	ipiv := b.inst(hlo.OpGetTupleElement, pivSh, w)
	ipiv.A.Index = 2
	info := b.inst(hlo.OpGetTupleElement, infoSh, w)
	info.A.Index = 3
	return b.inst(hlo.OpTuple, in.Shape, out, ipiv, info)
}

// floatBits is the scalar of type t whose bits are bits.
func (b *expander) floatBits(t hlo.ElementType, bits uint64) *hlo.Instruction {
	c := b.inst(hlo.OpConstant, hlo.ArrayShape(t))
	c.Literal, _ = hlo.NewLiteral(c.Shape, binary.LittleEndian.AppendUint64(nil, bits)[:t.Bytes()])
	return c
}

// abs1 is |re| + |im| (|x| for real types): BLAS's i?amax's measure.
func (b *expander) abs1(x *hlo.Instruction) *hlo.Instruction {
	rt, isComplex := x.Shape.Elem.ComplexPart()
	mag := b.inst(hlo.OpAbs, hlo.ArrayShape(rt, x.Shape.Dims...), b.realOf(x))
	if isComplex {
		mag = b.inst(hlo.OpAdd, mag.Shape, mag, b.inst(hlo.OpAbs, mag.Shape, b.inst(hlo.OpImag, mag.Shape, x)))
	}
	return mag
}

// firstOfMax is, along dimension d of the real mag, the first index
// where mag is largest (the dimension's size where no element equals the
// largest: NaNs).
func (b *expander) firstOfMax(mag *hlo.Instruction, d int) *hlo.Instruction {
	return b.firstNear(mag, d, 0)
}

// firstNear is firstOfMax, an element within rel of the largest counted
// as largest (the evaluator's leadNear; rel 0: the largest only).
func (b *expander) firstNear(mag *hlo.Instruction, d int, rel float64) *hlo.Instruction {
	sh := mag.Shape
	floor := b.convert(b.constant(hlo.S32, -1), sh.Elem)
	top := b.reduceDim(mag, d, hlo.OpMaximum, floor)
	dir := "EQ"
	if rel != 0 {
		var err error
		defer mustBuild(&err)
		e := b.expr(top.Shape, &err)
		top, dir = e.Mul(top, e.K(1-rel)), "GE"
	}
	big := b.inst(hlo.OpBroadcast, sh, top)
	for i := range sh.Rank() {
		if i != d {
			big.A.Dimensions = append(big.A.Dimensions, int64(i))
		}
	}
	big.A.HasDimensions = true
	idx := b.iota(hlo.S32, d, sh.Dims...)
	none := b.constant(hlo.S32, sh.Dims[d])
	return b.reduceDim(b.sel(b.compare(mag, big, dir), idx, b.full(none, idx.Shape)), d, hlo.OpMinimum, none)
}

// tieTolerance is the evaluator's: how close to a vector's largest
// magnitude an element counts as largest for the canonical forms
// (firstNear), 8 n ulp of the type.
func tieTolerance(ulp float64, n int64) float64 { return 8 * float64(n) * ulp }

// The bits of f32's and f64's unit roundoff (2^-24, 2^-53: the Jacobi
// methods' thresholds, as the evaluator's) and smallest normal (getrf
// divides by a pivot below it rather than multiply by its reciprocal).
var (
	epsBits            = map[hlo.ElementType]uint64{hlo.F32: 0x33800000, hlo.F64: 0x3ca0000000000000}
	smallestNormalBits = map[hlo.ElementType]uint64{hlo.F32: 0x00800000, hlo.F64: 0x0010000000000000}
)

// jacobiSweeps bounds syevd's sweeps, as the evaluator's does.
const jacobiSweeps = 30

// syevd is the eigendecomposition of a batch of symmetric (heevd:
// Hermitian) matrices by the cyclic Jacobi method, as the evaluator computes it: the uplo
// triangle mirrored; sweeps (an outer while loop, until the off-diagonal
// norm of every matrix is at most n times the type's epsilon times its
// Frobenius norm, at most jacobiSweeps) of one rotation per pair p < q
// in row order (an inner while loop over a table of the pairs), each
// zeroing a_pq: t = sign(tau) / (|tau| + sqrt(1 + tau^2)), tau = (a_qq -
// a_pp) / (2 a_pq), applied to columns p and q, then rows p and q, of a,
// and to the columns of v, the 2 x 2 block then set as Rutishauser does
// (zeros off the diagonal, a_pp - t a_pq and a_qq + t a_pq on it); none,
// a_pq zeroed, where |a_pq| <= eps sqrt(|a_pp a_qq|), below which a
// rotation only adds rounding noise; then the diagonal sorted ascending (stably) and v's
// columns put in its order by a dot with the one-hot permutation, each
// turned so that its first largest element is real and positive.
func (b *expander) syevd(in *hlo.Instruction, lower bool) *hlo.Instruction {
	a := in.Operands[0]
	sh := a.Shape
	t := sh.Elem
	rt, isComplex := t.ComplexPart()
	r := sh.Rank()
	n := sh.Dims[r-1]
	batch := sh.Dims[:r-2]
	infoSh := in.Shape.Tuple[2]
	bSh := hlo.ArrayShape(rt, batch...)
	rows, cols := b.iota(hlo.S32, r-2, sh.Dims...), b.iota(hlo.S32, r-1, sh.Dims...)
	dir := "GE"
	if !lower {
		dir = "LE"
	}
	full := b.sel(b.compare(rows, cols, dir), a, b.conjT(a))
	if isComplex { // a Hermitian diagonal is real
		full = b.sel(b.compare(rows, cols, "EQ"), b.convert(b.realOf(full), t), full)
	}
	// Each matrix scaled by a power of two into range first, as LAPACK's
	// syevd scales one whose norm is outside [rmin, rmax]: the sweeps'
	// sums of squares underflowed to zero at magnitudes 1e-30 in f32
	// (and overflowed at 1e30), the loop stopped at once and the
	// diagonal came back as the eigenvalues; scaled back after.
	full, k := b.normScaleEach(full)
	eye := b.identity(sh)
	sumSq := func(lb *expander, x *hlo.Instruction) *hlo.Instruction { // [batch...], of |x|^2
		sq := lb.realOf(lb.inst(hlo.OpMultiply, sh, x, lb.conj(x)))
		return lb.reduceDim(lb.reduceDim(sq, r-1, hlo.OpAdd, lb.constant(rt, 0)), r-2, hlo.OpAdd, lb.constant(rt, 0))
	}
	eps := epsBits[rt]
	epsC := b.floatBits(rt, eps)
	nEps := b.inst(hlo.OpMultiply, epsC.Shape, epsC, b.convert(b.constant(hlo.S32, n), rt))
	tol2 := b.inst(hlo.OpMultiply, bSh, sumSq(b, full), b.full(b.inst(hlo.OpMultiply, epsC.Shape, nEps, nEps), bSh))
	np := n * (n - 1) / 2
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), sh, sh, bSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), full, eye, tol2)
	w := b.whileLoop(in, in.Name+".jacobi", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		offDiag := cb.sel(cb.compare(cb.iota(hlo.S32, r-2, sh.Dims...), cb.iota(hlo.S32, r-1, sh.Dims...), "EQ"), cb.zeros(sh), e[1])
		open := cb.compare(sumSq(cb, offDiag), e[3], "GT") // [batch...]
		anyOpen := cb.reduceDim(cb.reshape(open, open.Shape.NumElements()), 0, hlo.OpOr, cb.constant(hlo.PRED, 0))
		more := cb.compare(e[0], cb.constant(hlo.S32, jacobiSweeps), "LT")
		return cb.inst(hlo.OpAnd, more.Shape, more, anyOpen)
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		s32 := hlo.ArrayShape(hlo.S32)
		one := hlo.ArrayShape(t, lb.batched(t, batch).sizes(1, 1)...)
		oneR := hlo.ArrayShape(rt, one.Dims...)
		// (k, p, q, chunk, a, v, then the rotation a pair's first chunk
		// computed: c, s, conj(w), w as a's type, a_pp, a_qq, t |a_pq|).
		pairState := hlo.TupleShape(s32, s32, s32, s32, sh, sh, one, one, one, one, oneR, oneR, oneR)
		pinit := lb.inst(hlo.OpTuple, pairState, lb.constant(hlo.S32, 0), lb.constant(hlo.S32, 0), lb.constant(hlo.S32, 1), lb.constant(hlo.S32, 0), e[1], e[2],
			lb.zeros(one), lb.zeros(one), lb.zeros(one), lb.zeros(one), lb.zeros(oneR), lb.zeros(oneR), lb.zeros(oneR))
		av := lb.countedLoop(in, in.Name+".pairs", pairState, np*(n/jacobiChunk(n)), pinit, 4, func(pb *expander, pe []*hlo.Instruction) []*hlo.Instruction {
			return pb.jacobiStep(pe, batch)
		})
		vOut := lb.inst(hlo.OpGetTupleElement, sh, av.Operands[0])
		vOut.A.Index = 5
		s1 := lb.inst(hlo.OpAdd, e[0].Shape, e[0], lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{s1, av, vOut, e[3]}
	})
	am := b.inst(hlo.OpGetTupleElement, sh, w)
	am.A.Index = 1
	vm := b.inst(hlo.OpGetTupleElement, sh, w)
	vm.A.Index = 2
	diag := b.reduceDim(b.realOf(b.sel(b.compare(rows, cols, "EQ"), am, b.zeros(sh))), r-1, hlo.OpAdd, b.constant(rt, 0)) // [batch..., n]
	diag = b.scaleEach(diag, b.overBatch(k, diag.Shape.Dims))
	ws, onehot := b.orderColumns(in, diag, t, batch, false)
	vs := b.batched(t, batch).dot(sh, vm, onehot, int64(r-1), int64(r-2))
	vs = b.inst(hlo.OpMultiply, sh, vs, b.spreadCols(b.leadPhase(vs, batch, tieTolerance(2*epsilon(rt), n)), sh))
	return b.inst(hlo.OpTuple, in.Shape, vs, ws, b.zeros(infoSh))
}

// jacobiStep is one chunk of one rotation of syevd's inner loop over the
// pairs p < q in row order and, for each, the chunks of c elements of
// their rows and columns (c = jacobiChunk(n): all n up to 32, so that a
// step's kernel fits a device loop's). A pair's first chunk computes
// jacobiRotation of [[a_pp, a_pq], [conj(a_pq), a_qq]] and carries it to
// the others; each chunk applies it as a J to columns p and q of a and v
// and as J^H to rows p and q of a; the last sets the 2 x 2 block as
// Rutishauser does: exact zeros off the diagonal, a_pp - t |a_pq| and
// a_qq + t |a_pq| on it (the two-sided products lose bits to
// cancellation). Every read of a and v comes before every write (J^H's
// rows read a's old rows: they differ from a J's only inside the block,
// which the last chunk sets; a chunk may write stale block elements
// before that, which nothing else reads), and the pair is loop state,
// not a table: the loop runs on the device (lower/seqloop.go).
func (b *expander) jacobiStep(e []*hlo.Instruction, batch []int64) []*hlo.Instruction {
	k, p, q, i, am, vm := e[0], e[1], e[2], e[3], e[4], e[5]
	sh := am.Shape
	t := sh.Elem
	n := sh.Dims[sh.Rank()-1]
	c := jacobiChunk(n)
	x := b.batched(t, batch)
	one := hlo.ArrayShape(t, x.sizes(1, 1)...)
	first := b.compare(i, b.constant(hlo.S32, 0), "EQ")
	last := b.compare(i, b.constant(hlo.S32, n/c-1), "EQ")
	app, aqq := b.realOf(x.slice(am, x.sizes(1, 1), p, p)), b.realOf(x.slice(am, x.sizes(1, 1), q, q))
	apq, aqp := x.slice(am, x.sizes(1, 1), p, q), x.slice(am, x.sizes(1, 1), q, p)
	fresh := b.jacobiRotation(x, app, aqq, apq)
	pick := func(f, carried *hlo.Instruction) *hlo.Instruction {
		return b.sel(b.full(first, hlo.ArrayShape(hlo.PRED, f.Shape.Dims...)), f, carried)
	}
	rot := rotation{b: b, x: x, ct: pick(fresh.ct, e[6]), st: pick(fresh.st, e[7]), cwc: pick(fresh.cwc, e[8]), phase: pick(fresh.phase, e[9])}
	app0, aqq0 := pick(app, e[10]), pick(aqq, e[11])
	tm := pick(b.inst(hlo.OpMultiply, app.Shape, fresh.t, fresh.mag), e[12])
	at := b.inst(hlo.OpMultiply, i.Shape, i, b.constant(hlo.S32, c))
	cp, cq := rot.apply(x.slice(am, x.sizes(c, 1), at, p), x.slice(am, x.sizes(c, 1), at, q), rot.cwc)
	rp, rq := rot.apply(x.slice(am, x.sizes(1, c), p, at), x.slice(am, x.sizes(1, c), q, at), rot.phase)
	vp, vq := rot.apply(x.slice(vm, x.sizes(c, 1), at, p), x.slice(vm, x.sizes(c, 1), at, q), rot.cwc)
	a2 := x.update(x.update(am, cp, at, p), cq, at, q)
	a2 = x.update(x.update(a2, rp, p, at), rq, q, at)
	v2 := x.update(x.update(vm, vp, at, p), vq, at, q)
	// The block, on the last chunk (before it, the elements as they were).
	lastOne := b.full(last, hlo.ArrayShape(hlo.PRED, one.Dims...))
	block := func(fixed, now *hlo.Instruction) *hlo.Instruction { return b.sel(lastOne, fixed, now) }
	a2 = x.update(x.update(a2, block(b.zeros(one), apq), p, q), block(b.zeros(one), aqp), q, p)
	a2 = x.update(a2, block(b.convert(b.inst(hlo.OpSubtract, app.Shape, app0, tm), t), x.slice(am, x.sizes(1, 1), p, p)), p, p)
	a2 = x.update(a2, block(b.convert(b.inst(hlo.OpAdd, app.Shape, aqq0, tm), t), x.slice(am, x.sizes(1, 1), q, q)), q, q)
	k1 := b.inst(hlo.OpAdd, k.Shape, k, b.constant(hlo.S32, 1))
	p1, q1 := b.nextPair(p, q, n)
	p1, q1 = b.sel(last, p1, p), b.sel(last, q1, q)
	i1 := b.sel(last, b.constant(hlo.S32, 0), b.inst(hlo.OpAdd, i.Shape, i, b.constant(hlo.S32, 1)))
	return []*hlo.Instruction{k1, p1, q1, i1, a2, v2, rot.ct, rot.st, rot.cwc, rot.phase, app0, aqq0, tm}
}

// jacobiChunk is how many elements of a row or column syevd's step
// rotates at once: all n up to 32, whose step fits a device loop's
// kernel; past that the largest divisor of n up to 32.
func jacobiChunk(n int64) int64 {
	for c := min(n, 32); c > 1; c-- {
		if n%c == 0 {
			return c
		}
	}
	return 1
}

// nextPair is the pair after (p, q) among p < q < n in row order.
func (b *expander) nextPair(p, q *hlo.Instruction, n int64) (*hlo.Instruction, *hlo.Instruction) {
	one := b.constant(hlo.S32, 1)
	q1 := b.inst(hlo.OpAdd, q.Shape, q, one)
	wrap := b.compare(q1, b.constant(hlo.S32, n), "EQ")
	p1 := b.inst(hlo.OpAdd, p.Shape, p, one)
	return b.sel(wrap, p1, p), b.sel(wrap, b.inst(hlo.OpAdd, p.Shape, p1, one), q1)
}

// rotation is a Jacobi rotation of each matrix of a batch ([batch..., 1,
// 1] values): J = diag(1, conj(phase)) [[c, s], [-s, c]].
type rotation struct {
	b                  *expander
	x                  batched
	c, s, t, mag       *hlo.Instruction // real: cosine, sine, tangent, |a_pq|
	ct, st, phase, cwc *hlo.Instruction // c and s as the matrix's type; the phase; conj(phase)
}

// jacobiRotation is the rotation that zeroes a_pq of the Hermitian 2 x
// 2 [[app, apq], [conj(apq), aqq]] (app and aqq real): w = apq / |apq|
// (1 for real types) and the real rotation of [[app, |apq|], [|apq|,
// aqq]]: t = sign(tau) / (|tau| + sqrt(1 + tau^2)), tau = (aqq - app) /
// (2 |apq|), c = 1 / sqrt(1 + t^2), s = t c. None (c = 1, s = 0, w = 1)
// where |apq| <= eps sqrt(|app aqq|): below that a rotation only adds
// rounding noise. The evaluator's is the same (hlo/eval/lapack.go).
func (b *expander) jacobiRotation(x batched, app, aqq, apq *hlo.Instruction) rotation {
	t := apq.Shape.Elem
	rt := app.Shape.Elem
	oneR, one := app.Shape, apq.Shape
	mag := b.inst(hlo.OpAbs, oneR, apq)
	zero := b.compare(mag, b.zeros(oneR), "EQ")
	onesR := b.full(b.one(rt), oneR)
	two := b.convert(b.constant(hlo.S32, 2), rt)
	tau := b.inst(hlo.OpDivide, oneR, b.inst(hlo.OpSubtract, oneR, aqq, app), b.inst(hlo.OpMultiply, oneR, b.full(two, oneR), mag))
	den := b.inst(hlo.OpAdd, oneR, b.inst(hlo.OpAbs, oneR, tau), b.inst(hlo.OpSqrt, oneR, b.inst(hlo.OpAdd, oneR, onesR, b.inst(hlo.OpMultiply, oneR, tau, tau))))
	tt := b.inst(hlo.OpDivide, oneR, onesR, den)
	tt = b.sel(b.compare(tau, b.zeros(oneR), "LT"), b.inst(hlo.OpNegate, oneR, tt), tt)
	eps := epsBits[rt]
	// eps sqrt|app| sqrt|aqq|: the product of the roots, not the root of
	// the product, which overflowed for gesdd's squared column norms
	// (f32 columns of magnitude 3e9: every pair skipped, the sweeps
	// never started, singular values 40% off).
	sq := func(x *hlo.Instruction) *hlo.Instruction {
		return b.inst(hlo.OpSqrt, oneR, b.inst(hlo.OpAbs, oneR, x))
	}
	tiny := b.inst(hlo.OpMultiply, oneR, b.full(b.floatBits(rt, eps), oneR), b.inst(hlo.OpMultiply, oneR, sq(app), sq(aqq)))
	skip := b.inst(hlo.OpOr, hlo.ArrayShape(hlo.PRED, oneR.Dims...), zero, b.compare(mag, tiny, "LE"))
	tt = b.sel(skip, b.zeros(oneR), tt)
	// A skipped pair turns no phase either (the identity, as the evaluator's).
	phase := b.sel(skip, b.full(b.one(t), one), b.inst(hlo.OpDivide, one, apq, b.convert(b.sel(zero, onesR, mag), t)))
	c := b.inst(hlo.OpDivide, oneR, onesR, b.inst(hlo.OpSqrt, oneR, b.inst(hlo.OpAdd, oneR, onesR, b.inst(hlo.OpMultiply, oneR, tt, tt))))
	s := b.inst(hlo.OpMultiply, oneR, tt, c)
	return rotation{b: b, x: x, c: c, s: s, t: tt, mag: mag, ct: b.convert(c, t), st: b.convert(s, t), phase: phase, cwc: b.conj(phase)}
}

// apply gives (c u - s w' w, s u + c w' w) of two rows or columns, w'
// the phase given (conj(phase) for columns, a J; phase for rows, J^H a).
func (r rotation) apply(u, w, ph *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	b, x := r.b, r.x
	mul := func(f, g *hlo.Instruction) *hlo.Instruction { return b.inst(hlo.OpMultiply, f.Shape, f, g) }
	cs, ss := x.spread(r.ct, u.Shape), x.spread(r.st, u.Shape)
	fs, gs := x.spread(mul(r.st, ph), u.Shape), x.spread(mul(r.ct, ph), u.Shape)
	return b.inst(hlo.OpSubtract, u.Shape, mul(cs, u), mul(fs, w)), b.inst(hlo.OpAdd, u.Shape, mul(ss, u), mul(gs, w))
}

// columns applies the rotation to columns p and q of m (m J).
func (r rotation) columns(m, p, q *hlo.Instruction) *hlo.Instruction {
	x := r.x
	rows := m.Shape.Dims[m.Shape.Rank()-2]
	cp, cq := r.apply(x.slice(m, x.sizes(rows, 1), x.zero, p), x.slice(m, x.sizes(rows, 1), x.zero, q), r.cwc)
	return x.update(x.update(m, cp, x.zero, p), cq, x.zero, q)
}

// gesdd is the singular value decomposition by one-sided Jacobi
// (Hestenes), as the evaluator computes it (hlo/eval/lapack.go): on x =
// a, or a^H when a is wide, of M >= N rows and columns; sweeps (a while
// loop, while the Gram matrix x^H x has a pair above eps sqrt(g_pp g_qq),
// at most jacobiSweeps) of one rotation per pair of columns (an inner
// loop over a table of the pairs), jacobiRotation of the pair's Gram
// matrix applied to the columns of x and of v (from the identity); v's
// columns then normalized and x made again as a v; the singular values
// are the columns' norms, descending, with the columns
// of x and v in that order (one-hot dots), each pair turned so that v's
// column's first largest element is real and positive; x's columns
// normalized, and where a singular value is zero or past N (mode 'A'),
// the columns of Q from the QR (geqrf, orgqr) of the normalized columns,
// which completes them to an orthonormal basis. u and vt are x's and
// v^H, or for a wide a, v and x's^H. It returns (zeros for a's
// overwritten array, s, u, vt).
func (b *expander) gesdd(in *hlo.Instruction, mode byte) []*hlo.Instruction {
	a := in.Operands[0]
	t := a.Shape.Elem
	rt, _ := t.ComplexPart()
	r := a.Shape.Rank()
	m, n := a.Shape.Dims[r-2], a.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	sSh, uSh, vtSh := in.Shape.Tuple[1], in.Shape.Tuple[2], in.Shape.Tuple[3]
	wide := m < n
	M, N := max(m, n), min(m, n)
	x0 := a
	if wide {
		x0 = b.conjT(a)
	}
	// Each matrix scaled by a power of two into range first, as LAPACK's
	// gesdd scales one whose norm is outside [smlnum, bignum]: the
	// columns' squared norms overflowed at magnitudes 1e30 in f32 (every
	// singular value +Inf) and underflowed at 1e-30; the singular values
	// are scaled back, u and v do not change with it.
	x0, k := b.normScaleEach(x0)
	bt := b.batched(t, batch)
	mat := func(rows, cols int64) hlo.Shape { return hlo.ArrayShape(t, bt.sizes(rows, cols)...) }
	xSh, vSh, gSh := mat(M, N), mat(N, N), mat(N, N)
	eps := epsBits[rt]
	np := N * (N - 1) / 2
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), xSh, vSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), x0, b.identity(vSh))
	w := b.whileLoop(in, in.Name+".svd", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		x := cb.batched(t, batch)
		g := x.dot(gSh, cb.conj(e[1]), e[1], int64(r-2), int64(r-2)) // x^H x
		rows, cols := cb.iota(hlo.S32, r-2, gSh.Dims...), cb.iota(hlo.S32, r-1, gSh.Dims...)
		rg := hlo.ArrayShape(rt, gSh.Dims...)
		d := cb.reduceDim(cb.realOf(cb.sel(cb.compare(rows, cols, "EQ"), g, cb.zeros(gSh))), r-1, hlo.OpAdd, cb.constant(rt, 0)) // [batch..., N]
		dr, dc := cb.inst(hlo.OpBroadcast, rg, d), cb.inst(hlo.OpBroadcast, rg, d)
		dr.A.Dimensions, dr.A.HasDimensions = append(x.dims(), int64(r-2)), true
		dc.A.Dimensions, dc.A.HasDimensions = append(x.dims(), int64(r-1)), true
		bound := cb.inst(hlo.OpMultiply, rg, cb.full(cb.floatBits(rt, eps), rg), cb.inst(hlo.OpMultiply, rg, cb.inst(hlo.OpSqrt, rg, dr), cb.inst(hlo.OpSqrt, rg, dc)))
		open := cb.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, rg.Dims...), cb.compare(rows, cols, "NE"), cb.compare(cb.inst(hlo.OpAbs, rg, g), bound, "GT"))
		anyOpen := cb.reduceDim(cb.reshape(open, open.Shape.NumElements()), 0, hlo.OpOr, cb.constant(hlo.PRED, 0))
		more := cb.compare(e[0], cb.constant(hlo.S32, jacobiSweeps), "LT")
		return cb.inst(hlo.OpAnd, more.Shape, more, anyOpen)
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		s32 := hlo.ArrayShape(hlo.S32)
		one := mat(1, 1)
		oneR := hlo.ArrayShape(rt, one.Dims...)
		c := M // columns of up to 64 rows fit a device loop's registers whole
		if M > 64 {
			c = jacobiChunk(gcd(M, N))
		}
		nc := M / c
		// (k, p, q, chunk, x, v, the pair's sums alpha, beta, gamma, and
		// its rotation: c, s, conj(w) as x's type).
		pairState := hlo.TupleShape(s32, s32, s32, s32, xSh, vSh, oneR, oneR, one, one, one, one)
		pinit := lb.inst(hlo.OpTuple, pairState, lb.constant(hlo.S32, 0), lb.constant(hlo.S32, 0), lb.constant(hlo.S32, 1), lb.constant(hlo.S32, 0), e[1], e[2],
			lb.zeros(oneR), lb.zeros(oneR), lb.zeros(one), lb.zeros(one), lb.zeros(one), lb.zeros(one))
		steps := np * 2 * nc
		if c == M {
			steps = np
		}
		xv := lb.countedLoop(in, in.Name+".pairs", pairState, steps, pinit, 4, func(pb *expander, pe []*hlo.Instruction) []*hlo.Instruction {
			if c == M {
				return pb.svdPair(pe, batch, N)
			}
			return pb.svdStep(pe, batch, c, N)
		})
		vOut := lb.inst(hlo.OpGetTupleElement, vSh, xv.Operands[0])
		vOut.A.Index = 5
		s1 := lb.inst(hlo.OpAdd, e[0].Shape, e[0], lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{s1, xv, vOut}
	})
	vm := b.inst(hlo.OpGetTupleElement, vSh, w)
	vm.A.Index = 2
	// v's columns normalized (the rotations' product drifts from unit
	// norm by their rounding, and every singular value with it: 19.0 ->
	// 2.6 ulp of the largest against LAPACK, f32 64x32,
	// bench/accuracy/lapack.sh), and x made again as x0 v.
	vr := hlo.ArrayShape(rt, vSh.Dims...)
	vn := b.inst(hlo.OpSqrt, sSh, b.reduceDim(b.realOf(b.inst(hlo.OpMultiply, vSh, vm, b.conj(vm))), r-2, hlo.OpAdd, b.constant(rt, 0)))
	vnc := b.inst(hlo.OpBroadcast, vr, vn)
	vnc.A.Dimensions, vnc.A.HasDimensions = append(bt.dims(), int64(r-1)), true
	vm = b.inst(hlo.OpDivide, vSh, vm, b.convert(vnc, t))
	xm := bt.dot(xSh, x0, vm, int64(r-1), int64(r-2))
	// Singular values descending, x's and v's columns in their order.
	xr := hlo.ArrayShape(rt, xSh.Dims...)
	sig := b.inst(hlo.OpSqrt, sSh, b.reduceDim(b.realOf(b.inst(hlo.OpMultiply, xSh, xm, b.conj(xm))), r-2, hlo.OpAdd, b.constant(rt, 0)))
	ss, onehot := b.orderColumns(in, sig, t, batch, true)
	sOut := b.scaleEach(ss, b.overBatch(k, ss.Shape.Dims))
	if mode == 'N' { // singular values only
		return []*hlo.Instruction{b.zeros(in.Shape.Tuple[0]), sOut, b.zeros(uSh), b.zeros(vtSh)}
	}
	xs := bt.dot(xSh, xm, onehot, int64(r-1), int64(r-2))
	vs := bt.dot(vSh, vm, onehot, int64(r-1), int64(r-2))
	// Each pair turned so that v's column's first largest element is real
	// and positive.
	ph := b.leadPhase(vs, batch, tieTolerance(2*epsilon(rt), N))
	vs = b.inst(hlo.OpMultiply, vSh, vs, b.spreadCols(ph, vSh))
	xs = b.inst(hlo.OpMultiply, xSh, xs, b.spreadCols(ph, xSh))
	// x's columns normalized (zero where the singular value is), then
	// completed by the QR of them.
	sigCols := b.spreadCols(ss, xr)
	nz := b.compare(sigCols, b.zeros(xr), "NE")
	xn := b.sel(nz, b.inst(hlo.OpDivide, xSh, xs, b.convert(b.sel(nz, sigCols, b.full(b.one(rt), xr)), t)), b.zeros(xSh))
	cols := N
	if mode == 'A' {
		cols = M
	}
	cSh := mat(M, cols)
	padded := xn
	if cols > N {
		padded = b.concat(r-1, xn, b.zeros(mat(M, cols-N)))
	}
	h, taus := b.geqrf(in, padded, hlo.ArrayShape(t, bt.sizes(cols)...))
	qm := b.orgqr(in, h, taus)
	sPad := ss
	if cols > N {
		sPad = b.concat(r-2, ss, b.zeros(hlo.ArrayShape(rt, bt.sizes(cols-N)...)))
	}
	keep := b.compare(b.spreadCols(sPad, hlo.ArrayShape(rt, cSh.Dims...)), b.zeros(hlo.ArrayShape(rt, cSh.Dims...)), "NE")
	uc := b.sel(keep, padded, qm)
	var u, vt *hlo.Instruction
	if !wide {
		u, vt = uc, b.conjT(vs)
	} else {
		u, vt = vs, b.conjT(uc)
	}
	return []*hlo.Instruction{b.zeros(in.Shape.Tuple[0]), sOut, u, vt}
}

// spreadCols broadcasts x [batch..., c] over the columns of sh's
// dimensions, as x's type.
func (b *expander) spreadCols(x *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	r := sh.Rank()
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, sh.Dims...), x)
	bc.A.Dimensions, bc.A.HasDimensions = append(iotaDims(r-2), int64(r-1)), true
	return bc
}

// orderColumns sorts key [batch..., n] along its last dimension, stably,
// ascending or descending, and returns the sorted key and the one-hot
// permutation [batch..., n, n] of type t whose dot from the right puts a
// matrix's columns in that order.
func (b *expander) orderColumns(in, key *hlo.Instruction, t hlo.ElementType, batch []int64, descending bool) (sorted, onehot *hlo.Instruction) {
	r := key.Shape.Rank() + 1
	n := key.Shape.Dims[r-2]
	idx := b.iota(hlo.S32, r-2, key.Shape.Dims...)
	srt := b.inst(hlo.OpSort, hlo.TupleShape(key.Shape, idx.Shape), key, idx)
	name := "/ascending"
	if descending {
		name = "/descending"
	}
	srt.Called = []*hlo.Computation{comparator(in.Name+name, key.Shape.Elem, descending)}
	srt.A.Dimensions, srt.A.HasDimensions, srt.A.IsStable = []int64{int64(r - 2)}, true, true
	sorted = b.inst(hlo.OpGetTupleElement, key.Shape, srt)
	sorted.A.Index = 0
	perm := b.inst(hlo.OpGetTupleElement, idx.Shape, srt)
	perm.A.Index = 1
	sh := hlo.ArrayShape(t, append(append([]int64{}, batch...), n, n)...)
	rows := b.iota(hlo.S32, r-2, sh.Dims...)
	onehot = b.sel(b.compare(rows, b.spreadCols(perm, sh), "EQ"), b.full(b.one(t), sh), b.zeros(sh))
	return sorted, onehot
}

// leadPhase is, for each column of v [batch..., m, n], the phase (sign)
// that makes its first largest element (to rel: tieTolerance, so that
// elements equal in exact arithmetic, a Laplacian's first and last, do
// not leave the choice to rounding) real and positive (1 for a zero
// column): LAPACK's is arbitrary, and this one does not hang on the
// rounding of which pairs a Jacobi sweep rotated. The evaluator's is the
// same.
func (b *expander) leadPhase(v *hlo.Instruction, batch []int64, rel float64) *hlo.Instruction {
	rt, _ := v.Shape.Elem.ComplexPart()
	return b.leadPhaseAt(v, batch, b.firstNear(b.inst(hlo.OpAbs, hlo.ArrayShape(rt, v.Shape.Dims...), v), v.Shape.Rank()-2, rel))
}

// leadPhaseAt is leadPhase with each column's lead element at row first
// (an s32 per column).
func (b *expander) leadPhaseAt(v *hlo.Instruction, batch []int64, first *hlo.Instruction) *hlo.Instruction {
	sh := v.Shape
	t := sh.Elem
	rt, _ := t.ComplexPart()
	r := sh.Rank()
	colR := hlo.ArrayShape(rt, append(append([]int64{}, batch...), sh.Dims[r-1])...)
	rows := b.iota(hlo.S32, r-2, sh.Dims...)
	lead := b.reduceDim(b.sel(b.compare(rows, b.spreadCols(first, rows.Shape), "EQ"), v, b.zeros(sh)), r-2, hlo.OpAdd, b.constant(t, 0))
	leadAbs := b.inst(hlo.OpAbs, colR, lead)
	zeroLead := b.compare(leadAbs, b.zeros(colR), "EQ")
	return b.sel(zeroLead, b.full(b.one(t), lead.Shape), b.inst(hlo.OpDivide, lead.Shape, b.conj(lead), b.convert(b.sel(zeroLead, b.full(b.one(rt), colR), leadAbs), t)))
}

// svdStep is one chunk of gesdd's inner loop over the pairs of columns
// p < q in row order and, for each, 2 M/c chunks of c rows (c divides M
// and N; up to 32): the first M/c sum the pair's Gram matrix (alpha =
// |x_p|^2, beta = |x_q|^2, gamma = x_p^H x_q) chunk by chunk, the next
// compute jacobiRotation of it on their first and rotate a chunk of x's
// columns p and q each (and of v's while its N rows last). A chunk reads
// before it writes, the state is scalars and the two arrays: the loop
// runs on the device (lower/seqloop.go), however tall x is.
func (b *expander) svdStep(e []*hlo.Instruction, batch []int64, c, N int64) []*hlo.Instruction {
	k, p, q, i, xm, vm := e[0], e[1], e[2], e[3], e[4], e[5]
	t := xm.Shape.Elem
	r := xm.Shape.Rank()
	M := xm.Shape.Dims[r-2]
	nc := M / c
	x := b.batched(t, batch)
	one := hlo.ArrayShape(t, x.sizes(1, 1)...)
	sum := b.compare(i, b.constant(hlo.S32, nc), "LT")
	start := b.compare(i, b.constant(hlo.S32, 0), "EQ")
	turn := b.compare(i, b.constant(hlo.S32, nc), "EQ")
	last := b.compare(i, b.constant(hlo.S32, 2*nc-1), "EQ")
	j := b.sel(sum, i, b.inst(hlo.OpSubtract, i.Shape, i, b.constant(hlo.S32, nc))) // the chunk of rows
	at := b.inst(hlo.OpMultiply, i.Shape, j, b.constant(hlo.S32, c))
	xp, xq := x.slice(xm, x.sizes(c, 1), at, p), x.slice(xm, x.sizes(c, 1), at, q)
	dot := func(u, w *hlo.Instruction) *hlo.Instruction { return x.dot(one, b.conj(u), w, int64(r-2), int64(r-2)) }
	spread := func(pr *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
		return b.full(pr, hlo.ArrayShape(hlo.PRED, sh.Dims...))
	}
	// The sums: restarted on a pair's first chunk, grown while summing.
	acc := func(carried, d *hlo.Instruction) *hlo.Instruction {
		base := b.sel(spread(start, carried.Shape), b.zeros(carried.Shape), carried)
		return b.sel(spread(sum, carried.Shape), b.inst(hlo.OpAdd, carried.Shape, base, d), carried)
	}
	alpha, beta := acc(e[6], b.realOf(dot(xp, xp))), acc(e[7], b.realOf(dot(xq, xq)))
	gamma := acc(e[8], dot(xp, xq))
	fresh := b.jacobiRotation(x, alpha, beta, gamma)
	pick := func(f, carried *hlo.Instruction) *hlo.Instruction { return b.sel(spread(turn, f.Shape), f, carried) }
	rot := rotation{b: b, x: x, ct: pick(fresh.ct, e[9]), st: pick(fresh.st, e[10]), cwc: pick(fresh.cwc, e[11])}
	// The rotation of a chunk of x's columns, and of v's while its rows
	// last; the chunk as it was while summing.
	apply := func(m *hlo.Instruction, rows int64) *hlo.Instruction {
		atM := b.inst(hlo.OpMultiply, i.Shape, b.sel(b.compare(j, b.constant(hlo.S32, rows/c), "LT"), j, b.constant(hlo.S32, rows/c-1)), b.constant(hlo.S32, c))
		write := b.inst(hlo.OpAnd, sum.Shape, b.inst(hlo.OpNot, sum.Shape, sum), b.compare(j, b.constant(hlo.S32, rows/c), "LT"))
		up, uq := x.slice(m, x.sizes(c, 1), atM, p), x.slice(m, x.sizes(c, 1), atM, q)
		rp, rq := rot.apply(up, uq, rot.cwc)
		w := spread(write, up.Shape)
		return x.update(x.update(m, b.sel(w, rp, up), atM, p), b.sel(w, rq, uq), atM, q)
	}
	k1 := b.inst(hlo.OpAdd, k.Shape, k, b.constant(hlo.S32, 1))
	p1, q1 := b.nextPair(p, q, N)
	p1, q1 = b.sel(last, p1, p), b.sel(last, q1, q)
	i1 := b.sel(last, b.constant(hlo.S32, 0), b.inst(hlo.OpAdd, i.Shape, i, b.constant(hlo.S32, 1)))
	return []*hlo.Instruction{k1, p1, q1, i1, apply(xm, M), apply(vm, N), alpha, beta, gamma, rot.ct, rot.st, rot.cwc}
}

// svdPair is one pair of gesdd's inner loop over the pairs of columns p
// < q in row order when x's columns fit a device loop's registers whole
// (up to 64 rows): the Gram matrix's sums by three dots, jacobiRotation
// of it, applied to x's and v's columns p and q. The state is
// svdStep's, its chunk and sums unused.
func (b *expander) svdPair(e []*hlo.Instruction, batch []int64, N int64) []*hlo.Instruction {
	k, p, q, xm, vm := e[0], e[1], e[2], e[4], e[5]
	t := xm.Shape.Elem
	r := xm.Shape.Rank()
	M := xm.Shape.Dims[r-2]
	x := b.batched(t, batch)
	one := hlo.ArrayShape(t, x.sizes(1, 1)...)
	xp, xq := x.slice(xm, x.sizes(M, 1), x.zero, p), x.slice(xm, x.sizes(M, 1), x.zero, q)
	dot := func(u, w *hlo.Instruction) *hlo.Instruction { return x.dot(one, b.conj(u), w, int64(r-2), int64(r-2)) }
	rot := b.jacobiRotation(x, b.realOf(dot(xp, xp)), b.realOf(dot(xq, xq)), dot(xp, xq))
	k1 := b.inst(hlo.OpAdd, k.Shape, k, b.constant(hlo.S32, 1))
	p1, q1 := b.nextPair(p, q, N)
	return []*hlo.Instruction{k1, p1, q1, e[3], rot.columns(xm, p, q), rot.columns(vm, p, q), e[6], e[7], e[8], e[9], e[10], e[11]}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// getrfRows is getrf of one matrix of at most 32 rows and columns (a
// batch of one), as a loop over (column j, row i >= j) that runs on the
// device: its first iteration of a column finds the pivot (the first
// row at or below j of largest |re| + |im|, i?amax), swaps rows j and p,
// records ipiv and info, and scales the column below the pivot by its
// reciprocal (divides below the smallest normal); each later one
// subtracts l_i u from row i right of j. An iteration reads rows and
// columns before writing them, and writes back what it does not change:
// row i first, then rows j and p, then column j. The arithmetic is
// getrf's element for element, and the evaluator's.
func (b *expander) getrfRows(in *hlo.Instruction) *hlo.Instruction {
	a := in.Operands[0]
	r := a.Shape.Rank()
	m, n := a.Shape.Dims[r-2], a.Shape.Dims[r-1]
	k := min(m, n)
	t := a.Shape.Elem
	rt, _ := t.ComplexPart()
	sh := hlo.ArrayShape(t, m, n)
	pivSh, infoSh := hlo.ArrayShape(hlo.S32, k), hlo.ArrayShape(hlo.S32)
	s32 := hlo.ArrayShape(hlo.S32)
	sfmin := smallestNormalBits[rt]
	state := hlo.TupleShape(s32, s32, sh, pivSh, infoSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.constant(hlo.S32, 0), b.reshape(a, m, n), b.zeros(pivSh), b.zeros(infoSh))
	w := b.whileLoop(in, in.Name+".getrf", state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, k), "LT")
	}, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, i, am, ipiv, info := e[0], e[1], e[2], e[3], e[4]
		x := lb.batched(t, nil)
		colSh, rowSh := hlo.ArrayShape(t, m, 1), hlo.ArrayShape(t, 1, n)
		pivot := lb.compare(i, j, "EQ")
		one := lb.constant(hlo.S32, 1)
		// The pivot row: the first of largest |re| + |im| at or below j.
		col := x.slice(am, []int64{m, 1}, x.zero, j)
		ri := lb.iota(hlo.S32, 0, m, 1)
		mag := lb.abs1(col)
		mag = lb.sel(lb.compare(ri, lb.full(j, ri.Shape), "GE"), mag, lb.full(lb.convert(lb.constant(hlo.S32, -1), rt), mag.Shape))
		none := lb.constant(hlo.S32, m)
		p := lb.reshape(lb.firstOfMax(mag, 0))
		p = lb.sel(lb.inst(hlo.OpOr, pivot.Shape, lb.compare(p, none, "EQ"), lb.inst(hlo.OpNot, pivot.Shape, pivot)), j, p) // NaNs: no row is largest
		rowJ, rowP, rowI := x.slice(am, []int64{1, n}, j, x.zero), x.slice(am, []int64{1, n}, p, x.zero), x.slice(am, []int64{1, n}, i, x.zero)
		piv := x.slice(am, []int64{1, 1}, p, j)
		// Column j swapped and scaled below the pivot.
		colJ, colP := lb.full(lb.reshape(piv), colSh), lb.full(lb.reshape(x.slice(am, []int64{1, 1}, j, j)), colSh)
		swapped := lb.sel(lb.compare(ri, lb.full(j, ri.Shape), "EQ"), colJ, lb.sel(lb.compare(ri, lb.full(p, ri.Shape), "EQ"), colP, col))
		pv := lb.reshape(piv)
		zero := lb.compare(pv, lb.constant(t, 0), "EQ")
		small := lb.compare(lb.inst(hlo.OpAbs, hlo.ArrayShape(rt), pv), lb.floatBits(rt, sfmin), "LT")
		scaled := lb.sel(lb.full(small, hlo.ArrayShape(hlo.PRED, m, 1)), lb.inst(hlo.OpDivide, colSh, swapped, lb.full(pv, colSh)),
			lb.inst(hlo.OpMultiply, colSh, swapped, lb.full(lb.inst(hlo.OpDivide, pv.Shape, lb.one(t), pv), colSh)))
		below := lb.compare(ri, lb.full(j, ri.Shape), "GT")
		newCol := lb.sel(lb.inst(hlo.OpAnd, below.Shape, below, lb.full(lb.inst(hlo.OpNot, zero.Shape, zero), below.Shape)), scaled, swapped)
		// Row i less l_i u right of j, on the later iterations.
		li := lb.reshape(x.slice(am, []int64{1, 1}, i, j))
		ci := lb.iota(hlo.S32, 1, 1, n)
		right := lb.compare(ci, lb.full(j, ci.Shape), "GT")
		upd := lb.sel(right, lb.inst(hlo.OpSubtract, rowSh, rowI, lb.inst(hlo.OpMultiply, rowSh, lb.full(li, rowSh), rowJ)), rowI)
		pr := lb.full(pivot, hlo.ArrayShape(hlo.PRED, 1, n))
		pc := lb.full(pivot, hlo.ArrayShape(hlo.PRED, m, 1))
		next := x.update(am, lb.sel(pr, rowI, upd), i, x.zero)
		next = x.update(next, lb.sel(pr, rowP, rowJ), j, x.zero)
		next = x.update(next, lb.sel(pr, rowJ, rowP), p, x.zero)
		next = x.update(next, lb.sel(pc, newCol, col), x.zero, j)
		// ipiv and info on the pivot iteration.
		p1 := lb.reshape(lb.inst(hlo.OpAdd, p.Shape, p, one), 1)
		old := lb.inst(hlo.OpDynamicSlice, hlo.ArrayShape(hlo.S32, 1), ipiv, j)
		old.A.DynSliceSizes = []int64{1}
		ipiv = lb.inst(hlo.OpDynamicUpdateSlice, pivSh, ipiv, lb.sel(lb.full(pivot, p1.Shape), p1, old), j)
		firstZero := lb.inst(hlo.OpAnd, pivot.Shape, lb.inst(hlo.OpAnd, pivot.Shape, pivot, zero), lb.compare(info, lb.constant(hlo.S32, 0), "EQ"))
		info = lb.sel(firstZero, lb.inst(hlo.OpAdd, j.Shape, j, one), info)
		// The next (column, row): row m-1 ends a column.
		endCol := lb.compare(i, lb.constant(hlo.S32, m-1), "EQ")
		j1 := lb.sel(endCol, lb.inst(hlo.OpAdd, j.Shape, j, one), j)
		i1 := lb.sel(endCol, j1, lb.inst(hlo.OpAdd, i.Shape, i, one))
		return []*hlo.Instruction{j1, i1, next, ipiv, info}
	})
	get := func(idx int, s hlo.Shape) *hlo.Instruction {
		g := b.inst(hlo.OpGetTupleElement, s, w)
		g.A.Index = int64(idx)
		return g
	}
	lu := b.reshape(get(2, sh), a.Shape.Dims...)
	piv := b.reshape(get(3, pivSh), in.Shape.Tuple[1].Dims...)
	info := b.reshape(get(4, infoSh), in.Shape.Tuple[2].Dims...)
	return b.inst(hlo.OpTuple, in.Shape, lu, piv, info)
}
