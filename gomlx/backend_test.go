package gomlx

import (
	"errors"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/stretchr/testify/require"
	"github.com/vkjit/vkjit"
)

// TestRegistered: GOMLX_BACKEND=vkjit and vkjit:<device> reach New; a
// device that is not there is an error naming it, not a panic; the
// capabilities list every op but the collectives and the dtypes the
// device holds.
func TestRegistered(t *testing.T) {
	require.Contains(t, backends.List(), BackendName)
	b, err := backends.NewWithConfig("vkjit:" + vkb.Runtime().Device().Name[:4])
	require.NoError(t, err)
	require.Equal(t, "vkjit", b.Name())
	require.Equal(t, 1, b.NumDevices())
	require.Contains(t, b.DeviceDescription(0), vkb.Runtime().Device().Name)
	caps := b.Capabilities()
	require.True(t, caps.Operations[backends.OpTypeConvGeneral])
	require.True(t, caps.Operations[backends.OpTypeBatchNormGradient])
	require.False(t, caps.Operations[backends.OpTypeAllReduce])
	require.True(t, caps.DTypes[dtypes.BFloat16])
	require.Equal(t, vkb.Runtime().Device().Float64, caps.DTypes[dtypes.Float64])
	b.Finalize()
	require.True(t, b.IsFinalized())
	_, err = b.BufferFromFlatData(0, []float32{1}, shapesOf(dtypes.Float32, 1))
	require.True(t, errors.Is(err, vkjit.ErrClosed), "%v", err)

	_, err = backends.NewWithConfig("vkjit:no-such-device")
	require.ErrorIs(t, err, vkjit.ErrNoDevice)
	require.ErrorContains(t, err, "no-such-device")
}

func shapesOf(dt dtypes.DType, dims ...int) shapes.Shape { return shapes.Make(dt, dims...) }
