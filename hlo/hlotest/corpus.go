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

// LongWorkload is the size of arguments past which a corpus module is
// too long for CI (xla/runner_fp8_gemm_loop: 552 MiB of arguments, a
// 32768x8192x1024 product that loop-invariant code motion computes once
// and 20 updates of a bf16[32768,8192]: minutes on the device and in the
// evaluator, and an unfused run without buffer reuse does not fit
// lavapipe's 2 GiB heap). The corpus tests run such a module only when
// RunLong says so (make test-long), and then without the unfused run.
// Its 512 MiB arrays pass the 128 MiB a descriptor may bind on lavapipe
// (maxStorageBufferRange): kernels reach them by device address.
const LongWorkload = 512 << 20

// RunLong reports whether VKJIT_LONG_TESTS=1 asks the corpus tests to
// run the long modules too.
func RunLong() bool { return shared.RunLong() }

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
