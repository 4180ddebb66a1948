// Package hlo is vkjit's front end: the data model of XLA's HLO, the text
// parser, and the verifier. Everything after it (lowering, the runtime)
// reads only this model, never text.
package hlo

import (
	"errors"
	"fmt"
	"strings"
)

// Pos is a position in the source text, for error messages.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	f := p.File
	if f == "" {
		f = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d", f, p.Line, p.Col)
}

// Error is a front-end error tied to a source position. Err, when set,
// is the underlying error (for errors.Is and errors.As).
type Error struct {
	Pos Pos
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Module is one HloModule: a set of computations, one of them the entry.
type Module struct {
	Name         string
	Attrs        []Attr // header attributes (entry_computation_layout, is_scheduled, ...) kept verbatim
	StackTables  []StackTable
	Computations []*Computation
	Entry        *Computation
	Pos          Pos
}

// StackTable is one of the stack-frame tables JAX prints after the
// header (FileNames, FunctionNames, FileLocations, StackFrames), each
// entry "id value" verbatim.
type StackTable struct {
	Name    string
	Entries []string
}

// Computation is a list of instructions in definition order whose result
// is the Root.
type Computation struct {
	Name         string
	Params       []*Instruction // by parameter number
	Instructions []*Instruction // definition order: operands come first
	Root         *Instruction
	IsEntry      bool
	Attrs        []Attr // after the body, e.g. execution_thread="main"
	Pos          Pos
}

// Instruction is one HLO instruction.
type Instruction struct {
	Name     string
	Op       Opcode
	Shape    Shape
	Operands []*Instruction
	Attrs    []Attr // attributes in source order, values verbatim

	// ShapeInferred is set when the text left the result shape out and
	// the verifier computed it.
	ShapeInferred bool

	A Attributes // the semantic attributes, typed

	ParamNum int      // OpParameter
	Literal  *Literal // OpConstant
	Called   []*Computation
	Pos      Pos
}

// Attr is one `name=value` attribute, its value as written.
type Attr struct {
	Name  string
	Value string
	Pos   Pos // where the value starts
}

// Attr returns attribute name, or nil.
func (in *Instruction) Attr(name string) *Attr {
	for i := range in.Attrs {
		if in.Attrs[i].Name == name {
			return &in.Attrs[i]
		}
	}
	return nil
}

// AttrValue returns the verbatim value of attribute name.
func (in *Instruction) AttrValue(name string) (string, bool) {
	if a := in.Attr(name); a != nil {
		return a.Value, true
	}
	return "", false
}

// PermuteForm is what a collective-permute's (or its start's)
// source_target_pairs ask of a program of one process (OneProcessPermute).
type PermuteForm int

const (
	PermuteOthers PermuteForm = iota // pairs naming processes other than this one
	PermuteSelf                      // {0,0}: the operand itself
	PermuteNone                      // no pairs: zeros
)

// OneProcessPermute reads a collective-permute's (or its start's)
// source_target_pairs as a program of one process sees them; the
// evaluator and the lowering both read them here.
func OneProcessPermute(in *Instruction) PermuteForm {
	pairs, _ := in.AttrValue("source_target_pairs")
	switch strings.ReplaceAll(pairs, " ", "") {
	case "{{0,0}}":
		return PermuteSelf
	case "", "{}":
		return PermuteNone
	}
	return PermuteOthers
}

// SetAttr sets attribute name from its HLO text, replacing any value it
// had, and the typed attribute it implies (in.A), for code that makes
// instructions itself; a value that does not parse is the error.
func (in *Instruction) SetAttr(name, value string) error {
	if a := in.Attr(name); a != nil {
		a.Value = value
	} else {
		in.Attrs = append(in.Attrs, Attr{Name: name, Value: value})
	}
	return parseTypedAttrs(in)
}

// SelectAndScatterComputations tells a select-and-scatter's select
// computation from its scatter one by its attributes (called in that
// order where they do not say).
func (in *Instruction) SelectAndScatterComputations() (sel, scatter *Computation) {
	for _, c := range in.Called {
		if v, _ := in.AttrValue("select"); v == c.Name || v == "%"+c.Name {
			sel = c
		} else {
			scatter = c
		}
	}
	if sel == nil || scatter == nil {
		return in.Called[0], in.Called[1]
	}
	return sel, scatter
}

// WhileComputations tells a while loop's condition from its body by its
// condition= attribute (called in that order where it does not say).
func (in *Instruction) WhileComputations() (cond, body *Computation) {
	cond, body = in.Called[0], in.Called[1]
	if v, ok := in.AttrValue("condition"); ok && !namesComputation(v, cond) {
		cond, body = body, cond
	}
	return cond, body
}

// ReducerOp is the op of a reducer computation that applies one binary
// op to its two parameters (either order), else OpParameter.
func (c *Computation) ReducerOp() Opcode {
	r := c.Root
	if len(c.Params) != 2 || len(c.Instructions) != 3 || len(r.Operands) != 2 ||
		r.Operands[0].Op != OpParameter || r.Operands[1].Op != OpParameter || r.Operands[0] == r.Operands[1] {
		return OpParameter
	}
	return r.Op
}

// PassThrough returns the get-tuple-elements of while body c's tuple
// parameter that read an element the body returns unchanged (its root is
// a tuple whose element i is get-tuple-element i of the parameter). Every
// iteration sees the loop's initial values there, so what the body
// computes from them alone is the same every iteration: XLA's
// while-loop invariant code motion starts from these elements, and JAX
// passes a fori_loop body's closed-over arrays this way.
func (c *Computation) PassThrough() map[*Instruction]bool {
	if len(c.Params) != 1 || !c.Params[0].Shape.IsTuple() || c.Root == nil || c.Root.Op != OpTuple {
		return nil
	}
	p := c.Params[0]
	reads := func(in *Instruction) bool { return in.Op == OpGetTupleElement && in.Operands[0] == p }
	same := map[int64]bool{}
	for i, o := range c.Root.Operands {
		if reads(o) && o.A.Index == int64(i) {
			same[int64(i)] = true
		}
	}
	out := map[*Instruction]bool{}
	for _, in := range c.Instructions {
		if reads(in) && same[in.A.Index] {
			out[in] = true
		}
	}
	return out
}

// Branches returns a conditional's branches in selector order and the
// operand each takes. For the pred form that is the true branch first,
// whichever order the text gave true_computation and false_computation
// in; its operands are (pred, true operand, false operand) whatever that
// order, as XLA's parser reads them.
func (in *Instruction) Branches() ([]*Computation, []*Instruction) {
	branches, args := in.Called, in.Operands[1:]
	if t, ok := in.AttrValue("true_computation"); ok && len(branches) == 2 && !namesComputation(t, branches[0]) {
		branches = []*Computation{branches[1], branches[0]}
	}
	return branches, args
}

// namesComputation reports whether attribute value v (a name, with or
// without its % sigil, or a one-name list) names c.
func namesComputation(v string, c *Computation) bool {
	names := splitList(v)
	return len(names) > 0 && (names[0] == c.Name || names[0] == "%"+c.Name)
}

// Errorf makes an error at the instruction's position that names it. A
// %w verb wraps its error as fmt.Errorf does.
func (in *Instruction) Errorf(format string, args ...any) error {
	inner := fmt.Errorf(format, args...)
	return &Error{Pos: in.Pos, Msg: fmt.Sprintf("%s (%s): %s", in.Name, in.Op, inner), Err: errors.Unwrap(inner)}
}

// Computation finds a computation by name.
func (m *Module) Computation(name string) *Computation {
	for _, c := range m.Computations {
		if c.Name == name {
			return c
		}
	}
	return nil
}
