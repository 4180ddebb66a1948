package lower

import "github.com/vkjit/vkjit/hlo"

// FFTPACK's real radix passes (radf forward, radb backward) in ducc's
// order of operations. cc holds the input's ip rows [rows, l1, ido]; a
// pass returns each output row's pieces. In FFTPACK's notation CC(a, k,
// j) is position a of input row j, CH(a, k, j) of output row j; the k
// (l1) dimension and the positions of an inner loop are what the arrays
// vectorize.

// The exact values ducc writes as long double literals.
const (
	sqrt3half = "0.8660254037844386467637231707529362"
	hsqt2     = "0.707106781186547524400844362104849"
	sqrt2     = "1.414213562373095048801688724209698"
	tr11      = "0.3090169943749474241022934171828191"
	ti11      = "0.9510565162951535721164393333793821"
	tr12      = "-0.8090169943749474241022934171828191"
	ti12      = "0.5877852522924731291687059546390728"
)

// pmTo is FFTPACK's PM into the output rows: CH(a1, j1) = c + d and
// CH(a2, j2) = c - d.
func (p *pack) pmTo(ch [][]piece, j1 int64, a1 []int64, j2 int64, a2 []int64, c, d *hlo.Instruction) {
	x, y := p.pm(c, d)
	ch[j1] = append(ch[j1], piece{a1, x})
	ch[j2] = append(ch[j2], piece{a2, y})
}

func (p *pack) radf2(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 2)
	z, e := []int64{0}, []int64{ido - 1}
	p.pmTo(ch, 0, z, 1, e, p.pick(cc[0], z), p.pick(cc[1], z))
	if ido%2 == 0 {
		last1 := p.pick(cc[1], e)
		ch[1] = append(ch[1], piece{z, p.f(last1).Neg(last1)})
		ch[0] = append(ch[0], piece{e, p.pick(cc[0], e)})
	}
	if ido <= 2 {
		return ch
	}
	l := lanesOf(ido)
	c1, c2 := p.pick(cc[1], l.im1), p.pick(cc[1], l.i)
	wr, wi := p.wa(0, l1, c1)
	tr2, ti2 := p.mulpm(wr, wi, c1, c2)
	p.pmTo(ch, 0, l.im1, 1, l.icm1, p.pick(cc[0], l.im1), tr2)
	p.pmTo(ch, 0, l.i, 1, l.ic, ti2, p.pick(cc[0], l.i))
	return ch
}

func (p *pack) radb2(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 2)
	z, e := []int64{0}, []int64{ido - 1}
	p.pmTo(ch, 0, z, 1, z, p.pick(cc[0], z), p.pick(cc[1], e))
	if ido%2 == 0 {
		ch[0] = append(ch[0], piece{e, p.kmul(2, p.pick(cc[0], e))})
		ch[1] = append(ch[1], piece{e, p.kmul(-2, p.pick(cc[1], z))})
	}
	if ido <= 2 {
		return ch
	}
	l := lanesOf(ido)
	a, tr2 := p.pm(p.pick(cc[0], l.im1), p.pick(cc[1], l.icm1))
	ti2, b := p.pm(p.pick(cc[0], l.i), p.pick(cc[1], l.ic))
	ch[0] = append(ch[0], piece{l.im1, a}, piece{l.i, b})
	wr, wi := p.wa(0, l1, ti2)
	hi, lo := p.mulpm(wr, wi, ti2, tr2)
	ch[1] = append(ch[1], piece{l.i, hi}, piece{l.im1, lo})
	return ch
}

