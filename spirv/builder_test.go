package spirv

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStringEncoding(t *testing.T) {
	require.Equal(t, []uint32{0}, String(""))
	require.Equal(t, []uint32{0x6e69616d, 0}, String("main")) // NUL needs its own word
	require.Equal(t, []uint32{0x4c534c47, 0x6474732e, 0x3035342e, 0}, String("GLSL.std.450"))
	require.Equal(t, []uint32{0x00006261}, String("ab"))
}

func TestDedupAndCapabilities(t *testing.T) {
	b := NewBuilder()
	i32 := b.TypeInt(32, true)
	require.Equal(t, i32, b.TypeInt(32, true))
	require.NotEqual(t, i32, b.TypeInt(32, false))
	require.Equal(t, b.ConstS32(-1), b.ConstS32(-1))
	require.NotEqual(t, b.ConstS32(1), b.ConstU32(1), "same bits, different types")
	require.True(t, b.HasCapability(CapabilityShader))
	require.False(t, b.HasCapability(CapabilityInt64))
	require.False(t, b.HasCapability(CapabilityFloat64))
	b.TypeInt(64, false)
	require.True(t, b.HasCapability(CapabilityInt64))
	b.TypeFloat(64)
	require.True(t, b.HasCapability(CapabilityFloat64))
	f := b.TypeFloat(32)
	a1 := b.TypeRuntimeArray(f, 4)
	require.Equal(t, a1, b.TypeRuntimeArray(f, 4))
	require.Equal(t, b.TypeBlock([]ID{a1}, []uint32{0}), b.TypeBlock([]ID{a1}, []uint32{0}))
}

// TestMinimalModule checks the header and that a module with an empty
// compute entry point passes spirv-val.
func TestMinimalModule(t *testing.T) {
	b := NewBuilder()
	void := b.TypeVoid()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	fn.Void(OpReturn)
	fn.End()
	b.EntryPoint(fn.ID, "main")
	b.LocalSize(fn.ID, 1, 1, 1)
	w := b.Words()
	require.Equal(t, uint32(MagicNumber), w[0])
	require.Equal(t, Version13, w[1])
	require.Equal(t, uint32(b.Bound()), w[3])
	require.NoError(t, Validate(w))
	back, err := FromBytes(Bytes(w))
	require.NoError(t, err)
	require.Equal(t, w, back)
	_, err = FromBytes([]byte{1, 2, 3})
	require.Error(t, err)
}

// TestValidateRejects makes sure the validator is really consulted: a
// module whose entry point has no LocalSize is invalid for Vulkan.
func TestValidateRejects(t *testing.T) {
	b := NewBuilder()
	void := b.TypeVoid()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	fn.Void(OpReturn)
	fn.End()
	b.EntryPoint(fn.ID, "main")
	require.Error(t, Validate(b.Words()))
}
