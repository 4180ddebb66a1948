package lower

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// Complex numbers are rewritten into real arithmetic before fusion, so
// that every kernel kind, fusion and memory planning handle them with no
// code of their own (docs/ARCHITECTURE.md says why this representation).
//
// Inside a computation a complex array is a pair of real arrays (its
// real and imaginary parts), and each op on it becomes the real ops of
// its definition, following XLA's elemental emitter for the hard cases
// (division and abs without overflow, sqrt's branch cut, infinities).
// Where a complex value crosses a boundary (an entry parameter or
// result, a tuple, a while loop's state, a conditional's operand) it is
// its memory form: c64[d...] as f32[d..., 2], the interleaved pairs
// NumPy and XLA store, so that the bytes of a host tensor are the bytes
// of the device buffer. The pair is taken apart by slices where it is
// read and put together by a concatenate where it is written; fusion
// turns both into index arithmetic.

// hasComplex reports a complex leaf in s.
func hasComplex(s hlo.Shape) bool { return anyLeaf(s, hlo.ElementType.IsComplex) }

// memoryShape is s with each complex leaf in its memory form.
func memoryShape(s hlo.Shape) hlo.Shape {
	return mapLeaves(s, func(l hlo.Shape) hlo.Shape {
		if rt, ok := l.Elem.ComplexPart(); ok {
			return hlo.ArrayShape(rt, append(append([]int64{}, l.Dims...), 2)...)
		}
		return l
	})
}

// lowerComplex rewrites the entry (and what it calls) into real
// arithmetic. It works on the entry inlineCalls copied.
func lowerComplex(s *state) error {
	p := &complexPass{done: map[*hlo.Computation]*hlo.Computation{}}
	return s.retype(p.needs, p.rewrite)
}

type complexPass struct {
	done map[*hlo.Computation]*hlo.Computation
	n    int
}

// needs reports whether c or a computation it calls touches a complex
// value (or takes the real or imaginary part of a real one).
func (p *complexPass) needs(c *hlo.Computation) bool {
	return touches(c, hlo.ElementType.IsComplex, func(op hlo.Opcode) bool { return op == hlo.OpReal || op == hlo.OpImag })
}

// rewrite returns c with its complex values in real arithmetic, its
// parameters and root in memory form.
func (p *complexPass) rewrite(c *hlo.Computation) (*hlo.Computation, error) {
	if d := p.done[c]; d != nil {
		return d, nil
	}
	if !p.needs(c) {
		return c, nil
	}
	x := newCx(p)
	for _, in := range c.Instructions {
		if err := x.visit(in); err != nil {
			return nil, err
		}
		if x.err != nil {
			return nil, in.Errorf("rewriting complex arithmetic: %v", x.err)
		}
	}
	nc := *c
	nc.Params = make([]*hlo.Instruction, len(c.Params))
	for i, in := range c.Params {
		nc.Params[i] = x.whole[in]
	}
	nc.Root = x.memory(c.Root)
	nc.Instructions = x.out
	p.done[c] = &nc
	return &nc, nil
}

// cx rewrites one computation.
type cx struct {
	p     *complexPass
	out   []*hlo.Instruction
	pairs map[*hlo.Instruction][2]*hlo.Instruction // a complex array's parts
	whole map[*hlo.Instruction]*hlo.Instruction    // a value as one instruction (complex leaves in memory form)
	// split holds, for a tuple-valued op rewritten with its complex
	// leaves as two real leaves each (a variadic reduce or sort), each
	// original leaf's one or two new values.
	split map[*hlo.Instruction][][]*hlo.Instruction
	// consts are the DFT matrices made so far, one instruction each.
	consts map[*hlo.Literal]*hlo.Instruction
	err    error // the first error of the builders expr made
}

// fail records err unless an error came first.
func (x *cx) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

func newCx(p *complexPass) *cx {
	return &cx{p: p, pairs: map[*hlo.Instruction][2]*hlo.Instruction{}, whole: map[*hlo.Instruction]*hlo.Instruction{},
		split: map[*hlo.Instruction][][]*hlo.Instruction{}}
}

