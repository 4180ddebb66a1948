package vkjit_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/spirv"
)

// TestAddressedBindings: an array past maxStorageBufferRange (lavapipe:
// 128 MiB) is reached through its buffer device address. Forced onto
// every binding of more than 4 bytes (CompileOptions.AddressAbove), each
// kind of kernel (vector elementwise, narrow, tiled GEMM and its
// epilogue, row and column reductions, sort, device loop, gather and
// scatter, f64 and s64) gives the bits the descriptor form gives (its
// read-only bindings read through texel views where the device has them,
// as past the range, and by address under StorageLoads), which
// the evaluator's match (on a GPU, f32 results within 1e-6: its sums
// fold in another order), with every kernel through spirv-val and the
// validation layer silent.
func TestAddressedBindings(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ name, src string }{
		{"vector", "HloModule m\nENTRY e {\n  a = f32[4096] parameter(0)\n  b = f32[4096] parameter(1)\n  m = f32[4096] multiply(a, b)\n  ROOT r = f32[4096] add(m, a)\n}"},
		{"narrow", "HloModule m\nENTRY e {\n  a = bf16[64,48] parameter(0)\n  b = bf16[64,48] parameter(1)\n  m = bf16[64,48] multiply(a, b)\n  ROOT r = bf16[64,48] add(m, a)\n}"},
		{"bytes", "HloModule m\nENTRY e {\n  a = s8[1000] parameter(0)\n  b = s8[1000] parameter(1)\n  ROOT r = s8[1000] add(a, b)\n}"},
		{"gemm", "HloModule m\nENTRY e {\n  a = f32[96,64] parameter(0)\n  b = f32[64,136] parameter(1)\n  c = f32[136] parameter(2)\n  d = f32[96,136] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  cb = f32[96,136] broadcast(c), dimensions={1}\n  ROOT r = f32[96,136] add(d, cb)\n}"},
		{"gemm direct", "HloModule m\nENTRY e {\n  a = f32[2,96,64] parameter(0)\n  b = f32[2,64,136] parameter(1)\n  ROOT c = f32[2,96,136] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}"},
		{"softmax", "HloModule m\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] maximum(a, b)\n}\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[64,256] parameter(0)\n  ninf = f32[] constant(-inf)\n  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=mx\n  mb = f32[64,256] broadcast(m), dimensions={0}\n  d = f32[64,256] subtract(x, mb)\n  ex = f32[64,256] exponential(d)\n  z = f32[] constant(0)\n  s = f32[64] reduce(ex, z), dimensions={1}, to_apply=sum\n  sb = f32[64,256] broadcast(s), dimensions={0}\n  ROOT r = f32[64,256] divide(ex, sb)\n}"},
		{"column sum", "HloModule m\nsum {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\nENTRY e {\n  x = s32[300,70] parameter(0)\n  z = s32[] constant(0)\n  ROOT s = s32[70] reduce(x, z), dimensions={0}, to_apply=sum\n}"},
		{"sort", "HloModule m\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  x = f32[8,300] parameter(0)\n  i = s32[8,300] iota(), iota_dimension=1\n  ROOT s = (f32[8,300], s32[8,300]) sort(x, i), dimensions={1}, is_stable=true, to_apply=lt\n}"},
		{"loop", "HloModule m\ncond {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  n = s32[] constant(10)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\nbody {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  x = f32[64] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  h = f32[] constant(0.5)\n  hb = f32[64] broadcast(h), dimensions={}\n  y = f32[64] multiply(x, hb)\n  ROOT t = (s32[], f32[64]) tuple(j, y)\n}\nENTRY e {\n  x = f32[64] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[64]) tuple(z, x)\n  w = (s32[], f32[64]) while(t), condition=cond, body=body\n  ROOT r = f32[64] get-tuple-element(w), index=1\n}"},
		{"gather scatter", "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[50,8] parameter(0)\n  i = s32[20,1] parameter(1)\n  g = f32[20,8] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n  ROOT s = f32[50,8] scatter(x, i, g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}"},
		{"wide types", "HloModule m\nENTRY e {\n  a = f64[300] parameter(0)\n  b = s64[300] parameter(1)\n  c = f64[300] convert(b)\n  ROOT r = f64[300] multiply(a, c)\n}"},
		{"transpose", "HloModule m\nENTRY e {\n  a = f32[40,70] parameter(0)\n  t = f32[70,40] transpose(a), dimensions={1,0}\n  b = f32[70,40] parameter(1)\n  ROOT r = f32[70,80] concatenate(t, b), dimensions={1}\n}"},
	} {
		m, err := hlo.Parse(c.name, c.src)
		require.NoError(t, err, c.name)
		args := hlotest.SmallIntInputs(m, 3)
		// DeviceLoops: the loop's 10 iterations would run from the host.
		exe, err := rt.Compile(m, vkjit.CompileOptions{DeviceLoops: true})
		require.NoError(t, err, c.name)
		_, want, outs := runBothOn(t, exe, m, args, c.name)
		for i, w := range want.Leaves() {
			if w.Shape.Elem == hlo.F32 && !cpuForms() {
				// A GPU's row sums fold as a tree, the evaluator's in a
				// row: softmax's quotients differ in the last bits.
				requireNearF32(t, w, outs[i], 1e-6)
				continue
			}
			requireSameBytes(t, w.Data, outs[i].Data, "%s out%d", c.name, i)
		}
		for _, opts := range []vkjit.CompileOptions{{AddressAbove: 4, DeviceLoops: true}, {AddressAbove: 4, StorageLoads: true, DeviceLoops: true}, {AddressAbove: 4, NoFuse: true, DeviceLoops: true}} {
			if opts.NoFuse {
				// The unfused program's own descriptor form: a fused
				// softmax folds its sum online, in another order.
				plain := opts
				plain.AddressAbove = 0
				exe, err := rt.Compile(m, plain)
				require.NoError(t, err, c.name)
				_, _, outs = runBothOn(t, exe, m, args, c.name)
			}
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.name)
			addressed := 0
			for _, k := range vkjit.ProgramOf(exe).Kernels {
				addressed += len(k.Addressed)
				require.NoError(t, spirv.Validate(k.Words), "%s: %s", c.name, k.Name)
			}
			require.Positive(t, addressed, "%s: no binding reached by address", c.name)
			_, _, got := runBothOn(t, exe, m, args, c.name)
			for i := range outs {
				requireSameBytes(t, outs[i].Data, got[i].Data, "%s out%d %+v", c.name, i, opts)
			}
		}
	}
}

