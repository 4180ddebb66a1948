package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// expandTopK rewrites topk into the ops it is made of, as XLA's
// TopkDecomposer does: a stable sort of (x, iota) along the last
// dimension with a total-order comparator (larger first when largest, so
// NaN ranks above infinity and ties keep the lower index), then slices of
// the first k. It works on the entry inlineCalls copied.
func expandTopK(s *state) error {
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op != hlo.OpTopK {
			out = append(out, in)
			continue
		}
		x := in.Operands[0]
		dims := x.Shape.Dims
		last := int64(len(dims) - 1)
		name := func(s string) string { return in.Name + "/" + s }
		iota := &hlo.Instruction{Name: name("iota"), Op: hlo.OpIota, Shape: hlo.ArrayShape(hlo.S32, dims...), Pos: in.Pos}
		iota.A.IotaDim = last
		cmp := comparator(in.Name+"/cmp", x.Shape.Elem, in.A.Largest)
		sorted := &hlo.Instruction{Name: name("sort"), Op: hlo.OpSort, Pos: in.Pos,
			Shape:    hlo.TupleShape(hlo.ArrayShape(x.Shape.Elem, dims...), hlo.ArrayShape(hlo.S32, dims...)),
			Operands: []*hlo.Instruction{x, iota}, Called: []*hlo.Computation{cmp}}
		sorted.A.Dimensions, sorted.A.IsStable = []int64{last}, true
		out = append(out, iota, sorted)
		parts := make([]*hlo.Instruction, 2)
		for i := range parts {
			gte := &hlo.Instruction{Name: name("gte" + string(rune('0'+i))), Op: hlo.OpGetTupleElement, Pos: in.Pos,
				Shape: sorted.Shape.Tuple[i], Operands: []*hlo.Instruction{sorted}}
			gte.A.Index = int64(i)
			sl := &hlo.Instruction{Name: name("slice" + string(rune('0'+i))), Op: hlo.OpSlice, Pos: in.Pos,
				Shape: in.Shape.Tuple[i], Operands: []*hlo.Instruction{gte}}
			for d, n := range dims {
				lim := n
				if int64(d) == last {
					lim = in.A.K
				}
				sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: 0, Limit: lim, Stride: 1})
			}
			out = append(out, gte, sl)
			parts[i] = sl
		}
		// The topk instruction becomes the tuple of the two slices, so
		// that its users need no change.
		tuple := *in
		tuple.Op, tuple.Operands, tuple.A = hlo.OpTuple, parts, hlo.Attributes{}
		*in = tuple
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}

// comparator builds `compare(a, b), direction=GT (or LT), type=TOTALORDER`
// over scalars of type t, with two ignored s32 parameters for the iota.
func comparator(name string, t hlo.ElementType, largest bool) *hlo.Computation {
	c := &hlo.Computation{Name: name}
	types := []hlo.ElementType{t, t, hlo.S32, hlo.S32}
	for i, pt := range types {
		p := &hlo.Instruction{Name: name + "/p" + string(rune('0'+i)), Op: hlo.OpParameter, Shape: hlo.ArrayShape(pt), ParamNum: i}
		c.Params = append(c.Params, p)
		c.Instructions = append(c.Instructions, p)
	}
	cmp := &hlo.Instruction{Name: name + "/compare", Op: hlo.OpCompare, Shape: hlo.ArrayShape(hlo.PRED), Operands: c.Params[:2]}
	cmp.A.Direction = "LT"
	if largest {
		cmp.A.Direction = "GT"
	}
	if t.IsFloat() {
		cmp.A.CompareType = "TOTALORDER"
	}
	c.Instructions = append(c.Instructions, cmp)
	c.Root = cmp
	return c
}
