// Package eval is vkjit's reference evaluator: a plain-Go interpreter of
// HLO that every device test compares with. It is written to be obviously
// right, not fast: floats are computed in float64 and rounded to the
// result type after each op, integers wrap at their width, and every edge
// case follows XLA's operation semantics.
package eval

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// Value is an array (Lit), a tuple of values, or a token (neither).
type Value struct {
	Lit   *hlo.Literal
	Tuple []*Value
}

// Leaves returns the arrays of v in depth-first order.
func (v *Value) Leaves() []*hlo.Literal {
	if v.Lit != nil {
		return []*hlo.Literal{v.Lit}
	}
	var out []*hlo.Literal
	for _, e := range v.Tuple {
		out = append(out, e.Leaves()...)
	}
	return out
}

// Unsupported is the error for ops and types the evaluator refuses (f8,
// fft, custom calls, host transfers): it names them.
type Unsupported struct{ What string }

func (e *Unsupported) Error() string { return "the reference evaluator does not run " + e.What }

// Run evaluates the module's entry computation. args are the array
// leaves of the entry parameters in order (a tuple-shaped parameter takes
// as many as it has leaves, depth-first).
func Run(m *hlo.Module, args ...*hlo.Literal) (*Value, error) {
	return RunLimited(m, MaxTrips, args...)
}

// MaxTrips is how many iterations Run lets a while loop run before it
// gives up on it (an error, ErrTooManyTrips).
const MaxTrips = 1 << 24

// ErrTooManyTrips is the error of a while loop that ran past its limit.
var ErrTooManyTrips = errors.New("eval: a while loop ran past its iteration limit")

// RunLimited is Run with a limit on each while loop's iterations (a
// fuzzer gives up sooner on a program that may never finish).
func RunLimited(m *hlo.Module, maxTrips int, args ...*hlo.Literal) (*Value, error) {
	return runWith(m, maxTrips, runOptions{}, args)
}

// RunSummedInF32 is RunLimited with every float dot and convolution
// summed as a device sums it: in f32 for results of f32 and narrower,
// each product and each partial sum rounded, in the evaluator's order.
// Its distance from Run's results (float64 sums rounded once) shows how
// much the order of an f32 sum may move them: a test's tolerance.
func RunSummedInF32(m *hlo.Module, maxTrips int, args ...*hlo.Literal) (*Value, error) {
	return runWith(m, maxTrips, runOptions{f32Sums: true}, args)
}

// RunNudged is RunLimited with the result of every float op that a
// device computes to within some ulps rather than exactly (the
// transcendental functions, division, power: inexactOps) moved one ulp
// up (dir +1) or down (-1). How far the results move shows how much a
// device's ulps in those ops are amplified by the ops after them (e^x
// of an expm1 near 4 moves by 4 times expm1's ulps): a test's tolerance.
func RunNudged(m *hlo.Module, maxTrips, dir int, args ...*hlo.Literal) (*Value, error) {
	return runWith(m, maxTrips, runOptions{nudge: dir}, args)
}

// RunZerosPoisoned is RunLimited with every zero whose sign is not
// arithmetic's to decide made a NaN: those an op whose algorithm is the
// implementation's own (OrderChosen) computes, an FFT's parts within
// their error bound of 0 (poisonFftNearZeros), and those an inexact op
// underflows to (poisonUnderflows). Where a result is a zero in this run
// as in Run, its sign is none of theirs: a test may compare it, though
// the program has such ops.
func RunZerosPoisoned(m *hlo.Module, maxTrips int, args ...*hlo.Literal) (*Value, error) {
	return runWith(m, maxTrips, runOptions{poisonZeros: true}, args)
}

// PoisonsZeros reports whether RunZerosPoisoned may poison op's zeros.
func PoisonsZeros(op hlo.Opcode) bool { return OrderChosen(op) || inexactOps[op] }

// OrderChosen reports whether op's float results are sums and products
// in an order that XLA leaves to the implementation (a triangular
// solve's substitution, a Cholesky factorization, an FFT's butterflies,
// a custom-call's library), so that the signs of its zeros are the
// implementation's too.
func OrderChosen(op hlo.Opcode) bool {
	switch op {
	case hlo.OpTriangularSolve, hlo.OpCholesky, hlo.OpFft, hlo.OpCustomCall:
		return true
	}
	return false
}

