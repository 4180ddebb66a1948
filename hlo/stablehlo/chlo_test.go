package stablehlo

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// runCHLO translates `%r = chlo.op %x[, %y]` over n elements of type ty
// and runs it in the reference evaluator.
func runCHLO(t *testing.T, op, ty string, args ...[]byte) []byte {
	t.Helper()
	n := len(args[0]) * 8 / map[string]int{"f32": 32, "f64": 64, "i64": 64, "ui64": 64}[ty]
	tt := fmt.Sprintf("tensor<%dx%s>", n, ty)
	params, uses := fmt.Sprintf("%%x: %s", tt), "%x"
	if len(args) == 2 {
		params, uses = params+fmt.Sprintf(", %%y: %s", tt), "%x, %y"
	}
	src := fmt.Sprintf("func.func @main(%s) -> %s {\n  %%r = chlo.%s %s : %s\n  return %%r : %s\n}\n", params, tt, op, uses, tt, tt)
	if len(args) == 2 {
		src = fmt.Sprintf("func.func @main(%s) -> %s {\n  %%r = \"chlo.%s\"(%s) : (%s, %s) -> %s\n  return %%r : %s\n}\n", params, tt, op, uses, tt, tt, tt, tt)
	}
	m, err := ParseModule(op+".mlir", src)
	require.NoError(t, err, src)
	var lits []*hlo.Literal
	for i, a := range args {
		l, err := hlo.NewLiteral(m.Entry.Params[i].Shape, a)
		require.NoError(t, err)
		lits = append(lits, l)
	}
	out, err := eval.Run(m, lits...)
	require.NoError(t, err)
	return out.Leaves()[0].Data
}

func f64Bytes(xs []float64) []byte {
	b := make([]byte, 8*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// TestCHLOExpansions checks the expansions in the reference evaluator,
// without a device: the float functions against Go's math in f64 where
// Go's is accurate, mulhi against math/bits' full products and
// next_after against math.Nextafter, bit for bit. (TestCHLOAccuracy in
// the root package measures them on the device in ulps.)
func TestCHLOExpansions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		op     string
		ref    func(float64) float64
		lo, hi float64
	}{
		{"sinh", math.Sinh, -50, 50}, {"cosh", math.Cosh, -50, 50}, {"atan", math.Atan, -100, 100},
		{"asinh", math.Asinh, -1e6, 1e6}, {"acosh", math.Acosh, 1, 1e6}, {"atanh", math.Atanh, -0.999, 0.999},
		{"asin", math.Asin, -0.9, 0.9}, {"acos", math.Acos, -0.9, 0.9}, {"erfc", math.Erfc, -5, 20},
		{"erf_inv", math.Erfinv, -0.99, 0.99}, {"lgamma", func(x float64) float64 { v, _ := math.Lgamma(x); return v }, 0.1, 50},
	} {
		xs := make([]float64, 512)
		for i := range xs {
			xs[i] = c.lo + rng.Float64()*(c.hi-c.lo)
		}
		got := runCHLO(t, c.op, "f64", f64Bytes(xs))
		for i, x := range xs {
			g := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
			want := c.ref(x)
			require.InDelta(t, want, g, 1e-13*math.Max(1, math.Abs(want)), "chlo.%s(%v)", c.op, x)
		}
	}

	// mulhi: the high half of the 128-bit product, unsigned and signed.
	as, bs := make([]byte, 8*256), make([]byte, 8*256)
	for i := 0; i < 256; i++ {
		binary.LittleEndian.PutUint64(as[8*i:], rng.Uint64())
		binary.LittleEndian.PutUint64(bs[8*i:], rng.Uint64())
	}
	for _, ty := range []string{"ui64", "i64"} {
		got := runCHLO(t, "mulhi", ty, as, bs)
		for i := 0; i < 256; i++ {
			a, b := binary.LittleEndian.Uint64(as[8*i:]), binary.LittleEndian.Uint64(bs[8*i:])
			hi, _ := bits.Mul64(a, b)
			if ty == "i64" { // the signed product's high half
				if int64(a) < 0 {
					hi -= b
				}
				if int64(b) < 0 {
					hi -= a
				}
			}
			require.Equal(t, hi, binary.LittleEndian.Uint64(got[8*i:]), "mulhi %s %#x %#x", ty, a, b)
		}
	}

	// next_after, with zeros, infinities and NaN among the pairs.
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, math.MaxFloat64}
	var xs, ys []float64
	for _, x := range special {
		for _, y := range special {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	for i := 0; i < 64; i++ {
		xs, ys = append(xs, rng.NormFloat64()), append(ys, rng.NormFloat64())
	}
	got := runCHLO(t, "next_after", "f64", f64Bytes(xs), f64Bytes(ys))
	for i := range xs {
		g := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:]))
		want := math.Nextafter(xs[i], ys[i])
		if xs[i] == ys[i] {
			want = ys[i] // C's nextafter (and XLA's): y where they are equal; Go's gives x
		}
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(g), "next_after(%v, %v) = %v", xs[i], ys[i], g)
			continue
		}
		require.Equal(t, math.Float64bits(want), math.Float64bits(g), "next_after(%v, %v)", xs[i], ys[i])
	}
}

