package eval

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestCorpusE2E evaluates every E2E corpus module with random inputs.
// Modules that use something outside the op set must say so by name;
// everything else must run (the long ones, hlotest.LongWorkload, only
// with VKJIT_LONG_TESTS=1).
func TestCorpusE2E(t *testing.T) {
	files, _ := hlotest.CorpusE2E(t)
	require.NotEmpty(t, files)
	ran := 0
	for _, f := range files {
		mods, err := hlo.ParseFile(f)
		require.NoError(t, err, f)
		m := mods[0]
		require.NoError(t, hlo.Verify(m), f)
		if b := hlotest.ArgumentBytes(m); b > hlotest.LongWorkload && !hlotest.RunLong() {
			t.Logf("%s: not run: %d MiB of arguments (VKJIT_LONG_TESTS=1 runs it)", filepath.Base(f), b>>20)
			continue
		}
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
