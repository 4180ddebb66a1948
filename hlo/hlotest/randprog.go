package hlotest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// RandomProgram generates a random well-typed module over the op set the
// device runs and every element type it stores (pred, the integers, the
// floats from f4 to f64, c64 and c128), built with hlo.Builder from a
// seed: up to n instructions of elementwise ops, data movement,
// reductions, dots, gathers, scatters, sorts, windows, FFTs, triangular
// solves, Cholesky factorizations, batch norms, loops and conditionals over small shapes (empty ones too), for differential
// testing (the device fused and unfused against hlo/eval).
//
// Floats are where a differential test can be fooled: the device may sum
// in another order or round a transcendental function differently by an
// ulp, and an op that is discontinuous (compare, floor, sign, a
// conversion to an integer, a sort key) turns that ulp into a different
// answer. So the generator tracks which float values are exact, computed
// from the inputs (FuzzInputs: multiples of 1/8 up to 8, and the special
// values) by ops that round nothing on the way (data movement, negate,
// max, sums and products while their significant bits fit the type), and
// feeds discontinuous ops only exact values. Every float output can
// still be compared: exact ones bit for bit, the others within what
// rounding can explain (Widen). Complex values are tracked as floats of
// their parts' type, and the functions with a branch cut (log, sqrt,
// power...) are discontinuous there: they take exact values only.
func RandomProgram(seed uint64, n int) (*hlo.Module, error) {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 0x66757a7a)), b: hlo.NewBuilder(fmt.Sprintf("fuzz_%d", seed)), comps: map[string]*hlo.Computation{}}
	g.e = g.b.Entry("main")
	// A program draws from a few types, so that values meet.
	all := []hlo.ElementType{hlo.PRED, hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64, hlo.F16, hlo.BF16, hlo.F32, hlo.F64}
	// One program in four also draws from the types narrower than a
	// byte and the small float types (all but e8m0fnu, a scale type of
	// powers of two without zero, which XLA only converts).
	switch seed % 4 {
	case 3:
		all = append(all, hlo.S2, hlo.S4, hlo.U2, hlo.U4, hlo.F4E2M1FN, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F8E3M4, hlo.F8E4M3,
			hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E4M3B11FNUZ, hlo.F8E5M2, hlo.F8E5M2FNUZ)
	case 1:
		// And one in four a complex type at least.
		all = append(all, hlo.C64, hlo.C128)
	}
	g.all = all
	g.types = []hlo.ElementType{hlo.F32, hlo.S32}
	for i := 0; i < 1+g.rng.IntN(3); i++ {
		g.types = append(g.types, all[g.rng.IntN(len(all))])
	}
	if seed%4 == 1 {
		g.types = append(g.types, []hlo.ElementType{hlo.C64, hlo.C128}[g.rng.IntN(2)])
	}
	for i := 0; i < 1+g.rng.IntN(3); i++ {
		g.param(g.anyType(), g.shape())
	}
	for len(g.e.Computation().Instructions) < n {
		g.step()
	}
	g.root()
	return g.b.Build()
}

type gen struct {
	rng   *rand.Rand
	b     *hlo.Builder
	e     *hlo.CompBuilder
	vals  []*gval
	types []hlo.ElementType
	all   []hlo.ElementType // every type this program may draw
	comps map[string]*hlo.Computation
	loops int
	// depth: 0 in the entry, 1 in a loop's body, 2 in a loop's in that
	// (where a new parameter is a constant, and no loop nests deeper).
	depth int
}

// gval is a value of the entry computation and what the generator knows
// of it. For floats: exact says no rounding has happened, and mag and
// frac bound its binary magnitude and fractional bits (so mag+frac its
// significant bits); raw says its bits are the inputs' (data movement
// only), as a bitwise reading needs.
type gval struct {
	in        *hlo.Instruction
	exact     bool
	mag, frac int
	raw       bool
}

func (v *gval) t() hlo.ElementType { return v.in.Shape.Elem }
func (v *gval) s() hlo.Shape       { return v.in.Shape }

// rounds reports a type whose values rounding may move: a float or a
// complex type.
func rounds(t hlo.ElementType) bool { return t.IsFloat() || t.IsComplex() }

