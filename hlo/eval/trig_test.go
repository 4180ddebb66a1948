package eval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrigHardCase: 6381956970095103 * 2^797 is the double closest to a
// multiple of pi/2 (Kahan and McDonald's search); its cosine,
// -4.68716592425462761e-19, takes 2/pi to about 900 bits. Go's math.Cos
// gives -4.84e-19 there.
func TestTrigHardCase(t *testing.T) {
	x := math.Ldexp(6381956970095103, 797)
	require.InEpsilon(t, -4.68716592425462761e-19, Cos(x), 1e-15)
	require.Equal(t, math.Sin(1), Sin(1))
	require.Equal(t, -0.8522008497671888, Sin(1e22)) // sin(1e22) = -0.8522008497671888017727...
	// Tan near zero: x + x^3/3, where math.Tan returns x.
	require.Equal(t, 1.0000000000000033e-07, Tan(1e-7)) // the double nearest 1e-7 is 9.99999999999999955e-8
	require.True(t, math.IsNaN(Sin(math.Inf(1))))
}
