package lower

import (
	"encoding/binary"
	"fmt"
	"math"

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

// realPart is the real type of a complex type's parts.
func realPart(t hlo.ElementType) (hlo.ElementType, bool) {
	switch t {
	case hlo.C64:
		return hlo.F32, true
	case hlo.C128:
		return hlo.F64, true
	}
	return t, false
}

// anyLeaf reports whether an array leaf of s has an element type p
// accepts.
func anyLeaf(s hlo.Shape, p func(hlo.ElementType) bool) bool {
	if s.IsTuple() {
		for _, e := range s.Tuple {
			if anyLeaf(e, p) {
				return true
			}
		}
		return false
	}
	return p(s.Elem)
}

// mapLeaves is s with each array leaf replaced by f of it.
func mapLeaves(s hlo.Shape, f func(hlo.Shape) hlo.Shape) hlo.Shape {
	if s.IsTuple() {
		out := hlo.Shape{Elem: hlo.Tuple, Tuple: make([]hlo.Shape, len(s.Tuple))}
		for i, e := range s.Tuple {
			out.Tuple[i] = mapLeaves(e, f)
		}
		return out
	}
	return f(s)
}

// touches reports whether c, or a computation it calls, has a value or
// an operand with a leaf whose element type p accepts, or an op q
// accepts (q may be nil).
func touches(c *hlo.Computation, p func(hlo.ElementType) bool, q func(hlo.Opcode) bool) bool {
	for _, in := range c.Instructions {
		if anyLeaf(in.Shape, p) || q != nil && q(in.Op) {
			return true
		}
		for _, o := range in.Operands {
			if anyLeaf(o.Shape, p) {
				return true
			}
		}
		for _, cc := range in.Called {
			if touches(cc, p, q) {
				return true
			}
		}
	}
	return false
}

func isComplexType(t hlo.ElementType) bool { _, ok := realPart(t); return ok }

// hasComplex reports a complex leaf in s.
func hasComplex(s hlo.Shape) bool { return anyLeaf(s, isComplexType) }

// memoryShape is s with each complex leaf in its memory form.
func memoryShape(s hlo.Shape) hlo.Shape {
	return mapLeaves(s, func(l hlo.Shape) hlo.Shape {
		if rt, ok := realPart(l.Elem); ok {
			return hlo.ArrayShape(rt, append(append([]int64{}, l.Dims...), 2)...)
		}
		return l
	})
}

// apiShapes is what the entry looked like before a pass changed its
// element types (complex numbers to their parts' type, 2- and 4-bit
// integers to 8-bit ones): the program's API keeps those shapes, its
// buffers hold the same bytes in a type the device has.
type apiShapes struct {
	params []hlo.Shape // parameter leaves, depth-first
	root   hlo.Shape
}

// keepAPI records the entry's shapes before the first pass that changes
// them.
func (s *state) keepAPI() {
	if s.api != nil {
		return
	}
	entry := s.mod.Entry
	b := &apiShapes{root: entry.Root.Shape}
	for _, in := range entry.Params {
		b.params = append(b.params, in.Shape.Leaves()...)
	}
	s.api = b
}

// retype runs a pass that changes element types (lowerComplex,
// widenSubByte) on the entry, when needs says it has any: the API's
// shapes are kept first, and the entry (rewrite's copy, with the
// computations it calls rewritten too) replaces the module's.
func (s *state) retype(needs func(*hlo.Computation) bool, rewrite func(*hlo.Computation) (*hlo.Computation, error)) error {
	if !needs(s.mod.Entry) {
		return nil
	}
	s.keepAPI()
	c, err := rewrite(s.mod.Entry)
	if err != nil {
		return err
	}
	mod := *s.mod
	mod.Entry = c
	s.mod = &mod
	return nil
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
	return touches(c, isComplexType, func(op hlo.Opcode) bool { return op == hlo.OpReal || op == hlo.OpImag })
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
	x.p.n++
	return x.add(&hlo.Instruction{Name: fmt.Sprintf("%s.c%d", from.Name, x.p.n), Op: op, Shape: sh, Operands: ops, Pos: from.Pos})
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
	re := x.inst(in, hlo.OpReshape, hlo.ArrayShape(pr[0].Shape.Elem, col...), pr[0])
	im := x.inst(in, hlo.OpReshape, hlo.ArrayShape(pr[0].Shape.Elem, col...), pr[1])
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
	rt, _ := realPart(in.Shape.Elem)
	var pr [2]*hlo.Instruction
	for k := range pr {
		sl := x.inst(in, hlo.OpSlice, hlo.ArrayShape(rt, append(append([]int64{}, in.Shape.Dims...), 1)...), w)
		for _, d := range in.Shape.Dims {
			sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: 0, Limit: d, Stride: 1})
		}
		sl.A.Slice = append(sl.A.Slice, hlo.SliceDim{Start: int64(k), Limit: int64(k) + 1, Stride: 1})
		pr[k] = x.inst(in, hlo.OpReshape, hlo.ArrayShape(rt, in.Shape.Dims...), sl)
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
		return x.inst(in, hlo.OpReshape, hlo.ArrayShape(v.Shape.Elem, dims...), v)
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
			f := &rexpr{x: x, in: in, t: in.Shape.Elem, dims: in.Shape.Dims}
			x.whole[in] = f.k(0)
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
	return in.Errorf("complex numbers in %s are not supported on the device yet", in.Op)
}

