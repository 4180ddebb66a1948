package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestTranscendentalAccuracy measures the largest error, in ulp, of each
// function of the device math library against float64 rounded to f32,
// over a million inputs each. docs/ACCURACY.md records the figures; the
// bounds here keep them from regressing.
func TestTranscendentalAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 20
	for _, tc := range accuracyCases {
		t.Run(tc.op, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			xs, ys := make([]float32, n), make([]float32, n)
			for i := range xs {
				xs[i], ys[i] = tc.gen(rng, i, n)
			}
			op, _ := hlo.LookupOpcode(tc.op)
			binary := op.Arity() == 2
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT r = f32[%d] %s(x)\n}", n, n, tc.op)
			if binary {
				src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  y = f32[%d] parameter(1)\n  ROOT r = f32[%d] %s(x, y)\n}", n, n, n, tc.op)
			}
			exe, err := rt.CompileText(tc.op, src, vkjit.CompileOptions{})
			require.NoError(t, err)
			args := []*vkjit.Tensor{must(vkjit.Float32s([]int64{n}, xs))}
			if binary {
				args = append(args, must(vkjit.Float32s([]int64{n}, ys)))
			}
			outs, _, err := exe.Run(context.Background(), args...)
			exe.Close()
			require.NoError(t, err)
			got, _ := outs[0].AsFloat32()
			worst, at, skipped := int64(0), 0, 0
			for i := range xs {
				want := float64(float32(tc.ref(float64(xs[i]), float64(ys[i]))))
				y := 0.0
				if binary {
					y = float64(ys[i])
				}
				if flushed(false, float64(xs[i]), y, want) {
					skipped++
					continue
				}
				if d := hlotest.ULPs(hlo.F32, want, float64(got[i])); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s: max error %d ulp (at x=%g y=%g: got %g, want %g)", tc.op, worst, xs[at], ys[at], got[at], float32(tc.ref(float64(xs[at]), float64(ys[at]))))
			if skipped > 0 {
				t.Logf("%s: %d inputs not measured: a subnormal argument or result, which this device flushes", tc.op, skipped)
			}
			require.LessOrEqual(t, worst, tc.bound, tc.op)
		})
	}
}

