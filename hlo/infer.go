package hlo

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Shape inference of the ops with dimension numbers, windows and
// called computations, for InferShape (verify.go).

func inferBroadcast(in *Instruction) (*Shape, error) {
	src := in.Operands[0].Shape
	if in.ShapeInferred {
		return nil, in.Errorf("broadcast needs its result shape")
	}
	out := in.Shape
	dims := in.A.Dimensions
	if len(dims) != src.Rank() {
		return nil, in.Errorf("dimensions=%v has %d entries for an operand of rank %d", dims, len(dims), src.Rank())
	}
	for i, d := range dims {
		if d < 0 || int(d) >= out.Rank() || (i > 0 && d <= dims[i-1]) {
			return nil, in.Errorf("dimensions=%v must be increasing and within rank %d", dims, out.Rank())
		}
		if src.Dims[i] != out.Dims[d] && src.Dims[i] != 1 {
			return nil, in.Errorf("operand dimension %d (%d) does not match result dimension %d (%d)", i, src.Dims[i], d, out.Dims[d])
		}
	}
	return arr(src.Elem, out.Dims...), nil
}

func inferReduce(in *Instruction) (*Shape, error) {
	ops := in.Operands
	if len(ops)%2 != 0 || len(ops) == 0 {
		return nil, in.Errorf("needs inputs and as many init values")
	}
	n := len(ops) / 2
	if len(in.Called) != 1 {
		return nil, in.Errorf("needs to_apply=")
	}
	if err := sameDims(in, ops[:n]...); err != nil {
		return nil, err
	}
	src := ops[0].Shape
	drop := map[int64]bool{}
	for _, d := range in.A.Dimensions {
		if d < 0 || int(d) >= src.Rank() || drop[d] {
			return nil, in.Errorf("dimension %d out of range or repeated", d)
		}
		drop[d] = true
	}
	var dims []int64
	for i, d := range src.Dims {
		if !drop[int64(i)] {
			dims = append(dims, d)
		}
	}
	var outs []Shape
	for i := 0; i < n; i++ {
		init := ops[n+i].Shape
		if init.Rank() != 0 {
			return nil, in.Errorf("init value %s must be a scalar", ops[n+i].Name)
		}
		outs = append(outs, *arr(init.Elem, dims...))
	}
	if err := checkReducer(in, in.Called[0], elementTypes(ops[n:]), elementTypes(ops[:n])); err != nil {
		return nil, err
	}
	if n == 1 {
		return &outs[0], nil
	}
	t := TupleShape(outs...)
	return &t, nil
}

// checkWindow refuses a window XLA's shape inference refuses: a
// negative size, a stride or a dilation below 1.
func checkWindow(in *Instruction, w *Window) error {
	for i, d := range w.Dims {
		switch {
		case d.Size < 0:
			return in.Errorf("window dimension %d has size %d", i, d.Size)
		case d.Stride < 1:
			return in.Errorf("window dimension %d has stride %d; strides are at least 1", i, d.Stride)
		case d.LhsDilate < 1 || d.RhsDilate < 1:
			return in.Errorf("window dimension %d has dilations %d and %d; dilations are at least 1", i, d.LhsDilate, d.RhsDilate)
		}
	}
	return nil
}

// windowOut is the output size of one window dimension over an input of
// size n.
func windowOut(n int64, w WindowDim) int64 {
	padded := max(n-1, 0)*w.LhsDilate + min(n, 1) + w.PadLo + w.PadHi
	win := (w.Size-1)*w.RhsDilate + 1
	if padded < win || w.Stride <= 0 {
		return 0
	}
	return (padded-win)/w.Stride + 1
}

func inferReduceWindow(in *Instruction) (*Shape, error) {
	ops := in.Operands
	if len(ops)%2 != 0 || len(ops) == 0 {
		return nil, in.Errorf("needs inputs and as many init values")
	}
	n := len(ops) / 2
	src := ops[0].Shape
	w := in.A.Window
	if w == nil {
		w = &Window{}
	}
	if len(w.Dims) != src.Rank() {
		return nil, in.Errorf("window has %d dimensions, operand %d", len(w.Dims), src.Rank())
	}
	if err := checkWindow(in, w); err != nil {
		return nil, err
	}
	dims := make([]int64, src.Rank())
	for i := range dims {
		dims[i] = windowOut(src.Dims[i], w.Dims[i])
	}
	if err := sameDims(in, ops[:n]...); err != nil {
		return nil, err
	}
	if len(in.Called) != 1 {
		return nil, in.Errorf("needs to_apply=")
	}
	for _, o := range ops[n:] {
		if o.Shape.Rank() != 0 {
			return nil, in.Errorf("init value %s must be a scalar", o.Name)
		}
	}
	if err := checkReducer(in, in.Called[0], elementTypes(ops[n:]), elementTypes(ops[:n])); err != nil {
		return nil, err
	}
	var outs []Shape
	for i := 0; i < n; i++ {
		outs = append(outs, *arr(ops[n+i].Shape.Elem, dims...))
	}
	if n == 1 {
		return &outs[0], nil
	}
	t := TupleShape(outs...)
	return &t, nil
}

// checkProductTypes: a dot's or convolution's result type is the
// printer's word (preferred_element_type), but products of floats have a
// float result (XLA would convert float operands to integers first, a
// meaning no framework asks for, and the evaluator and the device
// disagreed on it), and products of complex numbers a complex one (XLA
// converts complex values to complex types only). As XLA's shape
// inference (MaybeUpcast), a result may be narrower than its operands
// only where the operand type it would infer is a float: s32 operands
// with an f16 result are refused, f32 ones are not.
func checkProductTypes(in *Instruction) error {
	r := in.Shape.Elem
	if in.ShapeInferred || !in.Shape.IsArray() {
		return nil
	}
	for _, o := range in.Operands[:2] {
		t := o.Shape.Elem
		if t.IsComplex() && !r.IsComplex() || t.IsFloat() && !r.IsFloat() && !r.IsComplex() {
			return in.Errorf("a product of %s operands cannot have a %s result", t, r)
		}
	}
	if from := productType(in.Operands[0].Shape.Elem, in.Operands[1].Shape.Elem); !from.IsFloat() && bitWidth(r) < bitWidth(from) {
		return in.Errorf("a product of %s operands cannot have the narrower %s result", from, r)
	}
	return nil
}

