package stablehlo

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// floatTypeName matches MLIR's float format names (f6E3M2FN).
var floatTypeName = regexp.MustCompile(`^f\d+E\d+M\d+[A-Z]*$`)

// elementTypes maps MLIR's element type spellings to HLO's.
var elementTypes = map[string]hlo.ElementType{
	"i1": hlo.PRED, "i2": hlo.S2, "i4": hlo.S4, "i8": hlo.S8, "i16": hlo.S16, "i32": hlo.S32, "i64": hlo.S64,
	"si8": hlo.S8, "si16": hlo.S16, "si32": hlo.S32, "si64": hlo.S64,
	"ui2": hlo.U2, "ui4": hlo.U4, "ui8": hlo.U8, "ui16": hlo.U16, "ui32": hlo.U32, "ui64": hlo.U64,
	"f16": hlo.F16, "bf16": hlo.BF16, "f32": hlo.F32, "f64": hlo.F64,
	"f4E2M1FN": hlo.F4E2M1FN, "f6E2M3FN": hlo.F6E2M3FN, "f6E3M2FN": hlo.F6E3M2FN, "f8E3M4": hlo.F8E3M4, "f8E4M3": hlo.F8E4M3, "f8E4M3FN": hlo.F8E4M3FN,
	"f8E4M3FNUZ": hlo.F8E4M3FNUZ, "f8E4M3B11FNUZ": hlo.F8E4M3B11FNUZ, "f8E5M2": hlo.F8E5M2,
	"f8E5M2FNUZ": hlo.F8E5M2FNUZ, "f8E8M0FNU": hlo.F8E8M0FNU,
	"index": hlo.S64,
}

// mlirName spells an HLO element type as MLIR does, for messages and the
// printer.
func mlirName(t hlo.ElementType) string {
	switch t {
	case hlo.C64:
		return "complex<f32>"
	case hlo.C128:
		return "complex<f64>"
	}
	for name, e := range elementTypes {
		if e == t && !strings.HasPrefix(name, "si") && name != "index" {
			return name
		}
	}
	return t.String()
}

// typ reads a type: tensor<...>, tuple<...>, !stablehlo.token, a bare
// element type, complex<...>, or a type of another dialect (!quant...).
func (p *parser) typ() (Type, error) {
	s := p.s
	s.skip()
	start := s.pos
	t, err := p.typeBody()
	if err != nil {
		return Type{}, err
	}
	t.Text = strings.TrimSpace(s.src[start:s.pos])
	return t, nil
}

func (p *parser) typeBody() (Type, error) {
	s := p.s
	switch {
	case s.acceptWord("tensor"):
		return p.tensorType()
	case s.acceptWord("tuple"):
		if err := s.expect("<"); err != nil {
			return Type{}, err
		}
		t := Type{Kind: TupleType}
		if s.accept(">") {
			return t, nil
		}
		for {
			e, err := p.typ()
			if err != nil {
				return Type{}, err
			}
			t.Tuple = append(t.Tuple, e)
			if s.accept(">") {
				return t, nil
			}
			if err := s.expect(","); err != nil {
				return Type{}, err
			}
		}
	case s.accept("!stablehlo.token"), s.accept("!mhlo.token"):
		return Type{Kind: TokenType}, nil
	case s.peek() == '!':
		// Another dialect's type: !quant.uniform<...> read (quant.go),
		// others kept as text.
		s.advance(1)
		name := s.suffixID()
		body := ""
		if s.peek() == '<' {
			s.advance(1)
			var err error
			if body, err = s.balanced('<', '>'); err != nil {
				return Type{}, err
			}
		}
		t := Type{Kind: OtherType, Quant: true}
		if name == "quant.uniform" {
			if q, err := parseQuant(body); err == nil {
				t.Q, t.Elem = q, q.Storage
			}
		}
		return t, nil
	}
	e, err := p.elementType()
	if err != nil {
		return Type{}, err
	}
	return Type{Kind: TensorType, Elem: e}, nil
}

