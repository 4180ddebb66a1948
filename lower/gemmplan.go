package lower

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// planGemm says whether root's kernel can be a tiled GEMM: root is a dot
// of the supported form, or reads one such dot, fused into it, only at
// its own output index (an epilogue), or is a reshape of one (JAX writes
// a batched dot's result to its shape so: the results go to the same
// row-major positions).
func (s *state) planGemm(root *hlo.Instruction) *kgen.GemmPlan {
	if len(s.plan.prologue(root)) > 0 || !root.Shape.IsArray() {
		return nil
	}
	if root.Op == hlo.OpReshape && root.Operands[0].Op == hlo.OpDot && s.plan.fused[root.Operands[0]] {
		return kgen.GemmOf(root.Operands[0])
	}
	dot := root
	if root.Op != hlo.OpDot && root.Op != hlo.OpConvolution {
		if !root.Op.IsElementwise() {
			return nil
		}
		dot = nil
		_, cluster := s.clusterInputs(root)
		for _, x := range cluster {
			if x.Op == hlo.OpDot || x.Op == hlo.OpConvolution {
				if dot != nil {
					return nil
				}
				dot = x
			} else if expensive(x) {
				return nil
			}
		}
		if dot == nil || !kgen.EqualDims(dot.Shape.Dims, root.Shape.Dims) || !s.readsOnlyAtOutput(root, dot) {
			return nil
		}
	}
	if dot.Op == hlo.OpConvolution && (s.plan.fused[dot.Operands[0]] || s.plan.fused[dot.Operands[1]]) {
		return nil // the implicit GEMM reads its operands from buffers
	}
	return kgen.GemmOf(dot)
}

// hasTiledDot reports whether root's kernel computes a dot that takes the
// tiled kernel (root itself, or a dot fused into it): multi-output fusion
// leaves such kernels alone, since the tiled kernel computes no siblings.
func (s *state) hasTiledDot(root *hlo.Instruction) bool {
	if (root.Op == hlo.OpDot || root.Op == hlo.OpConvolution) && kgen.GemmOf(root) != nil {
		return true
	}
	_, cluster := s.clusterInputs(root)
	for _, x := range cluster {
		if (x.Op == hlo.OpDot || x.Op == hlo.OpConvolution) && kgen.GemmOf(x) != nil {
			return true
		}
	}
	return false
}