// significand is a float type's significant bits; maxExp its largest
// binary exponent.
func significand(t hlo.ElementType) (bits, maxExp int) {
	exp, man := t.FloatFields()
	if f, ok := hlo.MiniFloatFormatOf(t); ok {
		return man + 1, int(math.Floor(math.Log2(f.Max)))
	}
	return man + 1, 1<<(exp-1) - 1
}

// fits reports whether a float of t holds mag/frac exactly.
func fits(t hlo.ElementType, mag, frac int) bool {
	t, _ = t.ComplexPart()
	if !t.IsFloat() {
		return true
	}
	bits, maxExp := significand(t)
	return mag+frac <= bits && mag < maxExp-1
}

func (g *gen) pick(ok func(*gval) bool) *gval {
	var cands []*gval
	for _, v := range g.vals {
		if ok(v) {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// Recent values more often, so that chains grow deep.
	if g.rng.IntN(2) == 0 {
		return cands[len(cands)-1-g.rng.IntN(min(3, len(cands)))]
	}
	return cands[g.rng.IntN(len(cands))]
}

func (g *gen) anyType() hlo.ElementType { return g.types[g.rng.IntN(len(g.types))] }

// shape is a small random shape: rank 0 to 3, dimensions 1 to 5, now and
// then 0; one in ten a row of 8 to 32 elements under up to two
// dimensions of 1 to 6, or (one in four of those) 4 to 8 rows of 256.
func (g *gen) shape() []int64 {
	if g.rng.IntN(10) == 0 {
		// Rows of whole octets: the vector kernels' shapes (8 lanes
		// of a row a step; a reduce keeping such a row folds its
		// columns together), which dimensions of 1 to 5 never make;
		// one in four of 1024 to 2048 elements, where elementwise
		// kernels take the vector form too, and one in four of 64 to
		// 128 rows.
		dims := make([]int64, 1+g.rng.IntN(3))
		for i := range dims {
			dims[i] = 1 + int64(g.rng.IntN(6))
		}
		dims[len(dims)-1] = 8 * (1 + int64(g.rng.IntN(4)))
		switch g.rng.IntN(4) {
		case 0:
			dims = []int64{4 + int64(g.rng.IntN(5)), 256}
		case 1:
			// Rows enough for a row kernel (lower's fuseRows: 64 at
			// least, a row an invocation), of 1 to 20 elements.
			cols := 1 + int64(g.rng.IntN(20))
			dims = []int64{64 + int64(g.rng.IntN(65)), cols}
			if g.rng.IntN(3) == 0 {
				dims = []int64{8, 8 + int64(g.rng.IntN(9)), cols}
			}
		}
		return dims
	}
	dims := make([]int64, g.rng.IntN(4))
	for i := range dims {
		dims[i] = 1 + int64(g.rng.IntN(5))
		if g.rng.IntN(30) == 0 {
			dims[i] = 0
		}
	}
	return dims
}

func (g *gen) keep(in *hlo.Instruction, exact bool, mag, frac int, raw bool) *gval {
	if s, err := hlo.InferShape(in); err != nil {
		panic(fmt.Sprintf("hlotest: the generator made an invalid %s: %v", in.Op, err))
	} else if s != nil && in.ShapeInferred {
		in.Shape = *s
	}
	t := in.Shape.Elem
	if in.Shape.IsArray() && rounds(t) && !fits(t, mag, frac) {
		exact = false
	}
	if !in.Shape.IsArray() || !rounds(t) {
		exact, raw = true, false
	}
	v := &gval{in: in, exact: exact, mag: mag, frac: frac, raw: raw && exact}
	if in.Shape.IsArray() {
		g.vals = append(g.vals, v)
	}
	return v
}

// settle infers the shapes of a called computation's instructions as
// soon as it is built, since the entry's next instruction is checked
// against its parameters and root.
func settle(c *hlo.Computation) *hlo.Computation {
	for _, in := range c.Instructions {
		if !in.ShapeInferred {
			continue
		}
		s, err := hlo.InferShape(in)
		if err != nil || s == nil {
			panic(fmt.Sprintf("hlotest: the generator made an invalid %s in %s: %v", in.Op, c.Name, err))
		}
		in.Shape = *s
	}
	return c
}

func (g *gen) param(t hlo.ElementType, dims []int64) *gval {
	if g.depth > 0 {
		return g.spread(g.constant(t), dims)
	}
	return g.keep(g.e.Parameter(hlo.ArrayShape(t, dims...)), true, 3, 3, true)
}

func (g *gen) op(op hlo.Opcode, ops ...*gval) *hlo.InstBuilder {
	ins := make([]*hlo.Instruction, len(ops))
	for i, o := range ops {
		ins[i] = o.in
	}
	return g.e.Op(op, ins...)
}

// like returns a value of shape s and type t: an existing one, else a
// new parameter (or a broadcast constant).
func (g *gen) like(t hlo.ElementType, dims []int64, exact bool) *gval {
	if v := g.pick(func(v *gval) bool {
		return v.t() == t && slices.Equal(v.s().Dims, dims) && (v.exact || !exact)
	}); v != nil && g.rng.IntN(3) > 0 {
		return v
	}
	if g.rng.IntN(3) == 0 {
		return g.spread(g.constant(t), dims)
	}
	return g.param(t, dims)
}

// spread is scalar c broadcast to dims (c itself for a scalar), known as
// c is.
func (g *gen) spread(c *gval, dims []int64) *gval {
	if len(dims) == 0 {
		return c
	}
	return g.keep(g.op(hlo.OpBroadcast, c).Set("dimensions", "{}").WithShape(hlo.ArrayShape(c.t(), dims...)).Instruction, c.exact, c.mag, c.frac, true)
}

// grid is the inputs' and constants' float values: multiples of 1/8 up
// to 8 in magnitude.
func (g *gen) grid() float64 { return float64(g.rng.IntN(129)-64) / 8 }

func (g *gen) constant(t hlo.ElementType) *gval {
	if t.IsComplex() {
		return g.constantOf(t, g.grid(), g.grid(), 3, 3)
	}
	return g.constantOf(t, g.scalarValue(t), 0, 3, 3)
}

// scalarValue is a random value of real type t: on the grid for
// floats, a small integer within the type's range otherwise.
func (g *gen) scalarValue(t hlo.ElementType) float64 {
	if t.IsFloat() {
		return g.grid()
	}
	v := float64(g.rng.IntN(17) - 8)
	if t.Kind() == hlo.KindUnsigned {
		v = math.Abs(v)
	}
	if b := t.Bits(); b < 8 { // within s2, s4, u2, u4
		lo, hi := -math.Ldexp(1, b-1), math.Ldexp(1, b-1)-1
		if t.Kind() == hlo.KindUnsigned {
			lo, hi = 0, math.Ldexp(1, b)-1
		}
		v = max(lo, min(hi, v))
	}
	return v
}

// constantOf is the scalar constant re + im i of type t (im only for a
// complex type), exact, of magnitude and fraction bits mag and frac.
func (g *gen) constantOf(t hlo.ElementType, re, im float64, mag, frac int) *gval {
	if !t.IsComplex() {
		return g.keep(g.e.Constant(hlo.ScalarLiteral(t, re)), true, mag, frac, true)
	}
	l, err := hlo.ParseLiteral(fmt.Sprintf("(%g, %g)", re, im), hlo.ArrayShape(t))
	if err != nil {
		panic(fmt.Sprintf("hlotest: a %s constant: %v", t, err))
	}
	return g.keep(g.e.Constant(l), true, mag, frac, true)
}

// Unary ops by what they ask of their operand: continuous ones take any
// float, discontinuous ones an exact one.
var (
	floatUnary    = slices.Concat([]hlo.Opcode{hlo.OpExp, hlo.OpExpm1, hlo.OpLog, hlo.OpLog1p, hlo.OpTanh, hlo.OpLogistic, hlo.OpSin, hlo.OpCos, hlo.OpTan, hlo.OpErf, hlo.OpCbrt, hlo.OpRsqrt, hlo.OpSqrt}, hlo.CHLOFunctions)
	discontinuous = []hlo.Opcode{hlo.OpFloor, hlo.OpCeil, hlo.OpRoundNearestAfz, hlo.OpRoundNearestEven, hlo.OpSign}
	intUnary      = []hlo.Opcode{hlo.OpPopcnt, hlo.OpClz, hlo.OpNot, hlo.OpNegate, hlo.OpAbs, hlo.OpSign}
	intBinary     = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide, hlo.OpRemainder, hlo.OpMaximum, hlo.OpMinimum, hlo.OpAnd, hlo.OpOr, hlo.OpXor, hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic, hlo.OpPower}
	floatBinary   = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide, hlo.OpMaximum, hlo.OpMinimum, hlo.OpPower, hlo.OpAtan2, hlo.OpRemainder}
	predBinary    = []hlo.Opcode{hlo.OpAnd, hlo.OpOr, hlo.OpXor, hlo.OpMaximum, hlo.OpMinimum}
	directions    = []string{"EQ", "NE", "LT", "LE", "GT", "GE"}

	// Complex functions: the entire (and meromorphic) ones take any
	// value; those with a branch cut or a jump (log, sqrt, sign at 0,
	// power, atan2, the lexicographic max and min) only exact ones, whose
	// parts and zeros' signs every implementation sees alike. (No
	// remainder: jax.lax.rem takes integers and reals, and neither the
	// device nor the evaluator has a complex one.)
	complexEntire  = []hlo.Opcode{hlo.OpExp, hlo.OpExpm1, hlo.OpSin, hlo.OpCos, hlo.OpTan, hlo.OpTanh, hlo.OpLogistic, hlo.OpSinh, hlo.OpCosh}
	complexCut     = []hlo.Opcode{hlo.OpLog, hlo.OpLog1p, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpCbrt, hlo.OpSign, hlo.OpAsin, hlo.OpAcos, hlo.OpAsinh, hlo.OpAcosh, hlo.OpAtanh}
	complexBinary  = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide}
	complexJumpBin = []hlo.Opcode{hlo.OpPower, hlo.OpAtan2, hlo.OpMaximum, hlo.OpMinimum}
)

