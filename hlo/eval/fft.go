package eval

import (
	"math"
	"math/cmplx"

	"github.com/vkjit/vkjit/hlo"
)

// fft is XLA's fft as the plain definition: a discrete Fourier transform
// of each transformed (trailing) dimension in turn, O(n^2) in complex128
// with twiddles from jk mod n (from fastDFTMin on, fftOf's recursion). RFFT transforms the last dimension of a
// real operand into its half spectrum first; IRFFT transforms the others
// inversely first, then the half spectrum of the last into the real
// signal, its mirrored half the conjugate (XLA's and pocketfft's: the
// imaginary parts of X_0 and X_(n/2) do not count).
func fft(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	l := in.A.FftLength
	dims := append([]int64{}, x.Shape.Dims...)
	rank := len(dims)
	first := rank - len(l)
	v := complexes(x)
	switch in.A.FftType {
	case "FFT", "IFFT":
		for a := first; a < rank; a++ {
			v = dftAlong(v, dims, a, dims[a], in.A.FftType == "IFFT", nil)
		}
	case "RFFT":
		last := l[len(l)-1]
		v = dftAlong(v, dims, rank-1, last/2+1, false, nil)
		dims[rank-1] = last/2 + 1
		for a := first; a < rank-1; a++ {
			v = dftAlong(v, dims, a, dims[a], false, nil)
		}
	case "IRFFT":
		for a := first; a < rank-1; a++ {
			v = dftAlong(v, dims, a, dims[a], true, nil)
		}
		last := l[len(l)-1]
		m := dims[rank-1]
		// The full spectrum of the real signal: X_(n-j) = conj(X_j).
		full := func(row []complex128, j int64) complex128 {
			switch {
			case j == 0:
				return complex(real(row[0]), 0)
			case j < m && !(2*j == last):
				return row[j]
			case 2*j == last:
				return complex(real(row[j]), 0)
			}
			c := row[last-j]
			return complex(real(c), -imag(c))
		}
		v = dftAlong(v, dims, rank-1, last, true, full)
		dims[rank-1] = last
	}
	out := newLit(in.Shape.Elem, in.Shape.Dims)
	for i, c := range v {
		if in.Shape.Elem.IsComplex() {
			put(out.Data, in.Shape.Elem, int64(i), scalar{c: roundC(in.Shape.Elem, c)})
		} else {
			put(out.Data, in.Shape.Elem, int64(i), scalar{f: round(in.Shape.Elem, real(c))})
		}
	}
	return out
}

// nudgeFft moves each part of each element of out, x's transform, by (1
// + log2 n) units of roundoff of its transformed slice's magnitude (the
// sum of its parts' magnitudes) in direction dir, for RunNudged: an
// FFT's rounding is relative to its input, not to each output (a bin
// that should be 0 is off by as much as any other), and grows with the
// log of its length n; the down nudge takes a result within that bound
// of 0 to 0, which it may be (an RFFT's zero bins come out 0 or
// roundoff: divided by themselves, NaN or 1). A slice with an infinity
// or NaN gives what the algorithm's order makes of it (inf * 0 in one,
// inf + inf in another): its outputs become 0, so that no reference
// agrees on them.
func nudgeFft(in *hlo.Instruction, x, out *hlo.Literal, dir int) {
	fftBounds(in, x, out, func(bound float64, ov []complex128) {
		d := float64(dir) * bound
		for i, c := range ov {
			switch {
			case math.IsInf(d, 0) || math.IsNaN(d):
				ov[i] = 0
			case dir < 0 && cmplx.Abs(c) <= math.Abs(d):
				ov[i] = 0 // within the bound of 0, it may be 0 (a divisor's 0/0)
			default:
				ov[i] = c + move(d)
			}
		}
	})
}

