package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// The complex eigenproblem calls (cgeev, zgeev, cgees, zgees, cgehrd,
// zgehrd) as the lowering computes them (lower/zgeev.go), in complex128
// with the thresholds of l's part type:
//
//   - rows and columns permuted to isolate eigenvalues (isolate: gebal's
//     permutation, which zgeev and zgees both ask for), the matrix
//     scaled by a power of two into range (normScaleC) and, for geev,
//     its active block balanced (balance, by moduli), as LAPACK's zgeev
//     does;
//   - the Hessenberg form H = Q^H a Q by a reflector per column
//     (hessenbergC: zgehd2);
//   - the complex Schur form T = Z^H a Z by zlahqr's single-shift QR
//     (hqrC), the eigenvalues on T's diagonal;
//   - geev's vectors by substitution in T (triangularVectors, as the real
//     geev's in its complex Schur form), each of norm 1 with its first
//     largest element real and positive; gees's Schur vectors each turned
//     so (T's rows and columns with them).
//
// info is 0, or i + 1 when the eigenvalue at row i did not converge
// within hqrC's iterations (geev's vectors are then left zero).

// geevC is geev of each complex matrix of l: (w, vl, vr, info), the
// eigenvalues in eigenOrderNear's order.
func geevC(l *hlo.Literal, left, right bool, wSh, vSh, infoSh hlo.Shape) (w, vl, vr, info *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	rt := realType(l.Shape.Elem)
	ulp, smlnum := thresholds(rt, n)
	ni := int(n)
	var ws, vls, vrs, infos []complex128
	for b := int64(0); b < batch; b++ {
		h := raw[b*n*n : (b+1)*n*n]
		bal := isolateMatrix(h, ni)
		k := normScaleC(h, rt)
		bal.d = balance(ni, bal.lo, bal.hi, rt, func(i, j int) float64 { return cmplx.Abs(h[i*ni+j]) }, func(i int, f float64) {
			for j := range ni {
				h[i*ni+j] /= complex(f, 0)
				h[j*ni+i] *= complex(f, 0)
			}
		})
		z, _ := hessenbergC(h, ni, false)
		ev, fail := hqrC(h, z, ni, ulp, smlnum)
		infos = append(infos, complex(float64(fail), 0))
		rel := tieTolerance(ulp, ni)
		ur, ul := make([]complex128, n*n), make([]complex128, n*n)
		if fail == 0 {
			ur, ul = triangularVectors(h, z, bal, ni, ulp, smlnum)
			ur, ul = eigenColumns(ur, nil, ni, rel), eigenColumns(ul, nil, ni, rel)
		}
		re, im := make([]float64, n), make([]float64, n)
		for j, x := range ev {
			re[j], im[j] = math.Ldexp(real(x), -k), math.Ldexp(imag(x), -k)
		}
		order := eigenOrderNear(re, im, rel)
		for _, o := range order {
			ws = append(ws, complex(re[o], im[o]))
		}
		vrs, vls = appendVectors(vrs, vls, ur, ul, order, left, right)
	}
	return literal(wSh.Elem, wSh.Dims, ws), literal(vSh.Elem, vSh.Dims, vls), literal(vSh.Elem, vSh.Dims, vrs), literal(infoSh.Elem, infoSh.Dims, infos)
}

