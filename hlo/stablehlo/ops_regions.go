package stablehlo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The rules of ops with dimension numbers, windows and regions.

// dimsPair reads a pretty `[a] x [b]` pair (batching_dims, contracting_dims).
func dimsPair(a *Attr) (l, r []int64, err error) {
	if a.Kind != ListAttr || a.Text != "x" || len(a.List) != 2 {
		return nil, nil, fmt.Errorf("expected [...] x [...]")
	}
	if l, err = a.List[0].Ints(); err != nil {
		return nil, nil, err
	}
	r, err = a.List[1].Ints()
	return l, r, err
}

func dotGeneralRule(c *opContext) ([]*hlo.Instruction, error) {
	var lb, rb, lc, rc []int64
	if a := c.attr("dot_dimension_numbers"); a != nil {
		f, err := c.t.fields(a)
		if err != nil {
			return nil, err
		}
		for name, dst := range map[string]*[]int64{"lhs_batching_dimensions": &lb, "rhs_batching_dimensions": &rb, "lhs_contracting_dimensions": &lc, "rhs_contracting_dimensions": &rc} {
			if v := f[name]; v != nil {
				if *dst, err = v.Ints(); err != nil {
					return nil, err
				}
			}
		}
	} else {
		if a := c.attr("batching_dims"); a != nil {
			var err error
			if lb, rb, err = dimsPair(a); err != nil {
				return nil, fmt.Errorf("batching_dims: %v", err)
			}
		}
		if a := c.attr("contracting_dims"); a != nil {
			var err error
			if lc, rc, err = dimsPair(a); err != nil {
				return nil, fmt.Errorf("contracting_dims: %v", err)
			}
		}
	}
	ib, err := c.emit(hlo.OpDot, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("lhs_batch_dims", list(lb)).Set("rhs_batch_dims", list(rb)).Set("lhs_contracting_dims", list(lc)).Set("rhs_contracting_dims", list(rc))
	if a := c.attr("algorithm"); a != nil {
		name, err := c.t.dotAlgorithm(a)
		if err != nil {
			return nil, err
		}
		ib.Set("algorithm", name)
	}
	return one(ib, nil)
}

// dotAlgorithm is the HLO name (dot_bf16_bf16_f32 and the like) of a
// #stablehlo.dot_algorithm: its operands' and accumulation's precision
// types, and for the bf16 and tf32 emulations of f32 the number of
// products (num_primitive_operations: 3, 6 or 9); f8 operands of any
// kind are XLA's any_f8, allow_imprecise_accumulation its fast_accum.
func (t *translator) dotAlgorithm(a *Attr) (string, error) {
	f, err := t.fields(a)
	if err != nil {
		return "", err
	}
	word := func(name string) string {
		if v := f[name]; v != nil {
			return v.Text
		}
		return ""
	}
	num := func(name string) int64 {
		if v := f[name]; v != nil {
			n, _ := v.Int()
			return n
		}
		return 1
	}
	prec := func(name string) string {
		w := word(name)
		if strings.HasPrefix(w, "f8E") {
			return "any_f8"
		}
		return w
	}
	lhs, rhs, acc := prec("lhs_precision_type"), prec("rhs_precision_type"), word("accumulation_type")
	name := fmt.Sprintf("dot_%s_%s_%s", lhs, rhs, acc)
	if ops := num("num_primitive_operations"); ops > 1 {
		name += fmt.Sprintf("_x%d", ops)
	}
	if word("allow_imprecise_accumulation") == "true" {
		name += "_fast_accum"
	}
	if num("lhs_component_count") != 1 || num("rhs_component_count") != 1 {
		return "", fmt.Errorf("dot algorithm <%s> is not one of XLA's", a.Body)
	}
	if err := hlo.DotAlgorithmName(name); err != nil {
		return "", fmt.Errorf("dot algorithm <%s> is not one of XLA's (%s)", a.Body, name)
	}
	return name, nil
}

// dotRule: the old dot, a matrix or vector product.
func dotRule(c *opContext) ([]*hlo.Instruction, error) {
	l := c.args[0].Shape.Rank()
	ib, err := c.emit(hlo.OpDot, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("lhs_contracting_dims", fmt.Sprintf("{%d}", l-1)).Set("rhs_contracting_dims", "{0}"), nil)
}

// fields reads a dialect attribute's fields (#stablehlo.gather<...>).
func (t *translator) fields(a *Attr) (map[string]*Attr, error) {
	p := &parser{aliases: map[string]*Attr{}}
	return p.fields(a)
}

// windowText builds HLO's window={size=... stride=... pad=... ...} from
// per-dimension lists (nil or short: the default).
func windowText(size, stride, lhsDilate, rhsDilate, reversal []int64, pad [][2]int64) string {
	at := func(v []int64, i int, def int64) int64 {
		if i < len(v) {
			return v[i]
		}
		return def
	}
	w := &hlo.Window{Dims: make([]hlo.WindowDim, len(size))}
	for i := range w.Dims {
		d := &w.Dims[i]
		d.Size, d.Stride, d.LhsDilate, d.RhsDilate = size[i], at(stride, i, 1), at(lhsDilate, i, 1), at(rhsDilate, i, 1)
		d.Reversal = at(reversal, i, 0) != 0
		if i < len(pad) {
			d.PadLo, d.PadHi = pad[i][0], pad[i][1]
		}
	}
	return w.String()
}

// padding reads an Nx2 padding: dense<[[lo, hi], ...]> or [[lo, hi], ...].
func padding(a *Attr) ([][2]int64, error) {
	if a == nil {
		return nil, nil
	}
	var v []int64
	if a.Kind == ListAttr {
		// A list of pairs: flatten.
		for _, e := range a.List {
			p, err := e.Ints()
			if err != nil || len(p) != 2 {
				return nil, fmt.Errorf("padding must be [[lo, hi], ...]")
			}
			v = append(v, p...)
		}
	} else {
		var err error
		if v, err = a.Ints(); err != nil {
			return nil, err
		}
	}
	if len(v)%2 != 0 {
		return nil, fmt.Errorf("padding of %d values", len(v))
	}
	out := make([][2]int64, len(v)/2)
	for i := range out {
		out[i] = [2]int64{v[2*i], v[2*i+1]}
	}
	return out, nil
}

func (a *Attr) flatInts() ([]int64, error) {
	if a.Kind == ListAttr {
		var out []int64
		for _, e := range a.List {
			v, err := e.flatInts()
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
		}
		return out, nil
	}
	if a.Kind == IntAttr || a.Kind == BoolAttr {
		v, err := a.Int()
		return []int64{v}, err
	}
	return a.Ints()
}

var convListRE = regexp.MustCompile(`\[([^\]]*)\]`)

// convLabels turns [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] into HLO's
// b01f_01io->b01f.
func convLabels(a *Attr) (string, error) {
	var groups [][]string
	switch a.Kind {
	case DialectAttr:
		for _, m := range convListRE.FindAllStringSubmatch(a.Body, -1) {
			groups = append(groups, strings.Split(m[1], ","))
		}
	case ListAttr:
		for _, l := range a.List {
			var g []string
			for _, e := range l.List {
				g = append(g, e.Text)
			}
			groups = append(groups, g)
		}
	}
	if len(groups) != 3 {
		return "", fmt.Errorf("dimension numbers must be [lhs]x[rhs]->[out]")
	}
	var out [3]string
	for i, g := range groups {
		for _, e := range g {
			out[i] += strings.TrimSpace(e)
		}
	}
	return out[0] + "_" + out[1] + "->" + out[2], nil
}

func convolutionRule(c *opContext) ([]*hlo.Instruction, error) {
	dn := c.attr("dimension_numbers", "dim_numbers")
	if dn == nil {
		return nil, fmt.Errorf("needs dimension_numbers")
	}
	labels, err := convLabels(dn)
	if err != nil {
		return nil, err
	}
	// The window's size: the kernel's spatial dimensions, in label order.
	kernelLabels := strings.SplitN(strings.SplitN(labels, "->", 2)[0], "_", 2)[1]
	k := c.args[1].Shape
	var size []int64
	for d := 0; d < len(kernelLabels); d++ {
		for j, ch := range kernelLabels {
			if ch == rune('0'+d) && j < k.Rank() {
				size = append(size, k.Dims[j])
			}
		}
	}
	var stride, lhsD, rhsD, rev []int64
	var pad [][2]int64
	if w := c.attr("window"); w != nil && w.Kind == DictAttr {
		for _, f := range w.Dict {
			var err error
			switch f.Name {
			case "stride":
				stride, err = f.Attr.Ints()
			case "pad":
				pad, err = padding(f.Attr)
			case "lhs_dilate":
				lhsD, err = f.Attr.Ints()
			case "rhs_dilate":
				rhsD, err = f.Attr.Ints()
			case "reverse":
				rev, err = f.Attr.flatInts()
			}
			if err != nil {
				return nil, fmt.Errorf("window %s: %v", f.Name, err)
			}
		}
	} else {
		var err error
		if stride, _, err = c.ints("window_strides"); err != nil {
			return nil, err
		}
		if pad, err = padding(c.attr("padding")); err != nil {
			return nil, err
		}
		if lhsD, _, err = c.ints("lhs_dilation"); err != nil {
			return nil, err
		}
		if rhsD, _, err = c.ints("rhs_dilation"); err != nil {
			return nil, err
		}
		if rev, _, err = c.ints("window_reversal"); err != nil {
			return nil, err
		}
	}
	ib, err := c.emit(hlo.OpConvolution, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("window", windowText(size, stride, lhsD, rhsD, rev, pad)).Set("dim_labels", labels)
	for _, g := range []string{"feature_group_count", "batch_group_count"} {
		if v, ok, err := c.int(g); err != nil {
			return nil, err
		} else if ok {
			ib.Set(g, fmt.Sprint(v))
		}
	}
	return one(ib, nil)
}

func reduceRule(c *opContext) ([]*hlo.Instruction, error) {
	dims, ok, err := c.ints("dimensions")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs dimensions")
	}
	body, err := c.onlyRegion("body", "reducer")
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpReduce, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("dimensions", list(dims)).Calls(body)
	return c.results(ib.Instruction), nil
}

// windowAttrs reads reduce_window's and select_and_scatter's window.
func (c *opContext) windowAttrs(rank int) (string, error) {
	size, ok, err := c.ints("window_dimensions")
	if err != nil || !ok {
		return "", fmt.Errorf("needs window_dimensions")
	}
	stride, _, err := c.ints("window_strides")
	if err != nil {
		return "", err
	}
	base, _, err := c.ints("base_dilations")
	if err != nil {
		return "", err
	}
	wd, _, err := c.ints("window_dilations")
	if err != nil {
		return "", err
	}
	pad, err := padding(c.attr("padding"))
	if err != nil {
		return "", err
	}
	return windowText(size, stride, base, wd, nil, pad), nil
}

// onlyRegion translates the op's one region, its what (the error's
// word for it), into a computation named after role.
func (c *opContext) onlyRegion(what, role string) (*hlo.Computation, error) {
	if len(c.op.Regions) != 1 {
		return nil, fmt.Errorf("needs its %s", what)
	}
	return c.t.scalarRegion(c.op.Regions[0], role, c.sc)
}

func reduceWindowRule(c *opContext) ([]*hlo.Instruction, error) {
	w, err := c.windowAttrs(c.args[0].Shape.Rank())
	if err != nil {
		return nil, err
	}
	body, err := c.onlyRegion("body", "reducer")
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpReduceWindow, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("window", w).Calls(body)
	return c.results(ib.Instruction), nil
}

func selectAndScatterRule(c *opContext) ([]*hlo.Instruction, error) {
	w, err := c.windowAttrs(c.args[0].Shape.Rank())
	if err != nil {
		return nil, err
	}
	if len(c.op.Regions) != 2 {
		return nil, fmt.Errorf("needs select and scatter regions")
	}
	sel, err := c.t.scalarRegion(c.op.Regions[0], "select", c.sc)
	if err != nil {
		return nil, err
	}
	sca, err := c.t.scalarRegion(c.op.Regions[1], "scatter", c.sc)
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpSelectAndScatter, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("window", w).Calls(sel, sca), nil)
}