// productType is the operand type XLA infers for a product of a and b
// (primitive_util's higher precision type, as far as it matters to
// checkProductTypes): a complex type over any other, then a float, then
// the wider.
func productType(a, b ElementType) ElementType {
	switch {
	case a.IsComplex() != b.IsComplex():
		if b.IsComplex() {
			return b
		}
		return a
	case a.IsFloat() != b.IsFloat():
		if b.IsFloat() {
			return b
		}
		return a
	case bitWidth(b) > bitWidth(a):
		return b
	}
	return a
}

// bitWidth is t's width as XLA counts it: pred is one bit.
func bitWidth(t ElementType) int {
	if t == PRED {
		return 1
	}
	return t.Bits()
}

func inferDot(in *Instruction) (*Shape, error) {
	l, r := in.Operands[0].Shape, in.Operands[1].Shape
	d := in.A.Dot
	if err := checkProductTypes(in); err != nil {
		return nil, err
	}
	if len(d.LhsBatch) != len(d.RhsBatch) || len(d.LhsContract) != len(d.RhsContract) {
		return nil, in.Errorf("lhs and rhs dimension numbers differ in count")
	}
	used := func(dims []int64, rank int, lists ...[]int64) (map[int64]bool, error) {
		m := map[int64]bool{}
		for _, ls := range lists {
			for _, x := range ls {
				if x < 0 || int(x) >= rank || m[x] {
					return nil, in.Errorf("dimension %d out of range or repeated", x)
				}
				m[x] = true
			}
		}
		return m, nil
	}
	lu, err := used(l.Dims, l.Rank(), d.LhsBatch, d.LhsContract)
	if err != nil {
		return nil, err
	}
	ru, err := used(r.Dims, r.Rank(), d.RhsBatch, d.RhsContract)
	if err != nil {
		return nil, err
	}
	var dims []int64
	for i := range d.LhsBatch {
		if l.Dims[d.LhsBatch[i]] != r.Dims[d.RhsBatch[i]] {
			return nil, in.Errorf("batch dimensions differ: %d vs %d", l.Dims[d.LhsBatch[i]], r.Dims[d.RhsBatch[i]])
		}
		dims = append(dims, l.Dims[d.LhsBatch[i]])
	}
	for i := range d.LhsContract {
		if l.Dims[d.LhsContract[i]] != r.Dims[d.RhsContract[i]] {
			return nil, in.Errorf("contracting dimensions differ: %d vs %d", l.Dims[d.LhsContract[i]], r.Dims[d.RhsContract[i]])
		}
	}
	for i, x := range l.Dims {
		if !lu[int64(i)] {
			dims = append(dims, x)
		}
	}
	for i, x := range r.Dims {
		if !ru[int64(i)] {
			dims = append(dims, x)
		}
	}
	t := l.Elem
	if !in.ShapeInferred {
		t = in.Shape.Elem
	}
	return arr(t, dims...), nil
}

func inferConvolution(in *Instruction) (*Shape, error) {
	l, k := in.Operands[0].Shape, in.Operands[1].Shape
	c := in.A.ConvDims
	if err := checkProductTypes(in); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, in.Errorf("needs dim_labels=")
	}
	ns := len(c.InSpatial)
	if l.Rank() != ns+2 || k.Rank() != ns+2 {
		return nil, in.Errorf("dim_labels has %d spatial dimensions; operands have rank %d and %d", ns, l.Rank(), k.Rank())
	}
	w := in.A.Window
	if w == nil {
		w = &Window{}
	}
	if len(w.Dims) != ns {
		return nil, in.Errorf("window has %d dimensions, convolution %d", len(w.Dims), ns)
	}
	fg, bg := in.A.FeatureGroups, in.A.BatchGroups
	if fg <= 0 || bg <= 0 {
		return nil, in.Errorf("group counts must be positive")
	}
	inF := l.Dims[c.InFeature]
	if inF%fg != 0 || inF/fg != k.Dims[c.KIn] {
		return nil, in.Errorf("input features %d / feature_group_count %d != kernel input features %d", inF, fg, k.Dims[c.KIn])
	}
	outF := k.Dims[c.KOut]
	if outF%fg != 0 || outF%bg != 0 || l.Dims[c.InBatch]%bg != 0 {
		return nil, in.Errorf("group counts do not divide the feature or batch dimensions")
	}
	dims := make([]int64, ns+2)
	dims[c.OutBatch] = l.Dims[c.InBatch] / bg
	dims[c.OutFeature] = outF
	if err := checkWindow(in, w); err != nil {
		return nil, err
	}
	for i := 0; i < ns; i++ {
		wd := w.Dims[i]
		if wd.Size != k.Dims[c.KSpatial[i]] {
			return nil, in.Errorf("window size %d does not match kernel spatial dimension %d", wd.Size, k.Dims[c.KSpatial[i]])
		}
		dims[c.OutSpatial[i]] = windowOut(l.Dims[c.InSpatial[i]], wd)
	}
	t := l.Elem
	if !in.ShapeInferred {
		t = in.Shape.Elem
	}
	return arr(t, dims...), nil
}

// indexVectorSize is the length of the index vectors in indices of a
// gather or scatter whose index_vector_dim is ivd (XLA: an ivd equal to
// the rank makes every index a vector of one).
func indexVectorSize(indices Shape, ivd int64) (int64, error) {
	switch {
	case ivd < 0 || int(ivd) > indices.Rank():
		return 0, fmt.Errorf("index_vector_dim %d out of range for indices %s", ivd, indices.DimsString())
	case int(ivd) == indices.Rank():
		return 1, nil
	}
	return indices.Dims[ivd], nil
}

