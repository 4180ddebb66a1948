package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// expandTopK rewrites topk into the ops it is made of, as XLA's
// TopkDecomposer does: a stable sort of (x, iota) along the last
// dimension with a total-order comparator (larger first when largest, so
// NaN ranks above infinity and ties keep the lower index), then slices of
// the first k. A long row is first cut into chunks (topKChunk) sorted on
// their own, of which the first k of each go on to the row's sort: the
// k first of the row are among them, in the row's order where they tie
// (chunks in order, each sort stable). It works on the entry inlineCalls
// copied.
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
		last := len(dims) - 1
		k := in.A.K
		name := func(s string) string { return in.Name + "/" + s }
		add := func(ins ...*hlo.Instruction) { out = append(out, ins...) }
		inst := func(n string, op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
			return &hlo.Instruction{Name: name(n), Op: op, Shape: sh, Operands: ops, Pos: in.Pos}
		}
		iota := inst("iota", hlo.OpIota, hlo.ArrayShape(hlo.S32, dims...))
		iota.A.IotaDim = int64(last)
		add(iota)
		cmp := comparator(in.Name+"/cmp", x.Shape.Elem, in.A.Largest)
		if len(in.Called) == 1 { // XLA's TopK custom-call: its own comparator of (v, v, i, i)
			cmp = in.Called[0]
		}
		// firstK sorts (v, ix) along their last dimension and slices the
		// first k of both.
		firstK := func(tag string, v, ix *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
			vd := v.Shape.Dims
			d := len(vd) - 1
			sorted := inst("sort"+tag, hlo.OpSort, hlo.TupleShape(hlo.ArrayShape(x.Shape.Elem, vd...), hlo.ArrayShape(hlo.S32, vd...)), v, ix)
			sorted.Called = []*hlo.Computation{cmp}
			sorted.A.Dimensions, sorted.A.IsStable = []int64{int64(d)}, true
			add(sorted)
			parts := make([]*hlo.Instruction, 2)
			for i := range parts {
				gte := inst(fmt.Sprintf("gte%s%d", tag, i), hlo.OpGetTupleElement, sorted.Shape.Tuple[i], sorted)
				gte.A.Index = int64(i)
				sd := append([]int64{}, vd...)
				sd[d] = k
				sl := inst(fmt.Sprintf("slice%s%d", tag, i), hlo.OpSlice, hlo.ArrayShape(sorted.Shape.Tuple[i].Elem, sd...), gte)
				for e, n := range vd {
					lim := n
					if e == d {
						lim = k
					}
					sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: 0, Limit: lim, Stride: 1})
				}
				add(gte, sl)
				parts[i] = sl
			}
			return parts[0], parts[1]
		}
		v, ix := x, iota
		if c := topKChunk(dims[last], k); c > 0 {
			// [..., n] -> [..., n/c, c], the first k of each chunk, and
			// back to one row of (n/c)*k candidates.
			cd := append(append([]int64{}, dims[:last]...), dims[last]/c, c)
			vc := inst("chunks", hlo.OpReshape, hlo.ArrayShape(x.Shape.Elem, cd...), x)
			ic := inst("chunk_iota", hlo.OpReshape, hlo.ArrayShape(hlo.S32, cd...), iota)
			add(vc, ic)
			cv, ci := firstK("_chunks", vc, ic)
			rd := append(append([]int64{}, dims[:last]...), dims[last]/c*k)
			v = inst("candidates", hlo.OpReshape, hlo.ArrayShape(x.Shape.Elem, rd...), cv)
			ix = inst("candidate_iota", hlo.OpReshape, hlo.ArrayShape(hlo.S32, rd...), ci)
			add(v, ix)
		}
		tv, ti := firstK("", v, ix)
		// The topk instruction becomes the tuple of the two slices, so
		// that its users need no change.
		tuple := *in
		tuple.Op, tuple.Operands, tuple.A = hlo.OpTuple, []*hlo.Instruction{tv, ti}, hlo.Attributes{}
		*in = tuple
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}

// topKChunk is the chunk length a top-k of k over rows of n cuts them
// into first (0: none): the largest divisor of n below topKRow, and at
// least 16k, so that the candidates are a sixteenth of the row or fewer;
// rows shorter than 2 topKRow are sorted whole. The corpus's top-10 of
// 50000 logits (jit_topk_logits_k10_1x50000_bf16) with 99c3f73's sorts:
// 2.5-3.3 ms as 50 chunks of 1000 and 500 candidates, 2.8-4.9 sorted
// whole (with the sorts before them: 4.3-4.4 and 22.3-22.7; vkjit
// bench, medians of 21, five alternating rounds), though the whole sort
// compiles one sort's kernels, not two (0.16-0.17 s first run, 0.23-0.24
// cut).
func topKChunk(n, k int64) int64 {
	if n < 2*topKRow {
		return 0
	}
	for c := int64(topKRow - 1); c >= 16*k && c > 1; c-- {
		if n%c == 0 {
			return c
		}
	}
	return 0
}

// topKRow bounds topKChunk's chunks.
const topKRow = 1024

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
