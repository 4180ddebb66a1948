package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Subgroup reductions: a reduce over its operand's innermost dimension
// (a row: softmax's max and sum, layer norm's mean) gets a subgroup of
// invocations per output element instead of one invocation. Lane l folds
// elements l, l+S, l+2S, ... (S the subgroup size), so that the lanes
// read consecutive addresses together, and the lanes' partial results
// are combined by a butterfly of S/2, S/4, ..., 1 exclusive-or shuffles,
// each step applying the reduce's own computation (so max and min keep
// XLA's NaN rules); every lane ends with the result, and lane 0 stores
// it. Lane 0 alone folds the init value in, once, as the sequential fold
// does. No barrier and no shared memory: on lavapipe a barrier costs more
// than a row's work (the kernel issue measured 13 ms for a row softmax
// with workgroups of 8, 49 ms with 256).

// minSubgroupReduce is the shortest reduction, in elements per lane,
// worth a subgroup per output.
//
// CPU devices use them too: lavapipe's subgroups are its SIMD lanes,
// and a subgroup reading a row's consecutive elements together ran a
// 4096x4096 row sum in 10.3 ms where a row per lane, gathering from 16
// rows, took 20.5 (4096x1024: 2.8 against 5.2); 3.9 with quads a lane
// (quadLanes).
const minSubgroupReduce = 4

// lanesReducible reports whether reduce kernel in, computing fused
// inline, may run with lanes invocations (a subgroup, or a workgroup)
// per output element: every
// reduce the kernel computes (in and its prologue) reduces its operand's
// innermost dimension over at least minSubgroupReduce elements per lane,
// and no other loop (dot, convolution, window, another reduce) is fused
// into it.
func lanesReducible(in *hlo.Instruction, env Env, fused []*hlo.Instruction, lanes uint32) bool {
	reduces := map[*hlo.Instruction]bool{in: true}
	for _, p := range env.plan(in).Prologue {
		reduces[p] = p.Op == hlo.OpReduce
	}
	for _, f := range fused {
		switch f.Op {
		case hlo.OpReduce:
			if !reduces[f] {
				return false
			}
		case hlo.OpDot, hlo.OpConvolution, hlo.OpReduceWindow:
			return false
		}
	}
	for r, isReduce := range reduces {
		if isReduce && !rowLanes(r, env.Target, lanes) {
			return false
		}
	}
	return true
}

// Workgroup reductions: a reduction long enough for more lanes than a
// subgroup has takes a workgroup of workgroupLanes invocations per output
// element. The lanes fold strided elements as a subgroup's do; then each
// stores its partial result in shared memory and a tree of barriers
// halves them (lane l combines l and l + h for h = W/2, ..., 1), the
// reduce's own computation applied at each step, and every lane reads
// the result. The order is fixed by the code, so a fused and an unfused
// program still agree bit for bit. GPUs use it for rows of at least
// minSubgroupReduce elements per lane (no GPU was at hand to measure a
// better threshold); CPU devices only with Options.WorkgroupReduce.

// WorkgroupLanes is the lanes of a workgroup reduction on tg: four
// subgroups, within the device's workgroup size, or 0 for none. CPU
// devices have them only when asked (onCPU: Options.WorkgroupReduce).
func WorkgroupLanes(tg Target, onCPU bool) uint32 {
	if tg.CPU && !onCPU || !tg.SubgroupShuffle {
		return 0
	}
	w := 4 * tg.SubgroupSize
	if tg.MaxWorkgroupSize != 0 {
		for w > tg.MaxWorkgroupSize {
			w /= 2
		}
	}
	if w <= tg.SubgroupSize {
		return 0
	}
	return w
}

// localIndex is the invocation's index in its workgroup.
func (k *kernelBuilder) localIndex() spirv.ID {
	u32 := k.u32()
	v := k.b.Variable(k.b.TypePointer(spirv.StorageInput, u32), spirv.StorageInput)
	k.b.Decorate(v, spirv.DecorationBuiltIn, uint32(spirv.BuiltInLocalInvocationIndex))
	k.iface = append(k.iface, v)
	return k.f.Load(u32, v)
}

// barrier waits for the workgroup and makes its shared memory writes
// visible.
func (k *kernelBuilder) barrier() {
	k.f.Do(spirv.OpControlBarrier, k.cu32(spirv.ScopeWorkgroup), k.cu32(spirv.ScopeWorkgroup),
		k.cu32(spirv.SemanticsAcquireRelease|spirv.SemanticsWorkgroupMemory))
}

