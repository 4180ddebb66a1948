package kgen

import (
	"reflect"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// sortKey is a sort whose comparator orders the values of one operand
// through one expression of each: compare(f(a), f(b)), LT or GT, in a
// total order (floats by TOTALORDER, integers and pred in their own);
// JAX's sorts compare so, f making -0 and every NaN one value. Each
// element's value then has a key, an s32 whose signed order is that
// order (descending for GT), computed once where the element is read,
// and the comparator is one integer comparison: f ran twice a comparison
// otherwise, and the block pass's network compares each element of a
// block with its neighbours block times. Elements of equal keys are
// those neither of which goes first, so a stable sort's results are the
// same bits.
type sortKey struct {
	operand int              // the operand compared
	param   *hlo.Instruction // the comparator's parameter of its left value
	side    *hlo.Instruction // f of it: the comparison's left operand
	desc    bool             // GT: the larger first
}

// SortKeyed reports whether sort in's comparator has keys (sortKey):
// its long slices merge four runs a pass (SortMerge4Kernel).
func SortKeyed(in *hlo.Instruction) bool { return sortKeyOf(in) != nil }

// KeyedComparator reports whether c, the comparator of a sort of n
// operands, has keys (sortKey).
func KeyedComparator(c *hlo.Computation, n int) bool { return comparatorKey(c, n) != nil }

// sortKeyOf is sort in's comparator as a sortKey, or nil where it is not
// one.
func sortKeyOf(in *hlo.Instruction) *sortKey { return comparatorKey(in.Called[0], len(in.Operands)) }

// comparatorKey is comparator c of a sort of n operands as a sortKey,
// or nil.
func comparatorKey(c *hlo.Computation, n int) *sortKey {
	r := c.Root
	if r == nil || r.Op != hlo.OpCompare || len(r.Operands) != 2 || (r.A.Direction != "LT" && r.A.Direction != "GT") {
		return nil
	}
	t := r.Operands[0].Shape.Elem
	switch ct := r.A.CompareType; {
	case t == hlo.F32 || t == hlo.BF16:
		if ct != "TOTALORDER" {
			return nil // NaNs are unordered: not a total order
		}
	case t.Kind() == hlo.KindSigned && t.Bits() <= 32:
		if ct != "" && ct != "SIGNED" {
			return nil
		}
	case t.Kind() == hlo.KindUnsigned && t.Bits() <= 32 || t == hlo.PRED:
		if ct != "" && ct != "UNSIGNED" {
			return nil
		}
	default:
		return nil
	}
	params := map[int]*hlo.Instruction{}
	for _, p := range c.Params {
		params[p.ParamNum] = p
	}
	for i := range n {
		a, b := params[2*i], params[2*i+1]
		if a == nil || b == nil {
			return nil
		}
		m := sideMatch{a: a, b: b, seen: map[[2]*hlo.Instruction]bool{}}
		if m.same(r.Operands[0], r.Operands[1]) && m.uses {
			return &sortKey{operand: i, param: a, side: r.Operands[0], desc: r.A.Direction == "GT"}
		}
	}
	return nil
}

// sideMatch tells whether two expressions are one expression of a and
// of b: the same ops, attributes and constants, a where the one has it
// and b where the other has it, and any instruction they share free of
// both (a constant). uses records that a was met.
type sideMatch struct {
	a, b *hlo.Instruction
	seen map[[2]*hlo.Instruction]bool
	uses bool
}

func (m *sideMatch) same(x, y *hlo.Instruction) bool {
	if x == m.a || y == m.b {
		m.uses = m.uses || x == m.a
		return x == m.a && y == m.b
	}
	if m.seen[[2]*hlo.Instruction{x, y}] {
		return true
	}
	if x == y {
		return m.free(x)
	}
	if x.Op != y.Op || x.Op == hlo.OpParameter || len(x.Called) > 0 || len(y.Called) > 0 ||
		!x.Shape.Equal(y.Shape) || len(x.Operands) != len(y.Operands) ||
		!reflect.DeepEqual(x.A, y.A) || !reflect.DeepEqual(x.Literal, y.Literal) {
		return false
	}
	for i := range x.Operands {
		if !m.same(x.Operands[i], y.Operands[i]) {
			return false
		}
	}
	m.seen[[2]*hlo.Instruction{x, y}] = true
	return true
}

// free reports that x reads neither a nor b.
func (m *sideMatch) free(x *hlo.Instruction) bool {
	if x == m.a || x == m.b {
		return false
	}
	for _, o := range x.Operands {
		if !m.free(o) {
			return false
		}
	}
	return true
}

// sortKeyValue computes the key of an element whose compared operand's
// value is v: f(v) (the comparator's side), its bits ordered as signed
// integers, complemented for GT. A u32 compared as signed (sortLessValues).
func (k *kernelBuilder) sortKeyValue(sk *sortKey, v val) (val, error) {
	x, err := k.emitExpr(sk.side, map[*hlo.Instruction]val{sk.param: v})
	if err != nil {
		return val{}, err
	}
	u32 := k.u32()
	var key spirv.ID
	switch t := x.t; {
	case t == hlo.PRED:
		key = k.f.Select(u32, x.id, k.cu32(1), k.cu32(0))
	case t.IsFloat(): // f32 registers (bf16 widened exactly)
		key = k.f.Bitcast(u32, k.totalOrderBits(x).id)
	case t.Kind() == hlo.KindSigned:
		key = k.f.Bitcast(u32, x.id)
	case t.Bits() == 32: // u32: offset into the signed range
		key = k.f.Apply(spirv.OpBitwiseXor, u32, x.id, k.cu32(1<<31))
	default: // u8, u16: zero-extended, below 2^31
		key = x.id
	}
	if sk.desc {
		key = k.f.Apply(spirv.OpNot, u32, key)
	}
	return val{key, hlo.U32}, nil
}

// emitExpr computes scalar expression x of a computation, its values
// at env's instructions given.
func (k *kernelBuilder) emitExpr(x *hlo.Instruction, env map[*hlo.Instruction]val) (val, error) {
	if v, ok := env[x]; ok {
		return v, nil
	}
	if x.Op == hlo.OpConstant {
		env[x] = k.scalarConst(x.Literal)
		return env[x], nil
	}
	ops := make([]val, len(x.Operands))
	for i, o := range x.Operands {
		v, err := k.emitExpr(o, env)
		if err != nil {
			return val{}, err
		}
		ops[i] = v
	}
	v, err := k.emitScalar(x, ops)
	if err != nil {
		return val{}, err
	}
	env[x] = v
	return v, nil
}
