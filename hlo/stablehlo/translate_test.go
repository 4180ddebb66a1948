package stablehlo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// TestTwins translates each testdata/*.mlir and runs it on the
// reference evaluator beside its HLO twin (the same program written in
// XLA's HLO text): the results must agree bit for bit.
func TestTwins(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.mlir")
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			require.True(t, IsMLIR(string(src)))
			m, err := ParseModule(f, string(src))
			require.NoError(t, err)
			twinSrc, err := os.ReadFile(strings.TrimSuffix(f, ".mlir") + ".hlo")
			require.NoError(t, err)
			require.False(t, IsMLIR(string(twinSrc)))
			twin, err := hlo.Parse(f, string(twinSrc))
			require.NoError(t, err)
			require.Equal(t, shapes(twin.Entry.Params), shapes(m.Entry.Params))
			require.Equal(t, twin.Entry.Root.Shape.String(), m.Entry.Root.Shape.String())
			for seed := uint64(1); seed <= 3; seed++ {
				args := hlotest.Inputs(twin, seed)
				want, err := eval.Run(twin, args...)
				require.NoError(t, err)
				got, err := eval.Run(m, args...)
				require.NoError(t, err)
				require.Equal(t, want.Leaves(), got.Leaves())
			}
		})
	}
}

// TestErrors: malformed or unsupported text is refused with the
// file:line:col of the fault and what is wrong, never a panic.
func TestErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseModule("t.mlir", c.src)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			var u *Unsupported
			require.Equal(t, c.unsupported, errors.As(err, &u), "%v", err)
		})
	}
}

const head = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"

