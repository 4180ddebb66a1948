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

// MaxElements bounds the element count of any shape vkjit accepts.
const MaxElements = int64(1) << 48

// ModuleSeparator is the line that separates modules in one file.
const ModuleSeparator = "// -----"

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
		if strings.TrimSpace(ln) == ModuleSeparator {
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

// mark and reset let the parser look further ahead than one token.
func (p *parser) mark() (lexer, *token) { return *p.lex, p.peeked }
func (p *parser) reset(l lexer, t *token) {
	*p.lex = l
	p.peeked = t
}

func isPunct(t token, s string) bool { return t.kind == tPunct && t.text == s }

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
	slot int // operand index, for operands
	name string
	pos  Pos
}

// stackTableNames are the sections of the stack-frame tables that JAX
// prints after the module header.
var stackTableNames = map[string]bool{"FileNames": true, "FunctionNames": true, "FileLocations": true, "StackFrames": true}

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
	if err := p.stackTables(m); err != nil {
		return nil, err
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

// stackTables reads JAX's FileNames/FunctionNames/FileLocations/StackFrames
// sections: each a title line and `id value` lines. They are kept
// verbatim for printing; metadata's stack_frame_id refers to them.
func (p *parser) stackTables(m *Module) error {
	for {
		t, err := p.peek()
		if err != nil {
			return err
		}
		if t.kind != tIdent || !stackTableNames[t.text] {
			return nil
		}
		// A computation may be named like a table; a table title is
		// followed by an id number or another title, never by '(' or '{'.
		save, pk := p.mark()
		p.next()
		nx, err := p.peek()
		if err != nil {
			return err
		}
		if nx.kind != tNumber && !(nx.kind == tIdent && stackTableNames[nx.text]) && nx.kind != tEOF && !(nx.kind == tIdent && isComputationStart(nx.text)) {
			p.reset(save, pk)
			return nil
		}
		tab := StackTable{Name: t.text}
		for {
			nt, err := p.peek()
			if err != nil {
				return err
			}
			if nt.kind != tNumber {
				break
			}
			p.next()
			p.unread()
			v, vp, err := p.lex.rawValue()
			if err != nil {
				return err
			}
			if v == "" {
				return p.errorf(vp, "%s entry %s has no value", tab.Name, nt.text)
			}
			tab.Entries = append(tab.Entries, nt.text+" "+v)
		}
		m.StackTables = append(m.StackTables, tab)
	}
}

func isComputationStart(s string) bool { return s == "ENTRY" || strings.HasPrefix(s, "%") }

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
	return Attr{Name: nt.text, Value: v, Pos: vp}, nil
}

// calledAttrs are the attributes whose values name computations.
var calledAttrs = map[string]bool{
	"to_apply": true, "calls": true, "condition": true, "body": true,
	"branch_computations": true, "true_computation": true, "false_computation": true,
	"select": true, "scatter": true, "comparator": true, "called_computations": true,
	"async_execution_thread": false,
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
		operandRefs = append(operandRefs, refs...)
		calls = append(calls, crefs...)
	}
	// Attributes may follow the body: `}, execution_thread="main"`.
	for {
		ok, err := p.accept(",")
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		a, err := p.attr()
		if err != nil {
			return nil, nil, err
		}
		c.Attrs = append(c.Attrs, a)
	}
	if len(c.Instructions) == 0 {
		return nil, nil, p.errorf(c.Pos, "computation %q is empty", c.Name)
	}
	if c.Root == nil {
		c.Root = c.Instructions[len(c.Instructions)-1]
	}
	for _, r := range operandRefs {
		op := byName[r.name]
		if op == nil {
			return nil, nil, p.errorf(r.pos, "%s: unknown operand %q", r.in.Name, r.name)
		}
		r.in.Operands[r.slot] = op
	}
	// Parameters are numbered 0 to n-1, n being how many there are: a
	// number past them is an error here, before it sizes anything.
	n := 0
	for _, in := range c.Instructions {
		if in.Op == OpParameter {
			n++
		}
	}
	c.Params = make([]*Instruction, n)
	for _, in := range c.Instructions {
		if in.Op != OpParameter {
			continue
		}
		if in.ParamNum < 0 || in.ParamNum >= n {
			return nil, nil, in.Errorf("parameter number %d, but computation %q has %d parameters (numbered from 0)", in.ParamNum, c.Name, n)
		}
		if c.Params[in.ParamNum] != nil {
			return nil, nil, in.Errorf("parameter number %d used twice", in.ParamNum)
		}
		c.Params[in.ParamNum] = in
	}
	return c, calls, nil
}

