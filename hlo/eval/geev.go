package eval

import (
	"math"
	"math/cmplx"
	"sort"

	"github.com/vkjit/vkjit/hlo"
)

// geev is LAPACK's geev on each real matrix of l, as the lowering
// computes it (lower/geev.go), in float64 with the thresholds of l's
// type, so that both take the same path:
//
//   - rows and columns permuted to isolate the eigenvalues a triangular
//     part holds (gebal's permutation: isolate); a matrix whose largest
//     magnitude lies outside [2^e, 2^-e) scaled by a power of two into
//     it (normScale), and its active block balanced (gebal's scaling:
//     balance), as LAPACK's geev does; the eigenvalues scaled back, the
//     vectors taken back by the balancing's D and permutation;
//   - the Hessenberg form H = Q^T a Q by a Householder reflector per
//     column (gehd2), Q accumulated in z;
//   - the real Schur form T = Z^T a Z by dlahqr's implicit double-shift
//     QR (hqr): 1 x 1 and standardized 2 x 2 blocks (dlanv2) on T's
//     diagonal, a complex pair's eigenvalues with the positive imaginary
//     part first;
//   - the eigenvectors from the complex Schur form Tc = W^H T W, W the
//     block-diagonal unitary that makes each 2 x 2 block triangular:
//     the right ones by back substitution in Tc (dtrevc's, a divisor
//     below ulp |lambda| raised to it), the left ones by forward
//     substitution in Tc^H, each column's growth held off by powers of
//     two as dtrevc3 scales (bounded), both taken back by Z W; a real eigenvalue's
//     vectors are real (their imaginary parts rounding), a pair's second
//     the conjugate of its first; each normalized to Euclidean norm 1 and
//     turned so that its first largest element is real and positive.
//
// info is 0, or i + 1 when the eigenvalue at row i did not converge
// within hqr's iterations (the vectors are then left zero).
func geev(l *hlo.Literal, left, right bool, wSh, vSh, infoSh hlo.Shape) (wr, wi, vl, vr, info *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	rt := l.Shape.Elem
	ulp, smlnum := thresholds(rt, n)
	var wrs, wis, vls, vrs, infos []complex128
	for b := int64(0); b < batch; b++ {
		h := realMatrix(raw, b, n)
		bal := isolateMatrix(h, int(n))
		k := normScale(h, rt)
		bal.d = balance(int(n), bal.lo, bal.hi, rt, func(i, j int) float64 { return math.Abs(h[i*int(n)+j]) }, func(i int, f float64) {
			for j := range int(n) {
				h[i*int(n)+j] /= f
				h[j*int(n)+i] *= f
			}
		})
		z, _ := hessenberg(h, int(n), false)
		r, im, fail := hqr(h, z, int(n), ulp, smlnum)
		infos = append(infos, complex(float64(fail), 0))
		ur, ul := make([]complex128, n*n), make([]complex128, n*n)
		if fail == 0 {
			ur, ul = schurVectors(h, z, im, bal, int(n), ulp, smlnum)
		}
		for j := range r {
			r[j], im[j] = math.Ldexp(r[j], -k), math.Ldexp(im[j], -k)
		}
		order := eigenOrder(r, im)
		for _, o := range order {
			wrs, wis = append(wrs, complex(r[o], 0)), append(wis, complex(im[o], 0))
		}
		vrs, vls = appendVectors(vrs, vls, ur, ul, order, left, right)
	}
	return literal(wSh.Elem, wSh.Dims, wrs), literal(wSh.Elem, wSh.Dims, wis),
		literal(vSh.Elem, vSh.Dims, vls), literal(vSh.Elem, vSh.Dims, vrs), literal(infoSh.Elem, infoSh.Dims, infos)
}

// gees is LAPACK's gees (no sorting) on each real matrix of l, as the
// lowering computes it: geev's permutation (gebal's job 'P', as gees
// asks), hessenberg and hqr, whose h and z are the real Schur form T
// and the Schur vectors Z (zero unless vectors; Z's rows put back in
// the matrix's order), the eigenvalues in T's diagonal order; info as
// geev's.
func gees(l *hlo.Literal, vectors bool, wSh, infoSh hlo.Shape) (tl, zl, wr, wi, info *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	rt := l.Shape.Elem
	ulp, smlnum := thresholds(rt, n)
	var ts, zs, wrs, wis, infos []complex128
	for b := int64(0); b < batch; b++ {
		h := realMatrix(raw, b, n)
		bal := isolateMatrix(h, int(n))
		k := normScale(h, rt)
		z, _ := hessenberg(h, int(n), false)
		r, im, fail := hqr(h, z, int(n), ulp, smlnum)
		z = unpermuteRows(z, bal.at, int(n))
		schurCanonical(h, z, im, int(n), tieTolerance(ulp, int(n)))
		for j := range r {
			r[j], im[j] = math.Ldexp(r[j], -k), math.Ldexp(im[j], -k)
		}
		for j := range h {
			h[j] = math.Ldexp(h[j], -k)
		}
		if !vectors {
			clear(z)
		}
		for j := range r {
			wrs, wis = append(wrs, complex(r[j], 0)), append(wis, complex(im[j], 0))
		}
		ts, zs = append(ts, realC(h)...), append(zs, realC(z)...)
		infos = append(infos, complex(float64(fail), 0))
	}
	return literal(rt, l.Shape.Dims, ts), literal(rt, l.Shape.Dims, zs), literal(wSh.Elem, wSh.Dims, wrs), literal(wSh.Elem, wSh.Dims, wis), literal(infoSh.Elem, infoSh.Dims, infos)
}

