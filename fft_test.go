package vkjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
)

// TestFFTAccuracy runs fft on the device, FFT, IFFT, RFFT and IRFFT over
// one to three dimensions of lengths that are and are not powers of two,
// and compares with NumPy's pocketfft in float64 (testdata/fft/gen.py
// wrote the inputs and its results): the largest error relative to the
// largest magnitude of the result, in ulps of the part type, is logged
// for docs/ACCURACY.md and held under a bound. The reference evaluator
// (a plain DFT in complex128) must agree with NumPy within 4 ulp.
func TestFFTAccuracy(t *testing.T) {
	defer noValidationMessages(t)
	data, err := vkjit.ReadNPZ("testdata/fft/fft.npz")
	require.NoError(t, err)
	var names []string
	for k := range data {
		if n, ok := strings.CutSuffix(k, "_x"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	require.Len(t, names, 16)
	for _, name := range names {
		x, want := data[name+"_x"], data[name+"_y"]
		parts := strings.Split(name, "_")
		kind := strings.ToUpper(parts[0])
		length := fftLength(name, x.Dims)
		out := x.Type
		outDims := append([]int64{}, x.Dims...)
		switch kind {
		case "RFFT":
			out = map[vkjit.DType]vkjit.DType{vkjit.F32: vkjit.C64, vkjit.F64: vkjit.C128}[x.Type]
			outDims[len(outDims)-1] = length[len(length)-1]/2 + 1
		case "IRFFT":
			out = map[vkjit.DType]vkjit.DType{vkjit.C64: vkjit.F32, vkjit.C128: vkjit.F64}[x.Type]
			outDims[len(outDims)-1] = length[len(length)-1]
		}
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  x = %s parameter(0)\n  ROOT r = %s fft(x), fft_type=%s, fft_length={%s}\n}",
			x.Spec(), vkjit.TensorSpec{Type: out, Dims: outDims}, kind, joinInts(length))
		exe, err := rt.CompileText(name, src, vkjit.CompileOptions{})
		require.NoError(t, err, name)
		res, _, err := exe.Run(context.Background(), x)
		require.NoError(t, err, name)
		exe.Close()
		eps := math.Ldexp(1, -23)
		if out == vkjit.F64 || out == vkjit.C128 {
			eps = math.Ldexp(1, -52)
		}
		errOf := func(got *vkjit.Tensor) float64 {
			var worst, scale float64
			for i := range want.NumElements() {
				w := valueAt(want, i)
				scale = math.Max(scale, cmplx.Abs(w))
				worst = math.Max(worst, cmplx.Abs(valueAt(got, i)-w))
			}
			return worst / scale
		}
		e := errOf(res[0]) / eps
		t.Logf("%s: max error %.2f ulp of the largest magnitude", name, e)
		require.LessOrEqual(t, e, 8.0, name)

		m, err := hlo.Parse(name, src)
		require.NoError(t, err)
		ref, err := eval.Run(m, &hlo.Literal{Shape: hlo.ArrayShape(hlo.ElementType(x.Type), x.Dims...), Data: x.Data})
		require.NoError(t, err, name)
		l := ref.Leaves()[0]
		got := literalTensor(l)
		// The evaluator rounds to the result type: compare at its
		// precision.
		require.LessOrEqual(t, errOf(got)/eps, 4.0, "%s: the evaluator against NumPy", name)
	}
}

