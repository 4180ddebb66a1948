package hlo

import (
	"fmt"
	"slices"
)

// Flattens reports whether Flatten takes op apart (a map only when its
// computation is scalar elementwise, an asynchronous op only when its
// pair is well formed).
func Flattens(op Opcode) bool {
	switch op {
	case OpCall, OpFusion, OpOptimizationBarrier, OpDomain, OpAddDependency, OpMap,
		OpAsyncStart, OpAsyncUpdate, OpAsyncDone, OpCopyStart, OpCopyDone:
		return true
	}
	return false
}

// Flatten returns a copy of computation c, named name, with its calls
// and fusions replaced by copies of what they call (recursively),
// opt-barriers, domains and add-dependencies by their (first) operands,
// each map of a scalar elementwise computation by that computation's ops
// over the map's arrays, and the asynchronous pairs by what they stand
// for: an async-start by the call it wraps, its async-updates and
// async-done by that call's result, a copy-done of a copy-start by the
// copied value (XLA's scheduling forms: a program of one device computes
// them where they stand). c is not modified.
func (c *Computation) Flatten(name string) *Computation {
	out := &Computation{Name: name, Pos: c.Pos, Params: make([]*Instruction, len(c.Params))}
	// done: the value an async-done or copy-done of each started
	// operation is (async-start's tuple, which its updates pass on).
	done := map[*Instruction]*Instruction{}
	add := func(x *Instruction) *Instruction {
		out.Instructions = append(out.Instructions, x)
		return x
	}
	// started is the tuple an async-start or copy-start value is: its
	// parts, then zero contexts for the rest of shape's elements (nil
	// where shape is not such a tuple).
	started := func(in *Instruction, shape Shape, name string, parts ...*Instruction) *Instruction {
		if !shape.IsTuple() || len(shape.Tuple) < len(parts) {
			return nil
		}
		elems := slices.Clone(parts)
		for i, p := range parts {
			if !p.Shape.Equal(shape.Tuple[i]) {
				return nil
			}
		}
		for i, t := range shape.Tuple[len(parts):] {
			lit, err := NewLiteral(t, make([]byte, t.ByteSize()))
			if err != nil {
				return nil
			}
			elems = append(elems, add(&Instruction{Name: fmt.Sprintf("%s/context%d", name, i), Op: OpConstant, Shape: t, Literal: lit, Pos: in.Pos}))
		}
		ts := TupleShape()
		for _, e := range elems {
			ts.Tuple = append(ts.Tuple, e.Shape)
		}
		return add(&Instruction{Name: name, Op: OpTuple, Shape: ts, Operands: elems, Pos: in.Pos})
	}
	var copyComp func(c *Computation, args []*Instruction, prefix string) *Instruction
	copyComp = func(c *Computation, args []*Instruction, prefix string) *Instruction {
		m := map[*Instruction]*Instruction{}
		for _, in := range c.Instructions {
			if in.Op == OpParameter && args != nil {
				m[in] = args[in.ParamNum]
				continue
			}
			ops := make([]*Instruction, len(in.Operands))
			for i, o := range in.Operands {
				ops[i] = m[o]
			}
			switch in.Op {
			case OpCall, OpFusion:
				m[in] = copyComp(in.Called[0], ops, prefix+in.Name+"/")
				continue
			case OpOptimizationBarrier, OpDomain, OpAddDependency:
				m[in] = ops[0]
				continue
			case OpAsyncStart:
				if len(in.Called) == 1 && in.Shape.IsTuple() && len(in.Shape.Tuple) >= 2 {
					args := &Instruction{Name: prefix + in.Name + "/operands", Op: OpTuple, Shape: TupleShape(), Operands: ops, Pos: in.Pos}
					for _, o := range ops {
						args.Shape.Tuple = append(args.Shape.Tuple, o.Shape)
					}
					r := copyComp(in.Called[0], ops, prefix+in.Name+"/")
					if t := started(in, in.Shape, prefix+in.Name, add(args), r); t != nil {
						m[in], done[t] = t, r
						continue
					}
				}
			case OpCopyStart:
				if t := started(in, in.Shape, prefix+in.Name, ops[0], ops[0]); t != nil {
					m[in], done[t] = t, ops[0]
					continue
				}
			case OpAsyncUpdate:
				if _, ok := done[ops[0]]; ok && in.Shape.Equal(ops[0].Shape) {
					m[in] = ops[0]
					continue
				}
			case OpAsyncDone, OpCopyDone:
				if r, ok := done[ops[0]]; ok && in.Shape.Equal(r.Shape) {
					m[in] = r
					continue
				}
			case OpMap:
				if in.Shape.IsArray() && in.Called[0].IsScalarElementwise() && in.Called[0].Root.Op != OpTuple {
					m[in] = mapOver(in.Called[0], ops, in.Shape.Dims, prefix+in.Name+"/", in.Pos, func(x *Instruction) {
						out.Instructions = append(out.Instructions, x)
					})
					continue
				}
			}
			cp := *in
			cp.Name = prefix + in.Name
			cp.Operands = ops
			m[in] = &cp
			out.Instructions = append(out.Instructions, &cp)
			if in.Op == OpParameter {
				out.Params[in.ParamNum] = &cp
			}
		}
		return m[c.Root]
	}
	out.Root = copyComp(c, nil, "")
	return out
}

