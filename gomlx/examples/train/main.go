// Command train trains a small GoMLX model on vkjit with GoMLX's own
// training loop and Adam, on data it makes itself, and prints the loss
// after each epoch and the accuracy on held-out data:
//
//	cd gomlx && go run ./examples/train                # an MLP on three interleaved spirals
//	cd gomlx && go run ./examples/train -model cnn-layers  # GoMLX's conv and pooling layers on 8x8 bars
//
// (make gomlx-example from the repository's root runs the first.) The
// backend is vkjit on the device it picks (VKJIT_DEVICE, or the most
// capable), lavapipe on a machine without a GPU; -backend go trains the
// same model on GoMLX's pure-Go backend, for comparison.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/ml/datasets"
	"github.com/gomlx/gomlx/pkg/ml/train"
	_ "github.com/vkjit/vkjit/gomlx"
	"github.com/vkjit/vkjit/gomlx/models"
)

var (
	flagBackend = flag.String("backend", "vkjit", "GoMLX backend configuration (vkjit, vkjit:llvmpipe, go)")
	flagModel   = flag.String("model", "mlp", "mlp (spirals), cnn (bars, im2col convolutions) or cnn-layers (bars, GoMLX's conv and pooling layers)")
	flagEpochs  = flag.Int("epochs", 10, "passes over the training data")
	flagBatch   = flag.Int("batch", 100, "examples per training step")
	flagLR      = flag.Float64("lr", 0.02, "Adam's learning rate")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run() error {
	backend, err := backends.NewWithConfig(*flagBackend)
	if err != nil {
		return err
	}
	defer backend.Finalize()
	var (
		model       train.ModelFn
		trainData   models.Data
		heldOutData models.Data
	)
	switch *flagModel {
	case "mlp":
		model, trainData, heldOutData = models.MLP(3), models.Spirals(3000, 3, 1), models.Spirals(600, 3, 2)
	case "cnn":
		model, trainData, heldOutData = models.CNN(2), models.Bars(2000, 1), models.Bars(400, 2)
	case "cnn-layers":
		model, trainData, heldOutData = models.CNNLayers(2), models.Bars(2000, 1), models.Bars(400, 2)
	default:
		return fmt.Errorf("unknown -model %q (mlp, cnn, cnn-layers)", *flagModel)
	}
	fmt.Printf("backend: %s; model %s; %d training examples, batches of %d\n",
		backend.Description(), *flagModel, trainData.Inputs.Shape().Dimensions[0], *flagBatch)

	ds, err := datasets.InMemoryFromData(backend, "train", []any{trainData.Inputs}, []any{trainData.Labels})
	if err != nil {
		return err
	}
	ds.BatchSize(*flagBatch, true)
	evalDS, err := datasets.InMemoryFromData(backend, "eval", []any{trainData.Inputs}, []any{trainData.Labels})
	if err != nil {
		return err
	}
	evalDS.BatchSize(*flagBatch, false)

	trainer := models.Trainer(backend, model, *flagLR, 1)
	loop := train.NewLoop(trainer)
	start := time.Now()
	for epoch := 1; epoch <= *flagEpochs; epoch++ {
		if _, err := loop.RunEpochs(ds, 1); err != nil {
			return err
		}
		metrics, err := trainer.Eval(evalDS)
		if err != nil {
			return err
		}
		fmt.Printf("epoch %2d: loss %.4f  (%d steps, median step %v)\n", epoch, models.Value(metrics[0]),
			loop.LoopStep, loop.MedianTrainStepDuration().Round(10*time.Microsecond))
	}
	acc, err := models.Accuracy(backend, trainer, model, heldOutData)
	if err != nil {
		return err
	}
	fmt.Printf("held-out accuracy %.1f%% after %v\n", 100*acc, time.Since(start).Round(time.Millisecond))
	return nil
}
