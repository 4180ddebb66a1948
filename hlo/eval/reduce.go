package eval

import (
	"math"
	"sort"

	"github.com/vkjit/vkjit/hlo"
)

// fold combines accumulators with values through a computation of 2N
// scalar parameters (accumulators first) and N results.
type fold func(acc, x []scalar) ([]scalar, error)

func scalarLit(t hlo.ElementType, s scalar) *hlo.Literal {
	l := newLit(t, nil)
	put(l.Data, t, 0, s)
	return l
}

// reducer returns the fold of computation c over values of the given
// types. A computation that is one binary op of its two parameters (add,
// max, and, ...) folds directly; others are interpreted.
func (e *evaluator) reducer(c *hlo.Computation, types []hlo.ElementType) fold {
	r := c.Root
	if len(types) == 1 && len(c.Params) == 2 && r.Op.Class() == hlo.ClassBinary && r.Op != hlo.OpCompare &&
		len(r.Operands) == 2 && r.Shape.Elem == types[0] {
		a, b := r.Operands[0], r.Operands[1]
		if a.Op == hlo.OpParameter && b.Op == hlo.OpParameter && a != b {
			swap := a.ParamNum == 1
			op, t := r.Op, types[0]
			return func(acc, x []scalar) ([]scalar, error) {
				l, rr := acc[0], x[0]
				if swap {
					l, rr = rr, l
				}
				v, err := applyBinary(op, t, l, rr)
				return []scalar{v}, err
			}
		}
	}
	n := len(types)
	if prog := e.scalarProgram(c); prog != nil && len(prog.outs) == n {
		regs, out := make([]scalar, prog.nregs), make([]scalar, n)
		return func(acc, x []scalar) ([]scalar, error) {
			copy(regs, acc)
			copy(regs[n:], x)
			err := prog.run(regs, out)
			return out, err
		}
	}
	return func(acc, x []scalar) ([]scalar, error) {
		args := make([]*hlo.Literal, 2*n)
		for i := 0; i < n; i++ {
			args[i] = scalarLit(types[i], acc[i])
			args[n+i] = scalarLit(types[i], x[i])
		}
		res, err := e.callScalars(c, args)
		if err != nil {
			return nil, err
		}
		out := make([]scalar, n)
		for i := range out {
			out[i] = get(res[i], 0)
		}
		return out, nil
	}
}

func tupleOf(ls []*hlo.Literal) *Value {
	if len(ls) == 1 {
		return &Value{Lit: ls[0]}
	}
	v := &Value{}
	for _, l := range ls {
		v.Tuple = append(v.Tuple, &Value{Lit: l})
	}
	return v
}

// folding is a variadic reduction as it runs (inputs, then as many init
// values): its reducer, its results, and the fold of the output it is
// at.
type folding struct {
	inputs, inits, outs []*hlo.Literal
	types               []hlo.ElementType
	f                   fold
	acc, x              []scalar
}

// newFolding starts reduction in of ops into results of dimensions
// outDims.
func (e *evaluator) newFolding(in *hlo.Instruction, ops []*hlo.Literal, outDims []int64) *folding {
	n := len(ops) / 2
	s := &folding{inputs: ops[:n], inits: ops[n:], outs: make([]*hlo.Literal, n), types: make([]hlo.ElementType, n),
		acc: make([]scalar, n), x: make([]scalar, n)}
	for i := range s.types {
		s.types[i] = s.inits[i].Shape.Elem
		s.outs[i] = newLit(s.types[i], outDims)
	}
	s.f = e.reducer(in.Called[0], s.types)
	return s
}

// start begins an output's fold at the init values.
func (s *folding) start() {
	for i := range s.acc {
		s.acc[i] = get(s.inits[i], 0)
	}
}

// add folds in the input elements at linear position p.
func (s *folding) add(p int64) error {
	for i := range s.x {
		s.x[i] = get(s.inputs[i], p)
	}
	next, err := s.f(s.acc, s.x)
	if err == nil {
		copy(s.acc, next)
	}
	return err
}

