package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// A scatter's kernel walks every update position once per operand
// element (kgen.ScatterKernel), which keeps the order of updates and
// needs no atomics, but costs elements x positions steps: the corpus's
// DLRM training step scatter-adds 6,272 rows of embedding gradients into
// tables of 796 to 1,683 rows, 150 ms of its 264 ms of device time. Where
// each index selects one position along one operand dimension (JAX's
// x.at[i].add and the gradient of take), sorting the positions by index
// (stably: equal indices keep their order) gives a scatter with
// indices_are_sorted whose kernel finds an element's updates by binary
// search (kgen.SortedRows), in the same order as before: the results are
// the same bit for bit.

// sortMinSteps is the size (operand elements x positions) from which a
// scatter's indices are sorted: the sort costs about a dozen dispatches
// (6,272 positions: 3.7 ms), the walk of every position about 6 ns a step
// on lavapipe.
const sortMinSteps = 1 << 22

// sortScatters sorts the indices of each large scatter of the sorted
// form (sortedScatter).
func sortScatters(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpScatter: (*expander).sortedScatter})
}

// atomicMinSteps is the size (operand elements x positions) from which
// a scatter whose combiner commutes and associates exactly (an integer
// sum, min or max, a bitwise and, or or xor: kgen.AtomicScatter)
// applies its updates by atomic operations, an invocation an update,
// after a copy of the operand: two dispatches where the walk of every
// position is one.
const atomicMinSteps = 1 << 16

// atomicScatter reports whether scatter in applies its updates by atomic
// operations.
func atomicScatter(in *hlo.Instruction) bool {
	return kgen.AtomicScatter(in) && in.Operands[0].Shape.NumElements()*scatterPositions(in) >= atomicMinSteps
}

// scatterPositions is how many update windows scatter in applies: its
// updates' elements along the dimensions that are no window dimensions.
func scatterPositions(in *hlo.Instruction) int64 {
	n := len(in.Operands) / 2
	upd := in.Operands[n+1].Shape
	count := int64(1)
	for d, x := range upd.Dims {
		if !slices.Contains(in.A.Scatter.UpdateWindowDims, int64(d)) {
			count *= x
		}
	}
	return count
}

// sortedScatter builds scatter in over its positions sorted by index:
// the indices as s32 keys (an index outside the operand becomes the
// dimension's size, which the scatter skips as it skipped the index),
// a stable sort of (key, position), the updates gathered in that order,
// and the scatter of those with indices_are_sorted. It leaves in where
// it is small, already sorted, or of another form.
func (b *expander) sortedScatter(in *hlo.Instruction) (*hlo.Instruction, error) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	xs := in.Operands[0].Shape
	od, ok := kgen.OneIndexRows(in)
	if sd.IndicesAreSorted || !ok || xs.Dims[od] >= 1<<31-1 || atomicScatter(in) { // keys are s32
		return in, nil
	}
	dim := xs.Dims[od]
	count, window, ok := flatPositions(in)
	if !ok || count < 2 || xs.NumElements()*count < sortMinSteps {
		return in, nil
	}
	w := len(window)

	idx := b.reshape(in.Operands[n], count)
	t := idx.Shape.Elem
	if t.Bytes() < 8 {
		// Exact in s32 below 32 bits; u32 indices of 2^31 or more turn
		// negative, outside the operand as they were.
		idx, t = b.convert(idx, hlo.S32), hlo.S32
	}
	valid := b.compare(idx, b.bcast(b.constant(t, dim), count), "LT")
	if t.Kind() == hlo.KindSigned {
		valid = b.inst(hlo.OpAnd, valid.Shape, valid, b.compare(idx, b.zeros(idx.Shape), "GE"))
	}
	keys := b.sel(valid, b.convert(idx, hlo.S32), b.bcast(b.constant(hlo.S32, dim), count))
	pos := b.iota(hlo.S32, 0, count)
	srt := b.inst(hlo.OpSort, hlo.TupleShape(keys.Shape, pos.Shape), keys, pos)
	srt.Called = []*hlo.Computation{comparator(in.Name+"/by-index", hlo.S32, false)}
	srt.A.Dimensions, srt.A.HasDimensions, srt.A.IsStable = []int64{0}, true, true
	sorted := b.inst(hlo.OpGetTupleElement, keys.Shape, srt)
	sorted.A.Index = 0
	perm := b.inst(hlo.OpGetTupleElement, pos.Shape, srt)
	perm.A.Index = 1
	at := b.reshape(perm, count, 1)

	ops := append([]*hlo.Instruction{}, in.Operands[:n]...)
	ops = append(ops, sorted)
	for _, u := range in.Operands[n+1:] {
		flat := b.reshape(u, append([]int64{count}, window...)...)
		g := b.inst(hlo.OpGather, flat.Shape, flat, at)
		g.A.Gather = &hlo.GatherDims{
			OffsetDims: iotaDims(w + 1)[1:], CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0},
			IndexVectorDim: 1, SliceSizes: append([]int64{1}, window...),
		}
		ops = append(ops, g)
	}
	return b.flatScatter(in, ops, w, true, false), nil
}

