package hlo

// Side effects. XLA removes an instruction nothing reads unless it has
// an effect beyond its result (HloInstruction::HasSideEffect: infeed,
// outfeed, send, recv, a custom-call marked custom_call_has_side_effect,
// and any instruction whose called computations hold one). vkjit's
// passes drop what nothing reads, so a module holding such an effect
// must be refused, read or not: run without it, the program would
// compute the same results and silently skip what the module asked for
// (a value sent to the host, a jax.debug.print). Collectives are left
// out: vkjit runs a module as one process, where a collective among
// one process is its result alone, and one joining others is refused
// where it is computed.

// HasSideEffect reports whether in itself (not what it calls) has an
// effect beyond its result that vkjit does not perform: a transfer to
// or from the host, or a custom-call marked with a side effect whose
// target vkjit does not run (those it runs compute their results only).
func (in *Instruction) HasSideEffect() bool {
	switch in.Op {
	case OpInfeed, OpOutfeed, OpSend, OpSendDone, OpRecv, OpRecvDone:
		return true
	case OpCustomCall:
		if !in.A.SideEffect {
			return false
		}
		known, err := KnownCustomCall(in)
		return known == nil || err != nil
	}
	return false
}

// SideEffects lists the instructions with side effects (HasSideEffect)
// that a run of m may reach: in the entry and in every computation its
// instructions call, directly or through others, whether or not any
// value depends on them. Computations nothing in the entry calls are
// never run and are not looked at.
func (m *Module) SideEffects() []*Instruction {
	var out []*Instruction
	m.walkCalls(func(c *Computation) []*Instruction { return c.Instructions }, func(_ *Computation, ins []*Instruction) {
		for _, in := range ins {
			if in.HasSideEffect() {
				out = append(out, in)
			}
		}
	})
	return out
}

// LiveComputations lists the computations a run of m computes with:
// the entry first, then those called by the instructions its root
// depends on, directly or through others (Computation.Reachable).
func (m *Module) LiveComputations() []*Computation {
	var out []*Computation
	m.Live(func(c *Computation, _ []*Instruction) { out = append(out, c) })
	return out
}

// Live calls f on each of m's LiveComputations, in that order, with the
// instructions of it a run computes (its Reachable ones).
func (m *Module) Live(f func(c *Computation, reachable []*Instruction)) {
	m.walkCalls((*Computation).Reachable, f)
}

// walkCalls calls f on the entry and on each computation called by the
// instructions that each lists of a computation walked before, each
// once, a computation before those it calls, with what each listed.
func (m *Module) walkCalls(each func(*Computation) []*Instruction, f func(*Computation, []*Instruction)) {
	seen := map[*Computation]bool{}
	var visit func(c *Computation)
	visit = func(c *Computation) {
		if c == nil || seen[c] {
			return
		}
		seen[c] = true
		ins := each(c)
		f(c, ins)
		for _, in := range ins {
			for _, cc := range in.Called {
				visit(cc)
			}
		}
	}
	visit(m.Entry)
}

// SideEffectError says why vkjit refuses in, an instruction with a side
// effect (HasSideEffect), wherever it is in the module.
func SideEffectError(in *Instruction) string {
	const why = "; vkjit refuses it even where no result depends on it, as XLA would run it all the same"
	switch in.Op {
	case OpInfeed, OpRecv, OpRecvDone:
		return in.Op.String() + " takes values from the host or another device, which vkjit does not do" + why
	case OpOutfeed, OpSend, OpSendDone:
		return in.Op.String() + " sends values to the host or another device, which vkjit does not do" + why
	}
	return UnknownCustomCall(in.A.Target) + "; it is marked custom_call_has_side_effect" + why
}
