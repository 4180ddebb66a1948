package lower

import (
	"github.com/vkjit/vkjit/hlo"
)

// Bluestein's algorithm (the chirp z-transform, as ducc's fftblue runs
// a length with a large prime factor): with jk = (j^2 + k^2 - (k-j)^2)/2,
//
//	X_k = sum_j x_j w^(jk) = c_k sum_j (x_j c_j) b_(k-j),
//
// c_m = w^(m^2/2), b_m = conj(c_m), w = e^(-+2 pi i/n): a convolution,
// computed as the cyclic one of length N >= 2n - 1 by transforms of N,
// whose prime factors are small (goodSize): the radix passes run it in
// O(N log N) where the DFT matrix of a prime n costs O(n^2) work and n^2
// constants (a prime 4099: 238 ms and 135 MB for a c64[4,4099] FFT).

// bluesteinPrime is the least prime factor that sends a length to
// Bluestein's algorithm: below it a factor's DFT matrix (fourStep) costs
// less than the three transforms of about 2n.
const bluesteinPrime = 64

// largestPrime is n's largest prime factor (1 for n < 2).
func largestPrime(n int64) int64 {
	p := int64(1)
	for d := int64(2); d*d <= n; d++ {
		for n%d == 0 {
			p, n = d, n/d
		}
	}
	if n > 1 {
		p = n
	}
	return p
}

// goodSize is the least length at least m whose prime factors are all
// 2, 3, 5, 7 or 11 (ducc's good_size for complex transforms).
func goodSize(m int64) int64 {
	if m <= 12 {
		return m
	}
	best := 2 * m // a power of two does not exceed it
	for f11 := int64(1); f11 < best; f11 *= 11 {
		for f7 := f11; f7 < best; f7 *= 7 {
			for f5 := f7; f5 < best; f5 *= 5 {
				for f3 := f5; f3 < best; f3 *= 3 {
					x := f3
					for x < m {
						x *= 2
					}
					best = min(best, x)
				}
			}
		}
	}
	return best
}

// bluestein transforms v (a complex key, complexAxes) of length n along
// dimension a, the inverse one divided by n.
func (x *cx) bluestein(in, v *hlo.Instruction, a int, n int64, inverse bool) *hlo.Instruction {
	p := x.parts(v)
	t := p[0].Shape.Elem
	dims := p[0].Shape.Dims
	big := goodSize(2*n - 1)
	// The chirp c_m = e^(-+ pi i m^2/n) = e^(-+ 2 pi i (m^2 mod 2n)/(2n)):
	// from the roots of 2n, so that each is the rounded true value.
	sign := -1.0
	if inverse {
		sign = 1
	}
	roots := newUnityRoots(2 * n)
	chirp := make([]complex128, n)
	for m := range n {
		re, im := roots.at(m * m % (2 * n))
		chirp[m] = complex(re, sign*im)
	}
	// b padded to N cyclically: b_m at m and N - m.
	b := make([]complex128, big)
	for m := range n {
		b[m] = complex(real(chirp[m]), -imag(chirp[m]))
		if m > 0 {
			b[big-m] = b[m]
		}
	}
	// Its transform, in float64, divided by N (the inverse transform's
	// factor; the passes below run unscaled) and by n for an IFFT.
	bt := hostDFT(b, newUnityRoots(big), -1)
	scale := 1 / float64(big)
	if inverse {
		scale /= float64(n)
	}
	for i := range bt {
		bt[i] *= complex(scale, 0)
	}
	mul := func(u, w [2]*hlo.Instruction) [2]*hlo.Instruction {
		return x.expr(in, t, u[0].Shape.Dims).cmulRounded(u, w)
	}
	c := x.constAlong(in, t, chirp, a, dims)
	u := mul(p, c)
	for k := range u {
		u[k] = x.padAlong(in, u[k], a, 0, big-n)
	}
	w := x.radixAxis(in, x.memory(x.partsKey(in, u[0], u[1])), a, false, 1)
	f := x.parts(x.wholeKey(in, w))
	u = mul(f, x.constAlong(in, t, bt, a, f[0].Shape.Dims))
	w = x.radixAxis(in, x.memory(x.partsKey(in, u[0], u[1])), a, true, 1)
	f = x.parts(x.wholeKey(in, w))
	for k := range f {
		f[k] = x.slice(in, f[k], a, 0, n, 1)
	}
	u = mul(f, c)
	return x.partsKey(in, u[0], u[1])
}

// zeroLiteral is a scalar 0 of type t.
func zeroLiteral(t hlo.ElementType) *hlo.Literal {
	l, _ := hlo.NewLiteral(hlo.ArrayShape(t), make([]byte, t.Bytes()))
	return l
}

// hostDFT is the DFT of x (length N, prime factors small) in complex128
// by mixed-radix decimation in time, X_k = sum_j x_j e^(sign 2 pi i
// jk/N), the roots from r (e^(2 pi i k/N)).
func hostDFT(x []complex128, r *unityRoots, sign float64) []complex128 {
	root := func(e int64) complex128 {
		re, im := r.at(e % r.n)
		return complex(re, sign*im)
	}
	var rec func(x []complex128, stride int64) []complex128
	rec = func(x []complex128, stride int64) []complex128 {
		m := int64(len(x))
		if m == 1 {
			return []complex128{x[0]}
		}
		p := int64(2)
		for m%p != 0 {
			p++
		}
		q := m / p
		subs := make([][]complex128, p)
		for s := range p {
			xs := make([]complex128, q)
			for j := range q {
				xs[j] = x[j*p+s]
			}
			subs[s] = rec(xs, stride*p)
		}
		out := make([]complex128, m)
		// The root of m is the root of N to the power stride.
		for k := range m {
			var sum complex128
			for s := range p {
				sum += root(s*k%m*stride) * subs[s][k%q]
			}
			out[k] = sum
		}
		return out
	}
	return rec(x, 1)
}
