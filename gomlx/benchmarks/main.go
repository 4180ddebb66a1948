// Command benchmarks times GoMLX workloads on vkjit and on GoMLX's
// pure-Go backend (simplego) side by side in one process: rounds
// alternate between the backends, each round times a number of
// iterations after a warm-up, and each figure is the median of the
// rounds' medians; the ratio is computed round by round, so that it
// holds while the machine's speed drifts.
//
//	cd gomlx && go run ./benchmarks [-rounds 5] [-iterations 10] [workload ...]
//
// Workloads: mlp_train, one step of GoMLX's trainer (Adam) on an MLP of
// 784-512-10 with batches of 256, the batch uploaded each step (as
// bench/workloads/mlp_train.hlo, with Adam for SGD); cnn_forward, a
// convolution block of GoMLX's layers on 8x32x32x32 (3x3 to 64 channels,
// ReLU, 2x2 max pooling; bench/workloads/conv_block.hlo), its input
// on the device.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/klauspost/cpuid/v2"
	vkgomlx "github.com/vkjit/vkjit/gomlx"
	"github.com/vkjit/vkjit/gomlx/models"
)

var (
	rounds     = flag.Int("rounds", 5, "alternating rounds per backend")
	iterations = flag.Int("iterations", 10, "timed iterations per round")
	warmup     = flag.Int("warmup", 3, "untimed iterations before the first round")
)

// workload makes, for a backend, one iteration to time and what to
// release after.
type workload struct {
	name, what string
	setup      func(b backends.Backend) (step func() error, done func(), err error)
}

var workloads = []workload{
	{"mlp_train", "MLP 784-512-10 training step (Adam), batch 256", mlpTrain},
	{"cnn_forward", "conv block forward: 8x32x32x32, 3x3 to 64, ReLU, 2x2 max pool", cnnForward},
}

func main() {
	flag.Parse()
	vk, err := vkgomlx.New("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks:", err)
		os.Exit(1)
	}
	defer vk.Finalize()
	goB, err := simplego.New("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks:", err)
		os.Exit(1)
	}
	fmt.Printf("# %s (%s), %d CPUs for this process (GOMAXPROCS %d); vkjit on %s; %d rounds of %d iterations after %d\n",
		strings.TrimSpace(cpuid.CPU.BrandName), features(), runtime.NumCPU(), runtime.GOMAXPROCS(0),
		vk.DeviceDescription(0), *rounds, *iterations, *warmup)
	fmt.Printf("%-12s %12s %12s %8s   %s\n", "workload", "simplego ms", "vkjit ms", "ratio", "(vkjit/simplego, median of the rounds' ratios; range)")
	want := flag.Args()
	for _, w := range workloads {
		if len(want) > 0 && !slices.Contains(want, w.name) {
			continue
		}
		if err := measure(w, goB, vk); err != nil {
			fmt.Fprintf(os.Stderr, "benchmarks: %s: %v\n", w.name, err)
			os.Exit(1)
		}
	}
}

func measure(w workload, ref, vk backends.Backend) error {
	type side struct {
		step func() error
		done func()
		ms   []float64
	}
	var sides [2]side
	for i, b := range []backends.Backend{ref, vk} {
		step, done, err := w.setup(b)
		if err != nil {
			return err
		}
		defer done()
		sides[i] = side{step: step, done: done}
		for range *warmup {
			if err := step(); err != nil {
				return err
			}
		}
	}
	var ratios []float64
	for range *rounds {
		var med [2]float64
		for i := range sides {
			ts := make([]float64, *iterations)
			for k := range ts {
				start := time.Now()
				if err := sides[i].step(); err != nil {
					return err
				}
				ts[k] = float64(time.Since(start).Microseconds()) / 1000
			}
			med[i] = median(ts)
			sides[i].ms = append(sides[i].ms, med[i])
		}
		ratios = append(ratios, med[1]/med[0])
	}
	fmt.Printf("%-12s %12.2f %12.2f %8.3f   (%.3f-%.3f)  %s\n", w.name, median(sides[0].ms), median(sides[1].ms),
		median(ratios), slices.Min(ratios), slices.Max(ratios), w.what)
	return nil
}

// features names the widest SIMD the host has (what a BLAS would use).
func features() string {
	switch {
	case cpuid.CPU.Supports(cpuid.AVX512F):
		return "AVX-512"
	case cpuid.CPU.Supports(cpuid.AVX2):
		return "AVX2"
	}
	return "no AVX2"
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func uniform(rng *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.Float64()*2 - 1)
	}
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

func mlpTrain(b backends.Backend) (func() error, func(), error) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := uniform(rng, 256, 784)
	labels := make([][]int32, 256)
	for i := range labels {
		labels[i] = []int32{int32(rng.IntN(10))}
	}
	y := tensors.FromValue(labels)
	model := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		h := activations.Relu(layers.Dense(ctx.In("hidden"), inputs[0], true, 512))
		return []*graph.Node{layers.Dense(ctx.In("logits"), h, true, 10)}
	}
	tr := models.Trainer(b, train.ModelFn(model), 0.001, 1)
	step := func() error {
		m, err := tr.TrainStep(nil, []*tensors.Tensor{x}, []*tensors.Tensor{y})
		for _, t := range m {
			t.FinalizeAll()
		}
		return err
	}
	return step, func() {}, nil
}

func cnnForward(b backends.Backend) (func() error, func(), error) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := uniform(rng, 8, 32, 32, 32)
	ctx := context.New().WithInitializer(models.Init(1))
	exec, err := context.NewExec(b, ctx, func(ctx *context.Context, x *graph.Node) *graph.Node {
		y := layers.Convolution(ctx.In("conv"), x).Filters(64).KernelSize(3).PadSame().Done()
		return graph.MaxPool(activations.Relu(y)).Window(2).Done()
	})
	if err != nil {
		return nil, nil, err
	}
	x.MustMaterializeOnDevice(b, false, 0)
	step := func() error {
		outs, err := exec.Exec(x)
		for _, t := range outs {
			t.FinalizeAll()
		}
		return err
	}
	return step, func() { x.FinalizeAll() }, nil
}
