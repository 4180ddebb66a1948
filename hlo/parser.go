package hlo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ParseFile reads a file of HLO text. A file may hold several modules
// separated by lines of `// -----`; each is parsed in turn.
func ParseFile(path string) ([]*Module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseModules(path, string(src))
}

// ParseModules parses every module of src; file names the source in errors.
func ParseModules(file, src string) ([]*Module, error) {
	var mods []*Module
	for _, part := range splitModules(src) {
		if strings.TrimSpace(stripComments(part.text)) == "" {
			continue
		}
		p := &parser{lex: newLexer(file, part.text, part.line)}
		m, err := p.module()
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, &Error{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "no HLO module in input"}
	}
	return mods, nil
}

// Parse parses src holding exactly one module.
func Parse(file, src string) (*Module, error) {
	mods, err := ParseModules(file, src)
	if err != nil {
		return nil, err
	}
	if len(mods) != 1 {
		return nil, &Error{Pos: mods[1].Pos, Msg: fmt.Sprintf("expected one module, found %d", len(mods))}
	}
	return mods[0], nil
}

type part struct {
	text string
	line int
}

// splitModules cuts src at `// -----` separator lines, remembering where
// each part starts so that positions stay true to the whole file.
func splitModules(src string) []part {
	var parts []part
	lines := strings.SplitAfter(src, "\n")
	cur, start := strings.Builder{}, 1
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimSpace(ln), "// -----") {
			parts = append(parts, part{cur.String(), start})
			cur.Reset()
			start = i + 2
			continue
		}
		cur.WriteString(ln)
	}
	return append(parts, part{cur.String(), start})
}

func stripComments(s string) string {
	var b strings.Builder
	for _, ln := range strings.Split(s, "\n") {
		if i := strings.Index(ln, "//"); i >= 0 {
			ln = ln[:i]
		}
		b.WriteString(ln)
	}
	return b.String()
}

type parser struct {
	lex    *lexer
	peeked *token
}

func (p *parser) errorf(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() (token, error) {
	if p.peeked == nil {
		t, err := p.lex.next()
		if err != nil {
			return t, err
		}
		p.peeked = &t
	}
	return *p.peeked, nil
}

func (p *parser) next() (token, error) {
	t, err := p.peek()
	p.peeked = nil
	return t, err
}

// unread puts the lexer back at the start of the peeked token so that a
// raw scan can start there.
func (p *parser) unread() {
	if p.peeked != nil {
		t := *p.peeked
		p.lex.off, p.lex.line, p.lex.col = t.off, t.pos.Line, t.pos.Col
		p.peeked = nil
	}
}

func (p *parser) expect(text string) (token, error) {
	t, err := p.next()
	if err != nil {
		return t, err
	}
	if t.kind == tString || t.text != text {
		return t, p.errorf(t.pos, "expected %q, found %s", text, t)
	}
	return t, nil
}

// accept consumes the next token if its text is text.
func (p *parser) accept(text string) (bool, error) {
	t, err := p.peek()
	if err != nil {
		return false, err
	}
	if t.kind != tString && t.text == text {
		p.peeked = nil
		return true, nil
	}
	return false, nil
}

func (p *parser) ident(what string) (token, error) {
	t, err := p.next()
	if err != nil {
		return t, err
	}
	if t.kind != tIdent {
		return t, p.errorf(t.pos, "expected %s, found %s", what, t)
	}
	return t, nil
}

func name(t token) string { return strings.TrimPrefix(t.text, "%") }

// pendingRef is an operand or computation name to resolve once its scope
// has been read.
type pendingRef struct {
	in   *Instruction
	name string
	pos  Pos
}

func (p *parser) module() (*Module, error) {
	m := &Module{}
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	m.Pos = t.pos
	if t.kind == tIdent && t.text == "HloModule" {
		p.next()
		nt, err := p.ident("module name")
		if err != nil {
			return nil, err
		}
		m.Name = name(nt)
		if _, err := p.accept(":"); err != nil { // some XLA tests write "HloModule name:"
			return nil, err
		}
		for {
			ok, err := p.accept(",")
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			a, err := p.attr()
			if err != nil {
				return nil, err
			}
			m.Attrs = append(m.Attrs, a)
		}
	}
	var calls []pendingRef
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind == tEOF {
			break
		}
		c, refs, err := p.computation()
		if err != nil {
			return nil, err
		}
		if m.Computation(c.Name) != nil {
			return nil, p.errorf(c.Pos, "computation %q defined twice", c.Name)
		}
		m.Computations = append(m.Computations, c)
		calls = append(calls, refs...)
		if c.IsEntry {
			if m.Entry != nil {
				return nil, p.errorf(c.Pos, "second ENTRY computation %q", c.Name)
			}
			m.Entry = c
		}
	}
	if len(m.Computations) == 0 {
		return nil, p.errorf(m.Pos, "module %q has no computations", m.Name)
	}
	if m.Entry == nil {
		// XLA's convention: without ENTRY, the last computation is the entry.
		m.Entry = m.Computations[len(m.Computations)-1]
		m.Entry.IsEntry = true
	}
	if m.Name == "" {
		m.Name = m.Entry.Name
	}
	for _, r := range calls {
		c := m.Computation(r.name)
		if c == nil {
			return nil, p.errorf(r.pos, "%s: unknown computation %q", r.in.Name, r.name)
		}
		r.in.Called = append(r.in.Called, c)
	}
	return m, nil
}

