package lower

import (
	"math"
	"math/big"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// TestPackFactors: ducc's factorization (4s first, a 2 moved to the
// front, odd primes rising) and the lengths the passes take.
func TestPackFactors(t *testing.T) {
	for n, want := range map[int64][]int64{
		1: nil, 2: {2}, 8: {2, 4}, 16: {4, 4}, 24: {2, 4, 3}, 33: {3, 11}, 17: {17},
		1000: {2, 4, 5, 5, 5}, 343: {7, 7, 7}, 90: {2, 3, 3, 5},
	} {
		require.Equal(t, want, packFactors(n), "n %d", n)
	}
	for n, want := range map[int64]bool{
		1: true, 17: true, 47: true, 49: true, // under 50: passes whatever the factors
		53: false, 106: false, // a prime factor p with p^2 > n from 50 on
		121: true, 270: true, 1000: true, 990: true, 999: false,
		137 * 137: false,              // a factor of 135 or more: Bluestein's
		1024:      false, 1002: false, // even past 1000: maybe a complex transform of n/2
	} {
		require.Equal(t, want, packable(n), "n %d", n)
	}
}

// TestUnityRoots: the roots are e^(2 pi i k/n) to an ulp or two
// (ducc's two tables multiplied), and cosSin is correctly rounded; the
// references are Taylor series at 300 bits.
func TestUnityRoots(t *testing.T) {
	pi, _, err := big.ParseFloat("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798", 10, 300, big.ToNearestEven)
	require.NoError(t, err)
	for _, n := range []int64{3, 17, 33, 100, 343, 1000} {
		r := newUnityRoots(n)
		for k := range n {
			re, im := r.at(k)
			a := new(big.Float).SetPrec(300).Mul(pi, big.NewFloat(float64(2*k)))
			c, s := series(a.Quo(a, big.NewFloat(float64(n))))
			require.InDelta(t, c, re, 3e-16, "n %d k %d", n, k)
			require.InDelta(t, s, im, 3e-16, "n %d k %d", n, k)
		}
	}
	for _, a := range []float64{1e-300, 1e-8, 0.1, 0.5, 0.7, math.Pi / 4} {
		c, s := cosSin(a)
		wc, ws := series(new(big.Float).SetPrec(300).SetFloat64(a))
		require.Equal(t, wc, c, "cos %g", a)
		require.Equal(t, ws, s, "sin %g", a)
	}
}

// series is cos x and sin x by their Taylor series at 300 bits, rounded
// once to float64 (|x| < 7).
func series(x *big.Float) (float64, float64) {
	c, s := new(big.Float).SetPrec(300).SetInt64(1), new(big.Float).SetPrec(300).Set(x)
	tc, ts := new(big.Float).SetPrec(300).SetInt64(1), new(big.Float).SetPrec(300).Set(x)
	x2 := new(big.Float).SetPrec(300).Mul(x, x)
	for k := int64(1); k < 80; k++ {
		tc.Mul(tc, x2).Quo(tc, big.NewFloat(float64((2*k-1)*(2*k)))).Neg(tc)
		ts.Mul(ts, x2).Quo(ts, big.NewFloat(float64((2*k)*(2*k+1)))).Neg(ts)
		c.Add(c, tc)
		s.Add(s, ts)
	}
	fc, _ := c.Float64()
	fs, _ := s.Float64()
	return fc, fs
}

// TestFftPassKernels: a complex transform whose length's prime factors
// are at most kgen.FftRadixMax is a kernel per stage of passes (factors
// in ducc's order, their product at most kgen.FftStageMax; one stage
// list per dimension transformed, along a middle one too), each passing
// spirv-val, and no other kernel; a length with a larger prime factor
// keeps the DFT matrices' products (another kernel).
func TestFftPassKernels(t *testing.T) {
	for _, c := range []struct {
		text   string
		stages []string
		others bool
	}{
		{"HloModule m\nENTRY e {\n  x = c64[8,360] parameter(0)\n  ROOT f = c64[8,360] fft(x), fft_type=FFT, fft_length={360}\n}",
			[]string{"fft_pass2x4x3_fwd_f32", "fft_pass3x5_fwd_f32"}, false},
		{"HloModule m\nENTRY e {\n  x = c128[5,12,7] parameter(0)\n  ROOT f = c128[5,12,7] fft(x), fft_type=IFFT, fft_length={12,7}\n}",
			[]string{"fft_pass4x3_bwd_f64", "fft_pass7_bwd_f64"}, false},
		{"HloModule m\nENTRY e {\n  x = c64[2,4096] parameter(0)\n  ROOT f = c64[2,4096] fft(x), fft_type=FFT, fft_length={4096}\n}",
			[]string{"fft_pass4x4x4_fwd_f32", "fft_pass4x4x4_fwd_f32"}, false},
		{"HloModule m\nENTRY e {\n  x = c64[4,17] parameter(0)\n  ROOT f = c64[4,17] fft(x), fft_type=FFT, fft_length={4,17}\n}",
			[]string{"fft_pass4_fwd_f32"}, true},
		// A prime of 64 or more: Bluestein's transforms of 135 = 3^3 5.
		{"HloModule m\nENTRY e {\n  x = c64[2,67] parameter(0)\n  ROOT f = c64[2,67] fft(x), fft_type=FFT, fft_length={67}\n}",
			[]string{"fft_pass3x3x3_fwd_f32", "fft_pass5_fwd_f32", "fft_pass3x3x3_bwd_f32", "fft_pass5_bwd_f32"}, true},
	} {
		m, err := hlo.Parse("test.hlo", c.text)
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err)
		var stages []string
		others := false
		for _, s := range p.Steps {
			if s.Kind != StepDispatch {
				continue
			}
			k := p.Kernels[s.Kernel]
			if strings.HasPrefix(k.Name, "fft_pass") {
				stages = append(stages, k.Name)
			} else {
				others = true
			}
		}
		require.Equal(t, c.stages, stages, c.text)
		require.Equal(t, c.others, others, c.text)
		for _, k := range p.Kernels {
			require.NoError(t, spirv.Validate(k.Words), k.Name)
		}
	}
}