// schurCanonical puts the Schur form t, z in the lowering's form of the
// several equally valid ones (lower/geev.go's schurCanonical): a pair's
// block [[a, b], [c, a]] (wi[p] > 0) with |b| < |c| turned a quarter
// (z's columns (z1, z2) -> (z2, -z1), t's rows and columns with them),
// a normal pair's (c = -b to rel) rotated in its plane as below,
// then each column of z turned so that its first largest element (to
// rel: tieTolerance) is positive, t's rows and columns with it (t' = S t
// S, z' = z S).
func schurCanonical(t, z, wi []float64, n int, rel float64) {
	for p := 0; p+1 < n; p++ {
		if wi[p] <= 0 || math.Abs(t[p*n+p+1]) >= math.Abs(t[(p+1)*n+p]) {
			continue
		}
		for i := range n { // z R, t R: columns (c1, c2) -> (c2, -c1)
			z[i*n+p], z[i*n+p+1] = z[i*n+p+1], -z[i*n+p]
			t[i*n+p], t[i*n+p+1] = t[i*n+p+1], -t[i*n+p]
		}
		for j := range n { // R^T t: rows (r1, r2) -> (r2, -r1)
			t[p*n+j], t[(p+1)*n+j] = t[(p+1)*n+j], -t[p*n+j]
		}
	}
	// A normal pair's block (c = -b, to rel) is the same in every basis
	// of its plane: its Schur vectors rotated so that, in the first row
	// where the pair's rows are largest (to rel), z1 is positive and z2
	// zero; the block kept as it was (R^T B R = B).
	for p := 0; p+1 < n; p++ {
		b, c := t[p*n+p+1], t[(p+1)*n+p]
		if wi[p] <= 0 || math.Abs(b+c) > rel*(math.Abs(b)+math.Abs(c)) {
			continue
		}
		rs := make([]float64, n)
		var top float64
		for k := range n {
			rs[k] = math.Hypot(z[k*n+p], z[k*n+p+1])
			top = max(top, rs[k])
		}
		k := 0
		for k < n-1 && rs[k] < top*(1-rel) {
			k++
		}
		r := rs[k]
		if r == 0 {
			continue
		}
		cs, sn := z[k*n+p]/r, z[k*n+p+1]/r
		block := [4]float64{t[p*n+p], b, c, t[(p+1)*n+p+1]}
		for i := range n { // z R, t R: columns (c1, c2) -> (cs c1 + sn c2, cs c2 - sn c1)
			z[i*n+p], z[i*n+p+1] = cs*z[i*n+p]+sn*z[i*n+p+1], cs*z[i*n+p+1]-sn*z[i*n+p]
			t[i*n+p], t[i*n+p+1] = cs*t[i*n+p]+sn*t[i*n+p+1], cs*t[i*n+p+1]-sn*t[i*n+p]
		}
		for j := range n { // R^T t: rows likewise
			t[p*n+j], t[(p+1)*n+j] = cs*t[p*n+j]+sn*t[(p+1)*n+j], cs*t[(p+1)*n+j]-sn*t[p*n+j]
		}
		t[p*n+p], t[p*n+p+1], t[(p+1)*n+p], t[(p+1)*n+p+1] = block[0], block[1], block[2], block[3]
	}
	s := make([]float64, n)
	zc := realC(z)
	for j := range n {
		big := int(leadNear(zc, int64(n), int64(j), rel))
		s[j] = 1
		if z[big*n+j] < 0 {
			s[j] = -1
		}
	}
	for i := range n {
		for j := range n {
			t[i*n+j] *= s[i] * s[j]
			z[i*n+j] *= s[j]
		}
	}
}

// normScale scales the matrix h by a power of two 2^k, returned, that
// brings its largest magnitude into [2^e, 2^-e), 2^e the largest power
// of two at most sqrt(smallest normal) / ulp (f32: 2^-40, f64: 2^-459),
// where it is outside (geev's and gees's own scaling, dlascl's, by a
// power of two so that it is exact); k = 0 for a zero, infinite or NaN
// largest magnitude.
func normScale(h []float64, rt hlo.ElementType) int {
	var anrm float64
	for _, x := range h {
		anrm = max(anrm, math.Abs(x))
	}
	k := normScaleK(anrm, rt)
	for i := range h {
		h[i] = math.Ldexp(h[i], k)
	}
	return k
}

// normScaleC is normScale of a complex matrix (by the largest modulus):
// syevd's and gesdd's, as LAPACK's scale theirs.
func normScaleC(h []complex128, rt hlo.ElementType) int {
	var anrm float64
	for _, x := range h {
		anrm = max(anrm, cmplx.Abs(x))
	}
	k := normScaleK(anrm, rt)
	for i, x := range h {
		h[i] = complex(math.Ldexp(real(x), k), math.Ldexp(imag(x), k))
	}
	return k
}

// normScaleK is the k of normScale for a largest magnitude anrm.
func normScaleK(anrm float64, rt hlo.ElementType) int {
	if anrm == 0 || math.IsInf(anrm, 0) || math.IsNaN(anrm) {
		return 0
	}
	lo := normScaleExp(rt)
	_, e := math.Frexp(anrm) // anrm in [2^(e-1), 2^e)
	switch {
	case e-1 < lo:
		return lo - (e - 1)
	case e > -lo:
		return -lo - e
	}
	return 0
}