// poisonFftNearZeros makes NaNs of the parts of out, x's transform, that
// lie within their slice's error bound (nudgeFft's) of 0, for
// RunZerosPoisoned: such a part is roundoff of either sign, or 0, as the
// algorithm's order makes it, and so is the sign of any infinity it
// multiplies.
func poisonFftNearZeros(in *hlo.Instruction, x, out *hlo.Literal) {
	fftBounds(in, x, out, func(bound float64, ov []complex128) {
		nan := math.NaN()
		for i, c := range ov {
			re, im := real(c), imag(c)
			if math.Abs(re) <= bound || math.IsNaN(bound) {
				re = nan
			}
			if math.Abs(im) <= bound || math.IsNaN(bound) {
				im = nan
			}
			ov[i] = complex(re, im)
		}
	})
}

// fftBounds calls f with each transformed slice of out (x's transform)
// and its error bound: (1 + log2 n) units of roundoff of the input
// slice's magnitude, the sum of its parts' magnitudes (infinite or NaN
// where the slice has an infinity or NaN); what f leaves in the slice is
// written back to out.
func fftBounds(in *hlo.Instruction, x, out *hlo.Literal, f func(bound float64, ov []complex128)) {
	part, _ := out.Shape.Elem.ComplexPart()
	_, man := part.FloatFields()
	n := int64(1)
	for _, l := range in.A.FftLength {
		n *= l
	}
	first := x.Shape.Rank() - len(in.A.FftLength)
	batch := int64(1)
	for _, d := range x.Shape.Dims[:first] {
		batch *= d
	}
	if batch == 0 || n == 0 {
		return
	}
	xs, os := x.Shape.NumElements()/batch, out.Shape.NumElements()/batch
	xv, ov := complexes(x), complexes(out)
	for b := range batch {
		size := 0.0
		for _, c := range xv[b*xs : (b+1)*xs] {
			size += math.Abs(real(c)) + math.Abs(imag(c))
		}
		f(size*(1+math.Log2(float64(n)))*math.Ldexp(1, -man), ov[b*os:(b+1)*os])
	}
	copy(out.Data, literal(out.Shape.Elem, out.Shape.Dims, ov).Data)
}

// dftAlong transforms dimension a of v (dims) into out values: out_k =
// sum_j X_j e^(-+2 pi i jk/n), n = out for a complex transform; full, when
// set, reads X_j of a row (the IRFFT's mirrored spectrum) and n = out.
func dftAlong(v []complex128, dims []int64, a int, out int64, inverse bool, full func(row []complex128, j int64) complex128) []complex128 {
	in := dims[a]
	n := out
	if full == nil && in > out { // RFFT: the signal's length
		n = in
	}
	outer, inner := aroundDim(dims, a)
	sign := -1.0
	if inverse {
		sign = 1
	}
	terms := in
	if full != nil {
		terms = n
	}
	res := make([]complex128, outer*out*inner)
	row := make([]complex128, in)
	for o := int64(0); o < outer; o++ {
		for i := int64(0); i < inner; i++ {
			for j := int64(0); j < in; j++ {
				row[j] = v[(o*in+j)*inner+i]
			}
			if n >= fastDFTMin {
				x := make([]complex128, n)
				for j := range terms {
					if full != nil {
						x[j] = full(row, j)
					} else {
						x[j] = row[j]
					}
				}
				y := fftOf(x, sign)
				for k := range out {
					acc := y[k]
					if inverse {
						acc /= complex(float64(n), 0)
					}
					res[(o*out+k)*inner+i] = acc
				}
				continue
			}
			for k := int64(0); k < out; k++ {
				// Compensated sums (Neumaier's), so that the reference
				// stays within an ulp or two of the true transform at any
				// length, f64 included.
				var re, im compensated
				for j := int64(0); j < terms; j++ {
					x := func() complex128 {
						if full != nil {
							return full(row, j)
						}
						return row[j]
					}()
					s, c := math.Sincos(2 * math.Pi * float64(j*k%n) / float64(n))
					p := x * complex(c, sign*s)
					re.add(real(p))
					im.add(imag(p))
				}
				acc := complex(re.sum(), im.sum())
				if inverse {
					acc /= complex(float64(n), 0)
				}
				res[(o*out+k)*inner+i] = acc
			}
		}
	}
	return res
}

