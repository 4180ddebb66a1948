// Package formula builds elementwise HLO over arrays of one shape, for the
// rewrites that expand one op into many: CHLO's special functions in the
// StableHLO translation, and complex arithmetic on real parts and the FFT
// in lower. Both read as the formulas they compute (e.Mul(x, e.K(0.5)));
// what differs between them is only where an instruction goes, which the
// caller's emit function decides (it names the instruction, records where
// it came from and adds it to its computation).
package formula

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// Emit places a new instruction whose op, operands, shape and attributes
// are set, and returns it.
type Emit func(in *hlo.Instruction) *hlo.Instruction

// Builder makes instructions over arrays of dimensions Dims and element
// type Elem (the type of its constants). Builders made by With share
// their origin's emit function and first error.
type Builder struct {
	Elem hlo.ElementType
	Dims []int64
	emit Emit
	err  *error
}

// New starts a builder over arrays of shape s that records its first
// error in *err (a shape that cannot be inferred, an attribute or a
// constant that does not parse); builders that share err stop at the
// first error of any of them.
func New(emit Emit, s hlo.Shape, err *error) *Builder {
	return &Builder{Elem: s.Elem, Dims: s.Dims, emit: emit, err: err}
}

// With is a builder over the same dimensions in element type t.
func (b *Builder) With(t hlo.ElementType) *Builder {
	return &Builder{Elem: t, Dims: b.Dims, emit: b.emit, err: b.err}
}

// Shape is the shape of b's arrays.
func (b *Builder) Shape() hlo.Shape { return hlo.ArrayShape(b.Elem, b.Dims...) }

// Err is the first error recorded where b records its errors.
func (b *Builder) Err() error { return *b.err }

// Fail records err unless an error came first.
func (b *Builder) Fail(err error) {
	if *b.err == nil {
		*b.err = err
	}
}

// Op adds an elementwise op whose shape its operands imply (a compare's
// is pred, a select's its second operand's); a shape that cannot be
// inferred is b's error.
func (b *Builder) Op(op hlo.Opcode, xs ...*hlo.Instruction) *hlo.Instruction {
	in := &hlo.Instruction{Op: op, Operands: xs}
	s, err := hlo.InferShape(in)
	if err != nil {
		b.Fail(err)
		s = new(hlo.Shape)
		*s = b.Shape()
	}
	in.Shape = *s
	return b.emit(in)
}

// Make adds op with result shape s, for ops whose shape the operands
// do not imply (convert, broadcast, the parts of complex numbers).
func (b *Builder) Make(op hlo.Opcode, s hlo.Shape, xs ...*hlo.Instruction) *hlo.Instruction {
	return b.emit(&hlo.Instruction{Op: op, Shape: s, Operands: xs})
}

// Broadcast makes a scalar a value of b's shape.
func (b *Builder) Broadcast(c *hlo.Instruction) *hlo.Instruction {
	if len(b.Dims) == 0 {
		return c
	}
	in := &hlo.Instruction{Op: hlo.OpBroadcast, Shape: hlo.ArrayShape(c.Shape.Elem, b.Dims...), Operands: []*hlo.Instruction{c}}
	b.setAttr(in, "dimensions", "{}")
	return b.emit(in)
}

func (b *Builder) setAttr(in *hlo.Instruction, name, value string) {
	if err := in.SetAttr(name, value); err != nil {
		b.Fail(err)
	}
}

// constant is the scalar constant l, broadcast to b's shape.
func (b *Builder) constant(l *hlo.Literal) *hlo.Instruction {
	c := b.emit(&hlo.Instruction{Op: hlo.OpConstant, Shape: l.Shape, Literal: l})
	return b.Broadcast(c)
}

// K is the constant v in b's element type (an f32 constant is v rounded
// once, from the float64).
func (b *Builder) K(v float64) *hlo.Instruction {
	var raw []byte
	switch b.Elem {
	case hlo.F32:
		raw = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	case hlo.F64:
		raw = binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
	default:
		return b.constant(hlo.ScalarLiteral(b.Elem, v))
	}
	l, err := hlo.NewLiteral(hlo.ArrayShape(b.Elem), raw)
	if err != nil {
		b.Fail(err)
	}
	return b.constant(l)
}

// Bits is the constant of b's (integer) element type with these bits.
func (b *Builder) Bits(v uint64) *hlo.Instruction {
	raw := binary.LittleEndian.AppendUint64(nil, v)[:b.Elem.Bytes()]
	l, err := hlo.NewLiteral(hlo.ArrayShape(b.Elem), raw)
	if err != nil {
		b.Fail(err)
		return b.K(0)
	}
	return b.constant(l)
}

