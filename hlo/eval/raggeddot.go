package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// raggedDot computes a ragged-dot (hlo.RaggedDotForm) by its definition:
// the ragged dimension's positions fall into consecutive groups of
// group_sizes' lengths; with ragged rows, a result element is its row's
// group's product (the lhs times the rhs's slice of that group); with a
// ragged contracting dimension, result j is the dot of the lhs and rhs
// restricted to group j's values of that dimension; with a ragged batch
// dimension, the dot itself. Positions in no group are zeros. Where
// group_sizes has leading dimensions (hlo.RaggedDot.SizeDims), each
// position along them has its own groups.
func raggedDot(in *hlo.Instruction, lhs, rhs, sizes *hlo.Literal, sum hlo.ElementType) (*hlo.Literal, error) {
	f, err := hlo.RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	// groupOf[q][p] is the group of position p along the ragged
	// dimension (of length n) at position q of group_sizes' leading
	// dimensions (row-major; one q for group_sizes [g]), -1 in none.
	lead := sizes.Shape.Dims[:sizes.Shape.Rank()-1]
	groupOf := func(n int64) [][]int64 {
		out := make([][]int64, hlo.ArrayShape(sizes.Shape.Elem, lead...).NumElements())
		for q := range out {
			group := make([]int64, n)
			for p := range group {
				group[p] = -1
			}
			start := int64(0)
			for j := range f.Groups {
				k := get(sizes, int64(q)*f.Groups+j)
				size := k.i
				if sizes.Shape.Elem.Kind() == hlo.KindUnsigned {
					size = int64(k.u)
				}
				for p := max(start, 0); p < min(start+size, n); p++ {
					if group[p] < 0 {
						group[p] = j
					}
				}
				start += size
			}
			out[q] = group
		}
		return out
	}
	// keep is l with zeros where the group of the element's position
	// along d is not one want takes (group[q][p], -1 for none; q from
	// the element's place along dimensions at, group_sizes' leading).
	keep := func(l *hlo.Literal, d int, at []int64, group [][]int64, want func(g int64) bool) *hlo.Literal {
		out := zeros(l.Shape)
		st, w := strides(l.Shape.Dims), int64(l.Shape.Elem.Bytes())
		for i := range l.Shape.NumElements() {
			q := int64(0)
			for k, a := range at {
				q = q*lead[k] + i/st[a]%l.Shape.Dims[a]
			}
			if want(group[q][i/st[d]%l.Shape.Dims[d]]) {
				copy(out.Data[i*w:(i+1)*w], l.Data[i*w:(i+1)*w])
			}
		}
		return out
	}
	switch f.Mode {
	case hlo.RaggedContracting:
		out := zeros(in.Shape)
		group := groupOf(lhs.Shape.Dims[f.Ragged])
		for j := range f.Groups {
			in := func(g int64) bool { return g == j }
			d, err := dot(f.Dot, keep(lhs, int(f.Ragged), f.SizesAt(0), group, in), keep(rhs, int(f.RhsRagged), f.SizesAt(1), group, in), sum)
			if err != nil {
				return nil, err
			}
			copy(out.Data[j*int64(len(d.Data)):], d.Data)
		}
		return out, nil
	case hlo.RaggedBatch:
		d, err := dot(f.Dot, lhs, rhs, sum)
		if err != nil {
			return nil, err
		}
		pos := f.ResultDim()
		return keep(d, pos, f.SizesAt(2), groupOf(d.Shape.Dims[pos]), func(g int64) bool { return g >= 0 }), nil
	}
	out := zeros(in.Shape)
	pos := f.ResultDim()
	group := groupOf(out.Shape.Dims[pos])
	g := int(f.Group)
	for j := range rhs.Shape.Dims[g] {
		// The rhs's slice j along its group dimension.
		slice := zeros(f.Dot.Operands[1].Shape)
		rs, w := strides(rhs.Shape.Dims), int64(rhs.Shape.Elem.Bytes())
		k := int64(0)
		for i := range rhs.Shape.NumElements() {
			if i/rs[g]%rhs.Shape.Dims[g] == j {
				copy(slice.Data[k*w:(k+1)*w], rhs.Data[i*w:(i+1)*w])
				k++
			}
		}
		d, err := dot(f.Dot, lhs, slice, sum)
		if err != nil {
			return nil, err
		}
		// Each element is group j's product in one j only, zero bytes
		// in the others: or-ing the bytes gathers them.
		mine := keep(d, pos, f.SizesAt(2), group, func(g int64) bool { return g == j })
		for i := range out.Data {
			out.Data[i] |= mine.Data[i]
		}
	}
	return out, nil
}
