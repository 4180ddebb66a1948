package vkjit_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/spirv"
)

// indexInputs are uniform inputs (hlotest.UniformInputs) with every
// integer array in [-3, limit+3) (unsigned: [0, limit+3)): indices
// inside the operand and outside it on both sides, and many repeated.
func indexInputs(seed uint64, limit int64) func(*hlo.Module) []*hlo.Literal {
	return func(m *hlo.Module) []*hlo.Literal {
		lits := hlotest.UniformInputs(m, seed)
		rng := rand.New(rand.NewPCG(seed, 7))
		for _, l := range lits {
			if !l.Shape.Elem.IsInteger() {
				continue
			}
			w := l.Shape.Elem.Bytes()
			for i := int64(0); i < l.Shape.NumElements(); i++ {
				v := rng.Int64N(limit+6) - 3
				if l.Shape.Elem.Kind() == hlo.KindUnsigned {
					v = rng.Int64N(limit + 3)
				}
				for j := range w {
					l.Data[int(i)*w+j] = byte(uint64(v) >> (8 * j))
				}
			}
		}
		return lits
	}
}

// TestSortedScatter: a large scatter of one index per position is
// sorted by index and its kernel finds each element's updates by binary
// search (lower/sortscatter.go); the results are the evaluator's bit
// for bit, fused and unfused, for indices of several types and shapes
// (outside the operand on both sides, repeated), a window narrower than
// the operand, a combiner whose rounding shows the order (multiply),
// variadic scatters, and indices the program sorted itself and says so.
func TestSortedScatter(t *testing.T) {
	defer noValidationMessages(t)
	mul := "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] multiply(a, b)\n}\n"
	add := "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
	pair := "pair {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n  m = s32[] maximum(b, d)\n  ROOT r = (f32[], s32[]) tuple(s, m)\n}\n"
	ints := "lt {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
	for _, c := range []struct {
		name, comps, body string
		limit             int64
	}{
		{"add_s32", add, "  x = f32[600,8] parameter(0)\n  i = s32[1200] parameter(1)\n  u = f32[1200,8] parameter(2)\n  ROOT r = f32[600,8] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", 600},
		{"mul_s64_2d", mul, "  x = f32[600,8] parameter(0)\n  i = s64[40,30] parameter(1)\n  u = f32[40,30,8] parameter(2)\n  ROOT r = f32[600,8] scatter(x, i, u), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=mul", 600},
		{"u8_narrow_window", add, "  x = f32[200,5,6] parameter(0)\n  i = u8[1200,1] parameter(1)\n  u = f32[1200,4,6] parameter(2)\n  ROOT r = f32[200,5,6] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", 200},
		{"middle_dim", add, "  x = f32[8,700] parameter(0)\n  i = s32[1000] parameter(1)\n  u = f32[1000,8] parameter(2)\n  ROOT r = f32[8,700] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add", 700},
		{"variadic", pair, "  x = f32[600,8] parameter(0)\n  y = s32[600,8] parameter(1)\n  i = s32[1200] parameter(2)\n  u = f32[1200,8] parameter(3)\n  v = s32[1200,8] parameter(4)\n  ROOT r = (f32[600,8], s32[600,8]) scatter(x, y, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair", 600},
		{"sorted_by_program", add + ints, "  x = f32[50,4] parameter(0)\n  p = s32[64] parameter(1)\n  i = s32[64] sort(p), dimensions={0}, to_apply=lt\n  u = f32[64,4] parameter(2)\n  ROOT r = f32[50,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, to_apply=add", 50},
	} {
		src := "HloModule s_" + c.name + "\n" + c.comps + "ENTRY e {\n" + c.body + "\n}"
		requireExact(t, c.name, src, indexInputs(3, c.limit))
		// One operand: runs of the sorted positions, in place; several:
		// each element searches its updates.
		want := "scatter_runs"
		if c.name == "variadic" {
			want = "scatter_sorted"
		}
		require.Contains(t, kernelNames(t, c.name, src), want, c.name)
	}
}

