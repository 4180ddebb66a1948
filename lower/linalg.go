package lower

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// expandLinalg rewrites triangular-solve and cholesky into the ops they
// are made of, on
// the entry inlineCalls copied: every form (either side, either
// triangle, a transposed or conjugate-transposed a, a unit diagonal)
// becomes a lower, left-side, untransposed solve by transposes and
// reversals of a and b, which forward substitution solves one row of x
// at a time in a while loop: x_i = (b_i - a_i,<i . x) / a_ii, the row of
// a masked to its strict lower triangle (the other triangle is not read,
// as XLA's definition says) and x zero where it is not solved yet, so
// that each step is one dot over the whole row. It runs before lower
// complex, which takes complex solves on from there. Cholesky is the
// same kind of loop, a column of l per iteration (cholesky).
func expandLinalg(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpTriangularSolve: (*expander).triangularSolve,
		hlo.OpCholesky:        func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) { return b.cholesky(in), nil },
		hlo.OpCustomCall:      (*expander).customCall, // LAPACK's calls and sharding annotations (lapack.go)
	})
}

// swapLast transposes the last two dimensions.
func (b *expander) swapLast(x *hlo.Instruction) *hlo.Instruction {
	r := x.Shape.Rank()
	perm := iotaDims(r)
	perm[r-2], perm[r-1] = int64(r-1), int64(r-2)
	return b.transpose(x, perm...)
}

func (b *expander) reverse(x *hlo.Instruction, dims ...int64) *hlo.Instruction {
	r := b.inst(hlo.OpReverse, x.Shape, x)
	r.A.Dimensions, r.A.HasDimensions = dims, true
	return r
}

// conj is the complex conjugate (x itself for real types).
func (b *expander) conj(x *hlo.Instruction) *hlo.Instruction {
	rt, isComplex := x.Shape.Elem.ComplexPart()
	if !isComplex {
		return x
	}
	ps := hlo.ArrayShape(rt, x.Shape.Dims...)
	re := b.inst(hlo.OpReal, ps, x)
	im := b.inst(hlo.OpNegate, ps, b.inst(hlo.OpImag, ps, x))
	return b.inst(hlo.OpComplex, x.Shape, re, im)
}

// conjT is the conjugate transpose of the last two dimensions (the
// transpose, for real types).
func (b *expander) conjT(x *hlo.Instruction) *hlo.Instruction { return b.conj(b.swapLast(x)) }

// param adds the parameter of a loop's computation.
func (b *expander) param(sh hlo.Shape) *hlo.Instruction {
	return b.inst(hlo.OpParameter, sh)
}

// countedLoop builds while (state.0 < n) { state = body(state) }, the
// state a tuple whose element 0 is the s32 counter, and returns element
// keep of its result. body gets the state's elements and returns the
// next state's, the counter's increment included.
func (b *expander) countedLoop(in *hlo.Instruction, name string, state hlo.Shape, n int64, init *hlo.Instruction, keep int,
	body func(lb *expander, elems []*hlo.Instruction) []*hlo.Instruction) *hlo.Instruction {
	w := b.whileLoop(in, name, state, init, func(cb *expander, e []*hlo.Instruction) *hlo.Instruction {
		return cb.compare(e[0], cb.constant(hlo.S32, n), "LT")
	}, body)
	return b.element(w, keep)
}

// element is element k of the tuple x.
func (b *expander) element(x *hlo.Instruction, k int) *hlo.Instruction {
	g := b.inst(hlo.OpGetTupleElement, x.Shape.Tuple[k], x)
	g.A.Index = int64(k)
	return g
}

// identity is the identity matrix in the last two dimensions of sh (its
// first columns where they are not square), over its batch dimensions.
func (b *expander) identity(sh hlo.Shape) *hlo.Instruction {
	r := sh.Rank()
	return b.sel(b.compare(b.iota(hlo.S32, r-2, sh.Dims...), b.iota(hlo.S32, r-1, sh.Dims...), "EQ"), b.full(b.one(sh.Elem), sh), b.zeros(sh))
}