// fftLength is the transformed dimensions' lengths a case's name gives
// by its dimension count (_2d, _3d) and, for IRFFT, its last length.
func fftLength(name string, dims []int64) []int64 {
	d := 1
	if strings.Contains(name, "_2d") {
		d = 2
	} else if strings.Contains(name, "_3d") {
		d = 3
	}
	l := append([]int64{}, dims[len(dims)-d:]...)
	if strings.HasPrefix(name, "irfft") {
		parts := strings.Split(name, "_")
		var n int64
		fmt.Sscan(parts[len(parts)-1], &n)
		l[len(l)-1] = n
	}
	return l
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// valueAt is element i of a real or complex tensor as a complex128.
func valueAt(x *vkjit.Tensor, i int64) complex128 {
	switch x.Type {
	case vkjit.C64, vkjit.C128:
		return complexAt(x, int(i))
	}
	return complex(x.Float64At(i), 0)
}

// TestIRFFTIgnoresImaginaryEnds: an IRFFT reads only the real parts of
// X_0 and, for an even length, X_(n/2), as XLA's and pocketfft's do: a
// NaN or infinity there changes nothing (the device's DFT matrix had
// multiplied them by sin 0 and sin(pi k): inf * 0 = NaN everywhere),
// whichever way the length runs.
func TestIRFFTIgnoresImaginaryEnds(t *testing.T) {
	defer noValidationMessages(t)
	for _, n := range []int{4, 5} {
		last := float32(math.Inf(1)) // X_2 is X_(n/2): its imaginary part does not count
		if n%2 == 1 {
			last = 1 // it does
		}
		parts := []float32{1, float32(math.NaN()), 2, 3, 4, last}
		b := make([]byte, 0, 4*len(parts))
		for _, p := range parts {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(p))
		}
		x := must(vkjit.NewTensor(vkjit.C64, []int64{3}, b))
		exe, err := rt.CompileText("irfft", fmt.Sprintf("HloModule m\nENTRY e {\n  x = c64[3] parameter(0)\n  ROOT r = f32[%d] fft(x), fft_type=IRFFT, fft_length={%d}\n}", n, n), vkjit.CompileOptions{})
		require.NoError(t, err)
		res, _, err := exe.Run(context.Background(), x)
		require.NoError(t, err)
		exe.Close()
		// The signal of the half spectrum (1, 2 + 3i, 4 or 4 + i) with
		// the ends real: x_j = (1 + 2 Re((2 + 3i) w^j) + [n even] 4 (-1)^j
		// + [n odd] 2 Re((4 + i) w^(2j))) / n, w = e^(2 pi i / n).
		got, err := res[0].AsFloat32()
		require.NoError(t, err)
		for j := range n {
			w := cmplx.Exp(complex(0, 2*math.Pi*float64(j)/float64(n)))
			want := 1 + 2*real((2+3i)*w)
			if n%2 == 0 {
				want += 4 * math.Pow(-1, float64(j))
			} else {
				want += 2 * real((4+1i)*w*w)
			}
			require.InDelta(t, want/float64(n), got[j], 1e-5, "n %d, x_%d", n, j)
		}
	}
	// Lengths that run as a complex inverse of the whole spectrum (an
	// even length past 1000, a prime past 64): the ends' imaginary parts
	// NaN and infinite give the signal they give as zeros, bit for bit.
	rng := rand.New(rand.NewPCG(3, 9))
	for _, n := range []int64{1024, 67} {
		m := n/2 + 1
		parts := make([]float32, 2*m)
		for i := range parts {
			parts[i] = float32(rng.NormFloat64())
		}
		run := func(first, last float32) []float32 {
			p := slices.Clone(parts)
			p[1] = first
			if n%2 == 0 {
				p[2*m-1] = last
			}
			b := make([]byte, 0, 4*len(p))
			for _, v := range p {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
			x := must(vkjit.NewTensor(vkjit.C64, []int64{m}, b))
			exe, err := rt.CompileText("irfft", fmt.Sprintf("HloModule m\nENTRY e {\n  x = c64[%d] parameter(0)\n  ROOT r = f32[%d] fft(x), fft_type=IRFFT, fft_length={%d}\n}", m, n, n), vkjit.CompileOptions{})
			require.NoError(t, err)
			defer exe.Close()
			res, _, err := exe.Run(context.Background(), x)
			require.NoError(t, err)
			got, err := res[0].AsFloat32()
			require.NoError(t, err)
			return got
		}
		want := run(0, 0)
		got := run(float32(math.NaN()), float32(math.Inf(-1)))
		for j := range want {
			require.Equal(t, math.Float32bits(want[j]), math.Float32bits(got[j]), "n %d, x_%d", n, j)
		}
	}
}

// TestRealFFTLengths runs RFFT and IRFFT in f32 and f64 at lengths that
// take each of the real radix passes (fftpack: 2, 3, 4, 5 and the
// generic one, forward and backward, with one and several positions per
// row, an even ido for 2 and 4), at lengths that keep the DFT matrices
// (a prime past 50 and under 64), and at lengths that run as complex
// transforms (even past 1000 by the complex passes of n/2; 67 and 1030
// = 2 5 103 by Bluestein's algorithm), against the reference evaluator
// (checkFFTs: within 8 ulp of the largest magnitude; logged, all within
// 2.9).
func TestRealFFTLengths(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(5, 17))
	for _, n := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 16, 17, 21, 24, 25, 27, 32, 35, 48, 49, 53, 60, 64, 67, 96, 100, 343, 1000, 1024, 1030, 2048} {
		m := n/2 + 1
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  a = f32[3,%[1]d] parameter(0)
  b = f64[3,%[1]d] parameter(1)
  c = c64[3,%[2]d] parameter(2)
  d = c128[3,%[2]d] parameter(3)
  ra = c64[3,%[2]d] fft(a), fft_type=RFFT, fft_length={%[1]d}
  rb = c128[3,%[2]d] fft(b), fft_type=RFFT, fft_length={%[1]d}
  ic = f32[3,%[1]d] fft(c), fft_type=IRFFT, fft_length={%[1]d}
  id = f64[3,%[1]d] fft(d), fft_type=IRFFT, fft_length={%[1]d}
  ROOT r = (c64[3,%[2]d], c128[3,%[2]d], f32[3,%[1]d], f64[3,%[1]d]) tuple(ra, rb, ic, id)
}`, n, m)
		checkFFTs(t, fmt.Sprint("length ", n), src, normals(rng, vkjit.F32, 3, n), normals(rng, vkjit.F64, 3, n),
			normals(rng, vkjit.C64, 3, m), normals(rng, vkjit.C128, 3, m))
	}
}

// normals is a tensor of type t (real or complex, of f32 or f64 parts)
// and dimensions dims, its parts normally distributed.
func normals(rng *rand.Rand, t vkjit.DType, dims ...int64) *vkjit.Tensor {
	n := int64(1)
	if t == vkjit.C64 || t == vkjit.C128 {
		n = 2
	}
	for _, d := range dims {
		n *= d
	}
	var b []byte
	for range n {
		v := rng.NormFloat64()
		if t == vkjit.C64 || t == vkjit.F32 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return must(vkjit.NewTensor(t, dims, b))
}

// checkFFTs runs src on the device and in the evaluator and holds every
// result's largest error relative to its largest magnitude, in ulps of
// its part type, within TestFFTAccuracy's bound of 8 (logged).
func checkFFTs(t *testing.T, name, src string, args ...*vkjit.Tensor) {
	t.Helper()
	res, ref := deviceAndEval(t, name, src, args...)
	for i, l := range ref.Leaves() {
		want := literalTensor(l)
		var worst, scale float64
		for e := range want.NumElements() {
			w := valueAt(want, e)
			scale = math.Max(scale, cmplx.Abs(w))
			worst = math.Max(worst, cmplx.Abs(valueAt(res[i], e)-w))
		}
		eps := math.Ldexp(1, -23)
		if want.Type == vkjit.C128 || want.Type == vkjit.F64 {
			eps = math.Ldexp(1, -52)
		}
		t.Logf("%s, result %d: %.2f ulp", name, i, worst/scale/eps)
		require.LessOrEqual(t, worst/scale/eps, 8.0, "%s, result %d", name, i)
	}
}

// TestComplexFFTLengths runs FFT and IFFT in c64 and c128 at lengths that
// take each radix pass (lower/fft.go emitFft, kgen/fft.go: 2, 4 and the
// odd primes to 13, one and several positions per butterfly, stages of
// one and several passes), along the last dimension and along a middle
// one (values Inner apart; also as the complex dimension of a 2-D RFFT
// and IRFFT), at the length 1, at lengths with a prime factor past the
// passes' (17, 34) that keep the DFT matrices, alone and between passed
// dimensions, and at lengths with a prime factor of 64 or more (67, 134,
// 1021) that run Bluestein's algorithm,
// against the reference evaluator: the largest error relative to the
// result's largest magnitude, in ulps of the part type, stays within
// TestFFTAccuracy's bound of 8 (logged).
func TestComplexFFTLengths(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(7, 23))
	for _, n := range []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 26, 30, 34, 48, 64, 67, 77, 81, 100, 134, 143, 256, 1021, 1024} {
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  a = c64[3,%[1]d] parameter(0)
  b = c128[3,%[1]d] parameter(1)
  c = c64[2,%[1]d,3] parameter(2)
  d = c128[2,%[1]d,3] parameter(3)
  g = f32[2,%[1]d,6] parameter(4)
  h = c128[2,%[1]d,4] parameter(5)
  fa = c64[3,%[1]d] fft(a), fft_type=FFT, fft_length={%[1]d}
  ia = c64[3,%[1]d] fft(a), fft_type=IFFT, fft_length={%[1]d}
  fb = c128[3,%[1]d] fft(b), fft_type=FFT, fft_length={%[1]d}
  ib = c128[3,%[1]d] fft(b), fft_type=IFFT, fft_length={%[1]d}
  fc = c64[2,%[1]d,3] fft(c), fft_type=FFT, fft_length={%[1]d,3}
  id = c128[2,%[1]d,3] fft(d), fft_type=IFFT, fft_length={%[1]d,3}
  rg = c64[2,%[1]d,4] fft(g), fft_type=RFFT, fft_length={%[1]d,6}
  ih = f64[2,%[1]d,6] fft(h), fft_type=IRFFT, fft_length={%[1]d,6}
  ROOT r = (c64[3,%[1]d], c64[3,%[1]d], c128[3,%[1]d], c128[3,%[1]d], c64[2,%[1]d,3], c128[2,%[1]d,3], c64[2,%[1]d,4], f64[2,%[1]d,6]) tuple(fa, ia, fb, ib, fc, id, rg, ih)
}`, n)
		checkFFTs(t, fmt.Sprint("length ", n), src, normals(rng, vkjit.C64, 3, n), normals(rng, vkjit.C128, 3, n),
			normals(rng, vkjit.C64, 2, n, 3), normals(rng, vkjit.C128, 2, n, 3), normals(rng, vkjit.F32, 2, n, 6), normals(rng, vkjit.C128, 2, n, 4))
	}
	// Passes, a DFT matrix, passes, and back: the value goes from memory
	// form to parts and back.
	checkFFTs(t, "4x17x6", `HloModule m
ENTRY e {
  x = c64[4,17,6] parameter(0)
  y = c128[4,17,6] parameter(1)
  f = c64[4,17,6] fft(x), fft_type=FFT, fft_length={4,17,6}
  i = c128[4,17,6] fft(y), fft_type=IFFT, fft_length={4,17,6}
  ROOT r = (c64[4,17,6], c128[4,17,6]) tuple(f, i)
}`, normals(rng, vkjit.C64, 4, 17, 6), normals(rng, vkjit.C128, 4, 17, 6))
}

