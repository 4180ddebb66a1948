package eval

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

// run evaluates `op(args...)` on scalars of type t given as text.
func run(t *testing.T, op string, ty, rty hlo.ElementType, attrs string, args ...string) *hlo.Literal {
	t.Helper()
	src := "HloModule m\nENTRY e {\n"
	names := ""
	for i, a := range args {
		at := ty
		if op == "select" && i == 0 {
			at = hlo.PRED
		}
		src += fmt.Sprintf("  c%d = %s[] constant(%s)\n", i, at, a)
		if i > 0 {
			names += ", "
		}
		names += fmt.Sprintf("c%d", i)
	}
	src += fmt.Sprintf("  ROOT r = %s[] %s(%s)%s\n}\n", rty, op, names, attrs)
	m, err := hlo.Parse("t.hlo", src)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	v, err := Run(m)
	require.NoError(t, err)
	return v.Lit
}

func f32(l *hlo.Literal) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(l.Data)) }
func s32(l *hlo.Literal) int32   { return int32(binary.LittleEndian.Uint32(l.Data)) }
func u32(l *hlo.Literal) uint32  { return binary.LittleEndian.Uint32(l.Data) }

func TestIntegerEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		op   string
		a, b string
		want int32
	}{
		{"divide", "7", "0", -1},
		{"divide", "-2147483648", "-1", math.MinInt32},
		{"divide", "-7", "2", -3},
		{"remainder", "7", "0", 7},
		{"remainder", "-2147483648", "-1", 0},
		{"remainder", "-7", "2", -1},
		{"add", "2147483647", "1", math.MinInt32},
		{"multiply", "65536", "65536", 0},
		{"shift-left", "1", "32", 0},
		{"shift-left", "1", "31", math.MinInt32},
		{"shift-right-arithmetic", "-8", "40", -1},
		{"shift-right-logical", "-8", "40", 0},
		{"shift-right-logical", "-8", "28", 15},
		{"power", "3", "4", 81},
		{"power", "2", "-1", 0},
		{"maximum", "-5", "3", 3},
	} {
		got := s32(run(t, tc.op, hlo.S32, hlo.S32, "", tc.a, tc.b))
		require.Equal(t, tc.want, got, "%s(%s, %s)", tc.op, tc.a, tc.b)
	}
	require.Equal(t, uint32(math.MaxUint32), u32(run(t, "divide", hlo.U32, hlo.U32, "", "5", "0")))
	require.Equal(t, uint32(5), u32(run(t, "remainder", hlo.U32, hlo.U32, "", "5", "0")))
	require.Equal(t, int32(math.MinInt32), s32(run(t, "abs", hlo.S32, hlo.S32, "", "-2147483648")))
	require.Equal(t, int32(32), s32(run(t, "count-leading-zeros", hlo.S32, hlo.S32, "", "0")))
	require.Equal(t, int32(32), s32(run(t, "popcnt", hlo.S32, hlo.S32, "", "-1")))
}

func TestFloatEdgeCases(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		op   string
		args []string
		want float32
	}{
		{"maximum", []string{"nan", "1"}, nan},
		{"maximum", []string{"1", "nan"}, nan},
		{"minimum", []string{"-inf", "nan"}, nan},
		{"maximum", []string{"-inf", "3"}, 3},
		{"remainder", []string{"-7.5", "2"}, -1.5},
		{"remainder", []string{"7.5", "-2"}, 1.5},
		{"remainder", []string{"1", "inf"}, 1},
		{"divide", []string{"1", "0"}, float32(math.Inf(1))},
		{"divide", []string{"-1", "0"}, float32(math.Inf(-1))},
		{"round-nearest-afz", []string{"2.5"}, 3},
		{"round-nearest-afz", []string{"-2.5"}, -3},
		{"round-nearest-afz", []string{"0.49999997"}, 0},
		{"round-nearest-even", []string{"2.5"}, 2},
		{"round-nearest-even", []string{"-3.5"}, -4},
		{"sign", []string{"-0"}, float32(math.Copysign(0, -1))},
		{"sign", []string{"nan"}, nan},
		{"sign", []string{"-3"}, -1},
		{"add", []string{"3e38", "3e38"}, float32(math.Inf(1))},
		{"clamp", []string{"0", "5", "3"}, 3},
		{"clamp", []string{"0", "-5", "3"}, 0},
	} {
		got := f32(run(t, tc.op, hlo.F32, hlo.F32, "", tc.args...))
		if math.IsNaN(float64(tc.want)) {
			require.True(t, math.IsNaN(float64(got)), "%s%v = %v", tc.op, tc.args, got)
			continue
		}
		require.Equal(t, math.Float32bits(tc.want), math.Float32bits(got), "%s%v = %v", tc.op, tc.args, got)
	}
}

