package lower

import (
	"fmt"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/formula"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Simplification: rewrites of the entry that leave every value as it was
// but take out steps that do nothing, so that the patterns the fusion
// passes look for appear in graphs from JAX as they do in hand-written
// HLO. jax.nn.softmax writes its keepdims max as max(reduce_max(x),
// -inf), a reshape to [..., 1], a broadcast to the same shape and a
// reshape back before the broadcast along the rows, and its sum as a
// reshape, a convert and a broadcast and reshape of the same kind; a
// layer norm's mean and variance are computed in [..., 1] between such
// reshapes. Left as they are, the row kernels (rowfuse.go, online.go)
// and softmax's exponentials (belowRowMax) do not see a reduction
// broadcast along its rows: the corpus's jit_layer_norm (bf16
// [1,4096,768]) ran as 3 kernels in 12.0 ms, and runs as one row kernel
// in 7.6. Each rule returns what in may be replaced by (an instruction that
// exists, or a new one, placed where in was, after any new ones it
// reads), or nil; the rules run on each instruction, in order, until
// none applies, and what the root no longer reaches is dropped
// (parameters stay).
var simplifications = []struct {
	name string
	rule func(sp *simplifier, in *hlo.Instruction) *hlo.Instruction
}{
	{"reshape to the same dimensions", func(_ *simplifier, in *hlo.Instruction) *hlo.Instruction {
		if in.Op == hlo.OpReshape && in.Shape.Equal(in.Operands[0].Shape) {
			return in.Operands[0]
		}
		return nil
	}},
	{"broadcast to the same dimensions, in order", func(_ *simplifier, in *hlo.Instruction) *hlo.Instruction {
		x := in.Operands[0]
		if in.Op == hlo.OpBroadcast && in.Shape.Equal(x.Shape) && slices.Equal(in.A.Dimensions, iotaDims(x.Shape.Rank())) {
			return x
		}
		return nil
	}},
	{"slice of the whole array", func(_ *simplifier, in *hlo.Instruction) *hlo.Instruction {
		if in.Op != hlo.OpSlice || !in.Shape.Equal(in.Operands[0].Shape) {
			return nil
		}
		for _, d := range in.A.Slice {
			if d.Start != 0 || d.Stride != 1 {
				return nil
			}
		}
		return in.Operands[0]
	}},
	{"reshape of a reshape", func(sp *simplifier, in *hlo.Instruction) *hlo.Instruction {
		if in.Op != hlo.OpReshape || in.Operands[0].Op != hlo.OpReshape {
			return nil
		}
		r := *in
		r.Operands = []*hlo.Instruction{in.Operands[0].Operands[0]}
		return sp.add(&r)
	}},
	{"reshape of elementwise ops on values reshaped from its dimensions", func(sp *simplifier, in *hlo.Instruction) *hlo.Instruction {
		// reshape(e(reshape(x), broadcast(c))) with x's dimensions is
		// e(x, broadcast(c)): a reshape keeps the elements' row-major
		// order and e acts on each alone. JAX computes a keepdims
		// reduction's row values in [..., 1] between two reshapes.
		if in.Op != hlo.OpReshape || !in.Operands[0].Op.IsElementwise() {
			return nil
		}
		return sp.reshaped(in.Operands[0], in.Shape.Dims, 8)
	}},
	{"an op of constants is a constant", (*simplifier).fold},
	{"a sum of products of broadcasts is a dot", (*simplifier).dotOfBroadcasts},
	{"a scatter of one element at a constant index is a select", (*simplifier).pointScatter},
	{"max with -inf, min with +inf", func(_ *simplifier, in *hlo.Instruction) *hlo.Instruction {
		// XLA's max(x, -inf) is x for every x, NaN included (and
		// min(x, +inf) likewise).
		if (in.Op != hlo.OpMaximum && in.Op != hlo.OpMinimum) || in.Shape.Elem.Kind() != hlo.KindFloat {
			return nil
		}
		inf := math.Inf(-1)
		if in.Op == hlo.OpMinimum {
			inf = math.Inf(1)
		}
		for i, c := range in.Operands {
			if c.Op == hlo.OpBroadcast && kgen.FloatConst(c.Operands[0], inf) {
				return in.Operands[1-i]
			}
		}
		return nil
	}},
}

// simplifier holds a simplify pass's state: the instructions so far,
// the values already rebuilt with other dimensions (reshaped), and how
// many instructions read each.
type simplifier struct {
	fuses bool // a fused program's entry: pointScatter's selects fuse
	out   []*hlo.Instruction
	memo  map[reshapeKey]*hlo.Instruction
	users map[*hlo.Instruction]int // in the entry as given
}

// maxRebuilt is the most elements reshaped copies an elementwise op
// that other instructions also read: rebuilding it duplicates its work.
const maxRebuilt = 1 << 16

type reshapeKey struct {
	x    *hlo.Instruction
	dims string
}

// add lists new instruction x (after the ones it reads) and returns it.
func (sp *simplifier) add(x *hlo.Instruction) *hlo.Instruction {
	sp.out = append(sp.out, x)
	return x
}

// reshaped returns x rebuilt with dimensions dims without a reshape, or
// nil: a reshape of a value of those dimensions is that value, a
// broadcast of a scalar is broadcast to dims, and an elementwise op
// (up to depth deep) is rebuilt on its operands so rebuilt, if it has
// one reader or at most maxRebuilt elements. An elementwise op needs at
// least one operand that is not a broadcast scalar, so that the result
// is not a new constant.
func (sp *simplifier) reshaped(x *hlo.Instruction, dims []int64, depth int) *hlo.Instruction {
	key := reshapeKey{x, fmt.Sprint(dims)}
	if r, ok := sp.memo[key]; ok {
		return r
	}
	var r *hlo.Instruction
	switch {
	case x.Shape.IsArray() && slices.Equal(x.Shape.Dims, dims):
		r = x
	case x.Op == hlo.OpReshape && x.Operands[0].Shape.IsArray() && slices.Equal(x.Operands[0].Shape.Dims, dims):
		r = x.Operands[0]
	case x.Op == hlo.OpBroadcast && len(x.A.Dimensions) == 0:
		b := *x
		b.Shape = hlo.ArrayShape(x.Shape.Elem, dims...)
		r = sp.add(&b)
	case x.Op.IsElementwise() && depth > 0 && x.Op != hlo.OpRngBitGenerator && x.Shape.IsArray() &&
		(sp.users[x] <= 1 || x.Shape.NumElements() <= maxRebuilt):
		ops := make([]*hlo.Instruction, len(x.Operands))
		real := false
		for i, o := range x.Operands {
			if ops[i] = sp.reshaped(o, dims, depth-1); ops[i] == nil {
				break
			}
			real = real || !(o.Op == hlo.OpBroadcast && len(o.A.Dimensions) == 0)
		}
		if ops[len(ops)-1] != nil && real {
			e := *x
			e.Shape, e.Operands = hlo.ArrayShape(x.Shape.Elem, dims...), ops
			r = sp.add(&e)
		}
	}
	sp.memo[key] = r
	return r
}

// simplify applies the simplifications to the entry computation (the
// copy inlineCalls made; the user's module is not modified) and to
// copies of the computations it calls (rewriteAll): a device loop's
// constants are folded here or not at all, and llvmpipe built (c - c) *
// x in a loop body as +0 where XLA gives -0 for negative x
// (Target.FoldsZeros, fold).
func simplify(s *state) error {
	// pointScatter's selects pay where they fuse, in the program's own
	// entry: in a loop's body (a device loop's, or a host loop's
	// sub-program) each iteration would pass over the whole array where
	// the scatter, updated in place, writes its element.
	top := !s.opts.NoFuse && !s.opts.sub
	return rewriteAll(s.mod.Entry, func(c *hlo.Computation) (bool, error) {
		return simplifyComputation(c, top && c == s.mod.Entry), nil
	}, nil)
}

// simplifyComputation applies the simplifications to c's instructions
// in place and reports whether any applied; fuses says that c is a
// program's entry that fusion will run on (pointScatter pays only there).
func simplifyComputation(c *hlo.Computation, fuses bool) bool {
	sp := &simplifier{memo: map[reshapeKey]*hlo.Instruction{}, users: map[*hlo.Instruction]int{}, fuses: fuses}
	repl := map[*hlo.Instruction]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			sp.users[o]++
		}
	}
	resolve := func(x *hlo.Instruction) *hlo.Instruction {
		for repl[x] != nil {
			x = repl[x]
		}
		return x
	}
	changed := false
	for _, in := range c.Instructions {
		for j, o := range in.Operands {
			in.Operands[j] = resolve(o)
		}
		sp.out = append(sp.out, in)
		if in == c.Root || in.Op == hlo.OpParameter {
			continue
		}
		cur := in
		for applied := true; applied; {
			applied = false
			for _, r := range simplifications {
				if len(cur.Operands) == 0 {
					break
				}
				if x := r.rule(sp, cur); x != nil {
					repl[in], cur, applied, changed = x, x, true, true
					break
				}
			}
		}
	}
	c.Instructions = sp.out
	c.Root = resolve(c.Root)
	c.Instructions = c.Reachable()
	return changed
}