func (x *cx) add(in *hlo.Instruction) *hlo.Instruction {
	x.out = append(x.out, in)
	return in
}

// inst adds an instruction named after the one it helps compute.
func (x *cx) inst(from *hlo.Instruction, op hlo.Opcode, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	return x.place(from, &hlo.Instruction{Op: op, Shape: sh, Operands: ops})
}

// place adds in, named after the instruction from that it helps compute
// and placed where from is in the source.
func (x *cx) place(from, in *hlo.Instruction) *hlo.Instruction {
	x.p.n++
	in.Name, in.Pos = fmt.Sprintf("%s.c%d", from.Name, x.p.n), from.Pos
	return x.add(in)
}

// slice is positions lo, lo+step, ... < hi of dimension d of v, all of
// the others, helping compute from.
func (x *cx) slice(from, v *hlo.Instruction, d int, lo, hi, step int64) *hlo.Instruction {
	a, dims := sliceAlong(v.Shape.Dims, d, lo, hi, step)
	sl := x.inst(from, hlo.OpSlice, hlo.ArrayShape(v.Shape.Elem, dims...), v)
	sl.A.Slice = a
	return sl
}

// reshape is v with dimensions dims, helping compute from.
func (x *cx) reshape(from, v *hlo.Instruction, dims []int64) *hlo.Instruction {
	return x.inst(from, hlo.OpReshape, hlo.ArrayShape(v.Shape.Elem, dims...), v)
}

// memory is in as one instruction: a complex array's parts interleaved
// into its memory form by a concatenate along a new last dimension.
func (x *cx) memory(in *hlo.Instruction) *hlo.Instruction {
	if w := x.whole[in]; w != nil {
		return w
	}
	if refs, ok := x.split[in]; ok {
		elems := make([]*hlo.Instruction, len(refs))
		for i, r := range refs {
			if len(r) == 1 {
				elems[i] = r[0]
				continue
			}
			leaf := in.Shape.Tuple[i]
			tmp := &hlo.Instruction{Name: in.Name, Shape: leaf, Pos: in.Pos}
			x.pairs[tmp] = [2]*hlo.Instruction{r[0], r[1]}
			elems[i] = x.memory(tmp)
		}
		t := x.inst(in, hlo.OpTuple, memoryShape(in.Shape), elems...)
		x.whole[in] = t
		return t
	}
	pr := x.pairs[in]
	dims := in.Shape.Dims
	col := append(append([]int64{}, dims...), 1)
	re, im := x.reshape(in, pr[0], col), x.reshape(in, pr[1], col)
	w := x.inst(in, hlo.OpConcatenate, memoryShape(in.Shape), re, im)
	w.A.Dimensions, w.A.HasDimensions = []int64{int64(len(dims))}, true
	x.whole[in] = w
	return w
}

// parts is a complex array's real and imaginary parts: sliced out of its
// memory form where it came whole (a parameter, a tuple element).
func (x *cx) parts(in *hlo.Instruction) [2]*hlo.Instruction {
	if pr, ok := x.pairs[in]; ok {
		return pr
	}
	w := x.whole[in]
	var pr [2]*hlo.Instruction
	for k := range pr {
		pr[k] = x.reshape(in, x.slice(in, w, in.Shape.Rank(), int64(k), int64(k)+1, 1), in.Shape.Dims)
	}
	x.pairs[in] = pr
	return pr
}

