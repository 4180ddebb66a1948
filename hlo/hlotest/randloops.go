package hlotest

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The random program generator's ops with computations, loops and
// indices (reductions, dot, gather/scatter, sort, windows, convolution,
// while and conditional), its root, its inputs and its mutator.

// reducer is the computation applying op to two scalars of t.
func (g *gen) reducer(op hlo.Opcode, t hlo.ElementType) *hlo.Computation {
	name := fmt.Sprintf("%s_%s", strings.ReplaceAll(op.String(), "-", "_"), t)
	if c := g.comps[name]; c != nil {
		return c
	}
	cb := g.b.Computation(name)
	a, b := cb.Parameter(hlo.ArrayShape(t)), cb.Parameter(hlo.ArrayShape(t))
	cb.Op(op, a, b)
	g.comps[name] = settle(cb.Computation())
	return g.comps[name]
}

// comparator is a sort comparator over n operands of types ts, comparing
// the first operand's values with direction dir.
func (g *gen) comparator(ts []hlo.ElementType, dir string, total bool) *hlo.Computation {
	name := fmt.Sprintf("cmp_%s_%s_%v", dir, joinTypes(ts), total)
	if c := g.comps[name]; c != nil {
		return c
	}
	cb := g.b.Computation(name)
	var ps []*hlo.Instruction
	for _, t := range ts {
		ps = append(ps, cb.Parameter(hlo.ArrayShape(t)), cb.Parameter(hlo.ArrayShape(t)))
	}
	in := cb.Op(hlo.OpCompare, ps[0], ps[1]).Set("direction", dir)
	if total {
		in.Set("type", "TOTALORDER")
	}
	in.WithShape(hlo.ArrayShape(hlo.PRED))
	g.comps[name] = settle(cb.Computation())
	return g.comps[name]
}

func joinTypes(ts []hlo.ElementType) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, "_")
}

// reduceOp picks a reducer for t: sums and products, max and min (not
// of complex numbers), and and or for pred.
func (g *gen) reduceOp(t hlo.ElementType) hlo.Opcode {
	if t == hlo.PRED {
		return []hlo.Opcode{hlo.OpAnd, hlo.OpOr}[g.rng.IntN(2)]
	}
	if t.IsComplex() {
		return []hlo.Opcode{hlo.OpAdd, hlo.OpAdd, hlo.OpMultiply}[g.rng.IntN(3)]
	}
	ops := []hlo.Opcode{hlo.OpAdd, hlo.OpAdd, hlo.OpMaximum, hlo.OpMinimum, hlo.OpMultiply}
	if !t.IsFloat() {
		ops = append(ops, hlo.OpAnd, hlo.OpOr, hlo.OpXor)
	}
	return ops[g.rng.IntN(len(ops))]
}

// identity is op's neutral element, the usual init value (a random
// constant otherwise).
func (g *gen) identity(op hlo.Opcode, t hlo.ElementType) *gval {
	if g.rng.IntN(4) == 0 {
		return g.constant(t)
	}
	text := "0"
	switch op {
	case hlo.OpMultiply:
		text = "1"
	case hlo.OpMaximum:
		text = map[bool]string{true: "-inf", false: "0"}[t.IsFloat()]
		if t.Kind() == hlo.KindSigned {
			text = fmt.Sprint(int64(-1) << (t.Bits() - 1))
		}
	case hlo.OpMinimum:
		text = "inf"
		if !t.IsFloat() {
			text = fmt.Sprint(uint64(1)<<(t.Bits()-1) - 1)
			if t.Kind() == hlo.KindUnsigned {
				text = fmt.Sprint(^uint64(0) >> (64 - t.Bits()))
			}
		}
	case hlo.OpAnd:
		text = "-1"
		if t == hlo.PRED {
			text = "true"
		} else if t.Kind() == hlo.KindUnsigned {
			text = fmt.Sprint(^uint64(0) >> (64 - t.Bits()))
		}
	}
	if t == hlo.PRED && text == "0" {
		text = "false"
	}
	if t.IsComplex() {
		text = "(" + text + ", 0)"
	}
	l, err := hlo.ParseLiteral(text, hlo.ArrayShape(t))
	if err != nil {
		panic(fmt.Sprintf("hlotest: identity %q of %s: %v", text, t, err))
	}
	return g.keep(g.e.Constant(l), true, 3, 3, true)
}

// exactFold is what folding n values of v with op leaves exact.
func exactFold(op hlo.Opcode, v, init *gval, n int64) (exact bool, mag, frac int) {
	mag, frac = max(v.mag, init.mag), max(v.frac, init.frac)
	switch op {
	case hlo.OpAdd:
		mag += bitsFor(n + 1)
	case hlo.OpMultiply:
		if n > 3 {
			return false, 0, 0
		}
		mag, frac = mag*int(n+1), frac*int(n+1)
		if v.t().IsComplex() { // each product a sum of two
			mag += int(n)
		}
	}
	return v.exact && init.exact, mag, frac
}

func bitsFor(n int64) int {
	b := 0
	for ; n > 1; n = (n + 1) / 2 {
		b++
	}
	return b
}

func (g *gen) reduce() {
	v := g.any()
	if v.s().Rank() == 0 {
		return
	}
	t := v.t()
	op := g.reduceOp(t)
	var dims []int64
	n := int64(1)
	for i, d := range v.s().Dims {
		if g.rng.IntN(2) == 0 {
			dims = append(dims, int64(i))
			n *= d
		}
	}
	init := g.identity(op, t)
	exact, mag, frac := exactFold(op, v, init, n)
	if !exact && orderBound(t, n) {
		return
	}
	if len(dims) == 1 && g.rng.IntN(4) == 0 && v.exact && t != hlo.PRED && !t.IsComplex() {
		// A variadic argmax (argmin): the first index of the largest
		// (smallest) value, ties to the lower index.
		g.argReduce(v, dims)
		return
	}
	g.keep(g.op(hlo.OpReduce, v, init).Set("dimensions", list(dims)).Calls(g.reducer(op, t)).Instruction, exact, mag, frac, false)
}

