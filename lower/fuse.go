package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Fusion: an elementwise or data-movement instruction whose every user
// is a kernel is not given a buffer; each consumer's kernel computes its
// elements where it reads them, so the intermediate never touches memory
// and costs no dispatch (XLA's loop fusion). A dot, convolution, reduce
// or reduce-window with a single consumer that reads each element once
// is computed by that consumer too, which makes the consumer's chain an
// epilogue (XLA's output fusion: bias and activation after a dot). The
// decision is this pass's; emission goes through the kernels' ordinary
// operand reads (kernelBuilder.load), which compute a fused operand
// instead of loading it.

// readCount says how often a consumer reads each element of an operand.
type readCount uint8

const (
	readsNone readCount = iota // not a kernel: needs its operands in buffers
	readsOnce                  // about once per operand element
	readsDup                   // once by each of a few consumers: cheap elementwise work may be recomputed
	readsMany                  // many times (dot, convolution, broadcast...)
)

// maxDuplicates bounds the sites at which kernels may each recompute a
// cheap elementwise producer (softmax's exp(x - max) feeds its sum and
// its division).
const maxDuplicates = 3

// maxIndexCopies bounds the copies of an index-only producer (a
// broadcast of a constant read by many fused ops): cheap each, but each
// is code.
const maxIndexCopies = 64

// maxKernelCost bounds the code of one fused kernel (kgen.OpCost per
// fused op, each copy counted): past it, the producer is stored and
// starts a kernel of its own. Lavapipe compiles a kernel at its first
// dispatch in time that grows faster than its size: a chain of 10,000
// adds and multiplies fused whole (388k SPIR-V words) took 2.0 s, a
// chain of 50,000 (1.9M words) 22 s and 850 MB; about 2,000 cheap ops
// (80k words) a kernel keeps to the rate of the smaller ones, for one
// more store and load per element every 2,000 ops.
const maxKernelCost = 2048

// maxEpilogueCost bounds the code of a kernel that computes a tiled dot
// (a GEMM) and its epilogue: kgen.OpCost of each op fused after the dot,
// times the dot's results per invocation (epilogueCopies: 128 in
// lavapipe's 32x64 tiles of 16 lanes), since each result runs its own
// copy. Measured at 16 lanes, [256,512] x [512,512] followed by a chain
// of library functions (cold first run, the driver's compile): tanh
// 0.33 s (37,159 words), tanh and sine 2.5 s (154,919), four 5.5 s
// (294,707), eight 12.3 s (585,471); the bound takes two (32 x 128),
// not four. OpCost weighs library functions by their words (at least
// 16: tanh 16, sine 77), so tanh and sine (94 x 128, with the kernel's
// own op counted) or a sine alone (78 x 128; 130,039 words, cold 1.8 s
// -> 0.4-0.5 s unfused, runs 2.1-2.4 -> 2.3-2.5 ms) stay apart, while
// transformer_block's tanh GELU (35 x 128 = 4,480; 48,921 words) stays
// fused, which runs faster (twice the bound unfused it: 7.6-8.9 ->
// 8.6-9.3 ms, noisy host; cold 1.35 -> 1.18 s).
const maxEpilogueCost = 3 * maxKernelCost

// smallFanOut is the most copies of each operand element a broadcast
// may make and still count as a few reads (a row of 10 logits): beyond
// it, only index-only producers are recomputed per copy.
const smallFanOut = 16

