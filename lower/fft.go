package lower

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// fft computes a discrete Fourier transform one transformed dimension at
// a time, of any length, not only powers of two. A complex transform's
// dimension whose prime factors are all at most kgen.FftRadixMax runs
// ducc's radix passes on the values in memory form (radixAxis, then
// emitFft: a kernel per stage of passes, O(n log n)); RFFT and IRFFT
// along the last dimension run FFTPACK's real passes as kernels (fftpack.go);
// the other dimensions are products with their DFT matrices (four real
// dots per dimension of a complex transform, which run as tiled GEMMs;
// fourStep splits the long composite ones). The twiddles are computed in
// float64 from jk mod n, so that each is the rounded true value. IFFT
// and IRFFT scale by 1/n in their matrices, and by one factor on the
// first dimension the passes transform.
func (x *cx) fft(in *hlo.Instruction) error {
	l := in.A.FftLength
	src := in.Operands[0]
	rank := src.Shape.Rank()
	first := rank - len(l)
	switch in.A.FftType {
	case "FFT", "IFFT":
		x.result(in, x.complexAxes(in, src, first, l, in.A.FftType == "IFFT"))
		return nil
	case "RFFT":
		v := x.memory(src)
		n := l[len(l)-1]
		m := n/2 + 1
		t := src.Shape.Elem
		var spec *hlo.Instruction // the half spectra along the last dimension
		if rows := prod(src.Shape.Dims[:rank-1]); rows > 0 && realPassable(n) {
			dims := slices.Concat(src.Shape.Dims[:rank-1], []int64{m, 2})
			spec = x.wholeKey(in, x.reshape(in, x.realPasses(in, v, t, rows, n, true), dims))
		} else {
			var re, im *hlo.Instruction
			if n%2 == 0 && fastComplex(n/2) && src.Shape.NumElements() > 0 {
				re, im = x.halfLengthForward(in, v, n)
			} else if fastComplex(n) && src.Shape.NumElements() > 0 {
				// The complex transform of the signal (imaginary parts 0),
				// its first m bins: O(n log n), where a matrix of the half
				// spectrum costs n m products per row.
				zero := x.expr(in, t, src.Shape.Dims).K(0)
				p := x.parts(x.complexAxes(in, x.partsKey(in, v, zero), rank-1, []int64{n}, false))
				re, im = x.slice(in, p[0], rank-1, 0, m, 1), x.slice(in, p[1], rank-1, 0, m, 1)
			} else {
				c, s := twiddles(n, n, m, t, func(j, k int64) float64 { return 1 }, -1)
				re, im = x.along(in, v, c, rank-1), x.along(in, v, s, rank-1)
			}
			spec = x.partsKey(in, re, im)
		}
		x.result(in, x.complexAxes(in, spec, first, l[:len(l)-1], false))
		return nil
	case "IRFFT":
		spec := x.complexAxes(in, src, first, l[:len(l)-1], true)
		n := l[len(l)-1]
		m := n/2 + 1
		rt, _ := src.Shape.Elem.ComplexPart()
		if rows := prod(in.Shape.Dims[:rank-1]); rows > 0 && realPassable(n) {
			x.whole[in] = x.reshape(in, x.realPasses(in, x.memory(spec), rt, rows, n, false), in.Shape.Dims)
			return nil
		}
		p := x.parts(spec)
		re, im := p[0], p[1]
		switch {
		case in.Shape.NumElements() == 0:
		case n%2 == 0 && fastComplex(n/2):
			x.whole[in] = x.halfLengthInverse(in, re, im, n)
			return nil
		case fastComplex(n):
			x.whole[in] = x.hermitianInverse(in, re, im, n)
			return nil
		}
		// The half spectrum's weights: X_0 once, X_j and its mirror
		// X_(n-j) (the conjugate) twice, X_(n/2) once for an even n.
		w := func(j, _ int64) float64 {
			if j == 0 || 2*j == n {
				return 1 / float64(n)
			}
			return 2 / float64(n)
		}
		c, s := twiddles(n, m, n, rt, w, -1)
		g := x.expr(in, rt, in.Shape.Dims)
		out := x.along(in, re, c, rank-1)
		// The imaginary parts of X_0 and X_(n/2) do not count (XLA's and
		// pocketfft's IRFFT): they are left out of the product rather
		// than multiplied by sin 0 = 0 (an infinite one made the whole
		// signal NaN) or sin(pi k), which is not 0 in floating point.
		lo, hi := int64(1), m
		if n%2 == 0 {
			hi = m - 1
		}
		if hi > lo {
			out = g.Add(out, x.along(in, x.slice(in, im, rank-1, lo, hi, 1), rowsOf(s, lo, hi), rank-1))
		}
		x.whole[in] = out
		return nil
	}
	return x.unsupported(in)
}

