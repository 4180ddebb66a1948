package vkjit

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"codeberg.org/sbinet/npyio/npy"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/outfile"
)

// NumPy dtype strings for each element type. bf16 has no NumPy dtype: it
// travels as its raw 16 bits in a uint16 array.
var npyDescr = map[hlo.ElementType]string{
	hlo.PRED: "|b1",
	hlo.S8:   "|i1", hlo.S16: "<i2", hlo.S32: "<i4", hlo.S64: "<i8",
	hlo.U8: "|u1", hlo.U16: "<u2", hlo.U32: "<u4", hlo.U64: "<u8",
	hlo.F16: "<f2", hlo.F32: "<f4", hlo.F64: "<f8",
	hlo.BF16: "<u2",
	hlo.C64:  "<c8", hlo.C128: "<c16",
}

func typeFromDescr(d string) (hlo.ElementType, error) {
	d = strings.Trim(d, "'\" ")
	if strings.HasPrefix(d, ">") && !strings.HasSuffix(d, "1") {
		return 0, fmt.Errorf("big-endian dtype %q is not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))", d)
	}
	norm := strings.NewReplacer("=", "<", "|", "<", ">", "<").Replace(d)
	for t, s := range npyDescr {
		if t == hlo.BF16 {
			continue
		}
		if strings.NewReplacer("|", "<").Replace(s) == norm {
			return t, nil
		}
	}
	return 0, fmt.Errorf("dtype %q has no HLO element type", d)
}

// ReadNPY reads one array in NumPy's .npy format. Fortran-ordered arrays
// are reordered to row-major.
func ReadNPY(r io.Reader) (*Tensor, error) {
	head, err := readNPYHeader(r)
	if err != nil {
		return nil, err
	}
	rd, err := parseNPYHeader(head)
	if err != nil {
		return nil, err
	}
	h := rd.Header.Descr
	et, err := typeFromDescr(h.Type)
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(h.Shape))
	for i, d := range h.Shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in .npy shape %v", h.Shape)
		}
		dims[i] = int64(d)
	}
	shape := hlo.ArrayShape(et, dims...)
	size := shape.ByteSize()
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf(".npy data is truncated: %s needs %d bytes: %w", shape.DimsString(), size, err)
	}
	if h.Fortran && len(dims) > 1 {
		data = fortranToC(data, dims, et.Bytes())
	}
	return &Tensor{Type: DType(et), Dims: dims, Data: data}, nil
}

// readNPYHeader reads the magic string, the version, the header's length
// and the header itself, checking each, so that npyio (which indexes into
// them unchecked) is handed only a whole header.
func readNPYHeader(r io.Reader) ([]byte, error) {
	pre := make([]byte, 8)
	if n, err := io.ReadFull(r, pre); err != nil {
		return nil, fmt.Errorf("not a valid .npy file: %d bytes, shorter than the magic string and version", n)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not a valid .npy file: no \\x93NUMPY magic string")
	}
	var lenBytes []byte
	switch pre[6] {
	case 1:
		lenBytes = make([]byte, 2)
	case 2, 3:
		lenBytes = make([]byte, 4)
	default:
		return nil, fmt.Errorf("not a valid .npy file: format version %d.%d", pre[6], pre[7])
	}
	if _, err := io.ReadFull(r, lenBytes); err != nil {
		return nil, fmt.Errorf("not a valid .npy file: truncated in the header's length")
	}
	var n int
	for i := len(lenBytes) - 1; i >= 0; i-- {
		n = n<<8 | int(lenBytes[i])
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("not a valid .npy file: a header of %d bytes", n)
	}
	hdr := make([]byte, n)
	if got, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("not a valid .npy file: the header is truncated (%d of %d bytes)", got, n)
	}
	text := strings.TrimRight(string(hdr), " \x00\n")
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return nil, fmt.Errorf("not a valid .npy file: the header %q is not a dictionary", text)
	}
	for _, key := range []string{"descr", "fortran_order", "shape"} {
		if !strings.Contains(text, "'"+key+"'") {
			return nil, fmt.Errorf("not a valid .npy file: the header %q has no %q", text, key)
		}
	}
	return append(append(pre, lenBytes...), hdr...), nil
}

// parseNPYHeader has npyio read a whole header; a malformed one that
// still trips it is an error, not a crash.
func parseNPYHeader(head []byte) (rd *npy.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			start := 10 // magic, version, 2 bytes of length
			if head[6] > 1 {
				start = 12
			}
			rd, err = nil, fmt.Errorf("not a valid .npy file: unreadable header %q", bytes.TrimRight(head[start:], " \n"))
		}
	}()
	rd, err = npy.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil, fmt.Errorf("not a valid .npy file: %w", err)
	}
	return rd, nil
}

// fortranToC reorders column-major data to row-major.
func fortranToC(src []byte, dims []int64, esize int) []byte {
	n := int64(len(src)) / int64(esize)
	dst := make([]byte, len(src))
	idx := make([]int64, len(dims))
	for c := int64(0); c < n; c++ { // c walks row-major order
		f, stride := int64(0), int64(1)
		for d := 0; d < len(dims); d++ { // column-major offset of idx
			f += idx[d] * stride
			stride *= dims[d]
		}
		copy(dst[c*int64(esize):], src[f*int64(esize):(f+1)*int64(esize)])
		for d := len(dims) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return dst
}

// ReadNPYFile reads a .npy file.
func ReadNPYFile(path string) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadNPY(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// WriteNPY writes t in .npy format (version 1.0, row-major).
func WriteNPY(w io.Writer, t *Tensor) error {
	descr, ok := npyDescr[t.Type.elem()]
	if !ok {
		return fmt.Errorf("element type %s has no NumPy dtype", t.Type)
	}
	var shape strings.Builder
	shape.WriteByte('(')
	for i, d := range t.Dims {
		if i > 0 {
			shape.WriteString(", ")
		}
		fmt.Fprint(&shape, d)
	}
	if len(t.Dims) == 1 {
		shape.WriteByte(',')
	}
	shape.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape.String())
	// NumPy pads the header with spaces so that the data starts at a
	// multiple of 64 bytes, and ends it with a newline.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	b.WriteByte(byte(len(hdr)))
	b.WriteByte(byte(len(hdr) >> 8))
	b.WriteString(hdr)
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(t.Data)
	return err
}

// WriteNPZ writes tensors to an uncompressed .npz archive (as numpy.savez
// does) with keys names[i], through outfile: a regular file is replaced
// only by a complete archive, a device or FIFO is written through, and
// every write error is reported.
func WriteNPZ(path string, names []string, ts []*Tensor) error {
	if len(names) != len(ts) {
		return fmt.Errorf("WriteNPZ: %d names for %d tensors", len(names), len(ts))
	}
	return outfile.WriteWith(path, func(w io.Writer) error { return writeNPZ(w, names, ts) })
}

// writeNPZ writes the archive to w.
func writeNPZ(w io.Writer, names []string, ts []*Tensor) error {
	zw := zip.NewWriter(w)
	for i, t := range ts {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: names[i] + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if err := WriteNPY(f, t); err != nil {
			return err
		}
	}
	return zw.Close()
}

// ReadNPZ reads every array of an .npz archive, keyed by name without the
// .npy suffix.
func ReadNPZ(path string) (map[string]*Tensor, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := map[string]*Tensor{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		t, err := ReadNPY(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		out[strings.TrimSuffix(f.Name, ".npy")] = t
	}
	return out, nil
}
