package kgen

import (
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// FFTPACK's real radix passes (radf forward, radb backward) as kernels,
// in the order of operations of ducc, the library behind XLA's CPU FFTs,
// so that a real transform's values are XLA's on the CPU bit for bit:
// every sum rounded where ducc rounds it, no multiply-add contracted. A
// pass of factor ip over a sequence of length N (l1 the product of the
// factors before it, ido = N/(l1 ip)) reads ip rows CC(a, k, j) and
// writes ip rows CH(a, k, j), a < ido, k < l1, j < ip:
//
//	forward:  CC(a, k, j) = src[a + ido (k + l1 j)],  CH(a, k, j) = dst[a + ido (j + ip k)]
//	backward: CC(a, k, j) = src[a + ido (j + ip k)],  CH(a, k, j) = dst[a + ido (k + l1 j)]
//
// ducc's loops over a, for each k, visit position 0, the pairs (i-1, i)
// for i = 2, 4, ... < ido together with their mirrors (ido-i-1, ido-i),
// and for an even ido the last position: an invocation per (sequence,
// k, h) runs one of them, h = 0 position 0, h = 1 ... (ido-1)/2 the pair
// (2h-1, 2h), h = ido/2 for an even ido the last position. Each writes
// what ducc's loop body writes there, so the invocations together write
// every output once.

// RealFftPass is the shape of one real pass's kernel.
type RealFftPass struct {
	Radix, L1, Ido int64
	Rows           int64 // the sequences, N = L1 Radix Ido values apart
	Forward        bool
	// Roots are, for a radix past 5, cos and sin of 2 pi q/Radix, q <
	// Radix (the generic passes' coefficients, rounded to the part type
	// by the kernel's constants); nil otherwise.
	Roots [][2]float64
	// Scale multiplies the outputs (IRFFT's 1/N on its last pass; 1
	// elsewhere, which the kernel leaves out).
	Scale float64
	// HalfIn (a first backward pass) reads the half spectrum in memory
	// form, 2(N/2+1) values a sequence (r0, i0, r1, i1, ...), as the
	// half-complex order (r0, r1, i1, ..., r_(N/2) for an even N): the
	// value at position q > 0 is at q+1. HalfOut (a last forward pass)
	// writes the half spectrum so, and the zero imaginary parts of X_0
	// and X_(N/2). Either needs L1 = 1.
	HalfIn, HalfOut bool
}

// Length is N.
func (p RealFftPass) Length() int64 { return p.L1 * p.Radix * p.Ido }

// Invocations is the pass's invocation count: one per (sequence, k, h).
func (p RealFftPass) Invocations() int64 { return p.Rows * p.tasks() }

// tasks is a sequence's count of (k, h).
func (p RealFftPass) tasks() int64 { return p.L1 * (p.Ido/2 + 1) }

// Twiddles is the length of the pass's table: for j = 1 ... Radix-1 in
// turn, the roots w^(j l1 h) of N, h = 1 ... (ido-1)/2, at (j-1)
// (ido-1)/2 + h-1 (ducc's wa).
func (p RealFftPass) Twiddles() int64 { return (p.Radix - 1) * ((p.Ido - 1) / 2) }

// check reports a pass this generator cannot run.
func (p RealFftPass) check(t hlo.ElementType) error {
	generic := p.Radix > 5
	switch {
	case t != hlo.F32 && t != hlo.F64:
		return fmt.Errorf("kgen: real FFT of %s", t)
	case p.Radix < 2 || p.L1 < 1 || p.Ido < 1 || p.Rows < 1:
		return fmt.Errorf("kgen: real FFT pass %d after %d of %d", p.Radix, p.L1, p.Ido)
	case (generic || p.Radix == 3 || p.Radix == 5) && p.Ido%2 == 0:
		// ducc's factorization puts the 2s and 4s first: an odd
		// factor's passes see an odd ido, and the loops assume it.
		return fmt.Errorf("kgen: real FFT pass %d with an even ido %d", p.Radix, p.Ido)
	case generic && (p.Radix%2 == 0 || int64(len(p.Roots)) != p.Radix):
		return fmt.Errorf("kgen: generic real FFT pass %d with %d roots", p.Radix, len(p.Roots))
	case (p.HalfIn || p.HalfOut) && p.L1 != 1:
		return fmt.Errorf("kgen: real FFT pass %d after %d on the half spectrum", p.Radix, p.L1)
	case p.Rows*2*(p.Length()/2+1) >= 1<<32:
		return fmt.Errorf("kgen: real FFT of %d sequences of %d exceeds the 32-bit index", p.Rows, p.Length())
	}
	return nil
}

// strides are the distances between sequences in the source and the
// destination: N values, or 2(N/2+1) on the half spectrum.
func (p RealFftPass) strides() (in, out int64) {
	n, half := p.Length(), 2*(p.Length()/2+1)
	in, out = n, n
	if p.HalfIn {
		in = half
	}
	if p.HalfOut {
		out = half
	}
	return in, out
}

func (p RealFftPass) name() string {
	if p.Forward {
		return fmt.Sprintf("radf%d", p.Radix)
	}
	return fmt.Sprintf("radb%d", p.Radix)
}

// passNames are the passes' names joined, for a kernel of them all.
func passNames(passes []RealFftPass) string {
	names := make([]string, len(passes))
	for i, p := range passes {
		names[i] = p.name()
	}
	return strings.Join(names, "_")
}

// seqIndex is the element of position pos of the sequence that starts
// at element start: on the half spectrum (half) one past it, but at
// position 0 (zero: known when the kernel is made).
func (k *kernelBuilder) seqIndex(start, pos spirv.ID, half, zero bool) spirv.ID {
	if !half || zero {
		return k.f.IAdd(k.u32(), start, pos)
	}
	if p, ok := k.constU32(pos); ok {
		return k.f.IAdd(k.u32(), start, k.cu32(p+1))
	}
	return k.f.IAdd(k.u32(), k.f.IAdd(k.u32(), start, pos), k.cu32(1))
}

// storeHalfZeros writes the zero imaginary parts of X_0 and, for an even
// length n, X_(n/2) of the half spectrum in memory form that starts at
// element start of binding dst (stride 2(n/2+1)).
func (k *kernelBuilder) storeHalfZeros(dst int, t hlo.ElementType, start spirv.ID, n int64) {
	zero := k.constFloat(t, 0)
	k.storeElem(dst, k.f.IAdd(k.u32(), start, k.cu32(1)), zero)
	if n%2 == 0 {
		k.storeElem(dst, k.f.IAdd(k.u32(), start, k.cu32(uint32(2*(n/2+1)-1))), zero)
	}
}

// RealFftPassKernel generates pass p over real values of type t (f32 or
// f64). Bindings: the source (Rows sequences), the twiddles where there
// are any (Twiddles, as (re, im) pairs), the destination. Push constant
// 0: the invocation count.
func RealFftPassKernel(env Env, t hlo.ElementType, p RealFftPass) (*Kernel, error) {
	if err := p.check(t); err != nil {
		return nil, err
	}
	inLen, outLen := p.strides()
	k := env.builder(1)
	src, tw, dst, err := k.bindRealFft(t, p.Rows*inLen, p.Twiddles(), p.Rows*outLen)
	if err != nil {
		return nil, err
	}
	return k.perElement(fmt.Sprintf("rfft_%s_%s", p.name(), t), func(e spirv.ID) error {
		start := func(row spirv.ID, stride int64) spirv.ID { return k.f.IMul(k.u32(), row, k.cu32(uint32(stride))) }
		return realPassTask(k, t, p, e, tw, func(row, pos spirv.ID, zero bool) val {
			return k.load(src, k.seqIndex(start(row, inLen), pos, p.HalfIn, zero), t)
		}, func(row, pos spirv.ID, zero bool, v val) {
			k.storeElem(dst, k.seqIndex(start(row, outLen), pos, p.HalfOut, zero), v.id)
		}, func(row spirv.ID) {
			k.storeHalfZeros(dst, t, start(row, outLen), p.Length())
		})
	})
}

// bindRealFft declares a real FFT kernel's bindings: its source of n
// values of type t, its table of twiddles (complex values) where there
// are any, its destination of m values.
func (k *kernelBuilder) bindRealFft(t hlo.ElementType, n, twiddles, m int64) (src int, tw twiddleTable, dst int, err error) {
	tw = twiddleTable{c: complexAccess{k: k, t: t, paired: t == hlo.F32 && k.tg.Int64}, bind: -1}
	if src, err = k.addBuffer(t, "src", true, n); err != nil {
		return
	}
	if twiddles > 0 {
		if tw.bind, err = tw.c.bind("twiddles", true, twiddles); err != nil {
			return
		}
	}
	dst, err = k.addBuffer(t, "dst", false, m)
	return
}

// twiddleTable is a kernel's binding of twiddles, a pass's table from
// complex value at.
type twiddleTable struct {
	c    complexAccess
	bind int
	at   int64
}

// realPassTask emits task e of pass p (e < Invocations: one (sequence,
// k, h) of it), reading position pos of sequence row by load and writing
// by store (zero: the position is 0, known when the kernel is made), and
// for HalfOut the zero imaginary parts of a sequence's X_0 and X_(N/2)
// by zeros.
func realPassTask(k *kernelBuilder, t hlo.ElementType, p RealFftPass, e spirv.ID, tw twiddleTable,
	load func(row, pos spirv.ID, zero bool) val, store func(row, pos spirv.ID, zero bool, v val), zeros func(row spirv.ID)) error {
	u32 := k.u32()
	cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
	ip, l1, ido := p.Radix, p.L1, p.Ido
	hs := ido/2 + 1 // the h of a k
	h, r := k.f.UMod(u32, e, cu(hs)), k.f.UDiv(u32, e, cu(hs))
	kk, row := k.f.UMod(u32, r, cu(l1)), k.f.UDiv(u32, r, cu(l1))
	// The positions in a sequence of row j at k, (k + l1 j) ido (CC
	// forward, CH backward) and (j + ip k) ido.
	byK := func(j int64) spirv.ID { return k.f.IMul(u32, k.f.IAdd(u32, kk, cu(l1*j)), cu(ido)) }
	byJ := func(j int64) spirv.ID { return k.f.IMul(u32, k.f.IAdd(u32, k.f.IMul(u32, kk, cu(ip)), cu(j)), cu(ido)) }
	inRow, outRow := byJ, byK
	if p.Forward {
		inRow, outRow = byK, byJ
	}
	// Position a of row j is 0 where a is the constant 0, j is 0 and
	// there is one k.
	zero := func(a spirv.ID, j int64) bool {
		a0, ok := k.constU32(a)
		return ok && a0 == 0 && j == 0 && l1 == 1
	}
	g := &realPass{
		fftArith: fftArith{k: k, t: t},
		p:        p,
		t:        t,
		cc: func(a spirv.ID, j int64) val {
			return load(row, k.f.IAdd(u32, inRow(j), a), zero(a, j))
		},
	}
	g.ch = func(a spirv.ID, j int64, v val) {
		store(row, k.f.IAdd(u32, outRow(j), a), zero(a, j), g.scaled(v))
	}
	body := g.body()
	z, last := cu(0), cu(ido-1)
	if err := k.f.If(k.boolOp(spirv.OpIEqual, h, z), func() error {
		body.zero(z, last)
		if p.HalfOut {
			zeros(row)
		}
		return nil
	}); err != nil {
		return err
	}
	if ido > 2 {
		// The pair (2h-1, 2h) and its mirror (ido-2h-1, ido-2h).
		inPair := k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpUGreaterThan, h, z),
			k.boolOp(spirv.OpULessThanEqual, h, cu((ido-1)/2)))
		if err := k.f.If(inPair, func() error {
			b := k.f.IMul(u32, h, cu(2))
			d := k.f.ISub(u32, cu(ido), b)
			hm1 := k.f.ISub(u32, h, cu(1))
			g.tw = func(x int64) (val, val) {
				w := tw.c.load(tw.bind, k.f.IAdd(u32, cu(tw.at+x*((ido-1)/2)), hm1))
				return w.re, w.im
			}
			body.pair(k.f.ISub(u32, b, cu(1)), b, k.f.ISub(u32, d, cu(1)), d)
			return nil
		}); err != nil {
			return err
		}
	}
	if ido%2 == 0 {
		return k.f.If(k.boolOp(spirv.OpIEqual, h, cu(ido/2)), func() error {
			body.last(z, last)
			return nil
		})
	}
	return nil
}
