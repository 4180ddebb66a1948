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
	lFree, rFree := d.FreeDims(l.Rank(), r.Rank())
	count := ownIters(in)
	t := out.Elem
	{
		u32 := k.u32()
		lBase, rBase := k.dotBases(in, idx)
		at := k.dotAt(in, [2]spirv.ID{lBase, rBase})
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
			uni := shuffledSide(in)
			binds, types := [2]int{lb, rb}, [2]hlo.ElementType{l.Elem, r.Elem}
			k.b.Capability(spirv.CapabilityGroupNonUniformShuffle)
			scope := k.cu32(spirv.ScopeSubgroup)
			lane := k.subgroupLane()
			blocks := count / s
			whole := blocks*s == count
			// block adds the products of the s places from base: the
			// shuffled operand's read at base + lane, the other's
			// element j of the block given by other.
			block := func(base spirv.ID, other func(j int64) (spirv.ID, error)) error {
				mine, err := k.factor(k.load(binds[uni], at(uni, k.f.IAdd(u32, base, lane)), types[uni]), t)
				if err != nil {
					return err
				}
				for j := range s {
					x := k.f.GroupNonUniformShuffle(rt, scope, mine.id, k.cu32(uint32(j)))
					y, err := other(j)
					if err != nil {
						return err
					}
					p := k.f.Apply(mul, rt, x, y)
					if uni == 1 {
						p = k.f.Apply(mul, rt, y, x)
					}
					k.f.Store(acc, k.f.Apply(add, rt, k.f.Load(rt, acc), p))
				}
				return nil
			}
			if cc := k.cols[in]; k.colsHere && whole && cc != nil && cc.idx == idx && cc.bind == binds[1-uni] && cc.side == 1-uni {
				// The other operand's elements from the variables the
				// loop filled before its first iteration (colCache):
				// the same products in the same order, unrolled.
				for cb := range blocks {
					err := block(k.cu32(uint32(cb*s)), func(j int64) (spirv.ID, error) { return k.f.Load(rt, cc.vars[cb*s+j]), nil })
					if err != nil {
						return val{}, err
					}
				}
				return k.normalize(val{k.f.Load(rt, acc), t}), nil
			}
			if k.colsHere && whole && k.colsWanted != nil && k.invariant[binds[1-uni]] && count > seqElems && count <= colElems {
				k.colsWanted[in.Name] = true
			}
			err := k.loop(k.cu32(uint32(blocks)), func(cb spirv.ID) error {
				base := k.f.IMul(u32, cb, k.cu32(uint32(s)))
				return block(base, func(j int64) (spirv.ID, error) {
					y, err := k.factor(k.load(binds[1-uni], at(1-uni, k.addU(base, j)), types[1-uni]), t)
					return y.id, err
				})
			})
			if err != nil {
				return val{}, err
			}
			first = blocks * s
		}
		err := k.loop(k.cu32(uint32(count-first)), func(c spirv.ID) error {
			c = k.addU(c, first)
			x, y, err := k.factors(lb, at(0, c), l.Elem, rb, at(1, c), r.Elem, t)
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

// dotBases is where the products of dot in's output element idx start
// in each operand: the offsets its batch and free indices give.
func (k *kernelBuilder) dotBases(in *hlo.Instruction, idx spirv.ID) (lBase, rBase spirv.ID) {
	d := in.A.Dot
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	ls, rs := hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)
	lFree, rFree := d.FreeDims(l.Rank(), r.Rank())
	o := k.unravel(idx, in.Shape.Dims)
	lBase, rBase = k.cu32(0), k.cu32(0)
	j := 0
	for i := range d.LhsBatch {
		lBase, rBase = k.madU(lBase, o[j], ls[d.LhsBatch[i]]), k.madU(rBase, o[j], rs[d.RhsBatch[i]])
		j++
	}
	for _, x := range lFree {
		lBase = k.madU(lBase, o[j], ls[x])
		j++
	}
	for _, x := range rFree {
		rBase = k.madU(rBase, o[j], rs[x])
		j++
	}
	return lBase, rBase
}

// dotAt returns where in operand side (0 lhs, 1 rhs) of dot in the
// product at contraction index c reads, from the bases dotBases gave.
func (k *kernelBuilder) dotAt(in *hlo.Instruction, bases [2]spirv.ID) func(side int, c spirv.ID) spirv.ID {
	d := in.A.Dot
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	strides := [2][]int64{hlo.RowMajorStrides(l.Dims), hlo.RowMajorStrides(r.Dims)}
	cdims := [2][]int64{d.LhsContract, d.RhsContract}
	contract := make([]int64, len(d.LhsContract))
	for i, x := range d.LhsContract {
		contract[i] = l.Dims[x]
	}
	return func(side int, c spirv.ID) spirv.ID {
		p := bases[side]
		for i, x := range k.unravel(c, contract) {
			p = k.madU(p, x, strides[side][cdims[side][i]])
		}
		return p
	}
}

// madU is acc + x*s in u32 index arithmetic.
func (k *kernelBuilder) madU(acc, x spirv.ID, s int64) spirv.ID {
	u32 := k.u32()
	return k.f.IAdd(u32, acc, k.f.IMul(u32, x, k.cu32(uint32(s))))
}

// colElems bounds the elements a workgroup loop's invocation keeps of
// loop-invariant operands (colCache), all dots together.
const colElems = 256

// colCache is what one invocation of a workgroup loop reads of a dot's
// loop-invariant operand (a large leaf no iteration writes: an RNN's
// weights), loaded into Function variables before the loop's first
// iteration: the column of the matrix its output element's products
// take. llvmpipe fetches a texel by a call of 16 loads; every iteration
// of scan_rnn fetched all 16,384 weights so (225-245 ms; 83-104 with
// those fetches replaced by a constant). Only
// where the dot is computed at that element (idx, the invocation's
// index) with its vector shuffled (dotValue), in a phase every lane
// runs once, and where the contraction is longer than a small value
// (seqElems): up to 64 products the unrolled ones measured slower than
// the loop with its fetches (a 64-unit cell 40-44 -> 50-54 ms, power
// iteration's 16 0.22-0.27 -> 0.25-0.31 ms, a 48-unit cell 3.3-3.4 ->
// 3.7 ms), from 80 on 1.25-2.5x faster (80, 96 and 128-unit cells;
// products of 256). The kernel generated once more knows which dots
// those are (colsWanted).
type colCache struct {
	idx        spirv.ID // the output element: the invocation's index
	bind, side int      // the operand's binding and side (0 lhs, 1 rhs)
	vars       []spirv.ID
}

// shuffledSide is the operand of dot in that dotValue shuffles where it
// may (0 lhs, 1 rhs): the lhs where it has no free dimensions, every
// output reading it alike.
func shuffledSide(in *hlo.Instruction) int {
	if lFree, _ := in.A.Dot.FreeDims(in.Operands[0].Shape.Rank(), in.Operands[1].Shape.Rank()); len(lFree) > 0 {
		return 1
	}
	return 0
}

// loadColumn fills dot in's colCache for output element idx: the
// elements of operand side (bound at bind) its products read, converted
// to the result type.
func (k *kernelBuilder) loadColumn(in *hlo.Instruction, side, bind int, idx spirv.ID) (*colCache, error) {
	lBase, rBase := k.dotBases(in, idx)
	at := k.dotAt(in, [2]spirv.ID{lBase, rBase})
	t := in.Shape.Elem
	ptr := k.b.TypePointer(spirv.StorageFunction, k.scalarType(t))
	cc := &colCache{idx: idx, bind: bind, side: side}
	for c := range ownIters(in) {
		y, err := k.factor(k.load(bind, at(side, k.cu32(uint32(c))), in.Operands[side].Shape.Elem), t)
		if err != nil {
			return nil, err
		}
		v := k.f.LocalVariable(ptr)
		k.f.Store(v, y.id)
		cc.vars = append(cc.vars, v)
	}
	return cc, nil
}
