package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// windowSource maps output position o and window position w of one
// window dimension to the input position they read: p = o*stride +
// w*rhs_dilate - pad_lo in the padded, lhs-dilated input (signed), which
// is real where p >= 0, p is a multiple of lhs_dilate, and p/lhs_dilate <
// size. It returns p/lhs_dilate and that condition.
func (k *kernelBuilder) windowSource(wd hlo.WindowDim, o, w spirv.ID, size int64) (spirv.ID, spirv.ID) {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	p := op(spirv.OpIAdd, op(spirv.OpIMul, o, k.cu32(uint32(wd.Stride))), op(spirv.OpIMul, w, k.cu32(uint32(wd.RhsDilate))))
	p = op(spirv.OpISub, p, k.cu32(uint32(int32(wd.PadLo))))
	q := op(spirv.OpSDiv, p, k.cu32(uint32(wd.LhsDilate)))
	// Only a p >= 0 is used, where OpUMod is the remainder (Vulkan
	// leaves OpSRem undefined for a negative operand).
	r := op(spirv.OpUMod, p, k.cu32(uint32(wd.LhsDilate)))
	valid := k.boolOp(spirv.OpLogicalAnd,
		k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpSGreaterThanEqual, p, k.cu32(0)), k.boolOp(spirv.OpIEqual, r, k.cu32(0))),
		k.boolOp(spirv.OpSLessThan, q, k.cu32(uint32(size))))
	return q, valid
}

// reduceWindowValues computes output element idx of every result of a
// (variadic) reduce-window whose operands are read through binds: it
// folds the element's window in row-major window order, skipping
// positions that fall on padding or lhs-dilation holes (as XLA's
// evaluator does). Bindings: N inputs, N init values, N outputs.
func (k *kernelBuilder) reduceWindowValues(in *hlo.Instruction, binds []int, idx spirv.ID) ([]val, error) {
	if vs, ok, err := k.windowLanes(in, binds, idx); ok || err != nil {
		return vs, err
	}
	n := len(in.Operands) / 2
	outShapes := in.Shape.Leaves()
	src := in.Operands[0].Shape
	w := in.A.Window
	sizes, count := windowSizes(w)
	{
		o := k.unravel(idx, outShapes[0].Dims)
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[n+i], k.cu32(0), in.Operands[n+i].Shape.Elem)
		}
		return k.fold(in.Called[0], inits, count, func(c spirv.ID) (spirv.ID, []val) {
			at, ok := k.windowElement(w, o, k.unravel(c, sizes), src.Dims)
			xs := make([]val, n)
			for i := range xs {
				xs[i] = k.load(binds[i], at, in.Operands[i].Shape.Elem)
			}
			return ok, xs
		})
	}
}

// WindowLanes reports whether a vector kernel's lanes (width of them)
// computing reduce-window in's consecutive elements fold the same
// window positions of consecutive operand elements: its minor dimension
// is no window dimension (size 1, stride 1, no padding or dilation; an
// NHWC pooling's features) and a multiple of width. One loop then folds
// all lanes' windows (windowLanes), reading each position's run of
// elements as texels, where each lane looped on its own, reading its
// elements one by one, strided across the SIMD group's invocations.
func WindowLanes(in *hlo.Instruction, width int64) bool {
	if in.Op != hlo.OpReduceWindow || in.A.Window == nil || !in.Shape.Leaves()[0].IsArray() {
		return false
	}
	src := in.Operands[0].Shape
	r := src.Rank()
	if r == 0 || len(in.A.Window.Dims) != r {
		return false
	}
	d := in.A.Window.Dims[r-1]
	return d.Size == 1 && d.Stride == 1 && d.PadLo == 0 && d.PadHi == 0 && d.LhsDilate == 1 && d.RhsDilate == 1 &&
		src.Dims[r-1]%width == 0
}

// windowLanes computes every lane of a vector kernel's reduce-window
// (WindowLanes) when the first of them asks, each lane's fold in the
// order of its own (the same bits), and returns idx's; ok is false
// where the lanes are not such.
func (k *kernelBuilder) windowLanes(in *hlo.Instruction, binds []int, idx spirv.ID) (vs []val, ok bool, err error) {
	lane, cols, done, ok := k.sharedLanes(in, binds, idx, WindowLanes)
	switch {
	case !ok:
		return nil, false, nil
	case done != nil:
		return done[lane], true, nil
	}
	n := len(in.Operands) / 2
	src := in.Operands[0].Shape
	w := in.A.Window
	sizes, count := windowSizes(w)
	o := k.unravel(cols[0], in.Shape.Leaves()[0].Dims)
	inits := make([]val, n)
	for i := range inits {
		inits[i] = k.load(binds[n+i], k.cu32(0), in.Operands[n+i].Shape.Elem)
	}
	sets := k.accumulatorSets(in.Called[0], inits, len(cols))
	err = k.loop(k.cu32(uint32(count)), func(c spirv.ID) error {
		// Lane 0's element, a multiple of the lanes (its row's every
		// stride is).
		at, valid := k.windowElement(w, o, k.unravel(c, sizes), src.Dims)
		runs := make([][]val, n)
		for i := range runs {
			runs[i] = k.laneRun(binds[i], at, len(cols), 1, in.Operands[i].Shape.Elem)
		}
		for j := range cols {
			args := loadAll(sets.accs[j], n)
			for i := range runs {
				args = append(args, runs[i][j])
			}
			res, err := k.emitReducer(in.Called[0], args)
			if err != nil {
				return err
			}
			for i, r := range res {
				k.f.Store(sets.vars[j][i], k.sel(valid, r, args[i]).id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	vals := sets.results()
	k.keepLanes(in, cols, vals)
	return vals[lane], true, nil
}

// windowElement is the operand element (of dims) that window position
// wi of output position o reads, and whether it is real: element 0
// where it falls on padding or a hole, to stay in bounds.
func (k *kernelBuilder) windowElement(w *hlo.Window, o, wi []spirv.ID, dims []int64) (at, ok spirv.ID) {
	ok = k.b.ConstantBool(true)
	pos := make([]spirv.ID, len(dims))
	for d, wd := range w.Dims {
		var inside spirv.ID
		pos[d], inside = k.windowSource(wd, o[d], wi[d], dims[d])
		ok = k.boolOp(spirv.OpLogicalAnd, ok, inside)
	}
	return k.f.Select(k.u32(), ok, k.ravel(pos, dims), k.cu32(0)), ok
}

// windowSizes are window w's sizes and their product, its positions.
func windowSizes(w *hlo.Window) ([]int64, int64) {
	sizes := make([]int64, len(w.Dims))
	count := int64(1)
	for i, d := range w.Dims {
		sizes[i] = d.Size
		count *= d.Size
	}
	return sizes, count
}