// bitcast reinterprets a value's bytes as another type: a complex
// array's bytes are its memory form's, so the op is a real bitcast-convert
// between the two memory forms, reshaped to the dimensions the width
// ratio gives (split bitcast widths makes it one of a single width).
func (x *cx) bitcast(in *hlo.Instruction) *hlo.Instruction {
	src, want := x.memory(in.Operands[0]), memoryShape(in.Shape)
	from, to := src.Shape.Elem, want.Elem
	reshape := func(v *hlo.Instruction, dims []int64) *hlo.Instruction {
		if hlo.ArrayShape(v.Shape.Elem, dims...).SameDims(v.Shape) {
			return v
		}
		return x.reshape(in, v, dims)
	}
	switch {
	case from.Bits() > to.Bits():
		d := append(append([]int64{}, src.Shape.Dims...), int64(from.Bits()/to.Bits()))
		return reshape(x.inst(in, hlo.OpBitcastConvert, hlo.ArrayShape(to, d...), src), want.Dims)
	case from.Bits() < to.Bits():
		d := append(append([]int64{}, want.Dims...), int64(to.Bits()/from.Bits()))
		return x.inst(in, hlo.OpBitcastConvert, want, reshape(src, d))
	}
	return x.inst(in, hlo.OpBitcastConvert, want, reshape(src, want.Dims))
}

// clone copies in with new operands and shape.
func (x *cx) clone(in *hlo.Instruction, sh hlo.Shape, ops ...*hlo.Instruction) *hlo.Instruction {
	c := *in
	c.Shape, c.Operands = sh, ops
	if len(in.Called) > 0 {
		c.Called = append([]*hlo.Computation{}, in.Called...)
	}
	x.p.n++
	c.Name = fmt.Sprintf("%s.c%d", in.Name, x.p.n)
	return x.add(&c)
}

func (x *cx) visit(in *hlo.Instruction) error {
	complexOperand := false
	for _, o := range in.Operands {
		complexOperand = complexOperand || hasComplex(o.Shape)
	}
	complexResult := hasComplex(in.Shape)
	switch {
	case in.Op == hlo.OpParameter:
		p := *in
		p.Shape = memoryShape(in.Shape)
		x.whole[in] = x.add(&p)
		return nil
	case in.Op == hlo.OpConstant && complexResult:
		return x.constant(in)
	case in.Op == hlo.OpGetTupleElement && x.split[in.Operands[0]] != nil:
		r := x.split[in.Operands[0]][in.A.Index]
		if len(r) == 2 {
			x.pairs[in] = [2]*hlo.Instruction{r[0], r[1]}
		} else {
			x.whole[in] = r[0]
		}
		return nil
	case (in.Op == hlo.OpReal || in.Op == hlo.OpImag) && !complexOperand:
		// Of a real value: itself, and zeros (StableHLO allows both).
		if in.Op == hlo.OpReal {
			x.whole[in] = x.memory(in.Operands[0])
		} else {
			f := x.expr(in, in.Shape.Elem, in.Shape.Dims)
			x.whole[in] = f.K(0)
		}
		return nil
	case in.Op == hlo.OpBitcastConvert && (complexResult || complexOperand) &&
		(in.Shape.Elem != in.Operands[0].Shape.Elem || !in.Shape.SameDims(in.Operands[0].Shape)):
		x.whole[in] = x.bitcast(in)
		return nil
	case in.Op == hlo.OpReduce || in.Op == hlo.OpReduceWindow || in.Op == hlo.OpScatter || in.Op == hlo.OpSort:
		if complexResult || complexOperand {
			return x.splitOp(in)
		}
		fallthrough
	case in.Shape.IsTuple() || in.Op == hlo.OpGetTupleElement || in.Op == hlo.OpWhile || in.Op == hlo.OpConditional ||
		!complexResult && !complexOperand:
		// Structure, or no complex value at all: the same op on the
		// memory forms, its computations rewritten.
		if complexResult || complexOperand {
			switch in.Op {
			case hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpWhile, hlo.OpConditional:
			default:
				return x.unsupported(in)
			}
		}
		ops := make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = x.memory(o)
		}
		c := x.clone(in, memoryShape(in.Shape), ops...)
		c.Name = in.Name
		for i, cc := range in.Called {
			r, err := x.p.rewrite(cc)
			if err != nil {
				return err
			}
			c.Called[i] = r
		}
		x.whole[in] = c
		return nil
	}
	return x.arith(in)
}

func (x *cx) unsupported(in *hlo.Instruction) error {
	if in.Op == hlo.OpCustomCall { // expandLinalg took every target vkjit knows
		return in.Errorf("custom-call target %q is not supported (of complex numbers here)", in.A.Target)
	}
	return in.Errorf("complex numbers in %s are not supported on the device yet", in.Op)
}