// poisonZeros is v with each float zero (a complex element's zero part)
// a NaN, in new literals: v's may be an operand's.
func poisonZeros(v *Value) *Value {
	if v.Lit == nil {
		out := &Value{}
		for _, e := range v.Tuple {
			out.Tuple = append(out.Tuple, poisonZeros(e))
		}
		return out
	}
	l := v.Lit
	part, complex := l.Shape.Elem.ComplexPart()
	if !l.Shape.Elem.IsFloat() && !complex {
		return v
	}
	if !complex {
		part = l.Shape.Elem
	}
	out := &hlo.Literal{Shape: l.Shape, Data: slices.Clone(l.Data)}
	flat := &hlo.Literal{Shape: hlo.ArrayShape(part, int64(len(l.Data)/part.Bytes())), Data: out.Data}
	for j := range flat.Shape.Dims[0] {
		if get(flat, j).f == 0 {
			put(flat.Data, part, j, scalar{f: math.NaN()})
		}
	}
	return &Value{Lit: out}
}

// poisonUnderflows makes NaNs of the zero parts of l, an inexact op's
// elementwise result, whose element's operands have no zero part: such
// a zero is not one the function takes at an exact point (sin 0, the
// imaginary part of e^(x+0i)) but an underflow, e^-1000, or a product
// with one, 1/(1 + e^(x+iy)) of a huge x, and its sign is that of a
// rounded value or, in a complex result, of the cosine or sine of an
// angle that one ulp of a large operand moves by radians. The device's
// rounding of the operand decides it as the evaluator's does its own.
func poisonUnderflows(l *hlo.Literal, ops []*hlo.Literal) {
	if !l.Shape.Elem.IsFloat() && !l.Shape.Elem.IsComplex() {
		return
	}
	for i := range l.Shape.NumElements() {
		r, ok := floatParts(l, i)
		if !ok || r[0] != 0 && r[1] != 0 {
			continue
		}
		exact := false
		for _, x := range ops {
			if p, ok := floatParts(x, i); ok && (p[0] == 0 || p[1] == 0) {
				exact = true
			}
		}
		if exact {
			continue
		}
		for k := range r {
			if r[k] == 0 {
				r[k] = math.NaN()
			}
		}
		if l.Shape.Elem.IsComplex() {
			put(l.Data, l.Shape.Elem, i, scalar{c: complex(r[0], r[1])})
		} else {
			put(l.Data, l.Shape.Elem, i, scalar{f: r[0]})
		}
	}
}

// floatParts is element i of a float or complex literal as its parts: a
// real's second part is 1, standing for no zero; ok is false for other
// types.
func floatParts(x *hlo.Literal, i int64) (p [2]float64, ok bool) {
	switch t := x.Shape.Elem; {
	case t.IsComplex():
		c := get(x, i).c
		return [2]float64{real(c), imag(c)}, true
	case t.IsFloat():
		return [2]float64{get(x, i).f, 1}, true
	}
	return p, false
}

// inexactOps are the float ops RunNudged moves.
var inexactOps = map[hlo.Opcode]bool{
	hlo.OpExp: true, hlo.OpExpm1: true, hlo.OpLog: true, hlo.OpLog1p: true, hlo.OpLogistic: true,
	hlo.OpSin: true, hlo.OpCos: true, hlo.OpTan: true, hlo.OpTanh: true, hlo.OpAtan2: true, hlo.OpErf: true,
	hlo.OpCbrt: true, hlo.OpRsqrt: true, hlo.OpSqrt: true, hlo.OpPower: true, hlo.OpDivide: true,
}

func init() {
	for _, op := range hlo.CHLOFunctions {
		inexactOps[op] = true
	}
}

// expansionUlps are the most ulps, in f32 and in f64, by which XLA's
// expansions of CHLO's functions (hlo/chlo), which devices run for HLO's
// opcodes of the same names, miss the function (docs/ACCURACY.md:
// sinh's and cosh's rounded x + log(1/2)); narrower floats compute in
// f32 and round once, within one. A complex result is as far off,
// relative to its modulus.
var expansionUlps = map[hlo.Opcode][2]float64{
	hlo.OpSinh: {24, 17}, hlo.OpCosh: {24, 17}, hlo.OpAsin: {3, 3}, hlo.OpAcos: {3, 3},
	hlo.OpAsinh: {3, 3}, hlo.OpAcosh: {3, 3}, hlo.OpAtanh: {3, 3},
}

