package lower

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// TestCanonicalConvs: convolutions of one and of three or more spatial
// dimensions become 2-D ones the implicit GEMM takes (a unit dimension
// more; taps of the first dimension with its outputs folded into the
// batch), in any dimension order, with strides, kernel dilation and
// padding beyond or inside the input; the evaluator finds them equal to
// the original bit for bit on small integers (f32, the GEMM's type).
// A 2-D convolution of a few feature groups is the dense one of its
// kernel made block-diagonal, one of a few batch groups the diagonal
// blocks of the dense one. Those the GEMM would not take, and depthwise
// ones, stay.
func TestCanonicalConvs(t *testing.T) {
	cases := []struct {
		name, x, k, labels, window, attrs string
		twoD                              bool
	}{
		{"1-D NCW", "8,32,256", "16,32,5", "bf0_oi0->bf0", "size=5 pad=2_2", "", true},
		{"3-D", "2,6,16,16,8", "3,3,3,8,8", "b012f_012io->b012f", "size=3x3x3 pad=1_1x1_1x1_1", "", true},
		{"3-D NCDHW, strided", "2,8,9,24,24", "8,8,3,3,3", "bf012_oi012->bf012", "size=3x3x3 stride=2x1x1 pad=0_1x1_1x1_1", "", true},
		{"3-D, dilated, negative padding", "2,9,16,16,8", "3,3,3,8,8", "b012f_012io->b012f", "size=3x3x3 pad=-1_0x1_1x1_1 rhs_dilate=2x1x1", "", true},
		{"4-D", "1,3,4,16,16,8", "2,2,3,3,8,8", "b0123f_0123io->b0123f", "size=2x2x3x3 pad=0_1x0_0x1_1x1_1", "", true},
		{"2-D, 4 groups", "2,16,16,32", "3,3,8,16", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", "feature_group_count=4", true},
		{"NCHW, 2 groups", "2,32,16,16", "16,16,3,3", "bf01_oi01->bf01", "size=3x3 stride=2x1 pad=1_1x0_2", "feature_group_count=2", true},
		{"kernel gradient of 4 groups", "16,12,12,32", "16,12,12,32", "f01b_i01o->01bf", "size=12x12 pad=1_1x1_1", "batch_group_count=4", true},
		{"depthwise kernel gradient", "16,12,12,64", "16,12,12,64", "f01b_i01o->01bf", "size=12x12 pad=1_1x1_1", "batch_group_count=64", false},
		{"depthwise", "2,16,16,64", "3,3,1,64", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", "feature_group_count=64", false},
		{"3-D, feature groups", "2,6,16,16,8", "3,3,3,4,8", "b012f_012io->b012f", "size=3x3x3 pad=1_1x1_1x1_1", "feature_group_count=2", false},
		{"3-D, too small for the GEMM", "1,3,4,4,4", "2,2,2,4,4", "b012f_012io->b012f", "size=2x2x2", "", false},
	}
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%s] parameter(0)\n  k = f32[%s] parameter(1)\n  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s%s\n}\n",
				c.x, c.k, out, c.window, c.labels, map[bool]string{true: ", " + c.attrs}[c.attrs != ""])
		}
		_, user, m := inferredModule(t, c.name, "f32", text)
		require.NoError(t, canonicalConvs(&state{mod: m, tg: LlvmpipeTarget}), c.name)
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				if c.twoD {
					require.Len(t, in.A.ConvDims.InSpatial, 2, "%s: %s", c.name, in.Name)
					require.True(t, takesGemm(in), "%s: %s", c.name, in.Name)
					require.Equal(t, int64(1), max(in.A.FeatureGroups, 1), "%s: %s", c.name, in.Name)
					require.Equal(t, int64(1), max(in.A.BatchGroups, 1), "%s: %s", c.name, in.Name)
				} else {
					require.Same(t, m.Entry.Root, in, c.name)
				}
			}
		}
		requireSameValues(t, c.name, user, m.Entry, 2)
	}
}