// elementType reads an element type name, complex<...> included.
func (p *parser) elementType() (hlo.ElementType, error) {
	s := p.s
	pos := s.here()
	if s.acceptWord("complex") {
		if err := s.expect("<"); err != nil {
			return 0, err
		}
		e, err := p.elementType()
		if err != nil {
			return 0, err
		}
		if err := s.expect(">"); err != nil {
			return 0, err
		}
		switch e {
		case hlo.F32:
			return hlo.C64, nil
		case hlo.F64:
			return hlo.C128, nil
		}
		return 0, s.errorAt(pos, "complex<%s> has no HLO element type", mlirName(e))
	}
	name := s.ident()
	if t, ok := elementTypes[name]; ok {
		return t, nil
	}
	if name == "" {
		return 0, s.errorf("expected a type, found %s", s.describe())
	}
	if floatTypeName.MatchString(name) {
		// A float format HLO lacks (f6E2M3FN): the module parses, and
		// translating a value of it names it.
		p.unknownTypes = append(p.unknownTypes, name)
		return hlo.Invalid, nil
	}
	return 0, s.errorAt(pos, "element type %s is not supported", name)
}

// tensorType reads the rest of tensor<2x?x3xf32, encoding>.
func (p *parser) tensorType() (Type, error) {
	s := p.s
	if err := s.expect("<"); err != nil {
		return Type{}, err
	}
	t := Type{Kind: TensorType, Dims: []int64{}}
	// Dimensions: integers or ? followed by x, then the element type.
	for {
		s.skip()
		if s.eof() {
			return Type{}, s.errorf("unterminated tensor type")
		}
		c := s.src[s.pos]
		if c == '?' {
			s.advance(1)
			t.Dims = append(t.Dims, -1)
			t.Dynamic = true
		} else if isDigit(c) {
			end := s.pos
			for end < len(s.src) && isDigit(s.src[end]) {
				end++
			}
			if end >= len(s.src) || s.src[end] != 'x' {
				break // not a dimension: the element type starts with a digit? (none does)
			}
			n, err := strconv.ParseInt(s.src[s.pos:end], 10, 64)
			if err != nil {
				return Type{}, s.errorf("bad dimension %q", s.src[s.pos:end])
			}
			s.advance(end - s.pos)
			t.Dims = append(t.Dims, n)
		} else {
			break
		}
		if err := s.expect("x"); err != nil {
			return Type{}, err
		}
	}
	if s.peek() == '!' {
		q, err := p.typeBody()
		if err != nil {
			return Type{}, err
		}
		t.Quant, t.Q, t.Elem = q.Quant, q.Q, q.Elem
	} else {
		e, err := p.elementType()
		if err != nil {
			return Type{}, err
		}
		t.Elem = e
	}
	if s.accept(",") {
		// An encoding (bounds of a dynamic shape): kept out.
		if _, err := p.attr(); err != nil {
			return Type{}, err
		}
		t.Bounded = true
	}
	if err := s.expect(">"); err != nil {
		return Type{}, err
	}
	return t, nil
}

// typeList reads types separated by commas, a parenthesized list, or
// (with more than one result) either.
func (p *parser) typeList() ([]Type, error) {
	s := p.s
	if s.peek() == '(' {
		s.advance(1)
		var out []Type
		if s.accept(")") {
			return out, nil
		}
		for {
			t, err := p.typ()
			if err != nil {
				return nil, err
			}
			if s.peek() == '{' { // a result's attributes
				if _, err := p.attrDict(); err != nil {
					return nil, err
				}
			}
			out = append(out, t)
			if s.accept(")") {
				return out, nil
			}
			if err := s.expect(","); err != nil {
				return nil, err
			}
		}
	}
	t, err := p.typ()
	if err != nil {
		return nil, err
	}
	return []Type{t}, nil
}

// typeText spells an HLO shape as the MLIR type it came from, for
// messages.
func typeText(s hlo.Shape) string {
	switch {
	case s.IsTuple():
		parts := make([]string, len(s.Tuple))
		for i, e := range s.Tuple {
			parts[i] = typeText(e)
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case s.Elem == hlo.Token:
		return "!stablehlo.token"
	}
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range s.Dims {
		b.WriteString(strconv.FormatInt(d, 10) + "x")
	}
	b.WriteString(mlirName(s.Elem) + ">")
	return b.String()
}
