package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
)

// TestF8 converts f32 values to each f8 type on the device and back:
// every one of the type's codes (256, 64 or 16), the midpoints between neighbours
// (ties go to even), values beyond the largest (inf or NaN by type),
// subnormals, and random values, against hlo's own encoder
// (hlo.MiniFloatFromFloat64, written apart from the device's rounding);
// and an f8 product, computed in f32 and rounded to the grid once.
func TestF8(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F8E8M0FNU, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN} {
		var vals []float32
		var grid []float64
		for b := uint32(0); b < 1<<ty.Bits(); b++ {
			v := hlo.MiniFloatToFloat64(ty, b)
			vals = append(vals, float32(v))
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				grid = append(grid, v)
			}
		}
		sort.Float64s(grid)
		for i := 1; i < len(grid); i++ {
			if grid[i] > grid[i-1] {
				vals = append(vals, float32((grid[i]+grid[i-1])/2))
			}
		}
		for range 2000 {
			vals = append(vals, float32(math.Ldexp(2*rng.Float64()-1, rng.IntN(40)-20)))
		}
		vals = append(vals, 1e30, -1e30, float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1)), 1e-30)
		n := len(vals)
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT r = %s[%d] convert(x)\n}", n, ty, n)
		exe, err := rt.CompileText("f8", src, vkjit.CompileOptions{})
		require.NoError(t, err, "%s", ty)
		res, _, err := exe.Run(context.Background(), must(vkjit.Float32s([]int64{int64(n)}, vals)))
		require.NoError(t, err, "%s", ty)
		exe.Close()
		for i, v := range vals {
			want := hlo.MiniFloatFromFloat64(ty, float64(v))
			got := uint32(res[0].Data[i])
			if math.IsNaN(hlo.MiniFloatToFloat64(ty, want)) {
				require.True(t, math.IsNaN(hlo.MiniFloatToFloat64(ty, got)), "%s(%g): %#x, want NaN", ty, v, got)
				continue
			}
			require.Equal(t, want, got, "%s(%g) = %g, want %g", ty, v, hlo.MiniFloatToFloat64(ty, got), hlo.MiniFloatToFloat64(ty, want))
		}
	}
	// x*y in f8e4m3fn: the f32 product of two grid values, rounded once.
	a, b := []byte{0x38, 0x3c, 0x7e, 0x01}, []byte{0x40, 0xc4, 0x40, 0x40} // 1, 1.5, 448, 2^-9; 2, -3, 2, 2
	src := "HloModule m\nENTRY e {\n  x = f8e4m3fn[4] parameter(0)\n  y = f8e4m3fn[4] parameter(1)\n  ROOT r = f8e4m3fn[4] multiply(x, y)\n}"
	exe, err := rt.CompileText("f8mul", src, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x := must(vkjit.NewTensor(vkjit.F8E4M3FN, []int64{4}, a))
	y := must(vkjit.NewTensor(vkjit.F8E4M3FN, []int64{4}, b))
	res, _, err := exe.Run(context.Background(), x, y)
	require.NoError(t, err)
	for i := range 4 {
		p := hlo.MiniFloatToFloat64(hlo.F8E4M3FN, uint32(a[i])) * hlo.MiniFloatToFloat64(hlo.F8E4M3FN, uint32(b[i]))
		want := hlo.MiniFloatFromFloat64(hlo.F8E4M3FN, p)
		require.Equal(t, want, uint32(res[0].Data[i]), "element %d: %g", i, p)
	}
	// An integer product with an f8 result converts its operands to the
	// f8 type first (XLA's operand conversion; its shape inference allows
	// integer operands no wider than the result): 100 is past
	// f8e4m3b11fnuz's range (30), so it is NaN and so is its row's sum,
	// though it multiplies 0; the other row's sums, 11 and -10, are on
	// the grid.
	src = "HloModule m\nENTRY e {\n  a = s8[2,3] parameter(0)\n  b = s8[3,2] parameter(1)\n  ROOT d = f8e4m3b11fnuz[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}"
	dot, err := rt.CompileText("f8dot", src, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer dot.Close()
	s8 := func(dims []int64, v ...int8) *vkjit.Tensor {
		b := make([]byte, len(v))
		for i, x := range v {
			b[i] = byte(x)
		}
		return must(vkjit.NewTensor(vkjit.S8, dims, b))
	}
	res, _, err = dot.Run(context.Background(), s8([]int64{2, 3}, 100, 1, 2, 3, -4, 5), s8([]int64{3, 2}, 0, 1, 1, 2, 3, -1))
	require.NoError(t, err)
	var got []float64
	for _, c := range res[0].Data {
		got = append(got, hlo.MiniFloatToFloat64(hlo.F8E4M3B11FNUZ, uint32(c)))
	}
	require.True(t, math.IsNaN(got[0]) && math.IsNaN(got[1]), "%v", got)
	require.Equal(t, []float64{11, -10}, got[2:], "3*0 - 4*1 + 5*3; 3 - 8 - 5")
}

// TestMiniFloatCodes: the small float types keep their width on the
// device, a code a byte (kgen/minifloat.go): every code of each type
// comes back through data movement as it was, NaNs and negative zeros
// included, and converts to the f32 value hlo's own decoder gives (a NaN
// to the f32 NaN that carries its code), fused and not, through vector
// kernels' packed bytes, storage loads and device addresses.
func TestMiniFloatCodes(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F8E8M0FNU, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN} {
		f, _ := hlo.MiniFloatFormatOf(ty)
		codes := 1 << ty.Bits()
		n := 4 * codes // a multiple of the vector kernels' 8 elements
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i % codes)
		}
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  p = %[1]s[%[2]d] parameter(0)\n  r = %[1]s[%[2]d] reverse(p), dimensions={0}\n  f = f32[%[2]d] convert(r)\n  ROOT t = (%[1]s[%[2]d], f32[%[2]d]) tuple(r, f)\n}", ty, n)
		for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}, {StorageLoads: true}, {AddressAbove: 4}} {
			exe, err := rt.CompileText("codes", src, opts)
			require.NoError(t, err, "%s", ty)
			params := vkjit.ProgramOf(exe).Params
			require.Equal(t, int64(n), vkjit.ProgramOf(exe).Buffers[params[0]].Size, "%s: a byte a code", ty)
			res, _, err := exe.Run(context.Background(), must(vkjit.NewTensor(vkjit.DType(ty), []int64{int64(n)}, data)))
			require.NoError(t, err, "%s", ty)
			exe.Close()
			for i := range n {
				c := uint32(data[n-1-i])
				require.Equal(t, byte(c), res[0].Data[i], "%s %+v: code %#x", ty, opts, c)
				v := hlo.MiniFloatToFloat64(ty, c)
				want := math.Float32bits(float32(v))
				if math.IsNaN(v) {
					want = kgen.MarkedNaN(f, c)
				}
				got := binary.LittleEndian.Uint32(res[1].Data[4*i:])
				require.Equal(t, want, got, "%s %+v: code %#x decodes to %#x, want %#x (%g)", ty, opts, c, got, want, v)
			}
		}
	}
}

