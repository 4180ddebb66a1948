package lower

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// The kernel plan is what the fusion passes decide and the passes after
// them read: which instructions are computed inside other kernels, and
// for each kernel what it computes besides its root and in which form.
// "fuse loops" marks the fused producers, "fuse siblings" and "fuse rows"
// give kernels prologues (and row kernels their rows), "plan device
// loops" records the while loops that iterate on the device, and "plan
// kernels" settles every kernel's kind in run order; emission generates
// each kernel from its kernelPlan alone.

// plan is the kernel plan of one computation.
type plan struct {
	// fused instructions are computed inline by every kernel that reads
	// them (fuseLoops); they have no buffer and no kernel of their own.
	fused map[*hlo.Instruction]bool
	// moved instructions are computed by another kernel, alongside its
	// own results (that kernel's prologue), and stored from there.
	moved map[*hlo.Instruction]bool
	// kernels holds each kernel's decisions, by its root, from the pass
	// that first makes one.
	kernels map[*hlo.Instruction]*kgen.Plan
	// order is every kernel and control step in run order ("plan
	// kernels", from the schedule).
	order []*kgen.Plan
	// aliased reshapes are their operand's buffer read in their own
	// dimensions (aliasesOperand): no kernel, no buffer.
	aliased map[*hlo.Instruction]bool
	// registers are values their kernel computes first that no other
	// kernel reads (keepInRegisters): no buffer, no store.
	registers map[*hlo.Instruction]bool
}

func newPlan() *plan {
	return &plan{fused: map[*hlo.Instruction]bool{}, moved: map[*hlo.Instruction]bool{}, kernels: map[*hlo.Instruction]*kgen.Plan{},
		aliased: map[*hlo.Instruction]bool{}, registers: map[*hlo.Instruction]bool{}}
}

// kernel returns root's kernel plan, made empty if it has none yet.
func (p *plan) kernel(root *hlo.Instruction) *kgen.Plan {
	kp := p.kernels[root]
	if kp == nil {
		kp = &kgen.Plan{Root: root}
		p.kernels[root] = kp
	}
	return kp
}

// prologue returns what root's kernel computes ahead of its own results.
func (p *plan) prologue(root *hlo.Instruction) []*hlo.Instruction {
	if kp := p.kernels[root]; kp != nil {
		return kp.Prologue
	}
	return nil
}

// members returns root and what its kernel computes first: the values
// its step computes.
func (p *plan) members(root *hlo.Instruction) []*hlo.Instruction {
	return append([]*hlo.Instruction{root}, p.prologue(root)...)
}

// rowDims returns the leading dimensions that index a row of root's row
// kernel, and whether root's kernel is one.
func (p *plan) rowDims(root *hlo.Instruction) (int, bool) {
	if kp := p.kernels[root]; kp != nil && kp.Row {
		return kp.RowDims, true
	}
	return 0, false
}

// planKernels settles the form of every kernel and control step the
// schedule runs, in its order: the last of the plan's decisions, asked
// once here and read by emission.
func planKernels(s *state) error {
	s.plan.order = nil
	clear(s.plan.aliased)
	clear(s.plan.registers)
	outputs := map[*hlo.Instruction]int{} // the entry's result leaves
	for _, l := range rootLeaves(s.mod.Entry.Root) {
		outputs[l]++
	}
	resultAlias := map[*hlo.Instruction]bool{} // buffers an aliased result reads, by their producer
	for _, in := range s.order {
		if s.plan.fused[in] || s.plan.moved[in] {
			continue // computed by other kernels
		}
		if s.aliasesOperand(in, outputs, resultAlias) {
			s.plan.aliased[in] = true
			continue
		}
		kind, g := kindOf(s, in)
		if kind == kgen.KindNone {
			continue
		}
		kp := s.plan.kernel(in)
		kp.Kind, kp.Gemm = kind, g
		if g != nil {
			s.tileGemm(g)
		}
		// A set, not a search of the list: a fused chain's cluster is the
		// whole chain (50,000 negates spent 0.8 s in that search).
		seen := map[*hlo.Instruction]bool{}
		for _, r := range append([]*hlo.Instruction{in}, kp.Prologue...) {
			_, c := s.clusterInputs(r)
			for _, x := range c {
				if !seen[x] {
					seen[x] = true
					kp.Cluster = append(kp.Cluster, x)
				}
			}
		}
		s.plan.order = append(s.plan.order, kp)
	}
	s.keepInRegisters(outputs)
	for _, kp := range s.plan.order {
		s.prog.Plan = append(s.prog.Plan, kp.String())
	}
	return nil
}

