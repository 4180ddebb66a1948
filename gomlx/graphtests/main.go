// Command graphtests runs GoMLX's own tests of pkg/core/graph (v0.26.0)
// against the vkjit backend and against GoMLX's pure-Go backend
// (simplego) side by side, each test in a process of its own so that a
// panic or a hang hides nothing else, and prints what each backend
// passes.
//
// GoMLX's test helpers install XLA's PJRT plugin from the network
// (graphtest.BuildTestBackend, the package's TestMain), which cannot
// work offline; this copies GoMLX's module from the module cache into a
// scratch directory, makes both helpers take the backend GOMLX_BACKEND
// names, builds the package's test binary once (with the noxla tag, so
// no cgo plugin loader is built), and runs each test under both
// backends.
//
//	cd gomlx && go run ./graphtests [-j 2] [-run REGEXP] [-timeout 10m] [-v]
//
// The exit status is 1 when a test simplego passes fails on vkjit.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

var (
	jobs    = flag.Int("j", runtime.NumCPU(), "tests run at once")
	runRe   = flag.String("run", ".", "run only the tests matching this regular expression")
	timeout = flag.Duration("timeout", 10*time.Minute, "one test's limit on one backend")
	verbose = flag.Bool("v", false, "print each test's output when it fails on vkjit")
	keep    = flag.Bool("keep", false, "keep the scratch copy of GoMLX's module")
)

// backends are the GOMLX_BACKEND values compared, the reference first.
var backends = []string{"go", "vkjit"}

// patches are the edits to GoMLX v0.26.0's test helpers: each old text
// must be found exactly once, so that another GoMLX version fails here
// rather than running against the wrong backend.
var patches = []struct{ file, old, new string }{
	{"pkg/core/graph/graphtest/graphtest.go",
		"\t\"github.com/gomlx/gomlx/backends/xla\"\n",
		"\t_ \"github.com/gomlx/gomlx/backends/simplego\"\n\t_ \"github.com/vkjit/vkjit/gomlx\"\n"},
	{"pkg/core/graph/graphtest/graphtest.go",
		"\t\terr := xla.AutoInstall()\n\t\tif err != nil {\n\t\t\tklog.Fatalf(\"Failed to auto-install XLA PJRT: %+v\", err)\n\t\t}\n",
		""},
	{"pkg/core/graph/graphtest/graphtest.go",
		"\t\"k8s.io/klog/v2\"\n", ""},
	{"pkg/core/graph/graph_test.go",
		"\t\"github.com/gomlx/gomlx/backends/xla\"\n",
		"\t_ \"github.com/vkjit/vkjit/gomlx\"\n"},
	{"pkg/core/graph/graph_test.go",
		"\terr := xla.AutoInstall()\n\tif err != nil {\n\t\tklog.Fatalf(\"Failed to auto-install XLA PJRT: %+v\", err)\n\t}\n",
		""},
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "graphtests:", err)
		os.Exit(2)
	}
}

func run() error {
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(here, "graphtests")); err != nil {
		return fmt.Errorf("run it from the gomlx module's directory (cd gomlx && go run ./graphtests)")
	}
	src, err := goOut(here, "list", "-m", "-f", "{{.Dir}}", "github.com/gomlx/gomlx")
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "gomlx-graphtests")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Println("scratch copy:", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	mod := filepath.Join(scratch, "gomlx")
	if err := copyTree(src, mod); err != nil {
		return err
	}
	for _, p := range patches {
		if err := patch(filepath.Join(mod, p.file), p.old, p.new); err != nil {
			return err
		}
	}
	// The copy is the main module: it requires the vkjit backend from
	// this checkout (whose own requirement of GoMLX is the copy itself).
	root := filepath.Dir(here)
	for _, args := range [][]string{
		{"mod", "edit", "-require=github.com/vkjit/vkjit/gomlx@v0.0.0-00010101000000-000000000000",
			"-replace=github.com/vkjit/vkjit/gomlx=" + here, "-replace=github.com/vkjit/vkjit=" + root},
		{"mod", "tidy"},
	} {
		if _, err := goOut(mod, args...); err != nil {
			return err
		}
	}
	bin := filepath.Join(scratch, "graph.test")
	start := time.Now()
	if _, err := goOut(mod, "test", "-tags", "noxla", "-c", "-o", bin, "./pkg/core/graph"); err != nil {
		return err
	}
	fmt.Printf("built GoMLX %s's pkg/core/graph tests in %.1fs\n", filepath.Base(src), time.Since(start).Seconds())
	list, err := exec.Command(bin, "-test.list", *runRe).Output()
	if err != nil {
		return fmt.Errorf("listing the tests: %w", err)
	}
	var tests []string
	for _, l := range strings.Fields(string(list)) {
		if strings.HasPrefix(l, "Test") {
			tests = append(tests, l)
		}
	}
	cache, err := os.MkdirTemp("", "gomlx-graphtests-cache")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)
	results := runAll(bin, filepath.Join(mod, "pkg/core/graph"), cache, tests)
	return report(tests, results)
}

