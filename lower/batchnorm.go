package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// batchNorm writes batch-norm-training, -inference and -grad out in
// elementwise ops and reductions, op for op as XLA's BatchNormExpander
// does (mean and variance as E[x] and E[x^2] - E[x]^2, 1/sqrt(var +
// epsilon) by rsqrt, the count per feature an s32 converted), so that
// results round as XLA's do and vkjit fuses them like any other
// arithmetic. f16 and bf16 operands are computed in f32 and each result
// rounded once, as vkjit computes those types elsewhere.
func (b *expander) batchNorm(in *hlo.Instruction) (*hlo.Instruction, error) {
	f, eps32, err := hlo.BatchNormAttrs(in)
	if err != nil {
		return nil, err
	}
	x0 := in.Operands[0]
	out := x0.Shape.Elem
	t := out
	if t == hlo.F16 || t == hlo.BF16 {
		t = hlo.F32
	}
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = b.convert(o, t)
	}
	x := ops[0]
	dims := x.Shape.Dims
	var others []int64
	n := int64(1)
	for d, k := range dims {
		if d != f {
			others = append(others, int64(d))
			n *= k
		}
	}
	// along broadcasts a feature vector along the operand's feature
	// dimension; full, a scalar to the feature vectors' or the
	// operand's shape.
	along := func(v *hlo.Instruction) *hlo.Instruction {
		bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(t, dims...), v)
		bc.A.Dimensions, bc.A.HasDimensions = []int64{int64(f)}, true
		return bc
	}
	full := func(v *hlo.Instruction, like *hlo.Instruction) *hlo.Instruction {
		return b.bcast(v, like.Shape.Dims...)
	}
	sum := func(v *hlo.Instruction) *hlo.Instruction { return b.reduceDims(v, others, hlo.OpAdd, b.constant(t, 0)) }
	bin := func(op hlo.Opcode, p, q *hlo.Instruction) *hlo.Instruction { return b.inst(op, p.Shape, p, q) }
	rsqrt := func(v *hlo.Instruction) *hlo.Instruction { return b.inst(hlo.OpRsqrt, v.Shape, v) }
	// XLA's constants: epsilon an f32 converted to the type, the count
	// per feature an s32 converted.
	eps := b.inst(hlo.OpConstant, hlo.ArrayShape(t))
	eps.Literal = hlo.ScalarLiteral(t, float64(eps32))
	count := b.convert(b.constant(hlo.S32, n), t)
	mean := func(v *hlo.Instruction) *hlo.Instruction { return bin(hlo.OpDivide, v, full(count, v)) }
	back := func(v *hlo.Instruction) *hlo.Instruction { return b.convert(v, out) }

	switch in.Op {
	case hlo.OpBatchNormInference:
		scale, offset, mu, v := ops[1], ops[2], ops[3], ops[4]
		trueScale := bin(hlo.OpMultiply, scale, rsqrt(bin(hlo.OpAdd, v, full(eps, v))))
		trueShift := bin(hlo.OpSubtract, offset, bin(hlo.OpMultiply, mu, trueScale))
		y := bin(hlo.OpAdd, bin(hlo.OpMultiply, x, along(trueScale)), along(trueShift))
		return back(y), nil
	case hlo.OpBatchNormTraining:
		scale, offset := ops[1], ops[2]
		mu := mean(sum(x))
		sqMean := mean(sum(bin(hlo.OpMultiply, x, x)))
		v := bin(hlo.OpSubtract, sqMean, bin(hlo.OpMultiply, mu, mu))
		r := rsqrt(bin(hlo.OpAdd, along(v), full(eps, x)))
		y := bin(hlo.OpMultiply, bin(hlo.OpMultiply, bin(hlo.OpSubtract, x, along(mu)), r), along(scale))
		y = bin(hlo.OpAdd, y, along(offset))
		return b.tuple(back(y), back(mu), back(v)), nil
	default: // grad
		scale, mu, v, dy := ops[1], ops[2], ops[3], ops[4]
		vx := along(v)
		rx := rsqrt(bin(hlo.OpAdd, vx, full(eps, x)))
		rf := rsqrt(bin(hlo.OpAdd, v, full(eps, v)))
		xm := bin(hlo.OpSubtract, x, along(mu))
		i3f := sum(bin(hlo.OpMultiply, dy, xm)) // sum(dy (x - E[x]))
		gradOffset := sum(dy)
		gradScale := bin(hlo.OpMultiply, i3f, rf)
		i4 := bin(hlo.OpMultiply, along(i3f), xm)
		i5 := bin(hlo.OpDivide, i4, bin(hlo.OpAdd, vx, full(eps, x)))
		k := mean(bin(hlo.OpMultiply, along(scale), rx)) // scale rsqrt(var + eps) / N
		i1 := bin(hlo.OpMultiply, dy, full(count, x))
		i6 := bin(hlo.OpSubtract, bin(hlo.OpSubtract, i1, along(gradOffset)), i5)
		dx := bin(hlo.OpMultiply, k, i6)
		return b.tuple(back(dx), back(gradScale), back(gradOffset)), nil
	}
}

// tuple makes the tuple of xs.
func (b *expander) tuple(xs ...*hlo.Instruction) *hlo.Instruction {
	t := b.inst(hlo.OpTuple, hlo.TupleShape(), xs...)
	for _, x := range xs {
		t.Shape.Tuple = append(t.Shape.Tuple, x.Shape)
	}
	return t
}