// centered reduces v over some dimensions, spreads the result back
// over them and combines it with v, then reduces that over the same
// dimensions: softmax's and layer norm's shape along any axes (a max or
// a mean taken from each element, then summed), where a kernel computes
// the first reduction ahead of the second (a prologue, or fused into it);
// one time in two the second spread back and combined with each element
// too, where a row kernel computes both reductions first.
func (g *gen) centered() {
	ok := func(v *gval) bool {
		t := v.t()
		return v.s().Rank() > 0 && t != hlo.PRED && !t.IsComplex() && t.Bits() >= 8
	}
	v := g.pick(ok)
	if g.rng.IntN(3) == 0 {
		// Of enough rows for a row kernel (64 to 128, of 1 to 20).
		v = g.param(g.anyType(), []int64{64 + int64(g.rng.IntN(65)), 1 + int64(g.rng.IntN(20))})
	}
	if v == nil || !ok(v) {
		return
	}
	t := v.t()
	var dims, kept []int64
	if r := v.s().Rank(); r > 1 && g.rng.IntN(2) == 0 {
		// Over trailing dimensions, leading ones kept: rows, as a row
		// kernel computes them (softmax over the last axis).
		m := 1 + g.rng.IntN(r-1)
		for i := range r {
			if i < m {
				kept = append(kept, int64(i))
			} else {
				dims = append(dims, int64(i))
			}
		}
	} else {
		for i := range v.s().Rank() {
			if g.rng.IntN(2) == 0 {
				dims = append(dims, int64(i))
			} else {
				kept = append(kept, int64(i))
			}
		}
	}
	if len(dims) == 0 {
		dims, kept = kept[:1], kept[1:]
	}
	var keptDims []int64
	n := int64(1)
	for i, d := range v.s().Dims {
		if slices.Contains(kept, int64(i)) {
			keptDims = append(keptDims, d)
		} else {
			n *= d
		}
	}
	if orderBound(t, n) {
		return
	}
	first := []hlo.Opcode{hlo.OpMaximum, hlo.OpAdd}[g.rng.IntN(2)]
	m := g.op(hlo.OpReduce, v, g.identity(first, t)).Set("dimensions", list(dims)).Calls(g.reducer(first, t)).WithShape(hlo.ArrayShape(t, keptDims...)).Instruction
	mv := g.keep(m, false, 0, 0, false)
	mb := g.keep(g.op(hlo.OpBroadcast, mv).Set("dimensions", list(kept)).WithShape(v.s()).Instruction, false, 0, 0, false)
	combine := []hlo.Opcode{hlo.OpSubtract, hlo.OpMultiply, hlo.OpAdd}[g.rng.IntN(3)]
	d := g.keep(g.op(combine, v, mb).Instruction, false, 0, 0, false)
	second := []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum}[g.rng.IntN(2)]
	sv := g.keep(g.op(hlo.OpReduce, d, g.identity(second, t)).Set("dimensions", list(dims)).Calls(g.reducer(second, t)).WithShape(hlo.ArrayShape(t, keptDims...)).Instruction, false, 0, 0, false)
	if g.rng.IntN(2) == 0 {
		// And spread back and combined with each element (softmax's
		// division by the sum; layer norm's scaling): over rows, a
		// row kernel computing both reductions first.
		sb := g.keep(g.op(hlo.OpBroadcast, sv).Set("dimensions", list(kept)).WithShape(v.s()).Instruction, false, 0, 0, false)
		last := []hlo.Opcode{hlo.OpSubtract, hlo.OpMultiply, hlo.OpMaximum}[g.rng.IntN(3)]
		g.keep(g.op(last, d, sb).Instruction, false, 0, 0, false)
	}
}

// orderBound reports whether an inexact fold of n values of type t has
// results that hang on the order of its steps beyond what the
// comparison's other evaluations show: a small float type's sums
// saturate or round to a coarse grid at every step, and a device folds
// long rows in lanes (8 and more elements per output), in an order of
// its own.
func orderBound(t hlo.ElementType, n int64) bool {
	return hlo.IsMiniFloat(t) && n > 8
}

func (g *gen) argReduce(v *gval, dims []int64) {
	t := v.t()
	dir := []string{"GT", "LT"}[g.rng.IntN(2)]
	name := fmt.Sprintf("arg_%s_%s", dir, t)
	c := g.comps[name]
	if c == nil {
		cb := g.b.Computation(name)
		av, ai := cb.Parameter(hlo.ArrayShape(t)), cb.Parameter(hlo.ArrayShape(hlo.S32))
		bv, bi := cb.Parameter(hlo.ArrayShape(t)), cb.Parameter(hlo.ArrayShape(hlo.S32))
		// a is kept when it is NaN and b is not or comes later, or when
		// neither is NaN and a is better or ties at a lower index: NaN
		// wins, as in jnp.argmax, and the fold is commutative and
		// associative, so its order does not show.
		pred := hlo.ArrayShape(hlo.PRED)
		cmp := func(x, y *hlo.Instruction, dir string) *hlo.Instruction {
			return cb.Op(hlo.OpCompare, x, y).Set("direction", dir).WithShape(pred).Instruction
		}
		op := func(o hlo.Opcode, xs ...*hlo.Instruction) *hlo.Instruction { return cb.Op(o, xs...).Instruction }
		aNaN, bNaN := cmp(av, av, "NE"), cmp(bv, bv, "NE")
		lower := cmp(ai, bi, "LT")
		nanWins := op(hlo.OpAnd, aNaN, op(hlo.OpOr, op(hlo.OpNot, bNaN), lower))
		better := op(hlo.OpOr, cmp(av, bv, dir), op(hlo.OpAnd, cmp(av, bv, "EQ"), lower))
		numWins := op(hlo.OpAnd, op(hlo.OpNot, op(hlo.OpOr, aNaN, bNaN)), better)
		keepA := cb.Op(hlo.OpOr, nanWins, numWins)
		rv := cb.Op(hlo.OpSelect, keepA.Instruction, av, bv)
		ri := cb.Op(hlo.OpSelect, keepA.Instruction, ai, bi)
		cb.Op(hlo.OpTuple, rv.Instruction, ri.Instruction)
		c = settle(cb.Computation())
		g.comps[name] = c
	}
	idx := g.keep(g.e.Op(hlo.OpIota).Set("iota_dimension", fmt.Sprint(dims[0])).WithShape(hlo.ArrayShape(hlo.S32, v.s().Dims...)).Instruction, true, 0, 0, false)
	initV := g.identity(map[string]hlo.Opcode{"GT": hlo.OpMaximum, "LT": hlo.OpMinimum}[dir], t)
	initI := g.keep(g.e.Constant(hlo.ScalarLiteral(hlo.S32, 0)), true, 0, 0, false)
	r := g.keep(g.op(hlo.OpReduce, v, idx, initV, initI).Set("dimensions", list(dims)).Calls(c).Instruction, true, 0, 0, false)
	for i := 0; i < 2; i++ {
		g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", fmt.Sprint(i)).Instruction, v.exact, v.mag, v.frac, false)
	}
}