// constant splits a complex literal into two real constants.
func (x *cx) constant(in *hlo.Instruction) error {
	rt, _ := in.Shape.Elem.ComplexPart()
	w := rt.Bytes()
	n := in.Shape.NumElements()
	data := in.Literal.Data
	var pr [2]*hlo.Instruction
	for k := range pr {
		b := make([]byte, 0, n*int64(w))
		for i := int64(0); i < n; i++ {
			off := (2*i + int64(k)) * int64(w)
			b = append(b, data[off:off+int64(w)]...)
		}
		sh := hlo.ArrayShape(rt, in.Shape.Dims...)
		lit, err := hlo.NewLiteral(sh, b)
		if err != nil {
			return in.Errorf("%v", err)
		}
		c := x.inst(in, hlo.OpConstant, sh)
		c.Literal = lit
		pr[k] = c
	}
	x.pairs[in] = pr
	return nil
}

// arith rewrites an op whose operands or result are complex arrays.
func (x *cx) arith(in *hlo.Instruction) error {
	rt, _ := in.Shape.Elem.ComplexPart()
	var ot hlo.ElementType // the complex operand's part type
	for _, o := range in.Operands {
		if t, ok := o.Shape.Elem.ComplexPart(); ok {
			ot = t
			break
		}
	}
	if ot == hlo.Invalid {
		ot = rt
	}
	f := x.expr(in, ot, in.Shape.Dims)
	op := func(i int) [2]*hlo.Instruction { return x.parts(in.Operands[i]) }
	set := func(re, im *hlo.Instruction) error { x.pairs[in] = [2]*hlo.Instruction{re, im}; return nil }
	asReal := func(v *hlo.Instruction) error { x.whole[in] = v; return nil }
	switch in.Op {
	case hlo.OpAdd:
		a, b := op(0), op(1)
		return set(f.Add(a[0], b[0]), f.Add(a[1], b[1]))
	case hlo.OpSubtract:
		a, b := op(0), op(1)
		return set(f.Sub(a[0], b[0]), f.Sub(a[1], b[1]))
	case hlo.OpNegate:
		a := op(0)
		return set(f.Neg(a[0]), f.Neg(a[1]))
	case hlo.OpMultiply:
		return set(f.cmul(op(0), op(1)))
	case hlo.OpDivide:
		return set(f.cdiv(op(0), op(1)))
	case hlo.OpAbs:
		a := op(0)
		return asReal(f.Hypot(a[0], a[1]))
	case hlo.OpSign:
		a := op(0)
		r := f.Hypot(a[0], a[1])
		zero := f.Cmp(r, "EQ", f.K(0))
		return set(f.Sel(zero, a[0], f.Div(a[0], r)), f.Sel(zero, a[1], f.Div(a[1], r)))
	case hlo.OpSqrt:
		return set(f.csqrt(op(0)))
	case hlo.OpRsqrt:
		re, im := f.csqrt(op(0))
		return set(f.cdiv([2]*hlo.Instruction{f.K(1), f.K(0)}, [2]*hlo.Instruction{re, im}))
	case hlo.OpExp:
		return set(f.cexp(op(0)))
	case hlo.OpExpm1:
		a := op(0)
		s := f.Op(hlo.OpSin, f.Mul(f.K(0.5), a[1]))
		re := f.Sub(f.Mul(f.Op(hlo.OpExpm1, a[0]), f.Op(hlo.OpCos, a[1])), f.Mul(f.K(2), f.Mul(s, s)))
		im := f.Mul(f.Op(hlo.OpExp, a[0]), f.Op(hlo.OpSin, a[1]))
		noIm := f.Cmp(a[1], "EQ", f.K(0))
		return set(f.Sel(noIm, f.Op(hlo.OpExpm1, a[0]), re), f.Sel(noIm, a[1], im))
	case hlo.OpLog:
		return set(f.clog(op(0)))
	case hlo.OpLog1p:
		a := op(0)
		small := f.And(f.Cmp(f.Abs(a[0]), "LT", f.K(0.5)), f.Cmp(f.Abs(a[1]), "LT", f.K(0.5)))
		a1 := f.Add(a[0], f.K(1))
		near := f.Mul(f.K(0.5), f.Op(hlo.OpLog1p, f.Add(f.Mul(a[0], f.Add(a[0], f.K(2))), f.Mul(a[1], a[1]))))
		far := f.Op(hlo.OpLog, f.Hypot(a1, a[1]))
		return set(f.Sel(small, near, far), f.Op(hlo.OpAtan2, a[1], a1))
	case hlo.OpSin:
		a := op(0)
		ch, sh := f.coshSinh(a[1])
		return set(f.Mul(f.Op(hlo.OpSin, a[0]), ch), f.Mul(f.Op(hlo.OpCos, a[0]), sh))
	case hlo.OpCos:
		a := op(0)
		ch, sh := f.coshSinh(a[1])
		return set(f.Mul(f.Op(hlo.OpCos, a[0]), ch), f.Neg(f.Mul(f.Op(hlo.OpSin, a[0]), sh)))
	case hlo.OpTan:
		a := op(0)
		return set(f.ctan(a[0], a[1]))
	case hlo.OpTanh:
		// tanh(z) = -i tan(iz), iz = -b + ai; 0 - p, not -p, so that a
		// zero imaginary part is +0, as XLA gives it.
		a := op(0)
		p, q := f.ctan(f.Neg(a[1]), a[0])
		return set(q, f.Sub(f.K(0), p))
	case hlo.OpPower:
		return set(f.cpow(op(0), op(1)))
	case hlo.OpCbrt:
		// The principal cube root: cbrt|z| at a third of the argument.
		a := op(0)
		r := f.Op(hlo.OpCbrt, f.Hypot(a[0], a[1]))
		t := f.Div(f.Op(hlo.OpAtan2, a[1], a[0]), f.K(3))
		return set(f.Mul(r, f.Op(hlo.OpCos, t)), f.Mul(r, f.Op(hlo.OpSin, t)))
	case hlo.OpLogistic:
		a := op(0)
		er, ei := f.cexp([2]*hlo.Instruction{f.Neg(a[0]), f.Neg(a[1])})
		return set(f.cdiv([2]*hlo.Instruction{f.K(1), f.K(0)}, [2]*hlo.Instruction{f.Add(f.K(1), er), ei}))
	case hlo.OpAtan2:
		// atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), as StableHLO
		// defines it for complex numbers, with XLA's steps: i y and the
		// last product by -i are complex products, whose 0 * inf are NaN
		// and whose signed zeros pick the side of log's cut.
		y, xx := op(0), op(1)
		zero, one := f.K(0), f.K(1)
		iyr, iyi := f.cmul([2]*hlo.Instruction{zero, one}, y)
		num := [2]*hlo.Instruction{f.Add(xx[0], iyr), f.Add(xx[1], iyi)}
		x2r, x2i := f.cmul(xx, xx)
		y2r, y2i := f.cmul(y, y)
		sr, si := f.csqrt([2]*hlo.Instruction{f.Add(x2r, y2r), f.Add(x2i, y2i)})
		qr, qi := f.cdiv(num, [2]*hlo.Instruction{sr, si})
		lr, li := f.clog([2]*hlo.Instruction{qr, qi})
		return set(f.cmul([2]*hlo.Instruction{zero, f.K(-1)}, [2]*hlo.Instruction{lr, li}))
	case hlo.OpBitcastConvert:
		if in.Shape.Elem != in.Operands[0].Shape.Elem || !in.Shape.SameDims(in.Operands[0].Shape) {
			return x.unsupported(in)
		}
		a := op(0)
		return set(a[0], a[1])
	case hlo.OpReal:
		return asReal(op(0)[0])
	case hlo.OpImag:
		return asReal(op(0)[1])
	case hlo.OpComplex:
		return set(x.memory(in.Operands[0]), x.memory(in.Operands[1]))
	case hlo.OpCompare:
		a, b := op(0), op(1)
		switch in.A.Direction {
		case "EQ":
			return asReal(f.And(f.Cmp(a[0], "EQ", b[0]), f.Cmp(a[1], "EQ", b[1])))
		case "NE":
			return asReal(f.Or(f.Cmp(a[0], "NE", b[0]), f.Cmp(a[1], "NE", b[1])))
		}
		return in.Errorf("compare %s of complex numbers is not defined", in.A.Direction)
	case hlo.OpSelect:
		p := x.memory(in.Operands[0])
		a, b := op(1), op(2)
		return set(f.Sel(p, a[0], b[0]), f.Sel(p, a[1], b[1]))
	case hlo.OpConvert:
		from := in.Operands[0]
		if from.Shape.Elem.IsComplex() {
			a := op(0)
			if !hasComplex(in.Shape) { // the real part, as XLA converts
				return asReal(f.Convert(a[0], in.Shape.Elem))
			}
			return set(f.Convert(a[0], rt), f.Convert(a[1], rt))
		}
		g := x.expr(in, rt, in.Shape.Dims)
		return set(g.Convert(x.memory(from), rt), g.K(0))
	case hlo.OpBroadcast, hlo.OpReshape, hlo.OpTranspose, hlo.OpSlice, hlo.OpReverse, hlo.OpCopy,
		hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice, hlo.OpPad, hlo.OpConcatenate, hlo.OpGather:
		return x.movement(in, rt)
	case hlo.OpDot, hlo.OpConvolution:
		// A real operand of a complex product is converted to the
		// product's type, (x, 0), as XLA upcasts mixed operands.
		operand := func(i int) [2]*hlo.Instruction {
			o := in.Operands[i]
			if o.Shape.Elem.IsComplex() {
				return op(i)
			}
			g := x.expr(in, rt, o.Shape.Dims)
			return [2]*hlo.Instruction{g.Convert(x.memory(o), rt), g.K(0)}
		}
		a, b := operand(0), operand(1)
		sh := hlo.ArrayShape(rt, in.Shape.Dims...)
		prod := func(p, q *hlo.Instruction) *hlo.Instruction { return x.clone(in, sh, p, q) }
		g := x.expr(in, rt, in.Shape.Dims)
		return set(g.Sub(prod(a[0], b[0]), prod(a[1], b[1])), g.Add(prod(a[0], b[1]), prod(a[1], b[0])))
	case hlo.OpFft:
		return x.fft(in)
	case hlo.OpIota:
		g := x.expr(in, rt, in.Shape.Dims)
		re := x.clone(in, g.Shape())
		return set(re, g.K(0))
	case hlo.OpMaximum, hlo.OpMinimum:
		// XLA orders complex numbers lexicographically: real part first.
		a, b := op(0), op(1)
		dir := "GT"
		if in.Op == hlo.OpMinimum {
			dir = "LT"
		}
		first := f.Or(f.Cmp(a[0], dir, b[0]), f.And(f.Cmp(a[0], "EQ", b[0]), f.Cmp(a[1], dir, b[1])))
		nan := f.Or(f.Or(f.IsNaN(a[0]), f.IsNaN(a[1])), f.Not(f.Or(f.Or(f.IsNaN(b[0]), f.IsNaN(b[1])), f.Not(first))))
		return set(f.Sel(nan, a[0], b[0]), f.Sel(nan, a[1], b[1]))
	}
	return x.unsupported(in)
}

