package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// raggedDot computes a ragged-dot of hlo.RaggedDotForm's form by its
// definition: each result element's position along the ragged dimension
// picks its group (the consecutive runs of group_sizes' lengths), and
// the element is that of the lhs times the group's slice of the rhs;
// positions past the last group are zeros.
func raggedDot(in *hlo.Instruction, lhs, rhs, sizes *hlo.Literal, sum hlo.ElementType) (*hlo.Literal, error) {
	f, err := hlo.RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	if f == nil || sizes.Shape.Rank() != 1 {
		return nil, in.Errorf("%w", &Unsupported{"ragged-dot with a ragged contracting or batch dimension, or group sizes per batch"})
	}
	out := zeros(in.Shape)
	lFree, _ := f.Dot.A.Dot.FreeDims(lhs.Shape.Rank(), rhs.Shape.Rank()-1)
	pos := len(f.Dot.A.Dot.LhsBatch)
	for _, d := range lFree {
		if d == f.Ragged {
			break
		}
		pos++
	}
	// group[p] is the group of position p along the ragged dimension,
	// -1 past the last.
	n := in.Shape.Dims[pos]
	group := make([]int64, n)
	for p := range group {
		group[p] = -1
	}
	start := int64(0)
	for j := range sizes.Shape.Dims[0] {
		k := get(sizes, j)
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
	g := int(f.Group)
	st := strides(out.Shape.Dims)
	width := int64(in.Shape.Elem.Bytes())
	for j := range rhs.Shape.Dims[g] {
		// The rhs's slice j along its group dimension.
		dims := rhs.Shape.Dims
		rs := strides(dims)
		slice := zeros(f.Dot.Operands[1].Shape)
		w := int64(rhs.Shape.Elem.Bytes())
		k := int64(0)
		for i := range rhs.Shape.NumElements() {
			if i/rs[g]%dims[g] == j {
				copy(slice.Data[k*w:(k+1)*w], rhs.Data[i*w:(i+1)*w])
				k++
			}
		}
		d, err := dot(f.Dot, lhs, slice, sum)
		if err != nil {
			return nil, err
		}
		for i := range out.Shape.NumElements() {
			if group[i/st[pos]%n] == j {
				copy(out.Data[i*width:(i+1)*width], d.Data[i*width:(i+1)*width])
			}
		}
	}
	return out, nil
}