// fftAxisTarget is the custom-call lowerComplex makes of a complex
// transform along one dimension by radix passes (emitFft): its result's
// shape the complex values in memory form (f32 or f64, the last
// dimension the parts), its operand as many elements of that type in
// that order (of any shape: a real signal's buffer read as pairs), the
// transformed dimension in A.Dimensions, "IFFT" in A.FftType for the
// inverse, whose outputs are multiplied by 1/m for A.FftLength {m}.
// With "RFFT" or "IRFFT" in A.FftType it is instead the real passes of
// sequences of length A.FftLength {n} along dimension 1 (realPasses).
const fftAxisTarget = "vkjit$fft-axis"

// isFftAxis reports whether in is fftAxisTarget's custom-call.
func isFftAxis(in *hlo.Instruction) bool {
	return in.Op == hlo.OpCustomCall && in.A.Target == fftAxisTarget
}

// radixPassable reports whether a complex transform of length n runs as
// radix passes: every prime factor at most kgen.FftRadixMax. Longer
// prime factors keep the DFT matrices (and fourStep's splits), or run
// Bluestein's algorithm (bluesteinPrime).
func radixPassable(n int64) bool {
	if n < 2 {
		return false
	}
	for _, f := range packFactors(n) {
		if f > kgen.FftRadixMax {
			return false
		}
	}
	return true
}

// fastComplex reports whether a complex transform of length n runs in
// O(n log n): by radix passes, or by Bluestein's algorithm.
func fastComplex(n int64) bool {
	return radixPassable(n) || largestPrime(n) >= bluesteinPrime
}

// halfLengthForward is RFFT's n/2 + 1 bins of a real signal v of even
// length n along its last dimension, by a complex transform of n/2 (as
// ducc's rfftp runs an even length past 1000): the signal's memory is
// that of z_m = x_(2m) + i x_(2m+1), whose transform Z gives the
// transforms of the even and odd samples, E_k = (Z_k + conj Z_(n/2-k))/2
// and O_k = -i (Z_k - conj Z_(n/2-k))/2, and X_k = E_k + w^k O_k, w =
// e^(-2 pi i/n), k <= n/2 (Z_(n/2) = Z_0).
func (x *cx) halfLengthForward(in, v *hlo.Instruction, n int64) (re, im *hlo.Instruction) {
	t := v.Shape.Elem
	d := v.Shape.Rank() - 1
	h := n / 2
	pairs := slices.Concat(v.Shape.Dims[:d], []int64{h, 2})
	var zk *hlo.Instruction
	if radixPassable(h) {
		// The passes read the signal's buffer as the pairs it holds: no
		// copy for the reshape.
		zk = x.wholeKey(in, x.radixAxisAs(in, v, hlo.ArrayShape(t, pairs...), d, false, 1))
	} else {
		zk = x.complexAxes(in, x.wholeKey(in, x.reshape(in, v, pairs)), d, []int64{h}, false)
	}
	z := x.parts(zk)
	// Z_0 .. Z_(n/2), and Z_(n/2-k) at k.
	var zr, zm [2]*hlo.Instruction
	for p := range z {
		zr[p] = x.wrapAlong(in, d, z[p], 1)
		zm[p] = x.reverseAlong(in, d, zr[p])
	}
	g := x.expr(in, t, zr[0].Shape.Dims)
	half := g.K(0.5)
	// E = ((Zr + Mr)/2, (Zi - Mi)/2); D = Z - conj M; O = (Di/2, -Dr/2).
	er, ei := g.Mul(g.Add(zr[0], zm[0]), half), g.Mul(g.Sub(zr[1], zm[1]), half)
	dr, di := g.Sub(zr[0], zm[0]), g.Add(zr[1], zm[1])
	o := [2]*hlo.Instruction{g.Mul(di, half), g.Neg(g.Mul(dr, half))}
	wo := g.cmulRounded(x.rootsAlong(in, t, n, h+1, -1, d, zr[0].Shape.Dims), o)
	return g.Add(er, wo[0]), g.Add(ei, wo[1])
}

