package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// Real transforms (RFFT, IRFFT) along the last dimension of the lengths
// ducc transforms by its real radix passes (packable) run those passes,
// FFTPACK's, as kernels (kgen/rfft.go) in ducc's order of operations,
// so that vkjit's results are XLA's on the CPU bit for bit (every sum
// rounded where ducc rounds it, its twiddles computed as it computes
// them: fftroots.go) with pocketfft's accuracy: an element where the
// transform's sums cancel otherwise differs from XLA's by far more than
// the 3 ulp JAX's tests allow, whatever the algorithm's accuracy
// (docs/ACCURACY.md). The passes work on FFTPACK's half-complex order
// (r0, r1, i1, r2, i2, ..., and r_(n/2) last for an even n), which is
// the half spectrum's memory form less two zeros: the first backward
// pass reads that form, and the last forward one writes it.

// realPasses is the custom-call (fftAxisTarget, fft_type RFFT or IRFFT)
// that runs the real passes of length n over rows sequences: forward,
// the signals v (rows n values of type t in v's order, any shape) into
// their half spectra in memory form [rows, n/2+1, 2]; backward, half
// spectra v in memory form (rows 2(n/2+1) values) into the signals
// [rows, n], times 1/n (rounded to t, then multiplied, as XLA asks of
// ducc; the imaginary parts of X_0 and X_(n/2) are not read).
func (x *cx) realPasses(in, v *hlo.Instruction, t hlo.ElementType, rows, n int64, forward bool) *hlo.Instruction {
	sh := hlo.ArrayShape(t, rows, n/2+1, 2)
	if !forward {
		sh = hlo.ArrayShape(t, rows, n)
	}
	c := x.inst(in, hlo.OpCustomCall, sh, v)
	c.A.Target = fftAxisTarget
	c.A.Dimensions, c.A.HasDimensions = []int64{1}, true
	c.A.FftType, c.A.FftLength = "RFFT", []int64{n}
	if !forward {
		c.A.FftType = "IRFFT"
	}
	return c
}

// realPassable reports whether a real transform of length n runs as
// the real passes: as ducc runs it (packable), and not of length 1 (no
// pass: the DFT's product by 1 is the same value).
func realPassable(n int64) bool { return n > 1 && packable(n) }

func prod(f []int64) int64 {
	r := int64(1)
	for _, x := range f {
		r *= x
	}
	return r
}