// fold replaces an elementwise or data-movement op of constants by the
// constant the evaluator computes (XLA's constant folding): an op of
// arrays of constants where the result has no more elements than its
// operands together, and an elementwise op of scalar constants
// broadcast alike by the broadcast of its scalar result. Broadcasts
// stay: a broadcast scalar costs no memory, and the fusion passes and
// kernels look for it. Besides the work, a zero the driver computes
// from constants is a zero it sees: llvmpipe built x*0 from x - x of a
// constant as +0 and 0 - y as -y, whatever the float controls say
// (Target.FoldsZeros), where a constant zero the kernel reads is hidden
// from it (the fuzzer: 0 - 0 of a complex product came out -0).
func (sp *simplifier) fold(in *hlo.Instruction) *hlo.Instruction {
	if !in.Shape.IsArray() || len(in.Called) > 0 || !foldable(in.Op) {
		return nil
	}
	lits := make([]*hlo.Literal, len(in.Operands))
	all, scalars := true, in.Op.IsElementwise()
	inputs := int64(0)
	for i, o := range in.Operands {
		lits[i] = constLiteral(o)
		inputs += o.Shape.NumElements()
		if lits[i] == nil {
			all = false
		}
		switch {
		case o.Op == hlo.OpBroadcast && len(o.A.Dimensions) == 0 && constLiteral(o.Operands[0]) != nil:
		case lits[i] != nil && o.Shape.Rank() == 0:
		default:
			scalars = false
		}
	}
	constOf := func(in *hlo.Instruction, ops []*hlo.Literal) *hlo.Instruction {
		l, err := eval.Fold(in, ops)
		if err != nil {
			return nil // left to the device, which names what it lacks
		}
		return sp.add(&hlo.Instruction{Name: in.Name, Op: hlo.OpConstant, Shape: l.Shape, Literal: l, Pos: in.Pos})
	}
	switch {
	case all && in.Shape.NumElements() <= inputs:
		return constOf(in, lits)
	case scalars && in.Shape.Rank() > 0:
		sc := *in
		sc.Shape = hlo.ArrayShape(in.Shape.Elem)
		sc.Operands = make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			if o.Op == hlo.OpBroadcast {
				o = o.Operands[0]
			}
			sc.Operands[i], lits[i] = o, o.Literal
		}
		c := constOf(&sc, lits)
		if c == nil {
			return nil
		}
		return sp.add(&hlo.Instruction{Name: in.Name, Op: hlo.OpBroadcast, Shape: in.Shape, Operands: []*hlo.Instruction{c}, Pos: in.Pos})
	}
	return nil
}