// store writes the fold so far as the results at linear position o.
func (s *folding) store(o int64) {
	for i := range s.outs {
		put(s.outs[i].Data, s.types[i], o, s.acc[i])
	}
}

// foldOutputs computes a variadic reduction (inputs, then as many init
// values): for every output position o it starts from the init values
// and folds in, through the to_apply computation, the input elements at
// the linear positions positions(o) yields, in that order.
func (e *evaluator) foldOutputs(in *hlo.Instruction, ops []*hlo.Literal, outDims []int64, positions func(o []int64, yield func(p int64))) (*Value, error) {
	s := e.newFolding(in, ops, outDims)
	var err error
	forEach(outDims, func(o []int64, olin int64) {
		s.start()
		positions(o, func(p int64) {
			if err == nil {
				err = s.add(p)
			}
		})
		s.store(olin)
	})
	if err != nil {
		return nil, err
	}
	return tupleOf(s.outs), nil
}

// reduce folds the reduced dimensions in row-major order, starting from
// the init values, as XLA's evaluator does.
func (e *evaluator) reduce(in *hlo.Instruction, ops []*hlo.Literal) (*Value, error) {
	src := ops[0].Shape
	reduced := make([]bool, src.Rank())
	for _, d := range in.A.Dimensions {
		reduced[d] = true
	}
	var keep, red []int64
	for d, r := range reduced {
		if r {
			red = append(red, src.Dims[d])
		} else {
			keep = append(keep, src.Dims[d])
		}
	}
	ss := strides(src.Dims)
	full := make([]int64, src.Rank())
	return e.foldOutputs(in, ops, keep, func(o []int64, yield func(int64)) {
		forEach(red, func(r []int64, _ int64) {
			ki, ri := 0, 0
			for d := range full {
				if reduced[d] {
					full[d] = r[ri]
					ri++
				} else {
					full[d] = o[ki]
					ki++
				}
			}
			yield(linear(full, ss))
		})
	})
}

// windowPositions calls f with the input index of each window element of
// output position o that falls on a real (not padding, not dilation hole)
// input element, in row-major window order.
func windowPositions(w *hlo.Window, dims []int64, o []int64, f func(idx []int64, k []int64)) {
	sizes := make([]int64, len(w.Dims))
	for i, d := range w.Dims {
		sizes[i] = d.Size
	}
	idx := make([]int64, len(dims))
	forEach(sizes, func(k []int64, _ int64) {
		for d, wd := range w.Dims {
			p := o[d]*wd.Stride + k[d]*wd.RhsDilate - wd.PadLo
			if p < 0 || p%wd.LhsDilate != 0 {
				return
			}
			p /= wd.LhsDilate
			if p >= dims[d] {
				return
			}
			idx[d] = p
		}
		f(idx, k)
	})
}

func (e *evaluator) reduceWindow(in *hlo.Instruction, ops []*hlo.Literal) (*Value, error) {
	if d, ok := prefixWindows(in.A.Window, ops[0].Shape.Dims); ok {
		return e.prefixFolds(in, ops, d)
	}
	if d, ok := suffixWindows(in.A.Window, ops[0].Shape.Dims); ok && suffixFoldSteps(in, d) > exactSuffixMax && reordersFreely(in.Called[0]) {
		return e.suffixFolds(in, ops, d)
	}
	src := ops[0].Shape
	ss := strides(src.Dims)
	return e.foldOutputs(in, ops, in.Shape.Leaves()[0].Dims, func(o []int64, yield func(int64)) {
		windowPositions(in.A.Window, src.Dims, o, func(idx, _ []int64) { yield(linear(idx, ss)) })
	})
}

// prefixWindows reports whether every window of w over an operand of
// dims starts at the first element of one dimension d (which it returns)
// and spans one element of the others: a cumulative reduction, as JAX
// writes jnp.cumsum (window the dimension's length, padded by one less
// before it; or by the length, exclusive). Each window is then the one
// before it and the elements after it.
func prefixWindows(w *hlo.Window, dims []int64) (int, bool) { return cumulativeWindows(w, dims, false) }

