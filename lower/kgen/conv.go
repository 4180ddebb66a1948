package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// convShape is what the direct convolution kernels read of a
// convolution: its dimension labels and window (an empty one where it
// has none), its operands' and result's shapes, the operands' row-major
// strides, and the kernel's spatial sizes (its taps) and their product.
type convShape struct {
	c          *hlo.ConvDims
	w          *hlo.Window
	l, kr, out hlo.Shape
	ls, ks     []int64
	taps       []int64
	count      int64
}

func convShapeOf(in *hlo.Instruction) convShape {
	g := convShape{c: in.A.ConvDims, w: in.A.Window, l: in.Operands[0].Shape, kr: in.Operands[1].Shape, out: in.Shape, count: 1}
	if g.w == nil {
		g.w = &hlo.Window{}
	}
	g.ls, g.ks = hlo.RowMajorStrides(g.l.Dims), hlo.RowMajorStrides(g.kr.Dims)
	for _, d := range g.c.KSpatial {
		g.taps = append(g.taps, g.kr.Dims[d])
		g.count *= g.kr.Dims[d]
	}
	return g
}

// convValue computes output element idx of a convolution whose operands
// are read through binds: a direct convolution for any dimension labels,
// strides, padding, lhs and rhs dilation, window reversal and feature and
// batch group counts, accumulating over the kernel's spatial positions
// and input features (in the evaluator's order) in the result type. The
// implicit GEMM (gemmconv.go) replaces it where it pays.
func (k *kernelBuilder) convValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	if v, ok, err := k.depthwiseLanes(in, binds, idx); ok || err != nil {
		return v, err
	}
	g := convShapeOf(in)
	c, ls, ks := g.c, g.ls, g.ks
	lb, kb := binds[0], binds[1]
	ns := len(c.InSpatial)
	fg, bg := in.A.FeatureGroups, in.A.BatchGroups
	outF, inB, kIn := g.kr.Dims[c.KOut], g.l.Dims[c.InBatch], g.kr.Dims[c.KIn]
	loopDims := append(append([]int64{}, g.taps...), kIn) // each tap's input features
	t := g.out.Elem
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	o := k.unravel(idx, g.out.Dims)
	b, of := o[c.OutBatch], o[c.OutFeature]
	ib := op(spirv.OpIAdd, op(spirv.OpIMul, op(spirv.OpUDiv, of, cu(outF/bg)), cu(inB/bg)), b)
	f0 := op(spirv.OpIMul, op(spirv.OpUDiv, of, cu(outF/fg)), cu(kIn))
	lBase := op(spirv.OpIAdd, op(spirv.OpIMul, ib, cu(ls[c.InBatch])), op(spirv.OpIMul, f0, cu(ls[c.InFeature])))
	kBase := op(spirv.OpIMul, of, cu(ks[c.KOut]))
	rt, acc, mul, add := k.sumOfProducts(t)
	err := k.loop(cu(g.count*kIn), func(ci spirv.ID) error {
		p := k.unravel(ci, loopDims)
		f := p[ns]
		li := op(spirv.OpIAdd, lBase, op(spirv.OpIMul, f, cu(ls[c.InFeature])))
		ki := op(spirv.OpIAdd, kBase, op(spirv.OpIMul, f, cu(ks[c.KIn])))
		li, ki, ok := k.convTap(g, o, p[:ns], li, ki)
		x, y, err := k.factors(lb, li, g.l.Elem, kb, ki, g.kr.Elem, t)
		if err != nil {
			return err
		}
		k.addProduct(rt, acc, mul, add, x, y, ok)
		return nil
	})
	if err != nil {
		return val{}, err
	}
	return k.normalize(val{k.f.Load(rt, acc), t}), nil
}

// Depthwise convolutions (MobileNet's, ConvNeXt's 7x7: a feature group
// per input feature, one kernel output each) are no GEMM; the direct
// kernel above runs them. In a vector kernel its 8 lanes are 8
// consecutive output features of one position, and each lane looped
// over the window on its own, dividing out its own position and reading
// its own input and kernel elements, strided by 8 across the SIMD
// group's invocations: about 1 GMAC/s on lavapipe. The lanes' windows
// are the same positions of 8 consecutive input features, and their
// kernels 8 consecutive outputs of one tap: one loop for all lanes
// reads each tap's input features and kernel outputs as runs of 8
// (16-byte texels where the features are the minor dimension), and
// folds each lane's products in the order the lane's own loop would
// (the results are its bits).

