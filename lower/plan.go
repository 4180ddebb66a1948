package lower

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
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
	kernels map[*hlo.Instruction]*kernelPlan
	// order is every kernel and control step in run order ("plan
	// kernels", from the schedule).
	order []*kernelPlan
}

func newPlan() *plan {
	return &plan{fused: map[*hlo.Instruction]bool{}, moved: map[*hlo.Instruction]bool{}, kernels: map[*hlo.Instruction]*kernelPlan{}}
}

// kernel returns root's kernel plan, made empty if it has none yet.
func (p *plan) kernel(root *hlo.Instruction) *kernelPlan {
	kp := p.kernels[root]
	if kp == nil {
		kp = &kernelPlan{root: root}
		p.kernels[root] = kp
	}
	return kp
}

// prologue returns what root's kernel computes ahead of its own results.
func (p *plan) prologue(root *hlo.Instruction) []*hlo.Instruction {
	if kp := p.kernels[root]; kp != nil {
		return kp.prologue
	}
	return nil
}

// rowDims returns the leading dimensions that index a row of root's row
// kernel, and whether root's kernel is one.
func (p *plan) rowDims(root *hlo.Instruction) (int, bool) {
	if kp := p.kernels[root]; kp != nil && kp.row {
		return kp.rowDims, true
	}
	return 0, false
}

// kernelKind is the form of a planned kernel, which chooses its
// generator (emitters).
type kernelKind uint8

const (
	kindNone             kernelKind = iota // not a kernel: nothing to compute
	kindElementwise                        // an invocation per output element
	kindRemap                              // data movement: each output element read at an index of the input (remap.go)
	kindReduce                             // an invocation (or a subgroup or workgroup of them) per output element, looping over the reduced ones (reduce.go, subgroup.go)
	kindRow                                // an elementwise kernel with the row reductions it reads: an invocation per row (rowfuse.go)
	kindGemm                               // a dot or convolution by register or shared-memory tiles, an epilogue fused (gemm.go)
	kindDot                                // a dot, an invocation per output element (dot.go)
	kindConv                               // a convolution, an invocation per output element (conv.go)
	kindReduceWindow                       // (window.go)
	kindSelectAndScatter                   // as a gather of the windows that select each element (selectscatter.go)
	kindScatter                            // (scatter.go)
	kindSort                               // a slice per invocation, or merge passes for long slices (sort.go)
	kindDeviceLoop                         // a while loop that iterates inside one invocation (seqloop.go)
	kindHost                               // a while or conditional whose computations run as sub-programs driven from the host
)

func (k kernelKind) String() string {
	return [...]string{"none", "elementwise", "remap", "reduce", "row", "gemm", "dot", "conv", "reduce-window", "select-and-scatter", "scatter", "sort", "device-loop", "host"}[k]
}

// kernelPlan is one planned kernel (or control step).
type kernelPlan struct {
	root *hlo.Instruction
	kind kernelKind
	// cluster is the fused producers the kernel computes inline, its
	// prologue's included, in the order first read.
	cluster []*hlo.Instruction
	// prologue is what the kernel computes first, at its own output
	// index (fuseSiblings) or per row (fuseRows), storing it as well.
	prologue []*hlo.Instruction
	// Row kernels (fuseRows): the leading dimensions that index a row;
	// a value their reduction stores for their elements to read back and
	// that reduction (spill); max reduces folded with a sum (online).
	row     bool
	rowDims int
	spill   [2]*hlo.Instruction
	online  map[*hlo.Instruction]onlinePair
	gemm    *gemmPlan // kindGemm: its tiles
	loop    *seqLoop  // kindDeviceLoop
	// hostLoop says why a while loop is not a device loop.
	hostLoop string
}

// planKernels settles the form of every kernel and control step the
// schedule runs, in its order: the last of the plan's decisions, asked
// once here and read by emission.
func planKernels(s *state) error {
	s.plan.order = nil
	for _, in := range s.order {
		if s.plan.fused[in] || s.plan.moved[in] {
			continue // computed by other kernels
		}
		kind, g := kindOf(s, in)
		if kind == kindNone {
			continue
		}
		kp := s.plan.kernel(in)
		kp.kind, kp.gemm = kind, g
		if g != nil && (!s.tg.CPU || s.opts.SharedGemm) {
			g.toShared(s.tg) // GPUs stage blocks through shared memory where the dot allows
		}
		// A set, not a search of the list: a fused chain's cluster is the
		// whole chain (50,000 negates spent 0.8 s in that search).
		seen := map[*hlo.Instruction]bool{}
		for _, r := range append([]*hlo.Instruction{in}, kp.prologue...) {
			_, c := s.clusterInputs(r)
			for _, x := range c {
				if !seen[x] {
					seen[x] = true
					kp.cluster = append(kp.cluster, x)
				}
			}
		}
		s.plan.order = append(s.plan.order, kp)
		s.prog.Plan = append(s.prog.Plan, kp.String())
	}
	return nil
}

