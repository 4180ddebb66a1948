package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// splitWideOps rewrites a concatenate with more operands than the device
// binds storage buffers per kernel (lavapipe: 32) into a tree of
// concatenates that each fit. It works on the entry that inlineCalls
// copied, so the user's module is untouched.
func splitWideOps(s *state) error {
	limit := int(s.tg.MaxStorageBuffers)
	if limit < 3 {
		return nil
	}
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op == hlo.OpConcatenate && len(in.Operands)+1 > limit {
			d := in.A.Dimensions[0]
			ops := in.Operands
			for round := 0; len(ops)+1 > limit; round++ {
				var next []*hlo.Instruction
				for i := 0; i < len(ops); i += limit - 1 {
					chunk := ops[i:min(i+limit-1, len(ops))]
					if len(chunk) == 1 {
						next = append(next, chunk[0])
						continue
					}
					shape := hlo.ArrayShape(in.Shape.Elem, chunk[0].Shape.Dims...)
					shape.Dims[d] = 0
					for _, c := range chunk {
						shape.Dims[d] += c.Shape.Dims[d]
					}
					part := &hlo.Instruction{
						Name:     fmt.Sprintf("%s/part%d.%d", in.Name, round, i/(limit-1)),
						Op:       hlo.OpConcatenate,
						Shape:    shape,
						Operands: chunk,
						A:        in.A,
						Pos:      in.Pos,
					}
					out = append(out, part)
					next = append(next, part)
				}
				ops = next
			}
			cp := *in
			cp.Operands = ops
			*in = cp
		}
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}
