package eval

import (
	"fmt"
	"math"
	"math/big"
	"math/cmplx"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// evalText runs a module whose entry takes no parameters (inputs are
// constants in the text) and returns the result leaves as float64s.
func evalText(t *testing.T, src string) [][]float64 {
	t.Helper()
	m, err := hlo.Parse("op.hlo", src)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m)
	require.NoError(t, err)
	var out [][]float64
	for _, l := range v.Leaves() {
		var xs []float64
		for i := int64(0); i < l.Shape.NumElements(); i++ {
			xs = append(xs, toF(get(l, i), l.Shape.Elem))
		}
		out = append(out, xs)
	}
	return out
}

func module(body string, comps ...string) string {
	return "HloModule m\n" + strings.Join(comps, "\n") + "\nENTRY e {\n" + body + "\n}\n"
}

const addComp = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}"
const maxComp = "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}"
const geComp = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=GE\n}"

func TestDataMovement(t *testing.T) {
	x := "  x = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
	for _, tc := range []struct {
		name, body string
		want       []float64
	}{
		{"broadcast", "  s = f32[2] constant({7, 8})\n  ROOT r = f32[2,3] broadcast(s), dimensions={0}", []float64{7, 7, 7, 8, 8, 8}},
		{"broadcast scalar", "  s = f32[] constant(3)\n  ROOT r = f32[2] broadcast(s), dimensions={}", []float64{3, 3}},
		{"reshape", x + "  ROOT r = f32[3,2] reshape(x)", []float64{1, 2, 3, 4, 5, 6}},
		{"transpose", x + "  ROOT r = f32[3,2] transpose(x), dimensions={1,0}", []float64{1, 4, 2, 5, 3, 6}},
		{"slice stride", x + "  ROOT r = f32[2,2] slice(x), slice={[0:2], [0:3:2]}", []float64{1, 3, 4, 6}},
		{"reverse", x + "  ROOT r = f32[2,3] reverse(x), dimensions={0,1}", []float64{6, 5, 4, 3, 2, 1}},
		{"concatenate", x + "  ROOT r = f32[2,6] concatenate(x, x), dimensions={1}", []float64{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}},
		{"iota", "  ROOT r = s32[2,3] iota(), iota_dimension=1", []float64{0, 1, 2, 0, 1, 2}},
		{"pad interior", "  x = f32[3] constant({1, 2, 3})\n  z = f32[] constant(0)\n  ROOT r = f32[7] pad(x, z), padding=1_1_1", []float64{0, 1, 0, 2, 0, 3, 0}},
		{"pad negative", "  x = f32[3] constant({1, 2, 3})\n  z = f32[] constant(9)\n  ROOT r = f32[3] pad(x, z), padding=-1_1", []float64{2, 3, 9}},
		// Start indices are clamped so that the slice fits.
		{"dynamic-slice clamp", x + "  i = s32[] constant(5)\n  j = s32[] constant(-3)\n  ROOT r = f32[1,2] dynamic-slice(x, i, j), dynamic_slice_sizes={1,2}", []float64{4, 5}},
		{"dynamic-update-slice clamp", x + "  u = f32[1,2] constant({{9, 9}})\n  i = s32[] constant(7)\n  j = s32[] constant(2)\n  ROOT r = f32[2,3] dynamic-update-slice(x, u, i, j)", []float64{1, 2, 3, 4, 9, 9}},
		{"bitcast-convert", "  x = f32[1] constant({1})\n  ROOT r = u32[1] bitcast-convert(x)", []float64{0x3f800000}},
		// Sub-byte types' bits as one little-endian stream: element 0 low.
		{"bitcast s4 pairs to s8", "  x = s4[3,2] constant({{1, -1}, {7, -8}, {0, 3}})\n  ROOT r = s8[3] bitcast-convert(x)", []float64{-15, -121, 48}},
		{"bitcast u8 to s4 pairs", "  x = u8[2] constant({171, 18})\n  ROOT r = s4[2,2] bitcast-convert(x)", []float64{-5, -6, 2, 1}},
		{"bitcast u2 quads to u8", "  x = u2[1,4] constant({{3, 0, 1, 2}})\n  ROOT r = u8[1] bitcast-convert(x)", []float64{0x93}},
		{"bitcast s4 to u4", "  x = s4[3] constant({-1, 7, -8})\n  ROOT r = u4[3] bitcast-convert(x)", []float64{15, 7, 8}},
		{"bitcast f4 to u4", "  x = f4e2m1fn[4] constant({-6, 0.5, -0, 3})\n  ROOT r = u4[4] bitcast-convert(x)", []float64{15, 1, 8, 5}},
		{"bitcast u4 octets to f32", "  x = u4[1,8] constant({{0, 0, 0, 0, 0, 8, 15, 3}})\n  ROOT r = f32[1] bitcast-convert(x)", []float64{1}},
		{"bitcast f6 formats", "  x = f6e2m3fn[2] constant({1, -7.5})\n  ROOT r = f6e3m2fn[2] bitcast-convert(x)", []float64{0.5, -28}},
		{"reduce-precision", "  x = f32[3] constant({1.00390625, 1e10, 1e-10})\n  ROOT r = f32[3] reduce-precision(x), exponent_bits=5, mantissa_bits=7", []float64{1, math.Inf(1), 0}},
		// With no mantissa bit, NaN is +inf (XLA); the rounding carried
		// 0x7fffffff's mantissa into the sign, which gave -0.
		{"reduce-precision NaN", "  x = u32[2] constant({2147483647, 4290772992})\n  f = f32[2] bitcast-convert(x)\n  ROOT r = f32[2] reduce-precision(f), exponent_bits=5, mantissa_bits=0", []float64{math.Inf(1), math.Inf(1)}},
		{"convert to bf16", "  x = f32[2] constant({1.00390625, 1.01171875})\n  ROOT r = bf16[2] convert(x)", []float64{1, 1.015625}},
	} {
		got := evalText(t, module(tc.body))
		require.Equal(t, tc.want, got[0], tc.name)
	}
}

