package gomlx

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

type unaryFn func(backends.Builder, backends.Op) (backends.Op, error)
type binaryFn func(backends.Builder, backends.Op, backends.Op) (backends.Op, error)

func one(outs backends.Op, err error) ([]backends.Op, error) { return []backends.Op{outs}, err }

func unaryCase(name string, fn unaryFn, ulps int64, a arg) opCase {
	return opCase{name: name, args: []arg{a}, ulps: ulps,
		build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(fn(f, x[0]))
		}}
}

func binaryCase(name string, fn binaryFn, ulps int64, a, b arg) opCase {
	return opCase{name: name, args: []arg{a, b}, ulps: ulps,
		build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(fn(f, x[0], x[1]))
		}}
}

// Transcendental functions: vkjit's own math library against Go's
// float64 math (simplego) and the evaluator's; docs/ACCURACY.md has the
// measured errors, a few ulps at most.
const mathULPs = 4

func TestUnaryOps(t *testing.T) {
	x := of(3, 5)
	runCases(t, []opCase{
		unaryCase("Abs", backends.Builder.Abs, 1, x), // complex: 1 ulp

		unaryCase("Neg", backends.Builder.Neg, 0, x),
		unaryCase("Sign", backends.Builder.Sign, 2, x), // complex: x/|x|
		unaryCase("Exp", backends.Builder.Exp, mathULPs, x),
		unaryCase("Expm1", backends.Builder.Expm1, mathULPs, x),
		unaryCase("Log", backends.Builder.Log, mathULPs, x),
		unaryCase("Log1p", backends.Builder.Log1p, mathULPs, x),
		unaryCase("Logistic", backends.Builder.Logistic, mathULPs, x),
		unaryCase("Erf", backends.Builder.Erf, mathULPs, x),
		unaryCase("Sin", backends.Builder.Sin, mathULPs, notHuge),
		unaryCase("Cos", backends.Builder.Cos, mathULPs, notHuge),
		hugeArgs(unaryCase("SinHuge", backends.Builder.Sin, mathULPs, of(4).with(huge))),
		hugeArgs(unaryCase("CosHuge", backends.Builder.Cos, mathULPs, of(4).with(huge))),
		unaryCase("Tanh", backends.Builder.Tanh, mathULPs, x),
		unaryCase("Sqrt", backends.Builder.Sqrt, 1, x),
		unaryCase("Rsqrt", backends.Builder.Rsqrt, 2, x),
		unaryCase("Ceil", backends.Builder.Ceil, 0, x),
		unaryCase("Floor", backends.Builder.Floor, 0, x),
		roundCase,
		unaryCase("Clz", backends.Builder.Clz, 0, x),
		unaryCase("BitCount", backends.Builder.BitCount, 0, x),
		unaryCase("BitwiseNot", backends.Builder.BitwiseNot, 0, x),
		unaryCase("LogicalNot", backends.Builder.LogicalNot, 0, x),
		unaryCase("Real", backends.Builder.Real, 0, x),
		unaryCase("Imag", backends.Builder.Imag, 0, x),
		unaryCase("Conj", backends.Builder.Conj, 0, x),
		unaryCase("IsFinite", backends.Builder.IsFinite, 0, x),
		unaryCase("IsNaN", backends.Builder.IsNaN, 0, x),
		unaryCase("Identity", backends.Builder.Identity, 0, x),
	})
}

// Go's math.Sin and math.Cos are tens of ulps off past about 1e20
// (sin(-1e30): glibc and vkjit give -0.009331468931175825, Go
// -0.009331468931175894), so simplego is no oracle there: huge arguments
// have cases of their own, against the evaluator's exact reduction.
var notHuge = of(3, 5).with(func(rng *rand.Rand, s shapes.Shape) []byte {
	b := random(rng, s)
	if s.DType == dtypes.Float64 || s.DType == dtypes.Complex128 {
		for i := 0; i < len(b); i += 8 {
			if v := math.Float64frombits(binary.LittleEndian.Uint64(b[i:])); math.Abs(v) > 1e15 && !math.IsInf(v, 0) {
				binary.LittleEndian.PutUint64(b[i:], math.Float64bits(math.Mod(v, 1e15)))
			}
		}
	}
	return b
})

