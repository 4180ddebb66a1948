package hlotest

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// HideNaNSigns returns a copy of m in which every float operand of a
// total-order comparison is first made a positive NaN where it is a NaN:
// select(x != x, +NaN, x). IEEE 754 leaves a computed NaN's sign open,
// and which of two NaNs a sum propagates depends on its order (a fused
// convolution's inf - inf came out -NaN on the device and +NaN in the
// evaluator), yet a total order sees the sign: a sort's payload then
// differs between two correct implementations. With the signs hidden
// the comparison still orders NaNs above every number, and -0 below +0.
func HideNaNSigns(m *hlo.Module) (*hlo.Module, error) {
	if !hasFloatTotalOrder(m) {
		return m, nil
	}
	c, err := hlo.Parse(m.Name, m.String())
	if err != nil {
		return nil, err
	}
	for _, comp := range c.Computations {
		var out []*hlo.Instruction
		for _, in := range comp.Instructions {
			if floatTotalOrder(in) {
				for i, x := range in.Operands {
					var made []*hlo.Instruction
					in.Operands[i], made = positiveNaNs(x, in.Name, i)
					out = append(out, made...)
				}
			}
			out = append(out, in)
		}
		comp.Instructions = out
	}
	again, err := hlo.Parse(c.Name, c.String())
	if err != nil {
		return nil, err
	}
	return again, hlo.Verify(again)
}

// floatTotalOrder: a total-order compare of floats, or a topk of floats
// (which orders them so).
func floatTotalOrder(in *hlo.Instruction) bool {
	return (in.Op == hlo.OpCompare && in.A.CompareType == "TOTALORDER" || in.Op == hlo.OpTopK) && in.Operands[0].Shape.Elem.IsFloat()
}

func hasFloatTotalOrder(m *hlo.Module) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if floatTotalOrder(in) {
				return true
			}
		}
	}
	return false
}

// positiveNaNs is select(x != x, +NaN, x), named after the comparison
// it feeds, and the instructions it takes.
func positiveNaNs(x *hlo.Instruction, user string, i int) (*hlo.Instruction, []*hlo.Instruction) {
	t := x.Shape.Elem
	name := func(s string) string { return user + "." + s + string(rune('0'+i)) }
	nan := &hlo.Instruction{Name: name("nan"), Op: hlo.OpConstant, Shape: hlo.ArrayShape(t), Literal: hlo.ScalarLiteral(t, math.NaN())}
	made := []*hlo.Instruction{nan}
	fill := nan
	if x.Shape.Rank() > 0 {
		fill = &hlo.Instruction{Name: name("nans"), Op: hlo.OpBroadcast, Shape: x.Shape, Operands: []*hlo.Instruction{nan},
			Attrs: []hlo.Attr{{Name: "dimensions", Value: "{}"}}}
		made = append(made, fill)
	}
	isNaN := &hlo.Instruction{Name: name("isnan"), Op: hlo.OpCompare, Shape: hlo.ArrayShape(hlo.PRED, x.Shape.Dims...),
		Operands: []*hlo.Instruction{x, x}, Attrs: []hlo.Attr{{Name: "direction", Value: "NE"}}}
	sel := &hlo.Instruction{Name: name("unsigned"), Op: hlo.OpSelect, Shape: x.Shape, Operands: []*hlo.Instruction{isNaN, fill, x}}
	return sel, append(made, isNaN, sel)
}

// CanonicalNaNs returns data, elements of type t, with every NaN made
// the one quiet NaN of its type (a complex number's parts each): for
// comparing results bit for bit where IEEE 754 and XLA leave a computed
// NaN's sign and payload open. x86 makes 0/0 the negative 0xffc00000,
// NVIDIA's GPUs 0x7fffffff; a test that asked for either bit pattern
// held every device to one vendor's choice.
func CanonicalNaNs(t hlo.ElementType, data []byte) []byte {
	if part, ok := t.ComplexPart(); ok {
		t = part
	}
	if !t.IsFloat() || t.Bits()%8 != 0 {
		return data
	}
	n := t.Bytes()
	canon := hlo.EncodeFloat(t, math.NaN())
	out := append([]byte(nil), data...)
	for i := 0; i+n <= len(out); i += n {
		var bits uint64
		for j := n - 1; j >= 0; j-- {
			bits = bits<<8 | uint64(out[i+j])
		}
		if !math.IsNaN(hlo.DecodeFloat(t, bits)) {
			continue
		}
		for j := 0; j < n; j++ {
			out[i+j] = byte(canon >> (8 * j))
		}
	}
	return out
}
