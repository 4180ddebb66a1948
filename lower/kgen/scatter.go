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
// scatter's indices for this: lower/sortscatter.go), searching their
// keys (sortedKeys).
func (k *kernelBuilder) sortedScatter(in *hlo.Instruction, binds, outs []int, geo hlo.Indexing, od int64, scatterSizes, windowSize, updDimOf []int64, count int64) (*Kernel, error) {
	n := (len(in.Operands) - 1) / 2
	sd := in.A.Scatter
	xs, ix, us := in.Operands[0].Shape, in.Operands[n].Shape, in.Operands[n+1].Shape
	return k.perElement("scatter_sorted_"+xs.Elem.String(), func(idx spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		o := k.unravel(idx, xs.Dims)
		inits := make([]val, n)
		for i := range inits {
			inits[i] = k.load(binds[i], idx, in.Operands[i].Shape.Elem)
		}
		keys := sortedKeys{k, binds[n], ix, geo, sd.IndexVectorDim, scatterSizes, xs.Dims[od], count}
		own := op(spirv.OpIAdd, o[od], k.cu32(1))
		bound := func(past bool) (spirv.ID, error) { return keys.bound(own, past) }
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

// sortedKeys are the keys of a scatter's positions sorted by index
// (SortedRows): an index below the operand's dimension is key 0, one
// inside it index+1, one beyond it dim+1, so that the keys grow with the
// indices of any integer type and an element's own key is its index + 1.
type sortedKeys struct {
	k     *kernelBuilder
	bind  int // the indices'
	ix    hlo.Shape
	geo   hlo.Indexing
	ivd   int64   // the index vector dimension
	sizes []int64 // the scatter dimensions' sizes
	dim   int64   // the operand dimension's size
	count int64   // positions
}

// at is the key of position t.
func (s sortedKeys) at(t spirv.ID) spirv.ID {
	k, u32 := s.k, s.k.u32()
	v := k.scatterIndex(s.bind, s.ix, s.geo, s.ivd, k.unravel(t, s.sizes), 0)
	key := k.f.Apply(spirv.OpIAdd, u32, k.clampIndex(v, s.dim), k.cu32(1))
	if s.ix.Elem.Kind() == hlo.KindSigned {
		key = k.f.Select(u32, k.boolOp(spirv.OpSLessThan, v.id, k.zero(s.ix.Elem)), k.cu32(0), key)
	}
	return key
}

// bound is the first position whose key is at least own (or, with
// past, above it), by binary search.
func (s sortedKeys) bound(own spirv.ID, past bool) (spirv.ID, error) {
	k, u32, bt := s.k, s.k.u32(), s.k.boolT()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	ptr := k.b.TypePointer(spirv.StorageFunction, u32)
	lo, hi := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr)
	k.f.Store(lo, k.cu32(0))
	k.f.Store(hi, k.cu32(uint32(s.count)))
	err := k.loop(k.cu32(uint32(bits.Len64(uint64(s.count)))), func(spirv.ID) error {
		l, h := k.f.Load(u32, lo), k.f.Load(u32, hi)
		open := k.boolOp(spirv.OpULessThan, l, h)
		mid := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, l, h), k.cu32(1))
		kv := s.at(k.f.Ext(u32, spirv.GLSLUMin, mid, k.cu32(uint32(s.count-1))))
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

// RunScatter reports whether scatter in may be computed as runs of its
// sorted positions (RunScatterKernel): one operand, of SortedRows' form.
func RunScatter(in *hlo.Instruction) bool {
	_, ok := SortedRows(in)
	return ok && len(in.Operands) == 3
}

// RunScatterKernel generates the second step of a scatter over sorted
// indices done in place (the result holds the operand: updateslice.go):
// an invocation per update element; the first position of each run of
// equal indices folds, in order, the run's updates of its window
// element into the result element they land on. Every result element
// takes its updates in the order sortedScatter gives them, with steps
// in proportion to the updates, not to the operand's elements times a
// binary search (an embedding's gradient, f32[100000,128] into
// f32[50000,128]). Bindings: the indices', the updates', the result.
func RunScatterKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	od, ok := SortedRows(in)
	if !ok || len(in.Operands) != 3 {
		return nil, in.Errorf("no run kernel for this scatter")
	}
	k, binds, outs, geo, err := env.scatterUpdates(in)
	if err != nil {
		return nil, err
	}
	xs, ix, us := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape
	sizes := make([]int64, len(geo.BatchDims))
	count := int64(1)
	for j, d := range geo.BatchDims {
		sizes[j] = us.Dims[d]
		count *= sizes[j]
	}
	_, updDimOf := scatterWindow(in, geo)
	keys := sortedKeys{k, binds[1], ix, geo, in.A.Scatter.IndexVectorDim, sizes, xs.Dims[od], count}
	return k.perElement("scatter_runs_"+xs.Elem.String(), func(idx spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		ui := k.unravel(idx, us.Dims)
		sp := make([]spirv.ID, len(geo.BatchDims))
		for j, d := range geo.BatchDims {
			sp[j] = ui[d]
		}
		t := k.ravel(sp, sizes) // the position
		own := keys.at(t)
		// The run's first position, of an index inside the operand.
		prev := keys.at(k.f.Select(u32, k.boolOp(spirv.OpIEqual, t, k.cu32(0)), k.cu32(0), op(spirv.OpISub, t, k.cu32(1))))
		first := k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpIEqual, t, k.cu32(0)), k.boolOp(spirv.OpINotEqual, prev, own))
		inside := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpUGreaterThan, own, k.cu32(0)), k.boolOp(spirv.OpULessThanEqual, own, k.cu32(uint32(xs.Dims[od]))))
		return k.f.If(k.boolOp(spirv.OpLogicalAnd, first, inside), func() error {
			end, err := keys.runEnd(t, own)
			if err != nil {
				return err
			}
			o := make([]spirv.ID, xs.Rank())
			for d := range o {
				o[d] = k.cu32(0)
				if updDimOf[d] >= 0 {
					o[d] = ui[updDimOf[d]]
				}
			}
			o[od] = op(spirv.OpISub, own, k.cu32(1))
			at := k.ravel(o, xs.Dims)
			init := []val{k.load(outs[0], at, xs.Elem)}
			res, err := k.foldN(in.Called[0], init, op(spirv.OpISub, end, t), func(j spirv.ID) (spirv.ID, []val) {
				q := k.unravel(op(spirv.OpIAdd, t, j), sizes)
				uq := append([]spirv.ID{}, ui...)
				for j, d := range geo.BatchDims {
					uq[d] = q[j]
				}
				return 0, []val{k.load(binds[2], k.ravel(uq, us.Dims), us.Elem)}
			})
			if err != nil {
				return err
			}
			k.store(outs[0], at, res[0])
			return nil
		})
	})
}

