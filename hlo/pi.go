package hlo

import "math/big"

// Pi returns pi * 2^prec in fixed point, from Machin's formula (pi =
// 16 atan(1/5) - 4 atan(1/239)), good to a few units in the last place.
// Trigonometric reductions need pi to far more bits than a float64
// holds: the reference evaluator's (hlo/eval) and the device library's
// table of 2/pi (lower) both start here.
func Pi(prec uint) *big.Int {
	one := new(big.Int).Lsh(big.NewInt(1), prec)
	atanInv := func(x int64) *big.Int { // atan(1/x) * 2^prec
		sum, xx := new(big.Int), big.NewInt(x*x)
		term := new(big.Int).Div(one, big.NewInt(x))
		for k := int64(0); term.Sign() != 0; k++ {
			t := new(big.Int).Div(term, big.NewInt(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			term.Div(term, xx)
		}
		return sum
	}
	pi := new(big.Int).Mul(atanInv(5), big.NewInt(16))
	return pi.Sub(pi, new(big.Int).Mul(atanInv(239), big.NewInt(4)))
}
