package lower

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// splitWideOps rewrites a concatenate with more operands than the device
// binds storage buffers per kernel (lavapipe: 32) into a tree of
// concatenates that each fit. It works on the entry that inlineCalls
// copied, so the user's module is untouched.
func splitWideOps(s *state) error {
	limit := int(s.tg.MaxStorageBuffers)
	if limit < 3 {
		return nil
	}
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op == hlo.OpConcatenate && len(in.Operands)+1 > limit {
			d := in.A.Dimensions[0]
			ops := in.Operands
			for round := 0; len(ops)+1 > limit; round++ {
				var next []*hlo.Instruction
				for i := 0; i < len(ops); i += limit - 1 {
					chunk := ops[i:min(i+limit-1, len(ops))]
					if len(chunk) == 1 {
						next = append(next, chunk[0])
						continue
					}
					shape := hlo.ArrayShape(in.Shape.Elem, chunk[0].Shape.Dims...)
					shape.Dims[d] = 0
					for _, c := range chunk {
						shape.Dims[d] += c.Shape.Dims[d]
					}
					part := &hlo.Instruction{
						Name:     fmt.Sprintf("%s/part%d.%d", in.Name, round, i/(limit-1)),
						Op:       hlo.OpConcatenate,
						Shape:    shape,
						Operands: chunk,
						A:        in.A,
						Pos:      in.Pos,
					}
					out = append(out, part)
					next = append(next, part)
				}
				ops = next
			}
			cp := *in
			cp.Operands = ops
			*in = cp
		}
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}

// Long reductions: one invocation folding a whole row is serial, and
// llvmpipe (lavapipe) stops every loop of an invocation after 65535
// iterations in all (LP_MAX_TGSI_LOOP_ITERATIONS, shared by the
// shader's loops), silently: a sum over 200000 elements came back as the
// sum of the first 65535. So a reduce over more than longReduce elements
// per output becomes two: partial results over chunks of reduceChunk
// (padded with the init value, the reducer's identity), then the reduce
// of the partials, applied again until every reduce is short. XLA's
// tree reduction rewriter does the same for parallelism.
const (
	longReduce  = 4096
	reduceChunk = 1024
)

func splitLongReductions(s *state) error {
	entry := s.mod.Entry
	var out []*hlo.Instruction
	for _, in := range entry.Instructions {
		if in.Op != hlo.OpReduce {
			out = append(out, in)
			continue
		}
		for reducedCount(in) > longReduce {
			out = append(out, splitReduce(in)...)
		}
		out = append(out, in)
	}
	entry.Instructions = out
	return nil
}

// reducedCount is how many elements a reduce folds per output element.
func reducedCount(in *hlo.Instruction) int64 {
	n := int64(1)
	for _, d := range in.A.Dimensions {
		n *= in.Operands[0].Shape.Dims[d]
	}
	return n
}

// splitReduce rewrites in (in place) to reduce the partial results of
// the instructions it returns, which go before it.
func splitReduce(in *hlo.Instruction) []*hlo.Instruction {
	if d := in.A.Dimensions; len(d) == 1 && d[0] != int64(in.Operands[0].Shape.Rank()-1) {
		return splitMajorReduce(in, d[0])
	}
	if a, b, ok := majorRun(in); ok {
		// Consecutive dimensions that keep the minor one are one
		// dimension of their product (a reshape: the same elements in
		// the same order), split as a column sum is: partials whose
		// lanes read rows, where the transpose below has each read a
		// column.
		sp := &splitter{in: in}
		n := len(in.Operands) / 2
		merged := reducedCount(in) // the product of dimensions a..b
		for i := range n {
			x := in.Operands[i]
			dims := append(append(append([]int64{}, x.Shape.Dims[:a]...), merged), x.Shape.Dims[b+1:]...)
			in.Operands[i] = sp.mk(sp.name("merged", i), hlo.OpReshape, hlo.ArrayShape(x.Shape.Elem, dims...), x)
		}
		in.A.Dimensions = []int64{a}
		return append(sp.made, splitMajorReduce(in, a)...)
	}
	n := len(in.Operands) / 2
	src := in.Operands[0].Shape
	reduced := map[int64]bool{}
	for _, d := range in.A.Dimensions {
		reduced[d] = true
	}
	var perm, keptDims []int64
	for d := range src.Dims {
		if !reduced[int64(d)] {
			perm = append(perm, int64(d))
			keptDims = append(keptDims, src.Dims[d])
		}
	}
	perm = append(perm, in.A.Dimensions...)
	r := reducedCount(in)
	groups := (r + reduceChunk - 1) / reduceChunk
	sp := &splitter{in: in}
	name, mk := sp.name, sp.mk
	dims := func(extra ...int64) []int64 { return append(append([]int64{}, keptDims...), extra...) }
	chunked := make([]*hlo.Instruction, n)
	for i := 0; i < n; i++ {
		x := in.Operands[i]
		t := x.Shape.Elem
		tr := mk(name("transpose", i), hlo.OpTranspose, hlo.ArrayShape(t, permute(x.Shape.Dims, perm)...), x)
		tr.A.Dimensions = perm
		flat := mk(name("flat", i), hlo.OpReshape, hlo.ArrayShape(t, dims(r)...), tr)
		padded := flat
		if groups*reduceChunk != r {
			padded = mk(name("pad", i), hlo.OpPad, hlo.ArrayShape(t, dims(groups*reduceChunk)...), flat, in.Operands[n+i])
			padded.A.Padding = make([]hlo.PadDim, len(keptDims)+1)
			padded.A.Padding[len(keptDims)].Hi = groups*reduceChunk - r
		}
		chunked[i] = mk(name("chunks", i), hlo.OpReshape, hlo.ArrayShape(t, dims(groups, reduceChunk)...), padded)
	}
	partShapes := make([]hlo.Shape, n)
	for i := range partShapes {
		partShapes[i] = hlo.ArrayShape(in.Operands[i].Shape.Elem, dims(groups)...)
	}
	return sp.finish(chunked, partShapes, int64(len(keptDims)))
}

