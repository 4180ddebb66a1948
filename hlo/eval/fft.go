package eval

import (
	"math"

	"github.com/vkjit/vkjit/hlo"
)

// fft is XLA's fft as the plain definition: a discrete Fourier transform
// of each transformed (trailing) dimension in turn, O(n^2) in complex128
// with twiddles from jk mod n. RFFT transforms the last dimension of a
// real operand into its half spectrum first; IRFFT transforms the others
// inversely first, then the half spectrum of the last into the real
// signal, its mirrored half the conjugate (XLA's and pocketfft's: the
// imaginary parts of X_0 and X_(n/2) do not count).
func fft(in *hlo.Instruction, x *hlo.Literal) *hlo.Literal {
	l := in.A.FftLength
	dims := append([]int64{}, x.Shape.Dims...)
	rank := len(dims)
	first := rank - len(l)
	n := x.Shape.NumElements()
	v := make([]complex128, n)
	for i := range v {
		s := get(x, int64(i))
		if isComplex(x.Shape.Elem) {
			v[i] = s.c
		} else {
			v[i] = complex(s.f, 0)
		}
	}
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
		if isComplex(in.Shape.Elem) {
			put(out.Data, in.Shape.Elem, int64(i), scalar{c: roundC(in.Shape.Elem, c)})
		} else {
			put(out.Data, in.Shape.Elem, int64(i), scalar{f: round(in.Shape.Elem, real(c))})
		}
	}
	return out
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
	inner := int64(1)
	for _, d := range dims[a+1:] {
		inner *= d
	}
	outer := int64(1)
	for _, d := range dims[:a] {
		outer *= d
	}
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
			for k := int64(0); k < out; k++ {
				var acc complex128
				for j := int64(0); j < terms; j++ {
					x := func() complex128 {
						if full != nil {
							return full(row, j)
						}
						return row[j]
					}()
					s, c := math.Sincos(2 * math.Pi * float64(j*k%n) / float64(n))
					acc += x * complex(c, sign*s)
				}
				if inverse {
					acc /= complex(float64(n), 0)
				}
				res[(o*out+k)*inner+i] = acc
			}
		}
	}
	return res
}