func (b *Builder) Add(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpAdd, x, y) }
func (b *Builder) Sub(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpSubtract, x, y) }
func (b *Builder) Mul(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpMultiply, x, y) }
func (b *Builder) Div(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpDivide, x, y) }
func (b *Builder) Max(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpMaximum, x, y) }
func (b *Builder) Min(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpMinimum, x, y) }
func (b *Builder) Neg(x *hlo.Instruction) *hlo.Instruction    { return b.Op(hlo.OpNegate, x) }
func (b *Builder) Abs(x *hlo.Instruction) *hlo.Instruction    { return b.Op(hlo.OpAbs, x) }
func (b *Builder) Exp(x *hlo.Instruction) *hlo.Instruction    { return b.Op(hlo.OpExp, x) }
func (b *Builder) Log(x *hlo.Instruction) *hlo.Instruction    { return b.Op(hlo.OpLog, x) }
func (b *Builder) Log1p(x *hlo.Instruction) *hlo.Instruction  { return b.Op(hlo.OpLog1p, x) }
func (b *Builder) Sqrt(x *hlo.Instruction) *hlo.Instruction   { return b.Op(hlo.OpSqrt, x) }
func (b *Builder) Floor(x *hlo.Instruction) *hlo.Instruction  { return b.Op(hlo.OpFloor, x) }
func (b *Builder) And(x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpAnd, x, y) }
func (b *Builder) Or(x, y *hlo.Instruction) *hlo.Instruction  { return b.Op(hlo.OpOr, x, y) }
func (b *Builder) Not(x *hlo.Instruction) *hlo.Instruction    { return b.Op(hlo.OpNot, x) }

// Sel is p ? x : y.
func (b *Builder) Sel(p, x, y *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpSelect, p, x, y) }

// Cmp compares x and y elementwise (dir: EQ, NE, LT, LE, GT, GE).
func (b *Builder) Cmp(x *hlo.Instruction, dir string, y *hlo.Instruction) *hlo.Instruction {
	in := &hlo.Instruction{Op: hlo.OpCompare, Shape: hlo.ArrayShape(hlo.PRED, b.Dims...), Operands: []*hlo.Instruction{x, y}}
	b.setAttr(in, "direction", dir)
	return b.emit(in)
}

// Convert converts x to element type t.
func (b *Builder) Convert(x *hlo.Instruction, t hlo.ElementType) *hlo.Instruction {
	return b.Make(hlo.OpConvert, hlo.ArrayShape(t, b.Dims...), x)
}

// IsNaN is x != x.
func (b *Builder) IsNaN(x *hlo.Instruction) *hlo.Instruction { return b.Cmp(x, "NE", x) }

// IsInf is |x| == inf.
func (b *Builder) IsInf(x *hlo.Instruction) *hlo.Instruction {
	return b.Cmp(b.Abs(x), "EQ", b.K(math.Inf(1)))
}

// Finite is neither infinite nor NaN.
func (b *Builder) Finite(x *hlo.Instruction) *hlo.Instruction { return b.Op(hlo.OpIsFinite, x) }

// Poly evaluates the polynomial with coefficients cs, highest degree
// first, at x by Horner's rule.
func (b *Builder) Poly(x *hlo.Instruction, cs []float64) *hlo.Instruction {
	p := b.K(cs[0])
	for _, c := range cs[1:] {
		p = b.Add(b.Mul(p, x), b.K(c))
	}
	return p
}

