// Package models holds two small GoMLX models and the data they learn,
// made without downloads: an MLP on interleaved spirals and a CNN that
// tells horizontal from vertical bars in noisy 8x8 images. The example
// (gomlx/examples/train), the end-to-end tests (simplego against vkjit)
// and the benchmarks train them.
//
// Everything that could differ between backends is made on the host:
// the data, and the initial weights (GoMLX's initializers draw from the
// backend's random number generator, and simplego's Philox is not
// XLA's), so that two backends start from the same model and see the
// same batches in the same order.
package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// Data is a classification set: inputs (float32) and labels (int32,
// [n, 1]).
type Data struct {
	Inputs, Labels *tensors.Tensor
	Classes        int
}

// Spirals is n points in the plane on classes interleaved spiral arms,
// with a little noise: not linearly separable, an MLP's job.
func Spirals(n, classes int, seed uint64) Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float32, n)
	y := make([][]int32, n)
	for i := range x {
		c := i % classes
		r := rng.Float64()
		t := 4*r + 2*math.Pi*float64(c)/float64(classes) + 0.2*rng.NormFloat64()
		x[i] = []float32{float32(r * math.Cos(t)), float32(r * math.Sin(t))}
		y[i] = []int32{int32(c)}
	}
	return Data{Inputs: tensors.FromValue(x), Labels: tensors.FromValue(y), Classes: classes}
}

// Bars is n 8x8 single-channel images, each a horizontal (class 0) or
// vertical (class 1) bar of random position and brightness on noise:
// [n, 8, 8, 1].
func Bars(n int, seed uint64) Data {
	rng := rand.New(rand.NewPCG(seed, 2))
	const side = 8
	img := make([][][][]float32, n)
	y := make([][]int32, n)
	for i := range img {
		c := i % 2
		at, v := rng.IntN(side), float32(0.5+0.5*rng.Float64())
		img[i] = make([][][]float32, side)
		for r := range img[i] {
			img[i][r] = make([][]float32, side)
			for col := range img[i][r] {
				p := float32(0.3 * rng.NormFloat64())
				if c == 0 && r == at || c == 1 && col == at {
					p += v
				}
				img[i][r][col] = []float32{p}
			}
		}
		y[i] = []int32{int32(c)}
	}
	return Data{Inputs: tensors.FromValue(img), Labels: tensors.FromValue(y), Classes: 2}
}

// MLP is two hidden layers of 32 units with ReLU, then logits.
func MLP(classes int) train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		x := inputs[0]
		for i := range 2 {
			x = activations.Relu(layers.Dense(ctx.In(fmt.Sprintf("hidden%d", i)), x, true, 32))
		}
		return []*graph.Node{layers.Dense(ctx.In("logits"), x, true, classes)}
	}
}

// CNN is two 3x3 convolutions without padding (8 and 16 filters, ReLU
// after each), then a dense layer to logits. The convolutions are
// Conv3x3's, so that simplego, which the tests train beside vkjit, can
// differentiate them (see Conv3x3); vkjit runs GoMLX's own convolution
// and pooling layers too (the example's -model cnn-layers).
func CNN(classes int) train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		x := inputs[0]
		for i, filters := range []int{8, 16} {
			x = activations.Relu(Conv3x3(ctx.In(fmt.Sprintf("conv%d", i)), x, filters))
		}
		x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
		return []*graph.Node{layers.Dense(ctx.In("logits"), x, true, classes)}
	}
}

// CNNLayers is CNN with GoMLX's own layers: two 3x3 convolutions (8 and
// 16 filters, padded to the same size, ReLU and 2x2 max pooling after
// each), then a dense layer to logits.
func CNNLayers(classes int) train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		x := inputs[0]
		for i, filters := range []int{8, 16} {
			x = layers.Convolution(ctx.In(fmt.Sprintf("conv%d", i)), x).Filters(filters).KernelSize(3).PadSame().Done()
			x = graph.MaxPool(activations.Relu(x)).Window(2).Done()
		}
		x = graph.Reshape(x, x.Shape().Dimensions[0], -1)
		return []*graph.Node{layers.Dense(ctx.In("logits"), x, true, classes)}
	}
}

// Conv3x3 is a 3x3 convolution without padding of x ([batch, height,
// width, channels]) to filters channels, plus a bias, computed the im2col
// way: a Gather of each output position's 3x3 patch, then one product
// with the [9 channels, filters] weights. simplego v0.26.0 cannot
// differentiate GoMLX's own convolution (its gradient with respect to
// the input needs Reverse) nor pad or slice (their gradients need Pad),
// but it can a Gather (its gradient is a ScatterSum).
func Conv3x3(ctx *context.Context, x *graph.Node, filters int) *graph.Node {
	g := x.Graph()
	d := x.Shape().Dimensions
	n, h, w, c := d[0], d[1], d[2], d[3]
	oh, ow := h-2, w-2
	idx := make([][][]int32, oh*ow)
	for p := range idx {
		r, col := p/ow, p%ow
		idx[p] = make([][]int32, 9)
		for k := range idx[p] {
			idx[p][k] = []int32{int32((r+k/3)*w + col + k%3)}
		}
	}
	pixels := graph.Transpose(graph.Reshape(x, n, h*w, c), 0, 1)                       // [h*w, n, c]
	patches := graph.Gather(pixels, graph.Const(g, idx))                               // [oh*ow, 9, n, c]
	patches = graph.Reshape(graph.TransposeAllDims(patches, 2, 0, 1, 3), n*oh*ow, 9*c) // [n*oh*ow, 9*c]
	weights := ctx.VariableWithShape("weights", shapes.Make(x.DType(), 9*c, filters)).ValueGraph(g)
	bias := ctx.VariableWithShape("bias", shapes.Make(x.DType(), filters)).ValueGraph(g)
	y := graph.Add(graph.Dot(patches, weights), graph.InsertAxes(bias, 0))
	return graph.Reshape(y, n, oh, ow, filters)
}

