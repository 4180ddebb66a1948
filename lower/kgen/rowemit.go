package kgen

import (
	"errors"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// RowKernel generates row kernel in (see fuseRows): rows invocations,
// each computing its row's prologue reductions and then the row's cols
// elements, with vec4 access where the row length allows.
func RowKernel(in *hlo.Instruction, env Env, rows, cols int64) (*Kernel, error) {
	name := "row_" + in.Op.String() + "_" + in.Shape.Elem.String()
	values := func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error) {
		v, err := k.elementwiseValue(in, binds, idx)
		return []val{v}, err
	}
	env.Local = LocalSize(env.Target, rows, false)
	if cols%VectorWidth == 0 && env.Target.StorageAlign%16 == 0 && env.Target.StorageAlign != 0 {
		k, err := rowKernelMode(in, env, name+"_vec4", values, cols, true)
		if !errors.Is(err, errNotVector) {
			return k, err
		}
	}
	return rowKernelMode(in, env, name, values, cols, false)
}

// rowKernelMode is RowKernel, scalar or vector (8 elements of the row a
// step, through vec4s).
func rowKernelMode(in *hlo.Instruction, env Env, name string, values func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error), cols int64, vector bool) (*Kernel, error) {
	k := env.builder(1)
	if vector {
		// Every 32-bit binding is a vec4 array but those a lane reads
		// elsewhere than at its element (a broadcast row of weights):
		// known once the kernel is bound.
		kb, ps, binds, err := env.bound(in)
		if err != nil {
			return nil, err
		}
		off := kb.rowOffElement(in, binds, ps)
		k.vecMode, k.vecBinds = true, make([]bool, len(kb.bindings))
		for b, bd := range kb.bindings {
			k.vecBinds[b] = bd.st.Bytes() == 4 && !off[b]
		}
	}
	ps, binds, outs, err := k.bindWithPrologue(env, in)
	if err != nil {
		return nil, err
	}
	if sp := env.plan(in).Spill; sp[0] != nil {
		k.spill = &rowSpill{in: sp[0], by: sp[1], bind: outs[0]}
	}
	// No input shares memory with a result (Kernel.InPlace): a spilled
	// value is stored in the result's memory by the row's fold, before
	// the elements read their inputs there. (The row reductions, stored
	// at the row's index, once said so; those kept in registers do not.)
	if k.offIndex == nil {
		k.offIndex = map[int]bool{}
	}
	for _, b := range outs {
		k.offIndex[b] = true
	}
	k.begin()
	u32 := k.u32()
	row := k.linearIndex() // k.linear stays unset: no access counts as in place
	inRange := k.f.ULessThan(k.boolT(), row, k.push(0))
	err = k.f.If(inRange, func() error {
		if vector {
			k.rowShape = in.Shape.Dims
		}
		if err := ps.emit(k, row); err != nil {
			return err
		}
		k.rowShape = nil
		if k.spill != nil {
			k.spill.ready = true
		}
		elem := func(idx spirv.ID) error {
			vs, err := values(k, binds, idx)
			if err != nil {
				return err
			}
			k.storeAll(outs, idx, vs)
			return k.err
		}
		// The row's elements: one per step, or 8 (a vec4 pair) per step.
		steps, body := uint32(cols), elem
		if vector {
			steps = uint32(cols / VectorWidth)
			body = func(idx8 spirv.ID) error { return k.vectorElems(idx8, elem) }
		}
		base := k.f.IMul(u32, row, k.cu32(steps))
		err := k.loop(k.cu32(steps), func(t spirv.ID) error {
			return body(k.f.IAdd(u32, base, t))
		})
		if err != nil {
			return err
		}
		k.vector = nil
		ps.store(k, row)
		return k.err
	})
	if err == nil {
		err = k.err
	}
	if vector {
		err = k.checkVectorBinds(name, err, func(st hlo.ElementType) bool { return st.Bytes() == 4 })
	}
	if err != nil {
		return nil, err
	}
	if k.sums != nil {
		name += "_online" // a max and a sum folded in one pass (onlineemit.go)
	}
	kern := k.finish(name)
	kern.Vector = 1 // an invocation per row, whatever its access width
	return kern, nil
}

