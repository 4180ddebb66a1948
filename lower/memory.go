package lower

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/vkjit/vkjit/lower/kgen"
)

// Memory planning: the temporaries of a program share one arena, placed
// by their live ranges over the steps so that values whose lives do not
// overlap share memory (XLA's heap simulator does the same with
// best-fit placement of buffers sorted by size). Parameters, constants
// and the results of while and conditional steps keep buffers of their
// own: the runtime uploads, keeps or binds those.

// liveRange is when a buffer is live, in half steps: step t reads at
// 2t the inputs it may update in place (Step.InPlace) and touches
// everything else at 2t+1, so an input whose last read is in place ends
// just before the step's results begin.
type liveRange struct{ first, last int }

func (a liveRange) overlaps(b liveRange) bool { return a.first <= b.last && b.first <= a.last }

// adjacent reports that a's last use is an in-place read by the step
// that writes b first: they may share memory, element for element.
func (a liveRange) adjacent(b liveRange) bool { return a.last%2 == 0 && a.last+1 == b.first }

// liveRanges returns the live range of every temporary of the program:
// results live to the end; a temporary no step touches (an empty
// result) lives throughout.
func liveRanges(p *Program) map[int]liveRange {
	end := 2*len(p.Steps) + 1
	lr := map[int]liveRange{}
	touch := func(b, at int) {
		if !p.Buffers[b].InArena() && p.Buffers[b].Alias == 0 {
			return
		}
		r, ok := lr[b]
		if !ok {
			r = liveRange{at, at}
		}
		r.first, r.last = min(r.first, at), max(r.last, at)
		lr[b] = r
	}
	for i, st := range p.Steps {
		inPlace := map[int]bool{}
		for _, b := range st.InPlace {
			inPlace[b] = true
		}
		for j, b := range stepBuffers(st) {
			if st.Kind == StepDispatch && j < len(st.Buffers)-st.Writes && inPlace[b] {
				touch(b, 2*i)
			} else {
				touch(b, 2*i+1)
			}
		}
	}
	for _, b := range p.Outputs {
		touch(b, end)
	}
	for _, st := range p.Steps {
		if st.Dispatches > 0 {
			touch(st.Pred, end) // read once the batch is done (Step.Dispatches)
		}
	}
	extendAliased(p, lr, end)
	for b, buf := range p.Buffers {
		if _, ok := lr[b]; !ok && buf.Kind == BufTemp {
			lr[b] = liveRange{0, end}
		}
		if r, ok := lr[b]; ok && buf.Kind == BufParam {
			lr[b] = liveRange{0, r.last} // uploaded before the first step
		}
	}
	return lr
}

// extendAliased makes an input of a while or conditional step live as
// long as a result it may become: the runtime hands the input's buffer
// on as the result where the called computation returns its parameter
// (a branch returning its operand, a loop body passing a state element
// through, a loop that runs no iteration), directly or through a loop or
// conditional of its own. Once, a value computed after a conditional
// whose branch returned its operand took that operand's memory, and so
// the conditional's result; then one whose branch returned its operand
// through a loop that passed it on (the fuzzer, both).
func extendAliased(p *Program, lr map[int]liveRange, end int) {
	last := map[int]int{} // every buffer's last touch, arena or not
	for i, st := range p.Steps {
		for _, b := range stepBuffers(st) {
			last[b] = max(last[b], 2*i+1)
		}
	}
	for _, b := range p.Outputs {
		last[b] = end
	}
	// Later steps first, so that a chain of aliases extends all the way.
	for i := len(p.Steps) - 1; i >= 0; i-- {
		for _, pr := range passPairs(p, p.Steps[i]) {
			in, out := pr[0], pr[1]
			if last[out] > last[in] {
				last[in] = last[out]
				if r, ok := lr[in]; ok {
					r.last = max(r.last, last[out])
					lr[in] = r
				}
			}
		}
	}
}

