package hlotest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// CorpusE2E lists, as paths, the files of the shared HLO corpus that its
// SOURCES.md marks E2E (one module with an ENTRY, runnable end to end).
// root is the corpus directory relative to the test's package; the test
// is skipped when the corpus is not beside the checkout.
func CorpusE2E(t testing.TB, root string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "SOURCES.md"))
	if err != nil {
		t.Skipf("%s is not beside the checkout", root)
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|.*\\|([^|]*)\\|\\s*$")
	e2e := regexp.MustCompile(`\bE2E\b`)
	var out []string
	for _, ln := range strings.Split(string(src), "\n") {
		if m := row.FindStringSubmatch(ln); m != nil && e2e.MatchString(m[2]) {
			out = append(out, filepath.Join(root, m[1]))
		}
	}
	return out
}
