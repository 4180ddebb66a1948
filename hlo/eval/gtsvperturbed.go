package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// gtsvPerturbed is jaxlib's tridiagonal_solve_perturbed_ffi
// (hlo.CallGtsvPerturbed), as jaxlib's
// SolveWithGaussianEliminationWithPivotingAndPerturbSingular computes it
// (LAPACK's lagtf and lagts): elimination with partial pivoting by
// scaled pivots, U's three diagonals and L^-1 P b kept, then back
// substitution whose pivots below 1 in magnitude perturbPivot nudges.
// In complex128, with the constants (eps, the safe minimum) of b's
// type, and rounded once.
func gtsvPerturbed(dlL, dL, duL, bL *hlo.Literal) *hlo.Literal {
	dl, d, du, b := complexes(dlL), complexes(dL), complexes(duL), complexes(bL)
	t := bL.Shape.Elem
	r := bL.Shape.Rank()
	n, k := bL.Shape.Dims[r-2], bL.Shape.Dims[r-1]
	x := make([]complex128, len(b))
	if n == 0 {
		return literal(t, bL.Shape.Dims, x)
	}
	// numeric_limits' epsilon (twice LAPACK's unit roundoff) and the
	// safe minimum (lamch's: the smallest normal) of b's real type.
	rt, _ := t.ComplexPart()
	eps, safemin := 2*epsilon(rt), smallestNormal(rt)
	for s := int64(0); s < int64(len(d))/n; s++ {
		DL := func(i int64) complex128 { return dl[s*n+i] }
		D := func(i int64) complex128 { return d[s*n+i] }
		DU := func(i int64) complex128 { return du[s*n+i] }
		rhs := func(i int64) []complex128 { return b[(s*n+i)*k : (s*n+i+1)*k] }
		row := func(i int64) []complex128 { return x[(s*n+i)*k : (s*n+i+1)*k] }
		if n == 1 {
			p := D(0)
			v := append([]complex128{}, rhs(0)...)
			p = perturbPivot(eps*cmplx.Abs(p), p, v, safemin)
			for j := range v {
				row(0)[j] = v[j] / p
			}
			continue
		}
		u := make([][3]complex128, n)
		u[0][0], u[0][1] = D(0), DU(0)
		maxU := math.Max(cmplx.Abs(u[0][0]), cmplx.Abs(u[0][1]))
		scale1 := cmplx.Abs(u[0][0]) + cmplx.Abs(u[0][1])
		copy(row(0), rhs(0))
		for c := int64(0); c < n-1; c++ {
			u[c+1][0] = D(c + 1)
			scale2 := cmplx.Abs(DL(c+1)) + cmplx.Abs(u[c+1][0])
			if c < n-2 {
				scale2 += cmplx.Abs(DU(c + 1))
			}
			switch {
			case DL(c+1) == 0:
				scale1 = scale2
				u[c+1][1], u[c][2] = DU(c+1), 0
				copy(row(c+1), rhs(c+1))
			default:
				piv1 := 0.0
				if u[c][0] != 0 {
					piv1 = cmplx.Abs(u[c][0]) / scale1
				}
				piv2 := cmplx.Abs(DL(c+1)) / scale2
				if piv2 <= piv1 {
					scale1 = scale2
					f := DL(c+1) / u[c][0]
					u[c+1][0] -= f * u[c][1]
					u[c+1][1], u[c][2] = DU(c+1), 0
					for j := range k {
						row(c + 1)[j] = rhs(c + 1)[j] - f*row(c)[j]
					}
					break
				}
				f := u[c][0] / DL(c+1)
				tmp := u[c][1]
				u[c][0] = DL(c + 1)
				u[c+1][0] = tmp - f*D(c+1)
				u[c][1] = D(c + 1)
				if c < n-2 {
					u[c][2] = DU(c + 1)
					u[c+1][1] = -f * DU(c+1)
				}
				for j := range k {
					row(c + 1)[j] = row(c)[j] - f*rhs(c + 1)[j]
					row(c)[j] = rhs(c + 1)[j]
				}
				scale1 = cmplx.Abs(u[c+1][0]) + cmplx.Abs(u[c+1][1])
			}
			if c < n-2 {
				for _, v := range u[c] {
					maxU = maxNaN(maxU, cmplx.Abs(v))
				}
			}
		}
		maxU = maxNaN(maxU, cmplx.Abs(u[n-1][0]))
		perturb := eps * maxU
		v := make([]complex128, k)
		for c := n - 1; c >= 0; c-- {
			p := u[c][0]
			for j := range k {
				v[j] = row(c)[j]
				if c+1 < n {
					v[j] -= u[c][1] * row(c + 1)[j]
				}
				if c+2 < n {
					v[j] -= u[c][2] * row(c + 2)[j]
				}
			}
			p = perturbPivot(perturb, p, v, safemin)
			inv := 1 / p
			for j := range k {
				row(c)[j] = v[j] * inv
			}
		}
	}
	return literal(t, bL.Shape.Dims, x)
}

// perturbPivot is jaxlib's MaybePerturbPivot (from LAPACK's lagts): a
// pivot below 1 in magnitude grows by perturb, doubled each time, while
// the row's largest element over it could overflow, or, below the safe
// minimum but not negligible, it and the row are scaled by 1/safemin.
// It returns the pivot and scales v in place.
func perturbPivot(perturb float64, pivot complex128, v []complex128, safemin float64) complex128 {
	bignum := 1 / safemin
	abs := cmplx.Abs(pivot)
	if abs >= 1 {
		return pivot
	}
	perturb = math.Copysign(maxNaN(math.Abs(perturb), safemin), real(pivot))
	maxFactor := 0.0
	for _, x := range v {
		maxFactor = maxNaN(maxFactor, cmplx.Abs(x))
	}
	for stop := false; abs < 1 && !stop; abs = cmplx.Abs(pivot) {
		switch {
		case abs < safemin && (abs == 0 || maxFactor*safemin > abs):
			pivot += complex(perturb, 0)
			perturb *= 2
		case abs < safemin:
			pivot *= complex(bignum, 0)
			for i := range v {
				v[i] *= complex(bignum, 0)
			}
			stop = true
		case maxFactor > abs*bignum:
			pivot += complex(perturb, 0)
			perturb *= 2
		default:
			stop = true
		}
	}
	return pivot
}

// maxNaN is the larger of a and b, NaN where either is (std::max over
// NaN keeps its first operand; the magnitudes here are NaN only from
// NaN inputs, whose results are NaN either way).
func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}