// runEnd is the end of the run of key own that starts at position t:
// the first position past t whose key is above it, found by galloping
// (t+1, t+2, t+4, ... until one is past the run) and then a binary
// search between the last two: 2 log2 of the run's length steps, most
// runs a step or two, where a search of every position takes log2 of
// their count.
func (s sortedKeys) runEnd(t, own spirv.ID) (spirv.ID, error) {
	k, u32 := s.k, s.k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	n := k.cu32(uint32(s.count))
	// in reports whether position q is in the run (q < count).
	in := func(q spirv.ID) spirv.ID {
		same := k.boolOp(spirv.OpIEqual, s.at(k.f.Ext(u32, spirv.GLSLUMin, q, k.cu32(uint32(s.count-1)))), own)
		return k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, q, n), same)
	}
	ptr := k.b.TypePointer(spirv.StorageFunction, u32)
	lo, hi := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr) // lo in the run, hi past it or the count
	step := k.f.LocalVariable(ptr)
	k.f.Store(lo, t)
	k.f.Store(hi, n)
	k.f.Store(step, k.cu32(1))
	// Gallop while t + step is in the run (at most log2(count) times).
	err := k.f.While(func() spirv.ID {
		q := op(spirv.OpIAdd, t, k.f.Load(u32, step))
		return k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpULessThan, q, k.f.Load(u32, hi)), in(q))
	}, func() error {
		k.f.Store(lo, op(spirv.OpIAdd, t, k.f.Load(u32, step)))
		return nil
	}, func() {
		k.f.Store(step, op(spirv.OpShiftLeftLogical, k.f.Load(u32, step), k.cu32(1)))
	})
	if err != nil {
		return 0, err
	}
	k.f.Store(hi, k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, t, k.f.Load(u32, step)), n))
	// Then halve (lo, hi] down to the first position past the run.
	err = k.f.While(func() spirv.ID {
		return k.boolOp(spirv.OpULessThan, op(spirv.OpIAdd, k.f.Load(u32, lo), k.cu32(1)), k.f.Load(u32, hi))
	}, func() error {
		l, h := k.f.Load(u32, lo), k.f.Load(u32, hi)
		mid := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, l, h), k.cu32(1))
		inRun := in(mid)
		k.f.Store(lo, k.f.Select(u32, inRun, mid, l))
		k.f.Store(hi, k.f.Select(u32, inRun, h, mid))
		return nil
	}, func() {})
	return k.f.Load(u32, hi), err
}
