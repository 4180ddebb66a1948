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
// difference (NaN matches NaN, infinities must match exactly).
func compareOutputs(w io.Writer, got []*vkjit.Tensor, want []*hlo.Literal, rtol, atol float64) bool {
	ok := true
	for i, g := range got {
		wl := want[i]
		wt := &vkjit.Tensor{Type: vkjit.DType(wl.Shape.Elem), Dims: wl.Shape.Dims, Data: wl.Data}
		spec := g.Spec()
		g, wt = asParts(g), asParts(wt) // complex numbers part by part
		rt, at := defaultTolerance(hlo.ElementType(g.Type))
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
