package hlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// invalidModules are modules the verifier must refuse, each with the
// position and words of its error. Each got past it once, and a later
// pass or the evaluator then crashed or computed something.
var invalidModules = []struct {
	name, text, want string
}{
	{"dynamic_slice_no_operand", `HloModule m
ENTRY e {
  ROOT d = f32[2] dynamic-slice(), dynamic_slice_sizes={2}
}`, "3:3: d (dynamic-slice): needs an operand"},
	{"map_no_operand", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  ROOT m = f32[2] map(), dimensions={0}, to_apply=add
}`, "8:3: m (map): needs an operand"},
	{"reverse_repeated_dimension", `HloModule m
ENTRY e {
  x = f32[2,3,1] parameter(0)
  ROOT r = f32[2,3,1] reverse(x), dimensions={0,1,1}
}`, "4:3: r (reverse): dimension 1 is repeated in dimensions"},
	{"reduce_precision_bits", `HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(x)
}`, "4:3: r (reduce-precision): needs exponent_bits at least 1 and mantissa_bits at least 0, has 0 and 0"},
	{"bitcast_size", `HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT b = f32[2,3] bitcast(x)
}`, "4:3: b (bitcast): bitcast of f32[4] (16 bytes) to f32[2,3] (24 bytes): sizes differ"},
	{"reduce_window_stride_0", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[0] reduce-window(x, z), window={size=2 stride=0}, to_apply=add
}`, "10:3: r (reduce-window): window dimension 0 has stride 0; strides are at least 1"},
	{"convolution_dilation_0", `HloModule m
ENTRY e {
  x = f32[1,8,2] parameter(0)
  k = f32[3,2,4] parameter(1)
  ROOT c = f32[1,6,4] convolution(x, k), window={size=3 rhs_dilate=0}, dim_labels=b0f_0io->b0f
}`, "5:3: c (convolution): window dimension 0 has dilations 1 and 0; dilations are at least 1"},
	{"select_and_scatter_source", `HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[7,6] parameter(0)
  g = f32[2,3] parameter(1)
  z = f32[] constant(0)
  ROOT s = f32[7,6] select-and-scatter(x, g, z), window={size=2x3 stride=3x2 pad=2_0x0_1}, select=ge, scatter=add
}`, "16:3: s (select-and-scatter): source g is f32[2,3] where the windows over f32[7,6] want f32[3,3]"},
	{"select_and_scatter_init_type", `HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,4] parameter(0)
  g = f32[2,2] parameter(1)
  z = f64[] constant(0)
  ROOT s = f32[4,4] select-and-scatter(x, g, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
}`, "16:3: s (select-and-scatter): init value z is f64, must be f32 like operand x"},
	{"sort_comparator_f32", `HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=cmp
}`, "9:3: s (sort): comparator cmp returns f32[], must return pred[]"},
	{"sort_comparator_arity", `HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[4] parameter(0)
  y = s32[4] parameter(1)
  ROOT s = (f32[4], s32[4]) sort(x, y), dimensions={0}, to_apply=cmp
}`, "10:3: s (sort): comparator cmp takes 2 parameters, needs 4"},
	{"scatter_window_exceeds", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2,5] parameter(2)
  ROOT s = f32[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}`, "11:3: s (scatter): update window dimension 1 has 5 elements, operand dimension 1 only 3"},
	{"scatter_reducer_type", `HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}`, "11:3: s (scatter): reducer add's parameter 0 is s32[], must be a f32 scalar"},
	{"scatter_no_attributes", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), to_apply=add
}`, "11:3: s (scatter): scatter_dims_to_operand_dims has 0 entries, the index vectors 2"},
	{"gather_map_out_of_range", `HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={2}, index_vector_dim=1, slice_sizes={1,3}
}`, "5:3: g (gather): start_index_map: dimension 2 out of range [0, 2)"},
	{"gather_map_short", `HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}`, "5:3: g (gather): start_index_map has 1 entries, the index vectors 2"},
	{"gather_map_repeats", `HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,0}, index_vector_dim=1, slice_sizes={1,3}
}`, "5:3: g (gather): start_index_map: dimension 0 repeated"},
	{"gather_collapsed_wide", `HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}
}`, "5:3: g (gather): dimension 0 is collapsed or batching, so its slice size must be 0 or 1, is 2"},
	{"gather_collapsed_empty", `HloModule m
ENTRY e {
  x = f32[0,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={0,3}
}`, "5:3: g (gather): collapsed dimension 0 of the operand is empty, so the f32[2,3] result's elements have nothing to read"},
	{"use_before_definition", `HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = f32[4] negate(y)
  y = f32[4] exponential(x)
  ROOT r = f32[4] add(n, y)
}`, "4:3: n (negate): uses y before its definition"},
	{"self_operand", `HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] add(x, n)
}`, "4:3: n (add): is its own operand (a cycle)"},
	{"reduce_reducer_type", `HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}`, "10:3: r (reduce): reducer add's parameter 0 is s32[], must be a f32 scalar"},
	{"reduce_window_reducer_result", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce-window(x, z), window={size=2 stride=2}, to_apply=add
}`, "10:3: r (reduce-window): reducer add returns pred[], must return f32 scalars"},
	{"exp_of_int", "HloModule m\nENTRY e {\n  x = s32[4] parameter(0)\n  ROOT r = s32[4] exponential(x)\n}",
		"4:3: r (exponential): takes complex or float operands, not s32"},
	{"abs_of_unsigned", "HloModule m\nENTRY e {\n  x = u8[4] parameter(0)\n  ROOT r = u8[4] abs(x)\n}",
		"4:3: r (abs): takes complex or float or signed operands, not u8"},
	{"and_of_float", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] and(x, x)\n}",
		"4:3: r (and): takes pred or signed or unsigned operands, not f32"},
	{"subtract_of_pred", "HloModule m\nENTRY e {\n  x = pred[4] parameter(0)\n  ROOT r = pred[4] subtract(x, x)\n}",
		"4:3: r (subtract): takes complex or float or signed or unsigned operands, not pred"},
	{"rng_not_tuple", "HloModule m\nENTRY e {\n  x = u64[2] parameter(0)\n  ROOT r = s32[5,2] rng-bit-generator(x), algorithm=rng_three_fry\n}",
		"4:3: r (rng-bit-generator): result must be (u64[2], bits), is s32[5,2]"},
	{"rng_state", "HloModule m\nENTRY e {\n  x = s32[2] parameter(0)\n  ROOT r = (s32[2], u32[4]) rng-bit-generator(x), algorithm=rng_three_fry\n}",
		"4:3: r (rng-bit-generator): state must be u64[n] with n >= 2, is s32[2]"},
	{"bitcast_of_tuple", "HloModule m\nENTRY e {\n  x = s32[] parameter(0)\n  t = (s32[], s32[]) tuple(x, x)\n  ROOT r = s32[] bitcast(t)\n}",
		"5:3: r (bitcast): operand t is not an array"},
	{"dot_float_to_int", "HloModule m\nENTRY e {\n  a = s16[3,4] parameter(0)\n  b = f64[4,2] parameter(1)\n  ROOT r = s16[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"5:3: r (dot): a product of f64 operands cannot have a s16 result"},
	// A FuzzMutants mutant: XLA converts complex values to complex
	// types only (the complex rewrite met a real result and failed).
	{"dot_complex_to_real", "HloModule m\nENTRY e {\n  a = f32[4,3] parameter(0)\n  b = c128[3] parameter(1)\n  ROOT r = f32[4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"5:3: r (dot): a product of c128 operands cannot have a f32 result"},
	// FuzzMutants: XLA refuses an integer product's narrower result (its
	// shape inference's MaybeUpcast); a float one may narrow.
	{"dot_int_to_narrower", "HloModule m\nENTRY e {\n  a = s32[4,1] parameter(0)\n  b = s32[1,5] parameter(1)\n  ROOT r = f16[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"5:3: r (dot): a product of s32 operands cannot have the narrower f16 result"},
	{"conv_complex_to_narrower", "HloModule m\nENTRY e {\n  a = c128[1,4,2] parameter(0)\n  b = c64[3,2,2] parameter(1)\n  ROOT r = c64[1,4,2] convolution(a, b), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n}",
		"5:3: r (convolution): a product of c128 operands cannot have the narrower c64 result"},
	// A while body of two parameters (a FuzzMutants mutant): the loop
	// passes its state alone.
	{"while_body_two_params", "HloModule m\ncond {\n  p = s32[] parameter(0)\n  z = s32[] constant(2)\n  ROOT c = pred[] compare(p, z), direction=LT\n}\nbody {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  ROOT a = s32[] add(p, q)\n}\nENTRY e {\n  x = s32[] parameter(0)\n  ROOT w = s32[] while(x), condition=cond, body=body\n}",
		"14:3: w (while): passes 1 arguments to body, which takes 2"},
	{"while_cond_wrong_state", "HloModule m\ncond {\n  p = f32[] parameter(0)\n  ROOT c = pred[] constant(false)\n}\nbody {\n  ROOT p = s32[] parameter(0)\n}\nENTRY e {\n  x = s32[] parameter(0)\n  ROOT w = s32[] while(x), condition=cond, body=body\n}",
		"11:3: w (while): argument 0 is s32[], cond takes f32[]"},
	// XLA's scan (hlo/infer.go inferScan).
	{"scan_no_input", "HloModule m\nf {\n  c = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(c, c)\n}\nENTRY e {\n  i = f32[] parameter(0)\n  ROOT s = f32[] scan(i), dimensions={0}, num_carries=1, to_apply=f\n}",
		"8:3: s (scan): num_carries=1, with 1 operands: needs at least one input"},
	{"scan_dimension_range", "HloModule m\nf {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n  ROOT t = (f32[], f32[]) tuple(x, c)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] parameter(1)\n  ROOT s = (f32[4], f32[]) scan(x, i), dimensions={1}, num_carries=1, to_apply=f\n}",
		"10:3: s (scan): scan dimension 1 out of range for input x (f32[4])"},
	{"scan_lengths", "HloModule m\nf {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT t = f32[] add(x, y)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[5] parameter(1)\n  ROOT s = f32[4] scan(x, y), dimensions={0}, num_carries=0, to_apply=f\n}",
		"10:3: s (scan): input y is 5 long in dimension 0, input x 4"},
	{"scan_param_shape", "HloModule m\nf {\n  x = f32[4] parameter(0)\n  c = f32[] parameter(1)\n  ROOT t = (f32[4], f32[]) tuple(x, c)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] parameter(1)\n  ROOT s = (f32[4,4], f32[]) scan(x, i), dimensions={0}, num_carries=1, to_apply=f\n}",
		"10:3: s (scan): to_apply f's parameter 0 is f32[4], must be f32[]"},
	{"scan_carry_shape", "HloModule m\nf {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n  k = s32[] convert(c)\n  ROOT t = (f32[], s32[]) tuple(x, k)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] parameter(1)\n  ROOT s = (f32[4], f32[]) scan(x, i), dimensions={0}, num_carries=1, to_apply=f\n}",
		"11:3: s (scan): to_apply f returns carry 0 as s32[], its initial value i is f32[]"},
	{"scan_result", "HloModule m\nf {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n  ROOT t = (f32[], f32[]) tuple(x, c)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  i = f32[] parameter(1)\n  ROOT s = (f32[], f32[]) scan(x, i), dimensions={0}, num_carries=1, to_apply=f\n}",
		"10:3: s (scan): shape is (f32[], f32[]), but its operands give (f32[4], f32[])"},
}

func TestInvalidModules(t *testing.T) {
	for _, tc := range invalidModules {
		m, err := Parse(tc.name+".hlo", tc.text)
		if err == nil {
			err = Verify(m)
		}
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), tc.name+".hlo:"+tc.want, tc.name)
		require.Equal(t, 1, strings.Count(err.Error(), ".hlo:"), "one position: %s", err)
	}
}

// TestVerifyAsyncForms: XLA's scheduled forms must hold what they say:
// a copy-start the operand twice, an async-start the operands and the
// called computation's result, an all-reduce-start the all-reduce's
// result (or the older operands-and-results tuple), a done its start's
// result.
func TestVerifyAsyncForms(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"cs = (f32[3], f32[3], u32[]) copy-start(x)\n  ROOT d = f16[3] copy-done(cs)", "copy-done of (f32[3], f32[3], u32[]) cannot give f16[3]"},
		{"ROOT cs = (f32[3], f32[2], u32[]) copy-start(x)", "copy-start's shape must be (f32[3], f32[3], contexts...)"},
		{"s = ((f32[3]), f32[4], s32[]) async-start(x), calls=neg\n  ROOT d = f32[4] async-done(s)", "async-start's shape must be ((f32[3]), f32[3], contexts...)"},
		{"s = ((f32[3]), f32[3], s32[]) async-start(x), calls=neg\n  ROOT d = s32[] async-done(s)", "async-done of ((f32[3]), f32[3], s32[]) cannot give s32[]"},
		{"s = f32[3] all-reduce-start(x), replica_groups={}, to_apply=add\n  ROOT d = f32[4] all-reduce-done(s)", "all-reduce-done of f32[3] cannot give f32[4]"},
		{"s = f32[4] all-reduce-start(x), replica_groups={}, to_apply=add\n  ROOT d = f32[4] all-reduce-done(s)", "shape is f32[4], but its operands give f32[3]"},
		{"s = (f32[3], f32[4]) all-reduce-start(x), replica_groups={}, to_apply=add\n  ROOT d = f32[4] all-reduce-done(s)", "shape is (f32[3], f32[4]), but its operands give f32[3]"},
		{"s = ((f32[3], f32[3]), f32[3], s32[]) async-start(x, x), calls=neg\n  ROOT d = f32[3] async-done(s)", "passes 2 arguments to neg, which takes 1"},
	} {
		src := "HloModule m\nneg {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[3] parameter(0)\n  " + tc.body + "\n}\n"
		m, err := Parse("m.hlo", src)
		require.NoError(t, err, tc.body)
		require.ErrorContains(t, Verify(m), tc.want, tc.body)
	}
}