// dimList checks a list of dimension numbers of a rank-n shape: in range,
// no repeats, ascending when sorted is set.
func dimList(name string, ds []int64, n int, sorted bool) (map[int64]bool, error) {
	set := map[int64]bool{}
	for i, d := range ds {
		switch {
		case d < 0 || int(d) >= n:
			return nil, fmt.Errorf("%s: dimension %d out of range [0, %d)", name, d, n)
		case set[d]:
			return nil, fmt.Errorf("%s: dimension %d repeated", name, d)
		case sorted && i > 0 && d < ds[i-1]:
			return nil, fmt.Errorf("%s must be sorted: %v", name, ds)
		}
		set[d] = true
	}
	return set, nil
}

// batchDims lists the dimensions of indices other than index_vector_dim,
// the gather's and scatter's batch of index vectors.
func batchDims(indices Shape, ivd int64) []int64 {
	var out []int64
	for i, d := range indices.Dims {
		if int64(i) != ivd {
			out = append(out, d)
		}
	}
	return out
}

// checkIndexing checks what a gather and a scatter share: the map from
// index vector components to operand dimensions and the batching
// dimensions of operand and indices.
func checkIndexing(operand, indices Shape, ivd int64, indexMap, operandBatching, indicesBatching []int64, mapName string) error {
	n, err := indexVectorSize(indices, ivd)
	if err != nil {
		return err
	}
	if int64(len(indexMap)) != n {
		return fmt.Errorf("%s has %d entries, the index vectors %d", mapName, len(indexMap), n)
	}
	mapped, err := dimList(mapName, indexMap, operand.Rank(), false)
	if err != nil {
		return err
	}
	ob, err := dimList("operand batching dims", operandBatching, operand.Rank(), true)
	if err != nil {
		return err
	}
	for d := range ob {
		if mapped[d] {
			return fmt.Errorf("dimension %d is both mapped by %s and a batching dimension", d, mapName)
		}
	}
	ib, err := dimList("indices batching dims", indicesBatching, indices.Rank(), false)
	if err != nil {
		return err
	}
	if ib[ivd] {
		return fmt.Errorf("index_vector_dim %d is a batching dimension", ivd)
	}
	if len(operandBatching) != len(indicesBatching) {
		return fmt.Errorf("%d operand batching dims, %d indices batching dims", len(operandBatching), len(indicesBatching))
	}
	for i, d := range operandBatching {
		if operand.Dims[d] != indices.Dims[indicesBatching[i]] {
			return fmt.Errorf("batching dimension %d of the operand has %d elements, dimension %d of the indices %d", d, operand.Dims[d], indicesBatching[i], indices.Dims[indicesBatching[i]])
		}
	}
	return nil
}

// inferGather follows XLA's ShapeInference::InferGatherShape.
func inferGather(in *Instruction) (*Shape, error) {
	src, idx := in.Operands[0].Shape, in.Operands[1].Shape
	g := in.A.Gather
	if !idx.Elem.IsInteger() {
		return nil, in.Errorf("indices must be integers, are %s", idx.Elem)
	}
	if len(g.SliceSizes) != src.Rank() {
		return nil, in.Errorf("slice_sizes has %d entries for rank %d", len(g.SliceSizes), src.Rank())
	}
	if err := checkIndexing(src, idx, g.IndexVectorDim, g.StartIndexMap, g.OperandBatchingDims, g.StartIndicesBatchingDims, "start_index_map"); err != nil {
		return nil, in.Errorf("%w", err)
	}
	collapsed, err := dimList("collapsed_slice_dims", g.CollapsedSliceDims, src.Rank(), true)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	skip := map[int64]bool{}
	for d := range collapsed {
		skip[d] = true
	}
	for _, d := range g.OperandBatchingDims {
		if skip[d] {
			return nil, in.Errorf("dimension %d is both collapsed and a batching dimension", d)
		}
		skip[d] = true
	}
	var offsets []int64
	for i, s := range g.SliceSizes {
		switch {
		case s < 0 || s > src.Dims[i]:
			return nil, in.Errorf("slice size %d of dimension %d exceeds its %d elements", s, i, src.Dims[i])
		case skip[int64(i)] && s > 1:
			return nil, in.Errorf("dimension %d is collapsed or batching, so its slice size must be 0 or 1, is %d", i, s)
		case !skip[int64(i)]:
			offsets = append(offsets, s)
		}
	}
	if len(offsets) != len(g.OffsetDims) {
		return nil, in.Errorf("offset_dims has %d entries, the slice keeps %d dimensions", len(g.OffsetDims), len(offsets))
	}
	batch := batchDims(idx, g.IndexVectorDim)
	rank := len(batch) + len(offsets)
	isOff, err := dimList("offset_dims", g.OffsetDims, rank, true)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	dims := make([]int64, rank)
	oi, bi := 0, 0
	for i := range dims {
		if isOff[int64(i)] {
			dims[i] = offsets[oi]
			oi++
		} else {
			dims[i] = batch[bi]
			bi++
		}
	}
	// A collapsed dimension is read at one index (its start, clamped
	// into it: a slice size of 0 reads as 1); an empty one has none to
	// read, while the result has elements to fill.
	out := arr(src.Elem, dims...)
	if out.NumElements() > 0 {
		for d := range collapsed {
			if src.Dims[d] == 0 {
				return nil, in.Errorf("collapsed dimension %d of the operand is empty, so the %s result's elements have nothing to read", d, out)
			}
		}
	}
	return out, nil
}