// instruction reads `[ROOT] name = [shape] opcode(operands), attr=value...`.
// The shape may be left out (XLA's parser infers it); typed operands
// (`f32[2]{0} %x`) are accepted and their shapes dropped.
func (p *parser) instruction() (*Instruction, bool, []pendingRef, []pendingRef, error) {
	fail := func(err error) (*Instruction, bool, []pendingRef, []pendingRef, error) {
		return nil, false, nil, nil, err
	}
	t, err := p.ident("instruction name")
	if err != nil {
		return fail(err)
	}
	isRoot, start := false, t.pos
	if t.text == "ROOT" {
		isRoot = true
		if t, err = p.ident("instruction name"); err != nil {
			return fail(err)
		}
	}
	in := &Instruction{Name: name(t), Pos: start}
	if _, err := p.expect("="); err != nil {
		return fail(err)
	}
	if ok, err := p.startsShape(); err != nil {
		return fail(err)
	} else if ok {
		if in.Shape, err = p.shape(); err != nil {
			return fail(err)
		}
	} else {
		in.ShapeInferred = true
	}
	opt, err := p.ident("opcode")
	if err != nil {
		return fail(err)
	}
	op, ok := LookupOpcode(opt.text)
	if !ok {
		return fail(p.errorf(opt.pos, "unknown opcode %q", opt.text))
	}
	in.Op = op
	if _, err := p.expect("("); err != nil {
		return fail(err)
	}
	var refs []pendingRef
	switch op {
	case OpConstant:
		if in.ShapeInferred {
			return fail(p.errorf(opt.pos, "%s: a constant needs its shape", in.Name))
		}
		p.unread()
		raw, rp, err := p.lex.rawValue()
		if err != nil {
			return fail(err)
		}
		lit, err := parseLiteral(raw, in.Shape)
		if err != nil {
			return fail(p.errorf(rp, "%s: %v", in.Name, err))
		}
		in.Literal = lit
		if _, err := p.expect(")"); err != nil {
			return fail(err)
		}
	case OpParameter:
		nt, err := p.next()
		if err != nil {
			return fail(err)
		}
		n, perr := strconv.Atoi(nt.text)
		if nt.kind != tNumber || perr != nil || n < 0 {
			return fail(p.errorf(nt.pos, "expected parameter number, found %s", nt))
		}
		in.ParamNum = n
		if _, err := p.expect(")"); err != nil {
			return fail(err)
		}
	default:
		for {
			if ok, err := p.accept(")"); err != nil {
				return fail(err)
			} else if ok {
				break
			}
			if len(refs) > 0 {
				if _, err := p.expect(","); err != nil {
					return fail(err)
				}
			}
			// Old-style operands carry their shape first: f32[2]{0} %x.
			if ok, err := p.startsShape(); err != nil {
				return fail(err)
			} else if ok {
				if _, err := p.shape(); err != nil {
					return fail(err)
				}
			}
			ot, err := p.ident("operand")
			if err != nil {
				return fail(err)
			}
			refs = append(refs, pendingRef{in: in, slot: len(in.Operands), name: name(ot), pos: ot.pos})
			in.Operands = append(in.Operands, nil)
		}
	}
	var calls []pendingRef
	for {
		ok, err := p.accept(",")
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		a, err := p.attr()
		if err != nil {
			return fail(err)
		}
		if in.Attr(a.Name) != nil {
			return fail(p.errorf(a.Pos, "%s: attribute %s given twice", in.Name, a.Name))
		}
		in.Attrs = append(in.Attrs, a)
		if calledAttrs[a.Name] {
			for _, cn := range splitList(a.Value) {
				calls = append(calls, pendingRef{in: in, name: strings.TrimPrefix(cn, "%"), pos: a.Pos})
			}
		}
	}
	if err := parseTypedAttrs(in); err != nil {
		return fail(err)
	}
	return in, isRoot, refs, calls, nil
}

