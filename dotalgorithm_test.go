package vkjit_test

import (
	"context"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// TestDotAlgorithms runs the dot algorithms of JAX's precision presets
// on the device (hlo/stablehlo/testdata/dot_algorithm.mlir: bf16 and
// tf32 operands with f32 sums, the bf16 x3 emulation of f32, and bf16
// sums of bf16 operands) and holds them to the evaluator of its twin,
// which rounds the operands by explicit converts and a reduce-precision:
// the same up to the order of the f32 sums. The bf16 and tf32 results
// must differ from the f32 dot's by the rounding (random operands of 24
// significant bits), the x3 one must not.
func TestDotAlgorithms(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(31, 32))
	vals := func(n int) []complex128 {
		v := make([]complex128, n)
		for i := range v {
			v[i] = complex(rng.Float64()*2-1, 0)
		}
		return v
	}
	a, b := tensorOf("f32", []int64{4, 8}, vals(32)), tensorOf("f32", []int64{8, 2}, vals(16))
	exe, err := rt.CompileFile("hlo/stablehlo/testdata/dot_algorithm.mlir", vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	res, _, err := exe.Run(context.Background(), a, b)
	require.NoError(t, err)
	src, err := os.ReadFile("hlo/stablehlo/testdata/dot_algorithm.hlo")
	require.NoError(t, err)
	twin, err := hlo.Parse("dot_algorithm.hlo", string(src))
	require.NoError(t, err)
	want, err := eval.Run(twin, literalOf(a), literalOf(b))
	require.NoError(t, err)
	// f32 is each output's dot of the unrounded operands, in float64.
	f32 := make([]float64, 8)
	for i := range 4 {
		for j := range 2 {
			for k := range 8 {
				f32[i*2+j] += real(valueAt(a, int64(i*8+k))) * real(valueAt(b, int64(k*2+j)))
			}
		}
	}
	for o, w := range want.Leaves() {
		wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
		tol := 1e-6
		if o == 3 {
			tol = 1.6e-2 // bf16 results: sums rounded to bf16 in another order
		}
		apart := 0.0
		for i := range wt.NumElements() {
			g := valueAt(res[o], i)
			require.LessOrEqual(t, cmplx.Abs(g-valueAt(wt, i)), tol, "output %d element %d", o, i)
			apart = math.Max(apart, math.Abs(real(g)-f32[i]))
		}
		switch o {
		case 0, 1:
			require.Greater(t, apart, 1e-4, "output %d: the operands were not rounded", o)
		case 2:
			require.Less(t, apart, 1e-5, "x3 is f32's dot")
		}
	}
}
