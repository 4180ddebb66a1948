package eval

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogSubnormal: ln(1e-310) is -713.80; Go's amd64 math.Log says -709.08.
func TestLogSubnormal(t *testing.T) {
	require.InDelta(t, -713.8013788281542, logf(1e-310), 1e-12)
	require.InDelta(t, -735.440946529854, logf(4e-320), 1e-12)
	require.Equal(t, math.Log(2.5), logf(2.5))
	require.True(t, math.IsInf(logf(0), -1))
}