// constant splits a complex literal into two real constants.
func (x *cx) constant(in *hlo.Instruction) error {
	rt, _ := realPart(in.Shape.Elem)
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
	rt, _ := realPart(in.Shape.Elem)
	var ot hlo.ElementType // the complex operand's part type
	for _, o := range in.Operands {
		if t, ok := realPart(o.Shape.Elem); ok {
			ot = t
			break
		}
	}
	if ot == hlo.Invalid {
		ot = rt
	}
	f := &rexpr{x: x, in: in, t: ot, dims: in.Shape.Dims}
	op := func(i int) [2]*hlo.Instruction { return x.parts(in.Operands[i]) }
	set := func(re, im *hlo.Instruction) error { x.pairs[in] = [2]*hlo.Instruction{re, im}; return nil }
	asReal := func(v *hlo.Instruction) error { x.whole[in] = v; return nil }
	switch in.Op {
	case hlo.OpAdd:
		a, b := op(0), op(1)
		return set(f.add(a[0], b[0]), f.add(a[1], b[1]))
	case hlo.OpSubtract:
		a, b := op(0), op(1)
		return set(f.sub(a[0], b[0]), f.sub(a[1], b[1]))
	case hlo.OpNegate:
		a := op(0)
		return set(f.neg(a[0]), f.neg(a[1]))
	case hlo.OpMultiply:
		return set(f.cmul(op(0), op(1)))
	case hlo.OpDivide:
		return set(f.cdiv(op(0), op(1)))
	case hlo.OpAbs:
		a := op(0)
		return asReal(f.hypot(a[0], a[1]))
	case hlo.OpSign:
		a := op(0)
		r := f.hypot(a[0], a[1])
		zero := f.cmp(r, "EQ", f.k(0))
		return set(f.sel(zero, a[0], f.div(a[0], r)), f.sel(zero, a[1], f.div(a[1], r)))
	case hlo.OpSqrt:
		return set(f.csqrt(op(0)))
	case hlo.OpRsqrt:
		re, im := f.csqrt(op(0))
		return set(f.cdiv([2]*hlo.Instruction{f.k(1), f.k(0)}, [2]*hlo.Instruction{re, im}))
	case hlo.OpExp:
		return set(f.cexp(op(0)))
	case hlo.OpExpm1:
		a := op(0)
		s := f.op(hlo.OpSin, f.mul(f.k(0.5), a[1]))
		re := f.sub(f.mul(f.op(hlo.OpExpm1, a[0]), f.op(hlo.OpCos, a[1])), f.mul(f.k(2), f.mul(s, s)))
		im := f.mul(f.op(hlo.OpExp, a[0]), f.op(hlo.OpSin, a[1]))
		noIm := f.cmp(a[1], "EQ", f.k(0))
		return set(f.sel(noIm, f.op(hlo.OpExpm1, a[0]), re), f.sel(noIm, a[1], im))
	case hlo.OpLog:
		return set(f.clog(op(0)))
	case hlo.OpLog1p:
		a := op(0)
		small := f.and(f.cmp(f.abs(a[0]), "LT", f.k(0.5)), f.cmp(f.abs(a[1]), "LT", f.k(0.5)))
		a1 := f.add(a[0], f.k(1))
		near := f.mul(f.k(0.5), f.op(hlo.OpLog1p, f.add(f.mul(a[0], f.add(a[0], f.k(2))), f.mul(a[1], a[1]))))
		far := f.op(hlo.OpLog, f.hypot(a1, a[1]))
		return set(f.sel(small, near, far), f.op(hlo.OpAtan2, a[1], a1))
	case hlo.OpSin:
		a := op(0)
		ch, sh := f.coshSinh(a[1])
		return set(f.mul(f.op(hlo.OpSin, a[0]), ch), f.mul(f.op(hlo.OpCos, a[0]), sh))
	case hlo.OpCos:
		a := op(0)
		ch, sh := f.coshSinh(a[1])
		return set(f.mul(f.op(hlo.OpCos, a[0]), ch), f.neg(f.mul(f.op(hlo.OpSin, a[0]), sh)))
	case hlo.OpTan:
		a := op(0)
		return set(f.ctan(a[0], a[1]))
	case hlo.OpTanh:
		// tanh(z) = -i tan(iz), iz = -b + ai.
		a := op(0)
		p, q := f.ctan(f.neg(a[1]), a[0])
		return set(q, f.neg(p))
	case hlo.OpPower:
		return set(f.cpow(op(0), op(1)))
	case hlo.OpCbrt:
		// The principal cube root: cbrt|z| at a third of the argument.
		a := op(0)
		r := f.op(hlo.OpCbrt, f.hypot(a[0], a[1]))
		t := f.div(f.op(hlo.OpAtan2, a[1], a[0]), f.k(3))
		return set(f.mul(r, f.op(hlo.OpCos, t)), f.mul(r, f.op(hlo.OpSin, t)))
	case hlo.OpLogistic:
		a := op(0)
		er, ei := f.cexp([2]*hlo.Instruction{f.neg(a[0]), f.neg(a[1])})
		return set(f.cdiv([2]*hlo.Instruction{f.k(1), f.k(0)}, [2]*hlo.Instruction{f.add(f.k(1), er), ei}))
	case hlo.OpAtan2:
		// atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), as StableHLO
		// defines it for complex numbers.
		y, xx := op(0), op(1)
		num := [2]*hlo.Instruction{f.sub(xx[0], y[1]), f.add(xx[1], y[0])}
		x2r, x2i := f.cmul(xx, xx)
		y2r, y2i := f.cmul(y, y)
		sr, si := f.csqrt([2]*hlo.Instruction{f.add(x2r, y2r), f.add(x2i, y2i)})
		qr, qi := f.cdiv(num, [2]*hlo.Instruction{sr, si})
		lr, li := f.clog([2]*hlo.Instruction{qr, qi})
		return set(li, f.neg(lr))
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
			return asReal(f.and(f.cmp(a[0], "EQ", b[0]), f.cmp(a[1], "EQ", b[1])))
		case "NE":
			return asReal(f.or(f.cmp(a[0], "NE", b[0]), f.cmp(a[1], "NE", b[1])))
		}
		return in.Errorf("compare %s of complex numbers is not defined", in.A.Direction)
	case hlo.OpSelect:
		p := x.memory(in.Operands[0])
		a, b := op(1), op(2)
		return set(f.sel(p, a[0], b[0]), f.sel(p, a[1], b[1]))
	case hlo.OpConvert:
		from := in.Operands[0]
		if _, ok := realPart(from.Shape.Elem); ok {
			a := op(0)
			if !hasComplex(in.Shape) { // the real part, as XLA converts
				return asReal(f.convert(a[0], in.Shape.Elem))
			}
			return set(f.convert(a[0], rt), f.convert(a[1], rt))
		}
		g := &rexpr{x: x, in: in, t: rt, dims: in.Shape.Dims}
		return set(g.convert(x.memory(from), rt), g.k(0))
	case hlo.OpBroadcast, hlo.OpReshape, hlo.OpTranspose, hlo.OpSlice, hlo.OpReverse, hlo.OpCopy,
		hlo.OpDynamicSlice, hlo.OpDynamicUpdateSlice, hlo.OpPad, hlo.OpConcatenate, hlo.OpGather:
		return x.movement(in, rt)
	case hlo.OpDot, hlo.OpConvolution:
		a, b := op(0), op(1)
		sh := hlo.ArrayShape(rt, in.Shape.Dims...)
		prod := func(p, q *hlo.Instruction) *hlo.Instruction { return x.clone(in, sh, p, q) }
		g := &rexpr{x: x, in: in, t: rt, dims: in.Shape.Dims}
		return set(g.sub(prod(a[0], b[0]), prod(a[1], b[1])), g.add(prod(a[0], b[1]), prod(a[1], b[0])))
	case hlo.OpFft:
		return x.fft(in)
	case hlo.OpIota:
		g := &rexpr{x: x, in: in, t: rt, dims: in.Shape.Dims}
		re := x.clone(in, g.sh())
		return set(re, g.k(0))
	case hlo.OpMaximum, hlo.OpMinimum:
		// XLA orders complex numbers lexicographically: real part first.
		a, b := op(0), op(1)
		dir := "GT"
		if in.Op == hlo.OpMinimum {
			dir = "LT"
		}
		first := f.or(f.cmp(a[0], dir, b[0]), f.and(f.cmp(a[0], "EQ", b[0]), f.cmp(a[1], dir, b[1])))
		nan := f.or(f.or(f.isNaN(a[0]), f.isNaN(a[1])), f.not(f.or(f.or(f.isNaN(b[0]), f.isNaN(b[1])), f.not(first))))
		return set(f.sel(nan, a[0], b[0]), f.sel(nan, a[1], b[1]))
	}
	return x.unsupported(in)
}