// inferScatter follows XLA's ShapeInference::InferScatterShape.
func inferScatter(in *Instruction) (*Shape, error) {
	ops := in.Operands
	if len(ops) < 3 || len(ops)%2 == 0 {
		return nil, in.Errorf("needs N operands, indices and N updates")
	}
	n := (len(ops) - 1) / 2
	if len(in.Called) != 1 {
		return nil, in.Errorf("needs to_apply=")
	}
	if err := sameDims(in, ops[:n]...); err != nil {
		return nil, err
	}
	if err := sameDims(in, ops[n+1:]...); err != nil {
		return nil, err
	}
	operand, idx, upd := ops[0].Shape, ops[n].Shape, ops[n+1].Shape
	if !idx.Elem.IsInteger() {
		return nil, in.Errorf("indices must be integers, are %s", idx.Elem)
	}
	for i := 0; i < n; i++ {
		if o, u := ops[i].Shape.Elem, ops[n+1+i].Shape.Elem; o != u {
			return nil, in.Errorf("operand %s is %s, its updates %s are %s", ops[i].Name, o, ops[n+1+i].Name, u)
		}
	}
	d := in.A.Scatter
	if err := checkIndexing(operand, idx, d.IndexVectorDim, d.ScatterDimsToOperandDims, d.InputBatchingDims, d.ScatterIndicesBatchingDims, "scatter_dims_to_operand_dims"); err != nil {
		return nil, in.Errorf("%w", err)
	}
	window, err := dimList("update_window_dims", d.UpdateWindowDims, upd.Rank(), true)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	inserted, err := dimList("inserted_window_dims", d.InsertedWindowDims, operand.Rank(), true)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	for _, b := range d.InputBatchingDims {
		if inserted[b] {
			return nil, in.Errorf("dimension %d is both inserted and a batching dimension", b)
		}
		inserted[b] = true
	}
	if got := len(d.UpdateWindowDims) + len(inserted); got != operand.Rank() {
		return nil, in.Errorf("update_window_dims (%d) and inserted and batching dims (%d) must cover the operand's %d dimensions", len(d.UpdateWindowDims), len(inserted), operand.Rank())
	}
	// The window's dimensions fit the operand's that are not inserted.
	wi := 0
	for od := 0; od < operand.Rank(); od++ {
		if inserted[int64(od)] {
			continue
		}
		ud := d.UpdateWindowDims[wi]
		if upd.Dims[ud] > operand.Dims[od] {
			return nil, in.Errorf("update window dimension %d has %d elements, operand dimension %d only %d", ud, upd.Dims[ud], od, operand.Dims[od])
		}
		wi++
	}
	// The updates' other dimensions are the indices' batch.
	var scatter []int64
	for i, v := range upd.Dims {
		if !window[int64(i)] {
			scatter = append(scatter, v)
		}
	}
	if batch := batchDims(idx, d.IndexVectorDim); !slices.Equal(scatter, batch) {
		return nil, in.Errorf("the updates' scatter dimensions %v must be the indices' %v", scatter, batch)
	}
	if err := checkReducer(in, in.Called[0], elementTypes(ops[:n]), elementTypes(ops[n+1:])); err != nil {
		return nil, err
	}
	if n == 1 {
		return like(ops[0].Shape), nil
	}
	t := TupleShape()
	for _, o := range ops[:n] {
		t.Tuple = append(t.Tuple, *like(o.Shape))
	}
	return &t, nil
}

// elementTypes lists the operands' element types.
func elementTypes(ops []*Instruction) []ElementType {
	out := make([]ElementType, len(ops))
	for i, o := range ops {
		out[i] = o.Shape.Elem
	}
	return out
}

// sameKind is XLA's type compatibility ignoring floating-point
// precision: a bf16 reduction may accumulate in an f32 reducer.
func sameKind(a, b ElementType) bool {
	return a == b || (a.Kind() == KindFloat && b.Kind() == KindFloat)
}

// checkReducer checks that c folds values into accumulators, as reduce,
// reduce-window, scatter and select-and-scatter use it: parameters the
// accumulators (scalars of acc's types) then the values (of vals'), and
// a root of the accumulators' types (a tuple of them for several).
func checkReducer(in *Instruction, c *Computation, acc, vals []ElementType) error {
	n := len(acc)
	if len(c.Params) != 2*n {
		return in.Errorf("reducer %s takes %d parameters, needs %d", c.Name, len(c.Params), 2*n)
	}
	for i, p := range c.Params {
		want := acc[i%n]
		if i >= n {
			want = vals[i-n]
		}
		if !p.Shape.IsArray() || p.Shape.Rank() != 0 || !sameKind(p.Shape.Elem, want) {
			return in.Errorf("reducer %s's parameter %d is %s, must be a %s scalar", c.Name, i, p.Shape, want)
		}
	}
	root := []Shape{c.Root.Shape}
	if n > 1 || c.Root.Shape.IsTuple() {
		if !c.Root.Shape.IsTuple() || len(c.Root.Shape.Tuple) != n {
			return in.Errorf("reducer %s must return %d values, returns %s", c.Name, n, c.Root.Shape)
		}
		root = c.Root.Shape.Tuple
	}
	for i, r := range root {
		if !r.IsArray() || r.Rank() != 0 || !sameKind(r.Elem, acc[i]) {
			return in.Errorf("reducer %s returns %s, must return %s scalars", c.Name, c.Root.Shape, acc[i])
		}
	}
	return nil
}

// checkComparator checks a sort's (or select-and-scatter's select)
// comparator over operands of types ts: two scalar parameters per
// operand, of its type, and a pred scalar result.
func checkComparator(in *Instruction, c *Computation, ts []ElementType) error {
	if len(c.Params) != 2*len(ts) {
		return in.Errorf("comparator %s takes %d parameters, needs %d", c.Name, len(c.Params), 2*len(ts))
	}
	for i, p := range c.Params {
		if !p.Shape.IsArray() || p.Shape.Rank() != 0 || !sameKind(p.Shape.Elem, ts[i/2]) {
			return in.Errorf("comparator %s's parameter %d is %s, must be a %s scalar", c.Name, i, p.Shape, ts[i/2])
		}
	}
	if r := c.Root.Shape; !r.IsArray() || r.Rank() != 0 || r.Elem != PRED {
		return in.Errorf("comparator %s returns %s, must return pred[]", c.Name, r)
	}
	return nil
}

// scalarsOf stands in scalar instructions of the operands' types, to
// check a map computation's parameters.
func scalarsOf(ops []*Instruction) []*Instruction {
	out := make([]*Instruction, len(ops))
	for i, o := range ops {
		out[i] = &Instruction{Name: o.Name, Shape: *arr(o.Shape.Elem)}
	}
	return out
}