func (g *gen) dot() {
	v := g.pick(func(v *gval) bool { return v.t() != hlo.PRED && v.s().Rank() >= 1 && v.s().Rank() <= 3 })
	if v == nil {
		return
	}
	t := v.t()
	r := v.s().Rank()
	// lhs [batch..., m..., k]: the last dimension contracts with the
	// rhs's first after its batch; a rank-3 operand batches its first.
	batch := 0
	if r == 3 {
		batch = 1
	}
	k := v.s().Dims[r-1]
	rdims := append([]int64{}, v.s().Dims[:batch]...)
	rdims = append(rdims, k)
	if g.rng.IntN(3) > 0 {
		rdims = append(rdims, 1+int64(g.rng.IntN(5)))
	}
	// A ragged-dot a quarter of the time: its rows (a free dimension of
	// the lhs, when it has one; the rhs then has a group dimension
	// first) or its contracting dimension split into groups of sizes
	// that may be empty or run past the end, the same for every batch
	// or each batch's own.
	ragged := g.rng.IntN(4) == 0
	rows := ragged && r-batch >= 2 && g.rng.IntN(2) == 0
	groups := 1 + int64(g.rng.IntN(3))
	shift := 0 // the rhs's dimensions after a group dimension
	if rows {
		rdims = append([]int64{groups}, rdims...)
		shift = 1
	}
	w := g.like(t, rdims, v.exact)
	op := hlo.OpDot
	var sizes *gval
	if ragged {
		op = hlo.OpRaggedDot
		n := v.s().Dims[r-1] // the ragged dimension's length
		if rows {
			n = v.s().Dims[r-2]
		}
		// Half the time with a batch dimension, sizes of their own for
		// each batch (group_sizes [b, g]).
		one := func() string {
			lit := make([]string, groups)
			for i := range lit {
				lit[i] = fmt.Sprint(g.rng.IntN(int(n) + 2))
			}
			return "{" + strings.Join(lit, ", ") + "}"
		}
		text, shape := one(), hlo.ArrayShape(hlo.S32, groups)
		if batch == 1 && v.s().Dims[0] > 0 && g.rng.IntN(2) == 0 {
			b := v.s().Dims[0]
			rows := make([]string, b)
			rows[0] = text
			for i := 1; i < len(rows); i++ {
				rows[i] = one()
			}
			text, shape = "{"+strings.Join(rows, ", ")+"}", hlo.ArrayShape(hlo.S32, b, groups)
		}
		l, err := hlo.ParseLiteral(text, shape)
		if err != nil {
			panic(fmt.Sprintf("hlotest: group sizes %s: %v", text, err))
		}
		sizes = g.keep(g.e.Constant(l), true, 0, 0, false)
	}
	ops := []*gval{v, w}
	if sizes != nil {
		ops = append(ops, sizes)
	}
	in := g.op(op, ops...).Set("lhs_contracting_dims", fmt.Sprintf("{%d}", r-1)).Set("rhs_contracting_dims", fmt.Sprintf("{%d}", batch+shift))
	if batch == 1 {
		in.Set("lhs_batch_dims", "{0}").Set("rhs_batch_dims", fmt.Sprintf("{%d}", shift))
	}
	switch {
	case rows:
		in.Set("lhs_ragged_dims", fmt.Sprintf("{%d}", r-2)).Set("rhs_group_dims", "{0}")
	case ragged:
		in.Set("lhs_ragged_dims", fmt.Sprintf("{%d}", r-1))
	}
	s, err := hlo.InferShape(in.Instruction)
	if err != nil {
		panic(fmt.Sprintf("hlotest: the generator made an invalid %s: %v", op, err))
	}
	in.WithShape(*s)
	mag := v.mag + w.mag + bitsFor(k+1)
	if t.IsComplex() {
		mag++
	}
	g.keep(in.Instruction, v.exact && w.exact, mag, v.frac+w.frac, false)
}

// index is a scalar integer for a computed index: a constant (out of
// range now and then) or a reduction of an integer value.
func (g *gen) index() *gval {
	if v := g.pick(func(v *gval) bool { return v.t() == hlo.S32 && v.s().Rank() == 0 }); v != nil && g.rng.IntN(2) == 0 {
		return v
	}
	return g.keep(g.e.Constant(hlo.ScalarLiteral(hlo.S32, float64(g.rng.IntN(9)-2))), true, 0, 0, false)
}

func (g *gen) dynamicSlice() {
	v := g.any()
	ops := []*gval{v}
	var sizes []int64
	for _, d := range v.s().Dims {
		ops = append(ops, g.index())
		sizes = append(sizes, int64(g.rng.IntN(int(d)+1)))
	}
	g.same(v, g.op(hlo.OpDynamicSlice, ops...).Set("dynamic_slice_sizes", list(sizes)).Instruction)
}

func (g *gen) dynamicUpdateSlice() {
	v := g.any()
	var udims []int64
	for _, d := range v.s().Dims {
		udims = append(udims, int64(g.rng.IntN(int(d)+1)))
	}
	u := g.like(v.t(), udims, false)
	ops := []*gval{v, u}
	for range v.s().Dims {
		ops = append(ops, g.index())
	}
	g.keep(g.op(hlo.OpDynamicUpdateSlice, ops...).Instruction, v.exact && u.exact, max(v.mag, u.mag), max(v.frac, u.frac), v.raw && u.raw)
}

// indices is an s32 array of n index vectors of length w: a parameter
// (any values: gathers clamp, scatters skip what is out of bounds), or
// an iota (in bounds, distinct).
func (g *gen) indices(n, w int64) *gval {
	if g.rng.IntN(3) == 0 {
		return g.keep(g.e.Op(hlo.OpIota).Set("iota_dimension", "0").WithShape(hlo.ArrayShape(hlo.S32, n, w)).Instruction, true, 0, 0, false)
	}
	return g.like(hlo.S32, []int64{n, w}, true)
}

func (g *gen) gather() {
	v := g.pick(func(v *gval) bool { return (v.s().Rank() == 2 || v.s().Rank() == 3) && v.s().Dims[0] > 0 })
	if v == nil {
		return
	}
	dims := v.s().Dims
	n := 1 + int64(g.rng.IntN(4))
	if v.s().Rank() == 2 {
		// Rows of v: x[idx[i], :].
		idx := g.indices(n, 1)
		g.same(v, g.op(hlo.OpGather, v, idx).Set("offset_dims", "{1}").Set("collapsed_slice_dims", "{0}").Set("start_index_map", "{0}").Set("index_vector_dim", "1").Set("slice_sizes", fmt.Sprintf("{1,%d}", dims[1])).Instruction)
		return
	}
	// Windows of v's last two dimensions at 2-d start points.
	idx := g.indices(n, 2)
	s1, s2 := int64(g.rng.IntN(int(dims[1])+1)), int64(g.rng.IntN(int(dims[2])+1))
	g.same(v, g.op(hlo.OpGather, v, idx).Set("offset_dims", "{1,2,3}").Set("collapsed_slice_dims", "{}").Set("start_index_map", "{1,2}").Set("index_vector_dim", "1").Set("slice_sizes", fmt.Sprintf("{%d,%d,%d}", dims[0], s1, s2)).Instruction)
}

func (g *gen) scatter() {
	v := g.pick(func(v *gval) bool { return v.s().Rank() == 2 && v.s().Dims[0] > 0 })
	if v == nil {
		return
	}
	t := v.t()
	n := 1 + int64(g.rng.IntN(4))
	// Rows of updates into rows of v: combined by a commutative reducer
	// (indices may repeat), or replacing at distinct indices (an iota).
	op := g.reduceOp(t)
	idx := g.indices(n, 1)
	u := g.like(t, []int64{n, v.s().Dims[1]}, v.exact)
	if idx.in.Op == hlo.OpIota && g.rng.IntN(2) == 0 && n <= v.s().Dims[0] {
		op = hlo.OpInvalid // replace
	}
	var comp *hlo.Computation
	if op == hlo.OpInvalid {
		name := "replace_" + t.String()
		if comp = g.comps[name]; comp == nil {
			cb := g.b.Computation(name)
			cb.Parameter(hlo.ArrayShape(t))
			cb.SetRoot(cb.Parameter(hlo.ArrayShape(t)))
			comp = settle(cb.Computation())
			g.comps[name] = comp
		}
	} else {
		comp = g.reducer(op, t)
	}
	exact, mag, frac := exactFold(op, u, v, n)
	if op == hlo.OpInvalid {
		exact, mag, frac = v.exact && u.exact, max(v.mag, u.mag), max(v.frac, u.frac)
	}
	in := g.op(hlo.OpScatter, v, idx, u).Set("update_window_dims", "{1}").Set("inserted_window_dims", "{0}").Set("scatter_dims_to_operand_dims", "{0}").Set("index_vector_dim", "1").Calls(comp)
	if op == hlo.OpInvalid {
		in.Set("unique_indices", "true")
	}
	g.keep(in.Instruction, exact, mag, frac, false)
}