// movement applies a data-movement op to each part; real operands (the
// indices of a gather or dynamic slice) go to both.
func (x *cx) movement(in *hlo.Instruction, rt hlo.ElementType) error {
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
	rt, _ := realPart(in.Shape.Elem)
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
		if t, ok := realPart(l.Elem); ok {
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
		if t, ok := realPart(in.Shape.Elem); ok {
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

// rexpr builds real elementwise ops of one shape for a complex op.
type rexpr struct {
	x    *cx
	in   *hlo.Instruction
	t    hlo.ElementType
	dims []int64
}

func (f *rexpr) sh() hlo.Shape { return hlo.ArrayShape(f.t, f.dims...) }

func (f *rexpr) op(op hlo.Opcode, ops ...*hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, op, f.sh(), ops...)
}

// k is the constant v broadcast to the shape.
func (f *rexpr) k(v float64) *hlo.Instruction {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	if f.t == hlo.F32 {
		b = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	}
	lit, _ := hlo.NewLiteral(hlo.ArrayShape(f.t), b)
	c := f.x.inst(f.in, hlo.OpConstant, hlo.ArrayShape(f.t))
	c.Literal = lit
	if len(f.dims) == 0 {
		return c
	}
	bc := f.x.inst(f.in, hlo.OpBroadcast, f.sh(), c)
	bc.A.HasDimensions = true
	return bc
}

func (f *rexpr) add(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpAdd, a, b) }
func (f *rexpr) sub(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpSubtract, a, b) }
func (f *rexpr) mul(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpMultiply, a, b) }
func (f *rexpr) div(a, b *hlo.Instruction) *hlo.Instruction { return f.op(hlo.OpDivide, a, b) }
func (f *rexpr) neg(a *hlo.Instruction) *hlo.Instruction    { return f.op(hlo.OpNegate, a) }
func (f *rexpr) abs(a *hlo.Instruction) *hlo.Instruction    { return f.op(hlo.OpAbs, a) }

