package kgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// Radix passes of a complex FFT (Stockham's autosort form, as ducc's and
// pocketfft's cfftp passes run them): the transform of length N along
// the middle dimension of an array [Outer, N, Inner] of complex values
// in memory form (real and imaginary parts interleaved). Pass t, of
// factor R, with l1 the product of the factors before it and ido = N/(l1
// R), has a butterfly per (k, i), k < l1, i < ido: it reads
//
//	x_j = src[i + ido (j + R k)],   j < R,
//
// transforms them by a DFT of length R, multiplies output j by the
// twiddle w^(j l1 i) (w the N-th root of unity; none where i = 0) and
// writes
//
//	y_j = dst[i + ido (k + l1 j)],
//
// so that after the passes of every factor of N the transform lies in
// natural order, with no bit reversal.
//
// A kernel runs a stage of consecutive passes t = 0..m-1 (factors R_t,
// Q their product, L the first pass's l1, I < ido_(m-1) the last's i)
// from registers: its invocation per (k0 < L, I) computes the butterflies
// of pass t at k = k0 + L c, c < R_0...R_(t-1), and i = I + ido_(m-1) d,
// d < R_(t+1)...R_(m-1): exactly the values the next pass's butterflies
// of the invocation read, Q of them per pass. It loads Q values and
// stores Q, where a kernel per pass would store each value m times:
// lavapipe stores each component of each SIMD lane in turn, which makes
// the stores what a pass costs. The arithmetic is the passes' own, in
// their order, so a stage gives the values the passes would one by one.
// The sizes are constants of the kernel: its index arithmetic divides by
// constants, which the driver turns into multiplies, and stages of one
// shape share a kernel.

// FftStage is the shape of one kernel's passes.
type FftStage struct {
	Radices []int64 // the passes' factors, in order
	// Roots are, per pass, cos and sin of 2 pi q/R, q < R, which the
	// butterfly of an odd prime R multiplies by (rounded to the part
	// type by the kernel's constants); nil for 2 and 4.
	Roots        [][][2]float64
	L1           int64 // the first pass's l1
	Length       int64 // N
	Outer, Inner int64
	Forward      bool
	// Scale multiplies the outputs (an inverse transform's factor on
	// its last stage; 1 elsewhere, which the kernel leaves out).
	Scale float64
}

// FftRadixMax is the largest factor a pass transforms: its butterfly
// costs about R^2/2 multiply-adds per R values, and its code grows as
// R^2 (lower keeps DFT matrices for longer prime factors, and runs
// Bluestein's algorithm over the passes for the longest).
const FftRadixMax = 13

// FftStageMax bounds a stage's Q, the values an invocation holds (128
// parts: lavapipe spills what does not fit its registers to the stack,
// far cheaper than a store to a buffer).
const FftStageMax = 64

// FftWholeMax is the longest transform of radix-2 and -4 passes that a
// CPU device runs as one stage, every pass in one invocation's
// registers: no second dispatch and no twiddle table to read. 512
// transforms of 128 (vkjit bench, two runs each): 0.81-0.99 ms as
// stages of 64 and 2, 0.45 as one; of 256, 1.47-1.56 against 0.92-1.04;
// 256 x 256: 0.82-1.01 against 0.40-0.52 (NumPy 0.2). Longer stages
// did not pay (2048 as stages of 256 and 8: 10% slower than 64, 32),
// odd radices' code grows faster (243 as one stage: as fast, 150 ms
// more to compile), and a GPU holds far fewer registers.
const FftWholeMax = 256

// FftStageLimit is the most values a stage holds in a transform of
// length n by passes of radices over parts of type t on tg: FftStageMax,
// or n itself where a CPU device runs the whole transform as one stage
// (FftWholeMax; f32 parts only: c128[7,256] as one stage ran 0.43 ms
// against 0.21 and took 310 ms to compile against 116, and FuzzPrograms
// found such a program past its time limit).
func FftStageLimit(tg Target, t hlo.ElementType, n int64, radices []int64) int64 {
	if !tg.CPU || t != hlo.F32 || n > FftWholeMax || slices.ContainsFunc(radices, func(r int64) bool { return r != 2 && r != 4 }) {
		return FftStageMax
	}
	return max(n, FftStageMax)
}

// Pass is pass t's factor, l1 and ido.
func (st FftStage) Pass(t int) (r, l1, ido int64) {
	l1 = st.L1
	for _, f := range st.Radices[:t] {
		l1 *= f
	}
	r = st.Radices[t]
	return r, l1, st.Length / (l1 * r)
}

