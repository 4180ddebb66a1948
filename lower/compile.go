package lower

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

// Options change how a module is compiled.
type Options struct {
	NoFuse  bool // every instruction its own kernel and buffer (to compare against)
	NoReuse bool // every temporary its own memory (to compare against)
	// MemoryBudget, when not 0, is the most device bytes the program's
	// own memory (arena, parameters, constants) may plan for: values are
	// recomputed instead of kept until the plan fits (remat.go).
	MemoryBudget int64
	// Donate lists entry parameter leaves (depth-first) whose memory the
	// program may reuse once they are dead, as jax.jit's donate_argnums;
	// the module's input_output_alias donates its parameters too.
	Donate []int
	// SubgroupReduce makes a CPU device reduce rows as GPUs do: no row
	// kernels (rowfuse.go), each reduction a kernel of a subgroup per
	// output (kgen/subgroup.go), which every device with subgroup
	// shuffles uses by default for a reduction that is its own kernel
	// (lavapipe: a 4096x4096 row sum 20.5 ms one row per lane, 10.3 a
	// subgroup per row).
	SubgroupReduce bool
	// WorkgroupReduce makes long row reductions use a workgroup per
	// output (its lanes' partial results combined through shared memory,
	// kgen/subgroup.go) on CPU devices too, where barriers cost more than they
	// save; GPUs use them by default.
	WorkgroupReduce bool
	// SharedGemm makes tiled dots stage workgroup blocks through shared
	// memory (kgen/gemm.go) on CPU devices too, where the register tiles are
	// faster; GPUs use them by default.
	SharedGemm bool
	// SharedFft makes a real FFT's passes one kernel through shared
	// memory (kgen.RealFftRows, a workgroup per few sequences holding
	// them between passes) wherever it fits: GPUs use it for sequences
	// too long for registers; lavapipe runs it 1.9-2.6x slower than a
	// kernel per pass (docs/BENCHMARKS.md), so CPU devices use it only
	// with this option, which also tests it there.
	SharedFft bool
	// InvocationTiles makes tiled dots on CPU devices compute a tile per
	// invocation instead of a subgroup's (kgen/gemmlanes.go), to compare
	// against.
	InvocationTiles bool
	// RefinedDivSqrt makes f32 division and sqrt take the GPUs' form
	// (mathlib's div and sqrt) on devices whose own are exact too, to
	// test it there.
	RefinedDivSqrt bool
	// HostLoops runs every while loop from the host, reading its
	// condition back each iteration, instead of as a device loop
	// (seqloop.go) where one fits (to compare against).
	HostLoops bool
	// DeviceLoops runs every while loop that fits a device loop as one,
	// whatever its trip count: by default a loop of a known count runs
	// from the host where its kernel would take longer to compile than
	// those iterations take (kgen.LoopWords); a driver that keeps its
	// compiled shaders across processes pays that compile once. Tests
	// use it to generate device loops of few iterations.
	DeviceLoops bool
	// Vec4Access makes tiled GEMMs on CPU devices load their operands'
	// octets of 8 elements, and vector kernels store their results', as
	// two vec4s instead of one u64vec4 (kgen/vector.go, wideLoad and
	// storeWide), to compare against.
	Vec4Access bool
	// StorageLoads makes kernels on CPU devices read their inputs from
	// the storage buffers only, not through texel buffer views of them
	// (kgen/vector.go, texelVar), to compare against.
	StorageLoads bool
	// AddressAbove, when not 0, makes kernels reach every binding of
	// more bytes through its buffer device address, as they reach those
	// past the device's maxStorageBufferRange, to test and measure that
	// path on small arrays.
	AddressAbove int64
	sub          bool // compiling a while or conditional's computation
	loopBody     bool // compiling a while body: results may take their state element's memory
}

// state is what the passes share.
type state struct {
	verified bool // the module was verified by the Compile that started this one
	mod      *hlo.Module
	tg       kgen.Target
	opts     Options
	prog     *Program
	plan     *plan                      // the kernel plan: what the fusion passes decide and emission follows (plan.go)
	order    []*hlo.Instruction         // the order in which kernels and control steps run (schedule)
	live     map[*hlo.Instruction]bool  // what the root depends on (schedule); the rest is dead
	values   map[*hlo.Instruction][]int // buffers of each value's leaves (assign buffers)
	kernel   map[string]int             // kernel index by SPIR-V, to share identical kernels
	copies   map[int]bool               // steps that copy an operand into a result an update writes over (dropInPlaceCopies)
	api      *apiShapes                 // the entry's shapes before a pass changed its types (complex.go, subbyte.go)
	subs     map[subKey]*Program        // called computations compiled before emission takes them (subProgram)
}

type pass struct {
	name     string
	fn       func(*state) error
	rewrites bool // it changes the module (checked with the verifier after it in tests)
}

// passes is the compiler pipeline, in order. Each reads what the passes
// above it produced.
var passes []pass

