// Command ab times one HLO module compiled several ways in interleaved
// rounds within one process: each round runs every variant once, in a
// rotating order, so that this machine's slow periods (seconds to
// minutes long, up to 2x) fall on all variants alike. It prints each
// variant's min, first quartile and median execution time and the
// median over rounds of its time divided by the first variant's.
//
//	go run ./bench/ab [-rounds N] GRAPH.hlo VARIANT...
//
// A variant is "base" or a comma-separated list of no-fuse,
// storage-loads, vec4-access, invocation-tiles, subgroup-reduce,
// workgroup-reduce (the GPUs' row reductions on a CPU device),
// shared-fft (the GPUs' real FFT passes in one kernel) and
// env:NAME=VALUE (set while that variant compiles, for an experiment's
// edited code to read). Arguments are
// random (hlotest.UniformInputs); the compile cache is off.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

func main() {
	rounds := flag.Int("rounds", 40, "timed rounds (after 2 untimed)")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: ab [-rounds N] GRAPH.hlo VARIANT...")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
}

func run(path string, variants []string, rounds int) error {
	mods, err := hlo.ParseFile(path)
	if err != nil {
		return err
	}
	mod := mods[0]
	rt, err := vkjit.Open(vkjit.Options{NoCache: true})
	if err != nil {
		return err
	}
	defer rt.Close()
	var exes []*vkjit.Executable
	for _, v := range variants {
		e, err := compile(rt, mod, v)
		if err != nil {
			return fmt.Errorf("variant %s: %w", v, err)
		}
		defer e.Close()
		exes = append(exes, e)
	}
	var args []*vkjit.Tensor
	for _, l := range hlotest.UniformInputs(mod, 0) {
		args = append(args, &vkjit.Tensor{Type: vkjit.DType(l.Shape.Elem), Dims: l.Shape.Dims, Data: l.Data})
	}
	times := make([][]float64, len(exes))
	for r := range rounds + 2 {
		for j := range exes {
			i := (j + r) % len(exes)
			_, st, err := exes[i].Run(context.Background(), args...)
			if err != nil {
				return fmt.Errorf("variant %s: %w", variants[i], err)
			}
			if r >= 2 {
				times[i] = append(times[i], float64(st.Exec.Nanoseconds())/1e6)
			}
		}
	}
	for i, v := range variants {
		ratios := make([]float64, rounds)
		for r := range ratios {
			ratios[r] = times[i][r] / times[0][r]
		}
		t := slices.Sorted(slices.Values(times[i]))
		slices.Sort(ratios)
		fmt.Printf("%-24s min %8.3f ms  p25 %8.3f  median %8.3f  time / first: median %.3f\n", v, t[0], t[len(t)/4], t[len(t)/2], ratios[len(ratios)/2])
	}
	return nil
}

// compile compiles mod as variant v says.
func compile(rt *vkjit.Runtime, mod *hlo.Module, v string) (*vkjit.Executable, error) {
	var opts vkjit.CompileOptions
	var restore []func()
	defer func() {
		for _, f := range restore {
			f()
		}
	}()
	for _, part := range strings.Split(v, ",") {
		switch {
		case part == "base":
		case part == "no-fuse":
			opts.NoFuse = true
		case part == "storage-loads":
			opts.StorageLoads = true
		case part == "vec4-access":
			opts.Vec4Access = true
		case part == "invocation-tiles":
			opts.InvocationTiles = true
		case part == "subgroup-reduce":
			opts.SubgroupReduce = true
		case part == "workgroup-reduce":
			opts.WorkgroupReduce = true
		case part == "shared-fft":
			opts.SharedFft = true
		case strings.HasPrefix(part, "env:"):
			name, val, ok := strings.Cut(strings.TrimPrefix(part, "env:"), "=")
			if !ok {
				return nil, fmt.Errorf("%q: want env:NAME=VALUE", part)
			}
			old, had := os.LookupEnv(name)
			os.Setenv(name, val)
			restore = append(restore, func() {
				if had {
					os.Setenv(name, old)
				} else {
					os.Unsetenv(name)
				}
			})
		default:
			return nil, fmt.Errorf("unknown variant part %q", part)
		}
	}
	return rt.Compile(mod, opts)
}
