package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// expandDecompositions writes out the ops that XLA's own passes
// decompose before its backends see them, as those passes do:
// batch-norm-training, -inference and -grad (batchnorm.go),
// stochastic-convert (stochastic.go) and ragged-dot (raggeddot.go).
func expandDecompositions(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{
		hlo.OpBatchNormTraining:  (*expander).batchNorm,
		hlo.OpBatchNormInference: (*expander).batchNorm,
		hlo.OpBatchNormGrad:      (*expander).batchNorm,
		hlo.OpStochasticConvert:  (*expander).stochasticConvert,
		hlo.OpRaggedDot:          (*expander).raggedDot,
	})
}
