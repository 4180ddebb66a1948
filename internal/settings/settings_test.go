package settings

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrecedence: an explicit value wins over the variable, which wins
// over the default; a malformed variable is an error that names it.
func TestPrecedence(t *testing.T) {
	t.Setenv("VKJIT_DEVICE", "intel")
	require.Equal(t, "intel", String("", "VKJIT_DEVICE"))
	require.Equal(t, "llvm", String("llvm", "VKJIT_DEVICE"))

	on, off := true, false
	t.Setenv("VKJIT_VALIDATE", "")
	v, err := Bool(nil, "VKJIT_VALIDATE")
	require.NoError(t, err)
	require.Nil(t, v, "unset: the caller's default")
	require.False(t, On(v))
	t.Setenv("VKJIT_VALIDATE", "1")
	v, err = Bool(nil, "VKJIT_VALIDATE")
	require.NoError(t, err)
	require.True(t, On(v), "the variable over the default")
	v, err = Bool(&off, "VKJIT_VALIDATE")
	require.NoError(t, err)
	require.False(t, On(v), "explicitly off over the variable")
	require.NotNil(t, v)
	t.Setenv("VKJIT_VALIDATE", "maybe")
	_, err = Bool(nil, "VKJIT_VALIDATE")
	require.ErrorContains(t, err, "VKJIT_VALIDATE")
	v, err = Bool(&on, "VKJIT_VALIDATE")
	require.NoError(t, err, "an explicit value does not read the variable")
	require.True(t, On(v))

	t.Setenv("VKJIT_MEM_FRACTION", "0.5")
	f, err := Fraction(0, "VKJIT_MEM_FRACTION")
	require.NoError(t, err)
	require.Equal(t, 0.5, f)
	f, err = Fraction(0.25, "VKJIT_MEM_FRACTION")
	require.NoError(t, err)
	require.Equal(t, 0.25, f)
	t.Setenv("VKJIT_MEM_FRACTION", "2")
	_, err = Fraction(0, "VKJIT_MEM_FRACTION")
	require.ErrorContains(t, err, "VKJIT_MEM_FRACTION")
	_, err = Fraction(1.5, "")
	require.Error(t, err)

	t.Setenv("VKJIT_STAGING_BYTES", "100")
	_, err = Bytes(0, "VKJIT_STAGING_BYTES", 4096)
	require.ErrorContains(t, err, "at least 4096")
	n, err := Bytes(8192, "VKJIT_STAGING_BYTES", 4096)
	require.NoError(t, err)
	require.Equal(t, int64(8192), n)
	t.Setenv("VKJIT_BLOCK_BYTES", "")
	n, err = Bytes(0, "VKJIT_BLOCK_BYTES", 1)
	require.NoError(t, err)
	require.Zero(t, n, "unset: the caller's default")
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VKJIT_CACHE_DIR", dir)
	t.Setenv("VKJIT_CACHE_MAX_BYTES", "")
	d, err := CacheDir("")
	require.NoError(t, err)
	require.Equal(t, dir, d)
	limit, err := CacheLimit(0)
	require.NoError(t, err)
	require.Equal(t, int64(DefaultCacheLimit), limit)
	other := filepath.Join(dir, "other")
	d, err = CacheDir(other)
	require.NoError(t, err)
	require.Equal(t, other, d)
	limit, err = CacheLimit(1000)
	require.NoError(t, err)
	require.Equal(t, int64(1000), limit)
	t.Setenv("VKJIT_CACHE_MAX_BYTES", "-3")
	_, err = CacheLimit(0)
	require.ErrorContains(t, err, "VKJIT_CACHE_MAX_BYTES")
}

// TestOnePlace: no package but this one reads a VKJIT_ variable (test
// infrastructure in internal/shared aside), and Vars lists every variable
// the library resolves, so that `vkjit help` and README can list them.
func TestOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	listed := map[string]bool{}
	for _, v := range Vars {
		listed[v.Name] = true
	}
	getenv := regexp.MustCompile(`(Getenv|LookupEnv)\("VKJIT_`)
	named := regexp.MustCompile(`"(VKJIT_[A-Z_]+)"`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.Dir(rel)
		if dir != "internal/settings" && dir != "internal/shared" && getenv.Match(src) {
			t.Errorf("%s reads a VKJIT_ variable itself: resolve it through internal/settings", rel)
		}
		if dir == "internal/settings" || dir == "." {
			for _, m := range named.FindAllSubmatch(src, -1) {
				if !listed[string(m[1])] {
					t.Errorf("%s resolves %s, which Vars does not list", rel, m[1])
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}
