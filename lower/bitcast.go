package lower

import (
	"fmt"

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
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op != hlo.OpBitcastConvert || !in.Shape.IsArray() {
			out = append(out, in)
			continue
		}
		from, to := in.Operands[0].Shape.Elem, in.Shape.Elem
		if from.Bits() == to.Bits() {
			out = append(out, in)
			continue
		}
		if from == hlo.PRED || to == hlo.PRED || from.Bits() < 8 || to.Bits() < 8 {
			return in.Errorf("bitcast-convert from %s to %s is not supported on the device yet", from, to)
		}
		n := 0
		inst := func(op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
			n++
			v := &hlo.Instruction{Name: fmt.Sprintf("%s/w%d", in.Name, n), Op: op, Shape: sh, Operands: ops, Pos: in.Pos}
			out = append(out, v)
			return v
		}
		// bits reinterprets v as the unsigned integer of its width (v itself
		// if it is one).
		bits := func(v *hlo.Instruction) *hlo.Instruction {
			u := unsignedOfWidth(v.Shape.Elem.Bits())
			if v.Shape.Elem == u {
				return v
			}
			return inst(hlo.OpBitcastConvert, hlo.ArrayShape(u, v.Shape.Dims...), v)
		}
		// shifts is k*w along the last dimension of shape dims, as type u.
		shifts := func(u hlo.ElementType, dims []int64, w int) *hlo.Instruction {
			io := inst(hlo.OpIota, hlo.ArrayShape(u, dims...))
			io.A.IotaDim = int64(len(dims) - 1)
			c := inst(hlo.OpConstant, hlo.ArrayShape(u))
			c.Literal = hlo.ScalarLiteral(u, float64(w))
			b := inst(hlo.OpBroadcast, io.Shape, c)
			b.A.HasDimensions = true
			return inst(hlo.OpMultiply, io.Shape, io, b)
		}
		var v *hlo.Instruction
		if from.Bits() > to.Bits() {
			x := bits(in.Operands[0])
			dims := in.Shape.Dims
			b := inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, dims...), x)
			b.A.Dimensions, b.A.HasDimensions = iotaDims(len(dims)-1), true
			sh := inst(hlo.OpShiftRightLogical, b.Shape, b, shifts(x.Shape.Elem, dims, to.Bits()))
			v = inst(hlo.OpConvert, hlo.ArrayShape(unsignedOfWidth(to.Bits()), dims...), sh)
		} else {
			x := bits(in.Operands[0])
			xd := x.Shape.Dims
			last := len(xd) - 1
			u := unsignedOfWidth(to.Bits())
			wide := inst(hlo.OpConvert, hlo.ArrayShape(u, xd...), x)
			sh := inst(hlo.OpShiftLeft, wide.Shape, wide, shifts(u, xd, from.Bits()))
			for k := int64(0); k < xd[last]; k++ {
				sl := inst(hlo.OpSlice, hlo.ArrayShape(u, append(append([]int64{}, xd[:last]...), 1)...), sh)
				for d, m := range xd {
					lo, hi := int64(0), m
					if d == last {
						lo, hi = k, k+1
					}
					sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: lo, Limit: hi, Stride: 1})
				}
				part := inst(hlo.OpReshape, hlo.ArrayShape(u, in.Shape.Dims...), sl)
				if v == nil {
					v = part
				} else {
					v = inst(hlo.OpOr, part.Shape, v, part)
				}
			}
		}
		// in itself becomes the last step, so that its users need no change.
		if v.Shape.Elem == to {
			c := *in
			c.Op, c.Operands, c.A = hlo.OpCopy, []*hlo.Instruction{v}, hlo.Attributes{}
			*in = c
		} else {
			in.Operands = []*hlo.Instruction{v}
		}
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
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