// emitRealFft plans the real passes of realPasses, forward last factor
// first, backward first factor first, as ducc runs them, in forms of
// the same arithmetic. The passes that split a sequence into
// sub-transforms of at most kgen.RealFftRegisterMax values (all of them
// for a sequence that short), if two or more, run as one kernel of an
// invocation per sub-transform from registers (kgen/rfftregs.go: each
// value loaded and stored once, where a kernel per pass loads and
// stores it at each), each other pass as a kernel of its own
// (kgen/rfft.go), the kernels reading the previous one's output and
// writing, in turn, the result's buffer and a scratch one, so that the
// last writes the result (chain). On a GPU, passes not all in registers
// run as one kernel of a workgroup through shared memory
// (kgen/rfftrows.go). The twiddles are ducc's rounded roots
// (unityRoots), in a constant buffer as its tables hold them, or
// constants of the registers' kernel.
func (s *state) emitRealFft(in *hlo.Instruction, env kgen.Env) error {
	t := in.Shape.Elem
	rows, n := in.Shape.Dims[0], in.A.FftLength[0]
	forward := in.A.FftType == "RFFT"
	roots := newUnityRoots(n)
	bits := t.Bits()
	f := packFactors(n)
	var passes []kgen.RealFftPass
	for i := range f {
		if forward {
			i = len(f) - 1 - i
		}
		l1 := prod(f[:i])
		p := kgen.RealFftPass{Radix: f[i], L1: l1, Ido: n / (f[i] * l1), Rows: rows, Forward: forward, Scale: 1}
		if p.Radix > 5 {
			for q := range p.Radix {
				re, im := roots.at(q * (n / p.Radix))
				p.Roots = append(p.Roots, [2]float64{re, im})
			}
		}
		passes = append(passes, p)
	}
	if forward {
		passes[len(passes)-1].HalfOut = true
	} else {
		passes[0].HalfIn = true
		passes[len(passes)-1].Scale = rounded(1/float64(n), bits)
	}
	steps := registerSteps(passes)
	if rs, ok := kgen.PlanRealFftRows(t, passes); ok && (s.opts.SharedFft || !s.tg.CPU && len(steps) > 1) {
		k, err := kgen.RealFftRowsKernel(env, t, rs)
		if err != nil {
			return in.Errorf("%v", err)
		}
		reads := []int{s.values[in.Operands[0]][0]}
		if rs.Twiddles() > 0 {
			tw, err := s.twiddleBuffer(in, "twiddles", t, roots, passes...)
			if err != nil {
				return in.Errorf("%v", err)
			}
			reads = append(reads, tw)
		}
		return s.dispatch(in, k, rs.Groups(), reads, []int{s.values[in][0]}, nil)
	}
	// The passes between hold rows n values; the result's buffer holds
	// at least as many.
	return s.chain(in, env, hlo.ArrayShape(t, rows, n), len(steps), func(i int, env kgen.Env) (*kgen.Kernel, int64, []int, error) {
		step := steps[i]
		if len(step) > 1 {
			tables := make([][][2]float64, len(step))
			for j, p := range step {
				tables[j] = passTwiddles(roots, p, bits)
			}
			count := rows * kgen.RealFftSubs(step)
			env.Local = kgen.LocalSize(s.tg, count, true)
			k, err := kgen.RealFftRegistersKernel(env, t, step, tables)
			return k, count, nil, err
		}
		p := step[0]
		env.Local = kgen.LocalSize(s.tg, p.Invocations(), false)
		k, err := kgen.RealFftPassKernel(env, t, p)
		if err != nil || p.Twiddles() == 0 {
			return k, p.Invocations(), nil, err
		}
		tw, err := s.twiddleBuffer(in, fmt.Sprint("twiddles", i), t, roots, p)
		return k, p.Invocations(), []int{tw}, err
	})
}

// registerSteps are the kernels of passes (in order): the passes that
// leave sub-transforms of at most kgen.RealFftRegisterMax values
// (kgen.RealFftSubs), if two or more, one kernel from registers, each
// other pass a kernel. Those are the passes of the largest l1, the
// first forward ones and the last backward ones: l1 falls from pass to
// pass forward and rises backward.
func registerSteps(passes []kgen.RealFftPass) [][]kgen.RealFftPass {
	n := passes[0].Length()
	fits := func(p kgen.RealFftPass) bool { return n/p.L1 <= kgen.RealFftRegisterMax }
	lo, hi := 0, len(passes) // the registers' passes
	if passes[0].Forward {
		for hi = 0; hi < len(passes) && fits(passes[hi]); hi++ {
		}
	} else {
		for lo = len(passes); lo > 0 && fits(passes[lo-1]); lo-- {
		}
	}
	var steps [][]kgen.RealFftPass
	for i := 0; i < len(passes); i++ {
		if i == lo && hi-lo > 1 {
			steps = append(steps, passes[lo:hi])
			i = hi - 1
			continue
		}
		steps = append(steps, passes[i:i+1])
	}
	return steps
}

// twiddleBuffer is a constant buffer of the passes' tables one after
// another (passTwiddles).
func (s *state) twiddleBuffer(in *hlo.Instruction, name string, t hlo.ElementType, roots *unityRoots, passes ...kgen.RealFftPass) (int, error) {
	var w [][2]float64
	for _, p := range passes {
		w = append(w, passTwiddles(roots, p, t.Bits())...)
	}
	return s.complexConstants(in, name, t, w)
}

// passTwiddles is pass p's table (kgen.RealFftPass.Twiddles): for j =
// 1 ... ip-1, h = 1 ... (ido-1)/2, ducc's root j l1 h of the length
// rounded to a part of width bits.
func passTwiddles(roots *unityRoots, p kgen.RealFftPass, bits int) [][2]float64 {
	var w [][2]float64
	for j := int64(1); j < p.Radix; j++ {
		for h := int64(1); h <= (p.Ido-1)/2; h++ {
			re, im := roots.at(j * p.L1 * h)
			w = append(w, [2]float64{rounded(re, bits), rounded(im, bits)})
		}
	}
	return w
}