// passPairs lists the (input, result) buffers of a while or conditional
// step st of p where the runtime may hand the input's buffer on as the
// result.
func passPairs(p *Program, st Step) [][2]int {
	// passThrough lists, for a sub-program, the parameter leaves each
	// output may be.
	passThrough := func(sub int) map[int][]int {
		sp := p.Subs[sub]
		al := paramAliases(sp)
		m := map[int][]int{}
		for i, b := range sp.Outputs {
			for x := range al[b] {
				m[i] = append(m[i], x)
			}
		}
		return m
	}
	var pairs [][2]int
	switch st.Kind {
	case StepWhile:
		// The state element ending in result j may come, through the
		// iterations, from any initial element that passes through to
		// j: from j itself (no iteration), then closed under the body's
		// pass-throughs.
		pass := passThrough(st.Body)
		from := make([]map[int]bool, len(st.Out))
		for j := range from {
			from[j] = map[int]bool{j: true}
		}
		for changed := true; changed; {
			changed = false
			for j, ks := range pass {
				for _, k := range ks {
					for x := range from[k] {
						if !from[j][x] {
							from[j][x], changed = true, true
						}
					}
				}
			}
		}
		for j, out := range st.Out {
			for x := range from[j] {
				pairs = append(pairs, [2]int{st.In[0][x], out})
			}
		}
	case StepConditional:
		for bi, sub := range st.Branches {
			for j, ks := range passThrough(sub) {
				for _, k := range ks {
					pairs = append(pairs, [2]int{st.In[bi][k], st.Out[j]})
				}
			}
		}
	}
	return pairs
}

// paramAliases returns, for each buffer of p that may be a parameter's
// at run time, those parameter leaves: a parameter is itself, and a
// while or conditional step's result any input it may be handed
// (passPairs), recursively.
func paramAliases(p *Program) map[int]map[int]bool {
	al := map[int]map[int]bool{}
	for b, buf := range p.Buffers {
		if buf.Kind == BufParam {
			al[b] = map[int]bool{buf.Param: true}
		}
	}
	for _, st := range p.Steps {
		for _, pr := range passPairs(p, st) {
			for x := range al[pr[0]] {
				if al[pr[1]] == nil {
					al[pr[1]] = map[int]bool{}
				}
				al[pr[1]][x] = true
			}
		}
	}
	return al
}

// stepBuffers lists every buffer a step reads or writes.
func stepBuffers(st Step) []int {
	if st.Kind.IsDispatch() {
		return st.Buffers
	}
	var out []int
	for _, in := range st.In {
		out = append(out, in...)
	}
	out = append(out, st.Out...)
	if st.Kind == StepConditional {
		out = append(out, st.Pred)
	}
	return out
}

// alignUp rounds n up to a multiple of a (a power of two, or 0 for none).
func alignUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) &^ (a - 1)
}

