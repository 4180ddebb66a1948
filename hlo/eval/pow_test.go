package eval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPowAndAtan2 checks the cases where Go's math.Pow, math.Atan2 and
// math.Exp are wrong (want values from 50-digit decimal arithmetic).
func TestPowAndAtan2(t *testing.T) {
	ulp := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) - x }
	want := 2.9603782644726898e-133
	require.InDelta(t, want, Pow(0.5497916258561328, 510.1142959505695), ulp(want), "a large exponent (math.Pow: 252 ulp off)")
	want = 0.9439613507819328
	require.InDelta(t, want, Pow(1.8211031173588664e-308, 8.138628115820883e-05), ulp(want), "a subnormal base")
	require.False(t, math.IsInf(Pow(1e-30, -10.273791671937452), 0), "1.6e308 is finite")
	require.Equal(t, -8.0, Pow(-2, 3))
	want = 1.3549863193146328e+308 // math.Exp(709.5) is +Inf on amd64
	require.InDelta(t, want, Exp(709.5), ulp(want))
	require.True(t, math.IsInf(Exp(709.8), 1))
	require.Equal(t, math.Exp(1), Exp(1))
	require.Equal(t, 1.0, Pow(math.NaN(), 0))
	require.True(t, math.IsNaN(Pow(-2, 0.5)))
	require.Equal(t, -math.Pi, Atan2(-2.3259258672575186e-281, -1.0144581917124197e+152), "atan2 keeps y's sign")
	require.True(t, math.Signbit(Atan2(math.Copysign(0, -1), 1)))
	require.Equal(t, math.Pi, Atan2(0, math.Copysign(0, -1)))
}
