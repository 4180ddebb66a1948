// Package shared finds the corpora in the shared/ folder beside the
// checkout for tests, and counts the tests that skip without them.
package shared

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the path of rel inside the shared/ folder beside the
// checkout (the corpora: hlo-corpus, stablehlo-suite), from whichever
// package's directory the test runs in. Where it is missing the test is
// skipped, and the skip is counted: appended to the file VKJIT_SKIP_LOG
// names (make test prints the count at its end), so that a run from a
// clone without the corpora does not look green while testing far less.
// With CI set, a missing corpus fails the test instead.
func Dir(t testing.TB, rel string) string {
	t.Helper()
	dir, err := moduleRoot()
	if err == nil {
		p := filepath.Join(dir, "..", "shared", rel)
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("../shared/%s is not beside the checkout (%v)", rel, err)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s, and CI is set: the corpus tests must run", msg)
	}
	if log := os.Getenv("VKJIT_SKIP_LOG"); log != "" {
		if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "%s: %s\n", t.Name(), msg)
			f.Close()
		}
	}
	t.Skip(msg)
	return ""
}

// moduleRoot is the directory of the main module's go.mod, above the
// test's working directory (its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && isMainModule(b) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod of github.com/vkjit/vkjit above the test")
		}
		dir = up
	}
}

func isMainModule(gomod []byte) bool {
	const want = "module github.com/vkjit/vkjit\n"
	return len(gomod) >= len(want) && string(gomod[:len(want)]) == want
}

// RunLong reports whether VKJIT_LONG_TESTS=1 asks tests to run their
// long cases too (make test-long: the corpus modules past
// hlotest.LongWorkload).
func RunLong() bool { return os.Getenv("VKJIT_LONG_TESTS") == "1" }
