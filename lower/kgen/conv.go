package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// convValue computes output element idx of a convolution whose operands
// are read through binds: a direct convolution for any dimension labels,
// strides, padding, lhs and rhs dilation, window reversal and feature and
// batch group counts, accumulating over the kernel's spatial positions
// and input features (in the evaluator's order) in the result type. The
// implicit GEMM (gemmconv.go) replaces it where it pays.
func (k *kernelBuilder) convValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	c := in.A.ConvDims
	w := in.A.Window
	if w == nil {
		w = &hlo.Window{}
	}
	l, kr, out := in.Operands[0].Shape, in.Operands[1].Shape, in.Shape
	lb, kb := binds[0], binds[1]
	ls, ks := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(kr.Dims)
	ns := len(c.InSpatial)
	fg, bg := in.A.FeatureGroups, in.A.BatchGroups
	outF, inB, kIn := kr.Dims[c.KOut], l.Dims[c.InBatch], kr.Dims[c.KIn]
	loopDims := make([]int64, ns+1)
	count := kIn
	for i := 0; i < ns; i++ {
		loopDims[i] = kr.Dims[c.KSpatial[i]]
		count *= loopDims[i]
	}
	loopDims[ns] = kIn
	t := out.Elem
	{
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		o := k.unravel(idx, out.Dims)
		b, of := o[c.OutBatch], o[c.OutFeature]
		ib := op(spirv.OpIAdd, op(spirv.OpIMul, op(spirv.OpUDiv, of, cu(outF/bg)), cu(inB/bg)), b)
		f0 := op(spirv.OpIMul, op(spirv.OpUDiv, of, cu(outF/fg)), cu(kIn))
		lBase := op(spirv.OpIAdd, op(spirv.OpIMul, ib, cu(ls[c.InBatch])), op(spirv.OpIMul, f0, cu(ls[c.InFeature])))
		kBase := op(spirv.OpIMul, of, cu(ks[c.KOut]))
		rt, acc, mul, add := k.sumOfProducts(t)
		err := k.loop(cu(count), func(ci spirv.ID) error {
			p := k.unravel(ci, loopDims)
			f := p[ns]
			ok := k.b.ConstantBool(true)
			li := op(spirv.OpIAdd, lBase, op(spirv.OpIMul, f, cu(ls[c.InFeature])))
			ki := op(spirv.OpIAdd, kBase, op(spirv.OpIMul, f, cu(ks[c.KIn])))
			for i := 0; i < ns; i++ {
				wd := w.Dims[i]
				q, valid := k.windowSource(wd, o[c.OutSpatial[i]], p[i], l.Dims[c.InSpatial[i]])
				ok = k.boolOp(spirv.OpLogicalAnd, ok, valid)
				li = op(spirv.OpIAdd, li, op(spirv.OpIMul, q, cu(ls[c.InSpatial[i]])))
				kk := p[i]
				if wd.Reversal {
					kk = op(spirv.OpISub, cu(loopDims[i]-1), kk)
				}
				ki = op(spirv.OpIAdd, ki, op(spirv.OpIMul, kk, cu(ks[c.KSpatial[i]])))
			}
			li = k.f.Select(u32, ok, li, cu(0))
			x, y, err := k.factors(lb, li, l.Elem, kb, ki, kr.Elem, t)
			if err != nil {
				return err
			}
			a := k.f.Load(rt, acc)
			sum := k.f.Apply(add, rt, a, k.f.Apply(mul, rt, x.id, y.id))
			k.f.Store(acc, k.f.Select(rt, ok, sum, a))
			return nil
		})
		if err != nil {
			return val{}, err
		}
		return k.normalize(val{k.f.Load(rt, acc), t}), nil
	}
}
