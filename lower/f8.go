package lower

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/formula"
	"github.com/vkjit/vkjit/lower/kgen"
)

// The f8 types compute in f32, as XLA computes them: widenF8 retypes
// every f8 value as f32 and rounds each op's result to the f8 type's grid
// (to nearest, ties to even, subnormals included), overflow becoming the
// type's infinity or, for the finite types, NaN (the largest value, for
// the f4 and f6 types, which have no NaN), as XLA's conversion does; the
// f6 and f4 types go the same way. The entry's parameters and results
// keep their types: their buffers hold the codes, a byte an element as
// the host holds them, which kernels decode where they load them and
// encode where they store them (kgen/minifloat.go); a parameter is
// converted to f32 where the program starts and a result from f32 where
// it ends (exact: every value is on the grid, and a NaN keeps its code).

// isF8 reports the small float types widen f8 computes in f32: the f8
// types, and the f6 and f4 ones too.
func isF8(t hlo.ElementType) bool { return hlo.IsMiniFloat(t) }

func widenF8(s *state) error {
	entry := s.mod.Entry
	api := !s.opts.sub // the entry's parameters and results are the API's
	r := &retyper{
		needs: func(c *hlo.Computation) bool { return touches(c, isF8, nil) },
		shape: func(sh hlo.Shape) hlo.Shape {
			return mapLeaves(sh, func(l hlo.Shape) hlo.Shape {
				if isF8(l.Elem) {
					l.Elem = hlo.F32
				}
				return l
			})
		},
		rule: func(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
			var v *hlo.Instruction
			var err error
			if api && isParamOf(entry, in) && anyLeaf(in.Shape, isF8) {
				v, err = f8Parameter(r, in)
			} else {
				v, err = widenF8Op(r, in, ops)
			}
			if err == nil && api && in == entry.Root && anyLeaf(in.Shape, isF8) {
				v, err = f8Result(r, in, v)
			}
			return v, err
		},
		tag: "f",
	}
	return r.run(s)
}

// f8Parameter keeps entry parameter in as it is (its small float leaves
// hold codes) and returns its value with those leaves converted to f32.
func f8Parameter(r *retyping, in *hlo.Instruction) (*hlo.Instruction, error) {
	p := *in
	r.out = append(r.out, &p)
	var err error
	v := convertLeaves(r, in, &p, in.Shape, hlo.F32, &err)
	if err != nil {
		return nil, in.Errorf("converting %s: %v", in.Shape, err)
	}
	return v, nil
}

// f8Result is v, the f32 values of entry result in, with the leaves that
// are small floats in in's shape converted back to their types.
func f8Result(r *retyping, in, v *hlo.Instruction) (*hlo.Instruction, error) {
	var err error
	c := convertLeaves(r, in, v, in.Shape, 0, &err)
	if err != nil {
		return nil, in.Errorf("converting %s: %v", in.Shape, err)
	}
	return c, nil
}

// convertLeaves converts the leaves of x that are small floats in shape
// api to type to, or with to 0 to their type in api.
func convertLeaves(r *retyping, in, x *hlo.Instruction, api hlo.Shape, to hlo.ElementType, err *error) *hlo.Instruction {
	return r.leafwise(in, x, api, func(x *hlo.Instruction, leaf hlo.Shape) *hlo.Instruction {
		if !isF8(leaf.Elem) {
			return x
		}
		t := to
		if t == 0 {
			t = leaf.Elem
		}
		return r.expr(in, hlo.ArrayShape(t, leaf.Dims...), err).Convert(x, t)
	})
}