func huge(rng *rand.Rand, s shapes.Shape) []byte {
	return floats(1e20, 1e30, false)(rng, s)
}

func hugeArgs(c opCase) opCase {
	c.types = []dtypes.DType{dtypes.Float32, dtypes.Float64}
	c.evalOnly = "Go's math.Sin and math.Cos lose accuracy past about 1e20"
	return c
}

// GoMLX's Round rounds halves to even, as its interface says and XLA
// does; simplego rounds them away from zero (math.Round).
var roundCase = opCase{name: "Round", args: []arg{of(3, 5)}, evalOnly: "simplego rounds halves away from zero, against the interface's half to even",
	build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return one(f.Round(x[0]))
	}}

var (
	integers         = []dtypes.DType{dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16, dtypes.Uint32, dtypes.Uint64}
	floatsAndComplex = []dtypes.DType{dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64, dtypes.Complex64, dtypes.Complex128}
	floatTypes       = []dtypes.DType{dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64}
)

// over restricts a case to dtypes.
func (c opCase) over(types []dtypes.DType) opCase { c.types = types; return c }

// xla makes the evaluator (XLA's semantics) the case's only oracle, for
// why.
func (c opCase) xla(why string) opCase { c.evalOnly = why; return c }

func TestBinaryOps(t *testing.T) {
	x, d := of(3, 5), of(3, 5).with(nonZero)
	runCases(t, []opCase{
		binaryCase("Add", backends.Builder.Add, 0, x, x),
		binaryCase("Sub", backends.Builder.Sub, 0, x, x),
		binaryCase("Mul", backends.Builder.Mul, 0, x, x),
		binaryCase("Div", backends.Builder.Div, 2, x, d), // complex: Smith's algorithm
		binaryCase("Rem", backends.Builder.Rem, 0, x, d),
		binaryCase("Pow", backends.Builder.Pow, 64, x, x).over(floatsAndComplex), // complex: exp(y log x), as XLA
		binaryCase("PowInt", backends.Builder.Pow, 0, x, of(3, 5).with(ints(0, 9))).over(integers),
		binaryCase("PowIntEdges", backends.Builder.Pow, 0, x, x).over(integers).xla(
			"XLA's integer pow of a negative exponent (signed, as XLA compares it) is 0 unless the base is 1; simplego differs"),
		binaryCase("Max", backends.Builder.Max, 0, x, x),
		binaryCase("Min", backends.Builder.Min, 0, x, x),
		binaryCase("BitwiseAnd", backends.Builder.BitwiseAnd, 0, x, x),
		binaryCase("BitwiseOr", backends.Builder.BitwiseOr, 0, x, x),
		binaryCase("BitwiseXor", backends.Builder.BitwiseXor, 0, x, x),
		binaryCase("LogicalAnd", backends.Builder.LogicalAnd, 0, x, x),
		binaryCase("LogicalOr", backends.Builder.LogicalOr, 0, x, x),
		binaryCase("LogicalXor", backends.Builder.LogicalXor, 0, x, x),
		binaryCase("ShiftLeft", backends.Builder.ShiftLeft, 0, x, x),
		binaryCase("ShiftRightArithmetic", backends.Builder.ShiftRightArithmetic, 0, x, x),
		binaryCase("ShiftRightLogical", backends.Builder.ShiftRightLogical, 0, x, x),
		binaryCase("Complex", backends.Builder.Complex, 0, x, x),
		// GoMLX's implicit broadcasts: a scalar, and axes of size 1.
		binaryCase("AddScalar", backends.Builder.Add, 0, of(), x),
		binaryCase("MulExpand", backends.Builder.Mul, 0, of(3, 1), of(1, 5)),
		binaryCase("MaxExpand", backends.Builder.Max, 0, of(3, 5), of(3, 1)),
	})
}

