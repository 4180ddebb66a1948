package lower

import (
	"maps"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Row fusion: an elementwise kernel over [rows..., cols...] that reads
// reductions of its rows (reduces over the trailing dimensions of a value
// of its shape) only through broadcasts along those rows takes them into
// its own kernel: one invocation per row computes the row's reductions
// into registers, then the row's elements (XLA's softmax fusion). Row
// softmax, log-softmax and layer norm become one dispatch, and the row,
// read once per reduction and once for the result, comes from the cache
// after its first read. The reductions fold in the same order as alone
// (a subgroup's: kgen's laneFold, or one element at a time where a row is
// too short for one), so results are bit-identical to the unfused
// program but for online sums (online.go); where the row length is a
// multiple of 8 the rows are read and written as vec4s.
//
// On CPU devices (lavapipe) an invocation per row suits the SIMD lanes,
// each lane a row with no barrier. GPUs want a workgroup per row with
// shared-memory or subgroup reductions instead; until that form exists
// they (and lower.Options.SubgroupReduce) keep the reduction and
// elementwise kernels apart.

// minRowKernelRows is the fewest rows worth a row kernel: each row is one
// invocation, so fewer rows would leave SIMD lanes and cores idle.
const minRowKernelRows = 64

// rowReduce reports whether r reduces exactly the trailing dimensions of
// an operand of k2's shape down to k2's leading dimensions.
func rowReduce(r, k2 *hlo.Instruction) bool {
	if r.Op != hlo.OpReduce || len(r.Operands) != 2 || !r.Shape.IsArray() {
		return false
	}
	m := r.Shape.Rank()
	src := r.Operands[0].Shape
	if m == 0 || m >= k2.Shape.Rank() || !kgen.EqualDims(src.Dims, k2.Shape.Dims) || !kgen.EqualDims(r.Shape.Dims, k2.Shape.Dims[:m]) {
		return false
	}
	dims := slices.Clone(r.A.Dimensions)
	slices.Sort(dims)
	for i, d := range dims {
		if d != int64(m+i) {
			return false
		}
	}
	return len(dims) == src.Rank()-m
}

// rowSpace is where in a row kernel a value is read: at the element the
// invocation computes (own), at its row (row), or elsewhere.
type rowSpace uint8

const (
	ownRow rowSpace = iota
	atRow
	elsewhere
)

// readsOnlyAtRow reports whether k2's kernel reads r (a value of k2's
// first m dimensions) only at the row of the element it computes.
func (s *state) readsOnlyAtRow(k2, r *hlo.Instruction, m int) bool {
	ok := true
	type visit struct {
		x  *hlo.Instruction
		sp rowSpace
	}
	seen := map[visit]bool{} // each value once per space (a DAG's paths are exponential)
	var walk func(x *hlo.Instruction, sp rowSpace)
	walk = func(x *hlo.Instruction, sp rowSpace) {
		if !ok || seen[visit{x, sp}] {
			return
		}
		seen[visit{x, sp}] = true
		if x == r {
			ok = sp == atRow
			return
		}
		if !s.plan.fused[x] {
			return
		}
		for _, o := range x.Operands {
			next := elsewhere
			switch {
			case o.Shape.Rank() == 0 && x.Shape.Rank() > 0:
			case x.Op.IsElementwise():
				next = sp
			case x.Op == hlo.OpBroadcast && sp == ownRow && kgen.EqualDims(x.Shape.Dims, k2.Shape.Dims) &&
				kgen.EqualDims(x.A.Dimensions, iotaDims(m)) && kgen.EqualDims(o.Shape.Dims, k2.Shape.Dims[:m]):
				next = atRow
			}
			walk(o, next)
		}
	}
	for _, o := range k2.Operands {
		sp := ownRow
		if o.Shape.Rank() == 0 {
			sp = elsewhere
		}
		walk(o, sp)
	}
	return ok
}

func iotaDims(m int) []int64 {
	d := make([]int64, m)
	for i := range d {
		d[i] = int64(i)
	}
	return d
}

// fuseRows makes row kernels (see above): a row kernel's plan lists
// the reductions in the order they are computed as its prologue, and the
// dimensions that index a row.
func fuseRows(s *state) error {
	if s.opts.NoFuse || !s.tg.CPU || s.opts.SubgroupReduce || s.opts.WorkgroupReduce {
		return nil // SubgroupReduce and WorkgroupReduce ask for the GPUs' forms on a CPU device
	}
	c := s.mod.Entry
	g, sched, err := scheduledSteps(s)
	if err != nil {
		return err
	}
	pos := map[*hlo.Instruction]int{}
	users := map[*hlo.Instruction][]*hlo.Instruction{}
	for i, in := range c.Instructions {
		pos[in] = i
		for _, o := range in.Operands {
			if len(users[o]) == 0 || users[o][len(users[o])-1] != in {
				users[o] = append(users[o], in)
			}
		}
	}
	// inOrder lists a set's values in definition order, so that the plan
	// is the same every time (and the walk costs the set, not the program).
	inOrder := func(set map[*hlo.Instruction]bool) []*hlo.Instruction {
		l := slices.Collect(maps.Keys(set))
		slices.SortFunc(l, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
		return l
	}
	budget := s.tg.LoopBudget()
	limit := int(s.tg.MaxStorageBuffers)
	for _, k2 := range c.Instructions {
		if _, live := sched[k2]; !live || s.plan.fused[k2] || s.plan.moved[k2] || len(s.plan.prologue(k2)) > 0 || !k2.Op.IsElementwise() ||
			k2.Op == hlo.OpRngBitGenerator || !k2.Shape.IsArray() || k2.Shape.NumElements() == 0 {
			continue
		}
		in2 := g.stepInputs(k2)
		cand := s.rowCandidates(k2, in2, g)
		if len(cand) == 0 {
			continue
		}
		// The row dimensions: those of the first value with a loop (a
		// reduction of its own or fused in it).
		m := 0
		for _, r := range inOrder(cand) {
			if m == 0 && s.kernelIters(r) > 0 {
				m = r.Shape.Rank()
			}
		}
		// Each value must be read only at its row: by k2 through
		// broadcasts along the rows, by the other row values at their
		// own index. One that is not stays a kernel of its own.
		for changed := true; changed; {
			changed = false
			for _, p := range inOrder(cand) {
				ok := p.Shape.Rank() == m && (!in2[p] || s.readsOnlyAtRow(k2, p, m))
				for q := range cand {
					if ok && q != p && g.stepInputs(q)[p] && !s.readsOnlyAtOutput(q, p) {
						ok = false
					}
				}
				if !ok {
					delete(cand, p)
					changed = true
				}
			}
		}
		var take []*hlo.Instruction
		reduces, fits := false, true
		for _, r := range inOrder(cand) {
			// With the reductions its kernel computes first (read by
			// r at its own index, and by k2 only at its rows).
			for _, p := range s.plan.prologue(r) {
				fits = fits && p.Shape.Rank() == m && (!in2[p] || s.readsOnlyAtRow(k2, p, m))
			}
			take = append(append(take, s.plan.prologue(r)...), r)
			reduces = reduces || s.kernelIters(r) > 0
		}
		if !reduces || !fits {
			continue
		}
		rows, cols := rowSplit(k2, m)
		if rows < minRowKernelRows {
			continue
		}
		// What the step reads from buffers: k2's inputs and those of the
		// values it takes, which none of them may need.
		reads := maps.Clone(in2)
		iters := cols * (1 + s.loopIters(k2))
		taken := map[*hlo.Instruction]bool{}
		for _, p := range take {
			s.visitInputs(p, func(o *hlo.Instruction) { reads[o] = true })
			iters += s.loopIters(p)
			taken[p] = true
		}
		for _, p := range take {
			delete(reads, p)
		}
		outs := len(k2.Shape.Leaves()) + len(take)
		if iters > budget || limit != 0 && len(reads)+outs > limit || g.reaches(reads, taken) {
			continue
		}
		pairs, online := s.onlinePairs(take, cols, pos, users)
		if s.rowKernelCost(k2, take, pairs, online) > maxKernelCost {
			continue
		}
		for _, p := range take {
			if o := g.of(p); o != p {
				s.plan.kernel(o).Prologue = nil
			}
			s.plan.moved[p] = true
		}
		s.makeRowKernel(k2, take, m, pairs, online)
		g.merge(k2, take...)
	}
	return nil
}

// rowKernelCost is the code of k2's row kernel computing take first: a
// reduction there folds a step of elements unrolled, each with a copy of
// its fused producers (kgen.RowFoldCopies; a max and its exponentials'
// sum folded together, pairs and online of onlinePairs, a chunk of
// kgen.OnlineChunk). Eight library functions before a row max of
// f32[1024,256], made one row kernel, were 584,586 words that lavapipe
// took 19 s to compile.
func (s *state) rowKernelCost(k2 *hlo.Instruction, take []*hlo.Instruction, pairs map[*hlo.Instruction]kgen.OnlinePair, online map[*hlo.Instruction]bool) int {
	env := s.kernelEnv()
	n := s.kernelCost(k2)
	for _, p := range take {
		own, copies := kgen.OpCost(p), kgen.RowFoldCopies(p, env)
		if _, ok := pairs[p]; ok || online[p] {
			copies = kgen.OnlineChunk
		}
		n += own + copies*(s.kernelCost(p)-own)
	}
	return n
}

// onlinePairs finds the maxes of take (a row kernel's prologue, of rows
// of cols) whose exponentials' sum the kernel also computes (a value it
// takes, or fused into one taken after the max), which fold with them in
// one pass (online.go): each such max's pair, and the sums paired.
func (s *state) onlinePairs(take []*hlo.Instruction, cols int64, pos map[*hlo.Instruction]int, users map[*hlo.Instruction][]*hlo.Instruction) (map[*hlo.Instruction]kgen.OnlinePair, map[*hlo.Instruction]bool) {
	c := s.mod.Entry
	var out map[*hlo.Instruction]kgen.OnlinePair
	online := map[*hlo.Instruction]bool{}
	for i, r1 := range take {
		if cols%kgen.OnlineChunk != 0 || r1.Op != hlo.OpReduce {
			continue
		}
		// The sums it may pair with: those taken after it, and fused
		// operands read by nothing else, in definition order.
		later := take[i+1:]
		pairs := map[*hlo.Instruction]bool{}
		for _, r2 := range later {
			pairs[r2] = true
			for _, o := range r2.Operands {
				if s.plan.fused[o] && o != c.Root && !slices.ContainsFunc(users[o], func(u *hlo.Instruction) bool { return !slices.Contains(later, u) }) {
					pairs[o] = true
				}
			}
		}
		rs := slices.Collect(maps.Keys(pairs))
		slices.SortFunc(rs, func(a, b *hlo.Instruction) int { return pos[a] - pos[b] })
		for _, r2 := range rs {
			if pair, ok := onlineSum(r1, r2); ok {
				if out == nil {
					out = map[*hlo.Instruction]kgen.OnlinePair{}
				}
				out[r1] = pair
				online[r2] = true
			}
		}
	}
	return out, online
}

// rowCandidates finds the row values k2's step can compute per row: the
// row reductions it reads and the row-shaped elementwise kernels between
// them and k2 (log-softmax's log of the sum, layer norm's mean and
// reciprocal deviation), found backwards from k2's inputs in2.
func (s *state) rowCandidates(k2 *hlo.Instruction, in2 map[*hlo.Instruction]bool, g *steps) map[*hlo.Instruction]bool {
	rowValue := func(r *hlo.Instruction) bool {
		if s.plan.moved[r] || s.plan.fused[r] || !r.Shape.IsArray() {
			return false
		}
		if rowReduce(r, k2) {
			return true
		}
		n := r.Shape.Rank()
		return r.Op.IsElementwise() && s.perElement(r) &&
			n > 0 && n < k2.Shape.Rank() && kgen.EqualDims(r.Shape.Dims, k2.Shape.Dims[:n])
	}
	cand := map[*hlo.Instruction]bool{}
	var work []*hlo.Instruction
	for o := range in2 {
		work = append(work, o)
	}
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		if cand[r] || !rowValue(r) {
			continue
		}
		cand[r] = true
		for o := range g.stepInputs(r) {
			work = append(work, o)
		}
	}
	return cand
}

// makeRowKernel records k2's row kernel in the plan: the values it
// takes (computed first, per row), its row dimensions m, the maxes it
// folds with their exponentials' sums (pairs; online the sums paired:
// onlinePairs), and the value its reduction stores for its elements.
func (s *state) makeRowKernel(k2 *hlo.Instruction, take []*hlo.Instruction, m int, pairs map[*hlo.Instruction]kgen.OnlinePair, online map[*hlo.Instruction]bool) {
	kp := s.plan.kernel(k2)
	kp.Prologue, kp.Row, kp.RowDims = take, true, m
	if len(pairs) > 0 {
		kp.Online = pairs
	}
	if v, by := s.spillOf(k2, take); v != nil && !online[by] {
		kp.Spill = [2]*hlo.Instruction{v, by}
	}
}

// rowSplit is row kernel in's rows (its first m dimensions) and the
// elements of each.
func rowSplit(in *hlo.Instruction, m int) (rows, cols int64) {
	rows = hlo.ArrayShape(in.Shape.Elem, in.Shape.Dims[:m]...).NumElements()
	return rows, in.Shape.NumElements() / max(rows, 1)
}

// spillOf finds row kernel k2's rowSpill: the operand of one of the
// reductions it takes that is a fused value of k2's type, which k2's
// elements read, and only at their own index.
func (s *state) spillOf(k2 *hlo.Instruction, take []*hlo.Instruction) (v, by *hlo.Instruction) {
	if len(k2.Shape.Leaves()) != 1 {
		return nil, nil
	}
	_, cluster := s.clusterInputs(k2)
	for i := len(take) - 1; i >= 0; i-- {
		p := take[i]
		if p.Op != hlo.OpReduce || len(p.Operands) != 2 {
			continue
		}
		o := p.Operands[0]
		if slices.Contains(cluster, o) && o.Shape.Elem == k2.Shape.Elem && kgen.EqualDims(o.Shape.Dims, k2.Shape.Dims) && s.readsOnlyAtOutput(k2, o) {
			return o, p
		}
	}
	return nil, nil
}
