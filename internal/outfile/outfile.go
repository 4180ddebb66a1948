// Package outfile writes the files a user names (results, statistics,
// profiles, drawings) without harming what is already at the path.
//
// What Create does depends on what the path names, after following
// symbolic links to their end:
//
//   - nothing yet: a new regular file, mode 0644 under the umask, that
//     appears whole or not at all (written under a temporary name in the
//     same directory and renamed into place);
//   - a regular file with one link: replaced the same way, atomically,
//     keeping its mode (and its owner, where the process may set it), so
//     that a failed write leaves the old contents;
//   - a regular file with several hard links: written in place, since a
//     rename would split it from its other names;
//   - anything else (a device such as /dev/null or /dev/stdout, a FIFO, a
//     socket, a process's open descriptor under /proc): opened and
//     written through, never replaced;
//   - a directory: an error.
//
// Every write, sync and close error is reported: a full disk or /dev/full
// fails the write instead of passing in silence.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File is a file being written. Close finishes it; Abort drops it.
type File struct {
	path string   // what the user named
	f    *os.File // the temporary file, or the target itself
	tmp  string   // the temporary name; empty when writing in place
	dst  string   // the file tmp is renamed to
	err  error    // the first write error
	done bool
}

// maxLinks bounds the symbolic links followed, as the kernel's ELOOP does.
const maxLinks = 40

// Create opens path for writing (see the package comment).
func Create(path string) (*File, error) {
	p := path
	for hops := 0; ; hops++ {
		if hops > maxLinks {
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return replace(path, p, nil)
		case err != nil:
			return nil, err
		case fi.Mode()&fs.ModeSymlink != 0:
			if strings.HasPrefix(filepath.Clean(p), "/proc/") {
				// /proc/self/fd/N and its kin name a file a process has
				// open: the kernel follows them, and a rename would
				// replace the file under the open descriptor.
				return through(path, p)
			}
			t, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(p), t)
			}
			p = t
		case fi.IsDir():
			return nil, &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
		case fi.Mode().IsRegular() && links(fi) <= 1:
			return replace(path, p, fi)
		default:
			return through(path, p)
		}
	}
}

// links is fi's hard link count (1 where the system does not say).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// through opens target to write into it where it is.
func through(path, target string) (*File, error) {
	fi, err := os.Stat(target)
	if err != nil {
		return nil, err
	}
	flags := os.O_WRONLY
	if fi.Mode().IsRegular() {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(target, flags, 0)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f}, nil
}

// replace writes to a new file beside target, renamed over it by Close;
// old describes the file it replaces (nil: none).
func replace(path, target string, old fs.FileInfo) (*File, error) {
	dir := filepath.Dir(target)
	var f *os.File
	var tmp string
	for tries := 0; ; tries++ {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		tmp = filepath.Join(dir, "."+filepath.Base(target)+".tmp-"+hex.EncodeToString(r[:]))
		var err error
		// 0644 under the umask for a new file; an old file's mode is
		// set below, where the umask does not apply.
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries > 8 {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if old != nil {
		err := f.Chmod(old.Mode().Perm() | old.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		if st, ok := old.Sys().(*syscall.Stat_t); ok && err == nil {
			// Only a privileged process may give a file away; others
			// keep their own ownership, as any editor's save does.
			if cerr := f.Chown(int(st.Uid), int(st.Gid)); cerr != nil && !errors.Is(cerr, fs.ErrPermission) {
				err = cerr
			}
		}
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return &File{path: path, f: f, tmp: tmp, dst: target}, nil
}

// Write writes p; an error sticks, and Close reports it too.
func (w *File) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("writing %s: already closed", w.path)
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err != nil {
		w.err = w.wrap(err)
	}
	return n, w.err
}

// wrap names the user's path in err (the file's own errors name the
// temporary one).
func (w *File) wrap(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("writing %s: %w", w.path, err)
}

// Close finishes the file: a replacement is synced and renamed into
// place. It reports the first error of any write, the sync, the close or
// the rename; on error the old file, if any, is left as it was.
func (w *File) Close() error {
	if w.done {
		return w.err
	}
	w.done = true
	err := w.err
	if w.tmp != "" && err == nil {
		if serr := w.f.Sync(); serr != nil {
			err = w.wrap(serr)
		}
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = w.wrap(cerr)
	}
	if w.tmp != "" {
		if err == nil {
			if rerr := os.Rename(w.tmp, w.dst); rerr != nil {
				err = w.wrap(rerr)
			}
		}
		if err != nil {
			os.Remove(w.tmp)
		}
	}
	w.err = err
	return err
}

// Abort drops what was written: a replacement's temporary file is
// removed and the old file stays; a file written in place keeps what
// reached it.
func (w *File) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	if w.tmp != "" {
		os.Remove(w.tmp)
	}
}

// WriteFile writes data to path as Create does.
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith creates path, lets write fill it, and closes it; an error
// from write aborts the file.
func WriteWith(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		if f.err != nil {
			return f.err
		}
		return err
	}
	return f.Close()
}