func TestComparisons(t *testing.T) {
	x := of(4, 5)
	runCases(t, []opCase{
		binaryCase("Equal", backends.Builder.Equal, 0, x, x),
		binaryCase("NotEqual", backends.Builder.NotEqual, 0, x, x),
		binaryCase("GreaterThan", backends.Builder.GreaterThan, 0, x, x),
		binaryCase("GreaterOrEqual", backends.Builder.GreaterOrEqual, 0, x, x),
		binaryCase("LessThan", backends.Builder.LessThan, 0, x, x),
		binaryCase("LessOrEqual", backends.Builder.LessOrEqual, 0, x, x),
		binaryCase("EqualTotalOrder", backends.Builder.EqualTotalOrder, 0, x, x),
		binaryCase("NotEqualTotalOrder", backends.Builder.NotEqualTotalOrder, 0, x, x),
		binaryCase("GreaterThanTotalOrder", backends.Builder.GreaterThanTotalOrder, 0, x, x),
		binaryCase("GreaterOrEqualTotalOrder", backends.Builder.GreaterOrEqualTotalOrder, 0, x, x),
		binaryCase("LessThanTotalOrder", backends.Builder.LessThanTotalOrder, 0, x, x),
		binaryCase("LessOrEqualTotalOrder", backends.Builder.LessOrEqualTotalOrder, 0, x, x),
		binaryCase("LessThanScalar", backends.Builder.LessThan, 0, x, of()),
	})
}

func TestSelection(t *testing.T) {
	pred := fixed(dtypes.Bool, 3, 5)
	runCases(t, []opCase{
		{name: "Where", args: []arg{pred, of(3, 5), of(3, 5)}, build: where},
		{name: "WhereScalars", args: []arg{pred, of(), of(3, 5)}, build: where},
		{name: "WhereScalarCondition", args: []arg{fixed(dtypes.Bool), of(3, 5), of(3, 5)}, build: where},
		{name: "Clamp", args: []arg{of(), of(3, 5), of()}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Clamp(x[0], x[1], x[2]))
		}},
		{name: "ClampArrays", args: []arg{of(3, 5), of(3, 5), of(3, 5)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Clamp(x[0], x[1], x[2]))
		}},
	})
}

func where(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
	return one(f.Where(x[0], x[1], x[2]))
}

// convertible makes values every dtype converts to the target's the same
// way in XLA and in Go: floats within (0, 100) (Go leaves floats out of
// an integer's range, NaN and negatives to unsigned, implementation-
// defined; XLA saturates them, which TestConvertEdges checks).
func convertible(to dtypes.DType) func(rng *rand.Rand, s shapes.Shape) []byte {
	return func(rng *rand.Rand, s shapes.Shape) []byte {
		if (s.DType.IsFloat() || s.DType.IsComplex()) && (to.IsInt() || to == dtypes.Bool) {
			return floats(0.01, 100, true)(rng, s)
		}
		if s.DType.IsInt() && to.IsFloat() && to.Size() == 2 {
			return ints(0, 100)(rng, s) // Go's float16 rounds large integers differently
		}
		return random(rng, s)
	}
}

func TestConvertDType(t *testing.T) {
	var cases []opCase
	for _, to := range allDTyp {
		cases = append(cases, opCase{name: "ConvertTo" + to.String(), args: []arg{of(3, 5).with(convertible(to))},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.ConvertDType(x[0], to))
			}})
	}
	runCases(t, cases)
}

// TestConvertEdges checks XLA's conversions where Go's differ: NaN to 0,
// out-of-range floats saturated (against the evaluator: simplego uses
// Go's conversions).
func TestConvertEdges(t *testing.T) {
	for _, to := range []dtypes.DType{dtypes.Int8, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint32} {
		c := opCase{name: "ConvertEdges" + to.String(), args: []arg{of(4, 4)},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.ConvertDType(x[0], to))
			}, types: []dtypes.DType{dtypes.Float32, dtypes.Float64}, evalOnly: "Go's float-to-integer conversions of NaN and out-of-range values are implementation-defined"}
		runCases(t, []opCase{c})
	}
}