// planMemory gives every temporary an offset in the program's arena:
// largest first, each at the lowest aligned offset that no placed
// temporary with an overlapping live range occupies. With NoReuse every
// temporary gets memory of its own. It also records the liveness lower
// bound: the most bytes live at any one step.
func planMemory(s *state) error {
	p := s.prog
	align := int64(s.tg.StorageAlign)
	lr := liveRanges(p)
	for b, buf := range p.Buffers {
		if _, read := lr[b]; buf.Kind == BufParam && buf.Donated && !read {
			p.Buffers[b].Donated = false // no step reads it: nothing to copy, nothing to reuse
		}
	}
	if !s.opts.NoReuse { // (NoReuse: every value its own memory, to compare against)
		aliasDonated(p, lr, s.tg)
	}
	if s.opts.loopBody {
		// A state element no result takes is read where it is: the
		// loop's other iterations and its caller may hold it.
		for b, buf := range p.Buffers {
			if buf.Kind == BufParam && buf.Alias == 0 {
				p.Buffers[b].Donated = false
			}
		}
	}
	loopsInPlace(p)
	temps := make([]int, 0, len(lr))
	for b := range lr {
		if p.Buffers[b].InArena() {
			temps = append(temps, b)
		}
	}
	size := func(b int) int64 { return alignUp(PaddedSize(p.Buffers[b].Size), align) }
	sort.Slice(temps, func(i, j int) bool {
		a, b := temps[i], temps[j]
		if size(a) != size(b) {
			return size(a) > size(b)
		}
		return a < b
	})
	type placed struct {
		b        int
		off, end int64
		r        liveRange
	}
	elemBytes := func(b int) int {
		st, _ := kgen.StorageType(p.Buffers[b].Shape.Elem, s.tg)
		return st.Bytes()
	}
	// share reports whether x and placed y may overlap: only exactly,
	// element for element, as an in-place update.
	share := func(x int, y placed) bool {
		a, b := lr[x], y.r
		return (a.adjacent(b) || b.adjacent(a)) && elemBytes(x) == elemBytes(y.b)
	}
	var done []placed
	var near, partners []int // ids in done: those just around b it may not overlap, and its in-place partners
	var extra []byteRange
	// The placed temporaries' memory by live range (occupancy), and the
	// placed ones ending and starting at each half step.
	endsAt, startsAt := map[int][]int{}, map[int][]int{}
	end := 2*len(p.Steps) + 2
	occ := newOccupancy(end + 1)
	var sets []ranges
	for _, b := range temps {
		var off int64
		if s.opts.NoReuse {
			off = p.ArenaSize // after every temporary placed
		} else {
			// Only temporaries live at b's times or just around them
			// can keep b from an offset: those live at the same time,
			// whose memory occupancy gives as a few unions of ranges
			// however many there are, and those that end just before b
			// starts or start just after it ends (an in-place partner,
			// or a value of another width).
			rb := lr[b]
			sets = occ.sets(rb.first, rb.last, sets[:0])
			near, partners = near[:0], partners[:0]
			around := func(i int) {
				switch d := done[i]; {
				case share(b, d):
					partners = append(partners, i)
				default:
					// Read by the step that writes b, but elements of
					// another size (a convert between widths): writing b
					// over it would clobber elements other invocations
					// have yet to read.
					near = append(near, i)
				}
			}
			for _, i := range endsAt[rb.first-1] {
				if done[i].r.adjacent(rb) {
					around(i)
				}
			}
			if rb.last%2 == 0 {
				for _, i := range startsAt[rb.last+1] {
					around(i)
				}
			}
			slices.Sort(partners) // in placement order: the first partner that fits wins
			// An in-place update first: exactly on a partner's memory,
			// clear of everything live at the same time and of the other
			// partners.
			clear := func(j int, off int64) bool { return off >= done[j].end || done[j].off >= off+size(b) }
			fits := func(off int64, skip int) bool {
				if anyOverlaps(sets, off, off+size(b)) {
					return false
				}
				for _, j := range near {
					if !clear(j, off) {
						return false
					}
				}
				for i, j := range partners {
					if i != skip && !clear(j, off) {
						return false
					}
				}
				return true
			}
			found := false
			for i, j := range partners {
				if fits(done[j].off, i) {
					off, found = done[j].off, true
					break
				}
			}
			if !found {
				// The lowest offset clear of them all (offsets and sizes
				// are multiples of align, so the ends that bound it are).
				extra = extra[:0]
				for _, j := range append(near, partners...) {
					extra = append(extra, byteRange{done[j].off, done[j].end})
				}
				off = lowestFree(sets, extra, size(b))
			}
		}
		p.Buffers[b].Offset = off
		p.TempBytes += size(b)
		r := lr[b]
		occ.add(r.first, r.last, off, off+size(b))
		endsAt[r.last] = append(endsAt[r.last], len(done))
		startsAt[r.first] = append(startsAt[r.first], len(done))
		done = append(done, placed{b, off, off + size(b), r})
		p.ArenaSize = max(p.ArenaSize, off+size(b))
	}
	// The lower bound no placement can beat: the bytes live at the
	// busiest step (a sweep over the ranges' ends).
	delta := make([]int64, end+1)
	for _, b := range temps {
		r := lr[b]
		delta[r.first] += size(b)
		delta[r.last+1] -= size(b)
	}
	var live int64
	for _, d := range delta {
		live += d
		p.LiveBound = max(p.LiveBound, live)
	}
	return nil
}

// dropInPlaceCopies takes out the steps that copy an update's operand
// into its result (state.copies) where memory planning gave the two the
// same memory: the operand's last use, or a donated parameter, that the
// update then writes over in place.
func dropInPlaceCopies(s *state) error {
	if len(s.copies) == 0 {
		return nil
	}
	p := s.prog
	before := len(p.Steps)
	steps := p.Steps[:0]
	for i, st := range p.Steps {
		if s.copies[i] && p.span(st.Buffers[0]) == p.span(st.Buffers[1]) {
			continue
		}
		steps = append(steps, st)
	}
	p.Steps = steps
	s.copies = nil
	if len(steps) == before {
		return nil
	}
	// A copy kernel no step runs any more is not built into a pipeline.
	renum := make([]int, len(p.Kernels))
	for i := range renum {
		renum[i] = -1
	}
	var kernels []*kgen.Kernel
	for i, st := range p.Steps {
		if !st.Kind.IsDispatch() {
			continue
		}
		if renum[st.Kernel] < 0 {
			renum[st.Kernel] = len(kernels)
			kernels = append(kernels, p.Kernels[st.Kernel])
		}
		p.Steps[i].Kernel = renum[st.Kernel]
	}
	p.Kernels = kernels
	return nil
}

