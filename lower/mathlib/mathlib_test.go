package mathlib

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/spirv"
)

// TestTwoOverPi checks the 2/pi words of the trigonometric reduction
// against pi to 100 decimal digits (332 bits, more than the 224 used).
func TestTwoOverPi(t *testing.T) {
	const piDigits = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"
	pi, ok := new(big.Float).SetPrec(400).SetString(piDigits)
	require.True(t, ok)
	v := new(big.Float).SetPrec(400).Quo(big.NewFloat(2).SetPrec(400), pi)
	for i, w := range twoOverPi {
		v.Mul(v, new(big.Float).SetPrec(400).SetUint64(1<<32))
		word, _ := v.Uint64()
		require.Equal(t, uint64(w), word, "word %d", i)
		v.Sub(v, new(big.Float).SetPrec(400).SetUint64(word))
	}
	// The f64 table, computed from hlo.Pi, starts with the same words
	// (its far words are checked by hlo/eval's TestTrigHardCase).
	require.Equal(t, twoOverPi[:], twoOverPi64[:len(twoOverPi)])
}

// TestEveryFunctionValidates emits each function at both widths into a
// compute shader of its own and has spirv-val check it: the library
// builds structurally valid code over the SPIR-V builder alone, with no
// kernel around it (the device tests in the root package measure its
// accuracy), with the driver's division taken as exact and refined.
func TestEveryFunctionValidates(t *testing.T) {
	unary := map[string]func(Lib, spirv.ID) spirv.ID{
		"exp": Lib.Exp, "expNonPositive": Lib.ExpNonPositive, "expm1": Lib.Expm1, "log": Lib.Log,
		"log1p": Lib.Log1p, "logistic": Lib.Logistic, "tanh": Lib.Tanh, "sin": Lib.Sin, "cos": Lib.Cos,
		"tan": Lib.Tan, "erf": Lib.Erf, "cbrt": Lib.Cbrt, "sqrt": Lib.Sqrt,
	}
	binary := map[string]func(Lib, spirv.ID, spirv.ID) spirv.ID{"atan2": Lib.Atan2, "pow": Lib.Pow, "div": Lib.Div}
	for _, c := range []struct {
		width    int
		exactDiv bool
	}{{32, true}, {32, false}, {64, true}, {64, false}} {
		width := c.width
		emit := func(name string, call func(l Lib, x, y spirv.ID) (spirv.ID, error)) {
			b := spirv.NewBuilder()
			void := b.TypeVoid()
			f := b.TypeFloat(width)
			fn := b.Function(void, b.TypeFunction(void))
			fn.Label(0)
			v := fn.LocalVariable(b.TypePointer(spirv.StorageFunction, f))
			x := fn.Load(f, v)
			d := Driver{IEEEDivSqrt: c.exactDiv, Float64: true, Contracts: !c.exactDiv}
			l := F32(b, fn, d)
			if width == 64 {
				l = F64(b, fn, d)
			}
			r, err := call(l, x, fn.Load(f, v))
			require.NoError(t, err, "f%d %s", width, name)
			fn.Store(v, r)
			fn.Void(spirv.OpReturn)
			fn.End()
			b.EntryPoint(fn.ID, "main")
			b.LocalSize(fn.ID, 1, 1, 1)
			require.NoError(t, spirv.Validate(b.Words()), "f%d %s", width, name)
		}
		for name, u := range unary {
			emit(name, func(l Lib, x, _ spirv.ID) (spirv.ID, error) { return u(l, x), nil })
		}
		for name, bf := range binary {
			emit(name, func(l Lib, x, y spirv.ID) (spirv.ID, error) { return bf(l, x, y), nil })
		}
		emit("fmod", Lib.Fmod)
	}
}
