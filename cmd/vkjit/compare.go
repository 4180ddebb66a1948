package main

import (
	"fmt"
	"io"
	"math"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
)

// defaultTolerance is --compare's (rtol, atol) for an element type when
// the flags do not set them: exact for integers and pred; for floats
// room for f32 accumulation against the evaluator's float64 in long dots
// and reductions.
func defaultTolerance(t hlo.ElementType) (float64, float64) {
	switch t {
	case hlo.F16, hlo.BF16:
		return 1e-2, 1e-2
	case hlo.F32:
		return 1e-4, 1e-5
	case hlo.F64:
		return 1e-10, 1e-10
	}
	return 0, 0
}

// computedIn returns, for each result leaf of m's entry, the 16-bit
// float type (bf16 before f16) of any value it is computed through, or
// hlo.Invalid: a result converted to f32 at the end of a bf16
// computation carries bf16's rounding, and the device and the evaluator
// round their wider sums to bf16 at different points (an f32 dot's sum
// against float64's), so its tolerance is bf16's. Parameters and
// constants do not count (their values are exact); a called
// computation's values all do.
func computedIn(m *hlo.Module) []hlo.ElementType {
	rank := map[hlo.ElementType]int{hlo.BF16: 2, hlo.F16: 1}
	narrowest := func(a, b hlo.ElementType) hlo.ElementType {
		if rank[b] > rank[a] {
			return b
		}
		return a
	}
	// Each instruction's and computation's type once, shared by every
	// result (HLO is acyclic; one in progress reads as Invalid, a guard
	// all the same).
	memo := map[*hlo.Instruction]hlo.ElementType{}
	comps := map[*hlo.Computation]hlo.ElementType{}
	var of func(in *hlo.Instruction) hlo.ElementType
	of = func(in *hlo.Instruction) hlo.ElementType {
		if t, ok := memo[in]; ok {
			return t
		}
		memo[in] = hlo.Invalid
		t := hlo.Invalid
		if in.Op != hlo.OpParameter && in.Op != hlo.OpConstant {
			for _, l := range in.Shape.Leaves() {
				t = narrowest(t, l.Elem)
			}
		}
		for _, c := range in.Called {
			ct, ok := comps[c]
			if !ok {
				comps[c] = hlo.Invalid
				for _, x := range c.Instructions {
					ct = narrowest(ct, of(x))
				}
				comps[c] = ct
			}
			t = narrowest(t, ct)
		}
		for _, o := range in.Operands {
			t = narrowest(t, of(o))
		}
		memo[in] = t
		return t
	}
	root := m.Entry.Root
	n := len(root.Shape.Leaves())
	out := make([]hlo.ElementType, n)
	for i := range out {
		from := root
		if root.Op == hlo.OpTuple && len(root.Operands) == n {
			from = root.Operands[i]
		}
		out[i] = of(from)
	}
	return out
}

// asParts views a complex tensor as the real tensor of its parts (a last
// dimension of 2: real, imaginary), the same bytes; others as they are.
func asParts(t *vkjit.Tensor) *vkjit.Tensor {
	part := map[vkjit.DType]vkjit.DType{vkjit.C64: vkjit.F32, vkjit.C128: vkjit.F64}
	if p, ok := part[t.Type]; ok {
		return &vkjit.Tensor{Type: p, Dims: append(append([]int64{}, t.Dims...), 2), Data: t.Data}
	}
	return t
}

// compareOutputs prints, per output, the largest absolute and relative
// error of got against want, and reports whether every element is within
// atol*max(1, M) + rtol*|want|, M being the output's largest finite
// magnitude: the absolute term scales with the output, so that
// accumulation error in long sums near zero does not count as a
// difference (NaN matches NaN, infinities must match exactly). The
// default tolerances are the output type's, or those of the type
// through[i] names (computedIn) where looser.
func compareOutputs(w io.Writer, got []*vkjit.Tensor, want []*hlo.Literal, through []hlo.ElementType, rtol, atol float64) bool {
	ok := true
	for i, g := range got {
		wl := want[i]
		wt := &vkjit.Tensor{Type: vkjit.DType(wl.Shape.Elem), Dims: wl.Shape.Dims, Data: wl.Data}
		spec := g.Spec()
		g, wt = asParts(g), asParts(wt) // complex numbers part by part
		rt, at := defaultTolerance(hlo.ElementType(g.Type))
		if i < len(through) && through[i] != hlo.Invalid {
			if r, a := defaultTolerance(through[i]); r > rt {
				rt, at = r, a
			}
		}
		if rtol >= 0 {
			rt = rtol
		}
		if atol >= 0 {
			at = atol
		}
		var maxAbs, maxRel, scale float64
		bad := int64(0)
		n := g.NumElements()
		for j := int64(0); j < n; j++ {
			if v := math.Abs(wt.Float64At(j)); !math.IsInf(v, 0) && !math.IsNaN(v) {
				scale = math.Max(scale, v)
			}
		}
		atEff := at * math.Max(1, scale)
		for j := int64(0); j < n; j++ {
			a, b := g.Float64At(j), wt.Float64At(j)
			if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
				continue
			}
			d := math.Abs(a - b)
			if math.IsNaN(d) || math.IsInf(d, 0) {
				// A NaN or an infinity on either side that the other
				// does not match: no tolerance covers it (rtol*|inf| is
				// infinite, so the test below would pass it).
				maxAbs, maxRel = math.Inf(1), math.Inf(1)
				bad++
				continue
			}
			maxAbs = math.Max(maxAbs, d)
			if b != 0 {
				maxRel = math.Max(maxRel, d/math.Abs(b))
			}
			if !(d <= atEff+rt*math.Abs(b)) {
				bad++
			}
		}
		status := "ok"
		if bad > 0 {
			status = fmt.Sprintf("FAIL: %d of %d elements beyond rtol=%g atol=%g", bad, n, rt, at)
			ok = false
		}
		fmt.Fprintf(w, "out%d: %s max abs err %.3g, max rel err %.3g: %s\n", i, spec, maxAbs, maxRel, status)
	}
	return ok
}
