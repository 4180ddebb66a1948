package hlotest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/shared"
)

// CorpusE2E lists, as paths, the files of the shared HLO corpus that its
// SOURCES.md marks E2E (one module with an ENTRY, runnable end to end),
// and the corpus directory. Without the corpus the test is skipped and
// counted (shared.Dir).
func CorpusE2E(t testing.TB) (files []string, root string) {
	t.Helper()
	root = shared.Dir(t, "hlo-corpus")
	src, err := os.ReadFile(filepath.Join(root, "SOURCES.md"))
	if err != nil {
		t.Fatalf("the corpus has no SOURCES.md: %v", err)
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|.*\\|([^|]*)\\|\\s*$")
	e2e := regexp.MustCompile(`\bE2E\b`)
	var out []string
	for _, ln := range strings.Split(string(src), "\n") {
		if m := row.FindStringSubmatch(ln); m != nil && e2e.MatchString(m[2]) {
			out = append(out, filepath.Join(root, m[1]))
		}
	}
	return out, root
}

// GPUWorkload is the size of arguments past which a corpus module is a
// GPU's workload, not a CI machine's (xla/runner_fp8_gemm_loop: 552 MiB of
// arguments and a loop of 20 dots of 32768x1024x8192, hours on lavapipe
// and longer in the evaluator): the corpus tests log such a module and do
// not run it.
const GPUWorkload = 512 << 20

// ArgumentBytes is the size of a module's entry parameters.
func ArgumentBytes(m *hlo.Module) int64 {
	var n int64
	for _, p := range m.Entry.Params {
		for _, l := range p.Shape.Leaves() {
			n += l.ByteSize()
		}
	}
	return n
}