// directionsOf are the comparisons t has: complex numbers have no order.
func directionsOf(t hlo.ElementType) []string {
	if t.IsComplex() {
		return directions[:2]
	}
	return directions
}

// steps are the generator's moves with their weights (assigned in init:
// a loop's body takes steps of its own).
var steps []struct {
	f func(*gen)
	w int
}

func init() {
	steps = []struct {
		f func(*gen)
		w int
	}{
		{(*gen).unary, 6}, {(*gen).binary, 8}, {(*gen).compareSelect, 3}, {(*gen).convert, 3}, {(*gen).bitcast, 1}, {(*gen).clamp, 1},
		{(*gen).broadcast, 2}, {(*gen).reshape, 2}, {(*gen).transpose, 2}, {(*gen).slice, 2}, {(*gen).reverse, 1},
		{(*gen).pad, 1}, {(*gen).concatenate, 1}, {(*gen).iota, 1}, {(*gen).reduce, 4}, {(*gen).centered, 2}, {(*gen).dot, 2},
		{(*gen).dynamicSlice, 1}, {(*gen).dynamicUpdateSlice, 1}, {(*gen).gather, 1}, {(*gen).scatter, 1},
		{(*gen).sort, 1}, {(*gen).reduceWindow, 1}, {(*gen).loop, 1}, {(*gen).conditional, 1}, {(*gen).convolution, 1},
		{(*gen).fft, 1}, {(*gen).triangularSolve, 1}, {(*gen).cholesky, 1}, {(*gen).call, 1}, {(*gen).mapOp, 1},
		{(*gen).topK, 1}, {(*gen).scheduled, 1}, {(*gen).batchNorm, 1}, {(*gen).selectAndScatter, 1},
		{(*gen).newParam, 1},
	}
}