// widenF8Op computes in in f32 and rounds an arithmetic result to its
// f8 type's grid.
func widenF8Op(r *retyping, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	if in.Op == hlo.OpBitcastConvert && (isF8(in.Shape.Elem) || isF8(in.Operands[0].Shape.Elem)) {
		return bitcastF8(r, in, ops[0])
	}
	if (in.Op == hlo.OpDot || in.Op == hlo.OpConvolution) && isF8(in.Shape.Elem) {
		// Integer operands convert to the result's type first, as XLA
		// converts a product's operands (and the evaluator does): onto
		// its grid, a value past its range to inf, NaN or its largest.
		t := in.Shape.Elem
		ops = slices.Clone(ops)
		for i := range 2 {
			if o := in.Operands[i].Shape; o.Elem.IsInteger() {
				var err error
				e := r.expr(in, hlo.ArrayShape(t, o.Dims...), &err)
				ops[i] = r.expr(in, hlo.ArrayShape(hlo.F32, o.Dims...), &err).Convert(e.Convert(ops[i], t), hlo.F32)
				if err != nil {
					return nil, in.Errorf("converting operand %d to %s: %v", i, t, err)
				}
			}
		}
	}
	if in.Op == hlo.OpDot && shortProduct(in) {
		// An operand converted from an entry parameter's codes is read
		// as those codes in a short product (a matrix-vector one): its
		// kernel decodes each where it loads it, once, where an f32
		// copy costs a kernel that writes four bytes an element and a
		// product that reads them. The values, and so the sums, are
		// the same. A longer product keeps the copy: its tiles decode
		// an element once per tile of rows, which cost more than the
		// copy saves (f8[1024,1024] x f8[1024,1024]: 58.7 ms decoding
		// against 27.3 with copies).
		ops = slices.Clone(ops)
		for i, o := range ops {
			if o.Op == hlo.OpConvert && o.Shape.Elem == hlo.F32 && isF8(o.Operands[0].Shape.Elem) {
				ops[i] = o.Operands[0]
			}
		}
	}
	nc, err := r.copy(in, ops)
	if err != nil {
		return nil, err
	}
	if in.Op == hlo.OpConstant && isF8(in.Shape.Elem) {
		lit, err := hlo.NewLiteral(nc.Shape, f8Values(in.Shape.Elem, in.Literal.Data))
		if err != nil {
			return nil, in.Errorf("%v", err)
		}
		nc.Literal = lit
	}
	// Copies and selects give one of their operands, on the grid already
	// (and a NaN with its code: kgen.MarkedNaN).
	if in.Shape.IsArray() && isF8(in.Shape.Elem) && in.Op != hlo.OpConstant && in.Op != hlo.OpParameter &&
		in.Op != hlo.OpCopy && in.Op != hlo.OpSelect &&
		(in.Op.Class() == hlo.ClassUnary || in.Op.Class() == hlo.ClassBinary || in.Op.Class() == hlo.ClassTernary ||
			in.Op == hlo.OpDot || in.Op == hlo.OpConvolution || in.Op == hlo.OpReduce || in.Op == hlo.OpReduceWindow ||
			in.Op == hlo.OpIota) {
		// Rounded by a conversion to the type and back: kernels round a
		// value as they convert it to a small float type (kgen's
		// roundMini), the result an f32 on the grid. An iota's index
		// too, as XLA converts it: unrounded, a kernel that computed it
		// inline read 17 where an f8e4m3fn iota holds 16.
		var err error
		t := in.Shape.Elem
		v := r.expr(in, nc.Shape, &err).Convert(r.expr(in, hlo.ArrayShape(t, nc.Shape.Dims...), &err).Convert(nc, t), hlo.F32)
		if err != nil {
			return nil, in.Errorf("rounding to %s: %v", in.Shape.Elem, err)
		}
		nc.Name = in.Name + ".wide"
		v.Name = in.Name
		return v, nil
	}
	return nc, nil
}

// shortProduct reports whether dot multiplies few rows (the lhs's free
// dimensions at most shortRows of them, or no free dimension on either
// side: a vector), which the tiled kernel computes in tiles of those
// rows alone (kgen's shortRows and vector operands).
func shortProduct(dot *hlo.Instruction) bool {
	const shortRows = 16
	l := dot.Operands[0].Shape
	lFree, rFree := dot.A.Dot.FreeDims(l.Rank(), dot.Operands[1].Shape.Rank())
	if len(rFree) == 0 {
		return true // W @ x: the row x^T W^T
	}
	rows := int64(1)
	for _, i := range lFree {
		rows *= l.Dims[i]
	}
	return rows <= shortRows
}

