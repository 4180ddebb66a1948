package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// expandTopK rewrites topk into the ops it is made of, as XLA's
// TopkDecomposer does: a stable sort of (x, iota) along the last
// dimension with a total-order comparator (larger first when largest, so
// NaN ranks above infinity and ties keep the lower index), then slices of
// the first k (sortedFirst).
func expandTopK(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpTopK: func(b *expander, in *hlo.Instruction) (*hlo.Instruction, error) {
		return topK(b, in, s.tg.Int64)
	}})
}

// topK is in's expansion; int64 says whether the device computes in 64
// bits (keyedRounds).
func topK(b *expander, in *hlo.Instruction, int64s bool) (*hlo.Instruction, error) {
	x := in.Operands[0]
	last := x.Shape.Rank() - 1
	if len(in.Called) == 0 && int64s && keyedRounds(x.Shape, in.A.K) {
		return b.inst(hlo.OpTuple, in.Shape, b.selectRounds(x, in.A.K, in.A.Largest)...), nil
	}
	cmp := comparator(in.Name+"/cmp", x.Shape.Elem, in.A.Largest)
	if len(in.Called) == 1 { // XLA's TopK custom-call: its own comparator of (v, v, i, i)
		cmp = in.Called[0]
	}
	res := b.sortedFirst([]*hlo.Instruction{x, b.iota(hlo.S32, last, x.Shape.Dims...)}, last, in.A.K, cmp)
	return b.inst(hlo.OpTuple, in.Shape, res...), nil
}

// A top-k of few (k of a vocabulary's logits, a beam) sorted its rows
// (in chunks, sortedFirst) to keep k of each: f32[256,50000] with k = 10
// took 330 ms on lavapipe. Choosing the first element k times is k
// reductions of the row instead, each one pass over it, of (key, index)
// pairs: an element's key is its bits made to order as signed integers
// as the total order orders the values (reversed for the smallest
// first), and of equal keys the lower index comes first, as the stable
// sort puts it. Round r takes the first of the elements after round
// r-1's choice. The value comes back out of the key: the results are
// the sort's bit for bit. (Keys of 64 bits, the index in the low half,
// would make each round a plain maximum, but lavapipe's 64-bit
// reductions ran 90 ms a round.) Since session 52 a sort with keys
// whose first k alone are read merges only those (sortKeep), and
// rounds pay for k of at most 2 (maxSelectRounds).

// keyedRounds reports whether a top-k of k over x's rows chooses in
// rounds (selectRounds): a type of at most 32 bits, k at most
// maxSelectRounds, and rows long enough that a sort would be long.
func keyedRounds(x hlo.Shape, k int64) bool {
	t := x.Elem
	n := x.Dims[x.Rank()-1]
	return x.NumElements() > 0 && k >= 1 && k <= maxSelectRounds && n >= 64*k && n < 1<<31 &&
		(t.IsFloat() && (t.Bits() == 16 || t.Bits() == 32) || t.IsInteger() && t.Bits() >= 8 && t.Bits() <= 32)
}

// maxSelectRounds bounds the reductions of a top-k chosen in rounds.
// Past 2 the partial sort of whole rows (sortKeep) is faster: top-k of
// f32[256,50000], vkjit bench --iterations 5 (lavapipe 512 bits),
// rounds against the partial sort: k=1 9.0 / 33.0 ms, 2 31.6 / 44.1,
// 3 56.6 / 44.3, 4 73.2 / 37.6, 10 172.7 / 40.7, 16 314.9 / 55.8; k=4
// of f32[8,1000000] 48.9 / 29.8.
const maxSelectRounds = 2

// selectRounds is the first k elements along the last dimension of x,
// the largest (or smallest) first in the total order, ties to the lower
// index, and their indices (keyedRounds).
func (b *expander) selectRounds(x *hlo.Instruction, k int64, largest bool) []*hlo.Instruction {
	last := x.Shape.Rank() - 1
	dims, rows := x.Shape.Dims, x.Shape.Dims[:last]
	keys, iota := b.orderKey(x, largest), b.iota(hlo.S32, last, dims...)
	none := b.constant(hlo.S32, -1)
	first := b.firstKey()
	one := slices.Concat(rows, []int64{1})
	var topKeys, topIdx []*hlo.Instruction
	var pk, pi *hlo.Instruction
	for range k {
		at := iota
		if pk != nil {
			// After the last choice: a lower key, or its key at a higher
			// index.
			k, i := b.spreadBatch(pk, keys.Shape), b.spreadBatch(pi, keys.Shape)
			after := b.binary(hlo.OpOr, b.compare(keys, k, "LT"), b.binary(hlo.OpAnd, b.compare(keys, k, "EQ"), b.compare(iota, i, "GT")))
			at = b.sel(after, iota, b.bcast(none, dims...))
		}
		red := b.inst(hlo.OpReduce, hlo.TupleShape(hlo.ArrayShape(hlo.S32, rows...), hlo.ArrayShape(hlo.S32, rows...)),
			keys, at, b.constant(hlo.S32, 0), none)
		red.A.Dimensions, red.A.HasDimensions = []int64{int64(last)}, true
		red.Called = []*hlo.Computation{first}
		pk, pi = b.gte(red, 0), b.gte(red, 1)
		topKeys, topIdx = append(topKeys, b.reshape(pk, one...)), append(topIdx, b.reshape(pi, one...))
	}
	return []*hlo.Instruction{b.fromOrderKey(b.concat(last, topKeys...), x.Shape.Elem, largest), b.concat(last, topIdx...)}
}

