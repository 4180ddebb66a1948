package lower

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/spirv"
)

// Helpers of the tests of rewrites: a module whose root's shape is
// inferred, and the evaluator's verdict on a rewritten module.

// inferredModule is text(out) with out the root's shape (of element
// type typ) as its operands give it, and two parses of it: the user's,
// and one to rewrite.
func inferredModule(t *testing.T, name, typ string, text func(out string) string) (src string, user, m *hlo.Module) {
	t.Helper()
	probe, err := hlo.Parse(name, text(typ+"[1]"))
	require.NoError(t, err, name)
	shape, err := hlo.InferShape(probe.Entry.Root)
	require.NoError(t, err, name)
	src = text(typ + shape.DimsString()[len(shape.Elem.String()):])
	user, err = hlo.Parse(name, src)
	require.NoError(t, err, name)
	m, err = hlo.Parse(name, src)
	require.NoError(t, err, name)
	return src, user, m
}

// requireSameValues checks that the rewritten entry computes what the
// user's module does, bit for bit, on small integer inputs of seeds
// 0..seeds-1, after verifying it.
func requireSameValues(t *testing.T, name string, user *hlo.Module, entry *hlo.Computation, seeds uint64) {
	t.Helper()
	rewritten := &hlo.Module{Name: user.Name, Computations: calledFrom(entry), Entry: entry}
	require.NoError(t, hlo.Verify(rewritten), name)
	for seed := range seeds {
		args := hlotest.SmallIntInputs(user, seed)
		want, err := eval.Run(user, args...)
		require.NoError(t, err, name)
		got, err := eval.Run(rewritten, args...)
		require.NoError(t, err, name)
		require.Equal(t, want.Leaves()[0].Data, got.Leaves()[0].Data, name)
	}
}

// requireValidKernels compiles src for a device without a loop bound
// and runs each kernel through spirv-val.
func requireValidKernels(t *testing.T, name, src string) {
	t.Helper()
	m, err := hlo.Parse(name, src)
	require.NoError(t, err, name)
	prog, err := Compile(m, DefaultTarget, Options{})
	require.NoError(t, err, name)
	for _, k := range prog.Kernels {
		require.NoError(t, spirv.Validate(k.Words), "%s: %s", name, k.Name)
	}
}