// movement applies a data-movement op to each part; real operands (the
// indices of a gather or dynamic slice) go to both. A dynamic slice or
// update of an array that came whole (a loop's state, a parameter) is
// the op on its memory form instead, the pair's dimension whole: the
// array is then only read and written at computed indices, as a device
// loop needs of its large state (sliced into parts, it was a value of
// the whole array's size).
func (x *cx) movement(in *hlo.Instruction, rt hlo.ElementType) error {
	if (in.Op == hlo.OpDynamicSlice || in.Op == hlo.OpDynamicUpdateSlice) && x.whole[in.Operands[0]] != nil {
		ops := []*hlo.Instruction{x.whole[in.Operands[0]]}
		starts := in.Operands[1:]
		if in.Op == hlo.OpDynamicUpdateSlice {
			ops = append(ops, x.memory(in.Operands[1]))
			starts = in.Operands[2:]
		}
		for _, o := range starts {
			ops = append(ops, x.memory(o))
		}
		it := hlo.S32 // the pair's start, of the other starts' type
		if len(starts) > 0 {
			it = starts[0].Shape.Elem
		}
		zero := x.expr(in, it, nil).K(0)
		c := x.clone(in, memoryShape(in.Shape), append(ops, zero)...)
		if in.Op == hlo.OpDynamicSlice {
			c.A.DynSliceSizes = append(append([]int64{}, in.A.DynSliceSizes...), 2)
		}
		x.whole[in] = c
		return nil
	}
	var pr [2]*hlo.Instruction
	for k := range pr {
		ops := make([]*hlo.Instruction, len(in.Operands))
		for i, o := range in.Operands {
			if hasComplex(o.Shape) {
				ops[i] = x.parts(o)[k]
			} else {
				ops[i] = x.memory(o)
			}
		}
		pr[k] = x.clone(in, hlo.ArrayShape(rt, in.Shape.Dims...), ops...)
	}
	x.pairs[in] = pr
	return nil
}

