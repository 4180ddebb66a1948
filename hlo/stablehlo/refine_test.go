package stablehlo

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestRefineShapes: a module of dynamic shapes in jax.export's form
// (testdata/dynamic_softmax.mlir: get_dimension_size, a shape_assertion,
// the wrapped function called with the dimension variable and inlined,
// dynamic_broadcast_in_dim and dynamic_iota of a shape computed from it,
// reductions, a while loop carrying the batch) translates for each batch
// size to a static module of that size, which the verifier accepts;
// without shapes it is refused as a dynamic shape, and a failed
// assertion, an argument that does not fit and a wrong number of them
// are errors that say so.
func TestRefineShapes(t *testing.T) {
	src, err := os.ReadFile("../../testdata/dynamic_softmax.mlir")
	require.NoError(t, err)
	for _, b := range []int64{1, 3, 100} {
		tr, err := ParseOneWith("softmax.mlir", string(src), Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, b, 8)}})
		require.NoError(t, err, "b=%d", b)
		m, err := tr.WithoutChecks()
		require.NoError(t, err)
		require.NoError(t, hlo.Verify(m))
		require.Equal(t, hlo.TupleShape(hlo.ArrayShape(hlo.F32, b, 8), hlo.ArrayShape(hlo.F32, b)).String(), m.Entry.Root.Shape.String())
		for _, in := range m.Entry.Instructions { // the wrapped function inlined, the assertion gone
			require.NotEqual(t, hlo.OpCall, in.Op, "b=%d: %s", b, in.Name)
			require.NotEqual(t, hlo.OpCustomCall, in.Op, "b=%d: %s", b, in.Name)
		}
	}

	_, err = ParseModule("softmax.mlir", string(src))
	var u *Unsupported
	require.ErrorAs(t, err, &u)
	require.Equal(t, dynamicCategory, u.Category)
	require.ErrorContains(t, err, "without the arguments' shapes to refine it from")

	for _, c := range []struct {
		args []hlo.Shape
		want string
	}{
		{[]hlo.Shape{hlo.ArrayShape(hlo.F32, 0, 8)}, "softmax.mlir:10:5: stablehlo.custom_call: Expected value >= 1 for dimension variable 'b', got 0"},
		{[]hlo.Shape{hlo.ArrayShape(hlo.F32, 3, 7)}, "argument 0 is tensor<3x7xf32>, which does not fit %arg0: tensor<?x8xf32>"},
		{[]hlo.Shape{hlo.ArrayShape(hlo.F64, 3, 8)}, "argument 0 is tensor<3x8xf64>"},
		{[]hlo.Shape{hlo.ArrayShape(hlo.F32, 3, 8), hlo.ArrayShape(hlo.F32, 3, 8)}, "@main takes 1 arguments, 2 shapes given"},
	} {
		_, err := ParseOneWith("softmax.mlir", string(src), Options{Args: c.args})
		require.ErrorContains(t, err, c.want)
	}
}

// TestRefineRefusals: what refinement cannot determine is refused by
// name: a static op whose result type is dynamic and which its operands
// do not determine (broadcast_in_dim), and a shape operand computed
// from the data rather than from shapes; and what it takes: u16 for
// bf16 (NumPy's stand-in), static modules as they are.
func TestRefineRefusals(t *testing.T) {
	x := []hlo.Shape{hlo.ArrayShape(hlo.F32, 3)}
	for _, c := range []struct{ body, want string }{
		{"  %0 = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<?xf32>) -> tensor<?x2xf32>\n  return %0 : tensor<?x2xf32>", "its result type tensor<?x2xf32> is dynamic"},
		{"  %n = stablehlo.convert %a : (tensor<?xf32>) -> tensor<?xi32>\n  %0 = stablehlo.dynamic_iota %n, dim = 0 : (tensor<?xi32>) -> tensor<?x2xf32>\n  return %0 : tensor<?x2xf32>", "computed at run time"},
	} {
		src := "func.func @main(%a: tensor<?xf32>) -> tensor<?x2xf32> {\n" + c.body + "\n}\n"
		_, err := ParseOneWith("r.mlir", src, Options{Args: x})
		require.ErrorContains(t, err, c.want)
	}
	// u16 shapes (a .npy file's bf16 bits) refine bf16 arguments.
	tr, err := ParseOneWith("bf.mlir", "func.func public @main(%a: tensor<?xbf16>) -> tensor<?xbf16> {\n  %0 = stablehlo.add %a, %a : tensor<?xbf16>\n  return %0 : tensor<?xbf16>\n}\n", Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.U16, 3)}})
	require.NoError(t, err)
	require.Equal(t, "bf16[3]", tr.HLO.Entry.Params[0].Shape.String())
	// A static module ignores the shapes given.
	m, err := ParseOneWith("s.mlir", "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n", Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, 5)}})
	require.NoError(t, err)
	require.Equal(t, "f32[2]", m.HLO.Entry.Params[0].Shape.String())
}

// TestRefineCustomCallShapes: a custom-call of dynamic results takes
// their shapes from the operands its indices_of_shape_operands lists
// (JAX's result_shapes), folded and dropped: a Sharding annotation and
// a Cholesky factor of a symbolic batch (lapack_spotrf_ffi), whose
// results are then what KnownCustomCall checks them against.
func TestRefineCustomCallShapes(t *testing.T) {
	src := `func.func public @main(%arg0: tensor<?x3x3xf32>) -> (tensor<?x3x3xf32>, tensor<?xi32>) {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x3x3xf32>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<3> : tensor<2xi32>
  %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<2xi32>) -> tensor<3xi32>
  %3 = stablehlo.custom_call @Sharding(%arg0, %2) {indices_of_shape_operands = dense<1> : tensor<1xi64>, mhlo.sharding = "{replicated}"} : (tensor<?x3x3xf32>, tensor<3xi32>) -> tensor<?x3x3xf32>
  %4:2 = stablehlo.custom_call @lapack_spotrf_ffi(%3, %2, %1) {indices_of_shape_operands = dense<[1, 2]> : tensor<2xi64>, mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<?x3x3xf32>, tensor<3xi32>, tensor<1xi32>) -> (tensor<?x3x3xf32>, tensor<?xi32>)
  return %4#0, %4#1 : tensor<?x3x3xf32>, tensor<?xi32>
}
`
	tr, err := ParseOneWith("calls.mlir", src, Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, 5, 3, 3)}})
	require.NoError(t, err)
	var calls []string
	for _, in := range tr.HLO.Entry.Instructions {
		if in.Op == hlo.OpCustomCall {
			require.Len(t, in.Operands, 1, in.A.Target) // the shape operands dropped
			calls = append(calls, in.A.Target+" "+in.Shape.String())
		}
	}
	require.Equal(t, []string{"Sharding f32[5,3,3]", "lapack_spotrf_ffi (f32[5,3,3], s32[5])"}, calls)
	// A shape operand that disagrees with the result type: an error.
	bad := strings.Replace(src, "dense<3> : tensor<2xi32>", "dense<4> : tensor<2xi32>", 1)
	_, err = ParseOneWith("calls.mlir", bad, Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, 5, 3, 3)}})
	require.ErrorContains(t, err, "the shape operand of result 0 is [5 4 4], its type tensor<?x3x3xf32>")
}
