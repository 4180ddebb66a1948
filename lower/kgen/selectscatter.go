package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// SelectWindows is how many windows of a select-and-scatter may hold one
// operand element, and the window's size: the kernel's two loops.
func SelectWindows(in *hlo.Instruction) (candidates, size int64) {
	candidates, size = 1, 1
	for _, d := range in.A.Window.Dims {
		candidates *= (d.Size + d.Stride - 1) / d.Stride
		size *= d.Size
	}
	return candidates, size
}

// selectAndScatterValue computes element p (idx) of a select-and-scatter (the
// gradient of a max pool) as a gather: it starts from the init value
// and, for every window that holds p, in the source's row-major order,
// picks the window's element with the select computation (the first in
// row-major window order, replaced by each later one select does not
// prefer it to, padding skipped) and, where that is p, applies the
// scatter computation to its value and the window's source element. The
// order is the evaluator's, so the sums are its sums bit for bit, and no
// two invocations write one element. Bindings: operand, source, init
// value, result.
func (k *kernelBuilder) selectAndScatterValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	sel, scat := in.SelectAndScatterComputations()
	u32, b := k.u32(), k.boolT()
	op := func(o spirv.Op, x, y spirv.ID) spirv.ID { return k.f.Apply(o, u32, x, y) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	operand, source := in.Operands[0].Shape, in.Operands[1].Shape
	t := operand.Elem
	dims := in.A.Window.Dims
	rank := len(dims)
	candidates, size := SelectWindows(in)
	boxDims, sizeDims := make([]int64, rank), make([]int64, rank)
	for d, wd := range dims {
		boxDims[d], sizeDims[d] = (wd.Size+wd.Stride-1)/wd.Stride, wd.Size
	}
	p := k.unravel(idx, operand.Dims)
	// The last window that holds p in each dimension: (p + pad_lo) / stride.
	last := make([]spirv.ID, rank)
	for d, wd := range dims {
		last[d] = op(spirv.OpUDiv, op(spirv.OpIAdd, p[d], cu(wd.PadLo)), cu(wd.Stride))
	}
	accVars, acc := k.accumulators([]val{k.load(binds[2], k.cu32(0), t)})
	bestVar := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
	bestVal := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(t)))
	none := k.cu32(0xffffffff)
	err := k.loop(cu(candidates), func(c spirv.ID) error {
		j := k.unravel(c, boxDims)
		ok := k.b.ConstantBool(true)
		w := make([]spirv.ID, rank)
		for d, wd := range dims {
			// Candidates last-(box-1) .. last, ascending: the source's
			// row-major order. Signed, so that one before 0 is invalid.
			w[d] = op(spirv.OpISub, last[d], cu(boxDims[d]-1))
			w[d] = op(spirv.OpIAdd, w[d], j[d])
			start := op(spirv.OpIMul, w[d], cu(wd.Stride))
			holds := k.boolOp(spirv.OpSLessThan, op(spirv.OpISub, op(spirv.OpIAdd, p[d], cu(wd.PadLo)), start), cu(wd.Size))
			inRange := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpSGreaterThanEqual, w[d], cu(0)), k.boolOp(spirv.OpSLessThan, w[d], cu(source.Dims[d])))
			ok = k.boolOp(spirv.OpLogicalAnd, ok, k.boolOp(spirv.OpLogicalAnd, holds, inRange))
		}
		return k.f.If(ok, func() error {
			k.f.Store(bestVar, none)
			err := k.loop(cu(size), func(e spirv.ID) error {
				off := k.unravel(e, sizeDims)
				inside := k.b.ConstantBool(true)
				q := make([]spirv.ID, rank)
				for d, wd := range dims {
					q[d] = op(spirv.OpISub, op(spirv.OpIAdd, op(spirv.OpIMul, w[d], cu(wd.Stride)), off[d]), cu(wd.PadLo))
					inside = k.boolOp(spirv.OpLogicalAnd, inside, k.boolOp(spirv.OpLogicalAnd,
						k.boolOp(spirv.OpSGreaterThanEqual, q[d], cu(0)), k.boolOp(spirv.OpSLessThan, q[d], cu(operand.Dims[d]))))
				}
				at := k.f.Select(u32, inside, k.ravel(q, operand.Dims), k.cu32(0))
				v := k.load(binds[0], at, t)
				best := k.f.Load(u32, bestVar)
				bv := val{k.f.Load(k.scalarType(t), bestVal), t}
				first := k.f.IEqual(b, best, none)
				keep, err := k.emitReducer(sel, []val{bv, v})
				if err != nil {
					return err
				}
				take := k.boolOp(spirv.OpLogicalAnd, inside, k.boolOp(spirv.OpLogicalOr, first, k.boolOp(spirv.OpLogicalNot, keep[0].id)))
				k.f.Store(bestVar, k.f.Select(u32, take, at, best))
				k.f.Store(bestVal, k.sel(take, v, bv).id)
				return nil
			})
			if err != nil {
				return err
			}
			best := k.f.Load(u32, bestVar)
			return k.f.If(k.f.IEqual(b, best, idx), func() error {
				s := k.load(binds[1], k.ravel(w, source.Dims), t)
				r, err := k.emitReducer(scat, []val{acc(0), s})
				if err != nil {
					return err
				}
				k.f.Store(accVars[0], r[0].id)
				return nil
			})
		})
	})
	if err != nil {
		return val{}, err
	}
	return acc(0), nil
}