func (g *gen) sort() {
	// Keys are ordered (not complex) and exact (a rounding may swap two).
	v := g.pick(func(v *gval) bool { return v.s().Rank() >= 1 && !v.t().IsComplex() && (v.exact || !v.t().IsFloat()) })
	if v == nil {
		return
	}
	d := g.rng.IntN(v.s().Rank())
	dir := []string{"LT", "GT"}[g.rng.IntN(2)]
	// Float keys compare in total order: with NaN among them a plain
	// comparison is no strict weak order, and the sorted result is the
	// algorithm's choice (as in XLA, and why jax sorts so).
	total := v.t().IsFloat()
	if g.rng.IntN(2) == 0 {
		in := g.op(hlo.OpSort, v).Set("dimensions", fmt.Sprintf("{%d}", d)).Calls(g.comparator([]hlo.ElementType{v.t()}, dir, total))
		if g.rng.IntN(2) == 0 {
			in.Set("is_stable", "true")
		}
		g.same(v, in.Instruction)
		return
	}
	// Keys and a payload: the payload's order shows stability.
	w := g.like(g.anyType(), v.s().Dims, false)
	in := g.op(hlo.OpSort, v, w).Set("dimensions", fmt.Sprintf("{%d}", d)).Set("is_stable", "true").Calls(g.comparator([]hlo.ElementType{v.t(), w.t()}, dir, total))
	r := g.keep(in.Instruction, true, 0, 0, false)
	g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", "0").Instruction, v.exact, v.mag, v.frac, v.raw)
	g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", "1").Instruction, w.exact, w.mag, w.frac, w.raw)
}

func (g *gen) reduceWindow() {
	v := g.pick(func(v *gval) bool { return v.s().Rank() >= 1 })
	if v == nil {
		return
	}
	t := v.t()
	op := g.reduceOp(t)
	var size, stride, pad []string
	n := int64(1)
	for _, d := range v.s().Dims {
		lo, hi := int64(g.rng.IntN(2)), int64(g.rng.IntN(2))
		if d+lo+hi == 0 {
			lo = 1
		}
		w := 1 + int64(g.rng.IntN(int(min(d+lo+hi, 3))))
		n *= w
		size = append(size, fmt.Sprint(w))
		stride = append(stride, fmt.Sprint(1+g.rng.IntN(2)))
		pad = append(pad, fmt.Sprintf("%d_%d", lo, hi))
	}
	init := g.identity(op, t)
	exact, mag, frac := exactFold(op, v, init, n)
	win := fmt.Sprintf("{size=%s stride=%s pad=%s}", strings.Join(size, "x"), strings.Join(stride, "x"), strings.Join(pad, "x"))
	g.keep(g.op(hlo.OpReduceWindow, v, init).Set("window", win).Calls(g.reducer(op, t)).Instruction, exact, mag, frac, false)
}

// selectAndScatter is a pooling's gradient: values of the windows'
// shape scattered (added, or the largest kept) to the element each
// window selects (its first largest, or smallest), over windows that
// overlap, leave gaps or lie in padding.
func (g *gen) selectAndScatter() {
	v := g.pick(func(v *gval) bool {
		t := v.t()
		return v.s().Rank() >= 1 && t != hlo.PRED && !t.IsComplex() && v.exact
	})
	if v == nil {
		return
	}
	t := v.t()
	var size, stride, pad []string
	windows := make([]int64, v.s().Rank())
	holding := int64(1) // the most windows that hold one element
	for i, d := range v.s().Dims {
		lo, hi := int64(g.rng.IntN(2)), int64(g.rng.IntN(2))
		if d+lo+hi == 0 {
			lo = 1
		}
		w := 1 + int64(g.rng.IntN(int(min(d+lo+hi, 3))))
		st := 1 + int64(g.rng.IntN(3))
		windows[i] = (d+lo+hi-w)/st + 1
		holding *= (w + st - 1) / st
		size, stride = append(size, fmt.Sprint(w)), append(stride, fmt.Sprint(st))
		pad = append(pad, fmt.Sprintf("%d_%d", lo, hi))
	}
	src := g.like(t, windows, true)
	op := hlo.OpAdd
	if g.rng.IntN(3) == 0 {
		op = hlo.OpMaximum
	}
	dir := []string{"GE", "GT", "LE"}[g.rng.IntN(3)]
	win := fmt.Sprintf("{size=%s stride=%s pad=%s}", strings.Join(size, "x"), strings.Join(stride, "x"), strings.Join(pad, "x"))
	in := g.op(hlo.OpSelectAndScatter, v, src, g.identity(op, t)).Set("window", win).
		Calls(g.comparator([]hlo.ElementType{t}, dir, false), g.reducer(op, t))
	mag := src.mag
	if op == hlo.OpAdd {
		mag += bitsFor(holding + 1)
	}
	g.keep(in.Instruction, src.exact, mag, src.frac, false)
}

func (g *gen) convolution() {
	t := []hlo.ElementType{hlo.F32, hlo.F32, hlo.S32, hlo.F16, hlo.BF16, hlo.F64, hlo.C64, hlo.C128}[g.rng.IntN(8)]
	if !slices.Contains(g.types, t) {
		return
	}
	// NHWC input, HWIO kernel: an implicit GEMM on the device.
	nb, h, w, c, o := 1+int64(g.rng.IntN(2)), 1+int64(g.rng.IntN(5)), 1+int64(g.rng.IntN(5)), 1+int64(g.rng.IntN(3)), 1+int64(g.rng.IntN(3))
	kh, kw := 1+int64(g.rng.IntN(int(min(h, 3)))), 1+int64(g.rng.IntN(int(min(w, 3))))
	groups := int64(1)
	if g.rng.IntN(3) == 0 { // depthwise: a group per input feature
		groups, o = c, c
	}
	x := g.like(t, []int64{nb, h, w, c}, true)
	k := g.like(t, []int64{kh, kw, c / groups, o}, true)
	win := fmt.Sprintf("{size=%dx%d pad=%d_%dx%d_%d}", kh, kw, g.rng.IntN(2), g.rng.IntN(2), g.rng.IntN(2), g.rng.IntN(2))
	if g.rng.IntN(2) == 0 {
		// Strides, a dilated input (a strided convolution's gradient)
		// and a dilated kernel; where the dilated kernel outgrows the
		// input, the plain window above.
		var st, lo, hi, ld, rd [2]int64
		fits := true
		for i, n := range [][2]int64{{h, kh}, {w, kw}} {
			st[i], ld[i], rd[i] = 1+int64(g.rng.IntN(2)), 1+int64(g.rng.IntN(3)), 1+int64(g.rng.IntN(2))
			lo[i], hi[i] = int64(g.rng.IntN(3)), int64(g.rng.IntN(3))
			fits = fits && lo[i]+(n[0]-1)*ld[i]+1+hi[i] >= (n[1]-1)*rd[i]+1
		}
		if fits {
			win = fmt.Sprintf("{size=%dx%d stride=%dx%d pad=%d_%dx%d_%d lhs_dilate=%dx%d rhs_dilate=%dx%d}", kh, kw, st[0], st[1],
				lo[0], hi[0], lo[1], hi[1], ld[0], ld[1], rd[0], rd[1])
		}
	}
	in := g.op(hlo.OpConvolution, x, k).Set("window", win).Set("dim_labels", "b01f_01io->b01f")
	if groups > 1 {
		in.Set("feature_group_count", fmt.Sprint(groups))
	}
	s, err := hlo.InferShape(in.Instruction)
	if err != nil {
		panic(fmt.Sprintf("hlotest: the generator made an invalid convolution: %v", err))
	}
	in.WithShape(*s)
	mag := x.mag + k.mag + bitsFor(kh*kw*c/groups+1)
	if t.IsComplex() {
		mag++
	}
	g.keep(in.Instruction, x.exact && k.exact, mag, x.frac+k.frac, false)
}