// TestLongScatter: a scatter of more update positions than lavapipe
// lets one invocation loop over (70,000 to 200,000 against its 65,535)
// runs as a while loop over chunks of them (lower/splitscatter.go),
// bit for bit the evaluator's single scatter: sorted by vkjit first (a
// gradient of a large embedding lookup, 100 rows hit about 1,000 times
// each, a multiply combiner whose rounding shows the order), sorted by
// the program (every position one row: a single element's 70,000
// updates), of u32 indices with some outside the operand, and variadic.
func TestLongScatter(t *testing.T) {
	defer noValidationMessages(t)
	mul := "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] multiply(a, b)\n}\n"
	add := "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
	pair := "pair {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n  m = s32[] maximum(b, d)\n  ROOT r = (f32[], s32[]) tuple(s, m)\n}\n"
	for _, c := range []struct {
		name, comps, body string
		limit             int64
	}{
		{"embedding_grad", add, "  x = f32[100,4] parameter(0)\n  i = s32[100000] parameter(1)\n  u = f32[100000,4] parameter(2)\n  ROOT r = f32[100,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", 100},
		{"mul_order", mul, "  x = f32[100,2] parameter(0)\n  i = s32[100000] parameter(1)\n  u = f32[100000,2] parameter(2)\n  ROOT r = f32[100,2] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul", 100},
		{"one_row_sorted", add, "  x = f32[3,2] parameter(0)\n  z = s32[] constant(1)\n  i = s32[70000] broadcast(z), dimensions={}\n  u = f32[70000,2] parameter(1)\n  ROOT r = f32[3,2] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, to_apply=add", 3},
		{"u32_outside", add, "  x = f32[50,3] parameter(0)\n  i = u32[200000,1] parameter(1)\n  u = f32[200000,3] parameter(2)\n  ROOT r = f32[50,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add", 50},
		{"variadic", pair, "  x = f32[60,2] parameter(0)\n  y = s32[60,2] parameter(1)\n  i = s32[90000] parameter(2)\n  u = f32[90000,2] parameter(3)\n  v = s32[90000,2] parameter(4)\n  ROOT r = (f32[60,2], s32[60,2]) scatter(x, y, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair", 60},
	} {
		src := "HloModule s_" + c.name + "\n" + c.comps + "ENTRY e {\n" + c.body + "\n}"
		requireExact(t, c.name, src, indexInputs(5, c.limit))
	}
}

// TestAtomicScatter: scatters whose combiner commutes and associates
// exactly (integer add, min, max, and, or, xor; pred's or) apply their
// updates by atomic operations (kgen/atomicscatter.go), the evaluator's
// results bit for bit, fused and unfused: a bincount of 30,000 values
// into 100 bins with indices outside on both sides, rows of u32 max,
// scalar updates at 2-D indices, windows that do not fit (skipped),
// batching dimensions, pred or and u32 xor. Every kernel passes
// spirv-val, and each program has the atomic kernel.
func TestAtomicScatter(t *testing.T) {
	defer noValidationMessages(t)
	comp := func(op, ty string) string {
		return fmt.Sprintf("c {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] %s(a, b)\n}\n", ty, ty, ty, op)
	}
	for _, c := range []struct {
		name, comps, body string
		limit             int64
	}{
		{"bincount", comp("add", "s32"), "  i = s32[30000] parameter(0)\n  i2 = s32[30000,1] reshape(i)\n  one = s32[] constant(1)\n  u = s32[30000] broadcast(one), dimensions={}\n  z = s32[] constant(0)\n  x = s32[100] broadcast(z), dimensions={}\n  ROOT r = s32[100] scatter(x, i2, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c", 100},
		{"u32_max_rows", comp("maximum", "u32"), "  x = u32[64,8] parameter(0)\n  i = s32[20000] parameter(1)\n  u = u32[20000,8] parameter(2)\n  ROOT r = u32[64,8] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c", 64},
		{"s32_min_2d_index", comp("minimum", "s32"), "  x = s32[40,50] parameter(0)\n  i = s32[30000,2] parameter(1)\n  u = s32[30000] parameter(2)\n  ROOT r = s32[40,50] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=c", 45},
		{"windows_past_the_end", comp("add", "s32"), "  x = s32[100,6] parameter(0)\n  i = s32[20000,1] parameter(1)\n  u = s32[20000,3,6] parameter(2)\n  ROOT r = s32[100,6] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c", 100},
		{"batching", comp("add", "s32"), "  x = s32[4,100] parameter(0)\n  i = s32[4,5000,1] parameter(1)\n  u = s32[4,5000] parameter(2)\n  ROOT r = s32[4,100] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=c", 100},
		{"pred_or", comp("or", "pred"), "  x = pred[128] parameter(0)\n  i = s32[40000] parameter(1)\n  u = pred[40000] parameter(2)\n  ROOT r = pred[128] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c", 128},
		{"u32_xor", comp("xor", "u32"), "  x = u32[300] parameter(0)\n  i = u32[50000] parameter(1)\n  u = u32[50000] parameter(2)\n  ROOT r = u32[300] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=c", 300},
	} {
		src := "HloModule s_" + c.name + "\n" + c.comps + "ENTRY e {\n" + c.body + "\n}"
		requireExact(t, c.name, src, indexInputs(11, c.limit))
		require.Contains(t, kernelNames(t, c.name, src), "scatter_atomic", c.name)
	}
}

