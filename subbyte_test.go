package vkjit_test

import (
	"context"
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
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
