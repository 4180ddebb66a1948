package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// 2- and 4-bit integers (s2, s4, u2, u4) take a byte each in memory, the
// value as an 8-bit integer holds it (sign-extended for the signed
// types), as HLO text, XLA's unpacked literals and ml_dtypes store them.
// widenSubByte retypes them as s8 and u8, which the device has, and puts
// each op's result back in range the way the narrow type wraps: the
// signed types sign-extend their low bits (shift left, then right
// arithmetically), the unsigned ones mask them; a conversion from a float
// saturates at the narrow range, as XLA's does. A logical right shift
// reads only the value's own bits, an arithmetic one of an unsigned value
// shifts its top bit in (as XLA's does), and counting leading zeros
// counts in its width. Nothing converts at the boundary, the bytes being
// the same, but the entry's parameters are put in range where the
// program starts: a byte of a u4 argument may hold bits above the value's
// (a host's unmasked buffer), which XLA's packing and the evaluator drop,
// and ops that keep the range (max, select, copies) would carry them on.

// narrowInt is the 8-bit type a 2- or 4-bit integer type computes in.
func narrowInt(t hlo.ElementType) (hlo.ElementType, bool) {
	switch t {
	case hlo.S2, hlo.S4:
		return hlo.S8, true
	case hlo.U2, hlo.U4:
		return hlo.U8, true
	}
	return t, false
}

func isNarrowInt(t hlo.ElementType) bool { _, ok := narrowInt(t); return ok }

func hasNarrowInt(s hlo.Shape) bool { return anyLeaf(s, isNarrowInt) }

func widenShape(s hlo.Shape) hlo.Shape {
	return mapLeaves(s, func(l hlo.Shape) hlo.Shape {
		if t, ok := narrowInt(l.Elem); ok {
			l.Elem = t
		}
		return l
	})
}

// keepsRange are the elementwise ops whose result lies in the narrow
// range when their operands do.
var keepsRange = map[hlo.Opcode]bool{
	hlo.OpCopy: true, hlo.OpAnd: true, hlo.OpOr: true, hlo.OpXor: true, hlo.OpMaximum: true, hlo.OpMinimum: true,
	hlo.OpShiftRightArithmetic: true, hlo.OpSelect: true, hlo.OpClamp: true, hlo.OpSign: true,
}

func widenSubByte(s *state) error {
	entry := s.mod.Entry
	api := !s.opts.sub // the entry's parameters are the API's
	r := &retyper{
		needs: func(c *hlo.Computation) bool { return touches(c, isNarrowInt, nil) },
		shape: widenShape,
		rule: func(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
			v, err := widenSubByteOp(r, in, ops)
			if err == nil && api && isParamOf(entry, in) && hasNarrowInt(in.Shape) {
				v = fitLeaves(r, in, v, in.Shape)
			}
			return v, err
		},
		tag: "w",
	}
	return r.run(s)
}

// fitLeaves puts the leaves of x that are 2- or 4-bit integers in shape
// api back in their range.
func fitLeaves(r *retyping, in, x *hlo.Instruction, api hlo.Shape) *hlo.Instruction {
	return r.leafwise(in, x, api, func(x *hlo.Instruction, leaf hlo.Shape) *hlo.Instruction {
		if !isNarrowInt(leaf.Elem) {
			return x
		}
		return fitRange(r, in, x, leaf.Elem)
	})
}

