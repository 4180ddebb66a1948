package lower

import "math/big"

// The real transforms' plan and twiddles as ducc makes them (ducc is the
// FFT library XLA's CPU runtime calls; fftpack.go says why vkjit follows
// it).

// packFactors is ducc's factorization of a real transform's length n:
// the factors 4 first, then a remaining 2 moved to the front, then the
// odd primes in increasing order. Pass p runs with l1 the product of
// the factors before it.
func packFactors(n int64) []int64 {
	var f []int64
	for n%4 == 0 {
		f = append(f, 4)
		n /= 4
	}
	if n%2 == 0 {
		n /= 2
		f = append(f, 2)
		f[0], f[len(f)-1] = f[len(f)-1], f[0]
	}
	for d := int64(3); d*d <= n; d += 2 {
		for n%d == 0 {
			f = append(f, d)
			n /= d
		}
	}
	if n > 1 {
		f = append(f, n)
	}
	return f
}

// packable reports whether ducc transforms a real sequence of length n
// by the radix passes alone, which fftpack.go repeats: a length of 50 or
// more whose largest prime factor p has p^2 > n may go to Bluestein's
// algorithm by ducc's cost estimate, a prime factor of 135 or more
// always does, and an even length over 1000 may run as a complex
// transform of n/2. Those keep the DFT matrices of fft.go.
func packable(n int64) bool {
	if n < 1 {
		return false
	}
	p := int64(1) // the largest prime factor
	for _, f := range packFactors(n) {
		if f == 4 {
			f = 2
		}
		p = max(p, f)
	}
	switch {
	case n >= 50 && p*p > n, p >= 135, n > 1000 && n%2 == 0:
		return false
	}
	return true
}

// unityRoots are ducc's e^(2 pi i k/n), k < n: two tables of values
// computed in float64 from the octant's symmetries, multiplied together
// in float64 (k = hi (mask+1) + lo), then rounded to the part type.
type unityRoots struct {
	n           int64
	shift, mask int64
	v1, v2      [][2]float64
}

func newUnityRoots(n int64) *unityRoots {
	r := &unityRoots{n: n}
	ang := octantAngle(n)
	nval := (n + 2) / 2
	r.shift = 1
	for (int64(1)<<r.shift)*(int64(1)<<r.shift) < nval {
		r.shift++
	}
	r.mask = int64(1)<<r.shift - 1
	r.v1 = make([][2]float64, r.mask+1)
	r.v1[0] = [2]float64{1, 0}
	for i := int64(1); i <= r.mask; i++ {
		r.v1[i] = octantRoot(i, n, ang)
	}
	r.v2 = make([][2]float64, (nval+r.mask)/(r.mask+1))
	r.v2[0] = [2]float64{1, 0}
	for i := int64(1); i < int64(len(r.v2)); i++ {
		r.v2[i] = octantRoot(i*(r.mask+1), n, ang)
	}
	return r
}

// octantAngle is pi/(4n) in x87 long double (64-bit significand), then
// rounded to float64, as ducc's constructor computes it.
func octantAngle(n int64) float64 {
	pi, _, _ := big.ParseFloat("3.141592653589793238462643383279502884197", 10, 64, big.ToNearestEven)
	q := new(big.Float).SetPrec(64).Quo(new(big.Float).SetPrec(64).Mul(pi, big.NewFloat(0.25)), new(big.Float).SetInt64(n))
	ang, _ := q.Float64()
	return ang
}

// octantRoot is e^(2 pi i x/n) from the cosine and sine of an angle in
// the first octant, ang = pi/(4n).
func octantRoot(x, n int64, ang float64) [2]float64 {
	cs := func(k int64) (float64, float64) { return cosSin(float64(k) * ang) }
	x <<= 3
	if x < 4*n {
		if x < 2*n {
			if x < n {
				c, s := cs(x)
				return [2]float64{c, s}
			}
			c, s := cs(2*n - x)
			return [2]float64{s, c}
		}
		x -= 2 * n
		if x < n {
			c, s := cs(x)
			return [2]float64{-s, c}
		}
		c, s := cs(2*n - x)
		return [2]float64{-c, s}
	}
	x = 8*n - x
	if x < 2*n {
		if x < n {
			c, s := cs(x)
			return [2]float64{c, -s}
		}
		c, s := cs(2*n - x)
		return [2]float64{s, -c}
	}
	x -= 2 * n
	if x < n {
		c, s := cs(x)
		return [2]float64{-s, -c}
	}
	c, s := cs(2*n - x)
	return [2]float64{-c, -s}
}

// cosSin is cos a and sin a correctly rounded, for 0 <= a <= pi/4 (C's
// libm, which ducc calls, is correctly rounded in practice where Go's
// math is not): Taylor series in 160-bit binary floats.
func cosSin(a float64) (float64, float64) {
	const prec = 160
	x := new(big.Float).SetPrec(prec).SetFloat64(a)
	x2 := new(big.Float).SetPrec(prec).Mul(x, x)
	c := new(big.Float).SetPrec(prec).SetInt64(1)
	s := new(big.Float).SetPrec(prec).Set(x)
	ct := new(big.Float).SetPrec(prec).SetInt64(1)
	st := new(big.Float).SetPrec(prec).Set(x)
	for k := int64(1); k < 40; k++ {
		ct.Mul(ct, x2).Quo(ct, new(big.Float).SetInt64((2*k-1)*(2*k))).Neg(ct)
		st.Mul(st, x2).Quo(st, new(big.Float).SetInt64((2*k)*(2*k+1))).Neg(st)
		c.Add(c, ct)
		s.Add(s, st)
	}
	cf, _ := c.Float64()
	sf, _ := s.Float64()
	return cf, sf
}

// at is root k in float64 before its rounding to the part type.
func (r *unityRoots) at(k int64) (re, im float64) {
	conj := 2*k > r.n
	if conj {
		k = r.n - k
	}
	x1, x2 := r.v1[k&r.mask], r.v2[k>>r.shift]
	re = x1[0]*x2[0] - x1[1]*x2[1]
	im = x1[0]*x2[1] + x1[1]*x2[0]
	if conj {
		im = -im
	}
	return re, im
}

// rounded is v rounded to a part of width bits (32 or 64), as a float64.
func rounded(v float64, bits int) float64 {
	if bits == 32 {
		return float64(float32(v))
	}
	return v
}