// majorRun reports whether in reduces several consecutive dimensions
// a..b of its operands, the minor one not among them.
func majorRun(in *hlo.Instruction) (a, b int64, ok bool) {
	d := slices.Sorted(slices.Values(in.A.Dimensions))
	if len(d) < 2 {
		return 0, 0, false
	}
	a, b = d[0], d[len(d)-1]
	return a, b, b-a == int64(len(d)-1) && b != int64(in.Operands[0].Shape.Rank()-1)
}

// splitMajorReduce is splitReduce of a reduction over one dimension d
// that is not the minor one (a column sum): d is padded to whole chunks
// and split in place into (chunks, reduceChunk), so that the partials'
// consecutive invocations read consecutive elements, where a transpose
// of d to the minor position had each read a column a row apart (the
// DLRM step's [6272,192] column sums: 3.0-3.4 ms each). Each partial
// folds the same elements in the same order as through the transpose.
func splitMajorReduce(in *hlo.Instruction, d int64) []*hlo.Instruction {
	n := len(in.Operands) / 2
	src := in.Operands[0].Shape
	r := src.Dims[d]
	groups := (r + reduceChunk - 1) / reduceChunk
	sp := &splitter{in: in}
	name, mk := sp.name, sp.mk
	// with replaces dimension d of src's dims by those given.
	with := func(ds ...int64) []int64 {
		return append(append(append([]int64{}, src.Dims[:d]...), ds...), src.Dims[d+1:]...)
	}
	chunked := make([]*hlo.Instruction, n)
	partShapes := make([]hlo.Shape, n)
	for i := 0; i < n; i++ {
		x := in.Operands[i]
		t := x.Shape.Elem
		padded := x
		if groups*reduceChunk != r {
			padded = mk(name("pad", i), hlo.OpPad, hlo.ArrayShape(t, with(groups*reduceChunk)...), x, in.Operands[n+i])
			padded.A.Padding = make([]hlo.PadDim, src.Rank())
			padded.A.Padding[d].Hi = groups*reduceChunk - r
		}
		chunked[i] = mk(name("chunks", i), hlo.OpReshape, hlo.ArrayShape(t, with(groups, reduceChunk)...), padded)
		partShapes[i] = hlo.ArrayShape(t, with(groups)...)
	}
	return sp.finish(chunked, partShapes, d)
}

// splitter makes the instructions that split reduction in.
type splitter struct {
	in   *hlo.Instruction
	made []*hlo.Instruction
}

func (sp *splitter) name(s string, i int) string {
	return fmt.Sprintf("%s/split/%s%d", sp.in.Name, s, i)
}

func (sp *splitter) mk(nm string, op hlo.Opcode, shape hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	x := &hlo.Instruction{Name: nm, Op: op, Shape: shape, Pos: sp.in.Pos, Operands: ops}
	sp.made = append(sp.made, x)
	return x
}

// finish makes the partial reduction of the chunked operands over their
// dimension d+1 (of shapes partShapes), has in reduce the partials over
// dimension d instead, and returns what it made, in order.
func (sp *splitter) finish(chunked []*hlo.Instruction, partShapes []hlo.Shape, d int64) []*hlo.Instruction {
	in, n := sp.in, len(chunked)
	partShape := partShapes[0]
	if n > 1 {
		partShape = hlo.TupleShape(partShapes...)
	}
	part := sp.mk(sp.name("partial", 0), hlo.OpReduce, partShape, append(chunked, in.Operands[n:]...)...)
	part.Called = in.Called
	part.A.Dimensions, part.A.HasDimensions = []int64{d + 1}, true
	parts := []*hlo.Instruction{part}
	if n > 1 {
		parts = make([]*hlo.Instruction, n)
		for i := range parts {
			g := sp.mk(sp.name("part", i), hlo.OpGetTupleElement, partShapes[i], part)
			g.A.Index = int64(i)
			parts[i] = g
		}
	}
	in.Operands = append(parts, in.Operands[n:]...)
	in.A.Dimensions = []int64{d}
	return sp.made
}

func permute(dims, perm []int64) []int64 {
	out := make([]int64, len(perm))
	for i, p := range perm {
		out[i] = dims[p]
	}
	return out
}
