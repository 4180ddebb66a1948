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
	n := len(in.Operands) / 2
	outShapes := in.Shape.Leaves()
	src := in.Operands[0].Shape
	w := in.A.Window
	sizes := make([]int64, len(w.Dims))
	count := int64(1)
	for i, d := range w.Dims {
		sizes[i] = d.Size
		count *= d.Size
	}
	{
		u32 := k.u32()
		o := k.unravel(idx, outShapes[0].Dims)
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[n+i], k.cu32(0), in.Operands[n+i].Shape.Elem)
		}
		return k.fold(in.Called[0], inits, count, func(c spirv.ID) (spirv.ID, []val) {
			wi := k.unravel(c, sizes)
			ok := k.b.ConstantBool(true)
			pos := make([]spirv.ID, len(sizes))
			for d, wd := range w.Dims {
				var valid spirv.ID
				pos[d], valid = k.windowSource(wd, o[d], wi[d], src.Dims[d])
				ok = k.boolOp(spirv.OpLogicalAnd, ok, valid)
			}
			// Read element 0 at skipped positions, to stay in bounds.
			at := k.f.Select(u32, ok, k.ravel(pos, src.Dims), k.cu32(0))
			xs := make([]val, n)
			for i := range xs {
				xs[i] = k.load(binds[i], at, in.Operands[i].Shape.Elem)
			}
			return ok, xs
		})
	}
}