// halfLengthInverse is IRFFT's real signal of even length n from the
// half spectrum (re, im) by a complex inverse transform of n/2: Z_k =
// ((X_k + conj X_(n/2-k)) + i w^-k (X_k - conj X_(n/2-k)))/2, k < n/2,
// is E_k + i O_k, whose inverse (with 1/(n/2)) is z_m = x_(2m) + i
// x_(2m+1): the signal's memory. The imaginary parts of X_0 and X_(n/2)
// do not count (XLA's and pocketfft's IRFFT): they are replaced by
// zeros.
func (x *cx) halfLengthInverse(in, re, im *hlo.Instruction, n int64) *hlo.Instruction {
	t := re.Shape.Elem
	d := re.Shape.Rank() - 1
	h := n / 2
	// X_k and X_(n/2-k), k < n/2; the imaginary parts of X_0 (k = 0 in
	// the first) and X_(n/2) (k = 0 in the second) zeros.
	inner := x.slice(in, im, d, 1, h, 1) // Im X_1 .. X_(n/2-1)
	xr, xi := x.slice(in, re, d, 0, h, 1), x.padAlong(in, inner, d, 1, 0)
	mr, mi := x.slice(in, x.reverseAlong(in, d, re), d, 0, h, 1), x.padAlong(in, x.reverseAlong(in, d, inner), d, 1, 0)
	g := x.expr(in, t, xr.Shape.Dims)
	// S = X + conj M, D = X - conj M, Z = S + i w^-k D.
	sr, si := g.Add(xr, mr), g.Sub(xi, mi)
	dr, di := g.Sub(xr, mr), g.Add(xi, mi)
	p := g.cmulRounded(x.rootsAlong(in, t, n, h, 1, d, xr.Shape.Dims), [2]*hlo.Instruction{dr, di})
	// Z/2 (exact, but for subnormal halves): complexAxes scales the
	// inverse by 1/h = 2/n.
	half := g.K(0.5)
	zr, zi := g.Mul(g.Sub(sr, p[1]), half), g.Mul(g.Add(si, p[0]), half)
	v := x.complexAxes(in, x.partsKey(in, zr, zi), d, []int64{h}, true)
	return x.reshape(in, x.memory(v), slices.Concat(re.Shape.Dims[:d], []int64{n}))
}

// rootsAlong is e^(sign 2 pi i k/n), k < count, rounded to type t, as
// parts broadcast along dimension d of dims.
func (x *cx) rootsAlong(in *hlo.Instruction, t hlo.ElementType, n, count int64, sign float64, d int, dims []int64) [2]*hlo.Instruction {
	roots := newUnityRoots(n)
	c := make([]complex128, count)
	for k := range c {
		re, im := roots.at(int64(k))
		c[k] = complex(re, sign*im)
	}
	return x.constAlong(in, t, c, d, dims)
}

// constAlong is the constant vector c rounded to parts of type t, each
// broadcast along dimension d of dims.
func (x *cx) constAlong(in *hlo.Instruction, t hlo.ElementType, c []complex128, d int, dims []int64) [2]*hlo.Instruction {
	var r [2]*hlo.Instruction
	for p := range r {
		data := make([]byte, 0, len(c)*t.Bytes())
		for _, z := range c {
			v := real(z)
			if p == 1 {
				v = imag(z)
			}
			data = appendPart(data, t, rounded(v, t.Bits()))
		}
		lit, _ := hlo.NewLiteral(hlo.ArrayShape(t, int64(len(c))), data)
		bc := x.inst(in, hlo.OpBroadcast, hlo.ArrayShape(t, dims...), x.matrix(in, lit))
		bc.A.Dimensions, bc.A.HasDimensions = []int64{int64(d)}, true
		r[p] = bc
	}
	return r
}