// TestExpNonPositive: softmax's exponentials, exp(v - max(v)) with the
// max taken over v's row, use mathlib.go's expNonPositive; fused and
// unfused, their bits are exp's over [-110, 0] (subnormal results and
// -inf included), and NaN in a row gives NaN across it.
func TestExpNonPositive(t *testing.T) {
	defer noValidationMessages(t)
	const rows, cols = 64, 4096
	xs := make([]float32, rows*cols)
	for i := range xs {
		xs[i] = sweep(i, len(xs), -110, 0)
		if i%cols == 0 {
			xs[i] = 0 // each row's max, so that v - max is v
		}
	}
	xs[7], xs[9], xs[11] = float32(math.Inf(-1)), float32(math.Copysign(0, -1)), -math.SmallestNonzeroFloat32
	nanRow := 5
	xs[nanRow*cols+100] = float32(math.NaN())
	shifted := fmt.Sprintf(`HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[%[1]d,%[2]d] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[%[1]d] reduce(x, ninf), dimensions={1}, to_apply=mx
  b = f32[%[1]d,%[2]d] broadcast(m), dimensions={0}
  d = f32[%[1]d,%[2]d] subtract(x, b)
  ROOT e = f32[%[1]d,%[2]d] exponential(d)
}`, rows, cols)
	plain := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%[1]d,%[2]d] parameter(0)\n  ROOT e = f32[%[1]d,%[2]d] exponential(x)\n}", rows, cols)
	run := func(src string, opts vkjit.CompileOptions) []float32 {
		exe, err := rt.CompileText("exp", src, opts)
		require.NoError(t, err)
		defer exe.Close()
		outs, _, err := exe.Run(context.Background(), must(vkjit.Float32s([]int64{rows, cols}, xs)))
		require.NoError(t, err)
		got, _ := outs[0].AsFloat32()
		return got
	}
	want := run(plain, vkjit.CompileOptions{})
	for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
		got := run(shifted, opts)
		for i := range got {
			if i/cols == nanRow {
				require.True(t, math.IsNaN(float64(got[i])), "NaN row, element %d: %g", i, got[i])
				continue
			}
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "exp(%g) (no-fuse %v): %g against %g", xs[i], opts.NoFuse, got[i], want[i])
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTranscendentalAccuracy64 measures the f64 library against Go's
// math package (itself within 1 ulp), over random bit patterns and a
// sweep of the interesting range.
func TestTranscendentalAccuracy64(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 18
	for _, tc := range []struct {
		op     string
		ref    func(float64) float64
		lo, hi float64
		bound  int64
	}{
		{"exponential", eval.Exp, -745, 709.78, 2}, // Go's amd64 math.Exp overflows from 709.44
		{"exponential-minus-one", math.Expm1, -3, 3, 2},
		{"log", log64, 1e-300, 1e300, 2},
		{"log-plus-one", math.Log1p, -1, 3, 2},
		{"logistic", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -40, 40, 4},
		{"tanh", math.Tanh, -5, 5, 3},
		{"cbrt", math.Cbrt, -1000, 1000, 2},
		{"erf", math.Erf, -6, 6, 2},
		// Random bit patterns reach every magnitude: the reduction is
		// Payne and Hanek's throughout (eval's reference is exact).
		{"sine", eval.Sin, -100, 100, 2},
		{"cosine", eval.Cos, -100, 100, 2},
		{"tan", eval.Tan, -100, 100, 3},
	} {
		t.Run(tc.op, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			xs := make([]float64, n)
			for i := range xs {
				if i%2 == 0 {
					if tc.op == "log" {
						xs[i] = math.Exp(-690 + 1380*float64(i)/n)
					} else {
						xs[i] = tc.lo + (tc.hi-tc.lo)*float64(i)/n
					}
				} else {
					xs[i] = math.Float64frombits(rng.Uint64())
				}
			}
			exe, err := rt.CompileText(tc.op, fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  ROOT r = f64[%d] %s(x)\n}", n, n, tc.op), vkjit.CompileOptions{})
			require.NoError(t, err)
			data := make([]byte, 8*n)
			for i, x := range xs {
				binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
			}
			outs, _, err := exe.Run(context.Background(), &vkjit.Tensor{Type: vkjit.F64, Dims: []int64{n}, Data: data})
			exe.Close()
			require.NoError(t, err)
			worst, at := int64(0), 0
			for i, x := range xs {
				if d := hlotest.ULPs(hlo.F64, tc.ref(x), outs[0].Float64At(int64(i))); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s f64: max error %d ulp (at x=%g: got %g, want %g)", tc.op, worst, xs[at], outs[0].Float64At(int64(at)), tc.ref(xs[at]))
			require.LessOrEqual(t, worst, tc.bound)
		})
	}
	// atan2: normal pairs and random bit patterns (zeros, infinities,
	// NaN, subnormals among them), against Go's math.Atan2.
	t.Run("atan2", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		ys, xs := make([]float64, n), make([]float64, n)
		for i := range xs {
			if i%2 == 0 {
				ys[i], xs[i] = rng.NormFloat64()*math.Pow(2, float64(rng.IntN(60)-30)), rng.NormFloat64()
			} else {
				ys[i], xs[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
			}
		}
		ys[0], xs[0], ys[2], xs[2], ys[4], xs[4] = 0, math.Copysign(0, -1), math.Copysign(0, -1), -1, math.Inf(1), math.Inf(-1)
		exe, err := rt.CompileText("atan2", fmt.Sprintf("HloModule m\nENTRY e {\n  y = f64[%d] parameter(0)\n  x = f64[%d] parameter(1)\n  ROOT r = f64[%d] atan2(y, x)\n}", n, n, n), vkjit.CompileOptions{})
		require.NoError(t, err)
		outs, _, err := exe.Run(context.Background(), f64Tensor(ys), f64Tensor(xs))
		exe.Close()
		require.NoError(t, err)
		worst, at := int64(0), 0
		for i := range xs {
			want, got := eval.Atan2(ys[i], xs[i]), outs[0].Float64At(int64(i))
			d := hlotest.ULPs(hlo.F64, want, got)
			if math.Signbit(want) != math.Signbit(got) && !math.IsNaN(want) {
				d = 1 << 20 // a signed zero or angle on the wrong side
			}
			if d > worst {
				worst, at = d, i
			}
		}
		t.Logf("atan2 f64: max error %d ulp (at y=%g x=%g: got %g, want %g)", worst, ys[at], xs[at], outs[0].Float64At(int64(at)), eval.Atan2(ys[at], xs[at]))
		require.LessOrEqual(t, worst, int64(3))
	})
	// power: positive bases over the whole range with exponents that
	// keep the result finite, negative bases with integer exponents, and
	// random bit patterns (C99's special values among them).
	t.Run("power", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			switch i % 4 {
			case 0, 1:
				xs[i] = math.Exp(rng.Float64()*1400 - 700)
				ys[i] = (rng.Float64()*2 - 1) * 700 / math.Max(math.Abs(math.Log(xs[i])), 1)
			case 2:
				xs[i], ys[i] = -math.Exp(rng.Float64()*20-10), float64(rng.IntN(61)-30)
			default:
				xs[i], ys[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
			}
		}
		exe, err := rt.CompileText("pow", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  y = f64[%d] parameter(1)\n  ROOT r = f64[%d] power(x, y)\n}", n, n, n), vkjit.CompileOptions{})
		require.NoError(t, err)
		outs, _, err := exe.Run(context.Background(), f64Tensor(xs), f64Tensor(ys))
		exe.Close()
		require.NoError(t, err)
		worst, at := int64(0), 0
		for i := range xs {
			if d := hlotest.ULPs(hlo.F64, eval.Pow(xs[i], ys[i]), outs[0].Float64At(int64(i))); d > worst {
				worst, at = d, i
			}
		}
		t.Logf("power f64: max error %d ulp (at x=%g y=%g: got %g, want %g)", worst, xs[at], ys[at], outs[0].Float64At(int64(at)), eval.Pow(xs[at], ys[at]))
		require.LessOrEqual(t, worst, int64(4))
	})
	// remainder: exact, for random pairs over the whole domain and for
	// quotients up to 2^1000.
	rng := rand.New(rand.NewPCG(5, 6))
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		if i%2 == 0 {
			xs[i], ys[i] = rng.NormFloat64()*math.Pow(2, float64(rng.IntN(2000)-1000)), rng.NormFloat64()
		} else {
			xs[i], ys[i] = math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
		}
	}
	exe, err := rt.CompileText("rem", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f64[%d] parameter(0)\n  y = f64[%d] parameter(1)\n  ROOT r = f64[%d] remainder(x, y)\n}", n, n, n), vkjit.CompileOptions{})
	require.NoError(t, err)
	enc := func(v []float64) *vkjit.Tensor {
		data := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
		}
		return &vkjit.Tensor{Type: vkjit.F64, Dims: []int64{int64(len(v))}, Data: data}
	}
	outs, _, err := exe.Run(context.Background(), enc(xs), enc(ys))
	exe.Close()
	require.NoError(t, err)
	for i := range xs {
		want, got := math.Mod(xs[i], ys[i]), outs[0].Float64At(int64(i))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(got), "fmod(%g, %g)", xs[i], ys[i])
			continue
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "fmod(%g, %g) = %g, got %g", xs[i], ys[i], want, got)
	}
}

