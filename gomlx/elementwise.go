package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
)

// unaryOps and binaryOps are the one table of GoMLX's elementwise ops that
// are one HLO opcode each (the logical and bitwise ops are HLO's not,
// and, or, xor on pred or integers alike).
var unaryOps = map[backends.OpType]hlo.Opcode{
	backends.OpTypeAbs: hlo.OpAbs, backends.OpTypeNeg: hlo.OpNegate, backends.OpTypeSign: hlo.OpSign,
	backends.OpTypeExp: hlo.OpExp, backends.OpTypeExpm1: hlo.OpExpm1, backends.OpTypeLog: hlo.OpLog,
	backends.OpTypeLog1p: hlo.OpLog1p, backends.OpTypeLogistic: hlo.OpLogistic, backends.OpTypeErf: hlo.OpErf,
	backends.OpTypeSin: hlo.OpSin, backends.OpTypeCos: hlo.OpCos, backends.OpTypeTanh: hlo.OpTanh,
	backends.OpTypeSqrt: hlo.OpSqrt, backends.OpTypeRsqrt: hlo.OpRsqrt,
	backends.OpTypeCeil: hlo.OpCeil, backends.OpTypeFloor: hlo.OpFloor, backends.OpTypeRound: hlo.OpRoundNearestEven,
	backends.OpTypeClz: hlo.OpClz, backends.OpTypeBitCount: hlo.OpPopcnt,
	backends.OpTypeBitwiseNot: hlo.OpNot, backends.OpTypeLogicalNot: hlo.OpNot,
	backends.OpTypeReal: hlo.OpReal, backends.OpTypeImag: hlo.OpImag,
}

var binaryOps = map[backends.OpType]hlo.Opcode{
	backends.OpTypeAdd: hlo.OpAdd, backends.OpTypeSub: hlo.OpSubtract, backends.OpTypeMul: hlo.OpMultiply,
	backends.OpTypeDiv: hlo.OpDivide, backends.OpTypePow: hlo.OpPower, backends.OpTypeRem: hlo.OpRemainder,
	backends.OpTypeMax: hlo.OpMaximum, backends.OpTypeMin: hlo.OpMinimum,
	backends.OpTypeBitwiseAnd: hlo.OpAnd, backends.OpTypeBitwiseOr: hlo.OpOr, backends.OpTypeBitwiseXor: hlo.OpXor,
	backends.OpTypeLogicalAnd: hlo.OpAnd, backends.OpTypeLogicalOr: hlo.OpOr, backends.OpTypeLogicalXor: hlo.OpXor,
	backends.OpTypeShiftLeft: hlo.OpShiftLeft, backends.OpTypeShiftRightArithmetic: hlo.OpShiftRightArithmetic,
	backends.OpTypeShiftRightLogical: hlo.OpShiftRightLogical, backends.OpTypeComplex: hlo.OpComplex,
}

// comparisons maps GoMLX's comparisons to HLO's direction and whether
// they compare floats in IEEE 754's total order.
var comparisons = map[backends.OpType]struct {
	dir   string
	total bool
}{
	backends.OpTypeEqual: {"EQ", false}, backends.OpTypeNotEqual: {"NE", false},
	backends.OpTypeGreaterThan: {"GT", false}, backends.OpTypeGreaterOrEqual: {"GE", false},
	backends.OpTypeLessThan: {"LT", false}, backends.OpTypeLessOrEqual: {"LE", false},
	backends.OpTypeEqualTotalOrder: {"EQ", true}, backends.OpTypeNotEqualTotalOrder: {"NE", true},
	backends.OpTypeGreaterThanTotalOrder: {"GT", true}, backends.OpTypeGreaterOrEqualTotalOrder: {"GE", true},
	backends.OpTypeLessThanTotalOrder: {"LT", true}, backends.OpTypeLessOrEqualTotalOrder: {"LE", true},
}

func (b *Builder) unary(op backends.OpType, x backends.Op) (backends.Op, error) {
	ns, err := b.nodes(op.String(), x)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.UnaryOp(op, ns[0].shape); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	return b.add(op.String(), inst{op: unaryOps[op], args: ns})
}

// binary makes op over lhs and rhs after GoMLX's implicit broadcast: a
// scalar broadcast to the other operand, or axes of size 1 expanded to
// the other's size.
func (b *Builder) binary(op backends.OpType, lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := b.nodes(op.String(), lhs, rhs)
	if err != nil {
		return nil, err
	}
	if shapeinference.StandardBinaryOperations.Has(op) {
		if _, err := shapeinference.BinaryOp(op, ns[0].shape, ns[1].shape); err != nil {
			return nil, fmt.Errorf("vkjit backend: %w", err)
		}
	}
	l, r, err := b.broadcastPair(op.String(), ns[0], ns[1])
	if err != nil {
		return nil, err
	}
	return b.add(op.String(), inst{op: binaryOps[op], args: []*node{l, r}})
}