// firstKey is the reducer of (key, index) pairs that keeps the larger
// key, of equal keys the lower index; an index of -1 is no element.
func (b *expander) firstKey() *hlo.Computation {
	c := b.scalarComputation("/first", hlo.S32, hlo.S32, hlo.S32, hlo.S32)
	in := &expander{from: b.from, n: b.n}
	a, i, v, j := c.Params[0], c.Params[1], c.Params[2], c.Params[3]
	zero := in.constant(hlo.S32, 0)
	before := in.binary(hlo.OpOr, in.compare(v, a, "GT"), in.binary(hlo.OpAnd, in.compare(v, a, "EQ"), in.compare(j, i, "LT")))
	take := in.binary(hlo.OpAnd, in.compare(j, zero, "GE"), in.binary(hlo.OpOr, in.compare(i, zero, "LT"), before))
	c.Root = in.tuple(in.sel(take, v, a), in.sel(take, j, i))
	c.Instructions = append(c.Instructions, in.out...)
	return c
}

// orderKey is an s32 per element of x whose signed order is the total
// order of x's values (reversed unless largest): a float's bits with
// those below the sign flipped where it is set (-NaN < -inf < ... < -0
// < +0 < ... < inf < NaN), an integer widened, unsigned ones offset.
func (b *expander) orderKey(x *hlo.Instruction, largest bool) *hlo.Instruction {
	t := x.Shape.Elem
	var k *hlo.Instruction
	switch {
	case t.IsFloat():
		k = b.flipNegatives(b.signedBits(x), t.Bits())
	case t.Kind() == hlo.KindUnsigned && t.Bits() == 32:
		k = b.bitcastConvert(b.binary(hlo.OpXor, x, b.constant(hlo.U32, 1<<31)), hlo.S32)
	default:
		k = b.convert(x, hlo.S32)
	}
	if !largest {
		k = b.inst(hlo.OpNot, k.Shape, k)
	}
	return k
}

// fromOrderKey is the values of type t whose orderKey (largest or not)
// is k.
func (b *expander) fromOrderKey(k *hlo.Instruction, t hlo.ElementType, largest bool) *hlo.Instruction {
	if !largest {
		k = b.inst(hlo.OpNot, k.Shape, k)
	}
	switch {
	case t.IsFloat():
		bits := b.flipNegatives(k, t.Bits())
		if t.Bits() < 32 {
			bits = b.convert(bits, signedOf(t.Bits()))
		}
		return b.bitcastConvert(bits, t)
	case t.Kind() == hlo.KindUnsigned && t.Bits() == 32:
		return b.binary(hlo.OpXor, b.bitcastConvert(k, hlo.U32), b.constant(hlo.U32, 1<<31))
	}
	return b.convert(k, t)
}

// flipNegatives flips the bits below the sign of s32 bits (a float's of
// width w, sign-extended) where the sign is set: negative floats then
// order as signed integers do, larger magnitudes lower. It is its own
// inverse (the sign stays).
func (b *expander) flipNegatives(bits *hlo.Instruction, w int) *hlo.Instruction {
	mask := b.binary(hlo.OpAnd, b.binary(hlo.OpShiftRightArithmetic, bits, b.constant(hlo.S32, 31)), b.constant(hlo.S32, 1<<(w-1)-1))
	return b.binary(hlo.OpXor, bits, mask)
}

// signedBits is float x's bits as a signed integer of their width,
// widened to s32 (the sign extended).
func (b *expander) signedBits(x *hlo.Instruction) *hlo.Instruction {
	return b.convert(b.bitcastConvert(x, signedOf(x.Shape.Elem.Bits())), hlo.S32)
}

// signedOf is the signed integer type of bits bits.
func signedOf(bits int) hlo.ElementType {
	switch bits {
	case 8:
		return hlo.S8
	case 16:
		return hlo.S16
	}
	return hlo.S32
}

// sortedFirst is the first k along dimension d of the arrays xs (of one
// shape) sorted together, stably, by cmp (a comparator of their 2n
// scalars). A long dimension is first cut into chunks (topKChunk)
// sorted on their own, of which the first k of each go on to the
// dimension's sort: the k first of the whole are among them, in the
// whole's order where they tie (chunks in order, each sort stable).
func (b *expander) sortedFirst(xs []*hlo.Instruction, d int, k int64, cmp *hlo.Computation) []*hlo.Instruction {
	dims := xs[0].Shape.Dims
	// A comparator with keys sorts only each slice's first k (a partial
	// sort: the four-way merges keep k of each group, sortKeep), which
	// reads the row once, chunks or not.
	if c := topKChunk(dims[d], k); c > 0 && !kgen.KeyedComparator(cmp, len(xs)) {
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
