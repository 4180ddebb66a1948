package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// ScatterKernel generates a deterministic (variadic) scatter: one
// invocation per operand element walks the scatter positions in row-major
// order and applies, through the inlined to_apply computation, every
// update whose window covers the element. A window that does not fit in
// the operand at its start index is skipped, as XLA does. The order
// equals the evaluator's (row-major over the updates) when the update
// window dimensions follow the scatter dimensions, as JAX emits them;
// otherwise only the rounding of non-associative combiners can differ.
// Bindings: N operands, the indices, N updates, N outputs.
func ScatterKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	n := (len(in.Operands) - 1) / 2
	sd := in.A.Scatter
	k := env.builder(1)
	binds, outs, err := k.bind(in)
	if err != nil {
		return nil, err
	}
	xs, ix, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	geo := sd.Indexing(xs.Rank(), ix, us.Rank())
	scatterDims := geo.BatchDims
	scatterSizes := make([]int64, len(scatterDims))
	for j, d := range scatterDims {
		scatterSizes[j] = us.Dims[d]
	}
	windowSize := make([]int64, xs.Rank())
	updDimOf := make([]int64, xs.Rank()) // update dim covering operand dim, or -1
	for d := range windowSize {
		windowSize[d], updDimOf[d] = 1, -1
	}
	for j, od := range geo.WindowDims {
		windowSize[od] = us.Dims[sd.UpdateWindowDims[j]]
		updDimOf[od] = sd.UpdateWindowDims[j]
	}
	count := int64(1)
	for _, s := range scatterSizes {
		count *= s
	}
	return k.perElement("scatter_"+xs.Elem.String(), func(idx spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		o := k.unravel(idx, xs.Dims)
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[i], idx, in.Operands[i].Shape.Elem)
		}
		res, err := k.fold(in.Called[0], inits, count, func(c spirv.ID) (spirv.ID, []val) {
			sp := k.unravel(c, scatterSizes) // position among the scatter dims
			// Indices element position: scatter positions spread over the
			// indices dims other than index_vector_dim.
			ii := make([]spirv.ID, ix.Rank())
			for j, d := range geo.IndexDims {
				ii[d] = sp[j]
			}
			start := make([]spirv.ID, xs.Rank())
			for d := range start {
				start[d] = k.cu32(0)
			}
			for j := int64(0); j < geo.IndexCount; j++ {
				if sd.IndexVectorDim < int64(ix.Rank()) {
					ii[sd.IndexVectorDim] = k.cu32(uint32(j))
				}
				v := k.load(binds[n], k.ravel(ii, ix.Dims), ix.Elem)
				od := sd.ScatterDimsToOperandDims[j]
				// Keep the index signed in 32 bits; out-of-range starts are
				// rejected below (clamped first so 64-bit values stay exact
				// in their verdict).
				start[od] = k.clampIndex(v, xs.Dims[od]) // in [0, dim]: dim itself never fits a window
				if ix.Elem.Kind() == hlo.KindSigned {
					neg := k.boolOp(spirv.OpSLessThan, v.id, k.zero(ix.Elem))
					start[od] = k.f.Select(u32, neg, k.cu32(0xffffffff), start[od])
				}
			}
			for j, od := range sd.InputBatchingDims {
				start[od] = sp[geo.BatchPos(sd.ScatterIndicesBatchingDims[j])]
			}
			fits, inside := k.b.ConstantBool(true), k.b.ConstantBool(true)
			ui := make([]spirv.ID, us.Rank())
			for j, d := range scatterDims {
				ui[d] = sp[j]
			}
			for d := range o {
				// fits: start <= dim - window (start is u32; -1 marks negative).
				f := k.boolOp(spirv.OpULessThanEqual, start[d], k.cu32(uint32(xs.Dims[d]-windowSize[d])))
				fits = k.boolOp(spirv.OpLogicalAnd, fits, f)
				// rel < size as unsigned also rejects o < start (it wraps).
				rel := op(spirv.OpISub, o[d], start[d])
				covered := k.boolOp(spirv.OpULessThan, rel, k.cu32(uint32(windowSize[d])))
				inside = k.boolOp(spirv.OpLogicalAnd, inside, covered)
				if updDimOf[d] >= 0 {
					ui[updDimOf[d]] = k.f.Select(u32, covered, rel, k.cu32(0))
				}
			}
			apply := k.boolOp(spirv.OpLogicalAnd, fits, inside)
			at := k.f.Select(u32, apply, k.ravel(ui, us.Dims), k.cu32(0))
			upd := make([]val, n)
			for i := range upd {
				upd[i] = k.load(binds[n+1+i], at, in.Operands[n+1+i].Shape.Elem)
			}
			return apply, upd
		})
		if err != nil {
			return err
		}
		k.storeAll(outs, idx, res)
		return nil
	})
}