// TestRealFftPassKernels: a real transform of a length ducc's real
// passes take runs them in ducc's order (packFactors: forward last
// factor first, backward first factor first), for the fixed radices and
// the generic one, with even and odd ido: the passes that leave
// sub-transforms of at most kgen.RealFftRegisterMax values as one kernel
// from registers (all of them up to that length), each other a kernel,
// and with SharedFft all as one kernel through shared memory; each
// passes spirv-val.
func TestRealFftPassKernels(t *testing.T) {
	for _, c := range []struct {
		text    string
		kernels []string
		rows    string
	}{
		{"HloModule m\nENTRY e {\n  x = f32[8,1000] parameter(0)\n  ROOT f = c64[8,501] fft(x), fft_type=RFFT, fft_length={1000}\n}",
			[]string{"rfft_regs40_radf5_radf5_f32", "rfft_radf5_f32", "rfft_radf4_f32", "rfft_radf2_f32"},
			"rfft_rows_radf5_radf5_radf5_radf4_radf2_f32"},
		{"HloModule m\nENTRY e {\n  x = c64[8,501] parameter(0)\n  ROOT f = f32[8,1000] fft(x), fft_type=IRFFT, fft_length={1000}\n}",
			[]string{"rfft_radb2_f32", "rfft_radb4_f32", "rfft_radb5_f32", "rfft_regs40_radb5_radb5_f32"},
			"rfft_rows_radb2_radb4_radb5_radb5_radb5_f32"},
		{"HloModule m\nENTRY e {\n  x = f64[3,154] parameter(0)\n  ROOT f = c128[3,78] fft(x), fft_type=RFFT, fft_length={154}\n}",
			[]string{"rfft_radf11_f64", "rfft_radf7_f64", "rfft_radf2_f64"}, "rfft_rows_radf11_radf7_radf2_f64"},
		{"HloModule m\nENTRY e {\n  x = f32[3,289] parameter(0)\n  ROOT f = c64[3,145] fft(x), fft_type=RFFT, fft_length={289}\n}",
			[]string{"rfft_radf17_f32", "rfft_radf17_f32"}, "rfft_rows_radf17_radf17_f32"},
		{"HloModule m\nENTRY e {\n  x = c128[3,78] parameter(0)\n  ROOT f = f64[3,154] fft(x), fft_type=IRFFT, fft_length={154}\n}",
			[]string{"rfft_radb2_f64", "rfft_radb7_f64", "rfft_radb11_f64"}, "rfft_rows_radb2_radb7_radb11_f64"},
		{"HloModule m\nENTRY e {\n  x = f32[2,5,96] parameter(0)\n  ROOT f = c64[2,5,49] fft(x), fft_type=RFFT, fft_length={96}\n}",
			[]string{"rfft_regs2_radf3_radf4_radf4_f32", "rfft_radf2_f32"}, "rfft_rows_radf3_radf4_radf4_radf2_f32"},
		{"HloModule m\nENTRY e {\n  x = c64[2,5,49] parameter(0)\n  ROOT f = f32[2,5,96] fft(x), fft_type=IRFFT, fft_length={96}\n}",
			[]string{"rfft_radb2_f32", "rfft_regs2_radb4_radb4_radb3_f32"}, "rfft_rows_radb2_radb4_radb4_radb3_f32"},
		{"HloModule m\nENTRY e {\n  x = c128[4,25] parameter(0)\n  ROOT f = f64[4,49] fft(x), fft_type=IRFFT, fft_length={49}\n}",
			[]string{"rfft_regs_radb7_radb7_f64"}, "rfft_rows_radb7_radb7_f64"},
	} {
		m, err := hlo.Parse("test.hlo", c.text)
		require.NoError(t, err)
		for _, opts := range []Options{{}, {SharedFft: true}} {
			p, err := Compile(m, LlvmpipeTarget, opts)
			require.NoError(t, err)
			var kernels []string
			for _, s := range p.Steps {
				if s.Kind == StepDispatch && strings.HasPrefix(p.Kernels[s.Kernel].Name, "rfft_") {
					kernels = append(kernels, p.Kernels[s.Kernel].Name)
				}
			}
			want := c.kernels
			if opts.SharedFft {
				want = []string{c.rows}
			}
			require.Equal(t, want, kernels, "%s\n%+v", c.text, opts)
			for _, k := range p.Kernels {
				require.NoError(t, spirv.Validate(k.Words), k.Name)
			}
		}
	}
}

