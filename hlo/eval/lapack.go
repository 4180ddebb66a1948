package eval

import (
	"math"
	"math/cmplx"
	"slices"
	"sort"

	"github.com/vkjit/vkjit/hlo"
)

// The custom-calls vkjit knows (hlo.KnownCustomCall), computed here as
// LAPACK defines them (geqr2, org2r/ung2r, potf2: the unblocked forms),
// in float64 or complex128 and rounded once: an oracle written apart
// from the lowering's loops of HLO ops (lower/lapack.go).

func (e *evaluator) customCall(in *hlo.Instruction, ops []*Value) (*Value, error) {
	c, err := hlo.KnownCustomCall(in)
	if err != nil {
		return nil, in.Errorf("%w", err)
	}
	if c == nil {
		return nil, in.Errorf("%w", &Unsupported{"custom-call " + in.A.Target})
	}
	var res []*hlo.Literal
	switch c.Kind {
	case hlo.CallIdentity:
		if in.Shape.IsTuple() {
			return &Value{Tuple: ops}, nil
		}
		return ops[0], nil
	case hlo.CallTrsm:
		ts := *in
		ts.A.LeftSide, ts.A.Lower, ts.A.UnitDiagonal, ts.A.TransposeA = c.LeftSide, c.Lower, c.UnitDiagonal, c.Transpose
		b := ops[1].Lit
		if c.Alpha {
			b = scaled(b, ops[2].Lit)
		}
		res = []*hlo.Literal{triangularSolve(&ts, ops[0].Lit, b, 0)}
	case hlo.CallPotrf:
		f, info := potrf(ops[0].Lit, c.Lower)
		res = []*hlo.Literal{f, info}
	case hlo.CallGeqrf:
		a, tau := geqrf(ops[0].Lit, in.Shape.Tuple[1])
		res = []*hlo.Literal{a, tau}
	case hlo.CallGeqp3:
		a, jpvt, tau := geqp3(ops[0].Lit, ops[1].Lit, in.Shape.Tuple[2])
		res = []*hlo.Literal{a, jpvt, tau}
	case hlo.CallOrgqr:
		res = []*hlo.Literal{orgqr(ops[0].Lit, ops[1].Lit)}
	case hlo.CallGetrf:
		lu, ipiv, info := getrf(ops[0].Lit)
		res = []*hlo.Literal{lu, ipiv, info}
	case hlo.CallGtsv:
		dl, d, du, x, info := gtsv(ops[0].Lit, ops[1].Lit, ops[2].Lit, ops[3].Lit)
		res = []*hlo.Literal{dl, d, du, x, info}
	case hlo.CallOrmqr:
		res = []*hlo.Literal{ormqr(ops[0].Lit, ops[1].Lit, ops[2].Lit, c.LeftSide, c.Transpose == "ADJOINT")}
	case hlo.CallGtsvPerturbed:
		res = []*hlo.Literal{gtsvPerturbed(ops[0].Lit, ops[1].Lit, ops[2].Lit, ops[3].Lit)}
	case hlo.CallSytrd:
		t, d, off, tau := sytrd(ops[0].Lit, c.Lower, in.Shape.Tuple[1], in.Shape.Tuple[2], in.Shape.Tuple[3])
		res = []*hlo.Literal{t, d, off, tau, zeros(in.Shape.Tuple[4])}
	case hlo.CallTopK:
		return e.topKCall(in, ops[0].Lit)
	case hlo.CallApproxTopK:
		return e.approxTopK(in, ops, c.Dim)
	case hlo.CallCsrMatmul:
		out, err := csrMatmul(in.Shape, ops[0].Lit, ops[1].Lit, ops[2].Lit, ops[3].Lit)
		if err != nil {
			return nil, in.Errorf("%w", err)
		}
		res = []*hlo.Literal{out}
	case hlo.CallGesdd:
		u, sv, vt := gesdd(ops[0].Lit, c.Mode, in.Shape.Tuple[1], in.Shape.Tuple[2], in.Shape.Tuple[3])
		res = []*hlo.Literal{zeros(in.Shape.Tuple[0]), sv, u, vt}
	case hlo.CallSyevd:
		v, w := syevd(ops[0].Lit, c.Lower)
		res = []*hlo.Literal{v, w, zeros(in.Shape.Tuple[2])}
	case hlo.CallGehrd:
		h, tau := gehrd(ops[0].Lit, in.Shape.Tuple[1])
		res = []*hlo.Literal{h, tau, zeros(in.Shape.Tuple[2])}
	case hlo.CallGees:
		if ops[0].Lit.Shape.Elem.IsComplex() {
			tl, zl, w, info := geesC(ops[0].Lit, c.Right, in.Shape.Tuple[2], in.Shape.Tuple[4])
			res = []*hlo.Literal{tl, zl, w, zeros(in.Shape.Tuple[3]), info}
			break
		}
		tl, zl, wr, wi, info := gees(ops[0].Lit, c.Right, in.Shape.Tuple[2], in.Shape.Tuple[5])
		res = []*hlo.Literal{tl, zl, wr, wi, zeros(in.Shape.Tuple[4]), info}
	case hlo.CallGeev:
		if ops[0].Lit.Shape.Elem.IsComplex() {
			w, vl, vr, info := geevC(ops[0].Lit, c.Left, c.Right, in.Shape.Tuple[0], in.Shape.Tuple[1], in.Shape.Tuple[3])
			res = []*hlo.Literal{w, vl, vr, info}
			break
		}
		wr, wi, vl, vr, info := geev(ops[0].Lit, c.Left, c.Right, in.Shape.Tuple[0], in.Shape.Tuple[2], in.Shape.Tuple[4])
		res = []*hlo.Literal{wr, wi, vl, vr, info}
	default:
		return nil, in.Errorf("%w", &Unsupported{"custom-call " + in.A.Target})
	}
	if in.Shape.IsArray() {
		return &Value{Lit: res[0]}, nil
	}
	v := &Value{}
	for i, s := range in.Shape.Tuple {
		l := zeros(s)
		if i < len(res) {
			l = res[i]
		}
		v.Tuple = append(v.Tuple, &Value{Lit: l})
	}
	return v, nil
}