// rowFold is fold for a row reduction inside a vector row kernel: the
// reduced elements are the count consecutive ones from base (a multiple
// of vectorWidth), read 8 at a time as vec4s and folded one by one in
// order. elem loads the values to fold at an element index.
func (k *kernelBuilder) rowFold(c *hlo.Computation, inits []val, base spirv.ID, count int64, elem func(p spirv.ID) []val) ([]val, error) {
	n := len(inits)
	vars, acc := k.accumulators(inits)
	u32 := k.u32()
	base8 := k.f.UDiv(u32, base, k.cu32(VectorWidth))
	err := k.loop(k.cu32(uint32(count/VectorWidth)), func(t spirv.ID) error {
		idx8 := k.f.IAdd(u32, base8, t)
		return k.vectorElems(idx8, func(p spirv.ID) error {
			args := make([]val, 0, 2*n)
			for i := 0; i < n; i++ {
				args = append(args, acc(i))
			}
			res, err := k.emitReducer(c, append(args, elem(p)...))
			if err != nil {
				return err
			}
			for i, r := range res {
				k.f.Store(vars[i], r.id)
			}
			return k.err
		})
	})
	if err != nil {
		return nil, err
	}
	return loadAll(acc, n), nil
}

// rowSpill is a value a row kernel both reduces and reads at its own
// elements (softmax's exp(x - max): summed, then divided by the sum). Its
// reduction stores it in the kernel's result buffer as it folds the row,
// and the elements read it back from there instead of computing it again
// (an exp per element saved; the row is still in the cache).
type rowSpill struct {
	in    *hlo.Instruction // the fused value
	by    *hlo.Instruction // the prologue reduce that stores it
	bind  int              // the result binding it goes to
	ready bool             // stored: reads come from the binding
}

// spillAt stores the value reduction r folds at element p when it is the
// kernel's spill.
func (k *kernelBuilder) spillAt(r *hlo.Instruction, p spirv.ID, xs []val) {
	if k.spills(r) {
		k.store(k.spill.bind, p, xs[0])
	}
}

// spills reports whether reduction r stores the values it folds (the
// kernel's spill, not yet stored).
func (k *kernelBuilder) spills(r *hlo.Instruction) bool {
	return k.spill != nil && !k.spill.ready && r == k.spill.by
}

// rowOffElement is offElement for row kernel k (vector.go), counting
// only the accesses made for a lane (in vectorElems): in's elements, and
// the prologue's row reductions that fold vec4s (reduceValues: the rows
// of a value of the kernel's shape, or a max folded online with its sum,
// whose sum then reads nothing). The rest of the prologue runs once per
// row, outside the lanes, and addresses a vec4 binding's components.
func (k *kernelBuilder) rowOffElement(in *hlo.Instruction, binds []int, ps *prologue) map[int]bool {
	w := &readWalk{k: k, off: map[int]bool{}, seen: map[[2]int]bool{}}
	folded := map[*hlo.Instruction]bool{} // sums folded with their max
	for i, p := range ps.pro {
		if p.Op != hlo.OpReduce || folded[p] || !k.rowFoldsVectors(p, in.Shape.Dims) {
			continue
		}
		if pair, online := k.online[p]; online {
			folded[pair.Sum] = true
		}
		for j, b := range ps.binds[i][:len(p.Operands)/2] {
			if read, _ := ownRead(p, j); read {
				w.binding(b, true)
			}
		}
	}
	w.instruction(in, binds, true)
	return w.off
}

// rowFoldsVectors reports whether row reduction r of a vector row
// kernel of shape dims folds its operands 8 lanes at a time: a max
// folded online with its sum, or the rows of a value of the kernel's
// shape (reduceValues' choices, by the same predicates).
func (k *kernelBuilder) rowFoldsVectors(r *hlo.Instruction, dims []int64) bool {
	src := r.Operands[0].Shape
	axes := slices.Sorted(slices.Values(r.A.Dimensions))
	count := int64(1)
	for _, d := range axes {
		count *= src.Dims[d]
	}
	_, online := k.online[r]
	return online && k.foldsOnline(r, axes, count) || foldsRowVectors(r, axes, count, dims)
}

// foldsOnline reports whether reduce r, over count elements of its
// dimensions axes (in order), can fold online with its sum: its rows'
// trailing elements, a whole number of chunks.
func (k *kernelBuilder) foldsOnline(r *hlo.Instruction, axes []int64, count int64) bool {
	return trailing(axes, r.Operands[0].Shape.Rank()) && count%OnlineChunk == 0
}

// foldsRowVectors reports whether reduce r, over count elements of its
// dimensions axes, reads its rows 8 elements at a time in a vector row
// kernel of shape dims: trailing rows of a value of that shape, a whole
// number of octets long (so the vec4s are in every vector binding's
// bounds).
func foldsRowVectors(r *hlo.Instruction, axes []int64, count int64, dims []int64) bool {
	src := r.Operands[0].Shape
	return count%VectorWidth == 0 && trailing(axes, src.Rank()) && EqualDims(src.Dims, dims)
}
