package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// splitBitcasts rewrites each bitcast-convert between element types of
// different widths into ops of one width, which the kernels compute
// elementwise: XLA's wide-to-narrow bitcast adds a last dimension of the
// width ratio, element k holding bits [k*n, (k+1)*n) of the wide value
// (little-endian, as XLA lays the bytes), and narrow-to-wide takes that
// dimension away. Wide to narrow: the wide bits as an unsigned integer,
// broadcast along the new dimension, shifted right by k*n and truncated
// to n bits. Narrow to wide: each of the r narrow values widened, shifted
// left by k*n and or-ed together. Both sides' own bitcasts are then of
// one width. A complex array reaches here as its memory form (lower
// complex), so complex bitcasts of any width go the same way.
func splitBitcasts(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpBitcastConvert: (*expander).splitBitcast})
}

func (b *expander) splitBitcast(in *hlo.Instruction) (*hlo.Instruction, error) {
	if !in.Shape.IsArray() {
		return in, nil
	}
	x := in.Operands[0]
	from, to := x.Shape.Elem, in.Shape.Elem
	if from.Bits() == to.Bits() {
		return in, nil
	}
	if from == hlo.PRED || to == hlo.PRED || from.Bits() < 8 || to.Bits() < 8 {
		return nil, in.Errorf("bitcast-convert from %s to %s is not supported on the device yet", from, to)
	}
	if u := hlo.UnsignedOfWidth(from.Bits()); from != u {
		x = b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(u, x.Shape.Dims...), x)
	}
	// shifts is k*w along the last dimension of dims, as type u.
	shifts := func(u hlo.ElementType, dims []int64, w int) *hlo.Instruction {
		return b.binary(hlo.OpMultiply, b.iota(u, len(dims)-1, dims...), b.constant(u, int64(w)))
	}
	var v *hlo.Instruction
	if from.Bits() > to.Bits() {
		dims := in.Shape.Dims
		bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, dims...), x)
		bc.A.Dimensions, bc.A.HasDimensions = iotaDims(len(dims)-1), true
		v = b.convert(b.binary(hlo.OpShiftRightLogical, bc, shifts(x.Shape.Elem, dims, to.Bits())), hlo.UnsignedOfWidth(to.Bits()))
	} else {
		wide := b.convert(x, hlo.UnsignedOfWidth(to.Bits()))
		sh := b.binary(hlo.OpShiftLeft, wide, shifts(wide.Shape.Elem, wide.Shape.Dims, from.Bits()))
		last := sh.Shape.Rank() - 1
		for k := int64(0); k < sh.Shape.Dims[last]; k++ {
			part := b.reshape(b.slice(sh, last, k, k+1), in.Shape.Dims...)
			if v == nil {
				v = part
			} else {
				v = b.binary(hlo.OpOr, v, part)
			}
		}
	}
	if v.Shape.Elem != to {
		v = b.inst(hlo.OpBitcastConvert, in.Shape, v)
	}
	return v, nil
}

// expandSubByteBitcasts rewrites each bitcast-convert from or to a type
// narrower than a byte (s2-u4, f4, f6) into operations on the values,
// before widen sub-byte integers and widen f8 give those types wider
// ones and the bits a narrow element stands for would be lost. The
// operand's elements become codes of its width in an unsigned carrier
// (u32, or u64 beside a 64-bit side), the codes are packed or unpacked
// to the result's width as a little-endian stream (XLA's bitcast: the
// narrow side's last dimension is the width ratio, element 0 lowest),
// and the result's elements are made from theirs: a narrow integer by
// a conversion (it wraps), f4 and f6 from their value (decodeMini and a
// conversion, exact), anything of a byte or more by a bitcast of its
// width, which later passes take on as any other.
func expandSubByteBitcasts(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpBitcastConvert: (*expander).subByteBitcast})
}

func (b *expander) subByteBitcast(in *hlo.Instruction) (*hlo.Instruction, error) {
	if !in.Shape.IsArray() {
		return in, nil
	}
	x := in.Operands[0]
	from, to := x.Shape.Elem, in.Shape.Elem
	if from.Bits() >= 8 && to.Bits() >= 8 {
		return in, nil
	}
	if from == hlo.PRED || to == hlo.PRED || from.Kind() == hlo.KindComplex || to.Kind() == hlo.KindComplex {
		return nil, in.Errorf("bitcast-convert from %s to %s is not supported on the device yet", from, to)
	}
	carrier := hlo.U32
	if from.Bits() == 64 || to.Bits() == 64 {
		carrier = hlo.U64
	}
	var err error
	codes := b.codesOf(x, carrier, &err)
	codes = b.repack(codes, from.Bits(), to.Bits(), in.Shape.Dims)
	v := b.fromCodes(codes, in.Shape, &err)
	if err != nil {
		return nil, in.Errorf("bitcast-convert from %s to %s: %v", from, to, err)
	}
	return v, nil
}

