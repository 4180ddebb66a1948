package lower

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// Real transforms (RFFT, IRFFT) along the last dimension run FFTPACK's
// radix passes in the order of operations of ducc, the library behind
// XLA's CPU FFTs, so that vkjit's results are XLA's on the CPU bit for
// bit (every sum rounded where ducc rounds it, its twiddles computed as
// it computes them: fftroots.go) with pocketfft's accuracy: an element
// where the transform's sums cancel otherwise differs from XLA's by far
// more than the 3 ulp JAX's tests allow, whatever the algorithm's
// accuracy (docs/ACCURACY.md). Each pass is a few hundred elementwise
// and data-movement ops over all rows at once: a value here is an array
// [rows, l1, m], m of the pass's ido positions (all, one, or every other
// one), and a pass reads and writes the layouts FFTPACK gives its
// arrays, [ip][l1][ido] and [l1][ip][ido] (split, pass). The fusion
// spreads a pass over a few kernels (its rows are concatenates, each a
// kernel); docs/BENCHMARKS.md has what that costs. The lengths ducc
// transforms otherwise (packable) keep the DFT matrices of fft.go.
type pack struct {
	x     *cx
	in    *hlo.Instruction
	t     hlo.ElementType
	bits  int
	rows  int64
	n     int64
	roots *unityRoots
}

func newPack(x *cx, in *hlo.Instruction, t hlo.ElementType, rows, n int64) *pack {
	return &pack{x: x, in: in, t: t, bits: 8 * t.Bytes(), rows: rows, n: n, roots: newUnityRoots(n)}
}

// rfft is the forward transform of v [rows, n]: the parts [rows, n/2+1]
// of the half spectrum. The passes run last factor first, as ducc's
// forward real transform runs them.
func (p *pack) rfft(v *hlo.Instruction) (re, im *hlo.Instruction) {
	f := packFactors(p.n)
	for k := len(f) - 1; k >= 0; k-- {
		l1 := prod(f[:k])
		v = p.pass(v, f[k], l1, p.n/(f[k]*l1), true)
	}
	// The half-complex order r0, r1, i1, r2, i2, ... (and r_(n/2) last
	// for an even n); the imaginary parts of X_0 and X_(n/2) are zero.
	v = p.x.reshape(p.in, v, []int64{p.rows, 1, p.n})
	r0 := p.strided(v, 0, 1, 1)
	zero := p.k(0, r0)
	re = p.concat(2, r0, p.strided(v, 1, p.n, 2))
	im = zero
	if p.n > 2 {
		im = p.concat(2, zero, p.strided(v, 2, p.n, 2))
	}
	if p.n%2 == 0 {
		im = p.concat(2, im, zero)
	}
	m := p.n/2 + 1
	return p.x.reshape(p.in, re, []int64{p.rows, m}), p.x.reshape(p.in, im, []int64{p.rows, m})
}

// irfft is the inverse transform of the half spectrum's parts [rows,
// n/2+1], scaled by 1/n (rounded to the part type, then multiplied, as
// XLA asks of ducc); the imaginary parts of X_0 and X_(n/2) are not read.
func (p *pack) irfft(re, im *hlo.Instruction) *hlo.Instruction {
	m := p.n/2 + 1
	re3, im3 := p.x.reshape(p.in, re, []int64{p.rows, 1, m}), p.x.reshape(p.in, im, []int64{p.rows, 1, m})
	pairs := (p.n - 1) / 2
	parts := []*hlo.Instruction{p.strided(re3, 0, 1, 1)}
	if pairs > 0 {
		parts = append(parts, p.interleave(p.strided(re3, 1, 1+pairs, 1), p.strided(im3, 1, 1+pairs, 1)))
	}
	if p.n%2 == 0 {
		parts = append(parts, p.strided(re3, m-1, m, 1))
	}
	v := p.x.reshape(p.in, p.concat(2, parts...), []int64{p.rows, p.n})
	f := packFactors(p.n)
	for k := range f {
		l1 := prod(f[:k])
		v = p.pass(v, f[k], l1, p.n/(f[k]*l1), false)
	}
	if p.n > 1 {
		v = p.mul(p.k(rounded(1/float64(p.n), p.bits), v), v)
	}
	return v
}

func prod(f []int64) int64 {
	r := int64(1)
	for _, x := range f {
		r *= x
	}
	return r
}