// Invocations is the stage's invocation count: one per (row, k0, I).
func (st FftStage) Invocations() int64 {
	_, _, ido := st.Pass(len(st.Radices) - 1)
	return st.Outer * st.Inner * st.L1 * ido
}

// Twiddles is the length of the stage's table of twiddles: for each pass
// with ido > 1 in turn, its ido roots w^(j l1 i) at (j-1) ido + i.
func (st FftStage) Twiddles() int64 {
	var n int64
	for t := range st.Radices {
		if r, _, ido := st.Pass(t); ido > 1 {
			n += (r - 1) * ido
		}
	}
	return n
}

// FftStageKernel generates stage st over complex values of part type t
// (f32 or f64). Bindings: the source (Outer N Inner values), the
// twiddles where there are any (Twiddles, as (re, im) pairs), the
// destination. Push constant 0: the invocation count.
func FftStageKernel(env Env, t hlo.ElementType, st FftStage) (*Kernel, error) {
	if t != hlo.F32 && t != hlo.F64 {
		return nil, fmt.Errorf("kgen: FFT of %s parts", t)
	}
	q := int64(1)
	for i, r := range st.Radices {
		if r < 2 || r > FftRadixMax || r != 2 && r != 4 && (!oddPrime(r) || i >= len(st.Roots) || int64(len(st.Roots[i])) != r) {
			return nil, fmt.Errorf("kgen: FFT pass of radix %d", r)
		}
		q *= r
	}
	if len(st.Radices) == 0 || q > FftStageLimit(env.Target, t, st.Length, st.Radices) && len(st.Radices) > 1 || st.Length%(st.L1*q) != 0 {
		return nil, fmt.Errorf("kgen: FFT stage %v of length %d after %d", st.Radices, st.Length, st.L1)
	}
	total := st.Outer * st.Length * st.Inner
	if 2*total >= 1<<32 {
		return nil, fmt.Errorf("kgen: FFT of %d parts exceeds the 32-bit index", 2*total)
	}
	k := env.builder(1)
	// A complex value of f32 parts is one u64 where the device has
	// 64-bit integers: lavapipe loads and stores each component in a
	// loop over the SIMD lanes, so one access per value takes half the
	// steps of two.
	c := complexAccess{k: k, t: t, paired: t == hlo.F32 && k.tg.Int64}
	src, err := c.bind("src", true, total)
	if err != nil {
		return nil, err
	}
	tw := -1
	if n := st.Twiddles(); n > 0 {
		if tw, err = c.bind("twiddles", true, n); err != nil {
			return nil, err
		}
	}
	dst, err := c.bind("dst", false, total)
	if err != nil {
		return nil, err
	}
	dir := "fwd"
	if !st.Forward {
		dir = "bwd"
	}
	var rs []string
	for _, r := range st.Radices {
		rs = append(rs, fmt.Sprint(r))
	}
	name := fmt.Sprintf("fft_pass%s_%s_%s", strings.Join(rs, "x"), dir, t)
	m := len(st.Radices)
	_, _, idoLast := st.Pass(m - 1)
	return k.perElement(name, func(e spirv.ID) error {
		u32 := k.u32()
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		div := func(a spirv.ID, d int64) spirv.ID { return k.f.UDiv(u32, a, cu(d)) }
		mod := func(a spirv.ID, d int64) spirv.ID { return k.f.UMod(u32, a, cu(d)) }
		mul := func(a spirv.ID, c int64) spirv.ID { return k.f.IMul(u32, a, cu(c)) }
		add := func(a, b spirv.ID) spirv.ID { return k.f.IAdd(u32, a, b) }
		s, r := mod(e, st.Inner), div(e, st.Inner)
		ii, r := mod(r, idoLast), div(r, idoLast)
		k0, o := mod(r, st.L1), div(r, st.L1)
		// The complex element of position pos of the row.
		row := add(mul(o, st.Length*st.Inner), s)
		at := func(pos spirv.ID) spirv.ID { return add(row, mul(pos, st.Inner)) }
		// Pass t reads its values at I + ido_(t-1) k0 + off, off a
		// constant (ido_(-1) = N/L), and writes them at I + ido_t k0 +
		// off: between passes they are registers keyed by off.
		var vals map[int64]cval
		var ok bool
		first := k.boolOp(spirv.OpIEqual, ii, cu(0)) // I = 0
		f := fftArith{k: k, t: t, fwd: st.Forward}
		twAt := int64(0) // pass t's table in the stage's
		idoPrev := st.Length / st.L1
		for p := range m {
			rp, l1, ido := st.Pass(p)
			f.roots = nil
			if p < len(st.Roots) {
				f.roots = st.Roots[p]
			}
			before, after := l1/st.L1, (ido / idoLast) // the counts of c and d
			out := map[int64]cval{}
			for cc := range before {
				for d := range after {
					x := make([]cval, rp)
					for j := range x {
						off := idoLast*d + ido*int64(j) + idoPrev*st.L1*cc
						if p == 0 {
							x[j] = c.load(src, at(add(add(ii, mul(k0, idoPrev)), cu(off))))
						} else if x[j], ok = vals[off]; !ok {
							return fmt.Errorf("kgen: FFT stage %v: pass %d reads %d, which pass %d does not write", st.Radices, p, off, p-1)
						}
					}
					y := f.butterfly(x)
					if ido > 1 {
						// i = I + ido_(m-1) d is 0 only where I and d are.
						i := add(ii, cu(idoLast*d))
						for j := 1; j < len(y); j++ {
							v := f.twiddle(y[j], c.load(tw, add(cu(twAt+int64(j-1)*ido), i)))
							if d == 0 {
								// At i = 0 the twiddle is 1: the value
								// is left as it is (an infinite part
								// times 0 would be NaN).
								v = cval{k.sel(first, y[j].re, v.re), k.sel(first, y[j].im, v.im)}
							}
							y[j] = v
						}
					}
					for j, v := range y {
						out[idoLast*d+ido*st.L1*cc+ido*l1*int64(j)] = v
					}
				}
			}
			if ido > 1 {
				twAt += (rp - 1) * ido
			}
			vals, idoPrev = out, ido
		}
		base := add(ii, mul(k0, idoLast))
		offs := make([]int64, 0, len(vals))
		for off := range vals {
			offs = append(offs, off)
		}
		slices.Sort(offs)
		var scale val
		if st.Scale != 1 {
			scale = val{k.constFloat(t, st.Scale), t}
		}
		for _, off := range offs {
			v := vals[off]
			if st.Scale != 1 {
				v = cval{f.mul(v.re, scale), f.mul(v.im, scale)}
			}
			c.store(dst, at(add(base, cu(off))), v)
		}
		return nil
	})
}