// geesC is gees (no sorting) of each complex matrix of l: (T, Z, zero
// unless vectors, w in T's diagonal order, info), each column of Z
// turned so that its first largest element (to tieTolerance) is real and
// positive, T = S^H T S with it: the Schur form is unique but for those
// phases once the diagonal's order is fixed.
func geesC(l *hlo.Literal, vectors bool, wSh, infoSh hlo.Shape) (tl, zl, w, info *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	rt := realType(l.Shape.Elem)
	ulp, smlnum := thresholds(rt, n)
	ni := int(n)
	var ts, zs, ws, infos []complex128
	for b := int64(0); b < batch; b++ {
		h := raw[b*n*n : (b+1)*n*n]
		bal := isolateMatrix(h, ni)
		k := normScaleC(h, rt)
		z, _ := hessenbergC(h, ni, false)
		ev, fail := hqrC(h, z, ni, ulp, smlnum)
		z = unpermuteRows(z, bal.at, ni)
		rel := tieTolerance(ulp, ni)
		ph, big := make([]complex128, n), make([]int64, n)
		for j := range n {
			big[j] = leadNear(z, n, j, rel)
			ph[j] = phaseOf(z[big[j]*n+j])
		}
		for i := range ni {
			for j := range ni {
				h[i*ni+j] = complex(math.Ldexp(real(h[i*ni+j]), -k), math.Ldexp(imag(h[i*ni+j]), -k))
				if i != j { // the diagonal as it was: |ph|^2 = 1 but for rounding
					h[i*ni+j] *= conj(ph[i]) * ph[j]
				}
				z[i*ni+j] *= ph[j]
			}
		}
		for j, r := range big { // real, not within rounding of it
			z[r*n+int64(j)] = complex(real(z[r*n+int64(j)]), 0)
		}
		if !vectors {
			clear(z)
		}
		for _, x := range ev {
			ws = append(ws, complex(math.Ldexp(real(x), -k), math.Ldexp(imag(x), -k)))
		}
		ts, zs = append(ts, h...), append(zs, z...)
		infos = append(infos, complex(float64(fail), 0))
	}
	return literal(l.Shape.Elem, l.Shape.Dims, ts), literal(l.Shape.Elem, l.Shape.Dims, zs), literal(wSh.Elem, wSh.Dims, ws), literal(infoSh.Elem, infoSh.Dims, infos)
}

// gehrd is LAPACK's gehrd (low 1, high n) on each matrix of l, real or
// complex, as the lowering computes it: hessenbergC with the reflectors
// stored below the subdiagonal, and their taus (a real matrix's as the
// real arithmetic gives them, bit for bit).
func gehrd(l *hlo.Literal, tauSh hlo.Shape) (*hlo.Literal, *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	var ts []complex128
	for b := int64(0); b < batch; b++ {
		_, taus := hessenbergC(raw[b*n*n:(b+1)*n*n], int(n), true)
		ts = append(ts, taus...)
	}
	return literal(l.Shape.Elem, l.Shape.Dims, raw), literal(tauSh.Elem, tauSh.Dims, ts)
}

// hqrC is LAPACK's zlahqr (wantt, wantz) on the n x n Hessenberg h and
// its transformations z, in place, as one loop whose iteration either
// deflates the active block's last row or makes one single-shift sweep
// over the block (the lowering's while loop does the same): the block's
// top l is the last negligible subdiagonal element (negligibleC) at or
// below the last top found; the shift is Wilkinson's (the trailing 2 x
// 2's eigenvalue nearer h(i, i)), exceptional after 10 and 20 sweeps
// without a deflation; the sweep chases the bulge from row l with 2 x 2
// reflectors (larfgC). zlahqr also starts a sweep lower where two
// consecutive subdiagonal elements are small, and keeps the subdiagonal
// real by diagonal scalings; neither is done here nor in the lowering
// (the sweep is the same similarity up to those phases). It returns the
// eigenvalues (T's diagonal) and 0, or i + 1 when row i had not
// converged after 30 max(10, n) sweeps.
func hqrC(h, z []complex128, n int, ulp, smlnum float64) (w []complex128, info int) {
	w = make([]complex128, n)
	at := func(i, j int) *complex128 { return &h[i*n+j] }
	itmax := 30 * max(10, n)
	i, l, its := n-1, 0, 0
	for i >= 0 && its <= itmax {
		for k := i; k > l; k-- {
			if negligibleC(h, n, k, ulp, smlnum) {
				l = k
				break
			}
		}
		if l > 0 {
			*at(l, l-1) = 0
		}
		if l >= i {
			w[i] = *at(i, i)
			i, l, its = i-1, 0, 0
			continue
		}
		its++
		v := [2]complex128{*at(l, l) - shiftC(h, n, l, i, its), *at(l+1, l)}
		s := complex(abs1(v[0])+abs1(v[1]), 0)
		v[0], v[1] = v[0]/s, v[1]/s
		for k := l; k < i; k++ {
			if k > l {
				v = [2]complex128{*at(k, k-1), *at(k+1, k-1)}
			}
			x := v[1:]
			beta, t1 := larfgC(v[0], x)
			if k > l {
				*at(k, k-1), *at(k+1, k-1) = complex(beta, 0), 0
			}
			v2 := x[0]
			for j := k; j < n; j++ { // G^H from the left
				sum := conj(t1)**at(k, j) + conj(t1*v2)**at(k+1, j)
				*at(k, j) -= sum
				*at(k+1, j) -= sum * v2
			}
			for j := 0; j <= min(k+2, i); j++ { // G from the right
				sum := t1**at(j, k) + t1*v2**at(j, k+1)
				*at(j, k) -= sum
				*at(j, k+1) -= sum * conj(v2)
			}
			for j := range n {
				zk, zk1 := &z[j*n+k], &z[j*n+k+1]
				sum := t1**zk + t1*v2**zk1
				*zk -= sum
				*zk1 -= sum * conj(v2)
			}
		}
	}
	if i >= 0 {
		return w, i + 1
	}
	return w, 0
}