// DepthwiseLanes reports whether a vector kernel's lanes (width of them)
// computing convolution in's consecutive elements are consecutive
// output features of one depthwise convolution, which depthwiseLanes
// then computes in one loop.
func DepthwiseLanes(in *hlo.Instruction, width int64) bool {
	if in.Op != hlo.OpConvolution || !in.Shape.IsArray() {
		return false
	}
	c := in.A.ConvDims
	kr, out := in.Operands[1].Shape, in.Shape
	outF := kr.Dims[c.KOut]
	return in.A.BatchGroups == 1 && kr.Dims[c.KIn] == 1 && in.A.FeatureGroups == outF &&
		int(c.OutFeature) == out.Rank()-1 && outF%width == 0
}

// depthwiseLanes computes all lanes of a vector kernel's depthwise
// convolution (DepthwiseLanes) when the first of them asks, and returns
// idx's; ok is false where the lanes are not such.
func (k *kernelBuilder) depthwiseLanes(in *hlo.Instruction, binds []int, idx spirv.ID) (v val, ok bool, err error) {
	lane, cols, done, ok := k.sharedLanes(in, binds, idx, DepthwiseLanes)
	switch {
	case !ok:
		return val{}, false, nil
	case done != nil:
		return done[lane][0], true, nil
	}
	g := convShapeOf(in)
	c, ls, ks := g.c, g.ls, g.ks
	lb, kb := binds[0], binds[1]
	l, kr, out := g.l, g.kr, g.out
	t := out.Elem
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	// Lane 0's output element; lane j's feature is its + j.
	o := k.unravel(cols[0], out.Dims)
	f0 := o[c.OutFeature]
	lBase := op(spirv.OpIAdd, op(spirv.OpIMul, o[c.OutBatch], cu(ls[c.InBatch])), op(spirv.OpIMul, f0, cu(ls[c.InFeature])))
	kBase := op(spirv.OpIMul, f0, cu(ks[c.KOut]))
	// Every other stride is a multiple of the features, a multiple of
	// the lanes: a run of them starts at a multiple of 4.
	runOf := func(b int, i spirv.ID, step int64, et hlo.ElementType) []val {
		return k.laneRun(b, i, len(cols), step, et)
	}
	rt, _, mul, add := k.sumOfProducts(t)
	accs := make([]spirv.ID, len(cols))
	for j := range accs {
		_, accs[j], _, _ = k.sumOfProducts(t)
	}
	err = k.loop(cu(g.count), func(ti spirv.ID) error {
		li, ki, valid := k.convTap(g, o, k.unravel(ti, g.taps), lBase, kBase)
		xs, ys := runOf(lb, li, ls[c.InFeature], l.Elem), runOf(kb, ki, ks[c.KOut], kr.Elem)
		for j, acc := range accs {
			x, err := k.factor(xs[j], t)
			if err != nil {
				return err
			}
			y, err := k.factor(ys[j], t)
			if err != nil {
				return err
			}
			k.addProduct(rt, acc, mul, add, x, y, valid)
		}
		return nil
	})
	if err != nil {
		return val{}, false, err
	}
	vals := make([][]val, len(cols))
	for j, acc := range accs {
		vals[j] = []val{k.normalize(val{k.f.Load(rt, acc), t})}
	}
	k.keepLanes(in, cols, vals)
	return vals[lane][0], true, nil
}

// addProduct adds x * y to accumulator acc (of type rt, by mul and add)
// where ok.
func (k *kernelBuilder) addProduct(rt, acc spirv.ID, mul, add spirv.Op, x, y val, ok spirv.ID) {
	a := k.f.Load(rt, acc)
	sum := k.f.Apply(add, rt, a, k.f.Apply(mul, rt, x.id, y.id))
	k.f.Store(acc, k.f.Select(rt, ok, sum, a))
}

