package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// Triangular solves and Cholesky factors, and the bounds on their
// rounding that RunNudged moves them by.

// triangularSolve is XLA's triangular-solve by substitution, in float64
// or complex128, reading only a's triangle: for each batch matrix, op(a)
// (a, its transpose or its conjugate transpose) solves op(a) x = b
// column by column, or x op(a) = b row by row (as op(a)^T x^T = b^T).
// A nonzero nudge moves each solution by its error bound in that
// direction (RunNudged; nudgeSolution).
func triangularSolve(in *hlo.Instruction, a, b *hlo.Literal, nudge int) *hlo.Literal {
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	rows, cols := b.Shape.Dims[r-2], b.Shape.Dims[r-1]
	batch := hlo.Shape{Dims: a.Shape.Dims[:r-2]}.NumElements() // 0 x 0 matrices too
	val := func(l *hlo.Literal, i int64) complex128 {
		s := get(l, i)
		if l.Shape.Elem.IsComplex() {
			return s.c
		}
		return complex(s.f, 0)
	}
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	lower := in.A.Lower
	tr := in.A.TransposeA == "TRANSPOSE" || in.A.TransposeA == "ADJOINT"
	for bt := int64(0); bt < batch; bt++ {
		// m(i, j) is op(a)'s element, of a triangle lower when mLower.
		m := func(i, j int64) complex128 {
			if tr {
				i, j = j, i
			}
			v := val(a, bt*n*n+i*n+j)
			if in.A.TransposeA == "ADJOINT" {
				v = complex(real(v), -imag(v))
			}
			return v
		}
		mLower := lower != tr
		if !in.A.LeftSide { // x op(a) = b: op(a)^T x^T = b^T
			inner := m
			m = func(i, j int64) complex128 { return inner(j, i) }
			mLower = !mLower
		}
		// Solve m y = c for each vector c: a column of b (left side) or
		// a row (right side).
		vecs, length := cols, rows
		at := func(v, k int64) int64 { return bt*rows*cols + k*cols + v }
		if !in.A.LeftSide {
			vecs, length = rows, cols
			at = func(v, k int64) int64 { return bt*rows*cols + v*cols + k }
		}
		y := make([]complex128, length)
		for v := int64(0); v < vecs; v++ {
			for step := int64(0); step < length; step++ {
				k := step
				if !mLower {
					k = length - 1 - step
				}
				acc := val(b, at(v, k))
				for j := int64(0); j < length; j++ {
					if mLower && j < k || !mLower && j > k {
						acc -= m(k, j) * y[j]
					}
				}
				if !in.A.UnitDiagonal {
					acc /= m(k, k)
				}
				y[k] = acc
			}
			if nudge != 0 {
				nudgeSolution(y, m, mLower, in.A.UnitDiagonal, in.Shape.Elem, nudge)
			}
			for k := int64(0); k < length; k++ {
				if in.Shape.Elem.IsComplex() {
					put(out.Data, in.Shape.Elem, at(v, k), scalar{c: roundC(in.Shape.Elem, y[k])})
				} else {
					put(out.Data, in.Shape.Elem, at(v, k), scalar{f: round(in.Shape.Elem, real(y[k]))})
				}
			}
		}
	}
	return out
}

// nudgeSolution moves y, the solution of the triangular system m y = c
// (m lower when lower; ones on its diagonal when unit), by the
// substitution's error bound in direction dir, for RunNudged: computed
// in floats of type t, y solves (m + dm) y = c with |dm| <= n u |m|, so
// its error is at most |m^-1| n u |m| |y| component by component, and
// the comparison matrix M(m) (|m_kk| on the diagonal, -|m_kj| off it)
// has a nonnegative inverse that bounds |m^-1| (Higham, Accuracy and
// Stability of Numerical Algorithms, 8.1-8.3): one more substitution,
// with M(m), gives the bound. A system with an infinity or NaN gives
// what the order of its arithmetic makes of it (inf - inf in one, inf
// in another): its solution becomes 0, so that no reference agrees.
func nudgeSolution(y []complex128, m func(i, j int64) complex128, lower, unit bool, t hlo.ElementType, dir int) {
	part, _ := t.ComplexPart()
	_, man := part.FloatFields()
	n := int64(len(y))
	u := float64(n+1) * math.Ldexp(1, -man)
	in := func(k, j int64) bool { return lower && j < k || !lower && j > k } // below (above) the diagonal
	diag := func(k int64) float64 {
		if unit {
			return 1
		}
		return cmplx.Abs(m(k, k))
	}
	z := make([]float64, n)
	finite := true
	for step := range n {
		k := step
		if !lower {
			k = n - 1 - step
		}
		w := diag(k) * cmplx.Abs(y[k])
		acc := 0.0
		for j := range n {
			if in(k, j) {
				w += cmplx.Abs(m(k, j)) * cmplx.Abs(y[j])
				acc += cmplx.Abs(m(k, j)) * z[j]
			}
		}
		z[k] = (u*w + acc) / diag(k)
		finite = finite && !math.IsInf(z[k], 0) && !math.IsNaN(z[k])
	}
	for k := range y {
		if !finite {
			y[k] = 0
			continue
		}
		d := float64(dir) * z[k]
		y[k] += move(d)
	}
}

