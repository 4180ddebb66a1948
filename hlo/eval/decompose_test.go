package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

func f64Lit(dims []int64, v []float64) *hlo.Literal {
	l := zeros(hlo.ArrayShape(hlo.F64, dims...))
	for i, x := range v {
		put(l.Data, hlo.F64, int64(i), scalar{f: x})
	}
	return l
}

func f64s(l *hlo.Literal) []float64 {
	out := make([]float64, l.Shape.NumElements())
	for i := range out {
		out[i] = get(l, int64(i)).f
	}
	return out
}

// TestBatchNormByHand: batch-norm-training of [[1, 2], [3, 4]] over
// feature dimension 1 normalizes each column (means 2 and 3, variances
// 1) to -1 and 1; inference with that mean and variance gives the same.
func TestBatchNormByHand(t *testing.T) {
	m, err := hlo.Parse("bn.hlo", `HloModule bn
ENTRY e {
  x = f64[2,2] parameter(0)
  s = f64[2] parameter(1)
  o = f64[2] parameter(2)
  tr = (f64[2,2], f64[2], f64[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
  mean = f64[2] get-tuple-element(tr), index=1
  var = f64[2] get-tuple-element(tr), index=2
  inf = f64[2,2] batch-norm-inference(x, s, o, mean, var), epsilon=0, feature_index=1
  ROOT r = ((f64[2,2], f64[2], f64[2]), f64[2,2]) tuple(tr, inf)
}`)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m, f64Lit([]int64{2, 2}, []float64{1, 2, 3, 4}), f64Lit([]int64{2}, []float64{1, 1}), f64Lit([]int64{2}, []float64{0, 0}))
	require.NoError(t, err)
	require.Equal(t, []float64{-1, -1, 1, 1}, f64s(v.Tuple[0].Tuple[0].Lit))
	require.Equal(t, []float64{2, 3}, f64s(v.Tuple[0].Tuple[1].Lit))
	require.Equal(t, []float64{1, 1}, f64s(v.Tuple[0].Tuple[2].Lit))
	require.Equal(t, []float64{-1, -1, 1, 1}, f64s(v.Tuple[1].Lit))
}

// TestBatchNormGradByDifferences: batch-norm-grad's three gradients,
// given the batch's mean and variance, are those of L = sum(dy *
// batch-norm-training(x, scale, offset)), x's moving L through the mean
// and variance too, measured by central differences in f64.
func TestBatchNormGradByDifferences(t *testing.T) {
	const n, c, h = 3, 4, 2 // operand [n, c, h], features on dimension 1
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return v
	}
	x, scale, offset, dy := gen(n*c*h), gen(c), gen(c), gen(n*c*h)
	train, err := hlo.Parse("t.hlo", fmt.Sprintf(`HloModule t
ENTRY e {
  x = f64[%d,%d,%d] parameter(0)
  s = f64[%d] parameter(1)
  o = f64[%d] parameter(2)
  ROOT t = (f64[%d,%d,%d], f64[%d], f64[%d]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}`, n, c, h, c, c, n, c, h, c, c))
	require.NoError(t, err)
	xd, fd := []int64{n, c, h}, []int64{c}
	loss := func(x, scale, offset []float64) (float64, []float64, []float64) {
		v, err := Run(train, f64Lit(xd, x), f64Lit(fd, scale), f64Lit(fd, offset))
		require.NoError(t, err)
		y := f64s(v.Tuple[0].Lit)
		l := 0.0
		for i := range y {
			l += dy[i] * y[i]
		}
		return l, f64s(v.Tuple[1].Lit), f64s(v.Tuple[2].Lit)
	}
	_, mean, variance := loss(x, scale, offset)
	grad, err := hlo.Parse("g.hlo", fmt.Sprintf(`HloModule g
ENTRY e {
  x = f64[%d,%d,%d] parameter(0)
  s = f64[%d] parameter(1)
  m = f64[%d] parameter(2)
  v = f64[%d] parameter(3)
  dy = f64[%d,%d,%d] parameter(4)
  ROOT g = (f64[%d,%d,%d], f64[%d], f64[%d]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=1
}`, n, c, h, c, c, c, n, c, h, n, c, h, c, c))
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(grad))
	g, err := Run(grad, f64Lit(xd, x), f64Lit(fd, scale), f64Lit(fd, mean), f64Lit(fd, variance), f64Lit(xd, dy))
	require.NoError(t, err)
	const d = 1e-6
	diff := func(vs []float64, i int, at func() float64) float64 {
		old := vs[i]
		vs[i] = old + d
		up := at()
		vs[i] = old - d
		down := at()
		vs[i] = old
		return (up - down) / (2 * d)
	}
	l := func() float64 { v, _, _ := loss(x, scale, offset); return v }
	for k, want := range []struct {
		vs  []float64
		got []float64
	}{{x, f64s(g.Tuple[0].Lit)}, {scale, f64s(g.Tuple[1].Lit)}, {offset, f64s(g.Tuple[2].Lit)}} {
		for i := range want.vs {
			require.InDelta(t, diff(want.vs, i, l), want.got[i], 1e-6, "gradient %d, element %d", k, i)
		}
	}
}