// dimNumbers reads a #stablehlo.gather or #stablehlo.scatter attribute
// into HLO attribute texts (fields left out are empty lists, and
// index_vector_dim 0).
func (c *opContext) dimNumbers(a *Attr, names map[string]string) (map[string]string, error) {
	f, err := c.t.fields(a)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for mlir, h := range names {
		v := f[mlir]
		if v == nil {
			if mlir == "index_vector_dim" {
				out[h] = "0"
			} else {
				out[h] = "{}"
			}
			continue
		}
		if mlir == "index_vector_dim" {
			n, err := v.Int()
			if err != nil {
				return nil, err
			}
			out[h] = fmt.Sprint(n)
			continue
		}
		ints, err := v.Ints()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", mlir, err)
		}
		out[h] = list(ints)
	}
	return out, nil
}

func setSorted(ib *hlo.InstBuilder, m map[string]string, keys ...string) {
	for _, k := range keys {
		ib.Set(k, m[k])
	}
}

func gatherRule(c *opContext) ([]*hlo.Instruction, error) {
	a := c.attr("dimension_numbers")
	if a == nil {
		return nil, fmt.Errorf("needs dimension_numbers")
	}
	m, err := c.dimNumbers(a, map[string]string{
		"offset_dims": "offset_dims", "collapsed_slice_dims": "collapsed_slice_dims",
		"operand_batching_dims": "operand_batching_dims", "start_indices_batching_dims": "start_indices_batching_dims",
		"start_index_map": "start_index_map", "index_vector_dim": "index_vector_dim",
	})
	if err != nil {
		return nil, err
	}
	sizes, ok, err := c.ints("slice_sizes")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs slice_sizes")
	}
	ib, err := c.emit(hlo.OpGather, c.args...)
	if err != nil {
		return nil, err
	}
	setSorted(ib, m, "offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim")
	ib.Set("slice_sizes", list(sizes))
	if c.boolean("indices_are_sorted") {
		ib.Set("indices_are_sorted", "true")
	}
	return one(ib, nil)
}

