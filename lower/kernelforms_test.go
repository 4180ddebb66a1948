package lower

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// TestRemapDivisions: a fused chain of remaps (a slice of an upsampling,
// jnp.repeat's broadcast and reshape, of a pad) divides an element's
// index only by the strides of the result and by each repeat: the index
// each remap makes as the ravel of a multi-index is split again from
// that multi-index (kgen's unraveled), not divided anew by the strides
// of the next array. lavapipe ran a 3x3 max pooling's gradient
// (selectscatter.go), four such chains, in 36 ms where it now takes 15.
func TestRemapDivisions(t *testing.T) {
	text := vectorKernel(t, `HloModule upsample
ENTRY e {
  x = f32[6,10,12] parameter(0)
  z = f32[] constant(0)
  p = f32[6,11,13] pad(x, z), padding=0_0x1_0x0_1
  b = f32[6,11,3,13,2] broadcast(p), dimensions={0,1,3}
  r = f32[6,33,26] reshape(b)
  ROOT s = f32[6,28,22] slice(r), slice={[0:6], [2:30], [1:23]}
}`)
	divisions := strings.Count(text, "OpUDiv") + strings.Count(text, "OpUMod")
	// Each of the vector kernel's 8 lanes divides its index by the
	// result's strides (2 quotients, 2 remainders) and by the repeats
	// (2 and 2): 67 in all, where dividing by every array's strides made
	// 170.
	require.LessOrEqual(t, divisions, 8*8+8, text)
}

// TestDepthwiseLoop: a depthwise convolution's vector kernel folds its
// lanes' windows in one loop (kgen's depthwiseLanes), reading each tap's
// 8 input features and 8 kernel outputs as 16-byte texels, where it ran
// a loop per lane reading element by element.
func TestDepthwiseLoop(t *testing.T) {
	text := vectorKernel(t, `HloModule depthwise
ENTRY e {
  x = f32[2,12,12,64] parameter(0)
  k = f32[3,3,1,64] parameter(1)
  ROOT c = f32[2,12,12,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64
}`)
	require.Equal(t, 1, strings.Count(text, "OpLoopMerge"), text)
	require.Equal(t, 4, strings.Count(text, "OpImageFetch"), text) // 2 texels of input, 2 of kernel
}

// TestWindowLoop: an NHWC pooling's vector kernel folds its lanes'
// windows in one loop (kgen's windowLanes), reading each window
// position's 8 features as two 16-byte texels.
func TestWindowLoop(t *testing.T) {
	text := vectorKernel(t, `HloModule pool
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,16,16,32] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[4,8,8,32] reduce-window(x, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, to_apply=max
}`)
	require.Equal(t, 1, strings.Count(text, "OpLoopMerge"), text)
	require.Equal(t, 2, strings.Count(text, "OpImageFetch"), text)
}

// vectorKernel compiles text for lavapipe, requires one kernel of the
// vector form that spirv-val passes, and returns its disassembly.
func vectorKernel(t *testing.T, text string) string {
	t.Helper()
	m, err := hlo.Parse("kernel", text)
	require.NoError(t, err)
	prog, err := Compile(m, LlvmpipeTarget, Options{})
	require.NoError(t, err)
	require.Len(t, prog.Kernels, 1)
	require.Contains(t, prog.Kernels[0].Name, "vec4")
	require.NoError(t, spirv.Validate(prog.Kernels[0].Words))
	dis, err := spirv.Disassemble(prog.Kernels[0].Words)
	require.NoError(t, err)
	return dis
}
