package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Atomic scatters. ScatterKernel walks every scatter position for each
// operand element, and its sorted form first sorts the indices: a
// bincount of 1,000,000 values into 100 bins (jnp.bincount, a histogram's
// counts, an integer segment sum) spent 84 of its 103 ms sorting. Where
// the combiner is an integer add, min or max, or a bitwise and, or or
// xor (pred's too, stored as 0 and 1), the updates commute and
// associate exactly, so any order gives the bits the sequential order
// gives: the result is the operand copied (CopyOperandKernel, where
// memory planning may leave it out: updateslice.go),
// then an invocation per update element that applies it by one atomic
// operation on the result (AtomicScatterKernel), as XLA's GPU backend
// scatters. Float combiners keep the ordered kernels: atomics would
// round in whatever order the device runs them.

// AtomicScatter reports whether scatter in may apply its updates by
// atomic operations: one operand of 32-bit integers or pred, and a
// combiner of one op that commutes and associates exactly on it.
func AtomicScatter(in *hlo.Instruction) bool {
	_, ok := atomicOp(in)
	return ok
}

// atomicOps are the atomic instructions that apply a combiner of one op
// to a result of each type (pred held as a u32 0 or 1).
var atomicOps = map[hlo.ElementType]map[hlo.Opcode]spirv.Op{
	hlo.PRED: {hlo.OpAnd: spirv.OpAtomicAnd, hlo.OpOr: spirv.OpAtomicOr, hlo.OpXor: spirv.OpAtomicXor},
	hlo.S32: {hlo.OpAdd: spirv.OpAtomicIAdd, hlo.OpAnd: spirv.OpAtomicAnd, hlo.OpOr: spirv.OpAtomicOr, hlo.OpXor: spirv.OpAtomicXor,
		hlo.OpMinimum: spirv.OpAtomicSMin, hlo.OpMaximum: spirv.OpAtomicSMax},
	hlo.U32: {hlo.OpAdd: spirv.OpAtomicIAdd, hlo.OpAnd: spirv.OpAtomicAnd, hlo.OpOr: spirv.OpAtomicOr, hlo.OpXor: spirv.OpAtomicXor,
		hlo.OpMinimum: spirv.OpAtomicUMin, hlo.OpMaximum: spirv.OpAtomicUMax},
}

// atomicOp is the atomic instruction that applies scatter in's combiner.
func atomicOp(in *hlo.Instruction) (spirv.Op, bool) {
	if in.Op != hlo.OpScatter || len(in.Operands) != 3 || !in.Shape.IsArray() {
		return 0, false
	}
	a, ok := atomicOps[in.Shape.Elem][in.Called[0].ReducerOp()]
	return a, ok
}

// AtomicScatterKernel generates the second step of an atomic scatter:
// an invocation per element of the updates applies it to the result
// element its window puts it on, by one atomic operation, where the
// whole window fits in the operand (XLA skips a window that does not).
// Bindings: the indices', the updates', then the result.
func AtomicScatterKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	aop, ok := atomicOp(in)
	if !ok {
		return nil, in.Errorf("no atomic operation applies this scatter's combiner")
	}
	k, binds, outs, geo, err := env.scatterUpdates(in)
	if err != nil {
		return nil, err
	}
	xs, us := in.Operands[0].Shape, in.Operands[2].Shape
	size, updDimOf := scatterWindow(in, geo)
	return k.perElement("scatter_atomic_"+xs.Elem.String(), func(idx spirv.ID) error {
		u32 := k.u32()
		ui := k.unravel(idx, us.Dims)
		sp := make([]spirv.ID, len(geo.BatchDims))
		for j, d := range geo.BatchDims {
			sp[j] = ui[d]
		}
		start := k.scatterStarts(in, binds[1], geo, sp)
		fits := k.b.ConstantBool(true)
		pos := make([]spirv.ID, xs.Rank())
		for d := range pos {
			// start is u32, 0xffffffff for a negative index.
			fits = k.boolOp(spirv.OpLogicalAnd, fits, k.boolOp(spirv.OpULessThanEqual, start[d], k.cu32(uint32(xs.Dims[d]-size[d]))))
			// The update's place in the window: its offset along the
			// update dimension that walks d, 0 along an inserted one.
			pos[d] = start[d]
			if updDimOf[d] >= 0 {
				pos[d] = k.f.IAdd(u32, start[d], ui[updDimOf[d]])
			}
		}
		u := k.load(binds[2], idx, us.Elem)
		return k.f.If(fits, func() error {
			k.atomic(aop, outs[0], k.ravel(pos, xs.Dims), u)
			return nil
		})
	})
}

// atomic applies v to element idx of binding bind by atomic instruction
// op (relaxed, device scope: the invocations of one dispatch update the
// element in some order, and the dispatch's end makes the result
// visible).
func (k *kernelBuilder) atomic(op spirv.Op, bind int, idx spirv.ID, v val) {
	t := k.storageElem(k.bindings[bind].st)
	id, vt := v.id, k.u32()
	if v.t == hlo.PRED {
		id = k.f.Select(vt, v.id, k.cu32(1), k.cu32(0))
	} else {
		vt = k.scalarType(v.t)
	}
	if vt != t {
		id = k.f.Bitcast(t, id)
	}
	k.f.Apply(op, t, k.elemPtr(bind, idx), k.cu32(spirv.ScopeDevice), k.cu32(0), id)
}

// scatterUpdates starts the second step of a scatter in place of one
// operand: its builder, its bindings (bindUpdates) and its indexing.
func (env Env) scatterUpdates(in *hlo.Instruction) (k *kernelBuilder, binds, outs []int, geo hlo.Indexing, err error) {
	k = env.builder(1)
	if binds, outs, err = k.bindUpdates(in); err != nil {
		return nil, nil, nil, geo, err
	}
	xs, ix, us := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape
	return k, binds, outs, in.A.Scatter.Indexing(xs.Rank(), ix, us.Rank()), nil
}