func TestConvertAndCompare(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int32
	}{
		{"nan", 0}, {"inf", math.MaxInt32}, {"-inf", math.MinInt32}, {"3e9", math.MaxInt32},
		{"-3e9", math.MinInt32}, {"-2.9", -2}, {"2.9", 2},
	} {
		require.Equal(t, tc.want, s32(run(t, "convert", hlo.F32, hlo.S32, "", tc.in)), "convert(%s)", tc.in)
	}
	require.Equal(t, uint32(0), u32(run(t, "convert", hlo.F32, hlo.U32, "", "-5")))
	require.Equal(t, uint32(math.MaxUint32), u32(run(t, "convert", hlo.F32, hlo.U32, "", "1e10")))
	require.Equal(t, uint32(math.MaxUint32), u32(run(t, "convert", hlo.S32, hlo.U32, "", "-1")), "integers wrap")
	require.Equal(t, []byte{1}, run(t, "convert", hlo.F32, hlo.PRED, "", "nan").Data, "NaN is nonzero")
	require.Equal(t, []byte{0}, run(t, "convert", hlo.F32, hlo.PRED, "", "-0").Data)
	require.Equal(t, float32(16777216), f32(run(t, "convert", hlo.S32, hlo.F32, "", "16777217")), "round to nearest even")

	cmp := func(dir, a, b string) byte {
		return run(t, "compare", hlo.F32, hlo.PRED, ", direction="+dir, a, b).Data[0]
	}
	require.Equal(t, byte(0), cmp("EQ", "nan", "nan"))
	require.Equal(t, byte(1), cmp("NE", "nan", "nan"))
	require.Equal(t, byte(0), cmp("LT", "nan", "1"))
	require.Equal(t, byte(1), cmp("EQ", "0", "-0"))
	require.Equal(t, byte(1), cmp("GE", "inf", "inf"))
	total := func(dir, a, b string) byte {
		return run(t, "compare", hlo.F32, hlo.PRED, ", direction="+dir+", type=TOTALORDER", a, b).Data[0]
	}
	require.Equal(t, byte(1), total("LT", "-0", "0"), "total order: -0 < +0")
	require.Equal(t, byte(0), total("EQ", "-0", "0"))
	require.Equal(t, byte(1), total("LT", "inf", "nan"))
	require.Equal(t, byte(1), total("LT", "-nan", "-inf"))
	require.Equal(t, byte(1), total("LT", "-2", "-1"))
	require.Equal(t, byte(1), run(t, "compare", hlo.U32, hlo.PRED, ", direction=GT", "4294967295", "0").Data[0], "unsigned order")
	require.Equal(t, byte(0), run(t, "compare", hlo.S32, hlo.PRED, ", direction=GT", "-1", "0").Data[0])
}

func TestArgumentChecks(t *testing.T) {
	m, err := hlo.Parse("t.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}")
	require.NoError(t, err)
	_, err = Run(m)
	require.ErrorContains(t, err, "takes 1 arguments, got 0")
	_, err = Run(m, &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, 3), Data: make([]byte, 12)})
	require.ErrorContains(t, err, "parameter x")
}

// TestDeadCode: what no result depends on is not computed, a custom
// call the evaluator cannot run among it, as XLA drops it; a side
// effect is refused wherever it is (hlo.Module.SideEffects).
func TestDeadCode(t *testing.T) {
	m, err := hlo.Parse("t.hlo", "HloModule m\nENTRY e {\n  c = f32[] constant(2)\n  p = f32[] custom-call(c), custom_call_target=\"pin\"\n  ROOT n = f32[] negate(c)\n}")
	require.NoError(t, err)
	v, err := Run(m)
	require.NoError(t, err)
	require.Equal(t, float32(-2), f32(v.Lit))
	m, err = hlo.Parse("t.hlo", "HloModule m\nENTRY e {\n  c = f32[] constant(2)\n  t = token[] after-all()\n  o = token[] outfeed(c, t)\n  ROOT n = f32[] negate(c)\n}")
	require.NoError(t, err)
	_, err = Run(m)
	require.ErrorContains(t, err, "t.hlo:5:3: o (outfeed): the reference evaluator does not run outfeed")
}

