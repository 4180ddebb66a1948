package vkjit_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// rowCases are programs whose elementwise result reads reductions of its
// own rows: on a CPU device each becomes one row kernel (kernels says how
// many kernels the program has then).
func rowCases() []struct {
	name    string
	text    string
	kernels int
	online  bool // the max and the exponentials' sum fold in one pass (lower/online.go)
} {
	softmax := func(rows, cols string, ty string) string {
		return fmt.Sprintf(`HloModule softmax
max_ {
  a = %[3]s[] parameter(0)
  b = %[3]s[] parameter(1)
  ROOT m = %[3]s[] maximum(a, b)
}
add_ {
  a = %[3]s[] parameter(0)
  b = %[3]s[] parameter(1)
  ROOT s = %[3]s[] add(a, b)
}
ENTRY e {
  x = %[3]s[%[1]s,%[2]s] parameter(0)
  ninf = %[3]s[] constant(-inf)
  mx = %[3]s[%[1]s] reduce(x, ninf), dimensions={1}, to_apply=max_
  bm = %[3]s[%[1]s,%[2]s] broadcast(mx), dimensions={0}
  sh = %[3]s[%[1]s,%[2]s] subtract(x, bm)
  ex = %[3]s[%[1]s,%[2]s] exponential(sh)
  zero = %[3]s[] constant(0)
  sm = %[3]s[%[1]s] reduce(ex, zero), dimensions={1}, to_apply=add_
  bs = %[3]s[%[1]s,%[2]s] broadcast(sm), dimensions={0}
  ROOT y = %[3]s[%[1]s,%[2]s] divide(ex, bs)
}`, rows, cols, ty)
	}
	jax, err := os.ReadFile("lower/testdata/jax_softmax.hlo") // jax.nn.softmax as JAX writes it
	if err != nil {
		panic(err)
	}
	return []struct {
		name    string
		text    string
		kernels int
		online  bool
	}{
		{"softmax_vec", softmax("96", "64", "f32"), 1, true},
		{"jax_softmax", string(jax), 1, true},
		{"softmax_odd_cols", softmax("70", "37", "f32"), 1, false},
		{"softmax_f64", softmax("64", "24", "f64"), 1, true},
		{"softmax_one_col", softmax("64", "1", "f32"), 1, false},
		{"softmax_few_rows", softmax("8", "64", "f32"), 2, false}, // too few rows: kept apart
		{"log_softmax_3d", `HloModule lsm
max_ {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_ {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,12,40] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[8,12] reduce(x, ninf), dimensions={2}, to_apply=max_
  bm = f32[8,12,40] broadcast(mx), dimensions={0,1}
  sh = f32[8,12,40] subtract(x, bm)
  ex = f32[8,12,40] exponential(sh)
  zero = f32[] constant(0)
  sm = f32[8,12] reduce(ex, zero), dimensions={2}, to_apply=add_
  lg = f32[8,12] log(sm)
  bl = f32[8,12,40] broadcast(lg), dimensions={0,1}
  ROOT y = f32[8,12,40] subtract(sh, bl)
}`, 1, true},
		// Layer norm: gamma and beta are read along the columns (scalar
		// bindings in the vector kernel), the mean is also a result.
		{"layer_norm", `HloModule ln
add_ {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[128,48] parameter(0)
  g = f32[48] parameter(1)
  b = f32[48] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(48)
  s = f32[128] reduce(x, zero), dimensions={1}, to_apply=add_
  bn = f32[128] broadcast(n), dimensions={}
  mean = f32[128] divide(s, bn)
  bmean = f32[128,48] broadcast(mean), dimensions={0}
  c = f32[128,48] subtract(x, bmean)
  c2 = f32[128,48] multiply(c, c)
  v = f32[128] reduce(c2, zero), dimensions={1}, to_apply=add_
  var = f32[128] divide(v, bn)
  eps = f32[128] constant({...})
  ve = f32[128] add(var, eps)
  r = f32[128] rsqrt(ve)
  br = f32[128,48] broadcast(r), dimensions={0}
  nrm = f32[128,48] multiply(c, br)
  bg = f32[128,48] broadcast(g), dimensions={1}
  bb = f32[128,48] broadcast(b), dimensions={1}
  sc = f32[128,48] multiply(nrm, bg)
  y = f32[128,48] add(sc, bb)
  ROOT t = (f32[128,48], f32[128]) tuple(y, mean)
}`, -1, false},
	}
}