// TestMathEdges: values at the edges of the math library's ranges, each
// with its correctly rounded answer worked out by hand (powers of two are
// exact), on the device fused and unfused and in the evaluator, bit for
// bit: pow overflowing to +inf where the base is a power of two (it gave
// NaN: the tail multiply of an infinity), logistic's subnormal results
// for x below -88.72 (it gave 0), and IEEE 754-2019 maximum and minimum
// on signed zeros (-0 < +0, as the StableHLO spec's tests have it).
func TestMathEdges(t *testing.T) {
	defer noValidationMessages(t)
	inf := math.Inf(1)
	type c struct{ x, y, want float64 }
	zeros := map[string][]c{
		"maximum": {
			{0, math.Copysign(0, -1), 0}, {math.Copysign(0, -1), 0, 0},
			{math.Copysign(0, -1), math.Copysign(0, -1), math.Copysign(0, -1)}, {-1, math.Copysign(0, -1), math.Copysign(0, -1)},
		},
		"minimum": {
			{0, math.Copysign(0, -1), math.Copysign(0, -1)}, {math.Copysign(0, -1), 0, math.Copysign(0, -1)},
			{0, 0, 0}, {1, 0, 0},
		},
	}
	f64 := map[string][]c{
		"power": {
			{2, 1024, inf}, {4, 512, inf}, {0.5, -1024, inf}, {2, 1023, 0x1p1023}, {0x1p-512, -2, inf},
			{2, -1074, 0x1p-1074}, {2, -1076, 0}, {-2, 1025, -inf}, {1024, 102, 0x1p1020}, {1024, 103, inf},
		},
		"logistic": {{-740, 0, math.Exp(-740)}, {-720, 0, math.Exp(-720)}, {-800, 0, 0}, {-inf, 0, 0}, {inf, 0, 1}},
	}
	f32 := map[string][]c{
		"power": {
			{2, 128, inf}, {4, 64, inf}, {65536, 8, inf}, {0.5, -128, inf}, {2, 127, 0x1p127},
			{0.25, -64, inf}, {16, 32, inf}, {2, 200, inf}, {0.5, 200, 0},
			{2, -149, 0x1p-149}, {2, -126, 0x1p-126}, {4, -70, 0x1p-140}, {2, -151, 0},
			{-2, 128, inf}, {-2, 129, -inf}, {-0.5, -129, -inf}, {8, 42, 0x1p126}, {8, 43, inf},
		},
		"logistic": {
			// e^x / (1 + e^x), rounded to the type when encoded.
			{-90, 0, math.Exp(-90)}, {-100, 0, math.Exp(-100)}, {-88.75, 0, math.Exp(-88.75)},
			{-103, 0, math.Exp(-103)}, {-20, 0, math.Exp(-20) / (1 + math.Exp(-20))},
			{-110, 0, math.Exp(-110)}, {-inf, 0, 0}, {inf, 0, 1}, {0, 0, 0.5},
		},
	}
	for ty, cases := range map[hlo.ElementType]map[string][]c{hlo.F32: f32, hlo.F64: f64, hlo.F16: zeros, hlo.BF16: zeros} {
		maps.Copy(cases, zeros)
		for op, cs := range cases {
			n := len(cs)
			hop, _ := hlo.LookupOpcode(op)
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  ROOT r = %[1]s[%[2]d] %[3]s(x)\n}", ty, n, op)
			if hop.Arity() == 2 {
				// The op between two others, so that fusion puts it inside a kernel.
				src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  y = %[1]s[%[2]d] parameter(1)\n  a = %[1]s[%[2]d] copy(x)\n  r = %[1]s[%[2]d] %[3]s(a, y)\n  ROOT n = %[1]s[%[2]d] copy(r)\n}", ty, n, op)
			}
			m, err := hlo.Parse(op, src)
			require.NoError(t, err)
			es := ty.Bytes()
			enc := func(v float64) []byte {
				b := make([]byte, 8)
				binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(ty, v))
				return b[:es]
			}
			var xb, yb []byte
			for _, cc := range cs {
				xb, yb = append(xb, enc(cc.x)...), append(yb, enc(cc.y)...)
			}
			shape := hlo.ArrayShape(ty, int64(n))
			args := []*hlo.Literal{{Shape: shape, Data: xb}}
			if hop.Arity() == 2 {
				args = append(args, &hlo.Literal{Shape: shape, Data: yb})
			}
			check := func(where string, device bool, got []byte) {
				for i, cc := range cs {
					if device && flushed(ty == hlo.F64, cc.x, cc.y, cc.want) {
						continue
					}
					g := got[i*es : (i+1)*es]
					bits := make([]byte, 8)
					copy(bits, g)
					require.Equal(t, enc(cc.want), g, "%s %s(%g, %g) on %s: got %g, want %g", ty, op, cc.x, cc.y, where, hlo.DecodeFloat(ty, binary.LittleEndian.Uint64(bits)), cc.want)
				}
			}
			ref, err := eval.Run(m, args...)
			require.NoError(t, err)
			check("the evaluator", false, ref.Leaves()[0].Data)
			for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
				exe, err := rt.Compile(m, opts)
				require.NoError(t, err)
				var ts []*vkjit.Tensor
				for _, a := range args {
					ts = append(ts, &vkjit.Tensor{Type: vkjit.DType(ty), Dims: []int64{int64(n)}, Data: a.Data})
				}
				outs, _, err := exe.Run(context.Background(), ts...)
				exe.Close()
				require.NoError(t, err)
				check(fmt.Sprintf("the device (no-fuse %v)", opts.NoFuse), true, outs[0].Data)
			}
		}
	}
}

// specials fills every float parameter with -inf, -0, NaN, 0, inf,
// -2.5, 1 and 3 over and over: requireExact's inputs for signed zeros
// and the other special values.
var specials = cycling(math.Inf(-1), math.Copysign(0, -1), math.NaN(), 0, math.Inf(1), -2.5, 1, 3)

// cycling gives every parameter vals over and over, rounded to its type.
func cycling(vals ...float64) func(*hlo.Module) []*hlo.Literal {
	return func(m *hlo.Module) []*hlo.Literal {
		var out []*hlo.Literal
		for _, p := range m.Entry.Params {
			data := make([]byte, 0, p.Shape.NumElements()*int64(p.Shape.Elem.Bytes()))
			for i := int64(0); i < p.Shape.NumElements(); i++ {
				b := make([]byte, 8)
				binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(p.Shape.Elem, vals[i%int64(len(vals))]))
				data = append(data, b[:p.Shape.Elem.Bytes()]...)
			}
			out = append(out, &hlo.Literal{Shape: p.Shape, Data: data})
		}
		return out
	}
}

// TestSignOfZeros: sign(±0) is ±0 and sign(NaN) NaN, as XLA defines it,
// in scalar and vector kernels (1032 elements: 8 per invocation), and a
// division by it tells the zeros apart: 1/sign(-0) is -inf. GLSL's FSign
// leaves the zero's sign open, and lavapipe's was +0 (the random-program
// fuzzer's atan2(x, sign(x)) gave -0 for -pi).
func TestSignOfZeros(t *testing.T) {
	defer noValidationMessages(t)
	requireExactFloats(t, "sign", `HloModule sign
ENTRY e {
  x = $T[$N] parameter(0)
  s = $T[$N] sign(x)
  one = $T[] constant(1)
  ones = $T[$N] broadcast(one), dimensions={}
  r = $T[$N] divide(ones, s)
  ROOT out = ($T[$N], $T[$N]) tuple(s, r)
}`, specials, "8", "1032")
}

// requireExactFloats is requireExact of text for each float type ($T)
// and each element count given ($N).
func requireExactFloats(t *testing.T, name, text string, inputs func(*hlo.Module) []*hlo.Literal, counts ...string) {
	t.Helper()
	for _, ty := range []string{"f32", "f64", "f16", "bf16"} {
		for _, n := range counts {
			requireExact(t, name+"_"+ty+"_"+n, strings.NewReplacer("$T", ty, "$N", n).Replace(text), inputs)
		}
	}
}

