package gomlx

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/vkjit/vkjit/hlo"
)

// reduction is how a reduce combines two values, its identity, and the
// dtypes it takes.
type reduction struct {
	op       hlo.Opcode
	identity func(b *Builder, name string, dt dtypes.DType) (*node, error)
	accepts  func(dt dtypes.DType) bool
}

func constant(v float64) func(*Builder, string, dtypes.DType) (*node, error) {
	return func(b *Builder, name string, dt dtypes.DType) (*node, error) { return b.scalar(name, dt, v) }
}

func extremeOf(highest bool) func(*Builder, string, dtypes.DType) (*node, error) {
	return func(b *Builder, name string, dt dtypes.DType) (*node, error) { return b.extreme(name, dt, highest) }
}

func allOnes(b *Builder, name string, dt dtypes.DType) (*node, error) {
	z, err := b.scalar(name, dt, 0)
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpNot, args: []*node{z}})
}

func isNumber(dt dtypes.DType) bool  { return dt.IsInt() || dt.IsFloat() || dt.IsComplex() }
func isOrdered(dt dtypes.DType) bool { return dt.IsInt() || dt.IsFloat() }
func isBool(dt dtypes.DType) bool    { return dt == dtypes.Bool }

// Sums, products, maxima and minima of bools are XLA's: a sum or a
// maximum is any, a product or a minimum all.
func isNumberOrBool(dt dtypes.DType) bool  { return isNumber(dt) || isBool(dt) }
func isOrderedOrBool(dt dtypes.DType) bool { return isOrdered(dt) || isBool(dt) }

// reductions is the one table of GoMLX's reductions.
var reductions = map[backends.OpType]reduction{
	backends.OpTypeReduceSum:        {hlo.OpAdd, constant(0), isNumberOrBool},
	backends.OpTypeReduceProduct:    {hlo.OpMultiply, constant(1), isNumberOrBool},
	backends.OpTypeReduceMax:        {hlo.OpMaximum, extremeOf(false), isOrderedOrBool},
	backends.OpTypeReduceMin:        {hlo.OpMinimum, extremeOf(true), isOrderedOrBool},
	backends.OpTypeReduceBitwiseAnd: {hlo.OpAnd, allOnes, dtypes.DType.IsInt},
	backends.OpTypeReduceBitwiseOr:  {hlo.OpOr, constant(0), dtypes.DType.IsInt},
	backends.OpTypeReduceBitwiseXor: {hlo.OpXor, constant(0), dtypes.DType.IsInt},
	backends.OpTypeReduceLogicalAnd: {hlo.OpAnd, constant(1), isBool},
	backends.OpTypeReduceLogicalOr:  {hlo.OpOr, constant(0), isBool},
	backends.OpTypeReduceLogicalXor: {hlo.OpXor, constant(0), isBool},
}

// reduceOpOf is the reduction of ReduceWindow's ReduceOpType.
var reduceOpOf = map[backends.ReduceOpType]backends.OpType{
	backends.ReduceOpSum: backends.OpTypeReduceSum, backends.ReduceOpProduct: backends.OpTypeReduceProduct,
	backends.ReduceOpMax: backends.OpTypeReduceMax, backends.ReduceOpMin: backends.OpTypeReduceMin,
}

// computation returns the scalar computation named key, made by body on
// first use: body gets a builder of the computation.
func (b *Builder) computation(key string, body func(cb *hlo.CompBuilder) error) (*hlo.Computation, error) {
	if c, ok := b.comps[key]; ok {
		return c, nil
	}
	cb := b.hb.Computation(fmt.Sprintf("%s.%d", key, len(b.comps)))
	if err := body(cb); err != nil {
		return nil, err
	}
	b.comps[key] = cb.Computation()
	return cb.Computation(), nil
}

// binaryComputation is (x, y) -> op(x, y) over scalars of type t.
func (b *Builder) binaryComputation(op hlo.Opcode, t hlo.ElementType, attrs ...string) (*hlo.Computation, error) {
	key := strings.ReplaceAll(op.String(), "-", "_") + "_" + t.String() + strings.Join(attrs, "_")
	return b.computation(key, func(cb *hlo.CompBuilder) error {
		x, y := cb.Parameter(hlo.ArrayShape(t)), cb.Parameter(hlo.ArrayShape(t))
		ib := cb.Op(op, x, y)
		for i := 0; i+1 < len(attrs); i += 2 {
			ib.Set(attrs[i], attrs[i+1])
		}
		return ib.Check()
	})
}

