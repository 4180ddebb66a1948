package vkjit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// TestBitcastWidths bitcasts between element types of different widths,
// complex ones included, by bitcast-convert and by bitcast, on random bytes (NaN payloads among them): a
// bitcast-convert changes no byte, so each result's bytes must be its
// argument's, in XLA's little-endian order. Alone, and fused between two
// copies (not for f16 and bf16, which kernels carry as f32: a copy
// quiets a signaling NaN of theirs).
func TestBitcastWidths(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ from, to string }{
		{"f64[5]", "u16[5,4]"}, {"s32[5,2]", "f64[5]"}, {"f64[5]", "c64[5]"}, {"c128[5,2]", "f32[5,2,4]"},
		{"c128[5,2]", "c64[5,2,2]"}, {"c64[5,2]", "c128[5]"}, {"u8[5,8]", "s64[5]"}, {"f16[5,2]", "f32[5]"},
		{"f32[5]", "bf16[5,2]"}, {"c64[3]", "s64[3]"}, {"c128[]", "c64[2]"}, {"u32[2,3]", "u8[2,3,4]"},
		// XLA's bitcast, the operand's bytes read as any shape of their
		// size, the element type changed or not (a FuzzMutants mutant,
		// f32[] to s32[], stored a float into an int array: invalid
		// SPIR-V that lavapipe refused, VkResult -13).
		{"f32[]", "bitcast s32[]"}, {"f32[2,3]", "bitcast u16[4,3]"}, {"u8[4,4]", "bitcast f32[2,2]"},
		{"f64[3]", "bitcast s32[6]"}, {"c64[2]", "bitcast f64[2]"}, {"s16[8]", "bitcast s16[2,4]"},
	} {
		for _, fused := range []bool{false, true} {
			if fused && (strings.Contains(c.from+c.to, "f16") || strings.Contains(c.from+c.to, "bf16")) {
				continue
			}
			name := fmt.Sprintf("%s to %s fused %v", c.from, c.to, fused)
			op, to := "bitcast-convert", c.to
			if s, ok := strings.CutPrefix(c.to, "bitcast "); ok {
				op, to = "bitcast", s
			}
			body := fmt.Sprintf("  ROOT r = %s %s(x)", to, op)
			if fused { // a copy on each side lands the bitcast inside one kernel
				body = fmt.Sprintf("  y = %s copy(x)\n  b = %s %s(y)\n  ROOT r = %s copy(b)", c.from, to, op, to)
			}
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s parameter(0)\n%s\n}", c.from, body)
			exe, err := rt.CompileText(name, src, vkjit.CompileOptions{})
			require.NoError(t, err, name)
			p := exe.Params()[0]
			data := make([]byte, int64(p.Type.Bytes())*(&vkjit.Tensor{Type: p.Type, Dims: p.Dims}).NumElements())
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			x := must(vkjit.NewTensor(p.Type, p.Dims, data))
			res, _, err := exe.Run(context.Background(), x)
			require.NoError(t, err, name)
			exe.Close()
			require.Equal(t, data, res[0].Data, name)
		}
	}
}

// TestBitcastSmallTypes bitcasts from and to the types narrower than a
// byte and the f8 types, whose values the device holds in other types
// (s8 and f32): every code of each 8-bit type (NaNs of every payload and
// sign among them), random ones of the narrower types, compared byte for
// byte with the evaluator, alone and fused between two copies.
func TestBitcastSmallTypes(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ from, to string }{
		{"f8e4m3fn[256]", "s8[256]"}, {"s8[256]", "f8e4m3fn[256]"}, {"u8[256]", "f8e5m2[256]"}, {"f8e5m2[256]", "u8[256]"},
		{"f8e4m3fnuz[256]", "f8e5m2fnuz[256]"}, {"f8e4m3b11fnuz[256]", "u8[256]"}, {"f8e4m3[256]", "f8e3m4[256]"},
		{"f8e8m0fnu[256]", "u8[256]"}, {"u8[256]", "f8e8m0fnu[256]"}, {"f8e5m2[128,2]", "f16[128]"}, {"bf16[64]", "f8e4m3fn[64,2]"},
		{"f8e4m3fn[64,4]", "s32[64]"}, {"f8e5m2[32,8]", "f64[32]"},
		{"s4[16]", "u4[16]"}, {"u4[16]", "s4[16]"}, {"s2[16]", "u2[16]"}, {"s4[16,2]", "s8[16]"}, {"u8[16]", "s4[16,2]"},
		{"u2[16,4]", "u8[16]"}, {"u16[8]", "u4[8,4]"}, {"s4[8,8]", "f32[8]"}, {"f32[8]", "s4[8,8]"}, {"s4[4,16]", "s64[4]"},
		{"u4[16,2]", "f8e4m3fn[16]"}, {"f8e5m2[16]", "s4[16,2]"}, {"u2[8,4]", "f8e5m2[8]"},
		{"f4e2m1fn[16]", "s4[16]"}, {"u4[16]", "f4e2m1fn[16]"}, {"f4e2m1fn[16,2]", "u8[16]"}, {"u8[16]", "f4e2m1fn[16,2]"},
		{"f6e2m3fn[64]", "f6e3m2fn[64]"}, {"f6e3m2fn[64]", "f6e2m3fn[64]"},
	} {
		for _, fused := range []bool{false, true} {
			if fused && (strings.Contains(c.from+c.to, "f16") || strings.Contains(c.from+c.to, "bf16")) {
				continue // kernels carry f16 and bf16 as f32: a copy quiets a signaling NaN
			}
			name := fmt.Sprintf("%s to %s fused %v", c.from, c.to, fused)
			body := fmt.Sprintf("  ROOT r = %s bitcast-convert(x)", c.to)
			if fused {
				body = fmt.Sprintf("  y = %s copy(x)\n  b = %s bitcast-convert(y)\n  ROOT r = %s copy(b)", c.from, c.to, c.to)
			}
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s parameter(0)\n%s\n}", c.from, body)
			m, err := hlo.Parse(name, src)
			require.NoError(t, err, name)
			p := m.Entry.Params[0].Shape
			w := p.Elem.Bits()
			data := make([]byte, 0, p.ByteSize())
			for i := range p.NumElements() {
				switch {
				case w == 8: // every code
					data = append(data, byte(i))
				case w < 8:
					v := rng.Uint32() & (1<<w - 1)
					if p.Elem.Kind() == hlo.KindSigned && v>>(w-1) != 0 {
						v |= ^uint32(0) << w // sign-extended in its byte
					}
					data = append(data, byte(v))
				default:
					for range w / 8 {
						data = append(data, byte(rng.Uint32()))
					}
				}
			}
			lit, err := hlo.NewLiteral(p, data)
			require.NoError(t, err, name)
			want, err := eval.Run(m, lit)
			require.NoError(t, err, name)
			exe, err := rt.Compile(m, vkjit.CompileOptions{})
			require.NoError(t, err, name)
			res, _, err := exe.Run(context.Background(), must(vkjit.NewTensor(vkjit.DType(p.Elem), p.Dims, data)))
			require.NoError(t, err, name)
			exe.Close()
			require.Equal(t, want.Lit.Data, res[0].Data, name)
		}
	}
}
