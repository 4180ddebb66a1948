package stablehlo

import (
	"strconv"
	"strings"
)

// attr reads an attribute value, with its type where one follows (1 :
// i64, dense<...> : tensor<...>).
func (p *parser) attr() (*Attr, error) { return p.attrTyped(true) }

// untypedAttr reads an attribute value without a type: in a custom
// form (dim = 0 : tensor<...>) the colon starts the op's types.
func (p *parser) untypedAttr() (*Attr, error) { return p.attrTyped(false) }

func (p *parser) attrTyped(typed bool) (*Attr, error) {
	s := p.s
	s.skip()
	pos := s.here()
	a, err := p.attrBody()
	if err != nil {
		return nil, err
	}
	a.Pos = pos
	if typed && s.peek() == ':' && !s.lookingAt("::") && (a.Kind == IntAttr || a.Kind == FloatAttr || a.Kind == DenseAttr || a.Kind == DenseResourceAttr || a.Kind == BoolAttr) {
		s.advance(1)
		t, err := p.typ()
		if err != nil {
			return nil, err
		}
		a.Type = &t
		if a.Kind == IntAttr && isFloatType(t) {
			a.Kind = FloatAttr
		}
	}
	return a, nil
}

func isFloatType(t Type) bool { return t.Kind == TensorType && len(t.Dims) == 0 && t.Elem.IsFloat() }

func (p *parser) attrBody() (*Attr, error) {
	s := p.s
	c := s.peek()
	switch {
	case c == '"':
		str, err := s.str()
		return &Attr{Kind: StringAttr, Text: str}, err
	case c == '[':
		s.advance(1)
		a := &Attr{Kind: ListAttr}
		if s.accept("]") {
			return a, nil
		}
		for {
			e, err := p.attr()
			if err != nil {
				return nil, err
			}
			a.List = append(a.List, e)
			if s.accept("]") {
				return a, nil
			}
			if err := s.expect(","); err != nil {
				return nil, err
			}
		}
	case c == '{':
		d, err := p.attrDict()
		return &Attr{Kind: DictAttr, Dict: d}, err
	case c == '(':
		in, err := p.typeList()
		if err != nil {
			return nil, err
		}
		if err := s.expect("->"); err != nil {
			return nil, err
		}
		out, err := p.typeList()
		return &Attr{Kind: FunctionTypeAttr, In: in, Out: out}, err
	case c == '@':
		sym, err := s.symbol()
		return &Attr{Kind: SymbolAttr, Text: sym}, err
	case c == '#':
		return p.dialectAttr()
	case c == '-' || c == '+' || isDigit(c):
		n := s.number()
		if n == "" {
			return nil, s.errorf("expected a number, found %s", s.describe())
		}
		kind := IntAttr
		if strings.ContainsAny(n, ".") || (strings.ContainsAny(n, "eE") && !strings.Contains(n, "0x")) || strings.HasSuffix(n, "inf") || strings.HasSuffix(n, "nan") {
			kind = FloatAttr
		}
		return &Attr{Kind: kind, Text: n}, nil
	case s.lookingAtWord("dense_resource"):
		s.advance(len("dense_resource"))
		if err := s.expect("<"); err != nil {
			return nil, err
		}
		name, err := s.balanced('<', '>')
		name = strings.TrimSpace(name)
		if u, uerr := strconv.Unquote(name); uerr == nil {
			name = u // a key that is not an identifier is quoted
		}
		return &Attr{Kind: DenseResourceAttr, Text: name}, err
	case s.lookingAtWord("dense"):
		s.advance(len("dense"))
		if err := s.expect("<"); err != nil {
			return nil, err
		}
		body, err := s.balanced('<', '>')
		return &Attr{Kind: DenseAttr, Text: strings.TrimSpace(body)}, err
	case s.lookingAtWord("array"):
		s.advance(len("array"))
		if err := s.expect("<"); err != nil {
			return nil, err
		}
		et := s.ident()
		a := &Attr{Kind: ArrayAttr, Text: et, Array: []int64{}}
		if s.accept(">") {
			return a, nil
		}
		if err := s.expect(":"); err != nil {
			return nil, err
		}
		for {
			n := s.number()
			var v int64
			switch {
			case n != "":
				iv, err := (&Attr{Kind: IntAttr, Text: n}).Int()
				if err != nil {
					return nil, s.errorf("array<%s>: %v", et, err)
				}
				v = iv
			case s.acceptWord("true"):
				v = 1
			case s.acceptWord("false"):
				v = 0
			default:
				return nil, s.errorf("expected an element of array<%s>, found %s", et, s.describe())
			}
			a.Array = append(a.Array, v)
			if s.accept(">") {
				return a, nil
			}
			if err := s.expect(","); err != nil {
				return nil, err
			}
		}
	case s.lookingAtWord("true"), s.lookingAtWord("false"):
		w := s.ident()
		return &Attr{Kind: BoolAttr, Text: w}, nil
	case s.lookingAtWord("unit"):
		s.ident()
		return &Attr{Kind: UnitAttr}, nil
	case s.lookingAtWord("loc"):
		return p.location()
	}
	// A type as a value (tensor<...>, i64, !dialect.type), or a keyword.
	save := *s
	if t, err := p.typ(); err == nil {
		return &Attr{Kind: TypeAttr, Type: &t, Text: t.Text}, nil
	}
	*s = save
	if w := s.ident(); w != "" {
		return &Attr{Kind: KeywordAttr, Text: w}, nil
	}
	return nil, s.errorf("expected an attribute, found %s", s.describe())
}