// aliasDonated gives each donated parameter's memory to a result of its
// size and element width that is written no sooner than the parameter's
// last read (or by that read's step, in place), in order of results: a
// training step's new weights where the old ones were, with no copy of
// the old into an arena and no second allocation, as XLA's
// input_output_alias. Donated parameters no result fits stay in the
// arena, where temporaries reuse them.
func aliasDonated(p *Program, lr map[int]liveRange, tg kgen.Target) {
	width := func(b int) int {
		st, _ := kgen.StorageType(p.Buffers[b].Shape.Elem, tg)
		return st.Bytes()
	}
	var donated []int
	for b, buf := range p.Buffers {
		if buf.Kind == BufParam && buf.Donated {
			donated = append(donated, b)
		}
	}
	outputs := map[int]int{}
	for _, b := range p.Outputs {
		outputs[b]++
	}
	for _, out := range p.Outputs {
		ob := &p.Buffers[out]
		if ob.Kind != BufTemp || ob.Alias != 0 || outputs[out] != 1 {
			continue
		}
		for _, d := range donated {
			db := &p.Buffers[d]
			pr, or := lr[d], lr[out]
			if db.Alias != 0 || db.Size != ob.Size || width(d) != width(out) || !(pr.last < or.first || pr.adjacent(or)) {
				continue
			}
			db.Alias, ob.Alias = out+1, d+1
			break
		}
	}
}

// loopsInPlace lists, as each while step's InPlace, the initial state
// values the loop may write over where its body updates an element in
// place (a body result aliased to its state parameter): temporaries of
// this program's arena that the step reads last, once, and that no
// earlier while or conditional took (whose result might be the same
// memory). Their live ranges reach the loop's results already
// (extendAliased: a loop that runs no iteration returns its initial
// state). The runtime copies any other initial element the body writes
// over, once per loop.
func loopsInPlace(p *Program) {
	last := map[int]int{}    // every buffer's last step
	handed := map[int]bool{} // inputs of control steps so far
	for i, st := range p.Steps {
		for _, b := range stepBuffers(st) {
			last[b] = i
		}
	}
	for _, b := range p.Outputs {
		last[b] = len(p.Steps)
	}
	for i, st := range p.Steps {
		if st.Kind == StepWhile {
			body := p.Subs[st.Body]
			count := map[int]int{}
			for _, b := range st.In[0] {
				count[b]++
			}
			for j, b := range st.In[0] {
				buf := p.Buffers[b]
				if body.Buffers[body.Params[j]].Alias != 0 && buf.Kind == BufTemp && buf.InArena() &&
					count[b] == 1 && last[b] == i && !handed[b] {
					p.Steps[i].InPlace = append(p.Steps[i].InPlace, b)
				}
			}
		}
		if st.Kind == StepWhile || st.Kind == StepConditional {
			for _, in := range st.In {
				for _, b := range in {
					handed[b] = true
				}
			}
		}
	}
}

// span is the memory a buffer occupies: a range of the arena for a
// temporary, the buffer itself otherwise.
type span struct {
	space  int // -1: the arena; otherwise the buffer's own index
	lo, hi int64
}

func (a span) overlaps(b span) bool { return a.space == b.space && a.lo < b.hi && b.lo < a.hi }

func (p *Program) span(b int) span {
	buf := &p.Buffers[b]
	if buf.InArena() {
		return span{-1, buf.Offset, buf.Offset + PaddedSize(buf.Size)}
	}
	if buf.Kind == BufTemp && buf.Alias != 0 { // in its donated parameter's memory
		return span{buf.Alias - 1, 0, PaddedSize(buf.Size)}
	}
	return span{b, 0, PaddedSize(buf.Size)}
}