// Init initializes every variable from a host random number generator
// seeded by seed and the variable's place in the order of creation: He
// scaled normals for weights (rank 2 and up), zeros for biases. Two
// backends given the same seed start from the same model.
func Init(seed uint64) context.VariableInitializer {
	n := uint64(0)
	return func(g *graph.Graph, shape shapes.Shape) *graph.Node {
		n++
		if shape.Rank() <= 1 || shape.DType != dtypes.Float32 {
			return graph.Zeros(g, shape)
		}
		fanIn := shape.Size() / shape.Dimensions[shape.Rank()-1]
		rng := rand.New(rand.NewPCG(seed, n))
		v := make([]float32, shape.Size())
		for i := range v {
			v[i] = float32(rng.NormFloat64() * math.Sqrt(2/float64(fanIn)))
		}
		return graph.Const(g, tensors.FromFlatDataAndDimensions(v, shape.Dimensions...))
	}
}

// Trainer is a GoMLX trainer of model on backend: Adam at learning
// rate lr, sparse categorical cross-entropy on logits, initial weights
// from Init(seed).
func Trainer(backend backends.Backend, model train.ModelFn, lr float64, seed uint64) *train.Trainer {
	ctx := context.New().WithInitializer(Init(seed))
	return train.NewTrainer(backend, ctx, model, losses.SparseCategoricalCrossEntropyLogits,
		optimizers.Adam().LearningRate(lr).Done(), nil, nil)
}

// Batch is examples [from, from+n) of d, as tensors of their own.
func (d Data) Batch(from, n int) (inputs, labels *tensors.Tensor) {
	return slice(d.Inputs, from, n), slice(d.Labels, from, n)
}

func slice(t *tensors.Tensor, from, n int) *tensors.Tensor {
	dims := t.Shape().Dimensions
	per := t.Shape().Size() / dims[0]
	var out *tensors.Tensor
	t.ConstFlatData(func(flat any) {
		switch f := flat.(type) {
		case []float32:
			out = tensors.FromFlatDataAndDimensions(append([]float32(nil), f[from*per:(from+n)*per]...), append([]int{n}, dims[1:]...)...)
		case []int32:
			out = tensors.FromFlatDataAndDimensions(append([]int32(nil), f[from*per:(from+n)*per]...), append([]int{n}, dims[1:]...)...)
		default:
			panic(fmt.Sprintf("models: no batches of %T", flat))
		}
	})
	return out
}

// Steps trains for steps batches of size batch, taken in order and
// wrapping around, and returns each step's mean batch loss.
func Steps(tr *train.Trainer, d Data, batch, steps int) ([]float64, error) {
	n := d.Inputs.Shape().Dimensions[0]
	losses := make([]float64, steps)
	for s := range steps {
		x, y := d.Batch((s*batch)%(n-batch+1), batch)
		m, err := tr.TrainStep(nil, []*tensors.Tensor{x}, []*tensors.Tensor{y})
		x.FinalizeAll()
		y.FinalizeAll()
		if err != nil {
			return nil, err
		}
		losses[s] = Value(m[0])
		for _, t := range m {
			t.FinalizeAll()
		}
	}
	return losses, nil
}

// Value is a float scalar tensor's value (a loss, a metric).
func Value(t *tensors.Tensor) float64 {
	switch v := t.Value().(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("models: loss of type %T", t.Value()))
}

// Accuracy is the fraction of d that the trainer's model classifies
// right.
func Accuracy(backend backends.Backend, tr *train.Trainer, model train.ModelFn, d Data) (float64, error) {
	exec, err := context.NewExec(backend, tr.Context().Reuse(), func(ctx *context.Context, x *graph.Node) *graph.Node {
		logits := model(ctx, nil, []*graph.Node{x})[0]
		return graph.ArgMax(logits, -1, dtypes.Int32)
	})
	if err != nil {
		return 0, err
	}
	outs, err := exec.Exec(d.Inputs)
	if err != nil {
		return 0, err
	}
	pred := outs[0].Value().([]int32)
	labels := d.Labels.Value().([][]int32)
	right := 0
	for i, p := range pred {
		if p == labels[i][0] {
			right++
		}
	}
	return float64(right) / float64(len(pred)), nil
}