// scaled is b times scalar alpha.
func scaled(b, alpha *hlo.Literal) *hlo.Literal {
	_, _, _, x := matrices(b)
	s := get(alpha, 0)
	k := complex(s.f, 0)
	if alpha.Shape.Elem.IsComplex() {
		k = s.c
	}
	for i := range x {
		x[i] *= k
	}
	return literal(b.Shape.Elem, b.Shape.Dims, x)
}

// matrices reads a literal's last two dimensions as a batch of m x n
// complex128 matrices (real types with zero imaginary parts).
func matrices(l *hlo.Literal) (batch, m, n int64, a []complex128) {
	r := l.Shape.Rank()
	m, n = l.Shape.Dims[r-2], l.Shape.Dims[r-1]
	a = complexes(l)
	if m*n == 0 {
		return 0, m, n, a
	}
	return int64(len(a)) / (m * n), m, n, a
}

// complexes reads a literal's elements as complex128 (real and integer
// types with zero imaginary parts).
func complexes(l *hlo.Literal) []complex128 {
	v := make([]complex128, l.Shape.NumElements())
	for i := range v {
		s := get(l, int64(i))
		switch l.Shape.Elem.Kind() {
		case hlo.KindComplex:
			v[i] = s.c
		case hlo.KindSigned:
			v[i] = complex(float64(s.i), 0)
		case hlo.KindUnsigned:
			v[i] = complex(float64(s.u), 0)
		default:
			v[i] = complex(s.f, 0)
		}
	}
	return v
}

// literal writes values of type t (a float, complex or signed type) and
// dimensions dims.
func literal(t hlo.ElementType, dims []int64, v []complex128) *hlo.Literal {
	out := newLit(t, dims)
	for i, x := range v {
		switch {
		case t.IsComplex():
			put(out.Data, t, int64(i), scalar{c: roundC(t, x)})
		case t.Kind() == hlo.KindSigned:
			put(out.Data, t, int64(i), scalar{i: int64(real(x))})
		default:
			put(out.Data, t, int64(i), scalar{f: round(t, real(x))})
		}
	}
	return out
}

func conj(v complex128) complex128 { return complex(real(v), -imag(v)) }

// geqrf is LAPACK's geqr2 on each matrix of l (geqr2).
func geqrf(l *hlo.Literal, tauShape hlo.Shape) (*hlo.Literal, *hlo.Literal) {
	batch, m, n, a := matrices(l)
	k := min(m, n)
	taus := make([]complex128, 0, batch*k)
	for b := int64(0); b < batch; b++ {
		taus = append(taus, geqr2(a[b*m*n:(b+1)*m*n], m, n)...)
	}
	return literal(l.Shape.Elem, l.Shape.Dims, a), literal(tauShape.Elem, tauShape.Dims, taus)
}

// geqr2 is LAPACK's geqr2 on the m x n matrix a, in place: reflectColumn
// of each column j < min(m, n). It returns the taus.
func geqr2(a []complex128, m, n int64) []complex128 {
	taus := make([]complex128, min(m, n))
	for j := range taus {
		taus[j] = reflectColumn(a, m, n, int64(j))
	}
	return taus
}

// reflectColumn is geqr2's step j on the m x n matrix a, in place: the
// reflector H(j) = I - tau v v^H with v(j) = 1 that takes a(j:, j) to
// (beta, 0, ...) (larfgC: beta = -sign(re alpha) |(alpha, x)|, a zero of
// either sign taken as +0 so that the reflector does not hang on the
// sign of a zero, tau = (beta - alpha) / beta, v = x / (alpha - beta);
// tau = 0 and no change when x is zero and alpha real), applied as
// H(j)^H to the columns after j. It returns tau.
func reflectColumn(a []complex128, m, n, j int64) complex128 {
	at := func(i, j int64) *complex128 { return &a[i*n+j] }
	x := make([]complex128, 0, m-j-1)
	for i := j + 1; i < m; i++ {
		x = append(x, *at(i, j))
	}
	beta, tau := larfgC(*at(j, j), x)
	for i := j + 1; i < m; i++ {
		*at(i, j) = x[i-j-1]
	}
	*at(j, j) = complex(beta, 0)
	// a(j:, j+1:) -= conj(tau) v (v^H a(j:, j+1:)).
	v := func(i int64) complex128 {
		if i == j {
			return 1
		}
		return *at(i, j)
	}
	for c := j + 1; c < n; c++ {
		var w complex128
		for i := j; i < m; i++ {
			w += conj(v(i)) * *at(i, c)
		}
		w *= conj(tau)
		for i := j; i < m; i++ {
			*at(i, c) -= v(i) * w
		}
	}
	return tau
}