// TestMiniFloatConversions: every code of each small float type
// converts to each other small float type as hlo's own decoder and
// encoder take it (XLA's conversion: round to nearest even, overflow to
// inf, NaN or the largest value as the type has them), compared by
// value, a NaN as any NaN: a NaN's code belongs to its type, and one
// type's NaN code may be another's number (e4m3fn's NaN 0x7f is
// e4m3b11fnuz's 30, which the device gave until the converted NaN took
// the target's NaN; FuzzPrograms seed 167).
func TestMiniFloatConversions(t *testing.T) {
	defer noValidationMessages(t)
	types := []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F8E8M0FNU, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN}
	for _, from := range types {
		n := 1 << from.Bits()
		data := make([]byte, 8*((n+7)/8))
		for i := range data {
			data[i] = byte(i % n)
		}
		for _, to := range types {
			if to == from {
				continue
			}
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  ROOT c = %s[%d] convert(p)\n}", from, len(data), to, len(data))
			exe, err := rt.CompileText("convert", src, vkjit.CompileOptions{})
			require.NoError(t, err, "%s -> %s", from, to)
			res, _, err := exe.Run(context.Background(), must(vkjit.NewTensor(vkjit.DType(from), []int64{int64(len(data))}, data)))
			require.NoError(t, err, "%s -> %s", from, to)
			exe.Close()
			for i, c := range data {
				want := hlo.MiniFloatToFloat64(to, hlo.MiniFloatFromFloat64(to, hlo.MiniFloatToFloat64(from, uint32(c))))
				got := hlo.MiniFloatToFloat64(to, uint32(res[0].Data[i]))
				if math.IsNaN(want) {
					require.True(t, math.IsNaN(got), "%s -> %s: code %#x gives %g, want NaN", from, to, c, got)
					continue
				}
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s -> %s: code %#x gives %g, want %g", from, to, c, got, want)
			}
		}
	}
}