// keepInRegisters gives no buffer to a value a kernel computes first (its
// prologue) that nothing outside that kernel reads, nor the program
// returns (outputs): its readers there take it from a register, so its
// store would be memory and traffic for nothing (a reduce two siblings
// read, computed with both in one kernel; softmax's row max and sum).
// Not in an update in place, which computes what it computes first at
// its update's elements, from its own generator.
func (s *state) keepInRegisters(outputs map[*hlo.Instruction]int) {
	host := map[*hlo.Instruction]*hlo.Instruction{}
	for _, kp := range s.plan.order {
		kp.Registers = nil // (planned anew)
		switch kp.Kind {
		case kgen.KindElementwise, kgen.KindRemap, kgen.KindReduce, kgen.KindRow, kgen.KindDot, kgen.KindConv, kgen.KindReduceWindow:
			if updatesInPlace(kp.Root) {
				continue
			}
			for _, p := range kp.Prologue {
				host[p] = kp.Root
			}
		}
	}
	if len(host) == 0 {
		return
	}
	read := map[*hlo.Instruction]bool{} // from outside its kernel
	for _, x := range s.mod.Entry.Instructions {
		if !s.live[x] || s.plan.fused[x] {
			continue
		}
		step := x
		if h, ok := host[x]; ok {
			step = h
		}
		s.visitInputs(x, func(o *hlo.Instruction) {
			if h, ok := host[o]; ok && h != step {
				read[o] = true
			}
		})
	}
	for p, h := range host {
		if read[p] || outputs[p] > 0 {
			continue
		}
		kp := s.plan.kernels[h]
		if kp.Registers == nil {
			kp.Registers = map[*hlo.Instruction]bool{}
		}
		kp.Registers[p] = true
		s.plan.registers[p] = true
	}
}

// tileGemm chooses g's tiles for the device: GPUs stage blocks through
// shared memory where the dot allows; CPUs take a subgroup per tile,
// lanes over its columns, where the dot allows.
func (s *state) tileGemm(g *kgen.GemmPlan) {
	if !s.tg.CPU || s.opts.SharedGemm {
		g.ToShared(s.tg)
	} else if !s.opts.InvocationTiles {
		g.ToLanes(s.tg)
	}
}

// epilogueCopies is how many results of dot an invocation of its tiled
// kernel computes, each through its own copy of the epilogue's code
// (kgen's gemmStore); 1 where the dot takes no tiled kernel.
func (s *state) epilogueCopies(dot *hlo.Instruction) int {
	g := kgen.GemmOf(dot)
	if g == nil {
		return 1
	}
	s.tileGemm(g)
	n := g.Rows * g.Cols
	if g.Lanes > 0 {
		n /= g.Lanes
	}
	return max(1, int(n))
}

// aliasesOperand reports whether reshape in can be its operand's buffer
// read in its own dimensions, as XLA makes a reshape a bitcast: a
// row-major reshape keeps every element's place in memory, and a
// buffer is written once, by its producer. The operand must be a
// kernel's own result (a temporary: not a parameter, which the caller
// owns, or a constant), and the two may not both be results of the
// entry (a buffer is one result). Sub-programs keep their copies: a
// loop body's results become its state.
func (s *state) aliasesOperand(in *hlo.Instruction, outputs map[*hlo.Instruction]int, resultAlias map[*hlo.Instruction]bool) bool {
	if in.Op != hlo.OpReshape || s.opts.sub || !in.Shape.IsArray() || len(s.plan.prologue(in)) > 0 {
		return false // (a reshape that computes others first is a kernel)
	}
	o := in.Operands[0]
	for s.plan.aliased[o] {
		o = o.Operands[0] // the buffer's producer
	}
	if s.plan.fused[o] || !o.Shape.IsArray() || o.Shape.Elem != in.Shape.Elem {
		return false
	}
	switch kind, _ := kindOf(s, o); kind {
	case kgen.KindNone, kgen.KindHost, kgen.KindDeviceLoop:
		return false
	}
	if outputs[in] > 0 {
		// One result per buffer: not o's own, nor another reshape's.
		if outputs[in] > 1 || outputs[o] > 0 || resultAlias[o] {
			return false
		}
		resultAlias[o] = true
	}
	return true
}

// rootLeaves is the instructions whose values are the entry's result
// leaves: the root, or the operands of a root tuple.
func rootLeaves(root *hlo.Instruction) []*hlo.Instruction {
	if root.Op == hlo.OpTuple {
		return root.Operands
	}
	return []*hlo.Instruction{root}
}

