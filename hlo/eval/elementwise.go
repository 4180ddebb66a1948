package eval

import (
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
)

func elementwise(in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	out := in.Shape
	n := out.NumElements()
	res := &hlo.Literal{Shape: hlo.ArrayShape(out.Elem, out.Dims...), Data: make([]byte, out.ByteSize())}
	types := make([]hlo.ElementType, len(ops))
	for j, o := range ops {
		types[j] = o.Shape.Elem
	}
	err := parallelChunks(n, 1<<14, func(lo, hi int64) error {
		args := make([]scalar, len(ops))
		for i := lo; i < hi; i++ {
			for j, o := range ops {
				args[j] = get(o, i)
			}
			r, err := apply(in, types, args)
			if err != nil {
				return err
			}
			put(res.Data, out.Elem, i, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// apply computes one element of an elementwise op.
func apply(in *hlo.Instruction, types []hlo.ElementType, a []scalar) (scalar, error) {
	t := types[0]
	if in.Op == hlo.OpSelect || in.Op == hlo.OpClamp {
		t = types[1]
	}
	out := in.Shape.Elem
	if in.Op == hlo.OpComplex {
		return scalar{c: roundC(out, complex(a[0].f, a[1].f))}, nil
	}
	if t.IsComplex() && in.Op != hlo.OpConvert {
		return applyComplex(in, a)
	}
	k := t.Kind()
	isF, isS, isU, isB := k == hlo.KindFloat, k == hlo.KindSigned, k == hlo.KindUnsigned, k == hlo.KindBool
	f := func(v float64) (scalar, error) { return scalar{f: round(t, v)}, nil }
	s := func(v int64) (scalar, error) { return scalar{i: wrapS(t, v)}, nil }
	u := func(v uint64) (scalar, error) { return scalar{u: wrapU(t, v)}, nil }
	bl := func(v bool) (scalar, error) { return scalar{u: b2u(v)}, nil }
	// count is a bit count of x's type, which wraps like any result: an
	// s2's count of 2 is -2.
	count := func(c int64) (scalar, error) {
		if isS {
			return s(c)
		}
		return u(uint64(c))
	}
	x := a[0]
	if isF && t != hlo.F64 {
		if fn, ok := deviceF32[in.Op]; ok {
			return f(float64(fn(float32(x.f))))
		}
	}
	if fn, ok := hyperbolic[in.Op]; ok && isF {
		return f(fn(x.f))
	}
	switch in.Op {
	case hlo.OpCopy:
		return x, nil
	case hlo.OpNegate:
		switch {
		case isF:
			return f(-x.f)
		case isS:
			return s(-x.i)
		case isU:
			return u(-x.u)
		}
	case hlo.OpAbs:
		switch {
		case isF:
			return f(math.Abs(x.f))
		case isS:
			if x.i < 0 {
				return s(-x.i)
			}
			return s(x.i)
		case isU:
			return x, nil
		}
	case hlo.OpSign:
		switch {
		case isF:
			return f(signOf(x.f))
		case isS:
			switch {
			case x.i > 0:
				return s(1)
			case x.i < 0:
				return s(-1)
			}
			return s(0)
		case isU:
			return u(b2u(x.u != 0))
		}
	case hlo.OpFloor:
		if isF {
			return f(math.Floor(x.f))
		}
	case hlo.OpCeil:
		if isF {
			return f(math.Ceil(x.f))
		}
	case hlo.OpRoundNearestEven:
		if isF {
			return f(math.RoundToEven(x.f))
		}
	case hlo.OpRoundNearestAfz:
		if isF {
			return f(math.Round(x.f))
		}
	case hlo.OpExp:
		if isF {
			return f(Exp(x.f))
		}
	case hlo.OpExpm1:
		if isF {
			return f(math.Expm1(x.f))
		}
	case hlo.OpLog:
		if isF {
			return f(logf(x.f))
		}
	case hlo.OpLog1p:
		if isF {
			return f(math.Log1p(x.f))
		}
	case hlo.OpSqrt:
		if isF {
			return f(math.Sqrt(x.f))
		}
	case hlo.OpRsqrt:
		if isF {
			return f(1 / math.Sqrt(x.f))
		}
	case hlo.OpCbrt:
		if isF {
			return f(math.Cbrt(x.f))
		}
	case hlo.OpTanh:
		if isF {
			return f(math.Tanh(x.f))
		}
	case hlo.OpLogistic:
		if isF {
			// e^x / (1 + e^x) below 0: 1 / (1 + e^-x) would give 0 once
			// e^-x overflows, where the answer is subnormal.
			if x.f < 0 {
				e := Exp(x.f)
				return f(e / (1 + e))
			}
			return f(1 / (1 + Exp(-x.f)))
		}
	case hlo.OpSin:
		if isF {
			return f(Sin(x.f))
		}
	case hlo.OpCos:
		if isF {
			return f(Cos(x.f))
		}
	case hlo.OpTan:
		if isF {
			return f(Tan(x.f))
		}
	case hlo.OpErf:
		if isF {
			return f(math.Erf(x.f))
		}
	case hlo.OpIsFinite:
		if isF {
			return bl(!math.IsNaN(x.f) && !math.IsInf(x.f, 0))
		}
	case hlo.OpNot:
		switch {
		case isB:
			return bl(x.u == 0)
		case isS:
			return s(^x.i)
		case isU:
			return u(^x.u)
		}
	case hlo.OpPopcnt:
		if isS || isU {
			v := x.u
			if isS {
				v = wrapU(t, uint64(x.i))
			}
			c := int64(0)
			for ; v != 0; v &= v - 1 {
				c++
			}
			return count(c)
		}
	case hlo.OpClz:
		if isS || isU {
			v := x.u
			if isS {
				v = wrapU(t, uint64(x.i))
			}
			c := int64(0)
			for bit := t.Bits() - 1; bit >= 0 && v&(1<<uint(bit)) == 0; bit-- {
				c++
			}
			return count(c)
		}
	case hlo.OpConvert:
		return convert(t, out, x), nil
	case hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide, hlo.OpRemainder, hlo.OpMaximum, hlo.OpMinimum,
		hlo.OpPower, hlo.OpAtan2, hlo.OpAnd, hlo.OpOr, hlo.OpXor, hlo.OpShiftLeft, hlo.OpShiftRightLogical,
		hlo.OpShiftRightArithmetic:
		return applyBinary(in.Op, t, x, a[1])
	case hlo.OpCompare:
		return bl(compareScalars(t, in.A.Direction, in.A.CompareType == "TOTALORDER", x, a[1]))
	case hlo.OpReducePrecision:
		if isF {
			return scalar{f: reducePrecision(t, x.f, in.A.ExponentBits, in.A.MantissaBits)}, nil
		}
	case hlo.OpSelect:
		if x.u != 0 {
			return a[1], nil
		}
		return a[2], nil
	case hlo.OpClamp:
		r, err := binaryOp(hlo.OpMaximum, t, a[1], a[0])
		if err != nil {
			return r, err
		}
		return binaryOp(hlo.OpMinimum, t, r, a[2])
	}
	return scalar{}, &Unsupported{fmt.Sprintf("%s on %s", in.Op, t)}
}

// deviceF32 holds the functions the device computes in f32 by its own
// steps, for f32 and the floats narrower than it, which the evaluator
// repeats (f32math.go) so that folding gives the device's bits.
var deviceF32 = map[hlo.Opcode]func(float32) float32{
	hlo.OpExp: ExpF32, hlo.OpExpm1: Expm1F32, hlo.OpLog: LogF32, hlo.OpLog1p: Log1pF32,
	hlo.OpTanh: TanhF32, hlo.OpLogistic: LogisticF32, hlo.OpTan: TanF32, hlo.OpErf: ErfF32, hlo.OpCbrt: CbrtF32,
	hlo.OpRsqrt: RsqrtF32,
	hlo.OpSin:   func(x float32) float32 { return SinCosF32(x, false) },
	hlo.OpCos:   func(x float32) float32 { return SinCosF32(x, true) },
}

// deviceF32Binary is deviceF32's binary counterpart.
var deviceF32Binary = map[hlo.Opcode]func(x, y float32) float32{hlo.OpPower: PowF32, hlo.OpAtan2: Atan2F32}

// hyperbolic maps CHLO's functions (hlo.CHLOFunctions: the
// inverse-trigonometric and hyperbolic ops) to Go's functions (built
// once, not per element); asin and acos as atan2 of
// exactly formed sides, where Go's lose digits near ±1 (its acos is
// pi/2 - asin).
var hyperbolic = map[hlo.Opcode]func(float64) float64{
	hlo.OpAcos:  func(x float64) float64 { return math.Atan2(math.Sqrt((1-x)*(1+x)), x) },
	hlo.OpAsin:  func(x float64) float64 { return math.Atan2(x, math.Sqrt((1-x)*(1+x))) },
	hlo.OpAcosh: math.Acosh, hlo.OpAsinh: math.Asinh, hlo.OpAtanh: math.Atanh, hlo.OpCosh: math.Cosh,
	hlo.OpSinh: math.Sinh,
}

// applyBinary computes a binary elementwise op other than compare.
func applyBinary(op hlo.Opcode, t hlo.ElementType, x, y scalar) (scalar, error) {
	if t.IsComplex() {
		return complexOp(op, t, "", nil, []scalar{x, y})
	}
	switch op {
	case hlo.OpAnd:
		return scalar{i: x.i & y.i, u: x.u & y.u}, nil
	case hlo.OpOr:
		return scalar{i: x.i | y.i, u: x.u | y.u}, nil
	case hlo.OpXor:
		return scalar{i: x.i ^ y.i, u: x.u ^ y.u}, nil
	case hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		if !t.IsInteger() {
			return scalar{}, errUnsupported(op, t)
		}
		return shift(op, t, x, y), nil
	}
	return binaryOp(op, t, x, y)
}

func binaryOp(op hlo.Opcode, t hlo.ElementType, x, y scalar) (scalar, error) {
	switch t.Kind() {
	case hlo.KindFloat:
		if fn, ok := deviceF32Binary[op]; ok && t != hlo.F64 {
			return scalar{f: round(t, float64(fn(float32(x.f), float32(y.f))))}, nil
		}
		var r float64
		switch op {
		case hlo.OpAdd:
			r = x.f + y.f
		case hlo.OpSubtract:
			r = x.f - y.f
		case hlo.OpMultiply:
			r = x.f * y.f
		case hlo.OpDivide:
			r = x.f / y.f
		case hlo.OpRemainder:
			r = math.Mod(x.f, y.f)
		case hlo.OpPower:
			r = Pow(x.f, y.f)
		case hlo.OpAtan2:
			r = Atan2(x.f, y.f)
		case hlo.OpMaximum, hlo.OpMinimum:
			// IEEE 754-2019 maximum and minimum: NaN propagates and -0
			// is below +0 (the StableHLO spec's semantics tests).
			switch {
			case math.IsNaN(x.f):
				r = x.f
			case math.IsNaN(y.f):
				r = y.f
			case x.f == y.f && op == hlo.OpMaximum:
				r = math.Float64frombits(math.Float64bits(x.f) & math.Float64bits(y.f))
			case x.f == y.f:
				r = math.Float64frombits(math.Float64bits(x.f) | math.Float64bits(y.f))
			case (op == hlo.OpMaximum) == (x.f > y.f):
				r = x.f
			default:
				r = y.f
			}
		}
		return scalar{f: round(t, r)}, nil
	case hlo.KindSigned:
		var r int64
		minV := int64(-1) << uint(t.Bits()-1)
		switch op {
		case hlo.OpAdd:
			r = x.i + y.i
		case hlo.OpSubtract:
			r = x.i - y.i
		case hlo.OpMultiply:
			r = x.i * y.i
		case hlo.OpDivide:
			switch {
			case y.i == 0:
				r = -1
			case x.i == minV && y.i == -1:
				r = minV
			default:
				r = x.i / y.i
			}
		case hlo.OpRemainder:
			switch {
			case y.i == 0:
				r = x.i
			case x.i == minV && y.i == -1:
				r = 0
			default:
				r = x.i % y.i
			}
		case hlo.OpMaximum:
			r = max(x.i, y.i)
		case hlo.OpMinimum:
			r = min(x.i, y.i)
		case hlo.OpPower:
			r = ipow(x.i, y.i)
		default:
			return scalar{}, errUnsupported(op, t)
		}
		return scalar{i: wrapS(t, r)}, nil
	case hlo.KindUnsigned:
		var r uint64
		switch op {
		case hlo.OpAdd:
			r = x.u + y.u
		case hlo.OpSubtract:
			r = x.u - y.u
		case hlo.OpMultiply:
			r = x.u * y.u
		case hlo.OpDivide:
			if y.u == 0 {
				r = math.MaxUint64
			} else {
				r = x.u / y.u
			}
		case hlo.OpRemainder:
			if y.u == 0 {
				r = x.u
			} else {
				r = x.u % y.u
			}
		case hlo.OpMaximum:
			r = max(x.u, y.u)
		case hlo.OpMinimum:
			r = min(x.u, y.u)
		case hlo.OpPower:
			r = uint64(ipow(int64(x.u), int64(y.u)))
		default:
			return scalar{}, errUnsupported(op, t)
		}
		return scalar{u: wrapU(t, r)}, nil
	case hlo.KindBool:
		switch op {
		case hlo.OpMaximum, hlo.OpOr, hlo.OpAdd:
			return scalar{u: x.u | y.u}, nil
		case hlo.OpMinimum, hlo.OpAnd, hlo.OpMultiply:
			return scalar{u: x.u & y.u}, nil
		}
	}
	return scalar{}, errUnsupported(op, t)
}

// ipow is integer power by squaring; negative exponents give 0 except
// for bases 1 and -1, as in XLA.
func ipow(b, e int64) int64 {
	if e < 0 {
		switch b {
		case 1:
			return 1
		case -1:
			if e%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := int64(1)
	for e > 0 {
		if e&1 == 1 {
			r *= b
		}
		b *= b
		e >>= 1
	}
	return r
}

func shift(op hlo.Opcode, t hlo.ElementType, x, y scalar) scalar {
	bits := uint64(t.Bits())
	amt := y.u
	if t.Kind() == hlo.KindSigned {
		amt = wrapU(t, uint64(y.i))
	}
	v := x.u
	if t.Kind() == hlo.KindSigned {
		v = wrapU(t, uint64(x.i))
	}
	var r uint64
	switch op {
	case hlo.OpShiftLeft:
		if amt < bits {
			r = v << amt
		}
	case hlo.OpShiftRightLogical:
		if amt < bits {
			r = v >> amt
		}
	case hlo.OpShiftRightArithmetic:
		sv := wrapS(t, int64(v))
		if amt >= bits {
			amt = bits - 1
		}
		r = uint64(sv >> amt)
	}
	if t.Kind() == hlo.KindSigned {
		return scalar{i: wrapS(t, int64(r))}
	}
	return scalar{u: wrapU(t, r)}
}

func compare(t hlo.ElementType, dir string, x, y scalar) bool {
	var lt, eq bool
	switch t.Kind() {
	case hlo.KindFloat:
		if math.IsNaN(x.f) || math.IsNaN(y.f) {
			return dir == "NE"
		}
		lt, eq = x.f < y.f, x.f == y.f
	case hlo.KindSigned:
		lt, eq = x.i < y.i, x.i == y.i
	default:
		lt, eq = x.u < y.u, x.u == y.u
	}
	switch dir {
	case "EQ":
		return eq
	case "NE":
		return !eq
	case "LT":
		return lt
	case "LE":
		return lt || eq
	case "GT":
		return !lt && !eq
	case "GE":
		return !lt
	}
	return false
}

// convert follows XLA: float to integer truncates toward zero, saturates,
// and maps NaN to 0; to pred is x != 0.
func convert(from, to hlo.ElementType, x scalar) scalar {
	if from.IsComplex() || to.IsComplex() {
		return convertComplex(from, to, x)
	}
	var f float64
	var i int64
	var isInt bool
	switch from.Kind() {
	case hlo.KindFloat:
		f = x.f
	case hlo.KindSigned:
		i, isInt = x.i, true
		f = float64(x.i)
	case hlo.KindUnsigned, hlo.KindBool:
		i, isInt = int64(x.u), true
		f = float64(x.u)
	}
	switch to.Kind() {
	case hlo.KindBool:
		if isInt {
			return scalar{u: b2u(x.i != 0 || x.u != 0)}
		}
		return scalar{u: b2u(f != 0)}
	case hlo.KindFloat:
		if from.Kind() == hlo.KindUnsigned {
			// float64(uint64) rounds once; then to the target width.
			return scalar{f: roundFromU(to, x.u)}
		}
		if isInt {
			return scalar{f: roundFromI(to, i)}
		}
		return scalar{f: round(to, f)}
	case hlo.KindSigned:
		if isInt {
			if from.Kind() == hlo.KindUnsigned {
				return scalar{i: wrapS(to, int64(x.u))}
			}
			return scalar{i: wrapS(to, i)}
		}
		lo, hi := -math.Ldexp(1, to.Bits()-1), math.Ldexp(1, to.Bits()-1)
		switch {
		case math.IsNaN(f):
			return scalar{i: 0}
		case f <= lo:
			return scalar{i: int64(-1) << uint(to.Bits()-1)}
		case f >= hi:
			return scalar{i: int64(uint64(1)<<uint(to.Bits()-1) - 1)}
		}
		return scalar{i: int64(math.Trunc(f))}
	default:
		if isInt {
			if from.Kind() == hlo.KindSigned {
				return scalar{u: wrapU(to, uint64(x.i))}
			}
			return scalar{u: wrapU(to, x.u)}
		}
		hi := math.Ldexp(1, to.Bits())
		switch {
		case math.IsNaN(f) || f <= 0:
			return scalar{u: 0}
		case f >= hi:
			return scalar{u: wrapU(to, math.MaxUint64)}
		}
		return scalar{u: uint64(math.Trunc(f))}
	}
}

// roundFromI converts an integer to float type t with one rounding
// (through float64 would round twice for large 64-bit values to f32).
func roundFromI(t hlo.ElementType, i int64) float64 {
	if t == hlo.F32 {
		return float64(float32(i))
	}
	return round(t, float64(i))
}

// reducePrecision rounds x to a float with the given exponent and
// mantissa widths and back, as XLA's reduce-precision does: mantissa
// rounded to nearest even, exponents beyond the narrow range overflow to
// infinity or flush to (signed) zero, NaN stays NaN.
func reducePrecision(t hlo.ElementType, x float64, expBits, manBits int64) float64 {
	if t != hlo.F64 && t != hlo.F32 && t != hlo.F16 && t != hlo.BF16 {
		return x
	}
	e, m := t.FloatFields()
	srcExp, srcMan, nbits := uint(e), uint(m), uint(t.Bits())
	bits := encodeFloat(t, x)
	if uint(manBits) < srcMan {
		shift := srcMan - uint(manBits)
		lastBit := uint64(1) << shift
		bias := (lastBit >> 1) - 1
		bits = (bits + (bits&lastBit)>>shift + bias) &^ (lastBit - 1)
	}
	if uint(expBits) < srcExp {
		signMask := uint64(1) << (nbits - 1)
		expMask := (uint64(1)<<srcExp - 1) << srcMan
		bias := uint64(1)<<(srcExp-1) - 1
		rbias := uint64(1)<<(uint(expBits)-1) - 1
		e := bits & expMask
		signedZero := bits & signMask
		switch {
		case e > (bias+rbias)<<srcMan:
			bits = signedZero | expMask
		case e <= (bias-rbias)<<srcMan:
			bits = signedZero
		}
	}
	if nbits < 64 {
		bits &= uint64(1)<<nbits - 1
	}
	if math.IsNaN(x) {
		// The rounding may carry a NaN's mantissa into its exponent, even
		// its sign (0x7fff... becomes -0): XLA keeps the NaN, and with no
		// mantissa bits left makes it +inf.
		if manBits > 0 {
			return x
		}
		return math.Inf(1)
	}
	return decodeFloat(t, bits)
}

func roundFromU(t hlo.ElementType, u uint64) float64 {
	if t == hlo.F32 {
		return float64(float32(u))
	}
	return round(t, float64(u))
}

func errUnsupported(op hlo.Opcode, t hlo.ElementType) error {
	return &Unsupported{fmt.Sprintf("%s on %s", op, t)}
}

// logf is math.Log, except for subnormal inputs, which Go's amd64
// math.Log gets wrong (math.Log(1e-310) is -709.08, not -713.80).
func logf(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// Atan2 is math.Atan2 with C99's sign: Go's takes the sign from y/x,
// which underflows to +0 for a tiny negative y over a huge negative x
// (+pi where C99 has -pi). atan2 is odd in y.
func Atan2(y, x float64) float64 {
	if math.IsNaN(y) {
		return y
	}
	return math.Copysign(math.Atan2(math.Abs(y), x), y)
}

// Pow is x^y within an ulp. Go's math.Pow squares its way to x^int(y),
// doubling the relative error at each step (252 ulp at 0.5498^510.11),
// and inherits math.Log's subnormal error; here y ln x is computed with
// ln x in double-double (the series 2 atanh(f/(2+f)) on the significand
// in [sqrt(1/2), sqrt(2)), checked against a 40-digit logarithm to 1e-21
// relative) and finished with math.Exp. Special values are math.Pow's
// (C99's).
func Pow(x, y float64) float64 {
	if x < 0 && !math.IsInf(x, 0) && y == math.Trunc(y) && math.Abs(y) < 0x1p53 {
		r := Pow(-x, y)
		if math.Mod(y, 2) != 0 {
			r = -r
		}
		return r
	}
	if !(x > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(y) || y == 0 || x == 1 {
		return math.Pow(x, y)
	}
	twoSum := func(a, b float64) (float64, float64) {
		s := a + b
		bb := s - a
		return s, (a - (s - bb)) + (b - bb)
	}
	twoProd := func(a, b float64) (float64, float64) {
		p := a * b
		return p, math.FMA(a, b, -p)
	}
	fr, e := math.Frexp(x)
	if fr == 0.5 && y == math.Trunc(y) && math.Abs(y) < 1<<20 {
		// A power of two to an integer power is a power of two, exact
		// (or 0 or inf), which math.Exp's last-bit error would miss.
		return math.Ldexp(1, (e-1)*int(y))
	}
	mant := fr * 2
	e--
	if mant > math.Sqrt2 {
		mant *= 0.5
		e++
	}
	f := mant - 1
	dh, dl := twoSum(2, f)
	sh := f / dh
	ph, pl := twoProd(sh, dh)
	sl := ((f - ph) - pl - sh*dl) / dh
	s2 := sh * sh
	p := 1.0 / 21
	for _, c := range []float64{1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3} {
		p = p*s2 + c
	}
	tail := sh * s2 * 2 * p
	const ln2Hi, ln2Lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10
	ef := float64(e)
	h, e1 := twoSum(ef*ln2Hi, sh+sh)
	lh, ll := twoSum(h, e1+((sl+sl)+(tail+ef*ln2Lo)))
	th, te := twoProd(y, lh)
	if th > 710 {
		return math.Inf(1)
	}
	if th < -746 {
		return 0
	}
	th, tl := twoSum(th, te+y*ll)
	// e^(th+tl) = e^th (1 + tl), with the tail applied before any
	// scaling by 2^±64 near overflow and underflow, so that the result
	// rounds once (pow(2, 1024) is +inf, not the largest double, and
	// subnormal results are not rounded twice).
	sc := 0
	switch {
	case th > 700:
		th, tl, sc = th-64*ln2Hi, tl-64*ln2Lo, 64 // th - 64 ln2Hi is exact (Exp)
	case th < -700:
		th, tl, sc = th+64*ln2Hi, tl+64*ln2Lo, -64
	}
	r := math.Exp(th)
	return math.Ldexp(r+r*(tl+tl*tl/2), sc)
}

// Exp is math.Exp, except near overflow: Go's amd64 math.Exp returns +Inf
// from 709.4361 (its documented threshold is 709.7827; e^709.5 is
// 1.35e308). Above 700 it takes 2^64 out first: x - 64 ln2Hi is exact
// (64 ln2Hi has 38 bits) and e^(-64 ln2Lo) is 1 - 64 ln2Lo to 7e-17.
func Exp(x float64) float64 {
	if x > 700 && x < 710 {
		const ln2Hi, ln2Lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10
		r := math.Exp(x - 64*ln2Hi)
		return math.Ldexp(r-r*(64*ln2Lo), 64)
	}
	return math.Exp(x)
}
