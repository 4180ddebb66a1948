package kgen

import (
	"errors"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// sortValues loads every operand of sort in at element e, and the
// element's key after them where the comparator has one (sortKey).
func (k *kernelBuilder) sortValues(in *hlo.Instruction, binds []int, e spirv.ID) []val {
	vs := make([]val, len(in.Operands))
	for i, o := range in.Operands {
		vs[i] = k.load(binds[i], e, o.Shape.Elem)
	}
	if sk := k.sortKey(in); sk != nil {
		key, err := k.sortKeyValue(sk, vs[sk.operand])
		if err != nil {
			k.err = errors.Join(k.err, err)
		}
		vs = append(vs, key)
	}
	return vs
}

// sortKey is sort in's comparator as keys, or nil (sortKeyOf, once per
// sort).
func (k *kernelBuilder) sortKey(in *hlo.Instruction) *sortKey {
	if k.sortKeys == nil {
		k.sortKeys = map[*hlo.Instruction]*sortKey{}
	}
	sk, ok := k.sortKeys[in]
	if !ok {
		sk = sortKeyOf(in)
		k.sortKeys[in] = sk
	}
	return sk
}

// sortLessValues is sort in's comparator on two elements' values
// (sortValues): true where x goes before y.
func (k *kernelBuilder) sortLessValues(in *hlo.Instruction, x, y []val) (spirv.ID, error) {
	if n := len(in.Operands); k.sortKey(in) != nil {
		return k.boolOp(spirv.OpSLessThan, x[n].id, y[n].id), nil
	}
	args := make([]val, 2*len(in.Operands))
	for i := range in.Operands {
		args[2*i], args[2*i+1] = x[i], y[i]
	}
	r, err := k.emitReducer(in.Called[0], args)
	if err != nil {
		return 0, err
	}
	return r[0].id, nil
}

// A slice of at most SortChunk elements is sorted by one invocation
// (SortSliceKernel); a longer one over every element at once (vkjit's
// sorts before session 37 searched per element there): a first pass
// sorts blocks of SortBlockOf elements in registers (SortBlockKernel),
// then each merge pass doubles the sorted runs, an invocation merging a
// chunk of up to SortMergeChunk places (SortMergeKernel; a comparator
// with keys quadruples them, SortMerge4Kernel). The operands'
// values move along from pass to pass in scratch copies, a slice's
// elements contiguous.
//
// SortBlock: 8 elements take 28 comparator calls per block; 16 took
// 120, sorted the corpus's 1024 x 4096 bf16 sort 5-10% faster warm, and
// cost 0.07-0.25 s more in the driver's compile at the first run (two
// sorts' blocks in the corpus's top-k). A sort with keys (sortKey) on a
// device with 64-bit integers sorts SortKeyBlock by keyedNetwork:
// bench/workloads/sort_rows.hlo warm (vkjit bench --iterations 10)
// 93 ms at 8, 84 at 16, 76 at 32, 70 at 64, and its first run (vkjit
// run --stats, fresh caches: the driver's compile) 337, 414, 580 and
// 1244 ms. SortChunk: 128 places per invocation; that sort took 123 ms
// at 64, 105 at 128 and 101 at 256 (a chunk's boundary search costs
// more per place the smaller it is), and a GPU wants more invocations
// than fewer; CPU devices merge SortCPUChunk (SortMergeChunk).
const (
	SortBlock    int64 = 8
	SortKeyBlock int64 = 16
	SortChunk    int64 = 128
	SortCPUChunk int64 = 1024 // SortMergeChunk
)

// SortMergeChunk is the most places an invocation of a merge pass
// writes on target tg. A chunk's start is searched for: in a four-way
// pass about 24 probes for each of log2(2w) steps, 2.4 probes a place
// at 128 places, more than the merge's one read. CPU devices, which run
// few invocations at a time, take 1024: sort_rows with keys took 61-64
// ms at 128, 51-52 at 256, 46-58 at 512, 41-42 at 1024 and 39-42 at
// 4096, and with a plain LT (two-way passes) 80, 84, 78-81 and 69-72 at
// 128 to 1024 (vkjit bench --iterations 10, lavapipe 512 bits). A GPU
// keeps SortChunk, wanting the invocations.
func SortMergeChunk(tg Target) int64 {
	if tg.CPU {
		return SortCPUChunk
	}
	return SortChunk
}

// SortBlockOf is the block a long sort's first pass sorts in registers
// on target tg.
func SortBlockOf(in *hlo.Instruction, tg Target) int64 {
	if keyedBlocks(in, tg) {
		return SortKeyBlock
	}
	return SortBlock
}

// keyedBlocks reports whether sort in's blocks are sorted by
// keyedNetwork: a comparator with keys, a device with 64-bit integers.
func keyedBlocks(in *hlo.Instruction, tg Target) bool {
	return tg.Int64 && sortKeyOf(in) != nil
}

// SortPass says which pass of a sort a kernel is: the first reads the
// operands, the last writes the results, and the ones between read and
// write scratch copies of every operand.
type SortPass int

const (
	FirstSortPass SortPass = iota
	MiddleSortPass
	LastSortPass
	OnlySortPass // first and last: SortSliceKernel's
)

// SortBlockKernel generates a sort's first pass: an invocation sorts a
// block of block consecutive elements of a slice (the last block of a
// slice may be shorter) in registers by odd-even transposition, block
// (block - 1) / 2 exchanges of neighbours, and no memory but each
// element's read and write. (Ranking each element among its block
// takes as many comparator calls, sorted the corpus's 4M-element sort's
// blocks in 6.4 ms against 10.3, but places two elements at one rank
// where the comparator is not a strict weak order.) Bindings: the
// operands, then scratch copies; the dispatch has an invocation per
// block of each slice (SortChunks).
func SortBlockKernel(in *hlo.Instruction, env Env, block int64) (*Kernel, error) {
	k := env.builder(1)
	pass := FirstSortPass
	shape := in.Operands[0].Shape
	length := shape.Dims[in.A.Dimensions[0]]
	src, dst, err := k.sortPassBuffers(in, pass)
	if err != nil {
		return nil, err
	}
	blocks := SortChunks(length, block)
	wide := block%VectorWidth == 0 && k.sortWide(in, pass)
	return k.perElement(fmt.Sprintf("sort_block_%s", shape.Elem), func(e spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		slice := op(spirv.OpUDiv, e, cu(blocks))
		start := op(spirv.OpIMul, op(spirv.OpUMod, e, cu(blocks)), cu(block))
		srcAt, dstAt := k.sortPlaces(in, pass, slice)
		return k.sortBlockAt(in, block, length, start, src, srcAt, dst, dstAt, wide)
	})
}

// sortBlockAt sorts the block of block places of a slice of length
// elements from start (those past the slice's end left out) by
// sortNetwork: read from src, written to dst at the same places, as one
// u64vec4 an operand where wide (a whole octet of contiguous places).
func (k *kernelBuilder) sortBlockAt(in *hlo.Instruction, block, length int64, start spirv.ID, src []int, srcAt func(spirv.ID) spirv.ID, dst []int, dstAt func(spirv.ID) spirv.ID, wide bool) error {
	u32 := k.u32()
	xs := make([][]val, block)
	valid := make([]spirv.ID, block)
	places := make([]spirv.ID, block)
	for i := range block {
		places[i] = k.f.IAdd(u32, start, k.cu32(uint32(i)))
		valid[i] = k.boolOp(spirv.OpULessThan, places[i], k.cu32(uint32(length)))
		xs[i] = k.sortValues(in, src, srcAt(k.f.Ext(u32, spirv.GLSLUMin, places[i], k.cu32(uint32(length-1)))))
	}
	if keyedBlocks(in, k.tg) {
		k.keyedNetwork(xs, valid)
	} else if err := k.sortNetwork(in, xs, valid); err != nil {
		return err
	}
	if wide {
		// Octets, each operand's stored as one u64vec4 (as the merge
		// passes' are): the slice is whole octets, so an octet is valid
		// or past the slice's end as a whole (a block of 16 may end
		// half past it).
		for o := int64(0); o < block; o += VectorWidth {
			err := k.f.If(valid[o], func() error {
				at := k.f.UDiv(u32, dstAt(places[o]), k.cu32(VectorWidth))
				for n := range dst {
					octet := make([]spirv.ID, VectorWidth)
					for i := range octet {
						octet[i] = xs[o+int64(i)][n].id
					}
					k.storeWide(dst[n], at, octet)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	for i := range block {
		err := k.f.If(valid[i], func() error {
			for n := range dst {
				k.store(dst[n], dstAt(places[i]), xs[i][n])
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sortNetwork sorts the elements xs (each every operand's value) in
// registers by odd-even transposition: len(xs) rounds of exchanges of
// neighbours, the right one moving left only where strictly less
// (stable), and elements not valid (past the slice's end, a suffix)
// never: a permutation whatever the comparator.
func (k *kernelBuilder) sortNetwork(in *hlo.Instruction, xs [][]val, valid []spirv.ID) error {
	for r := range xs {
		for i := r % 2; i+1 < len(xs); i += 2 {
			less, err := k.sortLessValues(in, xs[i+1], xs[i])
			if err != nil {
				return err
			}
			swap := k.boolOp(spirv.OpLogicalAnd, less, valid[i+1])
			for m := range xs[i] {
				xs[i][m], xs[i+1][m] = k.sel(swap, xs[i+1][m], xs[i][m]), k.sel(swap, xs[i][m], xs[i+1][m])
			}
		}
	}
	return nil
}

// keyedNetwork sorts the elements xs of a sort with keys (sortKey: each
// element's values, its key last) by Batcher's odd-even merge sort
// (Knuth 5.3.4), len(xs) a power of two: compare-exchanges of elements
// ordered by key, then by their place in the block, so that no two are
// equal and the network's order is the stable one. Elements not valid
// (past the slice's end, a suffix) take the largest key: after every
// valid one, the largest of which are before them in place. 32 elements
// take 191 exchanges, against 496 of odd-even transposition (sortNetwork,
// which needs no keys: it moves an element only past a neighbour that
// is strictly less, a permutation whatever the comparator).
func (k *kernelBuilder) keyedNetwork(xs [][]val, valid []spirv.ID) {
	u32, u64 := k.u32(), k.b.TypeInt(64, false)
	n := len(xs)
	key := len(xs[0]) - 1
	// Each element's key and place as one u64: the key offset into the
	// unsigned range above, the place below.
	order := make([]spirv.ID, n)
	for i := range xs {
		kv := k.f.Select(u32, valid[i], xs[i][key].id, k.cu32(1<<31-1))
		hi := k.f.Apply(spirv.OpBitwiseXor, u32, kv, k.cu32(1<<31))
		pair := k.f.CompositeConstruct(k.b.TypeVector(u32, 2), k.cu32(uint32(i)), hi)
		order[i] = k.f.Bitcast(u64, pair)
	}
	exchange := func(a, b int) {
		swap := k.boolOp(spirv.OpULessThan, order[b], order[a])
		for m := range key {
			xs[a][m], xs[b][m] = k.sel(swap, xs[b][m], xs[a][m]), k.sel(swap, xs[a][m], xs[b][m])
		}
		order[a], order[b] = k.f.Select(u64, swap, order[b], order[a]), k.f.Select(u64, swap, order[a], order[b])
	}
	for p := 1; p < n; p *= 2 {
		for d := p; d >= 1; d /= 2 {
			for j := d % p; j+d < n; j += 2 * d {
				for i := 0; i < min(d, n-j-d); i++ {
					if (i+j)/(2*p) == (i+j+d)/(2*p) {
						exchange(i+j, i+j+d)
					}
				}
			}
		}
	}
}

// SortSliceKernel generates a sort of slices of at most SortChunk
// elements, an invocation per slice, all in one dispatch: blocks of
// SortBlock by sortNetwork, then the merge passes, each over the slice's
// places in order from two heads in registers, ping-ponging between a
// scratch copy and the results so that the last pass writes the
// results. A block pass and merge passes (SortBlockKernel,
// SortMergeKernel) took two to five dispatches where one invocation
// did all before them (f32[1,100] 0.115 -> 0.306 ms); sorting longer
// slices this way, a span of 128 an invocation, was 5-23% slower than
// those dispatches (fewer invocations, a branch a place). Bindings: the
// operands, then buffers 0 and 1 of the ping-pong (SortSlicePasses
// passes; the results are buffer passes % 2, the scratch copy the other).
func SortSliceKernel(in *hlo.Instruction, env Env) (*Kernel, error) {
	k := env.builder(1)
	shape := in.Operands[0].Shape
	length := shape.Dims[in.A.Dimensions[0]]
	passes := SortSlicePasses(length)
	src, err := k.bindOperands(in)
	if err != nil {
		return nil, err
	}
	var bufs [2][]int
	for j := range bufs {
		if j == passes%2 {
			bufs[j], err = k.bindResults(in)
		} else {
			bufs[j], err = k.sortScratch(in, "run", false)
		}
		if err != nil {
			return nil, err
		}
	}
	const block = SortBlock
	return k.perElement(fmt.Sprintf("sort_slice_%s", shape.Elem), func(slice spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		umin := func(a, b spirv.ID) spirv.ID { return k.f.Ext(u32, spirv.GLSLUMin, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		srcAt, elemAt := k.sortPlaces(in, OnlySortPass, slice)
		_, runAt := k.sortPlaces(in, MiddleSortPass, slice)
		at := func(j int) func(i spirv.ID) spirv.ID { // buffer j's place of rank i
			if j == passes%2 {
				return elemAt
			}
			return runAt
		}
		// Blocks of 8.
		err := k.loop(cu(SortChunks(length, block)), func(b spirv.ID) error {
			return k.sortBlockAt(in, block, length, op(spirv.OpIMul, b, cu(block)), src, srcAt, bufs[0], at(0), false)
		})
		if err != nil {
			return err
		}
		// The merge passes, each over the slice's places in order: a
		// pair of runs starts every 2w places, its heads read there.
		ptr := k.b.TypePointer(spirv.StorageFunction, u32)
		midv, hiv := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr)
		a, b := k.runHead(in), k.runHead(in)
		for p := range passes {
			from, to := bufs[p%2], bufs[(p+1)%2]
			fromAt, toAt := at(p%2), at((p+1)%2)
			values := func(i spirv.ID) []val { return k.sortValues(in, from, fromAt(umin(i, cu(length-1)))) }
			w := block << p
			err := k.loop(cu(length), func(q spirv.ID) error {
				lo := op(spirv.OpIMul, op(spirv.OpUDiv, q, cu(2*w)), cu(2*w))
				err := k.f.If(k.boolOp(spirv.OpIEqual, q, lo), func() error {
					mid := umin(op(spirv.OpIAdd, lo, cu(w)), cu(length))
					k.f.Store(midv, mid)
					k.f.Store(hiv, umin(op(spirv.OpIAdd, lo, cu(2*w)), cu(length)))
					k.moveHead(a, lo, values)
					k.moveHead(b, mid, values)
					return nil
				})
				if err != nil {
					return err
				}
				taken, err := k.mergeStep(in, a, b, func() (spirv.ID, spirv.ID) { return k.f.Load(u32, midv), k.f.Load(u32, hiv) }, values)
				if err != nil {
					return err
				}
				k.storeValues(to, toAt(q), taken)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// SortSlicePasses is how many merge passes SortSliceKernel runs on a
// slice of length elements: one per doubling of the runs from blocks of
// SortBlock.
func SortSlicePasses(length int64) int {
	p := 0
	for w := SortBlock; w < length; w *= 2 {
		p++
	}
	return p
}

// SortMergeKernel generates a merge pass of a sort as merge path does
// (Green, McColl and Bader, 2012): push constant 1 is the width w of the
// sorted runs, 3 the chunk of places an invocation writes (a power of
// two at most 2w, so that a chunk lies in one pair of runs), 2 the
// levels of the tree of a pair's chunk boundaries (log2(2w / chunk));
// an invocation finds how many of its chunk's places the left run fills
// by binary searches down that tree, then merges the chunk one place at
// a time, a comparison of the two runs' next values, kept in registers,
// and a read of a value to come. Stable: on ties the left run's element
// goes first. A search per element, before session 37, read log2(2w)
// probes per element and pass; this reads each element once. Bindings:
// scratch copies, then scratch copies or the results; the dispatch has
// an invocation per chunk of each slice (SortChunks).
func SortMergeKernel(in *hlo.Instruction, env Env, pass SortPass) (*Kernel, error) {
	k := env.builder(4)
	src, dst, err := k.sortPassBuffers(in, pass)
	if err != nil {
		return nil, err
	}
	shape := in.Operands[0].Shape
	wide := k.sortWide(in, pass)
	return k.perElement(fmt.Sprintf("sort_merge_%s", shape.Elem), func(e spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		m, err := k.mergeChunk(in, pass, src, e)
		if err != nil {
			return err
		}
		unit := int64(1)
		if wide {
			unit = VectorWidth
		}
		return k.loop(op(spirv.OpUDiv, m.places, cu(unit)), func(g spirv.ID) error {
			return k.mergeUnit(dst, m.dstAt, m.d, g, wide, func() ([]val, error) {
				return k.mergeStep(in, m.a, m.b, m.ends, m.values)
			})
		})
	})
}

// chunkMerge is one chunk's merge in a merge pass: its runs' heads
// and ends, its first place d and its places, and where it reads and
// writes.
type chunkMerge struct {
	a, b      runHead
	ends      func() (spirv.ID, spirv.ID)
	values    func(spirv.ID) []val
	dstAt     func(spirv.ID) spirv.ID
	d, places spirv.ID
}

// mergeChunk sets up the merge of chunk e of a merge pass (numbered over
// the slices): the searches for where its runs' parts start and end,
// and its cursors and heads there.
func (k *kernelBuilder) mergeChunk(in *hlo.Instruction, pass SortPass, src []int, e spirv.ID) (*chunkMerge, error) {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	sel := func(c, a, b spirv.ID) spirv.ID { return k.f.Select(u32, c, a, b) }
	umin := func(a, b spirv.ID) spirv.ID { return k.f.Ext(u32, spirv.GLSLUMin, a, b) }
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	shape := in.Operands[0].Shape
	length := shape.Dims[in.A.Dimensions[0]]
	w, chunk := k.push(1), k.push(3)
	chunks := op(spirv.OpUDiv, op(spirv.OpIAdd, cu(length-1), chunk), chunk)
	slice := op(spirv.OpUDiv, e, chunks)
	d := op(spirv.OpIMul, op(spirv.OpUMod, e, chunks), chunk) // the chunk's first place
	srcAt, dstAt := k.sortPlaces(in, pass, slice)
	// Every read is clamped into the slice: a search step past its
	// end, or a run's next element past the run, reads a value the
	// choice then ignores.
	values := func(i spirv.ID) []val { return k.sortValues(in, src, srcAt(umin(i, cu(length-1)))) }
	w2 := op(spirv.OpIAdd, w, w)
	lo := op(spirv.OpIMul, op(spirv.OpUDiv, d, w2), w2)
	mid := umin(op(spirv.OpIAdd, lo, w), cu(length))
	hi := umin(op(spirv.OpIAdd, lo, w2), cu(length))
	diag := op(spirv.OpISub, d, lo)
	lenA := op(spirv.OpISub, mid, lo)
	pairLen := op(spirv.OpISub, hi, lo)
	ptr := k.b.TypePointer(spirv.StorageFunction, u32)
	v := func() spirv.ID { return k.f.LocalVariable(ptr) }
	// The chunk's first place has i of the pair's places before it
	// from the left run, its end iEnd: how many of the first t
	// chunks' places the left run fills, searched for over the
	// pair's chunk boundaries as a binary tree, each boundary's
	// split only between its two ancestors' (push constant 2
	// levels). That gives the splits one search each would where the
	// comparator is a strict weak order, and splits that never
	// decrease, so that the chunks' ranges tile both runs, where it
	// is not (floats compared by LT with NaNs among them): a
	// permutation either way, as XLA's sorts give. The descent
	// towards the chunk's end passes the boundary at its start
	// (that boundary is the midpoint of an interval holding both).
	// The search's bounds; the tree's interval of boundaries, their
	// splits and places; the chunk's start.
	bv, ev := v(), v()
	lv, hv, slv, shv, dlv, dhv := v(), v(), v(), v(), v(), v()
	iv0 := v()
	load := func(v spirv.ID) spirv.ID { return k.f.Load(u32, v) }
	t0 := op(spirv.OpUDiv, diag, chunk)
	t := op(spirv.OpIAdd, t0, cu(1))
	k.f.Store(lv, cu(0))
	k.f.Store(hv, op(spirv.OpUDiv, w2, chunk))
	k.f.Store(slv, cu(0))
	k.f.Store(shv, lenA)
	k.f.Store(dlv, cu(0))
	k.f.Store(dhv, pairLen)
	k.f.Store(iv0, cu(0)) // the first chunk's start
	err := k.loop(k.push(2), func(spirv.ID) error {
		bl, bh, sl, sh, dl, dh := load(lv), load(hv), load(slv), load(shv), load(dlv), load(dhv)
		bm := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, bl, bh), cu(1))
		dm := umin(op(spirv.OpIMul, bm, chunk), pairLen)
		// Between the ancestors: sl <= s <= sh, and the right run
		// fills between dl - sl and dh - sh as well.
		over := op(spirv.OpIAdd, dm, sh)
		k.f.Store(bv, k.f.Ext(u32, spirv.GLSLUMax, sl, sel(k.boolOp(spirv.OpUGreaterThan, over, dh), op(spirv.OpISub, over, dh), cu(0))))
		k.f.Store(ev, umin(sh, op(spirv.OpIAdd, op(spirv.OpISub, dm, dl), sl)))
		// The least s whose left element does not go before the
		// right one at dm - 1 - s (stability: the left goes first
		// unless the right is strictly less).
		err := k.f.While(func() spirv.ID {
			return k.boolOp(spirv.OpULessThan, load(bv), load(ev))
		}, func() error {
			b, en := load(bv), load(ev)
			m := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, b, en), cu(1))
			av := values(op(spirv.OpIAdd, lo, m))
			yv := values(op(spirv.OpISub, op(spirv.OpIAdd, mid, dm), op(spirv.OpIAdd, m, cu(1))))
			rLess, err := k.sortLessValues(in, yv, av)
			if err != nil {
				return err
			}
			k.f.Store(bv, sel(rLess, b, op(spirv.OpIAdd, m, cu(1))))
			k.f.Store(ev, sel(rLess, m, en))
			return nil
		}, func() {})
		if err != nil {
			return err
		}
		sm := load(bv)
		k.f.Store(iv0, sel(k.boolOp(spirv.OpIEqual, bm, t0), sm, load(iv0)))
		left := k.boolOp(spirv.OpULessThanEqual, t, bm)
		k.f.Store(hv, sel(left, bm, bh))
		k.f.Store(shv, sel(left, sm, sh))
		k.f.Store(dhv, sel(left, dm, dh))
		k.f.Store(lv, sel(left, bl, bm))
		k.f.Store(slv, sel(left, sl, sm))
		k.f.Store(dlv, sel(left, dl, dm))
		return nil
	})
	if err != nil {
		return nil, err
	}
	i := load(iv0)
	iEnd := sel(k.boolOp(spirv.OpIEqual, t, load(lv)), load(slv), load(shv))
	aEnd := op(spirv.OpIAdd, lo, iEnd)
	bEnd := op(spirv.OpISub, op(spirv.OpIAdd, mid, umin(op(spirv.OpIAdd, diag, chunk), pairLen)), iEnd)
	// The merge: both runs' heads, at the chunk's start.
	a, b := k.runHead(in), k.runHead(in)
	k.moveHead(a, op(spirv.OpIAdd, lo, i), values)
	k.moveHead(b, op(spirv.OpISub, op(spirv.OpIAdd, mid, diag), i), values)
	return &chunkMerge{
		a:      a,
		b:      b,
		ends:   func() (spirv.ID, spirv.ID) { return aEnd, bEnd },
		values: values,
		dstAt:  dstAt,
		d:      d,
		places: umin(chunk, op(spirv.OpISub, hi, d)),
	}, nil
}

// runHead is a merge's cursor into one of its runs (cur, a function
// variable) and, a variable per value (sortValues': the operands', then
// a key's), the values at the cursor (v) and after it (v1). Holding the
// next values makes a step's choice wait on registers only: the read a
// choice asks for is the value after the next, needed a step later, so
// that llvmpipe's texel fetch (a call of 16 scalar loads) overlaps the
// next comparison instead of preceding it.
type runHead struct {
	cur   spirv.ID
	v, v1 []spirv.ID
	types []hlo.ElementType
}

// runHead declares the variables of a run's head in a merge of sort in
// (moveHead places it).
func (k *kernelBuilder) runHead(in *hlo.Instruction) runHead {
	h := runHead{cur: k.f.LocalVariable(k.b.TypePointer(spirv.StorageFunction, k.u32()))}
	for _, o := range in.Operands {
		h.types = append(h.types, o.Shape.Elem)
	}
	if k.sortKey(in) != nil {
		h.types = append(h.types, hlo.U32)
	}
	for _, et := range h.types {
		t := k.b.TypePointer(spirv.StorageFunction, k.scalarType(et))
		h.v = append(h.v, k.f.LocalVariable(t))
		h.v1 = append(h.v1, k.f.LocalVariable(t))
	}
	return h
}

// moveHead puts h's cursor at i and reads the values there and after
// (values).
func (k *kernelBuilder) moveHead(h runHead, i spirv.ID, values func(spirv.ID) []val) {
	k.f.Store(h.cur, i)
	k.setVars(h.v, values(i))
	k.setVars(h.v1, values(k.f.IAdd(k.u32(), i, k.cu32(1))))
}

// held is h's cursor and its values at and after it.
func (k *kernelBuilder) held(h runHead) (cur spirv.ID, v, v1 []val) {
	load := func(vars []spirv.ID) []val {
		vs := make([]val, len(vars))
		for n, id := range vars {
			vs[n] = val{k.f.Load(k.scalarType(h.types[n]), id), h.types[n]}
		}
		return vs
	}
	return k.f.Load(k.u32(), h.cur), load(h.v), load(h.v1)
}

// advanceHead moves h's cursor (at cur, values v and v1) on by one
// where take: v1 becomes its value and after (the value read at cur+2)
// the next.
func (k *kernelBuilder) advanceHead(h runHead, take, cur spirv.ID, v, v1, after []val) {
	k.f.Store(h.cur, k.f.Select(k.u32(), take, k.f.IAdd(k.u32(), cur, k.cu32(1)), cur))
	for n := range h.v {
		k.f.Store(h.v[n], k.sel(take, v1[n], v[n]).id)
		k.f.Store(h.v1[n], k.sel(take, after[n], v1[n]).id)
	}
}

// setVars stores each value in its function variable.
func (k *kernelBuilder) setVars(vars []spirv.ID, vs []val) {
	for n, id := range vars {
		k.f.Store(id, vs[n].id)
	}
}

// mergeStep takes the next value of a merge of runs a and b: a's head
// unless b's is strictly less or a has ended (its cursor at ends()'s
// first, b's at its second), then moves that run's cursor on (values
// reads the value after its next). It returns the value taken, every
// operand's.
func (k *kernelBuilder) mergeStep(in *hlo.Instruction, a, b runHead, ends func() (spirv.ID, spirv.ID), values func(spirv.ID) []val) ([]val, error) {
	ia, av, av1 := k.held(a)
	ib, bv, bv1 := k.held(b)
	rLess, err := k.sortLessValues(in, bv, av)
	if err != nil {
		return nil, err
	}
	aEnd, bEnd := ends()
	hasA := k.boolOp(spirv.OpULessThan, ia, aEnd)
	hasB := k.boolOp(spirv.OpULessThan, ib, bEnd)
	takeA := k.boolOp(spirv.OpLogicalAnd, hasA, k.boolOp(spirv.OpLogicalOr, k.boolOp(spirv.OpLogicalNot, hasB), k.boolOp(spirv.OpLogicalNot, rLess)))
	taken := make([]val, len(in.Operands))
	for n := range taken {
		taken[n] = k.sel(takeA, av[n], bv[n])
	}
	u32 := k.u32()
	after := values(k.f.IAdd(u32, k.f.Select(u32, takeA, ia, ib), k.cu32(2)))
	k.advanceHead(a, takeA, ia, av, av1, after)
	k.advanceHead(b, k.boolOp(spirv.OpLogicalNot, takeA), ib, bv, bv1, after)
	return taken, nil
}

// mergeUnit merges unit g of a chunk from place d by step and stores it
// in dst (dstAt maps a place to its element): where wide an octet of
// places, each operand's one u64vec4 (llvmpipe stores a value in a
// loop over the lanes: this halves the stores' cost; chunks and slices
// are then whole octets), else one place.
func (k *kernelBuilder) mergeUnit(dst []int, dstAt func(spirv.ID) spirv.ID, d, g spirv.ID, wide bool, step func() ([]val, error)) error {
	u32 := k.u32()
	unit := int64(1)
	if wide {
		unit = VectorWidth
	}
	taken := make([][]val, unit)
	for i := range taken {
		var err error
		if taken[i], err = step(); err != nil {
			return err
		}
	}
	at := dstAt(k.f.IAdd(u32, d, k.f.IMul(u32, g, k.cu32(uint32(unit)))))
	if !wide {
		k.storeValues(dst, at, taken[0])
		return nil
	}
	for n := range dst {
		octet := make([]spirv.ID, unit)
		for i := range octet {
			octet[i] = taken[i][n].id
		}
		k.storeWide(dst[n], k.f.UDiv(u32, at, k.cu32(VectorWidth)), octet)
	}
	return nil
}

// storeValues stores every operand's value of vs at place at of dst.
func (k *kernelBuilder) storeValues(dst []int, at spirv.ID, vs []val) {
	for n := range dst {
		k.store(dst[n], at, vs[n])
	}
}

// sortWide reports whether pass of sort in stores octets of places as
// u64vec4s (storeWide): every operand 32 bits wide on a target with wide
// access, slices of whole octets (SortBlock places), and the places of
// the pass's destination contiguous: scratch copies always, the
// results where the sorted dimension is the minor one.
func (k *kernelBuilder) sortWide(in *hlo.Instruction, pass SortPass) bool {
	shape := in.Operands[0].Shape
	d := in.A.Dimensions[0]
	if !k.tg.WideAccess || shape.Dims[d]%VectorWidth != 0 {
		return false
	}
	if (pass == LastSortPass || pass == OnlySortPass) && hlo.RowMajorStrides(shape.Dims)[d] != 1 {
		return false
	}
	for _, o := range in.Operands {
		if t := o.Shape.Elem; t != hlo.F32 && t != hlo.S32 && t != hlo.U32 {
			return false
		}
	}
	return true
}

// SortChunks is the number of chunks (or blocks) of chunk places in a
// slice of length elements: invocations per slice.
func SortChunks(length, chunk int64) int64 { return (length + chunk - 1) / chunk }

// sortPassBuffers binds a sort pass's sources and destinations: the
// operands or scratch copies, then scratch copies or the results.
func (k *kernelBuilder) sortPassBuffers(in *hlo.Instruction, pass SortPass) (src, dst []int, err error) {
	if pass == FirstSortPass || pass == OnlySortPass {
		src, err = k.bindOperands(in)
	} else {
		src, err = k.sortScratch(in, "src", true)
	}
	if err != nil {
		return nil, nil, err
	}
	if pass == LastSortPass || pass == OnlySortPass {
		dst, err = k.bindResults(in)
	} else {
		dst, err = k.sortScratch(in, "dst", false)
	}
	return src, dst, err
}

// sortScratch binds a scratch copy of every operand of sort in, named
// name0, name1, ...
func (k *kernelBuilder) sortScratch(in *hlo.Instruction, name string, readonly bool) ([]int, error) {
	count := in.Operands[0].Shape.NumElements()
	var bs []int
	for i, o := range in.Operands {
		b, err := k.addBuffer(o.Shape.Elem, fmt.Sprintf("%s%d", name, i), readonly, count)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// sortPlaces maps rank i of a slice to its element in pass's sources
// and destinations: the operands and results in their own layout,
// scratch copies with a slice's elements contiguous.
func (k *kernelBuilder) sortPlaces(in *hlo.Instruction, pass SortPass, slice spirv.ID) (srcAt, dstAt func(i spirv.ID) spirv.ID) {
	shape := in.Operands[0].Shape
	d := in.A.Dimensions[0]
	elem := sliceElem(k, shape, d, slice)
	sbase := k.f.IMul(k.u32(), slice, k.cu32(uint32(shape.Dims[d])))
	at := func(operands bool) func(i spirv.ID) spirv.ID {
		if operands {
			return elem
		}
		return func(i spirv.ID) spirv.ID { return k.f.IAdd(k.u32(), sbase, i) }
	}
	return at(pass == FirstSortPass || pass == OnlySortPass), at(pass == LastSortPass || pass == OnlySortPass)
}

// sliceElem returns the linear index of position j in the given slice
// (slices numbered row-major over the other dimensions) along dimension d.
func sliceElem(k *kernelBuilder, shape hlo.Shape, d int64, slice spirv.ID) func(j spirv.ID) spirv.ID {
	u32 := k.u32()
	outer := append([]int64{}, shape.Dims...)
	outer[d] = 1
	base := k.ravel(k.unravel(slice, outer), shape.Dims)
	stride := hlo.RowMajorStrides(shape.Dims)[d]
	return func(j spirv.ID) spirv.ID {
		return k.f.IAdd(u32, base, k.f.IMul(u32, j, k.cu32(uint32(stride))))
	}
}
