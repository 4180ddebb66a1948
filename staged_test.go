package vkjit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
)

// TestStagedMatchesMapped runs the end-to-end programs (a while loop, an
// MLP training step, a CNN, a transformer block) on a second runtime that
// stages as a discrete GPU does: tensors in unmapped device memory,
// uploads and downloads through the staging ring on the transfer queue,
// loop predicates read back by copies, device tensors chained through
// device copies. Every result must equal the mapped runtime's bit for
// bit, and the staged runtime's memory must go back to where it started.
// (`make test` also runs this whole package with VKJIT_STAGED=1.)
func TestStagedMatchesMapped(t *testing.T) {
	defer noValidationMessages(t)
	staged, err := vkjit.Open(vkjit.Options{Validate: vkjit.On, NoCache: true, Staged: vkjit.On})
	require.NoError(t, err)
	defer staged.Close()
	require.True(t, staged.Device().Staged)
	if rt.Device().Staged {
		t.Skip("the shared runtime stages too (VKJIT_STAGED=1): nothing to compare with")
	}
	for _, name := range []string{"while_loop", "mlp_train", "cnn", "transformer"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("tests", "testdata", name)
			src, err := os.ReadFile(filepath.Join(dir, "graph.hlo"))
			require.NoError(t, err)
			var args []*vkjit.Tensor
			for i := 0; ; i++ {
				a, err := vkjit.ReadNPYFile(filepath.Join(dir, fmt.Sprintf("arg%d.npy", i)))
				if os.IsNotExist(err) {
					break
				}
				require.NoError(t, err)
				args = append(args, a)
			}
			mapped, err := rt.CompileText(name, string(src), vkjit.CompileOptions{})
			require.NoError(t, err)
			defer mapped.Close()
			want, _, err := mapped.Run(context.Background(), args...)
			require.NoError(t, err)

			exe, err := staged.CompileText(name, string(src), vkjit.CompileOptions{})
			require.NoError(t, err)
			defer exe.Close()
			base := must(staged.MemoryStats())
			for rep := 0; rep < 2; rep++ { // the second run replays recorded command lists
				got, _, err := exe.Run(context.Background(), args...)
				require.NoError(t, err)
				require.Len(t, got, len(want))
				for i := range want {
					require.Equal(t, want[i].Data, got[i].Data, "output %d, run %d", i, rep)
				}
			}

			// The same through device tensors: uploads, a run, and a
			// second run on the first one's results where they fit.
			var dargs []*vkjit.DeviceTensor
			for _, a := range args {
				d, err := staged.Upload(a)
				require.NoError(t, err)
				dargs = append(dargs, d)
			}
			douts, _, err := exe.RunDevice(context.Background(), dargs...)
			require.NoError(t, err)
			for i, d := range douts {
				h, err := d.ToHost()
				require.NoError(t, err)
				require.Equal(t, want[i].Data, h.Data, "device output %d", i)
			}
			for _, d := range append(dargs, douts...) {
				d.Close()
			}
			require.Equal(t, base.InUseBytes, must(staged.MemoryStats()).InUseBytes, "memory back to where it started")
		})
	}
}
