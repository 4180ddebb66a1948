package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// inlineCalls replaces call and fusion instructions of the entry
// computation by copies of the computations they call (recursively),
// opt-barrier by its operand, and a map of a scalar elementwise
// computation by that computation's ops over the map's arrays, so that
// the later passes see one flat computation. Pre-fused input is thereby re-fused by vkjit's own passes.
// The user's module is not modified: the entry is rebuilt in a new
// module that shares everything else.
func inlineCalls(s *state) error {
	entry := flatten(s.mod.Entry, s.mod.Entry.Name)
	entry.IsEntry = true
	mod := *s.mod
	mod.Entry = entry
	s.mod = &mod
	return nil
}

// flatten returns a copy of computation c, named name, with its calls and
// fusions replaced by copies of what they call (recursively) and
// opt-barriers by their operands. c is not modified.
func flatten(c *hlo.Computation, name string) *hlo.Computation {
	out := &hlo.Computation{Name: name, Pos: c.Pos, Params: make([]*hlo.Instruction, len(c.Params))}
	var copyComp func(c *hlo.Computation, args []*hlo.Instruction, prefix string) *hlo.Instruction
	copyComp = func(c *hlo.Computation, args []*hlo.Instruction, prefix string) *hlo.Instruction {
		m := map[*hlo.Instruction]*hlo.Instruction{}
		for _, in := range c.Instructions {
			if in.Op == hlo.OpParameter && args != nil {
				m[in] = args[in.ParamNum]
				continue
			}
			ops := make([]*hlo.Instruction, len(in.Operands))
			for i, o := range in.Operands {
				ops[i] = m[o]
			}
			switch in.Op {
			case hlo.OpCall, hlo.OpFusion:
				m[in] = copyComp(in.Called[0], ops, prefix+in.Name+"/")
				continue
			case hlo.OpOptimizationBarrier:
				m[in] = ops[0]
				continue
			case hlo.OpMap:
				if in.Shape.IsArray() && reducerSupported(in.Called[0]) && in.Called[0].Root.Op != hlo.OpTuple {
					m[in] = mapOver(in.Called[0], ops, in.Shape.Dims, prefix+in.Name+"/", in.Pos, func(x *hlo.Instruction) {
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
			if in.Op == hlo.OpParameter {
				out.Params[in.ParamNum] = &cp
			}
		}
		return m[c.Root]
	}
	out.Root = copyComp(c, nil, "")
	return out
}

// mapOver emits scalar computation c's ops over arrays of dimensions
// dims, its parameters bound to args (a map's operands) and its
// constants broadcast, calls inlined; add receives each new instruction.
// It returns the root's array.
func mapOver(c *hlo.Computation, args []*hlo.Instruction, dims []int64, prefix string, pos hlo.Pos, add func(*hlo.Instruction)) *hlo.Instruction {
	m := map[*hlo.Instruction]*hlo.Instruction{}
	for _, x := range c.Instructions {
		ops := make([]*hlo.Instruction, len(x.Operands))
		for i, o := range x.Operands {
			ops[i] = m[o]
		}
		switch x.Op {
		case hlo.OpParameter:
			m[x] = args[x.ParamNum]
			continue
		case hlo.OpCall:
			m[x] = mapOver(x.Called[0], ops, dims, prefix+x.Name+"/", pos, add)
			continue
		case hlo.OpConstant:
			k := *x
			k.Name, k.Pos = prefix+x.Name, pos
			add(&k)
			b := &hlo.Instruction{Name: prefix + x.Name + "/broadcast", Op: hlo.OpBroadcast, Shape: hlo.ArrayShape(x.Shape.Elem, dims...), Operands: []*hlo.Instruction{&k}, Pos: pos}
			add(b)
			m[x] = b
			continue
		}
		cp := *x
		cp.Name, cp.Pos, cp.Operands = prefix+x.Name, pos, ops
		cp.Shape = hlo.ArrayShape(x.Shape.Elem, dims...)
		add(&cp)
		m[x] = &cp
	}
	return m[c.Root]
}