// cholesky is XLA's cholesky (its cholesky_expander) by the column
// algorithm in float64 or complex128: d = sqrt(w_jj), w_ij = a_ij -
// sum_k<j l_ik conj(l_jk) (of its real part, for complex types), l_ij =
// w_ij / d on and below the diagonal (XLA's unblocked loop divides the
// whole column; a matrix of order 1 is its block of one, l = d), reading only a's lower
// triangle (lower=true) or, for u with a = u^H u, its upper one (the
// lower one of a^H, transposed back); the other triangle is zero. A
// matrix with a pivot whose square root is NaN is NaN throughout (NaN +
// 0i for complex types). A nonzero nudge moves each factor by its error
// bound in that direction (RunNudged; nudgeFactor).
func cholesky(in *hlo.Instruction, a *hlo.Literal, nudge int) *hlo.Literal {
	r := a.Shape.Rank()
	n := a.Shape.Dims[r-1]
	t := in.Shape.Elem
	out := newLit(t, in.Shape.Dims)
	batch := hlo.Shape{Dims: a.Shape.Dims[:r-2]}.NumElements() // 0 x 0 matrices too
	for bt := int64(0); bt < batch; bt++ {
		l, failed, pivot := choleskyColumns(a, bt, n, in.A.Lower)
		if n == 1 {
			// XLA factors a block of one as its square root (0 for 0);
			// its unblocked loop divides the whole column by it, the
			// diagonal w_jj / sqrt(w_jj) too (0/0 for 0).
			v := get(a, bt)
			re := v.f
			if a.Shape.Elem.IsComplex() {
				re = real(v.c)
			}
			l[0] = complex(math.Sqrt(re), 0)
		}
		switch {
		case nudge == 0:
		case !(pivot > nearSingular(n, t)):
			// A pivot within rounding of 0: whether the factorization
			// fails (NaN throughout), or divides 0 by 0 below a zero
			// pivot, or goes on, is rounding's choice. Each element of
			// the factor becomes what it is not (NaN if it is finite, 0
			// if NaN), so that no reference agrees on it.
			for i := range l {
				if failed || cmplx.IsNaN(l[i]) {
					l[i] = 0
				} else {
					l[i] = complex(math.NaN(), 0)
				}
			}
			failed = false
		case !failed:
			nudgeFactor(l, n, t, nudge)
		}
		for i := int64(0); i < n; i++ {
			for j := int64(0); j < n; j++ {
				v := l[i*n+j]
				if !in.A.Lower {
					v = conj(l[j*n+i])
				}
				if failed {
					v = complex(math.NaN(), 0)
				}
				idx := bt*n*n + i*n + j
				if t.IsComplex() {
					put(out.Data, t, idx, scalar{c: roundC(t, v)})
				} else {
					put(out.Data, t, idx, scalar{f: round(t, real(v))})
				}
			}
		}
	}
	return out
}

// nearSingular is the relative pivot (choleskyColumns) below which
// rounding in floats of type t may decide whether an n x n Cholesky
// factorization fails: four times the (n+1) u of its error bound.
func nearSingular(n int64, t hlo.ElementType) float64 {
	part, _ := t.ComplexPart()
	_, man := part.FloatFields()
	return 4 * float64(n+1) * math.Ldexp(1, -man)
}