// padAlong is v with lo zeros before and hi after it along dimension d.
func (x *cx) padAlong(in, v *hlo.Instruction, d int, lo, hi int64) *hlo.Instruction {
	dims := slices.Clone(v.Shape.Dims)
	dims[d] += lo + hi
	pd := x.inst(in, hlo.OpPad, hlo.ArrayShape(v.Shape.Elem, dims...), v, x.matrix(in, zeroLiteral(v.Shape.Elem)))
	pd.A.Padding = make([]hlo.PadDim, len(dims))
	pd.A.Padding[d] = hlo.PadDim{Lo: lo, Hi: hi}
	return pd
}

// wrapAlong is v followed by its first extra positions along dimension
// d (extra at most its length): two copies side by side, sliced, which
// fusion computes inline where a concatenate would be a kernel.
func (x *cx) wrapAlong(in *hlo.Instruction, d int, v *hlo.Instruction, extra int64) *hlo.Instruction {
	dims := v.Shape.Dims
	twice := slices.Concat(dims[:d], []int64{2}, dims[d:])
	bd := make([]int64, 0, len(dims))
	for i := range dims {
		if i < d {
			bd = append(bd, int64(i))
		} else {
			bd = append(bd, int64(i+1))
		}
	}
	b := x.inst(in, hlo.OpBroadcast, hlo.ArrayShape(v.Shape.Elem, twice...), v)
	b.A.Dimensions, b.A.HasDimensions = bd, true
	long := slices.Clone(dims)
	long[d] *= 2
	return x.slice(in, x.reshape(in, b, long), d, 0, dims[d]+extra, 1)
}

// reverseAlong is v reversed along dimension d.
func (x *cx) reverseAlong(in *hlo.Instruction, d int, v *hlo.Instruction) *hlo.Instruction {
	r := x.inst(in, hlo.OpReverse, v.Shape, v)
	r.A.Dimensions, r.A.HasDimensions = []int64{int64(d)}, true
	return r
}

// hermitianInverse is IRFFT's signal of length n along the last
// dimension from the half spectrum (re, im) of n/2 + 1 bins, as the
// real part of the complex inverse transform of the whole spectrum,
// X_(n-k) = conj(X_k). The imaginary parts of X_0 and, for an even n,
// X_(n/2) do not count (XLA's and pocketfft's IRFFT): they are replaced
// by zeros.
func (x *cx) hermitianInverse(in, re, im *hlo.Instruction, n int64) *hlo.Instruction {
	t := re.Shape.Elem
	d := re.Shape.Rank() - 1
	m := n/2 + 1
	hi := m // the bins whose imaginary parts count: 1 <= k < hi
	if n%2 == 0 {
		hi = m - 1
	}
	concat := func(a, b *hlo.Instruction) *hlo.Instruction {
		dims := slices.Clone(a.Shape.Dims)
		dims[d] += b.Shape.Dims[d]
		c := x.inst(in, hlo.OpConcatenate, hlo.ArrayShape(t, dims...), a, b)
		c.A.Dimensions, c.A.HasDimensions = []int64{int64(d)}, true
		return c
	}
	// Bins m..n-1 mirror bins n-m..1 (n > 2: some are).
	mirRe := x.reverseAlong(in, d, x.slice(in, re, d, 1, n-m+1, 1))
	mirIm := x.reverseAlong(in, d, x.slice(in, im, d, 1, n-m+1, 1))
	g := x.expr(in, t, mirIm.Shape.Dims)
	fullRe := concat(re, mirRe)
	fullIm := concat(x.padAlong(in, x.slice(in, im, d, 1, hi, 1), d, 1, m-hi), g.Neg(mirIm))
	v := x.complexAxes(in, x.partsKey(in, fullRe, fullIm), d, []int64{n}, true)
	return x.parts(v)[0]
}