// startsShape reports whether the next tokens begin a shape: '(' (a tuple),
// an element type followed by '[', "token", or "b(" (a buffer shape).
func (p *parser) startsShape() (bool, error) {
	t, err := p.peek()
	if err != nil {
		return false, err
	}
	if isPunct(t, "(") {
		return true, nil
	}
	if t.kind != tIdent {
		return false, nil
	}
	save, pk := p.mark()
	p.next()
	nx, err := p.peek()
	p.reset(save, pk)
	if err != nil {
		return false, err
	}
	switch {
	case t.text == "b":
		return isPunct(nx, "("), nil
	case t.text == "token":
		return isPunct(nx, "[") || nx.kind == tIdent, nil
	}
	// Any name followed by '[' is a shape; shape() reports an unknown type.
	return isPunct(nx, "["), nil
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

// shape reads an array shape (f32[2,3]{1,0}), a tuple shape, a token, or
// a buffer shape b(...).
func (p *parser) shape() (Shape, error) {
	t, err := p.next()
	if err != nil {
		return Shape{}, err
	}
	if isPunct(t, "(") {
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
	if t.text == "b" {
		if _, err := p.expect("("); err != nil {
			return Shape{}, err
		}
		s, err := p.shape()
		if err != nil {
			return s, err
		}
		s.Buffer = true
		_, err = p.expect(")")
		return s, err
	}
	et, ok := ParseElementType(t.text)
	if !ok {
		return Shape{}, p.errorf(t.pos, "unknown element type %q", t.text)
	}
	s := Shape{Elem: et}
	if ok, err := p.accept("["); err != nil {
		return s, err
	} else if !ok {
		if et == Token {
			return s, nil // "token" may appear without brackets
		}
		nx, _ := p.peek()
		return s, p.errorf(nx.pos, "expected '[' after %s, found %s", t.text, nx)
	}
	s.Dims = []int64{}
	dynamic := false
	for {
		if ok, err := p.accept("]"); err != nil {
			return s, err
		} else if ok {
			break
		}
		if len(s.Dims) > 0 {
			if _, err := p.expect(","); err != nil {
				return s, err
			}
		}
		dyn, err := p.accept("<=")
		if err != nil {
			return s, err
		}
		dt, err := p.next()
		if err != nil {
			return s, err
		}
		d := int64(-1) // '?': unbounded dynamic
		if isPunct(dt, "?") {
			dyn = true
		} else {
			v, perr := strconv.ParseInt(dt.text, 10, 64)
			if dt.kind != tNumber || perr != nil || v < 0 {
				return s, p.errorf(dt.pos, "expected a dimension size, found %s", dt)
			}
			d = v
		}
		s.Dims = append(s.Dims, d)
		s.Dynamic = append(s.Dynamic, dyn)
		dynamic = dynamic || dyn
	}
	if !dynamic {
		s.Dynamic = nil
	}
	// Reject shapes whose element count overflows: every size computation
	// downstream may then use int64 without checks.
	n := int64(1)
	for _, d := range s.Dims {
		if d > 0 && n > MaxElements/d {
			return s, p.errorf(t.pos, "shape %s has more than 2^48 elements", s.DimsString())
		}
		n *= max(d, 1)
	}
	// Optional layout {1,0} or {1,0:T(8,128)S(1)}. A '{' after a shape
	// can also open a computation body (after a signature), so look inside.
	nx, err := p.peek()
	if err != nil || !isPunct(nx, "{") {
		return s, err
	}
	save, pk := p.mark()
	p.next()
	lay := &Layout{MinorToMajor: []int64{}}
	for {
		t, err := p.next()
		if err != nil {
			return s, err
		}
		switch {
		case isPunct(t, "}"):
			s.Layout = lay
			return s, nil
		case t.kind == tNumber:
			v, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				return s, p.errorf(t.pos, "bad layout entry %s", t)
			}
			lay.MinorToMajor = append(lay.MinorToMajor, v)
		case isPunct(t, ","):
		case isPunct(t, ":"):
			// Tiling, element size and memory-space suffixes: kept verbatim.
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
				return s, err
			}
			s.Layout = lay
			return s, nil
		default:
			// Not a layout: the brace opens a computation body.
			p.reset(save, pk)
			return s, nil
		}
	}
}
