package stablehlo

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// Resources. MLIR may print a large constant as dense_resource<key> and
// its bytes in a section after the module (exporters of PyTorch models
// write their weights so):
//
//	{-#
//	  dialect_resources: {
//	    builtin: {
//	      key: "0x04000000<the elements' bytes, hex>"
//	    }
//	  }
//	#-}
//
// A builtin blob's first 4 bytes are its alignment (a little-endian
// u32), the rest the elements as dense<"0x..."> holds them. Other
// dialects' resources and external_resources are skipped.

// resourceSection reads a {-# ... #-} section into m.Resources.
func (p *parser) resourceSection(m *Module) error {
	s := p.s
	if err := s.expect("{-#"); err != nil {
		return err
	}
	for {
		s.skip()
		if s.accept("#-}") {
			return nil
		}
		section, err := p.openBlock("a resource section (dialect_resources:) or #-}")
		if err != nil {
			return err
		}
		if section != "dialect_resources" {
			if _, err := s.balanced('{', '}'); err != nil {
				return err
			}
		} else if err := p.dialectResources(m); err != nil {
			return err
		}
		s.accept(",")
	}
}

// dialectResources reads dialect: { key: "0x...", ... }, ... } after
// the section's opening brace.
func (p *parser) dialectResources(m *Module) error {
	s := p.s
	for {
		if s.accept("}") {
			return nil
		}
		dialect, err := p.openBlock("a dialect's resources")
		if err != nil {
			return err
		}
		if dialect != "builtin" {
			if _, err := s.balanced('{', '}'); err != nil {
				return err
			}
			s.accept(",")
			continue
		}
		for !s.accept("}") {
			pos := s.here()
			key, err := p.resourceKey()
			if err != nil {
				return err
			}
			if err := s.expect(":"); err != nil {
				return err
			}
			blob, err := s.str()
			if err != nil {
				return err
			}
			data, err := resourceBlob(blob)
			if err != nil {
				return s.errorAt(pos, "resource %s: %v", key, err)
			}
			if m.Resources == nil {
				m.Resources = map[string][]byte{}
			}
			m.Resources[key] = data
			s.accept(",")
		}
		s.accept(",")
	}
}

// openBlock reads `name: {` and returns the name; what names what was
// expected there.
func (p *parser) openBlock(what string) (string, error) {
	s := p.s
	name := s.ident()
	if name == "" {
		return "", s.errorf("expected %s, found %s", what, s.describe())
	}
	if err := s.expect(":"); err != nil {
		return "", err
	}
	return name, s.expect("{")
}

// resourceKey reads a resource's key: a string, or the characters up to
// the colon that follows it.
func (p *parser) resourceKey() (string, error) {
	s := p.s
	s.skip()
	if s.peek() == '"' {
		return s.str()
	}
	start := s.pos
	for !s.eof() && s.src[s.pos] != ':' && s.src[s.pos] > ' ' {
		s.advance(1)
	}
	if s.pos == start {
		return "", s.errorf("expected a resource key, found %s", s.describe())
	}
	return s.src[start:s.pos], nil
}

// resourceBlob decodes a builtin blob, "0x" and hex digits, and takes
// off its alignment word.
func resourceBlob(text string) ([]byte, error) {
	h, ok := strings.CutPrefix(text, "0x")
	if !ok {
		return nil, fmt.Errorf("a blob is \"0x\" and hex digits")
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, err
	}
	if len(raw) < 4 {
		return nil, fmt.Errorf("a blob of %d bytes has no alignment word", len(raw))
	}
	if a := binary.LittleEndian.Uint32(raw); a == 0 || a&(a-1) != 0 {
		return nil, fmt.Errorf("alignment %d is not a power of two", a)
	}
	return raw[4:], nil
}

// resourceLiteral is the constant of type t whose bytes resource key of
// the module holds.
func (t *translator) resourceLiteral(key string, ty Type) (*hlo.Literal, error) {
	if key == "__elided__" {
		return nil, fmt.Errorf("dense_resource<__elided__>: the constant's bytes were left out when the text was printed (print it without eliding large constants)")
	}
	raw, ok := t.m.Resources[key]
	if !ok {
		return nil, fmt.Errorf("dense_resource<%s>: the text has no resource %s (its {-# dialect_resources #-} section)", key, key)
	}
	if ty.Kind != TensorType || ty.Dynamic || ty.Elem == hlo.Invalid {
		return nil, fmt.Errorf("dense_resource<%s> of type %s", key, ty.Text)
	}
	shape := ty.Shape()
	if want := shape.NumElements() * int64(ty.Elem.Bytes()); int64(len(raw)) != want {
		return nil, fmt.Errorf("dense_resource<%s> holds %d bytes, %s %d", key, len(raw), ty.Text, want)
	}
	return &hlo.Literal{Shape: shape, Data: raw}, nil
}