var errorCases = []struct {
	name, src, want string
	unsupported     bool
}{
	{"unterminated function", head + "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n", "t.mlir:3:1: the end of the text, where the region opened at 1:53", false},
	{"undefined value", head + "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:2:", false},
	{"bad type", head + "  %0 = stablehlo.add %a, %a : tensor<2xq32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:2:", false},
	{"operand type mismatch", "func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:2:", false},
	{"result type mismatch", head + "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  return %0 : tensor<3xf32>\n}\n", "t.mlir:", false},
	{"garbage", "func.func @main( {{{ ", "t.mlir:1:", false},
	{"bad dense", head + "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n  return %c : tensor<2xf32>\n}\n", "t.mlir:2:", false},
	{"dot algorithm XLA does not name", "func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {\n  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = f16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n  return %0 : tensor<2x2xf32>\n}\n", "t.mlir:2:8: stablehlo.dot_general: dot algorithm <lhs_precision_type = f16, rhs_precision_type = bf16", false},
	{"unknown op", head + "  %0 = stablehlo.frobnicate %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "stablehlo.frobnicate", true},
	{"dynamic shape", "func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n  return %a : tensor<?xf32>\n}\n", "t.mlir:1:", true},
	{"unknown custom call with a computation", head + "  %0 = stablehlo.custom_call @some_library_op(%a) {called_computations = [@helper]} : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\nfunc.func private @helper(%x: tensor<f32>) -> tensor<f32> {\n  %0 = \"foo.bar\"(%x) : (tensor<f32>) -> tensor<f32>\n  return %0 : tensor<f32>\n}\n", "t.mlir:2:8: stablehlo.custom_call: custom_call @some_library_op is not supported", true},
	{"sdy manual computation over two devices", "sdy.mesh @mesh = <[\"x\"=2, \"y\"=1]>\n" + "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\", \"y\"} (%b: tensor<1xf32>) {\n    sdy.return %b : tensor<1xf32>\n  } : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:3:8: sdy.manual_computation: sdy.manual_computation over manual axes \"x\"=2", true},
	{"sdy all_reduce over two devices", "sdy.mesh @mesh = <[\"x\"=2]>\n" + head + "  %0 = sdy.all_reduce {\"x\"} %a out_sharding=<@mesh, [{}]> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:3:8: sdy.all_reduce: sdy.all_reduce over axes \"x\"=2", true},
	{"sdy sharding of no mesh", head + "  %0 = sdy.all_reduce {\"x\"} %a out_sharding=<@nomesh, [{}]> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:2:8: sdy.all_reduce: sharding @nomesh, [{}] names no sdy.mesh", false},
	{"sdy mesh axis of size 0", "sdy.mesh @mesh = <[\"x\"=0]>\n" + head + "  return %a : tensor<2xf32>\n}\n", "t.mlir:1:1: sdy.mesh @mesh: mesh axis \"x\" of size 0", false},
	{"sdy body of other arguments", head + "  %0 = sdy.named_computation<\"f\">(%a) (%b: tensor<3xf32>) {\n    sdy.return %b : tensor<3xf32>\n  } : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", "t.mlir:2:8: sdy.named_computation: its body's argument 0 is tensor<3xf32>", false},
	{"elided resource", head + "  %c = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>\n  return %c : tensor<2xf32>\n}\n", "t.mlir:2:8: stablehlo.constant: dense_resource<__elided__>: the constant's bytes were left out", false},
	{"missing resource", head + "  %c = stablehlo.constant dense_resource<w> : tensor<2xf32>\n  return %c : tensor<2xf32>\n}\n", "t.mlir:2:8: stablehlo.constant: dense_resource<w>: the text has no resource w", false},
	{"short resource", head + "  %c = stablehlo.constant dense_resource<w> : tensor<2xf32>\n  return %c : tensor<2xf32>\n}\n{-#\n  dialect_resources: {\n    builtin: {\n      w: \"0x040000000000803F\"\n    }\n  }\n#-}\n", "dense_resource<w> holds 4 bytes, tensor<2xf32> 8", false},
	{"bad resource blob", head + "  return %a : tensor<2xf32>\n}\n{-#\n  dialect_resources: {\n    builtin: {\n      w: \"0x0400000\"\n    }\n  }\n#-}\n", "t.mlir:7:7: resource w: encoding/hex: odd length hex string", false},
	{"resource blob without alignment", head + "  return %a : tensor<2xf32>\n}\n{-#\n  dialect_resources: {\n    builtin: {\n      w: \"0x0300000000\"\n    }\n  }\n#-}\n", "t.mlir:7:7: resource w: alignment 3 is not a power of two", false},
	{"unterminated resources", head + "  return %a : tensor<2xf32>\n}\n{-#\n  dialect_resources: {\n", "t.mlir:", false},
	{"no main", "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\nfunc.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n", "main", false},
}

func shapes(ins []*hlo.Instruction) []string {
	s := make([]string, len(ins))
	for i, in := range ins {
		s[i] = in.Shape.String()
	}
	return s
}

// TestSplatConstants: a splat of many elements is its one value
// broadcast, so that a few characters of text cannot make the reader
// hold billions of elements (the fuzzer's dense<...> : tensor<1e11>
// took 13 GB and did not finish); a constant compared by a check must be
// held and is refused past maxDenseBytes.
func TestSplatConstants(t *testing.T) {
	for _, c := range []struct {
		dims, value string
		broadcast   bool
	}{
		{"100000000000", "1.0", true},
		{"64x64", "-2.5", true},
		{"64x64", `"0x0000C03F"`, true},
		{"4x4", "1.0", false}, // small: a literal, as before
	} {
		src := fmt.Sprintf("func.func @main() -> tensor<%[1]sxf32> {\n  %%0 = stablehlo.constant dense<%[2]s> : tensor<%[1]sxf32>\n  return %%0 : tensor<%[1]sxf32>\n}\n", c.dims, c.value)
		m, err := ParseModule("splat.mlir", src)
		require.NoError(t, err, c.dims)
		root := m.Entry.Root
		if !c.broadcast {
			require.Equal(t, hlo.OpConstant, root.Op, c.dims)
			continue
		}
		require.Equal(t, hlo.OpBroadcast, root.Op, c.dims)
		k := root.Operands[0]
		require.Equal(t, hlo.OpConstant, k.Op)
		require.Equal(t, 0, k.Shape.Rank())
	}
	src := "func.func @main() {\n  %0 = stablehlo.constant dense<1.0> : tensor<100000000000xf32>\n  check.expect_eq_const %0, dense<1.0> : tensor<100000000000xf32>\n  return\n}\n"
	_, _, err := Parse("check.mlir", src)
	if err == nil {
		ts, errs, _ := Parse("check.mlir", src)
		require.Len(t, ts, 1)
		err = errs[0]
	}
	require.ErrorContains(t, err, "more than vkjit holds in memory")
}

// TestStaticDynamism: a dynamic-shape op whose shape operands are
// constants is its static form; one whose shape operand is computed is
// refused as a dynamic shape.
func TestStaticDynamism(t *testing.T) {
	for _, c := range []struct{ name, body, op string }{
		{"iota", "  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>\n  %0 = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi64>) -> tensor<2x3xf32>\n", "iota"},
		{"reshape", "  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>\n  %x = stablehlo.constant dense<1.0> : tensor<6xf32>\n  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>\n", "reshape"},
		{"pad", "  %x = stablehlo.constant dense<1.0> : tensor<2x2xf32>\n  %v = stablehlo.constant dense<0.0> : tensor<f32>\n  %l = stablehlo.constant dense<[0, 1]> : tensor<2xi64>\n  %h = stablehlo.constant dense<[0, 0]> : tensor<2xi64>\n  %i = stablehlo.constant dense<[0, 0]> : tensor<2xi64>\n  %0 = stablehlo.dynamic_pad %x, %v, %l, %h, %i : (tensor<2x2xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>\n", "pad"},
		{"slice", "  %x = stablehlo.constant dense<1.0> : tensor<4x3xf32>\n  %a = stablehlo.constant dense<[1, 0]> : tensor<2xi64>\n  %b = stablehlo.constant dense<[3, 3]> : tensor<2xi64>\n  %c = stablehlo.constant dense<[1, 1]> : tensor<2xi64>\n  %0 = stablehlo.real_dynamic_slice %x, %a, %b, %c : (tensor<4x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>\n", "slice"},
	} {
		src := "func.func @main() -> tensor<2x3xf32> {\n" + c.body + "  return %0 : tensor<2x3xf32>\n}\n"
		m, err := ParseModule(c.name+".mlir", src)
		require.NoError(t, err, c.name)
		require.Equal(t, c.op, m.Entry.Root.Op.String(), c.name)
		require.Equal(t, "f32[2,3]", m.Entry.Root.Shape.String()[:len("f32[2,3]")], c.name)
	}
	// The result type and a constant shape operand disagree: an error.
	bad := "func.func @main() -> tensor<2x3xf32> {\n  %s = stablehlo.constant dense<[3, 2]> : tensor<2xi64>\n  %0 = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi64>) -> tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>\n}\n"
	_, err := ParseModule("bad.mlir", bad)
	require.ErrorContains(t, err, "bad.mlir:3:")
	// A shape computed at run time: refused as a dynamic shape.
	computed := "func.func @main(%n: tensor<2xi64>) -> tensor<2x3xf32> {\n  %0 = stablehlo.dynamic_iota %n, dim = 1 : (tensor<2xi64>) -> tensor<2x3xf32>\n  return %0 : tensor<2x3xf32>\n}\n"
	_, err = ParseModule("computed.mlir", computed)
	var u *Unsupported
	require.ErrorAs(t, err, &u)
	require.Equal(t, dynamicCategory, u.Category)
}

// TestProbes: a probe passes its operand on and keeps it for
// check.expect_serialized_eq, which compares exactly; a check of a probe
// that made no value is an error, and a probe in a region (which may run
// many times) is refused by category.
func TestProbes(t *testing.T) {
	src := `func.func @main() {
  %0 = stablehlo.constant dense<[1.5, 2.5]> : tensor<2xf32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xf32>
  %2 = stablehlo.add %1, %1 : tensor<2xf32>
  check.expect_serialized_eq %1, probe_id = "p" : tensor<2xf32>
  check.expect_eq_const %2, dense<[3.0, 5.0]> : tensor<2xf32>
  return
}
`
	ts, errs, err := Parse("probe.mlir", src)
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.Len(t, ts[0].Checks, 2)
	c := ts[0].Checks[0]
	require.Equal(t, CheckEq, c.Kind)
	outs := ts[0].HLO.Entry.Root.Operands
	require.Same(t, outs[c.Actual], outs[c.Expected], "the probed value itself")

	missing := strings.Replace(src, `probe_id = "p" : tensor<2xf32>
  %2`, `probe_id = "q" : tensor<2xf32>
  %2`, 1)
	_, errs, err = Parse("missing.mlir", missing)
	require.NoError(t, err)
	require.ErrorContains(t, errs[0], `probe "p" made no value`)

	inLoop := `func.func @main() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %r = stablehlo.while(%a = %0) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %a, %0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %p = interpreter.probe %a, probe_id = "p" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_eq_const %r, dense<0> : tensor<i64>
  return
}
`
	_, errs, err = Parse("loop.mlir", inLoop)
	require.NoError(t, err)
	var u *Unsupported
	require.ErrorAs(t, errs[0], &u)
	require.Equal(t, probeCategory, u.Category)
}

// TestKnownCustomCalls: JAX's LAPACK calls (as jax.jit(...).lower prints
// them on CPU) become HLO custom-calls vkjit runs, mhlo.backend_config
// read (trsm's side, uplo, trans_x and diag); an unknown target is
// refused by name.
func TestKnownCustomCalls(t *testing.T) {
	src := `module @jit_qr {
  func.func public @main(%arg0: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
    %0:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3xf32>)
    %1 = stablehlo.custom_call @lapack_sorgqr_ffi(%0#0, %0#1) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<5x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
    %2 = stablehlo.slice %0#0 [0:3, 0:3] : (tensor<5x3xf32>) -> tensor<3x3xf32>
    %3 = stablehlo.custom_call @lapack_strsm_ffi(%2, %2) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    return %1, %3 : tensor<5x3xf32>, tensor<3x3xf32>
  }
}
`
	ts, errs, err := Parse("qr.mlir", src)
	require.NoError(t, err)
	require.NoError(t, errs[0])
	var calls []*hlo.CustomCall
	for _, in := range ts[0].HLO.Entry.Instructions {
		if in.Op == hlo.OpCustomCall {
			c, err := hlo.KnownCustomCall(in)
			require.NoError(t, err)
			require.NotNil(t, c, in.A.Target)
			calls = append(calls, c)
		}
	}
	require.Equal(t, []hlo.CallKind{hlo.CallGeqrf, hlo.CallOrgqr, hlo.CallTrsm}, []hlo.CallKind{calls[0].Kind, calls[1].Kind, calls[2].Kind})
	require.Equal(t, hlo.CustomCall{Kind: hlo.CallTrsm, LeftSide: true, Transpose: "NO_TRANSPOSE"}, *calls[2])
	_, errs, err = Parse("x.mlir", strings.Replace(src, "@lapack_strsm_ffi", "@mystery", 1))
	require.NoError(t, err)
	var u *Unsupported
	require.ErrorAs(t, errs[0], &u)
	require.ErrorContains(t, errs[0], "custom_call @mystery")
}

// TestBatchNorm: stablehlo.batch_norm_* become HLO's batch-norm ops with
// their feature_index and epsilon (an f32, in decimal or as its bits);
// the three results of training and grad are the tuple's elements.
func TestBatchNorm(t *testing.T) {
	src := `func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.000000e-03 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = "stablehlo.batch_norm_inference"(%x, %s, %o, %0#1, %0#2) {epsilon = 0x3A83126F : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2:3 = "stablehlo.batch_norm_grad"(%x, %s, %0#1, %0#2, %1) {epsilon = 1.000000e-03 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %2#1, %1 : tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>
}
`
	m, err := ParseModule("bn.mlir", src)
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	seen := map[hlo.Opcode]bool{}
	for _, in := range m.Entry.Instructions {
		switch in.Op {
		case hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad:
			seen[in.Op] = true
			f, eps, err := hlo.BatchNormAttrs(in)
			require.NoError(t, err)
			require.Equal(t, 1, f)
			require.Equal(t, float32(0.001), eps, in.Op.String())
		}
	}
	require.Len(t, seen, 3)
}

// TestDonations: JAX marks donated arguments (donate_argnums) with
// tf.aliasing_output (the result that may take the argument's memory) or
// jax.buffer_donor; they become HLO's input_output_alias and
// buffer_donor, which the compiler honours.
func TestDonations(t *testing.T) {
	src := `func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 1 : i32}, %b: tensor<4xf32> {jax.buffer_donor = true}, %c: tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %c, %0 : tensor<2xf32>, tensor<4xf32>
}
`
	m, err := ParseModule("d.mlir", src)
	require.NoError(t, err)
	al, err := m.InputOutputAlias()
	require.NoError(t, err)
	require.Equal(t, []hlo.Alias{{Output: []int64{1}, Param: 0, ParamIndex: []int64{}}}, al)
	d, err := m.BufferDonors()
	require.NoError(t, err)
	require.Equal(t, []hlo.Alias{{Param: 1, ParamIndex: []int64{}}}, d)

	one := "func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {\n  %0 = stablehlo.negate %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
	m, err = ParseModule("d.mlir", one)
	require.NoError(t, err)
	al, err = m.InputOutputAlias()
	require.NoError(t, err)
	require.Equal(t, []hlo.Alias{{Output: []int64{}, Param: 0, ParamIndex: []int64{}}}, al, "a single result is the root itself")

	for _, c := range []struct{ attr, want string }{
		{"tf.aliasing_output = 1 : i32", "d.mlir:1:24: %a: tf.aliasing_output 1 names no result of @main"},
		{`tf.aliasing_output = "x"`, "names no result"},
	} {
		_, err := ParseModule("d.mlir", strings.Replace(one, "tf.aliasing_output = 0 : i32", c.attr, 1))
		require.ErrorContains(t, err, c.want)
	}
	_, err = ParseModule("d.mlir", "func.func public @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<2xf32> {\n  %0 = stablehlo.slice %a [0:2] : (tensor<4xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
	require.ErrorContains(t, err, "tf.aliasing_output 0 is tensor<2xf32>, the argument tensor<4xf32>")
}
