package kgen

import (
	"errors"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// A sort with keys (sortKey) merges four runs a pass, not two: half the
// passes, each reading and writing every element once as a two-way pass
// does, while the choice of the next element is a few more integer
// comparisons in registers. Keys make the merge's order a total one,
// (key, run, place), the stable sort's, so that where a chunk's four
// runs start is a search in that order: the two-way merges of runs 0
// and 1 (X) and of runs 2 and 3 (Y) are searched for how many of X's
// elements the chunk's first place follows, each probe of X a search
// of runs 0 and 1 itself, then X's and Y's counts are split between
// their runs. A comparator with no keys keeps the two-way passes, whose
// searches stay a permutation where it is no strict weak order.

// SortMerge4Kernel generates a four-way merge pass of a sort with keys
// of which only the first keep places of each slice are read (the
// slice's length where all are): push constant 1 is the width w of the
// sorted runs, 2 the chunk of places an invocation writes (a power of
// two at most 4w). Each run's first keep elements are the only ones
// whose places matter, so a group of four runs merges those and writes
// its first keep places (a partial sort: a top-k's candidates, 4w
// places shrinking to keep each pass). Bindings as SortMergeKernel's;
// the dispatch has an invocation per chunk of each group of each slice
// (SortMerge4Invocations).
func SortMerge4Kernel(in *hlo.Instruction, env Env, pass SortPass, keep int64) (*Kernel, error) {
	k := env.builder(3)
	sk := sortKeyOf(in)
	if sk == nil {
		return nil, fmt.Errorf("kgen: a four-way merge of %s, whose comparator has no keys", in.Name)
	}
	src, dst, err := k.sortPassBuffers(in, pass)
	if err != nil {
		return nil, err
	}
	shape := in.Operands[0].Shape
	length := shape.Dims[in.A.Dimensions[0]]
	keep = min(keep, length)
	wide := keep%VectorWidth == 0 && k.sortWide(in, pass)
	return k.perElement(fmt.Sprintf("sort_merge4_%s", shape.Elem), func(e spirv.ID) error {
		u32 := k.u32()
		op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
		umin := func(a, b spirv.ID) spirv.ID { return k.f.Ext(u32, spirv.GLSLUMin, a, b) }
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		w, chunk := k.push(1), k.push(2)
		w4 := op(spirv.OpIMul, w, cu(4))
		ceil := func(a, b spirv.ID) spirv.ID {
			return op(spirv.OpUDiv, op(spirv.OpIAdd, a, op(spirv.OpISub, b, cu(1))), b)
		}
		groups := ceil(cu(length), w4)
		chunks := ceil(umin(w4, cu(keep)), chunk) // a group's
		slice := op(spirv.OpUDiv, e, op(spirv.OpIMul, groups, chunks))
		rest := op(spirv.OpUMod, e, op(spirv.OpIMul, groups, chunks))
		g0 := op(spirv.OpIMul, op(spirv.OpUDiv, rest, chunks), w4)
		rank := op(spirv.OpIMul, op(spirv.OpUMod, rest, chunks), chunk) // the chunk's first place in its group
		d := op(spirv.OpIAdd, g0, rank)
		srcAt, dstAt := k.sortPlaces(in, pass, slice)
		// Reads are clamped into the slice: a probe or a run's next
		// element past its end reads a value the choices ignore.
		values := func(i spirv.ID) []val { return k.sortValues(in, src, srcAt(umin(i, cu(length-1)))) }
		keyAt := func(i spirv.ID) spirv.ID { return k.sortKeyAt(in, sk, src, srcAt(umin(i, cu(length-1)))) }
		var bounds [5]spirv.ID // where the runs start, and the group's end
		for r := range bounds {
			bounds[r] = umin(op(spirv.OpIAdd, g0, op(spirv.OpIMul, w, cu(int64(r)))), cu(length))
		}
		// Each run's elements: its first keep.
		var ends [4]spirv.ID
		for r := range ends {
			ends[r] = umin(op(spirv.OpIAdd, bounds[r], cu(keep)), bounds[r+1])
		}
		run := func(r int) mergeRun { return mergeRun{bounds[r], op(spirv.OpISub, ends[r], bounds[r])} }
		x, y := [2]mergeRun{run(0), run(1)}, [2]mergeRun{run(2), run(3)}
		lenX := op(spirv.OpIAdd, x[0].n, x[1].n)
		lenY := op(spirv.OpIAdd, y[0].n, y[1].n)
		// The group's first keep places of the merge of those.
		merged := umin(op(spirv.OpIAdd, lenX, lenY), cu(keep))
		// How many of X's elements go before the chunk: the least s
		// whose X element s does not go before Y's element rank-1-s
		// (X's first on equal keys).
		s, err := k.coRank(rank, lenX, lenY, func(m spirv.ID) spirv.ID { return k.mergedKey(x, m, keyAt) },
			func(m spirv.ID) spirv.ID { return k.mergedKey(y, m, keyAt) })
		if err != nil {
			return err
		}
		var starts [4]spirv.ID
		for h, pair := range [2][2]mergeRun{x, y} {
			i := s
			if h == 1 {
				i = op(spirv.OpISub, rank, s)
			}
			a, err := k.pairCoRank(pair, i, keyAt)
			if err != nil {
				return err
			}
			starts[2*h], starts[2*h+1] = op(spirv.OpIAdd, pair[0].start, a), op(spirv.OpIAdd, pair[1].start, op(spirv.OpISub, i, a))
		}
		var heads [4]runHead
		for r := range heads {
			heads[r] = k.runHead(in)
			k.moveHead(heads[r], starts[r], values)
		}
		unit := int64(1)
		if wide {
			unit = VectorWidth
		}
		// A group's last chunks may hold none of its first keep places.
		places := k.f.Select(u32, k.boolOp(spirv.OpULessThan, rank, merged), umin(chunk, op(spirv.OpISub, merged, rank)), cu(0))
		return k.loop(op(spirv.OpUDiv, places, cu(unit)), func(g spirv.ID) error {
			return k.mergeUnit(dst, dstAt, d, g, wide, func() ([]val, error) {
				return k.merge4Step(in, heads, ends, values), nil
			})
		})
	})
}

// SortMerge4Invocations is the invocations of a four-way merge pass
// (SortMerge4Kernel) over slices of length elements, of which the first
// keep are read, runs of width w and chunks of chunk places.
func SortMerge4Invocations(slices, length, keep, w, chunk int64) int64 {
	return slices * SortChunks(length, 4*w) * SortChunks(min(4*w, keep, length), chunk)
}

// mergeRun is a sorted run of a slice: its first place and length.
type mergeRun struct{ start, n spirv.ID }

// coRank is the least s in [max(0, rank-lenB), min(rank, lenA)] such
// that A's element s does not go before B's element rank-1-s (keys
// keyA and keyB; equal keys put A's first): how many of A's elements
// the stable merge of A and B places before rank.
func (k *kernelBuilder) coRank(rank, lenA, lenB spirv.ID, keyA, keyB func(spirv.ID) spirv.ID) (spirv.ID, error) {
	u32 := k.u32()
	op := func(o spirv.Op, a, b spirv.ID) spirv.ID { return k.f.Apply(o, u32, a, b) }
	ptr := k.b.TypePointer(spirv.StorageFunction, u32)
	lo, hi := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr)
	over := k.boolOp(spirv.OpUGreaterThan, rank, lenB)
	k.f.Store(lo, k.f.Select(u32, over, op(spirv.OpISub, rank, lenB), k.cu32(0)))
	k.f.Store(hi, k.f.Ext(u32, spirv.GLSLUMin, rank, lenA))
	err := k.f.While(func() spirv.ID {
		return k.boolOp(spirv.OpULessThan, k.f.Load(u32, lo), k.f.Load(u32, hi))
	}, func() error {
		l, h := k.f.Load(u32, lo), k.f.Load(u32, hi)
		m := op(spirv.OpShiftRightLogical, op(spirv.OpIAdd, l, h), k.cu32(1))
		// A's m goes before B's rank-1-m: A gives more than m.
		before := k.boolOp(spirv.OpSLessThanEqual, keyA(m), keyB(op(spirv.OpISub, op(spirv.OpISub, rank, m), k.cu32(1))))
		k.f.Store(lo, k.f.Select(u32, before, op(spirv.OpIAdd, m, k.cu32(1)), l))
		k.f.Store(hi, k.f.Select(u32, before, h, m))
		return nil
	}, func() {})
	if err != nil {
		return 0, err
	}
	return k.f.Load(u32, lo), nil
}