// larfgC is LAPACK's larfg (zlarfg) on (alpha; x): the reflector H = I
// - tau u u^H, u = (1, x) afterwards, with H^H (alpha; x) = (beta, 0,
// ...), beta = -sign(re alpha) |(alpha, x)| real (a zero of either sign
// taken as +0, so that the reflector does not hang on the sign of a
// zero), tau = (beta - alpha) / beta and x scaled by 1 / (alpha - beta);
// tau = 0, beta = re alpha and x unchanged when x is zero and alpha
// real.
func larfgC(alpha complex128, x []complex128) (beta float64, tau complex128) {
	var xnorm float64
	for _, e := range x {
		xnorm = math.Hypot(xnorm, cmplx.Abs(e))
	}
	if xnorm == 0 && imag(alpha) == 0 {
		return real(alpha), 0
	}
	beta = -math.Hypot(cmplx.Abs(alpha), xnorm) // -sign(re alpha), -0 as +0
	if real(alpha) < 0 {
		beta = -beta
	}
	s := 1 / (alpha - complex(beta, 0))
	for i := range x {
		x[i] *= s
	}
	return beta, complex((beta-real(alpha))/beta, -imag(alpha)/beta)
}

// orgqr is LAPACK's org2r (ung2r) on each matrix of l (org2r).
func orgqr(l, tl *hlo.Literal) *hlo.Literal {
	batch, m, n, a := matrices(l)
	k := tl.Shape.Dims[tl.Shape.Rank()-1]
	tau := complexes(tl)
	for b := int64(0); b < batch; b++ {
		org2r(a[b*m*n:(b+1)*m*n], tau[b*k:(b+1)*k], m, n)
	}
	return literal(l.Shape.Elem, l.Shape.Dims, a)
}

// ormqr is LAPACK's ormqr (unmqr): c times Q = H(0) ... H(k-1), the
// reflectors of a [..., m, k'] and tau [..., k], from the left or the
// right, Q or its adjoint; Q made whole (org2r over a's first columns,
// m of them, those past k' zero) and multiplied in complex128, rounded
// once.
func ormqr(al, tl, cl *hlo.Literal, left, adjoint bool) *hlo.Literal {
	batch, m, ka, a := matrices(al)
	k := tl.Shape.Dims[tl.Shape.Rank()-1]
	tau := complexes(tl)
	_, cr, cc, c := matrices(cl)
	out := make([]complex128, len(c))
	for b := int64(0); b < batch; b++ {
		q := make([]complex128, m*m)
		for i := range m {
			for j := range min(m, ka) {
				q[i*m+j] = a[b*m*ka+i*ka+j]
			}
		}
		org2r(q, tau[b*k:(b+1)*k], m, m)
		qAt := func(i, j int64) complex128 { // op(Q)[i, j]
			if adjoint {
				return cmplx.Conj(q[j*m+i])
			}
			return q[i*m+j]
		}
		cb, ob := c[b*cr*cc:(b+1)*cr*cc], out[b*cr*cc:(b+1)*cr*cc]
		for i := range cr {
			for j := range cc {
				var s complex128
				if left { // op(Q) c: c is m x cc
					for p := range m {
						s += qAt(i, p) * cb[p*cc+j]
					}
				} else { // c op(Q): c is cr x m
					for p := range m {
						s += cb[i*cc+p] * qAt(p, j)
					}
				}
				ob[i*cc+j] = s
			}
		}
	}
	return literal(cl.Shape.Elem, cl.Shape.Dims, out)
}

// org2r is LAPACK's org2r (ung2r) on the m x n matrix a, in place: Q's
// first n columns, Q = H(0) ... H(k-1) from geqr2's reflectors and taus,
// made from the last reflector back: the columns from k on start as the
// identity's, and column i is H(i) e_i once H(i) has been applied to the
// columns after it.
func org2r(a, tau []complex128, m, n int64) {
	k := int64(len(tau))
	at := func(i, j int64) *complex128 { return &a[i*n+j] }
	for j := k; j < n; j++ {
		for i := int64(0); i < m; i++ {
			*at(i, j) = 0
		}
		*at(j, j) = 1
	}
	for i := k - 1; i >= 0; i-- {
		t := tau[i]
		*at(i, i) = 1
		for c := i + 1; c < n; c++ { // a(i:, i+1:) -= tau v (v^H a(i:, i+1:))
			var w complex128
			for p := i; p < m; p++ {
				w += conj(*at(p, i)) * *at(p, c)
			}
			w *= t
			for p := i; p < m; p++ {
				*at(p, c) -= *at(p, i) * w
			}
		}
		for p := i + 1; p < m; p++ {
			*at(p, i) *= -t
		}
		*at(i, i) = 1 - t
		for p := int64(0); p < i; p++ {
			*at(p, i) = 0
		}
	}
}