func (g *gen) step() {
	total := 0
	for _, s := range steps {
		total += s.w
	}
	r := g.rng.IntN(total)
	for _, s := range steps {
		if r < s.w {
			s.f(g)
			return
		}
		r -= s.w
	}
}

func (g *gen) newParam() { g.param(g.anyType(), g.shape()) }

func (g *gen) any() *gval {
	if v := g.pick(func(*gval) bool { return true }); v != nil {
		return v
	}
	return g.param(g.anyType(), g.shape())
}

func (g *gen) unary() {
	v := g.any()
	t := v.t()
	switch {
	case t == hlo.PRED:
		g.keep(g.op(hlo.OpNot, v).Instruction, true, 0, 0, false)
	case t.IsComplex():
		g.complexUnary(v)
	case t.IsFloat():
		switch r := g.rng.IntN(4); {
		case r == 0:
			op := []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpCopy}[g.rng.IntN(3)]
			g.keep(g.op(op, v).Instruction, v.exact, v.mag, v.frac, v.raw && op != hlo.OpAbs)
		case r == 1 && v.exact:
			op := discontinuous[g.rng.IntN(len(discontinuous))]
			g.keep(g.op(op, v).Instruction, true, v.mag, v.frac, false)
		case r == 2 && v.exact:
			g.keep(g.op(hlo.OpIsFinite, v).WithShape(hlo.ArrayShape(hlo.PRED, v.s().Dims...)).Instruction, true, 0, 0, false)
		default:
			g.keep(g.op(floatUnary[g.rng.IntN(len(floatUnary))], v).Instruction, false, 0, 0, false)
		}
	default:
		op := intUnary[g.rng.IntN(len(intUnary))]
		if op.Types().Has(t) {
			g.keep(g.op(op, v).Instruction, true, 0, 0, false)
		}
	}
}