// The table is assigned in init: while and conditional compile their
// called computations with Compile, which reads it.
func init() {
	passes = []pass{
		{"verify", verifyModule, false},                             // shapes and attributes as XLA defines them (once per module)
		{"check side effects", checkSideEffects, false},             // infeed, outfeed, send, recv and effectful custom-calls refused, read or not, before anything drops them as dead (hlo/effects.go)
		{"inline calls", inlineCalls, true},                         // call, fusion, opt-barrier, domain and the async pairs become what they stand for
		{"expand scans", expandScans, true},                         // XLA's scan becomes a while loop over its dimension, to_apply inlined in the body, as XLA's ScanExpander writes it (xlascan.go)
		{"typed bitcasts", typedBitcasts, true},                     // a bitcast that changes the element type becomes a bitcast-convert of the same bytes, with reshapes (bitcast.go)
		{"one process's collectives", oneProcess, true},             // all-reduce and the others of a group of one pass their operands on, replica-id and partition-id are 0 (collectives.go)
		{"expand special functions", expandSpecial, true},           // sinh, acos and the like become exp, log1p, atan2 and sqrt as CHLO's expansions (expander.go)
		{"expand XLA's decompositions", expandDecompositions, true}, // batch-norm-training, -inference and -grad become reductions and elementwise ops, stochastic-convert elementwise ops, ragged-dot a dot per group, as XLA writes them (decompose.go)
		{"expand linear algebra", expandLinalg, true},               // triangular-solve becomes forward substitution in a while loop (linalg.go)
		{"expand rng-bit-generator", expandRng, true},               // rng-bit-generator becomes ThreeFry's or Philox's rounds of u32 ops over an iota of counters (rng.go)
		{"lower complex", lowerComplex, true},                       // complex numbers become pairs of real arrays, their ops real arithmetic (complex.go)
		{"expand sub-byte bitcasts", expandSubByteBitcasts, true},   // bitcasts from or to s2-u4, f4 and f6 as operations on their codes, while the types are still there (bitcast.go)
		{"widen sub-byte integers", widenSubByte, true},             // s2, s4, u2, u4 computed as 8-bit integers, each result put back in range (subbyte.go)
		{"widen f8", widenF8, true},                                 // f8 types computed in f32, each result rounded to the type's grid (f8.go)
		{"split bitcast widths", splitBitcasts, true},               // bitcast-converts between widths become shifts and truncations of one width (bitcast.go)
		{"split dilated inputs", splitDilatedInputs, true},          // a convolution or reduce-window of a dilated input (lhs_dilate; a pad with interior padding a reduce-window reads) becomes the dense ones of its phases, interleaved (transposedconv.go)
		{"canonical convolutions", canonicalConvs, true},            // 2-D convolutions in other dimension orders become NHWC/HWIO ones between transposes, where the implicit GEMM then takes them (convorder.go)
		{"select windows once", splitSelectAndScatters, true},       // a select-and-scatter (a max pooling's gradient) becomes a reduce-window choosing each window's element and a fused fold of the windows that chose each element (selectscatter.go)
		{"simplify", simplify, true},                                // ops of constants folded, reshapes and broadcasts to the same shape, max with -inf and the like taken out, in the entry and what it calls
		{"batch scalar functions", batchScalars, true},              // independent scalar sines (and other library functions) of one depth become one over a vector of their operands (scalarbatch.go)
		{"hoist loop invariants", hoistInvariants, true},            // a while body's invariant reductions, dots and convolutions computed once before the loop and carried in its state
		{"split wide ops", splitWideOps, true},                      // concatenates of more operands than a kernel can bind become trees
		{"expand topk", expandTopK, true},                           // topk becomes a stable sort of (x, iota) and two slices
		{"tree scans", treeScans, true},                             // a cumulative reduction (jnp.cumsum's reduce-window) whose window would run 2^18 steps becomes scans of blocks of 8 and of their totals (scan.go)
		{"linearize scatter points", linearScatters, true},          // a large scatter of points along leading dimensions (x.at[i, j].add(v)) becomes one of linear indices into those dimensions made one (sortscatter.go)
		{"sort scatter indices", sortScatters, true},                // a large scatter of one index per position applies its updates sorted by index, found by binary search (sortscatter.go)
		{"split long scatters", splitLongScatters, true},            // a scatter of more positions than a device's loop bound allows becomes a while loop over chunks of them (splitscatter.go)
		{"split long dots", splitLongDots, true},                    // a dot contracting more than a device's loop bound allows sums dots over parts of its contraction (splitbound.go)
		{"split long convolutions", splitLongConvs, true},           // a convolution contracting more than a device's loop bound allows sums convolutions over bands of its window (splitbound.go)
		{"split long windows", splitLongWindows, true},              // a reduce-window of tiling windows longer than a device's loop bound allows becomes a reduce (splitbound.go)
		{"split long reductions", splitLongReductions, true},        // reduces over more than 4096 elements become partial reduces of chunks and a reduce of those
		{"check support", checkSupport, false},                      // name what the device cannot run before any work
		{"fuse loops", fuseLoops, false},                            // elementwise and data-movement producers computed inside their consumers
		{"fuse siblings", fuseSiblings, false},                      // a kernel computes, alongside, one of the same shape it reads at its own index or shares an input with
		{"fuse rows", fuseRows, false},                              // an elementwise kernel computes the row reductions it reads along its rows, a row per invocation (CPU devices)
		{"check loop bounds", checkLoopBounds, false},               // no kernel may loop past the device's bound (llvmpipe: 65535 per invocation)
		{"schedule", schedule, false},                               // kernels depth first from the root, each just before its first reader
		{"plan device loops", planDeviceLoops, false},               // while loops of small state run as one-invocation kernels that iterate on the device
		{"plan kernels", planKernels, false},                        // each kernel's form (row, tiled GEMM, reduction, sort, device loop...) settled, in run order; what a kernel computes first for itself alone kept in registers
		{"assign buffers", assignBuffers, false},                    // a buffer per array value; tuples alias their elements
		{"emit kernels", emitKernels, false},                        // each planned kernel by its kind's generator, shared when identical; while and conditional become sub-programs
		{"plan memory", planMemory, false},                          // temporaries placed in one arena by live range, sharing memory when lives do not overlap
		{"drop in-place copies", dropInPlaceCopies, false},          // an update's copy of its operand into its result, where the two share memory, is no step
		{"plan barriers", planBarriers, false},                      // a barrier before each step that touches memory an earlier step wrote (or that it overwrites after a read)
		{"check plan", checkPlan, false},                            // bindings match kernels, temporaries written before read, no two live values in one place
	}
}

