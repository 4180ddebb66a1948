package kgen

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// SortKernel generates a stable sort of every 1-D slice along the sort
// dimension: one invocation per slice runs a bottom-up merge sort of the
// slice's positions (ping-ponging between two u32 scratch buffers, the
// comparator inlined, the left element kept on ties), then gathers every
// operand through the sorted positions. Bindings: N operands, N outputs,
// scratch A, scratch B.
func SortKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	k := env.builder(1)
	binds, outs, err := k.bind(in)
	if err != nil {
		return nil, err
	}
	sa, err := k.addBuffer(hlo.U32, "scratch0", false, in.Operands[0].Shape.NumElements())
	if err != nil {
		return nil, err
	}
	sb, err := k.addBuffer(hlo.U32, "scratch1", false, in.Operands[0].Shape.NumElements())
	if err != nil {
		return nil, err
	}
	shape := in.Operands[0].Shape
	d := in.A.Dimensions[0]
	length := shape.Dims[d]
	st := hlo.RowMajorStrides(shape.Dims)
	outer := append([]int64{}, shape.Dims...)
	outer[d] = 1
	passes := 0
	for w := int64(1); w < length; w *= 2 {
		passes++
	}
	return k.perElement(fmt.Sprintf("sort_%s", in.Operands[0].Shape.Elem), func(row spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		base := k.ravel(k.unravel(row, outer), shape.Dims) // the slice's first element
		elem := func(pos spirv.ID) spirv.ID { return op(spirv.OpIAdd, base, op(spirv.OpIMul, pos, cu(st[d]))) }
		sbase := op(spirv.OpIMul, row, cu(length))
		scratch := []int{sa, sb}
		sAt := func(j spirv.ID) spirv.ID { return op(spirv.OpIAdd, sbase, j) }
		if err := k.loop(cu(length), func(j spirv.ID) error {
			k.storeElem(scratch[0], sAt(j), j)
			return nil
		}); err != nil {
			return err
		}
		less := k.sortLess(in, binds, elem)
		// The cursors are read before a pair's first step sets them (the
		// select there discards what was read): start them at 0, so that
		// no load is of an undefined value, which a GPU compiler may
		// fold as it likes.
		iv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		jv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		k.f.Store(iv, cu(0))
		k.f.Store(jv, cu(0))
		for p := 0; p < passes; p++ {
			w := int64(1) << uint(p)
			src, dst := p%2, (p+1)%2
			err := k.loop(cu(length), func(kk spirv.ID) error {
				lo := op(spirv.OpIMul, op(spirv.OpUDiv, kk, cu(2*w)), cu(2*w))
				mid := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, cu(w)), cu(length))
				hi := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, cu(2*w)), cu(length))
				// A new pair of runs starts at lo: reset the two cursors.
				start := k.boolOp(spirv.OpIEqual, kk, lo)
				i0 := k.f.Select(u32, start, lo, k.f.Load(u32, iv))
				j0 := k.f.Select(u32, start, mid, k.f.Load(u32, jv))
				hasL := k.boolOp(spirv.OpULessThan, i0, mid)
				hasR := k.boolOp(spirv.OpULessThan, j0, hi)
				// Read clamped positions; the choice ignores the invalid one.
				li := k.f.Select(u32, hasL, i0, lo)
				ri := k.f.Select(u32, hasR, j0, lo)
				lpos := k.loadElem(scratch[src], sAt(li))
				rpos := k.loadElem(scratch[src], sAt(ri))
				rLess, err := less(rpos, lpos)
				if err != nil {
					return err
				}
				takeL := k.boolOp(spirv.OpLogicalAnd, hasL, k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpLogicalNot, hasR), k.boolOp(spirv.OpLogicalNot, rLess)))
				k.storeElem(scratch[dst], sAt(kk), k.f.Select(u32, takeL, lpos, rpos))
				one := cu(1)
				k.f.Store(iv, k.f.Select(u32, takeL, op(spirv.OpIAdd, i0, one), i0))
				k.f.Store(jv, k.f.Select(u32, takeL, j0, op(spirv.OpIAdd, j0, one)))
				return nil
			})
			if err != nil {
				return err
			}
		}
		final := passes % 2
		return k.loop(cu(length), func(j spirv.ID) error {
			pos := k.loadElem(scratch[final], sAt(j))
			for i, o := range in.Operands {
				v := k.load(binds[i], elem(pos), o.Shape.Elem)
				k.store(outs[i], elem(j), v)
			}
			return nil
		})
	})
}

