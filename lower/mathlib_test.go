package lower

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTwoOverPi checks the 2/pi words of the trigonometric reduction
// against pi to 100 decimal digits (332 bits, more than the 224 used).
func TestTwoOverPi(t *testing.T) {
	const piDigits = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679"
	pi, ok := new(big.Float).SetPrec(400).SetString(piDigits)
	require.True(t, ok)
	v := new(big.Float).SetPrec(400).Quo(big.NewFloat(2).SetPrec(400), pi)
	for i, w := range twoOverPi {
		v.Mul(v, new(big.Float).SetPrec(400).SetUint64(1<<32))
		word, _ := v.Uint64()
		require.Equal(t, uint64(w), word, "word %d", i)
		v.Sub(v, new(big.Float).SetPrec(400).SetUint64(word))
	}
	// The f64 table, computed from hlo.Pi, starts with the same words
	// (its far words are checked by hlo/eval's TestTrigHardCase).
	require.Equal(t, twoOverPi[:], twoOverPi64[:len(twoOverPi)])
}