func scatterRule(c *opContext) ([]*hlo.Instruction, error) {
	a := c.attr("scatter_dimension_numbers")
	if a == nil {
		return nil, fmt.Errorf("needs scatter_dimension_numbers")
	}
	m, err := c.dimNumbers(a, map[string]string{
		"update_window_dims": "update_window_dims", "inserted_window_dims": "inserted_window_dims",
		"input_batching_dims": "input_batching_dims", "scatter_indices_batching_dims": "scatter_indices_batching_dims",
		"scatter_dims_to_operand_dims": "scatter_dims_to_operand_dims", "index_vector_dim": "index_vector_dim",
	})
	if err != nil {
		return nil, err
	}
	body, err := c.onlyRegion("update computation", "update")
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpScatter, c.args...)
	if err != nil {
		return nil, err
	}
	setSorted(ib, m, "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims", "index_vector_dim")
	if c.boolean("indices_are_sorted") {
		ib.Set("indices_are_sorted", "true")
	}
	if c.boolean("unique_indices") {
		ib.Set("unique_indices", "true")
	}
	ib.Calls(body)
	return c.results(ib.Instruction), nil
}

func sortRule(c *opContext) ([]*hlo.Instruction, error) {
	d, ok, err := c.int("dimension")
	if err != nil {
		return nil, err
	}
	if !ok {
		d = -1
	}
	if d < 0 {
		d += int64(c.args[0].Shape.Rank())
	}
	cmp, err := c.onlyRegion("comparator", "comparator")
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpSort, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("dimensions", fmt.Sprintf("{%d}", d))
	if c.boolean("is_stable") {
		ib.Set("is_stable", "true")
	}
	ib.Calls(cmp)
	return c.results(ib.Instruction), nil
}