// whileLoop builds while (cond(state)) { state = body(state) } over the
// tuple state and returns the while; cond and body get the state's
// elements.
func (b *expander) whileLoop(in *hlo.Instruction, name string, state hlo.Shape, init *hlo.Instruction,
	cond func(cb *expander, e []*hlo.Instruction) *hlo.Instruction,
	body func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction) *hlo.Instruction {
	elems := func(x *expander) (*hlo.Instruction, []*hlo.Instruction) {
		p := x.param(state)
		es := make([]*hlo.Instruction, len(state.Tuple))
		for i := range es {
			es[i] = x.element(p, i)
		}
		return p, es
	}
	cb := &expander{from: in, n: b.n}
	cp, ce := elems(cb)
	c := cond(cb, ce)
	cc := &hlo.Computation{Name: name + ".cond", Pos: in.Pos, Params: []*hlo.Instruction{cp}, Instructions: cb.out, Root: c}
	cc.Instructions = cc.Reachable() // the state's elements the condition does not read
	lb := &expander{from: in, n: b.n}
	bp, be := elems(lb)
	root := lb.inst(hlo.OpTuple, state, body(lb, be)...)
	bc := &hlo.Computation{Name: name + ".body", Pos: in.Pos, Params: []*hlo.Instruction{bp}, Instructions: lb.out, Root: root}
	w := b.inst(hlo.OpWhile, state, init)
	w.Called = []*hlo.Computation{cc, bc}
	return w
}

// batched slices batches of matrices: the batch dimensions whole, a
// block of the last two at dynamic starts.
type batched struct {
	b     *expander
	t     hlo.ElementType
	batch []int64
	zero  *hlo.Instruction
}

func (b *expander) batched(t hlo.ElementType, batch []int64) batched {
	return batched{b: b, t: t, batch: batch, zero: b.constant(hlo.S32, 0)}
}

func (x batched) starts(last ...*hlo.Instruction) []*hlo.Instruction {
	var s []*hlo.Instruction
	for range x.batch {
		s = append(s, x.zero)
	}
	return append(s, last...)
}

func (x batched) sizes(last ...int64) []int64 { return append(append([]int64{}, x.batch...), last...) }

func (x batched) dims() []int64 {
	d := make([]int64, len(x.batch))
	for i := range d {
		d[i] = int64(i)
	}
	return d
}

// slice is the block of v of sizes sz (batch dimensions and two) at the
// last two dimensions' starts i, j.
func (x batched) slice(v *hlo.Instruction, sz []int64, i, j *hlo.Instruction) *hlo.Instruction {
	d := x.b.inst(hlo.OpDynamicSlice, hlo.ArrayShape(x.t, sz...), append([]*hlo.Instruction{v}, x.starts(i, j)...)...)
	d.A.DynSliceSizes = sz
	return d
}

// update writes block u into v at the last two dimensions' starts i, j.
func (x batched) update(v, u, i, j *hlo.Instruction) *hlo.Instruction {
	return x.b.inst(hlo.OpDynamicUpdateSlice, v.Shape, append([]*hlo.Instruction{v, u}, x.starts(i, j)...)...)
}

// dot contracts dimension lc of p with dimension rc of q, batch
// dimensions matched.
func (x batched) dot(sh hlo.Shape, p, q *hlo.Instruction, lc, rc int64) *hlo.Instruction {
	d := x.b.inst(hlo.OpDot, sh, p, q)
	bd := x.dims()
	d.A.Dot = &hlo.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContract: []int64{lc}, RhsContract: []int64{rc}}
	return d
}

// spread broadcasts a [batch..., 1, 1] block over sh's dimensions
// ([batch..., k, m]), as the block's type.
func (x batched) spread(d *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	dr := x.b.inst(hlo.OpReshape, hlo.ArrayShape(d.Shape.Elem, x.batch...), d)
	db := x.b.inst(hlo.OpBroadcast, hlo.ArrayShape(d.Shape.Elem, sh.Dims...), dr)
	db.A.Dimensions, db.A.HasDimensions = x.dims(), true
	return db
}

