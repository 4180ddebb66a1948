package stablehlo

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo/eval"
)

// runChecks translates src's one program, runs it on the reference
// evaluator and applies its checks.
func runChecks(t *testing.T, src string) {
	t.Helper()
	ts, errs, err := Parse("t.mlir", src)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	require.NoError(t, errs[0])
	tr := ts[0]
	require.NotEmpty(t, tr.Checks)
	out, err := eval.Run(tr.HLO)
	require.NoError(t, err)
	leaves := out.Leaves()
	for _, c := range tr.Checks {
		var want = c.Const
		if c.Expected >= 0 {
			want = leaves[tr.Results+c.Expected]
		}
		require.Empty(t, Compare(c, leaves[tr.Results+c.Actual], want), "%s at line %d", c.Op, c.Pos.Line)
	}
}

// gridSrc runs @f on 2 replicas x 2 partitions: an all_reduce across
// the whole grid (cross_replica_and_partition), an all_gather within
// each replica (flattened ids), a collective_permute that swaps the
// partitions (cross_partition) and partition_id.
const gridSrc = `module @grid {
  func.func @f(%x : tensor<2xi64>) -> (tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>) {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %m = stablehlo.maximum %a, %b : tensor<i64>
        stablehlo.return %m : tensor<i64>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>
    } : (tensor<2xi64>) -> tensor<2xi64>
    %g = "stablehlo.all_gather"(%x) {
      all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 0>,
      use_global_device_ids
    } : (tensor<2xi64>) -> tensor<4xi64>
    %p = "stablehlo.collective_permute"(%x) {
      source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 0>
    } : (tensor<2xi64>) -> tensor<2xi64>
    %id = stablehlo.partition_id : tensor<ui32>
    return %s, %g, %p, %id : tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 10]> : tensor<2xi64>
    %x1 = stablehlo.constant dense<[2, 20]> : tensor<2xi64>
    %x2 = stablehlo.constant dense<[3, 30]> : tensor<2xi64>
    %x3 = stablehlo.constant dense<[4, 40]> : tensor<2xi64>
    %r:16 = "interpreter.run_parallel"(%x0, %x1, %x2, %x3) {
      programs = [[@f, @f], [@f, @f]]
    } : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) ->
        (tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>,
         tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>,
         tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>,
         tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<ui32>)
    check.expect_eq_const %r#0, dense<[4, 40]> : tensor<2xi64>
    check.expect_eq_const %r#12, dense<[4, 40]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<[1, 10, 2, 20]> : tensor<4xi64>
    check.expect_eq_const %r#5, dense<[1, 10, 2, 20]> : tensor<4xi64>
    check.expect_eq_const %r#9, dense<[3, 30, 4, 40]> : tensor<4xi64>
    check.expect_eq_const %r#2, dense<[2, 20]> : tensor<2xi64>
    check.expect_eq_const %r#6, dense<[1, 10]> : tensor<2xi64>
    check.expect_eq_const %r#14, dense<[3, 30]> : tensor<2xi64>
    check.expect_eq_const %r#3, dense<0> : tensor<ui32>
    check.expect_eq_const %r#15, dense<1> : tensor<ui32>
    func.return
  }
}
`

// TestRunParallelGrid: a 2x2 grid's processes exchange values by each
// of the specification's strategies.
func TestRunParallelGrid(t *testing.T) {
	runChecks(t, gridSrc)
}

// TestCollectivesOneProcess: outside run_parallel a program is the one
// process of a 1x1 grid: its collectives are identities (and the zeros
// of a permute that sends it nothing), also inside regions; a group
// naming a second replica is an error.
func TestCollectivesOneProcess(t *testing.T) {
	runChecks(t, `func.func @main() {
  %x = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[]> : tensor<0x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  %z = stablehlo.constant dense<0> : tensor<i64>
  %w = stablehlo.while(%i = %z) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %z : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %g = "stablehlo.collective_broadcast"(%i) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<i64>) -> tensor<i64>
    stablehlo.return %g : tensor<i64>
  }
  check.expect_eq_const %s, dense<[1.5, -2.0]> : tensor<2xf32>
  check.expect_eq_const %p, dense<0.0> : tensor<2xf32>
  return
}
`)
	_, errs, err := Parse("t.mlir", `func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %s = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<4xf32>
  return %x : tensor<2xf32>
}`)
	require.NoError(t, err)
	require.ErrorContains(t, errs[0], "a group names 1, and the grid has 1 replicas")
}