// potrf is LAPACK's potrf by cholesky's column algorithm: the factor in
// the uplo triangle (lower: a = l l^H; upper: a = u^H u), NaN throughout
// it for a matrix that is not positive definite, a's own elements in the
// other triangle; info is 0, or k when the leading minor of order k is
// not positive definite (its pivot not positive, or NaN: where the
// column algorithm's diagonal first turns NaN), where LAPACK stops.
func potrf(l *hlo.Literal, lower bool) (*hlo.Literal, *hlo.Literal) {
	batch, n, _, a := matrices(l)
	info := make([]complex128, batch)
	for b := int64(0); b < batch; b++ {
		f, _, _ := choleskyColumns(l, b, n, lower)
		for j := int64(0); j < n; j++ {
			if p := f[j*n+j]; cmplx.IsNaN(p) {
				info[b] = complex(float64(j+1), 0)
				break
			}
		}
		for i := int64(0); i < n; i++ {
			for j := int64(0); j <= i; j++ {
				v := f[i*n+j]
				if info[b] != 0 {
					v = complex(math.NaN(), 0)
				}
				if lower {
					a[b*n*n+i*n+j] = v
				} else {
					a[b*n*n+j*n+i] = conj(v)
				}
			}
		}
	}
	return literal(l.Shape.Elem, l.Shape.Dims, a), literal(hlo.S32, slices.Clone(l.Shape.Dims[:l.Shape.Rank()-2]), info)
}

// getrf is LAPACK's getf2: LU with partial pivoting, for each column j
// the first row at or below j of largest |re| + |im| (i?amax) swapped
// into row j (ipiv[j] = that row + 1), the column below the pivot scaled
// by its reciprocal (divided by it when the reciprocal would overflow,
// below the smallest normal) and the trailing rows and columns updated;
// a zero pivot leaves the column and sets info to the first such column
// + 1.
func getrf(l *hlo.Literal) (*hlo.Literal, *hlo.Literal, *hlo.Literal) {
	batch, m, n, a := matrices(l)
	k := min(m, n)
	sfmin := smallestNormal(realType(l.Shape.Elem))
	ipiv := make([]complex128, batch*k)
	info := make([]complex128, batch)
	abs1 := func(v complex128) float64 { return math.Abs(real(v)) + math.Abs(imag(v)) }
	for b := int64(0); b < batch; b++ {
		at := func(i, j int64) *complex128 { return &a[b*m*n+i*n+j] }
		for j := int64(0); j < k; j++ {
			p, best := j, abs1(*at(j, j))
			for i := j + 1; i < m; i++ {
				if v := abs1(*at(i, j)); v > best {
					p, best = i, v
				}
			}
			ipiv[b*k+j] = complex(float64(p+1), 0)
			if piv := *at(p, j); piv != 0 {
				for c := int64(0); c < n; c++ {
					*at(j, c), *at(p, c) = *at(p, c), *at(j, c)
				}
				if cmplx.Abs(piv) >= sfmin {
					r := 1 / piv
					for i := j + 1; i < m; i++ {
						*at(i, j) *= r
					}
				} else {
					for i := j + 1; i < m; i++ {
						*at(i, j) /= piv
					}
				}
			} else if info[b] == 0 {
				info[b] = complex(float64(j+1), 0)
			}
			for i := j + 1; i < m; i++ {
				for c := j + 1; c < n; c++ {
					*at(i, c) -= *at(i, j) * *at(j, c)
				}
			}
		}
	}
	bd := slices.Clone(l.Shape.Dims[:l.Shape.Rank()-2])
	return literal(l.Shape.Elem, l.Shape.Dims, a), literal(hlo.S32, append(slices.Clone(bd), k), ipiv), literal(hlo.S32, bd, info)
}

// topKCall is XLA's TopK custom-call: a stable sort of (x, its indices)
// along the last dimension by the call's comparator, the first k kept.
func (e *evaluator) topKCall(in *hlo.Instruction, x *hlo.Literal) (*Value, error) {
	r := x.Shape.Rank()
	io := &hlo.Instruction{Op: hlo.OpIota, Shape: hlo.ArrayShape(hlo.S32, x.Shape.Dims...)}
	io.A.IotaDim = int64(r - 1)
	return e.sortedFirst(in, []*hlo.Literal{x, iota(io)}, r-1)
}

// approxTopK is XLA's ApproxTopK as it computes it off TPUs
// (hlo.CallApproxTopK): the operands sorted along dimension d by the
// comparator, each cut to its result's length.
func (e *evaluator) approxTopK(in *hlo.Instruction, ops []*Value, d int64) (*Value, error) {
	var xs []*hlo.Literal
	for _, o := range ops[:len(ops)/2] {
		xs = append(xs, o.Lit)
	}
	v, err := e.sortedFirst(in, xs, int(d))
	if err != nil || in.Shape.IsTuple() {
		return v, err
	}
	return v.Tuple[0], nil
}

