package lower

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// reduceWindowKernel generates a (variadic) reduce-window: one invocation
// per output element folds its window in row-major window order, skipping
// positions that fall on padding or lhs-dilation holes (as XLA's
// evaluator does). Bindings: N inputs, N init values, N outputs.
func reduceWindowKernel(in *hlo.Instruction, tg Target, local uint32) (*Kernel, error) {
	n := len(in.Operands) / 2
	if len(in.Called) != 1 || !reducerSupported(in.Called[0]) {
		return nil, in.Errorf("reduce-window's to_apply is not a scalar elementwise computation; not supported on the device yet")
	}
	k := newKernelBuilder(tg, local, 1)
	binds, err := k.bindOperands(in)
	if err != nil {
		return nil, err
	}
	outs, err := k.bindResults(in)
	if err != nil {
		return nil, err
	}
	outShapes := in.Shape.Leaves()
	src := in.Operands[0].Shape
	w := in.A.Window
	sizes := make([]int64, len(w.Dims))
	count := int64(1)
	for i, d := range w.Dims {
		sizes[i] = d.Size
		count *= d.Size
	}
	return k.perElement("reduce_window_"+src.Elem.String(), func(idx spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Op(o, u32, uint32(a), uint32(b)) }
		o := k.unravel(idx, outShapes[0].Dims)
		types := make([]hlo.ElementType, n)
		accVars := make([]spirv.ID, n)
		for i := 0; i < n; i++ {
			types[i] = in.Operands[n+i].Shape.Elem
			accVars[i] = k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.scalarType(types[i])))
			init := k.load(binds[n+i], k.cu32(0), types[i])
			k.f.Void(spirv.OpStore, uint32(accVars[i]), uint32(init.id))
		}
		err := k.loop(k.cu32(uint32(count)), func(c spirv.ID) error {
			wi := k.unravel(c, sizes)
			ok := k.b.ConstantBool(true)
			pos := make([]spirv.ID, len(sizes))
			for d, wd := range w.Dims {
				// p = o*stride + w*rhs_dilate - pad_lo, in signed arithmetic.
				p := op(spirv.OpIAdd, op(spirv.OpIMul, o[d], k.cu32(uint32(wd.Stride))), op(spirv.OpIMul, wi[d], k.cu32(uint32(wd.RhsDilate))))
				p = op(spirv.OpISub, p, k.cu32(uint32(int32(wd.PadLo))))
				q := op(spirv.OpSDiv, p, k.cu32(uint32(wd.LhsDilate)))
				r := op(spirv.OpSRem, p, k.cu32(uint32(wd.LhsDilate)))
				valid := k.boolOp(spirv.OpLogicalAnd,
					k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpSGreaterThanEqual, p, k.cu32(0)), k.boolOp(spirv.OpIEqual, r, k.cu32(0))),
					k.boolOp(spirv.OpSLessThan, q, k.cu32(uint32(src.Dims[d]))))
				ok = k.boolOp(spirv.OpLogicalAnd, ok, valid)
				pos[d] = q
			}
			// Read element 0 at skipped positions, to stay in bounds.
			at := k.f.Op(spirv.OpSelect, u32, uint32(ok), uint32(k.ravel(pos, src.Dims)), uint32(k.cu32(0)))
			args := make([]val, 2*n)
			for i := 0; i < n; i++ {
				args[i] = val{k.f.Op(spirv.OpLoad, k.scalarType(types[i]), uint32(accVars[i])), types[i]}
				args[n+i] = k.load(binds[i], at, in.Operands[i].Shape.Elem)
			}
			res, err := k.emitReducer(in.Called[0], args)
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				v := k.sel(ok, res[i], args[i])
				k.f.Void(spirv.OpStore, uint32(accVars[i]), uint32(v.id))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			k.store(outs[i], idx, val{k.f.Op(spirv.OpLoad, k.scalarType(types[i]), uint32(accVars[i])), types[i]})
		}
		return nil
	})
}