// kernelNames compiles src and returns its kernels' names, one string,
// each kernel through spirv-val.
func kernelNames(t *testing.T, name, src string) string {
	t.Helper()
	exe, err := rt.CompileText(name, src, vkjit.CompileOptions{})
	require.NoError(t, err, name)
	defer exe.Close()
	var names []string
	for _, k := range vkjit.ProgramOf(exe).Kernels {
		names = append(names, k.Name)
		require.NoError(t, spirv.Validate(k.Words), "%s: %s", name, k.Name)
	}
	return strings.Join(names, " ")
}

// TestUpdateInPlace: a dynamic-update-slice whose update is a small
// part of its result copies its operand into the result and writes the
// update there (kgen/updateslice.go); where the operand's memory
// becomes the result's (a loop's stacked outputs, its last use) the
// copy is no step, and its step computes the update's producer too.
// Bit for bit as the evaluator, fused and unfused,
// start indices clamped from below and above, operands a parameter, a
// computed value read again after the update, one another kernel of its
// shape reads too (no sibling of the result's shape computed at the
// update's elements), and a broadcast computed
// by the copy (a copy kernel each), in the element types stored at each
// width.
func TestUpdateInPlace(t *testing.T) {
	defer noValidationMessages(t)
	const scan = `HloModule scan
cond {
  p = (s32[], f32[16], f32[300,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(300)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16], f32[300,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[16] get-tuple-element(p), index=1
  ys = f32[300,16] get-tuple-element(p), index=2
  z = s32[] constant(0)
  t = f32[16] sine(h)
  t2 = f32[1,16] reshape(t)
  ys2 = f32[300,16] dynamic-update-slice(ys, t2, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[16], f32[300,16]) tuple(i1, t, ys2)
}
ENTRY main {
  h = f32[16] parameter(0)
  z = s32[] constant(0)
  x = f32[] constant(0.5)
  ys = f32[300,16] broadcast(x), dimensions={}
  t = (s32[], f32[16], f32[300,16]) tuple(z, h, ys)
  w = (s32[], f32[16], f32[300,16]) while(t), condition=cond, body=body
  ROOT r = f32[300,16] get-tuple-element(w), index=2
}`
	requireExact(t, "scan", scan, indexInputs(3, 300)) // a device loop
	m, err := hlo.Parse("scan", scan)
	require.NoError(t, err)
	for _, opts := range []vkjit.CompileOptions{{HostLoops: true}, {HostLoops: true, NoFuse: true, NoReuse: true}} {
		exe, err := rt.Compile(m, opts)
		require.NoError(t, err)
		_, want, outs := runBothOn(t, exe, m, indexInputs(3, 300)(m), "scan")
		requireSameValues(t, hlo.F32, want.Leaves()[0].Data, outs[0].Data, "scan %+v", opts)
	}
	exe, err := rt.Compile(m, vkjit.CompileOptions{HostLoops: true})
	require.NoError(t, err)
	defer exe.Close()
	var body *lower.Program
	for _, st := range vkjit.ProgramOf(exe).Steps {
		if st.Kind == lower.StepWhile {
			body = vkjit.ProgramOf(exe).Subs[st.Body]
		}
	}
	require.NotNil(t, body, "the loop runs from the host")
	for _, k := range body.Kernels {
		require.NotContains(t, k.Name, "copy", "the loop body copies its stack")
	}
	// The new carry and the counter are computed by the update's step
	// (fuseUpdates, fuseScalars): one dispatch an iteration.
	require.Len(t, body.Steps, 1)
	require.ElementsMatch(t, []string{"t", "t2", "i1", "one", "z"}, body.Steps[0].Fused)

	dus := func(name, ty, ity string, dims, up string, extra string) string {
		return fmt.Sprintf("HloModule %s\nlt {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT l = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  p = %s[%s] parameter(0)\n  u = %s[%s] parameter(1)\n  i = %s[] parameter(2)\n  j = %s[] parameter(3)\n%s\n}",
			name, ty, dims, ty, up, ity, ity, extra)
	}
	for _, c := range []struct {
		name, ty, ity, dims, up, body string
		copies                        bool
	}{
		{"parameter", "f32", "s32", "40,50", "7,9", "  ROOT d = f32[40,50] dynamic-update-slice(p, u, i, j)", true},
		{"read_after", "s32", "s32", "50,50", "7,9", "  x = s32[50,50] sort(p), dimensions={1}, to_apply=lt\n  d = s32[50,50] dynamic-update-slice(x, u, i, j)\n  s = s32[50,10] slice(x), slice={[0:50],[0:10]}\n  ROOT t = (s32[50,50], s32[50,10]) tuple(d, s)", true},
		{"sibling", "s32", "s32", "50,50", "7,9", "  x = s32[50,50] sort(p), dimensions={1}, to_apply=lt\n  n = s32[50,50] negate(x)\n  d = s32[50,50] dynamic-update-slice(x, u, i, j)\n  ROOT t = (s32[50,50], s32[50,50]) tuple(n, d)", false},
		{"last_use", "s32", "s32", "50,50", "7,9", "  x = s32[50,50] sort(p), dimensions={1}, to_apply=lt\n  ROOT d = s32[50,50] dynamic-update-slice(x, u, i, j)", false},
		{"broadcast", "s8", "s64", "40,50", "40,1", "  c = s8[] constant(-7)\n  x = s8[40,50] broadcast(c), dimensions={}\n  ROOT d = s8[40,50] dynamic-update-slice(x, u, i, j)", true},
		{"f16", "f16", "u8", "40,50", "1,50", "  x = f16[40,50] sqrt(p)\n  ROOT d = f16[40,50] dynamic-update-slice(x, u, i, j)", true},
		{"pred", "pred", "s16", "40,50", "20,3", "  x = pred[40,50] not(p)\n  ROOT d = pred[40,50] dynamic-update-slice(x, u, i, j)", true},
		{"f64", "f64", "s32", "40,50", "3,25", "  x = f64[40,50] negate(p)\n  ROOT d = f64[40,50] dynamic-update-slice(x, u, i, j)", true},
	} {
		src := dus(c.name, c.ty, c.ity, c.dims, c.up, c.body)
		for seed := range uint64(4) {
			requireExact(t, fmt.Sprintf("%s_%d", c.name, seed), src, indexInputs(seed, 50))
		}
		names := kernelNames(t, c.name, src)
		require.Contains(t, names, "update_slice", c.name)
		require.Equal(t, c.copies, strings.Contains(names, "copy_"), "%s: %s", c.name, names)
	}
}