// TestRoundingOps: floor, ceil, round-nearest-even and
// round-nearest-afz at ties of both signs, fractions that round to a
// signed zero, just below a half, beside 2^52 and 2^23 (the last
// fractions of f64 and f32), infinities and NaN, bit for bit as the
// evaluator (Go's math) gives them, in scalar and vector kernels.
// lavapipe's double RoundEven took ties toward zero (1.5 to 1) and -0.3
// to +0, and its Trunc -0.3 to +0 and 2^52 - 0.5 to itself
// (FuzzPrograms found the zero: y * round(-0) with y negative,
// testdata/fuzz; docs/ACCURACY.md).
func TestRoundingOps(t *testing.T) {
	defer noValidationMessages(t)
	requireExactFloats(t, "rounding", `HloModule rounding
ENTRY e {
  x = $T[$N] parameter(0)
  a = $T[$N] floor(x)
  b = $T[$N] ceil(x)
  c = $T[$N] round-nearest-even(x)
  d = $T[$N] round-nearest-afz(x)
  ROOT t = ($T[$N], $T[$N], $T[$N], $T[$N]) tuple(a, b, c, d)
}`, cycling(math.Copysign(0, -1), 0, -0.3, 0.3, -0.5, 0.5, -0.7, -1.5, 1.5, -2.5, 2.5, 3.5, -3.5,
		0.49999999999999994, -0.49999999999999994, 0.5000000000000001, 1<<52-0.5, -(1<<52-0.5), 1<<52+1,
		1<<23-0.5, -(1<<23-0.5), 1e300, math.Inf(1), math.Inf(-1), math.NaN()), "25", "1032")
}

// TestConstantZeros: IEEE arithmetic with a zero the kernel knows. inf*0
// and NaN*0 are NaN, -0+0 and 0-0 are +0, 0/0 is NaN, and a sum starts
// from +0. llvmpipe folds x*0 to 0, x+0 to x, 0-x to -x and 0/x to 0
// wherever it sees a constant zero, whatever the float controls say: a
// fused iota fed a dot its zero column so (the random-program fuzzer's
// dot(iota, x) gave 9.625 where x held -inf and the answer is NaN).
func TestConstantZeros(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f32", "f64", "f16", "bf16"} {
		requireExact(t, "zeros_"+ty, strings.ReplaceAll(`HloModule zeros
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = $T[] add(a, b)
}
ENTRY e {
  x = $T[8,8] parameter(0)
  z = $T[] constant(0)
  zb = $T[8,8] broadcast(z), dimensions={}
  mul = $T[8,8] multiply(x, zb)
  sum = $T[8,8] add(x, zb)
  sub = $T[8,8] subtract(zb, x)
  div = $T[8,8] divide(zb, x)
  i = $T[5,8] iota(), iota_dimension=1
  dot = $T[5,8] dot(i, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ic = s32[8,8] iota(), iota_dimension=0
  cv = $T[8,8] convert(ic)
  mc = $T[8,8] multiply(cv, x)
  r = $T[8] reduce(x, z), dimensions={1}, to_apply=add
  ROOT out = ($T[8,8], $T[8,8], $T[8,8], $T[8,8], $T[5,8], $T[8,8], $T[8]) tuple(mul, sum, sub, div, dot, mc, r)
}`, "$T", ty), specials)
	}
}

// TestMaxMinConstants: maximum and minimum against constants, which
// the emitter shortens where the constant cannot be NaN and an equal
// operand has its bits (relu's max(x, 0)): every special value of x
// against each sign of zero, a finite constant, infinities and NaN, the
// constant on either side, elementwise and in a GEMM's epilogue.
func TestMaxMinConstants(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f32", "f64", "f16", "bf16"} {
		for i, c := range []string{"0", "-0", "1", "-2.5", "inf", "-inf", "nan"} {
			requireExact(t, fmt.Sprintf("maxmin_%s_%d", ty, i), strings.NewReplacer("$T", ty, "$C", c).Replace(`HloModule maxmin
ENTRY e {
  x = $T[8,8] parameter(0)
  w = $T[8,8] parameter(1)
  c = $T[] constant($C)
  cb = $T[8,8] broadcast(c), dimensions={}
  a = $T[8,8] maximum(x, cb)
  b = $T[8,8] maximum(cb, x)
  m = $T[8,8] minimum(x, cb)
  n = $T[8,8] minimum(cb, x)
  d = $T[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  relu = $T[8,8] maximum(d, cb)
  ROOT out = ($T[8,8], $T[8,8], $T[8,8], $T[8,8], $T[8,8]) tuple(a, b, m, n, relu)
}`), specials)
		}
	}
}

// TestNarrowPassThrough: the ops whose float result is on its operands'
// grid (select, clamp, negate, abs, maximum, minimum; floor, ceil, the
// roundings to an integer, sign), which an f16 or bf16 kernel leaves
// unrounded, fused after and before ops that round, at special and
// random values.
func TestNarrowPassThrough(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f16", "bf16", "f8e4m3fn", "f8e5m2"} {
		requireExact(t, "pass_"+ty, strings.ReplaceAll(`HloModule pass
ENTRY e {
  x = $T[8,8] parameter(0)
  y = $T[8,8] parameter(1)
  z = $T[8,8] parameter(2)
  s = $T[8,8] multiply(x, y)
  p = pred[8,8] compare(x, y), direction=LT
  a = $T[8,8] select(p, s, z)
  c = $T[8,8] clamp(y, a, z)
  n = $T[8,8] negate(c)
  b = $T[8,8] abs(n)
  m = $T[8,8] maximum(b, x)
  q = $T[8,8] minimum(m, s)
  r = $T[8,8] add(q, y)
  u = $T[8,8] multiply(r, x)
  ROOT out = ($T[8,8], $T[8,8], $T[8,8], $T[8,8]) tuple(a, n, q, u)
}`, "$T", ty), specials)
		requireExact(t, "pass_"+ty+"_random", strings.ReplaceAll(`HloModule pass
ENTRY e {
  x = $T[64] parameter(0)
  y = $T[64] parameter(1)
  s = $T[64] multiply(x, y)
  a = $T[64] maximum(s, x)
  n = $T[64] negate(a)
  r = $T[64] add(n, y)
  ROOT u = $T[64] multiply(r, x)
}`, "$T", ty), edgeInputs(uint64(len(ty))))
		// The ops to an integer and sign, at special values and at
		// random ones scaled by up to 63^2: fractions, and magnitudes
		// past where the types' floats are all integers.
		for i, in := range []func(*hlo.Module) []*hlo.Literal{specials, edgeInputs(uint64(7 + len(ty)))} {
			requireExact(t, fmt.Sprintf("pass_int_%s_%d", ty, i), strings.ReplaceAll(`HloModule pass
ENTRY e {
  x = $T[64] parameter(0)
  y = $T[64] parameter(1)
  k = $T[64] iota(), iota_dimension=0
  kk = $T[64] multiply(k, k)
  xy = $T[64] multiply(x, y)
  s = $T[64] multiply(xy, kk)
  f = $T[64] floor(s)
  c = $T[64] ceil(s)
  r = $T[64] round-nearest-even(s)
  a = $T[64] round-nearest-afz(s)
  g = $T[64] sign(s)
  p = $T[64] multiply(f, c)
  q = $T[64] subtract(r, a)
  ROOT out = ($T[64], $T[64], $T[64], $T[64], $T[64], $T[64], $T[64], $T[64], $T[64]) tuple(f, c, r, a, g, p, q, s, y)
}`, "$T", ty), in)
		}
	}
}