// complexAxes transforms complex value v (an instruction whose value
// x.whole or x.pairs holds) along dimensions first, first+1, ... of
// lengths l: by radix passes on its memory form where the length allows
// (radixPassable), by DFT matrices on its parts elsewhere. The result is
// a stand-in key of the same kind. IFFT's 1/n of the dimensions the
// passes transform is one factor, 1/(their lengths' product), on the
// first of them, as ducc applies it (the DFT matrices hold their own
// 1/n).
func (x *cx) complexAxes(in, v *hlo.Instruction, first int, l []int64, inverse bool) *hlo.Instruction {
	var scale int64
	if inverse {
		scale = 1
		for _, n := range l {
			if radixPassable(n) {
				scale *= n
			}
		}
	}
	for i, n := range l {
		a := first + i
		switch {
		case n == 1: // the transform of length 1 is the value itself
		case radixPassable(n) && v.Shape.NumElements() > 0:
			v = x.wholeKey(in, x.radixAxis(in, x.memory(v), a, inverse, scale))
			scale = 1
		case largestPrime(n) >= bluesteinPrime && v.Shape.NumElements() > 0:
			v = x.bluestein(in, v, a, n, inverse)
		default:
			p := x.parts(v)
			re, im := x.dftAxis(in, p[0], p[1], a, n, inverse)
			v = x.partsKey(in, re, im)
		}
	}
	return v
}

// result makes v's value (complexAxes) in's.
func (x *cx) result(in, v *hlo.Instruction) {
	if w := x.whole[v]; w != nil {
		x.whole[in] = w
	}
	if p, ok := x.pairs[v]; ok {
		x.pairs[in] = p
	}
}

// wholeKey is a stand-in complex value of memory form w.
func (x *cx) wholeKey(in, w *hlo.Instruction) *hlo.Instruction {
	v := x.complexOf(in, w.Shape.Dims[:len(w.Shape.Dims)-1], w.Shape.Elem)
	x.whole[v] = w
	return v
}

// partsKey is a stand-in complex value of parts re and im.
func (x *cx) partsKey(in, re, im *hlo.Instruction) *hlo.Instruction {
	v := x.complexOf(in, re.Shape.Dims, re.Shape.Elem)
	x.pairs[v] = [2]*hlo.Instruction{re, im}
	return v
}

// complexOf is a stand-in complex value of dimensions dims, parts of type
// t, helping compute from: a key for memory and parts, never emitted.
func (x *cx) complexOf(from *hlo.Instruction, dims []int64, t hlo.ElementType) *hlo.Instruction {
	c := hlo.C64
	if t == hlo.F64 {
		c = hlo.C128
	}
	return &hlo.Instruction{Name: from.Name, Pos: from.Pos, Shape: hlo.ArrayShape(c, slices.Clone(dims)...)}
}

// radixAxis transforms w (memory form) along dimension a, the inverse
// transform's outputs multiplied by 1/scale (none for 1).
func (x *cx) radixAxis(in, w *hlo.Instruction, a int, inverse bool, scale int64) *hlo.Instruction {
	return x.radixAxisAs(in, w, w.Shape, a, inverse, scale)
}

// radixAxisAs is radixAxis of the memory form of shape sh that w's
// elements hold in their order (w of any shape of as many elements of
// sh's type): the kernels read its buffer as they would sh's.
func (x *cx) radixAxisAs(in, w *hlo.Instruction, sh hlo.Shape, a int, inverse bool, scale int64) *hlo.Instruction {
	c := x.inst(in, hlo.OpCustomCall, sh, w)
	c.A.Target = fftAxisTarget
	c.A.Dimensions, c.A.HasDimensions = []int64{int64(a)}, true
	c.A.FftType = "FFT"
	if inverse {
		c.A.FftType = "IFFT"
		c.A.FftLength = []int64{scale}
	}
	return c
}