func (b *Builder) reduce(op backends.OpType, x backends.Op, axes []int) (backends.Op, error) {
	name := op.String()
	ns, err := b.nodes(name, x)
	if err != nil {
		return nil, err
	}
	r := reductions[op]
	if dt := ns[0].shape.DType; !r.accepts(dt) {
		return nil, fmt.Errorf("vkjit backend: %s of %s: dtype %s is not reduced so", name, ns[0].shape, dt)
	}
	if len(axes) == 0 {
		axes = iota(ns[0].shape.Rank())
	}
	if _, err := shapeinference.ReduceOp(ns[0].shape, axes); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	init, err := r.identity(b, name, ns[0].shape.DType)
	if err != nil {
		return nil, err
	}
	c, err := b.binaryComputation(r.op, ns[0].in.Shape.Elem)
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpReduce, args: []*node{ns[0], init}, attrs: []string{"dimensions", intList(axes)}, calls: []*hlo.Computation{c}})
}

func (b *Builder) ReduceSum(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceSum, x, axes)
}
func (b *Builder) ReduceProduct(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceProduct, x, axes)
}
func (b *Builder) ReduceMax(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceMax, x, axes)
}
func (b *Builder) ReduceMin(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceMin, x, axes)
}
func (b *Builder) ReduceBitwiseAnd(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceBitwiseAnd, x, axes)
}
func (b *Builder) ReduceBitwiseOr(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceBitwiseOr, x, axes)
}
func (b *Builder) ReduceBitwiseXor(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceBitwiseXor, x, axes)
}
func (b *Builder) ReduceLogicalAnd(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceLogicalAnd, x, axes)
}
func (b *Builder) ReduceLogicalOr(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceLogicalOr, x, axes)
}
func (b *Builder) ReduceLogicalXor(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce(backends.OpTypeReduceLogicalXor, x, axes)
}

