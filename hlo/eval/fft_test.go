package eval

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestFastDFT: fftOf's recursion (prime factors 2 to 13, and past 64
// Bluestein's convolution) gives the definition's transforms, FFT,
// IFFT, RFFT and IRFFT in c128/f64, within 1e-13 of each row's largest
// magnitude.
func TestFastDFT(t *testing.T) {
	defer func(m int64) { fastDFTMin = m }(fastDFTMin)
	for _, n := range []int64{1, 2, 3, 12, 67, 128, 210, 1000, 1021} {
		for _, c := range []struct{ typ, in, out string }{
			{"FFT", "c128", "c128"}, {"IFFT", "c128", "c128"}, {"RFFT", "f64", "c128"}, {"IRFFT", "c128", "f64"},
		} {
			in, out := n, n
			switch c.typ {
			case "RFFT":
				out = n/2 + 1
			case "IRFFT":
				in = n/2 + 1
			}
			text := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s[3,%d] parameter(0)\n  ROOT f = %s[3,%d] fft(x), fft_type=%s, fft_length={%d}\n}\n", c.in, in, c.out, out, c.typ, n)
			m, err := hlo.Parse("f.hlo", text)
			require.NoError(t, err)
			args := hlotest.UniformInputs(m, uint64(n))
			var got [2][]complex128
			for k, min := range []int64{1 << 62, 1} {
				fastDFTMin = min
				v, err := Run(m, args...)
				require.NoError(t, err)
				l := v.Leaves()[0]
				for i := range l.Shape.NumElements() {
					s := get(l, i)
					if l.Shape.Elem.IsComplex() {
						got[k] = append(got[k], s.c)
					} else {
						got[k] = append(got[k], complex(s.f, 0))
					}
				}
			}
			for r := range int64(3) {
				scale := 0.0
				for j := range out {
					scale = math.Max(scale, cmplx.Abs(got[0][r*out+j]))
				}
				for j := range out {
					require.LessOrEqual(t, cmplx.Abs(got[1][r*out+j]-got[0][r*out+j]), 1e-13*math.Max(scale, 1e-300), "%s %d row %d element %d", c.typ, n, r, j)
				}
			}
		}
	}
}
