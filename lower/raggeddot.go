package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// raggedDot writes a ragged-dot (hlo.RaggedDotForm) out in dots and
// selects, as CHLO's legalization of chlo.ragged_dot does: with ragged
// rows, a dot of the lhs with each group's rhs, each result taken where
// the row lies in the group (g dots of the whole lhs, which fusion keeps
// in one pass over the output); with a ragged contracting dimension, for
// each group a dot of the lhs and rhs with the other groups' values of
// that dimension made zeros (both, so that no 0 * inf makes a NaN), the
// results stacked; with a ragged batch dimension, one dot, zeros past
// the last group. Selects, not sums of masked terms, so a -0 stays -0.
func (b *expander) raggedDot(in *hlo.Instruction) (*hlo.Instruction, error) {
	f, err := hlo.RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	sizes := in.Operands[2]
	if sizes.Shape.Rank() != 1 {
		return nil, in.Errorf("ragged-dot with group sizes per batch (%s) is not supported on the device yet", sizes.Shape)
	}
	lhs, rhs := in.Operands[0], in.Operands[1]
	dot := func(l, r *hlo.Instruction) *hlo.Instruction {
		return b.place(&hlo.Instruction{Op: hlo.OpDot, Shape: f.Dot.Shape, Operands: []*hlo.Instruction{l, r}, A: hlo.Attributes{Dot: f.Dot.A.Dot}})
	}
	// groups calls each with group j's [start, limit) along the ragged
	// dimension.
	groups := func(each func(j int64, start, limit *hlo.Instruction)) {
		start := b.constant(hlo.S32, 0)
		for j := range f.Groups {
			limit := b.binary(hlo.OpAdd, start, b.convert(b.reshape(b.slice(sizes, 0, j, j+1)), hlo.S32))
			each(j, start, limit)
			start = limit
		}
	}
	// inside is where positions at along dimension d of sh lie in
	// [start, limit).
	inside := func(sh hlo.Shape, d int, start, limit *hlo.Instruction) *hlo.Instruction {
		at := b.iota(hlo.S32, d, sh.Dims...)
		return b.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, sh.Dims...), b.compare(at, b.full(start, at.Shape), "GE"), b.compare(at, b.full(limit, at.Shape), "LT"))
	}
	out := f.Dot.Shape
	if f.Mode == hlo.RaggedContracting {
		var parts []*hlo.Instruction
		groups(func(j int64, start, limit *hlo.Instruction) {
			l := b.sel(inside(lhs.Shape, int(f.Ragged), start, limit), lhs, b.zeros(lhs.Shape))
			r := b.sel(inside(rhs.Shape, int(f.RhsRagged), start, limit), rhs, b.zeros(rhs.Shape))
			parts = append(parts, b.reshape(dot(l, r), append([]int64{1}, out.Dims...)...))
		})
		if len(parts) == 0 {
			return b.zeros(in.Shape), nil
		}
		return b.concat(0, parts...), nil
	}
	// Rows or a batch dimension: each position of the result takes its
	// group's product (one product for all groups, for a batch one).
	acc := b.zeros(out)
	var whole *hlo.Instruction
	if f.Mode == hlo.RaggedBatch {
		whole = dot(lhs, rhs)
	}
	groups(func(j int64, start, limit *hlo.Instruction) {
		d := whole
		if d == nil {
			d = dot(lhs, b.reshape(b.slice(rhs, int(f.Group), j, j+1), f.Dot.Operands[1].Shape.Dims...))
		}
		acc = b.sel(inside(out, f.ResultDim(), start, limit), d, acc)
	})
	return acc, nil
}