// suffixWindows reports whether every window of w over an operand of
// dims ends at or past the last element of one dimension d (which it
// returns) and spans one element of the others: a cumulative reduction
// from the end, as JAX writes lax.cumsum(reverse=True) and the gradient
// of every jnp.cumsum (window the length, padded by one less after it).
func suffixWindows(w *hlo.Window, dims []int64) (int, bool) { return cumulativeWindows(w, dims, true) }

// cumulativeWindows is prefixWindows, or with fromEnd suffixWindows.
func cumulativeWindows(w *hlo.Window, dims []int64, fromEnd bool) (int, bool) {
	d := -1
	for i, wd := range w.Dims {
		if wd.Stride != 1 || wd.LhsDilate != 1 || wd.RhsDilate != 1 || wd.Reversal {
			return 0, false
		}
		if wd.Size == 1 && wd.PadLo == 0 && wd.PadHi == 0 {
			continue
		}
		// Output i's window is [i - PadLo, i - PadLo + Size - 1]. Its
		// end reaches the last element by the last output when Size >=
		// n + PadHi, and from the first output on when Size >= n +
		// PadLo (its start then never past the first element, or at or
		// before the last).
		pad := wd.PadHi
		if fromEnd {
			pad = wd.PadLo
		}
		if d >= 0 || wd.PadLo < 0 || wd.PadHi < 0 || wd.Size < dims[i]+pad {
			return 0, false
		}
		d = i
	}
	return d, d >= 0
}

// prefixFolds is reduceWindow over prefix windows along dimension d: for
// each line along d it folds the elements in once, in order, storing
// the fold so far at each output, the very sequence of folds each
// output's window makes (the init, then its elements in order): n steps
// a line where windows took n^2 (jnp.cumsum of 100,000 elements).
func (e *evaluator) prefixFolds(in *hlo.Instruction, ops []*hlo.Literal, d int) (*Value, error) {
	wd := in.A.Window.Dims[d]
	return e.lineFolds(in, ops, d, func(n, outs int64, add func(k int64) error, store func(i int64)) error {
		next := int64(0) // the next element along d to fold in
		for i := range outs {
			for ; next <= min(i+wd.Size-1-wd.PadLo, n-1); next++ {
				if err := add(next); err != nil {
					return err
				}
			}
			store(i)
		}
		return nil
	})
}

// lineFolds runs one fold along each line of dimension d: walk folds in
// the line's elements (add, by index along d, of n) and stores the fold
// so far as outputs (store, by index along d, of outs) in its order.
func (e *evaluator) lineFolds(in *hlo.Instruction, ops []*hlo.Literal, d int, walk func(n, outs int64, add func(k int64) error, store func(i int64)) error) (*Value, error) {
	outDims := in.Shape.Leaves()[0].Dims
	s := e.newFolding(in, ops, outDims)
	srcDims := ops[0].Shape.Dims
	ss, os := strides(srcDims), strides(outDims)
	lines := append([]int64{}, outDims...)
	lines[d] = 1
	var err error
	forEach(lines, func(o []int64, _ int64) {
		if err != nil {
			return
		}
		s.start()
		src, out := linear(o, ss), linear(o, os)
		err = walk(srcDims[d], outDims[d],
			func(k int64) error { return s.add(src + k*ss[d]) },
			func(i int64) { s.store(out + i*os[d]) })
	})
	if err != nil {
		return nil, err
	}
	return tupleOf(s.outs), nil
}

// exactSuffixMax is how many folds suffix windows may take one at a
// time (about a second of this evaluator's folds): past it they are
// folded once a line, from the end, by suffixFolds.
var exactSuffixMax float64 = 1 << 24 // a variable for tests

