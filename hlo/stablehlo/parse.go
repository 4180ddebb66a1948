package stablehlo

import (
	"fmt"
	"strconv"
	"strings"
)

// parser reads one module's text.
type parser struct {
	s            *scanner
	aliases      map[string]*Attr // #loc1 = loc(...) and other attribute aliases
	unknownTypes []string         // element types read that HLO lacks
}

// parseModule reads a module: `module @name attributes {...} { funcs }`,
// or bare functions (the spec's tests write them so), after any
// attribute aliases (#loc = loc(...)).
func (p *parser) parseModule() (*Module, error) {
	s := p.s
	m := &Module{Pos: s.here()}
	wrapped := false
	for {
		s.skip()
		switch {
		case s.eof():
			if wrapped {
				return nil, s.errorf("expected \"}\" to close the module")
			}
			return m, nil
		case s.lookingAt("{-#"):
			if err := p.resourceSection(m); err != nil {
				return nil, err
			}
		case s.peek() == '#':
			if err := p.alias(); err != nil {
				return nil, err
			}
		case !wrapped && s.acceptWord("module"):
			m.Pos = s.here()
			if s.peek() == '@' {
				name, err := s.symbol()
				if err != nil {
					return nil, err
				}
				m.Name = name
			}
			if s.acceptWord("attributes") {
				if _, err := p.attrDict(); err != nil {
					return nil, err
				}
			}
			if err := s.expect("{"); err != nil {
				return nil, err
			}
			wrapped = true
		case wrapped && s.accept("}"):
			if s.lookingAtWord("loc") {
				if _, err := p.location(); err != nil {
					return nil, err
				}
			}
			s.skip()
			for s.peek() == '#' || s.lookingAt("{-#") {
				var err error
				if s.peek() == '#' {
					err = p.alias()
				} else {
					err = p.resourceSection(m)
				}
				if err != nil {
					return nil, err
				}
				s.skip()
			}
			if !s.eof() {
				return nil, s.errorf("unexpected %s after the module", s.describe())
			}
			return m, nil
		case s.lookingAtWord("sdy.mesh"):
			if err := p.meshOp(m); err != nil {
				return nil, err
			}
		case s.lookingAtWord("func.func"):
			f, err := p.function()
			if err != nil {
				return nil, err
			}
			m.Funcs = append(m.Funcs, f)
		case s.peek() == '"':
			// The generic form: "builtin.module"() ({...}) or a
			// "func.func"() <{...}> ({...}) of its own.
			op, err := p.operation()
			if err != nil {
				return nil, err
			}
			if err := p.genericTop(m, op, wrapped); err != nil {
				return nil, err
			}
		default:
			return nil, s.errorf("expected a func.func, found %s", s.describe())
		}
	}
}

// genericTop adds what a top-level op of the generic form holds to m:
// a builtin.module's functions, or one func.func.
func (p *parser) genericTop(m *Module, op *Op, wrapped bool) error {
	switch {
	case op.Name == "sdy.mesh":
		return m.genericMesh(op)
	case op.Name == "func.func":
		f, err := genericFunc(op)
		if err != nil {
			return err
		}
		m.Funcs = append(m.Funcs, f)
		return nil
	case op.Name == "builtin.module" && !wrapped && len(m.Funcs) == 0:
		m.Pos = op.Pos
		if a := op.Attr("sym_name"); a != nil {
			m.Name = a.Text
		}
		if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
			return &Error{Pos: op.Pos, Msg: "builtin.module wants one region of one block"}
		}
		for _, inner := range op.Regions[0].Blocks[0].Ops {
			if inner.Name == "sdy.mesh" {
				if err := m.genericMesh(inner); err != nil {
					return err
				}
				continue
			}
			if inner.Name != "func.func" {
				return &Error{Pos: inner.Pos, Msg: fmt.Sprintf("expected a func.func in the module, found %s", inner.Name)}
			}
			f, err := genericFunc(inner)
			if err != nil {
				return err
			}
			m.Funcs = append(m.Funcs, f)
		}
		return nil
	}
	return &Error{Pos: op.Pos, Msg: fmt.Sprintf("expected a func.func, found %s", op.Name)}
}

// genericFunc makes a Func of "func.func"() <{sym_name, function_type,
// sym_visibility}> ({^bb0(args): body}): the entry block's arguments are
// the function's.
func genericFunc(op *Op) (*Func, error) {
	name, ty := op.Attr("sym_name"), op.Attr("function_type")
	if name == nil || name.Kind != StringAttr || ty == nil || ty.Kind != FunctionTypeAttr {
		return nil, &Error{Pos: op.Pos, Msg: "func.func needs sym_name and function_type"}
	}
	f := &Func{Name: name.Text, Public: true, Results: ty.Out, Pos: op.Pos}
	if v := op.Attr("sym_visibility"); v != nil && v.Text == "private" {
		f.Public = false
	}
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) == 0 {
		return nil, &Error{Pos: op.Pos, Msg: fmt.Sprintf("@%s has no body", f.Name)}
	}
	f.Body = op.Regions[0]
	entry := f.Body.Blocks[0]
	f.Args, entry.Args = entry.Args, nil
	if len(f.Args) != len(ty.In) {
		return nil, &Error{Pos: op.Pos, Msg: fmt.Sprintf("@%s: its type takes %d arguments, its body %d", f.Name, len(ty.In), len(f.Args))}
	}
	for i, a := range f.Args {
		if !a.Type.Shape().Equal(ty.In[i].Shape()) || a.Type.Text != ty.In[i].Text && a.Type.Kind == OtherType {
			return nil, &Error{Pos: a.Pos, Msg: fmt.Sprintf("@%s: argument %d is %s, its type says %s", f.Name, i, a.Type.Text, ty.In[i].Text)}
		}
	}
	return f, nil
}