// pairCoRank is how many of pair[0]'s elements the stable merge of the
// pair places before rank i.
func (k *kernelBuilder) pairCoRank(pair [2]mergeRun, i spirv.ID, keyAt func(spirv.ID) spirv.ID) (spirv.ID, error) {
	u32 := k.u32()
	at := func(r mergeRun) func(spirv.ID) spirv.ID {
		return func(m spirv.ID) spirv.ID { return keyAt(k.f.IAdd(u32, r.start, m)) }
	}
	return k.coRank(i, pair[0].n, pair[1].n, at(pair[0]), at(pair[1]))
}

// mergedKey is the key of element m of the stable merge of a pair of
// runs: the lesser of the two runs' next keys after pairCoRank's split
// at m (of equal keys either: they are one key).
func (k *kernelBuilder) mergedKey(pair [2]mergeRun, m spirv.ID, keyAt func(spirv.ID) spirv.ID) spirv.ID {
	u32 := k.u32()
	a, err := k.pairCoRank(pair, m, keyAt)
	if err != nil {
		k.err = errors.Join(k.err, err)
		return k.cu32(0)
	}
	b := k.f.ISub(u32, m, a)
	ka, kb := keyAt(k.f.IAdd(u32, pair[0].start, a)), keyAt(k.f.IAdd(u32, pair[1].start, b))
	hasA, hasB := k.boolOp(spirv.OpULessThan, a, pair[0].n), k.boolOp(spirv.OpULessThan, b, pair[1].n)
	return k.f.Select(u32, hasA, k.f.Select(u32, hasB, k.f.Ext(u32, spirv.GLSLSMin, ka, kb), ka), kb)
}