// pass is one radix-ip pass over v [rows, n], forward or backward.
func (p *pack) pass(v *hlo.Instruction, ip, l1, ido int64, fwd bool) *hlo.Instruction {
	var cc []*hlo.Instruction
	if fwd {
		cc = p.split(v, ip, l1, ido, 1)
	} else {
		cc = p.split(v, ip, l1, ido, 2)
	}
	// FFTPACK's passes by radix, backward and forward; other primes take
	// the generic ones.
	fixed := map[int64][2]func([]*hlo.Instruction, int64, int64) [][]piece{
		2: {p.radb2, p.radf2}, 3: {p.radb3, p.radf3}, 4: {p.radb4, p.radf4}, 5: {p.radb5, p.radf5},
	}
	var ch [][]piece
	switch f, ok := fixed[ip]; {
	case ok && fwd:
		ch = f[1](cc, l1, ido)
	case ok:
		ch = f[0](cc, l1, ido)
	case fwd:
		ch = p.radfg(cc, ip, l1, ido)
	default:
		ch = p.radbg(cc, ip, l1, ido)
	}
	slabs := make([]*hlo.Instruction, ip)
	for j, pc := range ch {
		slabs[j] = p.assemble(l1, ido, pc)
	}
	// A forward pass writes [l1][ip][ido], a backward one [ip][l1][ido].
	dim := 1
	if fwd {
		dim = 2
	}
	for j, s := range slabs {
		d := []int64{p.rows, l1, ido}
		slabs[j] = p.x.reshape(p.in, s, slices.Insert(d, dim, 1))
	}
	return p.x.reshape(p.in, p.concat(dim, slabs...), []int64{p.rows, p.n})
}

// split is v [rows, n] as its ip rows [rows, l1, ido]: the rows' index
// is dimension dim of v as [rows, ip, l1, ido] (dim 1) or [rows, l1,
// ip, ido] (dim 2).
func (p *pack) split(v *hlo.Instruction, ip, l1, ido int64, dim int) []*hlo.Instruction {
	v4 := p.x.reshape(p.in, v, slices.Insert([]int64{p.rows, l1, ido}, dim, ip))
	out := make([]*hlo.Instruction, ip)
	for j := range ip {
		out[j] = p.x.reshape(p.in, p.x.slice(p.in, v4, dim, j, j+1, 1), []int64{p.rows, l1, ido})
	}
	return out
}

// piece is a value for positions at of a row.
type piece struct {
	at []int64
	v  *hlo.Instruction
}

// lanes are the positions FFTPACK's inner loops visit, for i = 2, 4,
// ... < ido: i-1, i, ic-1 and ic with ic = ido-i.
type lanes struct{ im1, i, icm1, ic []int64 }

func lanesOf(ido int64) lanes {
	var l lanes
	for i := int64(2); i < ido; i += 2 {
		l.im1 = append(l.im1, i-1)
		l.i = append(l.i, i)
		l.icm1 = append(l.icm1, ido-i-1)
		l.ic = append(l.ic, ido-i)
	}
	return l
}

// odds are positions 1, 3, ... <= ido-2 (the generic passes' i), with
// i+1, ic = ido-i-2 and ic+1.
type odds struct{ i, i1, ic, ic1 []int64 }

func oddsOf(ido int64) odds {
	var o odds
	for i := int64(1); i <= ido-2; i += 2 {
		o.i = append(o.i, i)
		o.i1 = append(o.i1, i+1)
		o.ic = append(o.ic, ido-i-2)
		o.ic1 = append(o.ic1, ido-i-1)
	}
	return o
}

// pick is row [rows, l1, ido] at positions at (an arithmetic
// progression, rising or falling) as [rows, l1, len(at)].
func (p *pack) pick(row *hlo.Instruction, at []int64) *hlo.Instruction {
	step := int64(1)
	if len(at) > 1 {
		step = at[1] - at[0]
	}
	for i, a := range at {
		if a != at[0]+int64(i)*step || step == 0 {
			p.x.fail(fmt.Errorf("fftpack: positions %v are not a progression", at))
			break
		}
	}
	lo, hi := at[0], at[len(at)-1]
	if step < 0 {
		lo, hi, step = hi, lo, -step
	}
	v := p.strided(row, lo, hi+1, step)
	if at[0] > lo {
		v = p.reverse(v)
	}
	return v
}

// reverse is v with its last dimension reversed.
func (p *pack) reverse(v *hlo.Instruction) *hlo.Instruction {
	r := p.x.inst(p.in, hlo.OpReverse, v.Shape, v)
	r.A.Dimensions, r.A.HasDimensions = []int64{int64(v.Shape.Rank() - 1)}, true
	return r
}

// strided is v at positions lo, lo+step, ... < hi of its last
// dimension.
func (p *pack) strided(v *hlo.Instruction, lo, hi, step int64) *hlo.Instruction {
	return p.x.slice(p.in, v, v.Shape.Rank()-1, lo, hi, step)
}

// concat joins vs along dimension dim.
func (p *pack) concat(dim int, vs ...*hlo.Instruction) *hlo.Instruction {
	if len(vs) == 1 {
		return vs[0]
	}
	d := slices.Clone(vs[0].Shape.Dims)
	d[dim] = 0
	for _, v := range vs {
		d[dim] += v.Shape.Dims[dim]
	}
	c := p.x.inst(p.in, hlo.OpConcatenate, hlo.ArrayShape(p.t, d...), vs...)
	c.A.Dimensions, c.A.HasDimensions = []int64{int64(dim)}, true
	return c
}