// sortedFirst sorts xs along dimension d by in's comparator, stably, and
// cuts each to the length of in's result there (its results a tuple of
// them).
func (e *evaluator) sortedFirst(in *hlo.Instruction, xs []*hlo.Literal, d int) (*Value, error) {
	srt := &hlo.Instruction{Op: hlo.OpSort, Called: in.Called}
	srt.A.Dimensions, srt.A.IsStable = []int64{int64(d)}, true
	sorted, err := e.sort(srt, xs)
	if err != nil {
		return nil, err
	}
	res := []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		res = in.Shape.Tuple
	}
	out := &Value{}
	for i, l := range sorted.Leaves() {
		sl := &hlo.Instruction{Op: hlo.OpSlice, Shape: res[i]}
		for dim, n := range l.Shape.Dims {
			sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: 0, Limit: min(n, res[i].Dims[dim]), Stride: 1})
		}
		out.Tuple = append(out.Tuple, &Value{Lit: slice(sl, l)})
	}
	return out, nil
}

// JacobiSweeps bounds the sweeps of syevd's Jacobi method (each sweep
// rotates every pair of rows once; convergence is quadratic, and 6 to 10
// sweeps are usual).
const jacobiSweeps = 30

// syevd is the eigendecomposition of symmetric (heevd: Hermitian)
// matrices by the cyclic Jacobi method, as the lowering computes it (lower/lapack.go): the uplo
// triangle mirrored, then sweeps of one rotation per pair (p, q), p < q
// in row order, each zeroing a_pq (Golub and Van Loan's sym.schur2: t =
// sign(tau) / (|tau| + hypot(1, tau)), tau = (a_qq - a_pp) / (2 a_pq)),
// the 2 x 2 block then set as Rutishauser does (zeros off the diagonal,
// a_pp - t a_pq and a_qq + t a_pq on it); skipped, a_pq set to zero,
// where |a_pq| <= eps sqrt(|a_pp a_qq|) (eps the type's: below that a
// rotation only adds rounding noise, and a sweep once converged changes
// nothing; for complex types the rotation follows a phase that makes
// a_pq real), until the off-diagonal norm is at most n eps times
// the Frobenius norm (which the skipped elements' bound guarantees);
// the eigenvalues (the diagonal) ascending, ties in index order, with
// the rotations' product's columns in that order, each turned so that
// its first largest element is real and positive.
func syevd(l *hlo.Literal, lower bool) (*hlo.Literal, *hlo.Literal) {
	batch, n, _, raw := matrices(l)
	rt := realType(l.Shape.Elem)
	eps := epsilon(rt)
	vs := make([]complex128, len(raw))
	ws := make([]complex128, batch*n)
	for b := int64(0); b < batch; b++ {
		a := make([]complex128, n*n)
		v := make([]complex128, n*n)
		for i := int64(0); i < n; i++ {
			v[i*n+i] = 1
			for j := int64(0); j < n; j++ {
				x := raw[b*n*n+i*n+j]
				if lower && j > i || !lower && j < i {
					x = conj(raw[b*n*n+j*n+i])
				}
				if i == j {
					x = complex(real(x), 0) // a Hermitian diagonal is real
				}
				a[i*n+j] = x
			}
		}
		k := normScaleC(a, rt) // into range, as LAPACK's syevd (the lowering's)
		var fro float64
		for _, x := range a {
			fro += real(x)*real(x) + imag(x)*imag(x)
		}
		tol := float64(n) * eps * math.Sqrt(fro)
		for sweep := 0; sweep < jacobiSweeps; sweep++ {
			var off float64
			for i := int64(0); i < n; i++ {
				for j := int64(0); j < n; j++ {
					if x := a[i*n+j]; i != j {
						off += real(x)*real(x) + imag(x)*imag(x)
					}
				}
			}
			if math.Sqrt(off) <= tol {
				break
			}
			for p := int64(0); p < n-1; p++ {
				for q := p + 1; q < n; q++ {
					app, aqq, apq := real(a[p*n+p]), real(a[q*n+q]), a[p*n+q]
					mag := cmplx.Abs(apq)
					if mag <= eps*math.Sqrt(math.Abs(app))*math.Sqrt(math.Abs(aqq)) {
						a[p*n+q], a[q*n+p] = 0, 0 // below rounding: rotating adds only noise
						continue
					}
					// J = diag(1, conj(w)) R, w = apq / |apq|: the real
					// rotation R of [[app, |apq|], [|apq|, aqq]] after the
					// phase that makes apq real.
					w := apq / complex(mag, 0)
					c, s, t := jacobiRotation(app, aqq, mag)
					cc, sc := complex(c, 0), complex(s, 0)
					for k := int64(0); k < n; k++ { // columns: a J, v J
						ap, aq := a[k*n+p], a[k*n+q]
						a[k*n+p], a[k*n+q] = cc*ap-sc*conj(w)*aq, sc*ap+cc*conj(w)*aq
						vp, vq := v[k*n+p], v[k*n+q]
						v[k*n+p], v[k*n+q] = cc*vp-sc*conj(w)*vq, sc*vp+cc*conj(w)*vq
					}
					for k := int64(0); k < n; k++ { // rows: J^H a
						ap, aq := a[p*n+k], a[q*n+k]
						a[p*n+k], a[q*n+k] = cc*ap-sc*w*aq, sc*ap+cc*w*aq
					}
					// The 2 x 2 block as Rutishauser writes it: exact zeros
					// off the diagonal, a_pp - t |a_pq| and a_qq + t |a_pq| on
					// it (the two-sided products lose bits to cancellation).
					a[p*n+q], a[q*n+p] = 0, 0
					a[p*n+p], a[q*n+q] = complex(app-t*mag, 0), complex(aqq+t*mag, 0)
				}
			}
		}
		order := make([]int64, n)
		for i := range order {
			order[i] = int64(i)
		}
		sort.SliceStable(order, func(x, y int) bool { return real(a[order[x]*n+order[x]]) < real(a[order[y]*n+order[y]]) })
		for j, o := range order {
			ws[b*n+int64(j)] = complex(math.Ldexp(real(a[o*n+o]), -k), 0)
			ph := leadPhase(v, n, o, tieTolerance(2*eps, int(n)))
			for i := int64(0); i < n; i++ {
				vs[b*n*n+i*n+int64(j)] = v[i*n+o] * ph
			}
		}
	}
	bd := slices.Clone(l.Shape.Dims[:l.Shape.Rank()-1])
	return literal(l.Shape.Elem, l.Shape.Dims, vs), literal(rt, bd, ws)
}

