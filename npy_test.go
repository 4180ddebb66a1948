package vkjit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func readFixture(t *testing.T, name string) *Tensor {
	t.Helper()
	x, err := ReadNPYFile(filepath.Join("testdata", "npy", name))
	require.NoError(t, err)
	return x
}

// The fixtures were written by NumPy (testdata/npy/gen.py).
func TestReadNumPyFiles(t *testing.T) {
	x := readFixture(t, "f32_2x3.npy")
	require.Equal(t, F32, x.Type)
	require.Equal(t, []int64{2, 3}, x.Dims)
	v, err := x.AsFloat32()
	require.NoError(t, err)
	require.Equal(t, []float32{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}, v)

	x = readFixture(t, "f64_fortran_2x3.npy")
	require.Equal(t, F64, x.Type)
	for i := int64(0); i < 6; i++ {
		require.Equal(t, float64(i), x.Float64At(i), "Fortran order becomes row-major")
	}

	x = readFixture(t, "bool_4.npy")
	require.Equal(t, PRED, x.Type)
	require.Equal(t, []byte{1, 0, 0, 1}, x.Data)

	x = readFixture(t, "u16_3.npy")
	require.Equal(t, U16, x.Type)
	x.Type = BF16 // how the CLI takes bf16
	require.Equal(t, []float64{1, 2, -3}, []float64{x.Float64At(0), x.Float64At(1), x.Float64At(2)})

	x = readFixture(t, "s32_scalar.npy")
	require.Empty(t, x.Dims)
	require.Equal(t, float64(-7), x.Float64At(0))

	x = readFixture(t, "f32_empty_0x4.npy")
	require.Equal(t, []int64{0, 4}, x.Dims)
	require.Empty(t, x.Data)

	_, err = ReadNPYFile(filepath.Join("testdata", "npy", "f32_bigendian.npy"))
	require.ErrorContains(t, err, "big-endian")
}

func TestNPYRoundTrip(t *testing.T) {
	for _, x := range []*Tensor{
		{Type: F32, Dims: []int64{2, 2}, Data: make([]byte, 16)},
		{Type: S64, Dims: []int64{3}, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{Type: PRED, Dims: nil, Data: []byte{1}},
		{Type: U8, Dims: []int64{0}, Data: nil},
	} {
		var b bytes.Buffer
		require.NoError(t, WriteNPY(&b, x))
		hlen := int(b.Bytes()[8]) | int(b.Bytes()[9])<<8
		require.Zero(t, (10+hlen)%64, "data starts 64-byte aligned, as NumPy writes it")
		y, err := ReadNPY(&b)
		require.NoError(t, err)
		require.Equal(t, x.Type, y.Type)
		require.Equal(t, len(x.Dims), len(y.Dims))
		require.Equal(t, len(x.Data), len(y.Data))
	}
}

func TestCorruptNPY(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "npy", "f32_2x3.npy"))
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"empty":       nil,
		"not npy":     []byte("hello world, not numpy"),
		"truncated":   good[:len(good)-3],
		"header only": good[:20],
		"no newline":  append([]byte("\x93NUMPY\x01\x00\x10\x00"), []byte("{'descr': '<f4'}")...),
		"cut header":  good[:40],
		"bad shape":   npyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }"),
		"no dict":     npyWithHeader("descr fortran_order shape"),
		"version 9":   append([]byte("\x93NUMPY\x09\x00"), good[8:]...),
	} {
		_, err := ReadNPY(bytes.NewReader(data))
		require.Error(t, err, name)
		require.True(t, strings.HasPrefix(err.Error(), "not a valid .npy file") || strings.HasPrefix(err.Error(), ".npy data is truncated"), "%s: %v", name, err)
		require.NotContains(t, err.Error(), "runtime error", "%s: no recovered panic in the message", name)
		require.NotContains(t, err.Error(), "index out of range", name)
	}
}

// npyWithHeader is a version 1.0 .npy file of header h and no data.
func npyWithHeader(h string) []byte {
	h += "\n"
	return append([]byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(h)), byte(len(h) >> 8)}, h...)
}

func TestWriteNPZIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npz")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	x := &Tensor{Type: F64, Dims: []int64{1}, Data: make([]byte, 8)}
	require.Error(t, WriteNPZ(path, []string{"a", "b"}, []*Tensor{x}))
	old, _ := os.ReadFile(path)
	require.Equal(t, "old", string(old), "a failed write leaves the file alone")
	require.NoError(t, WriteNPZ(path, []string{"out0"}, []*Tensor{x}))
	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "no temporary file is left behind")
}