// suffixFoldSteps is how many folds in's suffix windows along d take
// one window at a time: n(n+1)/2 a line.
func suffixFoldSteps(in *hlo.Instruction, d int) float64 {
	steps := 1.0
	for i, n := range in.Operands[0].Shape.Dims {
		if i == d {
			steps *= float64(n) * float64(n+1) / 2
		} else {
			steps *= float64(n)
		}
	}
	return steps
}

// reordersFreely reports whether reducer c is one add, multiply,
// maximum, minimum, and, or or xor of its two parameters: folds of it in
// any order agree, exactly for integers, and for floats but for
// rounding and the sign of a zero.
func reordersFreely(c *hlo.Computation) bool {
	switch c.ReducerOp() {
	case hlo.OpAdd, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum, hlo.OpAnd, hlo.OpOr, hlo.OpXor:
		return true
	}
	return false
}

// suffixFolds is reduceWindow over suffix windows along dimension d, for
// a reducer that reorders freely: each line's elements are folded in
// once, from the last, storing the fold so far at each output (init,
// then the window's elements from its end). A window's own order (its
// first element first) cannot be shared between windows that start at
// different elements; this order can, and gives the same fold but for
// rounding: n steps a line where windows took n(n+1)/2 (the gradient of
// a cumsum of 300,001 elements: 4.5e10 folds).
func (e *evaluator) suffixFolds(in *hlo.Instruction, ops []*hlo.Literal, d int) (*Value, error) {
	wd := in.A.Window.Dims[d]
	return e.lineFolds(in, ops, d, func(n, outs int64, add func(k int64) error, store func(i int64)) error {
		next := n // the lowest element along d folded in so far
		for i := outs - 1; i >= 0; i-- {
			for ; next > max(i-wd.PadLo, 0); next-- {
				if err := add(next - 1); err != nil {
					return err
				}
			}
			store(i)
		}
		return nil
	})
}

// selectAndScatter picks one element per window with the select
// computation (the first element, replaced by each later one that select
// does not prefer it to) and scatters the source value there.
func (e *evaluator) selectAndScatter(in *hlo.Instruction, operand, source, init *hlo.Literal) (*hlo.Literal, error) {
	selC, scatC := in.SelectAndScatterComputations()
	t := operand.Shape.Elem
	out := newLit(t, operand.Shape.Dims)
	for i := int64(0); i < out.Shape.NumElements(); i++ {
		copyElem(out, i, init, 0)
	}
	os := strides(operand.Shape.Dims)
	scatter := e.reducer(scatC, []hlo.ElementType{t})
	var err error
	forEach(source.Shape.Dims, func(o []int64, slin int64) {
		if err != nil {
			return
		}
		best := int64(-1)
		var bestV scalar
		windowPositions(in.A.Window, operand.Shape.Dims, o, func(idx, _ []int64) {
			if err != nil {
				return
			}
			p := linear(idx, os)
			v := get(operand, p)
			if best < 0 {
				best, bestV = p, v
				return
			}
			res, e2 := e.callScalars(selC, []*hlo.Literal{scalarLit(t, bestV), scalarLit(t, v)})
			if e2 != nil {
				err = e2
				return
			}
			if get(res[0], 0).u == 0 {
				best, bestV = p, v
			}
		})
		if best < 0 || err != nil {
			return
		}
		var r []scalar
		r, err = scatter([]scalar{get(out, best)}, []scalar{get(source, slin)})
		if err == nil {
			put(out.Data, t, best, r[0])
		}
	})
	return out, err
}