// outcome is one test on one backend.
type outcome struct {
	status string // pass, fail, skip, timeout
	wall   time.Duration
	output []byte
}

func runAll(bin, dir, cache string, tests []string) map[string]map[string]outcome {
	type job struct{ test, backend string }
	work := make(chan job)
	var mu sync.Mutex
	results := map[string]map[string]outcome{}
	var wg sync.WaitGroup
	for range max(*jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				o := runOne(bin, dir, cache, j.test, j.backend)
				mu.Lock()
				if results[j.test] == nil {
					results[j.test] = map[string]outcome{}
				}
				results[j.test][j.backend] = o
				mu.Unlock()
			}
		}()
	}
	for _, t := range tests {
		for _, b := range backends {
			work <- job{t, b}
		}
	}
	close(work)
	wg.Wait()
	return results
}

func runOne(bin, dir, cache, test, backend string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^"+regexp.QuoteMeta(test)+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMLX_BACKEND="+backend, "VKJIT_CACHE_DIR="+cache)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	o := outcome{wall: time.Since(start), output: out}
	switch {
	case ctx.Err() != nil:
		o.status = "timeout"
	case err != nil:
		o.status = "fail"
	case bytes.Contains(out, []byte("--- SKIP: "+test+" ")) && !bytes.Contains(out, []byte("--- PASS: "+test+" ")):
		o.status = "skip"
	default:
		o.status = "pass"
	}
	return o
}

func report(tests []string, results map[string]map[string]outcome) error {
	count := map[string]map[string]int{}
	for _, b := range backends {
		count[b] = map[string]int{}
	}
	var regressions, gains, both []string
	for _, t := range tests {
		r := results[t]
		for _, b := range backends {
			count[b][r[b].status]++
		}
		ref, got := r["go"].status, r["vkjit"].status
		switch {
		case ref == "pass" && got != "pass":
			regressions = append(regressions, t)
		case ref != "pass" && got == "pass":
			gains = append(gains, t)
		case ref != "pass" && got != "pass":
			both = append(both, t)
		}
	}
	fmt.Printf("\n%d tests of pkg/core/graph, each run alone on each backend\n", len(tests))
	for _, b := range backends {
		c := count[b]
		var wall time.Duration
		for _, t := range tests {
			wall += results[t][b].wall
		}
		fmt.Printf("  %-6s %3d passed, %3d failed, %3d skipped, %3d timed out  (%.0fs of test processes)\n",
			b, c["pass"], c["fail"], c["skip"], c["timeout"], wall.Seconds())
	}
	show := func(title string, ts []string, withOutput bool) {
		if len(ts) == 0 {
			return
		}
		sort.Strings(ts)
		fmt.Printf("\n%s (%d):\n", title, len(ts))
		for _, t := range ts {
			r := results[t]
			fmt.Printf("  %-50s go %-7s vkjit %-7s %s\n", t, r["go"].status, r["vkjit"].status, firstError(r["vkjit"].output))
			if withOutput && *verbose {
				fmt.Printf("%s\n", indent(r["vkjit"].output))
			}
		}
	}
	show("passed on simplego, not on vkjit", regressions, true)
	if *verbose {
		show("passed on vkjit, not on simplego", gains, false)
	} else if len(gains) > 0 {
		fmt.Printf("\npassed on vkjit, not on simplego: %d (-v lists them)\n", len(gains))
	}
	show("passed on neither", both, true)
	if len(regressions) > 0 {
		return errors.New("tests that pass on simplego fail on vkjit")
	}
	return nil
}

// firstError is the first line of a failed test's output that says why.
func firstError(out []byte) string {
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		for _, key := range []string{"Error:", "panic:", "error", "Error"} {
			if strings.Contains(l, key) && !strings.HasPrefix(l, "Error Trace") {
				if len(l) > 140 {
					l = l[:140] + "..."
				}
				return l
			}
		}
	}
	return ""
}

func indent(b []byte) string {
	return "      " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n      ")
}

func goOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func patch(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if n := strings.Count(string(b), old); n != 1 {
		return fmt.Errorf("%s: the text to replace occurs %d times, not once (not GoMLX v0.26.0?):\n%s", path, n, old)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

// copyTree copies a directory of the (read-only) module cache into a
// writable one.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}
