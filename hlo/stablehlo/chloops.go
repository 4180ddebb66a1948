package stablehlo

import (
	"errors"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/chlo"
	"github.com/vkjit/vkjit/hlo/formula"
)

// CHLO's ops: its special functions built by package chlo (chloRule), and
// those whose translation builds structure, not elementwise math: the
// bitcasts between i1 and wider types, chlo.ragged_dot, chlo.scan.

// chloRule translates chlo.name through package chlo's expansion of name.
func chloRule(name string) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		if len(c.args) == 0 || len(c.op.OutTypes) != 1 {
			return nil, fmt.Errorf("%s takes operands and gives one result", c.op.Name)
		}
		s := c.args[0].Shape
		if !s.IsArray() {
			return nil, fmt.Errorf("%s of a %s", c.op.Name, s)
		}
		for _, a := range c.args[1:] {
			if !a.Shape.Equal(s) {
				return nil, fmt.Errorf("%s's operands differ in shape: %s and %s (broadcast them first)", c.op.Name, s, a.Shape)
			}
		}
		r, err := chlo.Expand(newExpr(c.cb, s), name, c.args...)
		var te *chlo.TypeError
		if errors.As(err, &te) {
			return nil, unsupportedf(typesCategory, "op %s of %s", c.op.Name, te.Type)
		}
		if err != nil {
			return nil, err
		}
		return []*hlo.Instruction{r}, nil
	}
}

// newExpr is a builder of elementwise ops over shape s in c's computation.
func newExpr(cb *hlo.CompBuilder, s hlo.Shape) *formula.Builder {
	return formula.New(cb.Add, s, new(error))
}

// bitsBitcast is bitcast_convert between i1 and a wider type, element k
// of the i1 array's last dimension being bit k: to the wider type, the
// bits shifted into place and or-ed along that dimension; from it, the
// value shifted right by each position and masked.
func bitsBitcast(c *opContext, x *hlo.Instruction, out hlo.Shape) (*hlo.Instruction, error) {
	wide := out
	if x.Shape.Elem != hlo.PRED {
		wide = x.Shape
	}
	n := wide.Elem.Bits()
	u := hlo.UnsignedOfWidth(n)
	if u == hlo.Invalid || wide.Elem.Kind() == hlo.KindComplex {
		return nil, unsupportedf(typesCategory, "bitcast_convert between i1 and %s", wide.Elem)
	}
	bitsShape := x.Shape
	if x.Shape.Elem != hlo.PRED {
		bitsShape = out
	}
	if bitsShape.Rank() == 0 || bitsShape.Dims[bitsShape.Rank()-1] != int64(n) {
		return nil, fmt.Errorf("bitcast_convert of %s to %s: the i1 side needs a last dimension of %d", x.Shape, out, n)
	}
	last := bitsShape.Rank() - 1
	e := newExpr(c.cb, hlo.ArrayShape(u, bitsShape.Dims...))
	pos := c.cb.Op(hlo.OpIota).WithShape(e.Shape()).Set("iota_dimension", fmt.Sprint(last)).Instruction
	ws := hlo.ArrayShape(u, wide.Dims...)
	if x.Shape.Elem == hlo.PRED {
		v := e.Op(hlo.OpShiftLeft, e.Convert(x, u), pos)
		or := c.t.b.Computation(c.t.compName("bits_or"))
		a, b := or.Parameter(hlo.ArrayShape(u)), or.Parameter(hlo.ArrayShape(u))
		or.Op(hlo.OpOr, a, b)
		zero := c.cb.Constant(hlo.ScalarLiteral(u, 0))
		r := c.cb.Op(hlo.OpReduce, v, zero).WithShape(ws).Set("dimensions", fmt.Sprintf("{%d}", last)).Calls(or.Computation()).Instruction
		if u == out.Elem {
			return r, e.Err()
		}
		return c.cb.Op(hlo.OpBitcastConvert, r).WithShape(out).Instruction, e.Err()
	}
	w := x
	if u != x.Shape.Elem {
		w = c.cb.Op(hlo.OpBitcastConvert, x).WithShape(ws).Instruction
	}
	kept := make([]int64, last)
	for d := range kept {
		kept[d] = int64(d)
	}
	b := c.cb.Op(hlo.OpBroadcast, w).WithShape(e.Shape()).Set("dimensions", list(kept)).Instruction
	bit := e.Op(hlo.OpAnd, e.Op(hlo.OpShiftRightLogical, b, pos), e.Bits(1))
	return e.Cmp(bit, "NE", e.Bits(0)), e.Err()
}