// foldable reports whether fold may compute op: elementwise ops (their
// results are functions of their operands alone) and data movement.
func foldable(op hlo.Opcode) bool {
	switch op {
	case hlo.OpSlice, hlo.OpReshape, hlo.OpBitcast, hlo.OpTranspose, hlo.OpReverse, hlo.OpConcatenate, hlo.OpPad:
		return true
	case hlo.OpRngBitGenerator:
		return false
	}
	return op.IsElementwise()
}

// dotOfBroadcasts: reduce(multiply(broadcast(a), broadcast(b)), 0) with
// add, where every dimension of the product comes from a or b and every
// one the sum runs over from both, is dot(a, b): a's and b's shared
// dimensions are its batch dimensions where the sum keeps them and its
// contracting ones where it runs over them, the rest its free ones (then
// a transpose to the reduce's order). GoMLX writes the gradient of every
// dot so (its DotGeneral VJP multiplies broadcasts and sums them): left
// as it is, an MLP layer of 784x512 at batch 256 is a reduce over
// 100 million products, no tiled GEMM; GoMLX's training step of
// 784-512-10 ran in 100 ms, 20 of it in its forward dots. Only for
// floats of 32 and 64 bits and integers: a dot may sum narrower floats
// in more precision than the reduce did.
func (sp *simplifier) dotOfBroadcasts(in *hlo.Instruction) *hlo.Instruction {
	if in.Op != hlo.OpReduce || len(in.Operands) != 2 || !in.Shape.IsArray() {
		return nil
	}
	t := in.Shape.Elem
	if t != hlo.F32 && t != hlo.F64 && !t.IsInteger() || in.Called[0].ReducerOp() != hlo.OpAdd || !zeroConst(in.Operands[1]) {
		return nil
	}
	m := in.Operands[0]
	if m.Op != hlo.OpMultiply || m.Operands[0].Op != hlo.OpBroadcast || m.Operands[1].Op != hlo.OpBroadcast {
		return nil
	}
	a, b := m.Operands[0], m.Operands[1]
	// of maps each product dimension to the operand dimension it comes
	// from (-1: none); a dimension of size 1 broadcast wider is no match,
	// and so is a broadcast that adds no dimension: the rule is for
	// products larger than both operands, which a dot never makes (a
	// sum of x*y over rows is a layer norm's variance, which the row
	// kernels compute).
	of := func(bc *hlo.Instruction) []int64 {
		if len(bc.A.Dimensions) >= m.Shape.Rank() {
			return nil
		}
		at := make([]int64, m.Shape.Rank())
		for i := range at {
			at[i] = -1
		}
		for i, d := range bc.A.Dimensions {
			if bc.Operands[0].Shape.Dims[i] != m.Shape.Dims[d] {
				return nil
			}
			at[d] = int64(i)
		}
		return at
	}
	inA, inB := of(a), of(b)
	if inA == nil || inB == nil {
		return nil
	}
	summed := map[int64]bool{}
	for _, d := range in.A.Dimensions {
		summed[d] = true
	}
	dd := &hlo.DotDims{}
	var batch, lFree, rFree []int64 // product dimensions, in the dot's output order
	for d := int64(0); d < int64(m.Shape.Rank()); d++ {
		ia, ib := inA[d], inB[d]
		switch {
		case ia >= 0 && ib >= 0 && summed[d]:
			dd.LhsContract, dd.RhsContract = append(dd.LhsContract, ia), append(dd.RhsContract, ib)
		case ia >= 0 && ib >= 0:
			dd.LhsBatch, dd.RhsBatch = append(dd.LhsBatch, ia), append(dd.RhsBatch, ib)
			batch = append(batch, d)
		case ia >= 0 && !summed[d]:
			lFree = append(lFree, d)
		case ib >= 0 && !summed[d]:
			rFree = append(rFree, d)
		default: // a dimension only one side has, summed; or neither has
			return nil
		}
	}
	if len(dd.LhsContract) == 0 {
		return nil // an outer product: the multiply is all the work there is
	}
	order := append(append(batch, lFree...), rFree...)
	dims := make([]int64, len(order))
	for i, d := range order {
		dims[i] = m.Shape.Dims[d]
	}
	dot := sp.add(&hlo.Instruction{Name: in.Name + ".dot", Op: hlo.OpDot, Shape: hlo.ArrayShape(t, dims...),
		Operands: []*hlo.Instruction{a.Operands[0], b.Operands[0]}, Pos: in.Pos})
	dot.A.Dot = dd
	// The reduce keeps the product's dimensions in their order; the dot
	// gives batch, then a's, then b's.
	perm := make([]int64, 0, len(order))
	for d := int64(0); d < int64(m.Shape.Rank()); d++ {
		if !summed[d] {
			perm = append(perm, int64(slices.Index(order, d)))
		}
	}
	if slices.Equal(perm, iotaDims(len(perm))) {
		return dot
	}
	tr := sp.add(&hlo.Instruction{Name: in.Name + ".t", Op: hlo.OpTranspose, Shape: hlo.ArrayShape(t, in.Shape.Dims...),
		Operands: []*hlo.Instruction{dot}, Pos: in.Pos})
	tr.A.Dimensions = perm
	return tr
}