func (g *gen) complexUnary(v *gval) {
	part, _ := v.t().ComplexPart()
	switch r := g.rng.IntN(5); {
	case r == 0:
		op := []hlo.Opcode{hlo.OpNegate, hlo.OpCopy}[g.rng.IntN(2)]
		g.keep(g.op(op, v).Instruction, v.exact, v.mag, v.frac, v.raw)
	case r == 1:
		op := []hlo.Opcode{hlo.OpReal, hlo.OpImag}[g.rng.IntN(2)]
		g.keep(g.op(op, v).WithShape(hlo.ArrayShape(part, v.s().Dims...)).Instruction, v.exact, v.mag, v.frac, v.raw)
	case r == 2:
		g.keep(g.op(hlo.OpAbs, v).WithShape(hlo.ArrayShape(part, v.s().Dims...)).Instruction, false, 0, 0, false)
	case r == 3 && v.exact:
		g.keep(g.op(complexCut[g.rng.IntN(len(complexCut))], v).Instruction, false, 0, 0, false)
	default:
		g.keep(g.op(complexEntire[g.rng.IntN(len(complexEntire))], v).Instruction, false, 0, 0, false)
	}
}

// partner is a second operand for v: same shape and type.
func (g *gen) partner(v *gval, exact bool) *gval { return g.like(v.t(), v.s().Dims, exact) }

func (g *gen) binary() {
	v := g.any()
	t := v.t()
	switch {
	case t == hlo.PRED:
		w := g.partner(v, true)
		g.keep(g.op(predBinary[g.rng.IntN(len(predBinary))], v, w).Instruction, true, 0, 0, false)
	case t.IsComplex():
		if g.rng.IntN(4) == 0 {
			if !v.exact {
				return
			}
			w := g.partner(v, true)
			g.keep(g.op(complexJumpBin[g.rng.IntN(len(complexJumpBin))], v, w).Instruction, false, 0, 0, false)
			return
		}
		op := complexBinary[g.rng.IntN(len(complexBinary))]
		w := g.partner(v, v.exact && op != hlo.OpDivide)
		mag, frac := max(v.mag, w.mag)+1, max(v.frac, w.frac)
		if op == hlo.OpMultiply { // re = ac - bd, im = ad + bc
			mag, frac = v.mag+w.mag+1, v.frac+w.frac
		}
		g.keep(g.op(op, v, w).Instruction, v.exact && w.exact && op != hlo.OpDivide, mag, frac, false)
	case t.IsFloat():
		op := floatBinary[g.rng.IntN(len(floatBinary))]
		exactOp := op == hlo.OpAdd || op == hlo.OpSubtract || op == hlo.OpMultiply || op == hlo.OpMaximum || op == hlo.OpMinimum || op == hlo.OpRemainder
		w := g.partner(v, v.exact && exactOp)
		if op == hlo.OpRemainder && !(v.exact && w.exact) {
			return // discontinuous in both operands
		}
		exact := v.exact && w.exact && exactOp
		mag, frac := max(v.mag, w.mag), max(v.frac, w.frac)
		switch op {
		case hlo.OpAdd, hlo.OpSubtract:
			mag++
		case hlo.OpMultiply:
			mag, frac = v.mag+w.mag, v.frac+w.frac
		}
		g.keep(g.op(op, v, w).Instruction, exact, mag, frac, false)
	default:
		w := g.partner(v, true)
		g.keep(g.op(intBinary[g.rng.IntN(len(intBinary))], v, w).Instruction, true, 0, 0, false)
	}
}

