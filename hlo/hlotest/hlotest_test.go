package hlotest

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
)

func TestULPs(t *testing.T) {
	one32 := float64(math.Nextafter32(1, 2))
	require.Equal(t, int64(1), ULPs(hlo.F32, 1, one32))
	require.Equal(t, int64(2), ULPs(hlo.F32, float64(math.Nextafter32(1, 0)), one32))
	require.Equal(t, int64(1), ULPs(hlo.F64, 1, math.Nextafter(1, 2)))
	require.Equal(t, int64(0), ULPs(hlo.F32, 0, math.Copysign(0, -1)))
	require.Equal(t, int64(1<<24), ULPs(hlo.F32, -0x1p-126, 0x1p-126), "the denormals lie between")
	require.Equal(t, int64(0), ULPs(hlo.F64, math.NaN(), math.NaN()))
	require.Equal(t, int64(math.MaxInt64), ULPs(hlo.F64, 1, math.NaN()))
	require.Greater(t, ULPs(hlo.F32, math.Inf(1), math.MaxFloat32), int64(0))
}

func TestCasesParseAndVerify(t *testing.T) {
	cases := ElementwiseCases(3)
	require.Greater(t, len(cases), 250)
	for _, c := range cases {
		m, err := hlo.Parse(c.Name, c.Text)
		require.NoError(t, err, c.Text)
		require.NoError(t, hlo.Verify(m), c.Text)
		args := Inputs(m, 1)
		require.Len(t, args, len(m.Entry.Params))
		for i, a := range args {
			require.Equal(t, m.Entry.Params[i].Shape.ByteSize(), int64(len(a.Data)))
		}
	}
}

// TestRetypeComplex: widening takes c64 to c128 part by part, in the
// program's constants and in its arguments alike, and narrowing back.
func TestRetypeComplex(t *testing.T) {
	m, err := hlo.Parse("c", `HloModule c
ENTRY e {
  a = c64[2] parameter(0)
  k = c64[] constant((1.5, -0.1))
  b = c64[2] broadcast(k), dimensions={}
  ROOT r = c64[2] multiply(a, b)
}`)
	require.NoError(t, err)
	wide, err := Retype(m, Widened)
	require.NoError(t, err)
	require.Contains(t, wide.String(), "c128[] constant((1.5, -0.10000000149011612))")
	arg := &hlo.Literal{Shape: hlo.ArrayShape(hlo.C64, 2), Data: make([]byte, 16)}
	for i, v := range []float32{1, -2, 0.1, 8} {
		b := math.Float32bits(v)
		arg.Data[4*i], arg.Data[4*i+1], arg.Data[4*i+2], arg.Data[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	w := RetypeInputs([]*hlo.Literal{arg}, Widened)[0]
	require.Equal(t, hlo.ArrayShape(hlo.C128, 2), w.Shape)
	for i, v := range []float32{1, -2, 0.1, 8} {
		require.Equal(t, float64(v), floatAt(w.Data, hlo.F64, int64(i)))
	}
	back := RetypeInputs([]*hlo.Literal{w}, Narrowed)[0]
	require.Equal(t, arg, back)
}

// TestRetypeBitcasts: a bitcast between types that are not retyped (s32
// to u32) reads no float's bits and is kept; one from a retyped type is
// refused. Refusing every bitcast left FuzzPrograms' seed 1705, whose
// loop counter is bitcast, without the widened program that measures how
// far an f32 sum of 714 terms moves with its order.
func TestRetypeBitcasts(t *testing.T) {
	for _, c := range []struct {
		cast, ty string
		ok       bool
	}{{"bitcast-convert(i)", "u32", true}, {"bitcast-convert(x)", "s32", false}} {
		m, err := hlo.Parse("b", fmt.Sprintf(`HloModule b
ENTRY e {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  c = %s[] %s
  y = f32[] multiply(x, x)
  ROOT r = (f32[], %s[]) tuple(y, c)
}`, c.ty, c.cast, c.ty))
		require.NoError(t, err)
		_, err = Retype(m, Widened)
		if c.ok {
			require.NoError(t, err, c.cast)
		} else {
			require.Error(t, err, c.cast)
		}
	}
}