func (p *pack) radf3(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 3)
	taur, taui := -0.5, constant(sqrt3half, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	c0, c1, c2 := p.pick(cc[0], z), p.pick(cc[1], z), p.pick(cc[2], z)
	cr2 := p.add(c1, c2)
	ch[0] = append(ch[0], piece{z, p.add(c0, cr2)})
	ch[2] = append(ch[2], piece{z, p.kmul(taui, p.sub(c2, c1))})
	ch[1] = append(ch[1], piece{e, p.add(c0, p.kmul(taur, cr2))})
	if ido == 1 {
		return ch
	}
	l := lanesOf(ido)
	r0, i0 := p.pick(cc[0], l.im1), p.pick(cc[0], l.i)
	w0r, w0i := p.wa(0, l1, r0)
	w1r, w1i := p.wa(1, l1, r0)
	dr2, di2 := p.mulpm(w0r, w0i, p.pick(cc[1], l.im1), p.pick(cc[1], l.i))
	dr3, di3 := p.mulpm(w1r, w1i, p.pick(cc[2], l.im1), p.pick(cc[2], l.i))
	// ducc's REARRANGE: d2 + d3 and the rotated d2 - d3.
	dr2, di2, dr3, di3 = p.add(dr2, dr3), p.add(di2, di3), p.sub(di2, di3), p.sub(dr3, dr2)
	ch[0] = append(ch[0], piece{l.im1, p.add(r0, dr2)}, piece{l.i, p.add(i0, di2)})
	tr2 := p.add(r0, p.kmul(taur, dr2))
	ti2 := p.add(i0, p.kmul(taur, di2))
	tr3 := p.kmul(taui, dr3)
	ti3 := p.kmul(taui, di3)
	p.pmTo(ch, 2, l.im1, 1, l.icm1, tr2, tr3)
	p.pmTo(ch, 2, l.i, 1, l.ic, ti3, ti2)
	return ch
}

func (p *pack) radb3(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 3)
	taur, taui := -0.5, constant(sqrt3half, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	c0 := p.pick(cc[0], z)
	tr2 := p.kmul(2, p.pick(cc[1], e))
	cr2 := p.add(c0, p.kmul(taur, tr2))
	ch[0] = append(ch[0], piece{z, p.add(c0, tr2)})
	ci3 := p.kmul(rounded(2*taui, p.bits), p.pick(cc[2], z))
	p.pmTo(ch, 2, z, 1, z, cr2, ci3)
	if ido == 1 {
		return ch
	}
	l := lanesOf(ido)
	r0, i0 := p.pick(cc[0], l.im1), p.pick(cc[0], l.i)
	r2, i2 := p.pick(cc[2], l.im1), p.pick(cc[2], l.i)
	r1, i1 := p.pick(cc[1], l.icm1), p.pick(cc[1], l.ic)
	tr2 = p.add(r2, r1)
	ti2 := p.sub(i2, i1)
	cr2 = p.add(r0, p.kmul(taur, tr2))
	ci2 := p.add(i0, p.kmul(taur, ti2))
	ch[0] = append(ch[0], piece{l.im1, p.add(r0, tr2)}, piece{l.i, p.add(i0, ti2)})
	cr3 := p.kmul(taui, p.sub(r2, r1))
	ci3 = p.kmul(taui, p.add(i2, i1))
	dr3, dr2 := p.pm(cr2, ci3)
	di2, di3 := p.pm(ci2, cr3)
	w0r, w0i := p.wa(0, l1, r0)
	w1r, w1i := p.wa(1, l1, r0)
	hi, lo := p.mulpm(w0r, w0i, di2, dr2)
	ch[1] = append(ch[1], piece{l.i, hi}, piece{l.im1, lo})
	hi, lo = p.mulpm(w1r, w1i, di3, dr3)
	ch[2] = append(ch[2], piece{l.i, hi}, piece{l.im1, lo})
	return ch
}

