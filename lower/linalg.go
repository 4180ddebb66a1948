package lower

import (
	"fmt"

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
	entry := s.mod.Entry
	var out []*hlo.Instruction
	n := 0
	for _, in := range entry.Instructions {
		if in.Op != hlo.OpTriangularSolve && in.Op != hlo.OpCholesky {
			out = append(out, in)
			continue
		}
		b := &linBuilder{from: in, n: &n}
		var final *hlo.Instruction
		var err error
		if in.Op == hlo.OpCholesky {
			final = b.cholesky(in)
		} else if final, err = b.triangularSolve(in); err != nil {
			return err
		}
		// The solve becomes its last instruction, so that its users need
		// no change.
		out = append(out, b.out[:len(b.out)-1]...)
		name := in.Name
		*in = *final
		in.Name = name
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}

// linBuilder adds instructions named after the one they expand.
type linBuilder struct {
	from *hlo.Instruction
	out  []*hlo.Instruction
	n    *int
}

func (b *linBuilder) inst(op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	*b.n++
	in := &hlo.Instruction{Name: fmt.Sprintf("%s.ts%d", b.from.Name, *b.n), Op: op, Shape: sh, Operands: ops, Pos: b.from.Pos}
	b.out = append(b.out, in)
	return in
}

func (b *linBuilder) constant(t hlo.ElementType, v int64) *hlo.Instruction {
	c := b.inst(hlo.OpConstant, hlo.ArrayShape(t))
	if v == 0 {
		c.Literal, _ = hlo.NewLiteral(c.Shape, make([]byte, t.Bytes()))
	} else {
		c.Literal = hlo.ScalarLiteral(t, float64(v))
	}
	return c
}

// zeros is a value of shape sh, all zero.
func (b *linBuilder) zeros(sh hlo.Shape) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, sh, b.constant(sh.Elem, 0))
	bc.A.HasDimensions = true
	return bc
}

// swapLast transposes the last two dimensions.
func (b *linBuilder) swapLast(x *hlo.Instruction) *hlo.Instruction {
	r := x.Shape.Rank()
	perm := make([]int64, r)
	dims := make([]int64, r)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[r-2], perm[r-1] = int64(r-1), int64(r-2)
	for i, p := range perm {
		dims[i] = x.Shape.Dims[p]
	}
	t := b.inst(hlo.OpTranspose, hlo.ArrayShape(x.Shape.Elem, dims...), x)
	t.A.Dimensions, t.A.HasDimensions = perm, true
	return t
}

func (b *linBuilder) reverse(x *hlo.Instruction, dims ...int64) *hlo.Instruction {
	r := b.inst(hlo.OpReverse, x.Shape, x)
	r.A.Dimensions, r.A.HasDimensions = dims, true
	return r
}

