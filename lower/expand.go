package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// expandTopK rewrites topk into the ops it is made of, as XLA's
// TopkDecomposer does: a stable sort of (x, iota) along the last
// dimension with a total-order comparator (larger first when largest, so
// NaN ranks above infinity and ties keep the lower index), then slices of
// the first k (sortedFirst).
func expandTopK(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpTopK: topK})
}

func topK(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
	x := in.Operands[0]
	last := x.Shape.Rank() - 1
	cmp := comparator(in.Name+"/cmp", x.Shape.Elem, in.A.Largest)
	if len(in.Called) == 1 { // XLA's TopK custom-call: its own comparator of (v, v, i, i)
		cmp = in.Called[0]
	}
	res := b.sortedFirst([]*hlo.Instruction{x, b.iota(hlo.S32, last, x.Shape.Dims...)}, last, in.A.K, cmp)
	return b.inst(hlo.OpTuple, in.Shape, res...), nil
}

// sortedFirst is the first k along dimension d of the arrays xs (of one
// shape) sorted together, stably, by cmp (a comparator of their 2n
// scalars). A long dimension is first cut into chunks (topKChunk)
// sorted on their own, of which the first k of each go on to the
// dimension's sort: the k first of the whole are among them, in the
// whole's order where they tie (chunks in order, each sort stable).
func (b *expander) sortedFirst(xs []*hlo.Instruction, d int, k int64, cmp *hlo.Computation) []*hlo.Instruction {
	dims := xs[0].Shape.Dims
	if c := topKChunk(dims[d], k); c > 0 {
		// [..., n, ...] -> [..., n/c, c, ...], the first k of each chunk,
		// and back to (n/c)*k candidates along d.
		cut := slices.Concat(dims[:d], []int64{dims[d] / c, c}, dims[d+1:])
		chunks := make([]*hlo.Instruction, len(xs))
		for i, x := range xs {
			chunks[i] = b.reshape(x, cut...)
		}
		firsts := b.sortFirst(chunks, d+1, k, cmp)
		row := slices.Concat(dims[:d], []int64{dims[d] / c * k}, dims[d+1:])
		xs = make([]*hlo.Instruction, len(firsts))
		for i, f := range firsts {
			xs[i] = b.reshape(f, row...)
		}
	}
	return b.sortFirst(xs, d, k, cmp)
}

// sortFirst sorts xs together along dimension d by cmp, stably, and
// slices the first k of each.
func (b *expander) sortFirst(xs []*hlo.Instruction, d int, k int64, cmp *hlo.Computation) []*hlo.Instruction {
	sorted := b.inst(hlo.OpSort, variadicShape(xs), xs...)
	sorted.Called = []*hlo.Computation{cmp}
	sorted.A.Dimensions, sorted.A.IsStable = []int64{int64(d)}, true
	out := b.leaves(sorted, len(xs))
	for i, v := range out {
		out[i] = b.slice(v, d, 0, k)
	}
	return out
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