// normScaleExp is e of normScale's range [2^e, 2^-e).
func normScaleExp(rt hlo.ElementType) int {
	if rt == hlo.F64 {
		return -459
	}
	return -40
}

// balancing is gebal's result on a matrix: the active block [lo, hi]
// its permutation left (isolate), where each row went (at), and the
// scaling's diagonal D (d; nil for none).
type balancing struct {
	lo, hi int
	at     []int
	d      []float64
}

// isolateMatrix is isolate on the n x n h, real or complex (a zero of
// either sign, in either part, is zero).
func isolateMatrix[T float64 | complex128](h []T, n int) balancing {
	lo, hi, at := isolate(n, func(i, j int) bool { return h[i*n+j] == 0 }, func(i, j int) {
		swapLines(n, i, j, func(p, q int) { h[p], h[q] = h[q], h[p] })
	})
	return balancing{lo: lo, hi: hi, at: at}
}

// swapLines exchanges rows i and j and then columns i and j of an n x n
// row-major matrix by exchanging its elements at pairs of offsets.
func swapLines(n, i, j int, swap func(p, q int)) {
	if i == j {
		return
	}
	for c := range n {
		swap(i*n+c, j*n+c)
	}
	for r := range n {
		swap(r*n+i, r*n+j)
	}
}

// isolate is gebal's permutation (job 'P') of an n x n matrix, in
// place: rows whose off-diagonal elements in the active columns [0,
// hi] are all zero pushed down to hi, the last such row first, then
// columns whose off-diagonal elements in the active rows [lo, hi] are
// all zero pushed left to lo, the first such column first, the search
// starting again after each exchange, as LAPACK's gebal searches. The
// rows and columns pushed out hold eigenvalues on the diagonal of a
// triangular part, which the QR iteration then deflates at once,
// exactly (a zero subdiagonal element). zero(i, j) reports whether
// element (i, j) is zero; swap(i, j) exchanges rows i and j and columns
// i and j. It returns the active block [lo, hi] and where each row went
// (row r of the matrix is row at[r] of the permuted one).
func isolate(n int, zero func(i, j int) bool, swap func(i, j int)) (lo, hi int, at []int) {
	at = make([]int, n)
	for i := range at {
		at[i] = i
	}
	exchange := func(i, j int) {
		swap(i, j)
		for r, p := range at {
			switch p {
			case i:
				at[r] = j
			case j:
				at[r] = i
			}
		}
	}
	// isolated reports whether line j has only zeros off the diagonal
	// among indices [from, to], of its row (rows) or its column.
	isolated := func(j, from, to int, rows bool) bool {
		for i := from; i <= to; i++ {
			if i != j && !(rows && zero(j, i) || !rows && zero(i, j)) {
				return false
			}
		}
		return true
	}
	lo, hi = 0, n-1
	for hi > 0 {
		j := hi
		for ; j >= 0 && !isolated(j, 0, hi, true); j-- {
		}
		if j < 0 {
			break
		}
		exchange(j, hi)
		hi--
	}
	for lo < hi {
		j := lo
		for ; j <= hi && !isolated(j, lo, hi, false); j++ {
		}
		if j > hi {
			break
		}
		exchange(j, lo)
		lo++
	}
	return lo, hi, at
}

// unpermuteRows is v ([n, n]) with its rows put back in the order of
// the matrix isolate permuted: row r is v's row at[r].
func unpermuteRows[T any](v []T, at []int, n int) []T {
	out := make([]T, len(v))
	for r, p := range at {
		copy(out[r*n:(r+1)*n], v[p*n:(p+1)*n])
	}
	return out
}

// balance is LAPACK's gebal with job 'S' on the active block [lo, hi]
// of an n x n matrix h (isolate's), in place: each row and column pair
// of the block scaled by a power of two until their 2-norms within the
// block are within a factor of 2 of each other (a pass changes nothing
// in scaling a pair that would not shrink c + r below 0.95 of its sum),
// h = D^-1 a D; it returns D's diagonal. mag(i, j) is |h(i, j)| and
// scale(i, f) divides row i by f and multiplies column i by f, so that
// real and complex matrices share it. The largest magnitudes (ca, ra)
// are over whole columns and rows, as gebal's: outside the block they
// hold zeros where gebal does not look.
func balance(n, lo, hi int, rt hlo.ElementType, mag func(i, j int) float64, scale func(i int, f float64)) []float64 {
	const sclfac, factor = 2.0, 0.95
	sfmin1 := smallestNormal(rt) / (2 * epsilon(rt))
	sfmax1 := 1 / sfmin1
	sfmin2 := sfmin1 * sclfac
	sfmax2 := 1 / sfmin2
	d := make([]float64, n)
	for i := range d {
		d[i] = 1
	}
	for noconv := true; noconv; {
		noconv = false
		for i := lo; i <= hi; i++ {
			var c, r, ca, ra float64
			for j := range n {
				if lo <= j && j <= hi {
					c, r = math.Hypot(c, mag(j, i)), math.Hypot(r, mag(i, j))
				}
				ca, ra = max(ca, mag(j, i)), max(ra, mag(i, j))
			}
			if math.IsNaN(c + ca + r + ra) {
				return d // gebal's NaN check: no more balancing
			}
			if c == 0 || r == 0 {
				continue
			}
			g, f, s := r/sclfac, 1.0, c+r
			for c < g && max(f, c, ca) < sfmax2 && min(r, g, ra) > sfmin2 {
				f, c, ca, r, g, ra = f*sclfac, c*sclfac, ca*sclfac, r/sclfac, g/sclfac, ra/sclfac
			}
			g = c / sclfac
			for g >= r && max(r, ra) < sfmax2 && min(f, c, g, ca) > sfmin2 {
				f, c, g, ca, r, ra = f/sclfac, c/sclfac, g/sclfac, ca/sclfac, r*sclfac, ra*sclfac
			}
			if c+r >= factor*s || f < 1 && d[i] < 1 && f*d[i] <= sfmin1 || f > 1 && d[i] > 1 && d[i] >= sfmax1/f {
				continue
			}
			d[i] *= f
			noconv = true
			scale(i, f)
		}
	}
	return d
}