func (b *linBuilder) triangularSolve(in *hlo.Instruction) (*hlo.Instruction, error) {
	a, rhs := in.Operands[0], in.Operands[1]
	t := a.Shape.Elem
	r := a.Shape.Rank()
	lower := in.A.Lower
	if in.A.TransposeA == "TRANSPOSE" || in.A.TransposeA == "ADJOINT" {
		a = b.swapLast(a)
		lower = !lower
		if _, isComplex := realPart(t); isComplex && in.A.TransposeA == "ADJOINT" {
			rt, _ := realPart(t)
			ps := hlo.ArrayShape(rt, a.Shape.Dims...)
			re := b.inst(hlo.OpReal, ps, a)
			im := b.inst(hlo.OpNegate, ps, b.inst(hlo.OpImag, ps, a))
			a = b.inst(hlo.OpComplex, a.Shape, re, im)
		}
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
func (b *linBuilder) forward(in, a, rhs *hlo.Instruction) *hlo.Instruction {
	t := a.Shape.Elem
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	m := rhs.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	// The strict lower triangle of a, zeros elsewhere.
	pred := hlo.ArrayShape(hlo.PRED, a.Shape.Dims...)
	s32 := hlo.ArrayShape(hlo.S32, a.Shape.Dims...)
	rows, cols := b.inst(hlo.OpIota, s32), b.inst(hlo.OpIota, s32)
	rows.A.IotaDim, cols.A.IotaDim = int64(r-2), int64(r-1)
	below := b.inst(hlo.OpCompare, pred, rows, cols)
	below.A.Direction = "GT"
	masked := b.inst(hlo.OpSelect, a.Shape, below, a, b.zeros(a.Shape))
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), rhs.Shape, a.Shape, rhs.Shape, a.Shape)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.zeros(rhs.Shape), masked, rhs, a)

	cond := &linBuilder{from: in, n: b.n}
	cp := cond.param(state)
	ci := cond.inst(hlo.OpGetTupleElement, hlo.ArrayShape(hlo.S32), cp)
	lt := cond.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED), ci, cond.constant(hlo.S32, n))
	lt.A.Direction = "LT"

	body := &linBuilder{from: in, n: b.n}
	bp := body.param(state)
	get := func(i int) *hlo.Instruction {
		g := body.inst(hlo.OpGetTupleElement, state.Tuple[i], bp)
		g.A.Index = int64(i)
		return g
	}
	i, xs, am, bb, aa := get(0), get(1), get(2), get(3), get(4)
	zero := body.constant(hlo.S32, 0)
	starts := func(last ...*hlo.Instruction) []*hlo.Instruction {
		var s []*hlo.Instruction
		for range batch {
			s = append(s, zero)
		}
		return append(s, last...)
	}
	sizes := func(last ...int64) []int64 { return append(append([]int64{}, batch...), last...) }
	slice := func(x *hlo.Instruction, sz []int64, idx ...*hlo.Instruction) *hlo.Instruction {
		d := body.inst(hlo.OpDynamicSlice, hlo.ArrayShape(t, sz...), append([]*hlo.Instruction{x}, starts(idx...)...)...)
		d.A.DynSliceSizes = sz
		return d
	}
	row := slice(am, sizes(1, n), i, zero)
	dot := body.inst(hlo.OpDot, hlo.ArrayShape(t, sizes(1, m)...), row, xs)
	var bd []int64
	for k := range batch {
		bd = append(bd, int64(k))
	}
	dot.A.Dot = &hlo.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContract: []int64{int64(r - 1)}, RhsContract: []int64{int64(r - 2)}}
	bi := slice(bb, sizes(1, m), i, zero)
	xi := body.inst(hlo.OpSubtract, bi.Shape, bi, dot)
	if !in.A.UnitDiagonal {
		d := slice(aa, sizes(1, 1), i, i)
		dr := body.inst(hlo.OpReshape, hlo.ArrayShape(t, sizes(1)...), d)
		db := body.inst(hlo.OpBroadcast, bi.Shape, dr)
		for k := 0; k < r-1; k++ {
			db.A.Dimensions = append(db.A.Dimensions, int64(k))
		}
		db.A.HasDimensions = true
		xi = body.inst(hlo.OpDivide, bi.Shape, xi, db)
	}
	next := body.inst(hlo.OpDynamicUpdateSlice, rhs.Shape, append([]*hlo.Instruction{xs, xi}, starts(i, zero)...)...)
	i1 := body.inst(hlo.OpAdd, i.Shape, i, body.constant(hlo.S32, 1))
	root := body.inst(hlo.OpTuple, state, i1, next, am, bb, aa)

	name := in.Name + ".solve"
	cc := &hlo.Computation{Name: name + ".cond", Pos: in.Pos, Params: []*hlo.Instruction{cp}, Instructions: cond.out, Root: lt}
	bc := &hlo.Computation{Name: name + ".body", Pos: in.Pos, Params: []*hlo.Instruction{bp}, Instructions: body.out, Root: root}
	w := b.inst(hlo.OpWhile, state, init)
	w.Called = []*hlo.Computation{cc, bc}
	g := b.inst(hlo.OpGetTupleElement, rhs.Shape, w)
	g.A.Index = 1
	return g
}

// param adds the parameter of a loop's computation.
func (b *linBuilder) param(sh hlo.Shape) *hlo.Instruction {
	return b.inst(hlo.OpParameter, sh)
}

// conjT is the conjugate transpose of the last two dimensions (the
// transpose, for real types).
func (b *linBuilder) conjT(x *hlo.Instruction) *hlo.Instruction {
	x = b.swapLast(x)
	if rt, isComplex := realPart(x.Shape.Elem); isComplex {
		ps := hlo.ArrayShape(rt, x.Shape.Dims...)
		re := b.inst(hlo.OpReal, ps, x)
		im := b.inst(hlo.OpNegate, ps, b.inst(hlo.OpImag, ps, x))
		x = b.inst(hlo.OpComplex, x.Shape, re, im)
	}
	return x
}

