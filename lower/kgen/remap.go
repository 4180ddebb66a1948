package kgen

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Data-movement kernels: each output element is read from a position of
// an operand computed from its index (broadcast, transpose, reshape,
// slice, reverse, pad, concatenate, dynamic-slice, dynamic-update-slice)
// or made from its index alone (iota). Shapes are compile-time constants,
// so index arithmetic divides and multiplies by constants.

// RemapOps are the ops this family lowers.
var RemapOps = map[hlo.Opcode]bool{
	hlo.OpBroadcast: true, hlo.OpTranspose: true, hlo.OpReshape: true, hlo.OpBitcast: true,
	hlo.OpSlice: true, hlo.OpReverse: true, hlo.OpPad: true, hlo.OpConcatenate: true, hlo.OpIota: true,
	hlo.OpDynamicSlice: true, hlo.OpDynamicUpdateSlice: true, hlo.OpGather: true,
}

// addU is a + c, folded where c is 0 or a a constant (index.go).
func (k *kernelBuilder) addU(a spirv.ID, c int64) spirv.ID {
	switch v, ok := k.constU32(a); {
	case c == 0:
		return a
	case ok:
		return k.cu32(v + uint32(c))
	}
	return k.f.IAdd(k.u32(), a, k.cu32(uint32(c)))
}

// clampIndex reads a start index (any integer type) and clamps it to
// [0, limit], as XLA's dynamic-slice does, returning a u32.
func (k *kernelBuilder) clampIndex(v val, limit int64) spirv.ID {
	t := v.t
	lt, gt := spirv.OpSLessThan, spirv.OpSGreaterThan
	if t.Kind() == hlo.KindUnsigned {
		lt, gt = spirv.OpULessThan, spirv.OpUGreaterThan
	}
	zero := val{k.zero(t), t}
	lim := val{k.constInt(t, uint64(limit)), t}
	c := k.sel(k.boolOp(lt, v.id, zero.id), zero, v)
	c = k.sel(k.boolOp(gt, c.id, lim.id), lim, c)
	return k.indexU32(c)
}

// indexU32 is an integer register's value as a u32 index (its low 32
// bits): narrow types are held in 32-bit registers already, so only
// 64-bit ones convert (an OpUConvert of a u8 index, a u32 register, to
// u32 is invalid SPIR-V: the fuzzer found it).
func (k *kernelBuilder) indexU32(v val) spirv.ID {
	switch {
	case regBits(v.t) == 64:
		return k.f.UConvert(k.u32(), v.id)
	case v.t.Kind() == hlo.KindSigned:
		return k.f.Bitcast(k.u32(), v.id)
	}
	return v.id
}

// keepsOrder reports whether in, a data-movement op, leaves every
// element at its operand's row-major position: a reshape or bitcast, a
// transpose that moves only dimensions of size 1, a broadcast that adds
// only such dimensions. Its element idx is its operand's element idx, a
// read at the own element (ownRead).
func keepsOrder(in *hlo.Instruction) bool {
	ordered := func(to []int64, size func(i int) int64) bool {
		last := int64(-1)
		for i, d := range to {
			if size(i) == 1 {
				continue
			}
			if d < last {
				return false
			}
			last = d
		}
		return true
	}
	switch in.Op {
	case hlo.OpReshape, hlo.OpBitcast:
		return true
	case hlo.OpTranspose:
		return ordered(in.A.Dimensions, func(j int) int64 { return in.Shape.Dims[j] })
	case hlo.OpBroadcast:
		s := in.Operands[0].Shape
		return s.NumElements() == in.Shape.NumElements() &&
			ordered(in.A.Dimensions, func(i int) int64 { return s.Dims[i] })
	}
	return false
}

// broadcastSource is the index of the operand element that element idx
// of broadcast in copies.
func (k *kernelBuilder) broadcastSource(in *hlo.Instruction, idx spirv.ID) spirv.ID {
	o := k.unravel(idx, in.Shape.Dims)
	s := in.Operands[0].Shape
	ix := make([]spirv.ID, s.Rank())
	for i, d := range in.A.Dimensions {
		ix[i] = o[d]
		if s.Dims[i] == 1 {
			ix[i] = k.cu32(0)
		}
	}
	return k.ravel(ix, s.Dims)
}