// alias reads #name = attribute.
func (p *parser) alias() error {
	s := p.s
	s.advance(1)
	name := s.suffixID()
	if err := s.expect("="); err != nil {
		return err
	}
	a, err := p.attr()
	if err != nil {
		return err
	}
	p.aliases[name] = a
	return nil
}

// function reads func.func [public|private] @name(args) [-> results]
// [attributes {...}] { body }.
func (p *parser) function() (*Func, error) {
	s := p.s
	f := &Func{Pos: s.here(), Public: true}
	if err := s.expectWord("func.func"); err != nil {
		return nil, err
	}
	if s.acceptWord("private") {
		f.Public = false
	} else {
		s.acceptWord("public")
		s.acceptWord("nested")
	}
	name, err := s.symbol()
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, s.errorf("expected the function's @name, found %s", s.describe())
	}
	f.Name = name
	if err := s.expect("("); err != nil {
		return nil, err
	}
	if f.Args, err = p.arguments(); err != nil {
		return nil, err
	}
	if s.accept("->") {
		if f.Results, err = p.typeList(); err != nil {
			return nil, err
		}
	}
	if s.acceptWord("attributes") {
		if _, err := p.attrDict(); err != nil {
			return nil, err
		}
	}
	if f.Body, err = p.region(); err != nil {
		return nil, err
	}
	if s.lookingAtWord("loc") {
		if _, err := p.location(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// arguments reads %name: type [{attrs}], ... up to the ")" that closes
// the list (consumed), its "(" read already: a function's, a block's, a
// region-holding op's.
func (p *parser) arguments() ([]Arg, error) {
	s := p.s
	var out []Arg
	if s.accept(")") {
		return out, nil
	}
	for {
		a, err := p.argument()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if s.accept(")") {
			return out, nil
		}
		if err := s.expect(","); err != nil {
			return nil, err
		}
	}
}

// argument reads %name: type [{attrs}] [loc(...)].
func (p *parser) argument() (Arg, error) {
	s := p.s
	a := Arg{Pos: s.here()}
	a.Name = s.valueName()
	if a.Name == "" {
		return a, s.errorf("expected an argument %%name, found %s", s.describe())
	}
	if err := s.expect(":"); err != nil {
		return a, err
	}
	t, err := p.typ()
	if err != nil {
		return a, err
	}
	a.Type = t
	if s.peek() == '{' {
		if a.Attrs, err = p.attrDict(); err != nil {
			return a, err
		}
	}
	if s.lookingAtWord("loc") {
		if _, err := p.location(); err != nil {
			return a, err
		}
	}
	return a, nil
}

// region reads { [^bb(args):] ops }.
func (p *parser) region() (*Region, error) {
	s := p.s
	r := &Region{Pos: s.here()}
	if err := s.expect("{"); err != nil {
		return nil, err
	}
	b := &Block{}
	r.Blocks = append(r.Blocks, b)
	for {
		switch {
		case s.accept("}"):
			return r, nil
		case s.peek() == 0:
			return nil, s.errorf("the end of the text, where the region opened at %d:%d wants its }", r.Pos.Line, r.Pos.Col)
		case s.peek() == '^':
			s.advance(1)
			s.suffixID()
			if len(b.Ops) > 0 || len(b.Args) > 0 {
				b = &Block{}
				r.Blocks = append(r.Blocks, b)
			}
			if s.accept("(") {
				args, err := p.arguments()
				if err != nil {
					return nil, err
				}
				b.Args = args
			}
			if err := s.expect(":"); err != nil {
				return nil, err
			}
		default:
			op, err := p.operation()
			if err != nil {
				return nil, err
			}
			b.Ops = append(b.Ops, op)
		}
	}
}

// operation reads [results =] op.
func (p *parser) operation() (*Op, error) {
	s := p.s
	op := &Op{Pos: s.here()}
	if s.peek() == '%' {
		for {
			name := s.valueName()
			if name == "" {
				return nil, s.errorf("expected a result %%name, found %s", s.describe())
			}
			n := 1
			if s.accept(":") {
				num := s.number()
				v, err := strconv.Atoi(num)
				if err != nil || v < 0 {
					return nil, s.errorf("bad result count %q", num)
				}
				// Each result needs a type later in the text: a count
				// past what is left of it cannot be right (and would
				// have the reader make billions of names).
				if v > len(s.src)-s.pos {
					return nil, s.errorf("result count %d is more than the text could give types for", v)
				}
				n = v
				for i := 0; i < n; i++ {
					op.Results = append(op.Results, fmt.Sprintf("%s#%d", name, i))
				}
			} else {
				op.Results = append(op.Results, name)
			}
			if !s.accept(",") {
				break
			}
		}
		if err := s.expect("="); err != nil {
			return nil, err
		}
	}
	s.skip()
	op.Pos = s.here()
	if s.peek() == '"' {
		name, err := s.str()
		if err != nil {
			return nil, err
		}
		op.Name = name
		if err := p.generic(op); err != nil {
			return nil, err
		}
	} else {
		op.Name = s.ident()
		if op.Name == "" {
			return nil, s.errorf("expected an operation, found %s", s.describe())
		}
		if !strings.Contains(op.Name, ".") {
			op.Name = "func." + op.Name // return, call: MLIR's default dialect
		}
		form, ok := customForms[op.Name]
		if _, known := ops[op.Name]; !ok && !known {
			u := unknownOp(op)
			return nil, &Error{Pos: op.Pos, Msg: u.Error(), Err: u}
		}
		if !ok {
			return nil, s.errorAt(op.Pos, "op %s: unknown custom assembly form (it may be written in the generic form, \"%s\"(...))", op.Name, op.Name)
		}
		if err := form(p, op); err != nil {
			return nil, err
		}
	}
	if s.lookingAtWord("loc") {
		if _, err := p.location(); err != nil {
			return nil, err
		}
	}
	return op, nil
}

// generic reads the rest of "name"(operands) [<{properties}>]
// [(regions)] [{attributes}] : (types) -> types.
func (p *parser) generic(op *Op) error {
	s := p.s
	if err := p.parenOperands(op); err != nil {
		return err
	}
	if s.accept("[") { // successors: not in StableHLO
		return s.errorf("op %s: blocks with successors are not supported", op.Name)
	}
	if s.accept("<") {
		d, err := p.attrDict()
		if err != nil {
			return err
		}
		op.Attrs = append(op.Attrs, d...)
		if err := s.expect(">"); err != nil {
			return err
		}
	}
	if s.peek() == '(' {
		s.advance(1)
		for {
			r, err := p.region()
			if err != nil {
				return err
			}
			op.Regions = append(op.Regions, r)
			if s.accept(")") {
				break
			}
			if err := s.expect(","); err != nil {
				return err
			}
		}
	}
	if err := p.optionalAttrs(op); err != nil {
		return err
	}
	if err := s.expect(":"); err != nil {
		return err
	}
	return p.functionalType(op)
}

// optionalAttrs reads an attribute dictionary into op where one follows.
func (p *parser) optionalAttrs(op *Op) error {
	if p.s.peek() != '{' {
		return nil
	}
	d, err := p.attrDict()
	op.Attrs = append(op.Attrs, d...)
	return err
}

// functionalType reads (T, ...) -> T or (T, ...) -> (T, ...).
func (p *parser) functionalType(op *Op) error {
	s := p.s
	if s.peek() != '(' {
		return s.errorf("op %s: expected a function type (...) -> ..., found %s", op.Name, s.describe())
	}
	in, err := p.typeList()
	if err != nil {
		return err
	}
	op.InTypes = in
	if err := s.expect("->"); err != nil {
		return err
	}
	op.OutTypes, err = p.typeList()
	return err
}

// parenOperands reads an op's operands in parentheses: (%a, %b#1).
func (p *parser) parenOperands(op *Op) error {
	if err := p.s.expect("("); err != nil {
		return err
	}
	var err error
	op.Operands, err = p.operandsUntil(")")
	return err
}

// operandsUntil reads %a, %b#1, ... up to the closing text (consumed).
func (p *parser) operandsUntil(close string) ([]Value, error) {
	s := p.s
	var out []Value
	if s.accept(close) {
		return out, nil
	}
	for {
		v, err := p.operand()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if s.accept(close) {
			return out, nil
		}
		if err := s.expect(","); err != nil {
			return nil, err
		}
	}
}

// operand reads %name or %name#i.
func (p *parser) operand() (Value, error) {
	s := p.s
	s.skip()
	pos := s.here()
	name := s.valueName()
	if name == "" {
		return Value{}, s.errorf("expected an operand %%name, found %s", s.describe())
	}
	if !s.eof() && s.src[s.pos] == '#' {
		s.advance(1)
		n := s.suffixID()
		name += "#" + n
	}
	return Value{Name: name, Pos: pos}, nil
}

// operandList reads operands separated by commas until none follows.
func (p *parser) operandList() ([]Value, error) {
	var out []Value
	for p.s.peek() == '%' {
		v, err := p.operand()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if !p.s.accept(",") {
			break
		}
	}
	return out, nil
}