// raggedDotRule translates chlo.ragged_dot to HLO's ragged-dot of the
// same operands and dimension numbers (lower writes it out as a dot per
// group; the evaluator computes it by its definition).
func raggedDotRule(c *opContext) ([]*hlo.Instruction, error) {
	if len(c.args) != 3 {
		return nil, fmt.Errorf("chlo.ragged_dot takes lhs, rhs and group_sizes")
	}
	a := c.attr("ragged_dot_dimension_numbers")
	if a == nil {
		return nil, fmt.Errorf("needs ragged_dot_dimension_numbers")
	}
	f, err := c.t.fields(a)
	if err != nil {
		return nil, err
	}
	ib, err := c.emit(hlo.OpRaggedDot, c.args...)
	if err != nil {
		return nil, err
	}
	for from, to := range map[string]string{"lhs_batching_dimensions": "lhs_batch_dims", "rhs_batching_dimensions": "rhs_batch_dims",
		"lhs_contracting_dimensions": "lhs_contracting_dims", "rhs_contracting_dimensions": "rhs_contracting_dims",
		"lhs_ragged_dimensions": "lhs_ragged_dims", "rhs_group_dimensions": "rhs_group_dims"} {
		var ds []int64
		if v := f[from]; v != nil {
			if ds, err = v.Ints(); err != nil {
				return nil, err
			}
		}
		ib.Set(to, list(ds))
	}
	return one(ib, nil)
}