// fft transforms a value's trailing one to three dimensions: FFT or IFFT
// of a complex value, RFFT of an f32 or f64 one into its half spectrum,
// IRFFT of a complex one back into a real signal of odd or even length.
// Its results are never exact (the twiddles are irrational), and its
// rounding is relative to the whole transformed slice (eval.RunNudged
// moves them so).
func (g *gen) fft() {
	v := g.pick(func(v *gval) bool {
		t := v.t()
		return v.s().Rank() >= 1 && (t.IsComplex() || t == hlo.F32 || t == hlo.F64)
	})
	if v == nil {
		return
	}
	dims := v.s().Dims
	r := len(dims)
	lens := slices.Clone(dims[r-1-g.rng.IntN(min(3, r)):])
	if slices.Contains(lens, 0) {
		return
	}
	typ := "RFFT"
	if v.t().IsComplex() {
		typ = []string{"FFT", "IFFT", "IRFFT"}[g.rng.IntN(3)]
	}
	if last := len(lens) - 1; typ == "IRFFT" {
		// Both signal lengths whose half spectrum has m values.
		m := lens[last]
		lens[last] = 2*m - 1
		if m > 1 && g.rng.IntN(2) == 0 {
			lens[last] = 2 * (m - 1)
		}
	}
	g.keep(g.op(hlo.OpFft, v).Set("fft_type", typ).Set("fft_length", list(lens)).Instruction, false, 0, 0, false)
}

// linalgType is a type the triangular solve and Cholesky moves take:
// one of the program's f32, f64, c64 and c128, or Invalid.
func (g *gen) linalgType() hlo.ElementType {
	var ts []hlo.ElementType
	for _, t := range g.types {
		if t == hlo.F32 || t == hlo.F64 || t == hlo.C64 || t == hlo.C128 {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return hlo.Invalid
	}
	return ts[g.rng.IntN(len(ts))]
}

// squareBatch is the shape of a batch of square matrices: no batch or
// one of 1 to 3, n from 1 to 5 (0 now and then).
func (g *gen) squareBatch() []int64 {
	var dims []int64
	if g.rng.IntN(2) == 0 {
		dims = append(dims, 1+int64(g.rng.IntN(3)))
	}
	n := 1 + int64(g.rng.IntN(5))
	if g.rng.IntN(30) == 0 {
		n = 0
	}
	return append(dims, n, n)
}

// scalarOf is a constant v of type t (a complex one's real part) spread
// to dims.
func (g *gen) scalarOf(t hlo.ElementType, v float64, dims []int64) *gval {
	return g.spread(g.constantOf(t, v, 0, 7, 4), dims)
}

// dominant is a matrix batch of type t and shape dims whose diagonal is
// another value's plus 64: the generator's values are at most 8 in each
// part, so of up to 5 rows, the matrix (or the Hermitian one either of
// its triangles makes) is diagonally dominant, and positive definite,
// and its solutions are what rounding moves little.
func (g *gen) dominant(t hlo.ElementType, dims []int64) *gval {
	a := g.like(t, dims, true)
	r := len(dims)
	eye := func(d int) *gval {
		return g.keep(g.e.Op(hlo.OpIota).Set("iota_dimension", fmt.Sprint(d)).WithShape(hlo.ArrayShape(hlo.S32, dims...)).Instruction, true, 3, 0, true)
	}
	diag := g.keep(g.op(hlo.OpCompare, eye(r-2), eye(r-1)).Set("direction", "EQ").WithShape(hlo.ArrayShape(hlo.PRED, dims...)).Instruction, true, 0, 0, false)
	big := g.keep(g.op(hlo.OpAdd, a, g.scalarOf(t, 64, dims)).Instruction, a.exact, max(a.mag, 7)+1, a.frac, false)
	return g.keep(g.op(hlo.OpSelect, diag, big, a).Instruction, a.exact && big.exact, big.mag, a.frac, false)
}

// triangularSolve solves a triangular system with any of XLA's options:
// a left or right side, a lower or upper triangle, a transpose or an
// adjoint, a unit diagonal or not. The matrix is diagonally dominant
// (dominant), or with a unit diagonal scaled by 1/16 (exactly), so that
// its solutions stay near what rounding explains.
func (g *gen) triangularSolve() {
	t := g.linalgType()
	if t == hlo.Invalid {
		return
	}
	dims := g.squareBatch()
	r := len(dims)
	unit := g.rng.IntN(3) == 0
	var a *gval
	if unit {
		x := g.like(t, dims, true)
		a = g.keep(g.op(hlo.OpMultiply, x, g.scalarOf(t, 0.0625, dims)).Instruction, x.exact, x.mag, x.frac+4, false)
	} else {
		a = g.dominant(t, dims)
	}
	left := g.rng.IntN(2) == 0
	bdims := slices.Clone(dims)
	m := 1 + int64(g.rng.IntN(4))
	if left {
		bdims[r-1] = m
	} else {
		bdims[r-2] = m
	}
	b := g.like(t, bdims, false)
	in := g.op(hlo.OpTriangularSolve, a, b).Set("left_side", fmt.Sprint(left)).Set("lower", fmt.Sprint(g.rng.IntN(2) == 0)).
		Set("unit_diagonal", fmt.Sprint(unit)).Set("transpose_a", []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}[g.rng.IntN(3)])
	g.keep(in.Instruction, false, 0, 0, false)
}

// cholesky factors a positive definite matrix (dominant), from its lower
// or its upper triangle.
func (g *gen) cholesky() {
	t := g.linalgType()
	if t == hlo.Invalid {
		return
	}
	a := g.dominant(t, g.squareBatch())
	g.keep(g.op(hlo.OpCholesky, a).Set("lower", fmt.Sprint(g.rng.IntN(2) == 0)).Instruction, false, 0, 0, false)
}

