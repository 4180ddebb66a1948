package vkjit_test

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
)

// TestSubByteIntegers runs s4 and u4 (and s2, u2) arithmetic on the
// device over every pair of values and compares with the integers'
// definition: results wrap to the width (XLA's two's complement), shifts
// by the width or more give 0 (or the sign, arithmetic right), a logical
// right shift of a negative value shifts its own bits in, leading zeros
// count in the width, and float conversion saturates. Each byte holds
// the value sign-extended, as HLO text and ml_dtypes store it.
func TestSubByteIntegers(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []struct {
		name   string
		bits   int
		signed bool
	}{{"s4", 4, true}, {"u4", 4, false}, {"s2", 2, true}, {"u2", 2, false}} {
		n := 1 << ty.bits
		lo := 0
		if ty.signed {
			lo = -n / 2
		}
		wrap := func(v int) int {
			v &= n - 1
			if ty.signed && v >= n/2 {
				v -= n
			}
			return v
		}
		var xs, ys []int
		for a := lo; a < lo+n; a++ {
			for b := lo; b < lo+n; b++ {
				xs, ys = append(xs, a), append(ys, b)
			}
		}
		mk := func(v []int) *vkjit.Tensor {
			b := make([]byte, len(v))
			for i, x := range v {
				b[i] = byte(int8(x))
			}
			return must(vkjit.NewTensor(must(vkjit.ParseDType(ty.name)), []int64{int64(len(v))}, b))
		}
		shift := func(op string, a, b int) int {
			ub := uint(b) & uint(n-1) // the shift amount's bits, unsigned
			switch op {
			case "shift-left":
				if ub >= uint(ty.bits) {
					return 0
				}
				return wrap(a << ub)
			case "shift-right-logical":
				if ub >= uint(ty.bits) {
					return 0
				}
				return wrap((a & (n - 1)) >> ub)
			}
			// Arithmetic: the value's top bit shifts in, signed or not.
			as := a & (n - 1)
			if as >= n/2 {
				as -= n
			}
			if ub >= uint(ty.bits) {
				ub = uint(ty.bits) - 1
			}
			return wrap(as >> ub)
		}
		binary := map[string]func(a, b int) int{
			"add":                    func(a, b int) int { return wrap(a + b) },
			"subtract":               func(a, b int) int { return wrap(a - b) },
			"multiply":               func(a, b int) int { return wrap(a * b) },
			"maximum":                func(a, b int) int { return max(a, b) },
			"xor":                    func(a, b int) int { return wrap(a ^ b) },
			"shift-left":             func(a, b int) int { return shift("shift-left", a, b) },
			"shift-right-logical":    func(a, b int) int { return shift("shift-right-logical", a, b) },
			"shift-right-arithmetic": func(a, b int) int { return shift("shift-right-arithmetic", a, b) },
		}
		unary := map[string]func(a int) int{
			"negate":              func(a int) int { return wrap(-a) },
			"not":                 func(a int) int { return wrap(^a) },
			"count-leading-zeros": func(a int) int { return wrap(bits.LeadingZeros8(uint8(a&(n-1))) - (8 - ty.bits)) },
			"popcnt":              func(a int) int { return wrap(bits.OnesCount8(uint8(a & (n - 1)))) },
		}
		if ty.signed {
			unary["abs"] = func(a int) int { return wrap(max(a, -a)) }
		}
		check := func(op, src string, args []*vkjit.Tensor, want func(i int) int) {
			exe, err := rt.CompileText(op, src, vkjit.CompileOptions{})
			require.NoError(t, err, "%s %s", ty.name, op)
			res, _, err := exe.Run(context.Background(), args...)
			require.NoError(t, err, "%s %s", ty.name, op)
			exe.Close()
			for i := range xs {
				got := int(int8(res[0].Data[i]))
				require.Equal(t, want(i), got, "%s %s(%d, %d)", ty.name, op, xs[i], ys[i])
			}
		}
		k := len(xs)
		for op, f := range binary {
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  y = %s[%d] parameter(1)\n  ROOT r = %s[%d] %s(x, y)\n}", ty.name, k, ty.name, k, ty.name, k, op)
			check(op, src, []*vkjit.Tensor{mk(xs), mk(ys)}, func(i int) int { return f(xs[i], ys[i]) })
		}
		for op, f := range unary {
			src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(x)\n}", ty.name, k, ty.name, k, op)
			check(op, src, []*vkjit.Tensor{mk(xs)}, func(i int) int { return f(xs[i]) })
		}
		// Float conversion saturates at the narrow range.
		fs := make([]float32, k)
		for i := range fs {
			fs[i] = float32(xs[i]*3) + 0.5
		}
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT r = %s[%d] convert(x)\n}", k, ty.name, k)
		check("convert", src, []*vkjit.Tensor{must(vkjit.Float32s([]int64{int64(k)}, fs))}, func(i int) int {
			v := int(fs[i]) // truncation toward zero
			return min(max(v, lo), lo+n-1)
		})
		// Bits above the type's in an argument's bytes are not the
		// value's (XLA's packing drops them): ops that keep the range and
		// a bare result give the value.
		junk := make([]byte, k)
		for i, x := range xs {
			junk[i] = byte(x)&byte(n-1) | byte(i<<ty.bits)
		}
		arg := must(vkjit.NewTensor(must(vkjit.ParseDType(ty.name)), []int64{int64(k)}, junk))
		head := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n", ty.name, k)
		for op, src := range map[string]string{
			"maximum":       head + fmt.Sprintf("  ROOT r = %s[%d] maximum(x, x)\n}", ty.name, k),
			"select":        head + fmt.Sprintf("  t = pred[] constant(true)\n  p = pred[%d] broadcast(t), dimensions={}\n  ROOT r = %s[%d] select(p, x, x)\n}", k, ty.name, k),
			"a bare result": fmt.Sprintf("HloModule m\nENTRY e {\n  ROOT x = %s[%d] parameter(0)\n}", ty.name, k),
		} {
			check(op, src, []*vkjit.Tensor{arg}, func(i int) int { return wrap(xs[i]) })
		}
		src = fmt.Sprintf("HloModule m\nENTRY e {\n  p = (%s[%d], f32[1]) parameter(0)\n  ROOT x = %s[%d] get-tuple-element(p), index=0\n}", ty.name, k, ty.name, k)
		check("a tuple's leaf", src, []*vkjit.Tensor{arg, must(vkjit.Float32s([]int64{1}, []float32{1}))}, func(i int) int { return wrap(xs[i]) })
	}
}

