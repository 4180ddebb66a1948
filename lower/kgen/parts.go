package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Parts kernels. A concatenate of operands one wide along its last
// dimension puts together parts that are computed alike: a complex
// value's memory form (f32[..., 2]) is the concatenate of its real and
// imaginary parts, and what one part costs (a complex function's
// sine, cosine and exponential of the same real numbers) mostly serves
// the other. An invocation per output element computes the shared work
// once per part. A parts kernel's invocation computes every part of one
// position instead: its elements are base + j (index.go: an aligned
// index), the concatenate knows which operand each reads (a constant
// position along its axis), the operands read the same element at the
// same id, and what they share is computed once (compute's and
// spirv.Function.Op's reuse). Large outputs take the vector form, whose
// lanes share the same way; the parts form is the scalar one.

// maxParts bounds the parts an invocation computes.
const maxParts = 4

// partsOf is the parts of in's kernel: the operands of a concatenate
// along its last dimension, each one wide, or 0.
func partsOf(in *hlo.Instruction) uint32 {
	r := in.Shape.Rank()
	if in.Op != hlo.OpConcatenate || r == 0 || in.A.Dimensions[0] != int64(r-1) {
		return 0
	}
	n := len(in.Operands)
	if n < 2 || n > maxParts {
		return 0
	}
	for _, o := range in.Operands {
		if o.Shape.Dims[r-1] != 1 {
			return 0
		}
	}
	return uint32(n)
}

// partsElems runs body for each of the parts of invocation i, elements
// i*parts + j, and stores what they stored after all of them: a part
// may read an input at another part's element, which in-place updates
// allow (noteIndex counts the invocation's elements as its own) as long
// as nothing is written before everything is read.
func (k *kernelBuilder) partsElems(i spirv.ID, body func(idx spirv.ID) error) error {
	base := k.scaledIndex(i, k.parts)
	if k.own == nil {
		k.own = map[spirv.ID]bool{}
	}
	idxs := make([]spirv.ID, k.parts)
	for j := range idxs {
		idxs[j] = k.offsetIndex(base, uint32(j), k.parts)
		k.own[idxs[j]] = true
	}
	k.deferred = &[]deferredStore{}
	for _, idx := range idxs {
		if err := body(idx); err != nil {
			return err
		}
	}
	stores := *k.deferred
	k.deferred = nil
	for _, s := range stores {
		k.store(s.bind, s.idx, s.v)
	}
	return nil
}

// deferredStore is a store partsElems holds back.
type deferredStore struct {
	bind int
	idx  spirv.ID
	v    val
}