// batchNorm is one of XLA's batch-norm ops over a float value of rank 1
// to 4, its feature dimension any one: training (the batch's mean and
// variance from the value), inference (a mean and a variance given, the
// variance a square plus 1/8 so that it is positive) or grad (the same
// statistics, and a gradient of the value's shape); epsilon 1/1000.
// Each result is a tuple element or the value, none exact (a square
// root and divisions round).
func (g *gen) batchNorm() {
	var ts []hlo.ElementType
	for _, t := range g.types {
		if t == hlo.F16 || t == hlo.BF16 || t == hlo.F32 || t == hlo.F64 {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return
	}
	t := ts[g.rng.IntN(len(ts))]
	dims := g.shape()
	if len(dims) == 0 {
		dims = []int64{1 + int64(g.rng.IntN(4))}
	}
	fi := g.rng.IntN(len(dims))
	fdims := []int64{dims[fi]}
	x := g.like(t, dims, false)
	vec := func() *gval { return g.like(t, fdims, false) }
	variance := func() *gval {
		v := vec()
		sq := g.keep(g.op(hlo.OpMultiply, v, v).Instruction, false, 0, 0, false)
		return g.keep(g.op(hlo.OpAdd, sq, g.scalarOf(t, 0.125, fdims)).Instruction, false, 0, 0, false)
	}
	var in *hlo.InstBuilder
	switch g.rng.IntN(3) {
	case 0:
		in = g.op(hlo.OpBatchNormTraining, x, vec(), vec())
	case 1:
		in = g.op(hlo.OpBatchNormInference, x, vec(), vec(), vec(), variance())
	default:
		in = g.op(hlo.OpBatchNormGrad, x, vec(), vec(), variance(), g.like(t, dims, false))
	}
	in.Set("epsilon", "0.001").Set("feature_index", fmt.Sprint(fi))
	r := g.keep(in.Instruction, false, 0, 0, false)
	if !r.in.Shape.IsTuple() {
		return
	}
	for i := range r.in.Shape.Tuple {
		g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", fmt.Sprint(i)).Instruction, false, 0, 0, false)
	}
}

// loop is a fori_loop: a counter to a small bound carrying one to three
// values (and one time in four a vector of 65 to 320 elements), its
// body a random program of the counter and the state (a loop of the
// loop's own, a conditional, a constant where the entry would take a
// new parameter). Each value the body returns for a state
// element is one the generator knows no less of than of that element
// (inBody): so the facts hold on every trip, and exact values stay
// exact, and the discontinuous ops that read them see what the
// evaluator sees.
func (g *gen) loop() {
	if g.depth >= 2 {
		return
	}
	vs := []*gval{g.any()}
	for len(vs) < 3 && g.rng.IntN(2) == 0 {
		vs = append(vs, g.any())
	}
	if g.rng.IntN(4) == 0 {
		// A vector wider than a device loop's registers (65 to 320
		// elements): a workgroup loop's state.
		t := g.types[g.rng.IntN(len(g.types))]
		vs = append(vs, g.like(t, []int64{65 + int64(g.rng.IntN(256))}, false))
	}
	g.loops++
	shapes := []hlo.Shape{hlo.ArrayShape(hlo.S32)}
	for _, v := range vs {
		shapes = append(shapes, v.s())
	}
	name := g.loops
	body := g.b.Computation(fmt.Sprintf("body_%d", name))
	sub := g.inner(body)
	bp := body.Parameter(hlo.TupleShape(shapes...))
	bi := sub.keep(body.Op(hlo.OpGetTupleElement, bp).Set("index", "0").Instruction, true, 0, 0, false)
	// What the body knows of each state element.
	facts := make([]*gval, len(vs))
	for j, v := range vs {
		f := g.loosened(v)
		facts[j] = sub.keep(body.Op(hlo.OpGetTupleElement, bp).Set("index", fmt.Sprint(j+1)).Instruction, f.exact, f.mag, f.frac, false)
	}
	for range 2 + g.rng.IntN(9) {
		sub.step()
	}
	one := body.Constant(hlo.ScalarLiteral(hlo.S32, 1))
	outs := []*hlo.Instruction{body.Op(hlo.OpAdd, bi.in, one).Instruction}
	for _, f := range facts {
		next := sub.pick(func(w *gval) bool { return inBody(w, f) })
		if next == nil {
			next = f
		}
		outs = append(outs, next.in)
	}
	// The body's last value leaves the loop too, in one more state
	// element that the body does not read (a constant before the first
	// trip), so that the work before it is not dead.
	var last, lastInit *gval
	if l := sub.vals[len(sub.vals)-1]; !slices.Contains(outs, l.in) {
		last = l
		lastInit = g.spread(g.constant(l.t()), l.s().Dims)
		shapes = append(shapes, l.s())
		outs = append(outs, l.in)
	}
	state := hlo.TupleShape(shapes...)
	bp.Shape = state
	body.Op(hlo.OpTuple, outs...)
	g.loops = sub.loops
	settle(body.Computation())

	cond := g.b.Computation(fmt.Sprintf("cond_%d", name))
	cp := cond.Parameter(state)
	ci := cond.Op(hlo.OpGetTupleElement, cp).Set("index", "0")
	cn := cond.Constant(hlo.ScalarLiteral(hlo.S32, float64(g.rng.IntN(5))))
	more := cond.Op(hlo.OpCompare, ci.Instruction, cn).Set("direction", "LT").WithShape(hlo.ArrayShape(hlo.PRED))
	// Half the time the loop also stops early on its state: while an
	// element of a scalar that every trip knows exactly (an integer, an
	// exact float) compares with a constant as drawn; the counter still
	// bounds the trips.
	if g.rng.IntN(2) == 0 {
		var cands []int
		for j, f := range facts {
			if t := f.t(); f.s().Rank() == 0 && t != hlo.PRED && !t.IsComplex() && (f.exact || !rounds(t)) {
				cands = append(cands, j)
			}
		}
		if len(cands) > 0 {
			j := cands[g.rng.IntN(len(cands))]
			x := cond.Op(hlo.OpGetTupleElement, cp).Set("index", fmt.Sprint(j+1))
			c := cond.Constant(hlo.ScalarLiteral(facts[j].t(), g.scalarValue(facts[j].t())))
			cmp := cond.Op(hlo.OpCompare, x.Instruction, c).Set("direction", directions[g.rng.IntN(len(directions))]).WithShape(hlo.ArrayShape(hlo.PRED))
			cond.Op(hlo.OpAnd, more.Instruction, cmp.Instruction)
		}
	}
	settle(cond.Computation())

	zero := g.keep(g.e.Constant(hlo.ScalarLiteral(hlo.S32, 0)), true, 0, 0, false)
	ins := []*hlo.Instruction{zero.in}
	for _, v := range vs {
		ins = append(ins, v.in)
	}
	if last != nil {
		ins = append(ins, lastInit.in)
	}
	init := g.e.Op(hlo.OpTuple, ins...)
	init.Shape, init.ShapeInferred = state, false
	w := g.e.Op(hlo.OpWhile, init.Instruction).Calls(cond.Computation(), body.Computation())
	w.Shape, w.ShapeInferred = state, false
	out := func(j int, exact bool, mag, frac int) {
		g.keep(g.e.Op(hlo.OpGetTupleElement, w.Instruction).Set("index", fmt.Sprint(j)).Instruction, exact, mag, frac, false)
	}
	for j, f := range facts {
		out(j+1, f.exact, f.mag, f.frac)
	}
	if last != nil {
		// The initial constant or the last trip's value, computed from
		// a state the facts hold of.
		out(len(shapes)-1, last.exact && lastInit.exact, max(last.mag, lastInit.mag), max(last.frac, lastInit.frac))
	}
}

// inner is a generator of computation c, which g's calls: values of
// its own, a level deeper.
func (g *gen) inner(c *hlo.CompBuilder) *gen {
	sub := *g
	sub.e, sub.vals, sub.depth = c, nil, g.depth+1
	return &sub
}

// loosened is what a loop body or a branch promises of a value it
// returns in v's place: v's facts, or (always where v is inexact, else
// half the time) only that it is a value of at most 16 times v's
// magnitude, which more of its values satisfy.
func (g *gen) loosened(v *gval) *gval {
	f := *v
	f.raw = false
	if !v.exact || g.rng.IntN(2) == 0 {
		f.exact, f.mag = false, v.mag+4
	}
	return &f
}

// inBody reports whether w may be a loop body's next value of a state
// element known as f: of its type and shape, and, for floats and
// complex numbers, exact where f is, of no larger magnitude, and (where
// exact) no more fraction bits.
func inBody(w, f *gval) bool {
	if w.t() != f.t() || !slices.Equal(w.s().Dims, f.s().Dims) {
		return false
	}
	if !rounds(f.t()) {
		return true
	}
	if f.exact {
		return w.exact && w.mag <= f.mag && w.frac <= f.frac
	}
	return w.mag <= f.mag
}

// conditional picks one of two branches by a pred or one of three by an
// index, each a random program of the one value it takes (as a loop's
// body is, a constant where the entry would take a new parameter) whose
// result the generator knows no less of than of the conditional's
// (inBody); where the program made no such value, an op of the value.
func (g *gen) conditional() {
	v := g.any()
	t, s := v.t(), v.s()
	g.loops++
	name := g.loops
	n := 2
	var sel *gval
	if g.rng.IntN(2) == 0 {
		sel = g.predLike(nil)
	} else {
		n = 3
		sel = g.index()
	}
	f := g.loosened(v) // what is known of the result
	var branches []*hlo.Computation
	for i := 0; i < n; i++ {
		br := g.b.Computation(fmt.Sprintf("branch_%d_%d", name, i))
		sub := g.inner(br)
		x := sub.keep(br.Parameter(s), v.exact, v.mag, v.frac, false)
		if g.depth < 2 {
			for range g.rng.IntN(7) {
				sub.step()
			}
		}
		g.loops = sub.loops
		out := sub.pick(func(w *gval) bool { return w != x && inBody(w, f) })
		if out == nil {
			op := []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpCopy}[i]
			switch {
			case t == hlo.PRED && i == 0:
				op = hlo.OpNot
			case t.Kind() == hlo.KindUnsigned || t == hlo.PRED:
				op = hlo.OpCopy
			case t.IsComplex() && op == hlo.OpAbs: // a complex abs is real
				op = hlo.OpNegate
			}
			out = sub.keep(br.Op(op, x.in).Instruction, v.exact, v.mag, v.frac, false)
		}
		br.SetRoot(out.in)
		branches = append(branches, settle(br.Computation()))
	}
	ops := []*gval{sel}
	for range branches {
		ops = append(ops, v)
	}
	g.keep(g.op(hlo.OpConditional, ops...).Calls(branches...).WithShape(s).Instruction, f.exact, f.mag, f.frac, false)
}