// ArgMinMax implements backends.Builder as XLA's backend does: a
// variadic reduce of (index, value) pairs along axis, the better value
// winning, ties going to the lower index, and a NaN (for floats) beating
// every number.
func (b *Builder) ArgMinMax(x backends.Op, axis int, outputDType dtypes.DType, isMin bool) (backends.Op, error) {
	const name = "ArgMinMax"
	ns, err := b.nodes(name, x)
	if err != nil {
		return nil, err
	}
	xs := ns[0].shape
	if _, err := shapeinference.ArgMinMaxOp(xs, axis, outputDType); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	if axis < 0 {
		axis += xs.Rank()
	}
	if !isOrdered(xs.DType) {
		return nil, fmt.Errorf("vkjit backend: %s of %s: its values must be ordered (integers or floats)", name, xs)
	}
	vt, err := elemOf(xs.DType)
	if err != nil {
		return nil, err
	}
	it, err := elemOf(outputDType)
	if err != nil {
		return nil, err
	}
	dir, ext := "GT", false
	if isMin {
		dir, ext = "LT", true
	}
	cmpType := compareType(xs.DType)
	best := hlo.OpMaximum
	if isMin {
		best = hlo.OpMinimum
	}
	c, err := b.computation(fmt.Sprintf("argminmax_%s_%s_%s", vt, it, dir), func(cb *hlo.CompBuilder) error {
		li, lv := cb.Parameter(hlo.ArrayShape(it)), cb.Parameter(hlo.ArrayShape(vt))
		ri, rv := cb.Parameter(hlo.ArrayShape(it)), cb.Parameter(hlo.ArrayShape(vt))
		ops := []*hlo.InstBuilder{}
		op := func(o hlo.Opcode, args []*hlo.Instruction, attrs ...string) *hlo.Instruction {
			ib := cb.Op(o, args...)
			for i := 0; i+1 < len(attrs); i += 2 {
				ib.Set(attrs[i], attrs[i+1])
			}
			ops = append(ops, ib)
			return ib.Instruction
		}
		left := op(hlo.OpCompare, []*hlo.Instruction{lv, rv}, "direction", dir, "type", cmpType)
		if xs.DType.IsFloat() {
			nan := op(hlo.OpCompare, []*hlo.Instruction{lv, lv}, "direction", "NE", "type", cmpType)
			left = op(hlo.OpOr, []*hlo.Instruction{left, nan})
		}
		eq := op(hlo.OpCompare, []*hlo.Instruction{lv, rv}, "direction", "EQ", "type", cmpType)
		lower := op(hlo.OpMinimum, []*hlo.Instruction{li, ri})
		tie := op(hlo.OpSelect, []*hlo.Instruction{eq, lower, ri})
		idx := op(hlo.OpSelect, []*hlo.Instruction{left, li, tie})
		val := op(best, []*hlo.Instruction{lv, rv})
		op(hlo.OpTuple, []*hlo.Instruction{idx, val})
		for _, ib := range ops {
			if err := ib.Check(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %s: %w", name, err)
	}
	is := xs.Clone()
	is.DType = outputDType
	ih, err := hloShape(is)
	if err != nil {
		return nil, err
	}
	indices, err := b.add(name, inst{op: hlo.OpIota, attrs: []string{"iota_dimension", fmt.Sprint(axis)}, shape: &ih})
	if err != nil {
		return nil, err
	}
	i0, err := b.scalar(name, outputDType, 0)
	if err != nil {
		return nil, err
	}
	v0, err := b.extreme(name, xs.DType, ext)
	if err != nil {
		return nil, err
	}
	r, err := b.add(name, inst{op: hlo.OpReduce, args: []*node{indices, ns[0], i0, v0}, attrs: []string{"dimensions", intList([]int{axis})}, calls: []*hlo.Computation{c}})
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpGetTupleElement, args: []*node{r}, attrs: []string{"index", "0"}})
}

// window is HLO's window attribute: sizes, strides, padding and
// dilations per axis (nil strides are the sizes, nil dilations 1, nil
// paddings 0, as GoMLX defines them).
func window(sizes, strides, lhsDilate, rhsDilate []int, paddings [][2]int) (string, error) {
	n := len(sizes)
	check := func(what string, xs []int) error {
		if len(xs) != 0 && len(xs) != n {
			return fmt.Errorf("%d %s for %d window dimensions", len(xs), what, n)
		}
		return nil
	}
	for _, c := range []struct {
		what string
		xs   []int
	}{{"strides", strides}, {"input dilations", lhsDilate}, {"window dilations", rhsDilate}} {
		if err := check(c.what, c.xs); err != nil {
			return "", err
		}
	}
	if len(paddings) != 0 && len(paddings) != n {
		return "", fmt.Errorf("%d paddings for %d window dimensions", len(paddings), n)
	}
	if n == 0 {
		return "{}", nil
	}
	join := func(xs []int, def func(i int) int) string {
		s := make([]string, n)
		for i := range s {
			v := def(i)
			if len(xs) != 0 {
				v = xs[i]
			}
			s[i] = fmt.Sprint(v)
		}
		return strings.Join(s, "x")
	}
	one := func(int) int { return 1 }
	pads := make([]string, n)
	for i := range pads {
		var p [2]int
		if len(paddings) != 0 {
			p = paddings[i]
		}
		pads[i] = fmt.Sprintf("%d_%d", p[0], p[1])
	}
	return fmt.Sprintf("{size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}",
		join(sizes, func(i int) int { return sizes[i] }), join(strides, func(i int) int { return sizes[i] }), strings.Join(pads, "x"),
		join(lhsDilate, one), join(rhsDilate, one)), nil
}

// ReduceWindow implements backends.Builder.
func (b *Builder) ReduceWindow(x backends.Op, reductionType backends.ReduceOpType,
	windowDimensions, strides, baseDilations, windowDilations []int, paddings [][2]int) (backends.Op, error) {
	const name = "ReduceWindow"
	ns, err := b.nodes(name, x)
	if err != nil {
		return nil, err
	}
	op, ok := reduceOpOf[reductionType]
	if !ok {
		return nil, fmt.Errorf("vkjit backend: %s: reduction %s is not one of sum, product, max, min", name, reductionType)
	}
	r := reductions[op]
	if dt := ns[0].shape.DType; !r.accepts(dt) {
		return nil, fmt.Errorf("vkjit backend: %s (%s) of %s: dtype %s is not reduced so", name, reductionType, ns[0].shape, dt)
	}
	if _, err := shapeinference.ReduceWindowOp(ns[0].shape, windowDimensions, strides, baseDilations, windowDilations, paddings); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	w, err := window(windowDimensions, strides, baseDilations, windowDilations, paddings)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %s: %w", name, err)
	}
	init, err := r.identity(b, name, ns[0].shape.DType)
	if err != nil {
		return nil, err
	}
	c, err := b.binaryComputation(r.op, ns[0].in.Shape.Elem)
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpReduceWindow, args: []*node{ns[0], init}, attrs: []string{"window", w}, calls: []*hlo.Computation{c}})
}

// SelectAndScatterMax implements backends.Builder: each source value is
// added where its window of operand has its (first) largest value.
func (b *Builder) SelectAndScatterMax(operand, source backends.Op, windowDimensions, windowStrides []int, paddings [][2]int) (backends.Op, error) {
	return b.selectAndScatter("SelectAndScatterMax", "GE", operand, source, windowDimensions, windowStrides, paddings)
}

