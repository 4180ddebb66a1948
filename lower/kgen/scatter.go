package kgen

import (
	"math"
	"math/bits"
	"slices"

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
	windowSize, updDimOf := scatterWindow(in, geo)
	count := int64(1)
	for _, s := range scatterSizes {
		count *= s
	}
	if od, ok := SortedRows(in); ok {
		return k.sortedScatter(in, binds, outs, geo, od, scatterSizes, windowSize, updDimOf, count)
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
			start := k.scatterStarts(in, binds[n], geo, sp)
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

// scatterWindow is scatter in's update window along each operand
// dimension: its size, and the update dimension that walks it (-1 for
// an inserted or batching dimension, of size 1).
func scatterWindow(in *hlo.Instruction, geo hlo.Indexing) (size, updDimOf []int64) {
	n := (len(in.Operands) - 1) / 2
	rank := in.Operands[0].Shape.Rank()
	us := in.Operands[n+1].Shape
	size, updDimOf = make([]int64, rank), make([]int64, rank)
	for d := range size {
		size[d], updDimOf[d] = 1, -1
	}
	for j, od := range geo.WindowDims {
		uw := in.A.Scatter.UpdateWindowDims[j]
		size[od], updDimOf[od] = us.Dims[uw], uw
	}
	return size, updDimOf
}

// scatterStarts is the start of scatter in's update window at scatter
// position sp (its place among the scatter dimensions) along each operand
// dimension, its indices read through binding ix: clamped into [0,
// dim] (dim itself never fits a window, so that a 64-bit index keeps its
// verdict), a negative index 0xffffffff; a batching dimension's start
// is the position's own.
func (k *kernelBuilder) scatterStarts(in *hlo.Instruction, ixBind int, geo hlo.Indexing, sp []spirv.ID) []spirv.ID {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	xs, ix := in.Operands[0].Shape, in.Operands[n].Shape
	start := make([]spirv.ID, xs.Rank())
	for d := range start {
		start[d] = k.cu32(0)
	}
	for j := int64(0); j < geo.IndexCount; j++ {
		v := k.scatterIndex(ixBind, ix, geo, sd.IndexVectorDim, sp, j)
		od := sd.ScatterDimsToOperandDims[j]
		start[od] = k.clampIndex(v, xs.Dims[od])
		if ix.Elem.Kind() == hlo.KindSigned {
			neg := k.boolOp(spirv.OpSLessThan, v.id, k.zero(ix.Elem))
			start[od] = k.f.Select(k.u32(), neg, k.cu32(0xffffffff), start[od])
		}
	}
	for j, od := range sd.InputBatchingDims {
		start[od] = sp[geo.BatchPos(sd.ScatterIndicesBatchingDims[j])]
	}
	return start
}

// scatterIndex loads component j of the index vector at scatter
// position sp (its place among the scatter dimensions) from the indices
// of shape ix at binding bind: the positions spread over the indices'
// dimensions other than index_vector_dim ivd.
func (k *kernelBuilder) scatterIndex(bind int, ix hlo.Shape, geo hlo.Indexing, ivd int64, sp []spirv.ID, j int64) val {
	ii := make([]spirv.ID, ix.Rank())
	for p, d := range geo.IndexDims {
		ii[d] = sp[p]
	}
	if ivd < int64(ix.Rank()) {
		ii[ivd] = k.cu32(uint32(j))
	}
	return k.load(bind, k.ravel(ii, ix.Dims), ix.Elem)
}

// SortedRows reports whether scatter in takes the sorted form of
// ScatterKernel, and the operand dimension its indices select: it is of
// OneIndexRows' form and its indices are sorted (indices_are_sorted,
// which the lowering sets where it sorts them itself).
func SortedRows(in *hlo.Instruction) (int64, bool) {
	if in.Op != hlo.OpScatter || !in.A.Scatter.IndicesAreSorted {
		return 0, false
	}
	return OneIndexRows(in)
}

// OneIndexRows reports whether each index of scatter in is one integer,
// the start along one operand dimension that is not a window dimension,
// with no batching dimensions (each update then lands on the elements of
// one index along that dimension), and returns that dimension.
func OneIndexRows(in *hlo.Instruction) (int64, bool) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	if len(sd.ScatterDimsToOperandDims) != 1 || len(sd.InputBatchingDims) > 0 {
		return 0, false
	}
	ix := in.Operands[n].Shape
	if !ix.Elem.IsInteger() || (sd.IndexVectorDim < int64(ix.Rank()) && ix.Dims[sd.IndexVectorDim] != 1) {
		return 0, false
	}
	od := sd.ScatterDimsToOperandDims[0]
	if !slices.Contains(sd.InsertedWindowDims, od) || in.Operands[0].Shape.Dims[od] >= math.MaxUint32-1 {
		return 0, false
	}
	return od, true
}

// sortedScatter is ScatterKernel over sorted indices (SortedRows): an
// invocation per operand element finds, by two binary searches, the
// positions whose index is its own along dimension od, and applies
// those updates in order: log2(count) + its updates' steps where the
// general form walks every position (the lowering sorts a large
// scatter's indices for this: lower/sortscatter.go). An index maps to
// a key that grows with it, 0 below the dimension, index+1 inside,
// dim+1 beyond, so the search works on sorted indices of any integer
// type, and an element's own key is its index + 1.
func (k *kernelBuilder) sortedScatter(in *hlo.Instruction, binds, outs []int, geo hlo.Indexing, od int64, scatterSizes, windowSize, updDimOf []int64, count int64) (*Kernel, error) {
	n := (len(in.Operands) - 1) / 2
	sd := in.A.Scatter
	xs, ix, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	return k.perElement("scatter_sorted_"+xs.Elem.String(), func(idx spirv.ID) error {
		u32, bt := k.u32(), k.boolT()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		o := k.unravel(idx, xs.Dims)
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[i], idx, in.Operands[i].Shape.Elem)
		}
		key := func(t spirv.ID) spirv.ID {
			v := k.scatterIndex(binds[n], ix, geo, sd.IndexVectorDim, k.unravel(t, scatterSizes), 0)
			key := op(spirv.OpIAdd, k.clampIndex(v, xs.Dims[od]), k.cu32(1))
			if ix.Elem.Kind() == hlo.KindSigned {
				key = k.f.Select(u32, k.boolOp(spirv.OpSLessThan, v.id, k.zero(ix.Elem)), k.cu32(0), key)
			}
			return key
		}
		own := op(spirv.OpIAdd, o[od], k.cu32(1))
		// bound is the first position whose key is at least own (or,
		// with past, above it).
		bound := func(past bool) (spirv.ID, error) {
			ptr := k.b.TypePointer(spirv.StorageFunction, u32)
			lo, hi := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr)
			k.f.Store(lo, k.cu32(0))
			k.f.Store(hi, k.cu32(uint32(count)))
			err := k.loop(k.cu32(uint32(bits.Len64(uint64(count)))), func(spirv.ID) error {
				l, h := k.f.Load(u32, lo), k.f.Load(u32, hi)
				open := k.boolOp(spirv.OpULessThan, l, h)
				mid := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, l, h), k.cu32(1))
				kv := key(k.f.Ext(u32, spirv.GLSLUMin, mid, k.cu32(uint32(count-1))))
				cmp := spirv.OpULessThan
				if past {
					cmp = spirv.OpULessThanEqual
				}
				right := k.boolOp(cmp, kv, own)
				k.f.Store(lo, k.f.Select(u32, k.boolOp(spirv.OpLogicalAnd, open, right), op(spirv.OpIAdd, mid, k.cu32(1)), l))
				k.f.Store(hi, k.f.Select(u32, k.boolOp(spirv.OpLogicalAnd, open, k.f.Apply(spirv.OpLogicalNot, bt, right)), mid, h))
				return nil
			})
			return k.f.Load(u32, lo), err
		}
		first, err := bound(false)
		if err != nil {
			return err
		}
		end, err := bound(true)
		if err != nil {
			return err
		}
		// Elements past the window along the other dimensions (whose
		// starts are 0) take no update.
		inside := k.b.ConstantBool(true)
		for _, d := range geo.WindowDims {
			inside = k.boolOp(spirv.OpLogicalAnd, inside, k.boolOp(spirv.OpULessThan, o[d], k.cu32(uint32(windowSize[d]))))
		}
		steps := k.f.Select(u32, inside, op(spirv.OpISub, end, first), k.cu32(0))
		res, err := k.foldN(in.Called[0], inits, steps, func(j spirv.ID) (spirv.ID, []val) {
			sp := k.unravel(op(spirv.OpIAdd, first, j), scatterSizes)
			ui := make([]spirv.ID, us.Rank())
			for j, d := range geo.BatchDims {
				ui[d] = sp[j]
			}
			for _, d := range geo.WindowDims {
				ui[updDimOf[d]] = o[d]
			}
			at := k.ravel(ui, us.Dims)
			upd := make([]val, n)
			for i := range upd {
				upd[i] = k.load(binds[n+1+i], at, in.Operands[n+1+i].Shape.Elem)
			}
			return 0, upd
		})
		if err != nil {
			return err
		}
		k.storeAll(outs, idx, res)
		return nil
	})
}