// interleave is a0, b0, a1, b1, ... along the last dimension of a and b
// [rows, l1, m].
func (p *pack) interleave(a, b *hlo.Instruction) *hlo.Instruction {
	d := a.Shape.Dims
	col := append(slices.Clone(d), 1)
	pr := p.concat(3, p.x.reshape(p.in, a, col), p.x.reshape(p.in, b, col))
	return p.x.reshape(p.in, pr, []int64{d[0], d[1], 2 * d[2]})
}

// assemble is a row [rows, l1, ido] from pieces that cover each
// position once: single positions, whole runs, and two progressions of
// step 2 side by side, which interleave.
func (p *pack) assemble(l1, ido int64, pcs []piece) *hlo.Instruction {
	type run struct {
		lo, cnt, step int64
		v             *hlo.Instruction
	}
	var runs []run
	for _, pc := range pcs {
		if len(pc.at) == 0 {
			continue
		}
		v := pc.v
		at := pc.at
		if len(at) > 1 && at[1] < at[0] {
			v, at = p.reverse(v), slices.Clone(at)
			slices.Reverse(at)
		}
		step := int64(1)
		if len(at) > 1 {
			step = at[1] - at[0]
		}
		runs = append(runs, run{at[0], int64(len(at)), step, v})
	}
	slices.SortFunc(runs, func(a, b run) int { return int(a.lo - b.lo) })
	var parts []*hlo.Instruction
	next := int64(0)
	for i := 0; i < len(runs); i++ {
		r := runs[i]
		switch {
		case r.lo != next:
		case r.step == 1:
			parts = append(parts, r.v)
			next += r.cnt
			continue
		case r.step == 2 && i+1 < len(runs) && runs[i+1].lo == next+1 && runs[i+1].step == 2 && runs[i+1].cnt == r.cnt:
			parts = append(parts, p.interleave(r.v, runs[i+1].v))
			next += 2 * r.cnt
			i++
			continue
		}
		p.x.fail(fmt.Errorf("fftpack: a pass's row does not cover position %d of %d", next, ido))
		return p.x.expr(p.in, p.t, []int64{p.rows, l1, ido}).K(0)
	}
	if next != ido {
		p.x.fail(fmt.Errorf("fftpack: a pass's row covers %d of %d positions", next, ido))
	}
	return p.concat(2, parts...)
}

// The arithmetic: one HLO op, one rounding, each.

func (p *pack) f(v *hlo.Instruction) *rexpr { return p.x.expr(p.in, p.t, v.Shape.Dims) }

func (p *pack) add(a, b *hlo.Instruction) *hlo.Instruction { return p.f(a).Add(a, b) }
func (p *pack) sub(a, b *hlo.Instruction) *hlo.Instruction { return p.f(a).Sub(a, b) }
func (p *pack) mul(a, b *hlo.Instruction) *hlo.Instruction { return p.f(b).Mul(a, b) }

// k is the constant c (already rounded to the part type) shaped like v.
func (p *pack) k(c float64, like *hlo.Instruction) *hlo.Instruction { return p.f(like).K(c) }

// kmul is c v for a constant c.
func (p *pack) kmul(c float64, v *hlo.Instruction) *hlo.Instruction { return p.mul(p.k(c, v), v) }

// pm is c+d and c-d.
func (p *pack) pm(c, d *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	return p.add(c, d), p.sub(c, d)
}

// mulpm is FFTPACK's MULPM: (c e + d f, c f - d e), the product of e +
// i f with the conjugate of c + i d.
func (p *pack) mulpm(c, d, e, f *hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
	return p.add(p.mul(c, e), p.mul(d, f)), p.sub(p.mul(c, f), p.mul(d, e))
}

// wa are the twiddles of factor index x (root (x+1) l1 i', i' = 1 ...
// len(l.i)) as constants shaped like the inner loop's values like.
func (p *pack) wa(x, l1 int64, like *hlo.Instruction) (wr, wi *hlo.Instruction) {
	m := like.Shape.Dims[2]
	re, im := make([]float64, m), make([]float64, m)
	for i := range m {
		r, q := p.roots.at((x + 1) * l1 * (i + 1))
		re[i], im[i] = rounded(r, p.bits), rounded(q, p.bits)
	}
	return p.vec(re, like.Shape, 2), p.vec(im, like.Shape, 2)
}

// vec is the constant vector c along dimension dim of an array of shape
// sh.
func (p *pack) vec(c []float64, sh hlo.Shape, dim int) *hlo.Instruction {
	lit := p.literal(c)
	b := p.x.inst(p.in, hlo.OpBroadcast, sh, p.x.matrix(p.in, lit))
	b.A.Dimensions, b.A.HasDimensions = []int64{int64(dim)}, true
	return b
}

func (p *pack) literal(c []float64) *hlo.Literal {
	b := make([]byte, 0, len(c)*p.t.Bytes())
	for _, v := range c {
		b = appendPart(b, p.t, v)
	}
	l, _ := hlo.NewLiteral(hlo.ArrayShape(p.t, int64(len(c))), b)
	return l
}
