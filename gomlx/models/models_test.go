package models

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/stretchr/testify/require"
	"github.com/vkjit/vkjit"
	vkgomlx "github.com/vkjit/vkjit/gomlx"
	"github.com/vkjit/vkjit/gomlx/internal/vktest"
)

var vkb, goBack backends.Backend

func TestMain(m *testing.M) {
	vktest.Main(m, func(opts vkjit.Options) (err error) {
		if vkb, err = vkgomlx.Open(opts, vkjit.CompileOptions{}); err != nil {
			return err
		}
		goBack, err = simplego.New("")
		return err
	}, func() { vkb.Finalize() })
}

// lossTolerance is how far vkjit's loss may be from simplego's at each
// step, relative: both compute in float32, in different orders of
// summation, and the difference grows a little as the weights part.
const lossTolerance = 1e-4

// TestTrainingMatchesSimplego trains each model from the same initial
// weights on the same batches, with GoMLX's own trainer and Adam, on
// simplego and on vkjit: the losses agree step by step and fall.
func TestTrainingMatchesSimplego(t *testing.T) {
	for _, c := range []struct {
		name        string
		model       train.ModelFn
		data        Data
		batch       int
		steps       int
		lr          float64
		falls, ends float64 // the last steps' mean loss at most falls x the first's, and under ends
	}{
		{"MLP", MLP(3), Spirals(600, 3, 1), 100, 60, 0.02, 0.6, 0.8},
		{"CNN", CNN(2), Bars(256, 1), 32, 40, 0.01, 0.5, 0.4},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, err := Steps(Trainer(goBack, c.model, c.lr, 7), c.data, c.batch, c.steps)
			require.NoError(t, err)
			got, err := Steps(Trainer(vkb, c.model, c.lr, 7), c.data, c.batch, c.steps)
			require.NoError(t, err)
			worst := 0.0
			for s := range got {
				d := math.Abs(got[s]-ref[s]) / math.Abs(ref[s])
				worst = max(worst, d)
				require.LessOrEqual(t, d, lossTolerance, "step %d: vkjit %v, simplego %v", s, got[s], ref[s])
			}
			first, last := mean(got[:5]), mean(got[len(got)-5:])
			t.Logf("%s: loss %.4f -> %.4f over %d steps; largest relative difference from simplego %.2g", c.name, first, last, c.steps, worst)
			require.Less(t, last, c.falls*first, "the loss falls")
			require.Less(t, last, c.ends)
		})
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestLayersCNNTrains: GoMLX's own convolution and max pooling layers
// (whose gradients simplego lacks) train on vkjit. GoMLX's graph tests
// check those gradients' values on vkjit (TestGradientConvolve,
// TestGradientMaxPool: go run ./graphtests).
func TestLayersCNNTrains(t *testing.T) {
	losses, err := Steps(Trainer(vkb, CNNLayers(2), 0.01, 7), Bars(256, 1), 32, 40)
	require.NoError(t, err)
	first, last := mean(losses[:5]), mean(losses[len(losses)-5:])
	t.Logf("loss %.4f -> %.4f over %d steps", first, last, len(losses))
	require.Less(t, last, 0.5*first)
}

// TestAccuracy: the MLP trained on vkjit classifies most of a held-out
// set of spirals.
func TestAccuracy(t *testing.T) {
	tr := Trainer(vkb, MLP(3), 0.02, 3)
	_, err := Steps(tr, Spirals(600, 3, 1), 100, 150)
	require.NoError(t, err)
	acc, err := Accuracy(vkb, tr, MLP(3), Spirals(300, 3, 2))
	require.NoError(t, err)
	t.Logf("held-out accuracy %.3f", acc)
	require.Greater(t, acc, 0.8)
}
