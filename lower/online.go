package lower

import (
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Online softmax (Milakov and Gimelshein, "Online normalizer calculation
// for softmax", 2018): a row kernel whose prologue takes a row's max m
// of v and then the sum s of exp(v - m) folds both in one pass over the
// row instead of two. The max is folded exactly as alone (element by
// element, in order); the sum is kept relative to the max of the
// elements folded so far and rescaled when a chunk of c = 16 (or 8)
// elements raises it:
//
//	m' = max(m, v_i..v_i+c-1)   s' = s * exp(m - m') + exp(v_i - m') + ... + exp(v_i+c-1 - m')
//
// Lavapipe's kernels are bound by their loads and stores, each a loop
// over the SIMD lanes: softmax's rows were read three times and written
// twice (the exponentials stored by the sum and read back by the
// division); now they are read twice and written once, for an exp per
// chunk and one more per element (the division computes exp(v - m)
// again). The sum is rounded differently from the unfused program's
// (within a few ulp; the max is bit-identical). While the maximum so far
// is -inf, the terms and the rescale count 1 (exp(-inf - -inf) would be
// NaN where the unfused program's exp(-inf - m) is 0 once a finite
// element comes; the rescale by exp(-inf - m') = 0 then clears them),
// so that rows of -inf, +inf and NaN give what the unfused program
// gives.

// onlineSum reports whether reduce r2 sums exp(v - broadcast(r1)) over
// the rows that reduce r1 takes the max of v over, with inits -inf and
// +0 (the softmax and log-softmax pattern), and returns the pair.
func onlineSum(r1, r2 *hlo.Instruction) (kgen.OnlinePair, bool) {
	if r1.Op != hlo.OpReduce || r2.Op != hlo.OpReduce || len(r1.Operands) != 2 || len(r2.Operands) != 2 ||
		!slices.Equal(r1.A.Dimensions, r2.A.Dimensions) {
		return kgen.OnlinePair{}, false
	}
	t := r1.Shape.Elem
	if t != hlo.F32 && t != hlo.F64 || r2.Shape.Elem != t ||
		!kgen.FloatConst(r1.Operands[1], math.Inf(-1)) || !kgen.FloatConst(r2.Operands[1], 0) ||
		r1.Called[0].ReducerOp() != hlo.OpMaximum || r2.Called[0].ReducerOp() != hlo.OpAdd {
		return kgen.OnlinePair{}, false
	}
	ex := r2.Operands[0]
	if ex.Op != hlo.OpExp || ex.Shape.Elem != t {
		return kgen.OnlinePair{}, false
	}
	sub := ex.Operands[0]
	if sub.Op != hlo.OpSubtract || sub.Operands[0] != r1.Operands[0] {
		return kgen.OnlinePair{}, false
	}
	b := sub.Operands[1]
	if b.Op != hlo.OpBroadcast || b.Operands[0] != r1 || !slices.Equal(b.A.Dimensions, iotaDims(r1.Shape.Rank())) {
		return kgen.OnlinePair{}, false
	}
	return kgen.OnlinePair{Sum: r2, Sub: sub, Exp: ex}, true
}