func (p *pack) radf4(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 4)
	h := constant(hsqt2, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	tr1, a := p.pm(p.pick(cc[3], z), p.pick(cc[1], z))
	ch[2] = append(ch[2], piece{z, a})
	tr2, b := p.pm(p.pick(cc[0], z), p.pick(cc[2], z))
	ch[1] = append(ch[1], piece{e, b})
	p.pmTo(ch, 0, z, 3, e, tr2, tr1)
	if ido%2 == 0 {
		e1, e3 := p.pick(cc[1], e), p.pick(cc[3], e)
		ti1 := p.kmul(-h, p.add(e1, e3))
		tr1 := p.kmul(h, p.sub(e1, e3))
		p.pmTo(ch, 0, e, 2, e, p.pick(cc[0], e), tr1)
		p.pmTo(ch, 3, z, 1, z, ti1, p.pick(cc[2], e))
	}
	if ido <= 2 {
		return ch
	}
	l := lanesOf(ido)
	r0 := p.pick(cc[0], l.im1)
	w := func(x int64, c []*hlo.Instruction) (*hlo.Instruction, *hlo.Instruction) {
		wr, wi := p.wa(x, l1, r0)
		return p.mulpm(wr, wi, p.pick(c[x+1], l.im1), p.pick(c[x+1], l.i))
	}
	cr2, ci2 := w(0, cc)
	cr3, ci3 := w(1, cc)
	cr4, ci4 := w(2, cc)
	tr1, tr4 := p.pm(cr4, cr2)
	ti1, ti4 := p.pm(ci2, ci4)
	tr2, tr3 := p.pm(r0, cr3)
	ti2, ti3 := p.pm(p.pick(cc[0], l.i), ci3)
	p.pmTo(ch, 0, l.im1, 3, l.icm1, tr2, tr1)
	p.pmTo(ch, 0, l.i, 3, l.ic, ti1, ti2)
	p.pmTo(ch, 2, l.im1, 1, l.icm1, tr3, ti4)
	p.pmTo(ch, 2, l.i, 1, l.ic, tr4, ti3)
	return ch
}

func (p *pack) radb4(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 4)
	s2 := constant(sqrt2, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	tr2, tr1 := p.pm(p.pick(cc[0], z), p.pick(cc[3], e))
	tr3 := p.kmul(2, p.pick(cc[1], e))
	tr4 := p.kmul(2, p.pick(cc[2], z))
	p.pmTo(ch, 0, z, 2, z, tr2, tr3)
	p.pmTo(ch, 3, z, 1, z, tr1, tr4)
	if ido%2 == 0 {
		ti1, ti2 := p.pm(p.pick(cc[3], z), p.pick(cc[1], z))
		tr2, tr1 := p.pm(p.pick(cc[0], e), p.pick(cc[2], e))
		ch[0] = append(ch[0], piece{e, p.add(tr2, tr2)})
		ch[1] = append(ch[1], piece{e, p.kmul(s2, p.sub(tr1, ti1))})
		ch[2] = append(ch[2], piece{e, p.add(ti2, ti2)})
		ch[3] = append(ch[3], piece{e, p.kmul(-s2, p.add(tr1, ti1))})
	}
	if ido <= 2 {
		return ch
	}
	l := lanesOf(ido)
	tr2, tr1 = p.pm(p.pick(cc[0], l.im1), p.pick(cc[3], l.icm1))
	ti1, ti2 := p.pm(p.pick(cc[0], l.i), p.pick(cc[3], l.ic))
	tr4, ti3 := p.pm(p.pick(cc[2], l.i), p.pick(cc[1], l.ic))
	tr3, ti4 := p.pm(p.pick(cc[2], l.im1), p.pick(cc[1], l.icm1))
	a, cr3 := p.pm(tr2, tr3)
	ch[0] = append(ch[0], piece{l.im1, a})
	a, ci3 := p.pm(ti2, ti3)
	ch[0] = append(ch[0], piece{l.i, a})
	cr4, cr2 := p.pm(tr1, tr4)
	ci2, ci4 := p.pm(ti1, ti4)
	for x, c := range [][2]*hlo.Instruction{{ci2, cr2}, {ci3, cr3}, {ci4, cr4}} {
		wr, wi := p.wa(int64(x), l1, tr2)
		hi, lo := p.mulpm(wr, wi, c[0], c[1])
		ch[x+1] = append(ch[x+1], piece{l.i, hi}, piece{l.im1, lo})
	}
	return ch
}