// widenSubByteOp computes in on 8-bit integers and puts a result of a
// narrow type back in its range.
func widenSubByteOp(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	add := r.add
	konst := func(from *hlo.Instruction, sh hlo.Shape, v int64) *hlo.Instruction { return byteConst(r, from, sh, v) }
	fit := func(from, x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction { return fitRange(r, from, x, t) }
	mask := func(from, x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
		return add(from, hlo.OpAnd, x.Shape, x, konst(from, x.Shape, 1<<t.Bits()-1))
	}
	narrow := func(i int) (hlo.ElementType, bool) {
		if i >= len(in.Operands) || !in.Operands[i].Shape.IsArray() {
			return 0, false
		}
		t := in.Operands[i].Shape.Elem
		_, ok := narrowInt(t)
		return t, ok
	}
	if in.Op == hlo.OpBitcastConvert && (hasNarrowInt(in.Shape) || hasNarrowInt(in.Operands[0].Shape)) {
		return nil, in.Errorf("internal: a bitcast-convert of a sub-byte integer reached widen sub-byte integers (expand sub-byte bitcasts takes them apart)")
	}
	// Operands whose narrow bits alone count.
	if t, ok := narrow(0); ok && t.Kind() == hlo.KindSigned {
		switch in.Op {
		case hlo.OpShiftRightLogical, hlo.OpPopcnt, hlo.OpClz:
			ops[0] = mask(in, ops[0], t)
		}
	}
	if t, ok := narrow(0); ok && t.Kind() == hlo.KindUnsigned && in.Op == hlo.OpShiftRightArithmetic {
		// XLA shifts an unsigned value arithmetically by its own top
		// bit: sign-extend the narrow bits as s8, shift, mask.
		sh := hlo.ArrayShape(hlo.S8, in.Shape.Dims...)
		k := konst(in, sh, int64(8-t.Bits()))
		x := add(in, hlo.OpConvert, sh, ops[0])
		x = add(in, hlo.OpShiftRightArithmetic, sh, add(in, hlo.OpShiftLeft, sh, x, k), k)
		sr := add(in, hlo.OpShiftRightArithmetic, sh, x, add(in, hlo.OpConvert, sh, ops[1]))
		v := mask(in, add(in, hlo.OpConvert, widenShape(in.Shape), sr), t)
		v.Name = in.Name
		return v, nil
	}
	nc, err := r.copy(in, ops)
	if err != nil {
		return nil, err
	}
	if in.Op == hlo.OpConstant && hasNarrowInt(in.Shape) {
		lit := *in.Literal
		lit.Shape = nc.Shape
		nc.Literal = &lit
	}
	v := nc
	t, resultNarrow := in.Shape.Elem, hasNarrowInt(in.Shape) && in.Shape.IsArray()
	switch {
	case in.Op == hlo.OpClz:
		if ot, ok := narrow(0); ok { // leading zeros of the narrow width
			v = fit(in, add(in, hlo.OpSubtract, v.Shape, v, konst(in, v.Shape, int64(8-ot.Bits()))), ot)
		}
	case !resultNarrow:
	case in.Op == hlo.OpConvert && in.Operands[0].Shape.Elem.IsFloat():
		lo, hi := int64(0), int64(1)<<t.Bits()-1
		if t.Kind() == hlo.KindSigned {
			lo, hi = -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1
		}
		v = add(in, hlo.OpClamp, v.Shape, konst(in, v.Shape, lo), v, konst(in, v.Shape, hi))
	case keepsRange[in.Op]:
	case in.Op.Class() == hlo.ClassUnary || in.Op.Class() == hlo.ClassBinary || in.Op == hlo.OpIota ||
		in.Op == hlo.OpConvert || in.Op == hlo.OpDot || in.Op == hlo.OpConvolution: // sums of products wrap too
		v = fit(in, v, t)
	}
	v.Name = in.Name
	if v != nc {
		nc.Name = in.Name + ".wide"
	}
	return v, nil
}

// byteConst is v as an 8-bit integer constant of shape sh (broadcast),
// helping compute from.
func byteConst(r *retyping, from *hlo.Instruction, sh hlo.Shape, v int64) *hlo.Instruction {
	c := r.add(from, hlo.OpConstant, hlo.ArrayShape(sh.Elem))
	c.Literal, _ = hlo.NewLiteral(c.Shape, []byte{byte(v)})
	if sh.Rank() == 0 {
		return c
	}
	b := r.add(from, hlo.OpBroadcast, sh, c)
	b.A.HasDimensions = true
	return b
}

// fitRange puts x (of the 8-bit type) back in the range of narrow type
// t: the low bits sign-extended (signed) or masked (unsigned).
func fitRange(r *retyping, from, x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	sh := x.Shape
	bits := int64(t.Bits())
	if t.Kind() == hlo.KindUnsigned {
		return r.add(from, hlo.OpAnd, sh, x, byteConst(r, from, sh, 1<<bits-1))
	}
	k := byteConst(r, from, sh, 8-bits)
	return r.add(from, hlo.OpShiftRightArithmetic, sh, r.add(from, hlo.OpShiftLeft, sh, x, k), k)
}