// TestBluesteinSizes: goodSize is the least length of factors 2, 3, 5, 7
// and 11 at least m (against a search), and largestPrime the largest
// prime factor.
func TestBluesteinSizes(t *testing.T) {
	smooth := func(n int64) bool {
		for _, p := range []int64{2, 3, 5, 7, 11} {
			for n%p == 0 {
				n /= p
			}
		}
		return n == 1
	}
	for m := int64(1); m < 3000; m++ {
		want := m
		for !smooth(want) {
			want++
		}
		require.Equal(t, want, goodSize(m), "m %d", m)
	}
	require.Equal(t, int64(8232), goodSize(8197))
	for n, p := range map[int64]int64{1: 1, 2: 2, 12: 3, 67: 67, 134: 67, 4099: 4099, 1 << 20: 2, 3 * 4099 * 4099: 4099} {
		require.Equal(t, p, largestPrime(n), "n %d", n)
	}
}

// TestHostDFT: the float64 transform Bluestein's algorithm makes its
// constants with agrees with a direct sum to 1e-13 of the largest
// magnitude (both round: the bound is loose for either).
func TestHostDFT(t *testing.T) {
	for _, n := range []int64{1, 2, 6, 35, 135, 1024, 8232} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(math.Sin(float64(i)*1.3), math.Cos(float64(i*i)*0.7))
		}
		got := hostDFT(x, newUnityRoots(n), -1)
		var worst, scale float64
		for k := int64(0); k < n; k += max(1, n/64) {
			var sum complex128
			for j := int64(0); j < n; j++ {
				s, c := math.Sincos(-2 * math.Pi * float64(j*k%n) / float64(n))
				sum += x[j] * complex(c, s)
			}
			worst = math.Max(worst, cmplx.Abs(got[k]-sum))
			scale = math.Max(scale, cmplx.Abs(sum))
		}
		require.Less(t, worst/scale, 1e-13, "n %d", n)
	}
}