// emitFft plans a radix-pass transform (fftAxisTarget): a pass per
// factor of the length, in ducc's order (packFactors), consecutive
// passes whose factors multiply to at most kgen.FftStageLimit run by one
// kernel (kgen/fft.go), each stage's kernel reading the previous one's
// output and writing, in turn, the result's buffer and a scratch one, so
// that the last writes the result. A stage's twiddles are a constant
// buffer of the rounded roots (unityRoots), as ducc's tables hold them.
func (s *state) emitFft(in *hlo.Instruction, env kgen.Env) error {
	if t := in.A.FftType; t == "RFFT" || t == "IRFFT" {
		return s.emitRealFft(in, env)
	}
	sh := in.Shape
	t := sh.Elem
	a := int(in.A.Dimensions[0])
	n := sh.Dims[a]
	roots := newUnityRoots(n)
	bits := t.Bits()
	var stages []kgen.FftStage
	// done is the product of the factors before f, q of those in its
	// stage so far.
	factors := packFactors(n)
	limit := kgen.FftStageLimit(s.tg, t, n, factors)
	done, q := int64(1), limit+1
	for _, f := range factors {
		if q*f > limit {
			stages = append(stages, kgen.FftStage{
				Length: n, Outer: prod(sh.Dims[:a]), Inner: prod(sh.Dims[a+1 : len(sh.Dims)-1]),
				Forward: in.A.FftType != "IFFT", Scale: 1, L1: done,
			})
			q = 1
		}
		st := &stages[len(stages)-1]
		var rs [][2]float64
		if f%2 == 1 {
			ang := octantAngle(f)
			for j := int64(0); j < f; j++ {
				rs = append(rs, octantRoot(j, f, ang))
			}
		}
		st.Radices, st.Roots = append(st.Radices, f), append(st.Roots, rs)
		q, done = q*f, done*f
	}
	if m := in.A.FftLength; len(m) == 1 && m[0] > 1 {
		stages[len(stages)-1].Scale = rounded(1/float64(m[0]), bits)
	}
	return s.chain(in, env, sh, len(stages), func(si int, env kgen.Env) (*kgen.Kernel, int64, []int, error) {
		st := stages[si]
		env.Local = kgen.LocalSize(s.tg, st.Invocations(), false)
		k, err := kgen.FftStageKernel(env, t, st)
		if err != nil || st.Twiddles() == 0 {
			return k, st.Invocations(), nil, err
		}
		var w [][2]float64
		for p := range st.Radices {
			r, l1, ido := st.Pass(p)
			if ido == 1 {
				continue
			}
			for j := int64(1); j < r; j++ {
				for i := int64(0); i < ido; i++ {
					re, im := roots.at(j * l1 * i)
					w = append(w, [2]float64{rounded(re, bits), rounded(im, bits)})
				}
			}
		}
		tw, err := s.complexConstants(in, fmt.Sprint("twiddles", si), t, w)
		return k, st.Invocations(), []int{tw}, err
	})
}

// chain dispatches count kernels in turn (kernel(i): its kernel, its
// invocations, the constant buffers it reads after its input), each
// reading the output of the one before (the first, in's operand) and
// writing, in turn, in's buffer and a scratch one of shape scratch, so
// that the last writes in's.
func (s *state) chain(in *hlo.Instruction, env kgen.Env, scratch hlo.Shape, count int, kernel func(i int, env kgen.Env) (*kgen.Kernel, int64, []int, error)) error {
	cur := s.values[in.Operands[0]][0]
	bufs := [2]int{s.values[in][0], -1}
	if count > 1 {
		b, err := s.newBuffer(Buffer{Name: in.Name + "/scratch", Kind: BufTemp, Shape: scratch})
		if err != nil {
			return in.Errorf("%v", err)
		}
		bufs[1] = b
	}
	for i := range count {
		k, n, consts, err := kernel(i, env)
		if err != nil {
			return in.Errorf("%v", err)
		}
		dst := bufs[(count-1-i)%2]
		if err := s.dispatch(in, k, n, append([]int{cur}, consts...), []int{dst}, nil); err != nil {
			return err
		}
		cur = dst
	}
	return nil
}

