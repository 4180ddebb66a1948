package formula_test

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
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

// run3 builds f over three parameters of type et (f32 or f64), evaluates
// it and returns its result as float64s.
func run3(t *testing.T, et hlo.ElementType, xs, ys, zs []float64, f func(e *formula.Builder, x, y, z *hlo.Instruction) *hlo.Instruction) []float64 {
	t.Helper()
	n := int64(len(xs))
	s := hlo.ArrayShape(et, n)
	b := hlo.NewBuilder("m")
	cb := b.Entry("main")
	x, y, z := cb.Parameter(s), cb.Parameter(s), cb.Parameter(s)
	var err error
	e := formula.New(cb.Add, s, &err)
	cb.SetRoot(f(e, x, y, z))
	require.NoError(t, err)
	m, err := b.Build()
	require.NoError(t, err)
	lit := func(vs []float64) *hlo.Literal {
		var raw []byte
		for _, v := range vs {
			if et == hlo.F32 {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
			} else {
				raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
			}
		}
		l, err := hlo.NewLiteral(s, raw)
		require.NoError(t, err)
		return l
	}
	out, err := eval.Run(m, lit(xs), lit(ys), lit(zs))
	require.NoError(t, err)
	got := make([]float64, n)
	for i := range got {
		if et == hlo.F32 {
			got[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(out.Lit.Data[4*i:])))
		} else {
			got[i] = math.Float64frombits(binary.LittleEndian.Uint64(out.Lit.Data[8*i:]))
		}
	}
	return got
}

// fma32 is x*y + z rounded once to f32, from the exact sum.
func fma32(x, y, z float32) float32 {
	if r := float64(x)*float64(y) + float64(z); math.IsNaN(r) || math.IsInf(r, 0) || r == 0 {
		return float32(r) // special values and signed zeros as IEEE's, in f64
	}
	p := new(big.Float).SetPrec(200).SetFloat64(float64(x))
	p.Mul(p, new(big.Float).SetFloat64(float64(y)))
	p.Add(p, new(big.Float).SetFloat64(float64(z)))
	r, _ := p.Float32()
	return r
}

// TestFMA holds the emulated fused multiply-add to the exact one, bit
// for bit, on products whose terms cancel (z near -x*y, where two
// roundings differ most), on random magnitudes, and at the edges.
func TestFMA(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, et := range []hlo.ElementType{hlo.F32, hlo.F64} {
		var xs, ys, zs []float64
		add := func(x, y, z float64) {
			if et == hlo.F32 {
				x, y, z = float64(float32(x)), float64(float32(y)), float64(float32(z))
			}
			xs, ys, zs = append(xs, x), append(ys, y), append(zs, z)
		}
		for i := 0; i < 4000; i++ {
			x := rng.NormFloat64() * math.Pow(2, float64(rng.Intn(80)-40))
			y := rng.NormFloat64() * math.Pow(2, float64(rng.Intn(80)-40))
			p := x * y
			if et == hlo.F32 {
				p = float64(float32(x) * float32(y))
			}
			switch i % 3 {
			case 0:
				add(x, y, -p)
			case 1:
				add(x, y, -p*(1+rng.Float64()*1e-6))
			default:
				add(x, y, rng.NormFloat64()*math.Pow(2, float64(rng.Intn(80)-40)))
			}
		}
		// Where the low parts' sum must round to odd: x*y = 2^-p (1 -
		// 2^-2h), just below half an ulp of z = 1 + 2^(1-p), whose last
		// bit is odd; its high part is 2^-p (2h > p), so that th + tl
		// rounded to nearest first would tie, to the wrong side.
		prec, h := 53, 27
		if et == hlo.F32 {
			prec, h = 24, 13
		}
		for _, sc := range []float64{1, -1, 0x1p40, -0x1p-30} {
			x, y, z := 1+math.Ldexp(1, -h), (1-math.Ldexp(1, -h))*math.Ldexp(1, -prec), 1+math.Ldexp(1, 1-prec)
			add(x*sc, y, z*sc)
			add(x, -y*sc, -z*sc)
		}
		for _, x := range edge {
			for _, y := range edge {
				for _, z := range []float64{0, math.Copysign(0, -1), 1, math.Inf(-1), math.NaN()} {
					add(x, y, z)
				}
			}
		}
		got := run3(t, et, xs, ys, zs, func(e *formula.Builder, x, y, z *hlo.Instruction) *hlo.Instruction { return e.FMA(x, y, z) })
		for i := range xs {
			x, y, z := xs[i], ys[i], zs[i]
			want := math.FMA(x, y, z)
			if et == hlo.F32 {
				want = float64(fma32(float32(x), float32(y), float32(z)))
			}
			if math.IsNaN(want) {
				require.True(t, math.IsNaN(got[i]), "%s fma(%g, %g, %g) = %g, want NaN", et, x, y, z, got[i])
				continue
			}
			tiny := map[hlo.ElementType]float64{hlo.F32: 0x1p-102, hlo.F64: 0x1p-969}[et]
			huge := map[hlo.ElementType]float64{hlo.F32: 0x1p115, hlo.F64: 0x1p996}[et]
			if x != 0 && y != 0 && math.Abs(x*y) < tiny || math.Abs(x) >= huge || math.Abs(y) >= huge {
				continue // outside the exact range: the doc comment's bounds
			}
			require.True(t, want == got[i] && math.Signbit(want) == math.Signbit(got[i]), "%s fma(%g, %g, %g) = %g, want %g", et, x, y, z, got[i], want)
		}
	}
}