func (p *pack) radf5(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 5)
	r11, i11, r12, i12 := constant(tr11, p.bits), constant(ti11, p.bits), constant(tr12, p.bits), constant(ti12, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	c0 := p.pick(cc[0], z)
	cr2, ci5 := p.pm(p.pick(cc[4], z), p.pick(cc[1], z))
	cr3, ci4 := p.pm(p.pick(cc[3], z), p.pick(cc[2], z))
	ch[0] = append(ch[0], piece{z, p.add(p.add(c0, cr2), cr3)})
	ch[1] = append(ch[1], piece{e, p.add(p.add(c0, p.kmul(r11, cr2)), p.kmul(r12, cr3))})
	ch[2] = append(ch[2], piece{z, p.add(p.kmul(i11, ci5), p.kmul(i12, ci4))})
	ch[3] = append(ch[3], piece{e, p.add(p.add(c0, p.kmul(r12, cr2)), p.kmul(r11, cr3))})
	ch[4] = append(ch[4], piece{z, p.sub(p.kmul(i12, ci5), p.kmul(i11, ci4))})
	if ido == 1 {
		return ch
	}
	l := lanesOf(ido)
	r0, i0 := p.pick(cc[0], l.im1), p.pick(cc[0], l.i)
	var dr, di [6]*hlo.Instruction
	for x := int64(0); x < 4; x++ {
		wr, wi := p.wa(x, l1, r0)
		dr[x+2], di[x+2] = p.mulpm(wr, wi, p.pick(cc[x+1], l.im1), p.pick(cc[x+1], l.i))
	}
	dr[2], di[2], dr[5], di[5] = p.add(dr[2], dr[5]), p.add(di[2], di[5]), p.sub(di[2], di[5]), p.sub(dr[5], dr[2])
	dr[3], di[3], dr[4], di[4] = p.add(dr[3], dr[4]), p.add(di[3], di[4]), p.sub(di[3], di[4]), p.sub(dr[4], dr[3])
	ch[0] = append(ch[0], piece{l.im1, p.add(p.add(r0, dr[2]), dr[3])}, piece{l.i, p.add(p.add(i0, di[2]), di[3])})
	tr2 := p.add(p.add(r0, p.kmul(r11, dr[2])), p.kmul(r12, dr[3]))
	ti2 := p.add(p.add(i0, p.kmul(r11, di[2])), p.kmul(r12, di[3]))
	tr3 := p.add(p.add(r0, p.kmul(r12, dr[2])), p.kmul(r11, dr[3]))
	ti3 := p.add(p.add(i0, p.kmul(r12, di[2])), p.kmul(r11, di[3]))
	tr5 := p.add(p.kmul(i11, dr[5]), p.kmul(i12, dr[4]))
	ti5 := p.add(p.kmul(i11, di[5]), p.kmul(i12, di[4]))
	tr4 := p.sub(p.kmul(i12, dr[5]), p.kmul(i11, dr[4]))
	ti4 := p.sub(p.kmul(i12, di[5]), p.kmul(i11, di[4]))
	p.pmTo(ch, 2, l.im1, 1, l.icm1, tr2, tr5)
	p.pmTo(ch, 2, l.i, 1, l.ic, ti5, ti2)
	p.pmTo(ch, 4, l.im1, 3, l.icm1, tr3, tr4)
	p.pmTo(ch, 4, l.i, 3, l.ic, ti4, ti3)
	return ch
}