// predLike is a pred value of v's shape, from a comparison of exact
// values where a new one is made.
func (g *gen) predLike(dims []int64) *gval {
	if p := g.pick(func(p *gval) bool { return p.t() == hlo.PRED && slices.Equal(p.s().Dims, dims) }); p != nil && g.rng.IntN(2) == 0 {
		return p
	}
	t := g.anyType()
	if t == hlo.PRED {
		t = hlo.S32
	}
	a, b := g.like(t, dims, true), g.like(t, dims, true)
	dirs := directionsOf(t)
	in := g.op(hlo.OpCompare, a, b).Set("direction", dirs[g.rng.IntN(len(dirs))])
	if t.IsFloat() && g.rng.IntN(4) == 0 {
		in.Set("type", "TOTALORDER")
	}
	return g.keep(in.WithShape(hlo.ArrayShape(hlo.PRED, dims...)).Instruction, true, 0, 0, false)
}

func (g *gen) compareSelect() {
	v := g.any()
	if g.rng.IntN(2) == 0 && (v.exact || !rounds(v.t())) && v.t() != hlo.PRED {
		w := g.partner(v, true)
		dirs := directionsOf(v.t())
		in := g.op(hlo.OpCompare, v, w).Set("direction", dirs[g.rng.IntN(len(dirs))])
		g.keep(in.WithShape(hlo.ArrayShape(hlo.PRED, v.s().Dims...)).Instruction, true, 0, 0, false)
		return
	}
	p := g.predLike(v.s().Dims)
	w := g.partner(v, false)
	if g.rng.IntN(4) == 0 { // a scalar predicate
		p = g.predLike(nil)
	}
	g.keep(g.op(hlo.OpSelect, p, v, w).Instruction, v.exact && w.exact, max(v.mag, w.mag), max(v.frac, w.frac), v.raw && w.raw)
}

func (g *gen) clamp() {
	v := g.any()
	if v.t() == hlo.PRED || v.t().IsComplex() {
		return
	}
	var lo, hi *gval
	if g.rng.IntN(2) == 0 {
		lo, hi = g.constant(v.t()), g.constant(v.t())
	} else {
		lo, hi = g.partner(v, v.exact), g.partner(v, v.exact)
	}
	g.keep(g.op(hlo.OpClamp, lo, v, hi).Instruction, v.exact && lo.exact && hi.exact, max(v.mag, lo.mag, hi.mag), max(v.frac, lo.frac, hi.frac), false)
}