// flatScatter is a scatter of the flattened form (flatPositions) that
// stands for scatter in: ops are in's operands, then [count, 1] indices
// and [count, window...] updates, w the window's rank.
func (b *expander) flatScatter(in *hlo.Instruction, ops []*hlo.Instruction, w int, sorted, unique bool) *hlo.Instruction {
	sd := in.A.Scatter
	sc := b.inst(hlo.OpScatter, in.Shape, ops...)
	sc.Called = in.Called
	sc.A.Scatter = &hlo.ScatterDims{
		UpdateWindowDims: iotaDims(w + 1)[1:], InsertedWindowDims: sd.InsertedWindowDims,
		ScatterDimsToOperandDims: sd.ScatterDimsToOperandDims, IndexVectorDim: 1,
		IndicesAreSorted: sorted, UniqueIndices: unique,
	}
	return sc
}

// flatPositions reports whether scatter in lists its update positions
// in order when its indices and updates are flattened: the index vector
// is the last dimension (of size 1) or implicit, and the updates' window
// dimensions trail their scatter dimensions. It returns how many
// positions there are and the window's dimensions.
func flatPositions(in *hlo.Instruction) (count int64, window []int64, ok bool) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	ix, us := in.Operands[n].Shape, in.Operands[n+1].Shape
	ivd := sd.IndexVectorDim
	if ivd < int64(ix.Rank()) && (ivd != int64(ix.Rank())-1 || ix.Dims[ivd] != 1) {
		return 0, nil, false
	}
	return trailingWindow(sd, us)
}

// trailingWindow reports whether updates of shape us have their window
// dimensions after their scatter dimensions, and returns how many
// positions those make and the window's dimensions.
func trailingWindow(sd *hlo.ScatterDims, us hlo.Shape) (count int64, window []int64, ok bool) {
	w := len(sd.UpdateWindowDims)
	for j, d := range sd.UpdateWindowDims {
		if d != int64(us.Rank()-w+j) {
			return 0, nil, false
		}
	}
	count = 1
	for _, d := range us.Dims[:us.Rank()-w] {
		count *= d
	}
	return count, us.Dims[us.Rank()-w:], true
}

// linearMinPoints is how many points a scatter linearScatter rewrites
// has at least, however small its operand: what one invocation might not
// loop over on a device that bounds loops (the linear form splits into
// chunks: splitscatter.go).
const linearMinPoints = 1 << 14

// linearScatters rewrites each large scatter of points along leading
// dimensions (linearScatter) as one of the sorted form's.
func linearScatters(s *state) error {
	return expandEach(s, map[hlo.Opcode]expansion{hlo.OpScatter: (*expander).linearScatter})
}