func TestBitcast(t *testing.T) {
	bitcast := func(to dtypes.DType) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Bitcast(x[0], to))
		}
	}
	f32 := []dtypes.DType{dtypes.Float32}
	runCases(t, []opCase{
		{name: "BitcastToInt32", args: []arg{of(3, 5)}, build: bitcast(dtypes.Int32), types: f32},
		{name: "BitcastToUint16", args: []arg{of(3, 5)}, build: bitcast(dtypes.Uint16), types: f32},
		{name: "BitcastToFloat32", args: []arg{of(3, 4)}, build: bitcast(dtypes.Float32), types: []dtypes.DType{dtypes.Uint8, dtypes.Int32}},
		{name: "BitcastToFloat64", args: []arg{of(3, 2)}, build: bitcast(dtypes.Float64), types: []dtypes.DType{dtypes.Float32, dtypes.Uint32}},
	})
}

func TestShapeOps(t *testing.T) {
	runCases(t, []opCase{
		{name: "BroadcastInDim", args: []arg{of(3)}, build: func(f backends.Builder, dt dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.BroadcastInDim(x[0], shapes.Make(dt, 2, 3), []int{1}))
		}},
		{name: "BroadcastInDimExpand", args: []arg{of(3, 1)}, build: func(f backends.Builder, dt dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.BroadcastInDim(x[0], shapes.Make(dt, 2, 3, 4), []int{1, 2}))
		}},
		{name: "BroadcastScalar", args: []arg{of()}, build: func(f backends.Builder, dt dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.BroadcastInDim(x[0], shapes.Make(dt, 2, 2), nil))
		}},
		{name: "Iota", build: func(f backends.Builder, dt dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Iota(shapes.Make(dt, 3, 4), 1))
		}, types: []dtypes.DType{dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Float32, dtypes.Float64, dtypes.BFloat16, dtypes.Float16}},
		{name: "Reshape", args: []arg{of(3, 5)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Reshape(x[0], 5, 1, 3))
		}},
		{name: "Transpose", args: []arg{of(2, 3, 4)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Transpose(x[0], 2, 0, 1))
		}},
		{name: "Reverse", args: []arg{of(3, 5)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Reverse(x[0], 0, 1))
		}},
		{name: "Slice", args: []arg{of(7, 5)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Slice(x[0], []int{1, 0}, []int{7, 5}, []int{2, 2}))
		}},
		{name: "Pad", args: []arg{of(3, 4), of()}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Pad(x[0], x[1], backends.PadAxis{Start: 1, End: 2, Interior: 1}, backends.PadAxis{Start: 0, End: -1}))
		}},
		{name: "Concatenate", args: []arg{of(3, 2), of(3, 5), of(3, 1)}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Concatenate(1, x...))
		}},
		{name: "DynamicSlice", args: []arg{of(5, 6), fixed(dtypes.Int32).with(ints(-3, 8)), fixed(dtypes.Int32).with(ints(-3, 8))},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.DynamicSlice(x[0], x[1:], []int{2, 3}))
			}},
		{name: "DynamicSliceVector", args: []arg{of(5, 6), fixed(dtypes.Int32, 2).with(ints(-3, 8))},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.DynamicSlice(x[0], x[1:], []int{3, 2}))
			}},
		{name: "DynamicUpdateSlice", args: []arg{of(5, 6), of(2, 3), fixed(dtypes.Int32).with(ints(-3, 8)), fixed(dtypes.Int64).with(ints(-3, 8))},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.DynamicUpdateSlice(x[0], x[1], x[2:]))
			}},
	})
}

// Sums are compared relative to the output's largest magnitude: the
// device adds in another order than a sequential loop. In f16 and bf16,
// whose every step rounds, two orders of n terms may differ by n - 1
// roundings of half an ulp each way: n ulps (orderULPs).
const sumRel = 1e-5

// orderULPs is that bound for a sum or product of n terms.
func orderULPs(n int) int64 { return int64(max(n, 1)) }

