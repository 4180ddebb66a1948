package stablehlo

import (
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// The MLIR this package reads, as a small IR: what the text says, before
// translation gives it HLO's meaning. Every op, pretty or generic, parses
// to the generic form's parts: operands, properties and attributes,
// regions, and operand and result types.

// TypeKind says what a Type is.
type TypeKind uint8

const (
	TensorType TypeKind = iota // tensor<2x3xf32>, or a bare element type
	TupleType                  // tuple<...>
	TokenType                  // !stablehlo.token
	OtherType                  // a type of another dialect, kept as text
)

// Type is an MLIR type of the StableHLO dialect.
type Type struct {
	Kind    TypeKind
	Elem    hlo.ElementType // TensorType
	Dims    []int64         // TensorType; -1 for a dynamic (?) dimension
	Tuple   []Type          // TupleType
	Text    string          // the type as written: for messages, and OtherType
	Quant   bool            // a quantized element type (!quant.uniform<...>)
	Q       *QuantType      // its parameters, where vkjit reads them (Elem is then the storage type)
	Dynamic bool            // some dimension is ?
	Bounded bool            // a bounded dynamic encoding
}

func (t Type) String() string { return t.Text }

// Shape is t as an HLO shape.
func (t Type) Shape() hlo.Shape {
	switch t.Kind {
	case TupleType:
		s := hlo.TupleShape()
		for _, e := range t.Tuple {
			s.Tuple = append(s.Tuple, e.Shape())
		}
		return s
	case TokenType:
		return hlo.Shape{Elem: hlo.Token}
	}
	return hlo.ArrayShape(t.Elem, t.Dims...)
}

// AttrKind says what an Attr is.
type AttrKind uint8

const (
	IntAttr           AttrKind = iota // 1 : i64, or a bare integer
	FloatAttr                         // 1.5 : f32
	BoolAttr                          // true, false
	StringAttr                        // "text"
	ListAttr                          // [a, b]
	DictAttr                          // {a = 1, b}
	DenseAttr                         // dense<...> : tensor<...>
	ArrayAttr                         // array<i64: 1, 2>
	SymbolAttr                        // @name
	TypeAttr                          // a type
	DialectAttr                       // #dialect<...> or #dialect.name<...>, its body kept as text
	UnitAttr                          // a name with no value
	FunctionTypeAttr                  // (T, ...) -> (R, ...): In and Out
	KeywordAttr                       // a bare word (an enum's value in a custom form)
	DenseResourceAttr                 // dense_resource<name> : tensor<...>: Text is the name of the module's resource that holds the bytes
)

// Attr is an MLIR attribute.
type Attr struct {
	Kind  AttrKind
	Text  string // the number, string, symbol, keyword, dialect name (#stablehlo.gather), or dense body
	Body  string // DialectAttr: what is between its angle brackets
	Type  *Type  // the attribute's type, where it has one
	List  []*Attr
	Dict  []NamedAttr
	Array []int64 // ArrayAttr of integers
	In    []Type  // FunctionTypeAttr
	Out   []Type  // FunctionTypeAttr
	Pos   hlo.Pos
}

// NamedAttr is one entry of an attribute dictionary.
type NamedAttr struct {
	Name string
	Attr *Attr
}

// Int is an integer attribute's value (booleans are 0 and 1).
func (a *Attr) Int() (int64, error) {
	switch a.Kind {
	case IntAttr:
		var v int64
		if _, err := fmt.Sscan(a.Text, &v); err != nil {
			var u uint64
			if _, err := fmt.Sscan(a.Text, &u); err != nil {
				return 0, fmt.Errorf("%q is not an integer", a.Text)
			}
			v = int64(u)
		}
		return v, nil
	case BoolAttr:
		if a.Text == "true" {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("expected an integer, found %s", a.Describe())
}

// Ints is a list, array or dense attribute's integers.
func (a *Attr) Ints() ([]int64, error) {
	switch a.Kind {
	case ArrayAttr:
		return a.Array, nil
	case ListAttr:
		out := make([]int64, len(a.List))
		for i, e := range a.List {
			v, err := e.Int()
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case DenseAttr:
		var out []int64
		for _, f := range splitDenseInts(a.Text) {
			var v int64
			if _, err := fmt.Sscan(f, &v); err != nil {
				return nil, fmt.Errorf("%q is not an integer", f)
			}
			out = append(out, v)
		}
		if a.Type != nil && len(out) == 1 {
			// A splat: as many as the type holds.
			n := int64(1)
			for _, d := range a.Type.Dims {
				n *= d
			}
			if n > 1<<20 {
				return nil, fmt.Errorf("a list of %d integers is more than any attribute takes", n)
			}
			for int64(len(out)) < n {
				out = append(out, out[0])
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("expected a list of integers, found %s", a.Describe())
}

// splitDenseInts flattens a dense body's nested lists of integers.
func splitDenseInts(body string) []string {
	body = strings.NewReplacer("[", " ", "]", " ", ",", " ").Replace(body)
	return strings.Fields(body)
}

// Describe names the attribute for messages.
func (a *Attr) Describe() string {
	switch a.Kind {
	case DialectAttr:
		return a.Text + "<" + a.Body + ">"
	case StringAttr:
		return fmt.Sprintf("%q", a.Text)
	case ListAttr:
		return "a list"
	case DictAttr:
		return "a dictionary"
	case DenseAttr:
		return "dense<" + a.Text + ">"
	}
	return a.Text
}

// Value names an SSA value: %name, or result i of a multi-result op
// (%name#i).
type Value struct {
	Name string
	Pos  hlo.Pos
}

// Op is one operation.
type Op struct {
	Name     string   // "stablehlo.add"
	Results  []string // the names it defines: %0:2 defines 0#0 and 0#1
	Operands []Value
	Attrs    []NamedAttr // properties and attributes together
	Regions  []*Region
	InTypes  []Type // operand types, where the text gives them
	OutTypes []Type // result types
	Callee   string // func.call, custom_call, composite: the symbol
	Pos      hlo.Pos
}

// Attr returns the named attribute, or nil.
func (op *Op) Attr(name string) *Attr {
	for _, a := range op.Attrs {
		if a.Name == name {
			return a.Attr
		}
	}
	return nil
}

// FirstAttr returns the first of the named attributes op has (the
// spellings one attribute goes by), or nil.
func (op *Op) FirstAttr(names ...string) *Attr {
	for _, n := range names {
		if a := op.Attr(n); a != nil {
			return a
		}
	}
	return nil
}

func (op *Op) setAttr(name string, a *Attr) { op.Attrs = append(op.Attrs, NamedAttr{name, a}) }

// Region is a list of blocks; StableHLO's have one.
type Region struct {
	Blocks []*Block
	Pos    hlo.Pos
}

// Block is a block's arguments and ops.
type Block struct {
	Args []Arg
	Ops  []*Op
}

// Arg is a function's or block's argument.
type Arg struct {
	Name  string
	Type  Type
	Attrs []NamedAttr // a function argument's {...}: JAX's donation, shardings
	Pos   hlo.Pos
}

// Func is a func.func.
type Func struct {
	Name    string
	Public  bool
	Args    []Arg
	Results []Type
	Body    *Region
	Pos     hlo.Pos
}

// Module is an MLIR module: its functions, in order.
type Module struct {
	Name   string
	Funcs  []*Func
	Meshes map[string]Mesh // Shardy's sdy.mesh ops, by name (shardy.go)
	// Resources: the blobs of the text's {-# dialect_resources #-}
	// section by key (their alignment word taken off), which
	// dense_resource constants name.
	Resources map[string][]byte
	Pos       hlo.Pos
}