// realMatrix is the real parts of matrix b of raw's n x n matrices.
func realMatrix(raw []complex128, b, n int64) []float64 {
	h := make([]float64, n*n)
	for i := range h {
		h[i] = real(raw[b*n*n+int64(i)])
	}
	return h
}

// thresholds are dlahqr's ulp and smlnum for order n matrices of real
// type rt: the lowering's (lower/geev.go).
func thresholds(rt hlo.ElementType, n int64) (ulp, smlnum float64) {
	ulp = 2 * epsilon(rt)
	return ulp, smallestNormal(rt) * (float64(n) / ulp)
}

// smallestNormal is the real type t's smallest normal number.
func smallestNormal(t hlo.ElementType) float64 {
	if t == hlo.F64 {
		return 0x1p-1022
	}
	return 0x1p-126
}

// hessenberg is hessenbergC of the real n x n h, in place (a real
// matrix's reflectors are real, and the arithmetic on zero imaginary
// parts is the real arithmetic's, bit for bit).
func hessenberg(h []float64, n int, reflectors bool) (q, taus []float64) {
	hc := realC(h)
	qc, tc := hessenbergC(hc, n, reflectors)
	for i, x := range hc {
		h[i] = real(x)
	}
	return realParts(qc), realParts(tc)
}

// hessenbergC reduces the n x n h in place to upper Hessenberg form as
// LAPACK's gehd2 does, a reflector I - tau v v^H per column i < n-1
// (larfgC of h(i+1:, i), v(i+1) = 1) applied from the right to every row
// and as its adjoint from the left to the columns after i, column i
// then set to (beta, 0, ...) below its diagonal, or with reflectors to
// (beta, v's tail), as gehrd stores them; it returns their product Q
// (orghr, unghr) and the taus ([n-1]; a real matrix's last is zero).
func hessenbergC(h []complex128, n int, reflectors bool) (q, taus []complex128) {
	z := make([]complex128, n*n)
	for i := range n {
		z[i*n+i] = 1
	}
	v := make([]complex128, n)
	taus = make([]complex128, max(n-1, 0))
	for i := 0; i < n-1; i++ { // the last a 1 x 1 reflector: the identity, or a phase that makes h(n-1, n-2) real
		clear(v)
		v[i+1] = 1
		for r := i + 2; r < n; r++ {
			v[r] = h[r*n+i]
		}
		beta, tau := larfgC(h[(i+1)*n+i], v[i+2:])
		if tau == 0 {
			continue // the identity
		}
		reflectRight(h, n, n, v, tau)
		for c := i + 1; c < n; c++ { // from the left: h -= conj(tau) v (v^H h), right of column i (gehrd keeps reflectors left of it)
			var w complex128
			for r := i + 1; r < n; r++ {
				w += conj(v[r]) * h[r*n+c]
			}
			for r := i + 1; r < n; r++ {
				h[r*n+c] -= conj(tau) * v[r] * w
			}
		}
		h[(i+1)*n+i] = complex(beta, 0)
		for r := i + 2; r < n; r++ {
			h[r*n+i] = 0
			if reflectors {
				h[r*n+i] = v[r]
			}
		}
		reflectRight(z, n, n, v, tau)
		taus[i] = tau
	}
	return z, taus
}

// reflectRight applies I - tau v v^H from the right to the rows x n
// matrix m: m -= tau (m v) v^H.
func reflectRight(m []complex128, rows, n int, v []complex128, tau complex128) {
	for r := range rows {
		var w complex128
		for c := range n {
			w += m[r*n+c] * v[c]
		}
		for c := range n {
			m[r*n+c] -= tau * w * conj(v[c])
		}
	}
}

// realParts is the real parts of p.
func realParts(p []complex128) []float64 {
	r := make([]float64, len(p))
	for i, x := range p {
		r[i] = real(x)
	}
	return r
}

