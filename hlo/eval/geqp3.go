package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// geqp3 is LAPACK's geqp3 on each matrix of l with the initial pivots
// jl (laqp2, the unblocked form, for the pivoted columns), as
// hlo.CallGeqp3 says: (a, jpvt 1-based, tau).
func geqp3(l, jl *hlo.Literal, tauSh hlo.Shape) (a, jpvt, tau *hlo.Literal) {
	batch, m, n, raw := matrices(l)
	rt, _ := l.Shape.Elem.ComplexPart()
	// laqp2's threshold for recomputing a downdated norm: the square
	// root of the type's unit roundoff (dlamch('E')).
	tol3z := math.Sqrt(epsilon(rt))
	jp := complexes(jl)
	k := min(m, n)
	taus := make([]complex128, 0, batch*k)
	for b := int64(0); b < batch; b++ {
		taus = append(taus, qp3(raw[b*m*n:(b+1)*m*n], jp[b*n:(b+1)*n], m, n, tol3z)...)
	}
	return literal(l.Shape.Elem, l.Shape.Dims, raw), literal(jl.Shape.Elem, jl.Shape.Dims, jp), literal(tauSh.Elem, tauSh.Dims, taus)
}

// qp3 is geqp3 on the m x n matrix a, in place, jpvt (its real parts)
// the initial pivots, overwritten with the 1-based permutation: the
// columns with a nonzero jpvt are swapped to the front in order (each
// with the column at the next front position), and the first min(m,
// nfixed) of them factored by reflectColumn without pivoting; then, for
// each remaining step i, the column of largest remaining norm (rows i
// on; the first of equal ones) is swapped to i and reflected, and the
// other norms downdated, sqrt(1 - (|a(i, j)| / norm)^2) times, or
// recomputed where that loses more than tol3z of the norm (laqp2's
// rule). It returns the taus.
func qp3(a, jpvt []complex128, m, n int64, tol3z float64) []complex128 {
	at := func(i, j int64) *complex128 { return &a[i*n+j] }
	swap := func(i, j int64) {
		for r := range m {
			*at(r, i), *at(r, j) = *at(r, j), *at(r, i)
		}
	}
	nfxd := int64(0)
	for j := range n {
		if jpvt[j] != 0 {
			if j != nfxd {
				swap(j, nfxd)
				jpvt[j] = jpvt[nfxd]
			} else {
				jpvt[j] = complex(float64(j+1), 0)
			}
			jpvt[nfxd] = complex(float64(j+1), 0)
			nfxd++
		} else {
			jpvt[j] = complex(float64(j+1), 0)
		}
	}
	k := min(m, n)
	taus := make([]complex128, k)
	for i := range min(m, nfxd) {
		taus[i] = reflectColumn(a, m, n, i)
	}
	norm := func(from, j int64) float64 {
		var s float64
		for r := from; r < m; r++ {
			s = math.Hypot(s, cmplx.Abs(*at(r, j)))
		}
		return s
	}
	vn1, vn2 := make([]float64, n), make([]float64, n)
	for j := nfxd; j < n; j++ {
		vn1[j] = norm(nfxd, j)
		vn2[j] = vn1[j]
	}
	for i := nfxd; i < k; i++ {
		pvt := i
		for j := i + 1; j < n; j++ {
			if vn1[j] > vn1[pvt] {
				pvt = j
			}
		}
		if pvt != i {
			swap(pvt, i)
			jpvt[pvt], jpvt[i] = jpvt[i], jpvt[pvt]
			vn1[pvt], vn2[pvt] = vn1[i], vn2[i]
		}
		taus[i] = reflectColumn(a, m, n, i)
		for j := i + 1; j < n; j++ {
			if vn1[j] == 0 {
				continue
			}
			r := cmplx.Abs(*at(i, j)) / vn1[j]
			temp := max(1-r*r, 0)
			q := vn1[j] / vn2[j]
			if temp*q*q <= tol3z {
				vn1[j] = norm(i+1, j)
				vn2[j] = vn1[j]
			} else {
				vn1[j] *= math.Sqrt(temp)
			}
		}
	}
	return taus
}