// call applies a binary op to a value and a partner in a called
// computation, which the compiler inlines (as XLA's CallInliner does).
func (g *gen) call() {
	v := g.any()
	t, s := v.t(), v.s()
	op := g.reduceOp(t)
	w := g.partner(v, v.exact)
	g.loops++
	cb := g.b.Computation(fmt.Sprintf("called_%d", g.loops))
	cb.Op(op, cb.Parameter(s), cb.Parameter(s))
	exact, mag, frac := exactFold(op, v, w, 1)
	g.keep(g.op(hlo.OpCall, v, w).Calls(settle(cb.Computation())).WithShape(s).Instruction, exact, mag, frac, false)
}

// scheduled makes one of XLA's scheduled forms, which a program of one
// device computes where it stands: an async-start/-update/-done pair
// around a call like call's, a copy-start/-done, an add-dependency on
// an after-all token, or an all-reduce-start/-done of a group of one.
func (g *gen) scheduled() {
	v := g.any()
	t, s := v.t(), v.s()
	switch g.rng.IntN(4) {
	case 0:
		op := g.reduceOp(t)
		w := g.partner(v, v.exact)
		g.loops++
		cb := g.b.Computation(fmt.Sprintf("wrapped_%d", g.loops))
		cb.Op(op, cb.Parameter(s), cb.Parameter(s))
		st := hlo.TupleShape(hlo.TupleShape(s, s), s, hlo.ArrayShape(hlo.S32))
		start := g.op(hlo.OpAsyncStart, v, w).Calls(settle(cb.Computation())).WithShape(st).Instruction
		update := g.e.Op(hlo.OpAsyncUpdate, start).WithShape(st).Instruction
		exact, mag, frac := exactFold(op, v, w, 1)
		g.keep(g.e.Op(hlo.OpAsyncDone, update).WithShape(s).Instruction, exact, mag, frac, false)
	case 1:
		start := g.op(hlo.OpCopyStart, v).WithShape(hlo.TupleShape(s, s, hlo.ArrayShape(hlo.U32))).Instruction
		g.keep(g.e.Op(hlo.OpCopyDone, start).WithShape(s).Instruction, v.exact, v.mag, v.frac, v.raw)
	case 2:
		tok := g.e.Op(hlo.OpAfterAll).WithShape(hlo.Shape{Elem: hlo.Token}).Instruction
		g.keep(g.e.Op(hlo.OpAddDependency, v.in, tok).WithShape(s).Instruction, v.exact, v.mag, v.frac, v.raw)
	default:
		op := g.reduceOp(t)
		start := g.op(hlo.OpAllReduceStart, v).Set("replica_groups", "{{0}}").Calls(g.reducer(op, t)).WithShape(s).Instruction
		g.keep(g.e.Op(hlo.OpAllReduceDone, start).WithShape(s).Instruction, v.exact, v.mag, v.frac, v.raw)
	}
}

// mapOp maps a scalar binary op over a value and a partner, element by
// element (jax.lax.map of a scalar function, or XLA's Map).
func (g *gen) mapOp() {
	v := g.any()
	t := v.t()
	op := g.reduceOp(t)
	w := g.partner(v, v.exact)
	dims := make([]int64, v.s().Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	exact, mag, frac := exactFold(op, v, w, 1)
	g.keep(g.op(hlo.OpMap, v, w).Set("dimensions", list(dims)).Calls(g.reducer(op, t)).WithShape(v.s()).Instruction, exact, mag, frac, false)
}

// topK takes the k largest (or smallest) elements of a value's last
// dimension and their indices, as jax.lax.top_k: keys ordered (not
// complex or pred) and exact, so that no rounding swaps two.
func (g *gen) topK() {
	v := g.pick(func(v *gval) bool {
		t := v.t()
		return v.s().Rank() >= 1 && t != hlo.PRED && !t.IsComplex() && (v.exact || !t.IsFloat())
	})
	if v == nil {
		return
	}
	n := v.s().Dims[v.s().Rank()-1]
	in := g.op(hlo.OpTopK, v).Set("k", fmt.Sprint(g.rng.IntN(int(n)+1)))
	if g.rng.IntN(2) == 0 {
		in.Set("largest", "false")
	}
	r := g.keep(in.Instruction, true, 0, 0, false)
	g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", "0").Instruction, v.exact, v.mag, v.frac, v.raw)
	g.keep(g.e.Op(hlo.OpGetTupleElement, r.in).Set("index", "1").Instruction, true, 0, 0, false)
}

// root makes the entry's result: a tuple of a few values, the latest
// more often (the others are dead code, which the compiler must drop).
func (g *gen) root() {
	n := 1 + g.rng.IntN(3)
	var outs []*hlo.Instruction
	for i := 0; i < n && i < len(g.vals); i++ {
		v := g.vals[len(g.vals)-1-i]
		if i > 0 {
			v = g.vals[g.rng.IntN(len(g.vals))]
		}
		outs = append(outs, v.in)
	}
	if len(outs) == 1 && g.rng.IntN(2) == 0 {
		g.e.SetRoot(outs[0])
		return
	}
	g.e.Op(hlo.OpTuple, outs...)
}

func list(ds []int64) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprint(d)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// FuzzInputs makes the arguments of m's entry parameters for a program
// from RandomProgram: floats and complex numbers' parts on the
// generator's grid (multiples of 1/8 up to 8) with now and then 0, -0,
// ±inf or NaN; integers of any size, the extremes often; pred both
// ways. Each parameter's values depend only on
// seed and its name, so that a program shrunk by a minimizer keeps the
// inputs of the parameters it keeps.
func FuzzInputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	var out []*hlo.Literal
	for _, p := range m.Entry.Params {
		h := fnv.New64a()
		h.Write([]byte(p.Name))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		for _, leaf := range p.Shape.Leaves() {
			out = append(out, fuzzArray(leaf, rng))
		}
	}
	return out
}