// shiftC is zlahqr's shift for the sweep over block l..i, its sweeps
// since the last deflation: exceptional at its 10 (from the block's top)
// and 20 (from its bottom), else Wilkinson's, the eigenvalue of the
// trailing 2 x 2 nearer h(i, i).
func shiftC(h []complex128, n, l, i, its int) complex128 {
	at := func(i, j int) complex128 { return h[i*n+j] }
	const dat1 = 0.75
	switch its {
	case 10:
		return complex(dat1*abs1(at(l+1, l)), 0) + at(l, l)
	case 20:
		return complex(dat1*abs1(at(i, i-1)), 0) + at(i, i)
	}
	t := at(i, i)
	u := cmplx.Sqrt(at(i-1, i)) * cmplx.Sqrt(at(i, i-1))
	s := abs1(u)
	if s == 0 {
		return t
	}
	x := (at(i-1, i-1) - t) / 2
	sx := abs1(x)
	s = max(s, sx)
	sc := complex(s, 0)
	y := sc * cmplx.Sqrt((x/sc)*(x/sc)+(u/sc)*(u/sc))
	if sx > 0 {
		xs := x / complex(sx, 0)
		if real(xs)*real(y)+imag(xs)*imag(y) < 0 {
			y = -y
		}
	}
	return t - u*(u/(x+y))
}

// negligibleC is zlahqr's test of subdiagonal element h(k, k-1) of the
// complex h, in |re| + |im| (negligibleBy).
func negligibleC(h []complex128, n, k int, ulp, smlnum float64) bool {
	return negligibleBy(n, k, func(i, j int) float64 { return abs1(h[i*n+j]) }, abs1(h[(k-1)*n+k-1]-h[k*n+k]), ulp, smlnum)
}

// eigenOrderNear is eigenOrder for a complex matrix's eigenvalues (wr,
// wi), whose parts rounding leaves near equal where they are equal in
// exact arithmetic (a real matrix's conjugate pairs, a permutation's
// roots of unity), so that the device's order and this one's would
// hang on rounding: a real part within rel of the largest magnitude of
// another's counts as the smallest of those (keyRe), then so an
// imaginary part's magnitude among those of one keyRe (keyIm), and the
// order is by (keyRe, keyIm, -wi), stably. The lowering's is the same
// (lower/zgeev.go).
func eigenOrderNear(wr, wi []float64, rel float64) []int {
	n := len(wr)
	var top float64
	for i := range n {
		top = max(top, math.Hypot(wr[i], wi[i]))
	}
	tol := rel * top
	kre, kim := make([]float64, n), make([]float64, n)
	for i := range n {
		kre[i] = math.Inf(1)
		for j := range n {
			if math.Abs(wr[j]-wr[i]) <= tol {
				kre[i] = min(kre[i], wr[j])
			}
		}
	}
	for i := range n {
		kim[i] = math.Inf(1)
		for j := range n {
			if kre[j] == kre[i] && math.Abs(math.Abs(wi[j])-math.Abs(wi[i])) <= tol {
				kim[i] = min(kim[i], math.Abs(wi[j]))
			}
		}
	}
	return orderBy(kre, kim, wi)
}

// abs1 is |re x| + |im x|, LAPACK's cabs1.
func abs1(x complex128) float64 { return math.Abs(real(x)) + math.Abs(imag(x)) }