func (b *Builder) compare(op backends.OpType, lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := b.nodes(op.String(), lhs, rhs)
	if err != nil {
		return nil, err
	}
	c := comparisons[op]
	// (shapeinference.ComparisonOp of v0.26.0 refuses NotEqualTotalOrder:
	// its set of comparisons lacks it. The dtype rules are few.)
	if ns[0].shape.DType.IsComplex() && c.dir != "EQ" && c.dir != "NE" {
		return nil, fmt.Errorf("vkjit backend: %s of %s: complex numbers are not ordered", op, ns[0].shape)
	}
	l, r, err := b.broadcastPair(op.String(), ns[0], ns[1])
	if err != nil {
		return nil, err
	}
	return b.compareNodes(op.String(), l, r, c.dir, c.total)
}

// compareNodes compares two values of one shape: floats as IEEE 754 (or
// its total order), integers by their signedness.
func (b *Builder) compareNodes(opName string, l, r *node, dir string, total bool) (*node, error) {
	typ := compareType(l.shape.DType)
	if total && l.shape.DType.IsFloat() {
		typ = "TOTALORDER"
	}
	return b.add(opName, inst{op: hlo.OpCompare, args: []*node{l, r}, attrs: []string{"direction", dir, "type", typ}})
}

func compareType(dt dtypes.DType) string {
	switch {
	case dt.IsFloat(), dt.IsComplex():
		return "FLOAT"
	case dt.IsUnsigned(), dt == dtypes.Bool:
		return "UNSIGNED"
	default:
		return "SIGNED"
	}
}

// broadcastPair gives two operands one shape by GoMLX's rules (its
// backends' BinaryOp shape inference).
func (b *Builder) broadcastPair(opName string, l, r *node) (*node, *node, error) {
	if l.shape.DType != r.shape.DType {
		return nil, nil, fmt.Errorf("vkjit backend: %s: operands are %s and %s; their dtypes must match", opName, l.shape, r.shape)
	}
	if l.shape.Equal(r.shape) {
		return l, r, nil
	}
	var out shapes.Shape
	switch {
	case l.shape.IsScalar():
		out = r.shape
	case r.shape.IsScalar():
		out = l.shape
	default:
		if l.shape.Rank() != r.shape.Rank() {
			return nil, nil, fmt.Errorf("vkjit backend: %s: operands %s and %s: ranks differ and neither is a scalar", opName, l.shape, r.shape)
		}
		out = l.shape.Clone()
		for i, d := range r.shape.Dimensions {
			switch ld := l.shape.Dimensions[i]; {
			case ld == d, d == 1:
			case ld == 1:
				out.Dimensions[i] = d
			default:
				return nil, nil, fmt.Errorf("vkjit backend: %s: operands %s and %s differ in axis %d", opName, l.shape, r.shape, i)
			}
		}
	}
	var err error
	if l, err = b.broadcastTo(opName, l, out); err != nil {
		return nil, nil, err
	}
	if r, err = b.broadcastTo(opName, r, out); err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// broadcastTo broadcasts x (a scalar, or of out's rank with axes of size 1
// where out is larger) to out's dimensions.
func (b *Builder) broadcastTo(opName string, x *node, out shapes.Shape) (*node, error) {
	if x.shape.Equal(out) {
		return x, nil
	}
	if x.shape.IsScalar() {
		return b.broadcastInDim(opName, x, out.Dimensions, nil)
	}
	axes := make([]int, x.shape.Rank())
	for i := range axes {
		axes[i] = i
	}
	return b.broadcastInDim(opName, x, out.Dimensions, axes)
}

// Unary ops.

// Abs implements backends.Builder: an unsigned integer is its own
// absolute value (HLO's abs takes signed ones); a complex number's is
// real.
func (b *Builder) Abs(x backends.Op) (backends.Op, error) {
	if ns, err := b.nodes("Abs", x); err == nil && ns[0].shape.DType.IsUnsigned() {
		return ns[0], nil
	}
	return b.unary(backends.OpTypeAbs, x)
}

// Sign implements backends.Builder: for an unsigned integer min(x, 1)
// (HLO's sign takes signed ones).
func (b *Builder) Sign(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Sign", x)
	if err != nil {
		return nil, err
	}
	if dt := ns[0].shape.DType; dt.IsUnsigned() {
		one, err := b.scalar("Sign", dt, 1)
		if err != nil {
			return nil, err
		}
		if one, err = b.broadcastTo("Sign", one, ns[0].shape); err != nil {
			return nil, err
		}
		return b.add("Sign", inst{op: hlo.OpMinimum, args: []*node{ns[0], one}})
	}
	return b.unary(backends.OpTypeSign, x)
}

func (b *Builder) Neg(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeNeg, x) }
func (b *Builder) Exp(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeExp, x) }
func (b *Builder) Expm1(x backends.Op) (backends.Op, error) { return b.unary(backends.OpTypeExpm1, x) }
func (b *Builder) Log(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeLog, x) }
func (b *Builder) Log1p(x backends.Op) (backends.Op, error) { return b.unary(backends.OpTypeLog1p, x) }
func (b *Builder) Logistic(x backends.Op) (backends.Op, error) {
	return b.unary(backends.OpTypeLogistic, x)
}
func (b *Builder) Erf(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeErf, x) }
func (b *Builder) Sin(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeSin, x) }
func (b *Builder) Cos(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeCos, x) }
func (b *Builder) Tanh(x backends.Op) (backends.Op, error)  { return b.unary(backends.OpTypeTanh, x) }
func (b *Builder) Sqrt(x backends.Op) (backends.Op, error)  { return b.unary(backends.OpTypeSqrt, x) }
func (b *Builder) Rsqrt(x backends.Op) (backends.Op, error) { return b.unary(backends.OpTypeRsqrt, x) }
func (b *Builder) Ceil(x backends.Op) (backends.Op, error)  { return b.unary(backends.OpTypeCeil, x) }
func (b *Builder) Floor(x backends.Op) (backends.Op, error) { return b.unary(backends.OpTypeFloor, x) }
func (b *Builder) Round(x backends.Op) (backends.Op, error) { return b.unary(backends.OpTypeRound, x) }
func (b *Builder) Clz(x backends.Op) (backends.Op, error)   { return b.unary(backends.OpTypeClz, x) }
func (b *Builder) BitCount(x backends.Op) (backends.Op, error) {
	return b.unary(backends.OpTypeBitCount, x)
}
func (b *Builder) BitwiseNot(x backends.Op) (backends.Op, error) {
	return b.unary(backends.OpTypeBitwiseNot, x)
}
func (b *Builder) LogicalNot(x backends.Op) (backends.Op, error) {
	return b.unary(backends.OpTypeLogicalNot, x)
}

