package kgen

import (
	"errors"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// How kernels compute what fusion put in them: a fused operand is read
// through a virtual binding whose load computes the element (compute),
// and a value computed earlier in the same invocation (a prologue
// kernel, a tiled dot) is read from a register.

// Env is what kernel generators need from the compilation.
type Env struct {
	Target Target
	Local  uint32
	lanes  uint32 // invocations per output element (subgroup.go); 0: one
	// workgroup: the lanes are a whole workgroup, combined through shared
	// memory (subgroup.go); else they are one subgroup.
	workgroup bool
	parts     uint32 // elements per invocation of a parts kernel (parts.go); 0: one
	// lockstep: a vector kernel on a CPU device whose workgroups are all
	// within its elements, so every invocation runs every loop of its
	// folds: foldColumns waits for the workgroup at each step.
	lockstep bool
	// Iters is the loop iterations computing one element runs (its own
	// loops, its fused producers' and its prologue's), which the vector
	// form runs once per lane.
	Iters int64

	SubgroupReduce bool                      // row reductions may take a subgroup per output
	WorkgroupLanes uint32                    // row reductions long enough take a workgroup of this many per output (0: never)
	Fused          map[*hlo.Instruction]bool // computed inline by their readers (plan.fused)
	Plan           *Plan                     // the kernel being generated
	// Check makes generators check their analyses against the code they
	// emit (vector kernels' bindings: checkVectorBinds), as the compiler's
	// tests do.
	Check bool
}

// Heavy reports whether each element runs more than LightKernel loop
// iterations (LocalSize).
func (e Env) Heavy() bool { return e.Iters > LightKernel }

// plan returns in's kernel plan: the one being generated, or an empty
// one for a kernel of another instruction.
func (e Env) plan(in *hlo.Instruction) *Plan {
	if e.Plan != nil && e.Plan.Root == in {
		return e.Plan
	}
	return &Plan{Root: in}
}

func (e Env) builder(pushFields int) *kernelBuilder {
	k := newKernelBuilder(e.Target, e.Local, pushFields)
	k.fused = e.Fused
	k.check = e.Check
	if e.Target.CPU { // GPUs fold in a row elsewhere: a workgroup's 128 lanes would be 128 accumulators
		k.orderLanes[0] = e.WorkgroupLanes
		if e.SubgroupReduce {
			k.orderLanes[1] = e.Target.SubgroupSize
		}
	}
	if e.Plan != nil {
		k.online = e.Plan.Online
	}
	k.bound = map[*hlo.Instruction]int{}
	return k
}

// bound binds in's kernel (its prologue's operands, its own, then the
// results) on a scratch builder: what a generator learns from the
// bindings before it emits any code, its kernel bound the same way.
func (e Env) bound(in *hlo.Instruction) (kb *kernelBuilder, ps *prologue, binds []int, err error) {
	kb = e.builder(1)
	ps, binds, _, err = kb.bindWithPrologue(e, in)
	return kb, ps, binds, err
}

// prologue is what a kernel computes first for the kernels fused into it
// (fuseSiblings): their operands' bindings, the registers their values
// are read from, and their result bindings.
type prologue struct {
	pro   []*hlo.Instruction
	binds [][]int
	regs  []*val
	outs  []int // -1 for a value kept in its register alone (Plan.Registers)
	kept  map[*hlo.Instruction]bool
}

// bindPrologue binds the operands of the kernels fused ahead of in and
// makes in's reads of them come from registers. Call it before binding
// in's own operands.
func (k *kernelBuilder) bindPrologue(env Env, in *hlo.Instruction) (*prologue, error) {
	ps := &prologue{pro: env.plan(in).Prologue, kept: env.plan(in).Registers}
	for _, p := range ps.pro {
		b, err := k.bindOperands(p)
		if err != nil {
			return nil, err
		}
		ps.binds = append(ps.binds, b)
		ps.regs = append(ps.regs, k.inRegister(p))
	}
	return ps, nil
}

// bindWithPrologue binds the operands of in's prologue and of in, then
// in's results and the prologue's: a kernel that computes reductions
// ahead of its own elements.
func (k *kernelBuilder) bindWithPrologue(env Env, in *hlo.Instruction) (ps *prologue, binds, outs []int, err error) {
	if ps, err = k.bindPrologue(env, in); err != nil {
		return nil, nil, nil, err
	}
	if binds, outs, err = k.bind(in); err != nil {
		return nil, nil, nil, err
	}
	return ps, binds, outs, ps.bindResults(k)
}

// bindResults binds the prologue's results, after in's.
func (ps *prologue) bindResults(k *kernelBuilder) error {
	for _, p := range ps.pro {
		if ps.kept[p] {
			ps.outs = append(ps.outs, -1)
			continue
		}
		o, err := k.bindResults(p)
		if err != nil {
			return err
		}
		ps.outs = append(ps.outs, o...)
	}
	return nil
}

// emit computes each prologue kernel's element idx into its register (a
// scalar's only element: lower's fuseScalars puts a scalar kernel in one
// of more elements that does not read it).
func (ps *prologue) emit(k *kernelBuilder, idx spirv.ID) error {
	for i, p := range ps.pro {
		at := idx
		if p.Shape.Rank() == 0 {
			at = k.cu32(0)
		}
		v := k.compute(fusedOperand{in: p, binds: ps.binds[i]}, at)
		if k.err != nil {
			return k.err
		}
		*ps.regs[i] = v
	}
	return nil
}

// store writes the prologue's results at idx, a scalar's by index 0
// alone. Kernels call it after every read: a result may share memory
// with an input (an in-place update) that the kernel's own computation
// still reads at idx.
func (ps *prologue) store(k *kernelBuilder, idx spirv.ID) {
	for i, p := range ps.pro {
		if ps.outs[i] < 0 {
			continue
		}
		if p.Shape.Rank() > 0 {
			k.store(ps.outs[i], idx, *ps.regs[i])
			continue
		}
		k.scalarOut[ps.outs[i]] = true
		v := *ps.regs[i]
		k.err = errors.Join(k.err, k.f.If(k.boolOp(spirv.OpIEqual, idx, k.cu32(0)), func() error {
			k.store(ps.outs[i], k.cu32(0), v)
			return nil
		}))
	}
}

// inRegister makes the kernel read o from a register set later (before
// any read is emitted) instead of a buffer, and returns the register.
func (k *kernelBuilder) inRegister(o *hlo.Instruction) *val {
	r := new(val)
	k.virtual = append(k.virtual, fusedOperand{in: o, reg: r})
	k.bound[o] = virtualBase + len(k.virtual) - 1
	return r
}

// What a kernel reads an operand through (the ints of binds) is one of
// three things, told apart by range so that every emitter reads any of
// them with load: a storage buffer's binding (below virtualBase); a
// fused operand, computed where it is read (virtualBase plus its index
// in kernelBuilder.virtual); a device loop's register array (regBase
// plus its index in kernelBuilder.regArrays, seqemit.go).
const virtualBase = 1 << 20

// isBuffer reports whether operand binding b is a storage buffer's.
func isBuffer(b int) bool { return b < virtualBase }

// fusedOperand is a fused producer as a kernel sees it: the instruction
// and the bindings (real or virtual) of its own operands.
type fusedOperand struct {
	in    *hlo.Instruction
	binds []int
	reg   *val // a value the kernel computed earlier at its output index
}

// operandBinding returns the binding through which a kernel reads o:
// a storage buffer (one per distinct input of the kernel) or, for a fused
// producer, a virtual binding.
func (k *kernelBuilder) operandBinding(o *hlo.Instruction) (int, error) {
	if b, ok := k.bound[o]; ok {
		return b, nil
	}
	if k.fused[o] {
		binds := make([]int, len(o.Operands))
		for i, p := range o.Operands {
			b, err := k.operandBinding(p)
			if err != nil {
				return 0, err
			}
			binds[i] = b
		}
		k.virtual = append(k.virtual, fusedOperand{in: o, binds: binds})
		b := virtualBase + len(k.virtual) - 1
		k.bound[o] = b
		return b, nil
	}
	// Named after what it holds: a name built from the path to it grew
	// with the fusion's depth, quadratic in a chain's length.
	b, err := k.addBuffer(o.Shape.Elem, o.Name, true, o.Shape.NumElements())
	if err != nil {
		return 0, o.Errorf("%v", err)
	}
	k.bound[o] = b
	k.inputs = append(k.inputs, o)
	k.inputBinds = append(k.inputBinds, b)
	return b, nil
}

// compute emits element idx of a fused producer.
func (k *kernelBuilder) compute(f fusedOperand, idx spirv.ID) val {
	in := f.in
	if f.reg != nil {
		return *f.reg
	}
	if k.spill != nil && in == k.spill.in && k.spill.ready {
		return k.load(k.spill.bind, idx, in.Shape.Elem) // stored by a row reduction (rowemit.go)
	}
	if in.Op == hlo.OpConstant {
		return k.scalarConst(in.Literal)
	}
	// A producer that several of the kernel's ops read at the same
	// element is computed once (XLA's fused emitter caches generated
	// values by instruction and index too): complex tan's sin a and cos a
	// each fed three products, and a c128 tan kernel held 8 Payne-Hanek
	// reductions instead of 2. A value is reused where the block it was
	// computed in dominates (spirv.Function.Usable); only the latest is
	// kept, as in Function.Op.
	key := computedKey{in, idx}
	if c, ok := k.computed[key]; ok && k.f.Usable(c.at) {
		return c.v
	}
	v := k.computeFresh(f, idx)
	// Kept under the block computing it ended in (a producer with a
	// loop of its own ends in the loop's merge block).
	if k.err == nil {
		if k.computed == nil {
			k.computed = map[computedKey]computedVal{}
		}
		k.computed[key] = computedVal{v, spirv.Defined{Block: k.f.Block(), ID: v.id}}
	}
	return v
}

// computedKey names a fused producer's value: its instruction and the
// element's index.
type computedKey struct {
	in  *hlo.Instruction
	idx spirv.ID
}

// computedVal is a fused producer's value and where it was computed.
type computedVal struct {
	v  val
	at spirv.Defined
}

// computeFresh emits element idx of fused producer f.
func (k *kernelBuilder) computeFresh(f fusedOperand, idx spirv.ID) val {
	in := f.in
	form, ok := formOf(OpKind(in.Op))
	if !ok {
		form, _ = formOf(KindElementwise) // which names the op it cannot compute
	}
	vs, err := form.value(k, in, f.binds, idx)
	if err != nil {
		if k.err == nil {
			k.err = err
		}
		return val{k.zero(in.Shape.Elem), in.Shape.Elem}
	}
	return vs[0]
}

// elementKernel generates the kernel of in, computing each output
// element with values: its vector form (vector.go) where vector allows
// and its accesses and size do, else the scalar form.
func elementKernel(in *hlo.Instruction, env Env, name string, values func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error), vector bool) (*Kernel, error) {
	// The vector form runs its lanes' loops one after another, VectorWidth
	// times an element's iterations in one invocation, which must stay
	// within the device's loop bound (a cumulative sum of 8192 elements,
	// 8 x 8192 iterations, lost every eighth element to llvmpipe's); a
	// column fold loops once for all its lanes.
	columns := env.Heavy() && foldsColumns(in, env.Fused)
	lanesFit := columns || env.Iters <= env.Target.LoopBudget()/VectorWidth
	if n := elementCount(in); vector && lanesFit && (vectorShape(n, env.Target) || columns && vectorAligned(n, env.Target)) {
		venv := env
		venv.Local = LocalSize(env.Target, n/VectorWidth, false)
		if h := LocalSize(env.Target, n/VectorWidth, env.Heavy()); h < ElementwiseLocalSize(env.Target) {
			venv.Local = h // few heavy invocations: a workgroup for each core
		}
		venv.lockstep = env.Target.CPU && n/VectorWidth%int64(venv.Local) == 0
		vk, err := outputKernelMode(in, venv, name+"_vec4", values, true)
		if !errors.Is(err, errNotVector) {
			return vk, err
		}
	}
	if p := partsOf(in); p > 1 {
		penv := env
		penv.parts, penv.Local = p, LocalSize(env.Target, elementCount(in)/int64(p), env.Heavy())
		return outputKernelMode(in, penv, name+"_parts", values, false)
	}
	return outputKernelMode(in, env, name, values, false)
}