// splitOp rewrites a reduce, reduce-window, scatter or sort of complex
// operands: each complex operand becomes two real ones, the computation
// takes and returns the parts (splitComp), and each complex result leaf
// is two real leaves. A reduce of one operand that sums reduces its
// parts on their own instead, each with the real sum: two plain
// reductions, which fuse and take the row and subgroup forms.
func (x *cx) splitOp(in *hlo.Instruction) error {
	rt, _ := in.Shape.Elem.ComplexPart()
	if c := in.Called[0]; (in.Op == hlo.OpReduce || in.Op == hlo.OpReduceWindow) && len(in.Operands) == 2 && !in.Shape.IsTuple() &&
		c.Root.Op == hlo.OpAdd && c.Root.Operands[0].Op == hlo.OpParameter && c.Root.Operands[1].Op == hlo.OpParameter &&
		c.Root.Operands[0] != c.Root.Operands[1] {
		return x.separable(in, rt)
	}
	if len(in.Called) != 1 {
		return x.unsupported(in)
	}
	nc, err := x.p.splitComp(in.Called[0], in.Op == hlo.OpSort)
	if err != nil {
		return err
	}
	var ops []*hlo.Instruction
	for _, o := range in.Operands {
		if hasComplex(o.Shape) {
			pr := x.parts(o)
			ops = append(ops, pr[0], pr[1])
		} else {
			ops = append(ops, x.memory(o))
		}
	}
	leaves := in.Shape.Leaves()
	var shapes []hlo.Shape
	for _, l := range leaves {
		if t, ok := l.Elem.ComplexPart(); ok {
			shapes = append(shapes, hlo.ArrayShape(t, l.Dims...), hlo.ArrayShape(t, l.Dims...))
		} else {
			shapes = append(shapes, l)
		}
	}
	r := x.clone(in, hlo.TupleShape(shapes...), ops...)
	r.Called[0] = nc
	refs := make([][]*hlo.Instruction, len(leaves))
	j := 0
	for i, l := range leaves {
		n := 1
		if hasComplex(l) {
			n = 2
		}
		for range n {
			g := x.inst(in, hlo.OpGetTupleElement, shapes[j], r)
			g.A.Index = int64(j)
			refs[i] = append(refs[i], g)
			j++
		}
	}
	if in.Shape.IsTuple() {
		x.split[in] = refs
	} else {
		x.pairs[in] = [2]*hlo.Instruction{refs[0][0], refs[0][1]}
	}
	return nil
}