// TestMiniFloatIota: an iota of a small float type holds its type's
// values (an index past the grid rounds to it, as XLA converts the
// index), also where it is computed inside the kernel that reads it:
// there it was the raw index, so an f8e4m3fn iota read 17 where the
// type holds 16, and k*k was wrong at 3 of 64 elements (found by
// TestNarrowPassThrough's scaled operands).
func TestMiniFloatIota(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F8E8M0FNU, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN} {
		requireExact(t, "iota_"+ty.String(), strings.ReplaceAll(`HloModule iota
ENTRY e {
  k = $T[4,80] iota(), iota_dimension=1
  kk = $T[4,80] multiply(k, k)
  c = f32[4,80] convert(k)
  ROOT out = ($T[4,80], $T[4,80], f32[4,80]) tuple(k, kk, c)
}`, "$T", ty.String()), specials)
	}
}

// TestMiniFloatOps: every elementwise op of the small float types (and
// of f16 and bf16) on operands scaled across the type's range by an
// iota, fused after a rounding op and before another, exact against
// the evaluator (the scaled operands found TestMiniFloatIota's bug).
func TestMiniFloatOps(t *testing.T) {
	defer noValidationMessages(t)
	unary := []string{"negate", "abs", "sign", "floor", "ceil", "round-nearest-even", "round-nearest-afz", "sqrt", "rsqrt",
		"exponential", "log", "tanh", "logistic", "cbrt", "sine", "cosine", "exponential-minus-one", "log-plus-one"}
	binary := []string{"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "atan2"}
	var b strings.Builder
	b.WriteString("HloModule ops\nENTRY e {\n  x = $T[64] parameter(0)\n  y = $T[64] parameter(1)\n")
	b.WriteString("  k = $T[64] iota(), iota_dimension=0\n  s = $T[64] multiply(x, k)\n")
	var outs []string
	for i, op := range unary {
		fmt.Fprintf(&b, "  u%d = $T[64] %s(s)\n  v%d = $T[64] add(u%d, s)\n", i, op, i, i)
		outs = append(outs, fmt.Sprintf("v%d", i))
	}
	for i, op := range binary {
		fmt.Fprintf(&b, "  b%d = $T[64] %s(s, y)\n  c%d = $T[64] add(b%d, x)\n", i, op, i, i)
		outs = append(outs, fmt.Sprintf("c%d", i))
	}
	fmt.Fprintf(&b, "  ROOT out = (%s) tuple(%s)\n}\n", strings.TrimSuffix(strings.Repeat("$T[64], ", len(outs)), ", "), strings.Join(outs, ", "))
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN, hlo.F16, hlo.BF16} {
		requireExact(t, "ops_"+ty.String(), strings.ReplaceAll(b.String(), "$T", ty.String()), edgeInputs(uint64(ty)))
	}
}