func TestReductions(t *testing.T) {
	var cases []opCase
	reductions := []struct {
		name string
		fn   func(backends.Builder, backends.Op, ...int) (backends.Op, error)
	}{
		{"ReduceSum", backends.Builder.ReduceSum}, {"ReduceProduct", backends.Builder.ReduceProduct},
		{"ReduceMax", backends.Builder.ReduceMax}, {"ReduceMin", backends.Builder.ReduceMin},
		{"ReduceBitwiseAnd", backends.Builder.ReduceBitwiseAnd}, {"ReduceBitwiseOr", backends.Builder.ReduceBitwiseOr},
		{"ReduceBitwiseXor", backends.Builder.ReduceBitwiseXor}, {"ReduceLogicalAnd", backends.Builder.ReduceLogicalAnd},
		{"ReduceLogicalOr", backends.Builder.ReduceLogicalOr}, {"ReduceLogicalXor", backends.Builder.ReduceLogicalXor},
	}
	for _, r := range reductions {
		for _, axes := range [][]int{{1}, {0, 2}, nil} {
			// Products of random values overflow: values near one.
			a := of(4, 6, 3)
			if r.name == "ReduceProduct" {
				a = a.with(func(rng *rand.Rand, s shapes.Shape) []byte {
					if s.DType.IsFloat() || s.DType.IsComplex() {
						return floats(0.8, 1.25, false)(rng, s)
					}
					return random(rng, s)
				})
			}
			ulps, n := int64(1), 1
			for d, size := range []int{4, 6, 3} {
				if axes == nil || slices.Contains(axes, d) {
					n *= size
				}
			}
			if r.name == "ReduceSum" || r.name == "ReduceProduct" {
				ulps = orderULPs(n)
			}
			cases = append(cases, opCase{name: r.name + intList(axes), args: []arg{a}, rel: sumRel, ulps: ulps,
				build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
					return one(r.fn(f, x[0], axes...))
				}})
		}
	}
	runCases(t, cases)
}

func TestArgMinMax(t *testing.T) {
	var cases []opCase
	for _, isMin := range []bool{true, false} {
		for _, out := range []dtypes.DType{dtypes.Int32, dtypes.Int64} {
			for _, axis := range []int{1, 0} {
				cases = append(cases, opCase{name: "ArgMinMax" + map[bool]string{true: "Min", false: "Max"}[isMin] + out.String() + intList([]int{axis}),
					args: []arg{of(5, 7)},
					build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
						return one(f.ArgMinMax(x[0], axis, out, isMin))
					}})
			}
		}
	}
	runCases(t, cases)
}

func TestWindows(t *testing.T) {
	rw := func(typ backends.ReduceOpType, win, strides, baseDil, winDil []int, pads [][2]int) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.ReduceWindow(x[0], typ, win, strides, baseDil, winDil, pads))
		}
	}
	img := of(2, 6, 6, 2)
	sas := func(max bool) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			if max {
				return one(f.SelectAndScatterMax(x[0], x[1], []int{1, 2, 2, 1}, nil, nil))
			}
			return one(f.SelectAndScatterMin(x[0], x[1], []int{1, 2, 2, 1}, []int{1, 2, 2, 1}, [][2]int{{0, 0}, {0, 0}, {0, 0}, {0, 0}}))
		}
	}
	runCases(t, []opCase{
		{name: "MaxPool", args: []arg{img}, build: rw(backends.ReduceOpMax, []int{1, 2, 2, 1}, nil, nil, nil, nil)},
		{name: "MinPoolPadded", args: []arg{img}, build: rw(backends.ReduceOpMin, []int{1, 3, 3, 1}, []int{1, 2, 2, 1}, nil, nil, [][2]int{{0, 0}, {1, 1}, {1, 1}, {0, 0}})},
		{name: "SumPoolDilated", args: []arg{img}, rel: sumRel, ulps: 1, build: rw(backends.ReduceOpSum, []int{1, 2, 2, 1}, []int{1, 1, 1, 1}, []int{1, 2, 1, 1}, []int{1, 1, 2, 1}, nil)},
		{name: "ProductWindow", args: []arg{of(3, 7).with(floats(0.5, 1.5, false))}, rel: sumRel, ulps: 1, build: rw(backends.ReduceOpProduct, []int{1, 3}, []int{1, 1}, nil, nil, nil),
			types: []dtypes.DType{dtypes.Float32, dtypes.Float64}},
		{name: "SelectAndScatterMax", args: []arg{of(2, 4, 4, 2), of(2, 2, 2, 2)}, build: sas(true), rel: sumRel},
		{name: "SelectAndScatterMin", args: []arg{of(2, 4, 4, 2), of(2, 2, 2, 2)}, build: sas(false), rel: sumRel},
	})
}