// sharedLanes finds the lanes of a vector kernel whose first computes
// in for all of them in one loop (depthwiseLanes, windowLanes: where
// lanes(in, width) holds): idx's lane, every lane's element index, and
// the lanes' values where an earlier lane computed them (keepLanes). ok
// is false where idx is no lane of such a kernel, or in's operands
// (read through binds) read a value held in a register, which holds
// the current lane's element only (columnLanes says more).
func (k *kernelBuilder) sharedLanes(in *hlo.Instruction, binds []int, idx spirv.ID, lanes func(*hlo.Instruction, int64) bool) (lane int, cols []spirv.ID, done [][]val, ok bool) {
	if k.vector == nil || k.lanes > 0 || !lanes(in, int64(k.vector.width)) || k.readsRegister(binds, map[int]bool{}) {
		return 0, nil, nil, false
	}
	if lane, ok = k.vector.lanes[idx]; !ok {
		return 0, nil, nil, false
	}
	cols = k.vector.idxs
	if c, ok := k.columns[computedKey{in, cols[0]}]; ok && k.f.Usable(c.at) {
		return lane, cols, c.vals, true
	}
	return lane, cols, nil, true
}

// keepLanes records the values of in that the lanes at cols computed,
// for the later lanes (sharedLanes).
func (k *kernelBuilder) keepLanes(in *hlo.Instruction, cols []spirv.ID, vals [][]val) {
	if k.columns == nil {
		k.columns = map[computedKey]columnVals{}
	}
	k.columns[computedKey{in, cols[0]}] = columnVals{vals, spirv.Defined{Block: k.f.Block()}}
}

// laneRun reads n elements of binding b, of type et, from i, step
// apart: texels of 4 where they are consecutive 32-bit elements of a
// texel view (i is then a multiple of 4, as the callers' lanes make
// it), else one by one.
func (k *kernelBuilder) laneRun(b int, i spirv.ID, n int, step int64, et hlo.ElementType) []val {
	u32 := k.u32()
	xs := make([]val, n)
	if step == 1 && n%4 == 0 && b < len(k.bindings) && k.texelAccess(b) && et.Bytes() == 4 && k.bindings[b].st == et {
		k.noteIndex(b, i)
		for q := 0; q < n; q += 4 {
			v := k.texelLoad4(b, k.f.IAdd(u32, k.f.UDiv(u32, i, k.cu32(4)), k.cu32(uint32(q/4))))
			for j := range 4 {
				xs[q+j] = val{k.f.Extract(k.scalarType(et), v, uint32(j)), et}
			}
		}
		return xs
	}
	for j := range xs {
		xs[j] = k.load(b, k.f.IAdd(u32, i, k.cu32(uint32(int64(j)*step))), et)
	}
	return xs
}

// convTap adds to a convolution's input and kernel element indices li
// and ki the terms of kernel spatial position p (a tap) for output
// position o, and says whether the input element is real (not padding
// or a hole); li is then element 0 where it is not, to stay in bounds.
func (k *kernelBuilder) convTap(g convShape, o, p []spirv.ID, li, ki spirv.ID) (spirv.ID, spirv.ID, spirv.ID) {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	c := g.c
	ok := k.b.ConstantBool(true)
	for i, wd := range g.w.Dims[:len(c.InSpatial)] {
		q, inside := k.windowSource(wd, o[c.OutSpatial[i]], p[i], g.l.Dims[c.InSpatial[i]])
		ok = k.boolOp(spirv.OpLogicalAnd, ok, inside)
		li = op(spirv.OpIAdd, li, op(spirv.OpIMul, q, k.cu32(uint32(g.ls[c.InSpatial[i]]))))
		kk := p[i]
		if wd.Reversal {
			kk = op(spirv.OpISub, k.cu32(uint32(g.taps[i]-1)), kk)
		}
		ki = op(spirv.OpIAdd, ki, op(spirv.OpIMul, kk, k.cu32(uint32(g.ks[c.KSpatial[i]]))))
	}
	return k.f.Select(u32, ok, li, k.cu32(0)), ki, ok
}