// sortedKeys is a helper for deterministic iteration in messages.
func sortedKeys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// inferFft is XLA's fft shape: FFT and IFFT keep a complex shape; RFFT
// takes a real one and gives the complex half spectrum (last dimension
// n/2 + 1); IRFFT takes the half spectrum and gives the real signal of
// fft_length's last length. fft_length names 1 to 3 trailing dimensions.
func inferFft(in *Instruction) (*Shape, error) {
	x := in.Operands[0].Shape
	l := in.A.FftLength
	if in.A.FftType == "" {
		return nil, in.Errorf("needs fft_type")
	}
	if len(l) < 1 || len(l) > 3 || len(l) > x.Rank() {
		return nil, in.Errorf("fft_length %v must name 1 to 3 of the operand's %d dimensions", l, x.Rank())
	}
	r := x.Rank() - len(l)
	dims := append([]int64{}, x.Dims...)
	cplx := func(t ElementType) (ElementType, bool) {
		switch t {
		case F32:
			return C64, true
		case F64:
			return C128, true
		}
		return t, false
	}
	t := x.Elem
	switch in.A.FftType {
	case "FFT", "IFFT":
		if t != C64 && t != C128 {
			return nil, in.Errorf("%s of %s: takes a complex operand", in.A.FftType, t)
		}
		for i, n := range l {
			if dims[r+i] != n {
				return nil, in.Errorf("fft_length %v does not match the operand's %s", l, x.DimsString())
			}
		}
	case "RFFT":
		c, ok := cplx(t)
		if !ok {
			return nil, in.Errorf("RFFT of %s: takes f32 or f64", t)
		}
		for i, n := range l {
			if dims[r+i] != n {
				return nil, in.Errorf("fft_length %v does not match the operand's %s", l, x.DimsString())
			}
		}
		t = c
		dims[len(dims)-1] = l[len(l)-1]/2 + 1
	case "IRFFT":
		rt, ok := t.ComplexPart()
		if !ok {
			return nil, in.Errorf("IRFFT of %s: takes a complex operand", t)
		}
		for i, n := range l[:len(l)-1] {
			if dims[r+i] != n {
				return nil, in.Errorf("fft_length %v does not match the operand's %s", l, x.DimsString())
			}
		}
		if last := l[len(l)-1]; dims[len(dims)-1] != last/2+1 {
			return nil, in.Errorf("IRFFT of length %d takes %d complex values in the last dimension, not %d", last, last/2+1, dims[len(dims)-1])
		}
		t = rt
		dims[len(dims)-1] = l[len(l)-1]
	}
	s := ArrayShape(t, dims...)
	return &s, nil
}

// inferTriangularSolve is XLA's rule: a is [..., n, n], b [..., n, m]
// (left side) or [..., m, n], both of one float or complex type and the
// same batch dimensions; the result is b's shape.
func inferTriangularSolve(in *Instruction) (*Shape, error) {
	a, b := in.Operands[0].Shape, in.Operands[1].Shape
	if a.Elem != b.Elem || !(a.Elem.IsFloat() || a.Elem.Kind() == KindComplex) {
		return nil, in.Errorf("takes float or complex operands of one type, not %s and %s", a.Elem, b.Elem)
	}
	r := a.Rank()
	if r < 2 || b.Rank() != r || a.Dims[r-1] != a.Dims[r-2] {
		return nil, in.Errorf("a must be square matrices [..., n, n] and b of its rank: %s, %s", a.DimsString(), b.DimsString())
	}
	for i := 0; i < r-2; i++ {
		if a.Dims[i] != b.Dims[i] {
			return nil, in.Errorf("batch dimensions differ: %s, %s", a.DimsString(), b.DimsString())
		}
	}
	n := a.Dims[r-1]
	if in.A.LeftSide && b.Dims[r-2] != n || !in.A.LeftSide && b.Dims[r-1] != n {
		return nil, in.Errorf("b %s does not fit a %s on the %s", b.DimsString(), a.DimsString(), map[bool]string{true: "left", false: "right"}[in.A.LeftSide])
	}
	s := b
	return &s, nil
}

// BatchNormAttrs reads a batch-norm op's feature_index (a dimension of
// its operand) and epsilon, which XLA keeps as an f32.
func BatchNormAttrs(in *Instruction) (feature int, epsilon float32, err error) {
	fv, ok := in.AttrValue("feature_index")
	if !ok {
		return 0, 0, in.Errorf("%s needs feature_index", in.Op)
	}
	f, err := strconv.ParseInt(fv, 10, 64)
	if err != nil || len(in.Operands) == 0 || f < 0 || f >= int64(in.Operands[0].Shape.Rank()) {
		return 0, 0, in.Errorf("feature_index=%s is not a dimension of the operand", fv)
	}
	ev, ok := in.AttrValue("epsilon")
	if !ok {
		return 0, 0, in.Errorf("%s needs epsilon", in.Op)
	}
	e, err := strconv.ParseFloat(ev, 32)
	if err != nil {
		return 0, 0, in.Errorf("epsilon=%s is not a number", ev)
	}
	return int(f), float32(e), nil
}

// inferBatchNorm checks a batch-norm op's operands, as XLA's shape
// inference does: a float operand of rank at least 1 and feature vectors
// of its type as long as its feature dimension (training: operand, scale,
// offset; inference: those, mean and variance; grad: operand, scale,
// mean, variance and the output's gradient, of the operand's shape). The
// result is the normalized operand, with training's mean and variance
// or grad's gradients of the operand, scale and offset.
func inferBatchNorm(in *Instruction) (*Shape, error) {
	want := map[Opcode]int{OpBatchNormTraining: 3, OpBatchNormInference: 5, OpBatchNormGrad: 5}[in.Op]
	if len(in.Operands) != want {
		return nil, in.Errorf("%s takes %d operands, has %d", in.Op, want, len(in.Operands))
	}
	x := in.Operands[0].Shape
	if !x.IsArray() || !x.Elem.IsFloat() || x.Rank() < 1 {
		return nil, in.Errorf("%s's operand must be a float array of rank at least 1, is %s", in.Op, x)
	}
	f, _, err := BatchNormAttrs(in)
	if err != nil {
		return nil, err
	}
	feat := ArrayShape(x.Elem, x.Dims[f])
	for i, o := range in.Operands[1:] {
		w := feat
		if in.Op == OpBatchNormGrad && i == 3 {
			w = *like(x)
		}
		if !o.Shape.Equal(w) {
			return nil, in.Errorf("%s's operand %d must be %s, is %s", in.Op, i+1, w, o.Shape)
		}
	}
	if in.Op == OpBatchNormInference {
		return like(x), nil
	}
	t := TupleShape(*like(x), feat, feat)
	return &t, nil
}

