package hlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMiniFloatKnownValues(t *testing.T) {
	for _, tc := range []struct {
		t    ElementType
		v    float64
		bits uint32
	}{
		{F8E4M3FN, 448, 0x7e}, {F8E4M3FN, -448, 0xfe}, {F8E4M3FN, 1, 0x38}, {F8E4M3FN, 0x1p-9, 0x01},
		{F8E4M3FN, 1000, 0x7f}, {F8E4M3FN, math.Inf(1), 0x7f}, // no inf: overflow is NaN
		{F8E5M2, 57344, 0x7b}, {F8E5M2, math.Inf(-1), 0xfc}, {F8E5M2, 1, 0x3c}, {F8E5M2, 1e6, 0x7c},
		{F8E4M3FNUZ, 240, 0x7f}, {F8E4M3FNUZ, math.Copysign(0, -1), 0x00}, {F8E4M3FNUZ, 1, 0x40},
		{F8E5M2FNUZ, 1, 0x40}, {F8E4M3B11FNUZ, 1, 0x58},
		{F8E4M3, 240, 0x77}, {F8E4M3, math.Inf(1), 0x78},
		{F8E3M4, 1, 0x30}, {F8E3M4, 15.5, 0x6f},
		{F8E8M0FNU, 1, 0x7f}, {F8E8M0FNU, 0.5, 0x7e}, {F8E8M0FNU, 3.5, 0x81},
		{F4E2M1FN, 6, 0x7}, {F4E2M1FN, -0.5, 0x9}, {F4E2M1FN, 100, 0x7}, {F4E2M1FN, 1.25, 0x2}, // 1.25 ties to even (1.0)
		// f6, as StableHLO's interpreter tests round them (constant.mlir).
		{F6E2M3FN, 3.1415, 0x15}, {F6E2M3FN, 0.1, 0x01}, {F6E2M3FN, 7.5, 0x1f}, {F6E2M3FN, -100, 0x3f},
		{F6E3M2FN, 3.1415, 0x12}, {F6E3M2FN, 0.1, 0x02}, {F6E3M2FN, 28, 0x1f}, {F6E3M2FN, -0.0625, 0x21},
		{F8E4M3FN, 1.0625, 0x38}, {F8E4M3FN, 1.1875, 0x3a}, // ties to even mantissa
		// A NaN keeps its sign where the type's NaNs have one, as an
		// overflow to NaN does (ml_dtypes' conversions); fnuz has one NaN.
		{F8E4M3FN, math.Copysign(math.NaN(), -1), 0xff}, {F8E4M3FN, -1000, 0xff}, {F8E4M3FN, math.Inf(-1), 0xff},
		{F8E5M2, math.Copysign(math.NaN(), -1), 0xfe}, {F8E3M4, math.Copysign(math.NaN(), -1), 0xf8},
		// The IEEE-like types' NaN is IEEE's quiet one (ml_dtypes' quiet_NaN).
		{F8E5M2, math.NaN(), 0x7e}, {F8E4M3, math.NaN(), 0x7c}, {F8E3M4, math.NaN(), 0x78},
		{F8E4M3FNUZ, math.Copysign(math.NaN(), -1), 0x80}, {F8E4M3FNUZ, -1000, 0x80}, {F8E8M0FNU, math.Copysign(math.NaN(), -1), 0xff},
		{F4E2M1FN, math.Copysign(math.NaN(), -1), 0},
	} {
		require.Equal(t, tc.bits, MiniFloatFromFloat64(tc.t, tc.v), "%s(%v)", tc.t, tc.v)
	}
}

// Every encoding decodes and re-encodes to itself (NaNs to the canonical
// NaN of their sign).
func TestMiniFloatRoundTrip(t *testing.T) {
	for typ, f := range miniFloats {
		n := uint32(1) << uint(typ.Bits())
		for b := uint32(0); b < n; b++ {
			v := f.decode(b)
			got := f.encode(v)
			if math.IsNaN(v) {
				require.True(t, math.IsNaN(f.decode(got)), "%s %#x", typ, b)
				require.Equal(t, math.Signbit(v), math.Signbit(f.decode(got)), "%s %#x keeps its sign", typ, b)
				continue
			}
			require.Equal(t, b, got, "%s %#x = %v", typ, b, v)
		}
	}
}

// TestHalfFromFloat64 rounds float64 values in one step: ones just off a
// tie of f16 or bf16 (which a detour through float32 lands on), the
// overflow boundary, subnormals.
func TestHalfFromFloat64(t *testing.T) {
	for _, c := range []struct {
		v        float64
		f16, b16 uint16
	}{
		{1 + 0x1p-11 + 0x1p-40, 0x3c01, 0x3f80},
		{-(1 + 0x1p-11 + 0x1p-40), 0xbc01, 0xbf80},
		{1 + 0x1p-11, 0x3c00, 0x3f80}, // a tie: to even
		{1 + 0x1p-8 + 0x1p-40, 0x3c04, 0x3f81},
		{1 + 0x1p-8, 0x3c04, 0x3f80},
		{65519.99999999, 0x7bff, 0x4780},
		{65520, 0x7c00, 0x4780},
		{0x1.8p-24 + 0x1p-60, 0x0002, 0x33c0},
		{0x1p-25, 0x0000, 0x3300}, // half the smallest f16 subnormal: a tie, to 0
		{math.Inf(-1), 0xfc00, 0xff80},
		{math.Copysign(0, -1), 0x8000, 0x8000},
		{0x1.fffp-15, 0x0400, 0x3880}, // rounds up to the smallest normal f16
	} {
		require.Equal(t, c.f16, F16FromFloat64(c.v), "f16(%g)", c.v)
		require.Equal(t, c.b16, BF16FromFloat64(c.v), "bf16(%g)", c.v)
	}
	require.Equal(t, uint16(0x7e00), F16FromFloat64(math.NaN())&0x7e00)
}

func TestMiniFloatFormat(t *testing.T) {
	for _, c := range []struct {
		t   ElementType
		max float64
	}{{F8E4M3FN, 448}, {F8E5M2, 57344}, {F8E4M3FNUZ, 240}, {F4E2M1FN, 6}, {F6E2M3FN, 7.5}, {F6E3M2FN, 28}, {F8E8M0FNU, 0x1p127}} {
		f, ok := MiniFloatFormatOf(c.t)
		require.True(t, ok)
		require.Equal(t, c.max, f.Max, "%s", c.t)
		require.Equal(t, c.t.Bits(), f.Bits, "%s", c.t)
		require.Equal(t, f.Bits, f.Exp+f.Man+map[bool]int{true: 1, false: 0}[f.SignBit != 0], "%s", c.t)
		if !f.Saturate {
			require.True(t, math.IsNaN(MiniFloatToFloat64(c.t, f.NaN)), "%s: NaN code %#x", c.t, f.NaN)
		}
	}
	require.True(t, math.IsNaN(MiniFloatToFloat64(F8E8M0FNU, MiniFloatFromFloat64(F8E8M0FNU, -2))))
}
