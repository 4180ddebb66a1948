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
	if u := unsignedOfWidth(from.Bits()); from != u {
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
		v = b.convert(b.binary(hlo.OpShiftRightLogical, bc, shifts(x.Shape.Elem, dims, to.Bits())), unsignedOfWidth(to.Bits()))
	} else {
		wide := b.convert(x, unsignedOfWidth(to.Bits()))
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

func unsignedOfWidth(bits int) hlo.ElementType {
	switch bits {
	case 8:
		return hlo.U8
	case 16:
		return hlo.U16
	case 32:
		return hlo.U32
	}
	return hlo.U64
}
