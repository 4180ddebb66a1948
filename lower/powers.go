package lower

import "github.com/vkjit/vkjit/hlo"

// Exact scaling by powers of two, as LAPACK scales what would under- or
// overflow (geev's and the Jacobi methods' matrices, larfg's tiny
// columns, the eigenvector substitution's growth): the exponent field
// read and written by bit operations, each multiplication exact.

// floatLayout is real type t's integer of the same width, its
// mantissa's bits and its exponent's bias.
func floatLayout(t hlo.ElementType) (it hlo.ElementType, mbits, bias int64) {
	if t == hlo.F64 {
		return hlo.S64, 52, 1023
	}
	return hlo.S32, 23, 127
}

// exponentOf is, for each element of x (real, not negative), the s32 e
// with x in [2^(e-1), 2^e) where x is normal: its exponent field less
// bias-1 (1-bias for zeros and subnormals, bias+1 for infinities and
// NaNs).
func (b *expander) exponentOf(x *hlo.Instruction) *hlo.Instruction {
	var err error
	defer mustBuild(&err)
	it, mbits, bias := floatLayout(x.Shape.Elem)
	sh := hlo.ArrayShape(it, x.Shape.Dims...)
	ii := b.expr(sh, &err)
	field := b.inst(hlo.OpShiftRightLogical, sh, b.inst(hlo.OpBitcastConvert, sh, x), ii.K(float64(mbits)))
	return b.convert(ii.Sub(ii.And(field, ii.K(float64(2*bias+1))), ii.K(float64(bias-1))), hlo.S32)
}

// scaleEach is x times 2^-k element by element (k s32 in x's
// dimensions; x real or complex), as two exact multiplications by
// powers of two: each half of k is a normal number's exponent where k
// may not be.
func (b *expander) scaleEach(x, k *hlo.Instruction) *hlo.Instruction {
	var err error
	defer mustBuild(&err)
	t := x.Shape.Elem
	if part, ok := t.ComplexPart(); ok {
		t = part
	}
	it, mbits, bias := floatLayout(t)
	ei := b.expr(k.Shape, &err)
	ish := hlo.ArrayShape(it, k.Shape.Dims...)
	ii := b.expr(ish, &err)
	k1 := ei.Div(k, ei.K(2))
	scale := func(x, e *hlo.Instruction) *hlo.Instruction {
		f := b.inst(hlo.OpShiftLeft, ish, ii.Sub(ii.K(float64(bias)), ei.Convert(e, it)), ii.K(float64(mbits)))
		p := b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(t, k.Shape.Dims...), f)
		if !x.Shape.Elem.IsComplex() {
			return b.inst(hlo.OpMultiply, x.Shape, x, p)
		}
		re, im := b.realOf(x), b.imagOf(x)
		return b.inst(hlo.OpComplex, x.Shape, b.inst(hlo.OpMultiply, p.Shape, re, p), b.inst(hlo.OpMultiply, p.Shape, im, p))
	}
	return scale(scale(x, k1), ei.Sub(k, k1))
}

// normScaleEach is the evaluator's normScale of each matrix of m
// [batch..., r, c] (real or complex, by the largest modulus): each
// scaled by 2^k where its largest magnitude lies outside [2^e, 2^-e)
// (e: normScaleExp), k [batch...] returned (0 for a zero, infinite or
// NaN largest magnitude).
func (b *expander) normScaleEach(m *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	sh := m.Shape
	r := sh.Rank()
	rt := sh.Elem
	if part, ok := rt.ComplexPart(); ok {
		rt = part
	}
	var err error
	defer mustBuild(&err)
	mag := b.inst(hlo.OpAbs, hlo.ArrayShape(rt, sh.Dims...), m)
	anrm := b.reduceDim(b.reduceDim(mag, r-1, hlo.OpMaximum, b.constant(rt, 0)), r-2, hlo.OpMaximum, b.constant(rt, 0))
	es, ei := b.expr(anrm.Shape, &err), b.expr(hlo.ArrayShape(hlo.S32, anrm.Shape.Dims...), &err)
	e := b.exponentOf(anrm) // anrm in [2^(e-1), 2^e)
	lo := ei.K(float64(normScaleExp(rt)))
	k := ei.Sel(ei.Cmp(ei.Sub(e, ei.K(1)), "LT", lo), ei.Sub(lo, ei.Sub(e, ei.K(1))),
		ei.Sel(ei.Cmp(e, "GT", ei.Neg(lo)), ei.Sub(ei.Neg(lo), e), ei.K(0)))
	plain := es.Or(es.Cmp(anrm, "EQ", es.K(0)), es.Not(es.Finite(anrm)))
	k = ei.Sel(plain, ei.K(0), k)
	return b.scaleEach(m, b.overBatch(ei.Neg(k), sh.Dims)), k
}

// overBatch broadcasts x [batch...] to dims, whose leading dimensions
// are the batch's.
func (b *expander) overBatch(x *hlo.Instruction, dims []int64) *hlo.Instruction {
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, dims...), x)
	for i := range x.Shape.Rank() {
		bc.A.Dimensions = append(bc.A.Dimensions, int64(i))
	}
	bc.A.HasDimensions = true
	return bc
}

// growthLimit bounds the quotients of schurVectors' substitution below
// 2^(growthLimit+2), inside real type t's range.
func growthLimit(t hlo.ElementType) int64 {
	_, _, bias := floatLayout(t)
	return bias - 3
}

// tinyScale is, for each element of the real, non-negative m, the k
// whose 2^-k takes m into [1/2, 1) where m is normal and below
// 2^-(bias/2) (bias: the type's exponent bias), into the normal numbers
// where it is subnormal, 0 elsewhere (zeros too): larfg's rescaling of
// a tiny column (scaleEach applies it).
func (b *expander) tinyScale(m *hlo.Instruction) *hlo.Instruction {
	var err error
	defer mustBuild(&err)
	_, _, bias := floatLayout(m.Shape.Elem)
	e := b.exponentOf(m)
	ei := b.expr(e.Shape, &err)
	em := b.expr(m.Shape, &err)
	sub := ei.Cmp(e, "EQ", ei.K(float64(1-bias))) // zero or subnormal
	k := ei.Sel(ei.Cmp(e, "LT", ei.K(float64(-bias/2))), e, ei.K(0))
	return ei.Sel(sub, b.sel(em.Cmp(m, "EQ", em.K(0)), ei.K(0), ei.K(float64(1-bias))), k)
}
