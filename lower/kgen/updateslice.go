package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Updates in place. The remap kernel of a dynamic-update-slice writes
// every element of its result, the operand's or the update's: a
// lax.scan that stacks its outputs, one row of a f32[20000,128] per
// iteration, rewrote all 10 MB of the stack each iteration (1.8 ms of
// an iteration's 2 ms on lavapipe). As XLA does, such an update (or an
// atomic scatter) is two steps instead: the operand copied into the
// result (CopyOperandKernel), then an invocation per update element that
// writes it where it goes. Memory planning lets the copy read its operand
// where it writes the result, and where the two share memory (the
// operand's last use, as the stack's in a loop's body) the copy is no
// step at all (lower's dropInPlaceCopies): the update alone writes a row.

// CopyOperandKernel generates the first step of an update in place:
// each element of in's first operand, which has in's shape, stored as
// the result (an invocation per element). Bindings: that operand, then
// the result; in's other operands are not bound, so that the copy is
// the operand's last use where the update step does not read it.
func CopyOperandKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	k := env.builder(1)
	src, err := k.operandBinding(in.Operands[0])
	if err != nil {
		return nil, err
	}
	outs, err := k.bindResults(in)
	if err != nil {
		return nil, err
	}
	return k.perElement("copy_"+in.Shape.Elem.String(), func(idx spirv.ID) error {
		k.store(outs[0], idx, k.load(src, idx, in.Shape.Elem))
		return nil
	})
}

// UpdateSliceKernel generates the second step of a dynamic-update-slice
// in place: an invocation per element of the update writes it into the
// result at the clamped start indices plus its own (the result holds
// the operand already). Its prologue (lower's fuseUpdates) is the kernel
// whose value the update is, reshaped: computed at the update element's
// own index, stored to its own result too, and written into the slice
// from the register. Bindings: the prologue's operands, the update's and
// the start indices' (the operand's is not), the result, the prologue's
// result.
func UpdateSliceKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	if in.Op != hlo.OpDynamicUpdateSlice {
		return nil, in.Errorf("no update kernel for %s", in.Op)
	}
	k := env.builder(1)
	ps, err := k.bindPrologue(env, in)
	if err != nil {
		return nil, err
	}
	binds, outs, err := k.bindUpdates(in)
	if err != nil {
		return nil, err
	}
	if err := ps.bindResults(k); err != nil {
		return nil, err
	}
	s, up := in.Operands[0].Shape, in.Operands[1].Shape
	return k.perElement("update_slice_"+s.Elem.String(), func(idx spirv.ID) error {
		if err := ps.emit(k, idx); err != nil {
			return err
		}
		u32 := k.u32()
		ui := k.unravel(idx, up.Dims)
		pos := make([]spirv.ID, s.Rank())
		for d := range pos {
			st := k.load(binds[2+d], k.cu32(0), in.Operands[2+d].Shape.Elem)
			pos[d] = k.f.IAdd(u32, k.clampIndex(st, s.Dims[d]-up.Dims[d]), ui[d])
		}
		k.store(outs[0], k.ravel(pos, s.Dims), k.load(binds[1], idx, s.Elem))
		ps.store(k, idx)
		return nil
	})
}

// bindUpdates binds the operands of in but the first, then its results,
// for the second step of an update in place: binds holds each operand's
// binding by its place among in's operands (the first's is -1).
func (k *kernelBuilder) bindUpdates(in *hlo.Instruction) (binds, outs []int, err error) {
	binds = []int{-1}
	for _, o := range in.Operands[1:] {
		b, err := k.operandBinding(o)
		if err != nil {
			return nil, nil, err
		}
		binds = append(binds, b)
	}
	outs, err = k.bindResults(in)
	return binds, outs, err
}