// inferStochasticConvert checks stochastic-convert(operand, random), as
// XLA's shape inference does: a float operand, random bits of an
// unsigned type of its width and of its dimensions; the result, the
// operand's dimensions in the printed type, which must be a signed
// integer (XLA's only decomposition: floats to signed integers).
func inferStochasticConvert(in *Instruction) (*Shape, error) {
	if len(in.Operands) != 2 {
		return nil, in.Errorf("stochastic-convert takes an operand and random bits, has %d operands", len(in.Operands))
	}
	x, r := in.Operands[0].Shape, in.Operands[1].Shape
	if !x.IsArray() || !x.Elem.IsFloat() {
		return nil, in.Errorf("stochastic-convert's operand must be a float array, is %s", x)
	}
	if !r.IsArray() || r.Elem.Kind() != KindUnsigned || r.Elem.Bits() != x.Elem.Bits() || !r.SameDims(x) {
		return nil, in.Errorf("stochastic-convert's random bits must be u%d%s, are %s", x.Elem.Bits(), x.DimsString(), r)
	}
	if in.ShapeInferred || !in.Shape.IsArray() {
		return nil, in.Errorf("stochastic-convert needs its result type")
	}
	if in.Shape.Elem.Kind() != KindSigned {
		return nil, in.Errorf("stochastic-convert to %s: XLA converts floats to signed integers only", in.Shape.Elem)
	}
	s := ArrayShape(in.Shape.Elem, x.Dims...)
	return &s, nil
}

// RaggedDot is a ragged-dot's form, one of JAX's three
// (jax.lax.ragged_dot_general): the lhs's Ragged dimension is split, in
// order, into groups of group_sizes' lengths (g of them), and
//   - RaggedRows: Ragged is a free (row) dimension of the lhs, and group
//     j's rows are multiplied by the rhs's slice j along its Group
//     dimension: [b, m, k] x [g, b, k, n] -> [b, m, n];
//   - RaggedContracting: Ragged is contracted, and result j sums the
//     products of group j's values of it only: [b, m, k] x [b, k, n] ->
//     [g, b, m, n];
//   - RaggedBatch: Ragged is a batch dimension, every group's with the
//     one rhs: [b, m, k] x [b, k, n] -> [b, m, n].
//
// Positions past the last group contribute nothing (zeros). Dot is the
// dot of the lhs and the rhs (its slice j, for RaggedRows), whose result
// is the op's (a slice of it, for RaggedContracting); RhsRagged is the
// rhs's dimension paired with Ragged (contracting or batch).
type RaggedDot struct {
	Mode                     RaggedMode
	Ragged, Group, RhsRagged int64
	Groups                   int64
	Dot                      *Instruction
	// SizeDims are the lhs dimensions that group_sizes' leading ones
	// index, where it has more than one (JAX's ragged_dot_general):
	// [b..., x..., g] for ragged rows or a ragged contracting dimension,
	// b the batch dimensions and x the lhs's free (contracting)
	// dimensions outer to the ragged one; [x..., g] for a ragged batch
	// dimension, x the batch dimensions outer to it. Each of their
	// positions has its own groups; group_sizes [g] serves them all.
	SizeDims []int64
}

// SizesAt says where SizeDims lie in the lhs (which 0), in the rhs
// (which 1: their batch or contracting partners) or in Dot's result
// (which 2: for ragged rows or a ragged batch dimension).
func (f *RaggedDot) SizesAt(which int) []int64 {
	d := f.Dot.A.Dot
	lFree, _ := d.FreeDims(f.Dot.Operands[0].Shape.Rank(), f.Dot.Operands[1].Shape.Rank())
	out := make([]int64, len(f.SizeDims))
	for k, e := range f.SizeDims {
		b := slices.Index(d.LhsBatch, e)
		switch {
		case which == 0:
			out[k] = e
		case which == 1 && b >= 0:
			out[k] = d.RhsBatch[b]
		case which == 1:
			out[k] = d.RhsContract[slices.Index(d.LhsContract, e)]
		case b >= 0:
			out[k] = int64(b)
		default:
			out[k] = int64(len(d.LhsBatch) + slices.Index(lFree, e))
		}
	}
	return out
}

// RaggedMode is which kind of dimension a ragged-dot's ragged one is.
type RaggedMode int

const (
	RaggedRows RaggedMode = iota
	RaggedContracting
	RaggedBatch
)

// ResultDim is the ragged dimension's place in Dot's result, for ragged
// rows (after the batch dimensions, among the lhs's free ones) and a
// ragged batch dimension (among the batch dimensions); -1 for a ragged
// contracting one, which the result does not have.
func (f *RaggedDot) ResultDim() int {
	d := f.Dot.A.Dot
	switch f.Mode {
	case RaggedBatch:
		return slices.Index(d.LhsBatch, f.Ragged)
	case RaggedRows:
		lFree, _ := d.FreeDims(f.Dot.Operands[0].Shape.Rank(), f.Dot.Operands[1].Shape.Rank())
		return len(d.LhsBatch) + slices.Index(lFree, f.Ragged)
	}
	return -1
}