// stateRegion translates a region that HLO calls with one tuple: its
// block arguments first, then the values it uses from outside (others,
// in order); constants from outside are copied in. It returns the
// computation and the translated results.
func (c *opContext) stateRegion(r *Region, name string, state hlo.Shape, nArgs int, order []string, consts []capturedConst, finish func(cb *hlo.CompBuilder, inner *scope, param *hlo.Instruction, res []*hlo.Instruction) error) (*hlo.Computation, error) {
	t := c.t
	cb := t.b.Computation(t.compName(name))
	param := cb.Parameter(state)
	inner := newScope(cb)
	gte := func(i int) *hlo.Instruction {
		return cb.Op(hlo.OpGetTupleElement, param).Set("index", fmt.Sprint(i)).WithShape(state.Tuple[i]).Instruction
	}
	if len(r.Blocks) != 1 {
		return nil, &Error{Pos: r.Pos, Msg: "a region of several blocks"}
	}
	args := r.Blocks[0].Args
	if len(args) != nArgs {
		return nil, &Error{Pos: r.Pos, Msg: fmt.Sprintf("the region takes %d arguments, needs %d", len(args), nArgs)}
	}
	for i, a := range args {
		inner.vals[a.Name] = gte(i)
	}
	for j, n := range order {
		inner.vals[n] = gte(nArgs + j)
		if !strings.Contains(n, "#") {
			inner.vals[n+"#0"] = inner.vals[n]
		}
	}
	bindConsts(inner, consts)
	res, err := t.block(r, inner, false)
	if err != nil {
		return nil, err
	}
	if err := finish(cb, inner, param, res); err != nil {
		return nil, err
	}
	return cb.Computation(), nil
}