// merge4Step takes the next element of a four-way merge, each run's
// head (cursor, value and next value) in registers and its end at
// ends[r]: the first of the heads by (key, run), which moves that run's
// cursor on (values reads the value after its next). It returns the
// element's values, every operand's.
func (k *kernelBuilder) merge4Step(in *hlo.Instruction, heads [4]runHead, ends [4]spirv.ID, values func(spirv.ID) []val) []val {
	u32 := k.u32()
	n := len(in.Operands)
	var cur, has [4]spirv.ID
	var head, next [4][]val
	for r, h := range heads {
		cur[r], head[r], next[r] = k.held(h)
		has[r] = k.boolOp(spirv.OpULessThan, cur[r], ends[r])
	}
	not := func(b spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalNot, b) }
	and := func(a, b spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalAnd, a, b) }
	or := func(a, b spirv.ID) spirv.ID { return k.boolOp(spirv.OpLogicalOr, a, b) }
	// second reports that run b's head goes first of runs a and b (a
	// before b): a is done, or b is not and its key is less.
	second := func(ka, kb, hasA, hasB spirv.ID) spirv.ID {
		return or(not(hasA), and(hasB, k.boolOp(spirv.OpSLessThan, kb, ka)))
	}
	p1 := second(head[0][n].id, head[1][n].id, has[0], has[1])
	p3 := second(head[2][n].id, head[3][n].id, has[2], has[3])
	kx := k.f.Select(u32, p1, head[1][n].id, head[0][n].id)
	ky := k.f.Select(u32, p3, head[3][n].id, head[2][n].id)
	py := second(kx, ky, or(has[0], has[1]), or(has[2], has[3]))
	take := [4]spirv.ID{and(not(py), not(p1)), and(not(py), p1), and(py, not(p3)), and(py, p3)}
	pick := func(vs [4]spirv.ID, t spirv.ID) spirv.ID {
		return k.f.Select(t, py, k.f.Select(t, p3, vs[3], vs[2]), k.f.Select(t, p1, vs[1], vs[0]))
	}
	out := make([]val, n)
	for m := range out {
		et := head[0][m].t
		out[m] = val{pick([4]spirv.ID{head[0][m].id, head[1][m].id, head[2][m].id, head[3][m].id}, k.scalarType(et)), et}
	}
	after := values(k.f.IAdd(u32, pick(cur, u32), k.cu32(2)))
	for r, h := range heads {
		k.advanceHead(h, take[r], cur[r], head[r], next[r], after)
	}
	return out
}

// sortKeyAt is the key (sortKeyValue) of the element of sort in at e of
// bindings binds, read from its compared operand alone.
func (k *kernelBuilder) sortKeyAt(in *hlo.Instruction, sk *sortKey, binds []int, e spirv.ID) spirv.ID {
	v := k.load(binds[sk.operand], e, in.Operands[sk.operand].Shape.Elem)
	key, err := k.sortKeyValue(sk, v)
	if err != nil {
		k.err = errors.Join(k.err, err)
	}
	return key.id
}