// outputKernelMode generates the kernel of an instruction that computes
// each element of its results in one invocation: it binds the operands
// (and those of any kernel fused ahead of it), then the results, and for
// each output index computes the prologue's values, then in's (values),
// and stores them all after every read, as in-place updates require.
// A vector kernel holds the bindings accessed only at the own element as
// vec4 arrays (vector.go); errNotVector says it has no vector form.
func outputKernelMode(in *hlo.Instruction, env Env, name string, values func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error), vector bool) (*Kernel, error) {
	k := env.builder(1)
	if vector {
		// The bindings' types depend on which are vec4s, which is known
		// once the kernel is bound.
		kb, ps, binds, err := env.bound(in)
		if err != nil {
			return nil, err
		}
		if k.vecBinds = kb.vectorBinds(in, binds, ps); k.vecBinds == nil {
			return nil, errNotVector
		}
		k.vecMode = true
	}
	k.lanes, k.wg, k.parts, k.lockstep = env.lanes, env.workgroup, env.parts, env.lockstep
	ps, binds, outs, err := k.bindWithPrologue(env, in)
	if err != nil {
		return nil, err
	}
	lanes := 0
	kern, err := k.perElement(name, func(idx spirv.ID) error {
		start := k.f.Len()
		if err := ps.emit(k, idx); err != nil {
			return err
		}
		vs, err := values(k, binds, idx)
		if err != nil {
			return err
		}
		// Too large to repeat per lane; but a fold of all lanes' columns
		// (columnLanes, depthwiseLanes) is the first lane's code alone,
		// which the others read.
		if lanes++; vector && lanes == 1 && k.f.Len()-start > vectorMaxLaneWords && len(k.columns) == 0 {
			return &notVector{-1}
		}
		k.storeAll(outs, idx, vs)
		ps.store(k, idx)
		return nil
	})
	if vector {
		err = k.checkVectorBinds(name, err, vectorElement)
	}
	if err != nil {
		return nil, err
	}
	return kern, nil
}