// Compile lowers the module's entry computation to a Program for target tg.
func Compile(m *hlo.Module, tg kgen.Target, opts Options) (prog *Program, err error) {
	if opts.MemoryBudget > 0 {
		return compileUnderBudget(m, tg, opts)
	}
	return compile(m, tg, opts, false)
}

// compile runs the pipeline; verified skips verification for the called
// computations of while and conditional, whose module is verified once.
func compile(m *hlo.Module, tg kgen.Target, opts Options, verified bool) (*Program, error) {
	tg.WideAccess = tg.CPU && tg.Int64 && !opts.Vec4Access
	tg.TexelReads = tg.CPU && tg.TexelLoads && !opts.StorageLoads
	tg.IEEEDivSqrt = tg.IEEEDivSqrt && !opts.RefinedDivSqrt
	tg.AddressAbove = 0
	if tg.BufferAddress {
		tg.AddressAbove = tg.MaxStorageRange
		if a := opts.AddressAbove; a > 0 && (a < tg.AddressAbove || tg.AddressAbove == 0) {
			tg.AddressAbove = a
		}
	}
	s := &state{
		verified: verified,
		mod:      m,
		tg:       tg,
		opts:     opts,
		prog:     &Program{Module: m.Name},
		plan:     newPlan(),
		values:   map[*hlo.Instruction][]int{},
		kernel:   map[string]int{},
	}
	for _, p := range passes {
		if err := runPass(p, s); err != nil {
			return nil, err
		}
	}
	return s.prog, nil
}

// runPass runs one pass, turning a panic (a compiler bug) into an error
// that names the pass.
func runPass(p pass, s *state) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("lower: internal error in pass %q: %v", p.name, r)
		}
	}()
	if err := p.fn(s); err != nil {
		return err
	}
	if checkPasses {
		if err := checkAfter(p, s); err != nil {
			return fmt.Errorf("lower: internal error after pass %q: %v", p.name, err)
		}
	}
	return nil
}

// checkPasses makes every pass's result checked before the next runs
// (checkAfter), as Go's SSA backend checks its IR between passes; the
// package's tests set it.
var checkPasses = false

// checkAfter checks what pass p left: a module the verifier accepts
// after each pass that rewrites it, and a consistent kernel plan.
func checkAfter(p pass, s *state) error {
	if p.rewrites {
		if err := hlo.Verify(s.mod); err != nil {
			return err
		}
	}
	return s.plan.check(s)
}

func verifyModule(s *state) error {
	if s.verified {
		return nil
	}
	return hlo.Verify(s.mod)
}

// checkSideEffects refuses a module holding an effect vkjit does not
// perform (hlo.Module.SideEffects), read or not: the passes after it
// drop what no result depends on, and the effect would vanish unsaid.
func checkSideEffects(s *state) error {
	if e := s.mod.SideEffects(); len(e) > 0 {
		return e[0].Errorf("%s", hlo.SideEffectError(e[0]))
	}
	return nil
}