// TestRunParallelRefusals: processes that wait at different collectives
// are named, and a collective joining other processes from inside a
// region is refused by category, not mistranslated.
func TestRunParallelRefusals(t *testing.T) {
	deadlock := `module @m {
  func.func @a(%x : tensor<2xi64>) -> tensor<4xi64> {
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<4xi64>
    return %g : tensor<4xi64>
  }
  func.func @b(%x : tensor<2xi64>) -> tensor<2xi64> {
    %s = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    return %s : tensor<2xi64>
  }
  func.func @main() {
    %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%x, %x) {programs = [[@a], [@b]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<4xi64>, tensor<2xi64>)
    check.expect_eq_const %r#1, dense<[1, 1]> : tensor<2xi64>
    func.return
  }
}`
	_, errs, err := Parse("t.mlir", deadlock)
	require.NoError(t, err)
	require.ErrorContains(t, errs[0], "its processes wait for each other: process (0, 0) at stablehlo.all_gather (line 3), process (1, 0) at stablehlo.all_to_all (line 7)")

	inRegion := `module @m {
  func.func @f(%x : tensor<i64>) -> tensor<i64> {
    %w = stablehlo.while(%i = %x) : tensor<i64>
    cond {
      %c = stablehlo.compare LT, %i, %x : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %s = "stablehlo.all_reduce"(%i) ({
        ^bb0(%a: tensor<i64>, %b: tensor<i64>):
          %m = stablehlo.add %a, %b : tensor<i64>
          stablehlo.return %m : tensor<i64>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i64>) -> tensor<i64>
      stablehlo.return %s : tensor<i64>
    }
    return %w : tensor<i64>
  }
  func.func @main() {
    %x = stablehlo.constant dense<1> : tensor<i64>
    %r:2 = "interpreter.run_parallel"(%x, %x) {programs = [[@f], [@f]]} : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
    check.expect_eq_const %r#0, dense<1> : tensor<i64>
    func.return
  }
}`
	_, errs, err = Parse("t.mlir", inRegion)
	require.NoError(t, err)
	var u *Unsupported
	require.True(t, errors.As(errs[0], &u), "%v", errs[0])
	require.Equal(t, collectivesCategory, u.Category)
	require.ErrorContains(t, errs[0], "stablehlo.all_reduce joining 2 processes inside a region")
}

// TestProbesInLoops: a probe in a while loop's body keeps the iterations
// check.expect_serialized_eq names; a check of an iteration the loop did
// not run fails (it does not compare against zeros).
func TestProbesInLoops(t *testing.T) {
	src := `func.func @main() {
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %three = stablehlo.constant dense<3> : tensor<i64>
  %r = stablehlo.while(%i = %i0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    %p = interpreter.probe %n, probe_id = "n" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  %two = stablehlo.constant dense<2> : tensor<i64>
  check.expect_serialized_eq %one, probe_id = "n", iter = 0 : tensor<i64>
  check.expect_serialized_eq %three, probe_id = "n", iter = 2 : tensor<i64>
  check.expect_serialized_eq %two, probe_id = "n", iter = 1 : tensor<i64>
  return
}
`
	runChecks(t, src)
	// Iteration 3 was never run (the loop ran 3 times): its check fails
	// even against the buffer's zero.
	never := strings.Replace(src, "check.expect_serialized_eq %two, probe_id = \"n\", iter = 1", "check.expect_serialized_eq %i0, probe_id = \"n\", iter = 3", 1)
	ts, errs, err := Parse("t.mlir", never)
	require.NoError(t, err)
	require.NoError(t, errs[0])
	out, err := eval.Run(ts[0].HLO)
	require.NoError(t, err)
	leaves := out.Leaves()
	failed := 0
	for _, c := range ts[0].Checks {
		want := c.Const
		if c.Expected >= 0 {
			want = leaves[ts[0].Results+c.Expected]
		}
		if Compare(c, leaves[ts[0].Results+c.Actual], want) != "" {
			failed++
		}
	}
	require.Equal(t, 1, failed, "the never-run iteration's check")
}
