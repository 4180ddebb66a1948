package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// dotAlgorithms are the algorithms XLA names for a dot (its
// PrecisionConfig.Algorithm, printed algorithm=dot_<lhs>_<rhs>_<sum>,
// StableHLO's #stablehlo.dot_algorithm): the precision each operand is
// rounded to before the products, the accumulation's, and, for _x3, _x6
// and _x9, f32 emulated by sums of 3, 6 or 9 products of bf16 (tf32)
// parts. Each maps to what it asks of the operands (dotRounding).
var dotAlgorithms = map[string]dotRounding{
	"dot_any_f8_any_f8_f32":            {},
	"dot_any_f8_any_f8_f32_fast_accum": {},
	"dot_f16_f16_f16":                  {to: F16},
	"dot_f16_f16_f32":                  {to: F16},
	"dot_bf16_bf16_bf16":               {to: BF16},
	"dot_bf16_bf16_f32":                {to: BF16},
	"dot_bf16_bf16_f32_x3":             {},
	"dot_bf16_bf16_f32_x6":             {},
	"dot_bf16_bf16_f32_x9":             {},
	"dot_tf32_tf32_f32":                {tf32: true},
	"dot_tf32_tf32_f32_x3":             {},
	"dot_f32_f32_f32":                  {},
	"dot_f64_f64_f64":                  {},
}

// dotRounding is what an algorithm does to a dot's operands: converts
// them to type to, or rounds them to tf32's 10 significand bits (f32's
// exponent); nothing where the operands keep their own precision, and
// for the emulations of f32 (x3, x6, x9), whose sums of split products
// f32 itself computes at least as accurately.
type dotRounding struct {
	to   ElementType
	tf32 bool
}

// DotAlgorithmName checks a dot's algorithm attribute.
func DotAlgorithmName(name string) error {
	if _, ok := dotAlgorithms[name]; ok {
		return nil
	}
	names := make([]string, 0, len(dotAlgorithms))
	for n := range dotAlgorithms {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Errorf("unknown dot algorithm %q (XLA's: %s)", name, strings.Join(names, ", "))
}

// DotOperandRounding says how dot in's algorithm rounds a float operand
// of type t before the products, as XLA's DotAlgorithmRewriter and
// cuBLAS do: converted to type to (a narrower float: f16 or bf16), or
// rounded to tf32 (reduce-precision to 8 exponent and 10 significand
// bits); neither (to 0) where t is already that narrow, is not a
// float, or the dot has no algorithm that narrows.
func (in *Instruction) DotOperandRounding(t ElementType) (to ElementType, tf32 bool) {
	r, ok := dotAlgorithms[in.A.DotAlgorithm]
	if !ok || t.Kind() != KindFloat {
		return 0, false
	}
	if r.tf32 {
		return 0, t.Bits() >= 32
	}
	if r.to != 0 && t.Bits() > r.to.Bits() {
		return r.to, false
	}
	return 0, false
}