// sortLess is sort in's comparator on two positions of a slice, whose
// elements elem locates: true where the element at x goes before the one
// at y.
func (k *kernelBuilder) sortLess(in *hlo.Instruction, binds []int, elem func(pos spirv.ID) spirv.ID) func(x, y spirv.ID) (spirv.ID, error) {
	return func(x, y spirv.ID) (spirv.ID, error) {
		return k.sortLessValues(in, k.sortValues(in, binds, elem(x)), k.sortValues(in, binds, elem(y)))
	}
}

// sortValues loads every operand of sort in at element e.
func (k *kernelBuilder) sortValues(in *hlo.Instruction, binds []int, e spirv.ID) []val {
	vs := make([]val, len(in.Operands))
	for i, o := range in.Operands {
		vs[i] = k.load(binds[i], e, o.Shape.Elem)
	}
	return vs
}

// sortLessValues is sort in's comparator on two elements' operand
// values: true where x goes before y.
func (k *kernelBuilder) sortLessValues(in *hlo.Instruction, x, y []val) (spirv.ID, error) {
	args := make([]val, 2*len(in.Operands))
	for i := range in.Operands {
		args[2*i], args[2*i+1] = x[i], y[i]
	}
	r, err := k.emitReducer(in.Called[0], args)
	if err != nil {
		return 0, err
	}
	return r[0].id, nil
}

// LongSort is the slice length from which a sort is split over
// dispatches (sortPassKernel): one invocation per slice is fast for many
// short slices, but a single invocation walking a long slice is serial
// and, on lavapipe (Mesa 22.3.6), lengths past 4096 came back with all
// but the first elements unwritten.
const LongSort = 1024

// SortPass says which merge pass of a split sort a kernel is: the
// first reads the operands, the last writes the results, and the ones
// between read and write scratch copies of every operand, a slice's
// elements contiguous.
type SortPass int

const (
	FirstSortPass SortPass = iota
	MiddleSortPass
	LastSortPass
)