// Real implements backends.Builder: a float's real part is itself.
func (b *Builder) Real(x backends.Op) (backends.Op, error) { return b.part(backends.OpTypeReal, x) }

// Imag implements backends.Builder: a float's imaginary part is zero.
func (b *Builder) Imag(x backends.Op) (backends.Op, error) { return b.part(backends.OpTypeImag, x) }

func (b *Builder) part(op backends.OpType, x backends.Op) (backends.Op, error) {
	ns, err := b.nodes(op.String(), x)
	if err != nil {
		return nil, err
	}
	if ns[0].shape.DType.IsFloat() {
		if op == backends.OpTypeReal {
			return ns[0], nil
		}
		zero, err := b.scalar(op.String(), ns[0].shape.DType, 0)
		if err != nil {
			return nil, err
		}
		return b.broadcastTo(op.String(), zero, ns[0].shape)
	}
	return b.unary(op, x)
}

// Conj implements backends.Builder: complex(real(x), -imag(x)).
func (b *Builder) Conj(x backends.Op) (backends.Op, error) {
	const name = "Conj"
	ns, err := b.nodes(name, x)
	if err != nil {
		return nil, err
	}
	if _, err := shapeinference.UnaryOp(backends.OpTypeConj, ns[0].shape); err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	re, err := b.add(name, inst{op: hlo.OpReal, args: ns})
	if err != nil {
		return nil, err
	}
	im, err := b.add(name, inst{op: hlo.OpImag, args: ns})
	if err != nil {
		return nil, err
	}
	if im, err = b.add(name, inst{op: hlo.OpNegate, args: []*node{im}}); err != nil {
		return nil, err
	}
	return b.add(name, inst{op: hlo.OpComplex, args: []*node{re, im}})
}

// IsFinite implements backends.Builder.
func (b *Builder) IsFinite(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("IsFinite", x)
	if err != nil {
		return nil, err
	}
	if !ns[0].shape.DType.IsFloat() {
		return nil, fmt.Errorf("vkjit backend: IsFinite of %s: it takes floats", ns[0].shape)
	}
	return b.add("IsFinite", inst{op: hlo.OpIsFinite, args: ns})
}