// kindOf is the form of in's kernel, and a tiled GEMM's plan. The checks
// go in order: a device loop, control flow, no kernel at all, a sort, a
// tiled GEMM, a row kernel; then the op's own generator.
func kindOf(s *state, in *hlo.Instruction) (kgen.Kind, *kgen.GemmPlan) {
	if kp := s.plan.kernels[in]; kp != nil && kp.Loop != nil {
		return kgen.KindDeviceLoop, nil
	}
	switch {
	case in.Op == hlo.OpWhile || in.Op == hlo.OpConditional:
		return kgen.KindHost, nil
	case isFftAxis(in):
		return kgen.KindFft, nil
	case kgen.OpKind(in.Op) == kgen.KindNone:
		return kgen.KindNone, nil // parameters, constants, tuples: no kernel
	case in.Shape.Leaves()[0].NumElements() == 0:
		return kgen.KindNone, nil // the empty buffer is the result
	case in.Op == hlo.OpSort:
		return kgen.KindSort, nil
	}
	if g := s.planGemm(in); g != nil {
		return kgen.KindGemm, g
	}
	if _, row := s.plan.rowDims(in); row {
		return kgen.KindRow, nil
	}
	return kgen.OpKind(in.Op), nil
}

// check reports where the plan breaks its own rules (a compiler bug):
// run between passes in tests (checkPasses).
func (p *plan) check(s *state) error {
	users := map[*hlo.Instruction]int{}
	for _, in := range s.mod.Entry.Instructions {
		for _, o := range in.Operands {
			users[o]++
		}
	}
	for in := range p.fused {
		switch {
		case in == s.mod.Entry.Root:
			return fmt.Errorf("the root %s is fused", in.Name)
		case users[in] == 0:
			return fmt.Errorf("%s is fused but nothing reads it", in.Name)
		case !fusible(in):
			return fmt.Errorf("%s (%s) is fused but cannot be", in.Name, in.Op)
		case p.moved[in]:
			return fmt.Errorf("%s is both fused and moved", in.Name)
		}
	}
	owner := map[*hlo.Instruction]*hlo.Instruction{}
	for root, kp := range p.kernels {
		if kp.Root != root {
			return fmt.Errorf("the plan of %s is filed under %s", kp.Root.Name, root.Name)
		}
		if len(kp.Prologue) > 0 && (p.fused[root] || p.moved[root]) {
			return fmt.Errorf("%s has a prologue but is computed by another kernel", root.Name)
		}
		for _, x := range kp.Prologue {
			if o, ok := owner[x]; ok {
				return fmt.Errorf("%s is in the prologues of both %s and %s", x.Name, o.Name, root.Name)
			}
			owner[x] = root
			if !p.moved[x] {
				return fmt.Errorf("%s is in %s's prologue but not marked moved", x.Name, root.Name)
			}
		}
		if kp.Row && (kp.RowDims < 1 || kp.RowDims >= root.Shape.Rank()) {
			return fmt.Errorf("row kernel %s indexes rows by %d of its %d dimensions", root.Name, kp.RowDims, root.Shape.Rank())
		}
		for r := range kp.Online {
			if !slices.Contains(kp.Prologue, r) {
				return fmt.Errorf("%s's online max %s is not in its prologue", root.Name, r.Name)
			}
		}
		for r := range kp.Registers {
			if !slices.Contains(kp.Prologue, r) {
				return fmt.Errorf("%s keeps %s in registers but does not compute it", root.Name, r.Name)
			}
		}
	}
	for x := range p.moved {
		if _, ok := owner[x]; !ok {
			return fmt.Errorf("%s is moved into no kernel's prologue", x.Name)
		}
	}
	seen := map[*hlo.Instruction]bool{}
	for _, kp := range p.order {
		switch {
		case seen[kp.Root]:
			return fmt.Errorf("%s is planned twice", kp.Root.Name)
		case p.fused[kp.Root] || p.moved[kp.Root]:
			return fmt.Errorf("%s is planned as a kernel but computed by others", kp.Root.Name)
		case (kp.Kind == kgen.KindGemm) != (kp.Gemm != nil):
			return fmt.Errorf("%s is a %s kernel with tiles %v", kp.Root.Name, kp.Kind, kp.Gemm != nil)
		case (kp.Kind == kgen.KindDeviceLoop) != (kp.Loop != nil):
			return fmt.Errorf("%s is a %s step with a device loop %v", kp.Root.Name, kp.Kind, kp.Loop != nil)
		case kp.Kind == kgen.KindRow && !kp.Row:
			return fmt.Errorf("%s is a row kernel without rows", kp.Root.Name)
		}
		seen[kp.Root] = true
	}
	return nil
}