// consumerReads classifies how consumer in reads its operands.
func consumerReads(in *hlo.Instruction) readCount {
	switch {
	case in.Op == hlo.OpBroadcast:
		if n := in.Operands[0].Shape.NumElements(); n > 0 && in.Shape.NumElements()/n <= smallFanOut {
			return readsDup
		}
		return readsMany
	case in.Op == hlo.OpConcatenate && len(in.Operands) > 1:
		// A concatenate of two computes both operands at each element
		// and selects one, so a loop fused into it runs at every element
		// of both: the stacked phases of a transposed depthwise
		// convolution (transposedconv.go) computed each of the four
		// convolutions at every element, 38 ms of 45 on lavapipe
		// (f32[8,64,64,256]); on their own, 10. One of more operands
		// reads each in a branch of its own positions (kgen's
		// concatBranches), but loops there still took longer than
		// stored operands: an average pooling's gradient's four window
		// sums, f32[8,56,56,256], 69-84 ms in one kernel against 55 in
		// three (its peak memory 128 MB against 231). Cheap producers
		// fuse, and so does the concatenate itself.
		return readsDup
	case in.Op == hlo.OpPad && in.Shape.NumElements() <= 2*in.Operands[0].Shape.NumElements():
		// Its kernel computes the operand at each element, padding too
		// (at the first element, then selects the padding value): mostly
		// operand, a cheap producer may be recomputed there. A long
		// reduction split into chunks pads its row to whole chunks
		// (split.go), and a row of 50,000 stored its exp(x) first.
		return readsDup
	case in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduceWindow,
		in.Op == hlo.OpSort, in.Op == hlo.OpScatter, in.Op == hlo.OpGather, in.Op == hlo.OpPad,
		in.Op == hlo.OpSelectAndScatter:
		return readsMany
	case kgen.OpKind(in.Op) != kgen.KindNone:
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
	case hlo.OpPad:
		// A select between the operand's element and the padding value
		// by the index: a tree scan's blocks padded out, read by the
		// blocks' reduce-window, or its totals shifted by one.
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
	case in.Op == hlo.OpDynamicUpdateSlice, in.Op == hlo.OpGather:
		return false // their kernels write whole regions; keep them materialized
	case in.Op.IsElementwise() && in.Op != hlo.OpRngBitGenerator, kgen.RemapOps[in.Op]:
		return true
	case in.Op == hlo.OpDot, in.Op == hlo.OpConvolution, in.Op == hlo.OpReduce, in.Op == hlo.OpReduceWindow:
		// Output fusion: one invocation computes one output element, so
		// a single consumer that reads each element once can take the
		// whole computation, epilogue and all (bias, activation).
		return true
	}
	return false
}

// expensive ops do a loop of work per element.
func expensive(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpDot, hlo.OpConvolution, hlo.OpReduce, hlo.OpReduceWindow:
		return true
	}
	return false
}

// work estimates the multiply-adds (or loop steps) an instruction's
// kernel does: its elements times the loop each one runs.
func work(in *hlo.Instruction) int64 {
	if !in.Shape.IsArray() {
		return 0
	}
	n := in.Shape.NumElements()
	switch in.Op {
	case hlo.OpDot:
		for _, d := range in.A.Dot.LhsContract {
			n *= in.Operands[0].Shape.Dims[d]
		}
	case hlo.OpConvolution:
		kr := in.Operands[1].Shape
		n *= kr.Dims[in.A.ConvDims.KIn]
		for _, d := range in.A.ConvDims.KSpatial {
			n *= kr.Dims[d]
		}
	case hlo.OpReduce:
		if m := in.Shape.NumElements(); m > 0 {
			n = in.Operands[0].Shape.NumElements()
		}
	case hlo.OpReduceWindow:
		for _, d := range in.A.Window.Dims {
			n *= d.Size
		}
	case hlo.OpSelectAndScatter:
		c, s := kgen.SelectWindows(in)
		n *= c * (s + 1)
	}
	return n
}

// Sites. A kernel computes a fused producer where its users read it: at
// the index a user was computed at, where the user reads its operands
// at its own element (elementwise ops, reshapes), else at an index of
// the user's own making. The kernel emits the producer once per site
// (kgen.compute keeps a value by instruction and index), so its copies,
// for fusion's bounds, are its distinct sites: GELU reads x + b four
// times at one element, once a copy, where counting its users made it
// four copies, and stored it.

// siteKey names a site: the user's site it derives from (-1 for a
// stored instruction's own index), the user, and which operand.
type siteKey struct {
	parent int
	user   *hlo.Instruction
	pos    int
}

type sites struct {
	at     map[*hlo.Instruction][]int // the sites an instruction is computed at
	ids    map[siteKey]int
	kernel []*hlo.Instruction // each site's kernel: the stored instruction it computes
	copies []int              // each site's copies of its code in the kernel (kgen.InlineFoldCopies)
	// unroll is how many copies of its operands' code user u makes at
	// each of its sites.
	unroll func(u *hlo.Instruction) int
}

// id interns a site of kernel k whose code the kernel has copies of.
func (st *sites) id(key siteKey, k *hlo.Instruction, copies int) int {
	if id, ok := st.ids[key]; ok {
		return id
	}
	id := len(st.kernel)
	st.ids[key] = id
	st.kernel = append(st.kernel, k)
	st.copies = append(st.copies, copies)
	return id
}