// jacobiRotation is the rotation (c, s) that zeroes a_pq of the
// symmetric 2 x 2 [[app, apq], [apq, aqq]], and its tangent t: (1, 0, 0)
// when apq is zero.
func jacobiRotation(app, aqq, apq float64) (c, s, t float64) {
	if apq == 0 {
		return 1, 0, 0
	}
	tau := (aqq - app) / (2 * apq)
	t = 1 / (math.Abs(tau) + math.Hypot(1, tau))
	if tau < 0 {
		t = -t
	}
	c = 1 / math.Hypot(1, t)
	return c, t * c, t
}

// gesdd is the singular value decomposition by one-sided Jacobi
// (Hestenes), as the lowering computes it (lower/lapack.go): on x = a,
// or a^H when a is wide (m < n), of M >= N; sweeps of one rotation per
// pair of columns p < q, the rotation of the pair's Gram matrix [[alpha,
// gamma], [conj(gamma), beta]] that makes them orthogonal (as syevd's on
// a_pq = gamma: J = diag(1, conj(w)) R, w = gamma / |gamma|), applied to
// the columns of x and of v (from the identity), skipped where |gamma|
// <= eps sqrt(alpha beta), until a sweep's check finds every pair
// below that, at most jacobiSweeps; v's columns then normalized and x
// made again as a v; the singular values are the columns' norms, descending (ties in index order), with the columns of
// x and v in that order, each pair turned so that v's column's first
// largest element is real and positive; x's columns normalized, and
// where a singular value is zero, or for u's columns past N (mode 'A'),
// the columns of Q from the QR (geqr2, org2r) of the normalized columns,
// which completes them to an orthonormal basis. Then u = x's, vt = v^H
// (for a wide a, u = v and vt = x's^H).
func gesdd(l *hlo.Literal, mode byte, sSh, uSh, vtSh hlo.Shape) (*hlo.Literal, *hlo.Literal, *hlo.Literal) {
	batch, m, n, all := matrices(l)
	M, N := max(m, n), min(m, n)
	wide := m < n
	eps := epsilon(sSh.Elem)
	var us, ss, vts []complex128
	for b := int64(0); b < batch; b++ {
		a := all[b*m*n : (b+1)*m*n]
		x := make([]complex128, M*N)
		for i := int64(0); i < M; i++ {
			for j := int64(0); j < N; j++ {
				if wide {
					x[i*N+j] = conj(a[j*n+i])
				} else {
					x[i*N+j] = a[i*N+j]
				}
			}
		}
		k := normScaleC(x, sSh.Elem) // into range, as LAPACK's gesdd (the lowering's)
		v := make([]complex128, N*N)
		for i := int64(0); i < N; i++ {
			v[i*N+i] = 1
		}
		gram := func(p, q int64) (alpha, beta float64, gamma complex128) {
			for i := int64(0); i < M; i++ {
				xp, xq := x[i*N+p], x[i*N+q]
				alpha += real(xp)*real(xp) + imag(xp)*imag(xp)
				beta += real(xq)*real(xq) + imag(xq)*imag(xq)
				gamma += conj(xp) * xq
			}
			return alpha, beta, gamma
		}
		for sweep := 0; sweep < jacobiSweeps; sweep++ {
			open := false
			for p := int64(0); p < N-1 && !open; p++ {
				for q := p + 1; q < N; q++ {
					alpha, beta, gamma := gram(p, q)
					if cmplx.Abs(gamma) > eps*math.Sqrt(alpha)*math.Sqrt(beta) {
						open = true
						break
					}
				}
			}
			if !open {
				break
			}
			for p := int64(0); p < N-1; p++ {
				for q := p + 1; q < N; q++ {
					alpha, beta, gamma := gram(p, q)
					mag := cmplx.Abs(gamma)
					if mag == 0 || mag <= eps*math.Sqrt(alpha)*math.Sqrt(beta) {
						continue
					}
					w := gamma / complex(mag, 0)
					c, s, _ := jacobiRotation(alpha, beta, mag)
					cc, sc := complex(c, 0), complex(s, 0)
					for i := int64(0); i < M; i++ {
						xp, xq := x[i*N+p], x[i*N+q]
						x[i*N+p], x[i*N+q] = cc*xp-sc*conj(w)*xq, sc*xp+cc*conj(w)*xq
					}
					for i := int64(0); i < N; i++ {
						vp, vq := v[i*N+p], v[i*N+q]
						v[i*N+p], v[i*N+q] = cc*vp-sc*conj(w)*vq, sc*vp+cc*conj(w)*vq
					}
				}
			}
		}
		// v's columns normalized (the rotations' product drifts from unit
		// norm by their rounding, and every singular value with it), and
		// x made again as x0 v.
		for j := int64(0); j < N; j++ {
			var s2 float64
			for i := int64(0); i < N; i++ {
				s2 += real(v[i*N+j])*real(v[i*N+j]) + imag(v[i*N+j])*imag(v[i*N+j])
			}
			for i := int64(0); i < N; i++ {
				v[i*N+j] /= complex(math.Sqrt(s2), 0)
			}
		}
		for i := int64(0); i < M; i++ {
			for j := int64(0); j < N; j++ {
				var acc complex128
				for l := int64(0); l < N; l++ {
					var x0 complex128
					if wide {
						x0 = conj(a[l*n+i])
					} else {
						x0 = a[i*N+l]
					}
					x0 = complex(math.Ldexp(real(x0), k), math.Ldexp(imag(x0), k)) // scaled, as x was
					acc += x0 * v[l*N+j]
				}
				x[i*N+j] = acc
			}
		}
		sig := make([]float64, N)
		for j := int64(0); j < N; j++ {
			var s2 float64
			for i := int64(0); i < M; i++ {
				s2 += real(x[i*N+j])*real(x[i*N+j]) + imag(x[i*N+j])*imag(x[i*N+j])
			}
			sig[j] = math.Sqrt(s2)
		}
		order := make([]int64, N)
		for i := range order {
			order[i] = int64(i)
		}
		sort.SliceStable(order, func(p, q int) bool { return sig[order[p]] > sig[order[q]] })
		xs, vs := make([]complex128, M*N), make([]complex128, N*N)
		for j, o := range order {
			ph := leadPhase(v, N, o, tieTolerance(2*eps, int(N)))
			for i := int64(0); i < N; i++ {
				vs[i*N+int64(j)] = v[i*N+o] * ph
			}
			for i := int64(0); i < M; i++ {
				if sig[o] != 0 {
					xs[i*N+int64(j)] = x[i*N+o] * ph / complex(sig[o], 0)
				}
			}
			ss = append(ss, complex(math.Ldexp(sig[o], -k), 0))
		}
		// Complete x's columns: zero singular values' and, for mode 'A',
		// those past N.
		cols := N
		if mode == 'A' {
			cols = M
		}
		qm := make([]complex128, M*cols)
		for i := int64(0); i < M; i++ {
			copy(qm[i*cols:i*cols+N], xs[i*N:(i+1)*N])
		}
		taus := geqr2(qm, M, cols)
		org2r(qm, taus, M, cols)
		uc := make([]complex128, M*cols)
		for i := int64(0); i < M; i++ {
			for j := int64(0); j < cols; j++ {
				if j < N && ss[b*N+j] != 0 {
					uc[i*cols+j] = xs[i*N+j]
				} else {
					uc[i*cols+j] = qm[i*cols+j]
				}
			}
		}
		// u and vt: x's (completed) and v^H, or for a wide a, v and
		// x's^H.
		if !wide {
			us = append(us, uc...)
			for i := int64(0); i < N; i++ {
				for j := int64(0); j < N; j++ {
					vts = append(vts, conj(vs[j*N+i]))
				}
			}
		} else {
			us = append(us, vs...)
			for i := int64(0); i < cols; i++ {
				for j := int64(0); j < M; j++ {
					vts = append(vts, conj(uc[j*cols+i]))
				}
			}
		}
	}
	if mode == 'N' {
		return zeros(uSh), literal(sSh.Elem, sSh.Dims, ss), zeros(vtSh)
	}
	return literal(uSh.Elem, uSh.Dims, us), literal(sSh.Elem, sSh.Dims, ss), literal(vtSh.Elem, vtSh.Dims, vts)
}