// TestRowKernels runs the row-fusion cases fused (one row kernel each),
// compares them with the reference evaluator, and requires the unfused
// program's results bit for bit: a row kernel folds its reductions in
// the same order as a reduce kernel, except an online sum of
// exponentials (rounded differently: within the tolerance).
func TestRowKernels(t *testing.T) {
	defer noValidationMessages(t)
	if !vkjit.TargetOf(rt).CPU {
		t.Skip("row kernels are made for CPU devices")
	}
	for _, c := range rowCases() {
		text := strings.Replace(c.text, "constant({...})", "broadcast(f32[] constant(1e-5)), dimensions={}", 1)
		if strings.Contains(text, "broadcast(f32[] constant") { // HLO has no nested operands: spell it out
			text = strings.Replace(text, "  eps = f32[128] broadcast(f32[] constant(1e-5)), dimensions={}", "  e5 = f32[] constant(1e-5)\n  eps = f32[128] broadcast(e5), dimensions={}", 1)
		}
		m, err := hlo.Parse(c.name, text)
		require.NoError(t, err, c.name)
		args := hlotest.UniformInputs(m, 5)
		var fused []*vkjit.Tensor
		for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.name)
			ks := vkjit.ProgramOf(exe).Kernels
			if !opts.NoFuse {
				if c.kernels > 0 {
					require.Len(t, ks, c.kernels, c.name)
				}
				if c.kernels != 2 {
					name := ks[len(ks)-1].Name
					require.True(t, strings.HasPrefix(name, "row_"), "%s: %s", c.name, name)
					require.Equal(t, c.online, strings.HasSuffix(name, "_online"), "%s: %s", c.name, name)
				}
			}
			_, want, outs := runBothOn(t, exe, m, args, c.name)
			for i, w := range want.Leaves() {
				wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
				for j := int64(0); j < w.Shape.NumElements(); j++ {
					wv, gv := wt.Float64At(j), outs[i].Float64At(j)
					require.InDelta(t, wv, gv, 2e-5*math.Max(1, math.Abs(wv)), "%s out%d[%d] %+v", c.name, i, j, opts)
				}
			}
			if opts.NoFuse && !c.online {
				for i := range outs {
					require.Equal(t, fused[i].Data, outs[i].Data, "%s out%d: fused and unfused differ", c.name, i)
				}
			} else if !opts.NoFuse {
				fused = outs
			}
		}
	}
}

// TestOnlineSoftmaxSpecials runs a softmax whose max and sum fold in one
// pass (lower/online.go) on rows with infinities and NaN placed where
// the running max and the rescaling meet them: every result must be
// NaN, infinite or zero where the reference's two passes give that, and
// within the tolerance elsewhere.
func TestOnlineSoftmaxSpecials(t *testing.T) {
	defer noValidationMessages(t)
	if !vkjit.TargetOf(rt).CPU {
		t.Skip("row kernels are made for CPU devices")
	}
	// 32 columns fold in chunks of 16, 40 in chunks of 8.
	for _, cols := range []int{32, 40} {
		onlineSpecials(t, 64, cols)
	}
}

func onlineSpecials(t *testing.T, rows, cols int) {
	text := rowCases()[0].text
	text = strings.ReplaceAll(text, "[96,64]", fmt.Sprintf("[%d,%d]", rows, cols))
	text = strings.ReplaceAll(text, "[96]", fmt.Sprintf("[%d]", rows))
	m, err := hlo.Parse("softmax_specials", text)
	require.NoError(t, err)
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(math.Sin(float64(i))) * 4
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	row := func(r int) []float32 { return x[r*cols : (r+1)*cols] }
	for i := range row(0) {
		row(0)[i] = -inf // all -inf: NaN everywhere
	}
	for i := range 20 {
		row(1)[i] = -inf // a first chunk of -inf, then finite values
	}
	for i := range 12 {
		row(9)[i] = -inf // a chunk of 8 -inf, or one of 16 that ends finite
	}
	row(2)[5] = nan
	row(3)[20] = inf
	row(4)[3], row(4)[17] = inf, inf
	row(5)[0], row(5)[cols-1] = -inf, -inf
	for i := range row(6) {
		row(6)[i] = 80 + float32(i) // exponentials that would overflow without the max
	}
	for i := range row(7) {
		row(7)[i] = -1e30 * float32(i%3) // the max in the first chunk, the rest underflowing
	}
	row(8)[cols-1] = 1e4 // the max in the last chunk: everything before rescaled to zero
	data := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	args := []*hlo.Literal{{Shape: hlo.Shape{Elem: hlo.F32, Dims: []int64{int64(rows), int64(cols)}}, Data: data}}
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	ks := vkjit.ProgramOf(exe).Kernels
	require.True(t, strings.HasSuffix(ks[len(ks)-1].Name, "_online"), ks[len(ks)-1].Name)
	_, want, outs := runBothOn(t, exe, m, args, "softmax_specials")
	w := &vkjit.Tensor{Type: vkjit.F32, Dims: []int64{int64(rows), int64(cols)}, Data: want.Leaves()[0].Data}
	for j := range int64(rows * cols) {
		wv, gv := w.Float64At(j), outs[0].Float64At(j)
		switch {
		case math.IsNaN(wv):
			require.True(t, math.IsNaN(gv), "%d columns [%d] want NaN, got %g", cols, j, gv)
		case math.IsInf(wv, 0) || wv == 0:
			require.Equal(t, wv, gv, "%d columns [%d]", cols, j)
		default:
			require.InDelta(t, wv, gv, 2e-6*math.Max(1, math.Abs(wv)), "%d columns [%d]", cols, j)
		}
	}
}
