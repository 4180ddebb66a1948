package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// raggedDot writes a ragged-dot (hlo.RaggedDotForm: the lhs's rows along
// its ragged dimension split into consecutive groups, group j times the
// rhs's slice j) out as a dot per group, each result taken where the
// row's position lies in its group, as CHLO's legalization of
// chlo.ragged_dot does: g dots of the whole lhs, which fusion keeps in
// one pass over the output; rows past the last group are zeros. A select
// per group, not a sum of masked terms, so that a -0 stays -0.
func (b *expander) raggedDot(in *hlo.Instruction) (*hlo.Instruction, error) {
	f, err := hlo.RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	sizes := in.Operands[2]
	if f == nil || sizes.Shape.Rank() != 1 {
		return nil, in.Errorf("ragged-dot with a ragged contracting or batch dimension, or group sizes per batch, is not supported on the device yet")
	}
	lhs, rhs := in.Operands[0], in.Operands[1]
	out := in.Shape
	g := int(f.Group)
	// The ragged dimension's place in the result: after the batch
	// dimensions, among the lhs's free ones.
	lFree, _ := f.Dot.A.Dot.FreeDims(lhs.Shape.Rank(), rhs.Shape.Rank()-1)
	pos := len(f.Dot.A.Dot.LhsBatch)
	for _, d := range lFree {
		if d == f.Ragged {
			break
		}
		pos++
	}
	at := b.iota(hlo.S32, pos, out.Dims...)
	start := b.constant(hlo.S32, 0)
	acc := b.zeros(out)
	for j := range rhs.Shape.Dims[g] {
		rj := b.slice(rhs, g, j, j+1)
		rj = b.reshape(rj, f.Dot.Operands[1].Shape.Dims...)
		d := b.place(&hlo.Instruction{Op: hlo.OpDot, Shape: out, Operands: []*hlo.Instruction{lhs, rj}, A: hlo.Attributes{Dot: f.Dot.A.Dot}})
		limit := b.binary(hlo.OpAdd, start, b.convert(b.reshape(b.slice(sizes, 0, j, j+1)), hlo.S32))
		inside := b.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, out.Dims...), b.compare(at, b.full(start, at.Shape), "GE"), b.compare(at, b.full(limit, at.Shape), "LT"))
		acc = b.sel(inside, d, acc)
		start = limit
	}
	return acc, nil
}
