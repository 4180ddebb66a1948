package lower

import (
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
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

// onlineChunk is the elements between rescales of an online sum (a row
// length must be a multiple), onlineLongChunk where the row length is a
// multiple of it: a rescale costs an exponential, and 16 elements
// between them ran softmax 3.5% faster than 8 (32: 0.6% more, within
// the noise; interleaved pairs).
const (
	onlineChunk     = vectorWidth
	onlineLongChunk = 2 * vectorWidth
)

// onlinePair is a max reduce's partner in an online fold: the sum
// reduce, and the subtract and exponential it reads.
type onlinePair struct {
	sum, sub, exp *hlo.Instruction
}

// onlineSum reports whether reduce r2 sums exp(v - broadcast(r1)) over
// the rows that reduce r1 takes the max of v over, with inits -inf and
// +0 (the softmax and log-softmax pattern), and returns the pair.
func onlineSum(r1, r2 *hlo.Instruction) (onlinePair, bool) {
	if r1.Op != hlo.OpReduce || r2.Op != hlo.OpReduce || len(r1.Operands) != 2 || len(r2.Operands) != 2 ||
		!slices.Equal(r1.A.Dimensions, r2.A.Dimensions) {
		return onlinePair{}, false
	}
	t := r1.Shape.Elem
	if t != hlo.F32 && t != hlo.F64 || r2.Shape.Elem != t ||
		!floatConst(r1.Operands[1], math.Inf(-1)) || !floatConst(r2.Operands[1], 0) ||
		reducerOp(r1.Called[0]) != hlo.OpMaximum || reducerOp(r2.Called[0]) != hlo.OpAdd {
		return onlinePair{}, false
	}
	ex := r2.Operands[0]
	if ex.Op != hlo.OpExp || ex.Shape.Elem != t {
		return onlinePair{}, false
	}
	sub := ex.Operands[0]
	if sub.Op != hlo.OpSubtract || sub.Operands[0] != r1.Operands[0] {
		return onlinePair{}, false
	}
	b := sub.Operands[1]
	if b.Op != hlo.OpBroadcast || b.Operands[0] != r1 || !slices.Equal(b.A.Dimensions, iotaDims(r1.Shape.Rank())) {
		return onlinePair{}, false
	}
	return onlinePair{sum: r2, sub: sub, exp: ex}, true
}

// belowRowMax reports whether x is v - broadcast(max of v over some of
// its dimensions), broadcast back along the reduced ones: every element
// is at most 0, or NaN (softmax's exponent; mathlib's ExpNonPositive).
func belowRowMax(x *hlo.Instruction) bool {
	if x.Op != hlo.OpSubtract || len(x.Operands) != 2 || x.Operands[1].Op != hlo.OpBroadcast || len(x.Operands[1].Operands) != 1 {
		return false
	}
	v, b := x.Operands[0], x.Operands[1]
	r := b.Operands[0]
	if r.Op != hlo.OpReduce || len(r.Operands) != 2 || r.Operands[0] != v || reducerOp(r.Called[0]) != hlo.OpMaximum {
		return false
	}
	var kept []int64
	for d := range int64(v.Shape.Rank()) {
		if !slices.Contains(r.A.Dimensions, d) {
			kept = append(kept, d)
		}
	}
	return slices.Equal(b.A.Dimensions, kept)
}

// floatConst reports whether x is a scalar float constant equal to v
// (+0 for 0, not -0).
func floatConst(x *hlo.Instruction, v float64) bool {
	l := x.Literal
	if x.Op != hlo.OpConstant || l == nil || l.Elided || l.Shape.Rank() != 0 || l.Shape.Elem.Kind() != hlo.KindFloat {
		return false
	}
	var bits uint64
	for j := len(l.Data) - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(l.Data[j])
	}
	f := hlo.DecodeFloat(l.Shape.Elem, bits)
	return f == v && math.Signbit(f) == math.Signbit(v)
}

// reducerOp is the op of a reducer computation that applies one binary
// op to its two parameters (either order), else OpParameter.
func reducerOp(c *hlo.Computation) hlo.Opcode {
	r := c.Root
	if len(c.Params) != 2 || len(c.Instructions) != 3 || len(r.Operands) != 2 ||
		r.Operands[0].Op != hlo.OpParameter || r.Operands[1].Op != hlo.OpParameter || r.Operands[0] == r.Operands[1] {
		return hlo.OpParameter
	}
	return r.Op
}

// onlineFold folds max reduce r1 and its partner's sum (onlinePair) in
// one pass over count elements from base, loaded by elem: chunks of
// onlineChunk or onlineLongChunk elements (count is a multiple), in vec4
// pairs in a vector row kernel. It returns the max and the sum.
func (k *kernelBuilder) onlineFold(r1 *hlo.Instruction, pair onlinePair, initMax val, base spirv.ID, count int64, elem func(p spirv.ID) val) (val, val, error) {
	t := r1.Shape.Elem
	zero := val{k.constFloat(t, 0), t}
	vars, acc := k.accumulators([]val{initMax, zero})
	u32 := k.u32()
	ninf := k.constFloat(t, math.Inf(-1))
	one := val{k.constFloat(t, 1), t}
	// expFrom is exp(x - m), or 1 while m is -inf.
	expFrom := func(x, m val) (val, error) {
		d, err := k.emitScalar(pair.sub, []val{x, m})
		if err != nil {
			return val{}, err
		}
		e, err := k.emitScalar(pair.exp, []val{d})
		if err != nil {
			return val{}, err
		}
		return k.sel(k.f.FOrdEqual(k.boolT(), m.id, ninf), one, e), nil
	}
	chunk := func(xs []val) error {
		m0 := acc(0)
		m := m0
		for _, x := range xs {
			r, err := k.emitReducer(r1.Called[0], []val{m, x})
			if err != nil {
				return err
			}
			m = r[0]
		}
		scale, err := expFrom(m0, m)
		if err != nil {
			return err
		}
		s := val{k.f.FMul(k.scalarType(t), acc(1).id, scale.id), t}
		k.b.Decorate(s.id, spirv.DecorationNoContraction) // rounded as written on every driver
		for _, x := range xs {
			e, err := expFrom(x, m)
			if err != nil {
				return err
			}
			r, err := k.emitReducer(pair.sum.Called[0], []val{s, e})
			if err != nil {
				return err
			}
			s = r[0]
		}
		k.f.Store(vars[0], m.id)
		k.f.Store(vars[1], s.id)
		return nil
	}
	chunkLen := int64(onlineChunk)
	if count%onlineLongChunk == 0 {
		chunkLen = onlineLongChunk
	}
	err := k.loop(k.cu32(uint32(count/chunkLen)), func(c spirv.ID) error {
		first := k.f.IAdd(u32, base, k.f.IMul(u32, c, k.cu32(uint32(chunkLen))))
		var xs []val
		if k.rowShape != nil { // a vector row kernel: the chunk is vec4 pairs
			for h := range chunkLen / vectorWidth {
				at := k.f.IAdd(u32, first, k.cu32(uint32(h*vectorWidth)))
				err := k.vectorElems(k.f.UDiv(u32, at, k.cu32(vectorWidth)), func(p spirv.ID) error {
					xs = append(xs, elem(p))
					return k.err
				})
				if err != nil {
					return err
				}
				k.vector = nil
			}
		} else {
			for i := range chunkLen {
				xs = append(xs, elem(k.f.IAdd(u32, first, k.cu32(uint32(i)))))
			}
		}
		return chunk(xs)
	})
	if err != nil {
		return val{}, val{}, err
	}
	return acc(0), acc(1), nil
}