// TestSharedRealFFT: the GPUs' form of the real passes for long
// sequences, one kernel holding a workgroup's sequences in shared memory
// between passes (kgen.RealFftRows, forced on lavapipe by SharedFft),
// gives the default forms' values bit for bit (one invocation a
// sequence from registers for 12 and 42; for 256 and 1000 a kernel from
// registers for the passes that leave sub-transforms of at most
// kgen.RealFftRegisterMax values and one for each other pass; a kernel
// per pass for 154 and 289): forward and backward, f32 and
// f64, fixed and generic passes, two passes (one shared array) and more
// (two), one sequence a workgroup and several with the last workgroup's
// partly past the end.
func TestSharedRealFFT(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(11, 3))
	for _, c := range []struct{ n, rows int64 }{{1000, 3}, {256, 5}, {154, 7}, {289, 2}, {42, 9}, {12, 40}} {
		n, m := c.n, c.n/2+1
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  a = f32[%[3]d,%[1]d] parameter(0)
  b = f64[%[3]d,%[1]d] parameter(1)
  c = c64[%[3]d,%[2]d] parameter(2)
  d = c128[%[3]d,%[2]d] parameter(3)
  ra = c64[%[3]d,%[2]d] fft(a), fft_type=RFFT, fft_length={%[1]d}
  rb = c128[%[3]d,%[2]d] fft(b), fft_type=RFFT, fft_length={%[1]d}
  ic = f32[%[3]d,%[1]d] fft(c), fft_type=IRFFT, fft_length={%[1]d}
  id = f64[%[3]d,%[1]d] fft(d), fft_type=IRFFT, fft_length={%[1]d}
  ROOT r = (c64[%[3]d,%[2]d], c128[%[3]d,%[2]d], f32[%[3]d,%[1]d], f64[%[3]d,%[1]d]) tuple(ra, rb, ic, id)
}`, n, m, c.rows)
		mod, err := hlo.Parse("test", src)
		require.NoError(t, err)
		args := []*vkjit.Tensor{normals(rng, vkjit.F32, c.rows, n), normals(rng, vkjit.F64, c.rows, n),
			normals(rng, vkjit.C64, c.rows, m), normals(rng, vkjit.C128, c.rows, m)}
		var results [2][]*vkjit.Tensor
		for i, opts := range []vkjit.CompileOptions{{}, {SharedFft: true}} {
			exe, err := rt.Compile(mod, opts)
			require.NoError(t, err)
			rows := 0
			for _, k := range vkjit.ProgramOf(exe).Kernels {
				if strings.HasPrefix(k.Name, "rfft_rows_") {
					rows++
				}
			}
			require.Equal(t, 4*i, rows, "length %d: rows kernels with %+v", n, opts)
			results[i], _, err = exe.Run(context.Background(), args...)
			require.NoError(t, err)
			exe.Close()
		}
		for i := range results[0] {
			require.Equal(t, results[0][i].Data, results[1][i].Data, "length %d, result %d", n, i)
		}
	}
}
