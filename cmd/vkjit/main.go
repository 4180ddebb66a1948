// Command vkjit compiles and runs XLA programs (HLO text, or StableHLO
// as JAX prints it) on Vulkan devices.
//
//	vkjit devices                        list the Vulkan devices
//	vkjit run [flags] GRAPH.hlo [ARG.npy ...]
//	vkjit fmt [--hlo] GRAPH              print the modules in canonical form
//	vkjit graph [-o FILE] GRAPH.hlo      draw the graph with its fusion clusters
//	vkjit cache stats|clear|dir          inspect the compile cache
//	vkjit bench [flags] GRAPH.hlo [ARG.npy ...]   time a module's runs
//	vkjit test [flags] FILE.mlir|DIR ...  run StableHLO conformance files
//
// Run `vkjit help` for the flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/settings"
)

const usage = `vkjit compiles XLA programs to Vulkan compute kernels and runs them.
GRAPH is XLA's HLO text or StableHLO (MLIR, as jax.jit(f).lower(x).as_text()
prints it), told apart by its content.

Usage:
  vkjit devices                              list Vulkan devices
  vkjit run [flags] GRAPH.hlo [ARG.npy ...]  run a module, one .npy per entry parameter
                                             (their shapes refine a StableHLO module's
                                             symbolic ones, as jax.export writes them)
  vkjit fmt [--hlo] GRAPH                    print every module in canonical HLO text
                                             (--hlo: the HLO a StableHLO file becomes)
  vkjit graph [-o FILE] GRAPH.hlo            draw the entry computation, one box per kernel
                                             dispatch (DOT; .svg/.png through graphviz's dot)
  vkjit cache stats|clear|dir                the persistent compile cache (VKJIT_CACHE_DIR,
                                             default: the user cache directory's vkjit;
                                             VKJIT_CACHE_MAX_BYTES bounds it, default 1 GiB)
  vkjit bench [flags] GRAPH.hlo [ARG.npy ...] time a module's runs (random arguments when
                                             none are given): --iterations N (10), --warmup N
                                             (2), --json, --include-transfers, --device-args
                                             (arguments uploaded once, results left on the
                                             device), --no-fuse, --host-loops,
                                             --device-loops, --vec4-access, --storage-loads,
                                             --invocation-tiles, --address-above N
  vkjit test [flags] FILE.mlir|DIR ...       run StableHLO conformance files: every module's
                                             check ops compared on the host; prints each
                                             failure and "N passed, M failed, K skipped":
                                             --expected FILE (modules that cannot pass yet),
                                             --write-expected FILE (write that list),
                                             --jobs N, -v, --no-fuse, --host-loops,
                                             --constants-as-args (the device computes what
                                             folding would), ...
  vkjit help                                 show this text
  vkjit COMMAND -h                           every flag of a command

Flags of run (before or after the positional arguments):
  --out PATH.npz        write the results to an .npz (keys out0, out1, ...)
  --stats-json PATH     write compile and run statistics as one JSON object
  --module N|NAME       in a file of several modules (// -----), the one to run
  --device SEL          device index or name substring (default: VKJIT_DEVICE, else best type)
  --validate            enable the Khronos validation layer (also VKJIT_VALIDATE=1)
  --random-args         fill the arguments with random values (no .npy files): floats
                        uniform in [-1, 1), integers small
  --seed N              seed for --random-args (default 0)
  --compare             also run the reference evaluator; print each output's largest
                        absolute and relative error; fail beyond --rtol/--atol (after
                        writing --out and --stats-json all the same)
  --no-fuse             compile every instruction to its own kernel (to compare against)
  --no-reuse            give every temporary its own memory (to compare against)
  --host-loops          run every while loop from the host, reading its condition back
                        each iteration, not as a device loop (to compare against)
  --device-loops        run every while loop that fits a device loop as one, even one
                        whose known trip count is too short to repay compiling its
                        kernel (which Mesa's shader cache keeps for later runs)
  --vec4-access         on a CPU device, load tiled GEMMs' operands and store vector
                        kernels' results as vec4s, not as 32-byte u64vec4s of 8
                        elements (to compare against)
  --storage-loads       on a CPU device, read inputs from their storage buffers only,
                        not through uniform texel buffer views (to compare against)
  --stats               print kernels, dispatches and the memory plan's figures
  --profile             after the run, run again timing each dispatch on the device
                        (timestamps) and print the time per kernel, longest first
  --cache-dir DIR       the compile cache's directory (default VKJIT_CACHE_DIR, else
                        the user cache directory's vkjit)
  --no-cache            neither read nor write the compile cache
  --donate LIST         let the program reuse these parameters' memory once they are
                        dead (jax's donate_argnums): "all" or leaf numbers like 2,3;
                        input_output_alias and buffer_donor in the module header (in
                        StableHLO, tf.aliasing_output and jax.buffer_donor) donate too
  --memprofile FILE     write the device memory at the planned peak in pprof format
                        (one sample per live buffer, by instruction): go tool pprof -top FILE
  --memory-budget BYTES plan at most BYTES of device memory (arena, parameters,
                        constants), recomputing values instead of keeping them
                        alive; fails with the smallest peak reached if it cannot
  --rtol X, --atol X    tolerances for --compare: |got-want| <= atol*max(1, largest
                        |want| of the output) + rtol*|want| (default by type: exact
                        for integers, 1e-4/1e-5 for f32, 1e-2 for f16 and bf16,
                        1e-10 for f64; bf16's or f16's for a result computed
                        through values of those types)

Types map to NumPy's: pred=bool, s8..s64=int8..int64, u8..u64=uint8..uint64,
f16=float16, f32=float32, f64=float64; bf16 is read and written as its raw
16 bits in a uint16 array. A scalar parameter takes a 0-d array.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "devices":
		err = cmdDevices(args[1:], stdout)
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "fmt":
		err = cmdFmt(args[1:], stdout)
	case "graph":
		err = cmdGraph(args[1:], stdout)
	case "cache":
		err = cmdCache(args[1:], stdout)
	case "bench":
		err = cmdBench(args[1:], stdout, stderr)
	case "test":
		err = cmdTest(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		fmt.Fprintln(stdout, "\nEnvironment (a flag given wins over its variable):")
		for _, v := range settings.Vars {
			fmt.Fprintf(stdout, "  %-22s %s\n", v.Name, v.Doc)
		}
		return 0
	default:
		err = fmt.Errorf("unknown command %q (try vkjit help)", args[0])
	}
	if err != nil {
		var help *helpRequest
		if errors.As(err, &help) {
			// vkjit CMD -h: the command's flags, to stdout.
			fmt.Fprintf(stdout, "Flags of vkjit %s (vkjit help for the commands):\n", help.fs.Name())
			printFlags(stdout, help.fs)
			return 0
		}
		// Library errors name their package ("vkjit: ...", "pool: ...");
		// the command's own prefix is not said twice.
		msg := strings.TrimPrefix(err.Error(), "vkjit: ")
		fmt.Fprintf(stderr, "vkjit: %s\n", strings.ReplaceAll(msg, "\n", "; "))
		return 1
	}
	return 0
}

// parseInterleaved parses flags that may come before, between or after
// positional arguments, and returns the positionals in order.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs}
			}
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// printFlags lists fs's flags as flag.PrintDefaults does, with a
// default only where one is set: -1 is the tolerances' "by type", which
// their text says.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if kind != "" {
			fmt.Fprintf(w, " %s", kind)
		}
		fmt.Fprintf(w, "\n    \t%s", usage)
		switch f.DefValue {
		case "", "0", "false", "-1":
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// helpRequest is a command's -h or --help: run prints its flags.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return h.fs.Name() + ": " + flag.ErrHelp.Error() }
func (h *helpRequest) Unwrap() error { return flag.ErrHelp }

// ms is a duration in milliseconds, as vkjit's reports give times.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// toggle is a boolean flag as an option the environment may still set:
// --validate turns it on, its absence leaves it to VKJIT_VALIDATE.
func toggle(on bool) vkjit.Toggle {
	if on {
		return vkjit.On
	}
	return vkjit.Auto
}

// literal is a tensor as the reference evaluator takes it.
func literal(t *vkjit.Tensor) *hlo.Literal {
	return &hlo.Literal{Shape: hlo.ArrayShape(hlo.ElementType(t.Type), t.Dims...), Data: t.Data}
}
