package stablehlo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The interpreter's probes in a while loop's body. A probe there runs
// once per iteration, and check.expect_serialized_eq names the iteration
// it compares: the loop carries, for each probe_id a check reads, a
// buffer of the iterations the checks name (the first N) and a counter;
// the body writes the probe's value at the counter while it is below N.
// Each check also compares whether the loop ran that iteration.

// probeChecks maps each probe_id the entry's check.expect_serialized_eq
// ops read to one more than the largest iteration they name.
func probeChecks(f *Func) map[string]int64 {
	out := map[string]int64{}
	for _, b := range f.Body.Blocks {
		for _, op := range b.Ops {
			name := op.Name
			if name == "stablehlo.custom_call" {
				name = op.Callee
			}
			if strings.TrimSuffix(name, "_const") != "check.expect_serialized_eq" {
				continue
			}
			id := op.Attr("probe_id")
			if id == nil || id.Kind != StringAttr {
				continue
			}
			iter := int64(0)
			if a := op.FirstAttr("iteration", "iter"); a != nil {
				if v, err := a.Int(); err == nil {
					iter = v
				}
			}
			if iter >= 0 && iter+1 > out[id.Text] {
				out[id.Text] = iter + 1
			}
		}
	}
	return out
}

// loopProbe is a probe a while body records.
type loopProbe struct {
	id    string
	n     int64     // the iterations kept
	shape hlo.Shape // the probed value's
}

// bodyProbes lists the probes of body's own ops whose values a check
// reads, in order of probe_id.
func (t *translator) bodyProbes(body *Region) []loopProbe {
	var out []loopProbe
	for _, b := range body.Blocks {
		for _, op := range b.Ops {
			if op.Name != "interpreter.probe" || len(op.OutTypes) != 1 {
				continue
			}
			id := op.Attr("probe_id")
			if id == nil || id.Kind != StringAttr || t.probeIters[id.Text] == 0 {
				continue
			}
			out = append(out, loopProbe{id: id.Text, n: t.probeIters[id.Text], shape: op.OutTypes[0].Shape()})
		}
	}
	slices.SortFunc(out, func(a, b loopProbe) int { return strings.Compare(a.id, b.id) })
	return out
}

// probeState extends a while's state with each probe's buffer and the
// iteration counter.
func probeState(state hlo.Shape, probes []loopProbe) hlo.Shape {
	if len(probes) == 0 {
		return state
	}
	out := hlo.TupleShape(slices.Clone(state.Tuple)...)
	for _, p := range probes {
		out.Tuple = append(out.Tuple, hlo.ArrayShape(p.shape.Elem, append([]int64{p.n}, p.shape.Dims...)...))
	}
	out.Tuple = append(out.Tuple, hlo.ArrayShape(hlo.S32))
	return out
}

// probeInits are the buffers' and the counter's first values.
func probeInits(cb *hlo.CompBuilder, state hlo.Shape, from int) []*hlo.Instruction {
	var out []*hlo.Instruction
	for _, s := range state.Tuple[from:] {
		out = append(out, zeros(cb, s))
	}
	return out
}

// probeUpdates are the body's next buffers (the probed value written at
// the counter while it is below the buffer's length) and counter; from
// is the state index of the first buffer.
func (t *translator) probeUpdates(cb *hlo.CompBuilder, param *hlo.Instruction, state hlo.Shape, from int, probes []loopProbe, got map[string]*hlo.Instruction) ([]*hlo.Instruction, error) {
	gte := func(i int) *hlo.Instruction {
		return cb.Op(hlo.OpGetTupleElement, param).Set("index", fmt.Sprint(i)).WithShape(state.Tuple[i]).Instruction
	}
	count := gte(len(state.Tuple) - 1)
	zero := cb.Constant(hlo.ScalarLiteral(hlo.S32, 0))
	var out []*hlo.Instruction
	for i, p := range probes {
		v := got[p.id]
		if v == nil {
			return nil, fmt.Errorf("probe %q made no value in the loop's body", p.id)
		}
		buf := gte(from + i)
		row := cb.Op(hlo.OpReshape, v).WithShape(hlo.ArrayShape(p.shape.Elem, append([]int64{1}, p.shape.Dims...)...)).Instruction
		starts := []*hlo.Instruction{buf, row, count}
		for range p.shape.Dims {
			starts = append(starts, zero)
		}
		upd := cb.Op(hlo.OpDynamicUpdateSlice, starts...).WithShape(buf.Shape).Instruction
		below := cb.Op(hlo.OpCompare, count, cb.Constant(hlo.ScalarLiteral(hlo.S32, float64(p.n)))).WithShape(hlo.ArrayShape(hlo.PRED)).Set("direction", "LT").Instruction
		keep := cb.Op(hlo.OpBroadcast, below).WithShape(hlo.ArrayShape(hlo.PRED, buf.Shape.Dims...)).Set("dimensions", "{}").Instruction
		out = append(out, cb.Op(hlo.OpSelect, keep, upd, buf).WithShape(buf.Shape).Instruction)
	}
	one := cb.Constant(hlo.ScalarLiteral(hlo.S32, 1))
	return append(out, cb.Op(hlo.OpAdd, count, one).WithShape(count.Shape).Instruction), nil
}

// probeResults keeps, after the loop w, each probe's iterations for the
// checks (t.probes) and whether the loop ran each (t.probeRan).
func (t *translator) probeResults(cb *hlo.CompBuilder, w *hlo.Instruction, state hlo.Shape, from int, probes []loopProbe) {
	gte := func(i int) *hlo.Instruction {
		return cb.Op(hlo.OpGetTupleElement, w).Set("index", fmt.Sprint(i)).WithShape(state.Tuple[i]).Instruction
	}
	count := gte(len(state.Tuple) - 1)
	for i, p := range probes {
		buf := gte(from + i)
		for k := int64(0); k < p.n; k++ {
			parts := []string{fmt.Sprintf("[%d:%d:1]", k, k+1)}
			for _, d := range p.shape.Dims {
				parts = append(parts, fmt.Sprintf("[0:%d:1]", d))
			}
			sl := cb.Op(hlo.OpSlice, buf).WithShape(hlo.ArrayShape(p.shape.Elem, append([]int64{1}, p.shape.Dims...)...)).Set("slice", "{"+strings.Join(parts, ", ")+"}").Instruction
			t.probes[p.id] = append(t.probes[p.id], cb.Op(hlo.OpReshape, sl).WithShape(p.shape).Instruction)
			ran := cb.Op(hlo.OpCompare, count, cb.Constant(hlo.ScalarLiteral(hlo.S32, float64(k)))).WithShape(hlo.ArrayShape(hlo.PRED)).Set("direction", "GT").Instruction
			t.probeRan[p.id] = append(t.probeRan[p.id], ran)
		}
	}
}