func (f *rexpr) pred(op hlo.Opcode, ops ...*hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, op, hlo.ArrayShape(hlo.PRED, f.dims...), ops...)
}

func (f *rexpr) cmp(a *hlo.Instruction, dir string, b *hlo.Instruction) *hlo.Instruction {
	c := f.pred(hlo.OpCompare, a, b)
	c.A.Direction = dir
	return c
}
func (f *rexpr) and(a, b *hlo.Instruction) *hlo.Instruction { return f.pred(hlo.OpAnd, a, b) }
func (f *rexpr) or(a, b *hlo.Instruction) *hlo.Instruction  { return f.pred(hlo.OpOr, a, b) }
func (f *rexpr) not(a *hlo.Instruction) *hlo.Instruction    { return f.pred(hlo.OpNot, a) }
func (f *rexpr) isInf(a *hlo.Instruction) *hlo.Instruction {
	return f.cmp(f.abs(a), "EQ", f.k(math.Inf(1)))
}
func (f *rexpr) isNaN(a *hlo.Instruction) *hlo.Instruction { return f.cmp(a, "NE", a) }
func (f *rexpr) finite(a *hlo.Instruction) *hlo.Instruction {
	return f.pred(hlo.OpIsFinite, a)
}

func (f *rexpr) sel(p, a, b *hlo.Instruction) *hlo.Instruction {
	return f.x.inst(f.in, hlo.OpSelect, a.Shape, p, a, b)
}

