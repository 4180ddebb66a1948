package kgen

import (
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// OnlineChunk is the elements between rescales of an online sum (a row
// length must be a multiple), onlineLongChunk where the row length is a
// multiple of it: a rescale costs an exponential, and 16 elements
// between them ran softmax 3.5% faster than 8 (32: 0.6% more, within
// the noise; interleaved pairs).
const (
	OnlineChunk     = VectorWidth
	onlineLongChunk = 2 * VectorWidth
)

// BelowRowMax reports whether x is v - broadcast(max of v over some of
// its dimensions), broadcast back along the reduced ones: every element
// is at most 0, or NaN (softmax's exponent; mathlib's ExpNonPositive).
func BelowRowMax(x *hlo.Instruction) bool {
	if x.Op != hlo.OpSubtract || len(x.Operands) != 2 || x.Operands[1].Op != hlo.OpBroadcast || len(x.Operands[1].Operands) != 1 {
		return false
	}
	v, b := x.Operands[0], x.Operands[1]
	r := b.Operands[0]
	if r.Op != hlo.OpReduce || len(r.Operands) != 2 || r.Operands[0] != v || r.Called[0].ReducerOp() != hlo.OpMaximum {
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

// FloatConst reports whether x is a scalar float constant equal to v
// (+0 for 0, not -0).
func FloatConst(x *hlo.Instruction, v float64) bool {
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

// onlineFold folds max reduce r1 and its partner's sum (onlinePair) in
// one pass over count elements from base, loaded by elem: chunks of
// onlineChunk or onlineLongChunk elements (count is a multiple), in vec4
// pairs in a vector row kernel. It returns the max and the sum.
func (k *kernelBuilder) onlineFold(r1 *hlo.Instruction, pair OnlinePair, initMax val, base spirv.ID, count int64, elem func(p spirv.ID) val) (val, val, error) {
	t := r1.Shape.Elem
	zero := val{k.constFloat(t, 0), t}
	vars, acc := k.accumulators([]val{initMax, zero})
	u32 := k.u32()
	ninf := k.constFloat(t, math.Inf(-1))
	one := val{k.constFloat(t, 1), t}
	// expFrom is exp(x - m), or 1 while m is -inf.
	expFrom := func(x, m val) (val, error) {
		d, err := k.emitScalar(pair.Sub, []val{x, m})
		if err != nil {
			return val{}, err
		}
		e, err := k.emitScalar(pair.Exp, []val{d})
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
			r, err := k.emitReducer(pair.Sum.Called[0], []val{s, e})
			if err != nil {
				return err
			}
			s = r[0]
		}
		k.f.Store(vars[0], m.id)
		k.f.Store(vars[1], s.id)
		return nil
	}
	chunkLen := int64(OnlineChunk)
	if count%onlineLongChunk == 0 {
		chunkLen = onlineLongChunk
	}
	err := k.loop(k.cu32(uint32(count/chunkLen)), func(c spirv.ID) error {
		first := k.f.IAdd(u32, base, k.f.IMul(u32, c, k.cu32(uint32(chunkLen))))
		var xs []val
		if k.rowShape != nil { // a vector row kernel: the chunk is vec4 pairs
			for h := range chunkLen / VectorWidth {
				at := k.f.IAdd(u32, first, k.cu32(uint32(h*VectorWidth)))
				err := k.vectorElems(k.f.UDiv(u32, at, k.cu32(VectorWidth)), func(p spirv.ID) error {
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