func (g *gen) convert() {
	v := g.any()
	from, to := v.t(), g.anyType()
	if from.IsComplex() && !to.IsComplex() {
		return // XLA converts complex values to complex types only
	}
	if from.IsFloat() && !rounds(to) && !v.exact {
		return // float to integer or pred is discontinuous
	}
	exact := v.exact
	mag, frac := v.mag, v.frac
	if bits := from.Bits(); from.IsFloat() && to.Kind() == hlo.KindSigned && bits >= 8 && g.rng.IntN(3) == 0 {
		// stochastic-convert: rounded up or down by random bits of an
		// unsigned type of the float's width (v is exact: the fraction
		// the bits are compared with is the evaluator's too).
		r := g.like(hlo.UnsignedOfWidth(bits), v.s().Dims, true)
		g.keep(g.op(hlo.OpStochasticConvert, v, r).WithShape(hlo.ArrayShape(to, v.s().Dims...)).Instruction, true, to.Bits(), 0, false)
		return
	}
	if part, ok := to.ComplexPart(); ok && from == part && g.rng.IntN(2) == 0 {
		// complex(re, im) of two reals of its parts' type.
		w := g.partner(v, false)
		g.keep(g.op(hlo.OpComplex, v, w).WithShape(hlo.ArrayShape(to, v.s().Dims...)).Instruction, v.exact && w.exact, max(mag, w.mag), max(frac, w.frac), false)
		return
	}
	if !rounds(from) && rounds(to) {
		// Integers convert exactly while they fit the significand.
		mag, frac = from.Bits(), 0
		if from == hlo.PRED {
			mag = 1
		}
	}
	g.keep(g.op(hlo.OpConvert, v).WithShape(hlo.ArrayShape(to, v.s().Dims...)).Instruction, exact, mag, frac, false)
}

// bitcast reads the bits of an integer, or of a float whose bits are the
// inputs' (raw), as another type: of its width, or narrower (a new last
// dimension of the width ratio) or wider (the last dimension, of the
// ratio, taken away), as XLA's bitcast-convert does. A float made of
// bits is exact (nothing rounded it) and raw, its magnitude unknown.
func (g *gen) bitcast() {
	// Not complex values: XLA bitcasts them to complex types only.
	v := g.pick(func(v *gval) bool { return v.t() != hlo.PRED && !v.t().IsComplex() && (!v.t().IsFloat() || v.raw) })
	if v == nil {
		return
	}
	from, dims := v.t(), v.s().Dims
	var tos []hlo.ElementType
	for _, t := range g.all {
		switch {
		case t == hlo.PRED, t.IsComplex():
		case t.Bits() == from.Bits(), t.Bits() < from.Bits() && from.Bits()%t.Bits() == 0:
			tos = append(tos, t)
		case t.Bits() > from.Bits() && t.Bits()%from.Bits() == 0 && len(dims) > 0 && dims[len(dims)-1] == int64(t.Bits()/from.Bits()):
			tos = append(tos, t)
		}
	}
	if len(tos) == 0 {
		return
	}
	to := tos[g.rng.IntN(len(tos))]
	out := slices.Clone(dims)
	switch {
	case to.Bits() < from.Bits():
		out = append(out, int64(from.Bits()/to.Bits()))
	case to.Bits() > from.Bits():
		out = out[:len(out)-1]
	}
	r := g.keep(g.op(hlo.OpBitcastConvert, v).WithShape(hlo.ArrayShape(to, out...)).Instruction, true, 0, 0, true)
	if to.IsFloat() {
		_, maxExp := significand(to)
		// Kernels carry f16 and bf16 in f32 registers, where a copy
		// quiets a signaling NaN: their bits are not read back.
		r.exact, r.raw, r.mag, r.frac = true, to != hlo.F16 && to != hlo.BF16, maxExp, maxExp
	}
}

func (g *gen) same(v *gval, in *hlo.Instruction) *gval {
	return g.keep(in, v.exact, v.mag, v.frac, v.raw)
}

func (g *gen) broadcast() {
	v := g.any()
	if v.s().Rank() >= 3 {
		return
	}
	// Insert new dimensions around the operand's, which keep their order.
	dims := append([]int64{}, v.s().Dims...)
	idx := make([]int64, len(dims))
	for i := range idx {
		idx[i] = int64(i)
	}
	for k := 0; k < 1+g.rng.IntN(2) && len(dims) < 4; k++ {
		at := g.rng.IntN(len(dims) + 1)
		dims = slices.Insert(dims, at, 1+int64(g.rng.IntN(4)))
		for i := range idx {
			if idx[i] >= int64(at) {
				idx[i]++
			}
		}
	}
	g.same(v, g.op(hlo.OpBroadcast, v).Set("dimensions", list(idx)).WithShape(hlo.ArrayShape(v.t(), dims...)).Instruction)
}