// less returns a comparator over positions of the sort operands: a direct
// compare when the computation is one compare of parameters 0 and 1,
// else the interpreted computation.
func (e *evaluator) less(c *hlo.Computation, ops []*hlo.Literal, base, stride int64) func(i, j int64) (bool, error) {
	r := c.Root
	if r.Op == hlo.OpCompare && len(r.Operands) == 2 && r.Operands[0].Op == hlo.OpParameter && r.Operands[1].Op == hlo.OpParameter {
		a, b := r.Operands[0].ParamNum, r.Operands[1].ParamNum
		if a/2 == b/2 && a != b {
			x := ops[a/2]
			t := x.Shape.Elem
			dir, total := r.A.Direction, r.A.CompareType == "TOTALORDER"
			return func(i, j int64) (bool, error) {
				pi, pj := base+i*stride, base+j*stride
				if a%2 == 1 {
					pi, pj = pj, pi
				}
				return compareScalars(t, dir, total, get(x, pi), get(x, pj)), nil
			}
		}
	}
	if prog := e.scalarProgram(c); prog != nil && len(prog.outs) == 1 {
		regs, out := make([]scalar, prog.nregs), make([]scalar, 1)
		return func(i, j int64) (bool, error) {
			for k, x := range ops {
				regs[2*k] = get(x, base+i*stride)
				regs[2*k+1] = get(x, base+j*stride)
			}
			err := prog.run(regs, out)
			return out[0].u != 0, err
		}
	}
	return func(i, j int64) (bool, error) {
		args := make([]*hlo.Literal, 2*len(ops))
		for k, x := range ops {
			t := x.Shape.Elem
			args[2*k] = scalarLit(t, get(x, base+i*stride))
			args[2*k+1] = scalarLit(t, get(x, base+j*stride))
		}
		res, err := e.callScalars(c, args)
		if err != nil {
			return false, err
		}
		return get(res[0], 0).u != 0, nil
	}
}