// IsNaN implements backends.Builder: x != x (an integer never is NaN).
func (b *Builder) IsNaN(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("IsNaN", x)
	if err != nil {
		return nil, err
	}
	switch dt := ns[0].shape.DType; {
	case dt.IsFloat():
		return b.compareNodes("IsNaN", ns[0], ns[0], "NE", false)
	case dt.IsInt():
		no, err := b.scalar("IsNaN", dtypes.Bool, 0)
		if err != nil {
			return nil, err
		}
		return b.broadcastTo("IsNaN", no, shapes.Make(dtypes.Bool, ns[0].shape.Dimensions...))
	}
	return nil, fmt.Errorf("vkjit backend: IsNaN of %s: it takes floats and integers", ns[0].shape)
}

// Binary ops.

func (b *Builder) Add(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeAdd, l, r)
}
func (b *Builder) Sub(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeSub, l, r)
}
func (b *Builder) Mul(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeMul, l, r)
}
func (b *Builder) Div(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeDiv, l, r)
}
func (b *Builder) Pow(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypePow, l, r)
}
func (b *Builder) Rem(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeRem, l, r)
}
func (b *Builder) Max(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeMax, l, r)
}
func (b *Builder) Min(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeMin, l, r)
}
func (b *Builder) BitwiseAnd(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeBitwiseAnd, l, r)
}
func (b *Builder) BitwiseOr(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeBitwiseOr, l, r)
}
func (b *Builder) BitwiseXor(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeBitwiseXor, l, r)
}
func (b *Builder) LogicalAnd(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeLogicalAnd, l, r)
}
func (b *Builder) LogicalOr(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeLogicalOr, l, r)
}
func (b *Builder) LogicalXor(l, r backends.Op) (backends.Op, error) {
	return b.binary(backends.OpTypeLogicalXor, l, r)
}
func (b *Builder) ShiftLeft(l, r backends.Op) (backends.Op, error) {
	return b.shift(backends.OpTypeShiftLeft, l, r)
}
func (b *Builder) ShiftRightArithmetic(l, r backends.Op) (backends.Op, error) {
	return b.shift(backends.OpTypeShiftRightArithmetic, l, r)
}
func (b *Builder) ShiftRightLogical(l, r backends.Op) (backends.Op, error) {
	return b.shift(backends.OpTypeShiftRightLogical, l, r)
}

func (b *Builder) shift(op backends.OpType, l, r backends.Op) (backends.Op, error) {
	ns, err := b.nodes(op.String(), l, r)
	if err != nil {
		return nil, err
	}
	if dt := ns[0].shape.DType; !dt.IsInt() {
		return nil, fmt.Errorf("vkjit backend: %s of %s: it takes integers", op, ns[0].shape)
	}
	return b.binary(op, l, r)
}

// Complex implements backends.Builder: f32 parts make c64, f64 c128.
func (b *Builder) Complex(l, r backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Complex", l, r)
	if err != nil {
		return nil, err
	}
	if dt := ns[0].shape.DType; dt != dtypes.Float32 && dt != dtypes.Float64 {
		return nil, fmt.Errorf("vkjit backend: Complex of %s: its parts must be Float32 or Float64", ns[0].shape)
	}
	return b.binary(backends.OpTypeComplex, l, r)
}

// Comparisons.

func (b *Builder) Equal(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeEqual, l, r)
}
func (b *Builder) NotEqual(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeNotEqual, l, r)
}
func (b *Builder) GreaterThan(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeGreaterThan, l, r)
}
func (b *Builder) GreaterOrEqual(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeGreaterOrEqual, l, r)
}
func (b *Builder) LessThan(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeLessThan, l, r)
}
func (b *Builder) LessOrEqual(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeLessOrEqual, l, r)
}
func (b *Builder) EqualTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeEqualTotalOrder, l, r)
}
func (b *Builder) NotEqualTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeNotEqualTotalOrder, l, r)
}
func (b *Builder) GreaterThanTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeGreaterThanTotalOrder, l, r)
}
func (b *Builder) GreaterOrEqualTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeGreaterOrEqualTotalOrder, l, r)
}
func (b *Builder) LessThanTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeLessThanTotalOrder, l, r)
}
func (b *Builder) LessOrEqualTotalOrder(l, r backends.Op) (backends.Op, error) {
	return b.compare(backends.OpTypeLessOrEqualTotalOrder, l, r)
}