// remapValue computes output element idx of a data-movement op.
func (k *kernelBuilder) remapValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	u32 := k.u32()
	a := &in.A
	outDims := in.Shape.Dims
	src := func(i int) hlo.Shape { return in.Operands[i].Shape }
	if keepsOrder(in) { // its element idx is its operand's
		return k.load(binds[0], idx, src(0).Elem), nil
	}
	switch in.Op {
	case hlo.OpIota:
		o := k.unravel(idx, outDims)
		x := val{o[a.IotaDim], hlo.U32}
		return k.convert(in, x, in.Shape.Elem)
	case hlo.OpBroadcast:
		if v, ok := k.vectorRow(in, binds[0], idx); ok {
			return v, nil
		}
		return k.load(binds[0], k.broadcastSource(in, idx), src(0).Elem), nil
	case hlo.OpTranspose:
		o := k.unravel(idx, outDims)
		s := src(0)
		ix := make([]spirv.ID, s.Rank())
		for j, p := range a.Dimensions {
			ix[p] = o[j]
		}
		return k.load(binds[0], k.ravel(ix, s.Dims), s.Elem), nil
	case hlo.OpSlice:
		o := k.unravel(idx, outDims)
		s := src(0)
		ix := make([]spirv.ID, s.Rank())
		for d, sd := range a.Slice {
			x := o[d]
			if c, ok := k.constU32(x); ok {
				x = k.cu32(c * uint32(sd.Stride))
			} else if sd.Stride != 1 {
				x = k.f.IMul(u32, x, k.cu32(uint32(sd.Stride)))
			}
			ix[d] = k.addU(x, sd.Start)
		}
		return k.load(binds[0], k.ravel(ix, s.Dims), s.Elem), nil
	case hlo.OpReverse:
		o := k.unravel(idx, outDims)
		s := src(0)
		for _, d := range a.Dimensions {
			o[d] = k.f.ISub(u32, k.cu32(uint32(s.Dims[d]-1)), o[d])
		}
		return k.load(binds[0], k.ravel(o, s.Dims), s.Elem), nil
	case hlo.OpPad:
		// t = out - lo (signed); a real element where t >= 0, t is a
		// multiple of interior+1, and t/(interior+1) < n.
		o := k.unravel(idx, outDims)
		s := src(0)
		ok := k.b.ConstantBool(true)
		ix := make([]spirv.ID, s.Rank())
		for d, p := range a.Padding {
			t := k.f.ISub(u32, o[d], k.cu32(uint32(int32(p.Lo))))
			step := k.cu32(uint32(p.Interior + 1))
			q := k.f.SDiv(u32, t, step)
			r := k.f.UMod(u32, t, step) // used where t >= 0 only (srem says why not OpSRem)
			cond := k.boolOp(spirv.OpLogicalAnd,
				k.boolOp(spirv.OpSGreaterThanEqual, t, k.cu32(0)),
				k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpIEqual, r, k.cu32(0)),
					k.boolOp(spirv.OpSLessThan, q, k.cu32(uint32(s.Dims[d])))))
			ok = k.boolOp(spirv.OpLogicalAnd, ok, cond)
			ix[d] = q
		}
		// Read position 0 where the element is padding, to stay in bounds.
		at := k.f.Select(u32, ok, k.ravel(ix, s.Dims), k.cu32(0))
		x := k.load(binds[0], at, s.Elem)
		pv := k.load(binds[1], k.cu32(0), s.Elem)
		return k.sel(ok, x, pv), nil
	case hlo.OpConcatenate:
		o := k.unravel(idx, outDims)
		d := a.Dimensions[0]
		if c, ok := k.constU32(o[d]); ok {
			// The position along the axis is known (a parts kernel's
			// part, a vector lane's): only its operand is read.
			off := int64(0)
			for i := range in.Operands {
				s := src(i)
				if int64(c) < off+s.Dims[d] {
					ix := append([]spirv.ID{}, o...)
					ix[d] = k.cu32(uint32(int64(c) - off))
					return k.load(binds[i], k.ravel(ix, s.Dims), s.Elem), nil
				}
				off += s.Dims[d]
			}
		}
		if len(in.Operands) > 2 {
			return k.concatBranches(in, binds, o)
		}
		var r val
		off := int64(0)
		for i := range in.Operands {
			s := src(i)
			ix := append([]spirv.ID{}, o...)
			if s.Dims[d] <= 1 {
				// Position 0, as the clamp below would make it; the same
				// index for every such operand of one shape (a complex
				// value's real and imaginary parts), whose common
				// producers the kernel then computes once.
				ix[d] = k.cu32(0)
			} else {
				local := k.f.ISub(u32, o[d], k.cu32(uint32(off)))
				// Clamp into this operand so that the read stays in bounds.
				ix[d] = k.f.Ext(u32, spirv.GLSLUMin, local, k.cu32(uint32(s.Dims[d]-1)))
			}
			x := k.load(binds[i], k.ravel(ix, s.Dims), s.Elem)
			if i == 0 {
				r = x
			} else {
				mine := k.boolOp(spirv.OpUGreaterThanEqual, o[d], k.cu32(uint32(off)))
				r = k.sel(mine, x, r)
			}
			off += s.Dims[d]
		}
		return r, nil
	case hlo.OpDynamicSlice:
		o := k.unravel(idx, outDims)
		s := src(0)
		ix := make([]spirv.ID, s.Rank())
		for d := range ix {
			st := k.load(binds[1+d], k.cu32(0), src(1+d).Elem)
			start := k.clampIndex(st, s.Dims[d]-a.DynSliceSizes[d])
			ix[d] = k.f.IAdd(u32, start, o[d])
		}
		return k.load(binds[0], k.ravel(ix, s.Dims), s.Elem), nil
	case hlo.OpDynamicUpdateSlice:
		o := k.unravel(idx, outDims)
		s, up := src(0), src(1)
		inside := k.b.ConstantBool(true)
		ix := make([]spirv.ID, s.Rank())
		for d := range ix {
			st := k.load(binds[2+d], k.cu32(0), src(2+d).Elem)
			start := k.clampIndex(st, s.Dims[d]-up.Dims[d])
			rel := k.f.ISub(u32, o[d], start)
			// rel < size as unsigned also rejects o < start (it wraps).
			in := k.boolOp(spirv.OpULessThan, rel, k.cu32(uint32(up.Dims[d])))
			inside = k.boolOp(spirv.OpLogicalAnd, inside, in)
			ix[d] = k.f.Select(u32, in, rel, k.cu32(0))
		}
		x := k.load(binds[0], idx, s.Elem)
		if up.NumElements() == 0 {
			return x, nil
		}
		uv := k.load(binds[1], k.ravel(ix, up.Dims), s.Elem)
		return k.sel(inside, uv, x), nil
	case hlo.OpGather:
		return k.gatherValue(in, binds, idx)
	}
	return val{}, in.Errorf("no data-movement kernel for %s", in.Op)
}

