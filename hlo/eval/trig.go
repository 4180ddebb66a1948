package eval

import (
	"math"
	"math/big"
	"sync"

	"github.com/vkjit/vkjit/hlo"
)

// Sin, Cos and Tan are math's with the argument reduced exactly. Go's
// math reduces |x| >= 2^29 by a Payne-Hanek step that returns the
// remainder as one float64, good to about 2^-53 absolute, so where the
// result is near zero (x near a multiple of pi) it is off by thousands of
// ulp (sin(-8.601009091178603e86): 42177 ulp). Here the remainder mod
// pi/2 comes from big.Float arithmetic with pi to 1400 bits, as a
// double-double, and the quadrant's function is evaluated on it.
func Sin(x float64) float64 { return trig(x, 0) }

// Cos is cos x with the exact reduction of Sin.
func Cos(x float64) float64 { return trig(x, 1) }

// Tan is tan x with the exact reduction of Sin.
func Tan(x float64) float64 { return trig(x, 2) }

var piHalf struct {
	sync.Once
	v *big.Float
}

// bigPiHalf is pi/2 to 1400 bits.
func bigPiHalf() *big.Float {
	piHalf.Do(func() {
		const prec = 1400 + 64
		pi := hlo.Pi(prec)
		v := new(big.Float).SetPrec(1400).SetInt(pi)
		piHalf.v = v.SetMantExp(v, -prec-1)
	})
	return piHalf.v
}

// trig is sin (f 0), cos (1) or tan (2) of x.
func trig(x float64, f int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	ax := math.Abs(x)
	if ax <= math.Pi/4 {
		return [3]func(float64) float64{math.Sin, math.Cos, tan}[f](x)
	}
	// |x| = q pi/2 + r, |r| <= pi/4, with enough bits for x's exponent.
	_, e := math.Frexp(ax)
	prec := uint(max(e, 0)) + 200
	bx := new(big.Float).SetPrec(prec).SetFloat64(ax)
	ph := new(big.Float).SetPrec(prec).Set(bigPiHalf())
	qf := new(big.Float).SetPrec(prec).Quo(bx, ph)
	qf.Add(qf, big.NewFloat(0.5))
	qi, _ := qf.Int(nil) // floor: positive
	r := new(big.Float).SetPrec(prec).SetInt(qi)
	r.Mul(r, ph)
	r.Sub(bx, r)
	hi, _ := r.Float64()
	lo, _ := new(big.Float).SetPrec(prec).Sub(r, new(big.Float).SetFloat64(hi)).Float64()
	q := int(new(big.Int).And(qi, big.NewInt(3)).Int64())
	s := math.Sin(hi) + math.Cos(hi)*lo
	c := math.Cos(hi) - math.Sin(hi)*lo
	neg := x < 0
	switch f {
	case 0:
		v := [4]float64{s, c, -s, -c}[q]
		if neg {
			v = -v
		}
		return v
	case 1:
		return [4]float64{c, -s, -c, s}[q]
	}
	// tan(hi + lo) = t + (1 + t^2) lo; in odd quadrants -1/tan.
	t := tan(hi)
	v := t + (1+t*t)*lo
	if q%2 == 1 {
		v = -1/t + (1+t*t)*lo/(t*t)
	}
	if neg {
		v = -v
	}
	return v
}

// tan is math.Tan, but by its series below 1e-4: Go's (Cephes') returns
// x itself for x*x < 1e-14, 33 ulp off at 1e-7.
func tan(x float64) float64 {
	if math.Abs(x) < 1e-4 {
		z := x * x
		return x + x*z*(1.0/3+z*(2.0/15+z*(17.0/315)))
	}
	return math.Tan(x)
}