func (f *rexpr) convert(a *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	return f.x.inst(f.in, hlo.OpConvert, hlo.ArrayShape(t, f.dims...), a)
}

// copySign is |m| with the sign of s.
func (f *rexpr) copySign(m, s *hlo.Instruction) *hlo.Instruction {
	neg := f.cmp(s, "LT", f.k(0))
	negZero := f.and(f.cmp(s, "EQ", f.k(0)), f.cmp(f.div(f.k(1), s), "LT", f.k(0)))
	return f.sel(f.or(neg, negZero), f.neg(f.abs(m)), f.abs(m))
}

// hypot is sqrt(a^2 + b^2) without overflow or underflow: the larger
// magnitude times sqrt(1 + (smaller/larger)^2); infinite when either is,
// NaN when either is NaN and neither infinite.
func (f *rexpr) hypot(a, b *hlo.Instruction) *hlo.Instruction {
	x, y := f.abs(a), f.abs(b)
	hi, lo := f.op(hlo.OpMaximum, x, y), f.op(hlo.OpMinimum, x, y)
	q := f.div(lo, hi)
	r := f.mul(hi, f.op(hlo.OpSqrt, f.add(f.k(1), f.mul(q, q))))
	r = f.sel(f.cmp(hi, "EQ", f.k(0)), f.k(0), r)
	return f.sel(f.or(f.isInf(a), f.isInf(b)), f.k(math.Inf(1)), r)
}

// cmul is (a + bi)(c + di).
func (f *rexpr) cmul(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	return f.sub(f.mul(x[0], y[0]), f.mul(x[1], y[1])), f.add(f.mul(x[0], y[1]), f.mul(x[1], y[0]))
}