// gatherValue follows XLA's gather semantics (batching dimensions
// included); start indices are clamped so that each slice fits.
func (k *kernelBuilder) gatherValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	u32 := k.u32()
	g := in.A.Gather
	xs, is := in.Operands[0].Shape, in.Operands[1].Shape
	o := k.unravel(idx, in.Shape.Dims)
	ix := g.Indexing(xs.Rank(), is, in.Shape.Rank())
	ii := make([]spirv.ID, is.Rank())
	for j, d := range ix.IndexDims {
		ii[d] = o[ix.BatchDims[j]]
	}
	src := make([]spirv.ID, xs.Rank())
	for d := range src {
		src[d] = k.cu32(0)
	}
	for j := int64(0); j < ix.IndexCount; j++ {
		if g.IndexVectorDim < int64(is.Rank()) {
			ii[g.IndexVectorDim] = k.cu32(uint32(j))
		}
		od := g.StartIndexMap[j]
		v := k.load(binds[1], k.ravel(ii, is.Dims), is.Elem)
		src[od] = k.clampIndex(v, g.MaxStart(od, xs.Dims[od]))
	}
	for j, od := range g.OperandBatchingDims {
		src[od] = o[ix.BatchDims[ix.BatchPos(g.StartIndicesBatchingDims[j])]]
	}
	for j, od := range ix.WindowDims {
		src[od] = k.f.IAdd(u32, src[od], o[g.OffsetDims[j]])
	}
	return k.load(binds[0], k.ravel(src, xs.Dims), xs.Elem), nil
}

// concatBranches is the element at o of concatenate in, each operand
// read in a branch of its own positions only, where the select of every
// operand's element reads them all. A vector lane's branch is the same
// for the SIMD group's invocations wherever the concatenated dimension
// is not among the last few (the stacked phases of a transposed
// convolution, interleaved by a transpose: that kernel 14.7 -> 10.7 ms
// for f32[8,64,64,256] on lavapipe); where it diverges, every branch
// runs masked, about the select's cost (a concatenate kernel of its own
// 13.8 against 15.0 ms). Two operands keep the select.
func (k *kernelBuilder) concatBranches(in *hlo.Instruction, binds []int, o []spirv.ID) (val, error) {
	u32, t := k.u32(), in.Shape.Elem
	d := in.A.Dimensions[0]
	vars, acc := k.accumulators([]val{{k.zero(t), t}})
	off := int64(0)
	for i, x := range in.Operands {
		n := x.Shape.Dims[d]
		mine := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpUGreaterThanEqual, o[d], k.cu32(uint32(off))),
			k.boolOp(spirv.OpULessThan, o[d], k.cu32(uint32(off+n))))
		err := k.f.If(mine, func() error {
			ix := slices.Clone(o)
			ix[d] = k.f.ISub(u32, o[d], k.cu32(uint32(off)))
			k.f.Store(vars[0], k.load(binds[i], k.ravel(ix, x.Shape.Dims), x.Shape.Elem).id)
			return nil
		})
		if err != nil {
			return val{}, err
		}
		off += n
	}
	return acc(0), nil
}
