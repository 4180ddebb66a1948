package hlo

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// CustomCall is what a custom-call computes, for the targets vkjit runs
// (KnownCustomCall): XLA's sharding annotations, which on one device pass
// their operand on, XLA's TopK, and the LAPACK calls JAX's CPU lowering makes for
// jnp.linalg (lapack_<t><op>_ffi, t one of s d c z, the element type).
// The evaluator and the lowering both read this table.
type CustomCall struct {
	Kind CallKind
	// trsm and potrf, from backend_config: side 'L' or 'R', uplo 'L' or
	// 'U', trans_x 'N', 'T' or 'C', diag 'N' or 'U' (LAPACK's letters,
	// as their ASCII codes).
	LeftSide, Lower, UnitDiagonal bool
	Transpose                     string // NO_TRANSPOSE, TRANSPOSE or ADJOINT, as triangular-solve's transpose_a
	// Alpha: trsm's third operand, a scalar that scales b (older jaxlib).
	Alpha bool
	// Zeros: results after the first ones that hold zeros (older
	// jaxlib's geqrf and orgqr return info and a work buffer too, its
	// geev three work arrays).
	Zeros []int
	// Mode: gesdd's mode, 'A', 'S' or 'N'.
	Mode byte
	// Left, Right: geev computes the left (right) eigenvectors
	// (compute_left, compute_right 'V'; 'N' leaves them zero).
	Left, Right bool
	// Dim: ApproxTopK's reduction dimension.
	Dim int64
}

// CallKind names a known custom-call's computation.
type CallKind int