func TestGatherScatter(t *testing.T) {
	x := "  x = f32[3,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})\n"
	// Rows 0 and 2 (and an out-of-range 5, clamped to row 2).
	got := evalText(t, module(x+"  i = s32[3] constant({0, 2, 5})\n  ROOT g = f32[3,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}"))
	require.Equal(t, []float64{1, 2, 3, 7, 8, 9, 7, 8, 9}, got[0])
	// A collapsed dimension's slice of size 0 reads as one of size 1:
	// start 3, past the rows, is clamped to the last row, not to 3.
	got = evalText(t, module(x+"  i = s32[3] constant({0, 3, 1})\n  ROOT g = f32[3,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={0,3}"))
	require.Equal(t, []float64{1, 2, 3, 7, 8, 9, 4, 5, 6}, got[0])
	// Scatter-add with a repeated index and an out-of-bounds one (skipped).
	got = evalText(t, module(x+"  i = s32[3] constant({1, 1, 3})\n  u = f32[3,3] constant({{1, 1, 1}, {2, 2, 2}, {5, 5, 5}})\n  ROOT s = f32[3,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", addComp))
	require.Equal(t, []float64{1, 2, 3, 7, 8, 9, 7, 8, 9}, got[0])
}

func TestReductions(t *testing.T) {
	x := "  x = f32[2,3] constant({{1, 5, 3}, {4, 2, 6}})\n  z = f32[] constant(0)\n"
	got := evalText(t, module(x+"  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add", addComp))
	require.Equal(t, []float64{9, 12}, got[0])
	got = evalText(t, module(x+"  ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add", addComp))
	require.Equal(t, []float64{21}, got[0])
	// Variadic reduce: argmax over each row, ties to the lower index.
	argmax := `argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}`
	got = evalText(t, module(`  x = f32[2,3] constant({{1, 5, 5}, {4, 2, 6}})
  idx = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, zi), dimensions={1}, to_apply=argmax`, argmax))
	require.Equal(t, []float64{5, 6}, got[0])
	require.Equal(t, []float64{1, 2}, got[1])
	// Max pool 2x2 stride 1 with padding (padding positions are skipped).
	got = evalText(t, module("  x = f32[2,2] constant({{1, 2}, {3, 4}})\n  ninf = f32[] constant(-inf)\n  ROOT r = f32[3,3] reduce-window(x, ninf), window={size=2x2 pad=1_1x1_1}, to_apply=mx", maxComp))
	require.Equal(t, []float64{1, 2, 2, 3, 4, 4, 3, 4, 4}, got[0])
	// select-and-scatter: the max of each window gets the source value.
	got = evalText(t, module("  x = f32[2,4] constant({{1, 5, 2, 0}, {3, 4, 8, 1}})\n  s = f32[1,2] constant({{10, 20}})\n  z = f32[] constant(0)\n  ROOT r = f32[2,4] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add", geComp, addComp))
	require.Equal(t, []float64{0, 10, 0, 0, 0, 0, 20, 0}, got[0])
}

func TestSortTopKMap(t *testing.T) {
	lt := "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT s = pred[] compare(a, b), direction=LT\n}"
	got := evalText(t, module("  k = f32[5] constant({3, 1, 2, 1, -inf})\n  v = s32[5] iota(), iota_dimension=0\n  ROOT r = (f32[5], s32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt", lt))
	require.Equal(t, []float64{math.Inf(-1), 1, 1, 2, 3}, got[0])
	require.Equal(t, []float64{4, 1, 3, 2, 0}, got[1], "stable: equal keys keep their order")
	got = evalText(t, module("  x = f32[2,4] constant({{1, nan, 3, 3}, {-1, -2, -3, -4}})\n  ROOT r = (f32[2,2], s32[2,2]) topk(x), k=2, largest=true"))
	require.True(t, math.IsNaN(got[0][0]), "NaN sorts above everything")
	require.Equal(t, []float64{3, -1, -2}, got[0][1:])
	require.Equal(t, []float64{1, 2, 0, 1}, got[1])
	sq := "sq {\n  a = f32[] parameter(0)\n  ROOT m = f32[] multiply(a, a)\n}"
	got = evalText(t, module("  x = f32[3] constant({1, -2, 3})\n  ROOT r = f32[3] map(x), dimensions={0}, to_apply=sq", sq))
	require.Equal(t, []float64{1, 4, 9}, got[0])
}

