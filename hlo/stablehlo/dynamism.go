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
// takes as an attribute: the operand's index and the attribute's name
// ("" where the result type already says it, checked against it).
type shapeOperand struct {
	index int
	attr  string
}

// staticRule translates a dynamic op by static, its shape operands read
// as constants (folded where they compute a shape from constants:
// refine.go).
func staticRule(static rule, shapes ...shapeOperand) rule {
	return func(c *opContext) ([]*hlo.Instruction, error) {
		sc := *c
		sc.op = &Op{}
		*sc.op = *c.op
		sc.op.Attrs = slices.Clone(c.op.Attrs)
		var drop []int
		for _, s := range shapes {
			if s.index >= len(c.args) {
				return nil, fmt.Errorf("has no operand %d", s.index)
			}
			v, err := foldInts(c.args[s.index])
			if err != nil {
				return nil, unsupportedf(dynamicCategory, "op %s with operand %d %v", c.op.Name, s.index, err)
			}
			if s.attr == "" {
				if len(c.op.OutTypes) != 1 || c.op.OutTypes[0].Kind != TensorType {
					return nil, fmt.Errorf("the text gives no type for its result")
				}
				out := c.op.OutTypes[0]
				if !fits(out.Shape(), hlo.ArrayShape(out.Elem, v...)) {
					return nil, fmt.Errorf("operand %d is %v, the result's dimensions %v", s.index, v, out.Dims)
				}
				if out.Dynamic { // refined: the operand says the shape
					out.Dims, out.Dynamic = v, false
					sc.op.OutTypes = []Type{out}
				}
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
		return static(&sc)
	}
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