// operand lists the distinct sites at which users us would compute in.
func (st *sites) operand(in *hlo.Instruction, us []*hlo.Instruction) []int {
	var out []int
	seen := map[int]bool{}
	for _, u := range us {
		for pos, o := range u.Operands {
			if o != in {
				continue
			}
			// A reshape reads the element of its own linear index.
			same := u.Op.IsElementwise() && o.Shape.SameDims(u.Shape) || u.Op == hlo.OpReshape || u.Op == hlo.OpBitcast
			for _, s := range st.at[u] {
				t := s
				if !same {
					t = st.id(siteKey{s, u, pos}, st.kernel[s], st.copies[s]*st.unroll(u))
				}
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// fuseLoops marks the instructions of the entry computation that
// consumers compute inline (plan.fused). Users are decided before
// their operands (reverse definition order), so a producer knows how
// its users will be read: into a consumer that reads many times only
// index-only producers go; a producer read at several sites (see
// Sites) is recomputed at each, which is fine for index-only ones and,
// up to maxDuplicates sites, for cheap elementwise ones; a dot,
// convolution or reduction is fused only where it has one site, read
// once.
func fuseLoops(s *state) error {
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
	// st.at[in]: where kernels compute in (its own kernel's index, when
	// stored), one copy each; cost: each kernel's code so far
	// (maxKernelCost).
	env := s.kernelEnv()
	st := &sites{at: map[*hlo.Instruction][]int{}, ids: map[siteKey]int{}, unroll: func(u *hlo.Instruction) int {
		if s.plan.fused[u] { // computed inline: in its own kernel's order
			return kgen.InlineFoldCopies(u, env)
		}
		return 1
	}}
	cost := map[*hlo.Instruction]int{}
	// epilogue[k]: a kernel that took a tiled dot, its results per
	// invocation, each with a copy of the rest of its code (its
	// epilogue's); its bound is maxEpilogueCost.
	epilogue := map[*hlo.Instruction]int{}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		in := c.Instructions[i]
		reads[in] = consumerReads(in)
		st.at[in] = []int{st.id(siteKey{parent: -1, user: in}, in, 1)}
		cost[in] = kgen.OpCost(in) // its code, should it stay a kernel
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
		at := st.operand(in, us)
		n := len(at) // the copies of in that fusing it would emit
		if n > 1 && ctx != readsNone {
			ctx = max(ctx, readsDup)
		}
		// A loop feeding a reduction that folds it to fewer elements
		// stays a kernel of its own: fused, each of the reduction's
		// fewer invocations would also run the producer's loops, one
		// after another. A split reduction's partials (splitReduce, as
		// XLA's tree reduction) are there to run in parallel: the DLRM
		// step's column sums of [6272,192] gradients, their partials
		// fused, were 192 invocations of 7,168 steps, 6 ms each.
		if expensive(in) && slices.ContainsFunc(us, func(u *hlo.Instruction) bool {
			return u.Op == hlo.OpReduce && u.Shape.Leaves()[0].NumElements() < in.Shape.Leaves()[0].NumElements()
		}) {
			continue
		}
		ok := false
		switch {
		case ctx == readsNone:
		case indexOnly(in):
			ok = n <= maxIndexCopies
		case n > maxDuplicates:
			// A value used twice by a value used twice... doubles at each
			// level (a polynomial recurrence of 30 steps would be emitted
			// 2^30 times): past a few copies it is stored instead.
		case ctx == readsOnce:
			ok = true
		case ctx == readsDup:
			// Never duplicate a loop (dot, convolution, reduction,
			// window): its copies land in reductions, which run one
			// invocation per row. The MLP's [256,10] logits recomputed
			// in its log-softmax's max, sum and output took 14.6 ms of
			// device time; stored once, 3.1 ms in one more dispatch.
			ok = !expensive(in)
		}
		if !ok {
			continue
		}
		// The kernels in would be computed in, and what it adds to each.
		var ks []*hlo.Instruction
		add := map[*hlo.Instruction]int{}
		for _, t := range at {
			k := st.kernel[t]
			if add[k] == 0 {
				ks = append(ks, k)
			}
			add[k] += kgen.OpCost(in) * st.copies[t] * max(epilogue[k], 1)
		}
		// A dot that makes the kernel a tiled GEMM multiplies the code
		// fused so far (its epilogue) by its results per invocation.
		tiled := 0
		if in.Op == hlo.OpDot || in.Op == hlo.OpConvolution {
			tiled = s.epilogueCopies(in)
		}
		over := func(k *hlo.Instruction) bool {
			switch {
			case epilogue[k] > 0:
				return cost[k]+add[k] > maxEpilogueCost
			case tiled > 0:
				return cost[k]*tiled+add[k] > maxEpilogueCost
			}
			return cost[k]+add[k] > maxKernelCost
		}
		if slices.ContainsFunc(ks, over) {
			continue
		}
		for _, k := range ks {
			if tiled > 0 && epilogue[k] == 0 {
				cost[k] *= tiled
				epilogue[k] = tiled
			}
			cost[k] += add[k]
		}
		s.plan.fused[in] = true
		reads[in] = max(ctx, reads[in])
		st.at[in] = at
	}
	defer func() {
		for in := range s.plan.fused {
			if n, err := kgen.StorageBytes(in.Shape, s.tg); err == nil {
				s.prog.FusedBytes += alignUp(PaddedSize(n), int64(s.tg.StorageAlign))
			}
		}
	}()
	// A kernel binds its cluster's inputs; past the device's limit,
	// unfuse the cluster's producers (and look again, as they are now
	// kernels themselves). Likewise a kernel whose loops would run past
	// the device's loop bound gives up its expensive producers, and a dot
	// or convolution the tiled kernel takes (gemmOf) stays fused only
	// into a kernel that is still a tiled GEMM (planGemm: the dot read at
	// the kernel's own index, as an epilogue reads it, or reshaped);
	// inside another (a transpose of it, say) it would be computed per
	// element, its tiles lost.
	// Each round rechecks only the kernels whose clusters an unfusing
	// changed (the kernels that computed the producer, and the producer's
	// own), in program order as a full rescan would meet them: a kernel's
	// checks depend on its cluster alone. Rescanning every kernel after
	// any unfusing made this loop quadratic: a 100,000-op graph took 42
	// rounds over all of its clusters.
	pos := make(map[*hlo.Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		pos[in] = i
	}
	dirty := make([]bool, len(c.Instructions))
	for i := range dirty {
		dirty[i] = true
	}
	// unfuse makes p a kernel of its own and marks what that changes.
	unfuse := func(p *hlo.Instruction) {
		delete(s.plan.fused, p)
		dirty[pos[p]] = true
		s.walkFused(p, func(x *hlo.Instruction) []*hlo.Instruction { return users[x] }, nil,
			func(k *hlo.Instruction) { dirty[pos[k]] = true })
	}
	budget := s.tg.LoopBudget()
	for changed := true; changed; {
		changed = false
		for i, in := range c.Instructions {
			if !dirty[i] {
				continue
			}
			dirty[i] = false
			if s.plan.fused[in] || consumerReads(in) == readsNone {
				continue
			}
			inputs, cluster := s.clusterInputs(in)
			unfused := false
			for _, p := range cluster {
				if (p.Op == hlo.OpDot || p.Op == hlo.OpConvolution) && kgen.GemmOf(p) != nil && s.planGemm(in) == nil {
					unfuse(p)
					unfused = true
				}
			}
			if in.Op == hlo.OpConvolution && kgen.GemmOf(in) != nil {
				// The implicit GEMM reads its operands from buffers
				// (planGemm): a transpose fused into it would cost the
				// tiled kernel, many times its pass over memory.
				for _, o := range in.Operands {
					if s.plan.fused[o] {
						unfuse(o)
						unfused = true
					}
				}
			}
			if !unfused && s.loopIters(in) > budget {
				for _, p := range cluster {
					if ownLoop(p) > 0 {
						unfuse(p)
						unfused = true
					}
				}
			}
			if !unfused {
				limit := int(s.tg.MaxStorageBuffers) - len(in.Shape.Leaves())
				if in.Op == hlo.OpSort {
					limit -= 2 // scratch positions
				}
				if s.tg.MaxStorageBuffers != 0 && inputs > limit && len(cluster) > 0 {
					if p := s.cutCluster(cluster); p != nil {
						unfuse(p)
					} else {
						for _, p := range cluster {
							unfuse(p)
						}
					}
					unfused = true
				}
			}
			if unfused {
				dirty[i], changed = true, true
			}
		}
	}
	return nil
}

// cutCluster picks the producer of a kernel that binds too many inputs
// to make a kernel of its own: the one whose own kernel would bind the
// most inputs it may (at least two, else nil), so that the kernel it
// leaves binds fewer by as many, less the one it now reads, and each
// part keeps its cheap producers fused. A chain of selects each reading
// a scalar of its own (x.at[i].set(v) chains, pointScatter) is cut into
// kernels of as many links as fit; unfusing every producer instead made
// each link's iota, compare and broadcast a kernel: 60 links, 182
// dispatches where 3 do.
func (s *state) cutCluster(cluster []*hlo.Instruction) *hlo.Instruction {
	var best *hlo.Instruction
	most := 1
	for _, p := range cluster {
		n, _ := s.clusterInputs(p)
		if n > most && n <= int(s.tg.MaxStorageBuffers)-len(p.Shape.Leaves()) {
			best, most = p, n
		}
	}
	return best
}

// clusterInputs counts the distinct materialized values root's kernel
// reads, and lists the fused producers it computes.
func (s *state) clusterInputs(root *hlo.Instruction) (int, []*hlo.Instruction) {
	var fused []*hlo.Instruction
	inputs := 0
	s.walkFused(root, operandsOf,
		func(x *hlo.Instruction) { fused = append(fused, x) },
		func(*hlo.Instruction) { inputs++ })
	return inputs, fused
}