func (p *pack) radb5(cc []*hlo.Instruction, l1, ido int64) [][]piece {
	ch := make([][]piece, 5)
	r11, i11, r12, i12 := constant(tr11, p.bits), constant(ti11, p.bits), constant(tr12, p.bits), constant(ti12, p.bits)
	z, e := []int64{0}, []int64{ido - 1}
	c0 := p.pick(cc[0], z)
	twice := func(v *hlo.Instruction) *hlo.Instruction { return p.add(v, v) }
	ti5, ti4 := twice(p.pick(cc[2], z)), twice(p.pick(cc[4], z))
	tr2, tr3 := twice(p.pick(cc[1], e)), twice(p.pick(cc[3], e))
	ch[0] = append(ch[0], piece{z, p.add(p.add(c0, tr2), tr3)})
	cr2 := p.add(p.add(c0, p.kmul(r11, tr2)), p.kmul(r12, tr3))
	cr3 := p.add(p.add(c0, p.kmul(r12, tr2)), p.kmul(r11, tr3))
	ci5, ci4 := p.mulpm(ti5, ti4, p.k(i11, c0), p.k(i12, c0))
	p.pmTo(ch, 4, z, 1, z, cr2, ci5)
	p.pmTo(ch, 3, z, 2, z, cr3, ci4)
	if ido == 1 {
		return ch
	}
	l := lanesOf(ido)
	r0, i0 := p.pick(cc[0], l.im1), p.pick(cc[0], l.i)
	tr2, tr5 := p.pm(p.pick(cc[2], l.im1), p.pick(cc[1], l.icm1))
	ti5, ti2 := p.pm(p.pick(cc[2], l.i), p.pick(cc[1], l.ic))
	tr3, tr4 := p.pm(p.pick(cc[4], l.im1), p.pick(cc[3], l.icm1))
	ti4, ti3 := p.pm(p.pick(cc[4], l.i), p.pick(cc[3], l.ic))
	ch[0] = append(ch[0], piece{l.im1, p.add(p.add(r0, tr2), tr3)}, piece{l.i, p.add(p.add(i0, ti2), ti3)})
	cr2 = p.add(p.add(r0, p.kmul(r11, tr2)), p.kmul(r12, tr3))
	ci2 := p.add(p.add(i0, p.kmul(r11, ti2)), p.kmul(r12, ti3))
	cr3 = p.add(p.add(r0, p.kmul(r12, tr2)), p.kmul(r11, tr3))
	ci3 := p.add(p.add(i0, p.kmul(r12, ti2)), p.kmul(r11, ti3))
	cr5, cr4 := p.mulpm(tr5, tr4, p.k(i11, r0), p.k(i12, r0))
	ci5, ci4 = p.mulpm(ti5, ti4, p.k(i11, r0), p.k(i12, r0))
	var dr, di [6]*hlo.Instruction
	dr[4], dr[3] = p.pm(cr3, ci4)
	di[3], di[4] = p.pm(ci3, cr4)
	dr[5], dr[2] = p.pm(cr2, ci5)
	di[2], di[5] = p.pm(ci2, cr5)
	for x := int64(0); x < 4; x++ {
		wr, wi := p.wa(x, l1, r0)
		hi, lo := p.mulpm(wr, wi, di[x+2], dr[x+2])
		ch[x+1] = append(ch[x+1], piece{l.i, hi}, piece{l.im1, lo})
	}
	return ch
}