// dialectAttr reads #name<body>, #name.kind<body> or an alias #name; the
// body stays text, read by the translation where it means something.
func (p *parser) dialectAttr() (*Attr, error) {
	s := p.s
	s.advance(1) // #
	name := "#" + s.suffixID()
	a := &Attr{Kind: DialectAttr, Text: name}
	if !s.eof() && s.src[s.pos] == '<' {
		s.advance(1)
		body, err := s.balanced('<', '>')
		if err != nil {
			return nil, err
		}
		a.Body = strings.TrimSpace(body)
	}
	return a, nil
}

// location reads loc(...), kept as text: debug information only.
func (p *parser) location() (*Attr, error) {
	s := p.s
	if err := s.expectWord("loc"); err != nil {
		return nil, err
	}
	if err := s.expect("("); err != nil {
		return nil, err
	}
	body, err := s.balanced('(', ')')
	return &Attr{Kind: DialectAttr, Text: "loc", Body: body}, err
}

// attrDict reads {name = value, name, ...}.
func (p *parser) attrDict() ([]NamedAttr, error) {
	s := p.s
	if err := s.expect("{"); err != nil {
		return nil, err
	}
	var out []NamedAttr
	if s.accept("}") {
		return out, nil
	}
	for {
		var name string
		if s.peek() == '"' {
			n, err := s.str()
			if err != nil {
				return nil, err
			}
			name = n
		} else {
			name = s.ident()
		}
		if name == "" {
			return nil, s.errorf("expected an attribute name, found %s", s.describe())
		}
		a := &Attr{Kind: UnitAttr, Pos: s.here()}
		if s.accept("=") {
			v, err := p.attr()
			if err != nil {
				return nil, err
			}
			a = v
		}
		out = append(out, NamedAttr{name, a})
		if s.accept("}") {
			return out, nil
		}
		if err := s.expect(","); err != nil {
			return nil, err
		}
	}
}

// fields reads a dialect attribute's body of `name = value` pairs
// (#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>) into a
// dictionary; a value is a list of integers, an integer, a word, or the
// convolution's [b, 0, 1, f]x[...]->[...] form kept as text.
func (p *parser) fields(a *Attr) (map[string]*Attr, error) {
	sub := &parser{s: newScanner(a.Pos.File, a.Body, a.Pos.Line), aliases: p.aliases}
	sub.s.col = a.Pos.Col
	out := map[string]*Attr{}
	s := sub.s
	for s.peek() != 0 {
		name := s.ident()
		if name == "" {
			return nil, s.errorf("in %s: expected a field name, found %s", a.Text, s.describe())
		}
		if err := s.expect("="); err != nil {
			return nil, err
		}
		v, err := sub.attr()
		if err != nil {
			return nil, err
		}
		out[name] = v
		if !s.accept(",") {
			break
		}
	}
	if s.peek() != 0 {
		return nil, s.errorf("in %s: unexpected %s", a.Text, s.describe())
	}
	return out, nil
}
