package stablehlo

import (
	"fmt"
	"slices"

	"github.com/vkjit/vkjit/hlo"
)

// The dynamic-shape ops, where their shape operands are constants and
// their results have static types, are their static forms, as
// StableHLO's canonicalize-dynamism pass rewrites them: each shape
// operand becomes the attribute the static op takes. A shape operand
// computed at run time is a dynamic shape, which vkjit refuses by name.

// shapeOperand is a dynamic op's operand that holds what its static form
// takes as an attribute: the operand's index and the attribute's name,
// or, where attr is "", the dimensions of the op's result number result
// (checked against its type, whose dynamic dimensions take them).
type shapeOperand struct {
	index  int
	attr   string
	result int
}

// staticRule translates a dynamic op by static, its shape operands read
// as constants (folded where they compute a shape from constants:
// refine.go).
func staticRule(static rule, shapes ...shapeOperand) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		sc, err := withShapes(c, shapes)
		if err != nil {
			return nil, err
		}
		return static(sc)
	}
}

// withShapes is c with its shape operands folded into attributes or
// result types and dropped from its operands.
func withShapes(c *opContext, shapes []shapeOperand) (*opContext, error) {
	sc := *c
	sc.op = &Op{}
	*sc.op = *c.op
	sc.op.Attrs = slices.Clone(c.op.Attrs)
	sc.op.OutTypes = slices.Clone(c.op.OutTypes)
	var drop []int
	for _, s := range shapes {
		if s.index < 0 || s.index >= len(c.args) || slices.Contains(drop, s.index) {
			return nil, fmt.Errorf("has no shape operand %d of %d", s.index, len(c.args))
		}
		v, err := foldInts(c.args[s.index])
		if err != nil {
			what := c.op.Name
			if c.op.Callee != "" {
				what += " @" + c.op.Callee
			}
			return nil, unsupportedf(dynamicCategory, "op %s with operand %d %v", what, s.index, err)
		}
		if s.attr == "" {
			if s.result >= len(c.op.OutTypes) {
				return nil, fmt.Errorf("the text gives no type for result %d", s.result)
			}
			out := c.op.OutTypes[s.result]
			if out.Kind != TensorType || !fits(out.Shape(), hlo.ArrayShape(out.Elem, v...)) {
				return nil, fmt.Errorf("the shape operand of result %d is %v, its type %s", s.result, v, out.Text)
			}
			out.Dims, out.Dynamic = v, false // refined where it was dynamic
			sc.op.OutTypes[s.result] = out
		} else {
			sc.op.Attrs = append(sc.op.Attrs, NamedAttr{Name: s.attr, Attr: &Attr{Kind: ArrayAttr, Array: v}})
		}
		drop = append(drop, s.index)
	}
	sc.args = nil
	for i, a := range c.args {
		if !slices.Contains(drop, i) {
			sc.args = append(sc.args, a)
		}
	}
	return &sc, nil
}

// getDimensionSizeRule: the size of a static dimension, an s32 constant.
func getDimensionSizeRule(c *opContext) ([]*hlo.Instruction, error) {
	d, ok, err := c.int("dimension", "dim")
	if err != nil || !ok {
		return nil, fmt.Errorf("needs dimension")
	}
	s := c.args[0].Shape
	if d < 0 || int(d) >= s.Rank() {
		return nil, fmt.Errorf("dimension %d of a rank %d operand", d, s.Rank())
	}
	out, err := c.result(0)
	if err != nil {
		return nil, err
	}
	lit, err := hlo.ParseLiteral(fmt.Sprint(s.Dims[d]), out)
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{c.cb.Constant(lit)}, nil
}