// TestSqrtEdges: sqrt and rsqrt at and below zero, as IEEE has them,
// alone and fused: GLSL leaves them undefined there, and a fused
// abs(rsqrt(-0)) once gave -inf (Mesa took inversesqrt to be positive
// and dropped the abs).
func TestSqrtEdges(t *testing.T) {
	defer noValidationMessages(t)
	inf, nan := math.Inf(1), math.NaN()
	want := [][]float64{
		{math.Inf(-1), inf, nan, nan, 0, nan},                  // rsqrt
		{inf, inf, nan, nan, 0, nan},                           // abs(rsqrt)
		{math.Copysign(0, -1), 0, nan, nan, inf, nan},          // sqrt
		{0, math.Copysign(0, -1), nan, nan, math.Inf(-1), nan}, // -sqrt
	}
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16} {
		src := fmt.Sprintf(`HloModule sqrt_edges
ENTRY e {
  x = %[1]s[6] constant({-0, 0, -1, -inf, inf, nan})
  r = %[1]s[6] rsqrt(x)
  a = %[1]s[6] abs(r)
  s = %[1]s[6] sqrt(x)
  n = %[1]s[6] negate(s)
  ROOT t = (%[1]s[6], %[1]s[6], %[1]s[6], %[1]s[6]) tuple(r, a, s, n)
}`, ty)
		for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
			exe, err := rt.CompileText("sqrt_edges", src, opts)
			require.NoError(t, err)
			outs, _, err := exe.Run(context.Background())
			exe.Close()
			require.NoError(t, err)
			for i, w := range want {
				for j, wv := range w {
					g := outs[i].Float64At(int64(j))
					same := g == wv && math.Signbit(g) == math.Signbit(wv) || math.IsNaN(g) && math.IsNaN(wv)
					require.True(t, same, "%s out%d[%d] (no-fuse %v): got %v, want %v", ty, i, j, opts.NoFuse, g, wv)
				}
			}
		}
	}
}

// TestConvertF64ToNarrow converts f64 values just off a tie of f16 or
// bf16 (and one just under the f16 overflow, and an f16 subnormal tie),
// and integers to bf16: rounding to f32 first would land on the tie and
// round it to even, away from the nearest value.
func TestConvertF64ToNarrow(t *testing.T) {
	defer noValidationMessages(t)
	m, err := hlo.Parse("f64_narrow", `HloModule f64_narrow
ENTRY main {
  x = f64[6] parameter(0)
  h = f16[6] convert(x)
  b = bf16[6] convert(x)
  ROOT t = (f16[6], bf16[6]) tuple(h, b)
}`)
	require.NoError(t, err)
	xs := []float64{1 + 0x1p-11 + 0x1p-40, -(1 + 0x1p-11 + 0x1p-40), 1 + 0x1p-8 + 0x1p-40, 1 + 0x1p-11 - 0x1p-40, 65519.99999999, 0x1.8p-24 + 0x1p-60}
	data := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
	}
	arg := &hlo.Literal{Shape: hlo.ArrayShape(hlo.F64, int64(len(xs))), Data: data}
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs := runBothOn(t, exe, m, []*hlo.Literal{arg}, "f64_narrow")
	for i, w := range want.Leaves() {
		require.Equal(t, w.Data, outs[i].Data, "out%d", i)
	}
	// The f16 of 1 + 2^-11 + 2^-40 is 1 + 2^-10 (0x3c01), not 1.
	require.Equal(t, []byte{0x01, 0x3c}, outs[0].Data[:2])

	// Integers to bf16: 2^30 + 2^22 + 1 rounds to the f32 2^30 + 2^22, a
	// bf16 tie.
	m, err = hlo.Parse("int_bf16", `HloModule int_bf16
ENTRY main {
  a = s32[6] parameter(0)
  b = u64[4] parameter(1)
  c = bf16[6] convert(a)
  d = bf16[4] convert(b)
  ROOT t = (bf16[6], bf16[4]) tuple(c, d)
}`)
	require.NoError(t, err)
	var s32s, u64s []byte
	for _, v := range []int32{1<<30 + 1<<22 + 1, -(1<<30 + 1<<22 + 1), 1<<30 + 1<<22, math.MinInt32, 0, -1} {
		s32s = binary.LittleEndian.AppendUint32(s32s, uint32(v))
	}
	for _, v := range []uint64{1<<40 + 1<<32 + 1, math.MaxUint64, 1<<63 + 1<<55, 12345} {
		u64s = binary.LittleEndian.AppendUint64(u64s, v)
	}
	exe, err = rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs = runBothOn(t, exe, m, []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.S32, 6), Data: s32s}, {Shape: hlo.ArrayShape(hlo.U64, 4), Data: u64s}}, "int_bf16")
	for i, w := range want.Leaves() {
		require.Equal(t, w.Data, outs[i].Data, "int_bf16 out%d", i)
	}
	require.Equal(t, []byte{0x81, 0x4e}, outs[0].Data[:2]) // 2^30 + 2^23
}

// TestConvertToHalfBelowSubnormals: f32 values under f16's smallest
// subnormal 2^-24 round to it above 2^-25 and to 0 at or below it (a tie
// to the even 0), as the evaluator rounds them; the device's rounding
// used to give 0 for all of (2^-25, 2^-24), the f16 exp of -17.15 among
// them.
func TestConvertToHalfBelowSubnormals(t *testing.T) {
	defer noValidationMessages(t)
	xs := []float32{0x1p-25, math.Nextafter32(0x1p-25, 1), 0x1.6p-25, math.Nextafter32(0x1p-24, 0), 0x1p-24,
		math.Nextafter32(0x1p-25, 0), 0x1p-26, 0x1p-149, -0x1.6p-25, -0x1p-25, 0x1.8p-24, 0x1.8p-23}
	want := []uint16{0, 1, 1, 1, 1, 0, 0, 0, 0x8001, 0x8000, 2, 3}
	m, err := hlo.Parse("to_half", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%[1]d] parameter(0)\n  ROOT h = f16[%[1]d] convert(x)\n}", len(xs)))
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	x := must(vkjit.Float32s([]int64{int64(len(xs))}, xs))
	_, ref, outs := runBothOn(t, exe, m, []*hlo.Literal{{Shape: hlo.ArrayShape(hlo.F32, int64(len(xs))), Data: x.Data}}, "to_half")
	for i, w := range want {
		require.Equal(t, w, binary.LittleEndian.Uint16(outs[0].Data[2*i:]), "device f16(%g)", xs[i])
		require.Equal(t, w, binary.LittleEndian.Uint16(ref.Leaves()[0].Data[2*i:]), "evaluator f16(%g)", xs[i])
	}
}