// TestBoundedDynamic: a bounded dynamic dimension runs at its bound, as
// on the device (an argument of that size); asking its size is refused.
func TestBoundedDynamic(t *testing.T) {
	m, err := hlo.Parse("t.hlo", "HloModule m\nENTRY e {\n  x = f32[<=3] parameter(0)\n  ROOT n = f32[<=3] negate(x)\n}")
	require.NoError(t, err)
	x := &hlo.Literal{Shape: hlo.ArrayShape(hlo.F32, 3), Data: make([]byte, 12)}
	binary.LittleEndian.PutUint32(x.Data[4:], math.Float32bits(1.5))
	v, err := Run(m, x)
	require.NoError(t, err)
	require.Equal(t, []int64{3}, v.Lit.Shape.Dims)
	require.Equal(t, float32(-1.5), math.Float32frombits(binary.LittleEndian.Uint32(v.Lit.Data[4:])))
	m, err = hlo.Parse("t.hlo", "HloModule m\nENTRY e {\n  x = f32[<=3] parameter(0)\n  ROOT n = s32[] get-dimension-size(x), dimensions={0}\n}")
	require.NoError(t, err)
	_, err = Run(m, x)
	require.ErrorContains(t, err, "get-dimension-size of a bounded dynamic dimension")
}

// TestLoopInvariants: a while body's product of two arrays it passes on
// unchanged is evaluated once per loop (invariantIn marks it), and one of
// arrays it swaps every iteration is not: the sums after three iterations
// are 3ab against ab + ba + ab, computed here.
func TestLoopInvariants(t *testing.T) {
	const n = 3
	a := []int64{1, 2, 0, -1, 3, 1, 2, 0, 4}
	b := []int64{0, 1, 5, 2, -2, 1, 3, 1, 0}
	mul := func(x, y []int64) []int64 {
		out := make([]int64, n*n)
		for i := range n {
			for j := range n {
				for k := range n {
					out[i*n+j] += x[i*n+k] * y[k*n+j]
				}
			}
		}
		return out
	}
	ab, ba := mul(a, b), mul(b, a)
	lit := func(v []int64) string {
		s := "{"
		for i := range n {
			s += "{"
			for j := range n {
				s += fmt.Sprint(v[i*n+j])
				if j < n-1 {
					s += ","
				}
			}
			s += "}"
			if i < n-1 {
				s += ","
			}
		}
		return s + "}"
	}
	for _, swap := range []bool{false, true} {
		next := "x, y"
		want := make([]int64, n*n)
		for i := range want {
			want[i] = 3 * ab[i]
			if swap {
				want[i] = 2*ab[i] + ba[i]
			}
		}
		if swap {
			next = "y, x"
		}
		st := "(s32[], s32[3,3], s32[3,3], s32[3,3])"
		src := fmt.Sprintf(`HloModule m
cond {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = s32[3,3] get-tuple-element(p), index=1
  y = s32[3,3] get-tuple-element(p), index=2
  acc = s32[3,3] get-tuple-element(p), index=3
  d = s32[3,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = s32[3,3] add(acc, d)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = %[1]s tuple(i1, %[2]s, s)
}
ENTRY e {
  a = s32[3,3] constant(%[3]s)
  b = s32[3,3] constant(%[4]s)
  z = s32[] constant(0)
  acc = s32[3,3] broadcast(z), dimensions={}
  t = %[1]s tuple(z, a, b, acc)
  w = %[1]s while(t), condition=cond, body=body
  ROOT r = s32[3,3] get-tuple-element(w), index=3
}
`, st, next, lit(a), lit(b))
		m, err := hlo.Parse("t.hlo", src)
		require.NoError(t, err)
		require.NoError(t, hlo.Verify(m))
		v, err := Run(m)
		require.NoError(t, err)
		got, err := v.Lit.Ints()
		require.NoError(t, err)
		require.Equal(t, want, got, "swap %v", swap)
		body := m.Computations[1]
		require.Equal(t, "body", body.Name)
		var d *hlo.Instruction
		for _, in := range body.Instructions {
			if in.Name == "d" {
				d = in
			}
		}
		require.Equal(t, !swap, newEvaluator().invariantIn(body)[d], "swap %v", swap)
	}
}

