package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Loop fusion: an elementwise or data-movement instruction whose every
// user is a kernel is not given a buffer; each consumer's kernel computes
// its elements where it reads them, so the intermediate never touches
// memory and costs no dispatch (XLA's loop fusion). The decision is
// this pass's; emission goes through the kernels' ordinary operand reads
// (kernelBuilder.load), which compute a fused operand instead of loading
// it.

// readCount says how often a consumer reads each element of an operand.
type readCount uint8

const (
	readsNone readCount = iota // not a kernel: needs its operands in buffers
	readsOnce                  // about once per operand element
	readsMany                  // many times (dot, convolution, broadcast...)
)

// consumerReads classifies how consumer in reads its operands.
func consumerReads(in *hlo.Instruction) readCount {
	switch {
	case in.Op == hlo.OpBroadcast, in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduceWindow,
		in.Op == hlo.OpSort, in.Op == hlo.OpScatter, in.Op == hlo.OpGather, in.Op == hlo.OpPad:
		return readsMany
	case in.Op.IsElementwise(), remapOps[in.Op], kernelOps[in.Op]:
		return readsOnce
	}
	return readsNone
}

// indexOnly ops move or make elements without arithmetic: recomputing
// them per read costs index math only.
func indexOnly(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpBroadcast, hlo.OpReshape, hlo.OpBitcast, hlo.OpTranspose, hlo.OpSlice, hlo.OpIota, hlo.OpReverse:
		return true
	case hlo.OpConstant:
		return in.Shape.IsArray() && in.Shape.NumElements() == 1
	}
	return false
}

// fusible reports the producers that can be computed inside consumers.
func fusible(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() {
		return false
	}
	switch {
	case in.Op == hlo.OpConstant:
		return indexOnly(in)
	case in.Op == hlo.OpConcatenate, in.Op == hlo.OpDynamicUpdateSlice, in.Op == hlo.OpGather:
		return false // their kernels write whole regions; keep them materialized
	case in.Op.IsElementwise() && in.Op != hlo.OpRngBitGenerator, remapOps[in.Op]:
		return true
	}
	return false
}

// fuseLoops marks the instructions of the entry computation that
// consumers compute inline (state.fused). Users are decided before
// their operands (reverse definition order), so a producer knows how
// its users will be read: into a consumer that reads many times only
// index-only producers go, and a producer with several users is fused
// (and so recomputed by each) only when it is index-only.
func fuseLoops(s *state) error {
	s.fused = map[*hlo.Instruction]bool{}
	if s.opts.NoFuse {
		return nil
	}
	c := s.mod.Entry
	users := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, o := range in.Operands {
			users[o] = append(users[o], in)
		}
	}
	// reads[in]: how in's operands are read, all the way out to the
	// materialized kernel that computes in.
	reads := map[*hlo.Instruction]readCount{}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		in := c.Instructions[i]
		reads[in] = consumerReads(in)
		us := users[in]
		if in == c.Root || len(us) == 0 || !fusible(in) {
			continue
		}
		ctx := readsOnce
		for _, u := range us {
			ctx = max(ctx, reads[u])
			if reads[u] == readsNone {
				ctx = readsNone
				break
			}
		}
		if ctx == readsNone || (ctx == readsMany || len(us) > 1) && !indexOnly(in) {
			continue
		}
		s.fused[in] = true
		reads[in] = max(ctx, reads[in])
	}
	defer func() {
		for in := range s.fused {
			if n, err := StorageBytes(in.Shape, s.tg); err == nil {
				s.prog.FusedBytes += alignUp(paddedSize(n), int64(s.tg.StorageAlign))
			}
		}
	}()
	// A kernel binds its cluster's inputs; past the device's limit,
	// unfuse the cluster's producers (and look again, as they are now
	// kernels themselves).
	for changed := true; changed; {
		changed = false
		for _, in := range c.Instructions {
			if s.fused[in] || consumerReads(in) == readsNone {
				continue
			}
			inputs, cluster := s.clusterInputs(in)
			limit := int(s.tg.MaxStorageBuffers) - len(in.Shape.Leaves())
			if in.Op == hlo.OpSort {
				limit -= 2 // scratch positions
			}
			if s.tg.MaxStorageBuffers != 0 && inputs > limit {
				for _, p := range cluster {
					delete(s.fused, p)
				}
				changed = len(cluster) > 0
			}
		}
	}
	return nil
}

// clusterInputs counts the distinct materialized values root's kernel
// reads, and lists the fused producers it computes.
func (s *state) clusterInputs(root *hlo.Instruction) (int, []*hlo.Instruction) {
	seen := map[*hlo.Instruction]bool{}
	var fused []*hlo.Instruction
	inputs := 0
	var walk func(in *hlo.Instruction)
	walk = func(in *hlo.Instruction) {
		for _, o := range in.Operands {
			if seen[o] {
				continue
			}
			seen[o] = true
			if s.fused[o] {
				fused = append(fused, o)
				walk(o)
			} else {
				inputs++
			}
		}
	}
	walk(root)
	return inputs, fused
}

// kernelEnv is what kernel generators need from the compilation.
type kernelEnv struct {
	tg    Target
	local uint32
	fused map[*hlo.Instruction]bool
}

func (e kernelEnv) builder(pushFields int) *kernelBuilder {
	k := newKernelBuilder(e.tg, e.local, pushFields)
	k.fused = e.fused
	k.bound = map[*hlo.Instruction]int{}
	return k
}

// virtualBase numbers the bindings of fused operands: load computes
// them instead of reading a buffer.
const virtualBase = 1 << 20

// fusedOperand is a fused producer as a kernel sees it: the instruction
// and the bindings (real or virtual) of its own operands.
type fusedOperand struct {
	in    *hlo.Instruction
	binds []int
}

// operandBinding returns the binding through which a kernel reads o:
// a storage buffer (one per distinct input of the kernel) or, for a fused
// producer, a virtual binding.
func (k *kernelBuilder) operandBinding(o *hlo.Instruction, name string) (int, error) {
	if b, ok := k.bound[o]; ok {
		return b, nil
	}
	if k.fused[o] {
		binds := make([]int, len(o.Operands))
		for i, p := range o.Operands {
			b, err := k.operandBinding(p, fmt.Sprintf("%s_in%d", name, i))
			if err != nil {
				return 0, err
			}
			binds[i] = b
		}
		k.virtual = append(k.virtual, fusedOperand{o, binds})
		b := virtualBase + len(k.virtual) - 1
		k.bound[o] = b
		return b, nil
	}
	b, err := k.addBuffer(o.Shape.Elem, name, true)
	if err != nil {
		return 0, o.Errorf("%v", err)
	}
	k.bound[o] = b
	k.inputs = append(k.inputs, o)
	return b, nil
}

// compute emits element idx of a fused producer.
func (k *kernelBuilder) compute(f fusedOperand, idx spirv.ID) val {
	in := f.in
	var v val
	var err error
	switch {
	case in.Op == hlo.OpConstant:
		v = k.scalarConst(in.Literal)
	case remapOps[in.Op]:
		v, err = k.remapValue(in, f.binds, idx)
	default:
		args := make([]val, len(in.Operands))
		for i, o := range in.Operands {
			at := idx
			if o.Shape.Rank() == 0 && in.Shape.Rank() > 0 {
				at = k.cu32(0)
			}
			args[i] = k.load(f.binds[i], at, o.Shape.Elem)
		}
		v, err = k.emitScalar(in, args)
	}
	if err != nil {
		if k.err == nil {
			k.err = err
		}
		return val{k.zero(in.Shape.Elem), in.Shape.Elem}
	}
	return v
}