// TestGemmFlushesSubnormals: the tiled kernel reads subnormal operands
// as zeros, as XLA's CPU and GPU backends (which flush denormals) do;
// lavapipe computes with subnormals 8x slower.
func TestGemmFlushesSubnormals(t *testing.T) {
	defer noValidationMessages(t)
	exe, err := rt.CompileText("gemm", "HloModule m\nENTRY e {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] parameter(1)\n  ROOT c = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	require.Contains(t, vkjit.ProgramOf(exe).Kernels[0].Name, "gemm")
	av, bv := make([]float32, 256*256), make([]float32, 256*256)
	for i := range av {
		av[i], bv[i] = 1e-39, 1e30 // a subnormal times a huge value: 1e-9 unflushed
	}
	av[0] = 1 // one normal value: row 0 gets 1e30
	a, _ := vkjit.Float32s([]int64{256, 256}, av)
	b, _ := vkjit.Float32s([]int64{256, 256}, bv)
	outs, _, err := exe.Run(context.Background(), a, b)
	require.NoError(t, err)
	require.InEpsilon(t, 1e30, outs[0].Float64At(0), 1e-6)
	require.Zero(t, outs[0].Float64At(256), "row 1 reads only subnormals: flushed to zero")
}

func f64Tensor(v []float64) *vkjit.Tensor {
	data := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(x))
	}
	return &vkjit.Tensor{Type: vkjit.F64, Dims: []int64{int64(len(v))}, Data: data}
}

// TestReducePrecision: reduce-precision to f16's, bf16's and smaller
// formats (with no mantissa bit left, NaN becomes +inf) from f64, f32,
// f16 and bf16, on edge values, bit for bit with the evaluator, fused
// and unfused.
func TestReducePrecision(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f64", "f32", "f16", "bf16"} {
		for _, f := range [][2]int{{5, 10}, {8, 7}, {5, 2}, {3, 1}, {2, 0}, {8, 23}, {11, 52}} {
			src := fmt.Sprintf(`HloModule rp
ENTRY e {
  x = %[1]s[64] parameter(0)
  y = %[1]s[64] multiply(x, x)
  r = %[1]s[64] reduce-precision(x), exponent_bits=%[2]d, mantissa_bits=%[3]d
  s = %[1]s[64] reduce-precision(y), exponent_bits=%[2]d, mantissa_bits=%[3]d
  ROOT out = (%[1]s[64], %[1]s[64]) tuple(r, s)
}`, ty, f[0], f[1])
			requireExact(t, fmt.Sprintf("reduce_precision_%s_e%dm%d", ty, f[0], f[1]), src, edgeInputs(uint64(f[0]*100+f[1])))
		}
	}
}

// TestBitcastConvert: bitcast-convert between types of one width keeps
// every bit, NaN payloads (signaling ones too) and -0 included, alone,
// fused after an integer op, and there and back; a change of width is
// refused by name.
func TestBitcastConvert(t *testing.T) {
	defer noValidationMessages(t)
	patterns := map[int][]uint64{
		2: {0x7d01, 0xfe01, 0x7f81, 0xff80, 0x8000, 0x7c00, 0x0001},
		4: {0x7f800001, 0xffc00123, 0x7fa00000, 0x80000000, 0x7f800000, 0x00000001},
		8: {0x7ff0000000000001, 0xfff8000000000123, 0x8000000000000000, 0x7ff0000000000000, 1},
		1: {0x80, 0x7f, 0xff},
	}
	randomBits := func(m *hlo.Module) []*hlo.Literal {
		rng := rand.New(rand.NewPCG(3, 1))
		var out []*hlo.Literal
		for _, p := range m.Entry.Params {
			es := p.Shape.Elem.Bytes()
			data := make([]byte, p.Shape.NumElements()*int64(es))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			for j, pat := range patterns[es] {
				for b := 0; b < es; b++ {
					data[j*es+b] = byte(pat >> (8 * b))
				}
			}
			out = append(out, &hlo.Literal{Shape: p.Shape, Data: data})
		}
		return out
	}
	pairs := [][2]string{
		{"f32", "u32"}, {"u32", "f32"}, {"s32", "f32"}, {"f32", "s32"},
		{"f64", "s64"}, {"u64", "f64"}, {"f64", "u64"},
		{"f16", "u16"}, {"u16", "f16"}, {"bf16", "s16"}, {"s16", "bf16"}, {"f16", "bf16"}, {"bf16", "f16"},
		{"u8", "s8"}, {"s8", "u8"}, {"s16", "u16"},
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		// The bitcast alone, after an integer op on the source's bits
		// (fused into one kernel) where the source is an integer, and
		// there and back.
		src := "x"
		ops := ""
		if !strings.HasPrefix(from, "f") && from != "bf16" {
			src = "xi"
			ops = fmt.Sprintf("  xo = %[1]s[4096] xor(x, x)\n  xi = %[1]s[4096] or(xo, x)\n", from)
		}
		requireExact(t, "bitcast_"+from+"_"+to, fmt.Sprintf(`HloModule bitcast
ENTRY e {
  x = %[1]s[4096] parameter(0)
%[4]s  a = %[2]s[4096] bitcast-convert(x)
  b = %[2]s[4096] bitcast-convert(%[3]s)
  c = %[1]s[4096] bitcast-convert(a)
  ROOT out = (%[2]s[4096], %[2]s[4096], %[1]s[4096]) tuple(a, b, c)
}`, from, to, src, ops), randomBits)
	}
	// The f8 types and those narrower than a byte: TestBitcastSmallTypes.
}