// SortPassKernel generates one merge pass of a stable sort split over
// dispatches: push constant 1 is the run width w, push constant 2 the
// binary search's steps (floor(log2 w) + 1: the other run has at most w
// elements; 4096-element slices: 78 steps over the 12 passes, not 156).
// Every element of every slice finds its place in the merged run of
// width 2w by counting, with a binary search, the elements of the other
// run that go before it (on ties, those of the left run), so that each
// pass is one dispatch of an invocation per element, and moves every
// operand's value there: a step of the search reads the probe's values
// once, where carrying positions instead read the position, then the
// values through it (the corpus's 4M-element bf16 sort 768 -> 576 ms,
// and no gather after the last pass). Bindings: the sources (the
// operands, or scratch copies), then the destinations (scratch copies,
// or the results).
func SortPassKernel(in *hlo.Instruction, env Env, pass SortPass) (*Kernel, error) {
	k := env.builder(3)
	shape := in.Operands[0].Shape
	count := shape.NumElements()
	scratch := func(name string, readonly bool) ([]int, error) {
		var bs []int
		for i, o := range in.Operands {
			b, err := k.addBuffer(o.Shape.Elem, fmt.Sprintf("%s%d", name, i), readonly, count)
			if err != nil {
				return nil, err
			}
			bs = append(bs, b)
		}
		return bs, nil
	}
	var src, dst []int
	var err error
	if pass == FirstSortPass {
		src, err = k.bindOperands(in)
	} else {
		src, err = scratch("src", true)
	}
	if err != nil {
		return nil, err
	}
	if pass == LastSortPass {
		dst, err = k.bindResults(in)
	} else {
		dst, err = scratch("dst", false)
	}
	if err != nil {
		return nil, err
	}
	d := in.A.Dimensions[0]
	length := shape.Dims[d]
	return k.perElement(fmt.Sprintf("sort_pass_%s", shape.Elem), func(e spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		sel := func(c, a, b spirv.ID) spirv.ID { return k.f.Select(u32, c, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		w := k.push(1)
		slice, j := op(spirv.OpUDiv, e, cu(length)), op(spirv.OpUMod, e, cu(length))
		sbase := op(spirv.OpIMul, slice, cu(length))
		elem := sliceElem(k, shape, d, slice)
		// at is where rank i of the slice is in a source or destination.
		at := func(operands bool, i spirv.ID) spirv.ID {
			if operands {
				return elem(i)
			}
			return op(spirv.OpIAdd, sbase, i)
		}
		values := func(i spirv.ID) []val { return k.sortValues(in, src, at(pass == FirstSortPass, i)) }
		w2 := op(spirv.OpIAdd, w, w)
		lo := op(spirv.OpIMul, op(spirv.OpUDiv, j, w2), w2)
		mid := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, w), cu(length))
		hi := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, w2), cu(length))
		left := k.boolOp(spirv.OpULessThan, j, mid)
		xv := values(j)
		// Search the other run: [mid, hi) for a left element, [lo, mid)
		// for a right one. before(y) says whether y goes before x; it is
		// true on a prefix of the other run.
		from := sel(left, mid, lo)
		count := op(spirv.OpISub, sel(left, hi, mid), from)
		bv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		ev := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		k.f.Store(bv, cu(0))
		k.f.Store(ev, count)
		err := k.loop(k.push(2), func(spirv.ID) error {
			b := k.f.Load(u32, bv)
			en := k.f.Load(u32, ev)
			open := k.boolOp(spirv.OpULessThan, b, en)
			m := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, b, en), cu(1))
			yv := values(k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, from, m), cu(length-1)))
			// A right element y goes before left x if strictly less,
			// before right x if not greater: one comparator call, its
			// arguments in the order the side asks.
			lhs, rhs := make([]val, len(xv)), make([]val, len(xv))
			for i := range xv {
				lhs[i], rhs[i] = k.sel(left, yv[i], xv[i]), k.sel(left, xv[i], yv[i])
			}
			r, err := k.sortLessValues(in, lhs, rhs)
			if err != nil {
				return err
			}
			before := k.f.Select(k.boolT(), left, r, k.boolOp(spirv.OpLogicalNot, r))
			k.f.Store(bv, sel(k.boolOp(spirv.OpLogicalAnd, open, before), op(spirv.OpIAdd, m, cu(1)), b))
			k.f.Store(ev, sel(k.boolOp(spirv.OpLogicalAnd, open, k.boolOp(spirv.OpLogicalNot, before)), m, en))
			return nil
		})
		if err != nil {
			return err
		}
		n := k.f.Load(u32, bv)
		// Left x: lo + (j - lo) + n; right x: lo + n + (j - mid).
		rank := op(spirv.OpIAdd, op(spirv.OpISub, j, sel(left, cu(0), op(spirv.OpISub, mid, lo))), n)
		for i := range dst {
			k.store(dst[i], at(pass == LastSortPass, rank), xv[i])
		}
		return nil
	})
}

// sliceElem returns the linear index of position j in the given slice
// (slices numbered row-major over the other dimensions) along dimension d.
func sliceElem(k *kernelBuilder, shape hlo.Shape, d int64, slice spirv.ID) func(j spirv.ID) spirv.ID {
	u32 := k.u32()
	outer := append([]int64{}, shape.Dims...)
	outer[d] = 1
	base := k.ravel(k.unravel(slice, outer), shape.Dims)
	stride := hlo.RowMajorStrides(shape.Dims)[d]
	return func(j spirv.ID) spirv.ID {
		return k.f.IAdd(u32, base, k.f.IMul(u32, j, k.cu32(uint32(stride))))
	}
}
