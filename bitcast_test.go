package vkjit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// TestBitcastWidths bitcasts between element types of different widths,
// complex ones included, on random bytes (NaN payloads among them): a
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
	} {
		for _, fused := range []bool{false, true} {
			if fused && (strings.Contains(c.from+c.to, "f16") || strings.Contains(c.from+c.to, "bf16")) {
				continue
			}
			name := fmt.Sprintf("%s to %s fused %v", c.from, c.to, fused)
			body := fmt.Sprintf("  ROOT r = %s bitcast-convert(x)", c.to)
			if fused { // a copy on each side lands the bitcast inside one kernel
				body = fmt.Sprintf("  y = %s copy(x)\n  b = %s bitcast-convert(y)\n  ROOT r = %s copy(b)", c.from, c.to, c.to)
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
