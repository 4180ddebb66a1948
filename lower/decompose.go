package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// expandDecompositions writes out the ops that XLA's own passes
// decompose before its backends see them, as those passes do:
// batch-norm-training, -inference and -grad (batchnorm.go),
// stochastic-convert (stochastic.go) and ragged-dot (raggeddot.go); and
// get-dimension-size of a static dimension, its size.
func expandDecompositions(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpBatchNormTraining:  (*expander).batchNorm,
		hlo.OpBatchNormInference: (*expander).batchNorm,
		hlo.OpBatchNormGrad:      (*expander).batchNorm,
		hlo.OpStochasticConvert:  (*expander).stochasticConvert,
		hlo.OpRaggedDot:          (*expander).raggedDot,
		hlo.OpGetDimensionSize:   (*expander).dimensionSize,
		hlo.OpDot:                (*expander).dotAlgorithm,
		hlo.OpConvolution:        (*expander).dotAlgorithm,
	})
}

// dotAlgorithm is a dot (convolution) whose algorithm narrows its
// operands (hlo.Instruction.DotOperandRounding) as the products with
// the operands so rounded: converted to bf16 or f16, as XLA's
// DotAlgorithmRewriter writes it (the dot of narrow operands to an f32
// result is a kernel like any other), or reduced to tf32's precision.
// Other dots are left as they are.
func (b *expander) dotAlgorithm(in *hlo.Instruction) (*hlo.Instruction, error) {
	ops := make([]*hlo.Instruction, len(in.Operands))
	changed := false
	for i, o := range in.Operands {
		ops[i] = o
		switch to, tf32 := in.DotOperandRounding(o.Shape.Elem); {
		case to != 0:
			ops[i] = b.convert(o, to)
		case tf32:
			r := b.inst(hlo.OpReducePrecision, o.Shape, o)
			r.A.ExponentBits, r.A.MantissaBits = 8, 10
			ops[i] = r
		default:
			continue
		}
		changed = true
	}
	if !changed {
		return in, nil
	}
	d := b.inst(in.Op, in.Shape, ops...)
	d.A = in.A
	d.A.DotAlgorithm = ""
	return d, nil
}

// dimensionSize is a get-dimension-size of a static dimension: its size.
// A bounded dynamic one's size is known only at run time, and vkjit runs
// static shapes.
func (b *expander) dimensionSize(in *hlo.Instruction) (*hlo.Instruction, error) {
	x, d := in.Operands[0].Shape, in.A.Dimensions[0]
	if int(d) < len(x.Dynamic) && x.Dynamic[d] {
		return nil, in.Errorf("get-dimension-size of a bounded dynamic dimension (%s) is not supported: vkjit runs static shapes", x)
	}
	return b.constant(hlo.S32, x.Dims[d]), nil
}