// scanRule expands chlo.scan into a while loop over the scan dimension,
// as the CHLO legalization does: each iteration slices the inputs at the
// step's position, applies the region to them and the carries, and
// writes the outputs' slices in place; the results are the outputs and
// the final carries. is_reverse runs the positions from the end.
func scanRule(c *opContext) ([]*hlo.Instruction, error) {
	ni, _, err := c.int("num_inputs")
	if err != nil {
		return nil, err
	}
	dim, ok, err := c.int("dimension")
	if err != nil || !ok {
		return nil, fmt.Errorf("chlo.scan needs dimension")
	}
	if len(c.op.Regions) != 1 || int(ni) > len(c.args) {
		return nil, fmt.Errorf("chlo.scan takes inputs, inits and one region")
	}
	inputs, inits := c.args[:ni], c.args[ni:]
	nOut := len(c.op.OutTypes) - len(inits)
	if nOut < 0 || len(inputs) == 0 {
		return nil, fmt.Errorf("chlo.scan: %d results for %d inits", len(c.op.OutTypes), len(inits))
	}
	n := inputs[0].Shape.Dims[dim]
	reverse := c.boolean("is_reverse")
	body, err := c.t.scalarRegion(c.op.Regions[0], "scan_body", c.sc)
	if err != nil {
		return nil, err
	}
	outShapes := make([]hlo.Shape, nOut)
	for i := range outShapes {
		if outShapes[i], err = c.result(i); err != nil {
			return nil, err
		}
	}
	// The loop's state: the step, the inputs, the outputs so far, the
	// carries.
	var leaves []hlo.Shape
	leaves = append(leaves, hlo.ArrayShape(hlo.S64))
	for _, x := range inputs {
		leaves = append(leaves, x.Shape)
	}
	leaves = append(leaves, outShapes...)
	for _, x := range inits {
		leaves = append(leaves, x.Shape)
	}
	state := hlo.TupleShape(leaves...)
	s64 := hlo.ArrayShape(hlo.S64)
	k64 := func(cb *hlo.CompBuilder, v int64) *hlo.Instruction {
		return cb.Constant(hlo.ScalarLiteral(hlo.S64, float64(v)))
	}
	gte := func(cb *hlo.CompBuilder, t *hlo.Instruction, i int) *hlo.Instruction {
		return cb.Op(hlo.OpGetTupleElement, t).WithShape(state.Tuple[i]).Set("index", fmt.Sprint(i)).Instruction
	}

	cond := c.t.b.Computation(c.t.compName("scan_cond"))
	p := cond.Parameter(state)
	cond.Op(hlo.OpCompare, gte(cond, p, 0), k64(cond, n)).WithShape(hlo.ArrayShape(hlo.PRED)).Set("direction", "LT")

	loop := c.t.b.Computation(c.t.compName("scan_step"))
	q := loop.Parameter(state)
	i := gte(loop, q, 0)
	at := i
	if reverse {
		at = loop.Op(hlo.OpSubtract, k64(loop, n-1), i).WithShape(s64).Instruction
	}
	starts := func(rank int) []*hlo.Instruction {
		out := make([]*hlo.Instruction, rank)
		for d := range out {
			out[d] = k64(loop, 0)
			if int64(d) == dim {
				out[d] = at
			}
		}
		return out
	}
	var args []*hlo.Instruction
	for j, x := range inputs {
		sizes := append([]int64{}, x.Shape.Dims...)
		sizes[dim] = 1
		ds := loop.Op(hlo.OpDynamicSlice, append([]*hlo.Instruction{gte(loop, q, 1+j)}, starts(x.Shape.Rank())...)...).
			WithShape(hlo.ArrayShape(x.Shape.Elem, sizes...)).Set("dynamic_slice_sizes", list(sizes)).Instruction
		args = append(args, loop.Op(hlo.OpReshape, ds).WithShape(hlo.ArrayShape(x.Shape.Elem, dropDim(x.Shape.Dims, dim)...)).Instruction)
	}
	carry0 := 1 + len(inputs) + nOut
	for j := range inits {
		args = append(args, gte(loop, q, carry0+j))
	}
	// The region returns each output's slice and the new carries.
	var rets []hlo.Shape
	for _, sh := range outShapes {
		rets = append(rets, hlo.ArrayShape(sh.Elem, dropDim(sh.Dims, dim)...))
	}
	for _, x := range inits {
		rets = append(rets, x.Shape)
	}
	ret := hlo.TupleShape(rets...)
	if len(rets) == 1 {
		ret = rets[0]
	}
	call := loop.Op(hlo.OpCall, args...).WithShape(ret).Calls(body).Instruction
	result := func(j int) *hlo.Instruction {
		if len(rets) == 1 {
			return call
		}
		return loop.Op(hlo.OpGetTupleElement, call).WithShape(rets[j]).Set("index", fmt.Sprint(j)).Instruction
	}
	next := []*hlo.Instruction{loop.Op(hlo.OpAdd, i, k64(loop, 1)).WithShape(s64).Instruction}
	for j := range inputs {
		next = append(next, gte(loop, q, 1+j))
	}
	for j, s := range outShapes {
		sizes := append([]int64{}, s.Dims...)
		sizes[dim] = 1
		upd := loop.Op(hlo.OpReshape, result(j)).WithShape(hlo.ArrayShape(s.Elem, sizes...)).Instruction
		next = append(next, loop.Op(hlo.OpDynamicUpdateSlice, append([]*hlo.Instruction{gte(loop, q, 1+len(inputs)+j), upd}, starts(s.Rank())...)...).WithShape(state.Tuple[1+len(inputs)+j]).Instruction)
	}
	for j := range inits {
		next = append(next, result(nOut+j))
	}
	loop.Op(hlo.OpTuple, next...).WithShape(state)

	init := []*hlo.Instruction{c.cb.Constant(hlo.ScalarLiteral(hlo.S64, 0))}
	init = append(init, inputs...)
	for _, s := range outShapes {
		z := c.cb.Constant(hlo.ScalarLiteral(s.Elem, 0))
		init = append(init, c.cb.Op(hlo.OpBroadcast, z).WithShape(s).Set("dimensions", "{}").Instruction)
	}
	init = append(init, inits...)
	tuple := c.cb.Op(hlo.OpTuple, init...).WithShape(state).Instruction
	w := c.cb.Op(hlo.OpWhile, tuple).WithShape(state).Calls(cond.Computation(), loop.Computation()).Instruction
	var out []*hlo.Instruction
	for j := 1 + len(inputs); j < len(leaves); j++ {
		out = append(out, c.cb.Op(hlo.OpGetTupleElement, w).WithShape(state.Tuple[j]).Set("index", fmt.Sprint(j)).Instruction)
	}
	return out, nil
}

// dropDim is dims without dimension d.
func dropDim(dims []int64, d int64) []int64 {
	var out []int64
	for i, n := range dims {
		if int64(i) != d {
			out = append(out, n)
		}
	}
	return out
}
