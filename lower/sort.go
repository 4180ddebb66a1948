package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// sortKernel generates a stable sort of every 1-D slice along the sort
// dimension: one invocation per slice runs a bottom-up merge sort of the
// slice's positions (ping-ponging between two u32 scratch buffers, the
// comparator inlined, the left element kept on ties), then gathers every
// operand through the sorted positions. Bindings: N operands, N outputs,
// scratch A, scratch B.
func sortKernel(in *hlo.Instruction, env kernelEnv) (*Kernel, error) {
	n := len(in.Operands)
	cmp := in.Called[0]
	k := env.builder(1)
	binds, outs, err := k.bind(in)
	if err != nil {
		return nil, err
	}
	sa, err := k.addBuffer(hlo.U32, "scratch0", false)
	if err != nil {
		return nil, err
	}
	sb, err := k.addBuffer(hlo.U32, "scratch1", false)
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
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Op(o, u32, uint32(a), uint32(b)) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		base := k.ravel(k.unravel(row, outer), shape.Dims) // the slice's first element
		elem := func(pos spirv.ID) spirv.ID { return op(spirv.OpIAdd, base, op(spirv.OpIMul, pos, cu(st[d]))) }
		sbase := op(spirv.OpIMul, row, cu(length))
		scratch := []int{sa, sb}
		sPtr := func(buf int, j spirv.ID) spirv.ID { return k.elemPtr(scratch[buf], op(spirv.OpIAdd, sbase, j)) }
		if err := k.loop(cu(length), func(j spirv.ID) error {
			k.f.Void(spirv.OpStore, uint32(sPtr(0, j)), uint32(j))
			return nil
		}); err != nil {
			return err
		}
		// less(x, y): the comparator on positions x and y of the slice.
		less := func(x, y spirv.ID) (spirv.ID, error) {
			args := make([]val, 2*n)
			for i, o := range in.Operands {
				args[2*i] = k.load(binds[i], elem(x), o.Shape.Elem)
				args[2*i+1] = k.load(binds[i], elem(y), o.Shape.Elem)
			}
			r, err := k.emitReducer(cmp, args)
			if err != nil {
				return 0, err
			}
			return r[0].id, nil
		}
		iv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		jv := k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, u32))
		for p := 0; p < passes; p++ {
			w := int64(1) << uint(p)
			src, dst := p%2, (p+1)%2
			err := k.loop(cu(length), func(kk spirv.ID) error {
				lo := op(spirv.OpIMul, op(spirv.OpUDiv, kk, cu(2*w)), cu(2*w))
				mid := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, cu(w)), cu(length))
				hi := k.f.Ext(u32, spirv.GLSLUMin, op(spirv.OpIAdd, lo, cu(2*w)), cu(length))
				// A new pair of runs starts at lo: reset the two cursors.
				start := k.boolOp(spirv.OpIEqual, kk, lo)
				i0 := k.f.Op(spirv.OpSelect, u32, uint32(start), uint32(lo), uint32(k.f.Op(spirv.OpLoad, u32, uint32(iv))))
				j0 := k.f.Op(spirv.OpSelect, u32, uint32(start), uint32(mid), uint32(k.f.Op(spirv.OpLoad, u32, uint32(jv))))
				hasL := k.boolOp(spirv.OpULessThan, i0, mid)
				hasR := k.boolOp(spirv.OpULessThan, j0, hi)
				// Read clamped positions; the choice ignores the invalid one.
				li := k.f.Op(spirv.OpSelect, u32, uint32(hasL), uint32(i0), uint32(lo))
				ri := k.f.Op(spirv.OpSelect, u32, uint32(hasR), uint32(j0), uint32(lo))
				lpos := k.f.Op(spirv.OpLoad, u32, uint32(sPtr(src, li)))
				rpos := k.f.Op(spirv.OpLoad, u32, uint32(sPtr(src, ri)))
				rLess, err := less(rpos, lpos)
				if err != nil {
					return err
				}
				takeL := k.boolOp(spirv.OpLogicalAnd, hasL, k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpLogicalNot, hasR), k.boolOp(spirv.OpLogicalNot, rLess)))
				k.f.Void(spirv.OpStore, uint32(sPtr(dst, kk)), uint32(k.f.Op(spirv.OpSelect, u32, uint32(takeL), uint32(lpos), uint32(rpos))))
				one := cu(1)
				k.f.Void(spirv.OpStore, uint32(iv), uint32(k.f.Op(spirv.OpSelect, u32, uint32(takeL), uint32(op(spirv.OpIAdd, i0, one)), uint32(i0))))
				k.f.Void(spirv.OpStore, uint32(jv), uint32(k.f.Op(spirv.OpSelect, u32, uint32(takeL), uint32(j0), uint32(op(spirv.OpIAdd, j0, one)))))
				return nil
			})
			if err != nil {
				return err
			}
		}
		final := passes % 2
		return k.loop(cu(length), func(j spirv.ID) error {
			pos := k.f.Op(spirv.OpLoad, u32, uint32(sPtr(final, j)))
			for i, o := range in.Operands {
				v := k.load(binds[i], elem(pos), o.Shape.Elem)
				k.store(outs[i], elem(j), v)
			}
			return nil
		})
	})
}