// encodeMini is the code (u32, in the low f.Bits bits) of f32 values x,
// each on format f's grid.
func encodeMini(e *formula.Builder, x *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
	ue := e.With(hlo.U32)
	bits := ue.Make(hlo.OpBitcastConvert, ue.Shape(), x)
	a := ue.And(bits, ue.Bits(0x7fffffff))
	var code *hlo.Instruction
	if f.PowersOfTwo {
		code = ue.Op(hlo.OpShiftRightLogical, a, ue.Bits(23)) // 2^-127, f32's 0x400000, is code 0
	} else {
		// Normal: the f32 exponent and top mantissa bits rebased;
		// subnormal: |x| in units of the smallest subnormal.
		normal := ue.Sub(ue.Op(hlo.OpShiftRightLogical, a, ue.Bits(uint64(23-f.Man))), ue.Bits(uint64(127-f.Bias)<<f.Man))
		abs := e.Make(hlo.OpBitcastConvert, e.Shape(), a)
		sub := e.Convert(e.Mul(abs, e.K(math.Ldexp(1, f.Man-f.Emin))), hlo.U32)
		code = ue.Sel(ue.Cmp(a, "GE", ue.Bits(uint64(127+f.Emin)<<23)), normal, sub)
		if f.Inf {
			code = ue.Sel(ue.Cmp(a, "EQ", ue.Bits(0x7f800000)), ue.Bits(uint64(1<<f.Exp-1)<<f.Man), code)
		}
		neg := ue.Cmp(bits, "GE", ue.Bits(0x80000000))
		if !f.NegZero {
			neg = ue.And(neg, ue.Cmp(a, "NE", ue.Bits(0))) // no negative zero
		}
		code = ue.Or(code, ue.Sel(neg, ue.Bits(uint64(f.SignBit)), ue.Bits(0)))
	}
	if f.Saturate {
		return code // no NaN on the grid
	}
	marked := ue.Cmp(ue.And(bits, ue.Bits(kgen.NaNMarkMask)), "EQ", ue.Bits(kgen.NaNMark&kgen.NaNMarkMask))
	own := ue.Bits(uint64(f.NaN)) // f's NaN, signed as x where f's NaNs have a sign
	if f.SignedNaN {
		own = ue.Sel(ue.Cmp(bits, "GE", ue.Bits(0x80000000)), ue.Bits(uint64(f.NaN|f.SignBit)), own)
	}
	nan := ue.Sel(marked, ue.And(bits, ue.Bits(0xff)), own)
	return ue.Sel(ue.Cmp(a, "GT", ue.Bits(0x7f800000)), nan, code)
}

// decodeMini is the f32 value of codes c (u32) of format f, a NaN code
// marked as kgen.MarkedNaN says.
func decodeMini(ue *formula.Builder, c *hlo.Instruction, f hlo.MiniFloatFormat) *hlo.Instruction {
	e := ue.With(hlo.F32)
	c = ue.And(c, ue.Bits(1<<f.Bits-1))
	var bits, nan *hlo.Instruction
	if f.PowersOfTwo {
		bits = ue.Sel(ue.Cmp(c, "EQ", ue.Bits(0)), ue.Bits(0x400000), ue.Op(hlo.OpShiftLeft, c, ue.Bits(23)))
		nan = ue.Cmp(c, "EQ", ue.Bits(0xff))
	} else {
		mag := ue.And(c, ue.Bits(uint64(f.SignBit-1)))
		ex := ue.Op(hlo.OpShiftRightLogical, mag, ue.Bits(uint64(f.Man)))
		m := ue.And(mag, ue.Bits(1<<f.Man-1))
		normal := ue.Add(ue.Op(hlo.OpShiftLeft, mag, ue.Bits(uint64(23-f.Man))), ue.Bits(uint64(127-f.Bias)<<23))
		subF := e.Mul(e.Make(hlo.OpConvert, e.Shape(), m), e.K(math.Ldexp(1, f.Emin-f.Man)))
		sub := ue.Make(hlo.OpBitcastConvert, ue.Shape(), subF)
		bits = ue.Sel(ue.Cmp(ex, "EQ", ue.Bits(0)), sub, normal)
		allOnes := ue.Cmp(ex, "EQ", ue.Bits(1<<f.Exp-1))
		switch {
		case f.Inf:
			bits = ue.Sel(allOnes, ue.Bits(0x7f800000), bits)
			nan = ue.And(allOnes, ue.Cmp(m, "NE", ue.Bits(0)))
		case f.Saturate:
		case !f.NegZero: // fnuz: the code of a negative zero is NaN
			nan = ue.Cmp(c, "EQ", ue.Bits(uint64(f.NaN)))
		default: // fn: the magnitude all ones
			nan = ue.Cmp(mag, "EQ", ue.Bits(uint64(f.SignBit-1)))
		}
		neg := ue.Cmp(ue.And(c, ue.Bits(uint64(f.SignBit))), "NE", ue.Bits(0))
		signed := ue.Sel(neg, ue.Bits(0x80000000), ue.Bits(0))
		bits = ue.Or(bits, signed)
		if nan != nil {
			marked := ue.Or(ue.Or(ue.Bits(kgen.NaNMark), c), signed)
			bits = ue.Sel(nan, marked, bits)
		}
		return e.Make(hlo.OpBitcastConvert, e.Shape(), bits)
	}
	bits = ue.Sel(nan, ue.Or(ue.Bits(kgen.NaNMark), c), bits)
	return e.Make(hlo.OpBitcastConvert, e.Shape(), bits)
}

