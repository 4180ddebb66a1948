package kgen

import (
	"math/big"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// The bodies of FFTPACK's real passes (rfft.go), transcribed from ducc's
// radf2..5, radb2..5, radfg and radbg: the same operations on the same
// values in the same order, position 0, a pair and its mirror, and an
// even ido's last position apart.

// ducc's constants, long double literals rounded to the part type.
const (
	sqrt3half = "0.8660254037844386467637231707529362"
	hsqt2     = "0.707106781186547524400844362104849"
	sqrt2     = "1.414213562373095048801688724209698"
	tr11      = "0.3090169943749474241022934171828191"
	ti11      = "0.9510565162951535721164393333793821"
	tr12      = "-0.8090169943749474241022934171828191"
	ti12      = "0.5877852522924731291687059546390728"
)

// decimal is dec rounded once to part type t.
func decimal(dec string, t hlo.ElementType) float64 {
	f, _, err := big.ParseFloat(dec, 10, 200, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	if t == hlo.F32 {
		v, _ := f.Float32()
		return float64(v)
	}
	v, _ := f.Float64()
	return v
}

// realPass is a pass's arithmetic over its rows: cc(a, j) reads CC(a, k,
// j) of the invocation's k, ch(a, j, v) writes CH(a, k, j), and tw(x) is
// the pair's twiddle of row x+1.
type realPass struct {
	fftArith
	p  RealFftPass
	t  hlo.ElementType
	cc func(a spirv.ID, j int64) val
	ch func(a spirv.ID, j int64, v val)
	tw func(x int64) (wr, wi val)
}

// passBody is a pass's three loop bodies: zero at position z (e = ido-1
// is the last position), pair at positions a, b = a+1 and their mirrors
// c, d = c+1, last (an even ido only) at position e.
type passBody struct {
	zero, last func(z, e spirv.ID)
	pair       func(a, b, c, d spirv.ID)
}

// body is the pass's loop bodies: radf2..5 and radb2..5, or the generic
// ones past 5.
func (g *realPass) body() passBody {
	if g.p.Radix > 5 {
		return g.genericPass()
	}
	return g.fixedPass()
}

// scaled is v times the pass's Scale, where it is not 1.
func (g *realPass) scaled(v val) val {
	if g.p.Scale == 1 {
		return v
	}
	return g.mul(g.c(g.p.Scale), v)
}

// kmul is c v for a constant c (already a value of the part type).
func (g *realPass) kmul(c float64, v val) val { return g.mul(g.c(c), v) }

// pm is FFTPACK's PM: c+d and c-d.
func (g *realPass) pm(c, d val) (val, val) { return g.add(c, d), g.sub(c, d) }

// mulpm is FFTPACK's MULPM: (c e + d f, c f - d e), the product of e + i
// f with the conjugate of c + i d.
func (g *realPass) mulpm(c, d, e, f val) (val, val) {
	return g.add(g.mul(c, e), g.mul(d, f)), g.sub(g.mul(c, f), g.mul(d, e))
}

// pmTo writes c+d to CH(a1, j1) and c-d to CH(a2, j2).
func (g *realPass) pmTo(j1 int64, a1 spirv.ID, j2 int64, a2 spirv.ID, c, d val) {
	x, y := g.pm(c, d)
	g.ch(a1, j1, x)
	g.ch(a2, j2, y)
}

// rotTo is radb's last step for output row j: MULPM of the twiddle of
// row x+1 and (u, v) to CH(b, j) and CH(a, j).
func (g *realPass) rotTo(j, x int64, a, b spirv.ID, u, v val) {
	wr, wi := g.tw(x)
	hi, lo := g.mulpm(wr, wi, u, v)
	g.ch(b, j, hi)
	g.ch(a, j, lo)
}

// fixedPass is radf2..5 and radb2..5.
func (g *realPass) fixedPass() passBody {
	t := g.t
	none := func(z, e spirv.ID) {}
	cc := g.cc
	switch {
	case g.p.Radix == 2 && g.p.Forward:
		return passBody{
			zero: func(z, e spirv.ID) { g.pmTo(0, z, 1, e, cc(z, 0), cc(z, 1)) },
			last: func(z, e spirv.ID) {
				g.ch(z, 1, g.neg(cc(e, 1)))
				g.ch(e, 0, cc(e, 0))
			},
			pair: func(a, b, c, d spirv.ID) {
				wr, wi := g.tw(0)
				tr2, ti2 := g.mulpm(wr, wi, cc(a, 1), cc(b, 1))
				g.pmTo(0, a, 1, c, cc(a, 0), tr2)
				g.pmTo(0, b, 1, d, ti2, cc(b, 0))
			},
		}
	case g.p.Radix == 2:
		return passBody{
			zero: func(z, e spirv.ID) { g.pmTo(0, z, 1, z, cc(z, 0), cc(e, 1)) },
			last: func(z, e spirv.ID) {
				g.ch(e, 0, g.kmul(2, cc(e, 0)))
				g.ch(e, 1, g.kmul(-2, cc(z, 1)))
			},
			pair: func(a, b, c, d spirv.ID) {
				x, tr2 := g.pm(cc(a, 0), cc(c, 1))
				ti2, y := g.pm(cc(b, 0), cc(d, 1))
				g.ch(a, 0, x)
				g.ch(b, 0, y)
				g.rotTo(1, 0, a, b, ti2, tr2)
			},
		}
	case g.p.Radix == 3 && g.p.Forward:
		taur, taui := -0.5, decimal(sqrt3half, t)
		return passBody{
			zero: func(z, e spirv.ID) {
				c0 := cc(z, 0)
				c1, c2 := cc(z, 1), cc(z, 2)
				cr2 := g.add(c1, c2)
				g.ch(z, 0, g.add(c0, cr2))
				g.ch(z, 2, g.kmul(taui, g.sub(c2, c1)))
				g.ch(e, 1, g.add(c0, g.kmul(taur, cr2)))
			},
			last: none,
			pair: func(a, b, c, d spirv.ID) {
				r0, i0 := cc(a, 0), cc(b, 0)
				w0r, w0i := g.tw(0)
				w1r, w1i := g.tw(1)
				dr2, di2 := g.mulpm(w0r, w0i, cc(a, 1), cc(b, 1))
				dr3, di3 := g.mulpm(w1r, w1i, cc(a, 2), cc(b, 2))
				// ducc's REARRANGE: d2 + d3 and the rotated d2 - d3.
				dr2, di2, dr3, di3 = g.add(dr2, dr3), g.add(di2, di3), g.sub(di2, di3), g.sub(dr3, dr2)
				g.ch(a, 0, g.add(r0, dr2))
				g.ch(b, 0, g.add(i0, di2))
				tr2 := g.add(r0, g.kmul(taur, dr2))
				ti2 := g.add(i0, g.kmul(taur, di2))
				tr3, ti3 := g.kmul(taui, dr3), g.kmul(taui, di3)
				g.pmTo(2, a, 1, c, tr2, tr3)
				g.pmTo(2, b, 1, d, ti3, ti2)
			},
		}
	case g.p.Radix == 3:
		taur, taui := -0.5, decimal(sqrt3half, t)
		return passBody{
			zero: func(z, e spirv.ID) {
				c0 := cc(z, 0)
				tr2 := g.kmul(2, cc(e, 1))
				cr2 := g.add(c0, g.kmul(taur, tr2))
				g.ch(z, 0, g.add(c0, tr2))
				ci3 := g.kmul(2*taui, cc(z, 2))
				g.pmTo(2, z, 1, z, cr2, ci3)
			},
			last: none,
			pair: func(a, b, c, d spirv.ID) {
				r0, i0 := cc(a, 0), cc(b, 0)
				r2, i2 := cc(a, 2), cc(b, 2)
				r1, i1 := cc(c, 1), cc(d, 1)
				tr2, ti2 := g.add(r2, r1), g.sub(i2, i1)
				cr2 := g.add(r0, g.kmul(taur, tr2))
				ci2 := g.add(i0, g.kmul(taur, ti2))
				g.ch(a, 0, g.add(r0, tr2))
				g.ch(b, 0, g.add(i0, ti2))
				cr3 := g.kmul(taui, g.sub(r2, r1))
				ci3 := g.kmul(taui, g.add(i2, i1))
				dr3, dr2 := g.pm(cr2, ci3)
				di2, di3 := g.pm(ci2, cr3)
				g.rotTo(1, 0, a, b, di2, dr2)
				g.rotTo(2, 1, a, b, di3, dr3)
			},
		}
	case g.p.Radix == 4 && g.p.Forward:
		h := decimal(hsqt2, t)
		return passBody{
			zero: func(z, e spirv.ID) {
				tr1, x := g.pm(cc(z, 3), cc(z, 1))
				g.ch(z, 2, x)
				tr2, y := g.pm(cc(z, 0), cc(z, 2))
				g.ch(e, 1, y)
				g.pmTo(0, z, 3, e, tr2, tr1)
			},
			last: func(z, e spirv.ID) {
				e1, e3 := cc(e, 1), cc(e, 3)
				ti1 := g.kmul(-h, g.add(e1, e3))
				tr1 := g.kmul(h, g.sub(e1, e3))
				g.pmTo(0, e, 2, e, cc(e, 0), tr1)
				g.pmTo(3, z, 1, z, ti1, cc(e, 2))
			},
			pair: func(a, b, c, d spirv.ID) {
				w := func(x int64) (val, val) {
					wr, wi := g.tw(x)
					return g.mulpm(wr, wi, cc(a, x+1), cc(b, x+1))
				}
				cr2, ci2 := w(0)
				cr3, ci3 := w(1)
				cr4, ci4 := w(2)
				tr1, tr4 := g.pm(cr4, cr2)
				ti1, ti4 := g.pm(ci2, ci4)
				tr2, tr3 := g.pm(cc(a, 0), cr3)
				ti2, ti3 := g.pm(cc(b, 0), ci3)
				g.pmTo(0, a, 3, c, tr2, tr1)
				g.pmTo(0, b, 3, d, ti1, ti2)
				g.pmTo(2, a, 1, c, tr3, ti4)
				g.pmTo(2, b, 1, d, tr4, ti3)
			},
		}
	case g.p.Radix == 4:
		s2 := decimal(sqrt2, t)
		return passBody{
			zero: func(z, e spirv.ID) {
				tr2, tr1 := g.pm(cc(z, 0), cc(e, 3))
				tr3 := g.kmul(2, cc(e, 1))
				tr4 := g.kmul(2, cc(z, 2))
				g.pmTo(0, z, 2, z, tr2, tr3)
				g.pmTo(3, z, 1, z, tr1, tr4)
			},
			last: func(z, e spirv.ID) {
				ti1, ti2 := g.pm(cc(z, 3), cc(z, 1))
				tr2, tr1 := g.pm(cc(e, 0), cc(e, 2))
				g.ch(e, 0, g.add(tr2, tr2))
				g.ch(e, 1, g.kmul(s2, g.sub(tr1, ti1)))
				g.ch(e, 2, g.add(ti2, ti2))
				g.ch(e, 3, g.kmul(-s2, g.add(tr1, ti1)))
			},
			pair: func(a, b, c, d spirv.ID) {
				tr2, tr1 := g.pm(cc(a, 0), cc(c, 3))
				ti1, ti2 := g.pm(cc(b, 0), cc(d, 3))
				tr4, ti3 := g.pm(cc(b, 2), cc(d, 1))
				tr3, ti4 := g.pm(cc(a, 2), cc(c, 1))
				x, cr3 := g.pm(tr2, tr3)
				g.ch(a, 0, x)
				y, ci3 := g.pm(ti2, ti3)
				g.ch(b, 0, y)
				cr4, cr2 := g.pm(tr1, tr4)
				ci2, ci4 := g.pm(ti1, ti4)
				g.rotTo(1, 0, a, b, ci2, cr2)
				g.rotTo(2, 1, a, b, ci3, cr3)
				g.rotTo(3, 2, a, b, ci4, cr4)
			},
		}
	case g.p.Radix == 5 && g.p.Forward:
		r11, i11, r12, i12 := decimal(tr11, t), decimal(ti11, t), decimal(tr12, t), decimal(ti12, t)
		// s is (x + r1 u) + r2 v, the sums of radf5 and radb5.
		s := func(x val, r1 float64, u val, r2 float64, v val) val {
			return g.add(g.add(x, g.kmul(r1, u)), g.kmul(r2, v))
		}
		return passBody{
			zero: func(z, e spirv.ID) {
				c0 := cc(z, 0)
				cr2, ci5 := g.pm(cc(z, 4), cc(z, 1))
				cr3, ci4 := g.pm(cc(z, 3), cc(z, 2))
				g.ch(z, 0, g.add(g.add(c0, cr2), cr3))
				g.ch(e, 1, s(c0, r11, cr2, r12, cr3))
				g.ch(z, 2, g.add(g.kmul(i11, ci5), g.kmul(i12, ci4)))
				g.ch(e, 3, s(c0, r12, cr2, r11, cr3))
				g.ch(z, 4, g.sub(g.kmul(i12, ci5), g.kmul(i11, ci4)))
			},
			last: none,
			pair: func(a, b, c, d spirv.ID) {
				r0, i0 := cc(a, 0), cc(b, 0)
				var dr, di [6]val
				for x := int64(0); x < 4; x++ {
					wr, wi := g.tw(x)
					dr[x+2], di[x+2] = g.mulpm(wr, wi, cc(a, x+1), cc(b, x+1))
				}
				dr[2], di[2], dr[5], di[5] = g.add(dr[2], dr[5]), g.add(di[2], di[5]), g.sub(di[2], di[5]), g.sub(dr[5], dr[2])
				dr[3], di[3], dr[4], di[4] = g.add(dr[3], dr[4]), g.add(di[3], di[4]), g.sub(di[3], di[4]), g.sub(dr[4], dr[3])
				g.ch(a, 0, g.add(g.add(r0, dr[2]), dr[3]))
				g.ch(b, 0, g.add(g.add(i0, di[2]), di[3]))
				tr2, ti2 := s(r0, r11, dr[2], r12, dr[3]), s(i0, r11, di[2], r12, di[3])
				tr3, ti3 := s(r0, r12, dr[2], r11, dr[3]), s(i0, r12, di[2], r11, di[3])
				tr5 := g.add(g.kmul(i11, dr[5]), g.kmul(i12, dr[4]))
				ti5 := g.add(g.kmul(i11, di[5]), g.kmul(i12, di[4]))
				tr4 := g.sub(g.kmul(i12, dr[5]), g.kmul(i11, dr[4]))
				ti4 := g.sub(g.kmul(i12, di[5]), g.kmul(i11, di[4]))
				g.pmTo(2, a, 1, c, tr2, tr5)
				g.pmTo(2, b, 1, d, ti5, ti2)
				g.pmTo(4, a, 3, c, tr3, tr4)
				g.pmTo(4, b, 3, d, ti4, ti3)
			},
		}
	default: // radb5
		r11, i11, r12, i12 := decimal(tr11, t), decimal(ti11, t), decimal(tr12, t), decimal(ti12, t)
		s := func(x val, r1 float64, u val, r2 float64, v val) val {
			return g.add(g.add(x, g.kmul(r1, u)), g.kmul(r2, v))
		}
		twice := func(v val) val { return g.add(v, v) }
		return passBody{
			zero: func(z, e spirv.ID) {
				c0 := cc(z, 0)
				ti5, ti4 := twice(cc(z, 2)), twice(cc(z, 4))
				tr2, tr3 := twice(cc(e, 1)), twice(cc(e, 3))
				g.ch(z, 0, g.add(g.add(c0, tr2), tr3))
				cr2, cr3 := s(c0, r11, tr2, r12, tr3), s(c0, r12, tr2, r11, tr3)
				ci5, ci4 := g.mulpm(ti5, ti4, g.c(i11), g.c(i12))
				g.pmTo(4, z, 1, z, cr2, ci5)
				g.pmTo(3, z, 2, z, cr3, ci4)
			},
			last: none,
			pair: func(a, b, c, d spirv.ID) {
				r0, i0 := cc(a, 0), cc(b, 0)
				tr2, tr5 := g.pm(cc(a, 2), cc(c, 1))
				ti5, ti2 := g.pm(cc(b, 2), cc(d, 1))
				tr3, tr4 := g.pm(cc(a, 4), cc(c, 3))
				ti4, ti3 := g.pm(cc(b, 4), cc(d, 3))
				g.ch(a, 0, g.add(g.add(r0, tr2), tr3))
				g.ch(b, 0, g.add(g.add(i0, ti2), ti3))
				cr2, ci2 := s(r0, r11, tr2, r12, tr3), s(i0, r11, ti2, r12, ti3)
				cr3, ci3 := s(r0, r12, tr2, r11, tr3), s(i0, r12, ti2, r11, ti3)
				cr5, cr4 := g.mulpm(tr5, tr4, g.c(i11), g.c(i12))
				ci5, ci4 := g.mulpm(ti5, ti4, g.c(i11), g.c(i12))
				var dr, di [6]val
				dr[4], dr[3] = g.pm(cr3, ci4)
				di[3], di[4] = g.pm(ci3, cr4)
				dr[5], dr[2] = g.pm(cr2, ci5)
				di[2], di[5] = g.pm(ci2, cr5)
				for x := int64(0); x < 4; x++ {
					g.rotTo(x+1, x, a, b, di[x+2], dr[x+2])
				}
			},
		}
	}
}

// genericPass is radfg and radbg, for an odd radix ip past 5: the rows
// c_j at a position (forward: the twiddled rows' sums and differences
// in mirrored pairs; backward: the half-complex rows unpacked), then
// for each l < (ip+1)/2 the sums lo_l = c_0 + sum_j cos(2 pi jl/ip) c_j
// and hi_l = sum_j sin(2 pi jl/ip) c_(ip-j) (sums), and the rows' plain
// sum c_0 + ... + c_((ip-1)/2), which is output row 0.
func (g *realPass) genericPass() passBody {
	ip := g.p.Radix
	ipph := (ip + 1) / 2
	cc := g.cc
	// rows are the c_j at positions ps, c[j][q] at ps[q].
	type rows [][]val
	sums := func(c rows, ps []spirv.ID) (lo, hi rows) {
		lo, hi = make(rows, ipph), make(rows, ipph)
		for l := int64(1); l < ipph; l++ {
			lo[l], hi[l] = make([]val, len(ps)), make([]val, len(ps))
			for q := range ps {
				lo[l][q], hi[l][q] = g.genericSums(c, q, l)
			}
		}
		for q, a := range ps {
			s := c[0][q]
			for j := int64(1); j < ipph; j++ {
				s = g.add(s, c[j][q])
			}
			g.ch(a, 0, s)
		}
		return lo, hi
	}
	at := func(ps ...spirv.ID) rows {
		c := make(rows, ip)
		c[0] = make([]val, len(ps))
		for q, a := range ps {
			c[0][q] = cc(a, 0)
		}
		for j := int64(1); j < ip; j++ {
			c[j] = make([]val, len(ps))
		}
		return c
	}
	if g.p.Forward {
		return passBody{
			zero: func(z, e spirv.ID) {
				c := at(z)
				for j := int64(1); j < ipph; j++ {
					a, b := cc(z, ip-j), cc(z, j)
					c[j][0], c[ip-j][0] = g.add(a, b), g.sub(a, b)
				}
				lo, hi := sums(c, []spirv.ID{z})
				for j := int64(1); j < ipph; j++ {
					g.ch(e, 2*j-1, lo[j][0])
					g.ch(z, 2*j, hi[j][0])
				}
			},
			pair: func(a, b, cpos, d spirv.ID) {
				c := at(a, b)
				for j := int64(1); j < ipph; j++ {
					jc := ip - j
					t1, t2 := cc(a, j), cc(b, j)
					t3, t4 := cc(a, jc), cc(b, jc)
					wr, wi := g.tw(j - 1)
					w2r, w2i := g.tw(jc - 1)
					x1 := g.add(g.mul(wr, t1), g.mul(wi, t2))
					x2 := g.sub(g.mul(wr, t2), g.mul(wi, t1))
					x3 := g.add(g.mul(w2r, t3), g.mul(w2i, t4))
					x4 := g.sub(g.mul(w2r, t4), g.mul(w2i, t3))
					c[j][0], c[jc][1] = g.pm(x3, x1)
					c[j][1], c[jc][0] = g.pm(x2, x4)
				}
				lo, hi := sums(c, []spirv.ID{a, b})
				for j := int64(1); j < ipph; j++ {
					li, li1, hi0, hi1 := lo[j][0], lo[j][1], hi[j][0], hi[j][1]
					g.ch(a, 2*j, g.add(li, hi0))
					g.ch(b, 2*j, g.add(li1, hi1))
					g.ch(cpos, 2*j-1, g.sub(li, hi0))
					g.ch(d, 2*j-1, g.sub(hi1, li1))
				}
			},
		}
	}
	return passBody{
		zero: func(z, e spirv.ID) {
			c := at(z)
			for j := int64(1); j < ipph; j++ {
				c[j][0] = g.kmul(2, cc(e, 2*j-1))
				c[ip-j][0] = g.kmul(2, cc(z, 2*j))
			}
			lo, hi := sums(c, []spirv.ID{z})
			for j := int64(1); j < ipph; j++ {
				g.pmTo(ip-j, z, j, z, lo[j][0], hi[j][0])
			}
		},
		pair: func(a, b, cpos, d spirv.ID) {
			c := at(a, b)
			for j := int64(1); j < ipph; j++ {
				ai, ai1 := cc(a, 2*j), cc(b, 2*j)
				bc, bc1 := cc(cpos, 2*j-1), cc(d, 2*j-1)
				c[j][0], c[j][1] = g.add(ai, bc), g.sub(ai1, bc1)
				c[ip-j][0], c[ip-j][1] = g.sub(ai, bc), g.add(ai1, bc1)
			}
			lo, hi := sums(c, []spirv.ID{a, b})
			for j := int64(1); j < ipph; j++ {
				li, li1, hi0, hi1 := lo[j][0], lo[j][1], hi[j][0], hi[j][1]
				// Each row but the first times its twiddle.
				rot := func(row, x int64, t1, t2 val) {
					wr, wi := g.tw(x)
					g.ch(a, row, g.sub(g.mul(wr, t1), g.mul(wi, t2)))
					g.ch(b, row, g.add(g.mul(wr, t2), g.mul(wi, t1)))
				}
				rot(j, j-1, g.sub(li, hi1), g.add(li1, hi0))
				rot(ip-j, ip-j-1, g.add(li, hi1), g.sub(li1, hi0))
			}
		},
	}
}

// genericSums are lo_l and hi_l at position q of the rows c, added in
// ducc's groups: the first two terms, then fours, twos and ones, each
// group summed before it is added.
func (g *realPass) genericSums(c [][]val, q int, l int64) (lo, hi val) {
	ip := g.p.Radix
	ipph := (ip + 1) / 2
	coef := func(j int64) (val, val) {
		r := g.p.Roots[j*l%ip]
		return g.c(r[0]), g.c(r[1])
	}
	terms := func(j, cnt int64) (sl, sh val) {
		for m := j; m < j+cnt; m++ {
			ar, ai := coef(m)
			tl, th := g.mul(ar, c[m][q]), g.mul(ai, c[ip-m][q])
			if m == j {
				sl, sh = tl, th
			} else {
				sl, sh = g.add(sl, tl), g.add(sh, th)
			}
		}
		return sl, sh
	}
	a1, b1 := coef(1)
	a2, b2 := coef(2)
	lo = g.add(g.add(c[0][q], g.mul(a1, c[1][q])), g.mul(a2, c[2][q]))
	hi = g.add(g.mul(b1, c[ip-1][q]), g.mul(b2, c[ip-2][q]))
	j := int64(3)
	for ; j < ipph-3; j += 4 {
		tl, th := terms(j, 4)
		lo, hi = g.add(lo, tl), g.add(hi, th)
	}
	for ; j < ipph-1; j += 2 {
		tl, th := terms(j, 2)
		lo, hi = g.add(lo, tl), g.add(hi, th)
	}
	for ; j < ipph; j++ {
		tl, th := terms(j, 1)
		lo, hi = g.add(lo, tl), g.add(hi, th)
	}
	return lo, hi
}