// TestBatchNormAccuracy measures batch-norm-training in f32 against the
// exact statistics (float64, the variance by two passes) on a batch
// whose mean (3) is five times its spread, where XLA's E[x^2] - E[x]^2
// cancels: the device's results and the evaluator's (XLA's formula in
// f32 with exactly rounded sums), so that docs/ACCURACY.md can say how
// much of the error is the formula's. The bounds keep it from
// regressing.
func TestBatchNormAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	const n, c, h = 64, 32, 8 // 512 values per feature
	src := fmt.Sprintf(`HloModule bn
ENTRY e {
  x = f32[%[1]d,%[2]d,%[3]d] parameter(0)
  s = f32[%[2]d] parameter(1)
  o = f32[%[2]d] parameter(2)
  ROOT t = (f32[%[1]d,%[2]d,%[3]d], f32[%[2]d], f32[%[2]d]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
}`, n, c, h)
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float32, n*c*h)
	for i := range xs {
		xs[i] = float32(3 + rng.Float64()*2 - 1)
	}
	ones, zeros := make([]float32, c), make([]float32, c)
	for i := range ones {
		ones[i] = 1
	}
	args := []*vkjit.Tensor{must(vkjit.Float32s([]int64{n, c, h}, xs)), must(vkjit.Float32s([]int64{c}, ones)), must(vkjit.Float32s([]int64{c}, zeros))}
	exe, err := rt.CompileText("bn.hlo", src, vkjit.CompileOptions{})
	require.NoError(t, err)
	outs, _, err := exe.Run(context.Background(), args...)
	exe.Close()
	require.NoError(t, err)
	m, err := hlo.Parse("bn.hlo", src)
	require.NoError(t, err)
	lits := make([]*hlo.Literal, len(args))
	for i, a := range args {
		lits[i] = &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, a.Dims...), Data: a.Data}
	}
	ev, err := eval.Run(m, lits...)
	require.NoError(t, err)
	// The exact statistics, per feature.
	mean, variance := make([]float64, c), make([]float64, c)
	feature := func(i int) int { return i / h % c }
	for i, x := range xs {
		mean[feature(i)] += float64(x) / (n * h)
	}
	for i, x := range xs {
		d := float64(x) - mean[feature(i)]
		variance[feature(i)] += d * d / (n * h)
	}
	measure := func(y, m, v *vkjit.Tensor) (yErr, mErr, vErr float64) {
		for i, x := range xs {
			f := feature(i)
			want := (float64(x) - mean[f]) / math.Sqrt(variance[f]+float64(float32(0.001)))
			yErr = max(yErr, math.Abs(y.Float64At(int64(i))-want))
		}
		for f := range c {
			mErr = max(mErr, math.Abs(m.Float64At(int64(f))-mean[f])/mean[f])
			vErr = max(vErr, math.Abs(v.Float64At(int64(f))-variance[f])/variance[f])
		}
		return
	}
	dy, dm, dv := measure(outs[0], outs[1], outs[2])
	ey, em, evv := measure(literalTensor(ev.Tuple[0].Lit), literalTensor(ev.Tuple[1].Lit), literalTensor(ev.Tuple[2].Lit))
	t.Logf("device: output max abs error %.3g (%.1f ulp of 1), mean max rel error %.3g, variance %.3g", dy, dy/0x1p-23, dm, dv)
	t.Logf("XLA's formula in f32, sums exact: output %.3g (%.1f ulp of 1), mean %.3g, variance %.3g", ey, ey/0x1p-23, em, evv)
	require.Less(t, dy, 4e-4)
	require.Less(t, dm, 4e-6)
	require.Less(t, dv, 4e-4)
}

// flushed reports whether a case with these f32 arguments and result (f64
// ones where wide) is one the tests' device cannot compute: one of them
// an f32 subnormal on a device that flushes them (NVIDIA's driver offers
// no shaderDenormPreserveFloat32: DeviceInfo.Subnormals).
func flushed(wide bool, vs ...float64) bool {
	if wide || rt.Device().Subnormals {
		return false
	}
	for _, v := range vs {
		if a := math.Abs(v); a != 0 && a < 0x1p-126 {
			return true
		}
	}
	return false
}

// TestRefinedDivSqrt: the f32 division and sqrt GPUs get (mathlib's div
// and sqrt, through f64) give IEEE's rounded results. Forced on
// lavapipe, every f32, f16, bf16 and c64 elementwise case (divide and
// sqrt themselves, and the library functions and complex ops that use
// them) gives the same bits as the driver's own exact operations, on
// edge-case inputs (zeros, infinities, NaN, extremes); divisors past
// 2^126 and below 2^-126 (a GPU's reciprocal flushed there) divide
// exactly, and subnormal and huge square roots are exact too.
func TestRefinedDivSqrt(t *testing.T) {
	defer noValidationMessages(t)
	n := 0
	for _, c := range hlotest.ElementwiseCases(1000) {
		if c.Type != hlo.F32 && c.Type != hlo.F16 && c.Type != hlo.BF16 && c.Type != hlo.C64 {
			continue
		}
		m, err := hlo.Parse(c.Name, c.Text)
		require.NoError(t, err)
		want, err := rt.Compile(m, vkjit.CompileOptions{})
		if err != nil {
			continue // refused on the device by name, with or without
		}
		got, err := rt.Compile(m, vkjit.CompileOptions{RefinedDivSqrt: true})
		require.NoError(t, err, c.Name)
		args := hlotest.Inputs(m, 21)
		_, _, a := runBothOn(t, want, m, args, c.Name)
		_, _, b := runBothOn(t, got, m, args, c.Name)
		for i := range a {
			requireSameValues(t, hlo.ElementType(a[i].Type), a[i].Data, b[i].Data, "%s out%d", c.Name, i)
		}
		n++
	}
	require.Greater(t, n, 100)

	src := "HloModule d\nENTRY e {\n  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n  ROOT q = f32[8] divide(x, y)\n}"
	m, err := hlo.Parse("div", src)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{RefinedDivSqrt: true})
	require.NoError(t, err)
	xs := []float32{3e38, 1, -2e38, 0x1p-149, 1e-30, 7, 3e38, 0}
	ys := []float32{3e38, 0x1p127, 0x1p-127, 0x1p-149, -0x1p-140, 0x1.8p-130, float32(math.Inf(-1)), 0x1p-149}
	lit := func(v []float32) *hlo.Literal { return literalOf(must(vkjit.Float32s([]int64{int64(len(v))}, v))) }
	_, ref, outs := runBothOn(t, exe, m, []*hlo.Literal{lit(xs), lit(ys)}, "div")
	for i := range xs {
		want := float32(float64(xs[i]) / float64(ys[i]))
		if flushed(false, float64(xs[i]), float64(ys[i]), float64(want)) {
			continue
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(float32(outs[0].Float64At(int64(i)))), "%g / %g", xs[i], ys[i])
	}
	if rt.Device().Subnormals {
		requireSameValues(t, hlo.F32, ref.Leaves()[0].Data, outs[0].Data)
	}

	m, err = hlo.Parse("sqrt", "HloModule s\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT r = f32[8] sqrt(x)\n}")
	require.NoError(t, err)
	exe, err = rt.Compile(m, vkjit.CompileOptions{RefinedDivSqrt: true})
	require.NoError(t, err)
	xs = []float32{0x1p-149, 3e-39, 0x1.fffffep127, 2, 1e-30, float32(math.Inf(1)), float32(math.Copysign(0, -1)), -1}
	_, ref, outs = runBothOn(t, exe, m, []*hlo.Literal{lit(xs)}, "sqrt")
	if rt.Device().Subnormals {
		requireSameValues(t, hlo.F32, ref.Leaves()[0].Data, outs[0].Data)
	}
	for i, x := range xs[:6] {
		if flushed(false, float64(x)) {
			continue
		}
		require.Equal(t, math.Float32bits(float32(math.Sqrt(float64(x)))), math.Float32bits(float32(outs[0].Float64At(int64(i)))), "sqrt(%g)", x)
	}
}

