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
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
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

func oneHot(rng *rand.Rand, n, classes int) *tensors.Tensor {
	v := make([]float32, n*classes)
	for i := 0; i < n; i++ {
		v[i*classes+rng.IntN(classes)] = 1
	}
	return tensors.FromFlatDataAndDimensions(v, n, classes)
}

// mlpTrain is bench/workloads/mlp_train.hlo: one SGD step with the
// gradients written out (as the HLO has them).
func mlpTrain(x, labels, w1, b1, w2, b2 *Node) (loss, w1n, b1n, w2n, b2n *Node) {
	n := float64(x.Shape().Dimensions[0])
	z1 := Add(Dot(x, w1), InsertAxes(b1, 0))
	a1 := relu(z1)
	z2 := Add(Dot(a1, w2), InsertAxes(b2, 0))
	shifted := Sub(z2, ReduceAndKeep(z2, ReduceMax, -1))
	logp := Sub(shifted, Log(ReduceAndKeep(Exp(shifted), ReduceSum, -1)))
	loss = MulScalar(ReduceAllSum(Mul(labels, logp)), -1/n)
	dz2 := MulScalar(Sub(Exp(logp), labels), 1/n)
	dw2 := Dot(Transpose(a1, 0, 1), dz2)
	db2 := ReduceSum(dz2, 0)
	dz1 := Where(GreaterThan(z1, ZerosLike(z1)), Dot(dz2, Transpose(w2, 0, 1)), ZerosLike(z1))
	dw1 := Dot(Transpose(x, 0, 1), dz1)
	db1 := ReduceSum(dz1, 0)
	return loss, Sub(w1, MulScalar(dw1, 0.1)), Sub(b1, MulScalar(db1, 0.1)), Sub(w2, MulScalar(dw2, 0.1)), Sub(b2, MulScalar(db2, 0.1))
}

func layerNorm(x, g, b *Node) *Node {
	d := float64(x.Shape().Dimensions[1])
	mean := MulScalar(ReduceAndKeep(x, ReduceSum, -1), 1/d)
	xc := Sub(x, mean)
	v := MulScalar(ReduceAndKeep(Mul(xc, xc), ReduceSum, -1), 1/d)
	return Add(Mul(Mul(xc, Rsqrt(AddScalar(v, 1e-5))), InsertAxes(g, 0)), InsertAxes(b, 0))
}

// transformerBlock is bench/workloads/transformer_block.hlo.
func transformerBlock(x, ln1g, ln1b, wq, wk, wv, wo, ln2g, ln2b, w1, b1, w2, b2 *Node) *Node {
	s, d := x.Shape().Dimensions[0], x.Shape().Dimensions[1]
	n1 := layerNorm(x, ln1g, ln1b)
	q, k, v := Dot(n1, wq), Dot(n1, wk), Dot(n1, wv)
	scores := MulScalar(Dot(q, Transpose(k, 0, 1)), 1/math.Sqrt(float64(d)))
	g := x.Graph()
	sh := shapes.Make(dtypes.Int32, s, s)
	causal := GreaterOrEqual(Iota(g, sh, 0), Iota(g, sh, 1))
	masked := Where(causal, scores, AddScalar(ZerosLike(scores), math.Inf(-1)))
	e := Exp(Sub(masked, ReduceAndKeep(masked, ReduceMax, -1)))
	probs := Div(e, ReduceAndKeep(e, ReduceSum, -1))
	h := Add(x, Dot(Dot(probs, v), wo))
	a := Add(Dot(layerNorm(h, ln2g, ln2b), w1), InsertAxes(b1, 0))
	inner := MulScalar(Add(a, MulScalar(Mul(a, Mul(a, a)), 0.044715)), 0.7978845608028654)
	gelu := Mul(MulScalar(a, 0.5), AddScalar(Tanh(inner), 1))
	return Add(h, Add(Dot(gelu, w2), InsertAxes(b2, 0)))
}

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
	"gemv4096": {func(x, w *Node) *Node { return Dot(x, w) }, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 1, 4096), uniform(r, 4096, 4096)}
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
	"mlp_train": {mlpTrain, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 256, 784), oneHot(r, 256, 10), uniform(r, 784, 512), uniform(r, 512), uniform(r, 512, 10), uniform(r, 10)}
	}},
	"conv_block": {func(x, kernel, bias *Node) *Node {
		conv := Convolve(x, kernel).Strides(1).PadSame().Done()
		return MaxPool(relu(Add(conv, InsertAxes(bias, 0, 0, 0)))).Window(2).Strides(2).Done()
	}, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 8, 32, 32, 32), uniform(r, 3, 3, 32, 64), uniform(r, 64)}
	}},
	"transformer_block": {transformerBlock, func(r *rand.Rand) []*tensors.Tensor {
		return []*tensors.Tensor{uniform(r, 256, 256), uniform(r, 256), uniform(r, 256), uniform(r, 256, 256), uniform(r, 256, 256), uniform(r, 256, 256),
			uniform(r, 256, 256), uniform(r, 256), uniform(r, 256), uniform(r, 256, 1024), uniform(r, 1024), uniform(r, 1024, 256), uniform(r, 256)}
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