// TestCHLOFunctionTables: the evaluator's per-function tables (its
// definitions and the expansions' tolerances) cover hlo.CHLOFunctions,
// the one list of them, and nothing else; each is inexact.
func TestCHLOFunctionTables(t *testing.T) {
	require.Len(t, hyperbolic, len(hlo.CHLOFunctions))
	require.Len(t, expansionUlps, len(hlo.CHLOFunctions))
	for _, op := range hlo.CHLOFunctions {
		require.Contains(t, hyperbolic, op)
		require.Contains(t, expansionUlps, op)
		require.True(t, inexactOps[op], op.String())
	}
}

// TestPoisonUnderflows: RunZerosPoisoned makes NaNs of the zeros an
// inexact op underflows to, real or a complex part, and keeps those it
// computes at an exact point (sin 0, the imaginary part of e^(x+0i)) and
// those of exact ops.
func TestPoisonUnderflows(t *testing.T) {
	m, err := hlo.Parse("t.hlo", `HloModule m
ENTRY e {
  big = f32[] constant(-1000)
  zero = f32[] constant(-0)
  u = f32[] exponential(big)
  s = f32[] sine(zero)
  three = f32[] constant(3)
  p = f32[] multiply(zero, three)
  x = c64[] constant((-7.92e6, -4.01e7))
  l = c64[] logistic(x)
  y = c64[] constant((2, -0))
  ey = c64[] exponential(y)
  ROOT r = (f32[], f32[], f32[], c64[], c64[]) tuple(u, s, p, l, ey)
}
`)
	require.NoError(t, err)
	plain, err := Run(m)
	require.NoError(t, err)
	v, err := RunZerosPoisoned(m, 0)
	require.NoError(t, err)
	require.Equal(t, 0.0, float64(f32(plain.Tuple[0].Lit)), "e^-1000 underflows")
	require.True(t, math.IsNaN(float64(f32(v.Tuple[0].Lit))), "its zero is poisoned")
	require.True(t, math.Signbit(float64(f32(v.Tuple[1].Lit))), "sin(-0) is -0")
	require.True(t, math.Signbit(float64(f32(v.Tuple[2].Lit))), "-0 * 3 is -0, an exact op's zero, kept")
	l := get(v.Tuple[3].Lit, 0).c
	require.Equal(t, complex(0, 0), get(plain.Tuple[3].Lit, 0).c, "1/(1 + inf cis θ) is a zero")
	require.True(t, math.IsNaN(real(l)) && math.IsNaN(imag(l)), "whose parts' signs are θ's: poisoned")
	ey := get(v.Tuple[4].Lit, 0).c
	require.Equal(t, float32(math.Exp(2)), float32(real(ey)))
	require.True(t, imag(ey) == 0 && math.Signbit(imag(ey)), "e^(2-0i)'s imaginary part is -0, kept")
}

// TestPoisonFftNearZeros: RunZerosPoisoned makes NaNs of an FFT's parts
// within its error bound of 0 (an RFFT of a constant's bins past the
// first, and its imaginary parts) and keeps the rest (the constant's
// sum).
func TestPoisonFftNearZeros(t *testing.T) {
	m, err := hlo.Parse("t.hlo", `HloModule m
ENTRY e {
  x = f32[6] constant({0.1, 0.1, 0.1, 0.1, 0.1, 0.1})
  ROOT f = c64[4] fft(x), fft_type=RFFT, fft_length={6}
}
`)
	require.NoError(t, err)
	v, err := RunZerosPoisoned(m, 0)
	require.NoError(t, err)
	for i := range int64(4) {
		c := get(v.Lit, i).c
		if i == 0 {
			require.InDelta(t, 0.6, real(c), 1e-6, "the sum is kept")
			require.True(t, math.IsNaN(imag(c)), "its imaginary part, 0 or roundoff, is poisoned")
			continue
		}
		require.True(t, math.IsNaN(real(c)) && math.IsNaN(imag(c)), "bin %d, roundoff, is poisoned", i)
	}
}