// nudgeUlp moves each finite nonzero float element of l one ulp of its
// type in direction dir. A complex element moves each part by scale(i)
// ulps of its modulus: a complex function's error is relative to the
// number's size, not to its parts' (a part near 0 is as far off as the
// rest), and scale says what the op's own algorithm amplifies.
func nudgeUlp(l *hlo.Literal, dir int, scale func(i int64) float64) {
	t := l.Shape.Elem
	part, isComplex := t.ComplexPart()
	if !part.IsFloat() {
		return
	}
	ulp := func(v float64) float64 { return ulpOf(part, v) }
	n := l.Shape.NumElements()
	for i := int64(0); i < n; i++ {
		if isComplex {
			c := get(l, i).c
			if m := cmplx.Abs(c); m != 0 && !math.IsInf(m, 0) && !math.IsNaN(m) {
				d := float64(dir) * scale(i) * ulp(m)
				put(l.Data, t, i, scalar{c: roundC(t, c+move(d))})
			}
			continue
		}
		if v := get(l, i).f; v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			put(l.Data, t, i, scalar{f: round(t, v+float64(dir)*scale(i)*ulp(v))})
		}
	}
}

// ulpOf is the ulp of value v in float type t.
func ulpOf(t hlo.ElementType, v float64) float64 {
	_, man := t.FloatFields()
	_, e := math.Frexp(v) // v's ulp is 2^(e - significand bits)
	return math.Ldexp(1, e-man-1)
}

// move is a nudge of d as a complex number: d on the real part, 3d/4 on
// the imaginary one. Equal moves cancel in products of nudged zeros
// ((d + di)^2 = 2d^2 i has no real part), where the device's errors,
// of either sign in each part, do not. Three quarters, not a half: a
// part as large as the modulus rounds a move of half its ulp back to
// itself half the time, and the fuzzer met such a lost move amplified
// (sin z with z's imaginary part from e^w: a 1-ulp difference there
// moved the result 20 times more than the nudges showed).
func move(d float64) complex128 { return complex(d, d*3/4) }

// nudgeScale is how many ulps an inexact op's result r moves when
// nudged: one, but for an expansion of CHLO's its expansionUlps, for a
// complex power 1 + |y log x|, and for a complex atan2 1 + 1/|r|. XLA
// and the device alike compute |x|^c e^(-d arg x) cis(c arg x + d ln|x|)
// for y = c + di, and the rounding of the angle and of d arg x,
// multiplied by their size (at most |y log x|), is the result's relative
// error; and atan2(y, x) as -i log((x + iy) / sqrt(x^2 + y^2)), whose
// log is off by the quotient's rounding, an ulp of 1, however small the
// result (FuzzMutants: 2.8% of a result of 7e-8).
func nudgeScale(in *hlo.Instruction, ops []*hlo.Literal, r *hlo.Literal) func(i int64) float64 {
	if u, ok := expansionUlps[in.Op]; ok {
		part, _ := in.Shape.Elem.ComplexPart()
		n := 1.0
		switch part {
		case hlo.F32:
			n = u[0]
		case hlo.F64:
			n = u[1]
		}
		return func(int64) float64 { return n }
	}
	if in.Op == hlo.OpAtan2 && in.Shape.Elem.IsComplex() {
		return func(i int64) float64 { return 1 + 1/cmplx.Abs(get(r, i).c) }
	}
	if in.Op != hlo.OpPower || !in.Shape.Elem.IsComplex() {
		return func(int64) float64 { return 1 }
	}
	return func(i int64) float64 {
		if w := cmplx.Abs(get(ops[1], i).c * cmplx.Log(get(ops[0], i).c)); !math.IsInf(w, 0) && !math.IsNaN(w) {
			return 1 + w
		}
		return 1
	}
}

// runWith is Run's body: f32Sums and nudge as RunSummedInF32 and
// RunNudged set them.
// runOptions are what the Run functions change in the evaluation.
type runOptions struct {
	f32Sums     bool // RunSummedInF32
	nudge       int  // RunNudged
	poisonZeros bool // RunZerosPoisoned
}