// TestBitsBitcast: bitcast_convert between i1 and wider types, element k
// of the last dimension being bit k (the StableHLO interpreter's rule),
// both ways and round trip, in the evaluator.
func TestBitsBitcast(t *testing.T) {
	src := `func.func @main(%x: tensor<3xi16>) -> (tensor<3x16xi1>, tensor<3xi16>) {
  %b = stablehlo.bitcast_convert %x : (tensor<3xi16>) -> tensor<3x16xi1>
  %y = stablehlo.bitcast_convert %b : (tensor<3x16xi1>) -> tensor<3xi16>
  return %b, %y : tensor<3x16xi1>, tensor<3xi16>
}
`
	m, err := ParseModule("bits.mlir", src)
	require.NoError(t, err)
	in := []uint16{0x0001, 0x8000, 0xa5c3}
	data := make([]byte, 6)
	for i, v := range in {
		binary.LittleEndian.PutUint16(data[2*i:], v)
	}
	lit, err := hlo.NewLiteral(m.Entry.Params[0].Shape, data)
	require.NoError(t, err)
	out, err := eval.Run(m, lit)
	require.NoError(t, err)
	bitsOut, back := out.Leaves()[0].Data, out.Leaves()[1].Data
	for i, v := range in {
		for k := 0; k < 16; k++ {
			require.Equal(t, byte(v>>k&1), bitsOut[16*i+k], "element %d bit %d", i, k)
		}
	}
	require.Equal(t, data, back, "the round trip gives the input back")
}

// TestRaggedDot: rows of the lhs in consecutive groups, each group's
// rows multiplied by its own rhs (an empty group among them), against
// the products worked out here.
func TestRaggedDot(t *testing.T) {
	const m, k, n, g = 7, 3, 2, 3
	sizes := []int64{3, 0, 4}
	src := fmt.Sprintf(`func.func @main(%%l: tensor<%dx%dxf64>, %%r: tensor<%dx%dx%dxf64>, %%s: tensor<%dxi64>) -> tensor<%dx%dxf64> {
  %%0 = "chlo.ragged_dot"(%%l, %%r, %%s) {
    ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [],
      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>
  } : (tensor<%dx%dxf64>, tensor<%dx%dx%dxf64>, tensor<%dxi64>) -> tensor<%dx%dxf64>
  return %%0 : tensor<%dx%dxf64>
}
`, m, k, g, k, n, g, m, n, m, k, g, k, n, g, m, n, m, n)
	mod, err := ParseModule("ragged.mlir", src)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	l, r := make([]float64, m*k), make([]float64, g*k*n)
	for i := range l {
		l[i] = float64(rng.IntN(9) - 4)
	}
	for i := range r {
		r[i] = float64(rng.IntN(9) - 4)
	}
	sb := make([]byte, 8*g)
	for i, s := range sizes {
		binary.LittleEndian.PutUint64(sb[8*i:], uint64(s))
	}
	var lits []*hlo.Literal
	for i, b := range [][]byte{f64Bytes(l), f64Bytes(r), sb} {
		lit, err := hlo.NewLiteral(mod.Entry.Params[i].Shape, b)
		require.NoError(t, err)
		lits = append(lits, lit)
	}
	out, err := eval.Run(mod, lits...)
	require.NoError(t, err)
	got := out.Leaves()[0].Data
	row, grp := 0, 0
	for i := 0; i < m; i++ {
		for grp < g && row >= int(sizes[grp]) {
			row, grp = 0, grp+1
		}
		for j := 0; j < n; j++ {
			want := 0.0
			for c := 0; c < k; c++ {
				want += l[i*k+c] * r[(grp*k+c)*n+j]
			}
			require.Equal(t, want, math.Float64frombits(binary.LittleEndian.Uint64(got[8*(i*n+j):])), "row %d (group %d) col %d", i, grp, j)
		}
		row++
	}
}

// TestScan: chlo.scan as a while loop, forward and reversed, along a
// dimension that is not the first, with two outputs and one carry.
func TestScan(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		attrs := ""
		if reverse {
			attrs = " attributes {is_reverse = true}"
		}
		src := fmt.Sprintf(`func.func @main(%%x: tensor<2x5xf64>) -> (tensor<2x5xf64>, tensor<2x5xf64>, tensor<2xf64>) {
  %%one = stablehlo.constant dense<1.0> : tensor<2xf64>
  %%0:3 = chlo.scan(%%x) inits(%%one) dimension=1%s {
  ^bb0(%%a: tensor<2xf64>, %%c: tensor<2xf64>):
    %%p = stablehlo.multiply %%a, %%c : tensor<2xf64>
    %%d = stablehlo.subtract %%a, %%c : tensor<2xf64>
    stablehlo.return %%p, %%d, %%p : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
  } : (tensor<2x5xf64>, tensor<2xf64>) -> (tensor<2x5xf64>, tensor<2x5xf64>, tensor<2xf64>)
  return %%0#0, %%0#1, %%0#2 : tensor<2x5xf64>, tensor<2x5xf64>, tensor<2xf64>
}
`, attrs)
		m, err := ParseModule("scan.mlir", src)
		require.NoError(t, err)
		xs := []float64{1, 2, 3, 4, 5, -1, 0.5, 2, -2, 3}
		lit, err := hlo.NewLiteral(m.Entry.Params[0].Shape, f64Bytes(xs))
		require.NoError(t, err)
		out, err := eval.Run(m, lit)
		require.NoError(t, err)
		get := func(l *hlo.Literal, i int) float64 {
			return math.Float64frombits(binary.LittleEndian.Uint64(l.Data[8*i:]))
		}
		for r := 0; r < 2; r++ {
			c := 1.0
			for s := 0; s < 5; s++ {
				j := s
				if reverse {
					j = 4 - s
				}
				a := xs[5*r+j]
				require.Equal(t, a*c, get(out.Leaves()[0], 5*r+j), "reverse %v row %d step %d product", reverse, r, s)
				require.Equal(t, a-c, get(out.Leaves()[1], 5*r+j), "reverse %v row %d step %d difference", reverse, r, s)
				c *= a
			}
			require.Equal(t, c, get(out.Leaves()[2], r), "reverse %v row %d final carry", reverse, r)
		}
	}
}
