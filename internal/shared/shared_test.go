package shared

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeT records how Dir ends a test.
type fakeT struct {
	testing.TB
	ended string
}

type stop struct{}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return "TestSomething" }
func (f *fakeT) Skip(args ...any) {
	f.ended = "skip: " + fmt.Sprint(args...)
	panic(stop{})
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.ended = "fatal: " + fmt.Sprintf(format, args...)
	panic(stop{})
}

func call(t *testing.T, f *fakeT, rel string) (path string) {
	defer func() {
		if p := recover(); p != nil && p != (stop{}) {
			panic(p)
		}
	}()
	f.TB = t
	return Dir(f, rel)
}

// A checkout without ../shared: Dir skips, logs the skip for make test's
// count, and fails instead with CI set; with it, Dir finds the corpus
// from a package's directory.
func TestDir(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "hlo", "eval"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module github.com/vkjit/vkjit\n\ngo 1.26\n"), 0o644))
	t.Chdir(filepath.Join(repo, "hlo", "eval"))
	log := filepath.Join(top, "skips.log")
	t.Setenv("VKJIT_SKIP_LOG", log)
	t.Setenv("CI", "")

	f := &fakeT{}
	require.Empty(t, call(t, f, "hlo-corpus"))
	require.True(t, strings.HasPrefix(f.ended, "skip: ../shared/hlo-corpus is not beside the checkout"), f.ended)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "\n"))
	require.Contains(t, string(b), "TestSomething: ../shared/hlo-corpus")

	t.Setenv("CI", "true")
	f = &fakeT{}
	call(t, f, "hlo-corpus")
	require.True(t, strings.HasPrefix(f.ended, "fatal: "), f.ended)
	require.Contains(t, f.ended, "CI is set")

	require.NoError(t, os.MkdirAll(filepath.Join(top, "shared", "hlo-corpus"), 0o755))
	f = &fakeT{}
	p := call(t, f, "hlo-corpus")
	require.Empty(t, f.ended)
	require.Equal(t, filepath.Join(repo, "..", "shared", "hlo-corpus"), p)
}