// TestPointScatter: scatters of points along leading dimensions
// (x.at[i, j].add(v)) become scatters of linear indices (lower's
// linearScatter), sorted and folded by runs: bit for bit the
// evaluator's, fused and unfused, with index vectors outside the
// operand on either side of each dimension, more points than lavapipe
// loops over (refused before), windows over the trailing dimensions, the
// leading dimensions indexed in the other order, two operands, narrow
// and wide index types, and integer sums by atomics.
func TestPointScatter(t *testing.T) {
	defer noValidationMessages(t)
	comp := func(op, ty string) string {
		return fmt.Sprintf("c {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT c = %s[] %s(a, b)\n}\n", ty, ty, ty, op)
	}
	pair := "c {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n  m = s32[] maximum(b, d)\n  ROOT r = (f32[], s32[]) tuple(s, m)\n}\n"
	for _, c := range []struct {
		name, comps, body, kernel string
		limit                     int64
	}{
		{"long_2d", comp("add", "f32"), "  x = f32[300,200] parameter(0)\n  i = s32[100000,2] parameter(1)\n  u = f32[100000] parameter(2)\n  ROOT r = f32[300,200] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=c", "scatter_runs", 300},
		{"window_mul", comp("multiply", "f32"), "  x = f32[20,30,8] parameter(0)\n  i = s64[50,100,2] parameter(1)\n  u = f32[50,100,8] parameter(2)\n  ROOT r = f32[20,30,8] scatter(x, i, u), update_window_dims={2}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=2, to_apply=c", "scatter_runs", 30},
		{"swapped", comp("add", "f32"), "  x = f32[40,50,3] parameter(0)\n  i = u16[20000,2] parameter(1)\n  u = f32[20000,3] parameter(2)\n  ROOT r = f32[40,50,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, to_apply=c", "scatter_runs", 50},
		{"three_dims", comp("maximum", "f32"), "  x = f32[10,12,14] parameter(0)\n  i = s32[30000,3] parameter(1)\n  u = f32[30000] parameter(2)\n  ROOT r = f32[10,12,14] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1,2}, scatter_dims_to_operand_dims={0,1,2}, index_vector_dim=1, to_apply=c", "scatter_runs", 14},
		{"variadic", pair, "  x = f32[60,70] parameter(0)\n  y = s32[60,70] parameter(1)\n  i = s32[30000,2] parameter(2)\n  u = f32[30000] parameter(3)\n  v = s32[30000] parameter(4)\n  ROOT r = (f32[60,70], s32[60,70]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=c", "scatter_sorted", 70},
		{"histogram", comp("add", "s32"), "  x = s32[64,64] parameter(0)\n  i = s32[100000,2] parameter(1)\n  u = s32[100000] parameter(2)\n  ROOT r = s32[64,64] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=c", "scatter_atomic", 64},
	} {
		src := "HloModule p_" + c.name + "\n" + c.comps + "ENTRY e {\n" + c.body + "\n}"
		requireExact(t, c.name, src, indexInputs(5, c.limit))
		require.Contains(t, kernelNames(t, c.name, src), c.kernel, c.name)
	}
}

