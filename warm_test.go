package vkjit_test

import (
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// warmProgram has kernels of several kinds (tiled GEMMs, a row
// reduction, elementwise ones, a sort) and a loop whose body is a
// sub-program of its own.
const warmProgram = `HloModule warm
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64,64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  d = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[64,64] tanh(d)
  ROOT r = (s32[], f32[64,64]) tuple(j, t)
}
ENTRY main {
  a = f32[256,256] parameter(0)
  b = f32[256,256] parameter(1)
  ab = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[256,256] exponential(ab)
  z = f32[] constant(0)
  rs = f32[256] reduce(e, z), dimensions={1}, to_apply=add
  srt = f32[256] sort(rs), dimensions={0}, to_apply=less
  x = f32[64,64] parameter(2)
  i0 = s32[] constant(0)
  t0 = (s32[], f32[64,64]) tuple(i0, x)
  w = (s32[], f32[64,64]) while(t0), condition=cond, body=body
  wx = f32[64,64] get-tuple-element(w), index=1
  ROOT out = (f32[256], f32[64,64]) tuple(srt, wx)
}
`

// TestWarmPipelines compiles a program with warming forced on and off:
// where lavapipe compiles at first dispatch (a CPU device with Mesa's
// disk cache, two threads or more), On warms every distinct dispatch,
// sub-programs' included, Off none; the results are the evaluator's
// either way, and the validation layer stays silent about the warming
// dispatches (no workgroups, views of scratch blocks).
func TestWarmPipelines(t *testing.T) {
	defer noValidationMessages(t)
	m, err := hlo.Parse("warm.hlo", warmProgram)
	require.NoError(t, err)
	args := hlotest.UniformInputs(m, 7)
	want, err := eval.Run(m, args...)
	require.NoError(t, err)
	ts := make([]*vkjit.Tensor, len(args))
	for i, a := range args {
		ts[i] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
	}
	for _, mode := range []vkjit.Toggle{vkjit.On, vkjit.Off} {
		r, err := vkjit.Open(vkjit.Options{Validate: vkjit.On, NoCache: true, WarmPipelines: mode})
		require.NoError(t, err)
		exe, err := r.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		t.Logf("warming %v: %d kernels, %d dispatches warmed", mode == vkjit.On, exe.Stats.Kernels, exe.Stats.Warmed)
		warms := mode == vkjit.On && vkjit.CompilesAtDispatch(r) && runtime.GOMAXPROCS(0) >= 2
		if warms {
			require.GreaterOrEqual(t, exe.Stats.Warmed, exe.Stats.Kernels, "every kernel warmed at least once")
			require.Greater(t, exe.Stats.Kernels, 4)
		} else {
			require.Zero(t, exe.Stats.Warmed)
		}
		got, _, err := exe.Run(context.Background(), ts...)
		require.NoError(t, err)
		for i, w := range want.Leaves() {
			for j := range w.Shape.NumElements() {
				x := float64(math.Float32frombits(binary.LittleEndian.Uint32(w.Data[4*j:])))
				require.InDelta(t, x, got[i].Float64At(j), 1e-4*max(1, math.Abs(x)), "out%d[%d], warming %v", i, j, mode == vkjit.On)
			}
		}
		exe.Close()
		r.Close()
	}
}