// ElementwiseLocalSize is the workgroup size of elementwise kernels: a
// multiple of the subgroup size, within the device's limit.
func ElementwiseLocalSize(tg Target) uint32 {
	l := uint32(64)
	if tg.SubgroupSize > l {
		l = tg.SubgroupSize
	}
	if tg.MaxWorkgroupSize != 0 && l > tg.MaxWorkgroupSize {
		l = tg.MaxWorkgroupSize
	}
	return l
}

// LightKernel is the most loop iterations per invocation for which a CPU
// device gets large workgroups: heavier invocations (reductions, tiled
// dots) amortize the per-workgroup cost and balance better in more,
// smaller workgroups (measured: the dense layer and the MLP ran slower
// with large ones).
const LightKernel = 16

// LocalSize is the workgroup size for a dispatch of n invocations, heavy
// when each runs more than LightKernel loop iterations. A GPU takes
// ElementwiseLocalSize. A CPU device (lavapipe) runs each workgroup as one
// task on one of its threads, with a fixed cost per workgroup that small
// workgroups pay many times over: a 16M-element negate took 66-97 ms with
// workgroups of 64 and 44 ms with 1024. So on a CPU light workgroups grow
// as large as the device allows while there are still four per core to
// balance. Heavy ones keep ElementwiseLocalSize, but shrink (to a
// subgroup at least) where that leaves a core idle and a smaller size
// gives more workgroups: the MLP's [256,10] logits, 32 invocations of
// 8x12 tiles, ran on one of two threads in one workgroup of 64
// (bench/ab -rounds 20, before -> after: mlp_train 0.957 and 0.961,
// mlp_forward 0.987-0.991, the DLRM step 0.998). Light kernels of few
// invocations keep one size: each size is a kernel of its own to compile.
func LocalSize(tg Target, n int64, heavy bool) uint32 {
	l := ElementwiseLocalSize(tg)
	if !tg.CPU {
		return l
	}
	limit := uint32(1024)
	if tg.MaxWorkgroupSize != 0 && tg.MaxWorkgroupSize < limit {
		limit = tg.MaxWorkgroupSize
	}
	cores := int64(max(tg.Cores, 1))
	groups := func(l uint32) int64 { return (n + int64(l) - 1) / int64(l) }
	if !heavy {
		for l*2 <= limit && n/(int64(l)*2) >= 4*cores {
			l *= 2
		}
		return l
	}
	s := l
	for s/2 >= max(tg.SubgroupSize, 1) && groups(s) < 2*cores {
		s /= 2
	}
	if groups(s) > groups(l) {
		return s
	}
	return l
}

// elementwiseValue computes element idx of an elementwise instruction
// whose operands are read through binds; an operand of rank 0 in an op of
// higher rank (select's predicate, clamp's bounds) is read at index 0.
func (k *kernelBuilder) elementwiseValue(in *hlo.Instruction, binds []int, idx spirv.ID) (val, error) {
	args := make([]val, len(in.Operands))
	for i, o := range in.Operands {
		at := idx
		if o.Shape.Rank() == 0 && in.Shape.Rank() > 0 {
			at = k.cu32(0)
		}
		args[i] = k.load(binds[i], at, o.Shape.Elem)
	}
	return k.emitScalar(in, args)
}