// whileRule: HLO's while carries one tuple: the loop's values, then what
// its regions use from outside, passed through unchanged.
func whileRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.op.Regions) != 2 {
		return nil, fmt.Errorf("needs cond and body regions")
	}
	consts, others, order, err := c.t.resolveCaptures(c.op.Regions, c.sc)
	if err != nil {
		return nil, err
	}
	n := len(c.args)
	init := append([]*hlo.Instruction{}, c.args...)
	for _, name := range order {
		init = append(init, others[name])
	}
	state := hlo.TupleShape()
	for _, x := range init {
		state.Tuple = append(state.Tuple, x.Shape)
	}
	// Probes of the body the entry's checks read (probes.go): each a
	// buffer in the state, and a counter after them.
	var probes []loopProbe
	if c.t.atEntry {
		probes = c.t.bodyProbes(c.op.Regions[1])
	}
	from := len(state.Tuple)
	state = probeState(state, probes)
	init = append(init, probeInits(c.cb, state, from)...)
	saved := c.t.loopProbes
	c.t.loopProbes = nil // a probe in the condition, or in a loop in the body, runs unrecorded: refused
	defer func() { c.t.loopProbes = saved }()
	cond, err := c.stateRegion(c.op.Regions[0], "cond", state, n, order, consts, func(cb *hlo.CompBuilder, _ *scope, _ *hlo.Instruction, res []*hlo.Instruction) error {
		if len(res) != 1 {
			return fmt.Errorf("the condition returns %d values", len(res))
		}
		cb.SetRoot(res[0])
		return nil
	})
	if err != nil {
		return nil, err
	}
	got := map[string]*hlo.Instruction{}
	if len(probes) > 0 {
		c.t.loopProbes = got
	}
	body, err := c.stateRegion(c.op.Regions[1], "body", state, n, order, consts, func(cb *hlo.CompBuilder, _ *scope, param *hlo.Instruction, res []*hlo.Instruction) error {
		if len(res) != n {
			return fmt.Errorf("the body returns %d values for %d", len(res), n)
		}
		out := append([]*hlo.Instruction{}, res...)
		for j := range order {
			out = append(out, cb.Op(hlo.OpGetTupleElement, param).Set("index", fmt.Sprint(n+j)).WithShape(state.Tuple[n+j]).Instruction)
		}
		if len(probes) > 0 {
			upd, err := c.t.probeUpdates(cb, param, state, from, probes, got)
			if err != nil {
				return err
			}
			out = append(out, upd...)
		}
		cb.Op(hlo.OpTuple, out...).WithShape(state)
		return nil
	})
	c.t.loopProbes = nil
	if err != nil {
		return nil, err
	}
	tup := c.cb.Op(hlo.OpTuple, init...).WithShape(state)
	w := c.cb.Op(hlo.OpWhile, tup.Instruction).Calls(cond, body).WithShape(state)
	c.t.probeResults(c.cb, w.Instruction, state, from, probes)
	out := make([]*hlo.Instruction, n)
	for i := range out {
		out[i] = c.cb.Op(hlo.OpGetTupleElement, w.Instruction).Set("index", fmt.Sprint(i)).WithShape(state.Tuple[i]).Instruction
	}
	return out, nil
}