func TestDotAndConvolution(t *testing.T) {
	got := evalText(t, module("  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})\n  ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
	require.Equal(t, []float64{4, 5, 10, 11}, got[0])
	got = evalText(t, module("  a = s32[2,1,2] constant({{{1, 2}}, {{3, 4}}})\n  b = s32[2,2,1] constant({{{5}, {6}}, {{7}, {8}}})\n  ROOT r = s32[2,1,1] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"))
	require.Equal(t, []float64{17, 53}, got[0])
	// 1-D convolution, batch 1, one feature: [1 2 3 4] * [1 1] with pad 1.
	got = evalText(t, module("  x = f32[1,4,1] constant({{{1}, {2}, {3}, {4}}})\n  k = f32[2,1,1] constant({{{1}}, {{1}}})\n  ROOT r = f32[1,5,1] convolution(x, k), window={size=2 pad=1_1}, dim_labels=b0f_0io->b0f"))
	require.Equal(t, []float64{1, 3, 5, 7, 4}, got[0])
	// Stride 2 and rhs dilation 2.
	got = evalText(t, module("  x = f32[1,5,1] constant({{{1}, {2}, {3}, {4}, {5}}})\n  k = f32[2,1,1] constant({{{1}}, {{10}}})\n  ROOT r = f32[1,2,1] convolution(x, k), window={size=2 stride=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f"))
	require.Equal(t, []float64{31, 53}, got[0])
	// Depthwise: two features, feature_group_count=2.
	got = evalText(t, module("  x = f32[1,2,2] constant({{{1, 10}, {2, 20}}})\n  k = f32[1,1,2] constant({{{3, 4}}})\n  ROOT r = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2"))
	require.Equal(t, []float64{3, 40, 6, 80}, got[0])
	// lhs dilation (a transposed convolution).
	got = evalText(t, module("  x = f32[1,2,1] constant({{{1}, {2}}})\n  k = f32[1,1,1] constant({{{1}}})\n  ROOT r = f32[1,3,1] convolution(x, k), window={size=1 lhs_dilate=2}, dim_labels=b0f_0io->b0f"))
	require.Equal(t, []float64{1, 0, 2}, got[0])
	// An integer operand of a float product is converted to the result
	// type first (XLA's operand upcasting): 2^24+1 becomes 2^24 in f32,
	// so 1*(2^24+1) - 1*2^24 is 0, not 1 (the device computes so).
	got = evalText(t, module("  a = f32[2] constant({1, -1})\n  b = s32[2] constant({16777217, 16777216})\n  ROOT r = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"))
	require.Equal(t, []float64{0}, got[0])
	got = evalText(t, module("  x = f32[1,2,1] constant({{{1}, {-1}}})\n  k = s32[2,1,1] constant({{{16777217}}, {{16777216}}})\n  ROOT r = f32[1,1,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f"))
	require.Equal(t, []float64{0}, got[0])
}

func TestControlFlow(t *testing.T) {
	cond := "cond {\n  p = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  n = s32[] constant(5)\n  ROOT c = pred[] compare(i, n), direction=LT\n}"
	body := "body {\n  p = (s32[], f32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n  x = f32[] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  two = f32[] constant(2)\n  y = f32[] multiply(x, two)\n  ROOT t = (s32[], f32[]) tuple(j, y)\n}"
	got := evalText(t, module("  z = s32[] constant(0)\n  x = f32[] constant(1)\n  t = (s32[], f32[]) tuple(z, x)\n  ROOT w = (s32[], f32[]) while(t), condition=cond, body=body", cond, body))
	require.Equal(t, []float64{5}, got[0])
	require.Equal(t, []float64{32}, got[1])

	neg := "neg {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}"
	id := "id {\n  a = f32[] parameter(0)\n  ROOT n = f32[] copy(a)\n}"
	for _, tc := range []struct {
		sel  string
		want float64
	}{{"pred[] constant(true)", -3}, {"pred[] constant(false)", 3}, {"s32[] constant(0)", -3}, {"s32[] constant(1)", 3}, {"s32[] constant(7)", 3}, {"s32[] constant(-1)", 3}} {
		src := module(fmt.Sprintf("  b = %s\n  x = f32[] constant(3)\n  ROOT c = f32[] conditional(b, x, x), branch_computations={neg, id}", tc.sel), neg, id)
		require.Equal(t, []float64{tc.want}, evalText(t, src)[0], tc.sel)
	}
	src := module("  b = pred[] constant(false)\n  x = f32[] constant(3)\n  y = f32[] constant(4)\n  ROOT c = f32[] conditional(b, x, y), true_computation=neg, false_computation=id", neg, id)
	require.Equal(t, []float64{4}, evalText(t, src)[0], "pred form: false runs false_computation on its operand")
	// The operands are (pred, true operand, false operand) whatever order
	// the attributes come in (XLA's parser): they were once swapped with
	// the computations where false_computation came first.
	for _, tc := range []struct {
		sel  string
		want float64
	}{{"true", -3}, {"false", 4}} {
		src = module("  b = pred[] constant("+tc.sel+")\n  x = f32[] constant(3)\n  y = f32[] constant(4)\n  ROOT c = f32[] conditional(b, x, y), false_computation=id, true_computation=neg", neg, id)
		require.Equal(t, []float64{tc.want}, evalText(t, src)[0], "false_computation first, pred %s", tc.sel)
	}
	got = evalText(t, module("  x = f32[] constant(3)\n  ROOT c = f32[] call(x), to_apply=neg", neg))
	require.Equal(t, []float64{-3}, got[0])
}

func TestRngAndCollectives(t *testing.T) {
	got := evalText(t, module("  s = u64[2] constant({42, 0})\n  ROOT r = (u64[2], u32[2,3]) rng-bit-generator(s), algorithm=rng_three_fry"))
	require.Equal(t, []float64{42, 3}, got[0], "the counter advances by the half shape's size")
	require.Len(t, got[1], 6)
	got = evalText(t, module("  s = u64[3] constant({1, 2, 3})\n  ROOT r = (u64[3], u32[5]) rng-bit-generator(s), algorithm=rng_philox"))
	require.Equal(t, []float64{1, 4, 3}, got[0], "philox counts blocks of four words")
	got = evalText(t, module("  x = f32[2] constant({1, 2})\n  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add", addComp))
	require.Equal(t, []float64{1, 2}, got[0])
	got = evalText(t, module("  ROOT r = u32[] replica-id()"))
	require.Equal(t, []float64{0}, got[0])
}

// TestComplex: complex arithmetic, structure and reductions against
// values worked by hand.
func TestComplex(t *testing.T) {
	mulComp := "mul {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] multiply(a, b)\n}"
	x := "  x = c64[2] constant({(1, 2), (3, 4)})\n  y = c64[2] constant({(3, 4), (0, 1)})\n"
	for _, tc := range []struct {
		name, body string
		want       []complex128
	}{
		{"multiply", x + "  ROOT r = c64[2] multiply(x, y)", []complex128{-5 + 10i, -4 + 3i}},
		{"divide", x + "  ROOT r = c64[2] divide(x, y)", []complex128{0.44 + 0.08i, 4 - 3i}},
		{"sqrt", "  x = c64[1] constant({(-4, 0)})\n  ROOT r = c64[1] sqrt(x)", []complex128{2i}},
		{"exp", "  x = c128[1] constant({(0, 3.141592653589793)})\n  ROOT r = c128[1] exponential(x)", []complex128{-1 + 1.2246467991473532e-16i}},
		{"complex", "  a = f32[2] constant({1, 2})\n  b = f32[2] constant({3, 4})\n  ROOT r = c64[2] complex(a, b)", []complex128{1 + 3i, 2 + 4i}},
		{"convert", "  a = f32[2] constant({1, 2})\n  ROOT r = c128[2] convert(a)", []complex128{1, 2}},
		{"dot", x + "  ROOT r = c64[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}", []complex128{-5 + 10i - 4 + 3i}},
		{"reduce", x + "  one = c64[] constant((1, 0))\n  ROOT r = c64[] reduce(x, one), dimensions={0}, to_apply=mul", []complex128{-5 + 10i}},
		{"transpose", "  x = c64[2,1] constant({{(1, 2)}, {(3, 4)}})\n  ROOT r = c64[1,2] transpose(x), dimensions={1,0}", []complex128{1 + 2i, 3 + 4i}},
		{"convolution", "  x = c64[1,3,1] constant({{{(1, 1)}, {(2, 0)}, {(0, 1)}}})\n  k = c64[2,1,1] constant({{{(1, 0)}}, {{(0, 1)}}})\n  ROOT r = c64[1,2,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f",
			[]complex128{1 + 3i, 1}}, // (1+i)*1 + 2*i, 2*1 + i*i
	} {
		m, err := hlo.Parse("op.hlo", module(tc.body, mulComp))
		require.NoError(t, err, tc.name)
		v, err := Run(m)
		require.NoError(t, err, tc.name)
		l := v.Leaves()[0]
		for i, w := range tc.want {
			got := get(l, int64(i)).c
			require.InDelta(t, real(w), real(got), 1e-6, "%s[%d] = %v", tc.name, i, got)
			require.InDelta(t, imag(w), imag(got), 1e-6, "%s[%d] = %v", tc.name, i, got)
		}
	}
	got := evalText(t, module("  x = c64[2] constant({(3, 4), (0, 1)})\n  ROOT r = f32[2] abs(x)"))
	require.Equal(t, []float64{5, 1}, got[0])
	got = evalText(t, module("  x = c64[2] constant({(3, 4), (0, 1)})\n  y = c64[2] constant({(3, 4), (1, 1)})\n  ROOT r = pred[2] compare(x, y), direction=EQ"))
	require.Equal(t, []float64{1, 0}, got[0])
}

// TestComplexHardCases: XLA's sign divides each part by |x| (an
// infinite part over an infinite modulus is NaN, a finite one 0), and
// exp, sin and cos of a huge part reduce it exactly: glibc's
// cos(1e30) = -0.9999564608959665 and sin(1e30) = 0.009331468931175825,
// where Go's math.Sincos is 58 ulps off (the GoMLX harness found both).
func TestComplexHardCases(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       complex128
	}{
		{"sign-inf", "  x = c128[1] constant({(-inf, 0.8)})\n  ROOT r = c128[1] sign(x)", complex(math.NaN(), 0)},
		{"sign-inf-im", "  x = c128[1] constant({(-0, -inf)})\n  ROOT r = c128[1] sign(x)", complex(math.Copysign(0, -1), math.NaN())},
		{"exp-huge", "  x = c128[1] constant({(0, 1e30)})\n  ROOT r = c128[1] exponential(x)", complex(-0.9999564608959665, 0.009331468931175825)},
		{"sin-huge", "  x = c128[1] constant({(1e30, 0)})\n  ROOT r = c128[1] sine(x)", complex(0.009331468931175825, math.Copysign(0, -1))},  // cos(1e30) * +0
		{"cos-huge", "  x = c128[1] constant({(1e30, 0)})\n  ROOT r = c128[1] cosine(x)", complex(-0.9999564608959665, math.Copysign(0, -1))}, // -sin(1e30) * +0
		{"sin-inf", "  x = c64[1] constant({(-inf, 0)})\n  ROOT r = c64[1] sine(x)", complex(math.NaN(), math.NaN())},                         // XLA's formula, not C99's (NaN, 0)
		// XLA's expm1 selects a zero imaginary part: e^inf * sin 0 is not
		// NaN.
		{"expm1-inf", "  x = c128[1] constant({(inf, 0)})\n  ROOT r = c128[1] exponential-minus-one(x)", complex(math.Inf(1), 0)},
		// Past |355| the sum cosh 2a + cos 2b overflows: tanh and tan are
		// +-1 in the part whose argument is large, not inf / inf.
		{"tanh-large", "  x = c128[1] constant({(31782.52, -23186.23)})\n  ROOT r = c128[1] tanh(x)", complex(1, 0)},
		{"tanh-large-negative", "  x = c128[1] constant({(-400, 1)})\n  ROOT r = c128[1] tanh(x)", complex(-1, 0)},
		{"tan-large", "  x = c128[1] constant({(1, 400)})\n  ROOT r = c128[1] tan(x)", complex(0, 1)},
	} {
		m, err := hlo.Parse("op.hlo", module(tc.body))
		require.NoError(t, err, tc.name)
		v, err := Run(m)
		require.NoError(t, err, tc.name)
		got := get(v.Leaves()[0], 0).c
		for _, p := range [][2]float64{{real(tc.want), real(got)}, {imag(tc.want), imag(got)}} {
			if math.IsNaN(p[0]) {
				require.True(t, math.IsNaN(p[1]), "%s = %v, want %v", tc.name, got, tc.want)
				continue
			}
			require.Equal(t, math.Float64bits(p[0]), math.Float64bits(p[1]), "%s = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSmallFloats: the f8, f6 and f4 types compute and round each result
// to the type (f4e2m1fn saturates at 6; e8m0fnu keeps powers of two).
func TestSmallFloats(t *testing.T) {
	got := evalText(t, module("  x = f8e4m3fn[2] constant({1, 0.3})\n  ROOT r = f8e4m3fn[2] add(x, x)"))
	require.Equal(t, []float64{2, 0.625}, got[0])
	got = evalText(t, module("  x = f4e2m1fn[2] constant({4, 1.5})\n  ROOT r = f4e2m1fn[2] add(x, x)"))
	require.Equal(t, []float64{6, 3}, got[0])
	got = evalText(t, module("  x = f8e8m0fnu[2] constant({4, 0.5})\n  ROOT r = f8e8m0fnu[2] multiply(x, x)"))
	require.Equal(t, []float64{16, 0.25}, got[0])
}

func TestRefusesOutsideTheSet(t *testing.T) {
	for _, src := range []string{
		module("  a = f32[8] parameter(0)\n  ROOT r = f32[8] rng(a, a), distribution=rng_uniform"),
		module("  x = f32[2] constant({1, 2})\n  ROOT r = f32[2] custom-call(x), custom_call_target=\"foo\""),
	} {
		m, err := hlo.Parse("op.hlo", src)
		require.NoError(t, err)
		_, err = Run(m)
		var un *Unsupported
		require.ErrorAs(t, err, &un, src)
	}
}

// TestFloatDotOrder: dot's float results, four neighbours at a time
// (floatDot), are the sums in contraction order one at a time, bit for
// bit in f64: batch dimensions, two contracting dimensions, a last
// dimension that leaves a partial block, and an output split among
// cores mid-block.
func TestFloatDotOrder(t *testing.T) {
	for _, c := range []struct{ b, m, k1, k2, n int64 }{{3, 5, 70, 2, 9}, {2, 64, 33, 1, 67}} {
		seed := uint64(1)
		fill := func(dims ...int64) (*hlo.Literal, []float64) {
			l := newLit(hlo.F64, dims)
			xs := make([]float64, l.Shape.NumElements())
			for i := range xs {
				seed = seed*6364136223846793005 + 1442695040888963407
				xs[i] = float64(int64(seed>>11)%2000001-1000000) / 7777
				put(l.Data, hlo.F64, int64(i), scalar{f: xs[i]})
			}
			return l, xs
		}
		lhs, a := fill(c.b, c.m, c.k1, c.k2)
		rhs, r := fill(c.b, c.k1, c.k2, c.n)
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = f64[%d,%d,%d,%d] parameter(0)\n  r = f64[%d,%d,%d,%d] parameter(1)\n  ROOT d = f64[%d,%d,%d] dot(a, r), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2,3}, rhs_contracting_dims={1,2}\n}\n",
			c.b, c.m, c.k1, c.k2, c.b, c.k1, c.k2, c.n, c.b, c.m, c.n)
		m, err := hlo.Parse("dot.hlo", src)
		require.NoError(t, err)
		v, err := Run(m, lhs, rhs)
		require.NoError(t, err)
		for b := range c.b {
			for i := range c.m {
				for j := range c.n {
					var acc float64
					for k1 := range c.k1 {
						for k2 := range c.k2 {
							acc += a[((b*c.m+i)*c.k1+k1)*c.k2+k2] * r[((b*c.k1+k1)*c.k2+k2)*c.n+j]
						}
					}
					got := get(v.Lit, (b*c.m+i)*c.n+j).f
					require.Equal(t, math.Float64bits(acc), math.Float64bits(got), "%+v at [%d,%d,%d]", c, b, i, j)
				}
			}
		}
	}
}

// TestSummedInF32: RunSummedInF32 rounds each product and partial sum of
// a float dot or convolution to f32, as a device sums; Run sums in
// float64 and rounds once. 1e8 + 1 - 1e8 is 1 in float64, 0 in f32.
func TestSummedInF32(t *testing.T) {
	for _, body := range []string{
		"  a = f32[3] constant({1e8, 1, -1e8})\n  b = f32[3] constant({1, 1, 1})\n  ROOT r = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
		"  x = f32[1,3,1] constant({{{1e8}, {1}, {-1e8}}})\n  k = f32[3,1,1] constant({{{1}}, {{1}}, {{1}}})\n  ROOT r = f32[1,1,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f",
	} {
		m, err := hlo.Parse("sum.hlo", module(body))
		require.NoError(t, err)
		exact, err := Run(m)
		require.NoError(t, err)
		summed, err := RunSummedInF32(m, MaxTrips)
		require.NoError(t, err)
		require.Equal(t, 1.0, toF(get(exact.Lit, 0), hlo.F32), body)
		require.Equal(t, 0.0, toF(get(summed.Lit, 0), hlo.F32), body)
	}
}

// TestRunNudged: an inexact op's result moves one ulp of its type each
// way, and what follows it carries the move, amplified; exact ops are
// not moved.
func TestRunNudged(t *testing.T) {
	m, err := hlo.Parse("n.hlo", module("  x = f32[2] constant({1, 4})\n  y = f32[2] exponential-minus-one(x)\n  ROOT r = f32[2] exponential(y)"))
	require.NoError(t, err)
	plain, err := Run(m)
	require.NoError(t, err)
	up, err := RunNudged(m, MaxTrips, 1, nil...)
	require.NoError(t, err)
	down, err := RunNudged(m, MaxTrips, -1, nil...)
	require.NoError(t, err)
	for i := int64(0); i < 2; i++ {
		p, u, d := toF(get(plain.Lit, i), hlo.F32), toF(get(up.Lit, i), hlo.F32), toF(get(down.Lit, i), hlo.F32)
		require.Less(t, d, p)
		require.Less(t, p, u)
	}
	// y = e^4 - 1 = 53.6, whose ulp is 2^-18: e^y moves by a factor
	// e^(2^-18), 3.8e-6 relative, some 30 of its own ulps (2^-23), where
	// the nudge of e^y itself is one.
	p, u := toF(get(plain.Lit, 1), hlo.F32), toF(get(up.Lit, 1), hlo.F32)
	require.Greater(t, (u-p)/p, 20*0x1p-23, "the move of y, amplified")
	m, err = hlo.Parse("n.hlo", module("  x = f32[1] constant({3})\n  ROOT r = f32[1] add(x, x)"))
	require.NoError(t, err)
	up, err = RunNudged(m, MaxTrips, 1, nil...)
	require.NoError(t, err)
	require.Equal(t, 6.0, toF(get(up.Lit, 0), hlo.F32), "an add is exact: not moved")
	// nudged is body's first result nudged in direction dir (0: not).
	nudged := func(body string, dir int) *hlo.Literal {
		m, err := hlo.Parse("n.hlo", module(body))
		require.NoError(t, err)
		v, err := RunNudged(m, MaxTrips, dir, nil...)
		require.NoError(t, err)
		return v.Leaves()[0]
	}
	// nudgedUp is the first complex result of body, plain and nudged up.
	nudgedUp := func(body string) (plain, up complex128) {
		return get(nudged(body, 0), 0).c, get(nudged(body, 1), 0).c
	}
	// A complex result moves its real part by an ulp of its modulus and
	// its imaginary part by three quarters of that (move): e^(1+2i) =
	// (-1.13, 2.47) of modulus e, whose f32 ulp is 2^-22, as is the
	// imaginary part's, which moves by one of its ulps (3/4 rounded).
	p0, u0 := nudgedUp("  x = c64[1] constant({(1, 2)})\n  ROOT r = c64[1] exponential(x)")
	require.Equal(t, real(p0)+0x1p-22, real(u0))
	require.Equal(t, imag(p0)+0x1p-22, imag(u0))
	// A complex power by 1 + |y log x| of them: 2^(10i) = e^(6.93i), of
	// modulus 1, moves by 7.93 ulps of 1 (2^-23), rounded to the parts'
	// own ulps.
	p0, u0 = nudgedUp("  x = c64[1] constant({(2, 0)})\n  y = c64[1] constant({(0, 10)})\n  ROOT r = c64[1] power(x, y)")
	require.InDelta(t, (1+10*math.Ln2)*0x1p-23, real(u0)-real(p0), 0x1p-24)
	require.InDelta(t, (1+10*math.Ln2)*0x1p-23*3/4, imag(u0)-imag(p0), 0x1p-24)
	// An FFT by 1 + log2 n units of roundoff of its slice's magnitude,
	// zeros too: the spectrum of (2, 0, 0, 0) is 2 everywhere, of
	// magnitude 2 and length 4, so it moves by 2 * 3 * 2^-23 (its
	// imaginary part by three quarters of that); a slice with an
	// infinity, to 0.
	fft := "  x = c64[2,4] constant({{(2, 0), (0, 0), (0, 0), (0, 0)}, {(inf, 0), (1, 0), (0, 0), (0, 0)}})\n  ROOT r = c64[2,4] fft(x), fft_type=FFT, fft_length={4}"
	p0, u0 = nudgedUp(fft)
	require.Equal(t, complex(2, 0), p0)
	require.Equal(t, complex(2+6*0x1p-23, 4.5*0x1p-23), u0)
	fftUp := nudged(fft, 1)
	for i := int64(4); i < 8; i++ {
		require.Equal(t, complex128(0), get(fftUp, i).c)
	}
	// A bin within the bound of 0 may be 0: the spectrum of (1, 1, 1, 1)
	// is (4, 0, 0, 0); nudged up, its zeros move, nudged down, they stay.
	ones := "  x = c64[4] constant({(1, 0), (1, 0), (1, 0), (1, 0)})\n  ROOT r = c64[4] fft(x), fft_type=FFT, fft_length={4}"
	onesUp, onesDown := nudged(ones, 1), nudged(ones, -1)
	require.NotEqual(t, complex128(0), get(onesUp, 1).c)
	require.Equal(t, complex128(0), get(onesDown, 1).c)
	require.Less(t, real(get(onesDown, 0).c), 4.0)
	// A triangular solve by its error bound M(m)^-1 (n+1) u |m| |y|: m =
	// [[2, 0], [1, 4]], b = (2, 5), y = (1, 1), (n+1) u = r = 3 * 2^-23:
	// y_0 moves by r 2 / 2 = r, y_1 by (r (4 + 1) + 1 r) / 4 = 1.5 r.
	solveUp := nudged("  a = f32[2,2] constant({{2, 0}, {1, 4}})\n  b = f32[2,1] constant({{2}, {5}})\n  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE", 1)
	r := 3 * 0x1p-23 // (n+1) units of roundoff
	require.InDelta(t, 1+r, toF(get(solveUp, 0), hlo.F32), 0x1p-24)
	require.InDelta(t, 1+1.5*r, toF(get(solveUp, 1), hlo.F32), 0x1p-23)
	// A Cholesky factor by its first-order bound |l| phi(M^-1 |da| M^-T):
	// of diag(4, 9), l = diag(2, 3), |da| = r diag(4, 9), so l_00 moves
	// by 2 (r 4 / 4) / 2 = r and l_11 by 3 (r 9 / 9) / 2 = 1.5 r.
	factorUp := nudged("  a = f32[2,2] constant({{4, 0}, {0, 9}})\n  ROOT l = f32[2,2] cholesky(a), lower=true", 1)
	require.InDelta(t, 2+r, toF(get(factorUp, 0), hlo.F32), 0x1p-23)
	require.InDelta(t, 3+1.5*r, toF(get(factorUp, 3), hlo.F32), 0x1p-22)
	require.Equal(t, 0.0, toF(get(factorUp, 1), hlo.F32), "the other triangle stays 0")
	// A singular matrix's last pivot is 0, where rounding decides whether
	// the factorization fails: each element of the nudged factor is what
	// the plain one's is not, NaN for finite and 0 for NaN (l_11 is 0/0
	// here, and was NaN nudged too: FuzzMutants, seed 150 mutation 841,
	// where the device's pivot came out 7.6e-6 and l_11 0.0028), so that
	// no reference agrees on it.
	singular := "  a = f32[2,2] constant({{4, 4}, {4, 4}})\n  ROOT l = f32[2,2] cholesky(a), lower=true"
	require.Equal(t, 2.0, toF(get(nudged(singular, 0), 0), hlo.F32))
	require.True(t, math.IsNaN(toF(get(nudged(singular, 0), 3), hlo.F32)))
	require.True(t, math.IsNaN(toF(get(nudged(singular, 1), 0), hlo.F32)))
	require.Equal(t, 0.0, toF(get(nudged(singular, 1), 3), hlo.F32))
}

// TestEmptyMatrices: a triangular solve and a Cholesky factorization of
// 0 x 0 matrices give empty results (the batch count was the element
// count divided by n*n: a panic).
func TestEmptyMatrices(t *testing.T) {
	for _, body := range []string{
		"  a = f32[2,0,0] parameter(0)\n  b = f32[2,0,3] parameter(1)\n  ROOT x = f32[2,0,3] triangular-solve(a, b), left_side=true, lower=false, unit_diagonal=false, transpose_a=TRANSPOSE",
		"  a = c64[3,0,0] parameter(0)\n  ROOT l = c64[3,0,0] cholesky(a), lower=false",
	} {
		m, err := hlo.Parse("e.hlo", module(body))
		require.NoError(t, err)
		var args []*hlo.Literal
		for _, p := range m.Entry.Params {
			args = append(args, &hlo.Literal{Shape: p.Shape})
		}
		v, err := Run(m, args...)
		require.NoError(t, err, body)
		require.Empty(t, v.Lit.Data)
	}
}

// TestSubByteCounts: a bit count wraps in its type like any result, and
// its byte holds it sign-extended, as the device's does: an s2's count
// of 2 is -2, byte 0xfe.
func TestSubByteCounts(t *testing.T) {
	for _, tc := range []struct {
		op   string
		want []byte
	}{
		{"count-leading-zeros", []byte{0xfe, 0, 1}},
		{"popcnt", []byte{0, 0xfe, 1}},
	} {
		m, err := hlo.Parse("op.hlo", module("  x = s2[3] constant({0, -1, 1})\n  ROOT r = s2[3] "+tc.op+"(x)"))
		require.NoError(t, err)
		v, err := Run(m)
		require.NoError(t, err)
		require.Equal(t, tc.want, v.Lit.Data, tc.op)
	}
}

// TestComplexInverseFunctions: the evaluator's complex asin, acos,
// asinh, acosh and atanh (Hull et al.'s algorithm and identities, which
// the device's expansions follow) are principal values that the forward
// functions take back to z, and agree with Go's math/cmplx away from the
// places where cmplx's formulas lose digits (1 - z^2 overflowing or
// cancelling) or take the other side of a cut.
func TestComplexInverseFunctions(t *testing.T) {
	parts := []float64{0, 1e-20, 1e-5, 0.5, 1, 1.5, 10, 1e10, 1e200}
	for _, p := range slices.Clone(parts) {
		parts = append(parts, -p)
	}
	parts[len(parts)/2] = math.Copysign(0, -1)
	call := func(op hlo.Opcode, z complex128) complex128 {
		r, err := complexOp(op, hlo.C128, "", nil, []scalar{{c: z}})
		require.NoError(t, err)
		return r.c
	}
	// near: within tol of |want| + |w|, where w is the value the forward
	// function took (cos(acos 0) is cos of pi/2 rounded, 6e-17 from 0).
	near := func(got, want, w complex128, tol float64) bool {
		return cmplx.Abs(got-want) <= tol*(cmplx.Abs(want)+cmplx.Abs(w))
	}
	for _, a := range parts {
		for _, b := range parts {
			z := complex(a, b)
			as, ac := call(hlo.OpAsin, z), call(hlo.OpAcos, z)
			ash, ach, ath := call(hlo.OpAsinh, z), call(hlo.OpAcosh, z), call(hlo.OpAtanh, z)
			require.True(t, math.Abs(real(as)) <= math.Pi/2 && real(ac) >= 0 && real(ac) <= math.Pi, "asin/acos(%v) = %v, %v", z, as, ac)
			// (atanh's poles at +-1 have a NaN imaginary part.)
			require.True(t, real(ach) >= 0 && !(math.Abs(imag(ath)) > math.Pi/2), "acosh/atanh(%v) = %v, %v", z, ach, ath)
			// The parts' signs follow z's (asin is odd in each part).
			require.Equal(t, math.Signbit(a), math.Signbit(real(as)), "asin(%v) = %v", z, as)
			require.Equal(t, math.Signbit(b), math.Signbit(imag(as)), "asin(%v) = %v", z, as)
			if cmplx.Abs(z) < 1e100 {
				require.True(t, near(call(hlo.OpSin, as), z, as, 1e-13), "sin(asin(%v)) = %v", z, call(hlo.OpSin, as))
				require.True(t, near(call(hlo.OpCos, ac), z, ac, 1e-13), "cos(acos(%v)) = %v", z, call(hlo.OpCos, ac))
				require.True(t, near(call(hlo.OpSinh, ash), z, ash, 1e-13), "sinh(asinh(%v)) = %v", z, call(hlo.OpSinh, ash))
				require.True(t, near(call(hlo.OpCosh, ach), z, ach, 1e-13), "cosh(acosh(%v)) = %v", z, call(hlo.OpCosh, ach))
			}
			if m := cmplx.Abs(z); m > 1e-3 && m < 1e3 && math.Abs(b) > 1e-3 {
				for _, c := range []struct {
					op   hlo.Opcode
					got  complex128
					want func(complex128) complex128
				}{{hlo.OpAsin, as, cmplx.Asin}, {hlo.OpAcos, ac, cmplx.Acos}, {hlo.OpAsinh, ash, cmplx.Asinh}, {hlo.OpAcosh, ach, cmplx.Acosh}, {hlo.OpAtanh, ath, cmplx.Atanh}} {
					require.True(t, near(c.got, c.want(z), 0, 1e-12), "%s(%v) = %v, cmplx %v", c.op, z, c.got, c.want(z))
				}
			}
		}
	}
}

// TestScalarReduceWindowWithoutWindow: a reduce-window of a scalar may
// leave its window out (the empty one, as XLA's parser makes it); the
// evaluator dereferenced the missing window (FuzzMutants, seed 234
// mutation 685), and lower's loop fusion too.
func TestScalarReduceWindowWithoutWindow(t *testing.T) {
	got := evalText(t, "HloModule rw\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT c = f64[] add(a, b)\n}\nENTRY e {\n  x = f64[] constant(2.5)\n  i = f64[] constant(1)\n  ROOT r = f64[] reduce-window(x, i), to_apply=add\n}\n")
	require.Equal(t, []float64{3.5}, got[0])
}

// TestComplexMultiplyFused holds cmul to XLA's form, (fma(a, c, -bd),
// fma(b, c, ad)), each fma computed here exactly with big.Float and
// rounded once: on random parts whose products cancel, and where f32's
// fma must not round twice (x*y just below half an ulp of an odd z).
func TestComplexMultiplyFused(t *testing.T) {
	fma := func(x, y, z float64, f32 bool) float64 {
		if r := x*y + z; math.IsNaN(r) || math.IsInf(r, 0) || r == 0 {
			return r
		}
		p := new(big.Float).SetPrec(300).SetFloat64(x)
		p.Mul(p, new(big.Float).SetFloat64(y)).Add(p, new(big.Float).SetFloat64(z))
		if f32 {
			r, _ := p.Float32()
			return float64(r)
		}
		r, _ := p.Float64()
		return r
	}
	rng := rand.New(rand.NewSource(7))
	for _, ct := range []hlo.ElementType{hlo.C64, hlo.C128} {
		f32 := ct == hlo.C64
		rnd := func(v float64) float64 {
			if f32 {
				return float64(float32(v))
			}
			return v
		}
		xs := [][4]float64{{1 + 0x1p-13, 0, (1 - 0x1p-13) * 0x1p-24, 0}, {1 + 0x1p-27, 0, (1 - 0x1p-27) * 0x1p-53, 0}}
		for i := 0; i < 3000; i++ {
			a, b := rng.NormFloat64()*1e3, rng.NormFloat64()
			c := rng.NormFloat64()
			// d near a c / b, so that ac - bd cancels.
			xs = append(xs, [4]float64{a, b, c, a * c / b * (1 + rng.NormFloat64()*1e-6)})
		}
		for _, v := range xs {
			a, b, c, d := rnd(v[0]), rnd(v[1]), rnd(v[2]), rnd(v[3])
			got := cmul(ct, complex(a, b), complex(c, d))
			wantRe := fma(a, c, -rnd(b*d), f32)
			wantIm := fma(b, c, rnd(a*d), f32)
			require.Equal(t, wantRe, real(got), "%s re (%g,%g)*(%g,%g)", ct, a, b, c, d)
			require.Equal(t, wantIm, imag(got), "%s im (%g,%g)*(%g,%g)", ct, a, b, c, d)
		}
		if f32 {
			// fma32 itself where f32's two roundings differ from one.
			x, y, z := 1+0x1p-13, (1-0x1p-13)*0x1p-24, 1+0x1p-23
			require.Equal(t, fma(x, y, z, true), fma32(x, y, z))
			require.NotEqual(t, float64(float32(x*y)+float32(z)), fma32(x, y, z), "the case must tell one rounding from two")
			// and where the f64 sum, rounded to nearest, would land on
			// an f32 midpoint (found by search).
			x, y = 1.59856116771698, 3.728643349631966e-08
			require.Equal(t, fma(x, y, z, true), fma32(x, y, z))
			require.NotEqual(t, float64(float32(x*y+z)), fma32(x, y, z), "the case must need rounding to odd")
		}
	}
}

// TestScan: XLA's scan, in XLA's own test forms (a running sum whose
// to_apply returns the sum as output and carry; the input first, the
// carry last), forward and reversed, along dimension 1 of a matrix with
// a vector carry, two inputs and two carries, an output alone and a
// carry alone (one value, not a tuple), and a dimension of length 0. The
// running sums are checked against the evaluator's own reduce-window
// cumulative sum of the same input too.
func TestScan(t *testing.T) {
	sum := "add_comp {\n  in = f32[] parameter(0)\n  carry = f32[] parameter(1)\n  add = f32[] add(carry, in)\n  ROOT t = (f32[], f32[]) tuple(add, add)\n}"
	x := "  x = f32[5] constant({1, 2, 3, 4, 5})\n  z = f32[] constant(10)\n"
	got := evalText(t, module(x+"  ROOT s = (f32[5], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_associative=true, to_apply=add_comp", sum))
	require.Equal(t, [][]float64{{11, 13, 16, 20, 25}, {25}}, got)
	got = evalText(t, module(x+"  ROOT s = (f32[5], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add_comp", sum))
	require.Equal(t, [][]float64{{25, 24, 22, 19, 15}, {25}}, got)
	zero := "  zero = f32[] constant(0)\n"
	cum := evalText(t, module(x+zero+"  ROOT c = f32[5] reduce-window(x, zero), window={size=5 pad=4_0}, to_apply=add", addComp))
	scan := evalText(t, module(x+zero+"  s = (f32[5], f32[]) scan(x, zero), dimensions={0}, num_carries=1, to_apply=add_comp\n  ROOT c = f32[5] get-tuple-element(s), index=0", sum))
	require.Equal(t, cum, scan)

	rows := "rows {\n  in = f32[2] parameter(0)\n  carry = f32[2] parameter(1)\n  add = f32[2] add(carry, in)\n  ROOT t = (f32[2], f32[2]) tuple(add, add)\n}"
	got = evalText(t, module("  x = f32[2,3] constant({{1, 2, 3}, {10, 20, 30}})\n  z = f32[2] constant({0, 100})\n  ROOT s = (f32[2,3], f32[2]) scan(x, z), dimensions={1}, num_carries=1, to_apply=rows", rows))
	require.Equal(t, [][]float64{{1, 3, 6, 110, 130, 160}, {6, 160}}, got, "along dimension 1, the output stacked there")

	// Two inputs and two carries: outputs a*b and the running max of a,
	// carries the running sum of b and the step count.
	two := "two {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  m = f32[] parameter(2)\n  n = s32[] parameter(3)\n  bf = f32[] convert(b)\n  ab = f32[] multiply(a, bf)\n  mx = f32[] maximum(m, a)\n  nb = s32[] add(n, b)\n  ROOT t = (f32[], f32[], f32[], s32[]) tuple(ab, mx, mx, nb)\n}"
	got = evalText(t, module("  a = f32[4] constant({3, -1, 7, 2})\n  b = s32[4] constant({1, 2, 3, 4})\n  m = f32[] constant(-inf)\n  n = s32[] constant(0)\n  ROOT s = (f32[4], f32[4], f32[], s32[]) scan(a, b, m, n), dimensions={0}, num_carries=2, to_apply=two", two))
	require.Equal(t, [][]float64{{3, -2, 21, 8}, {3, 3, 7, 7}, {7}, {10}}, got)

	neg := "neg {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}"
	got = evalText(t, module(x+"  ROOT s = f32[5] scan(x), dimensions={0}, num_carries=0, to_apply=neg", neg))
	require.Equal(t, [][]float64{{-1, -2, -3, -4, -5}}, got, "an output alone")
	fold := "fold {\n  a = f32[] parameter(0)\n  c = f32[] parameter(1)\n  h = f32[] constant(0.5)\n  ch = f32[] multiply(c, h)\n  ROOT n = f32[] add(ch, a)\n}"
	got = evalText(t, module(x+"  ROOT s = f32[] scan(x, z), dimensions={0}, num_carries=1, to_apply=fold", fold))
	require.Equal(t, [][]float64{{8.375}}, got, "a carry alone: ((((10/2+1)/2+2)/2+3)/2+4)/2+5")
	got = evalText(t, module("  x = f32[0,2] constant({})\n  z = f32[2] constant({4, 5})\n  ROOT s = (f32[0,2], f32[2]) scan(x, z), dimensions={0}, num_carries=1, to_apply=rows", rows))
	require.Equal(t, [][]float64{nil, {4, 5}}, got, "no steps: the initial carries")
}