// cdiv is (a + bi) / (c + di) by Smith's algorithm (no overflow where the
// quotient is representable), with C99 Annex G's infinities: a nonzero
// over zero is infinite, an infinite over a finite is infinite, a
// finite over an infinite is zero.
func (f *rexpr) cdiv(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b, c, d := x[0], x[1], y[0], y[1]
	big := f.cmp(f.abs(c), "GE", f.abs(d))
	r := f.sel(big, f.div(d, c), f.div(c, d))
	den := f.sel(big, f.add(c, f.mul(d, r)), f.add(d, f.mul(c, r)))
	re = f.div(f.sel(big, f.add(a, f.mul(b, r)), f.add(f.mul(a, r), b)), den)
	im = f.div(f.sel(big, f.sub(b, f.mul(a, r)), f.sub(f.mul(b, r), a)), den)
	inf := f.k(math.Inf(1))
	// Zero denominator, numerator not NaN: infinities signed by a and b.
	zero := f.and(f.and(f.cmp(c, "EQ", f.k(0)), f.cmp(d, "EQ", f.k(0))), f.not(f.and(f.isNaN(a), f.isNaN(b))))
	sc := f.copySign(inf, c)
	re = f.sel(zero, f.mul(sc, a), re)
	im = f.sel(zero, f.mul(sc, b), im)
	// Infinite numerator, finite denominator.
	unit := func(v *hlo.Instruction) *hlo.Instruction { return f.copySign(f.sel(f.isInf(v), f.k(1), f.k(0)), v) }
	infNum := f.and(f.or(f.isInf(a), f.isInf(b)), f.and(f.finite(c), f.finite(d)))
	ua, ub := unit(a), unit(b)
	re = f.sel(infNum, f.mul(inf, f.add(f.mul(ua, c), f.mul(ub, d))), re)
	im = f.sel(infNum, f.mul(inf, f.sub(f.mul(ub, c), f.mul(ua, d))), im)
	// Finite numerator, infinite denominator.
	infDen := f.and(f.or(f.isInf(c), f.isInf(d)), f.and(f.finite(a), f.finite(b)))
	uc, ud := unit(c), unit(d)
	re = f.sel(infDen, f.mul(f.k(0), f.add(f.mul(a, uc), f.mul(b, ud))), re)
	im = f.sel(infDen, f.mul(f.k(0), f.sub(f.mul(b, uc), f.mul(a, ud))), im)
	return re, im
}

// csqrt is the principal square root, its branch cut along the negative
// real axis: t = sqrt((|a| + |z|) / 2) (halved before the sum, which
// cannot then overflow), and sqrt(z) = (t, b/2t) for a >= 0, (|b|/2t,
// copysign(t, b)) below; sqrt(0 + bi) for b = +-0 is itself, and an
// infinite b gives (inf, b).
func (f *rexpr) csqrt(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	t := f.op(hlo.OpSqrt, f.add(f.mul(f.k(0.5), f.abs(a)), f.mul(f.k(0.5), f.hypot(a, b))))
	u := f.div(f.mul(f.k(0.5), f.abs(b)), t)
	pos := f.cmp(a, "GE", f.k(0))
	re = f.sel(pos, t, u)
	im = f.sel(pos, f.copySign(u, b), f.copySign(t, b))
	zero := f.and(f.cmp(a, "EQ", f.k(0)), f.cmp(b, "EQ", f.k(0)))
	re = f.sel(zero, f.k(0), re)
	im = f.sel(zero, b, im)
	bInf := f.isInf(b)
	return f.sel(bInf, f.k(math.Inf(1)), re), f.sel(bInf, b, im)
}

// cexp is e^a (cos b + i sin b); b = 0 gives (e^a, b), so that an
// infinite a does not meet inf * 0.
func (f *rexpr) cexp(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	a, b := z[0], z[1]
	e := f.op(hlo.OpExp, a)
	noIm := f.cmp(b, "EQ", f.k(0))
	return f.sel(noIm, e, f.mul(e, f.op(hlo.OpCos, b))), f.sel(noIm, b, f.mul(e, f.op(hlo.OpSin, b)))
}

