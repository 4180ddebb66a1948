package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// accumulator sums products in float64 for float results and in wrapping
// 64-bit integers for integer results, rounding once at the end.
type accumulator struct {
	t   hlo.ElementType
	f   float64
	i   int64
	u   uint64
	any bool
}

func (a *accumulator) add(x, y scalar, xt, yt hlo.ElementType) {
	switch a.t.Kind() {
	case hlo.KindFloat:
		a.f += toF(x, xt) * toF(y, yt)
	case hlo.KindSigned:
		a.i += toI(x, xt) * toI(y, yt)
	case hlo.KindUnsigned:
		a.u += uint64(toI(x, xt)) * uint64(toI(y, yt))
	case hlo.KindBool:
		a.any = a.any || (x.u != 0 && y.u != 0)
	}
}

func (a *accumulator) result() scalar {
	switch a.t.Kind() {
	case hlo.KindFloat:
		return scalar{f: round(a.t, a.f)}
	case hlo.KindSigned:
		return scalar{i: wrapS(a.t, a.i)}
	case hlo.KindUnsigned:
		return scalar{u: wrapU(a.t, a.u)}
	}
	return scalar{u: b2u(a.any)}
}

func toF(s scalar, t hlo.ElementType) float64 {
	switch t.Kind() {
	case hlo.KindFloat:
		return s.f
	case hlo.KindSigned:
		return float64(s.i)
	}
	return float64(s.u)
}

func toI(s scalar, t hlo.ElementType) int64 {
	switch t.Kind() {
	case hlo.KindFloat:
		return int64(s.f)
	case hlo.KindSigned:
		return s.i
	}
	return int64(s.u)
}

// dot is the general dot: batch dimensions, then the free dimensions of
// the lhs, then those of the rhs.
func dot(in *hlo.Instruction, l, r *hlo.Literal) (*hlo.Literal, error) {
	d := in.A.Dot
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	lt, rt := l.Shape.Elem, r.Shape.Elem
	ls, rs := strides(l.Shape.Dims), strides(r.Shape.Dims)
	lUsed, rUsed := map[int64]bool{}, map[int64]bool{}
	for _, x := range append(append([]int64{}, d.LhsBatch...), d.LhsContract...) {
		lUsed[x] = true
	}
	for _, x := range append(append([]int64{}, d.RhsBatch...), d.RhsContract...) {
		rUsed[x] = true
	}
	var lFree, rFree []int64
	for i := range l.Shape.Dims {
		if !lUsed[int64(i)] {
			lFree = append(lFree, int64(i))
		}
	}
	for i := range r.Shape.Dims {
		if !rUsed[int64(i)] {
			rFree = append(rFree, int64(i))
		}
	}
	contract := make([]int64, len(d.LhsContract))
	for i, x := range d.LhsContract {
		contract[i] = l.Shape.Dims[x]
	}
	li, ri := make([]int64, l.Shape.Rank()), make([]int64, r.Shape.Rank())
	forEach(in.Shape.Dims, func(o []int64, lin int64) {
		k := 0
		for i := range d.LhsBatch {
			li[d.LhsBatch[i]], ri[d.RhsBatch[i]] = o[k], o[k]
			k++
		}
		for _, x := range lFree {
			li[x] = o[k]
			k++
		}
		for _, x := range rFree {
			ri[x] = o[k]
			k++
		}
		acc := accumulator{t: in.Shape.Elem}
		forEach(contract, func(c []int64, _ int64) {
			for i := range c {
				li[d.LhsContract[i]], ri[d.RhsContract[i]] = c[i], c[i]
			}
			acc.add(get(l, linear(li, ls)), get(r, linear(ri, rs)), lt, rt)
		})
		put(out.Data, in.Shape.Elem, lin, acc.result())
	})
	return out, nil
}

// convolution follows XLA's operation semantics: any dimension labels,
// window strides, padding, lhs (input) and rhs (kernel) dilation, window
// reversal, and feature and batch group counts.
func convolution(in *hlo.Instruction, l, k *hlo.Literal) (*hlo.Literal, error) {
	c := in.A.ConvDims
	w := in.A.Window
	if w == nil {
		w = &hlo.Window{}
	}
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	lt, kt := l.Shape.Elem, k.Shape.Elem
	ls, ks := strides(l.Shape.Dims), strides(k.Shape.Dims)
	ns := len(c.InSpatial)
	fg, bg := in.A.FeatureGroups, in.A.BatchGroups
	outF := k.Shape.Dims[c.KOut]
	inB := l.Shape.Dims[c.InBatch]
	kIn := k.Shape.Dims[c.KIn]
	kSpatial := make([]int64, ns)
	for i := range kSpatial {
		kSpatial[i] = k.Shape.Dims[c.KSpatial[i]]
	}
	li, ki := make([]int64, l.Shape.Rank()), make([]int64, k.Shape.Rank())
	forEach(in.Shape.Dims, func(o []int64, lin int64) {
		b, of := o[c.OutBatch], o[c.OutFeature]
		// Batch groups split the output features; each group reads its
		// own slice of the input batch.
		bgroup := of / (outF / bg)
		ib := bgroup*(inB/bg) + b
		// Feature groups split both feature dimensions.
		fgroup := of / (outF / fg)
		acc := accumulator{t: in.Shape.Elem}
		forEach(kSpatial, func(kp []int64, _ int64) {
			for i := 0; i < ns; i++ {
				wd := w.Dims[i]
				p := o[c.OutSpatial[i]]*wd.Stride + kp[i]*wd.RhsDilate - wd.PadLo
				if p < 0 || p%wd.LhsDilate != 0 {
					return
				}
				p /= wd.LhsDilate
				if p >= l.Shape.Dims[c.InSpatial[i]] {
					return
				}
				li[c.InSpatial[i]] = p
				kk := kp[i]
				if wd.Reversal {
					kk = kSpatial[i] - 1 - kk
				}
				ki[c.KSpatial[i]] = kk
			}
			li[c.InBatch] = ib
			ki[c.KOut] = of
			for f := int64(0); f < kIn; f++ {
				li[c.InFeature] = fgroup*kIn + f
				ki[c.KIn] = f
				acc.add(get(l, linear(li, ls)), get(k, linear(ki, ks)), lt, kt)
			}
		})
		put(out.Data, in.Shape.Elem, lin, acc.result())
	})
	return out, nil
}
