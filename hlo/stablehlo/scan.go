package stablehlo

import (
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// scanner walks MLIR text by bytes, with the line and column of each
// position for errors. MLIR's grammar is context-sensitive in places (a
// shape's `2x3xf32`, an op's custom assembly), so the parser asks for
// what it expects next rather than reading a token stream.
type scanner struct {
	file string
	src  string
	pos  int
	line int // of pos, 1-based
	col  int // of pos, 1-based
}

func newScanner(file, src string, line int) *scanner {
	return &scanner{file: file, src: src, line: line, col: 1}
}

// Error is a parse or translation error at a position of the input.
type Error = hlo.Error

func (s *scanner) here() hlo.Pos { return hlo.Pos{File: s.file, Line: s.line, Col: s.col} }

func (s *scanner) errorf(format string, args ...any) error {
	return &Error{Pos: s.here(), Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) errorAt(p hlo.Pos, format string, args ...any) error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

func (s *scanner) advance(n int) {
	for i := 0; i < n && s.pos < len(s.src); i++ {
		if s.src[s.pos] == '\n' {
			s.line++
			s.col = 1
		} else {
			s.col++
		}
		s.pos++
	}
}

// skip passes over white space and // comments.
func (s *scanner) skip() {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.advance(1)
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '/':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.advance(1)
			}
		default:
			return
		}
	}
}

