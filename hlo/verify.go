package hlo

import "fmt"

// Verify checks a module's structure and infers the shape of every
// instruction whose rule it knows, comparing with the printed shape. An
// error names the instruction and its position.
func Verify(m *Module) error {
	for _, c := range m.Computations {
		if err := verifyComputation(c); err != nil {
			return err
		}
	}
	return nil
}

func verifyComputation(c *Computation) error {
	for _, in := range c.Instructions {
		if n := in.Op.Arity(); n >= 0 && len(in.Operands) != n {
			return in.Errorf("takes %d operands, has %d", n, len(in.Operands))
		}
		want, err := InferShape(in)
		if err != nil {
			return err
		}
		if want != nil && !want.Equal(in.Shape) {
			return in.Errorf("shape is %s, but its operands give %s", in.Shape.DimsString(), want.DimsString())
		}
	}
	return nil
}

// Comparison directions of the compare op.
var comparisonDirections = map[string]bool{"EQ": true, "NE": true, "LT": true, "LE": true, "GT": true, "GE": true}

// InferShape computes an instruction's result shape from its operands and
// attributes. It returns nil for ops whose rule is not written yet; the
// printed shape is then trusted.
func InferShape(in *Instruction) (*Shape, error) {
	ops := in.Operands
	switch in.Op.Class() {
	case ClassUnary, ClassBinary, ClassTernary:
		for _, o := range ops {
			if !o.Shape.IsArray() {
				return nil, in.Errorf("operand %s is not an array", o.Name)
			}
		}
	}
	switch in.Op {
	case OpParameter:
		return nil, nil
	case OpConstant:
		if in.Literal != nil && !in.Literal.Elided && !in.Literal.Shape.Equal(in.Shape) {
			return nil, in.Errorf("literal does not match shape %s", in.Shape)
		}
		return nil, nil
	case OpConvert, OpBitcastConvert:
		s := ArrayShape(in.Shape.Elem, ops[0].Shape.Dims...)
		if in.Op == OpBitcastConvert && in.Shape.Elem.Bits() == ops[0].Shape.Elem.Bits() {
			return &s, nil
		}
		if in.Op == OpBitcastConvert {
			return nil, nil // width-changing bitcast-convert adds or drops a minor dimension
		}
		return &s, nil
	case OpCompare:
		dir, ok := in.Attr("direction")
		if !ok || !comparisonDirections[dir] {
			return nil, in.Errorf("needs direction=EQ|NE|LT|LE|GT|GE")
		}
		if err := sameShapes(in, ops...); err != nil {
			return nil, err
		}
		s := ArrayShape(PRED, ops[0].Shape.Dims...)
		return &s, nil
	case OpIsFinite:
		if !ops[0].Shape.Elem.IsFloat() {
			return nil, in.Errorf("operand must be floating point, is %s", ops[0].Shape.Elem)
		}
		s := ArrayShape(PRED, ops[0].Shape.Dims...)
		return &s, nil
	case OpSelect:
		if ops[0].Shape.Elem != PRED {
			return nil, in.Errorf("predicate must be pred, is %s", ops[0].Shape.Elem)
		}
		if err := sameShapes(in, ops[1], ops[2]); err != nil {
			return nil, err
		}
		if ops[0].Shape.Rank() != 0 && !ops[0].Shape.SameDims(ops[1].Shape) {
			return nil, in.Errorf("predicate shape %s does not match %s", ops[0].Shape.DimsString(), ops[1].Shape.DimsString())
		}
		s := ops[1].Shape
		return &s, nil
	case OpClamp:
		// min and max may be scalars.
		x := ops[1]
		for _, b := range []*Instruction{ops[0], ops[2]} {
			if b.Shape.Elem != x.Shape.Elem || (b.Shape.Rank() != 0 && !b.Shape.SameDims(x.Shape)) {
				return nil, in.Errorf("bound %s does not fit operand %s", b.Shape.DimsString(), x.Shape.DimsString())
			}
		}
		s := x.Shape
		return &s, nil
	case OpTuple:
		s := Shape{Elem: Tuple, Tuple: []Shape{}}
		for _, o := range ops {
			s.Tuple = append(s.Tuple, o.Shape)
		}
		return &s, nil
	case OpGetTupleElement:
		idx, err := in.IntAttr("index")
		if err != nil {
			return nil, err
		}
		t := ops[0].Shape
		if !t.IsTuple() || idx < 0 || int(idx) >= len(t.Tuple) {
			return nil, in.Errorf("index %d out of range for %s", idx, t)
		}
		s := t.Tuple[idx]
		return &s, nil
	}
	switch in.Op.Class() {
	case ClassUnary:
		s := ops[0].Shape
		s.Layout = nil
		return &s, nil
	case ClassBinary:
		if in.Op == OpComplex {
			return nil, nil
		}
		if err := sameShapes(in, ops...); err != nil {
			return nil, err
		}
		s := ops[0].Shape
		s.Layout = nil
		return &s, nil
	}
	return nil, nil
}

func sameShapes(in *Instruction, ops ...*Instruction) error {
	for _, o := range ops[1:] {
		if !o.Shape.Equal(ops[0].Shape) {
			return in.Errorf("operands %s and %s differ: %s vs %s", ops[0].Name, o.Name, ops[0].Shape.DimsString(), o.Shape.DimsString())
		}
	}
	return nil
}

// IntAttr parses an integer attribute.
func (in *Instruction) IntAttr(name string) (int64, error) {
	v, ok := in.Attr(name)
	if !ok {
		return 0, in.Errorf("missing attribute %s", name)
	}
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil {
		return 0, in.Errorf("attribute %s=%s is not an integer", name, v)
	}
	return n, nil
}