// genericSums are the generic passes' sums over the rows c (each [rows,
// l1, ido]), for l = 1 ... ipph-1 at once along a new dimension 1:
// lo[l] = c_0 + sum_j cos(2 pi jl/ip) c_j and hi[l] = sum_j sin(2 pi
// jl/ip) c_(ip-j), j < ipph, added in ducc's groups (the first two terms,
// then fours, twos and ones, each group summed before it is added).
func (p *pack) genericSums(c []*hlo.Instruction, ip int64) (lo, hi *hlo.Instruction) {
	ipph := (ip + 1) / 2
	nl := ipph - 1
	d := c[0].Shape.Dims
	wide := []int64{p.rows, nl, d[1], d[2]}
	sh := hlo.ArrayShape(p.t, wide...)
	spread := func(v *hlo.Instruction) *hlo.Instruction {
		b := p.x.inst(p.in, hlo.OpBroadcast, sh, v)
		b.A.Dimensions, b.A.HasDimensions = []int64{0, 2, 3}, true
		return b
	}
	// cs(j) are the coefficients cos and sin of 2 pi jl/ip over l, the
	// roots of index (jl mod ip) n/ip rounded to the part type.
	cs := func(j int64) (*hlo.Instruction, *hlo.Instruction) {
		re, im := make([]float64, nl), make([]float64, nl)
		for l := int64(1); l <= nl; l++ {
			r, q := p.roots.at((j * l % ip) * (p.n / ip))
			re[l-1], im[l-1] = rounded(r, p.bits), rounded(q, p.bits)
		}
		return p.vec(re, sh, 1), p.vec(im, sh, 1)
	}
	terms := func(j, cnt int64) (*hlo.Instruction, *hlo.Instruction) {
		var sl, sh *hlo.Instruction
		for q := j; q < j+cnt; q++ {
			ar, ai := cs(q)
			tl, th := p.mul(ar, spread(c[q])), p.mul(ai, spread(c[ip-q]))
			if sl == nil {
				sl, sh = tl, th
			} else {
				sl, sh = p.add(sl, tl), p.add(sh, th)
			}
		}
		return sl, sh
	}
	a1, b1 := cs(1)
	a2, b2 := cs(2)
	lo = p.add(p.add(spread(c[0]), p.mul(a1, spread(c[1]))), p.mul(a2, spread(c[2])))
	hi = p.add(p.mul(b1, spread(c[ip-1])), p.mul(b2, spread(c[ip-2])))
	j := int64(3)
	for ; j < ipph-3; j += 4 {
		tl, th := terms(j, 4)
		lo, hi = p.add(lo, tl), p.add(hi, th)
	}
	for ; j < ipph-1; j += 2 {
		tl, th := terms(j, 2)
		lo, hi = p.add(lo, tl), p.add(hi, th)
	}
	for ; j < ipph; j++ {
		tl, th := terms(j, 1)
		lo, hi = p.add(lo, tl), p.add(hi, th)
	}
	return lo, hi
}

// row is row l (1-based) of the sums' new dimension, [rows, l1, ido].
func (p *pack) row(s *hlo.Instruction, l int64) *hlo.Instruction {
	d := s.Shape.Dims
	return p.x.reshape(p.in, p.x.slice(p.in, s, 1, l-1, l, 1), []int64{d[0], d[2], d[3]})
}

// dcSum is c_0 + c_1 + ... + c_(ipph-1), in that order.
func (p *pack) dcSum(c []*hlo.Instruction, ipph int64) *hlo.Instruction {
	s := c[0]
	for j := int64(1); j < ipph; j++ {
		s = p.add(s, c[j])
	}
	return s
}

// genericRows is the generic pass's middle: rows c_1 ... c_(ip-1) put
// together from the pieces rows(j) gives for c_j and c_(ip-j), then the
// sums over them and c_0 (genericSums) and the first output row, their
// plain sum (dcSum).
func (p *pack) genericRows(c0 *hlo.Instruction, ip, l1, ido int64, rows func(j int64) (pj, pjc []piece)) (lo, hi, dc *hlo.Instruction) {
	ipph := (ip + 1) / 2
	c := make([]*hlo.Instruction, ip)
	c[0] = c0
	for j := int64(1); j < ipph; j++ {
		pj, pjc := rows(j)
		c[j], c[ip-j] = p.assemble(l1, ido, pj), p.assemble(l1, ido, pjc)
	}
	lo, hi = p.genericSums(c, ip)
	return lo, hi, p.dcSum(c, ipph)
}