// constLiteral is x's values where x is a constant whose values the
// text gave (not elided), else nil.
func constLiteral(x *hlo.Instruction) *hlo.Literal {
	if x.Op != hlo.OpConstant || x.Literal == nil || x.Literal.Elided {
		return nil
	}
	return x.Literal
}

// zeroConst reports whether x is a scalar constant whose bits are all
// zero (+0 for floats).
func zeroConst(x *hlo.Instruction) bool {
	l := constLiteral(x)
	if l == nil || l.Shape.Rank() != 0 {
		return false
	}
	for _, b := range l.Data {
		if b != 0 {
			return false
		}
	}
	return true
}

// maxPointScatter is the most elements an array that pointScatter
// rewrites may have: the select it becomes computes every element (in
// whatever kernel it fuses into), where the scatter wrote one. Below it
// a kernel over the array costs less than the dispatch it saves.
const maxPointScatter = 1 << 16

// pointScatter rewrites a scatter of a single element at a constant
// index, JAX's x.at[i, j].set(v) (or .add, .max, ...) with static
// indices, as select(iota == index, combine(x, v), x): elementwise, so
// that a chain of them fuses where each scatter was a kernel and a
// dispatch of its own (the corpus's jit_mass_matrix_35 builds a 35x35
// matrix by 103 of them, the scalars between in kernels of their own: 155
// dispatches a run). The combiner keeps its operands' order (x is its
// first parameter, the update its second); one that is not a single op
// of its two parameters, or either parameter alone, is left to the
// scatter, as is an index outside the array (whose update XLA skips),
// batching dimensions, arrays past maxPointScatter, programs compiled
// without fusion (NoFuse), where the select would be kernels, and loop
// bodies (simplify).
func (sp *simplifier) pointScatter(in *hlo.Instruction) *hlo.Instruction {
	if !sp.fuses || in.Op != hlo.OpScatter || len(in.Operands) != 3 || !in.Shape.IsArray() || in.A.Scatter == nil || len(in.Called) != 1 {
		return nil
	}
	sd := in.A.Scatter
	x, idx, upd := in.Operands[0], in.Operands[1], in.Operands[2]
	if len(sd.InputBatchingDims) > 0 || len(sd.ScatterIndicesBatchingDims) > 0 ||
		upd.Shape.NumElements() != 1 || x.Shape.NumElements() > maxPointScatter || !x.Shape.IsArray() || slices.Contains(x.Shape.Dynamic, true) {
		return nil
	}
	// The index: a constant, or a constant broadcast (JAX's index of
	// zeros, [0, 0], is one).
	var vec []int64
	if lit := constLiteral(idx); lit != nil {
		vec, _ = lit.Ints()
	} else if idx.Op == hlo.OpBroadcast && idx.Shape.IsArray() {
		if lit := constLiteral(idx.Operands[0]); lit != nil && lit.Shape.Rank() == 0 {
			if v, err := lit.Ints(); err == nil {
				vec = slices.Repeat(v, int(idx.Shape.NumElements()))
			}
		}
	}
	if len(vec) == 0 || len(vec) != len(sd.ScatterDimsToOperandDims) {
		return nil // one index vector, of one component per mapped dimension
	}
	start := make([]int64, x.Shape.Rank())
	for k, d := range sd.ScatterDimsToOperandDims {
		start[d] = vec[k]
	}
	// The element's row-major position, which an iota of the flattened
	// array gives each element.
	strides, flat := hlo.RowMajorStrides(x.Shape.Dims), int64(0)
	for d, s := range start {
		if s < 0 || s >= x.Shape.Dims[d] {
			return nil
		}
		flat += s * strides[d]
	}
	c := in.Called[0]
	if len(c.Params) != 2 {
		return nil
	}
	n := 0
	emit := func(y *hlo.Instruction) *hlo.Instruction {
		y.Name, y.Pos = fmt.Sprintf("%s.point%d", in.Name, n), in.Pos
		n++
		return sp.add(y)
	}
	var ferr error
	e := formula.New(emit, x.Shape, &ferr)
	u := upd
	if u.Shape.Rank() > 0 {
		u = e.Make(hlo.OpReshape, hlo.ArrayShape(u.Shape.Elem), u)
	}
	v := e.Broadcast(u)
	switch r := c.Root; {
	case r == c.Params[0]:
		return x
	case r == c.Params[1]:
	case c.ReducerOp() != hlo.OpParameter && r.Op.IsElementwise():
		op := *r // its attributes kept
		op.Name, op.Shape, op.Operands = "", x.Shape, []*hlo.Instruction{x, v}
		if r.Operands[0] == c.Params[1] {
			op.Operands = []*hlo.Instruction{v, x}
		}
		v = emit(&op)
	default:
		return nil
	}
	// Each element's position against the index's: one iota (of the
	// flattened array, reshaped) and one compare a scatter.
	ie := e.With(hlo.S32)
	iota := ie.Make(hlo.OpIota, hlo.ArrayShape(hlo.S32, x.Shape.NumElements()))
	if err := iota.SetAttr("iota_dimension", "0"); err != nil {
		return nil
	}
	pos := ie.Make(hlo.OpReshape, ie.Shape(), iota)
	hit := ie.Cmp(pos, "EQ", ie.Bits(uint64(flat)))
	sel := e.Sel(hit, v, x)
	if ferr != nil {
		return nil
	}
	sel.Name, sel.Shape = in.Name, in.Shape
	return sel
}