// fastDFTMin is the length from which a transform is computed by
// fftOf in O(n log n) rather than by its definition in O(n^2): a
// transform of 2^20 took hours (vkjit run --compare of a 1M-point FFT
// never finished). Its float64 error, a few units of 2^-53 times log2 n
// of the row's magnitude, is still far below an f32 result's ulp and
// within --compare's f64 tolerance; below it, where the tests compare
// c128 results to a few ulps, the compensated definition stays.
var fastDFTMin int64 = 8192

// fftOf is the DFT of x, X_k = sum_j x_j e^(sign 2 pi i jk/n), by
// Cooley and Tukey's recursion over n's smallest prime factor p: p
// transforms of the elements p apart, combined by DFTs of length p
// across them with twiddles e^(sign 2 pi i rk/n) (the exponent reduced
// mod n, so every root is sin and cos of an angle below 2 pi). A prime
// length past 64 is Bluestein's convolution by transforms of a power of
// two; short ones their definition.
func fftOf(x []complex128, sign float64) []complex128 {
	n := int64(len(x))
	root := func(e, m int64) complex128 {
		s, c := math.Sincos(2 * math.Pi * float64(e%m) / float64(m))
		return complex(c, sign*s)
	}
	p := smallestFactor(n)
	if p == n {
		if n <= 64 {
			y := make([]complex128, n)
			for k := range n {
				var acc complex128
				for j := range n {
					acc += x[j] * root(j*k, n)
				}
				y[k] = acc
			}
			return y
		}
		return bluestein(x, sign)
	}
	m := n / p
	subs := make([][]complex128, p)
	for r := range p {
		sub := make([]complex128, m)
		for j := range m {
			sub[j] = x[r+p*j]
		}
		subs[r] = fftOf(sub, sign)
	}
	y := make([]complex128, n)
	for k := range m {
		for q := range p {
			var acc complex128
			for r := range p {
				acc += subs[r][k] * root(r*(k+m*q), n)
			}
			y[k+m*q] = acc
		}
	}
	return y
}

// smallestFactor is n's smallest prime factor (n itself for a prime).
func smallestFactor(n int64) int64 {
	for p := int64(2); p*p <= n; p++ {
		if n%p == 0 {
			return p
		}
	}
	return n
}

// bluestein is the DFT of x by Bluestein's algorithm: X_k = c_k sum_j
// (x_j c_j) conj(c_(k-j)) with the chirp c_j = e^(sign pi i j^2/n) (j^2
// reduced mod 2n), a convolution by transforms of a power of two at
// least 2n - 1 long.
func bluestein(x []complex128, sign float64) []complex128 {
	n := int64(len(x))
	m := int64(1)
	for m < 2*n-1 {
		m *= 2
	}
	chirp := make([]complex128, n)
	for j := range n {
		s, c := math.Sincos(math.Pi * float64(j*j%(2*n)) / float64(n))
		chirp[j] = complex(c, sign*s)
	}
	a, b := make([]complex128, m), make([]complex128, m)
	for j := range n {
		a[j] = x[j] * chirp[j]
		b[j] = cmplx.Conj(chirp[j])
		if j > 0 {
			b[m-j] = b[j]
		}
	}
	fa, fb := fftOf(a, -1), fftOf(b, -1)
	for i := range fa {
		fa[i] *= fb[i]
	}
	conv := fftOf(fa, 1)
	y := make([]complex128, n)
	for k := range n {
		y[k] = conv[k] / complex(float64(m), 0) * chirp[k]
	}
	return y
}

// compensated is a float64 sum that carries its rounding errors
// (Neumaier's variant of Kahan's summation).
type compensated struct{ s, c float64 }

func (a *compensated) add(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

func (a *compensated) sum() float64 { return a.s + a.c }
