package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// The loop bound and the schedule: how many loop iterations one
// invocation of a kernel runs (llvmpipe stops at 65535), and the order in
// which the kernels run.

// checkLoopBounds refuses, by name, a kernel that would run more loop
// iterations per invocation than the device allows even unfused, rather
// than let the driver cut it short.
func checkLoopBounds(s *state) error {
	if s.tg.MaxLoopIterations == 0 {
		return nil
	}
	for _, in := range s.mod.Entry.Instructions {
		if s.plan.fused[in] || s.plan.moved[in] || consumerReads(in) == readsNone {
			continue
		}
		if n := s.kernelIters(in); n > s.tg.LoopBudget() {
			return in.Errorf("one invocation of its kernel would run %d loop iterations, beyond the device's bound of %d (llvmpipe stops loops there); not supported on this device yet", n, s.tg.MaxLoopIterations)
		}
	}
	return nil
}

// ownLoop is how many iterations computing one element of in runs in its
// own loop (reads of its operands happen inside it).
func ownLoop(in *hlo.Instruction) int64 {
	switch in.Op {
	case hlo.OpReduce:
		return reducedCount(in)
	case hlo.OpSelectAndScatter:
		c, s := kgen.SelectWindows(in)
		return c * (s + 1)
	case hlo.OpDot, hlo.OpConvolution, hlo.OpReduceWindow:
		if in.Shape.IsArray() && in.Shape.NumElements() > 0 {
			return work(in) / in.Shape.NumElements()
		}
		w := int64(1)
		if in.Op == hlo.OpReduceWindow {
			for _, d := range in.A.Window.Dims {
				w *= d.Size
			}
		}
		return w
	case hlo.OpScatter:
		if atomicScatter(in) {
			return 0 // an invocation an update
		}
		return scatterPositions(in)
	case hlo.OpSort:
		length := in.Operands[0].Shape.Dims[in.A.Dimensions[0]]
		steps := int64(0)
		for w := int64(1); w < length; w *= 2 {
			steps++
		}
		// A merge pass: searches down a tree of at most steps levels
		// (a four-way pass's searches nested as deep), then its chunk,
		// of at most SortCPUChunk places. SortSliceKernel (slices of at
		// most SortChunk) runs more, its passes over the slice (528 at
		// 128 elements), far below any loop bound; counted so, very
		// short slices would turn light and change their workgroups,
		// unmeasured.
		return steps*steps + kgen.SortCPUChunk
	}
	return 0
}

// loopIters estimates the loop iterations one invocation of in's kernel
// runs: its own loop around the reads of its operands, and the loops of
// the producers it computes inline.
func (s *state) loopIters(in *hlo.Instruction) int64 {
	if !slices.ContainsFunc(in.Operands, func(o *hlo.Instruction) bool { return s.plan.fused[o] }) {
		return s.loopItersMemo(in, nil) // nothing fused: no memo to fill
	}
	return s.loopItersMemo(in, map[*hlo.Instruction]int64{})
}

// loopItersMemo is loopIters with each fused value's figure computed
// once (several ops of a cluster read one value: its paths are
// exponential in number), saturating at maxIters.
func (s *state) loopItersMemo(in *hlo.Instruction, memo map[*hlo.Instruction]int64) int64 {
	if n, ok := memo[in]; ok {
		return n
	}
	var inner int64
	for _, o := range in.Operands {
		if s.plan.fused[o] {
			inner = min(inner+s.loopItersMemo(o, memo), maxIters)
		}
	}
	n := inner
	if l := ownLoop(in); l > 0 {
		n = maxIters
		if inner < maxIters/l-1 {
			n = l * (1 + inner)
		}
	}
	if memo != nil {
		memo[in] = n
	}
	return n
}

// maxIters is where loopIters stops counting: past any device's bound.
const maxIters = 1 << 62

// kernelIters is loopIters for a materialized kernel, its prologue
// reductions included.
func (s *state) kernelIters(in *hlo.Instruction) int64 {
	n := s.loopIters(in)
	if m, ok := s.plan.rowDims(in); ok { // a row kernel loops over its row
		_, cols := rowSplit(in, m)
		n = cols * (1 + n)
	}
	for _, p := range s.plan.prologue(in) {
		n += s.loopIters(p)
	}
	return n
}

// schedule orders the steps depth first from the root: each kernel runs
// just before the first kernel that needs it, so values computed for
// late users (rematerialized copies among them) are not held across the
// program (XLA's DFS memory scheduler does the same). A reduce computed
// in another's kernel (prologue) is scheduled as that kernel. Dead
// instructions are not run.
func schedule(s *state) error {
	c := s.mod.Entry
	stepOf := map[*hlo.Instruction]*hlo.Instruction{}
	for r2, kp := range s.plan.kernels {
		for _, p := range kp.Prologue {
			stepOf[p] = r2
		}
	}
	done := map[*hlo.Instruction]bool{}
	var visit func(x *hlo.Instruction)
	visit = func(x *hlo.Instruction) {
		if r2, ok := stepOf[x]; ok {
			x = r2
		}
		if done[x] {
			return
		}
		done[x] = true
		for _, p := range s.plan.prologue(x) {
			done[p] = true
		}
		// The values the step reads: its cluster's materialized inputs,
		// and those of the reduces it computes first.
		roots := s.plan.members(x)
		for _, r := range roots {
			if consumerReads(r) == readsNone {
				for _, o := range r.Operands {
					visit(o)
				}
				continue
			}
			s.visitInputs(r, visit)
		}
		s.order = append(s.order, x)
	}
	visit(c.Root)
	s.live = done
	return nil
}

// visitInputs calls f on each distinct materialized value in's kernel
// reads, in operand order.
func (s *state) visitInputs(in *hlo.Instruction, f func(*hlo.Instruction)) {
	s.walkFused(in, operandsOf, nil, f)
}

// walkFused walks from start along next (operands, or users) through
// the fused instructions it meets, calling fused on each of them and
// other on each materialized one that ends a path, once each, in the
// order met.
func (s *state) walkFused(start *hlo.Instruction, next func(*hlo.Instruction) []*hlo.Instruction, fused, other func(*hlo.Instruction)) {
	seen := map[*hlo.Instruction]bool{start: true}
	var walk func(x *hlo.Instruction)
	walk = func(x *hlo.Instruction) {
		for _, o := range next(x) {
			if seen[o] {
				continue
			}
			seen[o] = true
			if !s.plan.fused[o] {
				other(o)
				continue
			}
			if fused != nil {
				fused(o)
			}
			walk(o)
		}
	}
	walk(start)
}

func operandsOf(x *hlo.Instruction) []*hlo.Instruction { return x.Operands }