// planBarriers marks the steps that must wait for earlier ones: a read
// of memory written since the last barrier, or a write of memory read or
// written since then (temporaries that share arena memory make the
// second kind). The runtime finishes all work around control steps.
//
// A while or conditional step's result is in whatever memory the runtime
// hands it: its own, or an input's where the called computation may
// pass that input on (passPairs: a loop updating its state in place, a
// state element passed through, no iteration at all). A temporary that
// later takes that input's arena range, once the result's last reader
// is done (extendAliased keeps the range that long), must wait for that
// reader: on a GPU the two dispatches otherwise overlap, and the reader
// saw half-written values (geev's eigenvectors on an H200; lavapipe
// runs one dispatch after another and hid it).
func planBarriers(s *state) error {
	p := s.prog
	var wrote, read spanSet // since the last barrier
	hits := func(set *spanSet, xs []span) bool {
		for _, x := range xs {
			if set.overlaps(x) {
				return true
			}
		}
		return false
	}
	mem := map[int][]span{} // the memory each result of a control step may be
	spans := func(b int) []span {
		if m, ok := mem[b]; ok {
			return m
		}
		return []span{p.span(b)}
	}
	for _, st := range p.Steps { // in order: a chain's earlier links first
		for _, pr := range passPairs(p, st) {
			if _, ok := mem[pr[1]]; !ok {
				mem[pr[1]] = []span{p.span(pr[1])}
			}
			mem[pr[1]] = append(mem[pr[1]], spans(pr[0])...)
		}
	}
	for i := range p.Steps {
		st := &p.Steps[i]
		// A control step ends the submit (it reads something back); a
		// device loop of a known count of dispatches does not, and has
		// its barriers.
		if st.Kind != StepDispatch && st.Dispatches == 0 {
			wrote.clear()
			read.clear()
			continue
		}
		nr := len(st.Buffers) - st.Writes
		need := st.Dispatches > 0 // the runtime puts a barrier before every device loop's dispatch
		for j, b := range st.Buffers {
			x := spans(b)
			if hits(&wrote, x) || j >= nr && hits(&read, x) {
				need = true
			}
		}
		if need {
			st.AfterWrites = true
			wrote.clear()
			read.clear()
		}
		for j, b := range st.Buffers {
			for _, x := range spans(b) {
				if j < nr {
					read.add(x)
				} else {
					wrote.add(x)
				}
			}
		}
	}
	return nil
}

// LiveAtPeak lists the buffers that hold device memory at the program's
// busiest step: the temporaries live then, and every parameter and
// constant.
func (p *Program) LiveAtPeak() []int {
	at, lr := peakTime(p)
	var out []int
	for b, buf := range p.Buffers {
		if buf.InArena() {
			if r, ok := lr[b]; !ok || r.first > at || r.last < at {
				continue
			}
		} else if buf.Kind == BufBound || buf.Kind == BufTemp && buf.Alias != 0 {
			continue // a loop's result, or a result in a parameter's memory
		}
		out = append(out, b)
	}
	return out
}

// checkPlan verifies what the passes above promise of the finished
// program, so that a compiler bug stops compilation, naming itself,
// instead of running a wrong plan: each dispatch binds as many buffers
// as its kernel declares; every temporary is written before any step
// reads it; temporaries live at the same time never share memory, and
// an in-place update lines up element for element.
func checkPlan(s *state) error {
	p := s.prog
	written := map[int]bool{}
	// An empty array has nothing to write: its kernel is skipped, and a
	// read of it reads nothing.
	for b, buf := range p.Buffers {
		if buf.Kind == BufTemp && buf.Shape.IsArray() && buf.Shape.NumElements() == 0 {
			written[b] = true
		}
	}
	for i, st := range p.Steps {
		if !st.Kind.IsDispatch() {
			for _, in := range st.In {
				for _, b := range in {
					if p.Buffers[b].Kind == BufTemp && !written[b] {
						return fmt.Errorf("lower: step %d (%s) reads temporary %s before any step writes it", i, st.Inst, p.Buffers[b].Name)
					}
				}
			}
			for _, b := range st.Out {
				written[b] = true
			}
			continue
		}
		k := p.Kernels[st.Kernel]
		if len(st.Buffers) != k.Bindings {
			return fmt.Errorf("lower: step %d (%s) binds %d buffers to kernel %s of %d bindings", i, st.Inst, len(st.Buffers), k.Name, k.Bindings)
		}
		// A descriptor binds at most maxStorageBufferRange bytes; a larger
		// array is reached through its buffer device address, where the
		// device has them (kgen's addBuffer).
		for j, b := range st.Buffers {
			buf := p.Buffers[b]
			if s.tg.MaxStorageRange == 0 || PaddedSize(buf.Size) <= s.tg.MaxStorageRange || slices.Contains(k.Addressed, j) {
				continue
			}
			if !s.tg.BufferAddress {
				return fmt.Errorf("lower: %s (%s): an array of %d bytes needs a device with bufferDeviceAddress and shaderInt64: this one binds at most %d bytes to a kernel (maxStorageBufferRange)",
					buf.Name, buf.Shape, buf.Size, s.tg.MaxStorageRange)
			}
			return fmt.Errorf("lower: internal error: step %d (%s) binds %s (%d bytes) to binding %d of kernel %s, which is not addressed",
				i, st.Inst, buf.Name, buf.Size, j, k.Name)
		}
		nr := len(st.Buffers) - st.Writes
		for _, b := range st.Buffers[:nr] {
			if p.Buffers[b].Kind == BufTemp && !written[b] {
				return fmt.Errorf("lower: step %d (%s) reads temporary %s before any step writes it", i, st.Inst, p.Buffers[b].Name)
			}
		}
		for _, b := range st.Buffers[nr:] {
			written[b] = true
		}
	}
	// The caller reads the results after the last step.
	for _, b := range p.Outputs {
		if p.Buffers[b].Kind == BufTemp && !written[b] {
			return fmt.Errorf("lower: result %s is a temporary no step writes", p.Buffers[b].Name)
		}
	}
	return checkSharing(p, liveRanges(p))
}