// MapOver is mapOver for other packages: a map's computation, or a
// reducer's, applied elementwise to arrays.
func MapOver(c *Computation, args []*Instruction, dims []int64, prefix string, pos Pos, add func(*Instruction)) *Instruction {
	return mapOver(c, args, dims, prefix, pos, add)
}

// mapOver emits scalar computation c's ops over arrays of dimensions
// dims, its parameters bound to args (a map's operands) and its
// constants broadcast, calls inlined; add receives each new instruction.
// It returns the root's array.
func mapOver(c *Computation, args []*Instruction, dims []int64, prefix string, pos Pos, add func(*Instruction)) *Instruction {
	m := map[*Instruction]*Instruction{}
	for _, x := range c.Instructions {
		ops := make([]*Instruction, len(x.Operands))
		for i, o := range x.Operands {
			ops[i] = m[o]
		}
		switch x.Op {
		case OpParameter:
			m[x] = args[x.ParamNum]
			continue
		case OpCall:
			m[x] = mapOver(x.Called[0], ops, dims, prefix+x.Name+"/", pos, add)
			continue
		case OpConstant:
			k := *x
			k.Name, k.Pos = prefix+x.Name, pos
			add(&k)
			if len(dims) == 0 { // over scalars: the constant itself
				m[x] = &k
				continue
			}
			b := &Instruction{Name: prefix + x.Name + "/broadcast", Op: OpBroadcast, Shape: ArrayShape(x.Shape.Elem, dims...), Operands: []*Instruction{&k}, Pos: pos}
			add(b)
			m[x] = b
			continue
		}
		cp := *x
		cp.Name, cp.Pos, cp.Operands = prefix+x.Name, pos, ops
		cp.Shape = ArrayShape(x.Shape.Elem, dims...)
		add(&cp)
		m[x] = &cp
	}
	return m[c.Root]
}

// Reachable lists c's instructions that its root depends on, and its
// parameters, in c's order.
func (c *Computation) Reachable() []*Instruction {
	keep := map[*Instruction]bool{}
	var visit func(x *Instruction)
	visit = func(x *Instruction) {
		if keep[x] {
			return
		}
		keep[x] = true
		for _, o := range x.Operands {
			visit(o)
		}
	}
	visit(c.Root)
	var out []*Instruction
	for _, in := range c.Instructions {
		if keep[in] || in.Op == OpParameter {
			out = append(out, in)
		}
	}
	return out
}

// IsScalarElementwise reports whether computation c is made only of
// scalar elementwise ops, constants, calls of such computations and a
// tuple root: a reducer or comparator a kernel can inline, or a map's
// computation that Flatten applies over arrays.
func (c *Computation) IsScalarElementwise() bool {
	for _, in := range c.Instructions {
		switch {
		case in.Op == OpParameter || in.Op == OpConstant:
		case in.Op == OpTuple && in == c.Root:
			continue
		case in.Op == OpCall:
			// JAX calls a function of its own from a reducer
			// (jnp.logaddexp in a cumulative reduction): inlined.
			if !in.Called[0].IsScalarElementwise() || in.Called[0].Root.Op == OpTuple {
				return false
			}
		case in.Op.IsElementwise():
		default:
			return false
		}
		if !in.Shape.IsArray() || in.Shape.Rank() != 0 {
			return false
		}
	}
	return true
}