// RaggedDotForm reads a ragged-dot's lhs_ragged_dims and rhs_group_dims
// and dimension numbers.
func RaggedDotForm(in *Instruction) (*RaggedDot, error) {
	ints := func(name string) ([]int64, error) {
		v, ok := in.AttrValue(name)
		if !ok {
			return nil, nil
		}
		return parseIntList(v)
	}
	lr, err := ints("lhs_ragged_dims")
	if err != nil {
		return nil, in.Errorf("lhs_ragged_dims: %v", err)
	}
	rg, err := ints("rhs_group_dims")
	if err != nil {
		return nil, in.Errorf("rhs_group_dims: %v", err)
	}
	if len(in.Operands) != 3 {
		return nil, in.Errorf("ragged-dot takes lhs, rhs and group_sizes, has %d operands", len(in.Operands))
	}
	l, r, sizes := in.Operands[0].Shape, in.Operands[1].Shape, in.Operands[2].Shape
	d := in.A.Dot
	if d == nil {
		d = &DotDims{}
	}
	if len(lr) != 1 || lr[0] < 0 || int(lr[0]) >= l.Rank() {
		return nil, in.Errorf("ragged-dot needs one lhs ragged dimension of the lhs, has lhs_ragged_dims=%v", lr)
	}
	if !sizes.IsArray() || !sizes.Elem.IsInteger() || sizes.Rank() < 1 {
		return nil, in.Errorf("ragged-dot's group_sizes must be an integer array, are %s", sizes)
	}
	f := &RaggedDot{Ragged: lr[0], Group: -1, RhsRagged: -1, Groups: sizes.Dims[sizes.Rank()-1]}
	plain := &DotDims{LhsBatch: d.LhsBatch, RhsBatch: d.RhsBatch, LhsContract: d.LhsContract, RhsContract: d.RhsContract}
	rhs := in.Operands[1]
	if i := slices.Index(d.LhsContract, lr[0]); i >= 0 {
		f.Mode = RaggedContracting
		if i < len(d.RhsContract) {
			f.RhsRagged = d.RhsContract[i]
		}
	} else if i := slices.Index(d.LhsBatch, lr[0]); i >= 0 {
		f.Mode = RaggedBatch
		if i < len(d.RhsBatch) {
			f.RhsRagged = d.RhsBatch[i]
		}
	} else {
		f.Mode = RaggedRows
		if len(rg) != 1 || rg[0] < 0 || int(rg[0]) >= r.Rank() || slices.Contains(d.RhsContract, rg[0]) || slices.Contains(d.RhsBatch, rg[0]) {
			return nil, in.Errorf("ragged-dot with ragged rows needs one rhs group dimension that is neither batch nor contracting, has rhs_group_dims=%v", rg)
		}
		g := rg[0]
		f.Group = g
		drop := func(ds []int64) []int64 {
			out := slices.Clone(ds)
			for i, x := range out {
				if x > g {
					out[i]--
				}
			}
			return out
		}
		plain.RhsBatch, plain.RhsContract = drop(d.RhsBatch), drop(d.RhsContract)
		rhs = &Instruction{Name: rhs.Name, Op: OpParameter, Shape: ArrayShape(r.Elem, slices.Delete(slices.Clone(r.Dims), int(g), int(g)+1)...)}
	}
	if f.Mode != RaggedRows && len(rg) != 0 {
		return nil, in.Errorf("ragged-dot with a ragged contracting or batch dimension has no rhs group dimension, has rhs_group_dims=%v", rg)
	}
	if sizes.Rank() > 1 {
		var dims []int64
		if f.Mode != RaggedBatch {
			dims = slices.Clone(d.LhsBatch)
		}
		for e := range lr[0] {
			batch, contract := slices.Contains(d.LhsBatch, e), slices.Contains(d.LhsContract, e)
			if f.Mode == RaggedBatch && batch || f.Mode == RaggedContracting && contract || f.Mode == RaggedRows && !batch && !contract {
				dims = append(dims, e)
			}
		}
		want := make([]int64, len(dims))
		for k, e := range dims {
			if e < 0 || int(e) >= l.Rank() {
				return nil, in.Errorf("ragged-dot's lhs batch dimension %d is not one of the lhs's %d", e, l.Rank())
			}
			want[k] = l.Dims[e]
		}
		if !slices.Equal(sizes.Dims[:sizes.Rank()-1], want) {
			return nil, in.Errorf("ragged-dot's group_sizes is %s: it must be [g] or %v followed by g (the lhs's sizes of its batch dimensions and of the dimensions of the ragged one's kind outer to it, as JAX's ragged_dot_general)", sizes, want)
		}
		f.SizeDims = dims
	}
	shape := in.Shape
	if f.Mode == RaggedContracting && shape.IsArray() && shape.Rank() > 0 {
		shape = ArrayShape(shape.Elem, shape.Dims[1:]...)
	}
	f.Dot = &Instruction{Name: in.Name, Op: OpDot, Shape: shape, ShapeInferred: in.ShapeInferred, Pos: in.Pos,
		Operands: []*Instruction{in.Operands[0], rhs}, A: Attributes{Dot: plain}}
	return f, nil
}

// inferRaggedDot checks a ragged-dot (RaggedDotForm): its dot, and
// group_sizes of one integer per group (the rhs's group dimension's
// size, for ragged rows). Its shape is that dot's, with the groups
// first for a ragged contracting dimension.
func inferRaggedDot(in *Instruction) (*Shape, error) {
	f, err := RaggedDotForm(in)
	if err != nil {
		return nil, err
	}
	if f.Mode == RaggedRows && f.Groups != in.Operands[1].Shape.Dims[f.Group] {
		return nil, in.Errorf("ragged-dot's group_sizes has %d groups where the rhs has %d", f.Groups, in.Operands[1].Shape.Dims[f.Group])
	}
	s, err := inferDot(f.Dot)
	if err != nil || f.Mode != RaggedContracting {
		return s, err
	}
	return arr(s.Elem, append([]int64{f.Groups}, s.Dims...)...), nil
}