// peek is the next byte after space, or 0 at the end.
func (s *scanner) peek() byte {
	s.skip()
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

// lookingAt reports whether the input continues with lit (after space).
func (s *scanner) lookingAt(lit string) bool {
	s.skip()
	return strings.HasPrefix(s.src[s.pos:], lit)
}

// lookingAtWord is lookingAt for a keyword: lit not followed by an
// identifier character.
func (s *scanner) lookingAtWord(lit string) bool {
	if !s.lookingAt(lit) {
		return false
	}
	end := s.pos + len(lit)
	return end >= len(s.src) || !isIdentChar(s.src[end])
}

// accept consumes lit if it comes next.
func (s *scanner) accept(lit string) bool {
	if s.lookingAt(lit) {
		s.advance(len(lit))
		return true
	}
	return false
}

// acceptWord consumes the keyword lit if it comes next.
func (s *scanner) acceptWord(lit string) bool {
	if s.lookingAtWord(lit) {
		s.advance(len(lit))
		return true
	}
	return false
}

func (s *scanner) expect(lit string) error {
	if !s.accept(lit) {
		return s.errorf("expected %q, found %s", lit, s.describe())
	}
	return nil
}

func (s *scanner) expectWord(lit string) error {
	if !s.acceptWord(lit) {
		return s.errorf("expected %q, found %s", lit, s.describe())
	}
	return nil
}

// describe names what comes next, for errors.
func (s *scanner) describe() string {
	s.skip()
	if s.eof() {
		return "the end of the input"
	}
	end := s.pos + 1
	for end < len(s.src) && end-s.pos < 24 && s.src[end] != '\n' && (isIdentChar(s.src[end]) || isIdentChar(s.src[s.pos])) {
		end++
	}
	return fmt.Sprintf("%q", s.src[s.pos:end])
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' || c == '.' || c == '-'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ident reads a bare identifier (letters, digits, _ $ . -), or "".
func (s *scanner) ident() string {
	s.skip()
	if s.eof() || !isIdentStart(s.src[s.pos]) {
		return ""
	}
	start := s.pos
	end := start
	for end < len(s.src) && isIdentChar(s.src[end]) {
		end++
	}
	s.advance(end - start)
	return s.src[start:end]
}

// suffixID reads the rest of a value, block or symbol name after its
// sigil: an identifier or a number.
func (s *scanner) suffixID() string {
	start := s.pos
	end := start
	for end < len(s.src) && (isIdentChar(s.src[end])) {
		end++
	}
	s.advance(end - start)
	return s.src[start:end]
}

// valueName reads %name (without the %), or "" if none comes next.
func (s *scanner) valueName() string {
	if s.peek() != '%' {
		return ""
	}
	s.advance(1)
	return s.suffixID()
}

// symbol reads @name (or @"quoted"), or "".
func (s *scanner) symbol() (string, error) {
	if s.peek() != '@' {
		return "", nil
	}
	s.advance(1)
	if s.peek() == '"' {
		return s.str()
	}
	return s.suffixID(), nil
}

// str reads a double-quoted string, with MLIR's escapes.
func (s *scanner) str() (string, error) {
	if s.peek() != '"' {
		return "", s.errorf("expected a string, found %s", s.describe())
	}
	s.advance(1)
	var b strings.Builder
	for {
		if s.eof() {
			return "", s.errorf("unterminated string")
		}
		c := s.src[s.pos]
		switch {
		case c == '"':
			s.advance(1)
			return b.String(), nil
		case c == '\\' && s.pos+1 < len(s.src):
			n := s.src[s.pos+1]
			switch n {
			case 'n':
				b.WriteByte('\n')
				s.advance(2)
			case 't':
				b.WriteByte('\t')
				s.advance(2)
			case '"', '\\':
				b.WriteByte(n)
				s.advance(2)
			default:
				if s.pos+2 < len(s.src) && isHex(n) && isHex(s.src[s.pos+2]) {
					b.WriteByte(hexVal(n)<<4 | hexVal(s.src[s.pos+2]))
					s.advance(3)
				} else {
					b.WriteByte(c)
					s.advance(1)
				}
			}
		default:
			b.WriteByte(c)
			s.advance(1)
		}
	}
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// number reads an integer or float literal's text (sign, digits, a
// fraction, an exponent, or 0x hex digits), or "".
func (s *scanner) number() string {
	s.skip()
	start := s.pos
	end := start
	if end < len(s.src) && (s.src[end] == '-' || s.src[end] == '+') {
		end++
	}
	if end+1 < len(s.src) && s.src[end] == '0' && (s.src[end+1] == 'x' || s.src[end+1] == 'X') {
		end += 2
		for end < len(s.src) && isHex(s.src[end]) {
			end++
		}
	} else {
		digits := end
		for end < len(s.src) && isDigit(s.src[end]) {
			end++
		}
		if end == digits {
			// inf and nan spelled out (MLIR prints 0x7F800000 instead,
			// but hand-written tests use words too).
			for _, w := range []string{"inf", "nan"} {
				if strings.HasPrefix(s.src[end:], w) {
					s.advance(end + len(w) - start)
					return s.src[start : end+len(w)]
				}
			}
			return ""
		}
		if end < len(s.src) && s.src[end] == '.' {
			end++
			for end < len(s.src) && isDigit(s.src[end]) {
				end++
			}
		}
		if end < len(s.src) && (s.src[end] == 'e' || s.src[end] == 'E') {
			e := end + 1
			if e < len(s.src) && (s.src[e] == '-' || s.src[e] == '+') {
				e++
			}
			if e < len(s.src) && isDigit(s.src[e]) {
				end = e
				for end < len(s.src) && isDigit(s.src[end]) {
					end++
				}
			}
		}
	}
	s.advance(end - start)
	return s.src[start:end]
}

// balanced returns the text up to the bracket that closes the one just
// consumed (open), without it, and consumes that too: for attributes
// kept as text (locations, unknown dialect attributes).
func (s *scanner) balanced(open, close byte) (string, error) {
	start := s.pos
	depth := 1
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '"':
			if _, err := s.str(); err != nil {
				return "", err
			}
			continue
		case c == open:
			depth++
		case c == close && !(close == '>' && s.pos > start && s.src[s.pos-1] == '-'): // not the arrow of ->
			depth--
			if depth == 0 {
				text := s.src[start:s.pos]
				s.advance(1)
				return text, nil
			}
		}
		s.advance(1)
	}
	return "", s.errorf("unbalanced %q", string(open))
}