const (
	// CallIdentity: Sharding, SPMDFullToShardShape, SPMDShardToFullShape
	// of one device, Shardy's round-trip calls (xla.sdy.*: a manual
	// computation's shape changes, of one device, a result's sharding, a
	// propagation barrier), and the memory placements (JAX's
	// annotate_device_placement, XLA's MoveToHost and MoveToDevice, which
	// its host offloader deletes once it has placed the value): the
	// operand itself (the operands, as a tuple, where there are several).
	CallIdentity CallKind = iota + 1
	// CallTrsm: op(a) x = b (left side) or x op(a) = b, a triangular:
	// triangular-solve.
	CallTrsm
	// CallPotrf: (a with its uplo triangle replaced by the Cholesky
	// factor, info): info is 0, or k when the leading minor of order k is
	// not positive definite (the factor is then NaN from column k-1 on).
	CallPotrf
	// CallGeqrf: Householder QR of a [..., m, n], as LAPACK's geqrf: (r in
	// the upper triangle and the reflectors' vectors below it, tau
	// [..., min(m, n)]).
	CallGeqrf
	// CallGeqp3: QR with column pivoting, a P = Q R, of a [..., m, n]
	// and jpvt [..., n] s32, LAPACK's geqp3 as jaxlib's FFI kernel
	// returns it: (r and the reflectors as geqrf stores them, jpvt with
	// column j of a P being column jpvt[j]-1 of a, tau [..., min(m,
	// n)]). Columns whose jpvt is not 0 on entry are moved to the front
	// and factored first, without pivoting; the rest are pivoted by
	// their remaining norms.
	CallGeqp3
	// CallOrgqr: the first n columns of Q = H(0) H(1) ... H(k-1) from
	// geqrf's (a [..., m, n], tau [..., k]): LAPACK's orgqr (ungqr for
	// complex types).
	CallOrgqr
	// CallGetrf: LU with partial pivoting of a [..., m, n], as LAPACK's
	// getrf: (l below the diagonal, unit diagonal implied, and u; ipiv
	// [..., min(m, n)], row i swapped with row ipiv[i]-1; info, the first
	// zero pivot's column + 1, or 0).
	CallGetrf
	// CallTopK: XLA's TopK custom-call (TopkRewriter's): the first k of
	// each row of a [..., n] by its comparator over (value, index)
	// pairs, stably, and their indices: (values [..., k], s32 indices).
	CallTopK
	// CallSyevd: the eigenvalues of a symmetric (heevd: Hermitian)
	// matrix [..., n, n] (its uplo triangle read), ascending, and their
	// eigenvectors, LAPACK's syevd and heevd: (vectors as columns, real
	// eigenvalues [..., n], info).
	CallSyevd
	// CallGesdd: the singular value decomposition a = u diag(s) vt of a
	// [..., m, n], LAPACK's gesdd (and gesvd, which JAX calls for
	// SvdAlgorithm.QR with the same operands, attributes and results; an
	// algorithm, not another decomposition): (a's shape, overwritten; s
	// [..., k] real, descending; u; vt; info), u and vt [m, m] and [n, n]
	// (mode 'A'), [m, k] and [k, n] (mode 'S'), or not computed (mode 'N').
	CallGesdd
	// CallGeev: the eigenvalues of a real square matrix [..., n, n] and
	// its left and right eigenvectors, LAPACK's sgeev and dgeev as
	// jaxlib's FFI kernel returns them: (wr, wi [..., n], vl, vr [..., n,
	// n] complex, info), a complex pair's eigenvalues adjacent, the
	// positive imaginary part first, each eigenvector of Euclidean norm 1
	// with its largest element real; info is 0, or i + 1 when row i's
	// eigenvalue did not converge (no vectors then). vkjit sorts the
	// eigenvalues, whose order LAPACK leaves unspecified (hlo/eval's
	// eigenOrder). The complex cgeev and zgeev return (w [..., n]
	// complex, vl, vr, info), in that order but for parts within 8 n ulp
	// of the largest magnitude, which count as equal (eigenOrderNear).
	CallGeev
	// CallGees: the real Schur form a = Z T Z^T of a real square matrix
	// [..., n, n], LAPACK's sgees and dgees (no sorting) as jaxlib's FFI
	// kernel returns them: (T, Z (zero unless mode is 'V'), wr, wi [...,
	// n] in T's diagonal order, sdim (0), info), T quasi-triangular with
	// standardized 2 x 2 blocks. The complex cgees and zgees return (T
	// upper triangular, Z, w [..., n] complex, sdim, info), a = Z T Z^H.
	CallGees
	// CallGehrd: the Hessenberg form h = Q^T a Q of a real square matrix
	// [..., n, n], LAPACK's sgehrd and dgehrd with low 1 and high n: (h
	// above its subdiagonal and on it, each reflector's vector below it
	// (its first element 1 implied), tau [..., n-1], info); cgehrd and
	// zgehrd likewise, h = Q^H a Q.
	CallGehrd
	// CallGtsv: the solution x of a x = b for a tridiagonal a [..., n,
	// n] given by its diagonals dl, d, du [..., n] (dl[0] and du[n-1]
	// unused, as JAX passes them) and b [..., n, nrhs], LAPACK's gtsv
	// (Gaussian elimination with partial pivoting) as jaxlib's FFI kernel
	// returns it: (dl, d, du overwritten with U's second superdiagonal,
	// diagonal and first superdiagonal, x in b's shape, info), info the
	// first zero pivot's row + 1 (x then partly computed), or 0.
	CallGtsv
	// CallSytrd: the tridiagonal form t = Q^T a Q of a symmetric matrix
	// [..., n, n] (hetrd: Q^H a Q of a Hermitian one), its uplo triangle
	// read (Lower), LAPACK's sytrd and hetrd as jaxlib's FFI kernel
	// returns them: (a with t's diagonal and off-diagonal in place of
	// its uplo triangle's first two diagonals and each reflector's
	// vector beyond them, the other triangle as it was; d [..., n] and e
	// [..., n-1], t's diagonal and off-diagonal, real; tau [..., n-1];
	// info, 0). Lower: Q = H(0) ... H(n-2), H(i)'s vector 1 at row i+1
	// and stored below it in column i; upper: Q = H(n-2) ... H(0), 1 at
	// row i and stored above it in column i+1.
	CallSytrd
	// CallApproxTopK: XLA's ApproxTopK custom-call, as JAX's lowering of
	// jax.lax.approx_max_k and approx_min_k writes it: operands x_1 ...
	// x_n of one shape (JAX: the values and an iota of their indices),
	// then n scalar initial values, a comparator of 2n scalars, and
	// mhlo.backend_config's reduction_dim, top_k, recall_target,
	// aggregate_to_topk and reduction_input_size_override. Off TPUs
	// (is_fallback) XLA computes it exactly, as ApproxTopKFallback: the
	// operands sorted along Dim by the comparator, each cut to the first
	// ApproxTopKOutputSize; vkjit does so everywhere, an exact top k
	// meeting any recall target. Its results are the n cut arrays.
	CallApproxTopK
	// CallCsrMatmul: jaxlib's cpu_csr_sparse_dense_ffi, which JAX's CPU
	// lowering calls for a 2-D BCSR matrix times a dense one
	// (jax.experimental.sparse's bcsr_dot_general, BCSR @ x): operands
	// data [nnz], indptr [rows+1] and indices [nnz] (s32 or s64, of one
	// type) of an m x k CSR matrix, and b [k] or [k, n]; the result [m]
	// or [m, n], each row of the product summed in the order of its
	// nonzeros from zero, as Eigen's sparse-dense product sums it. A
	// column index past b reads b's last row (as gather clamps), and
	// nonzeros outside indptr[0] .. indptr[m] count for no row.
	CallCsrMatmul
	// CallGtsvPerturbed: jaxlib's tridiagonal_solve_perturbed_ffi, which
	// JAX's CPU lowering calls for jax.lax.linalg.tridiagonal_solve with
	// perturb_singular (jax.scipy.linalg.eigh_tridiagonal's inverse
	// iteration for eigenvectors): the solution x [..., n, nrhs] of a
	// tridiagonal system (dl, d, du [..., n], b [..., n, nrhs]) by
	// Gaussian elimination with partial pivoting as LAPACK's lagtf and
	// lagts do it, each pivot of U below 1 in magnitude nudged by eps
	// times U's largest element (doubling until the row's quotient
	// cannot overflow) or scaled up, so that a singular system gives a
	// large finite x instead of infinities.
	CallGtsvPerturbed
	// CallOrmqr: c multiplied by Q = H(0) ... H(k-1), geqrf's reflectors
	// (a [..., m, k'], tau [..., k]), LAPACK's ormqr (unmqr for complex
	// types) as jax.lax.linalg.ormqr calls it: Q c or Q^H c (LeftSide, c
	// [..., m, n]), c Q or c Q^H (c [..., n, m]), Transpose ADJOINT for
	// the adjoint (the transpose for real types).
	CallOrmqr
)