// checkSupport rejects, by name, any op or type the device path cannot
// run yet, before buffers or kernels are made.
func checkSupport(s *state) error {
	for _, in := range s.mod.Entry.Instructions {
		switch in.Op {
		case hlo.OpParameter, hlo.OpWhile, hlo.OpConditional:
		case hlo.OpConstant:
			if in.Literal == nil || in.Literal.Elided {
				return in.Errorf("constant's values were elided from the text ({...}); it cannot be run")
			}
		case hlo.OpTuple, hlo.OpGetTupleElement:
			continue
		case hlo.OpDot:
		case hlo.OpConvolution:
			if in.Shape.Elem == hlo.PRED {
				return in.Errorf("pred convolutions are not supported on the device yet")
			}
		case hlo.OpSelectAndScatter:
			if err := selectAndScatterSupport(in); err != nil {
				return err
			}
		case hlo.OpCustomCall:
			if isFftAxis(in) {
				continue
			}
			// expandLinalg took every target vkjit knows (hlo.KnownCustomCall).
			return in.Errorf("%s", hlo.UnknownCustomCall(in.A.Target))
		case hlo.OpAllReduce, hlo.OpAllGather, hlo.OpReduceScatter, hlo.OpAllToAll, hlo.OpCollectiveBroadcast, hlo.OpCollectivePermute,
			hlo.OpAllReduceStart, hlo.OpAllGatherStart, hlo.OpCollectivePermuteStart:
			// oneProcess took every collective of a group of one.
			return in.Errorf("%s joins processes other than this one; vkjit runs a module as one process (one replica, one partition)", in.Op)
		case hlo.OpReduce, hlo.OpReduceWindow, hlo.OpScatter, hlo.OpSort:
			if !in.Called[0].IsScalarElementwise() {
				return in.Errorf("%s's computation %s is not made of scalar elementwise ops; not supported on the device yet", in.Op, in.Called[0].Name)
			}
			if i, want := kgen.ReducerMismatch(in); i >= 0 {
				return in.Errorf("%s's computation %s takes %s as parameter %d where the operand is %s (XLA allows floats of another width there); not supported on the device yet: convert the operand first", in.Op, in.Called[0].Name, in.Called[0].Params[i].Shape.Elem, i, want)
			}
		default:
			if !in.Op.IsElementwise() && !kgen.RemapOps[in.Op] {
				return in.Errorf("op %s is not supported on the device yet", in.Op)
			}
		}
		for _, leaf := range in.Shape.Leaves() {
			if !leaf.IsArray() {
				return in.Errorf("shape %s is not supported on the device", leaf)
			}
			if _, err := kgen.StorageType(leaf.Elem, s.tg); err != nil {
				return in.Errorf("%v", err)
			}
		}
	}
	return nil
}

func (s *state) newBuffer(b Buffer) (int, error) {
	var err error
	if b.Size, err = kgen.StorageBytes(b.Shape, s.tg); err != nil {
		return 0, err
	}
	s.prog.Buffers = append(s.prog.Buffers, b)
	return len(s.prog.Buffers) - 1, nil
}

// assignBuffers gives every array value its own buffer (liveness-based
// reuse comes with memory planning) and records parameters and outputs.
func assignBuffers(s *state) error {
	entry := s.mod.Entry
	// Parameter leaves are numbered depth-first across the parameters.
	firstLeaf := make([]int, len(entry.Params)+1)
	for i, p := range entry.Params {
		firstLeaf[i+1] = firstLeaf[i] + len(p.Shape.Leaves())
	}
	s.prog.Params = make([]int, firstLeaf[len(entry.Params)])
	s.prog.ParamShapes = make([]hlo.Shape, len(s.prog.Params))
	donated, err := s.donated(firstLeaf)
	if err != nil {
		return err
	}
	for _, in := range entry.Instructions {
		if s.plan.fused[in] || s.plan.registers[in] || !s.live[in] && in.Op != hlo.OpParameter {
			continue // no buffer: its consumers compute it, its kernel keeps it, or nothing reads it
		}
		if s.plan.aliased[in] {
			s.values[in] = s.values[in.Operands[0]]
			continue
		}
		switch in.Op {
		case hlo.OpParameter:
			var leaves []int
			for j, leaf := range in.Shape.Leaves() {
				name := in.Name
				if in.Shape.IsTuple() {
					name = fmt.Sprintf("%s.%d", in.Name, j)
				}
				li := firstLeaf[in.ParamNum] + j
				i, err := s.newBuffer(Buffer{Name: name, Kind: BufParam, Param: li, Shape: leaf, Donated: donated[li]})
				if err != nil {
					return in.Errorf("%v", err)
				}
				leaves = append(leaves, i)
				s.prog.Params[li] = i
				s.prog.ParamShapes[li] = leaf
			}
			s.values[in] = leaves
		case hlo.OpConstant:
			data := ToStorage(in.Shape.Elem, in.Literal.Data, s.tg)
			i, err := s.newBuffer(Buffer{Name: in.Name, Kind: BufConstant, Shape: in.Shape, Data: data})
			if err != nil {
				return in.Errorf("%v", err)
			}
			s.values[in] = []int{i}
		case hlo.OpTuple:
			var leaves []int
			for _, o := range in.Operands {
				leaves = append(leaves, s.values[o]...)
			}
			s.values[in] = leaves
		case hlo.OpGetTupleElement:
			off := in.Operands[0].Shape.LeafOffset(int(in.A.Index))
			s.values[in] = s.values[in.Operands[0]][off : off+len(in.Shape.Leaves())]
		case hlo.OpWhile:
			if kp := s.plan.kernels[in]; kp != nil && kp.Loop != nil {
				if err := s.loopBuffers(in, kp.Loop); err != nil {
					return err
				}
				continue
			}
			fallthrough
		default:
			// One buffer per result leaf (a variadic reduce has several).
			kind := BufTemp
			if in.Op == hlo.OpWhile || in.Op == hlo.OpConditional {
				kind = BufBound
			}
			var leaves []int
			for j, leaf := range in.Shape.Leaves() {
				name := in.Name
				if in.Shape.IsTuple() {
					name = fmt.Sprintf("%s.%d", in.Name, j)
				}
				i, err := s.newBuffer(Buffer{Name: name, Kind: kind, Shape: leaf})
				if err != nil {
					return in.Errorf("%v", err)
				}
				leaves = append(leaves, i)
			}
			s.values[in] = leaves
		}
	}
	s.prog.Outputs = s.values[entry.Root]
	s.prog.ResultShape = entry.Root.Shape
	if s.api != nil { // the API's shapes: the buffers hold their memory form, the same bytes
		s.prog.ResultShape = s.api.root
		copy(s.prog.ParamShapes, s.api.params)
	}
	s.prog.OutputShapes = s.prog.ResultShape.Leaves()
	return nil
}

