package hlo

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// The printer writes the current XLA style: no % sigils, untyped
// operands, no computation signatures. Attribute values are written as
// they were read; constants are written in one canonical form. Parsing
// the output gives the same module, and printing that gives the same
// bytes.
//
//	module      = "HloModule" name {", " attr} "\n" {stackTable} {computation}
//	computation = ["ENTRY "] name " {\n" {instruction "\n"} "}" {", " attr} "\n"
//	instruction = "  " ["ROOT "] name " = " shape " " opcode "(" operands ")" {", " attr}

// String prints the module.
func (m *Module) String() string {
	var b strings.Builder
	b.WriteString("HloModule ")
	b.WriteString(m.Name)
	writeAttrs(&b, m.Attrs)
	b.WriteString("\n")
	for _, t := range m.StackTables {
		b.WriteString("\n" + t.Name + "\n")
		for _, e := range t.Entries {
			b.WriteString(e + "\n")
		}
	}
	for _, c := range m.Computations {
		b.WriteString("\n")
		if c == m.Entry {
			b.WriteString("ENTRY ")
		}
		b.WriteString(c.Name)
		b.WriteString(" {\n")
		for _, in := range c.Instructions {
			b.WriteString("  ")
			if in == c.Root {
				b.WriteString("ROOT ")
			}
			b.WriteString(in.String())
			b.WriteString("\n")
		}
		b.WriteString("}")
		writeAttrs(&b, c.Attrs)
		b.WriteString("\n")
	}
	return b.String()
}

func writeAttrs(b *strings.Builder, attrs []Attr) {
	for _, a := range attrs {
		b.WriteString(", ")
		b.WriteString(a.Name)
		b.WriteString("=")
		b.WriteString(a.Value)
	}
}

// String prints the instruction as one line of HLO text.
func (in *Instruction) String() string {
	var b strings.Builder
	b.WriteString(in.Name)
	b.WriteString(" = ")
	if !(in.ShapeInferred && in.Shape.Elem == Invalid) { // not inferred yet: leave it out, as written
		b.WriteString(in.Shape.String())
		b.WriteString(" ")
	}
	b.WriteString(in.Op.String())
	b.WriteString("(")
	switch in.Op {
	case OpParameter:
		b.WriteString(strconv.Itoa(in.ParamNum))
	case OpConstant:
		b.WriteString(in.Literal.String())
	default:
		for i, o := range in.Operands {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.Name)
		}
	}
	b.WriteString(")")
	writeAttrs(&b, in.Attrs)
	return b.String()
}

// String prints the literal's values: a scalar, or nested braces.
func (l *Literal) String() string {
	if l.Elided {
		return "{...}"
	}
	var b strings.Builder
	s := l.Shape
	if s.Rank() == 0 {
		b.WriteString(l.elementString(0))
		return b.String()
	}
	var idx int64
	var rec func(d int)
	rec = func(d int) {
		b.WriteString("{")
		for i := int64(0); i < s.Dims[d]; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if d == s.Rank()-1 {
				b.WriteString(l.elementString(idx))
				idx++
			} else {
				rec(d + 1)
			}
		}
		b.WriteString("}")
	}
	rec(0)
	return b.String()
}

func (l *Literal) elementString(i int64) string {
	t := l.Shape.Elem
	n := int64(t.Bytes())
	raw := l.Data[i*n : (i+1)*n]
	var bits uint64
	for j := len(raw) - 1; j >= 0; j-- {
		bits = bits<<8 | uint64(raw[j])
	}
	switch t.Kind() {
	case KindBool:
		return strconv.FormatBool(bits != 0)
	case KindSigned:
		shift := 64 - uint(8*n)
		return strconv.FormatInt(int64(bits<<shift)>>shift, 10)
	case KindUnsigned:
		return strconv.FormatUint(bits, 10)
	case KindComplex:
		half := n / 2
		et := F32
		if t == C128 {
			et = F64
		}
		re := &Literal{Shape: ArrayShape(et), Data: raw[:half]}
		im := &Literal{Shape: ArrayShape(et), Data: raw[half:]}
		return "(" + re.elementString(0) + ", " + im.elementString(0) + ")"
	}
	var v float64
	switch t {
	case F32:
		return formatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(raw))), 32)
	case F64:
		return formatFloat(math.Float64frombits(bits), 64)
	case F16:
		v = F16ToFloat64(uint16(bits))
	case BF16:
		v = float64(math.Float32frombits(uint32(bits) << 16))
	default:
		v = MiniFloatToFloat64(t, uint32(bits))
	}
	return formatFloat(v, 32) // every narrow value is exact in float32
}

func formatFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

// Format prints modules as a file: modules separated by "// -----" lines.
func Format(mods []*Module) string {
	parts := make([]string, len(mods))
	for i, m := range mods {
		parts[i] = m.String()
	}
	return strings.Join(parts, "\n"+ModuleSeparator+"\n\n")
}