// attr reads `name=value` with the value verbatim.
func (p *parser) attr() (Attr, error) {
	nt, err := p.ident("attribute name")
	if err != nil {
		return Attr{}, err
	}
	if _, err := p.expect("="); err != nil {
		return Attr{}, err
	}
	p.unread()
	v, vp, err := p.lex.rawValue()
	if err != nil {
		return Attr{}, err
	}
	if v == "" {
		return Attr{}, p.errorf(vp, "attribute %s has no value", nt.text)
	}
	return Attr{Name: nt.text, Value: v}, nil
}

// calledAttrs are the attributes whose values name computations.
var calledAttrs = map[string]bool{
	"to_apply": true, "calls": true, "condition": true, "body": true,
	"branch_computations": true, "true_computation": true, "false_computation": true,
	"select": true, "scatter": true, "comparator": true,
}

func (p *parser) computation() (*Computation, []pendingRef, error) {
	c := &Computation{}
	t, err := p.ident("computation name")
	if err != nil {
		return nil, nil, err
	}
	if t.text == "ENTRY" {
		c.IsEntry = true
		if t, err = p.ident("computation name"); err != nil {
			return nil, nil, err
		}
	}
	c.Name, c.Pos = name(t), t.pos
	// Optional signature: (x: f32[], y: f32[]) -> f32[]
	if ok, err := p.accept("("); err != nil {
		return nil, nil, err
	} else if ok {
		for {
			if ok, err := p.accept(")"); err != nil {
				return nil, nil, err
			} else if ok {
				break
			}
			if _, err := p.ident("parameter name"); err != nil {
				return nil, nil, err
			}
			if _, err := p.expect(":"); err != nil {
				return nil, nil, err
			}
			if _, err := p.shape(); err != nil {
				return nil, nil, err
			}
			if _, err := p.accept(","); err != nil {
				return nil, nil, err
			}
		}
		if _, err := p.expect("->"); err != nil {
			return nil, nil, err
		}
		if _, err := p.shape(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := p.expect("{"); err != nil {
		return nil, nil, err
	}
	byName := map[string]*Instruction{}
	var operandRefs, calls []pendingRef
	var operandSlots [][]int // per operandRefs entry: index into in.Operands
	for {
		if ok, err := p.accept("}"); err != nil {
			return nil, nil, err
		} else if ok {
			break
		}
		in, isRoot, refs, crefs, err := p.instruction()
		if err != nil {
			return nil, nil, err
		}
		if byName[in.Name] != nil {
			return nil, nil, p.errorf(in.Pos, "instruction %q defined twice", in.Name)
		}
		byName[in.Name] = in
		c.Instructions = append(c.Instructions, in)
		if isRoot {
			if c.Root != nil {
				return nil, nil, p.errorf(in.Pos, "second ROOT instruction %q", in.Name)
			}
			c.Root = in
		}
		for i, r := range refs {
			operandRefs = append(operandRefs, r)
			operandSlots = append(operandSlots, []int{i})
		}
		calls = append(calls, crefs...)
	}
	if len(c.Instructions) == 0 {
		return nil, nil, p.errorf(c.Pos, "computation %q is empty", c.Name)
	}
	if c.Root == nil {
		c.Root = c.Instructions[len(c.Instructions)-1]
	}
	for i, r := range operandRefs {
		op := byName[r.name]
		if op == nil {
			return nil, nil, p.errorf(r.pos, "%s: unknown operand %q", r.in.Name, r.name)
		}
		r.in.Operands[operandSlots[i][0]] = op
	}
	for _, in := range c.Instructions {
		if in.Op != OpParameter {
			continue
		}
		for len(c.Params) <= in.ParamNum {
			c.Params = append(c.Params, nil)
		}
		if c.Params[in.ParamNum] != nil {
			return nil, nil, in.Errorf("parameter number %d used twice", in.ParamNum)
		}
		c.Params[in.ParamNum] = in
	}
	for i, prm := range c.Params {
		if prm == nil {
			return nil, nil, p.errorf(c.Pos, "computation %q has no parameter %d", c.Name, i)
		}
	}
	return c, calls, nil
}

// instruction reads `[ROOT] name = shape opcode(operands), attr=value...`.
func (p *parser) instruction() (*Instruction, bool, []pendingRef, []pendingRef, error) {
	t, err := p.ident("instruction name")
	if err != nil {
		return nil, false, nil, nil, err
	}
	isRoot, start := false, t.pos
	if t.text == "ROOT" {
		isRoot = true
		if t, err = p.ident("instruction name"); err != nil {
			return nil, false, nil, nil, err
		}
	}
	in := &Instruction{Name: name(t), Pos: start}
	if _, err := p.expect("="); err != nil {
		return nil, false, nil, nil, err
	}
	if in.Shape, err = p.shape(); err != nil {
		return nil, false, nil, nil, err
	}
	opt, err := p.ident("opcode")
	if err != nil {
		return nil, false, nil, nil, err
	}
	op, ok := LookupOpcode(opt.text)
	if !ok {
		return nil, false, nil, nil, p.errorf(opt.pos, "unknown opcode %q", opt.text)
	}
	in.Op = op
	if _, err := p.expect("("); err != nil {
		return nil, false, nil, nil, err
	}
	var refs []pendingRef
	switch op {
	case OpConstant:
		p.unread()
		raw, rp, err := p.lex.rawValue()
		if err != nil {
			return nil, false, nil, nil, err
		}
		lit, err := parseLiteral(raw, in.Shape)
		if err != nil {
			return nil, false, nil, nil, p.errorf(rp, "%s: %v", in.Name, err)
		}
		in.Literal = lit
		if _, err := p.expect(")"); err != nil {
			return nil, false, nil, nil, err
		}
	case OpParameter:
		nt, err := p.next()
		if err != nil {
			return nil, false, nil, nil, err
		}
		n, perr := strconv.Atoi(nt.text)
		if nt.kind != tNumber || perr != nil || n < 0 {
			return nil, false, nil, nil, p.errorf(nt.pos, "expected parameter number, found %s", nt)
		}
		in.ParamNum = n
		if _, err := p.expect(")"); err != nil {
			return nil, false, nil, nil, err
		}
	default:
		for {
			if ok, err := p.accept(")"); err != nil {
				return nil, false, nil, nil, err
			} else if ok {
				break
			}
			if len(refs) > 0 {
				if _, err := p.expect(","); err != nil {
					return nil, false, nil, nil, err
				}
			}
			// Old-style operands carry their shape first: f32[2]{0} %x.
			ot, err := p.ident("operand")
			if err != nil {
				return nil, false, nil, nil, err
			}
			if nx, err := p.peek(); err != nil {
				return nil, false, nil, nil, err
			} else if nx.kind == tPunct && (nx.text == "[" || nx.text == "(") || isShapeKeyword(ot.text) && nx.kind == tIdent {
				p.peeked = nil
				if err := p.restOfShape(ot, nx); err != nil {
					return nil, false, nil, nil, err
				}
				if ot, err = p.ident("operand name"); err != nil {
					return nil, false, nil, nil, err
				}
			}
			refs = append(refs, pendingRef{in: in, name: name(ot), pos: ot.pos})
			in.Operands = append(in.Operands, nil)
		}
	}
	var calls []pendingRef
	for {
		ok, err := p.accept(",")
		if err != nil {
			return nil, false, nil, nil, err
		}
		if !ok {
			break
		}
		at, _ := p.peek()
		a, err := p.attr()
		if err != nil {
			return nil, false, nil, nil, err
		}
		in.Attrs = append(in.Attrs, a)
		if calledAttrs[a.Name] {
			for _, cn := range splitList(a.Value) {
				calls = append(calls, pendingRef{in: in, name: strings.TrimPrefix(cn, "%"), pos: at.pos})
			}
		}
	}
	return in, isRoot, refs, calls, nil
}

func isShapeKeyword(s string) bool {
	_, ok := ParseElementType(s)
	return ok
}

// splitList splits `{a, b}` or `a` into names.
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shape reads an array shape (f32[2,3]{1,0}), a tuple shape, or a token.
func (p *parser) shape() (Shape, error) {
	t, err := p.next()
	if err != nil {
		return Shape{}, err
	}
	if t.kind == tPunct && t.text == "(" {
		s := Shape{Elem: Tuple, Tuple: []Shape{}}
		for {
			if ok, err := p.accept(")"); err != nil {
				return s, err
			} else if ok {
				return s, nil
			}
			if len(s.Tuple) > 0 {
				if _, err := p.expect(","); err != nil {
					return s, err
				}
			}
			e, err := p.shape()
			if err != nil {
				return s, err
			}
			s.Tuple = append(s.Tuple, e)
		}
	}
	if t.kind != tIdent {
		return Shape{}, p.errorf(t.pos, "expected a shape, found %s", t)
	}
	nx, err := p.peek()
	if err != nil {
		return Shape{}, err
	}
	if nx.kind == tPunct && nx.text == "[" {
		p.peeked = nil
	}
	var s Shape
	return s, p.restOfShapeInto(&s, t, nx)
}

// restOfShape parses a shape whose first token(s) were already read, for
// typed operands; the result is not needed.
func (p *parser) restOfShape(first, second token) error {
	if first.kind == tPunct && first.text == "(" {
		return p.errorf(first.pos, "tuple-typed operands are not supported")
	}
	var s Shape
	return p.restOfShapeInto(&s, first, second)
}

func (p *parser) restOfShapeInto(s *Shape, t, bracket token) error {
	et, ok := ParseElementType(t.text)
	if !ok {
		return p.errorf(t.pos, "unknown element type %q", t.text)
	}
	s.Elem = et
	if !(bracket.kind == tPunct && bracket.text == "[") {
		if et == Token {
			return nil // "token" may appear without brackets
		}
		return p.errorf(bracket.pos, "expected '[' after %s, found %s", t.text, bracket)
	}
	s.Dims = []int64{}
	for {
		if ok, err := p.accept("]"); err != nil {
			return err
		} else if ok {
			break
		}
		if len(s.Dims) > 0 {
			if _, err := p.expect(","); err != nil {
				return err
			}
		}
		dyn, err := p.accept("<=")
		if err != nil {
			return err
		}
		dt, err := p.next()
		if err != nil {
			return err
		}
		if dt.kind == tPunct && dt.text == "?" {
			return p.errorf(dt.pos, "unbounded dynamic dimensions are not supported")
		}
		d, perr := strconv.ParseInt(dt.text, 10, 64)
		if dt.kind != tNumber || perr != nil || d < 0 {
			return p.errorf(dt.pos, "expected a dimension size, found %s", dt)
		}
		s.Dims = append(s.Dims, d)
		if dyn {
			for len(s.Dynamic) < len(s.Dims)-1 {
				s.Dynamic = append(s.Dynamic, false)
			}
			s.Dynamic = append(s.Dynamic, true)
		}
	}
	if len(s.Dynamic) > 0 {
		for len(s.Dynamic) < len(s.Dims) {
			s.Dynamic = append(s.Dynamic, false)
		}
	}
	// Optional layout {1,0} or {1,0:T(8,128)S(1)}.
	nx, err := p.peek()
	if err != nil || !(nx.kind == tPunct && nx.text == "{") {
		return err
	}
	// A '{' right after a shape opens a layout only when the shape is an
	// array and the brace holds minor-to-major numbers (or is empty for a
	// scalar); a computation body after a signature starts on "{" too, but
	// never directly after an array shape with no space... so look inside.
	save := *p.lex
	p.peeked = nil
	lay := &Layout{MinorToMajor: []int64{}}
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		if t.kind == tPunct && t.text == "}" {
			s.Layout = lay
			return nil
		}
		if t.kind == tNumber {
			v, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				return p.errorf(t.pos, "bad layout entry %s", t)
			}
			lay.MinorToMajor = append(lay.MinorToMajor, v)
			continue
		}
		if t.kind == tPunct && t.text == "," {
			continue
		}
		if t.kind == tPunct && t.text == ":" {
			p.unread()
			// Tiling and memory-space suffixes: keep verbatim to the brace.
			start := p.lex.off
			depth := 0
			for p.lex.off < len(p.lex.src) {
				c := p.lex.src[p.lex.off]
				if c == '(' {
					depth++
				} else if c == ')' {
					depth--
				} else if c == '}' && depth == 0 {
					break
				}
				p.lex.advance(1)
			}
			lay.Extra = strings.TrimSpace(p.lex.src[start:p.lex.off])
			if _, err := p.expect("}"); err != nil {
				return err
			}
			s.Layout = lay
			return nil
		}
		// Not a layout: this brace opens something else (a computation
		// body after a signature's result shape). Rewind.
		*p.lex = save
		p.peeked = &nx
		return nil
	}
}