var (
	lapackTarget = regexp.MustCompile(`^lapack_([sdcz])(trsm|potrf|geqrf|orgqr|ungqr|getrf|syevd|heevd|gesdd|gesvd|ormqr|unmqr|geev|gees|gehrd|gtsv|sytrd|hetrd|geqp3)_ffi$`)
	configField  = regexp.MustCompile(`(\w+)\s*=\s*([^,:}\s]+)`)
	lapackTypes  = map[string]ElementType{"s": F32, "d": F64, "c": C64, "z": C128}
)

// KnownCustomCall returns what custom-call in computes, nil for a target
// vkjit does not know, and an error for a known target whose operands,
// result or configuration are not what it defines.
func KnownCustomCall(in *Instruction) (*CustomCall, error) {
	if in.Op != OpCustomCall {
		return nil, nil
	}
	switch in.A.Target {
	case "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement", "MoveToHost", "MoveToDevice",
		"xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape", "xla.sdy.FuncResultSharding", "xla.sdy.PropagationBarrier":
		ok := len(in.Operands) == 1 && in.Shape.IsArray() && in.Shape.Equal(in.Operands[0].Shape)
		if len(in.Operands) > 1 && in.Shape.IsTuple() && len(in.Shape.Tuple) == len(in.Operands) {
			ok = true
			for i, o := range in.Operands {
				ok = ok && o.Shape.IsArray() && o.Shape.Equal(in.Shape.Tuple[i])
			}
		}
		if !ok {
			return nil, fmt.Errorf("custom-call %s of one device takes arrays and returns them, of their shapes", in.A.Target)
		}
		return &CustomCall{Kind: CallIdentity}, nil
	}
	if in.A.Target == "ApproxTopK" {
		return approxTopK(in)
	}
	if in.A.Target == "cpu_csr_sparse_dense_ffi" {
		return csrMatmul(in)
	}
	if in.A.Target == "tridiagonal_solve_perturbed_ffi" {
		return gtsvPerturbed(in)
	}
	if in.A.Target == "TopK" {
		ok := len(in.Operands) == 1 && in.Operands[0].Shape.IsArray() && in.Operands[0].Shape.Rank() >= 1 && len(in.Called) == 1 &&
			len(in.Called[0].Params) == 4 && in.Shape.IsTuple() && len(in.Shape.Tuple) == 2
		if ok {
			x, v, i := in.Operands[0].Shape, in.Shape.Tuple[0], in.Shape.Tuple[1]
			r := x.Rank()
			ok = v.Elem == x.Elem && i.Elem == S32 && v.Rank() == r && v.SameDims(i) && slices.Equal(v.Dims[:r-1], x.Dims[:r-1]) && v.Dims[r-1] <= x.Dims[r-1]
		}
		if !ok {
			return nil, fmt.Errorf("custom-call TopK takes an array and a comparator of (value, value, index, index), and returns (its first k values along the last dimension, their s32 indices)")
		}
		return &CustomCall{Kind: CallTopK}, nil
	}
	m := lapackTarget.FindStringSubmatch(in.A.Target)
	if m == nil {
		return nil, nil
	}
	t := lapackTypes[m[1]]
	rt, _ := t.ComplexPart()  // the real type of t's parts (eigenvalues, singular values)
	cfg := map[string]int64{} // LAPACK's letters as their codes, booleans as 1 and 0
	for name, v := range configFields(in) {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			cfg[name] = i
		} else if v == "true" || v == "false" {
			cfg[name] = map[string]int64{"true": 1}[v]
		}
	}
	bad := func(want string) error {
		return fmt.Errorf("custom-call %s takes %s", in.A.Target, want)
	}
	for i, o := range in.Operands {
		if m[2] == "geqp3" && i == 1 {
			continue // jpvt, s32
		}
		if !o.Shape.IsArray() || o.Shape.Elem != t {
			return nil, bad(fmt.Sprintf("%s arrays", t))
		}
	}
	matrix := func(o *Instruction) bool { return o.Shape.Rank() >= 2 && o.Shape.Elem == t }
	square := func(o *Instruction) bool { d := o.Shape.Dims; return matrix(o) && d[len(d)-1] == d[len(d)-2] }
	batch := func(o *Instruction) []int64 { return slices.Clone(o.Shape.Dims[:o.Shape.Rank()-2]) }
	c := &CustomCall{}
	switch m[2] {
	case "trsm":
		c.Kind = CallTrsm
		ops := in.Operands
		c.Alpha = len(ops) == 3 && ops[2].Shape.Rank() == 0
		if len(ops) != 2 && !c.Alpha || !matrix(ops[0]) || !matrix(ops[1]) || !in.Shape.Equal(ops[1].Shape) {
			return nil, bad("a triangular matrix, a right-hand side (and a scalar alpha), and returns x of the right-hand side's shape")
		}
		c.LeftSide = cfg["side"] != 'R'
		c.Lower = cfg["uplo"] == 'L'
		c.UnitDiagonal = cfg["diag"] == 'U'
		c.Transpose = map[int64]string{'T': "TRANSPOSE", 'C': "ADJOINT"}[cfg["trans_x"]]
		if c.Transpose == "" {
			c.Transpose = "NO_TRANSPOSE"
		}
		a, b := in.Operands[0].Shape.Dims, in.Operands[1].Shape.Dims
		r := len(a)
		side := b[r-2]
		if !c.LeftSide {
			side = b[r-1]
		}
		if len(b) != r || a[r-1] != a[r-2] || side != a[r-1] {
			return nil, bad("a square a whose order is b's along the side it multiplies")
		}
	case "potrf":
		c.Kind, c.Lower = CallPotrf, cfg["uplo"] == 'L'
		a := in.Operands
		if len(a) != 1 || !square(a[0]) ||
			!in.Shape.Equal(TupleShape(a[0].Shape, ArrayShape(S32, batch(a[0])...))) {
			return nil, bad("a square matrix and returns (the factor in its shape, s32 info per matrix)")
		}
	case "geqrf":
		c.Kind = CallGeqrf
		a := in.Operands
		if len(a) != 1 || !matrix(a[0]) {
			return nil, bad("one matrix")
		}
		d := a[0].Shape.Dims
		k := min(d[len(d)-1], d[len(d)-2])
		tau := ArrayShape(t, append(batch(a[0]), k)...)
		var ok bool
		if c.Zeros, ok = trailing(in.Shape, 2, ArrayShape(S32, batch(a[0])...)); !ok || !in.Shape.IsTuple() || len(in.Shape.Tuple) < 2 ||
			!in.Shape.Tuple[0].Equal(a[0].Shape) || !in.Shape.Tuple[1].Equal(tau) {
			return nil, bad("a matrix and returns (its shape, tau of min(m, n) per matrix)")
		}
	case "geqp3":
		c.Kind = CallGeqp3
		a := in.Operands
		ok := len(a) == 2 && matrix(a[0])
		if ok {
			d := a[0].Shape.Dims
			bd := batch(a[0])
			jp := ArrayShape(S32, append(slices.Clone(bd), d[len(d)-1])...)
			tau := ArrayShape(t, append(slices.Clone(bd), min(d[len(d)-1], d[len(d)-2]))...)
			ok = a[1].Shape.Equal(jp) && in.Shape.Equal(TupleShape(a[0].Shape, jp, tau))
		}
		if !ok {
			return nil, bad("a matrix [..., m, n] and s32 jpvt [..., n], and returns (the matrix's shape, jpvt, tau of min(m, n) per matrix)")
		}
	case "orgqr", "ungqr":
		c.Kind = CallOrgqr
		a := in.Operands
		q := in.Shape
		if q.IsTuple() && len(q.Tuple) > 0 {
			var ok bool
			if c.Zeros, ok = trailing(q, 1, ArrayShape(S32, batch(a[0])...)); !ok {
				return nil, bad("geqrf's matrix and tau, and returns Q of the matrix's shape")
			}
			q = q.Tuple[0]
		}
		if len(a) != 2 || !matrix(a[0]) || a[1].Shape.Elem != t || !q.Equal(a[0].Shape) {
			return nil, bad("geqrf's matrix and tau, and returns Q of the matrix's shape")
		}
		d, td := a[0].Shape.Dims, a[1].Shape.Dims
		r := len(d)
		if len(td) != r-1 || td[r-2] > d[r-1] || d[r-1] > d[r-2] || !slices.Equal(td[:r-2], d[:r-2]) {
			return nil, bad("an m x n matrix, n <= m, and at most n taus per matrix")
		}
	case "syevd", "heevd":
		c.Kind, c.Lower = CallSyevd, cfg["uplo"] == 'L'
		if (rt != t) != (m[2] == "heevd") {
			return nil, nil // LAPACK has no real heevd nor complex syevd
		}
		a := in.Operands
		if len(a) != 1 || !square(a[0]) {
			return nil, bad("one square matrix")
		}
		d := a[0].Shape.Dims
		if !in.Shape.Equal(TupleShape(a[0].Shape, ArrayShape(rt, append(batch(a[0]), d[len(d)-1])...), ArrayShape(S32, batch(a[0])...))) {
			return nil, bad("a symmetric (Hermitian) matrix and returns (eigenvectors in its shape, real eigenvalues, s32 info per matrix)")
		}
	case "ormqr", "unmqr":
		c.Kind, c.LeftSide = CallOrmqr, cfg["left"] != 0
		if (rt != t) != (m[2] == "unmqr") {
			return nil, nil // LAPACK has no real unmqr nor complex ormqr
		}
		c.Transpose = "NO_TRANSPOSE"
		if cfg["transpose"] != 0 {
			c.Transpose = "ADJOINT" // Q^T, Q^H for complex types
		}
		o := in.Operands
		ok := len(o) == 3 && matrix(o[0]) && matrix(o[2]) && in.Shape.Equal(o[2].Shape)
		if ok {
			a, tau, cm := o[0].Shape.Dims, o[1].Shape.Dims, o[2].Shape.Dims
			r := len(a)
			order := cm[r-2] // Q multiplies c's rows (left) or columns
			if !c.LeftSide {
				order = cm[r-1]
			}
			ok = len(cm) == r && len(tau) == r-1 && slices.Equal(a[:r-2], cm[:r-2]) && slices.Equal(tau[:r-2], a[:r-2]) &&
				a[r-2] == order && tau[r-2] <= min(a[r-2], a[r-1])
		}
		if !ok {
			return nil, bad("geqrf's reflectors a [..., m, k'], tau [..., k] and c, which Q (of order m) multiplies from the left (c [..., m, n]) or the right (c [..., n, m]), and returns c's shape")
		}
	case "gesdd", "gesvd": // jax.lax.linalg.svd's DEFAULT and QR algorithms: one decomposition
		c.Kind, c.Mode = CallGesdd, byte(cfg["mode"])
		a := in.Operands
		if len(a) != 1 || !matrix(a[0]) {
			return nil, bad("one matrix")
		}
		d := a[0].Shape.Dims
		m, n := d[len(d)-2], d[len(d)-1]
		k := min(m, n)
		bd := batch(a[0])
		mat := func(r, c int64) Shape { return ArrayShape(t, append(slices.Clone(bd), r, c)...) }
		var u, vt Shape
		switch c.Mode {
		case 'A':
			u, vt = mat(m, m), mat(n, n)
		case 'S':
			u, vt = mat(m, k), mat(k, n)
		case 'N':
		default:
			return nil, bad("mode 'A', 'S' or 'N'")
		}
		res := in.Shape
		var ok bool
		if c.Zeros, ok = trailing(res, 4, ArrayShape(S32, bd...)); !ok || !res.IsTuple() || len(res.Tuple) < 5 ||
			!res.Tuple[0].Equal(a[0].Shape) || !res.Tuple[1].Equal(ArrayShape(rt, append(slices.Clone(bd), k)...)) ||
			c.Mode != 'N' && (!res.Tuple[2].Equal(u) || !res.Tuple[3].Equal(vt)) || !res.Tuple[2].IsArray() || !res.Tuple[3].IsArray() {
			return nil, bad("a matrix and returns (its shape, s, u, vt, s32 info per matrix) with u and vt as mode says")
		}
	case "geev":
		c.Kind, c.Left, c.Right = CallGeev, cfg["compute_left"] != 'N', cfg["compute_right"] != 'N'
		a := in.Operands
		if len(a) != 1 || !square(a[0]) {
			return nil, bad("one square matrix")
		}
		d := a[0].Shape.Dims
		bd := batch(a[0])
		ct, _ := t.ComplexOf()
		if rt != t {
			ct = t
		}
		w := ArrayShape(rt, append(slices.Clone(bd), d[len(d)-1])...)
		vecs := ArrayShape(ct, d...)
		want := []Shape{w, w, vecs, vecs, ArrayShape(S32, bd...)}
		if rt != t { // cgeev, zgeev: one complex w
			want = []Shape{ArrayShape(t, w.Dims...), vecs, vecs, ArrayShape(S32, bd...)}
		}
		res := in.Shape
		ok := res.IsTuple() && len(res.Tuple) >= len(want)
		for i := 0; ok && i < len(res.Tuple); i++ {
			if i < len(want) {
				ok = res.Tuple[i].Equal(want[i])
			} else if ok = res.Tuple[i].IsArray(); ok { // older jaxlib's work arrays
				c.Zeros = append(c.Zeros, i)
			}
		}
		if !ok && rt != t {
			return nil, bad("a square matrix and returns (w, vl, vr, s32 info per matrix)")
		}
		if !ok {
			return nil, bad("a square matrix and returns (wr, wi, vl and vr as complex, s32 info per matrix)")
		}
	case "gees":
		c.Kind, c.Right = CallGees, cfg["mode"] == 'V'
		if cfg["sort"] != 'N' && cfg["sort"] != 0 {
			return nil, nil // sorted Schur forms: named as unsupported
		}
		a := in.Operands
		if len(a) != 1 || !square(a[0]) {
			return nil, bad("one square matrix")
		}
		d := a[0].Shape.Dims
		bd := batch(a[0])
		w := ArrayShape(rt, append(slices.Clone(bd), d[len(d)-1])...)
		info := ArrayShape(S32, bd...)
		if rt != t { // cgees, zgees: one complex w
			if !in.Shape.Equal(TupleShape(a[0].Shape, a[0].Shape, ArrayShape(t, w.Dims...), info, info)) {
				return nil, bad("a square matrix and returns (T, Z in its shape, w, s32 sdim and info per matrix)")
			}
			break
		}
		if !in.Shape.Equal(TupleShape(a[0].Shape, a[0].Shape, w, w, info, info)) {
			return nil, bad("a square matrix and returns (T, Z in its shape, wr, wi, s32 sdim and info per matrix)")
		}
	case "gehrd":
		c.Kind = CallGehrd
		a := in.Operands
		if len(a) != 1 || !square(a[0]) {
			return nil, bad("one square matrix")
		}
		d := a[0].Shape.Dims
		n := d[len(d)-1]
		if lo, hi := cfg["low"], cfg["high"]; lo != 1 && lo != 0 || hi != n && hi != 0 {
			return nil, bad(fmt.Sprintf("low = 1 and high = %d (the whole matrix), not low = %d, high = %d", n, lo, hi))
		}
		bd := batch(a[0])
		if !in.Shape.Equal(TupleShape(a[0].Shape, ArrayShape(t, append(slices.Clone(bd), max(n-1, 0))...), ArrayShape(S32, bd...))) {
			return nil, bad("a square matrix and returns (its shape, tau of n-1 per matrix, s32 info per matrix)")
		}
	case "gtsv":
		c.Kind = CallGtsv
		o := in.Operands
		ok := len(o) == 4 && o[0].Shape.Rank() >= 1 && o[0].Shape.Equal(o[1].Shape) && o[0].Shape.Equal(o[2].Shape) && matrix(o[3])
		if ok {
			d, b := o[0].Shape.Dims, o[3].Shape.Dims
			bd := d[:len(d)-1]
			ok = slices.Equal(b[:len(b)-1], d) &&
				in.Shape.Equal(TupleShape(o[0].Shape, o[1].Shape, o[2].Shape, o[3].Shape, ArrayShape(S32, bd...)))
		}
		if !ok {
			return nil, bad("dl, d, du [..., n] and b [..., n, nrhs] and returns (dl, d, du, x in b's shape, s32 info per system)")
		}
	case "sytrd", "hetrd":
		c.Kind, c.Lower = CallSytrd, cfg["uplo"] == 'L'
		if (rt != t) != (m[2] == "hetrd") {
			return nil, nil // LAPACK has no real hetrd nor complex sytrd
		}
		if u := cfg["uplo"]; u != 'L' && u != 'U' {
			return nil, bad(fmt.Sprintf("uplo = 76 ('L') or 85 ('U'), not %d", u))
		}
		a := in.Operands
		if len(a) != 1 || !square(a[0]) {
			return nil, bad("one square matrix")
		}
		d := a[0].Shape.Dims
		n := d[len(d)-1]
		bd := batch(a[0])
		v := func(t ElementType, k int64) Shape { return ArrayShape(t, append(slices.Clone(bd), k)...) }
		if !in.Shape.Equal(TupleShape(a[0].Shape, v(rt, n), v(rt, max(n-1, 0)), v(t, max(n-1, 0)), ArrayShape(S32, bd...))) {
			return nil, bad("a square matrix and returns (its shape, real d of n and e of n-1, tau of n-1 per matrix, s32 info per matrix)")
		}
	case "getrf":
		c.Kind = CallGetrf
		a := in.Operands
		if len(a) != 1 || !matrix(a[0]) {
			return nil, bad("one matrix")
		}
		d := a[0].Shape.Dims
		k := min(d[len(d)-1], d[len(d)-2])
		if !in.Shape.Equal(TupleShape(a[0].Shape, ArrayShape(S32, append(batch(a[0]), k)...), ArrayShape(S32, batch(a[0])...))) {
			return nil, bad("a matrix and returns (its shape, s32 ipiv of min(m, n) per matrix, s32 info per matrix)")
		}
	}
	return c, nil
}

