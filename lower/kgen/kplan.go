package kgen

import (
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Kind is the form of a planned kernel, which chooses its
// generator (emitters).
type Kind uint8

const (
	KindNone             Kind = iota // not a kernel: nothing to compute
	KindElementwise                  // an invocation per output element
	KindRemap                        // data movement: each output element read at an index of the input (remap.go)
	KindReduce                       // an invocation (or a subgroup or workgroup of them) per output element, looping over the reduced ones (reduce.go, subgroup.go)
	KindRow                          // an elementwise kernel with the row reductions it reads: an invocation per row (rowemit.go; planned by lower/rowfuse.go)
	KindGemm                         // a dot or convolution by register or shared-memory tiles, an epilogue fused (gemm.go)
	KindDot                          // a dot, an invocation per output element (dot.go)
	KindConv                         // a convolution, an invocation per output element (conv.go)
	KindReduceWindow                 // (window.go)
	KindSelectAndScatter             // as a gather of the windows that select each element (selectscatter.go)
	KindScatter                      // (scatter.go)
	KindSort                         // a slice per invocation, or merge passes for long slices (sort.go)
	KindFft                          // a complex transform along one dimension: a kernel per radix pass (fft.go)
	KindDeviceLoop                   // a while loop that iterates inside one invocation (seqkernel.go; planned by lower/seqloop.go)
	KindHost                         // a while or conditional whose computations run as sub-programs driven from the host
)

func (k Kind) String() string {
	return [...]string{"none", "elementwise", "remap", "reduce", "row", "gemm", "dot", "conv", "reduce-window", "select-and-scatter", "scatter", "sort", "fft", "device-loop", "host"}[k]
}

// Plan is one planned kernel (or control step).
type Plan struct {
	Root *hlo.Instruction
	Kind Kind
	// Cluster is the fused producers the kernel computes inline, its
	// prologue's included, in the order first read.
	Cluster []*hlo.Instruction
	// Prologue is what the kernel computes first, at its own output
	// index (fuseSiblings) or per row (fuseRows), storing it as well.
	Prologue []*hlo.Instruction
	// Registers are the prologue's values no other kernel reads: the
	// kernel stores them nowhere.
	Registers map[*hlo.Instruction]bool
	// Row kernels (fuseRows): the leading dimensions that index a Row;
	// a value their reduction stores for their elements to read back and
	// that reduction (spill); max reduces folded with a sum (online).
	Row     bool
	RowDims int
	Spill   [2]*hlo.Instruction
	Online  map[*hlo.Instruction]OnlinePair
	Gemm    *GemmPlan // kindGemm: its tiles
	Loop    *Loop     // kindDeviceLoop
	// HostLoop says why a while loop is not a device loop.
	HostLoop string
}

// OnlinePair is a max reduce's partner in an online fold: the sum
// reduce, and the subtract and exponential it reads.
type OnlinePair struct {
	Sum, Sub, Exp *hlo.Instruction
}

// String describes the kernel's plan in one line, for Program.Describe
// and plan dumps.
func (kp *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", kp.Root.Name, kp.Kind)
	names := func(xs []*hlo.Instruction) string {
		var ns []string
		for _, x := range xs {
			ns = append(ns, x.Name)
		}
		return strings.Join(ns, " ")
	}
	if kp.Row {
		fmt.Fprintf(&b, " rows of %d dims", kp.RowDims)
	}
	if len(kp.Prologue) > 0 {
		fmt.Fprintf(&b, "; first %s", names(kp.Prologue))
	}
	var regs []*hlo.Instruction
	for _, p := range kp.Prologue {
		if kp.Registers[p] {
			regs = append(regs, p)
		}
	}
	if len(regs) > 0 {
		fmt.Fprintf(&b, "; in registers %s", names(regs))
	}
	if len(kp.Cluster) > 0 {
		fmt.Fprintf(&b, "; inline %s", names(kp.Cluster))
	}
	if kp.Spill[0] != nil {
		fmt.Fprintf(&b, "; %s stored by %s", kp.Spill[0].Name, kp.Spill[1].Name)
	}
	var on []string
	for _, r := range kp.Prologue {
		if p, ok := kp.Online[r]; ok {
			on = append(on, fmt.Sprintf("%s with %s", r.Name, p.Sum.Name))
		}
	}
	if len(on) > 0 {
		fmt.Fprintf(&b, "; online %s", strings.Join(on, ", "))
	}
	if kp.Gemm != nil {
		fmt.Fprintf(&b, "; tiles %dx%d", kp.Gemm.Rows, kp.Gemm.Cols)
	}
	if kp.Loop != nil && len(kp.Loop.Columns) > 0 {
		fmt.Fprintf(&b, "; columns of %s kept", strings.Join(kp.Loop.Columns, " "))
	}
	if kp.HostLoop != "" {
		fmt.Fprintf(&b, "; %s", kp.HostLoop)
	}
	return b.String()
}
