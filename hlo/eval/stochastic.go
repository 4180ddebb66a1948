package eval

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// stochasticConvert rounds each float of x to a signed integer, up or
// down by its random bits, as XLA's StochasticConvertDecomposer defines
// it: |x|'s fraction times 2^bits of the random type, truncated to that
// type, above the random value rounds |x| up; the result takes x's sign
// and saturates where x is at or beyond the type's limits (the limits
// rounded to x's type, so -2^31 is -inf for an f16). NaN gives 0.
func stochasticConvert(in *hlo.Instruction, x, random *hlo.Literal) *hlo.Literal {
	ft, rt, to := x.Shape.Elem, random.Shape.Elem, in.Shape.Elem
	out := zeros(in.Shape)
	lo, hi := int64(-1)<<(to.Bits()-1), int64(1)<<(to.Bits()-1)-1
	flo, fhi := round(ft, float64(lo)), round(ft, float64(hi))
	for i := range x.Shape.NumElements() {
		v := get(x, i).f
		var r int64
		switch {
		case v <= flo:
			r = lo
		case v >= fhi:
			r = hi
		case math.IsNaN(v):
			r = 0
		default:
			mag := math.Abs(v)
			whole := math.Floor(mag)
			// The fraction scaled by 2^bits is below 2^bits and exact.
			fixed := uint64(math.Ldexp(mag-whole, rt.Bits()))
			r = convert(ft, to, scalar{f: whole}).i
			if get(random, i).u < fixed {
				r = wrapS(to, r+1)
			}
			if v < 0 {
				r = wrapS(to, -r)
			}
		}
		put(out.Data, to, i, scalar{i: r})
	}
	return out
}
