package kgen

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// RealFftRegisterMax bounds the values one invocation holds to run
// passes from registers (RealFftRegistersKernel), as a complex stage's
// (FftStageMax). Past it lavapipe's compile grows faster than the code:
// at 128, sub-transforms of 120 to 125 values took 0.3-0.6 s more to
// compile than their kernels per pass (docs/BENCHMARKS.md), at 64 none.
const RealFftRegisterMax = FftStageMax

// RealFftSubs is the count L of independent sub-transforms that
// consecutive passes split a sequence into, the least l1 among them:
// pass t's k runs over k0 + L c, k0 < L, and the values its rows at
// those k read are those the pass before wrote at them, the positions p
// with floor(p/ido_t) = k0 mod L (forward; backward floor(p/(ip_t
// ido_t))), N/L of them.
func RealFftSubs(passes []RealFftPass) int64 {
	l := passes[0].L1
	for _, p := range passes {
		l = min(l, p.L1)
	}
	return l
}

// RealFftRegistersKernel generates consecutive passes of a real
// transform (in order, each over all the sequences; N/RealFftSubs at
// most RealFftRegisterMax) as one kernel of an invocation per
// sub-transform: it loads its N/L values once, runs the passes' loop
// bodies (rfftpasses.go) for its k on them in registers, every position
// a constant offset from k0's (the dynamic part of a position is ido
// k0 between two passes, ip ido k0 at the other side of a pass: the same
// at both sides of the registers between passes), and stores them once,
// where a kernel per pass loads and stores every value at every pass.
// The twiddles are constants: tables gives each pass's (its Twiddles
// values, (re, im), in the table's order). The arithmetic is the
// passes' own, so the values are the same. Bindings: the source, the
// destination. Push constant 0: the invocation count, Rows L.
func RealFftRegistersKernel(env Env, t hlo.ElementType, passes []RealFftPass, tables [][][2]float64) (*Kernel, error) {
	if len(passes) == 0 || len(tables) != len(passes) {
		return nil, fmt.Errorf("kgen: real FFT of %d passes, %d twiddle tables", len(passes), len(tables))
	}
	n, subs := passes[0].Length(), RealFftSubs(passes)
	if n/subs > RealFftRegisterMax {
		return nil, fmt.Errorf("kgen: real FFT passes of %d values in registers", n/subs)
	}
	for i, p := range passes {
		if err := p.check(t); err != nil {
			return nil, err
		}
		if p.Length() != n || int64(len(tables[i])) != p.Twiddles() || i > 0 && p.Forward != passes[0].Forward {
			return nil, fmt.Errorf("kgen: real FFT pass %s of length %d with %d twiddles after %s", p.name(), p.Length(), len(tables[i]), passes[0].name())
		}
	}
	first, last := passes[0], passes[len(passes)-1]
	inLen, _ := first.strides()
	_, outLen := last.strides()
	rows := first.Rows
	k := env.builder(1)
	src, _, dst, err := k.bindRealFft(t, rows*inLen, 0, rows*outLen)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("rfft_regs_%s_%s", passNames(passes), t)
	if subs > 1 {
		name = fmt.Sprintf("rfft_regs%d_%s_%s", subs, passNames(passes), t)
	}
	return k.perElement(name, func(e spirv.ID) error {
		u32 := k.u32()
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		seq, k0 := k.f.UDiv(u32, e, cu(subs)), k.f.UMod(u32, e, cu(subs))
		// index is the element of a sequence's position static + dyn
		// k0 at stride: one past it on the half spectrum but at
		// position 0 (there subs is 1).
		index := func(stride int64, half bool, static, dyn int64) spirv.ID {
			i := k.seqIndex(k.f.IMul(u32, seq, cu(stride)), cu(static), half, static == 0)
			if subs > 1 {
				i = k.f.IAdd(u32, i, k.f.IMul(u32, k0, cu(dyn)))
			}
			return i
		}
		// The values between passes by the static part of their
		// positions; the first pass loads its own once each.
		cur, loaded := map[int64]val{}, map[int64]val{}
		var dynLast int64
		for pi, p := range passes {
			next := map[int64]val{}
			ip, l1, ido := p.Radix, p.L1, p.Ido
			dynIn, dynOut := ido, ip*ido // CC's and CH's dynamic parts over k0
			if !p.Forward {
				dynIn, dynOut = ip*ido, ido
			}
			dynLast = dynOut
			var failed error
			for c := range l1 / subs {
				// Rows j's positions at k = k0 + subs c, static parts
				// (CC and CH, as realPassTask's).
				byK := func(j int64) int64 { return (subs*c + l1*j) * ido }
				byJ := func(j int64) int64 { return (j + ip*subs*c) * ido }
				inRow, outRow := byJ, byK
				if p.Forward {
					inRow, outRow = byK, byJ
				}
				at := func(a spirv.ID) int64 {
					v, ok := k.constU32(a)
					if !ok {
						failed = fmt.Errorf("kgen: real FFT pass %s at a position not a constant", p.name())
					}
					return int64(v)
				}
				g := &realPass{
					fftArith: fftArith{k: k, t: t},
					p:        p,
					t:        t,
					cc: func(a spirv.ID, j int64) val {
						pos := inRow(j) + at(a)
						if pi == 0 {
							v, ok := loaded[pos]
							if !ok {
								v = k.load(src, index(inLen, p.HalfIn, pos, dynIn), t)
								loaded[pos] = v
							}
							return v
						}
						if v, ok := cur[pos]; ok {
							return v
						}
						failed = fmt.Errorf("kgen: real FFT pass %s reads position %d, which the pass before does not write", p.name(), pos)
						return val{k.constFloat(t, 0), t}
					},
				}
				g.ch = func(a spirv.ID, j int64, v val) { next[outRow(j)+at(a)] = g.scaled(v) }
				body := g.body()
				body.zero(cu(0), cu(ido-1))
				pairs := (ido - 1) / 2
				for h := int64(1); h <= pairs; h++ {
					g.tw = func(x int64) (val, val) {
						w := tables[pi][x*pairs+h-1]
						return val{k.constFloat(t, w[0]), t}, val{k.constFloat(t, w[1]), t}
					}
					body.pair(cu(2*h-1), cu(2*h), cu(ido-2*h-1), cu(ido-2*h))
				}
				if ido%2 == 0 {
					body.last(cu(0), cu(ido-1))
				}
			}
			if failed != nil {
				return failed
			}
			if int64(len(next)) != n/subs {
				return fmt.Errorf("kgen: real FFT pass %s writes %d positions of a sub-transform's %d", p.name(), len(next), n/subs)
			}
			cur = next
		}
		offs := make([]int64, 0, len(cur))
		for pos := range cur {
			offs = append(offs, pos)
		}
		slices.Sort(offs)
		for _, pos := range offs {
			k.storeElem(dst, index(outLen, last.HalfOut, pos, dynLast), cur[pos].id)
		}
		if last.HalfOut {
			k.storeHalfZeros(dst, t, k.f.IMul(u32, seq, cu(outLen)), n)
		}
		return nil
	})
}