func TestGatherScatter(t *testing.T) {
	idx := fixed(dtypes.Int32, 4, 1).with(ints(-1, 6)) // out of range: clamped
	in := fixed(dtypes.Int32, 4, 1).with(ints(0, 4))
	scatter := func(fn func(backends.Builder, backends.Op, backends.Op, backends.Op, int, []int, []int, []int, bool, bool) (backends.Op, error)) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(fn(f, x[0], x[1], x[2], 1, []int{1}, []int{0}, []int{0}, false, false))
		}
	}
	runCases(t, []opCase{
		{name: "Gather", args: []arg{of(5, 3), idx}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Gather(x[0], x[1], 1, []int{1}, []int{0}, []int{0}, []int{1, 3}, false))
		}},
		{name: "Gather2D", args: []arg{of(4, 5, 3), fixed(dtypes.Int64, 2, 3, 2).with(ints(0, 3))}, build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.Gather(x[0], x[1], 2, []int{2}, []int{0, 1}, []int{0, 1}, []int{1, 1, 3}, false))
		}},
		{name: "ScatterSum", args: []arg{of(5, 3), in, of(4, 3)}, build: scatter(backends.Builder.ScatterSum), rel: sumRel},
		{name: "ScatterMax", args: []arg{of(5, 3), in, of(4, 3)}, build: scatter(backends.Builder.ScatterMax)},
		{name: "ScatterMin", args: []arg{of(5, 3), in, of(4, 3)}, build: scatter(backends.Builder.ScatterMin)},
	})
}

// Products are compared relative to the output's largest magnitude, on
// values of moderate size (no infinities, which make NaNs of sums in
// any order).
var moderate = func(rng *rand.Rand, s shapes.Shape) []byte {
	if s.DType.IsFloat() || s.DType.IsComplex() {
		return floats(0.1, 2, false)(rng, s)
	}
	return ints(-20, 20)(rng, s)
}

// convTypes are the numbers (the device convolves complex numbers as
// four real convolutions).
var convTypes = []dtypes.DType{dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16,
	dtypes.Uint32, dtypes.Uint64, dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64,
	dtypes.Complex64, dtypes.Complex128}

func TestDotConv(t *testing.T) {
	m := func(dims ...int) arg { return of(dims...).with(moderate) }
	dot := func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return one(f.Dot(x[0], x[1]))
	}
	conv := func(axes backends.ConvolveAxesConfig, strides []int, pads [][2]int, inDil, kDil []int, groups int) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.ConvGeneral(x[0], x[1], axes, strides, pads, inDil, kDil, groups, 1))
		}
	}
	nhwc := backends.ConvolveAxesConfig{InputBatch: 0, InputChannels: 3, InputSpatial: []int{1, 2},
		KernelInputChannels: 2, KernelOutputChannels: 3, KernelSpatial: []int{0, 1},
		OutputBatch: 0, OutputChannels: 3, OutputSpatial: []int{1, 2}}
	nchw := backends.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, InputSpatial: []int{2, 3},
		KernelInputChannels: 1, KernelOutputChannels: 0, KernelSpatial: []int{2, 3},
		OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}
	runCases(t, []opCase{
		{name: "DotVectors", args: []arg{m(7), m(7)}, build: dot, rel: sumRel, ulps: 1},
		{name: "DotMatrixVector", args: []arg{m(3, 7), m(7)}, build: dot, rel: sumRel, ulps: 1},
		{name: "DotMatrices", args: []arg{m(3, 7), m(7, 4)}, build: dot, rel: sumRel, ulps: 1},
		{name: "DotGeneralBatch", args: []arg{m(2, 3, 4), m(2, 5, 4)}, rel: sumRel, ulps: 1,
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.DotGeneral(x[0], []int{2}, []int{0}, x[1], []int{2}, []int{0}))
			}},
		{name: "ConvSame", args: []arg{m(2, 5, 5, 3), m(3, 3, 3, 4)}, rel: sumRel, ulps: 1,
			build: conv(nhwc, []int{1, 1}, [][2]int{{1, 1}, {1, 1}}, nil, nil, 1), types: convTypes},
		{name: "ConvStridedDilated", args: []arg{m(2, 3, 7, 6), m(4, 3, 2, 2)}, rel: sumRel, ulps: 1,
			build: conv(nchw, []int{2, 1}, nil, []int{1, 2}, []int{2, 1}, 1), types: convTypes},
		{name: "ConvGrouped", args: []arg{m(1, 6, 5, 5), m(4, 3, 3, 3)}, rel: sumRel, ulps: 1,
			build: conv(nchw, []int{1, 1}, [][2]int{{0, 1}, {2, 0}}, nil, nil, 2), types: convTypes},
		{name: "ConvDefaultStrides", args: []arg{m(1, 2, 5, 5), m(3, 2, 2, 2)}, rel: sumRel, ulps: 1,
			build: conv(nchw, nil, nil, nil, nil, 1), types: []dtypes.DType{dtypes.Float32}},
	})
}

