package hlo

import (
	"fmt"
	"slices"
	"strings"
)

// Builder makes modules from Go, for tests and for library users who do
// not write HLO text. Shapes are inferred by the verifier's rules where
// the op allows; Build verifies the whole module.
//
//	b := hlo.NewBuilder("m")
//	add := b.Computation("add")
//	x, y := add.Parameter(hlo.ArrayShape(hlo.F32)), add.Parameter(hlo.ArrayShape(hlo.F32))
//	add.Op(hlo.OpAdd, x, y)
//	e := b.Entry("main")
//	p := e.Parameter(hlo.ArrayShape(hlo.F32, 4))
//	zero := e.Constant(hlo.ScalarLiteral(hlo.F32, 0))
//	e.Op(hlo.OpReduce, p, zero).Set("dimensions", "{0}").Calls(add)
//	m, err := b.Build()
type Builder struct {
	m    *Module
	err  error
	next map[string]int
}

// NewBuilder starts a module.
func NewBuilder(name string) *Builder {
	return &Builder{m: &Module{Name: name}, next: map[string]int{}}
}

// CompBuilder adds instructions to one computation.
type CompBuilder struct {
	b *Builder
	c *Computation
}

// Computation starts a computation that others call.
func (b *Builder) Computation(name string) *CompBuilder {
	c := &Computation{Name: name}
	b.m.Computations = append(b.m.Computations, c)
	return &CompBuilder{b: b, c: c}
}

// Entry starts the entry computation.
func (b *Builder) Entry(name string) *CompBuilder {
	cb := b.Computation(name)
	cb.c.IsEntry = true
	b.m.Entry = cb.c
	return cb
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *Builder) name(op Opcode) string {
	base := strings.ReplaceAll(op.String(), "-", "_")
	b.next[base]++
	return fmt.Sprintf("%s.%d", base, b.next[base])
}

// Parameter adds the next parameter.
func (cb *CompBuilder) Parameter(s Shape) *Instruction {
	in := &Instruction{Name: cb.b.name(OpParameter), Op: OpParameter, Shape: s, ParamNum: len(cb.c.Params)}
	cb.c.Params = append(cb.c.Params, in)
	cb.c.Instructions = append(cb.c.Instructions, in)
	cb.c.Root = in
	return in
}

// Constant adds a constant.
func (cb *CompBuilder) Constant(l *Literal) *Instruction {
	in := &Instruction{Name: cb.b.name(OpConstant), Op: OpConstant, Shape: l.Shape, Literal: l}
	cb.c.Instructions = append(cb.c.Instructions, in)
	cb.c.Root = in
	return in
}

// InstBuilder sets an instruction's attributes, shape and callees. Its
// shape is inferred when it is used or when the module is built.
type InstBuilder struct {
	*Instruction
	cb  *CompBuilder
	err error // the first attribute that did not parse
}

// Op adds an instruction; the last one added is the root unless SetRoot
// says otherwise.
func (cb *CompBuilder) Op(op Opcode, operands ...*Instruction) *InstBuilder {
	in := &Instruction{Name: cb.b.name(op), Op: op, Operands: operands, ShapeInferred: true}
	parseTypedAttrs(in) // the defaults of absent attributes, as the parser gives them (no attributes: no error)
	cb.c.Instructions = append(cb.c.Instructions, in)
	cb.c.Root = in
	return &InstBuilder{Instruction: in, cb: cb}
}

// Add adds an instruction made elsewhere (its op, operands, shape and
// attributes set), named as Op names them, and returns it.
func (cb *CompBuilder) Add(in *Instruction) *Instruction {
	in.Name = cb.b.name(in.Op)
	cb.c.Instructions = append(cb.c.Instructions, in)
	cb.c.Root = in
	return in
}

// Set sets an attribute from its HLO text ("dimensions", "{0}").
func (ib *InstBuilder) Set(name, value string) *InstBuilder {
	ib.Attrs = append(ib.Attrs, Attr{Name: name, Value: value})
	if err := parseTypedAttrs(ib.Instruction); err != nil {
		if ib.err == nil {
			ib.err = err
		}
		ib.cb.b.fail(err)
	}
	return ib
}