// hqr is LAPACK's dlahqr (wantt, wantz) on the n x n Hessenberg h and
// its transformations z, in place, in the form of one loop whose
// iteration either deflates the active block's last 1 x 1 or 2 x 2
// block or makes one double-shift sweep over it (as the lowering's
// while loop does): the block's top is the last negligible subdiagonal
// element (the Ahues-Tisseur test) at or below the last one found; the
// shifts are the trailing 2 x 2's eigenvalues (one of them twice when
// both are real), exceptional after 10 and 20 sweeps without a
// deflation; the sweep starts at the lowest row where two consecutive
// subdiagonal elements are small. It returns the eigenvalues' real and
// imaginary parts and 0, or i + 1 when block row i had not converged
// after 30 max(10, n) sweeps.
func hqr(h, z []float64, n int, ulp, smlnum float64) (wr, wi []float64, info int) {
	wr, wi = make([]float64, n), make([]float64, n)
	at := func(i, j int) *float64 { return &h[i*n+j] }
	abs := math.Abs
	itmax := 30 * max(10, n)
	i, l, kdefl, its := n-1, 0, 0, 0
	for i >= 0 && its <= itmax {
		for k := i; k > l; k-- {
			if negligible(h, n, k, ulp, smlnum) {
				l = k
				break
			}
		}
		if l > 0 {
			*at(l, l-1) = 0
		}
		if l >= i-1 {
			if l == i {
				wr[i] = *at(i, i)
			} else {
				a, b, c, d, cs, sn := dlanv2(*at(i-1, i-1), *at(i-1, i), *at(i, i-1), *at(i, i), ulp)
				*at(i-1, i-1), *at(i-1, i), *at(i, i-1), *at(i, i) = a, b, c, d
				wr[i-1], wr[i] = a, d
				if c != 0 {
					wi[i-1] = math.Sqrt(abs(b)) * math.Sqrt(abs(c))
					wi[i] = -wi[i-1]
				}
				for j := i + 1; j < n; j++ {
					*at(i-1, j), *at(i, j) = cs**at(i-1, j)+sn**at(i, j), cs**at(i, j)-sn**at(i-1, j)
				}
				for j := 0; j < i-1; j++ {
					*at(j, i-1), *at(j, i) = cs**at(j, i-1)+sn**at(j, i), cs**at(j, i)-sn**at(j, i-1)
				}
				for j := range n {
					zp, zq := &z[j*n+i-1], &z[j*n+i]
					*zp, *zq = cs**zp+sn**zq, cs**zq-sn**zp
				}
			}
			i, l, kdefl, its = l-1, 0, 0, 0
			continue
		}
		kdefl++
		its++
		var h11, h12, h21, h22 float64
		switch {
		case kdefl%20 == 0:
			s := abs(*at(i, i-1)) + abs(*at(i-1, i-2))
			h11, h12, h21 = 0.75*s+*at(i, i), -0.4375*s, s
			h22 = h11
		case kdefl%10 == 0:
			s := abs(*at(l+1, l)) + abs(*at(l+2, l+1))
			h11, h12, h21 = 0.75*s+*at(l, l), -0.4375*s, s
			h22 = h11
		default:
			h11, h21, h12, h22 = *at(i-1, i-1), *at(i, i-1), *at(i-1, i), *at(i, i)
		}
		var rt1r, rt1i, rt2r, rt2i float64
		if s := abs(h11) + abs(h12) + abs(h21) + abs(h22); s != 0 {
			h11, h21, h12, h22 = h11/s, h21/s, h12/s, h22/s
			tr := (h11 + h22) / 2
			det := (h11-tr)*(h22-tr) - h12*h21
			rtdisc := math.Sqrt(abs(det))
			if det >= 0 { // a complex pair
				rt1r, rt1i = tr*s, rtdisc*s
				rt2r, rt2i = rt1r, -rt1i
			} else { // real: the one nearer h22, twice
				rt1r, rt2r = tr+rtdisc, tr-rtdisc
				if abs(rt1r-h22) <= abs(rt2r-h22) {
					rt2r = rt1r
				} else {
					rt1r = rt2r
				}
				rt1r *= s
				rt2r = rt1r
			}
		}
		m, v := sweepStart(h, n, l, i, rt1r, rt1i, rt2r, rt2i, ulp)
		for k := m; k < i; k++ {
			nr := min(3, i-k+1)
			if k > m {
				v = [3]float64{*at(k, k-1), *at(k+1, k-1), 0}
				if nr == 3 {
					v[2] = *at(k+2, k-1)
				}
			}
			beta, t1 := larfg(v[0], v[1:nr])
			if k > m {
				*at(k, k-1), *at(k+1, k-1) = beta, 0
				if k < i-1 {
					*at(k+2, k-1) = 0
				}
			} else if m > l {
				*at(k, k-1) *= 1 - t1
			}
			v2, v3 := v[1], v[2]
			t2, t3 := t1*v2, t1*v3
			rows := []int{k, k + 1, k + 2}[:nr]
			for j := k; j < n; j++ {
				sum := *at(k, j) + v2**at(k+1, j)
				if nr == 3 {
					sum += v3 * *at(k+2, j)
				}
				for q, r := range rows {
					*at(r, j) -= sum * [3]float64{t1, t2, t3}[q]
				}
			}
			for j := 0; j <= min(k+3, i); j++ {
				sum := *at(j, k) + v2**at(j, k+1)
				if nr == 3 {
					sum += v3 * *at(j, k+2)
				}
				for q, c := range rows {
					*at(j, c) -= sum * [3]float64{t1, t2, t3}[q]
				}
			}
			for j := range n {
				sum := z[j*n+k] + v2*z[j*n+k+1]
				if nr == 3 {
					sum += v3 * z[j*n+k+2]
				}
				for q, c := range rows {
					z[j*n+c] -= sum * [3]float64{t1, t2, t3}[q]
				}
			}
		}
	}
	if i >= 0 {
		return wr, wi, i + 1
	}
	return wr, wi, 0
}