// linearScatter builds scatter in, whose index vectors select a point
// along the operand's k leading dimensions (x.at[i, j].add(v): indices
// [..., k], those dimensions inserted, windows over the rest), as a
// scatter over the operand with those dimensions made one, each index
// vector made its linear index (one outside the operand made the one
// past the end, which the scatter skips as it skipped the vector): the
// form whose indices the next pass sorts and whose runs fold in place,
// and that splits into chunks where a device bounds loops. Its general
// kernel walks every position for each element: 100,000 points into
// f32[1000,1000] ran 100,000 steps an invocation, which lavapipe
// refused. The updates land in the same order; the bits are the same.
func (b *expander) linearScatter(in *hlo.Instruction) (*hlo.Instruction, error) {
	sd := in.A.Scatter
	n := (len(in.Operands) - 1) / 2
	xs, ix := in.Operands[0].Shape, in.Operands[n].Shape
	k := len(sd.ScatterDimsToOperandDims)
	if k < 2 || len(sd.InputBatchingDims) > 0 || len(sd.InsertedWindowDims) != k || sd.IndexVectorDim != int64(ix.Rank())-1 || !ix.Elem.IsInteger() {
		return in, nil
	}
	lead := make([]bool, k) // each leading dimension indexed once and inserted
	for _, d := range sd.ScatterDimsToOperandDims {
		if d >= int64(k) || lead[d] {
			return in, nil
		}
		lead[d] = true
	}
	for _, d := range sd.InsertedWindowDims {
		if d >= int64(k) {
			return in, nil
		}
	}
	count, window, ok := trailingWindow(sd, in.Operands[n+1].Shape)
	if !ok {
		return in, nil
	}
	points := int64(1)
	for _, d := range xs.Dims[:k] {
		points *= d
	}
	if points >= 1<<31-1 || xs.NumElements()*count < sortMinSteps && count < linearMinPoints {
		return in, nil
	}
	idx := b.reshape(in.Operands[n], count, int64(k))
	t := idx.Shape.Elem
	var valid, lin *hlo.Instruction
	for c, d := range sd.ScatterDimsToOperandDims {
		comp := b.reshape(b.slice(idx, 1, int64(c), int64(c+1)), count)
		ok := b.compare(comp, b.bcast(b.constant(t, xs.Dims[d]), count), "LT")
		if t.Kind() == hlo.KindSigned {
			ok = b.binary(hlo.OpAnd, ok, b.compare(comp, b.zeros(comp.Shape), "GE"))
		}
		stride := int64(1)
		for _, e := range xs.Dims[d+1 : k] {
			stride *= e
		}
		term := b.binary(hlo.OpMultiply, b.convert(comp, hlo.S32), b.constant(hlo.S32, stride))
		if c == 0 {
			valid, lin = ok, term
		} else {
			valid, lin = b.binary(hlo.OpAnd, valid, ok), b.binary(hlo.OpAdd, lin, term)
		}
	}
	key := b.reshape(b.sel(valid, lin, b.bcast(b.constant(hlo.S32, points), count)), count, 1)
	rest := xs.Dims[k:]
	ops := make([]*hlo.Instruction, 0, len(in.Operands))
	for _, x := range in.Operands[:n] {
		ops = append(ops, b.reshape(x, append([]int64{points}, rest...)...))
	}
	ops = append(ops, key)
	for _, u := range in.Operands[n+1:] {
		ops = append(ops, b.reshape(u, append([]int64{count}, window...)...))
	}
	sc := b.inst(hlo.OpScatter, variadicShape(ops[:n]), ops...)
	sc.Called = in.Called
	sc.A.Scatter = &hlo.ScatterDims{
		UpdateWindowDims: iotaDims(len(window) + 1)[1:], InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, UniqueIndices: sd.UniqueIndices,
	}
	outs := b.leaves(sc, n)
	for i := range outs {
		outs[i] = b.reshape(outs[i], in.Operands[i].Shape.Dims...)
	}
	if n == 1 {
		return outs[0], nil
	}
	return b.tuple(outs...), nil
}