// cholesky is XLA's cholesky: l lower triangular with a = l l^H
// (lower=true), or u upper with a = u^H u, reading only that triangle of
// a; the other triangle of the result is zero, and a matrix that is not
// positive definite gives NaN from its first failing column on. The
// upper form is the lower one of a^H, conjugate-transposed back. Column
// j of l, in the j-th iteration of a while loop, is (a_:,j - l l_j,:^H) /
// sqrt of its j-th element, zero above the diagonal: l is zero in the
// columns not computed yet, so one dot makes the sum over k < j.
func (b *linBuilder) cholesky(in *hlo.Instruction) *hlo.Instruction {
	a := in.Operands[0]
	if !in.A.Lower {
		a = b.conjT(a)
	}
	t := a.Shape.Elem
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	s32 := hlo.ArrayShape(hlo.S32, a.Shape.Dims...)
	rows, cols := b.inst(hlo.OpIota, s32), b.inst(hlo.OpIota, s32)
	rows.A.IotaDim, cols.A.IotaDim = int64(r-2), int64(r-1)
	onOrBelow := b.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED, a.Shape.Dims...), rows, cols)
	onOrBelow.A.Direction = "GE"
	am := b.inst(hlo.OpSelect, a.Shape, onOrBelow, a, b.zeros(a.Shape))
	state := hlo.TupleShape(hlo.ArrayShape(hlo.S32), a.Shape, a.Shape)
	init := b.inst(hlo.OpTuple, state, b.constant(hlo.S32, 0), b.zeros(a.Shape), am)

	cond := &linBuilder{from: in, n: b.n}
	cp := cond.param(state)
	ci := cond.inst(hlo.OpGetTupleElement, hlo.ArrayShape(hlo.S32), cp)
	lt := cond.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED), ci, cond.constant(hlo.S32, n))
	lt.A.Direction = "LT"

	body := &linBuilder{from: in, n: b.n}
	bp := body.param(state)
	get := func(i int) *hlo.Instruction {
		g := body.inst(hlo.OpGetTupleElement, state.Tuple[i], bp)
		g.A.Index = int64(i)
		return g
	}
	j, l, aa := get(0), get(1), get(2)
	zero := body.constant(hlo.S32, 0)
	starts := func(last ...*hlo.Instruction) []*hlo.Instruction {
		var s []*hlo.Instruction
		for range batch {
			s = append(s, zero)
		}
		return append(s, last...)
	}
	sizes := func(last ...int64) []int64 { return append(append([]int64{}, batch...), last...) }
	slice := func(x *hlo.Instruction, sz []int64, idx ...*hlo.Instruction) *hlo.Instruction {
		d := body.inst(hlo.OpDynamicSlice, hlo.ArrayShape(t, sz...), append([]*hlo.Instruction{x}, starts(idx...)...)...)
		d.A.DynSliceSizes = sz
		return d
	}
	lj := slice(l, sizes(1, n), j, zero) // row j of l
	if rt, isComplex := realPart(t); isComplex {
		ps := hlo.ArrayShape(rt, lj.Shape.Dims...)
		re := body.inst(hlo.OpReal, ps, lj)
		im := body.inst(hlo.OpNegate, ps, body.inst(hlo.OpImag, ps, lj))
		lj = body.inst(hlo.OpComplex, lj.Shape, re, im)
	}
	col := hlo.ArrayShape(t, sizes(n, 1)...)
	dot := body.inst(hlo.OpDot, col, l, lj)
	var bd []int64
	for k := range batch {
		bd = append(bd, int64(k))
	}
	dot.A.Dot = &hlo.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContract: []int64{int64(r - 1)}, RhsContract: []int64{int64(r - 1)}}
	w := body.inst(hlo.OpSubtract, col, slice(aa, sizes(n, 1), zero, j), dot)
	d := body.inst(hlo.OpSqrt, hlo.ArrayShape(t, sizes(1, 1)...), slice2(body, w, t, starts(j, zero), sizes(1, 1)))
	dr := body.inst(hlo.OpReshape, hlo.ArrayShape(t, batch...), d)
	db := body.inst(hlo.OpBroadcast, col, dr)
	for k := range batch {
		db.A.Dimensions = append(db.A.Dimensions, int64(k))
	}
	db.A.HasDimensions = true
	c := body.inst(hlo.OpDivide, col, w, db)
	ci32 := hlo.ArrayShape(hlo.S32, col.Dims...)
	ri := body.inst(hlo.OpIota, ci32)
	ri.A.IotaDim = int64(r - 2)
	jb := body.inst(hlo.OpBroadcast, ci32, j)
	jb.A.HasDimensions = true
	keep := body.inst(hlo.OpCompare, hlo.ArrayShape(hlo.PRED, col.Dims...), ri, jb)
	keep.A.Direction = "GE"
	c = body.inst(hlo.OpSelect, col, keep, c, body.zeros(col))
	next := body.inst(hlo.OpDynamicUpdateSlice, a.Shape, append([]*hlo.Instruction{l, c}, starts(zero, j)...)...)
	j1 := body.inst(hlo.OpAdd, j.Shape, j, body.constant(hlo.S32, 1))
	root := body.inst(hlo.OpTuple, state, j1, next, aa)

	name := in.Name + ".cholesky"
	cc := &hlo.Computation{Name: name + ".cond", Pos: in.Pos, Params: []*hlo.Instruction{cp}, Instructions: cond.out, Root: lt}
	bc := &hlo.Computation{Name: name + ".body", Pos: in.Pos, Params: []*hlo.Instruction{bp}, Instructions: body.out, Root: root}
	wl := b.inst(hlo.OpWhile, state, init)
	wl.Called = []*hlo.Computation{cc, bc}
	res := b.inst(hlo.OpGetTupleElement, a.Shape, wl)
	res.A.Index = 1
	if !in.A.Lower {
		res = b.conjT(res)
	}
	return res
}

// slice2 is a dynamic slice of x at starts of sizes, in builder b.
func slice2(b *linBuilder, x *hlo.Instruction, t hlo.ElementType, starts []*hlo.Instruction, sizes []int64) *hlo.Instruction {
	d := b.inst(hlo.OpDynamicSlice, hlo.ArrayShape(t, sizes...), append([]*hlo.Instruction{x}, starts...)...)
	d.A.DynSliceSizes = sizes
	return d
}