// kindOf is the form of in's kernel, and a tiled GEMM's plan. The checks
// go in order: a device loop, control flow, no kernel at all, a sort, a
// tiled GEMM, a row kernel; then the op's own generator.
func kindOf(s *state, in *hlo.Instruction) (kernelKind, *gemmPlan) {
	if kp := s.plan.kernels[in]; kp != nil && kp.loop != nil {
		return kindDeviceLoop, nil
	}
	switch {
	case in.Op == hlo.OpWhile || in.Op == hlo.OpConditional:
		return kindHost, nil
	case !in.Op.IsElementwise() && !remapOps[in.Op] && !ownKernel(in.Op):
		return kindNone, nil // parameters, constants, tuples: no kernel
	case in.Shape.Leaves()[0].NumElements() == 0:
		return kindNone, nil // the empty buffer is the result
	case in.Op == hlo.OpSort:
		return kindSort, nil
	}
	if g := s.planGemm(in); g != nil {
		return kindGemm, g
	}
	if _, row := s.plan.rowDims(in); row {
		return kindRow, nil
	}
	if k, ok := opKinds[in.Op]; ok {
		return k, nil
	}
	if remapOps[in.Op] {
		return kindRemap, nil
	}
	return kindElementwise, nil
}

// ownKernel reports the ops with a kernel generator of their own.
func ownKernel(op hlo.Opcode) bool { _, ok := opKinds[op]; return ok }

// opKinds are the ops with a kernel generator of their own, by its kind.
var opKinds = map[hlo.Opcode]kernelKind{
	hlo.OpReduce:           kindReduce,
	hlo.OpDot:              kindDot,
	hlo.OpReduceWindow:     kindReduceWindow,
	hlo.OpSelectAndScatter: kindSelectAndScatter,
	hlo.OpScatter:          kindScatter,
	hlo.OpConvolution:      kindConv,
	hlo.OpSort:             kindSort,
}

// String describes the kernel's plan in one line, for Program.Describe
// and plan dumps.
func (kp *kernelPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", kp.root.Name, kp.kind)
	names := func(xs []*hlo.Instruction) string {
		var ns []string
		for _, x := range xs {
			ns = append(ns, x.Name)
		}
		return strings.Join(ns, " ")
	}
	if kp.row {
		fmt.Fprintf(&b, " rows of %d dims", kp.rowDims)
	}
	if len(kp.prologue) > 0 {
		fmt.Fprintf(&b, "; first %s", names(kp.prologue))
	}
	if len(kp.cluster) > 0 {
		fmt.Fprintf(&b, "; inline %s", names(kp.cluster))
	}
	if kp.spill[0] != nil {
		fmt.Fprintf(&b, "; %s stored by %s", kp.spill[0].Name, kp.spill[1].Name)
	}
	var on []string
	for _, r := range kp.prologue {
		if p, ok := kp.online[r]; ok {
			on = append(on, fmt.Sprintf("%s with %s", r.Name, p.sum.Name))
		}
	}
	if len(on) > 0 {
		fmt.Fprintf(&b, "; online %s", strings.Join(on, ", "))
	}
	if kp.gemm != nil {
		fmt.Fprintf(&b, "; tiles %dx%d", kp.gemm.rows, kp.gemm.cols)
	}
	if kp.hostLoop != "" {
		fmt.Fprintf(&b, "; %s", kp.hostLoop)
	}
	return b.String()
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
		if kp.root != root {
			return fmt.Errorf("the plan of %s is filed under %s", kp.root.Name, root.Name)
		}
		if len(kp.prologue) > 0 && (p.fused[root] || p.moved[root]) {
			return fmt.Errorf("%s has a prologue but is computed by another kernel", root.Name)
		}
		for _, x := range kp.prologue {
			if o, ok := owner[x]; ok {
				return fmt.Errorf("%s is in the prologues of both %s and %s", x.Name, o.Name, root.Name)
			}
			owner[x] = root
			if !p.moved[x] {
				return fmt.Errorf("%s is in %s's prologue but not marked moved", x.Name, root.Name)
			}
		}
		if kp.row && (kp.rowDims < 1 || kp.rowDims >= root.Shape.Rank()) {
			return fmt.Errorf("row kernel %s indexes rows by %d of its %d dimensions", root.Name, kp.rowDims, root.Shape.Rank())
		}
		for r := range kp.online {
			if !slices.Contains(kp.prologue, r) {
				return fmt.Errorf("%s's online max %s is not in its prologue", root.Name, r.Name)
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
		case seen[kp.root]:
			return fmt.Errorf("%s is planned twice", kp.root.Name)
		case p.fused[kp.root] || p.moved[kp.root]:
			return fmt.Errorf("%s is planned as a kernel but computed by others", kp.root.Name)
		case (kp.kind == kindGemm) != (kp.gemm != nil):
			return fmt.Errorf("%s is a %s kernel with tiles %v", kp.root.Name, kp.kind, kp.gemm != nil)
		case (kp.kind == kindDeviceLoop) != (kp.loop != nil):
			return fmt.Errorf("%s is a %s step with a device loop %v", kp.root.Name, kp.kind, kp.loop != nil)
		case kp.kind == kindRow && !kp.row:
			return fmt.Errorf("%s is a row kernel without rows", kp.root.Name)
		}
		seen[kp.root] = true
	}
	return nil
}
