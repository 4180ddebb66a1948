package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

func TestNewFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.npz")
	require.NoError(t, WriteFile(p, []byte("hello")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, 0o644&^umask(), fi.Mode().Perm(), "a new file is 0644 under the umask")
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*tmp-*"))
	require.Empty(t, left, "no temporary file is left")
}

func TestReplaceKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stats.json")
	require.NoError(t, os.WriteFile(p, []byte("old contents"), 0o600))
	require.NoError(t, os.Chmod(p, 0o640))
	require.NoError(t, WriteFile(p, []byte("new")))
	b, _ := os.ReadFile(p)
	require.Equal(t, "new", string(b))
	fi, _ := os.Stat(p)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

// A failed write leaves the old file whole.
func TestFailedWriteKeepsOld(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.npz")
	require.NoError(t, os.WriteFile(p, []byte("precious"), 0o644))
	boom := errors.New("boom")
	err := WriteWith(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	b, _ := os.ReadFile(p)
	require.Equal(t, "precious", string(b))
}

// A symbolic link is followed: the file it names is written, the link stays.
func TestSymlinkFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o600))
	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink("real.json", link))
	require.NoError(t, WriteFile(link, []byte("new")))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is still a link")
	b, _ := os.ReadFile(target)
	require.Equal(t, "new", string(b))
	fi, _ = os.Stat(target)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// A dangling link creates the file it names.
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("made.txt", dangling))
	require.NoError(t, WriteFile(dangling, []byte("x")))
	b, err = os.ReadFile(filepath.Join(dir, "made.txt"))
	require.NoError(t, err)
	require.Equal(t, "x", string(b))
}

// Hard links stay joined: the file is written in place.
func TestHardLinkWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("old old old"), 0o644))
	require.NoError(t, os.Link(a, b))
	require.NoError(t, WriteFile(b, []byte("new")))
	got, _ := os.ReadFile(a)
	require.Equal(t, "new", string(got))
}

// /dev/null is written through and stays a device, whoever runs this.
func TestDevNull(t *testing.T) {
	before, err := os.Stat("/dev/null")
	require.NoError(t, err)
	require.NoError(t, WriteFile("/dev/null", []byte("discarded")))
	after, err := os.Stat("/dev/null")
	require.NoError(t, err)
	require.Equal(t, before.Mode(), after.Mode())
	require.NotZero(t, after.Mode()&os.ModeCharDevice)
	left, _ := filepath.Glob("/dev/.null.tmp-*")
	require.Empty(t, left)
}

// A write error is reported, not swallowed.
func TestDevFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	err := WriteFile("/dev/full", make([]byte, 1<<16))
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Contains(t, err.Error(), "/dev/full")
}

// A FIFO is streamed into, not replaced.
func TestFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(p)
		got <- b
	}()
	require.NoError(t, WriteFile(p, []byte("through the pipe")))
	require.Equal(t, "through the pipe", string(<-got))
	fi, _ := os.Lstat(p)
	require.NotZero(t, fi.Mode()&os.ModeNamedPipe)
}

// /dev/stdout (a link into /proc) is written through: a rename would
// replace the file the descriptor has open.
func TestProcDescriptor(t *testing.T) {
	p := filepath.Join(t.TempDir(), "captured")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	path := filepath.Join("/proc/self/fd", strconv.Itoa(int(f.Fd())))
	require.NoError(t, WriteFile(path, []byte("via fd")))
	fi1, _ := f.Stat()
	fi2, _ := os.Stat(p)
	require.True(t, os.SameFile(fi1, fi2), "the open file was not replaced")
	b, _ := os.ReadFile(p)
	require.Equal(t, "via fd", string(b))
}

func TestDirectoryRefused(t *testing.T) {
	err := WriteFile(t.TempDir(), []byte("x"))
	require.ErrorIs(t, err, syscall.EISDIR)
}

func TestMissingDirectory(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir", "f"), []byte("x"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "no such file or directory")
}