// codesOf is x's elements' bits, each in the low bits of type carrier.
func (b *expander) codesOf(x *hlo.Instruction, carrier hlo.ElementType, err *error) *hlo.Instruction {
	t, dims := x.Shape.Elem, x.Shape.Dims
	e := b.expr(hlo.ArrayShape(carrier, dims...), err)
	switch {
	case isNarrowInt(t): // a conversion sign-extends; the mask keeps the narrow bits
		return e.And(e.Convert(x, carrier), e.Bits(1<<t.Bits()-1))
	case hlo.IsMiniFloat(t) && t.Bits() < 8: // f4, f6: from the value, exact in f32
		f, _ := hlo.MiniFloatFormatOf(t)
		fe := b.expr(hlo.ArrayShape(hlo.F32, dims...), err)
		return e.Convert(encodeMini(fe, fe.Convert(x, hlo.F32), f), carrier)
	}
	u := hlo.UnsignedOfWidth(t.Bits())
	if t != u { // bits of a byte or more: a bitcast of their own width (widen f8 decodes an f8's)
		x = e.Make(hlo.OpBitcastConvert, hlo.ArrayShape(u, dims...), x)
	}
	return e.Convert(x, carrier)
}

// repack turns codes of width wf into codes of width wt of dimensions
// dims: pieces of wf bits or-ed together, element k of the last
// dimension shifted by k*wf; or each code's k-th piece of wt bits.
func (b *expander) repack(codes *hlo.Instruction, wf, wt int, dims []int64) *hlo.Instruction {
	if wf == wt {
		return codes
	}
	u := codes.Shape.Elem
	shifts := func(dims []int64, w int) *hlo.Instruction {
		return b.binary(hlo.OpMultiply, b.iota(u, len(dims)-1, dims...), b.constant(u, int64(w)))
	}
	if wf < wt {
		sh := b.binary(hlo.OpShiftLeft, codes, shifts(codes.Shape.Dims, wf))
		last := sh.Shape.Rank() - 1
		var v *hlo.Instruction
		for k := int64(0); k < sh.Shape.Dims[last]; k++ {
			part := b.reshape(b.slice(sh, last, k, k+1), dims...)
			if v == nil {
				v = part
			} else {
				v = b.binary(hlo.OpOr, v, part)
			}
		}
		return v
	}
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(u, dims...), codes)
	bc.A.Dimensions, bc.A.HasDimensions = iotaDims(len(dims)-1), true
	pieces := b.binary(hlo.OpShiftRightLogical, bc, shifts(dims, wt))
	return b.binary(hlo.OpAnd, pieces, b.constant(u, 1<<wt-1))
}

// fromCodes makes values of shape s from their codes.
func (b *expander) fromCodes(codes *hlo.Instruction, s hlo.Shape, err *error) *hlo.Instruction {
	t := s.Elem
	switch {
	case isNarrowInt(t):
		return b.convert(codes, t) // wraps: the narrow bits, sign-extended for the signed types
	case hlo.IsMiniFloat(t) && t.Bits() < 8:
		f, _ := hlo.MiniFloatFormatOf(t)
		ue := b.expr(hlo.ArrayShape(hlo.U32, s.Dims...), err)
		return b.convert(decodeMini(ue, b.convert(codes, hlo.U32), f), t)
	}
	v := b.convert(codes, hlo.UnsignedOfWidth(t.Bits()))
	if v.Shape.Elem != t {
		v = b.inst(hlo.OpBitcastConvert, s, v)
	}
	return v
}

// typedBitcasts rewrites each bitcast whose element type differs from
// its operand's into the bytes' reinterpretation it stands for (XLA
// emits a bitcast as the operand's buffer read as the result's shape):
// a bitcast-convert between the types, through a last dimension of the
// width ratio where the widths differ, and reshapes around it, in the
// row-major order vkjit lays every array in. Kernels then see only
// bitcasts that keep the type, which are reshapes. It runs before the
// passes that take complex, f8 and sub-byte bitcast-converts apart.
func typedBitcasts(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpBitcast: (*expander).typedBitcast})
}

func (b *expander) typedBitcast(in *hlo.Instruction) (*hlo.Instruction, error) {
	x := in.Operands[0]
	if !in.Shape.IsArray() || !x.Shape.IsArray() || x.Shape.Elem == in.Shape.Elem {
		return in, nil
	}
	from, to := x.Shape.Elem, in.Shape.Elem
	if from == hlo.PRED || to == hlo.PRED || from.Bits() < 8 || to.Bits() < 8 {
		return nil, in.Errorf("bitcast from %s to %s is not supported on the device yet", x.Shape, in.Shape)
	}
	n := x.Shape.NumElements()
	var v *hlo.Instruction
	switch fb, tb := int64(from.Bits()), int64(to.Bits()); {
	case fb == tb:
		v = b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(to, n), b.reshape(x, n))
	case fb > tb: // each wide element becomes fb/tb narrow ones, lowest bits first
		v = b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(to, n, fb/tb), b.reshape(x, n))
	default: // tb/fb narrow elements make each wide one
		m := n * fb / tb
		v = b.inst(hlo.OpBitcastConvert, hlo.ArrayShape(to, m), b.reshape(x, m, tb/fb))
	}
	return b.reshape(v, in.Shape.Dims...), nil
}