// ifRule (if and case): each branch is a computation taking a tuple of
// what it uses from outside; a branch returns a tuple of the results.
func ifRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.args) != 1 || len(c.op.Regions) == 0 {
		return nil, fmt.Errorf("needs a predicate or index and branches")
	}
	resShape := hlo.TupleShape()
	for _, t := range c.op.OutTypes {
		resShape.Tuple = append(resShape.Tuple, t.Shape())
	}
	var branches []*hlo.Computation
	operands := []*hlo.Instruction{c.args[0]}
	for i, r := range c.op.Regions {
		consts, others, order, err := c.t.resolveCaptures([]*Region{r}, c.sc)
		if err != nil {
			return nil, err
		}
		var in []*hlo.Instruction
		state := hlo.TupleShape()
		for _, name := range order {
			in = append(in, others[name])
			state.Tuple = append(state.Tuple, others[name].Shape)
		}
		comp, err := c.stateRegion(r, fmt.Sprintf("branch_%d", i), state, 0, order, consts, func(cb *hlo.CompBuilder, _ *scope, _ *hlo.Instruction, res []*hlo.Instruction) error {
			if len(res) != len(c.op.OutTypes) {
				return fmt.Errorf("branch %d returns %d values for %d", i, len(res), len(c.op.OutTypes))
			}
			cb.Op(hlo.OpTuple, res...).WithShape(resShape)
			return nil
		})
		if err != nil {
			return nil, err
		}
		branches = append(branches, comp)
		operands = append(operands, c.cb.Op(hlo.OpTuple, in...).WithShape(state).Instruction)
	}
	cond := c.cb.Op(hlo.OpConditional, operands...).Calls(branches...).WithShape(resShape)
	out := make([]*hlo.Instruction, len(c.op.OutTypes))
	for i := range out {
		out[i] = c.cb.Op(hlo.OpGetTupleElement, cond.Instruction).Set("index", fmt.Sprint(i)).WithShape(resShape.Tuple[i]).Instruction
	}
	return out, nil
}

func tupleRule(c *opContext) ([]*hlo.Instruction, error) {
	return one(c.emit(hlo.OpTuple, c.args...))
}

func getTupleElementRule(c *opContext) ([]*hlo.Instruction, error) {
	i, ok, err := c.int("index")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs index")
	}
	ib, err := c.emit(hlo.OpGetTupleElement, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("index", fmt.Sprint(i)), nil)
}

