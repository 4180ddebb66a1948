package gomlx

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/stretchr/testify/require"
)

// TestSharedBuffers: GoMLX writes a shared buffer's slice and runs see it,
// for f32 (the device memory itself on a mapped device) and bool (a host
// copy, since devices store pred as 32-bit words); outputs read through
// BufferData; a write after a run is seen by the next run.
func TestSharedBuffers(t *testing.T) {
	if !vkb.HasSharedBuffers() {
		_, _, err := vkb.NewSharedBuffer(0, shapes.Make(dtypes.Float32, 3))
		require.ErrorContains(t, err, "staged")
		t.Skip("the device's memory is staged: no shared buffers")
	}
	f := vkb.Builder("shared")
	x, err := f.Parameter("x", shapes.Make(dtypes.Float32, 3), nil)
	require.NoError(t, err)
	p, err := f.Parameter("p", shapes.Make(dtypes.Bool, 3), nil)
	require.NoError(t, err)
	y, err := f.Mul(x, x)
	require.NoError(t, err)
	q, err := f.LogicalNot(p)
	require.NoError(t, err)
	exe, err := f.Compile([]backends.Op{y, q}, nil)
	require.NoError(t, err)
	defer exe.Finalize()

	xb, xf, err := vkb.NewSharedBuffer(0, shapes.Make(dtypes.Float32, 3))
	require.NoError(t, err)
	pb, pf, err := vkb.NewSharedBuffer(0, shapes.Make(dtypes.Bool, 3))
	require.NoError(t, err)
	require.Equal(t, []float32{0, 0, 0}, xf)
	require.True(t, xb.(*Buffer).inPlace, "f32 in place on a mapped device")
	require.False(t, pb.(*Buffer).inPlace, "pred through a host copy")

	for round, v := range [][3]float32{{1, -2, 3}, {4, 5, -6}} {
		copy(xf.([]float32), v[:])
		pf.([]bool)[round] = true
		outs, err := exe.Execute([]backends.Buffer{xb, pb}, nil, 0)
		require.NoError(t, err)
		yf, err := vkb.BufferData(outs[0])
		require.NoError(t, err)
		require.Equal(t, []float32{v[0] * v[0], v[1] * v[1], v[2] * v[2]}, yf, "round %d", round)
		qf, err := vkb.BufferData(outs[1])
		require.NoError(t, err)
		want := []bool{false, true, true}
		if round == 1 {
			want = []bool{false, false, true}
		}
		require.Equal(t, want, qf, "round %d", round)
		got := make([]bool, 3)
		require.NoError(t, vkb.BufferToFlatData(outs[1], got))
		require.Equal(t, want, got)
		for _, o := range outs {
			require.NoError(t, vkb.BufferFinalize(o))
		}
	}
	require.NoError(t, vkb.BufferFinalize(xb))
	require.NoError(t, vkb.BufferFinalize(pb))
	_, err = vkb.BufferData(xb)
	require.ErrorContains(t, err, "finalized")
}

// TestDonation: a donated input is vkjit's donation (the executable that
// donates it is compiled on first use): the run gives its memory back,
// so a step that updates a parameter of the same size leaves the pool's
// use as it was; the buffer is invalid after.
func TestDonation(t *testing.T) {
	f := vkb.Builder("donation")
	w, err := f.Parameter("w", shapes.Make(dtypes.Float32, 4096), nil)
	require.NoError(t, err)
	g, err := f.Parameter("g", shapes.Make(dtypes.Float32, 4096), nil)
	require.NoError(t, err)
	w2, err := f.Sub(w, g)
	require.NoError(t, err)
	exe, err := f.Compile([]backends.Op{w2}, nil)
	require.NoError(t, err)
	defer exe.Finalize()
	ones := make([]float32, 4096)
	for i := range ones {
		ones[i] = 1
	}
	wb, err := vkb.BufferFromFlatData(0, make([]float32, 4096), shapes.Make(dtypes.Float32, 4096))
	require.NoError(t, err)
	gb, err := vkb.BufferFromFlatData(0, ones, shapes.Make(dtypes.Float32, 4096))
	require.NoError(t, err)
	defer vkb.BufferFinalize(gb)
	for step := 1; step <= 3; step++ {
		before, err := vkb.Runtime().MemoryStats()
		require.NoError(t, err)
		outs, err := exe.Execute([]backends.Buffer{wb, gb}, []bool{true, false}, 0)
		require.NoError(t, err)
		after, err := vkb.Runtime().MemoryStats()
		require.NoError(t, err)
		require.Equal(t, before.InUseBytes, after.InUseBytes, "step %d: the new w where the old was", step)
		_, err = vkb.BufferShape(wb)
		require.ErrorContains(t, err, "finalized", "the donated buffer")
		wb = outs[0]
		got := make([]float32, 4096)
		require.NoError(t, vkb.BufferToFlatData(wb, got))
		require.Equal(t, float32(-step), got[4095])
	}
	require.NoError(t, vkb.BufferFinalize(wb))
	require.Len(t, exe.(*Executable).donated, 1, "one executable donating w")
}
