package lower

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/stablehlo"
	"github.com/vkjit/vkjit/internal/shared"
)

// TestCompileShared compiles every module of ../shared (the HLO corpus
// and the StableHLO suite), of the benchmarks and of the tests' data, for
// lavapipe and for Vulkan's minimum limits,
// fused and unfused, with the checks between passes and the kernel
// generators' own checks of their analyses (kgen.Env.Check): a module
// compiles or is refused with a reason; it never meets an internal error.
// Nothing runs, so it needs no device.
func TestCompileShared(t *testing.T) {
	var files []string
	for _, dir := range []string{shared.Dir(t, "hlo-corpus"), filepath.Join(shared.Dir(t, "stablehlo-suite"), "testdata"), "../bench/workloads", "../tests/testdata", "testdata"} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".hlo") || strings.HasSuffix(p, ".mlir")) {
				files = append(files, p)
			}
			return err
		}))
	}
	var mu sync.Mutex
	compiled := 0
	work := make(chan string)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				for _, m := range parseShared(t, f) {
					for _, tg := range []Target{LlvmpipeTarget, DefaultTarget} {
						for _, noFuse := range []bool{false, true} {
							_, err := Compile(m, tg, Options{NoFuse: noFuse})
							if err != nil && strings.Contains(err.Error(), "internal error") {
								t.Errorf("%s (fused %v): %v", f, !noFuse, err)
							}
							mu.Lock()
							compiled++
							mu.Unlock()
						}
					}
				}
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	t.Logf("%d files, %d compiles", len(files), compiled)
}

// parseShared reads a file's modules, HLO text or StableHLO (as the root
// package's ParseText does); a file that does not parse has none (the
// parsers' own tests cover those).
func parseShared(t *testing.T, path string) []*hlo.Module {
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	if !stablehlo.IsMLIR(string(src)) {
		ms, _ := hlo.ParseModules(path, string(src))
		return ms
	}
	ts, errs, err := stablehlo.Parse(path, string(src))
	if err != nil {
		return nil
	}
	var ms []*hlo.Module
	for i, tr := range ts {
		if errs[i] != nil {
			continue
		}
		if m, err := tr.WithoutChecks(); err == nil {
			ms = append(ms, m)
		}
	}
	return ms
}
