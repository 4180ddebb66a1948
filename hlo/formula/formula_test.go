package formula_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/formula"
)

// edge are values where sign, zero, infinity and NaN decide the answer.
var edge = []float64{0, math.Copysign(0, -1), 1, -1, 2.5, -3e-300, 1e300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(),
	math.Copysign(math.NaN(), -1), 5e-324, -math.MaxFloat64, 3, 4}

// run builds f over two f64 parameters of len(xs) elements, evaluates it
// with the reference evaluator and returns its result.
func run(t *testing.T, xs, ys []float64, f func(e *formula.Builder, x, y *hlo.Instruction) *hlo.Instruction) []float64 {
	t.Helper()
	n := int64(len(xs))
	s := hlo.ArrayShape(hlo.F64, n)
	b := hlo.NewBuilder("m")
	cb := b.Entry("main")
	x, y := cb.Parameter(s), cb.Parameter(s)
	var err error
	e := formula.New(cb.Add, s, &err)
	cb.SetRoot(f(e, x, y))
	require.NoError(t, err)
	m, err := b.Build()
	require.NoError(t, err)
	lit := func(vs []float64) *hlo.Literal {
		raw := make([]byte, 0, 8*len(vs))
		for _, v := range vs {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
		}
		l, err := hlo.NewLiteral(s, raw)
		require.NoError(t, err)
		return l
	}
	out, err := eval.Run(m, lit(xs), lit(ys))
	require.NoError(t, err)
	got := make([]float64, n)
	for i := range got {
		got[i] = math.Float64frombits(binary.LittleEndian.Uint64(out.Lit.Data[8*i:]))
	}
	return got
}

// pairs are every pair of edge values, as two columns.
func pairs() (xs, ys []float64) {
	for _, x := range edge {
		for _, y := range edge {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	return xs, ys
}

func same(want, got float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got) && math.Signbit(want) == math.Signbit(got)
	}
	return want == got && math.Signbit(want) == math.Signbit(got)
}

func TestCopySignAndHypot(t *testing.T) {
	xs, ys := pairs()
	cs := run(t, xs, ys, func(e *formula.Builder, x, y *hlo.Instruction) *hlo.Instruction { return e.CopySign(x, y) })
	hs := run(t, xs, ys, func(e *formula.Builder, x, y *hlo.Instruction) *hlo.Instruction { return e.Hypot(x, y) })
	for i := range xs {
		x, y := xs[i], ys[i]
		require.True(t, same(math.Copysign(x, y), cs[i]), "copysign(%g, %g) = %g", x, y, cs[i])
		want := math.Hypot(x, y)
		if want != 0 && !math.IsInf(want, 0) && !math.IsNaN(want) {
			require.InEpsilon(t, want, hs[i], 1e-15, "hypot(%g, %g)", x, y)
			continue
		}
		require.True(t, same(want, hs[i]), "hypot(%g, %g) = %g, want %g", x, y, hs[i], want)
	}
}

func TestPolyAndPredicates(t *testing.T) {
	xs, ys := pairs()
	// 2x^2 - 3x + 0.1 where x is finite, 2 where it is infinite (both by
	// IsInf and by neither finite nor NaN), 3 where NaN, -1 otherwise.
	got := run(t, xs, ys, func(e *formula.Builder, x, _ *hlo.Instruction) *hlo.Instruction {
		infinite := e.And(e.IsInf(x), e.And(e.Not(e.Finite(x)), e.Not(e.IsNaN(x))))
		nan := e.Or(e.IsNaN(x), e.Cmp(x, "GT", e.K(math.Inf(1))))
		return e.Sel(e.Finite(x), e.Poly(x, []float64{2, -3, 0.1}), e.Sel(infinite, e.K(2), e.Sel(nan, e.K(3), e.K(-1))))
	})
	for i, x := range xs {
		want := (2*x-3)*x + 0.1
		switch {
		case math.IsNaN(x):
			want = 3
		case math.IsInf(x, 0):
			want = 2
		}
		require.True(t, same(want, got[i]), "x=%g: %g, want %g", x, got[i], want)
	}
}

func TestErrorsShared(t *testing.T) {
	b := hlo.NewBuilder("m")
	cb := b.Entry("main")
	x := cb.Parameter(hlo.ArrayShape(hlo.F32, 3))
	var err error
	e := formula.New(cb.Add, x.Shape, &err)
	w := e.With(hlo.F64)
	w.Add(x, w.K(1)) // f32 plus f64: no shape
	require.Error(t, err)
	require.Equal(t, err, e.Err())
	first := err
	e.Fail(nil)
	e.Cmp(x, "SOMETIMES", x)
	require.Equal(t, first, e.Err(), "the first error stays")
}