// grid spreads n invocations over workgroups of size local, using a second
// grid dimension when the first would exceed the device's limit.
func grid(n int64, local uint32, tg kgen.Target) ([3]uint32, error) {
	groups := (n + int64(local) - 1) / int64(local)
	maxX := int64(tg.MaxWorkgroupCount[0])
	if groups <= maxX {
		return [3]uint32{uint32(groups), 1, 1}, nil
	}
	gy := (groups + maxX - 1) / maxX
	if gy > int64(tg.MaxWorkgroupCount[1]) {
		return [3]uint32{}, fmt.Errorf("%d elements exceed the device's dispatch grid", n)
	}
	return [3]uint32{uint32(maxX), uint32(gy), 1}, nil
}

// kernelEnv is what the generation of every kernel of the plan shares.
func (s *state) kernelEnv() kgen.Env {
	return kgen.Env{Target: s.tg, Fused: s.plan.fused,
		SubgroupReduce: s.tg.SubgroupShuffle,
		WorkgroupLanes: kgen.WorkgroupLanes(s.tg, s.opts.WorkgroupReduce),
		Check:          checkPasses}
}

// emitKernels generates the plan's kernels and control steps in run
// order, each from its kernel plan by its kind's generator.
func emitKernels(s *state) error {
	env := s.kernelEnv()
	for _, kp := range s.plan.order {
		env.Plan, env.Local = kp, kgen.ElementwiseLocalSize(s.tg)
		var err error
		switch kp.Kind {
		case kgen.KindDeviceLoop:
			err = s.deviceLoop(kp.Root, kp.Loop, env)
		case kgen.KindHost:
			err = s.controlStep(kp.Root)
		default:
			err = s.emitKernel(kp, env)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// emitKernel generates a planned kernel and the steps that run it.
func (s *state) emitKernel(kp *kgen.Plan, env kgen.Env) error {
	in := kp.Root
	n := in.Shape.Leaves()[0].NumElements()
	if n > 1<<32-1 {
		return in.Errorf("%d elements exceed the 32-bit index of elementwise kernels", n)
	}
	env.Iters = s.kernelIters(in)
	env.Local = kgen.LocalSize(s.tg, n, env.Heavy())
	var k *kgen.Kernel
	var err error
	invocations := n
	switch kp.Kind {
	case kgen.KindSort:
		return s.emitSort(in, env)
	case kgen.KindScatter:
		if atomicScatter(in) {
			return s.emitInPlace(in, env, 2, kgen.AtomicScatterKernel)
		}
		if kgen.RunScatter(in) && len(kp.Prologue) == 0 {
			return s.emitInPlace(in, env, 2, kgen.RunScatterKernel)
		}
		k, err = kgen.Generate(kp.Kind, in, env)
	case kgen.KindRemap:
		if updatesInPlace(in) && atUpdate(in, kp.Prologue) {
			return s.emitInPlace(in, env, 1, kgen.UpdateSliceKernel)
		}
		k, err = kgen.Generate(kp.Kind, in, env)
	case kgen.KindFft:
		return s.emitFft(in, env)
	case kgen.KindGemm:
		env.Local = kgen.LocalSize(s.tg, kp.Gemm.Invocations, true)
		if kp.Gemm.Shared {
			env.Local = kgen.SharedThreads
		}
		if kp.Gemm.Lanes > 0 {
			env.Local = uint32(kp.Gemm.Lanes)
		}
		if k, err = kgen.GemmKernel(in, kp.Gemm, env); err != nil {
			return err
		}
		return s.dispatch(in, k, kp.Gemm.Invocations, nil, s.values[in], nil)
	case kgen.KindRow: // an invocation per row
		var cols int64
		invocations, cols = rowSplit(in, kp.RowDims)
		k, err = kgen.RowKernel(in, env, invocations, cols)
	default:
		k, err = kgen.Generate(kp.Kind, in, env)
	}
	if err != nil {
		return err
	}
	outs := s.values[in]
	for _, p := range kp.Prologue {
		outs = append(outs, s.values[p]...)
	}
	return s.dispatch(in, k, invocations, nil, outs, nil)
}

// dispatch appends a step running kernel k (shared with an identical one
// already generated) over n invocations: its inputs' buffers, then the
// extra buffers it reads, then outs (the buffers it writes); push
// constants n and then push.
func (s *state) dispatch(in *hlo.Instruction, k *kgen.Kernel, n int64, reads, outs []int, push []uint32) error {
	key := string(wordsKey(k.Words))
	ki, ok := s.kernel[key]
	if !ok {
		ki = len(s.prog.Kernels)
		s.prog.Kernels = append(s.prog.Kernels, k)
		s.kernel[key] = ki
	}
	if k.Vector > 1 {
		n /= int64(k.Vector) // vectorizable checked that it divides
	}
	g, err := grid(n*int64(k.Lanes), k.LocalSize[0], s.tg)
	if err != nil {
		return in.Errorf("%v", err)
	}
	var bufs, inPlace []int
	for i, o := range k.Inputs {
		if len(s.values[o]) == 0 {
			return in.Errorf("its kernel reads %s, which has no buffer", o.Name)
		}
		bufs = append(bufs, s.values[o][0])
		if k.InPlace[i] {
			inPlace = append(inPlace, s.values[o][0])
		}
	}
	bufs = append(append(bufs, reads...), outs...)
	var fused []string
	for _, f := range k.Fused {
		fused = append(fused, f.Name)
	}
	s.prog.Steps = append(s.prog.Steps, Step{
		InPlace: inPlace,
		Fused:   fused,
		Kernel:  ki,
		Buffers: bufs,
		Writes:  len(outs),
		Push:    append([]uint32{uint32(n)}, push...),
		Groups:  g,
		Inst:    in.Name,
	})
	return nil
}

// emitInPlace plans an update in place (kgen/updateslice.go): in's
// first operand copied into its result, then an invocation per element
// of its update operand upd by the kernel gen makes: an atomic scatter
// (kgen.AtomicScatterKernel), a scatter over sorted indices
// (kgen.RunScatterKernel), a dynamic-update-slice
// (kgen.UpdateSliceKernel).
func (s *state) emitInPlace(in *hlo.Instruction, env kgen.Env, upd int, gen func(*hlo.Instruction, kgen.Env) (*kgen.Kernel, error)) error {
	// With no update the copy is the result's one write: it stays.
	updates := in.Operands[upd].Shape.NumElements()
	if err := s.emitOperandCopy(in, env, updates > 0); err != nil {
		return err
	}
	if updates == 0 {
		return nil
	}
	env.Local = kgen.LocalSize(s.tg, updates, false)
	k, err := gen(in, env)
	if err != nil {
		return err
	}
	outs := s.values[in]
	for _, p := range env.Plan.Prologue { // (fuseUpdates': the update's producer)
		outs = append(outs, s.values[p]...)
	}
	return s.dispatch(in, k, updates, nil, outs, nil)
}

// updatesInPlace reports whether dynamic-update-slice in is computed as
// an update in place (kgen/updateslice.go): its update at most half its
// result, so that a copy and the update cost no more than the remap
// kernel where the copy stays, and much less where it goes.
func updatesInPlace(in *hlo.Instruction) bool {
	return in.Op == hlo.OpDynamicUpdateSlice && 2*in.Operands[1].Shape.NumElements() <= in.Shape.NumElements()
}

// atUpdate reports whether each of an update's prologue kernels (pro)
// is computed at the update's elements: a scalar, or as many elements as
// the update (fuseUpdates', fuseScalars').
func atUpdate(in *hlo.Instruction, pro []*hlo.Instruction) bool {
	for _, p := range pro {
		if n := p.Shape.NumElements(); p.Shape.Rank() > 0 && n != in.Operands[1].Shape.NumElements() {
			return false
		}
	}
	return true
}

// emitOperandCopy plans the first step of an update in place: in's
// first operand copied into its result, a step dropInPlaceCopies takes
// out (where droppable) where memory planning gives the two the same
// memory.
func (s *state) emitOperandCopy(in *hlo.Instruction, env kgen.Env, droppable bool) error {
	k, err := kgen.CopyOperandKernel(in, env)
	if err != nil {
		return err
	}
	if droppable && len(k.Fused) == 0 { // a copy of a buffer, not a computed operand
		if s.copies == nil {
			s.copies = map[int]bool{}
		}
		s.copies[len(s.prog.Steps)] = true
	}
	return s.dispatch(in, k, in.Shape.NumElements(), nil, s.values[in], nil)
}

// emitSort plans a sort (kgen/sort.go): slices of at most SortChunk
// by one kernel, an invocation each; longer ones by blocks sorted in
// registers, then a merge pass per doubling of the sorted runs (per
// quadrupling where the comparator has keys, each group's first
// sortKeep places merged alone), the operands' values moved along in
// two scratch copies of every operand.
func (s *state) emitSort(in *hlo.Instruction, env kgen.Env) error {
	length := in.Operands[0].Shape.Dims[in.A.Dimensions[0]]
	count := in.Operands[0].Shape.NumElements()
	slices := count / max(length, 1)
	newScratch := func(j int) ([]int, error) {
		var bs []int
		for i, o := range in.Operands {
			b, err := s.newBuffer(Buffer{Name: fmt.Sprintf("%s/scratch%d.%d", in.Name, j, i), Kind: BufTemp, Shape: hlo.ArrayShape(o.Shape.Elem, count)})
			if err != nil {
				return nil, in.Errorf("%v", err)
			}
			bs = append(bs, b)
		}
		return bs, nil
	}
	if length <= kgen.SortChunk {
		k, err := kgen.SortSliceKernel(in, env)
		if err != nil {
			return err
		}
		run, err := newScratch(0)
		if err != nil {
			return err
		}
		// In the kernel's binding order: the results are buffer passes % 2.
		var bufs [2][]int
		last := kgen.SortSlicePasses(length) % 2
		bufs[last], bufs[1-last] = s.values[in], run
		return s.dispatch(in, k, slices, nil, append(append([]int{}, bufs[0]...), bufs[1]...), nil)
	}
	var scratch [2][]int
	for j := range scratch {
		var err error
		if scratch[j], err = newScratch(j); err != nil {
			return err
		}
	}
	block := kgen.SortBlockOf(in, s.tg)
	k, err := kgen.SortBlockKernel(in, env, block)
	if err != nil {
		return err
	}
	if err := s.dispatch(in, k, slices*kgen.SortChunks(length, block), nil, scratch[0], nil); err != nil {
		return err
	}
	// Four-way merges where the comparator has keys, of each slice's
	// first keep places where nothing reads past them; else two-way.
	ways, keep := int64(2), length
	mergeKernel := kgen.SortMergeKernel
	if kgen.SortKeyed(in) {
		ways, keep = 4, s.sortKeep(in)
		mergeKernel = func(in *hlo.Instruction, env kgen.Env, pass kgen.SortPass) (*kgen.Kernel, error) {
			return kgen.SortMerge4Kernel(in, env, pass, keep)
		}
	}
	var merge [2]*kgen.Kernel // the middle passes', the last's
	for p := range merge {
		if merge[p], err = mergeKernel(in, env, kgen.SortPass(p+1)); err != nil {
			return err
		}
	}
	cur := 1
	for w := block; w < length; w *= ways {
		k, reads, outs := merge[0], scratch[1-cur], scratch[cur]
		if ways*w >= length {
			k, outs = merge[1], s.values[in]
		}
		chunk := min(kgen.SortMergeChunk(s.tg), ways*w)
		var n int64
		var push []uint32
		if ways == 4 {
			n, push = kgen.SortMerge4Invocations(slices, length, keep, w, chunk), []uint32{uint32(w), uint32(chunk)}
		} else {
			levels := uint32(0)
			for c := chunk; c < 2*w; c *= 2 {
				levels++ // of the tree of a pair's chunk boundaries
			}
			n, push = slices*kgen.SortChunks(length, chunk), []uint32{uint32(w), levels, uint32(chunk)}
		}
		if err := s.dispatch(in, k, n, reads, outs, push); err != nil {
			return err
		}
		cur = 1 - cur
	}
	return nil
}

// sortKeep is how many of each slice's first places of sort in are
// read: the most a slice of its results along the sorted dimension
// from 0 (stride 1) takes where every use of them is such a slice (a
// top-k's first k: sortedFirst), else the slice's length.
func (s *state) sortKeep(in *hlo.Instruction) int64 {
	d := in.A.Dimensions[0]
	length := in.Operands[0].Shape.Dims[d]
	keep := int64(0)
	// reads reports that every use of v is such a slice, or for the
	// sort's tuple a get-tuple-element of which that holds.
	var reads func(v *hlo.Instruction) bool
	reads = func(v *hlo.Instruction) bool {
		if v == s.mod.Entry.Root {
			return false
		}
		for _, u := range s.mod.Entry.Instructions {
			if !s.live[u] || !slices.Contains(u.Operands, v) {
				continue
			}
			switch {
			case u.Op == hlo.OpGetTupleElement && v.Shape.IsTuple():
				if !reads(u) {
					return false
				}
			case u.Op == hlo.OpSlice && u.A.Slice[d].Start == 0 && u.A.Slice[d].Stride == 1:
				keep = max(keep, u.A.Slice[d].Limit)
			default:
				return false
			}
		}
		return true
	}
	if !reads(in) || keep == 0 {
		return length
	}
	return min(keep, length)
}

// wordsKey is a kernel's code as a key for sharing it, its debug names
// (OpName, OpMemberName) left out: kernels that differ only in the
// names of the values they bind (the same ops on other instructions:
// an optimizer's update of each parameter, the gathers of each
// embedding table) are one kernel, one pipeline to create and one
// first-dispatch compile. The corpus's DLRM training step: 146 -> 101
// kernels.
func wordsKey(w []uint32) []byte {
	b := make([]byte, 0, 4*len(w))
	put := func(ws []uint32) {
		for _, x := range ws {
			b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
		}
	}
	const header = 5
	put(w[:min(header, len(w))])
	for i := header; i < len(w); {
		n := int(w[i] >> 16)
		if n == 0 || i+n > len(w) { // not an instruction: the rest as it is
			put(w[i:])
			break
		}
		if op := spirv.Op(w[i] & 0xffff); op != spirv.OpName && op != spirv.OpMemberName {
			put(w[i : i+n])
		}
		i += n
	}
	return b
}

// sub compiles a called computation as a program of its own; body says
// it is a while loop's body, whose state the runtime lets it update in
// place (donated, like a training step's weights).
func (s *state) sub(c *hlo.Computation, body bool) (int, error) {
	p, err := s.subProgram(subKey{c, body})
	if err != nil {
		return 0, err
	}
	delete(s.subs, subKey{c, body}) // each step its own program
	s.prog.Subs = append(s.prog.Subs, p)
	return len(s.prog.Subs) - 1, nil
}

// subKey names a called computation's sub-program: a loop body's
// (whose state is donated) or another's.
type subKey struct {
	c    *hlo.Computation
	body bool
}

// subProgram compiles a called computation as a sub-program, once: a
// pass that weighs a loop's host form (hostLoopWords) leaves it for
// emission.
func (s *state) subProgram(k subKey) (*Program, error) {
	if p, ok := s.subs[k]; ok {
		return p, nil
	}
	m := *s.mod
	m.Entry = k.c
	opts := s.opts
	opts.Donate, opts.sub, opts.MemoryBudget = nil, true, 0 // the loop state is the caller's
	opts.loopBody = k.body
	p, err := compile(&m, s.tg, opts, true)
	if err != nil {
		return nil, err
	}
	if s.subs == nil {
		s.subs = map[subKey]*Program{}
	}
	s.subs[k] = p
	return p, nil
}

// controlStep plans a while loop or conditional: the runtime runs the
// called computations as sub-programs and reads the predicate (or branch
// index) back to the host, one round trip per iteration or branch.
func (s *state) controlStep(in *hlo.Instruction) error {
	st := Step{Out: s.values[in], Inst: in.Name}
	switch in.Op {
	case hlo.OpWhile:
		cond, body := in.WhileComputations()
		st.Kind = StepWhile
		var err error
		if st.Cond, err = s.sub(cond, false); err != nil {
			return err
		}
		if st.Body, err = s.sub(body, true); err != nil {
			return err
		}
		st.In = [][]int{s.values[in.Operands[0]]}
		if c, ok := hlo.CountedLoop(cond, body); ok && in.Shape.IsTuple() && c.Index < len(in.Shape.Tuple) {
			st.Counter = &Counter{Leaf: in.Shape.LeafOffset(c.Index), Counter: c}
		}
	case hlo.OpConditional:
		st.Kind = StepConditional
		st.Pred = s.values[in.Operands[0]][0]
		branches, args := in.Branches()
		for i, b := range branches {
			bi, err := s.sub(b, false)
			if err != nil {
				return err
			}
			st.Branches = append(st.Branches, bi)
			st.In = append(st.In, s.values[args[i]])
		}
	}
	s.prog.Steps = append(s.prog.Steps, st)
	return nil
}

// whileIndices returns which of a while loop's called computations are
// its condition and its body.
func whileIndices(in *hlo.Instruction) (cond, body int) {
	if c, _ := in.WhileComputations(); c != in.Called[0] {
		return 1, 0
	}
	return 0, 1
}

// donated returns the entry parameter leaves whose memory the program
// may reuse: Options.Donate and the parameters input_output_alias and
// buffer_donor name;
// every leaf of a while body's state, which a result may take in place
// (planMemory keeps those only).
func (s *state) donated(firstLeaf []int) (map[int]bool, error) {
	out := map[int]bool{}
	n := firstLeaf[len(firstLeaf)-1]
	if s.opts.loopBody {
		for l := range n {
			out[l] = true
		}
		return out, nil
	}
	if s.opts.sub {
		return out, nil
	}
	for _, d := range s.opts.Donate {
		if d < 0 || d >= n {
			return nil, fmt.Errorf("lower: donated parameter leaf %d does not exist (the entry has %d)", d, n)
		}
		out[d] = true
	}
	aliases, err := s.mod.InputOutputAlias()
	if err != nil {
		return nil, err
	}
	donors, err := s.mod.BufferDonors()
	if err != nil {
		return nil, err
	}
	for _, a := range append(aliases, donors...) {
		p := s.mod.Entry.Params[a.Param]
		first, count := firstLeaf[a.Param], len(p.Shape.Leaves())
		if len(a.ParamIndex) > 0 {
			// The leaf at the index path within a tuple parameter.
			sh, off := p.Shape, 0
			for _, i := range a.ParamIndex {
				if !sh.IsTuple() || i < 0 || int(i) >= len(sh.Tuple) {
					return nil, p.Errorf("input_output_alias or buffer_donor names index %v, which the parameter's shape %s lacks", a.ParamIndex, p.Shape)
				}
				off += sh.LeafOffset(int(i))
				sh = sh.Tuple[i]
			}
			first, count = first+off, len(sh.Leaves())
		}
		for l := first; l < first+count; l++ {
			out[l] = true
		}
	}
	return out, nil
}