// Check verifies the instruction as built so far (its attributes, its
// operand count, its shape, inferred now where it was left open), for
// builders that report each op's error where the op is made, as an ML
// framework's graph builder does. An instruction that fails is taken
// out of its computation, so that the module stays buildable; Build
// verifies everything again.
func (ib *InstBuilder) Check() error {
	err := ib.err
	if err == nil {
		err = verifyInstruction(ib.Instruction)
	}
	if err == nil {
		return nil
	}
	c := ib.cb.c
	if i := slices.Index(c.Instructions, ib.Instruction); i >= 0 {
		c.Instructions = slices.Delete(c.Instructions, i, i+1)
	}
	if c.Root == ib.Instruction {
		c.Root = nil
		if n := len(c.Instructions); n > 0 {
			c.Root = c.Instructions[n-1]
		}
	}
	if ib.cb.b.err == ib.err {
		ib.cb.b.err = nil
	}
	return err
}

// WithShape gives the result shape (needed by ops whose shape is not implied
// by their operands: broadcast, reshape, iota, convert, ...).
func (ib *InstBuilder) WithShape(s Shape) *InstBuilder {
	ib.Instruction.Shape, ib.ShapeInferred = s, false
	return ib
}

// Calls names the computations the instruction applies, and writes the
// attribute that names them (to_apply, condition/body, ...).
func (ib *InstBuilder) Calls(cs ...*Computation) *InstBuilder {
	ib.Called = append(ib.Called, cs...)
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	switch ib.Op {
	case OpWhile:
		if len(cs) == 2 {
			ib.Attrs = append(ib.Attrs, Attr{Name: "condition", Value: names[0]}, Attr{Name: "body", Value: names[1]})
		}
	case OpConditional:
		ib.Attrs = append(ib.Attrs, Attr{Name: "branch_computations", Value: "{" + strings.Join(names, ", ") + "}"})
	case OpSelectAndScatter:
		if len(cs) == 2 {
			ib.Attrs = append(ib.Attrs, Attr{Name: "select", Value: names[0]}, Attr{Name: "scatter", Value: names[1]})
		}
	case OpFusion:
		ib.Attrs = append(ib.Attrs, Attr{Name: "calls", Value: names[0]})
	case OpCustomCall:
		ib.Attrs = append(ib.Attrs, Attr{Name: "called_computations", Value: "{" + strings.Join(names, ", ") + "}"})
	default:
		ib.Attrs = append(ib.Attrs, Attr{Name: "to_apply", Value: names[0]})
	}
	return ib
}

// Computation returns the computation being built, for Calls.
func (cb *CompBuilder) Computation() *Computation { return cb.c }

// SetRoot makes in the computation's result.
func (cb *CompBuilder) SetRoot(in *Instruction) { cb.c.Root = in }

// Build verifies the module (inferring the shapes left open) and returns it.
func (b *Builder) Build() (*Module, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.m.Entry == nil {
		return nil, fmt.Errorf("hlo: module %s has no entry computation", b.m.Name)
	}
	for _, c := range b.m.Computations {
		if len(c.Instructions) == 0 {
			return nil, fmt.Errorf("hlo: computation %s is empty", c.Name)
		}
	}
	if err := Verify(b.m); err != nil {
		return nil, err
	}
	return b.m, nil
}

// ScalarLiteral makes a rank-0 literal of type t from a float64 (rounded
// to t; integers truncated toward zero).
func ScalarLiteral(t ElementType, v float64) *Literal {
	text := formatFloat(v, 64)
	if t.IsInteger() {
		text = fmt.Sprintf("%d", int64(v))
	} else if t == PRED {
		text = fmt.Sprint(v != 0)
	}
	l, err := parseLiteral(text, ArrayShape(t))
	if err != nil {
		panic(fmt.Sprintf("hlo: ScalarLiteral(%s, %v): %v", t, v, err))
	}
	return l
}

// NewLiteral makes an array literal from raw little-endian bytes.
func NewLiteral(s Shape, data []byte) (*Literal, error) {
	if !s.IsArray() || int64(len(data)) != s.ByteSize() {
		return nil, fmt.Errorf("hlo: %s needs %d bytes, got %d", s.DimsString(), s.ByteSize(), len(data))
	}
	return &Literal{Shape: s, Data: data}, nil
}