func runWith(m *hlo.Module, maxTrips int, o runOptions, args []*hlo.Literal) (*Value, error) {
	// The evaluator reads the shapes the verifier infers (a shape left
	// out of the text): verify here, whoever verified the module before
	// (a compile-cache hit compiles nothing, so verifies nothing).
	if err := hlo.Verify(m); err != nil {
		return nil, err
	}
	if err := Check(m); err != nil {
		return nil, err
	}
	c := m.Entry
	want := 0
	for _, p := range c.Params {
		want += len(p.Shape.Leaves())
	}
	if len(args) != want {
		return nil, fmt.Errorf("eval: %s takes %d arguments, got %d", m.Name, want, len(args))
	}
	vals := make([]*Value, len(c.Params))
	next := 0
	var build func(s hlo.Shape, p *hlo.Instruction) (*Value, error)
	build = func(s hlo.Shape, p *hlo.Instruction) (*Value, error) {
		if s.IsTuple() {
			v := &Value{}
			for _, e := range s.Tuple {
				ev, err := build(e, p)
				if err != nil {
					return nil, err
				}
				v.Tuple = append(v.Tuple, ev)
			}
			return v, nil
		}
		a := args[next]
		if a.Shape.Elem != s.Elem || !a.Shape.SameDims(s) {
			return nil, fmt.Errorf("eval: argument %d (parameter %s): want %s, got %s", next, p.Name, s.DimsString(), a.Shape.DimsString())
		}
		next++
		return &Value{Lit: inRange(a)}, nil
	}
	for i, p := range c.Params {
		v, err := build(p.Shape, p)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	e := newEvaluator()
	e.maxTrips = maxTrips
	e.f32Sums, e.nudge, e.poisonZeros = o.f32Sums, o.nudge, o.poisonZeros
	return e.call(c, vals)
}

// inRange is argument a with each element of a type narrower than a
// byte (s2, s4, u2, u4, f4, f6), which takes a byte, reduced to the
// type's bits (sign-extended for the signed integers): bits above them in
// a host's buffer are not the value's, and XLA's packing drops them.
func inRange(a *hlo.Literal) *hlo.Literal {
	t := a.Shape.Elem
	bits := t.Bits()
	if bits >= 8 || t == hlo.PRED || a.Elided {
		return a
	}
	out := *a
	out.Data = make([]byte, len(a.Data))
	for i, b := range a.Data {
		out.Data[i] = b & (1<<bits - 1)
		if t.Kind() == hlo.KindSigned {
			out.Data[i] = byte(int8(b<<(8-bits)) >> (8 - bits))
		}
	}
	return &out
}

// RunValues evaluates with tuple-shaped arguments allowed.
func RunValues(m *hlo.Module, args ...*Value) (*Value, error) {
	e := newEvaluator()
	if len(args) != len(m.Entry.Params) {
		return nil, fmt.Errorf("eval: %s takes %d arguments, got %d", m.Name, len(m.Entry.Params), len(args))
	}
	return e.call(m.Entry, args)
}

type evaluator struct {
	maxTrips int  // a while loop's iteration limit
	f32Sums  bool // float dots and convolutions summed in f32 (RunSummedInF32)
	nudge    int  // +1 or -1: inexact float results moved an ulp that way (RunNudged)
	// poisonZeros: the zeros of OrderChosen ops' results and inexact
	// ops' underflows are NaNs (RunZerosPoisoned).
	poisonZeros bool
	order       map[*hlo.Computation][]*hlo.Instruction
	// Values of instructions that depend on no parameter, computed once
	// per run: a loop body recomputing a large constant expression every
	// iteration (as XLA's loop-invariant code motion would hoist) then
	// costs one evaluation.
	invariant map[*hlo.Instruction]*Value
	dependent map[*hlo.Computation]map[*hlo.Instruction]bool
	// A running while body's values computed from the elements it passes
	// on unchanged (hlo.Computation.PassThrough) and no other, kept for
	// that loop's iterations: one evaluation per loop, as XLA's
	// invariant code motion hoists them (a JAX fori_loop body's product
	// of two closed-over arrays). Every op the evaluator runs is a
	// function of its operands (Check refuses infeed, rng and the like).
	loopInvariant map[*hlo.Computation]map[*hlo.Instruction]bool
	loopMemo      map[*hlo.Computation]map[*hlo.Instruction]*Value
	progs         map[*hlo.Computation]*scalarProg
}

// paramDependent marks the instructions of c that depend on a parameter.
func (e *evaluator) paramDependent(c *hlo.Computation) map[*hlo.Instruction]bool {
	if d, ok := e.dependent[c]; ok {
		return d
	}
	d := e.reachParams(c, nil)
	e.dependent[c] = d
	return d
}

// invariantIn marks the instructions of while body c that read nothing
// but the elements c passes on unchanged, constants and such values.
func (e *evaluator) invariantIn(c *hlo.Computation) map[*hlo.Instruction]bool {
	if inv, ok := e.loopInvariant[c]; ok {
		return inv
	}
	inv := map[*hlo.Instruction]bool{}
	for in, dep := range e.reachParams(c, c.PassThrough()) {
		inv[in] = !dep
	}
	e.loopInvariant[c] = inv
	return inv
}

// reachParams marks the instructions of c that read a parameter of c,
// other than through the instructions cut (taken as given).
func (e *evaluator) reachParams(c *hlo.Computation, cut map[*hlo.Instruction]bool) map[*hlo.Instruction]bool {
	d := map[*hlo.Instruction]bool{}
	for _, in := range e.schedule(c) {
		dep := in.Op == hlo.OpParameter
		for _, o := range in.Operands {
			dep = dep || d[o]
		}
		d[in] = dep && !cut[in]
	}
	return d
}

// sumType is the type a float dot or convolution rounds its partial sums
// (a complex one's parts) to: f32 for a result of f32 or narrower, or
// c64, under RunSummedInF32, else none (Invalid: float64 sums, rounded
// once).
func (e *evaluator) sumType(in *hlo.Instruction) hlo.ElementType {
	t := in.Shape.Elem
	if p, ok := t.ComplexPart(); ok {
		t = p
	}
	if e.f32Sums && t.IsFloat() && t.Bits() <= 32 {
		return hlo.F32
	}
	return hlo.Invalid
}

func newEvaluator() *evaluator {
	return &evaluator{
		maxTrips:      MaxTrips,
		order:         map[*hlo.Computation][]*hlo.Instruction{},
		invariant:     map[*hlo.Instruction]*Value{},
		dependent:     map[*hlo.Computation]map[*hlo.Instruction]bool{},
		loopInvariant: map[*hlo.Computation]map[*hlo.Instruction]bool{},
		loopMemo:      map[*hlo.Computation]map[*hlo.Instruction]*Value{},
		progs:         map[*hlo.Computation]*scalarProg{},
	}
}

// schedule orders the instructions a computation's root depends on so
// that operands come first (the text may define them after their
// users). The others are not computed: XLA drops them, as vkjit's
// passes do, and Check refuses the side effects among them.
func (e *evaluator) schedule(c *hlo.Computation) []*hlo.Instruction {
	if o, ok := e.order[c]; ok {
		return o
	}
	var out []*hlo.Instruction
	seen := map[*hlo.Instruction]bool{}
	var visit func(in *hlo.Instruction)
	visit = func(in *hlo.Instruction) {
		if seen[in] {
			return
		}
		seen[in] = true
		for _, o := range in.Operands {
			visit(o)
		}
		out = append(out, in)
	}
	visit(c.Root)
	e.order[c] = out
	return out
}

// call evaluates computation c on args.
func (e *evaluator) call(c *hlo.Computation, args []*Value) (*Value, error) {
	if len(args) != len(c.Params) {
		return nil, fmt.Errorf("eval: %s takes %d arguments, got %d", c.Name, len(c.Params), len(args))
	}
	env := make(map[*hlo.Instruction]*Value, len(c.Instructions))
	dep := e.paramDependent(c)
	memo := e.loopMemo[c]
	var inv map[*hlo.Instruction]bool
	if memo != nil {
		inv = e.invariantIn(c)
	}
	for _, in := range e.schedule(c) {
		if v, ok := e.invariant[in]; ok {
			env[in] = v
			continue
		}
		if v, ok := memo[in]; ok {
			env[in] = v
			continue
		}
		v, err := e.instruction(in, env, args)
		if err != nil {
			return nil, err
		}
		if e.poisonZeros && OrderChosen(in.Op) {
			v = poisonZeros(v)
		}
		env[in] = v
		if !dep[in] {
			e.invariant[in] = v
		} else if inv[in] {
			memo[in] = v
		}
	}
	return env[c.Root], nil
}

// callScalars applies computation c to scalar arguments and returns its
// scalar results (one, or the elements of a tuple).
func (e *evaluator) callScalars(c *hlo.Computation, args []*hlo.Literal) ([]*hlo.Literal, error) {
	vs := make([]*Value, len(args))
	for i, a := range args {
		vs[i] = &Value{Lit: a}
	}
	r, err := e.call(c, vs)
	if err != nil {
		return nil, err
	}
	return r.Leaves(), nil
}

func (e *evaluator) instruction(in *hlo.Instruction, env map[*hlo.Instruction]*Value, args []*Value) (*Value, error) {
	ops := make([]*Value, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = env[o]
	}
	lit := func(i int) *hlo.Literal { return ops[i].Lit }
	one := func(l *hlo.Literal, err error) (*Value, error) {
		if err != nil {
			return nil, err
		}
		return &Value{Lit: l}, nil
	}
	switch in.Op {
	case hlo.OpParameter:
		return args[in.ParamNum], nil
	case hlo.OpConstant:
		if in.Literal == nil || in.Literal.Elided {
			return nil, in.Errorf("the constant's values were elided from the text ({...})")
		}
		return &Value{Lit: in.Literal}, nil
	case hlo.OpTuple:
		return &Value{Tuple: ops}, nil
	case hlo.OpGetTupleElement:
		return ops[0].Tuple[in.A.Index], nil
	case hlo.OpAfterAll:
		return &Value{}, nil
	case hlo.OpAddDependency, hlo.OpOptimizationBarrier, hlo.OpCopy:
		return ops[0], nil
	case hlo.OpReplicaID, hlo.OpPartitionID:
		return one(zeros(in.Shape), nil)
	case hlo.OpCall, hlo.OpFusion:
		return e.call(in.Called[0], ops)
	case hlo.OpWhile:
		return e.while(in, ops[0])
	case hlo.OpScan:
		return e.scan(in, ops)
	case hlo.OpConditional:
		return e.conditional(in, ops)
	case hlo.OpBroadcast:
		return one(broadcast(in, lit(0)), nil)
	case hlo.OpReshape, hlo.OpBitcast:
		return one(&hlo.Literal{Shape: hlo.ArrayShape(in.Shape.Elem, in.Shape.Dims...), Data: lit(0).Data}, nil)
	case hlo.OpTranspose:
		return one(transpose(in, lit(0)), nil)
	case hlo.OpSlice:
		return one(slice(in, lit(0)), nil)
	case hlo.OpDynamicSlice:
		return one(dynamicSlice(in, lit(0), leaves(ops[1:])), nil)
	case hlo.OpDynamicUpdateSlice:
		return one(dynamicUpdateSlice(lit(0), lit(1), leaves(ops[2:])), nil)
	case hlo.OpConcatenate:
		return one(concatenate(in, leaves(ops)), nil)
	case hlo.OpPad:
		return one(pad(in, lit(0), lit(1)), nil)
	case hlo.OpReverse:
		return one(reverse(in, lit(0)), nil)
	case hlo.OpIota:
		return one(iota(in), nil)
	case hlo.OpFft:
		out := fft(in, lit(0))
		if e.nudge != 0 {
			nudgeFft(in, lit(0), out, e.nudge)
		}
		if e.poisonZeros {
			poisonFftNearZeros(in, lit(0), out)
		}
		return one(out, nil)
	case hlo.OpCustomCall:
		return e.customCall(in, ops)
	case hlo.OpTriangularSolve:
		return one(triangularSolve(in, lit(0), lit(1), e.nudge), nil)
	case hlo.OpCholesky:
		return one(cholesky(in, lit(0), e.nudge), nil)
	case hlo.OpGather:
		return one(gather(in, lit(0), lit(1)))
	case hlo.OpScatter:
		return e.scatter(in, leaves(ops))
	case hlo.OpReduce:
		return e.reduce(in, leaves(ops))
	case hlo.OpReduceWindow:
		return e.reduceWindow(in, leaves(ops))
	case hlo.OpSelectAndScatter:
		return one(e.selectAndScatter(in, lit(0), lit(1), lit(2)))
	case hlo.OpSort:
		return e.sort(in, leaves(ops))
	case hlo.OpTopK:
		return topK(in, lit(0))
	case hlo.OpMap:
		return one(e.mapOp(in, leaves(ops)))
	case hlo.OpDot:
		return one(dot(in, lit(0), lit(1), e.sumType(in)))
	case hlo.OpConvolution:
		return one(convolution(in, dotRounded(in, lit(0)), dotRounded(in, lit(1)), e.sumType(in)))
	case hlo.OpRngBitGenerator:
		return rngBitGenerator(in, lit(0))
	case hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad:
		return batchNorm(in, leaves(ops), e.nudge)
	case hlo.OpGetDimensionSize:
		x, d := in.Operands[0].Shape, in.A.Dimensions[0]
		if int(d) < len(x.Dynamic) && x.Dynamic[d] {
			return nil, in.Errorf("%w", &Unsupported{"get-dimension-size of a bounded dynamic dimension"})
		}
		l := zeros(hlo.ArrayShape(hlo.S32))
		put(l.Data, hlo.S32, 0, scalar{i: x.Dims[d]})
		return &Value{Lit: l}, nil
	case hlo.OpRaggedDot:
		return one(raggedDot(in, lit(0), lit(1), lit(2), e.sumType(in)))
	case hlo.OpStochasticConvert:
		return one(stochasticConvert(in, lit(0), lit(1)), nil)
	case hlo.OpAsyncStart:
		r, err := e.call(in.Called[0], ops)
		if err != nil {
			return nil, err
		}
		return started(in, &Value{Tuple: ops}, r)
	case hlo.OpAsyncUpdate:
		return ops[0], nil
	case hlo.OpAsyncDone, hlo.OpCopyDone:
		return finished(in, ops[0])
	case hlo.OpCopyStart:
		return started(in, ops[0], ops[0])
	case hlo.OpDomain:
		return ops[0], nil
	case hlo.OpAllReduceStart, hlo.OpAllGatherStart, hlo.OpCollectivePermuteStart:
		results := ops
		// One replica: a {0,0} pair copies, any other pairs give zeros.
		if in.Op == hlo.OpCollectivePermuteStart && hlo.OneProcessPermute(in) != hlo.PermuteSelf {
			results = nil
			for _, o := range in.Operands {
				results = append(results, &Value{Lit: zeros(o.Shape)})
			}
		}
		return startedCollective(in, ops, results)
	case hlo.OpAllReduceDone, hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone:
		return finished(in, ops[0])
	case hlo.OpAllReduce, hlo.OpAllGather, hlo.OpReduceScatter, hlo.OpAllToAll, hlo.OpCollectiveBroadcast:
		// One replica: every collective is the identity on its operands.
		if len(ops) == 1 {
			return ops[0], nil
		}
		return &Value{Tuple: ops}, nil
	case hlo.OpCollectivePermute:
		if hlo.OneProcessPermute(in) == hlo.PermuteSelf {
			return ops[0], nil
		}
		return one(zeros(in.Shape), nil)
	case hlo.OpBitcastConvert:
		return one(bitcastConvert(in, lit(0)))
	}
	if in.Op.IsElementwise() {
		l, err := elementwise(in, leaves(ops))
		if err != nil {
			return nil, in.Errorf("%w", err)
		}
		if e.nudge != 0 && inexactOps[in.Op] {
			nudgeUlp(l, e.nudge, nudgeScale(in, leaves(ops), l))
		}
		if e.poisonZeros && inexactOps[in.Op] {
			poisonUnderflows(l, leaves(ops))
		}
		return &Value{Lit: l}, nil
	}
	return nil, in.Errorf("%w", &Unsupported{in.Op.String()})
}

// Fold computes in, an op of one array result that reads no parameter
// and calls no computation (an elementwise or data-movement op), from
// its operands' values: a compiler's constant folding, done by the
// evaluator as XLA's HloConstantFolding does it with its own.
func Fold(in *hlo.Instruction, operands []*hlo.Literal) (*hlo.Literal, error) {
	if len(operands) != len(in.Operands) || !in.Shape.IsArray() || len(in.Called) > 0 || in.Op == hlo.OpParameter {
		return nil, in.Errorf("eval: %s is no op of constants to fold", in.Op)
	}
	env := make(map[*hlo.Instruction]*Value, len(operands))
	for i, o := range in.Operands {
		env[o] = &Value{Lit: operands[i]}
	}
	v, err := newEvaluator().instruction(in, env, nil)
	if err != nil {
		return nil, err
	}
	if v.Lit == nil {
		return nil, in.Errorf("eval: %s folded to a tuple", in.Op)
	}
	return v.Lit, nil
}

// InTypeSet reports the element types the evaluator runs: every array
// type. The f8, f6 and f4 types compute in float64 and round each result
// to the type (XLA computes in f32: the two differ only where an f32
// result lies within half an f32 ulp of a tie of the small type).
func InTypeSet(t hlo.ElementType) bool { return t.IsArray() }

func leaves(vs []*Value) []*hlo.Literal {
	out := make([]*hlo.Literal, len(vs))
	for i, v := range vs {
		out[i] = v.Lit
	}
	return out
}

// zeros makes an all-zero literal of an array shape.
func zeros(s hlo.Shape) *hlo.Literal {
	return &hlo.Literal{Shape: hlo.ArrayShape(s.Elem, s.Dims...), Data: make([]byte, s.ByteSize())}
}

// scalar is one element, decoded: every type's value fits one of the
// three fields (pred in u as 0/1).
type scalar struct {
	f float64
	i int64
	u uint64
	c complex128 // complex types (complex.go)
}

func rawBits(l *hlo.Literal, i int64) uint64 {
	n := int64(l.Shape.Elem.Bytes())
	b := l.Data[i*n : (i+1)*n]
	var bits uint64
	for j := len(b) - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(b[j])
	}
	return bits
}