// trailing lists the results of tuple s from index from on, where
// older jaxlib returns (info, work) after a call's results, which vkjit
// fills with zeros: none, or info (s32, one per matrix) and arrays after
// it; ok is false for anything else.
func trailing(s Shape, from int, info Shape) (zeros []int, ok bool) {
	if !s.IsTuple() || len(s.Tuple) <= from {
		return nil, true
	}
	if !s.Tuple[from].Equal(info) {
		return nil, false
	}
	for i := from; i < len(s.Tuple); i++ {
		if !s.Tuple[i].IsArray() {
			return nil, false
		}
		zeros = append(zeros, i)
	}
	return zeros, true
}

// configFields are the fields of a custom-call's backend_config
// dictionary as the StableHLO reader writes it ({name = value : type,
// ...}), each value's text, its ": type" dropped.
func configFields(in *Instruction) map[string]string {
	fields := map[string]string{}
	v, _ := in.AttrValue("backend_config")
	for _, f := range configField.FindAllStringSubmatch(v, -1) {
		fields[f[1]] = f[2]
	}
	return fields
}

// UnknownCustomCall says why a custom-call target that KnownCustomCall
// does not know cannot run, and what does: the targets of host
// callbacks and of GPU libraries, which no Vulkan program can call, by
// what writes them.
func UnknownCustomCall(target string) string {
	known := "vkjit runs JAX's LAPACK calls trsm, potrf, getrf, geqrf, geqp3, orgqr/ungqr, syevd/heevd, gesdd/gesvd, ormqr/unmqr, geev, gees, gehrd, gtsv and sytrd/hetrd, XLA's TopK and ApproxTopK, jaxlib's CSR sparse-dense product and perturbed tridiagonal solve, sharding annotations (GSPMD's and Shardy's) and memory placements"
	switch {
	case strings.Contains(target, "python") && strings.Contains(target, "callback"):
		return fmt.Sprintf("custom-call target %q is not supported: a host callback (jax.debug.print, jax.pure_callback, io_callback), Python on the host, which a program compiled whole for the device cannot call (%s)", target, known)
	case strings.HasPrefix(target, "__cublas$"), strings.HasPrefix(target, "__cudnn$"), strings.HasPrefix(target, "__triton"),
		strings.HasPrefix(target, "cu_"), strings.HasPrefix(target, "cusolver_"), strings.HasPrefix(target, "cusparse_"),
		strings.HasPrefix(target, "hip_"), strings.HasPrefix(target, "hipsolver_"), strings.HasPrefix(target, "hipsparse_"):
		return fmt.Sprintf("custom-call target %q is not supported: a GPU library's call, which XLA's GPU compiler (after its optimizations) or JAX's GPU lowering writes; give vkjit the module as jax.jit(f).lower(...) prints it for the CPU, or XLA's HLO from before optimization (%s)", target, known)
	}
	return fmt.Sprintf("custom-call target %q is not supported (%s)", target, known)
}