// complexConstants is a constant buffer of the complex values w, parts
// of type t (rounded to it already), in memory form; its error is the
// planner's, without in's position.
func (s *state) complexConstants(in *hlo.Instruction, name string, t hlo.ElementType, w [][2]float64) (int, error) {
	data := make([]byte, 0, 2*len(w)*t.Bytes())
	for _, v := range w {
		data = appendPart(appendPart(data, t, v[0]), t, v[1])
	}
	b, err := s.newBuffer(Buffer{Name: in.Name + "/" + name, Kind: BufConstant,
		Shape: hlo.ArrayShape(t, int64(2*len(w))), Data: ToStorage(t, data, s.tg)})
	return b, err
}

// fourStepMin is the shortest transform split into two shorter ones
// (fourStep): below it one DFT matrix costs less than the split's
// twiddles and transposes.
const fourStepMin = 64

// dftAxis transforms parts (re, im) along dimension a of length n:
// (re + i im)(C + i sigma S) = (re C - sigma im S) + i (im C + sigma re S),
// sigma -1 forward, +1 inverse (with 1/n). Long composite lengths go
// through fourStep.
func (x *cx) dftAxis(in, re, im *hlo.Instruction, a int, n int64, inverse bool) (*hlo.Instruction, *hlo.Instruction) {
	if n1 := splitLength(n); n >= fourStepMin && n1 > 1 {
		return x.fourStep(in, re, im, a, n1, n/n1, inverse)
	}
	w := func(_, _ int64) float64 { return 1 }
	if inverse {
		w = func(_, _ int64) float64 { return 1 / float64(n) }
	}
	c, s := twiddles(n, n, n, re.Shape.Elem, w, 1)
	rc, rs, ic, is := x.along(in, re, c, a), x.along(in, re, s, a), x.along(in, im, c, a), x.along(in, im, s, a)
	g := x.expr(in, re.Shape.Elem, re.Shape.Dims)
	if inverse {
		return g.Sub(rc, is), g.Add(ic, rs)
	}
	return g.Add(rc, is), g.Sub(ic, rs)
}

// twiddles are the constant matrices C[j][k] = w(j, k) cos(2 pi jk/n)
// and S[j][k] = sign w(j, k) sin(2 pi jk/n), j < rows, k < cols, of type t.
func twiddles(n, rows, cols int64, t hlo.ElementType, w func(j, k int64) float64, sign float64) (c, s *hlo.Literal) {
	cb := make([]byte, 0, rows*cols*int64(t.Bytes()))
	sb := make([]byte, 0, rows*cols*int64(t.Bytes()))
	put := func(b []byte, v float64) []byte { return appendPart(b, t, v) }
	for j := int64(0); j < rows; j++ {
		for k := int64(0); k < cols; k++ {
			sn, cs := math.Sincos(2 * math.Pi * float64(j*k%n) / float64(n))
			cb = put(cb, w(j, k)*cs)
			sb = put(sb, sign*w(j, k)*sn)
		}
	}
	sh := hlo.ArrayShape(t, rows, cols)
	c, _ = hlo.NewLiteral(sh, cb)
	s, _ = hlo.NewLiteral(sh, sb)
	return c, s
}