// negligible is dlahqr's test of subdiagonal element h(k, k-1) of the
// real h (negligibleBy).
func negligible(h []float64, n, k int, ulp, smlnum float64) bool {
	return negligibleBy(n, k, func(i, j int) float64 { return math.Abs(h[i*n+j]) }, math.Abs(h[(k-1)*n+k-1]-h[k*n+k]), ulp, smlnum)
}

// negligibleBy is dlahqr's (zlahqr's) test of subdiagonal element h(k,
// k-1) of an n x n Hessenberg matrix whose elements' magnitudes mag
// gives (|x|, or zlahqr's |re| + |im|), diff that of h(k-1, k-1) -
// h(k, k): at most smlnum, or small against its neighbours by Ahues
// and Tisseur's criterion.
func negligibleBy(n, k int, mag func(i, j int) float64, diff, ulp, smlnum float64) bool {
	hk := mag(k, k-1)
	if hk <= smlnum {
		return true
	}
	tst := mag(k-1, k-1) + mag(k, k)
	if tst == 0 {
		if k >= 2 {
			tst += mag(k-1, k-2)
		}
		if k+1 < n {
			tst += mag(k+1, k)
		}
	}
	if hk > ulp*tst {
		return false
	}
	ab, ba := max(hk, mag(k-1, k)), min(hk, mag(k-1, k))
	aa, bb := max(mag(k, k), diff), min(mag(k, k), diff)
	s := aa + ab
	return ba*(ab/s) <= max(smlnum, ulp*(bb*(aa/s)))
}

// sweepStart is where dlahqr starts a double-shift sweep over the block
// l..i: the largest m in [l, i-2] at which the first column of (H - s1)
// (H - s2), started there, makes h(m, m-1) negligible (m = l when none
// does), and that column's scaled first three elements.
func sweepStart(h []float64, n, l, i int, rt1r, rt1i, rt2r, rt2i, ulp float64) (int, [3]float64) {
	at := func(i, j int) float64 { return h[i*n+j] }
	abs := math.Abs
	for m := i - 2; ; m-- {
		h21s := at(m+1, m)
		s := abs(at(m, m)-rt2r) + abs(rt2i) + abs(h21s)
		h21s = at(m+1, m) / s
		v := [3]float64{
			h21s*at(m, m+1) + (at(m, m)-rt1r)*((at(m, m)-rt2r)/s) - rt1i*(rt2i/s),
			h21s * (at(m, m) + at(m+1, m+1) - rt1r - rt2r),
			h21s * at(m+2, m+1),
		}
		s = abs(v[0]) + abs(v[1]) + abs(v[2])
		v[0], v[1], v[2] = v[0]/s, v[1]/s, v[2]/s
		if m == l {
			return m, v
		}
		h00 := abs(at(m, m-1)) * (abs(v[1]) + abs(v[2]))
		h01 := ulp * abs(v[0]) * (abs(at(m-1, m-1)) + abs(at(m, m)) + abs(at(m+1, m+1)))
		if h00 <= h01 {
			return m, v
		}
	}
}

// larfg is LAPACK's larfg on (alpha; x): the reflector I - tau u u^T,
// u = (1, x) afterwards, that takes the vector to (beta, 0, ...), beta =
// -sign(alpha) |(alpha, x)| (a zero of either sign taken as +0); tau = 0,
// beta = alpha and x unchanged when x is zero.
func larfg(alpha float64, x []float64) (beta, tau float64) {
	var xnorm float64
	for _, e := range x {
		xnorm = math.Hypot(xnorm, e)
	}
	if xnorm == 0 {
		return alpha, 0
	}
	beta = -math.Hypot(alpha, xnorm)
	if alpha < 0 {
		beta = -beta
	}
	s := 1 / (alpha - beta)
	for i := range x {
		x[i] *= s
	}
	return beta, (beta - alpha) / beta
}

// dlanv2 is LAPACK's dlanv2: the Schur factorization of the real 2 x 2
// [[a, b], [c, d]] in standard form, [[a', b'], [c', d']] = [[cs, sn],
// [-sn, cs]]^T-rotated: upper triangular (c' = 0) when the eigenvalues
// are real, else a' = d' and b' c' < 0 (the eigenvalues a' +- sqrt(|b'
// c'|) i). (LAPACK also rescales a block near overflow; that is not done
// here nor in the lowering.)
func dlanv2(a, b, c, d, eps float64) (float64, float64, float64, float64, float64, float64) {
	sign := func(x, y float64) float64 { return math.Copysign(math.Abs(x), y) }
	cs, sn := 1.0, 0.0
	switch {
	case c == 0:
	case b == 0: // swap rows and columns
		cs, sn = 0, 1
		a, d = d, a
		b, c = -c, 0
	case a-d == 0 && math.Signbit(b) != math.Signbit(c):
	default:
		temp := a - d
		p := temp / 2
		bcmax := max(math.Abs(b), math.Abs(c))
		bcmis := min(math.Abs(b), math.Abs(c)) * sign(1, b) * sign(1, c)
		scale := max(math.Abs(p), bcmax)
		z := (p/scale)*p + (bcmax/scale)*bcmis
		if z >= 4*eps { // real eigenvalues
			z = p + sign(math.Sqrt(scale)*math.Sqrt(z), p)
			a = d + z
			d -= (bcmax / z) * bcmis
			tau := math.Hypot(c, z)
			cs, sn = z/tau, c/tau
			b -= c
			c = 0
			break
		}
		// Complex or nearly equal real eigenvalues: equal diagonal.
		sigma := b + c
		tau := math.Hypot(sigma, temp)
		cs = math.Sqrt((1 + math.Abs(sigma)/tau) / 2)
		sn = -(p / (tau * cs)) * sign(1, sigma)
		aa, bb := a*cs+b*sn, -a*sn+b*cs
		cc, dd := c*cs+d*sn, -c*sn+d*cs
		a, b = aa*cs+cc*sn, bb*cs+dd*sn
		c, d = -aa*sn+cc*cs, -bb*sn+dd*cs
		temp = (a + d) / 2
		a, d = temp, temp
		if c != 0 {
			if b != 0 {
				if math.Signbit(b) == math.Signbit(c) { // real after all: triangular
					sab, sac := math.Sqrt(math.Abs(b)), math.Sqrt(math.Abs(c))
					p = sign(sab*sac, c)
					tau = 1 / math.Sqrt(math.Abs(b+c))
					a, d = temp+p, temp-p
					b -= c
					c = 0
					cs1, sn1 := sab*tau, sac*tau
					cs, sn = cs*cs1-sn*sn1, cs*sn1+sn*cs1
				}
			} else {
				b, c = -c, 0
				cs, sn = -sn, cs
			}
		}
	}
	return a, b, c, d, cs, sn
}

