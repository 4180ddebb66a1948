package lower

import (
	"sort"
)

// Memory planning: the temporaries of a program share one arena, placed
// by their live ranges over the steps so that values whose lives do not
// overlap share memory (XLA's heap simulator does the same with
// best-fit placement of buffers sorted by size). Parameters, constants
// and the results of while and conditional steps keep buffers of their
// own: the runtime uploads, keeps or binds those.

// liveRange is the steps from the first to the last that touch a buffer.
type liveRange struct{ first, last int }

func (a liveRange) overlaps(b liveRange) bool { return a.first <= b.last && b.first <= a.last }

// liveRanges returns the live range of every temporary of the program:
// results live to the end; a temporary no step touches (an empty
// result) lives throughout.
func liveRanges(p *Program) map[int]liveRange {
	end := len(p.Steps)
	lr := map[int]liveRange{}
	touch := func(b, at int) {
		if p.Buffers[b].Kind != BufTemp {
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
		for _, b := range stepBuffers(st) {
			touch(b, i)
		}
	}
	for _, b := range p.Outputs {
		touch(b, end)
	}
	for b, buf := range p.Buffers {
		if _, ok := lr[b]; !ok && buf.Kind == BufTemp {
			lr[b] = liveRange{0, end}
		}
	}
	return lr
}

// stepBuffers lists every buffer a step reads or writes.
func stepBuffers(st Step) []int {
	if st.Kind == StepDispatch {
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
	temps := make([]int, 0, len(lr))
	for b := range lr {
		temps = append(temps, b)
	}
	size := func(b int) int64 { return alignUp(paddedSize(p.Buffers[b].Size), align) }
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
	}
	var done []placed
	for _, b := range temps {
		var off int64
		if s.opts.NoReuse {
			for _, d := range done {
				off = max(off, d.end)
			}
		} else {
			var busy []placed
			for _, d := range done {
				if lr[d.b].overlaps(lr[b]) {
					busy = append(busy, d)
				}
			}
			sort.Slice(busy, func(i, j int) bool { return busy[i].off < busy[j].off })
			for _, d := range busy {
				if off+size(b) <= d.off {
					break // fits in the gap before d
				}
				off = max(off, alignUp(d.end, align))
			}
		}
		p.Buffers[b].Offset = off
		p.TempBytes += size(b)
		done = append(done, placed{b, off, off + size(b)})
		p.ArenaSize = max(p.ArenaSize, off+size(b))
	}
	// The lower bound no placement can beat: the bytes live at the
	// busiest step.
	for at := 0; at <= len(p.Steps); at++ {
		var live int64
		for b, r := range lr {
			if r.first <= at && at <= r.last {
				live += size(b)
			}
		}
		p.LiveBound = max(p.LiveBound, live)
	}
	return nil
}

// span is the memory a buffer occupies: a range of the arena for a
// temporary, the buffer itself otherwise.
type span struct {
	space  int // -1: the arena; otherwise the buffer's own index
	lo, hi int64
}

func (a span) overlaps(b span) bool { return a.space == b.space && a.lo < b.hi && b.lo < a.hi }

func (p *Program) span(b int) span {
	buf := p.Buffers[b]
	if buf.Kind == BufTemp {
		return span{-1, buf.Offset, buf.Offset + paddedSize(buf.Size)}
	}
	return span{b, 0, paddedSize(buf.Size)}
}

// planBarriers marks the steps that must wait for earlier ones: a read
// of memory written since the last barrier, or a write of memory read or
// written since then (temporaries that share arena memory make the
// second kind). The runtime finishes all work around control steps.
func planBarriers(s *state) error {
	p := s.prog
	var wrote, read []span
	hits := func(list []span, x span) bool {
		for _, y := range list {
			if x.overlaps(y) {
				return true
			}
		}
		return false
	}
	for i := range p.Steps {
		st := &p.Steps[i]
		if st.Kind != StepDispatch {
			wrote, read = nil, nil
			continue
		}
		nr := len(st.Buffers) - st.Writes
		need := false
		for j, b := range st.Buffers {
			x := p.span(b)
			if hits(wrote, x) || j >= nr && hits(read, x) {
				need = true
			}
		}
		if need {
			st.AfterWrites = true
			wrote, read = nil, nil
		}
		for j, b := range st.Buffers {
			if j < nr {
				read = append(read, p.span(b))
			} else {
				wrote = append(wrote, p.span(b))
			}
		}
	}
	return nil
}