// f8Values decodes the codes of small float values of type t (a
// constant's) to their f32 values' bytes (a NaN keeping its code:
// kgen.MarkedNaN).
func f8Values(t hlo.ElementType, host []byte) []byte {
	f, _ := hlo.MiniFloatFormatOf(t)
	out := make([]byte, 4*len(host))
	for i, b := range host {
		v := hlo.MiniFloatToFloat64(t, uint32(b))
		bits := math.Float32bits(float32(v))
		if math.IsNaN(v) {
			bits = kgen.MarkedNaN(f, uint32(b))
		}
		binary.LittleEndian.PutUint32(out[4*i:], bits)
	}
	return out
}

// bitcastF8 rewrites a bitcast-convert from or to an 8-bit small float
// type (expand sub-byte bitcasts has taken the narrower ones apart) on
// x, in's operand retyped: the f8 side's codes from or to its f32 values
// (encodeMini, decodeMini), through a bitcast to or from u8 codes where
// the other side is wider, which split bitcast widths takes on.
func bitcastF8(r *retyping, in, x *hlo.Instruction) (*hlo.Instruction, error) {
	from, to := in.Operands[0].Shape.Elem, in.Shape.Elem
	if from.Bits()%8 != 0 || to.Bits()%8 != 0 || from == hlo.PRED || to == hlo.PRED {
		return nil, in.Errorf("bitcast-convert from %s to %s is not supported on the device yet", from, to)
	}
	var err error
	// codes: the f8 side's codes as u32, in the f8 side's dimensions.
	dims := in.Shape.Dims
	if isF8(from) {
		dims = in.Operands[0].Shape.Dims
	}
	ue := r.expr(in, hlo.ArrayShape(hlo.U32, dims...), &err)
	var codes *hlo.Instruction
	switch {
	case isF8(from):
		f, _ := hlo.MiniFloatFormatOf(from)
		codes = encodeMini(r.expr(in, x.Shape, &err), x, f)
	default: // 8 bits or wider, to u8 codes
		codes = ue.Convert(ue.Make(hlo.OpBitcastConvert, hlo.ArrayShape(hlo.U8, dims...), x), hlo.U32)
	}
	var v *hlo.Instruction
	switch {
	case isF8(to):
		f, _ := hlo.MiniFloatFormatOf(to)
		v = decodeMini(ue, codes, f)
	case to.Bits() == 8:
		v = ue.Convert(codes, to) // u32 to an 8-bit integer keeps the low byte
	default: // u8 codes [..., r] to the wider type
		v = ue.Make(hlo.OpBitcastConvert, in.Shape, ue.Convert(codes, hlo.U8))
	}
	if err != nil {
		return nil, in.Errorf("bitcast-convert from %s to %s: %v", from, to, err)
	}
	v.Name = in.Name
	return v, nil
}