// schurVectors are the right and left eigenvectors ([n, n], a column
// each) from the real Schur form t and its transformations z (hqr's),
// wi the eigenvalues' imaginary parts (geev's steps).
func schurVectors(t, z, wi []float64, bal balancing, n int, ulp, smlnum float64) (right, left []complex128) {
	// W: the identity but for each pair's block, whose columns are the
	// block's unit eigenvector u for a + i sqrt(|bc|), (sqrt|b|, i
	// sign(b) sqrt|c|) / sqrt(|b| + |c|), and its orthogonal complement.
	w := make([]complex128, n*n)
	for j := range n {
		w[j*n+j] = 1
	}
	for p := 0; p+1 < n; p++ {
		if wi[p] <= 0 {
			continue
		}
		b, c := t[p*n+p+1], t[(p+1)*n+p]
		nrm := math.Sqrt(math.Abs(b) + math.Abs(c))
		u0, u1 := complex(math.Sqrt(math.Abs(b))/nrm, 0), complex(0, math.Copysign(math.Sqrt(math.Abs(c))/nrm, b))
		w[p*n+p], w[(p+1)*n+p], w[p*n+p+1], w[(p+1)*n+p+1] = u0, u1, u1, u0
	}
	right, left = triangularVectors(mul(conjT(w, n), mul(realC(t), w, n), n), mul(realC(z), w, n), bal, n, ulp, smlnum)
	rel := tieTolerance(ulp, n)
	return eigenColumns(right, wi, n, rel), eigenColumns(left, wi, n, rel)
}

// triangularVectors are the right and left eigenvectors ([n, n], a
// column each, not yet normalized) of a = D Zc Tc Zc^H D^-1 from its
// complex Schur form Tc (upper triangular), its vectors Zc and the
// balancing (bal: D and the permutation): the right ones by back
// substitution in Tc (dtrevc's and ztrevc's, a divisor below ulp
// |lambda| raised to it), the left ones by forward substitution in
// Tc^H, each column's growth held off by powers of two as dtrevc3
// scales (bounded), both taken back by Zc, D and the permutation.
func triangularVectors(tc, zc []complex128, bal balancing, n int, ulp, smlnum float64) (right, left []complex128) {
	lambda := make([]complex128, n)
	for j := range n {
		lambda[j] = tc[j*n+j]
	}
	// den is Tc(i, i) - lambda_j (conj'd for the left), raised to smin
	// where smaller, as dtrevc's dlaln2 does.
	den := func(i, j int) complex128 {
		d := tc[i*n+i] - lambda[j]
		smin := max(ulp*(math.Abs(real(lambda[j]))+math.Abs(imag(lambda[j]))), smlnum)
		if math.Abs(real(d))+math.Abs(imag(d)) < smin {
			return complex(smin, 0)
		}
		return d
	}
	x, y := make([]complex128, n*n), make([]complex128, n*n)
	for j := range n {
		x[j*n+j], y[j*n+j] = 1, 1
	}
	for i := n - 2; i >= 0; i-- { // Tc x_j = lambda_j x_j, upward
		for j := i + 1; j < n; j++ {
			var s complex128
			for k := i + 1; k <= j; k++ {
				s += tc[i*n+k] * x[k*n+j]
			}
			x[i*n+j] = bounded(s, den(i, j), x, i, j, n)
		}
	}
	for i := 1; i < n; i++ { // Tc^H y_j = conj(lambda_j) y_j, downward
		for j := range i {
			var s complex128
			for k := j; k < i; k++ {
				s += conj(tc[k*n+i]) * y[k*n+j]
			}
			y[i*n+j] = bounded(s, conj(den(i, j)), y, i, j, n)
		}
	}
	right, left = mul(zc, x, n), mul(zc, y, n)
	for i := range n { // balancing undone: D v and D^-1 u, then the rows' order
		for j := range n {
			right[i*n+j] *= complex(bal.d[i], 0)
			left[i*n+j] /= complex(bal.d[i], 0)
		}
	}
	return unpermuteRows(right, bal.at, n), unpermuteRows(left, bal.at, n)
}

