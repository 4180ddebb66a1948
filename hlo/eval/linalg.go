package eval

import (
	"github.com/vkjit/vkjit/hlo"
)

// Dot and convolution accumulate in float64 for float results and in
// wrapping 64-bit integers for integer results, rounding once at the end.
// Operands are decoded once into flat arrays: these two ops dominate the
// evaluator's time on real models.

// decoded holds an operand's elements as float64 (float results) or
// int64 (integer and pred results; unsigned values keep their bits,
// which wrapping arithmetic does not mind).
type decoded struct {
	f []float64
	i []int64
	c []complex128
}

// operands decodes a dot's or a convolution's operands as its result
// type computes: complex, float or integer values.
func operands(out hlo.ElementType, a, b *hlo.Literal) (A, B decoded) {
	if out.IsComplex() {
		A.c, B.c = dotComplex(a, b)
		return A, B
	}
	return decode(a, out), decode(b, out)
}

// decode reads l's elements for a product of result type out: as
// float64s for a float result, an integer operand converted to out
// first (rounded, as XLA's operand upcasting converts it before the
// product), else as integers.
func decode(l *hlo.Literal, out hlo.ElementType) decoded {
	n := l.Shape.NumElements()
	t := l.Shape.Elem
	var d decoded
	if out.IsFloat() {
		d.f = make([]float64, n)
		for j := int64(0); j < n; j++ {
			d.f[j] = toF(get(l, j), t)
			if !t.IsFloat() {
				d.f[j] = round(out, d.f[j])
			}
		}
		return d
	}
	d.i = make([]int64, n)
	for j := int64(0); j < n; j++ {
		d.i[j] = toI(get(l, j), t)
	}
	return d
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

// store writes an accumulated value to element j of out.
func store(out *hlo.Literal, j int64, f float64, i int64) {
	t := out.Shape.Elem
	switch t.Kind() {
	case hlo.KindFloat:
		put(out.Data, t, j, scalar{f: round(t, f)})
	case hlo.KindSigned:
		put(out.Data, t, j, scalar{i: wrapS(t, i)})
	case hlo.KindBool:
		put(out.Data, t, j, scalar{u: b2u(i != 0)})
	default:
		put(out.Data, t, j, scalar{u: wrapU(t, uint64(i))})
	}
}

// dotRounded is operand x of dot in as its algorithm rounds it
// (hlo.Instruction.DotOperandRounding): converted to the narrower float
// and back, or reduced to tf32's precision; x itself otherwise.
func dotRounded(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	t := x.Shape.Elem
	to, tf32 := in.DotOperandRounding(t)
	if to == 0 && !tf32 {
		return x
	}
	out := newLit(t, x.Shape.Dims)
	for i := range x.Shape.NumElements() {
		v := get(x, i)
		if tf32 {
			v.f = reducePrecision(t, v.f, 8, 10)
		} else {
			v = convert(to, t, convert(t, to, v))
		}
		put(out.Data, t, i, v)
	}
	return out
}

// dot is the general dot: batch dimensions, then the free dimensions of
// the lhs, then those of the rhs, of the operands as the dot's
// algorithm rounds them.
func dot(in *hlo.Instruction, l, r *hlo.Literal, sum hlo.ElementType) (*hlo.Literal, error) {
	l, r = dotRounded(in, l), dotRounded(in, r)
	d := in.A.Dot
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	isC := in.Shape.Elem.IsComplex()
	isF := in.Shape.Elem.IsFloat()
	L, R := operands(in.Shape.Elem, l, r)
	ls, rs := strides(l.Shape.Dims), strides(r.Shape.Dims)
	lFree, rFree := d.FreeDims(l.Shape.Rank(), r.Shape.Rank())
	// Offsets of every contraction position, computed once.
	contract := make([]int64, len(d.LhsContract))
	for i, x := range d.LhsContract {
		contract[i] = l.Shape.Dims[x]
	}
	var lOff, rOff []int64
	forEach(contract, func(c []int64, _ int64) {
		var lo, ro int64
		for i := range c {
			lo += c[i] * ls[d.LhsContract[i]]
			ro += c[i] * rs[d.RhsContract[i]]
		}
		lOff, rOff = append(lOff, lo), append(rOff, ro)
	})
	if len(contract) == 0 {
		lOff, rOff = []int64{0}, []int64{0}
	}
	if isF && len(rFree) > 0 && sum == hlo.Invalid {
		floatDot(in, out, L.f, R.f, lOff, rOff, lFree, rFree, ls, rs)
		return out, nil
	}
	parallelEach(in.Shape.Dims, func(o []int64, lin int64) {
		lb, rb := d.Bases(o, lFree, rFree, ls, rs)
		if isC {
			var acc complex128
			for c := range lOff {
				acc = sumStepC(sum, acc, L.c[lb+lOff[c]], R.c[rb+rOff[c]])
			}
			put(out.Data, out.Shape.Elem, lin, scalar{c: roundC(out.Shape.Elem, acc)})
			return
		}
		if isF {
			var acc float64
			for c := range lOff {
				acc = sumStep(sum, acc, L.f[lb+lOff[c]], R.f[rb+rOff[c]])
			}
			store(out, lin, acc, 0)
			return
		}
		var acc int64
		for c := range lOff {
			acc += L.i[lb+lOff[c]] * R.i[rb+rOff[c]]
		}
		store(out, lin, 0, acc)
	})
	return out, nil
}

// sumStep is acc + x*y: in float64, or with sum a float type, the
// product and the sum each rounded to it.
func sumStep(sum hlo.ElementType, acc, x, y float64) float64 {
	if sum == hlo.Invalid {
		return acc + x*y
	}
	return round(sum, acc+round(sum, x*y))
}

// sumStepC is sumStep for complex numbers: with sum a float type (a
// c64 result's parts under RunSummedInF32), each part of the product
// from its two rounded products and each part of the sum rounded, as a
// device sums a complex dot in real arithmetic.
func sumStepC(sum hlo.ElementType, acc, x, y complex128) complex128 {
	if sum == hlo.Invalid {
		return acc + x*y
	}
	r := func(v float64) float64 { return round(sum, v) }
	re := r(r(real(x)*real(y)) - r(imag(x)*imag(y)))
	im := r(r(real(x)*imag(y)) + r(imag(x)*real(y)))
	return complex(r(real(acc)+re), r(imag(acc)+im))
}

// floatDot is dot's float case where the result's last dimension is a
// free dimension of the rhs: four neighbouring results at a time, each
// summed in the same order as one alone (four independent sums run
// about three times as fast as one, whose adds wait on each other).
func floatDot(in *hlo.Instruction, out *hlo.Literal, L, R []float64, lOff, rOff, lFree, rFree, ls, rs []int64) {
	d := in.A.Dot
	dims := in.Shape.Dims
	n := len(dims) - 1
	step := rs[rFree[len(rFree)-1]] // between neighbours along the last dimension
	parallelEach(dims, func(o []int64, lin int64) {
		if o[n]%4 != 0 {
			return // computed with the block's first element
		}
		lb, rb := d.Bases(o, lFree, rFree, ls, rs)
		if o[n]+4 > dims[n] {
			for q := range dims[n] - o[n] {
				var acc float64
				for c := range lOff {
					acc += L[lb+lOff[c]] * R[rb+q*step+rOff[c]]
				}
				store(out, lin+q, acc, 0)
			}
			return
		}
		r0, r1, r2, r3 := rb, rb+step, rb+2*step, rb+3*step
		var a0, a1, a2, a3 float64
		for c, lo := range lOff {
			x, ro := L[lb+lo], rOff[c]
			a0 += x * R[r0+ro]
			a1 += x * R[r1+ro]
			a2 += x * R[r2+ro]
			a3 += x * R[r3+ro]
		}
		store(out, lin, a0, 0)
		store(out, lin+1, a1, 0)
		store(out, lin+2, a2, 0)
		store(out, lin+3, a3, 0)
	})
}

// convolution follows XLA's operation semantics: any dimension labels,
// window strides, padding, lhs (input) and rhs (kernel) dilation, window
// reversal, and feature and batch group counts.
func convolution(in *hlo.Instruction, l, k *hlo.Literal, sum hlo.ElementType) (*hlo.Literal, error) {
	c := in.A.ConvDims
	w := in.A.Window
	if w == nil {
		w = &hlo.Window{}
	}
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	isC := in.Shape.Elem.IsComplex()
	isF := in.Shape.Elem.IsFloat()
	L, K := operands(in.Shape.Elem, l, k)
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
	lsF, ksIn := ls[c.InFeature], ks[c.KIn]
	parallelEach(in.Shape.Dims, func(o []int64, lin int64) {
		b, of := o[c.OutBatch], o[c.OutFeature]
		// Batch groups split the output features; each group reads its
		// own slice of the input batch. Feature groups split both feature
		// dimensions.
		ib := (of/(outF/bg))*(inB/bg) + b
		f0 := (of / (outF / fg)) * kIn
		var accF float64
		var accI int64
		var accC complex128
		forEach(kSpatial, func(kp []int64, _ int64) {
			lb := ib*ls[c.InBatch] + f0*lsF
			kb := of * ks[c.KOut]
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
				lb += p * ls[c.InSpatial[i]]
				kk := kp[i]
				if wd.Reversal {
					kk = kSpatial[i] - 1 - kk
				}
				kb += kk * ks[c.KSpatial[i]]
			}
			switch {
			case isC:
				for f := int64(0); f < kIn; f++ {
					accC = sumStepC(sum, accC, L.c[lb+f*lsF], K.c[kb+f*ksIn])
				}
			case isF:
				for f := int64(0); f < kIn; f++ {
					accF = sumStep(sum, accF, L.f[lb+f*lsF], K.f[kb+f*ksIn])
				}
			default:
				for f := int64(0); f < kIn; f++ {
					accI += L.i[lb+f*lsF] * K.i[kb+f*ksIn]
				}
			}
		})
		if isC {
			put(out.Data, out.Shape.Elem, lin, scalar{c: roundC(out.Shape.Elem, accC)})
			return
		}
		store(out, lin, accF, accI)
	})
	return out, nil
}