func get(l *hlo.Literal, i int64) scalar {
	if l.Shape.Rank() == 0 {
		i = 0
	}
	t := l.Shape.Elem
	if t.IsComplex() {
		return getComplex(l, i)
	}
	bits := rawBits(l, i)
	switch t.Kind() {
	case hlo.KindFloat:
		return scalar{f: decodeFloat(t, bits)}
	case hlo.KindSigned:
		shift := 64 - uint(t.Bits())
		return scalar{i: int64(bits<<shift) >> shift}
	}
	return scalar{u: bits}
}

func decodeFloat(t hlo.ElementType, bits uint64) float64 { return hlo.DecodeFloat(t, bits) }

func encodeFloat(t hlo.ElementType, f float64) uint64 { return hlo.EncodeFloat(t, f) }

func putBits(dst []byte, t hlo.ElementType, i int64, bits uint64) {
	n := int64(t.Bytes())
	for j := int64(0); j < n; j++ {
		dst[i*n+j] = byte(bits >> (8 * j))
	}
}

func put(dst []byte, t hlo.ElementType, i int64, s scalar) {
	var bits uint64
	switch t.Kind() {
	case hlo.KindComplex:
		putComplex(dst, t, i, s)
		return
	case hlo.KindFloat:
		bits = encodeFloat(t, s.f)
	case hlo.KindSigned:
		bits = uint64(s.i) // a 2- or 4-bit integer's byte holds it sign-extended, as literals do
	default:
		bits = s.u
	}
	putBits(dst, t, i, bits)
}

