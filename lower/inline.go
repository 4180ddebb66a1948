package lower

// inlineCalls replaces call and fusion instructions of the entry
// computation by copies of the computations they call (recursively),
// opt-barrier by its operand, and a map of a scalar elementwise
// computation by that computation's ops over the map's arrays, so that
// the later passes see one flat computation. Pre-fused input is thereby re-fused by vkjit's own passes.
// The user's module is not modified: the entry is rebuilt in a new
// module that shares everything else.
func inlineCalls(s *state) error {
	entry := s.mod.Entry.Flatten(s.mod.Entry.Name)
	entry.IsEntry = true
	mod := *s.mod
	mod.Entry = entry
	s.mod = &mod
	return nil
}