// TestBatchNormRefusals: malformed batch-norm ops are refused with
// their reason by the verifier.
func TestBatchNormRefusals(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"ROOT t = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=2", "feature_index=2 is not a dimension"},
		{"ROOT t = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, o), feature_index=1", "needs epsilon"},
		{"ROOT t = (f32[2,3], f32[2], f32[2]) batch-norm-training(x, s2, s2), epsilon=0.001, feature_index=1", "operand 1 must be f32[3]"},
		{"ROOT t = f32[2,3] batch-norm-inference(x, s, o), epsilon=0.001, feature_index=1", "takes 5 operands"},
	} {
		src := "HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n  o = f32[3] parameter(2)\n  s2 = f32[2] parameter(3)\n  " + tc.body + "\n}\n"
		m, err := hlo.Parse("m.hlo", src)
		if err == nil {
			err = hlo.Verify(m)
		}
		require.Error(t, err, tc.body)
		require.True(t, strings.Contains(err.Error(), tc.want), "%v", err)
	}
}

// TestStochasticConvertByHand: 2.25 has the fraction 0.25, 2^30 of 2^32:
// random bits below 2^30 round it up to 3, others down to 2; -2.25
// alike to -3 and -2; NaN is 0, values past s32's range saturate.
func TestStochasticConvertByHand(t *testing.T) {
	m, err := hlo.Parse("sc.hlo", `HloModule sc
ENTRY e {
  x = f32[8] constant({2.25, 2.25, -2.25, -2.25, nan, 1e10, -1e10, 0.5})
  r = u32[8] constant({1073741823, 1073741824, 1073741823, 1073741824, 0, 0, 0, 2147483648})
  ROOT c = s32[8] stochastic-convert(x, r)
}`)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m)
	require.NoError(t, err)
	var got []int64
	for i := range int64(8) {
		got = append(got, get(v.Lit, i).i)
	}
	require.Equal(t, []int64{3, 2, -3, -2, 0, math.MaxInt32, math.MinInt32, 0}, got)
	for _, bad := range []string{
		"ROOT c = u32[8] stochastic-convert(x, r)",
		"ROOT c = f16[8] stochastic-convert(x, r)",
		"r2 = u16[8] convert(r)\n  ROOT c = s32[8] stochastic-convert(x, r2)",
	} {
		src := "HloModule sc\nENTRY e {\n  x = f32[8] parameter(0)\n  r = u32[8] parameter(1)\n  " + bad + "\n}\n"
		m, err := hlo.Parse("sc.hlo", src)
		require.NoError(t, err)
		require.ErrorContains(t, hlo.Verify(m), "stochastic-convert", bad)
	}
}

// TestRaggedDotByHand: rows 1, 2, 3 in groups of sizes (1, 2) are
// multiplied by 10 and 100; with sizes (1, 1) the last row is in no
// group and is 0.
func TestRaggedDotByHand(t *testing.T) {
	for _, tc := range []struct {
		sizes string
		want  []float64
	}{{"{1, 2}", []float64{10, 200, 300}}, {"{1, 1}", []float64{10, 200, 0}}} {
		m, err := hlo.Parse("rd.hlo", `HloModule rd
ENTRY e {
  a = f64[3,1] constant({{1}, {2}, {3}})
  b = f64[2,1,1] constant({{{10}}, {{100}}})
  g = s32[2] constant(`+tc.sizes+`)
  ROOT r = f64[3,1] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}`)
		require.NoError(t, err)
		require.NoError(t, hlo.Verify(m))
		v, err := Run(m)
		require.NoError(t, err)
		require.Equal(t, tc.want, f64s(v.Lit), tc.sizes)
	}
}