// inferAsync checks XLA's scheduled forms against what they hold:
// copy-start's (copy, operand, contexts), async-start's ((operands),
// the called computation's result, contexts), an update that passes its
// operand on, and a done that gives its start's result (element 1 of
// the start's tuple, or elements n to 2n of a collective start's older
// (operands, results) form, or the start's value itself where that is
// the result). Collective starts' own shapes are the printer's word
// (a gather's result depends on its groups).
func inferAsync(in *Instruction) (*Shape, error) {
	if len(in.Operands) == 0 {
		return nil, in.Errorf("%s needs an operand", in.Op)
	}
	from := in.Operands[0].Shape
	sh := in.Shape
	if in.ShapeInferred {
		return nil, in.Errorf("%s needs its result shape", in.Op)
	}
	bad := func(want string) (*Shape, error) {
		return nil, in.Errorf("%s's shape must be %s, is %s", in.Op, want, sh)
	}
	switch in.Op {
	case OpCopyStart:
		if !sh.IsTuple() || len(sh.Tuple) < 2 || !sh.Tuple[0].Equal(from) || !sh.Tuple[1].Equal(from) {
			return bad(fmt.Sprintf("(%s, %s, contexts...)", from, from))
		}
	case OpAsyncStart:
		if len(in.Called) != 1 {
			return nil, in.Errorf("async-start needs calls=")
		}
		// The wrapped computation takes the operands, as a call does
		// (FuzzMutants seed 560, mutation 1144: one parameter, two
		// operands, which the evaluator met as an internal error).
		if err := checkArgs(in, in.Called[0], in.Operands); err != nil {
			return nil, err
		}
		args := TupleShape()
		for _, o := range in.Operands {
			args.Tuple = append(args.Tuple, o.Shape)
		}
		root := in.Called[0].Root.Shape
		if !sh.IsTuple() || len(sh.Tuple) < 2 || !sh.Tuple[0].Equal(args) || !sh.Tuple[1].Equal(root) {
			return bad(fmt.Sprintf("(%s, %s, contexts...)", args, root))
		}
	case OpAsyncUpdate:
		if !sh.Equal(from) {
			return bad(from.String())
		}
	case OpAsyncDone, OpCopyDone:
		held := 0 // copy-start's copy
		if in.Op == OpAsyncDone {
			held = 1 // async-start's result
		}
		if !from.IsTuple() || len(from.Tuple) < 2 || !sh.Equal(from.Tuple[held]) {
			return nil, in.Errorf("%s of %s cannot give %s", in.Op, from, sh)
		}
	case OpAllReduceDone, OpAllGatherDone, OpCollectivePermuteDone:
		n := 1
		if sh.IsTuple() {
			n = len(sh.Tuple)
		}
		ok := sh.Equal(from)
		if from.IsTuple() && len(from.Tuple) >= 2*n {
			if sh.IsTuple() {
				ok = ok || TupleShape(from.Tuple[n:2*n]...).Equal(sh)
			} else {
				ok = ok || from.Tuple[1].Equal(sh)
			}
		}
		if !ok {
			return nil, in.Errorf("%s of %s cannot give %s", in.Op, from, sh)
		}
	}
	return nil, nil
}

// inferScan is XLA's scan: inputs (the first operands) scanned along
// dimension d, all of one length there, and the carries' initial values
// (the last num_carries operands). to_apply takes each input's slice at
// a step (dimension d dropped) and the carries, and returns the step's
// outputs and the new carries: a tuple of them, or one value (one output
// and no carry, or one carry and no output). The result is each output
// stacked along d, then the final carries, a tuple where to_apply's
// result is one.
func inferScan(in *Instruction) (*Shape, error) {
	ops := in.Operands
	k := in.A.NumCarries
	if k < 0 || k >= int64(len(ops)) {
		return nil, in.Errorf("num_carries=%d, with %d operands: needs at least one input", k, len(ops))
	}
	if len(in.Called) != 1 {
		return nil, in.Errorf("needs to_apply=")
	}
	if len(in.A.Dimensions) != 1 {
		return nil, in.Errorf("needs one scan dimension, dimensions=%v", in.A.Dimensions)
	}
	inputs, inits := ops[:int64(len(ops))-k], ops[int64(len(ops))-k:]
	d := in.A.Dimensions[0]
	var n int64
	for i, x := range inputs {
		if d < 0 || d >= int64(x.Shape.Rank()) {
			return nil, in.Errorf("scan dimension %d out of range for input %s (%s)", d, x.Name, x.Shape)
		}
		if i == 0 {
			n = x.Shape.Dims[d]
		} else if x.Shape.Dims[d] != n {
			return nil, in.Errorf("input %s is %d long in dimension %d, input %s %d", x.Name, x.Shape.Dims[d], d, inputs[0].Name, n)
		}
	}
	c := in.Called[0]
	if len(c.Params) != len(ops) {
		return nil, in.Errorf("to_apply %s takes %d parameters, needs %d (an input's slice each, then the carries)", c.Name, len(c.Params), len(ops))
	}
	for i, p := range c.Params {
		want := *like(ops[i].Shape)
		if i < len(inputs) {
			want.Dims = slices.Delete(slices.Clone(want.Dims), int(d), int(d)+1)
		}
		if !p.Shape.IsArray() || p.Shape.Elem != want.Elem || !p.Shape.SameDims(want) {
			return nil, in.Errorf("to_apply %s's parameter %d is %s, must be %s", c.Name, i, p.Shape, want)
		}
	}
	res := []Shape{c.Root.Shape}
	if c.Root.Shape.IsTuple() {
		res = c.Root.Shape.Tuple
	}
	m := int64(len(res)) - k
	if m < 0 {
		return nil, in.Errorf("to_apply %s returns %s: fewer values than the %d carries", c.Name, c.Root.Shape, k)
	}
	var out []Shape
	for i, r := range res {
		if !r.IsArray() {
			return nil, in.Errorf("to_apply %s returns %s: arrays, not tuples", c.Name, c.Root.Shape)
		}
		if int64(i) >= m {
			init := inits[int64(i)-m]
			if r.Elem != init.Shape.Elem || !r.SameDims(init.Shape) {
				return nil, in.Errorf("to_apply %s returns carry %d as %s, its initial value %s is %s", c.Name, int64(i)-m, r, init.Name, init.Shape)
			}
			out = append(out, *like(init.Shape))
			continue
		}
		if d > int64(r.Rank()) {
			return nil, in.Errorf("to_apply %s's output %d (%s) has no dimension %d to stack its steps along", c.Name, i, r, d)
		}
		out = append(out, *arr(r.Elem, slices.Insert(slices.Clone(r.Dims), int(d), n)...))
	}
	if !c.Root.Shape.IsTuple() {
		return &out[0], nil
	}
	t := TupleShape(out...)
	return &t, nil
}