func oddPrime(n int64) bool {
	if n < 3 || n%2 == 0 {
		return false
	}
	for d := int64(3); d*d <= n; d += 2 {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// cval is a complex value in a kernel: its parts.
type cval struct{ re, im val }

// complexAccess reads and writes arrays of complex values in memory
// form, parts of type t: as one u64 each (paired) or part by part.
type complexAccess struct {
	k      *kernelBuilder
	t      hlo.ElementType
	paired bool
}

// bind declares a buffer of n complex values.
func (c complexAccess) bind(name string, readonly bool, n int64) (int, error) {
	if c.paired {
		return c.k.addBuffer(hlo.U64, name, readonly, n)
	}
	return c.k.addBuffer(c.t, name, readonly, 2*n)
}

// load is complex value idx of binding b.
func (c complexAccess) load(b int, idx spirv.ID) cval {
	k := c.k
	if c.paired {
		v := k.f.Bitcast(k.b.TypeVector(k.scalarType(c.t), 2), k.load(b, idx, hlo.U64).id)
		return cval{val{k.f.Extract(k.scalarType(c.t), v, 0), c.t}, val{k.f.Extract(k.scalarType(c.t), v, 1), c.t}}
	}
	a := k.f.IMul(k.u32(), idx, k.cu32(2))
	return cval{k.load(b, a, c.t), k.load(b, k.f.IAdd(k.u32(), a, k.cu32(1)), c.t)}
}

// store writes v as complex value idx of binding b.
func (c complexAccess) store(b int, idx spirv.ID, v cval) {
	k := c.k
	if c.paired {
		pair := k.f.CompositeConstruct(k.b.TypeVector(k.scalarType(c.t), 2), v.re.id, v.im.id)
		k.store(b, idx, val{k.f.Bitcast(k.scalarType(hlo.U64), pair), hlo.U64})
		return
	}
	a := k.f.IMul(k.u32(), idx, k.cu32(2))
	k.store(b, a, v.re)
	k.store(b, k.f.IAdd(k.u32(), a, k.cu32(1)), v.im)
}

// fftArith is a pass's complex arithmetic, each real operation rounded
// on its own (NoContraction: no multiply-add contracted, as ducc's
// scalar code computes).
type fftArith struct {
	k     *kernelBuilder
	t     hlo.ElementType
	fwd   bool
	roots [][2]float64
}

func (f fftArith) add(a, b val) val { return f.k.op(spirv.OpFAdd, f.t, a.id, b.id) }
func (f fftArith) sub(a, b val) val { return f.k.op(spirv.OpFSub, f.t, a.id, b.id) }
func (f fftArith) mul(a, b val) val { return f.k.op(spirv.OpFMul, f.t, a.id, b.id) }
func (f fftArith) neg(a val) val    { return f.k.op(spirv.OpFNegate, f.t, a.id) }
func (f fftArith) c(v float64) val  { return val{f.k.constFloat(f.t, v), f.t} }

func (f fftArith) cadd(a, b cval) cval { return cval{f.add(a.re, b.re), f.add(a.im, b.im)} }
func (f fftArith) csub(a, b cval) cval { return cval{f.sub(a.re, b.re), f.sub(a.im, b.im)} }

// twiddle is ducc's special_mul: v conj(w) forward, v w backward.
func (f fftArith) twiddle(v, w cval) cval {
	if f.fwd {
		return cval{f.add(f.mul(v.re, w.re), f.mul(v.im, w.im)), f.sub(f.mul(v.im, w.re), f.mul(v.re, w.im))}
	}
	return cval{f.sub(f.mul(v.re, w.re), f.mul(v.im, w.im)), f.add(f.mul(v.re, w.im), f.mul(v.im, w.re))}
}

// butterfly is the DFT of x (length 2, 4 or an odd prime) in ducc's
// order of operations: forward with e^(-2 pi i jk/p), backward with
// e^(+2 pi i jk/p), unscaled.
func (f fftArith) butterfly(x []cval) []cval {
	p := len(x)
	switch p {
	case 2:
		return []cval{f.cadd(x[0], x[1]), f.csub(x[0], x[1])}
	case 4:
		t2, t1 := f.cadd(x[0], x[2]), f.csub(x[0], x[2])
		t3, t4 := f.cadd(x[1], x[3]), f.csub(x[1], x[3])
		// t4 times -i forward, +i backward.
		if f.fwd {
			t4 = cval{t4.im, f.neg(t4.re)}
		} else {
			t4 = cval{f.neg(t4.im), t4.re}
		}
		return []cval{f.cadd(t2, t3), f.cadd(t1, t4), f.csub(t2, t3), f.csub(t1, t4)}
	}
	// An odd prime: the sums a_m = x_m + x_(p-m) and differences b_m =
	// x_m - x_(p-m) of the mirrored inputs, then for each pair of
	// outputs u, p-u the cosine half ca = x_0 + sum c_um a_m and the sine
	// half cb = i sum s_um b_m, y_u = ca + cb, y_(p-u) = ca - cb.
	h := p / 2
	a, b := make([]cval, h+1), make([]cval, h+1)
	for m := 1; m <= h; m++ {
		a[m], b[m] = f.cadd(x[m], x[p-m]), f.csub(x[m], x[p-m])
	}
	y := make([]cval, p)
	y[0] = x[0]
	for m := 1; m <= h; m++ {
		y[0] = f.cadd(y[0], a[m])
	}
	sign := 1.0
	if f.fwd {
		sign = -1
	}
	for u := 1; u <= h; u++ {
		ca := x[0]
		var cbRe, cbIm val
		for m := 1; m <= h; m++ {
			r := f.roots[u*m%p]
			c, s := r[0], sign*r[1]
			cc := f.c(c)
			ca = cval{f.add(ca.re, f.mul(cc, a[m].re)), f.add(ca.im, f.mul(cc, a[m].im))}
			sc := f.c(s)
			pr, pi := f.mul(sc, b[m].re), f.mul(sc, b[m].im)
			if m == 1 {
				cbIm, cbRe = pr, pi
			} else {
				cbIm, cbRe = f.add(cbIm, pr), f.add(cbRe, pi)
			}
		}
		cb := cval{f.neg(cbRe), cbIm}
		y[u], y[p-u] = f.cadd(ca, cb), f.csub(ca, cb)
	}
	return y
}