// TestRaggedDotModesByHand: a ragged contracting dimension: (1, 2, 3) .
// (10, 100, 1000) in groups of 1 and 2 is 10 and 3200; a ragged batch
// dimension: batches 1*10, 2*20 and, past the groups, 0.
func TestRaggedDotModesByHand(t *testing.T) {
	m, err := hlo.Parse("rd.hlo", `HloModule rd
ENTRY e {
  a = f64[1,3] constant({{1, 2, 3}})
  b = f64[3,1] constant({{10}, {100}, {1000}})
  g = s32[2] constant({1, 2})
  c = f64[2,1,1] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
  x = f64[3,1,1] constant({{{1}}, {{2}}, {{3}}})
  y = f64[3,1,1] constant({{{10}}, {{20}}, {{30}}})
  h = s32[2] constant({1, 1})
  d = f64[3,1,1] ragged-dot(x, y, h), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
  ROOT r = (f64[2,1,1], f64[3,1,1]) tuple(c, d)
}`)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m)
	require.NoError(t, err)
	require.Equal(t, []float64{10, 3200}, f64s(v.Tuple[0].Lit))
	require.Equal(t, []float64{10, 40, 0}, f64s(v.Tuple[1].Lit))
}

// TestRaggedDotPerPositionByHand: group sizes per position of the lhs's
// outer dimensions (JAX's ragged_dot_general). Ragged rows, row blocks
// (1, 2, 3) and (4, 5, 6) times groups 10 and 100: sizes (1, 2) give
// 10, 200, 300; sizes (2, 0) give 40, 50 and 0 (no group). A ragged
// contracting dimension per batch, (1, 2, 3) . (10, 100, 1000): sizes
// (1, 2) give 10 and 3200, sizes (3, 0) 3210 and 0. A ragged batch
// dimension per outer batch, x = 1..6 times 10: sizes (1, 1) leave the
// third batch 0, sizes (3, 0) keep all three.
func TestRaggedDotPerPositionByHand(t *testing.T) {
	m, err := hlo.Parse("rd.hlo", `HloModule rd
ENTRY e {
  a = f64[2,3,1] constant({{{1}, {2}, {3}}, {{4}, {5}, {6}}})
  b = f64[2,1,1] constant({{{10}}, {{100}}})
  g = s32[2,2] constant({{1, 2}, {2, 0}})
  r = f64[2,3,1] ragged-dot(a, b, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
  c = f64[2,1,3] constant({{{1, 2, 3}}, {{1, 2, 3}}})
  d = f64[2,3,1] constant({{{10}, {100}, {1000}}, {{10}, {100}, {1000}}})
  h = s32[2,2] constant({{1, 2}, {3, 0}})
  k = f64[2,2,1,1] ragged-dot(c, d, h), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}
  x = f64[2,3,1,1] constant({{{{1}}, {{2}}, {{3}}}, {{{4}}, {{5}}, {{6}}}})
  y = f64[2,3,1,1] constant({{{{10}}, {{10}}, {{10}}}, {{{10}}, {{10}}, {{10}}}})
  i = s32[2,2] constant({{1, 1}, {3, 0}})
  z = f64[2,3,1,1] ragged-dot(x, y, i), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={1}
  ROOT t = (f64[2,3,1], f64[2,2,1,1], f64[2,3,1,1]) tuple(r, k, z)
}`)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m)
	require.NoError(t, err)
	require.Equal(t, []float64{10, 200, 300, 40, 50, 0}, f64s(v.Tuple[0].Lit))
	require.Equal(t, []float64{10, 3210, 3200, 0}, f64s(v.Tuple[1].Lit))
	require.Equal(t, []float64{10, 20, 0, 40, 50, 60}, f64s(v.Tuple[2].Lit))
	// group_sizes whose leading dimensions are not the lhs's outer ones.
	bad, err := hlo.Parse("rd.hlo", `HloModule rd
ENTRY e {
  a = f64[2,3,1] parameter(0)
  b = f64[2,1,1] parameter(1)
  g = s32[3,2] parameter(2)
  ROOT r = f64[2,3,1] ragged-dot(a, b, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
}`)
	require.NoError(t, err)
	require.ErrorContains(t, hlo.Verify(bad), "must be [g] or [2] followed by g")
}
