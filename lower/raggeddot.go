package lower

import (
	"cmp"
	"slices"

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
// Group sizes per position of the lhs's outer dimensions (SizeDims)
// make each group's bounds arrays over those dimensions, broadcast to
// where they lie in each masked array.
func (b *expander) raggedDot(in *hlo.Instruction) (*hlo.Instruction, error) {
	f, err := hlo.RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	sizes := in.Operands[2]
	lhs, rhs := in.Operands[0], in.Operands[1]
	dot := func(l, r *hlo.Instruction) *hlo.Instruction {
		return b.place(&hlo.Instruction{Op: hlo.OpDot, Shape: f.Dot.Shape, Operands: []*hlo.Instruction{l, r}, A: hlo.Attributes{Dot: f.Dot.A.Dot}})
	}
	// groups calls each with group j's [start, limit) along the ragged
	// dimension: scalars, or arrays over group_sizes' leading dimensions
	// (f.SizeDims), each position's own groups.
	last := sizes.Shape.Rank() - 1 // the groups' dimension
	prefix := hlo.ArrayShape(hlo.S32, sizes.Shape.Dims[:last]...)
	groups := func(each func(j int64, start, limit *hlo.Instruction)) {
		start := b.zeros(prefix)
		for j := range f.Groups {
			limit := b.binary(hlo.OpAdd, start, b.convert(b.reshape(b.slice(sizes, last, j, j+1), prefix.Dims...), hlo.S32))
			each(j, start, limit)
			start = limit
		}
	}
	// inside is where positions at along dimension d of sh lie in
	// [start, limit), group_sizes' leading dimensions being sh's
	// dimensions at (f.SizesAt).
	inside := func(sh hlo.Shape, d int, start, limit *hlo.Instruction, at []int64) *hlo.Instruction {
		pos := b.iota(hlo.S32, d, sh.Dims...)
		return b.inst(hlo.OpAnd, hlo.ArrayShape(hlo.PRED, sh.Dims...), b.compare(pos, b.spread(start, sh, at), "GE"), b.compare(pos, b.spread(limit, sh, at), "LT"))
	}
	out := f.Dot.Shape
	if f.Mode == hlo.RaggedContracting {
		var parts []*hlo.Instruction
		groups(func(j int64, start, limit *hlo.Instruction) {
			l := b.sel(inside(lhs.Shape, int(f.Ragged), start, limit, f.SizesAt(0)), lhs, b.zeros(lhs.Shape))
			r := b.sel(inside(rhs.Shape, int(f.RhsRagged), start, limit, f.SizesAt(1)), rhs, b.zeros(rhs.Shape))
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
		acc = b.sel(inside(out, f.ResultDim(), start, limit, f.SizesAt(2)), d, acc)
	})
	return acc, nil
}

// spread broadcasts x to sh, x's dimension k going to sh's dimension
// at[k] (x transposed first where at is out of order).
func (b *expander) spread(x *hlo.Instruction, sh hlo.Shape, at []int64) *hlo.Instruction {
	perm := iotaDims(len(at))
	slices.SortFunc(perm, func(p, q int64) int { return cmp.Compare(at[p], at[q]) })
	to := make([]int64, len(at))
	for k, p := range perm {
		to[k] = at[p]
	}
	if !slices.IsSorted(at) {
		x = b.transpose(x, perm...)
	}
	bc := b.inst(hlo.OpBroadcast, hlo.ArrayShape(x.Shape.Elem, sh.Dims...), x)
	bc.A.Dimensions, bc.A.HasDimensions = to, true
	return bc
}