// triangle selects where row and column indices compare as dir (over the
// last two dimensions of sh, or of the block at row offset j) x's
// element, else zero.
func (b *expander) triangle(x *hlo.Instruction, dir string, rowOffset *hlo.Instruction, colDim bool) *hlo.Instruction {
	sh := x.Shape
	r := sh.Rank()
	s32 := hlo.ArrayShape(hlo.S32, sh.Dims...)
	rows := b.inst(hlo.OpIota, s32)
	rows.A.IotaDim = int64(r - 2)
	var cols *hlo.Instruction
	if colDim {
		cols = b.inst(hlo.OpIota, s32)
		cols.A.IotaDim = int64(r - 1)
	} else {
		cols = b.inst(hlo.OpBroadcast, s32, rowOffset)
		cols.A.HasDimensions = true
	}
	keep := b.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED, sh.Dims...), rows, cols)
	keep.A.Direction = dir
	return b.inst(hlo.OpSelect, sh, keep, x, b.zeros(sh))
}

func (b *expander) triangularSolve(in *hlo.Instruction) (*hlo.Instruction, error) {
	a, rhs := in.Operands[0], in.Operands[1]
	r := a.Shape.Rank()
	lower := in.A.Lower
	switch in.A.TransposeA {
	case "TRANSPOSE":
		a, lower = b.swapLast(a), !lower
	case "ADJOINT":
		a, lower = b.conjT(a), !lower
	}
	if !in.A.LeftSide { // x op(a) = b as op(a)^T x^T = b^T
		a = b.swapLast(a)
		lower = !lower
		rhs = b.swapLast(rhs)
	}
	if !lower { // reversing rows and columns makes an upper triangle lower
		a = b.reverse(a, int64(r-2), int64(r-1))
		rhs = b.reverse(rhs, int64(r-2))
	}
	x := b.forward(in, a, rhs)
	if !lower {
		x = b.reverse(x, int64(r-2))
	}
	if !in.A.LeftSide {
		x = b.swapLast(x)
	}
	return x, nil
}

// forward solves a x = rhs for a lower triangular a by forward
// substitution in a while loop over the rows.
func (b *expander) forward(in, a, rhs *hlo.Instruction) *hlo.Instruction {
	t := a.Shape.Elem
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	m := rhs.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	masked := b.triangle(a, "GT", nil, true) // the strict lower triangle
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), rhs.Shape, a.Shape, rhs.Shape, a.Shape)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.zeros(rhs.Shape), masked, rhs, a)
	return b.countedLoop(in, in.Name+".solve", state, n, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		i, xs, am, bb, aa := e[0], e[1], e[2], e[3], e[4]
		x := lb.batched(t, batch)
		row := x.slice(am, x.sizes(1, n), i, x.zero)
		s := x.dot(hlo.ArrayShape(t, x.sizes(1, m)...), row, xs, int64(r-1), int64(r-2))
		bi := x.slice(bb, x.sizes(1, m), i, x.zero)
		xi := lb.inst(hlo.OpSubtract, bi.Shape, bi, s)
		if !in.A.UnitDiagonal {
			xi = lb.inst(hlo.OpDivide, bi.Shape, xi, x.spread(x.slice(aa, x.sizes(1, 1), i, i), bi.Shape))
		}
		i1 := lb.inst(hlo.OpAdd, i.Shape, i, lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{i1, x.update(xs, xi, i, x.zero), am, bb, aa}
	})
}

// cholesky is XLA's cholesky (its cholesky_expander): l lower triangular
// with a = l l^H (lower=true), or u upper with a = u^H u, reading only
// that triangle of a (a matrix of order 1: its square root, XLA's block
// of one); the other triangle of the result is zero, and a
// matrix with a pivot whose square root is NaN (negative, or NaN) is NaN
// throughout. The upper form is the lower one of a^H,
// conjugate-transposed back.
func (b *expander) cholesky(in *hlo.Instruction) *hlo.Instruction {
	var l, failed *hlo.Instruction
	if a := in.Operands[0]; a.Shape.Dims[a.Shape.Rank()-1] == 1 {
		// XLA factors a block of one as its square root (0 for 0); its
		// unblocked loop (choleskyColumns) divides the whole column by
		// it, the diagonal w_jj / sqrt(w_jj) too (0/0 for 0).
		rt, isComplex := a.Shape.Elem.ComplexPart()
		l = b.inst(hlo.OpSqrt, hlo.ArrayShape(rt, a.Shape.Dims...), b.realOf(a))
		failed = b.reshape(b.compare(l, l, "NE"), a.Shape.Dims[:a.Shape.Rank()-2]...)
		if isComplex {
			l = b.convert(l, a.Shape.Elem)
		}
	} else {
		l, failed = b.choleskyColumns(in)
	}
	nan := b.nanLike(l.Shape)
	l = b.sel(b.spreadBatch(failed, l.Shape), nan, l)
	if !in.A.Lower {
		l = b.conjT(l)
	}
	return l
}