// barrierRule: HLO's opt-barrier takes and gives one tuple.
func barrierRule(c *opContext) ([]*hlo.Instruction, error) {
	s := hlo.TupleShape()
	for _, a := range c.args {
		s.Tuple = append(s.Tuple, a.Shape)
	}
	tup := c.cb.Op(hlo.OpTuple, c.args...).WithShape(s)
	b := c.cb.Op(hlo.OpOptimizationBarrier, tup.Instruction).WithShape(s)
	out := make([]*hlo.Instruction, len(c.args))
	for i := range out {
		out[i] = c.cb.Op(hlo.OpGetTupleElement, b.Instruction).Set("index", fmt.Sprint(i)).WithShape(s.Tuple[i]).Instruction
	}
	return out, nil
}

var formatRE = regexp.MustCompile(`^e(\d+)m(\d+)$`)

func reducePrecisionRule(c *opContext) ([]*hlo.Instruction, error) {
	e, ok1, err1 := c.int("exponent_bits")
	m, ok2, err2 := c.int("mantissa_bits")
	if f := c.attr("format"); f != nil {
		sm := formatRE.FindStringSubmatch(f.Text)
		if sm == nil {
			return nil, fmt.Errorf("format %q is not eXmY", f.Text)
		}
		fmt.Sscan(sm[1], &e)
		fmt.Sscan(sm[2], &m)
		ok1, ok2 = true, true
	}
	if err1 != nil || err2 != nil || !ok1 || !ok2 {
		return nil, fmt.Errorf("needs exponent_bits and mantissa_bits")
	}
	ib, err := c.emit(hlo.OpReducePrecision, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("exponent_bits", fmt.Sprint(e)).Set("mantissa_bits", fmt.Sprint(m)), nil)
}

func rngBitGeneratorRule(c *opContext) ([]*hlo.Instruction, error) {
	a := c.attr("rng_algorithm", "algorithm")
	alg := "DEFAULT"
	if a != nil {
		alg = enumValue(a)
	}
	hloAlg := map[string]string{"DEFAULT": "rng_default", "THREE_FRY": "rng_three_fry", "PHILOX": "rng_philox"}[alg]
	if hloAlg == "" {
		return nil, fmt.Errorf("rng algorithm %q", alg)
	}
	ib, err := c.emit(hlo.OpRngBitGenerator, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("algorithm", hloAlg)
	return c.results(ib.Instruction), nil
}

func mapRule(c *opContext) ([]*hlo.Instruction, error) {
	dims, _, err := c.ints("dimensions")
	if err != nil {
		return nil, err
	}
	body, err := c.onlyRegion("computation", "mapped")
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpMap, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("dimensions", list(dims)).Calls(body), nil)
}

// compositeRule runs the decomposition (a call of its function).
func compositeRule(c *opContext) ([]*hlo.Instruction, error) {
	d := c.attr("decomposition")
	if d == nil || d.Kind != SymbolAttr {
		return nil, fmt.Errorf("needs decomposition = @function")
	}
	return c.call(d.Text)
}

func callRule(c *opContext) ([]*hlo.Instruction, error) {
	if f := c.t.funcs[c.op.Callee]; f != nil && c.t.args != nil && hasDynamicTypes(f) {
		return c.inline(f) // refined for this call (refine.go)
	}
	return c.call(c.op.Callee)
}

// callee is function name's computation, translated once (once per
// process of a run_parallel, whose replica_id and partition_id differ).
func (t *translator) callee(name string) (*hlo.Computation, error) {
	if comp, ok := t.comps[t.compKey(name)]; ok {
		return comp, nil
	}
	f := t.funcs[name]
	if f == nil {
		return nil, fmt.Errorf("calls @%s, which the module does not define", name)
	}
	if f == t.entry {
		return nil, fmt.Errorf("calls the entry function @%s", name)
	}
	if _, err := t.function(f, false); err != nil {
		return nil, err
	}
	return t.comps[t.compKey(name)], nil
}

// compKey is the key of function name's computation in t.comps.
func (t *translator) compKey(name string) string {
	if g, x := t.where(); g.size() > 1 {
		return fmt.Sprintf("%s@%d", name, x)
	}
	return name
}

// call calls function name.
func (c *opContext) call(name string) ([]*hlo.Instruction, error) {
	comp, err := c.t.callee(name)
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpCall, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Calls(comp)
	return c.results(ib.Instruction), nil
}

