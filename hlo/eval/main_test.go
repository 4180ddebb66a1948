package eval

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain collects garbage less often, as `vkjit run --compare` does
// while it evaluates: the corpus's loop-heavy modules make short-lived
// copies every iteration (TestCorpusE2E: 60 s less).
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}