// sort sorts every 1-D slice along the dimension with the comparator,
// stably (also when is_stable is false, which allows any order).
func (e *evaluator) sort(in *hlo.Instruction, ops []*hlo.Literal) (*Value, error) {
	d := in.A.Dimensions[0]
	dims := ops[0].Shape.Dims
	st := strides(dims)
	outs := make([]*hlo.Literal, len(ops))
	for i, x := range ops {
		outs[i] = newLit(x.Shape.Elem, dims)
	}
	outer := append([]int64{}, dims...)
	outer[d] = 1
	n := dims[d]
	perm := make([]int64, n)
	var err error
	forEach(outer, func(o []int64, _ int64) {
		if err != nil {
			return
		}
		base := linear(o, st)
		lt := e.less(in.Called[0], ops, base, st[d])
		for i := range perm {
			perm[i] = int64(i)
		}
		sort.SliceStable(perm, func(a, b int) bool {
			if err != nil {
				return false
			}
			r, e2 := lt(perm[a], perm[b])
			if e2 != nil {
				err = e2
			}
			return r
		})
		for k, x := range ops {
			for i, p := range perm {
				copyElem(outs[k], base+int64(i)*st[d], x, base+p*st[d])
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return tupleOf(outs), nil
}

// topK returns the k largest (or smallest) elements of each row and
// their indices; NaN sorts above infinity, and ties keep index order.
func topK(in *hlo.Instruction, x *hlo.Literal) (*Value, error) {
	dims := x.Shape.Dims
	r := len(dims) - 1
	n, k := dims[r], in.A.K
	outDims := append(append([]int64{}, dims[:r]...), k)
	vals, idxs := newLit(x.Shape.Elem, outDims), newLit(hlo.S32, outDims)
	rows := x.Shape.NumElements() / max(n, 1)
	if n == 0 {
		rows = 0
	}
	t := x.Shape.Elem
	perm := make([]int64, n)
	for row := int64(0); row < rows; row++ {
		for i := range perm {
			perm[i] = int64(i)
		}
		sort.SliceStable(perm, func(a, b int) bool {
			va, vb := get(x, row*n+perm[a]), get(x, row*n+perm[b])
			if in.A.Largest {
				return compareScalars(t, "GT", true, va, vb)
			}
			return compareScalars(t, "LT", true, va, vb)
		})
		for i := int64(0); i < k; i++ {
			copyElem(vals, row*k+i, x, row*n+perm[i])
			put(idxs.Data, hlo.S32, row*k+i, scalar{i: perm[i]})
		}
	}
	return &Value{Tuple: []*Value{{Lit: vals}, {Lit: idxs}}}, nil
}

func (e *evaluator) mapOp(in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	t := in.Shape.Elem
	out := newLit(t, in.Shape.Dims)
	args := make([]*hlo.Literal, len(ops))
	for i := int64(0); i < out.Shape.NumElements(); i++ {
		for k, x := range ops {
			args[k] = scalarLit(x.Shape.Elem, get(x, i))
		}
		res, err := e.callScalars(in.Called[0], args)
		if err != nil {
			return nil, err
		}
		copyElem(out, i, res[0], 0)
	}
	return out, nil
}

// scatter applies each update window in row-major order of the updates.
// A window that does not fit in the operand at its (unclamped) start is
// skipped, as XLA does.
func (e *evaluator) scatter(in *hlo.Instruction, ops []*hlo.Literal) (*Value, error) {
	n := (len(ops) - 1) / 2
	operands, indices, updates := ops[:n], ops[n], ops[n+1:]
	s := in.A.Scatter
	outs := make([]*hlo.Literal, n)
	types := make([]hlo.ElementType, n)
	for i, x := range operands {
		outs[i] = &hlo.Literal{Shape: x.Shape, Data: append([]byte(nil), x.Data...)}
		types[i] = x.Shape.Elem
	}
	f := e.reducer(in.Called[0], types)
	xdims := operands[0].Shape.Dims
	xs, is := strides(xdims), strides(indices.Shape.Dims)
	udims := updates[0].Shape.Dims
	ix := s.Indexing(len(xdims), indices.Shape, len(udims))
	windowSize := make([]int64, len(xdims))
	for d := range windowSize {
		windowSize[d] = 1
	}
	for k, od := range ix.WindowDims {
		windowSize[od] = udims[s.UpdateWindowDims[k]]
	}
	start := make([]int64, len(xdims))
	dst := make([]int64, len(xdims))
	ii := make([]int64, indices.Shape.Rank())
	acc, x := make([]scalar, n), make([]scalar, n)
	var err error
	forEach(udims, func(u []int64, ulin int64) {
		if err != nil {
			return
		}
		for d := range start {
			start[d] = 0
		}
		for k, d := range ix.IndexDims {
			ii[d] = u[ix.BatchDims[k]]
		}
		for k := int64(0); k < ix.IndexCount; k++ {
			if s.IndexVectorDim < int64(indices.Shape.Rank()) {
				ii[s.IndexVectorDim] = k
			}
			start[s.ScatterDimsToOperandDims[k]] = asInt(indices, linear(ii, is))
		}
		for i, od := range s.InputBatchingDims {
			start[od] = u[ix.BatchDims[ix.BatchPos(s.ScatterIndicesBatchingDims[i])]]
		}
		for d := range start {
			if start[d] < 0 || start[d] > xdims[d]-windowSize[d] {
				return // the window does not fit: skipped
			}
		}
		copy(dst, start)
		for k, od := range ix.WindowDims {
			dst[od] += u[s.UpdateWindowDims[k]]
		}
		p := linear(dst, xs)
		for i := range acc {
			acc[i] = get(outs[i], p)
			x[i] = get(updates[i], ulin)
		}
		var r []scalar
		if r, err = f(acc, x); err == nil {
			for i := range outs {
				put(outs[i].Data, types[i], p, r[i])
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return tupleOf(outs), nil
}

// compareScalars compares with XLA's semantics; total selects the total
// order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
func compareScalars(t hlo.ElementType, dir string, total bool, x, y scalar) bool {
	if total && t.IsFloat() {
		x, y = scalar{i: totalKey(x.f)}, scalar{i: totalKey(y.f)}
		t = hlo.S64
	}
	return compare(t, dir, x, y)
}

func totalKey(f float64) int64 {
	b := int64(math.Float64bits(f))
	if b < 0 {
		b = ^(b & math.MaxInt64) // -0 below +0, larger magnitudes lower
	}
	return b
}