// splitComp rewrites a computation of scalars (a reducer, a scatter's
// update, a comparator) so that each complex parameter is two real ones
// in its place (for a comparator, whose parameters come in (lhs, rhs)
// pairs, the real parts' pair and then the imaginary parts'), and its
// root a tuple of its results with each complex one as two.
func (p *complexPass) splitComp(c *hlo.Computation, pairwise bool) (*hlo.Computation, error) {
	x := newCx(p)
	groups := make([][]*hlo.Instruction, len(c.Params))
	for i, in := range c.Params {
		if t, ok := in.Shape.Elem.ComplexPart(); ok {
			var pr [2]*hlo.Instruction
			for k, part := range []string{"re", "im"} {
				pr[k] = &hlo.Instruction{Name: in.Name + "." + part, Op: hlo.OpParameter, Shape: hlo.ArrayShape(t, in.Shape.Dims...), Pos: in.Pos}
			}
			x.pairs[in] = pr
			groups[i] = pr[:]
		} else {
			q := *in
			x.whole[in] = &q
			groups[i] = []*hlo.Instruction{&q}
		}
	}
	var params []*hlo.Instruction
	if pairwise {
		for i := 0; i+1 < len(groups); i += 2 {
			for k := range groups[i] {
				params = append(params, groups[i][k], groups[i+1][k])
			}
		}
	} else {
		for _, g := range groups {
			params = append(params, g...)
		}
	}
	for i, q := range params {
		q.ParamNum = i
		x.add(q)
	}
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		if err := x.visit(in); err != nil {
			return nil, err
		}
		if x.err != nil {
			return nil, in.Errorf("rewriting complex arithmetic: %v", x.err)
		}
	}
	results := []*hlo.Instruction{c.Root}
	if c.Root.Shape.IsTuple() {
		if c.Root.Op != hlo.OpTuple {
			return nil, c.Root.Errorf("complex numbers in a computation whose root is not a tuple are not supported on the device yet")
		}
		results = c.Root.Operands
	}
	var outs []*hlo.Instruction
	var shapes []hlo.Shape
	for _, r := range results {
		if hasComplex(r.Shape) {
			pr := x.parts(r)
			outs = append(outs, pr[0], pr[1])
		} else {
			outs = append(outs, x.memory(r))
		}
	}
	for _, o := range outs {
		shapes = append(shapes, o.Shape)
	}
	nc := *c
	nc.Name = c.Name + ".parts"
	nc.Params = params
	if len(outs) == 1 { // a comparator's pred
		nc.Root = outs[0]
	} else {
		nc.Root = x.inst(c.Root, hlo.OpTuple, hlo.TupleShape(shapes...), outs...)
	}
	nc.Instructions = x.out
	return &nc, nil
}

