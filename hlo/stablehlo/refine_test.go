package stablehlo

import (
	"os"
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
// from the data rather than from shapes.
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
	// A static module ignores the shapes given.
	m, err := ParseOneWith("s.mlir", "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n", Options{Args: []hlo.Shape{hlo.ArrayShape(hlo.F32, 5)}})
	require.NoError(t, err)
	require.Equal(t, "f32[2]", m.HLO.Entry.Params[0].Shape.String())
}