func (g *gen) reshape() {
	v := g.any()
	n := v.s().NumElements()
	var dims []int64
	if n == 0 {
		dims = []int64{0, 1 + int64(g.rng.IntN(3))}
	} else {
		for rest := n; rest > 1; {
			var divs []int64
			for d := int64(2); d <= rest; d++ {
				if rest%d == 0 {
					divs = append(divs, d)
				}
			}
			d := divs[g.rng.IntN(len(divs))]
			dims = append(dims, d)
			rest /= d
		}
		if g.rng.IntN(3) == 0 {
			dims = slices.Insert(dims, g.rng.IntN(len(dims)+1), 1)
		}
	}
	g.same(v, g.op(hlo.OpReshape, v).WithShape(hlo.ArrayShape(v.t(), dims...)).Instruction)
}

func (g *gen) transpose() {
	v := g.any()
	perm := g.rng.Perm(v.s().Rank())
	p := make([]int64, len(perm))
	for i, x := range perm {
		p[i] = int64(x)
	}
	g.same(v, g.op(hlo.OpTranspose, v).Set("dimensions", list(p)).Instruction)
}

func (g *gen) slice() {
	v := g.any()
	var parts []string
	for _, d := range v.s().Dims {
		lo := int64(g.rng.IntN(int(d) + 1))
		hi := lo + int64(g.rng.IntN(int(d-lo)+1))
		stride := 1 + int64(g.rng.IntN(3))
		parts = append(parts, fmt.Sprintf("[%d:%d:%d]", lo, hi, stride))
	}
	g.same(v, g.op(hlo.OpSlice, v).Set("slice", "{"+strings.Join(parts, ", ")+"}").Instruction)
}

func (g *gen) reverse() {
	v := g.any()
	var ds []int64
	for i := 0; i < v.s().Rank(); i++ {
		if g.rng.IntN(2) == 0 {
			ds = append(ds, int64(i))
		}
	}
	g.same(v, g.op(hlo.OpReverse, v).Set("dimensions", list(ds)).Instruction)
}

func (g *gen) pad() {
	v := g.any()
	if v.s().Rank() == 0 {
		return
	}
	c := g.constant(v.t())
	var parts []string
	for _, d := range v.s().Dims {
		lo, hi := int64(g.rng.IntN(4)-1), int64(g.rng.IntN(4)-1)
		in := int64(0)
		if g.rng.IntN(3) == 0 {
			in = int64(g.rng.IntN(2) + 1)
		}
		if d == 0 {
			lo, hi = max(lo, 0), max(hi, 0)
		}
		// Negative padding may not cut more than there is.
		if n := d + max(d-1, 0)*in; lo+hi+n < 0 {
			lo, hi = 0, 0
		}
		parts = append(parts, fmt.Sprintf("%d_%d_%d", lo, hi, in))
	}
	g.keep(g.op(hlo.OpPad, v, c).Set("padding", strings.Join(parts, "x")).Instruction, v.exact && c.exact, max(v.mag, 3), max(v.frac, 3), v.raw)
}

func (g *gen) concatenate() {
	v := g.any()
	if v.s().Rank() == 0 {
		return
	}
	d := g.rng.IntN(v.s().Rank())
	ops := []*gval{v}
	for k := 0; k < 1+g.rng.IntN(2); k++ {
		dims := append([]int64{}, v.s().Dims...)
		dims[d] = int64(g.rng.IntN(4))
		ops = append(ops, g.like(v.t(), dims, false))
	}
	exact, raw, mag, frac := true, true, 0, 0
	for _, o := range ops {
		exact, raw, mag, frac = exact && o.exact, raw && o.raw, max(mag, o.mag), max(frac, o.frac)
	}
	g.keep(g.op(hlo.OpConcatenate, ops...).Set("dimensions", fmt.Sprintf("{%d}", d)).Instruction, exact, mag, frac, raw)
}

func (g *gen) iota() {
	t := g.anyType()
	dims := g.shape()
	if len(dims) == 0 || t == hlo.PRED {
		return
	}
	d := g.rng.IntN(len(dims))
	g.keep(g.e.Op(hlo.OpIota).Set("iota_dimension", fmt.Sprint(d)).WithShape(hlo.ArrayShape(t, dims...)).Instruction, true, 3, 0, true)
}