// bounded is -s / d, the substitution's next element of column j of x,
// with that column's growth held off by powers of two, as dtrevc3
// scales: s first where the quotient could pass 2^1021 (a divisor
// raised only to smin), then the quotient and the column into [0, 1)
// by |.|_1 (cabs1), so that later rows' sums cannot overflow either (a
// defective eigenvalue's vector grows by 1/smin a row: 2^52 in f64,
// past the range by order 21). eigenColumns divides the norms out. The
// device scales the same way (lower/geev.go).
func bounded(s, d complex128, x []complex128, i, j, n int) complex128 {
	abs1 := func(z complex128) float64 { return math.Abs(real(z)) + math.Abs(imag(z)) }
	exp := func(v float64) int { _, e := math.Frexp(v); return e }
	k1 := 0
	if s != 0 {
		k1 = max(exp(abs1(s))-exp(abs1(d))-1020, 0)
	}
	q := -complex(math.Ldexp(real(s), -k1), math.Ldexp(imag(s), -k1)) / d
	k2 := 0
	if q != 0 {
		k2 = max(exp(abs1(q)), 0)
	}
	if k := k1 + k2; k > 0 {
		for r := range n {
			x[r*n+j] = complex(math.Ldexp(real(x[r*n+j]), -k), math.Ldexp(imag(x[r*n+j]), -k))
		}
	}
	return complex(math.Ldexp(real(q), -k2), math.Ldexp(imag(q), -k2))
}

// eigenColumns puts geev's eigenvector columns in LAPACK's form: each
// of norm 1 with its first largest element (to rel: tieTolerance) real
// and positive; of a real matrix (wi its eigenvalues' imaginary parts),
// a real eigenvalue's real and a pair's second the conjugate of its
// first. wi is nil for a complex matrix.
func eigenColumns(v []complex128, wi []float64, n int, rel float64) []complex128 {
	if wi == nil {
		wi = make([]float64, n)
		for j := range wi {
			wi[j] = math.NaN() // neither real nor a pair's
		}
	}
	for j := range n {
		if j > 0 && wi[j] < 0 && wi[j-1] > 0 {
			for i := range n {
				v[i*n+j] = conj(v[i*n+j-1])
			}
			continue
		}
		var nrm float64
		for i := range n {
			if wi[j] == 0 {
				v[i*n+j] = complex(real(v[i*n+j]), 0)
			}
			nrm = math.Hypot(nrm, cmplx.Abs(v[i*n+j]))
		}
		big := int(leadNear(v, int64(n), int64(j), rel))
		ph := phaseOf(v[big*n+j]) / complex(nrm, 0)
		for i := range n {
			v[i*n+j] *= ph
			if wi[j] == 0 {
				v[i*n+j] = complex(real(v[i*n+j]), 0) // +0 imaginary parts
			}
		}
		v[big*n+j] = complex(real(v[big*n+j]), 0) // real, not within rounding of it
	}
	return v
}

// mul is the product of the n x n p and q.
func mul(p, q []complex128, n int) []complex128 {
	r := make([]complex128, n*n)
	for i := range n {
		for k := range n {
			for j := range n {
				r[i*n+j] += p[i*n+k] * q[k*n+j]
			}
		}
	}
	return r
}

func conjT(p []complex128, n int) []complex128 {
	r := make([]complex128, n*n)
	for i := range n {
		for j := range n {
			r[j*n+i] = conj(p[i*n+j])
		}
	}
	return r
}

func realC(p []float64) []complex128 {
	r := make([]complex128, len(p))
	for i, x := range p {
		r[i] = complex(x, 0)
	}
	return r
}

// eigenOrder is the order geev returns eigenvalues in: by real part,
// then the imaginary part's magnitude, then the positive one first (a
// pair adjacent), stably; plain comparisons, zeros of either sign
// equal. dlahqr's own order hangs on rounding (a sweep in f32 and one in
// f64 may deflate the same eigenvalues in different rows) and LAPACK
// leaves it unspecified; a fixed one makes the lowering's and this
// agree.
func eigenOrder(wr, wi []float64) []int {
	mag := make([]float64, len(wi))
	for i, x := range wi {
		mag[i] = math.Abs(x)
	}
	return orderBy(wr, mag, wi)
}

// orderBy is the order of indices by key a, then b, then -c, stably
// (plain comparisons: zeros of either sign equal): eigenOrder's and
// eigenOrderNear's.
func orderBy(a, b, c []float64) []int {
	order := make([]int, len(a))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		p, q := order[x], order[y]
		switch {
		case a[p] != a[q]:
			return a[p] < a[q]
		case b[p] != b[q]:
			return b[p] < b[q]
		}
		return -c[p] < -c[q]
	})
	return order
}

// appendVectors appends geev's right and left vectors ur and ul (n x
// n) to vrs and vls, their columns in order, each zero where not asked
// for.
func appendVectors(vrs, vls, ur, ul []complex128, order []int, left, right bool) ([]complex128, []complex128) {
	ur, ul = permuteColumns(ur, order), permuteColumns(ul, order)
	if !right {
		clear(ur)
	}
	if !left {
		clear(ul)
	}
	return append(vrs, ur...), append(vls, ul...)
}

// permuteColumns is the n x n v with column j taken from column
// order[j].
func permuteColumns(v []complex128, order []int) []complex128 {
	n := len(order)
	out := make([]complex128, len(v))
	for j, o := range order {
		for i := range n {
			out[i*n+j] = v[i*n+o]
		}
	}
	return out
}
