package eval

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// e2eFiles lists the corpus files SOURCES.md marks E2E.
func e2eFiles(t *testing.T) []string {
	src, err := os.ReadFile("../../../shared/hlo-corpus/SOURCES.md")
	if err != nil {
		t.Skip("../shared/hlo-corpus is not beside the checkout")
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|.*\\|([^|]*)\\|\\s*$")
	var out []string
	for _, ln := range strings.Split(string(src), "\n") {
		m := row.FindStringSubmatch(ln)
		if m != nil && regexp.MustCompile(`\bE2E\b`).MatchString(m[2]) {
			out = append(out, filepath.Join("../../../shared/hlo-corpus", m[1]))
		}
	}
	return out
}

// TestCorpusE2E evaluates every E2E corpus module with random inputs.
// Modules that use something outside the op set (complex numbers, f8
// arithmetic) must say so by name; everything else must run.
func TestCorpusE2E(t *testing.T) {
	files := e2eFiles(t)
	require.NotEmpty(t, files)
	ran := 0
	for _, f := range files {
		mods, err := hlo.ParseFile(f)
		require.NoError(t, err, f)
		m := mods[0]
		require.NoError(t, hlo.Verify(m), f)
		var un *Unsupported
		if err := Check(m); err != nil {
			require.ErrorAs(t, err, &un, f)
			t.Logf("%s: refused: %v", filepath.Base(f), err)
			continue
		}
		start := time.Now()
		_, err = Run(m, hlotest.Inputs(m, 1)...)
		if err != nil && errors.As(err, &un) {
			t.Logf("%s: refused: %v", filepath.Base(f), err)
			continue
		}
		require.NoError(t, err, f)
		ran++
		if d := time.Since(start); d > time.Second {
			t.Logf("%s: %v", filepath.Base(f), d)
		}
	}
	t.Logf("%d of %d E2E modules ran", ran, len(files))
}