// customCallRule translates the custom calls vkjit runs
// (hlo.KnownCustomCall: JAX's LAPACK calls on CPU, one device's sharding
// annotations, XLA's ApproxTopK) to HLO's custom-call, their
// mhlo.backend_config as HLO text prints it and their
// called_computations as computations; any other target is refused by
// name.
func customCallRule(c *opContext) ([]*hlo.Instruction, error) {
	c, err := shapeOperands(c) // results of dynamic shapes (refine.go)
	if err != nil {
		return nil, err
	}
	switch c.op.Callee {
	case "shape_assertion": // JAX's, on refined shapes (refine.go)
		return shapeAssertion(c)
	case "stablehlo.dynamic_top_k":
		return dynamicTopK(c)
	case "stablehlo.dynamic_rng_bit_generator":
		return dynamicRngBitGenerator(c)
	case "stablehlo.dynamic_approx_top_k":
		return dynamicApproxTopK(c)
	}
	ib, err := c.emit(hlo.OpCustomCall, c.args...)
	if err != nil {
		return nil, err
	}
	ib.Set("custom_call_target", strconv.Quote(c.op.Callee))
	if cfg := c.attr("mhlo.backend_config", "backend_config"); cfg != nil && cfg.Kind == DictAttr {
		var fields []string
		for _, f := range cfg.Dict {
			fields = append(fields, f.Name+" = "+f.Attr.Text)
		}
		ib.Set("backend_config", "{"+strings.Join(fields, ", ")+"}")
	}
	if cc := c.attr("called_computations"); cc != nil && cc.Kind == ListAttr {
		for _, f := range cc.List {
			if f.Kind != SymbolAttr {
				return nil, fmt.Errorf("called_computations holds %s, not a function", f.Text)
			}
			comp, err := c.t.callee(f.Text)
			if err != nil {
				if known, _ := hlo.KnownCustomCall(ib.Instruction); known == nil {
					// A target vkjit does not run is refused by its name,
					// not by what its computation holds.
					return nil, unsupportedf("", "custom_call @%s", c.op.Callee)
				}
				return nil, err
			}
			ib.Calls(comp)
		}
	}
	known, err := hlo.KnownCustomCall(ib.Instruction)
	if err != nil {
		return nil, err
	}
	if known == nil {
		return nil, unsupportedf("", "custom_call @%s", c.op.Callee)
	}
	return c.results(ib.Instruction), nil
}

func fftRule(c *opContext) ([]*hlo.Instruction, error) {
	a := c.attr("fft_type", "type")
	if a == nil {
		return nil, fmt.Errorf("needs fft_type")
	}
	length, ok, err := c.ints("fft_length", "length")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs fft_length")
	}
	ib, err := c.emit(hlo.OpFft, c.args...)
	if err != nil {
		return nil, err
	}
	return one(ib.Set("fft_type", enumValue(a)).Set("fft_length", list(length)), nil)
}

func triangularSolveRule(c *opContext) ([]*hlo.Instruction, error) {
	ib, err := c.emit(hlo.OpTriangularSolve, c.args...)
	if err != nil {
		return nil, err
	}
	for _, b := range []string{"left_side", "lower", "unit_diagonal"} {
		ib.Set(b, fmt.Sprint(c.boolean(b)))
	}
	if a := c.attr("transpose_a"); a != nil {
		ib.Set("transpose_a", enumValue(a))
	}
	return one(ib, nil)
}

func topKRule(c *opContext) ([]*hlo.Instruction, error) {
	k, ok, err := c.int("k")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs k")
	}
	ib, err := c.emit(hlo.OpTopK, c.args...)
	if err != nil {
		return nil, err
	}
	largest := true
	if a := c.attr("largest"); a != nil {
		largest = a.Text == "true"
	}
	ib.Set("k", fmt.Sprint(k)).Set("largest", fmt.Sprint(largest))
	return c.results(ib.Instruction), nil
}