// TestNarrowIntegerStructuredOps: the ops that are not elementwise in
// the integer types narrower than 32 bits, which kernels hold widened
// and wrap after each op: row and column sums (wrapping addition is
// associative, so the order of a reduction cannot show), a product sum,
// a variadic argmin, reduce-windows, a cumulative sum, sort, scatter-add
// with repeated indices, select-and-scatter, gather, and data movement,
// on operands multiplied by an iota so that sums wrap, exact against the
// evaluator fused and unfused.
func TestNarrowIntegerStructuredOps(t *testing.T) {
	defer noValidationMessages(t)
	text := "HloModule structured\n" + scalarComps(map[string]string{"add": "add", "max": "maximum",
		"ge": "compare:GE", "lt": "compare:LT"}) + `argmin {
  a = $T[] parameter(0)
  ia = s32[] parameter(1)
  b = $T[] parameter(2)
  ib = s32[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  ilt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(eq, ilt)
  pick = pred[] or(lt, tie)
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
  rsum = $T[8] reduce(s, z), dimensions={1}, to_apply=add
  csum = $T[16] reduce(s, z), dimensions={0}, to_apply=add
  d = $T[8,8] dot(s, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ks = s32[8,16] iota(), iota_dimension=1
  zi = s32[] constant(-1)
  am = ($T[8], s32[8]) reduce(s, ks, z, zi), dimensions={1}, to_apply=argmin
  amv = $T[8] get-tuple-element(am), index=0
  ami = s32[8] get-tuple-element(am), index=1
  wsum = $T[8,16] reduce-window(s, z), window={size=3x3 pad=1_1x1_1}, to_apply=add
  cum = $T[8,16] reduce-window(s, z), window={size=1x16 pad=0_0x15_0}, to_apply=add
  wmax = $T[8,8] reduce-window(s, z), window={size=1x2 stride=1x2}, to_apply=max
  srt = $T[8,16] sort(s), dimensions={1}, to_apply=lt
  sas = $T[8,16] select-and-scatter(s, wmax, z), window={size=1x2 stride=1x2}, select=ge, scatter=add
` + strings.NewReplacer("$SC", "add", "$PAD", "z").Replace(structuredTail) + `  ROOT out = ($T[8], $T[16], $T[8,8], $T[8], s32[8], $T[8,16], $T[8,16], $T[8,8], $T[8,16], $T[8,16], ` + structuredTailOuts[0] + `) tuple(rsum, csum, d, amv, ami, wsum, cum, wmax, srt, sas, ` + structuredTailOuts[1] + `)
}`
	for _, ty := range []hlo.ElementType{hlo.S2, hlo.U2, hlo.S4, hlo.U4, hlo.S8, hlo.U8, hlo.S16, hlo.U16} {
		t.Run(ty.String(), func(t *testing.T) {
			requireExact(t, "structured_"+ty.String(), strings.ReplaceAll(text, "$T", ty.String()), edgeInputs(uint64(ty)))
		})
	}
}