// nudgeFactor moves l, a Cholesky factor (n x n, lower), by its error
// bound in direction dir, for RunNudged: computed in floats of type t, l
// l^H = a + da with |da| <= (n+1) u |l| |l^H| (Higham, 10.1), and to
// first order dl = l phi(l^-1 da l^-H), phi the lower triangle with half
// its diagonal, so |dl| <= |l| phi(M^-1 |da| M^-T), M the comparison
// matrix of l, whose nonnegative inverse bounds |l^-1| (O(n^3): past 64
// rows, or where the bound is not finite, the factor becomes 0, so that
// no reference agrees on it).
func nudgeFactor(l []complex128, n int64, t hlo.ElementType, dir int) {
	part, _ := t.ComplexPart()
	_, man := part.FloatFields()
	u := float64(n+1) * math.Ldexp(1, -man)
	abs := make([]float64, n*n)
	for i := range abs {
		abs[i] = cmplx.Abs(l[i])
	}
	zero := func() {
		for i := range l {
			l[i] = 0
		}
	}
	if n > 64 {
		zero()
		return
	}
	// inv = M^-1, lower and nonnegative, column by column: M inv = I.
	inv := make([]float64, n*n)
	for c := range n {
		for i := c; i < n; i++ {
			v := 0.0
			if i == c {
				v = 1
			}
			for k := c; k < i; k++ {
				v += abs[i*n+k] * inv[k*n+c]
			}
			inv[i*n+c] = v / abs[i*n+i]
		}
	}
	// da = u |l| |l|^T, then w = inv da inv^T.
	mul := func(x, y []float64, ty bool) []float64 {
		out := make([]float64, n*n)
		for i := range n {
			for j := range n {
				s := 0.0
				for k := range n {
					yk := y[k*n+j]
					if ty {
						yk = y[j*n+k]
					}
					s += x[i*n+k] * yk
				}
				out[i*n+j] = s
			}
		}
		return out
	}
	da := mul(abs, abs, true)
	for i := range da {
		da[i] *= u
	}
	w := mul(mul(inv, da, false), inv, true)
	for i := range n {
		for j := range n {
			switch {
			case j > i:
				w[i*n+j] = 0
			case j == i:
				w[i*n+j] /= 2
			}
		}
	}
	d := mul(abs, w, false)
	for i := range n {
		for j := int64(0); j <= i; j++ {
			v := d[i*n+j]
			if math.IsInf(v, 0) || math.IsNaN(v) {
				zero()
				return
			}
			e := float64(dir) * v
			l[i*n+j] += move(e)
		}
	}
}

// choleskyColumns is cholesky's column algorithm on matrix bt of a in
// its lower form (a^H's lower triangle when !lower), before a failure
// makes the matrix NaN: l (n x n, zero above the diagonal), whether a
// pivot's square root was NaN, and the smallest pivot relative to its
// diagonal element, |a_jj - sum_k |l_jk|^2| / |a_jj| (where it is near
// 0, rounding decides whether the factorization fails). LAPACK's potrf
// (lapack.go) reads its info from where l's diagonal turns NaN.
func choleskyColumns(a *hlo.Literal, bt, n int64, lower bool) (l []complex128, failed bool, pivot float64) {
	t := a.Shape.Elem
	at := func(i, j int64) complex128 {
		if !lower { // a^H's lower triangle
			i, j = j, i
		}
		s := get(a, bt*n*n+i*n+j)
		v := complex(s.f, 0)
		if t.IsComplex() {
			v = s.c
		}
		if !lower {
			v = conj(v)
		}
		return v
	}
	l = make([]complex128, n*n)
	pivot = math.Inf(1)
	for j := int64(0); j < n; j++ {
		w := make([]complex128, n)
		for i := j; i < n; i++ {
			w[i] = at(i, j)
			for k := int64(0); k < j; k++ {
				w[i] -= l[i*n+k] * conj(l[j*n+k])
			}
		}
		d := math.Sqrt(real(w[j]))
		failed = failed || math.IsNaN(d)
		if r := math.Abs(real(w[j])) / math.Abs(real(at(j, j))); !(r >= pivot) {
			pivot = r // NaN too: 0/0
		}
		for i := j; i < n; i++ {
			l[i*n+j] = w[i] / complex(d, 0)
		}
	}
	return l, failed, pivot
}
