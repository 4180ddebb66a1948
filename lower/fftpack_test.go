package lower

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
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