// leadPhase is the phase (sign) that makes column col of the square
// matrix v (n x n) have its first largest element (to rel: leadNear)
// real and positive, 1 for a zero column: LAPACK's is arbitrary, and
// this one does not hang on the rounding of which pairs a Jacobi sweep
// rotated. The lowering's is the same (lower/lapack.go).
func leadPhase(v []complex128, n, col int64, rel float64) complex128 {
	return phaseOf(v[leadNear(v, n, col, rel)*n+col])
}

// tieTolerance is how close to the largest magnitude an element of a
// vector counts as largest, for the element the canonical forms of
// geev, gees, syevd and gesdd make real and positive (leadNear): 8 n
// ulp of the program's type. A vector whose largest elements tie in exact arithmetic (a
// cyclic permutation's eigenvectors, all of magnitude n^-1/2) would
// otherwise have rounding pick which, differently on the device (in
// the type) and here (in float64); LAPACK's own choice is rounding's.
func tieTolerance(ulp float64, n int) float64 { return 8 * float64(n) * ulp }

// leadNear is the row of the first element of column col of the n x n
// v whose magnitude is within rel of the column's largest.
func leadNear(v []complex128, n, col int64, rel float64) int64 {
	top := 0.0
	for i := range n {
		top = max(top, cmplx.Abs(v[i*n+col]))
	}
	for i := range n {
		if cmplx.Abs(v[i*n+col]) >= top*(1-rel) {
			return i
		}
	}
	return 0
}