// appendPart appends v as an element of the real type t (f32 or f64).
func appendPart(b []byte, t hlo.ElementType, v float64) []byte {
	if t == hlo.F64 {
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
}

// rowsOf is rows lo to hi (exclusive) of matrix m.
func rowsOf(m *hlo.Literal, lo, hi int64) *hlo.Literal {
	cols := m.Shape.Dims[1]
	row := cols * int64(m.Shape.Elem.Bytes())
	l, _ := hlo.NewLiteral(hlo.ArrayShape(m.Shape.Elem, hi-lo, cols), m.Data[lo*row:hi*row])
	return l
}

// matrix is a constant instruction of m, made once per literal.
func (x *cx) matrix(in *hlo.Instruction, m *hlo.Literal) *hlo.Instruction {
	if k := x.consts[m]; k != nil {
		return k
	}
	k := x.inst(in, hlo.OpConstant, m.Shape)
	k.Literal = m
	if x.consts == nil {
		x.consts = map[*hlo.Literal]*hlo.Instruction{}
	}
	x.consts[m] = k
	return k
}

// along contracts dimension a of v with the rows of matrix m and puts
// the result's new dimension back in a's place.
func (x *cx) along(in, v *hlo.Instruction, m *hlo.Literal, a int) *hlo.Instruction {
	k := x.matrix(in, m)
	dims := v.Shape.Dims
	var outDims []int64
	for i, d := range dims {
		if i != a {
			outDims = append(outDims, d)
		}
	}
	outDims = append(outDims, m.Shape.Dims[1])
	t := v.Shape.Elem
	d := x.inst(in, hlo.OpDot, hlo.ArrayShape(t, outDims...), v, k)
	d.A.Dot = &hlo.DotDims{LhsContract: []int64{int64(a)}, RhsContract: []int64{0}}
	last := len(dims) - 1
	if a == last {
		return d
	}
	perm := make([]int64, 0, len(dims))
	final := make([]int64, len(dims))
	for i := range dims {
		switch {
		case i < a:
			perm = append(perm, int64(i))
		case i == a:
			perm = append(perm, int64(last))
		default:
			perm = append(perm, int64(i-1))
		}
	}
	for i, p := range perm {
		final[i] = outDims[p]
	}
	tr := x.inst(in, hlo.OpTranspose, hlo.ArrayShape(t, final...), d)
	tr.A.Dimensions, tr.A.HasDimensions = perm, true
	return tr
}

// splitLength is the largest divisor of n at most its square root (1
// for a prime).
func splitLength(n int64) int64 {
	for d := int64(math.Sqrt(float64(n))); d > 1; d-- {
		if n%d == 0 {
			return d
		}
	}
	return 1
}

// fourStep is the transform of length n = n1 n2 along dimension a by
// Cooley and Tukey's factorization (the "four-step" FFT): with input
// index k = n2 k1 + k2 and output index j = j1 + n1 j2,
//
//	X[j1 + n1 j2] = sum_k2 W_n2^(k2 j2) W_n^(k2 j1) sum_k1 W_n1^(k1 j1) x[n2 k1 + k2]
//
// so a as [n1, n2], transformed along n1, multiplied by the twiddles
// W_n^(j1 k2), transformed along n2, and transposed to [n2, n1]. It does
// n1 + n2 multiply-adds per element where one DFT matrix does n1 n2, and
// each output sums fewer rounded products (error growing with the
// factors' lengths, not n's). The shorter transforms split again.
func (x *cx) fourStep(in, re, im *hlo.Instruction, a int, n1, n2 int64, inverse bool) (*hlo.Instruction, *hlo.Instruction) {
	t := re.Shape.Elem
	dims := re.Shape.Dims
	split := slices.Concat(dims[:a], []int64{n1, n2}, dims[a+1:])
	re, im = x.dftAxis(in, x.reshape(in, re, split), x.reshape(in, im, split), a, n1, inverse)
	sign := -1.0
	if inverse {
		sign = 1
	}
	c, s := twiddles(n1*n2, n1, n2, t, func(_, _ int64) float64 { return 1 }, sign)
	bc := func(m *hlo.Literal) *hlo.Instruction {
		b := x.inst(in, hlo.OpBroadcast, hlo.ArrayShape(t, split...), x.matrix(in, m))
		b.A.Dimensions, b.A.HasDimensions = []int64{int64(a), int64(a + 1)}, true
		return b
	}
	wc, ws := bc(c), bc(s)
	w := x.expr(in, t, split).cmulRounded([2]*hlo.Instruction{re, im}, [2]*hlo.Instruction{wc, ws})
	re, im = w[0], w[1]
	re, im = x.dftAxis(in, re, im, a+1, n2, inverse)
	perm := make([]int64, len(split))
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[a], perm[a+1] = int64(a+1), int64(a)
	swapped := slices.Concat(dims[:a], []int64{n2, n1}, dims[a+1:])
	transpose := func(v *hlo.Instruction) *hlo.Instruction {
		tr := x.inst(in, hlo.OpTranspose, hlo.ArrayShape(t, swapped...), v)
		tr.A.Dimensions, tr.A.HasDimensions = perm, true
		return x.reshape(in, tr, dims)
	}
	return transpose(re), transpose(im)
}