// SelectAndScatterMin implements backends.Builder: as SelectAndScatterMax,
// at the smallest value.
func (b *Builder) SelectAndScatterMin(operand, source backends.Op, windowDimensions, windowStrides []int, paddings [][2]int) (backends.Op, error) {
	return b.selectAndScatter("SelectAndScatterMin", "LE", operand, source, windowDimensions, windowStrides, paddings)
}

func (b *Builder) selectAndScatter(name, dir string, operand, source backends.Op, sizes, strides []int, paddings [][2]int) (backends.Op, error) {
	ns, err := b.nodes(name, operand, source)
	if err != nil {
		return nil, err
	}
	os := ns[0].shape
	if !isOrdered(os.DType) || ns[1].shape.DType != os.DType {
		return nil, fmt.Errorf("vkjit backend: %s: operand %s and source %s must be of one ordered dtype", name, os, ns[1].shape)
	}
	if len(sizes) != os.Rank() {
		return nil, fmt.Errorf("vkjit backend: %s: %d window dimensions for %s", name, len(sizes), os)
	}
	w, err := window(sizes, strides, nil, nil, paddings)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %s: %w", name, err)
	}
	t := ns[0].in.Shape.Elem
	sel, err := b.binaryComputation(hlo.OpCompare, t, "direction", dir, "type", compareType(os.DType))
	if err != nil {
		return nil, err
	}
	add, err := b.binaryComputation(hlo.OpAdd, t)
	if err != nil {
		return nil, err
	}
	zero, err := b.scalar(name, os.DType, 0)
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpSelectAndScatter, args: []*node{ns[0], ns[1], zero}, attrs: []string{"window", w}, calls: []*hlo.Computation{sel, add}})
}

// Gather implements backends.Builder (XLA's gather; out-of-range starts
// are clamped into the operand).
func (b *Builder) Gather(operand, startIndices backends.Op, indexVectorAxis int,
	offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes []int, indicesAreSorted bool) (backends.Op, error) {
	const name = "Gather"
	ns, err := b.nodes(name, operand, startIndices)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.Gather(ns[0].shape, ns[1].shape, indexVectorAxis, offsetOutputAxes, collapsedSliceAxes,
		startIndexMap, sliceSizes, indicesAreSorted); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	return b.add(name, inst{op: hlo.OpGather, args: ns, attrs: []string{
		"offset_dims", intList(offsetOutputAxes), "collapsed_slice_dims", intList(collapsedSliceAxes),
		"start_index_map", intList(startIndexMap), "index_vector_dim", fmt.Sprint(indexVectorAxis),
		"slice_sizes", intList(sliceSizes), "indices_are_sorted", fmt.Sprint(indicesAreSorted)}})
}

// ScatterSum implements backends.Builder.
func (b *Builder) ScatterSum(operand, scatterIndices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, indicesAreSorted, uniqueIndices bool) (backends.Op, error) {
	return b.scatter(backends.OpTypeScatterSum, hlo.OpAdd, operand, scatterIndices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, indicesAreSorted, uniqueIndices)
}

// ScatterMax implements backends.Builder.
func (b *Builder) ScatterMax(operand, scatterIndices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, indicesAreSorted, uniqueIndices bool) (backends.Op, error) {
	return b.scatter(backends.OpTypeScatterMax, hlo.OpMaximum, operand, scatterIndices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, indicesAreSorted, uniqueIndices)
}

// ScatterMin implements backends.Builder.
func (b *Builder) ScatterMin(operand, scatterIndices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, indicesAreSorted, uniqueIndices bool) (backends.Op, error) {
	return b.scatter(backends.OpTypeScatterMin, hlo.OpMinimum, operand, scatterIndices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, indicesAreSorted, uniqueIndices)
}

func (b *Builder) scatter(opType backends.OpType, combine hlo.Opcode, operand, indices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, sorted, unique bool) (backends.Op, error) {
	name := opType.String()
	ns, err := b.nodes(name, operand, indices, updates)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.ScatterOp(ns[0].shape, ns[1].shape, ns[2].shape, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	if combine != hlo.OpAdd && !isOrdered(ns[0].shape.DType) {
		return nil, fmt.Errorf("vkjit backend: %s of %s: its values must be ordered", name, ns[0].shape)
	}
	c, err := b.binaryComputation(combine, ns[0].in.Shape.Elem)
	if err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpScatter, args: ns, calls: []*hlo.Computation{c}, attrs: []string{
		"update_window_dims", intList(updateWindowAxes), "inserted_window_dims", intList(insertedWindowAxes),
		"scatter_dims_to_operand_dims", intList(scatterAxesToOperandAxes), "index_vector_dim", fmt.Sprint(indexVectorAxis),
		"indices_are_sorted", fmt.Sprint(sorted), "unique_indices", fmt.Sprint(unique)}})
}
