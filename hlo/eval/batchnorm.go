package eval

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// batchNorm computes batch-norm-training, -inference and -grad by the
// formulas of XLA's BatchNormExpander (mean and variance as E[x] and
// E[x^2] - E[x]^2, the count per feature converted to the type), each
// step rounded to the type as the expanded ops round (f16 and bf16 in
// f32, rounded once at the end, as vkjit computes them); the sums over
// a feature's values are exact in float64 and rounded once. A nonzero
// nudge moves each inexact step's result (the sums, the divisions and
// the reciprocal square roots, which a device rounds otherwise or
// computes to within an ulp) an ulp that way (RunNudged): a result
// where x*ts and mean*ts nearly cancel moves by their ulps, not its
// own.
func batchNorm(in *hlo.Instruction, ops []*hlo.Literal, nudge int) (*Value, error) {
	f, eps32, err := hlo.BatchNormAttrs(in)
	if err != nil {
		return nil, err
	}
	x := ops[0]
	out := x.Shape.Elem
	t := out
	if t == hlo.F16 || t == hlo.BF16 {
		t = hlo.F32
	}
	r := func(v float64) float64 { return round(t, v) }
	// ri rounds an inexact step's result, nudged.
	ri := func(v float64) float64 {
		v = r(v)
		if nudge != 0 && v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			v = r(v + float64(nudge)*ulpOf(t, v))
		}
		return v
	}
	dims := x.Shape.Dims
	_, inner := aroundDim(dims, f)
	nf := dims[f]
	total := x.Shape.NumElements()
	var count float64 // elements per feature; none when there are no features (every result empty)
	if nf > 0 {
		count = r(float64(total / nf))
	}
	eps := r(float64(eps32))
	feature := func(i int64) int64 { return i / inner % nf }
	vec := func(l *hlo.Literal) []float64 {
		v := make([]float64, l.Shape.NumElements())
		for i := range v {
			v[i] = r(get(l, int64(i)).f)
		}
		return v
	}
	xs := vec(x)
	// sums adds g(i) over each feature's elements.
	sums := func(g func(i int64) float64) []float64 {
		s := make([]float64, nf)
		for i := range total {
			s[feature(i)] += g(i)
		}
		for c := range s {
			s[c] = ri(s[c])
		}
		return s
	}
	// rsqrt is the rsqrt op's: in f32 the device's 1/sqrt, each step
	// correctly rounded (RsqrtF32), as the expander's rsqrt computes it.
	rsqrt := func(v float64) float64 {
		if t == hlo.F32 {
			return ri(float64(RsqrtF32(float32(v))))
		}
		return ri(1 / math.Sqrt(v))
	}
	lit := func(v []float64, like hlo.Shape) *Value {
		l := zeros(hlo.ArrayShape(out, like.Dims...))
		for i, e := range v {
			put(l.Data, out, int64(i), scalar{f: round(out, e)})
		}
		return &Value{Lit: l}
	}
	fshape := hlo.ArrayShape(out, nf)
	y := make([]float64, total)
	switch in.Op {
	case hlo.OpBatchNormInference:
		scale, offset, mean, v := vec(ops[1]), vec(ops[2]), vec(ops[3]), vec(ops[4])
		for i := range total {
			c := feature(i)
			ts := r(scale[c] * rsqrt(r(v[c]+eps)))
			shift := r(offset[c] - r(mean[c]*ts))
			y[i] = r(r(xs[i]*ts) + shift)
		}
		return lit(y, x.Shape), nil
	case hlo.OpBatchNormTraining:
		scale, offset := vec(ops[1]), vec(ops[2])
		mean := sums(func(i int64) float64 { return xs[i] })
		sq := sums(func(i int64) float64 { return r(xs[i] * xs[i]) })
		v := make([]float64, nf)
		for c := range mean {
			mean[c] = ri(mean[c] / count)
			v[c] = r(ri(sq[c]/count) - r(mean[c]*mean[c]))
		}
		for i := range total {
			c := feature(i)
			norm := r(r(xs[i]-mean[c]) * rsqrt(r(v[c]+eps)))
			y[i] = r(r(norm*scale[c]) + offset[c])
		}
		return &Value{Tuple: []*Value{lit(y, x.Shape), lit(mean, fshape), lit(v, fshape)}}, nil
	default: // grad
		scale, mean, v, dy := vec(ops[1]), vec(ops[2]), vec(ops[3]), vec(ops[4])
		xm := func(i int64) float64 { return r(xs[i] - mean[feature(i)]) }
		i3 := sums(func(i int64) float64 { return r(dy[i] * xm(i)) })
		gradOffset := sums(func(i int64) float64 { return dy[i] })
		gradScale := make([]float64, nf)
		for c := range gradScale {
			gradScale[c] = r(i3[c] * rsqrt(r(v[c]+eps)))
		}
		for i := range total {
			c := feature(i)
			i5 := ri(r(i3[c]*xm(i)) / r(v[c]+eps))
			k := ri(r(scale[c]*rsqrt(r(v[c]+eps))) / count)
			i6 := r(r(r(dy[i]*count)-gradOffset[c]) - i5)
			y[i] = r(k * i6)
		}
		return &Value{Tuple: []*Value{lit(y, x.Shape), lit(gradScale, fshape), lit(gradOffset, fshape)}}, nil
	}
}