// TestFolderGivesDeviceBits: f32 exp, expm1, log, log1p, tanh,
// logistic, sine, cosine, tan, erf, cbrt, power and atan2 (f16 and bf16
// through them) give on the device the bits the evaluator gives, which
// folds ops of constants (hlo/eval/f32math.go repeats mathlib's steps,
// XLA's CPU algorithm), so that a program's result does not depend on
// which of its inputs were constants. Inputs: each function's range
// swept, random bit patterns, and the edges of its branches (every pair
// of them for the binary ops).
func TestFolderGivesDeviceBits(t *testing.T) {
	defer noValidationMessages(t)
	const n = 1 << 18
	edges := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 0.5, -0.5,
		float64(math.Nextafter32(0.5, 1)), float64(math.Nextafter32(-0.5, -1)), 88.72283935546875, 88.7229, 88.376,
		-87.33654, -103.972084, -103.9721, 1e-40, -1e-40, 0x1p-126, 0x1p-149, math.MaxFloat32, 1, -1, 1e-30,
		9.02, -9.02, 9.03, 0x1p24, -0x1p24, 0x1p25, -0.9999999, -1.0000001, 1e-8, -1e-8,
		math.Pi / 4, float64(math.Nextafter32(math.Pi/4, 0)), math.Pi / 2, math.Pi, 1e30, -3e9, 3.5470995e+06, -1.7939637e+29,
		2, 4, 4.0000005, 0x1p-78, 0x1.fffffep-79, -5.3e-35, 1000, -27, 0.41421357, 0.4142135, 3, -3, 0.25, 1e35, -1e35}
	// x is the first operand's i-th value; y the second's (binary ops).
	x := func(rng *rand.Rand, i int) float64 {
		switch {
		case i < len(edges):
			return edges[i]
		case i%3 == 0:
			return float64(math.Float32frombits(rng.Uint32()))
		case i%3 == 1:
			return float64(sweep(i, n, -110, 90))
		}
		return float64(sweep(i, n, -1, 1))
	}
	y := func(rng *rand.Rand, i int) float64 {
		switch {
		case i < len(edges)*len(edges):
			return edges[i%len(edges)]
		case i%4 == 0:
			return float64(math.Float32frombits(rng.Uint32()))
		case i%4 == 1:
			return float64(rng.IntN(61) - 30) // whole powers: the sign of a negative base's
		case i%4 == 2:
			return float64(rng.IntN(61)-30) + 0.5
		}
		return float64(sweep(i, n, -30, 30))
	}
	twoOperands := map[string]bool{"power": true, "atan2": true}
	for _, op := range []string{"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic", "sine", "cosine", "tan", "erf", "cbrt", "rsqrt", "power", "atan2"} {
		for _, ty := range []hlo.ElementType{hlo.F32, hlo.F16, hlo.BF16} {
			t.Run(fmt.Sprintf("%s/%s", op, ty), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				es := ty.Bytes()
				operands := 1
				if twoOperands[op] {
					operands = 2
				}
				data := make([][]byte, operands)
				put := func(k int, v float64) {
					b := make([]byte, 8)
					binary.LittleEndian.PutUint64(b, hlo.EncodeFloat(ty, v))
					data[k] = append(data[k], b[:es]...)
				}
				for i := 0; i < n; i++ {
					if operands == 2 && i < len(edges)*len(edges) {
						put(0, edges[i/len(edges)])
					} else {
						put(0, x(rng, i))
					}
					if operands == 2 {
						put(1, y(rng, i))
					}
				}
				src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  ROOT r = %[1]s[%[2]d] %[3]s(x)\n}", ty, n, op)
				if operands == 2 {
					src = fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[%[2]d] parameter(0)\n  y = %[1]s[%[2]d] parameter(1)\n  ROOT r = %[1]s[%[2]d] %[3]s(x, y)\n}", ty, n, op)
				}
				m, err := hlo.Parse(op, src)
				require.NoError(t, err)
				var lits []*hlo.Literal
				var args []*vkjit.Tensor
				for _, d := range data {
					lits = append(lits, &hlo.Literal{Shape: hlo.ArrayShape(ty, n), Data: d})
					args = append(args, &vkjit.Tensor{Type: vkjit.DType(ty), Dims: []int64{n}, Data: d})
				}
				ref, err := eval.Run(m, lits...)
				require.NoError(t, err)
				exe, err := rt.Compile(m, vkjit.CompileOptions{})
				require.NoError(t, err)
				outs, _, err := exe.Run(context.Background(), args...)
				exe.Close()
				require.NoError(t, err)
				want, got := ref.Leaves()[0].Data, outs[0].Data
				dec := func(b []byte) float64 {
					v := make([]byte, 8)
					copy(v, b)
					return hlo.DecodeFloat(ty, binary.LittleEndian.Uint64(v))
				}
				at := func(b []byte, i int) float64 { return dec(b[i*es : (i+1)*es]) }
				bad := 0
				for i := 0; i < n; i++ {
					w, g := at(want, i), at(got, i)
					if string(want[i*es:(i+1)*es]) == string(got[i*es:(i+1)*es]) || math.IsNaN(w) && math.IsNaN(g) {
						continue
					}
					in := fmt.Sprint(at(data[0], i))
					if operands == 2 {
						in += fmt.Sprint(", ", at(data[1], i))
					}
					if bad++; bad <= 10 {
						t.Errorf("%s(%s): device %g, evaluator %g", op, in, g, w)
					}
				}
				require.Zero(t, bad, "of %d values", n)
			})
		}
	}
}