func (p *pack) radfg(cc []*hlo.Instruction, ip, l1, ido int64) [][]piece {
	ipph := (ip + 1) / 2
	z, e := []int64{0}, []int64{ido - 1}
	o := oddsOf(ido)
	lo, hi, dc := p.genericRows(cc[0], ip, l1, ido, func(j int64) (pj, pjc []piece) {
		jc := ip - j
		// Position 0: the sum and difference of rows jc and j; the
		// others: each row times its twiddle, then sums and
		// differences of the pair.
		a, b := p.pick(cc[jc], z), p.pick(cc[j], z)
		pj, pjc = []piece{{z, p.add(a, b)}}, []piece{{z, p.sub(a, b)}}
		if ido > 1 {
			t1, t2 := p.pick(cc[j], o.i), p.pick(cc[j], o.i1)
			t3, t4 := p.pick(cc[jc], o.i), p.pick(cc[jc], o.i1)
			wr, wi := p.wa(j-1, l1, t1)
			w2r, w2i := p.wa(jc-1, l1, t1)
			x1 := p.add(p.mul(wr, t1), p.mul(wi, t2))
			x2 := p.sub(p.mul(wr, t2), p.mul(wi, t1))
			x3 := p.add(p.mul(w2r, t3), p.mul(w2i, t4))
			x4 := p.sub(p.mul(w2r, t4), p.mul(w2i, t3))
			a, b := p.pm(x3, x1)
			pj = append(pj, piece{o.i, a})
			pjc = append(pjc, piece{o.i1, b})
			a, b = p.pm(x2, x4)
			pj = append(pj, piece{o.i1, a})
			pjc = append(pjc, piece{o.i, b})
		}
		return pj, pjc
	})
	ch := make([][]piece, ip)
	ch[0] = []piece{{iotaDims(int(ido)), dc}}
	for j := int64(1); j < ipph; j++ {
		lj, hj := p.row(lo, j), p.row(hi, j)
		j2 := 2*j - 1
		ch[j2] = append(ch[j2], piece{e, p.pick(lj, z)})
		ch[j2+1] = append(ch[j2+1], piece{z, p.pick(hj, z)})
		if ido == 1 {
			continue
		}
		li, li1, hi_, hi1 := p.pick(lj, o.i), p.pick(lj, o.i1), p.pick(hj, o.i), p.pick(hj, o.i1)
		ch[j2+1] = append(ch[j2+1], piece{o.i, p.add(li, hi_)}, piece{o.i1, p.add(li1, hi1)})
		ch[j2] = append(ch[j2], piece{o.ic, p.sub(li, hi_)}, piece{o.ic1, p.sub(hi1, li1)})
	}
	return ch
}

func (p *pack) radbg(cc []*hlo.Instruction, ip, l1, ido int64) [][]piece {
	ipph := (ip + 1) / 2
	z, e := []int64{0}, []int64{ido - 1}
	o := oddsOf(ido)
	lo, hi, dc := p.genericRows(cc[0], ip, l1, ido, func(j int64) (pj, pjc []piece) {
		j2 := 2*j - 1
		pj = []piece{{z, p.kmul(2, p.pick(cc[j2], e))}}
		pjc = []piece{{z, p.kmul(2, p.pick(cc[j2+1], z))}}
		if ido > 1 {
			ai, ai1 := p.pick(cc[j2+1], o.i), p.pick(cc[j2+1], o.i1)
			bc, bc1 := p.pick(cc[j2], o.ic), p.pick(cc[j2], o.ic1)
			pj = append(pj, piece{o.i, p.add(ai, bc)}, piece{o.i1, p.sub(ai1, bc1)})
			pjc = append(pjc, piece{o.i, p.sub(ai, bc)}, piece{o.i1, p.add(ai1, bc1)})
		}
		return pj, pjc
	})
	ch := make([][]piece, ip)
	ch[0] = []piece{{iotaDims(int(ido)), dc}}
	for j := int64(1); j < ipph; j++ {
		jc := ip - j
		lj, hj := p.row(lo, j), p.row(hi, j)
		p.pmTo(ch, jc, z, j, z, p.pick(lj, z), p.pick(hj, z))
		if ido == 1 {
			continue
		}
		li, li1, hi_, hi1 := p.pick(lj, o.i), p.pick(lj, o.i1), p.pick(hj, o.i), p.pick(hj, o.i1)
		// Then each row but the first times its twiddle.
		rot := func(x int64, t1, t2 *hlo.Instruction) []piece {
			wr, wi := p.wa(x, l1, t1)
			return []piece{{o.i, p.sub(p.mul(wr, t1), p.mul(wi, t2))}, {o.i1, p.add(p.mul(wr, t2), p.mul(wi, t1))}}
		}
		ch[j] = append(ch[j], rot(j-1, p.sub(li, hi1), p.add(li1, hi_))...)
		ch[jc] = append(ch[jc], rot(jc-1, p.add(li, hi1), p.sub(li1, hi_))...)
	}
	return ch
}