// round keeps a float64 result at the precision of type t.
func round(t hlo.ElementType, f float64) float64 {
	if t == hlo.F64 {
		return f
	}
	return decodeFloat(t, encodeFloat(t, f))
}

// wrapS sign-extends the low bits of an integer of type t.
func wrapS(t hlo.ElementType, v int64) int64 {
	shift := 64 - uint(t.Bits())
	return v << shift >> shift
}

func wrapU(t hlo.ElementType, v uint64) uint64 {
	if t.Bits() == 64 {
		return v
	}
	return v & (1<<uint(t.Bits()) - 1)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// LiteralFromBytes builds a literal, checking the size.
func LiteralFromBytes(s hlo.Shape, data []byte) (*hlo.Literal, error) {
	if int64(len(data)) != s.ByteSize() {
		return nil, fmt.Errorf("eval: %s needs %d bytes, got %d", s.DimsString(), s.ByteSize(), len(data))
	}
	return &hlo.Literal{Shape: s, Data: data}, nil
}

// asInt reads element i of an integer literal as int64 (unsigned types
// beyond int64's range saturate, which index clamping makes harmless).
func asInt(l *hlo.Literal, i int64) int64 {
	s := get(l, i)
	if l.Shape.Elem.Kind() == hlo.KindUnsigned {
		if s.u > math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(s.u)
	}
	return s.i
}
