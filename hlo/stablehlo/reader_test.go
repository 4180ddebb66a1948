package stablehlo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/internal/shared"
)

func suiteFiles(t *testing.T) []string {
	dir := shared.Dir(t, "stablehlo-suite")
	var files []string
	for _, pat := range []string{"testdata/*.mlir", "interpret/*.mlir", "interpret/*/*.mlir"} {
		f, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, f...)
	}
	require.NotEmpty(t, files)
	return files
}

// TestParseSuite reads every file of the StableHLO suite into the IR.
func TestParseSuite(t *testing.T) {
	failed := 0
	for _, f := range suiteFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		if _, err := ParseIR(f, string(src)); err != nil {
			failed++
			if failed < 30 {
				t.Errorf("%v", err)
			}
		}
	}
	require.Zero(t, failed)
}

// TestTranslateSuite translates every module of the suite: each either
// becomes a verified HLO module or is refused as Unsupported, by name.
// Any other error is a defect of the reader or of the translation.
func TestTranslateSuite(t *testing.T) {
	modules, refused := 0, map[string]int{}
	for _, f := range suiteFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, errs, err := Parse(f, string(src))
		require.NoError(t, err)
		for _, e := range errs {
			modules++
			var u *Unsupported
			switch {
			case e == nil:
			case errors.As(e, &u):
				refused[u.Category]++
			default:
				t.Errorf("%v", e)
			}
		}
	}
	t.Logf("%d modules; refused by category: %v", modules, refused)
}