// TestPointScatterSelects: scatters of one element at constant indices,
// which lower computes as selects (pointScatter), bit for bit the
// evaluator's, fused and unfused: a chain of sets that write one element
// twice (the later wins), the combiners add, maximum and multiply, and a
// subtract whose combiner takes the update first (u - x), a NaN and a
// signed zero among the values, an index given as a broadcast constant,
// a window of one element, and an index outside the array, whose update
// XLA skips (left a scatter).
func TestPointScatterSelects(t *testing.T) {
	defer noValidationMessages(t)
	comp := func(name, body string) string {
		return fmt.Sprintf("%s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] %s\n}\n", name, body)
	}
	text := "HloModule points\n" +
		"set {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n" +
		comp("add", "add(a, b)") + comp("max", "maximum(a, b)") + comp("mul", "multiply(a, b)") + comp("rsub", "subtract(b, a)") + `ENTRY e {
  x = f32[6,7] parameter(0)
  u = f32[8] parameter(1)
  u0 = f32[1] slice(u), slice={[0:1]}
  v0 = f32[] reshape(u0)
  u1 = f32[1] slice(u), slice={[1:2]}
  v1 = f32[] reshape(u1)
  u2 = f32[1] slice(u), slice={[2:3]}
  v2 = f32[] reshape(u2)
  u3 = f32[1,1] reshape(u1)
  z = s32[] constant(0)
  i00 = s32[2] broadcast(z), dimensions={}
  i12 = s32[2] constant({1, 2})
  i53 = s32[2] constant({5, 6})
  i3 = s32[1] constant({3})
  out = s32[2] constant({6, 0})
  a = f32[6,7] scatter(x, i12, v0), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set
  b = f32[6,7] scatter(a, i00, v1), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set
  c = f32[6,7] scatter(b, i12, v2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set
  d = f32[6,7] scatter(c, i53, v0), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add
  f = f32[6,7] scatter(d, i00, v2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=max
  g = f32[6,7] scatter(f, i12, v1), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=mul
  h = f32[6,7] scatter(g, i53, v1), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=rsub
  w = f32[6,7] scatter(h, i3, u3), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={1}, index_vector_dim=0, to_apply=set
  ROOT o = f32[6,7] scatter(w, out, v2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set
}`
	for seed := range uint64(4) {
		requireExact(t, fmt.Sprintf("points%d", seed), text, edgeInputs(seed))
	}
}