// TestMiniFloatStructuredOps: the ops that are not elementwise (row and
// column reductions, a variadic argmax, reduce-windows, a sort,
// scatter and select-and-scatter, gather, data movement, conversions
// through f32) in the small float types and f16 and bf16, on operands
// scaled across the type's range by an iota as TestMiniFloatOps does,
// exact against the evaluator fused and unfused. Each combiner is one
// whose result does not depend on the order it is applied in (max, min,
// a pairwise add, argmax with ties to the lower index and NaN first), so
// exactness is the right bar.
func TestMiniFloatStructuredOps(t *testing.T) {
	defer noValidationMessages(t)
	text := "HloModule structured\n" + scalarComps(map[string]string{"max": "maximum", "min": "minimum", "add": "add",
		"ge": "compare:GE", "lt": "compare:LT, type=TOTALORDER"}) + `argmax {
  a = $T[] parameter(0)
  ia = s32[] parameter(1)
  b = $T[] parameter(2)
  ib = s32[] parameter(3)
  anan = pred[] compare(a, a), direction=NE
  bnan = pred[] compare(b, b), direction=NE
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  ilt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(eq, ilt)
  numa = pred[] or(gt, tie)
  nb = pred[] not(bnan)
  both = pred[] and(anan, bnan)
  bothlt = pred[] and(both, ilt)
  onlya = pred[] and(anan, nb)
  nana = pred[] or(onlya, bothlt)
  na = pred[] not(anan)
  num = pred[] and(na, nb)
  numpick = pred[] and(num, numa)
  pick = pred[] or(nana, numpick)
  v = $T[] select(pick, a, b)
  i = s32[] select(pick, ia, ib)
  ROOT r = ($T[], s32[]) tuple(v, i)
}
ENTRY e {
  x = $T[8,16] parameter(0)
  y = $T[8,16] parameter(1)
  k = $T[8,16] iota(), iota_dimension=1
  s = $T[8,16] multiply(x, k)
  z = $T[] constant(0)
  big = $T[] constant(2)
  rmax = $T[8] reduce(s, z), dimensions={1}, to_apply=max
  rmin = $T[16] reduce(s, big), dimensions={0}, to_apply=min
  ks = s32[8,16] iota(), iota_dimension=1
  zi = s32[] constant(-1)
  am = ($T[8], s32[8]) reduce(s, ks, z, zi), dimensions={1}, to_apply=argmax
  amv = $T[8] get-tuple-element(am), index=0
  ami = s32[8] get-tuple-element(am), index=1
  wmax = $T[8,16] reduce-window(s, z), window={size=3x3 pad=1_1x1_1}, to_apply=max
  wadd = $T[8,8] reduce-window(s, z), window={size=1x2 stride=1x2}, to_apply=add
  srt = $T[8,16] sort(s), dimensions={1}, to_apply=lt
  sas = $T[8,16] select-and-scatter(s, wadd, z), window={size=1x2 stride=1x2}, select=ge, scatter=add
` + strings.NewReplacer("$SC", "max", "$PAD", "big").Replace(structuredTail) + `  f = f32[8,16] convert(s)
  f2 = f32[8,16] multiply(f, f)
  back = $T[8,16] convert(f2)
  ROOT out = ($T[8], $T[16], $T[8], s32[8], $T[8,16], $T[8,8], $T[8,16], $T[8,16], $T[8,16], ` + structuredTailOuts[0] + `) tuple(rmax, rmin, amv, ami, wmax, wadd, srt, sas, back, ` + structuredTailOuts[1] + `)
}`
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN, hlo.F16, hlo.BF16} {
		t.Run(ty.String(), func(t *testing.T) {
			requireExact(t, "structured_"+ty.String(), strings.ReplaceAll(text, "$T", ty.String()), edgeInputs(uint64(ty)))
		})
	}
}

// TestMiniFloatNaNOrder: the NaNs a kernel makes from every code of a
// small float type (its NaN codes negated, overflow, inf * 0 and NaN *
// 0), sorted in total order by the kernel that computes them, so
// compared in registers, not loaded from memory. A register must hold
// the NaN the store writes, and both the NaN the evaluator encodes: a
// NaN's sign is kept (negate flips it) where the type's NaNs have one.
// Before, x86's inf * 0 (-NaN) sorted first in the kernel where the
// stored e4m3fn NaN (0x7f) sorts last, a negated NaN code kept its code
// with the other sign, and an fnuz overflow (f32's +NaN) sorted last
// where the stored 0x80 sorts first. (One NaN from each operand would
// leave which one propagates to the driver: the zero here is none.)
func TestMiniFloatNaNOrder(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FN, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F8E8M0FNU, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN} {
		n := 1 << ty.Bits()
		codes := func(m *hlo.Module) []*hlo.Literal {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i)
			}
			return []*hlo.Literal{{Shape: m.Entry.Params[0].Shape, Data: data}}
		}
		text := strings.NewReplacer("$T", ty.String(), "$N", fmt.Sprint(n), "$4N", fmt.Sprint(4*n)).Replace(`HloModule nans
lt {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = $T[$N] parameter(0)
  neg = $T[$N] negate(x)
  big = $T[] constant(64)
  bigs = $T[$N] broadcast(big), dimensions={}
  over = $T[$N] multiply(x, bigs)
  z = $T[] constant(0)
  zero = $T[$N] broadcast(z), dimensions={}
  nan = $T[$N] multiply(x, zero)
  all = $T[$4N] concatenate(x, neg, over, nan), dimensions={0}
  ROOT s = $T[$4N] sort(all), dimensions={0}, to_apply=lt
}`)
		t.Run(ty.String(), func(t *testing.T) { requireExact(t, "nans_"+ty.String(), text, codes) })
	}
}
