package lower

import (
	"errors"
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Rematerialization under a memory budget (Options.MemoryBudget), as
// XLA's HloRematerialization does it: while the planned peak is above the
// budget, take a value that is live across the busiest step without
// being used there, and compute it again just before its later users
// instead of keeping it; keep each change that lowers the peak. When
// nothing lowers it further, fail with the smallest peak reached.

// ErrMemoryBudget is returned (wrapped) when no plan fits the budget.
var ErrMemoryBudget = errors.New("memory budget is below the smallest peak vkjit could reach")

// maxRematTries bounds the compilations one budget search may take.
const maxRematTries = 64

func compileUnderBudget(m *hlo.Module, tg kgen.Target, opts Options) (*Program, error) {
	// A flat copy of the entry to rewrite (verified, calls inlined).
	s := &state{mod: m, tg: tg, opts: opts, prog: &Program{}, plan: newPlan(), values: map[*hlo.Instruction][]int{}}
	for _, p := range passes[:2] { // verify, inline calls
		if err := runPass(p, s); err != nil {
			return nil, err
		}
	}
	base := s.mod
	best, err := compile(base, tg, opts, true)
	if err != nil {
		return nil, err
	}
	tried := map[string]bool{}
	for tries := 0; best.PeakBytes() > opts.MemoryBudget && tries < maxRematTries; tries++ {
		at, cands := rematCandidates(base.Entry, best)
		improved := false
		for _, c := range cands {
			if tried[c.Name] {
				continue
			}
			tried[c.Name] = true
			undo := remat(base.Entry, c, best, at/2)
			if undo == nil {
				continue
			}
			p, err := compile(base, tg, opts, true)
			if err == nil && p.PeakBytes() < best.PeakBytes() {
				best, improved = p, true
				break
			}
			undo()
		}
		if !improved {
			break
		}
	}
	if best.PeakBytes() > opts.MemoryBudget {
		return nil, fmt.Errorf("lower: %w: budget %d bytes, smallest peak %d bytes", ErrMemoryBudget, opts.MemoryBudget, best.PeakBytes())
	}
	return best, nil
}

// peakTime is the half step at which p's temporaries hold the most bytes.
func peakTime(p *Program) (int, map[int]liveRange) {
	lr := liveRanges(p)
	bestAt, most := 0, int64(-1)
	for at := 0; at <= 2*len(p.Steps)+1; at++ {
		var live int64
		for b, r := range lr {
			if r.first <= at && at <= r.last {
				live += PaddedSize(p.Buffers[b].Size)
			}
		}
		if live > most {
			bestAt, most = at, live
		}
	}
	return bestAt, lr
}

// rematCandidates lists the values live across the peak (the half step it
// returns) but not used by the step there, largest first.
func rematCandidates(c *hlo.Computation, p *Program) (int, []*hlo.Instruction) {
	at, lr := peakTime(p)
	byName := map[string]*hlo.Instruction{}
	for _, in := range c.Instructions {
		byName[in.Name] = in
	}
	var out []*hlo.Instruction
	for b, r := range lr {
		in := byName[p.Buffers[b].Name]
		if in == nil || in == c.Root || !rematerializable(in) || r.first >= at || r.last <= at {
			continue
		}
		out = append(out, in)
	}
	// Largest first; ties by name so the search is deterministic.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			a, b := out[j-1], out[j]
			sa, sb := a.Shape.NumElements(), b.Shape.NumElements()
			if sa > sb || sa == sb && a.Name < b.Name {
				break
			}
			out[j-1], out[j] = b, a
		}
	}
	return at, out
}

// rematerializable says which instructions may be computed twice: pure
// array ops with a kernel of their own.
func rematerializable(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() || in.Op == hlo.OpRngBitGenerator || in.Op == hlo.OpRng {
		return false
	}
	kind := kgen.OpKind(in.Op)
	return kind != kgen.KindNone && kind != kgen.KindSort && kind != kgen.KindScatter
}

// maxRematTree bounds the instructions one rematerialization recomputes.
const maxRematTree = 8

// remat gives the users of v whose kernels run after peakStep their own
// copy of v, computed (by the depth-first schedule) just before their
// kernel from parameters and constants (v's producers are copied too, up
// to maxRematTree instructions), so that nothing v was made from has to
// stay alive either. It returns the undo, or nil when v has no such users or
// is too costly to recompute.
func remat(c *hlo.Computation, v *hlo.Instruction, p *Program, peakStep int) func() {
	// The steps computing each instruction (several when recomputed).
	steps := map[string][]int{}
	for i, st := range p.Steps {
		for _, n := range append([]string{st.Inst}, st.Fused...) {
			steps[n] = append(steps[n], i)
		}
	}
	lateOnly := func(in *hlo.Instruction) bool {
		ss := steps[in.Name]
		if len(ss) == 0 {
			return false // not a kernel (tuple, while): leave it
		}
		for _, i := range ss {
			if i <= peakStep {
				return false
			}
		}
		return true
	}
	pos := map[*hlo.Instruction]int{}
	for i, in := range c.Instructions {
		pos[in] = i
	}
	var late []*hlo.Instruction
	for _, u := range c.Instructions {
		if !lateOnly(u) {
			continue
		}
		for _, o := range u.Operands {
			if o == v {
				late = append(late, u)
				break
			}
		}
	}
	if len(late) == 0 {
		return nil
	}
	// Copy v's producers back to parameters and constants.
	var copies []*hlo.Instruction
	made := map[*hlo.Instruction]*hlo.Instruction{}
	var clone func(x *hlo.Instruction) *hlo.Instruction
	clone = func(x *hlo.Instruction) *hlo.Instruction {
		if x.Op == hlo.OpParameter || x.Op == hlo.OpConstant {
			return x
		}
		if y, ok := made[x]; ok {
			return y
		}
		if !rematerializable(x) || len(copies) >= maxRematTree {
			return nil
		}
		cp := *x
		cp.Name = x.Name + "/remat"
		cp.Operands = make([]*hlo.Instruction, len(x.Operands))
		for i, o := range x.Operands {
			if cp.Operands[i] = clone(o); cp.Operands[i] == nil {
				return nil
			}
		}
		made[x] = &cp
		copies = append(copies, &cp)
		return &cp
	}
	nv := clone(v)
	if nv == nil {
		return nil
	}
	// Any place before the first late user will do: the scheduler runs
	// the copies just before the kernel that reads them.
	first := len(c.Instructions)
	for _, u := range late {
		first = min(first, pos[u])
	}
	old := c.Instructions
	c.Instructions = append(append(append([]*hlo.Instruction{}, old[:first]...), copies...), old[first:]...)
	var undoOps []func()
	for _, u := range late {
		for i, o := range u.Operands {
			if o == v {
				u, i := u, i
				u.Operands[i] = nv
				undoOps = append(undoOps, func() { u.Operands[i] = v })
			}
		}
	}
	return func() {
		c.Instructions = old
		for _, f := range undoOps {
			f()
		}
	}
}