// workgroupCombine combines the workgroup's lanes' partial results res by
// a tree in shared memory; every lane gets the result.
func (k *kernelBuilder) workgroupCombine(c *hlo.Computation, res []val) ([]val, error) {
	w := k.lanes
	u32 := k.u32()
	shared := make([]spirv.ID, len(res))
	ptrs := make([]spirv.ID, len(res))
	// pred travels as a u32 (a bool has no size for shared memory).
	store := func(i int, at spirv.ID, v val) {
		id := v.id
		if v.t == hlo.PRED {
			id = k.selU32(id, k.cu32(1), k.cu32(0))
		}
		p := k.f.AccessChain(ptrs[i], shared[i], at)
		k.f.Store(p, id)
	}
	load := func(i int, at spirv.ID) val {
		t := res[i].t
		st := k.scalarType(t)
		if t == hlo.PRED {
			st = u32
		}
		p := k.f.AccessChain(ptrs[i], shared[i], at)
		id := k.f.Load(st, p)
		if t == hlo.PRED {
			id = k.boolOp(spirv.OpINotEqual, id, k.cu32(0))
		}
		return val{id, t}
	}
	for i, v := range res {
		st := k.scalarType(v.t)
		if v.t == hlo.PRED {
			st = u32
		}
		arr := k.b.TypeArray(st, k.cu32(w), 0)
		shared[i] = k.b.Variable(k.b.TypePointer(spirv.StorageWorkgroup, arr), spirv.StorageWorkgroup)
		ptrs[i] = k.b.TypePointer(spirv.StorageWorkgroup, st)
		store(i, k.lane, v)
	}
	k.barrier()
	for h := w / 2; h >= 1; h /= 2 {
		err := k.f.If(k.boolOp(spirv.OpULessThan, k.lane, k.cu32(h)), func() error {
			other := k.f.IAdd(u32, k.lane, k.cu32(h))
			args := make([]val, 0, 2*len(res))
			for i := range res {
				args = append(args, load(i, k.lane))
			}
			for i := range res {
				args = append(args, load(i, other))
			}
			r, err := k.emitReducer(c, args)
			if err != nil {
				return err
			}
			for i, v := range r {
				store(i, k.lane, v)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		k.barrier()
	}
	out := make([]val, len(res))
	for i := range res {
		out[i] = load(i, k.cu32(0))
	}
	return out, nil
}

// subgroupLane is laneID as loaded at the function's start (which
// dominates every use) by a kernel that sets shuffleDot.
func (k *kernelBuilder) subgroupLane() spirv.ID { return k.sgLane }

// laneID is the invocation's index in its subgroup.
func (k *kernelBuilder) laneID() spirv.ID {
	k.b.Capability(spirv.CapabilityGroupNonUniform)
	u32 := k.u32()
	v := k.b.Variable(k.b.TypePointer(spirv.StorageInput, u32), spirv.StorageInput)
	k.b.Decorate(v, spirv.DecorationBuiltIn, uint32(spirv.BuiltInSubgroupLocalInvocationID))
	k.iface = append(k.iface, v)
	return k.f.Load(u32, v)
}

// subgroupFold is fold for a subgroup per output: lane l folds the runs
// of q consecutive elements starting at q l, q (l+S), ... of count
// (run(e) loads the values of the q elements from e; count >= S q, a
// multiple of q), lane 0 after the inits, and the butterfly combines the
// lanes. q is 1, or 4 where quadLanes says.
func (k *kernelBuilder) subgroupFold(c *hlo.Computation, inits []val, count int64, q int64, run func(e spirv.ID) [][]val) ([]val, error) {
	u32 := k.u32()
	s := int64(k.lanes)
	lane := k.lane
	at := func(ri spirv.ID) spirv.ID { // run ri's first element
		if q == 1 {
			return ri
		}
		return k.f.IMul(u32, ri, k.cu32(uint32(q)))
	}
	first := run(at(lane))
	withInit, err := k.emitReducer(c, append(append([]val{}, inits...), first[0]...))
	if err != nil {
		return nil, err
	}
	lane0 := k.boolOp(spirv.OpIEqual, lane, k.cu32(0))
	start := make([]val, len(first[0]))
	for i := range start {
		start[i] = k.sel(lane0, withInit[i], first[0][i])
	}
	for _, xs := range first[1:] {
		if start, err = k.emitReducer(c, append(start, xs...)); err != nil {
			return nil, err
		}
	}
	runs := count / q
	steps := (runs+s-1)/s - 1
	vars, acc := k.accumulators(start)
	res, err := k.foldRuns(c, vars, acc, k.cu32(uint32(steps)), func(r spirv.ID) (spirv.ID, [][]val) {
		ri := k.f.IAdd(u32, k.f.IMul(u32, k.f.IAdd(u32, r, k.cu32(1)), k.cu32(uint32(s))), lane)
		if runs%s == 0 {
			return 0, run(at(ri))
		}
		// The last step's high lanes have no run: they read the last
		// one (in bounds) and keep their accumulators.
		apply := k.boolOp(spirv.OpULessThan, ri, k.cu32(uint32(runs)))
		return apply, run(at(k.f.Ext(u32, spirv.GLSLUMin, ri, k.cu32(uint32(runs-1)))))
	})
	if err != nil {
		return nil, err
	}
	if k.wg {
		return k.workgroupCombine(c, res)
	}
	return k.butterfly(c, res)
}

// butterfly combines the subgroup's lanes' accumulators res: xor
// shuffles of S/2, S/4, ..., 1 lanes, each step applying c (own values
// first), which leaves every lane the result.
func (k *kernelBuilder) butterfly(c *hlo.Computation, res []val) ([]val, error) {
	k.b.Capability(spirv.CapabilityGroupNonUniformShuffle)
	scope := k.cu32(spirv.ScopeSubgroup)
	for off := int64(k.lanes) / 2; off >= 1; off /= 2 {
		others := make([]val, len(res))
		for i, v := range res {
			others[i] = val{k.shuffleXor(v, scope, k.cu32(uint32(off))), v.t}
		}
		var err error
		if res, err = k.emitReducer(c, append(res, others...)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// shuffleXor reads v from the lane whose index differs by mask. 64-bit
// values travel as two 32-bit words: group operations on 64-bit types
// need shaderSubgroupExtendedTypes, which not every device has.
func (k *kernelBuilder) shuffleXor(v val, scope, mask spirv.ID) spirv.ID {
	t := k.scalarType(v.t)
	if regBits(v.t) != 64 {
		return k.f.GroupNonUniformShuffleXor(t, scope, v.id, mask)
	}
	w2 := k.b.TypeVector(k.u32(), 2)
	words := k.f.Bitcast(w2, v.id)
	got := k.f.GroupNonUniformShuffleXor(w2, scope, words, mask)
	return k.f.Bitcast(t, got)
}

// laneOrder is the lanes whose order reduce in folds in (0: one element
// after another), and the elements a lane folds together: those its own
// kernel would give it, a workgroup's or a subgroup's (ReduceKernel), by
// the per-reduction half of lanesReducible's test, and a subgroup's quads
// where the count allows (quadLanes). A reduction computed elsewhere (a
// row kernel's prologue, a kernel it is fused into, one that fuses a dot)
// folds in the same order, so that fused and unfused programs agree bit
// for bit.
func (k *kernelBuilder) laneOrder(in *hlo.Instruction) (lanes uint32, q int) {
	return laneOrderOf(in, k.tg, k.orderLanes)
}

// laneOrderOf is laneOrder for a kernel whose orderLanes are order.
func laneOrderOf(in *hlo.Instruction, tg Target, order [2]uint32) (lanes uint32, q int) {
	for i, s := range order {
		if rowLanes(in, tg, s) {
			if _, count := reducedRow(in); i == 1 && count%4 == 0 {
				return s, 4
			}
			return s, 1
		}
	}
	return 0, 1
}

// InlineFoldCopies is how many copies of the code that computes its
// operands' elements reduce r carries where a kernel other than its own
// computes it (fused into a consumer, or a prologue), in env: folding
// in its own kernel's lane order (laneOrder) unrolls a step of every
// lane's elements (laneFold), each element's producers emitted for
// each. An integer power fused into a sum of 256 inlined in a kernel of
// 7 elements made 64,104 words (194 loops) that lavapipe took 5 s to
// compile (10 under the validation layer). 1 where r folds an element a
// step.
func InlineFoldCopies(r *hlo.Instruction, env Env) int {
	if r.Op != hlo.OpReduce || !env.Target.CPU {
		return 1
	}
	order := [2]uint32{env.WorkgroupLanes}
	if env.SubgroupReduce {
		order[1] = env.Target.SubgroupSize
	}
	lanes, q := laneOrderOf(r, env.Target, order)
	return max(1, int(lanes)*q)
}

// RowFoldCopies is InlineFoldCopies for a reduce r that a row kernel
// computes first: its fold takes a vector of elements a step where it
// does not take its lanes' order (rowFold).
func RowFoldCopies(r *hlo.Instruction, env Env) int {
	if r.Op != hlo.OpReduce {
		return 1
	}
	return max(InlineFoldCopies(r, env), VectorWidth)
}

// rowLanes reports whether reduce r may fold with lanes invocations per
// output on tg: a power of two the device's workgroups hold, and r
// reduces its operand's innermost dimension over at least
// minSubgroupReduce elements per lane.
func rowLanes(r *hlo.Instruction, tg Target, lanes uint32) bool {
	s := int64(lanes)
	if s < 2 || s&(s-1) != 0 || (tg.MaxWorkgroupSize != 0 && int64(tg.MaxWorkgroupSize) < s) {
		return false
	}
	inner, count := reducedRow(r)
	return inner && count >= minSubgroupReduce*s
}

// reducedRow reports whether reduce r reduces its operand's innermost
// dimension, and how many elements each output folds.
func reducedRow(r *hlo.Instruction) (inner bool, count int64) {
	src := r.Operands[0].Shape
	count = 1
	for _, d := range r.A.Dimensions {
		inner = inner || d == int64(src.Rank()-1)
		count *= src.Dims[d]
	}
	return inner, count
}

// quadLanes reports whether a subgroup reduction of count elements has
// each lane fold 4 consecutive elements a step (subgroupFold's q; one
// 16-byte texel from a binding) rather than one: on CPU devices, where each fetch is a call
// (a 4096x4096 row sum 10.3 ms with 4-byte texels, 3.9 with 16), for
// counts that are whole quads. GPUs keep a lane an element.
func (k *kernelBuilder) quadLanes(count int64) bool {
	return k.tg.CPU && !k.wg && count%4 == 0
}

// laneFold is subgroupFold's order in one invocation: accumulator l of
// lanes folds the runs of q elements q l, q (l+lanes), ... (the first
// element after the inits for l = 0, alone for the others), and the
// accumulators combine as the butterfly (or the workgroup's tree) leaves
// lane 0's result: f(acc_j, acc_j+h) for j < h, h = lanes/2, ..., 1.
// read(step, n, body) reads the n first of the width elements (a
// multiple of q lanes) that step starts at element step*width, calling
// body with each one's offset in the step and values, in order.
// Accumulators are independent chains, which a CPU's pipelines overlap.
func (k *kernelBuilder) laneFold(c *hlo.Computation, inits []val, count int64, lanes uint32, q, width int, read func(step spirv.ID, n int, body func(o int, xs []val) error) error) ([]val, error) {
	l := int(lanes)
	sets := k.accumulatorSets(c, inits, l)
	fold := sets.fold
	lane := func(o int) int { return o / q % l }
	// The first step starts each lane, lane 0 from the inits, the others
	// from their first element: inside the loop, by a select on the
	// step, so that the producers' code is emitted once, not twice (a
	// step peeled off the loop doubled a fused loss's kernel).
	full := count / int64(width)
	err := k.loop(k.cu32(uint32(full)), func(t spirv.ID) error {
		first := k.boolOp(spirv.OpIEqual, t, k.cu32(0))
		return read(t, width, func(o int, xs []val) error {
			if o > 0 && o < q*l && o%q == 0 {
				return sets.foldOrStart(lane(o), xs, first)
			}
			return fold(lane(o), xs)
		})
	})
	if err != nil {
		return nil, err
	}
	if rem := int(count % int64(width)); rem > 0 {
		// The high lanes of the last step have no element.
		err = read(k.cu32(uint32(full)), rem, func(o int, xs []val) error { return fold(lane(o), xs) })
		if err != nil {
			return nil, err
		}
	}
	res := sets.results()
	for h := l / 2; h >= 1; h /= 2 {
		for j := 0; j < h; j++ {
			r, err := k.emitReducer(c, append(append([]val{}, res[j]...), res[j+h]...))
			if err != nil {
				return nil, err
			}
			res[j] = r
		}
	}
	return res[0], nil
}
