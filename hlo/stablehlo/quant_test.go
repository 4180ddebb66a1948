package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

func TestParseQuant(t *testing.T) {
	q, err := parseQuant("i8:f32, 0.1:-30")
	require.NoError(t, err)
	require.Equal(t, &QuantType{Storage: hlo.S8, Min: -128, Max: 127, Expressed: hlo.F32, Axis: -1, Scales: []string{"0.1"}, ZeroPoints: []int64{-30}}, q)
	q, err = parseQuant("i8<-127:127>:f32:0, {0.1:-30,0.5:-20}")
	require.NoError(t, err)
	require.Equal(t, &QuantType{Storage: hlo.S8, Min: -127, Max: 127, Expressed: hlo.F32, Axis: 0, Scales: []string{"0.1", "0.5"}, ZeroPoints: []int64{-30, -20}}, q)
	q, err = parseQuant("u8:bf16, 2.0")
	require.NoError(t, err)
	require.Equal(t, &QuantType{Storage: hlo.U8, Min: 0, Max: 255, Expressed: hlo.BF16, Axis: -1, Scales: []string{"2.0"}, ZeroPoints: []int64{0}}, q)
	for _, bad := range []string{"i8:f32", "f32:i8, 0.1", "i8:f32, x:1", "i8:f32, {0.1:1, 0.2:2}"} {
		_, err := parseQuant(bad)
		require.Error(t, err, bad)
	}
}

// TestQuantizedOps: quantize rounds x / scale + zero point to nearest
// even and clamps it to the storage range, per axis; an op on quantized
// values computes on their dequantized values and quantizes its result;
// a parameter of a quantized type is its storage integers.
func TestQuantizedOps(t *testing.T) {
	src := `func.func @main(%p: tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> (tensor<4xi8>, tensor<2xi8>, tensor<2xf32>) {
  %x = stablehlo.constant dense<[4.0, 15.0, 1000.0, 0.25]> : tensor<4xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.1:-30>>
  %b = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<i8:f32, 0.1:-30>>) -> tensor<4xi8>
  %s = stablehlo.add %p, %p : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %sb = stablehlo.bitcast_convert %s : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xi8>
  %d = stablehlo.uniform_dequantize %p : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xf32>
  return %b, %sb, %d : tensor<4xi8>, tensor<2xi8>, tensor<2xf32>
}
`
	m, err := ParseModule("q.mlir", src)
	require.NoError(t, err)
	require.Equal(t, hlo.S8, m.Entry.Params[0].Shape.Elem)
	arg, err := hlo.NewLiteral(m.Entry.Params[0].Shape, []byte{0xEC, 0}) // -20 and 0: 0.0 and 10.0
	require.NoError(t, err)
	out, err := eval.Run(m, arg)
	require.NoError(t, err)
	l := out.Leaves()
	// 4/0.1 - 30 = 10; 15/0.1 - 30 = 120; 1000 clamps to 127; 0.25/0.1
	// = 2.5 (in f32 a little less: 2.4999998), - 30 = -27.5 -> -28.
	require.Equal(t, []byte{10, 120, 127, byte(0x100 - 28)}, l[0].Data)
	// (0 + 0, 10 + 10) -> 0/0.5 - 20 = -20, 20/0.5 - 20 = 20.
	require.Equal(t, []byte{byte(0x100 - 20), 20}, l[1].Data)
	require.Equal(t, "{0, 10}", l[2].String())
}

// TestQuantizedCall: a function of quantized values takes and returns
// their storage integers.
func TestQuantizedCall(t *testing.T) {
	src := `func.func @main() -> tensor<2xi8> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %r = func.call @twice(%q) : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %b = stablehlo.bitcast_convert %r : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xi8>
  return %b : tensor<2xi8>
}
func.func private @twice(%a: tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>> {
  %s = stablehlo.add %a, %a : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  return %s : tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
}
`
	m, err := ParseModule("call.mlir", src)
	require.NoError(t, err)
	out, err := eval.Run(m)
	require.NoError(t, err)
	// 1 and 2 quantize to -18 and -16; twice: 2 and 4 -> -16 and -12.
	require.Equal(t, []byte{byte(0x100 - 16), byte(0x100 - 12)}, out.Leaves()[0].Data)
}