func fuzzArray(s hlo.Shape, rng *rand.Rand) *hlo.Literal {
	t := s.Elem
	n := s.NumElements()
	data := make([]byte, 0, s.ByteSize())
	for i := int64(0); i < n; i++ {
		var bits uint64
		switch t.Kind() {
		case hlo.KindBool:
			bits = uint64(rng.IntN(2))
		case hlo.KindFloat:
			bits = hlo.EncodeFloat(t, fuzzFloat(rng))
		case hlo.KindComplex:
			part, _ := t.ComplexPart()
			data = appendFloat(appendFloat(data, part, fuzzFloat(rng)), part, fuzzFloat(rng))
			continue
		default:
			w := uint(t.Bits())
			bits = uint64(rng.IntN(33)) - 16
			switch rng.IntN(6) {
			case 0:
				bits = rng.Uint64()
			case 1:
				bits = []uint64{0, 1, ^uint64(0), 1 << (w - 1), 1<<(w-1) - 1, uint64(w), uint64(w) + 1}[rng.IntN(7)]
			}
		}
		for j := 0; j < t.Bytes(); j++ {
			data = append(data, byte(bits>>(8*j)))
		}
	}
	return &hlo.Literal{Shape: hlo.ArrayShape(t, s.Dims...), Data: data}
}

// fuzzFloat is a float input: on the grid, now and then a special value.
func fuzzFloat(rng *rand.Rand) float64 {
	v := float64(rng.IntN(129)-64) / 8
	if rng.IntN(10) == 0 {
		v = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}[rng.IntN(5)]
	}
	return v
}

// Mutate changes a module's text in one to three places chosen by seed:
// a number replaced by a small one, an element type or an opcode by
// another, an operand by another instruction's name, an attribute or a
// line deleted, two lines swapped. The result may or may not be a valid
// module: what the verifier's mutation fuzzer feeds it.
func Mutate(text string, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x6d7574))
	lines := strings.Split(text, "\n")
	var names []string
	for _, ln := range lines {
		if f := strings.Fields(ln); len(f) > 2 && f[1] == "=" {
			names = append(names, f[0])
		} else if len(f) > 3 && f[0] == "ROOT" && f[2] == "=" {
			names = append(names, f[1])
		}
	}
	types := []string{"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"}
	switch seed % 4 { // now and then the narrow and small float types, or the complex ones
	case 3:
		types = append(types, "s2", "s4", "u2", "u4", "f4e2m1fn", "f6e2m3fn", "f6e3m2fn", "f8e3m4", "f8e4m3", "f8e4m3fn",
			"f8e4m3fnuz", "f8e4m3b11fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0fnu")
	case 1:
		types = append(types, "c64", "c128")
	}
	for k := 0; k < 1+rng.IntN(3); k++ {
		i := rng.IntN(len(lines))
		ln := lines[i]
		switch rng.IntN(7) {
		case 0: // a number
			locs := numberRE.FindAllStringIndex(ln, -1)
			if len(locs) > 0 {
				l := locs[rng.IntN(len(locs))]
				ln = ln[:l[0]] + fmt.Sprint(rng.IntN(10)-1) + ln[l[1]:]
			}
		case 1: // a type
			locs := typeRE.FindAllStringIndex(ln, -1)
			if len(locs) > 0 {
				l := locs[rng.IntN(len(locs))]
				ln = ln[:l[0]] + types[rng.IntN(len(types))] + ln[l[1]:]
			}
		case 2: // an opcode
			if m := opcodeRE.FindStringSubmatchIndex(ln); m != nil {
				ln = ln[:m[2]] + mutantOps[rng.IntN(len(mutantOps))].String() + ln[m[3]:]
			}
		case 3: // an operand
			if len(names) > 0 {
				if m := operandRE.FindAllStringSubmatchIndex(ln, -1); len(m) > 0 {
					l := m[rng.IntN(len(m))]
					ln = ln[:l[2]] + names[rng.IntN(len(names))] + ln[l[3]:]
				}
			}
		case 4: // an attribute
			if locs := attrRE.FindAllStringIndex(ln, -1); len(locs) > 0 {
				l := locs[rng.IntN(len(locs))]
				ln = ln[:l[0]] + ln[l[1]:]
			}
		case 5: // a line
			lines = append(lines[:i], lines[i+1:]...)
			continue
		case 6: // two lines
			j := rng.IntN(len(lines))
			lines[i], lines[j] = lines[j], lines[i]
			continue
		}
		lines[i] = ln
	}
	return strings.Join(lines, "\n")
}

// mutantOps are what an opcode may become: the elementwise ops and the
// rest, with ops whose attributes a mutant seldom has (fft, cholesky,
// triangular-solve, top-k, the batch norms: their verifier's errors are
// what such a mutant tests).
var mutantOps = append(append([]hlo.Opcode{}, ElementwiseOps...),
	hlo.OpReduce, hlo.OpDot, hlo.OpBroadcast, hlo.OpReshape, hlo.OpTranspose, hlo.OpSlice, hlo.OpGather,
	hlo.OpScatter, hlo.OpSort, hlo.OpConcatenate, hlo.OpPad, hlo.OpReverse, hlo.OpTuple, hlo.OpGetTupleElement,
	hlo.OpWhile, hlo.OpConditional, hlo.OpConvolution, hlo.OpIota, hlo.OpConstant, hlo.OpParameter, hlo.OpBitcast,
	hlo.OpBitcastConvert, hlo.OpReducePrecision, hlo.OpSelectAndScatter, hlo.OpRngBitGenerator,
	hlo.OpCustomCall, hlo.OpAllReduce, hlo.OpReduceWindow, hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice,
	hlo.OpFft, hlo.OpCholesky, hlo.OpTriangularSolve, hlo.OpTopK, hlo.OpMap, hlo.OpCall,
	hlo.OpBatchNormInference, hlo.OpBatchNormTraining, hlo.OpBatchNormGrad, hlo.OpReal, hlo.OpImag,
	hlo.OpComplex, hlo.OpOptimizationBarrier)

var (
	numberRE  = regexp.MustCompile(`-?\b\d+\b`)
	typeRE    = regexp.MustCompile(`\b(pred|[su](2|4|8|16|32|64)|f16|bf16|f32|f64|f[468]e[0-9a-z]+|c64|c128)\b`)
	opcodeRE  = regexp.MustCompile(`\] ([a-z][a-z0-9-]*)\(`)
	operandRE = regexp.MustCompile(`[(,] ?([A-Za-z_][A-Za-z0-9_.]*)`)
	attrRE    = regexp.MustCompile(`, [a-z_]+=(\{[^}]*\}|[^,]*)`)
)