// choleskyColumns is the column algorithm of cholesky's lower form,
// before a failed matrix is made NaN: column j of l, in the j-th
// iteration of a while loop, is (a_:,j - l l_j,:^H) / d, zero above the
// diagonal, d the square root of its j-th element (of its real part, for
// complex types, as XLA takes it): l is zero in the columns not computed
// yet, so one dot makes the sum over k < j. failed ([batch...] pred)
// holds where a pivot's square root was NaN.
func (b *expander) choleskyColumns(in *hlo.Instruction) (l, failed *hlo.Instruction) {
	a := in.Operands[0]
	if !in.A.Lower {
		a = b.conjT(a)
	}
	t := a.Shape.Elem
	rt, isComplex := t.ComplexPart()
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	errSh := hlo.ArrayShape(hlo.PRED, batch...)
	am := b.triangle(a, "GE", nil, true)
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), a.Shape, a.Shape, errSh)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.zeros(a.Shape), am, b.zeros(errSh))
	l = b.countedLoop(in, in.Name+".cholesky", state, n, init, 1, func(lb *expander, e []*hlo.Instruction) []*hlo.Instruction {
		j, l, aa, seen := e[0], e[1], e[2], e[3]
		x := lb.batched(t, batch)
		lj := lb.conj(x.slice(l, x.sizes(1, n), j, x.zero)) // row j of l, conjugated
		col := hlo.ArrayShape(t, x.sizes(n, 1)...)
		w := lb.inst(hlo.OpSubtract, col, x.slice(aa, x.sizes(n, 1), x.zero, j), x.dot(col, l, lj, int64(r-1), int64(r-1)))
		piv := x.slice(w, x.sizes(1, 1), j, x.zero)
		root := lb.inst(hlo.OpSqrt, hlo.ArrayShape(rt, x.sizes(1, 1)...), lb.realOf(piv))
		d := root
		if isComplex {
			d = lb.convert(root, t)
		}
		nan := lb.compare(root, root, "NE")
		seen = lb.inst(hlo.OpOr, errSh, seen, lb.reshape(nan, batch...))
		c := lb.triangle(lb.inst(hlo.OpDivide, col, w, x.spread(d, col)), "GE", j, false)
		j1 := lb.inst(hlo.OpAdd, j.Shape, j, lb.constant(hlo.S32, 1))
		return []*hlo.Instruction{j1, x.update(l, c, x.zero, j), aa, seen}
	})
	failed = b.inst(hlo.OpGetTupleElement, errSh, l.Operands[0])
	failed.A.Index = 3
	return l, failed
}

// spreadBatch broadcasts a [batch...] value over the matrices of sh.
func (b *expander) spreadBatch(x *hlo.Instruction, sh hlo.Shape) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, sh.Dims...), x)
	bc.A.Dimensions, bc.A.HasDimensions = iotaDims(x.Shape.Rank()), true
	return bc
}

// nanLike is NaN of sh (NaN + 0i for complex types, as XLA's FullLike).
func (b *expander) nanLike(sh hlo.Shape) *hlo.Instruction {
	return b.full(b.realScalar(sh.Elem, math.NaN()), sh)
}

// realScalar is the scalar v of type t (v + 0i for complex types).
func (b *expander) realScalar(t hlo.ElementType, v float64) *hlo.Instruction {
	rt, _ := t.ComplexPart()
	c := b.inst(hlo.OpConstant, hlo.ArrayShape(rt))
	c.Literal = hlo.ScalarLiteral(rt, v)
	return b.convert(c, t)
}