// checkSharing verifies that temporaries live at once never share
// memory, and that an in-place update lines up with the value it
// overwrites, element for element. A sweep over time keeps the values
// live by address: in a right plan their memory is disjoint, so a value
// coming live overlaps one of them only if it overlaps its nearest
// neighbour below or above (rankSet), and the check costs O(n log n)
// however many values are live at once (a training step's activations).
func checkSharing(p *Program, lr map[int]liveRange) error {
	bufs := make([]int, 0, len(lr))
	for b := range lr {
		bufs = append(bufs, b)
	}
	sort.Ints(bufs)
	spans := make(map[int]span, len(bufs))
	for _, b := range bufs {
		spans[b] = p.span(b)
	}
	// Ranks by address: memory space, then offset.
	byAddr := slices.Clone(bufs)
	slices.SortFunc(byAddr, func(x, y int) int {
		a, b := spans[x], spans[y]
		return cmp.Or(cmp.Compare(a.space, b.space), cmp.Compare(a.lo, b.lo), cmp.Compare(x, y))
	})
	rank := make(map[int]int, len(bufs))
	for r, b := range byAddr {
		rank[b] = r
	}
	byFirst := slices.Clone(bufs)
	slices.SortStableFunc(byFirst, func(x, y int) int { return cmp.Compare(lr[x].first, lr[y].first) })
	byLast := slices.Clone(bufs)
	slices.SortStableFunc(byLast, func(x, y int) int { return cmp.Compare(lr[x].last, lr[y].last) })
	// Every span holds memory (PaddedSize is at least 4 bytes).
	live := newRankSet(len(bufs))
	next := 0 // in byLast: the first value not yet dead
	for _, b := range byFirst {
		for ; next < len(byLast) && lr[byLast[next]].last < lr[b].first; next++ {
			live.remove(rank[byLast[next]])
		}
		lo, hi := live.neighbours(rank[b])
		for _, r := range []int{lo, hi} {
			if r >= 0 && spans[byAddr[r]].overlaps(spans[b]) {
				return fmt.Errorf("lower: %s and %s are live at once and share memory", p.Buffers[byAddr[r]].Name, p.Buffers[b].Name)
			}
		}
		live.add(rank[b])
	}
	// A value read in place by a step (its life ends on the step's even
	// half) may share memory with one the step writes (whose life starts
	// on the odd half after it) only exactly: both are the step's own
	// buffers, so the pairs are few.
	starts := map[int][]int{}
	for _, b := range bufs {
		starts[lr[b].first] = append(starts[lr[b].first], b)
	}
	for _, a := range bufs {
		for _, b := range starts[lr[a].last+1] {
			if lr[a].adjacent(lr[b]) && spans[a].overlaps(spans[b]) && p.Buffers[a].Offset != p.Buffers[b].Offset {
				return fmt.Errorf("lower: %s updated in place over %s does not line up", p.Buffers[b].Name, p.Buffers[a].Name)
			}
		}
	}
	return nil
}