// requireSameBytes requires got to be want, naming the first byte that
// differs rather than printing both.
func requireSameBytes(t *testing.T, want, got []byte, format string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), append([]any{format}, args...)...)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: byte %d of %d is %#x, want %#x", fmt.Sprintf(format, args...), i, len(want), got[i], want[i])
		}
	}
}

// TestPastStorageRange: a read-only array past the device's
// maxStorageBufferRange (lavapipe: 128 MiB) that a texel buffer view can
// hold (maxTexelBufferElements: 128 Mi texels) is read through texel
// views, its binding still reached by address: a matrix-vector product
// of a 132 MiB f32 matrix (the subgroup tile's vec4 fetches) and its
// column sums (the reduction's scalar fetches), bit for bit the
// evaluator's on small integers (exact sums). On lavapipe a load by
// address is a loop over the lanes, a scalar load each: the product
// took 290 ms that way for 256 MiB, 80 through views.
func TestPastStorageRange(t *testing.T) {
	defer noValidationMessages(t)
	tg := vkjit.TargetOf(rt)
	const k, n = 8448, 4096 // 8448 * 4096 * 4 bytes: 132 MiB
	if !tg.BufferAddress || tg.MaxStorageRange <= 0 || tg.MaxStorageRange >= k*n*4 || tg.MaxTexelElements < k*n {
		t.Skipf("the device's ranges (storage %d bytes, texels %d) leave nothing to test", tg.MaxStorageRange, tg.MaxTexelElements)
	}
	src := fmt.Sprintf(`HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[1,%[1]d] parameter(0)
  w = f32[%[1]d,%[2]d] parameter(1)
  y = f32[1,%[2]d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  s = f32[%[2]d] reduce(w, z), dimensions={0}, to_apply=add
  ROOT r = (f32[1,%[2]d], f32[%[2]d]) tuple(y, s)
}`, k, n)
	m, err := hlo.Parse("past.hlo", src)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	viewed := 0
	for _, kn := range vkjit.ProgramOf(exe).Kernels {
		require.NoError(t, spirv.Validate(kn.Words), kn.Name)
		for _, tv := range kn.Texel {
			if slices.Contains(kn.Addressed, tv.Binding) {
				viewed++
			}
		}
	}
	if tg.TexelLoads && tg.CPU {
		require.Positive(t, viewed, "no binding past the range read through a texel view")
	}
	_, want, outs := runBothOn(t, exe, m, hlotest.SmallIntInputs(m, 3), "past")
	for i, w := range want.Leaves() {
		requireSameBytes(t, w.Data, outs[i].Data, "out%d", i)
	}
}