// clog is log|z| + i atan2(b, a).
func (f *rexpr) clog(z [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	return f.op(hlo.OpLog, f.hypot(z[0], z[1])), f.op(hlo.OpAtan2, z[1], z[0])
}

// coshSinh is cosh b and sinh b, sinh from expm1 so that it keeps its
// accuracy near 0.
func (f *rexpr) coshSinh(b *hlo.Instruction) (ch, sh *hlo.Instruction) {
	half := f.k(0.5)
	ch = f.mul(half, f.add(f.op(hlo.OpExp, b), f.op(hlo.OpExp, f.neg(b))))
	sh = f.mul(half, f.sub(f.op(hlo.OpExpm1, b), f.op(hlo.OpExpm1, f.neg(b))))
	return ch, sh
}

// ctan is tan(a + bi) = (sin 2a + i sinh 2b) / (cos 2a + cosh 2b) with
// the denominator as 2(cos^2 a + sinh^2 b), a sum of squares that does
// not cancel near the poles (a near pi/2, b near 0) as cos 2a + cosh 2b
// does: re = sin a cos a / d and im = tanh b (1 + sin^2 a / d), d =
// cos^2 a + sinh^2 b, which for a large |b| (d infinite) are 0 and +-1.
func (f *rexpr) ctan(a, b *hlo.Instruction) (re, im *hlo.Instruction) {
	s, c := f.op(hlo.OpSin, a), f.op(hlo.OpCos, a)
	_, sh := f.coshSinh(b)
	d := f.add(f.mul(c, c), f.mul(sh, sh))
	re = f.div(f.mul(s, c), d)
	im = f.mul(f.op(hlo.OpTanh, b), f.add(f.k(1), f.div(f.mul(s, s), d)))
	return re, im
}

// cpow is x^y = e^(y log x); 0^y is 1 for y = 0 and 0 otherwise.
func (f *rexpr) cpow(x, y [2]*hlo.Instruction) (re, im *hlo.Instruction) {
	lr, li := f.clog(x)
	pr, pi := f.cmul(y, [2]*hlo.Instruction{lr, li})
	re, im = f.cexp([2]*hlo.Instruction{pr, pi})
	xZero := f.and(f.cmp(x[0], "EQ", f.k(0)), f.cmp(x[1], "EQ", f.k(0)))
	yZero := f.and(f.cmp(y[0], "EQ", f.k(0)), f.cmp(y[1], "EQ", f.k(0)))
	one := f.sel(yZero, f.k(1), f.k(0))
	return f.sel(xZero, one, re), f.sel(xZero, f.k(0), im)
}

// fft computes a discrete Fourier transform as products with its
// matrices, one transformed dimension at a time: of any length, not only
// powers of two, in as many real dots as the parts need (four per
// dimension of a complex transform), which run as tiled GEMMs. The
// twiddles are computed in float64 from jk mod n, so that each is the
// rounded true value. IFFT and IRFFT scale by 1/n in their matrices.
func (x *cx) fft(in *hlo.Instruction) error {
	l := in.A.FftLength
	src := in.Operands[0]
	rank := src.Shape.Rank()
	first := rank - len(l)
	var re, im *hlo.Instruction
	switch in.A.FftType {
	case "FFT", "IFFT":
		p := x.parts(src)
		re, im = p[0], p[1]
		for a := first; a < rank; a++ {
			re, im = x.dftAxis(in, re, im, a, l[a-first], in.A.FftType == "IFFT")
		}
	case "RFFT":
		v := x.memory(src)
		n := l[len(l)-1]
		m := n/2 + 1
		c, s := twiddles(n, n, m, src.Shape.Elem, func(j, k int64) float64 { return 1 }, -1)
		re, im = x.along(in, v, c, rank-1), x.along(in, v, s, rank-1)
		for a := first; a < rank-1; a++ {
			re, im = x.dftAxis(in, re, im, a, l[a-first], false)
		}
	case "IRFFT":
		p := x.parts(src)
		re, im = p[0], p[1]
		for a := first; a < rank-1; a++ {
			re, im = x.dftAxis(in, re, im, a, l[a-first], true)
		}
		n := l[len(l)-1]
		m := n/2 + 1
		// The half spectrum's weights: X_0 once, X_j and its mirror
		// X_(n-j) (the conjugate) twice, X_(n/2) once for an even n.
		w := func(j, _ int64) float64 {
			if j == 0 || 2*j == n {
				return 1 / float64(n)
			}
			return 2 / float64(n)
		}
		rt, _ := realPart(src.Shape.Elem)
		c, s := twiddles(n, m, n, rt, w, -1)
		g := &rexpr{x: x, in: in, t: rt, dims: in.Shape.Dims}
		x.whole[in] = g.add(x.along(in, re, c, rank-1), x.along(in, im, s, rank-1))
		return nil
	default:
		return x.unsupported(in)
	}
	x.pairs[in] = [2]*hlo.Instruction{re, im}
	return nil
}

// dftAxis transforms parts (re, im) along dimension a of length n:
// (re + i im)(C + i sigma S) = (re C - sigma im S) + i (im C + sigma re S),
// sigma -1 forward, +1 inverse (with 1/n).
func (x *cx) dftAxis(in, re, im *hlo.Instruction, a int, n int64, inverse bool) (*hlo.Instruction, *hlo.Instruction) {
	w := func(_, _ int64) float64 { return 1 }
	if inverse {
		w = func(_, _ int64) float64 { return 1 / float64(n) }
	}
	c, s := twiddles(n, n, n, re.Shape.Elem, w, 1)
	rc, rs, ic, is := x.along(in, re, c, a), x.along(in, re, s, a), x.along(in, im, c, a), x.along(in, im, s, a)
	g := &rexpr{x: x, in: in, t: re.Shape.Elem, dims: re.Shape.Dims}
	if inverse {
		return g.sub(rc, is), g.add(ic, rs)
	}
	return g.add(rc, is), g.sub(ic, rs)
}

// twiddles are the constant matrices C[j][k] = w(j, k) cos(2 pi jk/n)
// and S[j][k] = sign w(j, k) sin(2 pi jk/n), j < rows, k < cols, of type t.
func twiddles(n, rows, cols int64, t hlo.ElementType, w func(j, k int64) float64, sign float64) (c, s *hlo.Literal) {
	cb := make([]byte, 0, rows*cols*int64(t.Bytes()))
	sb := make([]byte, 0, rows*cols*int64(t.Bytes()))
	put := func(b []byte, v float64) []byte {
		if t == hlo.F64 {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
	}
	for j := int64(0); j < rows; j++ {
		for k := int64(0); k < cols; k++ {
			sn, cs := math.Sincos(2 * math.Pi * float64(j*k%n) / float64(n))
			cb = put(cb, w(j, k)*cs)
			sb = put(sb, sign*w(j, k)*sn)
		}
	}
	sh := hlo.ArrayShape(t, rows, cols)
	c, _ = hlo.NewLiteral(sh, cb)
	s, _ = hlo.NewLiteral(sh, sb)
	return c, s
}

// matrix is a constant instruction of m, made once per literal.
func (x *cx) matrix(in *hlo.Instruction, m *hlo.Literal) *hlo.Instruction {
	if k := x.consts[m]; k != nil {
		return k
	}
	k := x.inst(in, hlo.OpConstant, m.Shape)
	k.Literal = m
	if x.consts == nil {
		x.consts = map[*hlo.Literal]*hlo.Instruction{}
	}
	x.consts[m] = k
	return k
}

// along contracts dimension a of v with the rows of matrix m and puts
// the result's new dimension back in a's place.
func (x *cx) along(in, v *hlo.Instruction, m *hlo.Literal, a int) *hlo.Instruction {
	k := x.matrix(in, m)
	dims := v.Shape.Dims
	var outDims []int64
	for i, d := range dims {
		if i != a {
			outDims = append(outDims, d)
		}
	}
	outDims = append(outDims, m.Shape.Dims[1])
	t := v.Shape.Elem
	d := x.inst(in, hlo.OpDot, hlo.ArrayShape(t, outDims...), v, k)
	d.A.Dot = &hlo.DotDims{LhsContract: []int64{int64(a)}, RhsContract: []int64{0}}
	last := len(dims) - 1
	if a == last {
		return d
	}
	perm := make([]int64, 0, len(dims))
	final := make([]int64, len(dims))
	for i := range dims {
		switch {
		case i < a:
			perm = append(perm, int64(i))
		case i == a:
			perm = append(perm, int64(last))
		default:
			perm = append(perm, int64(i-1))
		}
	}
	for i, p := range perm {
		final[i] = outDims[p]
	}
	tr := x.inst(in, hlo.OpTranspose, hlo.ArrayShape(t, final...), d)
	tr.A.Dimensions, tr.A.HasDimensions = perm, true
	return tr
}