// phaseOf is the phase that turns x real and positive: conj(x) / |x|,
// 1 for a zero.
func phaseOf(x complex128) complex128 {
	if x != 0 {
		return conj(x) / complex(cmplx.Abs(x), 0)
	}
	return 1
}

// realType is the type of t's parts: t itself when real.
func realType(t hlo.ElementType) hlo.ElementType {
	if t.IsComplex() {
		return partType(t)
	}
	return t
}

// epsilon is the unit roundoff of the real type t (f32 or f64): the
// Jacobi methods' thresholds, as the lowering's (lower/lapack.go).
func epsilon(t hlo.ElementType) float64 {
	if t == hlo.F64 {
		return 0x1p-53
	}
	return 0x1p-24
}

// gtsv solves tridiagonal systems as LAPACK's gtsv: Gaussian elimination
// with partial pivoting (row i and i+1 swapped where |dl_i| > |d_i|, by
// |re| + |im| for complex types as cgtsv's CABS1), then back
// substitution with U's three diagonals. dl, d, du are [..., n] with
// dl[0] and du[n-1] unused (JAX's layout, whose kernel passes dl + 1);
// b is [..., n, nrhs]. A zero pivot stops the system there, as LAPACK
// returns: info is its row + 1, b and the diagonals as far as they got.
func gtsv(dlL, dL, duL, bL *hlo.Literal) (dlo, do, duo, x, infoL *hlo.Literal) {
	dl, d, du, b := complexes(dlL), complexes(dL), complexes(duL), complexes(bL)
	r := bL.Shape.Rank()
	n, nrhs := bL.Shape.Dims[r-2], bL.Shape.Dims[r-1]
	batch := int64(0)
	if n > 0 {
		batch = int64(len(d)) / n
	}
	info := make([]complex128, batch)
	abs1 := func(v complex128) float64 { return math.Abs(real(v)) + math.Abs(imag(v)) }
	for s := int64(0); s < batch; s++ {
		// LAPACK's 1-based DL(i), D(i), DU(i), B(i, j).
		DL := func(i int64) *complex128 { return &dl[s*n+i] } // dl[i] is DL(i): JAX's dl[0] is unused
		D := func(i int64) *complex128 { return &d[s*n+i-1] }
		DU := func(i int64) *complex128 { return &du[s*n+i-1] }
		B := func(i, j int64) *complex128 { return &b[(s*n+i-1)*nrhs+j] }
		solved := true
		for i := int64(1); i <= n-1 && solved; i++ {
			if abs1(*D(i)) >= abs1(*DL(i)) {
				if *D(i) == 0 {
					info[s], solved = complex(float64(i), 0), false
					break
				}
				fact := *DL(i) / *D(i)
				*D(i + 1) -= fact * *DU(i)
				for j := range nrhs {
					*B(i+1, j) -= fact * *B(i, j)
				}
				if i < n-1 {
					*DL(i) = 0
				}
				continue
			}
			fact := *D(i) / *DL(i)
			*D(i) = *DL(i)
			temp := *D(i + 1)
			*D(i + 1) = *DU(i) - fact*temp
			if i < n-1 {
				*DL(i) = *DU(i + 1)
				*DU(i + 1) = -fact * *DL(i)
			}
			*DU(i) = temp
			for j := range nrhs {
				t := *B(i, j)
				*B(i, j) = *B(i+1, j)
				*B(i+1, j) = t - fact**B(i+1, j)
			}
		}
		if solved && n > 0 && *D(n) == 0 {
			info[s], solved = complex(float64(n), 0), false
		}
		if !solved {
			continue
		}
		for j := range nrhs {
			*B(n, j) /= *D(n)
			if n > 1 {
				*B(n-1, j) = (*B(n-1, j) - *DU(n - 1)**B(n, j)) / *D(n - 1)
			}
			for i := n - 2; i >= 1; i-- {
				*B(i, j) = (*B(i, j) - *DU(i)**B(i+1, j) - *DL(i)**B(i+2, j)) / *D(i)
			}
		}
	}
	t := bL.Shape.Elem
	bd := slices.Clone(dL.Shape.Dims[:dL.Shape.Rank()-1])
	return literal(t, dlL.Shape.Dims, dl), literal(t, dL.Shape.Dims, d), literal(t, duL.Shape.Dims, du),
		literal(t, bL.Shape.Dims, b), literal(hlo.S32, bd, info)
}
