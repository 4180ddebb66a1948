// Command gomlx is the GoMLX peer of bench/run.sh: the bench workloads
// written with GoMLX's graph API and run on its pure-Go backend
// ("go", simplego), timed as `vkjit bench` times vkjit (median, min, max
// over iterations after warm-up). One JSON object per workload. It is
// its own module so that vkjit does not depend on GoMLX.
//
//	cd bench/gomlx && go run . [-iterations N] [-warmup N] [workload ...]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

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

func relu(x *Node) *Node { return MaxScalar(x, float32(0)) }

type workload struct {
	fn   any
	args func(*rand.Rand) []*tensors.Tensor
}

var workloads = map[string]workload{
	"chain8": {func(x *Node) *Node {
		t := Tanh(AddScalar(MulScalar(x, 1.5), 0.25))
		r := relu(AddScalar(Mul(t, x), -0.5))
		return Div(r, AddScalar(Abs(x), 1))
	}, func(r *rand.Rand) []*tensors.Tensor { return []*tensors.Tensor{uniform(r, 4096, 4096)} }},
	"softmax": {func(x *Node) *Node {
		e := Exp(Sub(x, ReduceAndKeep(x, ReduceMax, -1)))
		return Div(e, ReduceAndKeep(e, ReduceSum, -1))
	}, func(r *rand.Rand) []*tensors.Tensor { return []*tensors.Tensor{uniform(r, 4096, 1024)} }},
	"gemm1024": {func(a, b *Node) *Node { return Dot(a, b) }, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 1024, 1024), uniform(r, 1024, 1024)}
	}},
	"gemm2048": {func(a, b *Node) *Node { return Dot(a, b) }, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 2048, 2048), uniform(r, 2048, 2048)}
	}},
	"dense_relu": {func(x, w, b *Node) *Node { return relu(Add(Dot(x, w), InsertAxes(b, 0))) }, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 256, 784), uniform(r, 784, 512), uniform(r, 512)}
	}},
	"mlp_forward": {func(x, w1, b1, w2, b2, w3, b3 *Node) *Node {
		a1 := relu(Add(Dot(x, w1), InsertAxes(b1, 0)))
		a2 := relu(Add(Dot(a1, w2), InsertAxes(b2, 0)))
		z := Add(Dot(a2, w3), InsertAxes(b3, 0))
		s := Sub(z, ReduceAndKeep(z, ReduceMax, -1))
		return Sub(s, Log(ReduceAndKeep(Exp(s), ReduceSum, -1)))
	}, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 256, 784), uniform(r, 784, 512), uniform(r, 512), uniform(r, 512, 512), uniform(r, 512), uniform(r, 512, 10), uniform(r, 10)}
	}},
}

func main() {
	iters := flag.Int("iterations", 10, "timed runs")
	warmup := flag.Int("warmup", 2, "untimed runs first")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		for n := range workloads {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if os.Getenv(backends.ConfigEnvVar) == "" {
		os.Setenv(backends.ConfigEnvVar, "go")
	}
	backend := backends.MustNew()
	for _, name := range names {
		w, ok := workloads[name]
		if !ok {
			fmt.Fprintln(os.Stderr, "unknown workload", name)
			os.Exit(2)
		}
		exec := MustNewExecAny(backend, w.fn)
		var args []any
		for _, t := range w.args(rand.New(rand.NewPCG(1, 2))) {
			args = append(args, t)
		}
		var times []float64
		for i := 0; i < *warmup+*iters; i++ {
			start := time.Now()
			outs := exec.MustExec(args...)
			for _, o := range outs {
				o.FinalizeAll()
			}
			if i >= *warmup {
				times = append(times, float64(time.Since(start).Microseconds())/1000)
			}
		}
		sort.Float64s(times)
		n := len(times)
		med := times[n/2]
		if n%2 == 0 {
			med = (times[n/2-1] + times[n/2]) / 2
		}
		b, _ := json.Marshal(map[string]any{"workload": name, "peer": "gomlx-go", "median_ms": med, "min_ms": times[0], "max_ms": times[n-1], "iterations": *iters})
		fmt.Println(string(b))
	}
}