// TestWidenedConvs: f16 and bf16 convolutions (and bf16 operands to an
// f32 result) are computed as f32 convolutions the implicit GEMM takes,
// their results rounded back once: bit for bit the evaluator's on small
// integers (whose f32 sums are exact). One too small for the GEMM stays
// as it is.
func TestWidenedConvs(t *testing.T) {
	cases := []struct {
		name, x, k, out, labels, window string
		gemm                            bool
	}{
		{"bf16 NHWC", "bf16[2,16,16,32]", "bf16[3,3,32,16]", "bf16", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", true},
		{"f16 NCHW, strided", "f16[4,32,32,32]", "f16[16,32,3,3]", "f16", "bf01_oi01->bf01", "size=3x3 stride=2x2 pad=1_1x1_1", true},
		{"bf16 operands, f32 result", "bf16[2,16,16,32]", "bf16[3,3,32,16]", "f32", "b01f_01io->b01f", "size=3x3 pad=1_1x1_1", true},
		{"f16 1-D", "f16[8,32,256]", "f16[16,32,5]", "f16", "bf0_oi0->bf0", "size=5 pad=2_2", true},
		{"too small", "bf16[1,4,4,4]", "bf16[2,2,4,4]", "bf16", "b01f_01io->b01f", "size=2x2", false},
	}
	for _, c := range cases {
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s parameter(0)\n  k = %s parameter(1)\n  ROOT c = %s convolution(x, k), window={%s}, dim_labels=%s\n}\n",
				c.x, c.k, out, c.window, c.labels)
		}
		_, user, m := inferredModule(t, c.name, c.out, text)
		require.NoError(t, canonicalConvs(&state{mod: m, tg: LlvmpipeTarget}), c.name)
		gemms := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution && takesGemm(in) {
				gemms++
				require.Equal(t, hlo.F32, in.Shape.Elem, c.name)
			}
		}
		require.Equal(t, c.gemm, gemms > 0, c.name)
		require.Equal(t, user.Entry.Root.Shape.Elem, m.Entry.Root.Shape.Elem, c.name)
		requireSameValues(t, c.name, user, m.Entry, 2)
	}
}

// TestDepthwiseFilterGrads: the kernel gradient of a depthwise
// convolution (as many batch groups as features, each one input batch
// element) becomes one reduction of every tap's products, in JAX's
// NHWC and NCHW dimension numbers, 1-D, with padding on one side or
// negative, bf16 (summed in f32, rounded once) and 7x7 (49 taps in
// several reductions, each binding few enough buffers): the evaluator finds
// it equal to the convolution bit for bit on small integers. A strided
// one, and one of more taps than maxFilterTaps, stay.
func TestDepthwiseFilterGrads(t *testing.T) {
	cases := []struct {
		name, ty, x, k, labels, window string
		split                          bool
	}{
		{"NHWC", "f32", "4,10,10,16", "4,10,10,16", "f01b_i01o->01bf", "size=10x10 pad=1_1x1_1", true},
		{"NCHW", "f32", "16,4,10,10", "16,4,10,10", "bf01_oi01->bf01", "size=10x10 pad=1_1x1_1", true},
		{"1-D", "f32", "4,20,16", "4,20,16", "f0b_i0o->0bf", "size=20 pad=2_2", true},
		{"padding on one side, negative", "f32", "4,10,10,16", "4,10,10,16", "f01b_i01o->01bf", "size=10x10 pad=0_2x-1_1", true},
		{"bf16", "bf16", "4,10,10,16", "4,10,10,16", "f01b_i01o->01bf", "size=10x10 pad=1_1x1_1", true},
		{"7x7, in reductions of at most tapsPerReduce", "f32", "2,8,8,8", "2,8,8,8", "f01b_i01o->01bf", "size=8x8 pad=3_3x3_3", true},
		{"strided", "f32", "4,11,11,16", "4,5,5,16", "f01b_i01o->01bf", "size=5x5 pad=1_1x1_1 rhs_dilate=2x2", false},
		{"81 taps", "f32", "4,10,10,16", "4,10,10,16", "f01b_i01o->01bf", "size=10x10 pad=4_4x4_4", false},
	}
	for _, c := range cases {
		groups := c.x[strings.LastIndex(c.x, ",")+1:]
		if c.name == "NCHW" {
			groups = c.x[:strings.Index(c.x, ",")]
		}
		text := func(out string) string {
			return fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]s] parameter(0)\n  k = %[1]s[%[3]s] parameter(1)\n  ROOT c = %[4]s convolution(x, k), window={%[5]s}, dim_labels=%[6]s, batch_group_count=%[7]s\n}\n",
				c.ty, c.x, c.k, out, c.window, c.labels, groups)
		}
		_, user, m := inferredModule(t, c.name, c.ty, text)
		require.NoError(t, canonicalConvs(&state{mod: m, tg: LlvmpipeTarget}), c.name)
		convs := 0
		for _, in := range m.Entry.Instructions {
			if in.Op == hlo.OpConvolution {
				convs++
			}
		}
		require.Equal(t, !c.split, convs > 0, c.name)
		require.Equal(t, user.Entry.Root.Shape.String(), m.Entry.Root.Shape.String(), c.name)
		requireSameValues(t, c.name, user, m.Entry, 2)
	}
}
