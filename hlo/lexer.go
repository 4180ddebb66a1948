package hlo

import (
	"fmt"
	"strings"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tString
	tPunct // one of { } ( ) [ ] , = : ; * ? and the two-character -> and <=
)

type token struct {
	kind tokKind
	text string
	pos  Pos
	off  int // byte offset of the token's first character
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return fmt.Sprintf("string %s", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// lexer splits HLO text into tokens. It skips whitespace and both comment
// forms (`// ...` to end of line, `/* ... */`, which XLA prints inside
// long operand lists as /*index=5*/).
type lexer struct {
	src  string
	file string
	off  int
	line int
	col  int
	base int // line number of src's first line in the file (multi-module files)
}

func newLexer(file, src string, firstLine int) *lexer {
	return &lexer{src: src, file: file, line: firstLine, col: 1}
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.col} }

func (l *lexer) advance(n int) {
	for i := 0; i < n && l.off < len(l.src); i++ {
		if l.src[l.off] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.off++
	}
}

func (l *lexer) skipSpace() error {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			l.advance(1)
		case strings.HasPrefix(l.src[l.off:], "//"):
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.advance(1)
			}
		case strings.HasPrefix(l.src[l.off:], "/*"):
			start := l.pos()
			end := strings.Index(l.src[l.off+2:], "*/")
			if end < 0 {
				return &Error{Pos: start, Msg: "unterminated /* comment"}
			}
			l.advance(end + 4)
		default:
			return nil
		}
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '%' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next token.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	p := l.pos()
	start := l.off
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: p, off: start}, nil
	}
	c := l.src[l.off]
	rest := l.src[l.off:]
	switch {
	case strings.HasPrefix(rest, "->") || strings.HasPrefix(rest, "<="):
		l.advance(2)
		return token{kind: tPunct, text: rest[:2], pos: p, off: start}, nil
	case c == '-' && len(rest) > 1 && (rest[1] == 'i' || rest[1] == 'n'): // -inf, -nan
		l.advance(1)
		for l.off < len(l.src) && isIdentChar(l.src[l.off]) {
			l.advance(1)
		}
		return token{kind: tIdent, text: l.src[start:l.off], pos: p, off: start}, nil
	case isIdentStart(c):
		for l.off < len(l.src) && isIdentChar(l.src[l.off]) {
			l.advance(1)
		}
		return token{kind: tIdent, text: l.src[start:l.off], pos: p, off: start}, nil
	case isDigit(c) || ((c == '-' || c == '+' || c == '.') && len(rest) > 1 && (isDigit(rest[1]) || rest[1] == '.')):
		l.advance(1)
		for l.off < len(l.src) {
			d := l.src[l.off]
			if isDigit(d) || d == '.' || d == 'x' || d == 'X' || (d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F') || d == 'p' || d == 'P' {
				l.advance(1)
				continue
			}
			if (d == '+' || d == '-') && strings.ContainsAny(l.src[l.off-1:l.off], "eEpP") {
				l.advance(1)
				continue
			}
			break
		}
		return token{kind: tNumber, text: l.src[start:l.off], pos: p, off: start}, nil
	case c == '"':
		l.advance(1)
		for l.off < len(l.src) && l.src[l.off] != '"' {
			if l.src[l.off] == '\\' {
				l.advance(1)
			}
			if l.off < len(l.src) && l.src[l.off] == '\n' {
				return token{}, &Error{Pos: p, Msg: "unterminated string"}
			}
			l.advance(1)
		}
		if l.off >= len(l.src) {
			return token{}, &Error{Pos: p, Msg: "unterminated string"}
		}
		l.advance(1)
		return token{kind: tString, text: l.src[start:l.off], pos: p, off: start}, nil
	case strings.ContainsRune("{}()[],=:;*?", rune(c)):
		l.advance(1)
		return token{kind: tPunct, text: string(c), pos: p, off: start}, nil
	}
	return token{}, &Error{Pos: p, Msg: fmt.Sprintf("unexpected character %q", c)}
}

// rawValue scans an attribute value verbatim: up to the next ',' , newline
// or unbalanced closing bracket at nesting depth zero, keeping strings and
// bracketed groups whole. Values such as `{1,0}`, `f32[2]{0}`,
// `b01f_01io->b01f` or `{op_name="a, b"}` come back as written.
func (l *lexer) rawValue() (string, Pos, error) {
	// The value may start on the next line (XLA wraps long instructions).
	for l.off < len(l.src) && strings.IndexByte(" \t\r\n", l.src[l.off]) >= 0 {
		l.advance(1)
	}
	p := l.pos()
	start := l.off
	var stack []byte
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch c {
		case '"':
			l.advance(1)
			for l.off < len(l.src) && l.src[l.off] != '"' {
				if l.src[l.off] == '\\' {
					l.advance(1)
				}
				l.advance(1)
			}
			if l.off >= len(l.src) {
				return "", p, &Error{Pos: p, Msg: "unterminated string in attribute value"}
			}
			l.advance(1)
			continue
		case '{', '(', '[':
			stack = append(stack, c)
		case '}', ')', ']':
			if len(stack) == 0 {
				return strings.TrimSpace(l.src[start:l.off]), p, nil
			}
			open := stack[len(stack)-1]
			if (open == '{' && c != '}') || (open == '(' && c != ')') || (open == '[' && c != ']') {
				return "", p, &Error{Pos: l.pos(), Msg: fmt.Sprintf("mismatched %q in attribute value", c)}
			}
			stack = stack[:len(stack)-1]
		case ',', '\n':
			if len(stack) == 0 {
				return strings.TrimSpace(l.src[start:l.off]), p, nil
			}
		}
		l.advance(1)
	}
	if len(stack) != 0 {
		return "", p, &Error{Pos: p, Msg: "unbalanced brackets in attribute value"}
	}
	return strings.TrimSpace(l.src[start:l.off]), p, nil
}