// separable rewrites a reduce or reduce-window of one complex operand
// whose computation adds.
func (x *cx) separable(in *hlo.Instruction, rt hlo.ElementType) error {
	c := in.Called[0]
	sum := realAdd(c.Name+".real", rt, in.Pos)
	a, init := x.parts(in.Operands[0]), x.parts(in.Operands[1])
	var pr [2]*hlo.Instruction
	for k := range pr {
		r := x.clone(in, hlo.ArrayShape(rt, in.Shape.Dims...), a[k], init[k])
		r.Called = []*hlo.Computation{sum}
		pr[k] = r
	}
	x.pairs[in] = pr
	return nil
}

// realAdd is the computation (a, b) -> a + b of scalars of type t.
func realAdd(name string, t hlo.ElementType, pos hlo.Pos) *hlo.Computation {
	sh := hlo.ArrayShape(t)
	a := &hlo.Instruction{Name: "a", Op: hlo.OpParameter, Shape: sh, ParamNum: 0, Pos: pos}
	b := &hlo.Instruction{Name: "b", Op: hlo.OpParameter, Shape: sh, ParamNum: 1, Pos: pos}
	s := &hlo.Instruction{Name: "sum", Op: hlo.OpAdd, Shape: sh, Operands: []*hlo.Instruction{a, b}, Pos: pos}
	return &hlo.Computation{Name: name, Pos: pos, Params: []*hlo.Instruction{a, b}, Instructions: []*hlo.Instruction{a, b, s}, Root: s}
}
