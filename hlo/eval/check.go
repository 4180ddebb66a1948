package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// notRun lists the ops outside vkjit's op set: they parse and verify,
// and running them is an error that names them.
var notRun = map[hlo.Opcode]bool{
	hlo.OpInfeed: true, hlo.OpOutfeed: true, hlo.OpSend: true, hlo.OpSendDone: true,
	hlo.OpRecv: true, hlo.OpRecvDone: true, hlo.OpRaggedAllToAll: true,
	hlo.OpRng: true, hlo.OpRngGetAndUpdateState: true,
	hlo.OpDynamicReshape: true, hlo.OpSetDimensionSize: true,
}

// Check reports, before any work, the first op or element type in the
// module that the evaluator does not run, as an *Unsupported error at the
// instruction's position: among what a run computes (the instructions
// the roots of the entry and of what it calls depend on, as the device
// path computes them), and any side effect, read or not
// (hlo.Module.SideEffects).
func Check(m *hlo.Module) error {
	for _, in := range m.SideEffects() {
		what := in.Op.String()
		if in.Op == hlo.OpCustomCall {
			what = "custom-call " + in.A.Target
		}
		return in.Errorf("%w", &Unsupported{what})
	}
	var err error
	m.Live(func(_ *hlo.Computation, reachable []*hlo.Instruction) {
		if err == nil {
			err = checkInstructions(reachable)
		}
	})
	return err
}

// checkInstructions is Check of the instructions a run computes.
func checkInstructions(ins []*hlo.Instruction) error {
	for _, in := range ins {
		if notRun[in.Op] {
			return in.Errorf("%w", &Unsupported{in.Op.String()})
		}
		if in.Op == hlo.OpCustomCall {
			c, err := hlo.KnownCustomCall(in)
			if err != nil {
				return in.Errorf("%w", err)
			}
			if c == nil {
				return in.Errorf("%w", &Unsupported{"custom-call " + in.A.Target})
			}
		}
		// A bounded dynamic dimension (f32[<=8]) runs at its bound, as
		// on the device: an argument must have that size, so the
		// results are those of the size it has, and only its size
		// asked for (get-dimension-size) is refused.
		for _, leaf := range in.Shape.Leaves() {
			if leaf.Elem != hlo.Token && !InTypeSet(leaf.Elem) {
				return in.Errorf("%w", &Unsupported{"element type " + leaf.Elem.String()})
			}
		}
	}
	return nil
}
