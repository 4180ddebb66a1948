package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/stablehlo"
	"github.com/vkjit/vkjit/internal/outfile"
)

// cmdTest is the conformance runner: every module of every StableHLO
// file given (directories are walked for .mlir files) is compiled, run
// on the device, and its check-dialect ops compared on the host. It
// prints a line per failure and closes with "N passed, M failed, K
// skipped" (modules); skipped are what vkjit refuses by name for a
// reason it states (dynamic shapes, quantized types, collectives across
// processes, host transfers, the interpreter's probes).
//
// --expected FILE names the modules that cannot pass yet, each with its
// reason ("path:line: reason" lines, the line where the module's entry
// function starts, the path relative to the directory given): their
// failures are counted apart, and one that does not fail is an error,
// so that the list only shrinks. --write-expected FILE writes that list.
func cmdTest(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("test", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	device := fset.String("device", "", "device index or name substring")
	validate := fset.Bool("validate", false, "enable the Khronos validation layer")
	noFuse := fset.Bool("no-fuse", false, "compile every instruction to its own kernel")
	noReuse := fset.Bool("no-reuse", false, "give every temporary its own memory")
	hostLoops := fset.Bool("host-loops", false, "run every while loop from the host")
	storageLoads := fset.Bool("storage-loads", false, "on a CPU device, read inputs from storage buffers only")
	addressAbove := fset.Int64("address-above", 0, "reach every array of more bytes through its buffer device address, as arrays past maxStorageBufferRange are (to test and compare against)")
	asArgs := fset.Bool("constants-as-args", false, "pass each module's array constants (its inputs and expected values) as arguments, so that the device computes the ops constant folding would compute on the host")
	expected := fset.String("expected", "", "a file listing the files that cannot pass yet (path: reason)")
	writeExpected := fset.String("write-expected", "", "write the list of failing files, each with its first failure, to this file")
	jobs := fset.Int("jobs", runtime.NumCPU(), "modules compiled and run at once")
	verbose := fset.Bool("v", false, "print a line for every module")
	cacheDir := fset.String("cache-dir", "", "the compile cache's directory")
	noCache := fset.Bool("no-cache", false, "neither read nor write the compile cache")
	pos, err := parseInterleaved(fset, args)
	if err != nil {
		return fmt.Errorf("test: %w", err)
	}
	if len(pos) == 0 {
		return fmt.Errorf("test: no file or directory given (usage: vkjit test [flags] FILE.mlir|DIR ...)")
	}
	if *jobs < 1 {
		return fmt.Errorf("test: --jobs must be at least 1")
	}
	var files []string
	roots := map[string]string{} // file -> the directory it was found under
	for _, p := range pos {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			files = append(files, p)
			roots[p] = filepath.Dir(p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".mlir") {
				files = append(files, path)
				roots[path] = p
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(files)
	want, err := readExpected(*expected)
	if err != nil {
		return err
	}
	rt, err := vkjit.Open(vkjit.Options{Device: *device, Validate: toggle(*validate), CacheDir: *cacheDir, NoCache: *noCache, Warn: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	defer rt.Close()
	opts := vkjit.CompileOptions{NoFuse: *noFuse, NoReuse: *noReuse, HostLoops: *hostLoops, StorageLoads: *storageLoads, AddressAbove: *addressAbove}

	results := make([]fileResult, len(files))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < *jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = testFile(rt, files[i], opts, *asArgs)
			}
		}()
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()

	var passed, failed, skipped, expectedFail int
	var surprises, failing []string
	for i, r := range results {
		rel, _ := filepath.Rel(roots[files[i]], files[i])
		for _, m := range r.modules {
			key := fmt.Sprintf("%s:%d", rel, m.line)
			_, listed := want[key]
			delete(want, key)
			switch {
			case m.skip != "":
				skipped++
				if *verbose {
					fmt.Fprintf(stdout, "SKIP %s: %s\n", m.where, m.skip)
				}
			case len(m.failures) > 0:
				failing = append(failing, key+": "+locationPrefix.ReplaceAllString(located(files[i], m.where, m.failures[0]), ""))
				if listed {
					expectedFail++
					if *verbose {
						fmt.Fprintf(stdout, "XFAIL %s\n", located(files[i], m.where, m.failures[0]))
					}
					continue
				}
				failed++
				for _, f := range m.failures {
					fmt.Fprintf(stdout, "FAIL %s\n", located(files[i], m.where, f))
				}
			default:
				passed++
				if *verbose {
					fmt.Fprintf(stdout, "ok   %s\n", m.where)
				}
			}
			if listed && len(m.failures) == 0 {
				surprises = append(surprises, key)
			}
		}
	}
	if *expected != "" {
		var stale []string
		for k := range want {
			stale = append(stale, k)
		}
		sort.Strings(stale)
		surprises = append(surprises, stale...)
	}
	if *writeExpected != "" {
		list := expectedHeader + strings.Join(failing, "\n") + "\n"
		if err := outfile.WriteFile(*writeExpected, []byte(list)); err != nil {
			return fmt.Errorf("test: %v", err)
		}
	}
	summary := fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
	if *expected != "" {
		summary += fmt.Sprintf(" (%d modules fail as %s expects)", expectedFail, filepath.Base(*expected))
	}
	fmt.Fprintln(stdout, summary)
	for _, s := range surprises {
		fmt.Fprintf(stdout, "%s is listed in %s as failing, and does not fail: take it off the list\n", s, *expected)
	}
	if failed > 0 || len(surprises) > 0 {
		return fmt.Errorf("test: %s", summary)
	}
	return nil
}

const expectedHeader = `# The modules that vkjit test cannot pass yet (path:line of the entry
# function, the path relative to the directory tested), each with its
# first failure, for --expected: a listed module that does not fail is
# an error, so the list only shrinks. Written by vkjit test
# --write-expected.
`

var modulePlace = regexp.MustCompile(`^\S+:\d+$`)

var locationPrefix = regexp.MustCompile(`^\S+?:\d+(:\d+)?: `)

// located prefixes a failure with where its module is, unless the
// failure names its place in the file already.
func located(file, where, failure string) string {
	if strings.HasPrefix(failure, file+":") {
		return failure
	}
	return where + ": " + failure
}

// readExpected reads the expected-failures list: "path:line: reason"
// lines, # comments.
func readExpected(path string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		file, reason, ok := strings.Cut(t, ": ")
		if !ok || strings.TrimSpace(reason) == "" || !modulePlace.MatchString(file) {
			return nil, fmt.Errorf("%s:%d: want \"path:line: reason\"", path, line)
		}
		out[file] = reason
	}
	return out, sc.Err()
}

type fileResult struct{ modules []moduleResult }

type moduleResult struct {
	line     int    // where its entry function starts
	where    string // file:line
	skip     string // why it is skipped
	failures []string
}

// testFile runs every module of one file.
func testFile(rt *vkjit.Runtime, file string, opts vkjit.CompileOptions, asArgs bool) fileResult {
	src, err := os.ReadFile(file)
	if err != nil {
		return fileResult{[]moduleResult{{where: file, failures: []string{err.Error()}}}}
	}
	ts, errs, err := stablehlo.Parse(file, string(src))
	if err != nil {
		return fileResult{[]moduleResult{{where: file, failures: []string{err.Error()}}}}
	}
	var out fileResult
	for i, t := range ts {
		out.modules = append(out.modules, testModule(rt, file, t, errs[i], opts, asArgs))
	}
	return out
}

func testModule(rt *vkjit.Runtime, file string, t *stablehlo.Translated, terr error, opts vkjit.CompileOptions, asArgs bool) moduleResult {
	r := moduleResult{line: t.Pos.Line, where: fmt.Sprintf("%s:%d", file, t.Pos.Line)}
	if terr != nil {
		var u *stablehlo.Unsupported
		if errors.As(terr, &u) && u.Category != "" {
			r.skip = u.Error()
			return r
		}
		r.failures = append(r.failures, oneLine(terr))
		return r
	}
	if len(t.Checks) == 0 {
		r.skip = "no checks"
		return r
	}
	if n := len(t.HLO.Entry.Params); n > 0 {
		r.failures = append(r.failures, fmt.Sprintf("the entry function takes %d arguments, and a test gives none", n))
		return r
	}
	var args []*vkjit.Tensor
	if asArgs {
		args = vkjit.ConstantsAsParameters(t.HLO)
	}
	outs, err := runChecked(rt, t, args, opts)
	if err != nil {
		r.failures = append(r.failures, oneLine(err))
		return r
	}
	r.failures = evalChecks(t, outs)
	return r
}

// runChecked compiles and runs a translated module, returning every
// output leaf as a literal.
func runChecked(rt *vkjit.Runtime, t *stablehlo.Translated, args []*vkjit.Tensor, opts vkjit.CompileOptions) ([]*hlo.Literal, error) {
	exe, err := rt.Compile(t.HLO, opts)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	res, _, err := exe.Run(context.Background(), args...)
	if err != nil {
		return nil, err
	}
	outs := make([]*hlo.Literal, len(res))
	for i, x := range res {
		outs[i] = literal(x)
	}
	return outs, nil
}

// evalChecks compares each check's values, one line per failed check.
// The outputs are the entry's leaves: its results, then the checks'.
func evalChecks(t *stablehlo.Translated, outs []*hlo.Literal) []string {
	results := resultLeaves(t)
	var fails []string
	for _, c := range t.Checks {
		var exp *hlo.Literal
		if c.Expected >= 0 {
			exp = outs[results+c.Expected]
		}
		if d := stablehlo.Compare(c, outs[results+c.Actual], exp); d != "" {
			fails = append(fails, fmt.Sprintf("%s: %s %s", c.Pos, c.Op, d))
		}
	}
	return fails
}

// resultLeaves counts the output leaves of the entry function's own
// results (the checks' values follow them).
func resultLeaves(t *stablehlo.Translated) int {
	n := 0
	for _, o := range t.HLO.Entry.Root.Operands[:t.Results] {
		n += len(o.Shape.Leaves())
	}
	return n
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
