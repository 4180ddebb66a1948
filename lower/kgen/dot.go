package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// dotValue computes output element idx of a general dot (batch and
// contracting dimensions in any positions) whose operands are read
// through binds: it accumulates over the contraction in the result type,
// the operands converted to it first, as XLA's preferred_element_type
// semantics say. The tiled GEMM (gemm.go) replaces it where it pays.
func (k *kernelBuilder) dotValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	d := in.A.Dot
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	out := in.Shape
	lb, rb := binds[0], binds[1]
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	lFree, rFree := d.FreeDims(l.Rank(), r.Rank())
	contract := make([]int64, len(d.LhsContract))
	count := int64(1)
	for i, x := range d.LhsContract {
		contract[i] = l.Dims[x]
		count *= l.Dims[x]
	}
	t := out.Elem
	{
		u32 := k.u32()
		mad := func(acc, x spirv.ID, s int64) spirv.ID {
			return k.f.IAdd(u32, acc, k.f.IMul(u32, x, k.cu32(uint32(s))))
		}
		o := k.unravel(idx, out.Dims)
		lBase, rBase := k.cu32(0), k.cu32(0)
		j := 0
		for i := range d.LhsBatch {
			lBase, rBase = mad(lBase, o[j], ls[d.LhsBatch[i]]), mad(rBase, o[j], rs[d.RhsBatch[i]])
			j++
		}
		for _, x := range lFree {
			lBase = mad(lBase, o[j], ls[x])
			j++
		}
		for _, x := range rFree {
			rBase = mad(rBase, o[j], rs[x])
			j++
		}
		rt, acc, mul, add := k.sumOfProducts(t)
		first := int64(0) // where the loop below starts
		if s := int64(k.shuffleDot); s > 1 && t != hlo.PRED && len(d.LhsBatch) == 0 && count >= s && (len(lFree) == 0 || len(rFree) == 0) {
			// One operand is read at the same place by every output (a
			// matrix-vector product's vector): each lane of the
			// subgroup reads one of s places and shuffles with constant
			// lanes pass it to the others (a permute of a register on
			// llvmpipe, where every lane reading it is a texel fetch of
			// 16 loads of one address). The same products, summed in
			// the same order.
			uni := 0
			if len(lFree) > 0 {
				uni = 1
			}
			strides := [2][]int64{ls, rs}
			cdims := [2][]int64{d.LhsContract, d.RhsContract}
			bases, binds, types := [2]spirv.ID{lBase, rBase}, [2]int{lb, rb}, [2]hlo.ElementType{l.Elem, r.Elem}
			at := func(side int, c spirv.ID) spirv.ID {
				p := bases[side]
				for i, x := range k.unravel(c, contract) {
					p = mad(p, x, strides[side][cdims[side][i]])
				}
				return p
			}
			k.b.Capability(spirv.CapabilityGroupNonUniformShuffle)
			scope := k.cu32(spirv.ScopeSubgroup)
			lane := k.subgroupLane()
			blocks := count / s
			err := k.loop(k.cu32(uint32(blocks)), func(cb spirv.ID) error {
				base := k.f.IMul(u32, cb, k.cu32(uint32(s)))
				mine, err := k.factor(k.load(binds[uni], at(uni, k.f.IAdd(u32, base, lane)), types[uni]), t)
				if err != nil {
					return err
				}
				for j := range s {
					x := k.f.GroupNonUniformShuffle(rt, scope, mine.id, k.cu32(uint32(j)))
					y, err := k.factor(k.load(binds[1-uni], at(1-uni, k.addU(base, j)), types[1-uni]), t)
					if err != nil {
						return err
					}
					p := k.f.Apply(mul, rt, x, y.id)
					if uni == 1 {
						p = k.f.Apply(mul, rt, y.id, x)
					}
					k.f.Store(acc, k.f.Apply(add, rt, k.f.Load(rt, acc), p))
				}
				return nil
			})
			if err != nil {
				return val{}, err
			}
			first = blocks * s
		}
		err := k.loop(k.cu32(uint32(count-first)), func(c spirv.ID) error {
			c = k.addU(c, first)
			ci := k.unravel(c, contract)
			lp, rp := lBase, rBase
			for i := range ci {
				lp, rp = mad(lp, ci[i], ls[d.LhsContract[i]]), mad(rp, ci[i], rs[d.RhsContract[i]])
			}
			x, y, err := k.factors(lb, lp, l.Elem, rb, rp, r.Elem, t)
			if err != nil {
				return err
			}
			if t == hlo.PRED {
				a := k.f.Load(rt, acc)
				v := k.boolOp(spirv.OpLogicalOr, a, k.boolOp(spirv.OpLogicalAnd, x.id, y.id))
				k.f.Store(acc, v)
				return nil
			}
			p := k.f.Apply(mul, rt, x.id, y.id)
			a := k.f.Load(rt, acc)
			k.f.Store(acc, k.f.Apply(add, rt, a, p))
			return nil
		})
		if err != nil {
			return val{}, err
		}
		return k.normalize(val{k.f.Load(rt, acc), t}), nil
	}
}

// factors loads element li of binding lb (type lt) and element ri of rb
// (type rt), each converted to the accumulator type t: a product's two
// factors in a dot or convolution.
func (k *kernelBuilder) factors(lb int, li spirv.ID, lt hlo.ElementType, rb int, ri spirv.ID, rt, t hlo.ElementType) (x, y val, err error) {
	if x, err = k.factor(k.load(lb, li, lt), t); err != nil {
		return val{}, val{}, err
	}
	y, err = k.factor(k.load(rb, ri, rt), t)
	return x, y, err
}

// factor converts a product's operand x to its accumulator type t. An
// integer operand of a float product is rounded to t, as XLA's operand
// upcasting converts it before the product (a u16 of 65535 is an f16
// infinity, whose product with 0 is NaN, and an s16 of 2049 is 2048);
// float operands are not, as XLA does not convert a wider float.
func (k *kernelBuilder) factor(x val, t hlo.ElementType) (val, error) {
	v, err := k.convertWide(x, t)
	if err != nil || x.t.IsFloat() || !t.IsFloat() {
		return v, err
	}
	return k.normalize(v), nil
}

// sumOfProducts starts a dot's or convolution's accumulator of type t: its
// SPIR-V type, a function variable holding zero, and the multiply and add
// of t.
func (k *kernelBuilder) sumOfProducts(t hlo.ElementType) (rt, acc spirv.ID, mul, add spirv.Op) {
	rt = k.scalarType(t)
	acc = k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, rt))
	k.f.Store(acc, k.zero(t))
	mul, add = spirv.OpIMul, spirv.OpIAdd
	if t.IsFloat() {
		mul, add = spirv.OpFMul, spirv.OpFAdd
	}
	return rt, acc, mul, add
}
