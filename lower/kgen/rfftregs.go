package kgen

import (
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// RealFftRegisterMax is the longest sequence whose passes one
// invocation runs from registers (RealFftRegistersKernel): as many
// values as a complex stage's 64 hold parts (FftStageMax).
const RealFftRegisterMax = 2 * FftStageMax

// RealFftRegistersKernel generates a real transform's passes (in order,
// each over all the sequences, of length at most RealFftRegisterMax) as
// one kernel of an invocation per sequence: it loads the sequence once,
// runs every pass's loop bodies (rfftpasses.go) on its values in
// registers, k, h and so every position a constant, and stores the
// result once, where a kernel per pass loads and stores every value at
// every pass. The twiddles are constants: tables gives each pass's (its
// Twiddles values, (re, im), in the table's order). The arithmetic is
// the passes' own, so the values are the same. Bindings: the source,
// the destination. Push constant 0: the sequence count.
func RealFftRegistersKernel(env Env, t hlo.ElementType, passes []RealFftPass, tables [][][2]float64) (*Kernel, error) {
	if len(passes) == 0 || len(tables) != len(passes) {
		return nil, fmt.Errorf("kgen: real FFT of %d passes, %d twiddle tables", len(passes), len(tables))
	}
	n := passes[0].Length()
	if n > RealFftRegisterMax {
		return nil, fmt.Errorf("kgen: real FFT of length %d in registers", n)
	}
	var names []string
	for i, p := range passes {
		if err := p.check(t); err != nil {
			return nil, err
		}
		if p.Length() != n || int64(len(tables[i])) != p.Twiddles() {
			return nil, fmt.Errorf("kgen: real FFT pass %s of length %d with %d twiddles", p.name(), p.Length(), len(tables[i]))
		}
		names = append(names, p.name())
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
	name := fmt.Sprintf("rfft_regs_%s_%s", strings.Join(names, "_"), t)
	return k.perElement(name, func(seq spirv.ID) error {
		u32 := k.u32()
		cu := func(v int64) spirv.ID { return k.cu32(uint32(v)) }
		// index is position pos of the sequence at stride: one past it
		// on the half spectrum but at position 0.
		index := func(stride int64, half bool, pos int64) spirv.ID {
			if half && pos > 0 {
				pos++
			}
			return k.f.IAdd(u32, k.f.IMul(u32, seq, cu(stride)), cu(pos))
		}
		cur := make([]val, n)
		for pos := range n {
			cur[pos] = k.load(src, index(inLen, first.HalfIn, pos), t)
		}
		for pi, p := range passes {
			next := make([]val, n)
			ip, l1, ido := p.Radix, p.L1, p.Ido
			var failed error
			for kk := range l1 {
				// Rows j's positions at k (CC and CH, as realPassTask).
				byK := func(j int64) int64 { return (kk + l1*j) * ido }
				byJ := func(j int64) int64 { return (j + ip*kk) * ido }
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
						if v := cur[inRow(j)+at(a)]; v.id != 0 {
							return v
						}
						failed = fmt.Errorf("kgen: real FFT pass %s reads position %d, which the pass before does not write", p.name(), inRow(j)+at(a))
						return val{k.constFloat(t, 0), t}
					},
					ch: func(a spirv.ID, j int64, v val) {
						if p.Scale != 1 {
							v = k.op(spirv.OpFMul, t, k.constFloat(t, p.Scale), v.id)
						}
						next[outRow(j)+at(a)] = v
					},
				}
				body := g.fixedPass()
				if ip > 5 {
					body = g.genericPass()
				}
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
			cur = next
		}
		for pos, v := range cur {
			if v.id == 0 {
				return fmt.Errorf("kgen: real FFT of %d: the last pass does not write position %d", n, pos)
			}
			k.storeElem(dst, index(outLen, last.HalfOut, int64(pos)), v.id)
		}
		if last.HalfOut {
			// The imaginary parts of X_0 and X_(N/2).
			zero := k.constFloat(t, 0)
			k.storeElem(dst, k.f.IAdd(u32, k.f.IMul(u32, seq, cu(outLen)), cu(1)), zero)
			if n%2 == 0 {
				k.storeElem(dst, k.f.IAdd(u32, k.f.IMul(u32, seq, cu(outLen)), cu(outLen-1)), zero)
			}
		}
		return nil
	})
}