// MaxFloat is the largest finite value of b's float type.
func (b *Builder) MaxFloat() float64 {
	if b.Elem == hlo.F32 {
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// CopySign is |m| with the sign of s, a negative zero's and a NaN's
// included, as IEEE's copySign: read from the sign bit, not as 1/s < 0,
// since Vulkan leaves division by zero undefined.
func (b *Builder) CopySign(m, s *hlo.Instruction) *hlo.Instruction {
	it, ok := map[int]hlo.ElementType{16: hlo.S16, 32: hlo.S32, 64: hlo.S64}[s.Shape.Elem.Bits()]
	if !ok || !s.Shape.Elem.IsFloat() {
		b.Fail(fmt.Errorf("copysign of %s", s.Shape.Elem))
		return m
	}
	ie := b.With(it)
	neg := ie.Cmp(ie.Make(hlo.OpBitcastConvert, ie.Shape(), s), "LT", ie.Bits(0))
	return b.Sel(neg, b.Neg(b.Abs(m)), b.Abs(m))
}

// Hypot is sqrt(x^2 + y^2) without overflow or underflow: the larger
// magnitude times sqrt(1 + (smaller/larger)^2); infinite when either is,
// NaN when either is NaN and neither infinite.
func (b *Builder) Hypot(x, y *hlo.Instruction) *hlo.Instruction {
	ax, ay := b.Abs(x), b.Abs(y)
	hi, lo := b.Max(ax, ay), b.Min(ax, ay)
	q := b.Div(lo, hi)
	r := b.Mul(hi, b.Sqrt(b.Add(b.K(1), b.Mul(q, q))))
	r = b.Sel(b.Cmp(hi, "EQ", b.K(0)), b.K(0), r)
	return b.Sel(b.Or(b.IsInf(x), b.IsInf(y)), b.K(math.Inf(1)), r)
}

// FMA is x*y + z rounded once, as a fused multiply-add gives it, from ops
// that each round (Vulkan's Fma may be a multiply and an add, and is on
// llvmpipe): Dekker's exact product ph + pl = x*y (Veltkamp's split),
// th + tl = z + ph by two-sum, then Boldo and Melquiond's emulation
// ("Emulation of FMA and correctly rounded sums", 2008): v = tl + pl
// rounded to odd, and th + v rounded to nearest is the fused result.
// Exact for f32 and f64 wherever |x*y| >= 2^(emin+p) (smaller products'
// low parts lose bits to underflow: an error below the smallest normal's
// ulp); where |x| or |y| is too large to split without overflow, x*y
// rounds to zero, or x*y + z with two roundings is not finite, the
// result is that one.
func (b *Builder) FMA(x, y, z *hlo.Instruction) *hlo.Instruction {
	var split, big float64
	switch b.Elem {
	case hlo.F32:
		split, big = 1<<12+1, 0x1p115 // 2^(emax-12): (2^12+1)|x| stays finite
	case hlo.F64:
		split, big = 1<<27+1, 0x1p996
	default:
		b.Fail(fmt.Errorf("fused multiply-add of %s", b.Elem))
		return b.Add(b.Mul(x, y), z)
	}
	halves := func(v *hlo.Instruction) (hi, lo *hlo.Instruction) {
		c := b.Mul(b.K(split), v)
		hi = b.Sub(c, b.Sub(c, v))
		return hi, b.Sub(v, hi)
	}
	xh, xl := halves(x)
	yh, yl := halves(y)
	ph := b.Mul(x, y)
	pl := b.Add(b.Add(b.Add(b.Sub(b.Mul(xh, yh), ph), b.Mul(xh, yl)), b.Mul(xl, yh)), b.Mul(xl, yl))
	th, tl := b.twoSum(z, ph)
	fused := b.Add(th, b.addOdd(tl, pl))
	plain := b.Add(ph, z)
	// A zero product (or one that underflows to zero) adds z as the
	// fused op would, the sign of a zero sum included, which th + v
	// would lose (-0 + -0 is -0, but th + v is -0 + +0).
	exact := b.And(b.And(b.Finite(plain), b.Cmp(ph, "NE", b.K(0))),
		b.And(b.Cmp(b.Abs(x), "LT", b.K(big)), b.Cmp(b.Abs(y), "LT", b.K(big))))
	return b.Sel(exact, fused, plain)
}

// twoSum is Knuth's: s + e = x + y exactly, s the rounded sum.
func (b *Builder) twoSum(x, y *hlo.Instruction) (s, e *hlo.Instruction) {
	s = b.Add(x, y)
	yv := b.Sub(s, x)
	return s, b.Add(b.Sub(x, b.Sub(s, yv)), b.Sub(y, yv))
}

// addOdd is x + y rounded to odd: where the rounded sum is inexact and
// its last bit even, the neighbour toward the exact sum (whose last bit
// is odd), a step of one in the bits' magnitude.
func (b *Builder) addOdd(x, y *hlo.Instruction) *hlo.Instruction {
	s, e := b.twoSum(x, y)
	ie := b.With(map[hlo.ElementType]hlo.ElementType{hlo.F32: hlo.S32, hlo.F64: hlo.S64}[b.Elem])
	bits := ie.Make(hlo.OpBitcastConvert, ie.Shape(), s)
	even := ie.Cmp(ie.Op(hlo.OpAnd, bits, ie.Bits(1)), "EQ", ie.Bits(0))
	inward := b.Op(hlo.OpXor, b.Cmp(e, "LT", b.K(0)), b.Cmp(s, "LT", b.K(0))) // the exact sum is nearer zero
	step := ie.Sel(inward, ie.Bits(math.MaxUint64), ie.Bits(1))               // -1 or +1
	odd := ie.Sel(ie.And(even, b.Cmp(e, "NE", b.K(0))), ie.Add(bits, step), bits)
	return b.Make(hlo.OpBitcastConvert, b.Shape(), odd)
}
