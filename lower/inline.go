package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// inlineCalls replaces call and fusion instructions of the entry
// computation by copies of the computations they call (recursively), and
// opt-barrier by its operand, so that the later passes see one flat
// computation. Pre-fused input is thereby re-fused by vkjit's own passes.
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
