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
	})
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
