package eval

import (
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// sytrd is LAPACK's sytrd (hetrd) on each matrix of l, its lower
// (lower) or upper triangle read: (a with the tridiagonal form and the
// reflectors in that triangle, d, e, tau), as hlo.CallSytrd says. The
// upper form is the lower form of the matrix with its rows and columns
// reversed (rows and columns reversed, the upper triangle is the lower
// one, sytd2's upper loop from the last column back is the lower loop
// from the first, and each reflector's vector is its lower twin
// reversed), so one loop, sytd2Lower, does both.
func sytrd(l *hlo.Literal, lower bool, dSh, eSh, tauSh hlo.Shape) (a, d, e, tau *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	var ds, es, taus []complex128
	flip := func(m []complex128) {
		if !lower {
			slices.Reverse(m) // rows and columns reversed: the element order reversed
		}
	}
	for b := int64(0); b < batch; b++ {
		m := raw[b*n*n : (b+1)*n*n]
		flip(m)
		md, me, mt := sytd2Lower(m, int(n))
		flip(m)
		flip(md)
		flip(me)
		flip(mt)
		ds, es, taus = append(ds, md...), append(es, me...), append(taus, mt...)
	}
	return literal(l.Shape.Elem, l.Shape.Dims, raw), literal(dSh.Elem, dSh.Dims, ds), literal(eSh.Elem, eSh.Dims, es), literal(tauSh.Elem, tauSh.Dims, taus)
}

// sytd2Lower is LAPACK's sytd2 (hetd2) with uplo 'L' on the n x n
// matrix a, in place, reading and writing its lower triangle only (the
// Hermitian matrix's diagonal taken as real): for each column i < n-1,
// larfgC's reflector H(i) = I - tau v v^H, v = (1, x) on rows i+1 on,
// takes a(i+1:, i) to (beta, 0, ...); then w = tau A v over the
// trailing block A (rows and columns i+1 on), w -= (tau/2) (w^H v) v,
// and A -= v w^H + w v^H (her2: the diagonal kept real). Column i keeps
// beta on the subdiagonal and x below it. It returns the diagonal d,
// the off-diagonal e (the betas) and the taus.
func sytd2Lower(a []complex128, n int) (d, e, taus []complex128) {
	at := func(i, j int) *complex128 { return &a[i*n+j] }
	herm := func(i, j int) complex128 { // the trailing block's element (i, j) from the lower triangle
		switch {
		case i > j:
			return *at(i, j)
		case i < j:
			return conj(*at(j, i))
		}
		return complex(real(*at(i, i)), 0)
	}
	if n == 0 {
		return nil, nil, nil
	}
	d, e, taus = make([]complex128, n), make([]complex128, max(n-1, 0)), make([]complex128, max(n-1, 0))
	*at(0, 0) = complex(real(*at(0, 0)), 0)
	for i := 0; i < n-1; i++ {
		x := make([]complex128, 0, n-i-2)
		for r := i + 2; r < n; r++ {
			x = append(x, *at(r, i))
		}
		beta, tau := larfgC(*at(i+1, i), x)
		if tau != 0 {
			k := n - i - 1 // the trailing block's order
			v := append([]complex128{1}, x...)
			w := make([]complex128, k)
			for r := range k {
				var s complex128
				for c := range k {
					s += herm(i+1+r, i+1+c) * v[c]
				}
				w[r] = tau * s
			}
			var wv complex128 // w^H v
			for r := range k {
				wv += conj(w[r]) * v[r]
			}
			alpha := -0.5 * tau * wv
			for r := range k {
				w[r] += alpha * v[r]
			}
			for c := range k {
				for r := c; r < k; r++ {
					*at(i+1+r, i+1+c) -= v[r]*conj(w[c]) + w[r]*conj(v[c])
				}
				*at(i+1+c, i+1+c) = complex(real(*at(i+1+c, i+1+c)), 0)
			}
			for r := i + 2; r < n; r++ {
				*at(r, i) = x[r-i-2]
			}
			*at(i+1, i) = complex(beta, 0)
		} else {
			*at(i+1, i+1) = complex(real(*at(i+1, i+1)), 0)
		}
		e[i] = complex(real(*at(i+1, i)), 0)
		d[i] = complex(real(*at(i, i)), 0)
		taus[i] = tau
	}
	d[n-1] = complex(real(*at(n-1, n-1)), 0)
	return d, e, taus
}
