package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// scalarProg is a computation over scalars (a reducer, a comparator, a
// map function) compiled to steps over a register file, so that calling
// it once per element costs no maps or allocations. Computations with
// anything but scalar elementwise ops, constants and a tuple root are not
// compiled and go through the interpreter.
type scalarProg struct {
	nregs  int
	consts []regConst
	steps  []scalarStep
	outs   []int
}

type regConst struct {
	reg int
	v   scalar
}

type scalarStep struct {
	in    *hlo.Instruction
	args  []int
	types []hlo.ElementType
	dst   int
	buf   []scalar
}

func compileScalar(c *hlo.Computation, order []*hlo.Instruction) *scalarProg {
	p := &scalarProg{}
	reg := map[*hlo.Instruction]int{}
	for _, prm := range c.Params {
		if !prm.Shape.IsArray() || prm.Shape.Rank() != 0 {
			return nil
		}
		reg[prm] = prm.ParamNum
	}
	p.nregs = len(c.Params)
	for _, in := range order {
		if in.Op == hlo.OpParameter {
			continue
		}
		if in == c.Root && in.Op == hlo.OpTuple {
			for _, o := range in.Operands {
				p.outs = append(p.outs, reg[o])
			}
			return p
		}
		if !in.Shape.IsArray() || in.Shape.Rank() != 0 || !InTypeSet(in.Shape.Elem) {
			return nil
		}
		r := p.nregs
		p.nregs++
		reg[in] = r
		switch {
		case in.Op == hlo.OpConstant:
			p.consts = append(p.consts, regConst{r, get(in.Literal, 0)})
		case in.Op.IsElementwise() && in.Op != hlo.OpBitcastConvert:
			st := scalarStep{in: in, dst: r, buf: make([]scalar, len(in.Operands))}
			for _, o := range in.Operands {
				st.args = append(st.args, reg[o])
				st.types = append(st.types, o.Shape.Elem)
			}
			p.steps = append(p.steps, st)
		case in.Op == hlo.OpCopy || in.Op == hlo.OpOptimizationBarrier:
			p.nregs--
			reg[in] = reg[in.Operands[0]]
		default:
			return nil
		}
	}
	p.outs = []int{reg[c.Root]}
	return p
}

// run evaluates the program; args fill the first registers.
func (p *scalarProg) run(regs []scalar, out []scalar) error {
	for _, c := range p.consts {
		regs[c.reg] = c.v
	}
	for i := range p.steps {
		st := &p.steps[i]
		for j, a := range st.args {
			st.buf[j] = regs[a]
		}
		v, err := apply(st.in, st.types, st.buf)
		if err != nil {
			return st.in.Errorf("%w", err)
		}
		regs[st.dst] = v
	}
	for i, o := range p.outs {
		out[i] = regs[o]
	}
	return nil
}

// scalarProgram returns c compiled, or nil; results are cached.
func (e *evaluator) scalarProgram(c *hlo.Computation) *scalarProg {
	if p, ok := e.progs[c]; ok {
		return p
	}
	p := compileScalar(c, e.schedule(c))
	e.progs[c] = p
	return p
}