func TestFFT(t *testing.T) {
	fft := func(typ backends.FFTType, n ...int) func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
		return func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
			return one(f.FFT(x[0], typ, n))
		}
	}
	cx := []dtypes.DType{dtypes.Complex64, dtypes.Complex128}
	re := []dtypes.DType{dtypes.Float32, dtypes.Float64}
	m := func(dims ...int) arg { return of(dims...).with(moderate) }
	runCases(t, []opCase{
		{name: "FFT", args: []arg{m(3, 8)}, build: fft(backends.FFTForward, 8), types: cx, rel: 1e-5},
		{name: "IFFT2D", args: []arg{m(3, 6, 5)}, build: fft(backends.FFTInverse, 6, 5), types: cx, rel: 1e-5},
		{name: "RFFT", args: []arg{m(3, 8)}, build: fft(backends.FFTForwardReal, 8), types: re, rel: 1e-5},
		{name: "IRFFT", args: []arg{m(3, 5)}, build: fft(backends.FFTInverseReal, 8), types: cx, rel: 1e-5},
	})
}

func TestRNGBitGenerator(t *testing.T) {
	var cases []opCase
	for _, out := range []dtypes.DType{dtypes.Uint32, dtypes.Uint64, dtypes.Uint8, dtypes.Int32} {
		cases = append(cases, opCase{name: "RNGBitGenerator" + out.String(), args: []arg{of(3)},
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				st, v, err := f.RNGBitGenerator(x[0], shapes.Make(out, 7, 5))
				return []backends.Op{st, v}, err
			}, types: []dtypes.DType{dtypes.Uint64}, evalOnly: "simplego's RNGBitGenerator is not XLA's Philox bit for bit (the evaluator's is, checked against Random123's known answers)"})
	}
	runCases(t, cases)
}

func TestBatchNorm(t *testing.T) {
	fl := []dtypes.DType{dtypes.Float32, dtypes.Float64, dtypes.BFloat16, dtypes.Float16}
	m := func(dims ...int) arg { return of(dims...).with(moderate) }
	pos := func(dims ...int) arg { return of(dims...).with(floats(0.5, 2, true)) }
	runCases(t, []opCase{
		{name: "BatchNormForInference", args: []arg{m(4, 3, 5), m(3), m(3), m(3), pos(3)}, types: fl, ulps: 2, rel: 1e-5,
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				return one(f.BatchNormForInference(x[0], x[1], x[2], x[3], x[4], 1e-3, 1))
			}},
		{name: "BatchNormForTraining", args: []arg{m(4, 3, 5), m(3), m(3)}, types: fl, ulps: 2, rel: 1e-5,
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				y, mean, v, err := f.BatchNormForTraining(x[0], x[1], x[2], 1e-3, -1)
				return []backends.Op{y, mean, v}, err
			}},
		{name: "BatchNormGradient", args: []arg{m(4, 3, 5), m(3), m(3), pos(3), m(4, 3, 5)}, types: fl, ulps: 2, rel: 1e-5,
			build: func(f backends.Builder, _ dtypes.DType, x []backends.Op) ([]backends.Op, error) {
				g, s, o, err := f.BatchNormGradient(x[0], x[1], x[2], x[3], x[4], 1e-3, 1)
				return []backends.Op{g, s, o}, err
			}},
	})
}
