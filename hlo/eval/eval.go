// Package eval is vkjit's reference evaluator: a plain-Go interpreter of
// HLO that every device test compares with. It is written to be obviously
// right, not fast: floats are computed in float64 and rounded to the
// result type after each op, integers wrap at their width, and every edge
// case follows XLA's operation semantics.
package eval

import (
	"fmt"
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// Value is an array (Lit) or a tuple of values.
type Value struct {
	Lit   *hlo.Literal
	Tuple []*Value
}

// Leaves returns the arrays of v in depth-first order.
func (v *Value) Leaves() []*hlo.Literal {
	if v.Lit != nil {
		return []*hlo.Literal{v.Lit}
	}
	var out []*hlo.Literal
	for _, e := range v.Tuple {
		out = append(out, e.Leaves()...)
	}
	return out
}

// Run evaluates the module's entry computation on args.
func Run(m *hlo.Module, args ...*hlo.Literal) (*Value, error) {
	c := m.Entry
	if len(args) != len(c.Params) {
		return nil, fmt.Errorf("eval: %s takes %d arguments, got %d", m.Name, len(c.Params), len(args))
	}
	vals := make([]*Value, len(args))
	for i, a := range args {
		p := c.Params[i]
		if a.Shape.Elem != p.Shape.Elem || !a.Shape.SameDims(p.Shape) {
			return nil, fmt.Errorf("eval: argument %d (parameter %s): want %s, got %s", i, p.Name, p.Shape.DimsString(), a.Shape.DimsString())
		}
		vals[i] = &Value{Lit: a}
	}
	return computation(c, vals)
}

func computation(c *hlo.Computation, args []*Value) (*Value, error) {
	env := map[*hlo.Instruction]*Value{}
	for _, in := range c.Instructions {
		v, err := instruction(in, env, args)
		if err != nil {
			return nil, err
		}
		env[in] = v
	}
	return env[c.Root], nil
}

func instruction(in *hlo.Instruction, env map[*hlo.Instruction]*Value, args []*Value) (*Value, error) {
	switch in.Op {
	case hlo.OpParameter:
		return args[in.ParamNum], nil
	case hlo.OpConstant:
		if in.Literal == nil || in.Literal.Elided {
			return nil, in.Errorf("constant's values were elided")
		}
		return &Value{Lit: in.Literal}, nil
	case hlo.OpTuple:
		t := &Value{}
		for _, o := range in.Operands {
			t.Tuple = append(t.Tuple, env[o])
		}
		return t, nil
	case hlo.OpGetTupleElement:
		return env[in.Operands[0]].Tuple[in.A.Index], nil
	}
	if in.Op.IsElementwise() {
		ops := make([]*hlo.Literal, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = env[o].Lit
		}
		lit, err := elementwise(in, ops)
		if err != nil {
			return nil, err
		}
		return &Value{Lit: lit}, nil
	}
	return nil, in.Errorf("the reference evaluator does not implement %s yet", in.Op)
}

// scalar is one element, decoded: every type's value fits one of the
// three fields (pred in u as 0/1).
type scalar struct {
	f float64
	i int64
	u uint64
}

func get(l *hlo.Literal, i int64) scalar {
	t := l.Shape.Elem
	n := int64(t.Bytes())
	if l.Shape.Rank() == 0 {
		i = 0
	}
	b := l.Data[i*n : (i+1)*n]
	var bits uint64
	for j := len(b) - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(b[j])
	}
	switch t.Kind() {
	case hlo.KindFloat:
		switch t {
		case hlo.F32:
			return scalar{f: float64(math.Float32frombits(uint32(bits)))}
		case hlo.F64:
			return scalar{f: math.Float64frombits(bits)}
		case hlo.F16:
			return scalar{f: hlo.F16ToFloat64(uint16(bits))}
		case hlo.BF16:
			return scalar{f: float64(math.Float32frombits(uint32(bits) << 16))}
		}
	case hlo.KindSigned:
		shift := 64 - uint(t.Bits())
		return scalar{i: int64(bits<<shift) >> shift}
	}
	return scalar{u: bits}
}

func put(dst []byte, t hlo.ElementType, i int64, s scalar) {
	n := int64(t.Bytes())
	var bits uint64
	switch t.Kind() {
	case hlo.KindFloat:
		switch t {
		case hlo.F32:
			bits = uint64(math.Float32bits(float32(s.f)))
		case hlo.F64:
			bits = math.Float64bits(s.f)
		case hlo.F16:
			bits = uint64(hlo.F16FromFloat64(s.f))
		case hlo.BF16:
			bits = uint64(hlo.BF16FromFloat64(s.f))
		}
	case hlo.KindSigned:
		bits = uint64(s.i)
	default:
		bits = s.u
	}
	for j := int64(0); j < n; j++ {
		dst[i*n+j] = byte(bits >> (8 * j))
	}
}

// round keeps a float64 result at the precision of type t.
func round(t hlo.ElementType, f float64) float64 {
	switch t {
	case hlo.F32:
		return float64(float32(f))
	case hlo.F16:
		return hlo.F16ToFloat64(hlo.F16FromFloat64(f))
	case hlo.BF16:
		return float64(math.Float32frombits(uint32(hlo.BF16FromFloat64(f)) << 16))
	}
	return f
}

// wrap sign- or zero-extends the low bits of an integer of type t.
func wrapS(t hlo.ElementType, v int64) int64 {
	shift := 64 - uint(t.Bits())
	return v << shift >> shift
}

func wrapU(t hlo.ElementType, v uint64) uint64 {
	if t.Bits() == 64 {
		return v
	}
	return v & (1<<uint(t.Bits()) - 1)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// LiteralFromBytes builds a literal, checking the size.
func LiteralFromBytes(s hlo.Shape, data []byte) (*hlo.Literal, error) {
	if int64(len(data)) != s.ByteSize() {
		return nil, fmt.Errorf("eval: %s needs %d bytes, got %d", s.DimsString(), s.ByteSize(), len(data))
	}
	return &hlo.Literal{Shape: s, Data: data}, nil
}
