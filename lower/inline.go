package lower

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// inlineCalls replaces call and fusion instructions of the entry
// computation by copies of the computations they call (recursively),
// opt-barrier, domain and add-dependency by their (first) operands, the
// asynchronous pairs (async-start/done, copy-start/done) by what they
// compute, and a map of a scalar elementwise computation by that
// computation's ops over the map's arrays (hlo.Flattens), so that
// the later passes see one flat computation. Pre-fused input is thereby re-fused by vkjit's own passes.
// The user's module is not modified: the entry is rebuilt in a new
// module that shares everything else. The computations the entry still
// calls (loop bodies, branches, reducers) are flattened alike, in copies
// (rewriteAll): lower complex refused a map of complex numbers in a
// loop body.
func inlineCalls(s *state) error {
	entry := s.mod.Entry.Flatten(s.mod.Entry.Name)
	entry.IsEntry = true
	mod := *s.mod
	mod.Entry = entry
	s.mod = &mod
	// A copy is made only of a computation that has (or calls one that
	// has) what Flatten takes apart, so every copy is a change.
	return rewriteAll(entry, func(c *hlo.Computation) (bool, error) { return c != entry, nil },
		func(c *hlo.Computation) bool { return hasOp(c, hlo.Flattens) })
}

// rewriteAll applies rewrite to the entry (the copy inlineCalls made)
// in place, and to copies of the computations it calls, recursively,
// each once however many instructions call it. A while body that runs
// as a device loop becomes its kernel as it stands (kgen.DeviceLoopKernel),
// and the passes that take complex numbers and narrow types apart
// rewrite called computations too: an op that a pass before them left
// in a body was one they refused. rewrite reports whether it changed
// its computation; a computation where it changes nothing, there or in
// what it calls, is kept as it is, so that plans change only where
// something was rewritten. might, when not nil, says whether rewrite
// could change anything in a computation and what it calls (else no
// copy is made).
func rewriteAll(entry *hlo.Computation, rewrite func(*hlo.Computation) (bool, error), might func(*hlo.Computation) bool) error {
	done := map[*hlo.Computation]*hlo.Computation{}
	var visit func(c *hlo.Computation) (bool, error)
	visit = func(c *hlo.Computation) (bool, error) {
		changed, err := rewrite(c)
		if err != nil {
			return false, err
		}
		for _, in := range c.Instructions {
			for i, cc := range in.Called {
				nc, ok := done[cc]
				if !ok {
					nc = cc
					if might == nil || might(cc) {
						cp := cc.Flatten(cc.Name)
						ch, err := visit(cp)
						if err != nil {
							return false, err
						}
						if ch {
							nc = cp
						}
					}
					done[cc] = nc
				}
				if nc == cc {
					continue
				}
				// A copied instruction shares its Called with the
				// one it copies, which may be the user's.
				in.Called = slices.Clone(in.Called)
				in.Called[i] = nc
				changed = true
			}
		}
		return changed, nil
	}
	_, err := visit(entry)
	return err
}
