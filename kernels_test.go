package vkjit_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/spirv"
)

// TestSortDifferential runs stable sorts on the device; with ties in the
// keys, the positions (an iota operand) show stability. u32 and pred
// keys share their u32 storage with the sort's scratch buffers (NVIDIA
// read those wrong while their block type was one: spirv.TypeBlock).
func TestSortDifferential(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.BF16, hlo.U16, hlo.U32, hlo.PRED} {
		for _, c := range hlotest.SortCases(ty) {
			requireExact(t, c.Name, c.Text, smallInts(6))
		}
	}
}

// TestSortNotStrictWeak: a comparator that is not a strict weak order
// (f32 compared by LT, NaNs among the keys: a NaN is unordered against
// everything, so "unordered" is not transitive) leaves the order
// unspecified, but each slice's values and the positions beside them
// stay a permutation of the slice's, as XLA's sorts give: in one block,
// over blocks and merge passes, and over many chunks of a pair.
func TestSortNotStrictWeak(t *testing.T) {
	defer noValidationMessages(t)
	for _, n := range []int64{7, 13, 300, 5000, 4096} {
		src := fmt.Sprintf(`HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3,%[1]d] parameter(0)
  i = s32[3,%[1]d] iota(), iota_dimension=1
  ROOT s = (f32[3,%[1]d], s32[3,%[1]d]) sort(x, i), dimensions={1}, to_apply=lt
}`, n)
		m, err := hlo.Parse("nan_sort", src)
		require.NoError(t, err)
		x := make([]float32, 3*n)
		for j := range x {
			x[j] = float32((j * 7919) % 23)
			if j%9 == 4 || j%13 == 0 {
				x[j] = float32(math.NaN())
			}
		}
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		xt, err := vkjit.Float32s([]int64{3, n}, x)
		require.NoError(t, err)
		outs, _, err := exe.Run(context.Background(), xt)
		require.NoError(t, err)
		exe.Close()
		for r := range int64(3) {
			seen := make([]bool, n)
			for j := range n {
				p := int64(outs[1].Float64At(r*n + j))
				require.True(t, p >= 0 && p < n && !seen[p], "n=%d row %d: position %d twice or out of range", n, r, p)
				seen[p] = true
				got, want := outs[0].Float64At(r*n+j), float64(x[r*n+p])
				require.True(t, got == want || math.IsNaN(got) && math.IsNaN(want), "n=%d row %d: value %v beside position %d, which holds %v", n, r, got, p, want)
			}
		}
	}
}

// TestSortKeys: sorts whose comparator compares one operand through
// one expression of each value, in a total order, compare keys computed
// once an element (kgen/sortkey.go) and sort their blocks by a merging
// network of (key, place) pairs: JAX's comparators (-0 and NaNs made one
// value, TOTALORDER) of f32 and bf16 ascending and descending, integers,
// the key an operand after the first, slices of whole blocks and octets
// (4096), of whole octets whose last block of 16 is half past the end
// (1000: its octets are stored whole, and not past the slice), a
// partial last block (3001), a middle dimension, one place past the
// slices one invocation sorts (129) and a last group of four runs that
// holds four elements (4100, merged four runs a pass), bit for bit as
// the evaluator sorts them stably: edge values, and small integers for
// ties.
func TestSortKeys(t *testing.T) {
	defer noValidationMessages(t)
	canon := func(ty, p, q string) string {
		return fmt.Sprintf(`  n%[2]s = pred[] compare(%[2]s, %[2]s), direction=NE
  z%[2]s = pred[] compare(%[2]s, zero), direction=EQ
  c0%[2]s = %[1]s[] select(z%[2]s, zero, %[2]s)
  c%[2]s = %[1]s[] select(n%[2]s, nan, c0%[2]s)
  n%[3]s = pred[] compare(%[3]s, %[3]s), direction=NE
  z%[3]s = pred[] compare(%[3]s, zero), direction=EQ
  c0%[3]s = %[1]s[] select(z%[3]s, zero, %[3]s)
  c%[3]s = %[1]s[] select(n%[3]s, nan, c0%[3]s)
`, ty, p, q)
	}
	for _, ty := range []string{"f32", "bf16", "s32", "u32"} {
		for _, dir := range []string{"LT", "GT"} {
			body, a, b, typ := "", "a", "b", ""
			if ty == "f32" || ty == "bf16" {
				body = fmt.Sprintf("  nan = %[1]s[] constant(nan)\n  zero = %[1]s[] constant(0)\n", ty) + canon(ty, "a", "b")
				a, b, typ = "ca", "cb", ", type=TOTALORDER"
			}
			for _, shape := range []string{"[2,4096]", "[3,1000]", "[3,3001]", "[2,300,3]", "[1,129]", "[1,4100]"} {
				sortDim := "1"
				src := fmt.Sprintf(`HloModule keys
cmp {
  i = s32[] parameter(0)
  j = s32[] parameter(1)
  a = %[1]s[] parameter(2)
  b = %[1]s[] parameter(3)
%[2]s  ROOT r = pred[] compare(%[3]s, %[4]s), direction=%[5]s%[6]s
}
ENTRY e {
  x = %[1]s%[7]s parameter(0)
  i = s32%[7]s iota(), iota_dimension=%[8]s
  ROOT s = (s32%[7]s, %[1]s%[7]s) sort(i, x), dimensions={%[8]s}, is_stable=true, to_apply=cmp
}`, ty, body, a, b, dir, typ, shape, sortDim)
				name := fmt.Sprintf("sort_keys_%s_%s_%s", ty, dir, shape)
				requireExact(t, name+"_edges", src, edgeInputs(8))
				requireExact(t, name+"_ties", src, smallInts(9))
			}
		}
	}
}

// TestSortShapes sorts slices of random lengths past one invocation's
// (129 to 6000), along a random dimension of a random rank, by random
// comparators with keys and without (JAX's, total order, integer LT and
// GT, a key of negated values, one comparing the payload on ties),
// stably, bit for bit as the evaluator: each of the merge
// kernels (two and four runs a pass, octets stored whole or not) over
// lengths no hand-picked case chose. The seed is fixed: the same cases
// every run.
func TestSortShapes(t *testing.T) {
	defer noValidationMessages(t)
	rng := rand.New(rand.NewPCG(52, 7))
	types := []string{"f32", "bf16", "s32", "u32", "s8", "u16", "pred"}
	for c := range 20 {
		ty, form := types[(c/4+c)%len(types)], c%4
		float := ty == "f32" || ty == "bf16"
		n := 129 + rng.IntN(6000-129)
		if rng.IntN(2) == 0 {
			n -= n % 8 // whole octets
		}
		dims := []int{n}
		for range rng.IntN(3) {
			dims = append(dims, 1+rng.IntN(3))
		}
		if rng.IntN(2) == 0 { // else the sorted dimension is the minor one
			rng.Shuffle(len(dims), func(i, j int) { dims[i], dims[j] = dims[j], dims[i] })
		} else {
			slices.Reverse(dims)
		}
		d := slices.Index(dims, n)
		dir := []string{"LT", "GT"}[rng.IntN(2)]
		var cmp string
		switch {
		case form == 0 && float: // JAX's
			cmp = fmt.Sprintf(`  nan = %[1]s[] constant(nan)
  zero = %[1]s[] constant(0)
  na = pred[] compare(a, a), direction=NE
  za = pred[] compare(a, zero), direction=EQ
  a0 = %[1]s[] select(za, zero, a)
  ka = %[1]s[] select(na, nan, a0)
  nb = pred[] compare(b, b), direction=NE
  zb = pred[] compare(b, zero), direction=EQ
  b0 = %[1]s[] select(zb, zero, b)
  kb = %[1]s[] select(nb, nan, b0)
  ROOT r = pred[] compare(ka, kb), direction=%[2]s, type=TOTALORDER`, ty, dir)
		case form == 1 && ty != "pred": // a key of negated values
			cmp = fmt.Sprintf("  ka = %[1]s[] negate(a)\n  kb = %[1]s[] negate(b)\n  ROOT r = pred[] compare(ka, kb), direction=%[2]s%[3]s", ty, dir, map[bool]string{true: ", type=TOTALORDER"}[float])
		case form == 2: // no keys: the payload decides ties
			total := map[bool]string{true: ", type=TOTALORDER"}[float]
			cmp = fmt.Sprintf("  e = pred[] compare(a, b), direction=EQ%[2]s\n  l = pred[] compare(a, b), direction=%[1]s%[2]s\n  p = pred[] compare(i, j), direction=GT\n  q = pred[] and(e, p)\n  ROOT r = pred[] or(l, q)", dir, total)
		default:
			cmp = fmt.Sprintf("  ROOT r = pred[] compare(a, b), direction=%s%s", dir, map[bool]string{true: ", type=TOTALORDER"}[float])
		}
		shape := strings.ReplaceAll(fmt.Sprint(dims), " ", ",")
		src := fmt.Sprintf(`HloModule sorts
cmp {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
%[2]s
}
ENTRY e {
  x = %[1]s%[3]s parameter(0)
  i = s32%[3]s iota(), iota_dimension=%[4]d
  ROOT s = (%[1]s%[3]s, s32%[3]s) sort(x, i), dimensions={%[4]d}, is_stable=true, to_apply=cmp
}`, ty, cmp, shape, d)
		inputs := edgeInputs(uint64(c))
		if rng.IntN(2) == 0 {
			inputs = smallInts(uint64(c))
		}
		requireExact(t, fmt.Sprintf("sort_shapes_%d_%s%s_dim%d_form%d", c, ty, shape, d, form), src, inputs)
	}
}

// TestPartialSorts: a sort with keys whose results are read only
// through slices of each slice's first k (a top-k's) merges only the
// first k of each group of runs (compile.go's sortKeep): k of one
// place, of whole octets (8, 64: stored as u64vec4s), of a few, and of
// more than one group's runs hold early on (200), over slices of
// whole octets and not, along the minor dimension and a middle one,
// the two slices of different lengths; and sorts read past their
// first places too (a slice from 3, and the whole values beside a
// slice of the positions), which sort whole. Bit for bit as the
// evaluator; small integers for ties.
func TestPartialSorts(t *testing.T) {
	defer noValidationMessages(t)
	const cmp = `cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER
}`
	for _, n := range []int64{3001, 4096} {
		for _, k := range []int64{1, 8, 13, 64, 200} {
			for _, middle := range []bool{false, true} {
				shape, dim, sl, sl2 := fmt.Sprintf("[2,%d]", n), 1, fmt.Sprintf("[0:2], [0:%d]", k), fmt.Sprintf("[0:2], [0:%d]", max(k/2, 1))
				out, out2 := fmt.Sprintf("[2,%d]", k), fmt.Sprintf("[2,%d]", max(k/2, 1))
				if middle {
					shape, sl, sl2 = fmt.Sprintf("[2,%d,3]", n), sl+", [0:3]", sl2+", [0:3]"
					out, out2 = fmt.Sprintf("[2,%d,3]", k), fmt.Sprintf("[2,%d,3]", max(k/2, 1))
				}
				src := fmt.Sprintf(`HloModule partial
%s
ENTRY e {
  x = f32%[2]s parameter(0)
  i = s32%[2]s iota(), iota_dimension=%[3]d
  s = (f32%[2]s, s32%[2]s) sort(x, i), dimensions={%[3]d}, is_stable=true, to_apply=cmp
  v = f32%[2]s get-tuple-element(s), index=0
  p = s32%[2]s get-tuple-element(s), index=1
  a = f32%[4]s slice(v), slice={%[5]s}
  b = s32%[6]s slice(p), slice={%[7]s}
  ROOT t = (f32%[4]s, s32%[6]s) tuple(a, b)
}`, cmp, shape, dim, out, sl, out2, sl2)
				requireExact(t, fmt.Sprintf("partial_%d_k%d_middle_%v", n, k, middle), src, smallInts(uint64(k)))
			}
		}
	}
	for name, rest := range map[string]string{
		"past the first": "  a = f32[2,10] slice(v), slice={[0:2], [3:13]}\n  ROOT t = (f32[2,10]) tuple(a)",
		"whole values":   "  b = s32[2,10] slice(p), slice={[0:2], [0:10]}\n  ROOT t = (f32[2,3001], s32[2,10]) tuple(v, b)",
	} {
		src := fmt.Sprintf(`HloModule partial
%s
ENTRY e {
  x = f32[2,3001] parameter(0)
  i = s32[2,3001] iota(), iota_dimension=1
  s = (f32[2,3001], s32[2,3001]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
  v = f32[2,3001] get-tuple-element(s), index=0
  p = s32[2,3001] get-tuple-element(s), index=1
%s
}`, cmp, rest)
		requireExact(t, "partial_"+name, src, smallInts(3))
	}
}

func TestTopK(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []string{"f32", "bf16", "f64", "f16", "u32", "s8"} {
		for _, largest := range []bool{true, false} {
			src := fmt.Sprintf("HloModule topk\nENTRY e {\n  x = %s[3,17] parameter(0)\n  ROOT t = (%s[3,5], s32[3,5]) topk(x), k=5, largest=%v\n}", ty, ty, largest)
			name := fmt.Sprintf("topk_%s_largest_%v", ty, largest)
			requireExact(t, name, src, edgeInputs(3)) // edge cases: NaN, inf, ties
			// Long rows: chosen in rounds of reductions (expand.go,
			// selectRounds; types of up to 32 bits), else cut into
			// chunks of 1000 first (topKChunk) or sorted whole (4099 has
			// no divisor to cut by); small integers tie often, so the
			// lower index must win.
			for _, n := range []int{6000, 4099} {
				src := fmt.Sprintf("HloModule topk\nENTRY e {\n  x = %s[2,%d] parameter(0)\n  ROOT t = (%s[2,7], s32[2,7]) topk(x), k=7, largest=%v\n}", ty, n, ty, largest)
				requireExact(t, fmt.Sprintf("%s_%d_edges", name, n), src, edgeInputs(4))
				requireExact(t, fmt.Sprintf("%s_%d_ties", name, n), src, smallInts(5))
			}
		}
	}
}

// TestTopKCustomCall: XLA's TopK custom-call (as its TopkRewriter and
// CPU thunks write it) sorts by its own comparator over (value, index)
// pairs: descending by TOTALORDER here, and ascending by index on the
// value's ties through a comparator that reads the indices, on short
// and chunked rows, bit for bit with the evaluator.
func TestTopKCustomCall(t *testing.T) {
	defer noValidationMessages(t)
	for _, n := range []int{17, 6000} {
		for _, dir := range []string{"GT", "LT"} {
			src := fmt.Sprintf(`HloModule topk
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=%s, type=TOTALORDER
}
ENTRY e {
  x = f32[3,%d] parameter(0)
  ROOT t = (f32[3,5], s32[3,5]) custom-call(x), custom_call_target="TopK", called_computations={cmp}
}`, dir, n)
			requireExact(t, fmt.Sprintf("topk_call_%d_%s_edges", n, dir), src, edgeInputs(6))
			requireExact(t, fmt.Sprintf("topk_call_%d_%s_ties", n, dir), src, smallInts(7))
		}
	}
}

// TestApproxTopK: XLA's ApproxTopK custom-call as JAX's lowering of
// jax.lax.approx_max_k and approx_min_k writes it off TPUs (values and
// an iota, their initial values, a comparator of the values only):
// along the last dimension and along the first, long enough to be cut
// into chunks, aggregated to k or to XLA's approximate output size
// (aggregate_to_topk false: 256 of 1000 here), with ties of small
// integers (the lower index first), bit for bit with the evaluator; and
// one operand alone.
func TestApproxTopK(t *testing.T) {
	defer noValidationMessages(t)
	cases := []struct {
		name, dir, cfg string
		dims           []int64
		dim            int
		out            int64
	}{
		{"rows", "GT", "aggregate_to_topk = true, recall_target = 0.949999988, reduction_dim = 1, top_k = 5", []int64{3, 17}, 1, 5},
		{"columns_chunked_min", "LT", "aggregate_to_topk = true, recall_target = 0.949999988, reduction_dim = 0, top_k = 7", []int64{6000, 3}, 0, 7},
		{"unaggregated", "GT", "aggregate_to_topk = false, is_fallback = true, recall_target = 0.949999988, reduction_dim = 1, reduction_input_size_override = -1, top_k = 10", []int64{2, 1000}, 1, 256},
	}
	list := func(d []int64) string { return strings.Trim(strings.ReplaceAll(fmt.Sprint(d), " ", ","), "[]") }
	for _, c := range cases {
		out := slices.Clone(c.dims)
		out[c.dim] = c.out
		x, o := list(c.dims), list(out)
		src := fmt.Sprintf(`HloModule approx
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(a, b), direction=%s
}
ENTRY e {
  x = f32[%s] parameter(0)
  ix = s32[%s] iota(), iota_dimension=%d
  init = f32[] constant(-inf)
  none = s32[] constant(-1)
  ROOT t = (f32[%s], s32[%s]) custom-call(x, ix, init, none), custom_call_target="ApproxTopK", backend_config={%s}, called_computations={cmp}
}`, c.dir, x, x, c.dim, o, o, c.cfg)
		// Small integers: many ties. (JAX's comparator, a plain GT or
		// LT, is no strict weak order with NaNs among the values, which
		// then sort into an order of the implementation's choosing.)
		requireExact(t, "approx_topk_"+c.name+"_ties", src, smallInts(8))
	}
	one := `HloModule approx
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[4,40] parameter(0)
  init = f32[] constant(-inf)
  ROOT t = f32[4,3] custom-call(x, init), custom_call_target="ApproxTopK", backend_config={reduction_dim = 1, top_k = 3}, called_computations={cmp}
}`
	requireExact(t, "approx_topk_one_operand", one, smallInts(10))
}

// TestLongReductions: reductions longer than one invocation may loop on
// llvmpipe (65535 iterations) are split into partial reductions. Integer
// sums and argmax (ties to the lower index) must be exact; an f32 sum
// agrees to rounding.
func TestLongReductions(t *testing.T) {
	defer noValidationMessages(t)
	add := "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
	requireExact(t, "sum_s32", "HloModule m\n"+add+"ENTRY e {\n  x = s32[200003] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add\n}", smallInts(1))
	requireExact(t, "sum_s32_2d", "HloModule m\n"+add+"ENTRY e {\n  x = s32[5,300,700] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[5] reduce(x, z), dimensions={2,1}, to_apply=add\n}", smallInts(2))
	argmax := `HloModule m
cmp {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  eqlt = pred[] and(eq, lt)
  pick = pred[] or(gt, eqlt)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[3,70001] parameter(0)
  ix = s32[3,70001] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(x, ix, ninf, z), dimensions={1}, to_apply=cmp
}`
	requireExact(t, "argmax", argmax, smallInts(3)) // small integers: many ties
	// Over a dimension that is not the minor one (splitMajorReduce): a
	// column sum, a middle dimension, and the argmax down columns.
	requireExact(t, "colsum_s32", "HloModule m\n"+add+"ENTRY e {\n  x = s32[70001,6] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[6] reduce(x, z), dimensions={0}, to_apply=add\n}", smallInts(4))
	requireExact(t, "midsum_s32", "HloModule m\n"+add+"ENTRY e {\n  x = s32[3,9000,5] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[3,5] reduce(x, z), dimensions={1}, to_apply=add\n}", smallInts(5))
	colArgmax := strings.NewReplacer("f32[3,70001]", "f32[70001,3]", "s32[3,70001] iota(), iota_dimension=1", "s32[70001,3] iota(), iota_dimension=0", "dimensions={1}", "dimensions={0}").Replace(argmax)
	requireExact(t, "argmax_columns", colArgmax, smallInts(6))
	// Two leading dimensions, the minor kept: one dimension of their
	// product (majorRun), split as a column sum.
	requireExact(t, "outer2sum_s32", "HloModule m\n"+add+"ENTRY e {\n  x = s32[300,250,16] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[16] reduce(x, z), dimensions={1,0}, to_apply=add\n}", smallInts(8))
	m, err := hlo.Parse("sum_f32", "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[1000000] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}")
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	_, want, outs := runBoth(t, exe, m, 4, "sum_f32")
	w := (&vkjit.Tensor{Type: vkjit.F32, Data: want.Leaves()[0].Data}).Float64At(0)
	require.InEpsilon(t, w, outs[0].Float64At(0), 1e-5)
}

// cpuForms reports whether the tests' device is a CPU (lavapipe), whose
// kernel forms (a GEMM tile per subgroup of 8 lanes, vec4 and octet
// reads, row reductions sized for 8 lanes) the tests name; a GPU gets
// other forms for the same programs, checked by their results alone.
func cpuForms() bool { return vkjit.TargetOf(rt).CPU }

// TestTiledGemm runs dots big enough for the register-tiled kernel, with
// edges that are not multiples of the tile, batch dimensions, a
// contracting dimension in either position and a bias-and-ReLU epilogue,
// in each of its forms (a tile per subgroup, per invocation, per
// workgroup through shared memory),
// against the reference evaluator (which sums in float64: the device's
// f32 sums agree to a few units of rounding of the largest partial sum).
func TestTiledGemm(t *testing.T) {
	defer noValidationMessages(t)
	for _, src := range []string{
		"HloModule m\nENTRY e {\n  a = f32[250,301] parameter(0)\n  b = f32[301,260] parameter(1)\n  ROOT c = f32[250,260] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"HloModule m\nENTRY e {\n  a = f32[2,300,203] parameter(0)\n  b = f32[2,150,300] parameter(1)\n  ROOT c = f32[2,203,150] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}\n}",
		"HloModule m\nENTRY e {\n  x = f32[256,300] parameter(0)\n  w = f32[300,257] parameter(1)\n  b = f32[257] parameter(2)\n  h = f32[256,257] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = f32[256,257] broadcast(b), dimensions={1}\n  z = f32[256,257] add(h, bb)\n  zero = f32[] constant(0)\n  zs = f32[256,257] broadcast(zero), dimensions={}\n  ROOT y = f32[256,257] maximum(z, zs)\n}",
		// vec4 operands (k and n multiples of 4): odd m, a partial last
		// column tile, batch dimensions, an epilogue.
		"HloModule m\nENTRY e {\n  a = f32[2,203,300] parameter(0)\n  b = f32[2,300,148] parameter(1)\n  ROOT c = f32[2,203,148] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  x = f32[255,300] parameter(0)\n  w = f32[300,260] parameter(1)\n  b = f32[260] parameter(2)\n  h = f32[255,260] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = f32[255,260] broadcast(b), dimensions={1}\n  z = f32[255,260] add(h, bb)\n  ROOT y = f32[255,260] tanh(z)\n}",
		// Transposed operands read as vec4s across rows (lhs) and along
		// k (rhs); one operand vec4, the other scalar (n = 10); one
		// buffer as both operands; an epilogue reading an operand.
		"HloModule m\nENTRY e {\n  a = f32[300,252] parameter(0)\n  b = f32[260,300] parameter(1)\n  ROOT c = f32[252,260] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[4000,512] parameter(0)\n  b = f32[512,10] parameter(1)\n  ROOT c = f32[4000,10] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
		"HloModule m\nENTRY e {\n  a = f32[256,300] parameter(0)\n  ROOT c = f32[256,256] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] parameter(1)\n  h = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT y = f32[256,256] multiply(h, a)\n}",
		// Octets (wide loads with storage loads): the rhs across columns with a
		// last tile of 8 columns and batches; both operands across, the
		// last rhs octet clamped.
		"HloModule m\nENTRY e {\n  a = f32[2,96,64] parameter(0)\n  b = f32[2,64,136] parameter(1)\n  ROOT c = f32[2,96,136] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  a = f32[64,200] parameter(0)\n  b = f32[64,264] parameter(1)\n  ROOT c = f32[200,264] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}",
	} {
		m, exe, k := compileOne(t, src)
		name := k.Name
		require.Regexp(t, `^gemm\d+x\d+_`, name, "the tiled kernel")
		if cpuForms() {
			vec := !strings.Contains(src, "301") // k a multiple of 4
			require.Equal(t, vec, strings.Contains(name, "_vec4"), "%s: %s", name, src)
			// A subgroup per tile where the rhs is read as vec4s (along
			// k, or across columns when n is a multiple of 4) or has at
			// least 32 columns: all but n = 10.
			lanes := vec && !strings.Contains(src, ",10]")
			require.Equal(t, lanes, strings.Contains(name, "_lanes"), "%s: %s", name, src)
		}
		args := hlotest.UniformInputs(m, 5)
		_, want, outs := runBothOn(t, exe, m, args, "gemm")
		requireNearF32(t, want.Leaves()[0], outs[0], 1e-4)
		// The GPUs' form, blocks staged through shared memory (forced on
		// lavapipe): the same sums in the same order, bit for bit.
		exe, err := rt.Compile(m, vkjit.CompileOptions{SharedGemm: true})
		require.NoError(t, err)
		require.Contains(t, vkjit.ProgramOf(exe).Kernels[0].Name, "_shared64x64", src)
		_, _, shared := runBothOn(t, exe, m, args, "gemm shared")
		require.Equal(t, outs[0].Data, shared[0].Data, src)
		// The other ways to read the operands on lavapipe, storage loads
		// of octets or of vec4s instead of texel fetches, and a tile per
		// invocation instead of per subgroup: the same values.
		requireSameForms(t, m, args, outs[0].Data, src, vkjit.CompileOptions{StorageLoads: true}, vkjit.CompileOptions{StorageLoads: true, Vec4Access: true}, vkjit.CompileOptions{InvocationTiles: true}, vkjit.CompileOptions{InvocationTiles: true, StorageLoads: true})
	}
}

// atLanes rewrites a subgroup tile's kernel name written for 8 lanes
// (lavapipe at Mesa's 256 bits) for this device's subgroup size: 16
// lanes where vkjit runs lavapipe 512 bits wide (vk.WideLavapipeHost),
// the tile's columns as many times wider and its rows two a lane.
func atLanes(name string) string {
	sg := int(vkjit.TargetOf(rt).SubgroupSize)
	m := regexp.MustCompile(`^gemm(\d+)x(\d+)_(.*)lanes8`).FindStringSubmatch(name)
	if m == nil || sg == 8 {
		return name
	}
	rows, _ := strconv.Atoi(m[1])
	cols, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("gemm%dx%d_%slanes%d", max(rows, 2*sg), cols*sg/8, m[3], sg) + name[len(m[0]):]
}

// TestTiledGemmTwoQuads: a product of at least 2^28 multiply-adds takes
// two rhs quads a lane on lavapipe (a 16x64 tile), with a partial last
// row and column tile; its values are the evaluator's within rounding
// and a tile per invocation's bit for bit.
func TestTiledGemmTwoQuads(t *testing.T) {
	defer noValidationMessages(t)
	src := "HloModule m\nENTRY e {\n  a = f32[1030,1004] parameter(0)\n  b = f32[1004,260] parameter(1)\n  ROOT c = f32[1030,260] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}"
	m, err := hlo.Parse("gemm", src)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	name := vkjit.ProgramOf(exe).Kernels[0].Name
	if rt.Device().Type != "cpu" {
		t.Skipf("the subgroup tiles are lavapipe's form (here %s)", name)
	}
	require.Contains(t, name, atLanes("gemm16x64_f32_lanes8"), "two quads a lane")
	args := hlotest.UniformInputs(m, 9)
	_, want, outs := runBothOn(t, exe, m, args, "gemm two quads")
	requireNearF32(t, want.Leaves()[0], outs[0], 1e-3)
	exe, err = rt.Compile(m, vkjit.CompileOptions{InvocationTiles: true})
	require.NoError(t, err)
	_, _, other := runBothOn(t, exe, m, args, "gemm per invocation")
	require.Equal(t, outs[0].Data, other[0].Data)
}

// TestTiledGemmShortRows: a product of fewer rows than a subgroup tile
// has (a matrix-vector product, a few rows of a batch) takes tiles of
// its own rows on lavapipe, not 16 or 32 rows of which all but those
// are computed and dropped (f32[1,4096] x [4096,4096] 12.2 -> 3.5 ms),
// and up to 4 rows kgen's shortRowBytes of each rhs row (shortQuads): one row, three rows with a bias-and-ReLU epilogue, a batch, the lhs
// read across (m = 4) and a subgroup less one; and products of vectors,
// tiled as rows (they took the general kernel). Each is the evaluator's
// within rounding and, bit for bit, a tile per invocation's and the
// shared-memory blocks'.
func TestTiledGemmShortRows(t *testing.T) {
	defer noValidationMessages(t)
	sg := int(vkjit.TargetOf(rt).SubgroupSize)
	for _, c := range []struct {
		src  string
		rows int
	}{
		{"HloModule m\nENTRY e {\n  x = f32[1,1024] parameter(0)\n  w = f32[1024,1024] parameter(1)\n  ROOT c = f32[1,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", 1},
		{"HloModule m\nENTRY e {\n  x = f32[3,1024] parameter(0)\n  w = f32[1024,520] parameter(1)\n  b = f32[520] parameter(2)\n  h = f32[3,520] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = f32[3,520] broadcast(b), dimensions={1}\n  z = f32[3,520] add(h, bb)\n  zero = f32[] constant(0)\n  zs = f32[3,520] broadcast(zero), dimensions={}\n  ROOT y = f32[3,520] maximum(z, zs)\n}", 3},
		{"HloModule m\nENTRY e {\n  x = f32[2,5,512] parameter(0)\n  w = f32[2,512,516] parameter(1)\n  ROOT c = f32[2,5,516] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}", 5},
		{"HloModule m\nENTRY e {\n  x = f32[1024,4] parameter(0)\n  w = f32[1024,1024] parameter(1)\n  ROOT c = f32[4,1024] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}", 4},
		{fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%[1]d,1024] parameter(0)\n  w = f32[1024,1024] parameter(1)\n  ROOT c = f32[%[1]d,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", sg-1), sg - 1},
		// Vectors (no free dimension), as jnp.dot writes x @ W and W @ x:
		// a row; W's rows as the columns of x^T W^T, with an epilogue; a
		// batch of vectors.
		{"HloModule m\nENTRY e {\n  x = f32[1024] parameter(0)\n  w = f32[1024,1028] parameter(1)\n  ROOT c = f32[1028] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}", 1},
		{"HloModule m\nENTRY e {\n  w = f32[1028,1024] parameter(0)\n  x = f32[1024] parameter(1)\n  b = f32[1028] parameter(2)\n  c = f32[1028] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT y = f32[1028] add(c, b)\n}", 1},
		{"HloModule m\nENTRY e {\n  x = f32[2,512] parameter(0)\n  w = f32[2,512,1024] parameter(1)\n  ROOT c = f32[2,1024] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}", 1},
	} {
		m, exe, k := compileOne(t, c.src)
		name := k.Name
		require.Regexp(t, `^gemm\d+x\d+_`, name, "the tiled kernel")
		if cpuForms() {
			require.Regexp(t, fmt.Sprintf(`^gemm%dx\d+_f32_lanes%d_vec4`, c.rows, sg), name, "a tile of the product's rows: %s", c.src)
		}
		args := hlotest.UniformInputs(m, 7)
		_, want, outs := runBothOn(t, exe, m, args, "short gemm")
		requireNearF32(t, want.Leaves()[0], outs[0], 1e-4)
		requireSameForms(t, m, args, outs[0].Data, c.src, vkjit.CompileOptions{InvocationTiles: true}, vkjit.CompileOptions{SharedGemm: true})
	}
}

// TestGemmF8Codes: a short product of f8 entry parameters (f8 weights
// times a row of f32 or a few of bf16, W @ x of f8 codes) reads the
// parameters' codes in the tiled kernel, one dispatch, where an f32
// copy of each took a kernel and four bytes an element (f32[1,4096] x
// f8e4m3fn[4096,4096] 23.2 -> 9.2 ms, peak 83.9 -> 16.8 MB); a long
// product keeps the copies (decoding in its tiles is slower). The
// evaluator's values within rounding.
func TestGemmF8Codes(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		src     string
		kernels int
	}{
		{"HloModule m\nENTRY e {\n  x = f32[1,1024] parameter(0)\n  w = f8e4m3fn[1024,1024] parameter(1)\n  ROOT y = f32[1,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", 1},
		{"HloModule m\nENTRY e {\n  x = bf16[4,1024] parameter(0)\n  w = f8e5m2[1024,1028] parameter(1)\n  ROOT y = bf16[4,1028] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", 1},
		{"HloModule m\nENTRY e {\n  w = f8e4m3fn[1028,1024] parameter(0)\n  x = f8e4m3fn[1024] parameter(1)\n  ROOT y = f32[1028] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", 1},
		{"HloModule m\nENTRY e {\n  a = f8e4m3fn[256,1024] parameter(0)\n  b = f8e5m2[1024,256] parameter(1)\n  ROOT y = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", 3},
	} {
		m, exe, k := compileOne(t, c.src)
		require.Regexp(t, `^(gemm|convert)`, k.Name, c.src)
		require.Len(t, vkjit.ProgramOf(exe).Kernels, c.kernels, "%s: %s", k.Name, c.src)
		args := hlotest.UniformInputs(m, 3)
		_, want, outs := runBothOn(t, exe, m, args, "f8 gemm")
		w := want.Leaves()[0]
		tol := 1e-3
		if w.Shape.Elem == hlo.BF16 {
			tol = 8e-3 // a bf16 rounding of sums that differ in f32's last bits
		}
		for i := range outs[0].NumElements() {
			g, e := outs[0].Float64At(i), (&vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}).Float64At(i)
			require.InDelta(t, e, g, tol*max(1, math.Abs(e)), "%s element %d", c.src, i)
		}
	}
}

// TestGemmQuadEpilogue: an epilogue that reads buffers at the dot's own
// elements (the DLRM step's backward ReLU: a bias added to the forward
// pre-activation, compared with 0, selecting the dot or 0) reads them
// and writes its result as vec4s, four columns a step, on lavapipe's
// subgroup tiles, and the bias row too (vectorRow); with partial row
// and column tiles and batches, its
// values are the evaluator's within rounding and bit for bit those of
// the scalar epilogues (shared-memory blocks) and of a tile per
// invocation.
func TestGemmQuadEpilogue(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		src   string
		quads int // vec4 texel views: the dot's operands, the epilogue's own-element buffers and its row broadcasts
	}{
		{"HloModule m\nENTRY e {\n  g = f32[203,300] parameter(0)\n  w = f32[148,300] parameter(1)\n  pre = f32[203,148] parameter(2)\n  bias = f32[148] parameter(3)\n  d = f32[203,148] dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n  bb = f32[203,148] broadcast(bias), dimensions={1}\n  a = f32[203,148] add(pre, bb)\n  z = f32[] constant(0)\n  zb = f32[203,148] broadcast(z), dimensions={}\n  gt = pred[203,148] compare(a, zb), direction=GT\n  ROOT s = f32[203,148] select(gt, d, zb)\n}", 4},
		{"HloModule m\nENTRY e {\n  a = f32[2,203,300] parameter(0)\n  b = f32[2,300,148] parameter(1)\n  p = f32[2,203,148] parameter(2)\n  q = f32[2,203,148] parameter(3)\n  c = f32[2,203,148] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n  m = f32[2,203,148] multiply(c, p)\n  ROOT y = f32[2,203,148] subtract(m, q)\n}", 4},
	} {
		src := c.src
		m, exe, k := compileOne(t, src)
		if rt.Device().Type == "cpu" {
			require.Contains(t, k.Name, "_lanes", src)
			quads := 0
			for _, v := range k.Texel {
				if v.Bytes == 16 {
					quads++
				}
			}
			require.Equal(t, c.quads, quads, "%s: vec4 views %+v", k.Name, k.Texel)
		}
		args := hlotest.UniformInputs(m, 11)
		_, want, outs := runBothOn(t, exe, m, args, "gemm quads")
		requireNearF32(t, want.Leaves()[0], outs[0], 1e-4)
		requireSameForms(t, m, args, outs[0].Data, src, vkjit.CompileOptions{SharedGemm: true}, vkjit.CompileOptions{InvocationTiles: true}, vkjit.CompileOptions{StorageLoads: true})
	}
}

// TestGemmDirectQuads: a GEMM kernel without an epilogue writes its
// results four columns a store where rows are a multiple of 4 long
// (directQuads), whether its operands are read as vec4s or by scalars,
// and scalars otherwise; quads past the edge (203 rows, 148
// columns against 16x32 and 16x64 tiles) are not written, and the
// results are the evaluator's and, bit for bit, the other forms'.
func TestGemmDirectQuads(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		src   string
		quads bool // vec4 stores expected on lavapipe
	}{
		{"HloModule m\nENTRY e {\n  a = f32[203,300] parameter(0)\n  b = f32[300,148] parameter(1)\n  ROOT c = f32[203,148] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", true},
		{"HloModule m\nENTRY e {\n  a = f32[2,203,300] parameter(0)\n  b = f32[2,148,300] parameter(1)\n  c = f32[2,203,148] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n  ROOT r = f32[406,148] reshape(c)\n}", true},
		{"HloModule m\nENTRY e {\n  a = f32[203,300] parameter(0)\n  b = f32[300,150] parameter(1)\n  ROOT c = f32[203,150] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", false},
		// k = 15: operands read by scalars, 8x8 tiles per invocation.
		{"HloModule m\nENTRY e {\n  a = f32[403,15] parameter(0)\n  b = f32[15,300] parameter(1)\n  ROOT c = f32[403,300] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", true},
	} {
		m, exe, k := compileOne(t, c.src)
		require.Contains(t, k.Name, "gemm", c.src)
		if rt.Device().Type == "cpu" {
			require.Equal(t, c.quads, vectorStores(t, k.Words, "32", "4") > 0, "%s", k.Name)
		}
		args := hlotest.UniformInputs(m, 5)
		_, want, outs := runBothOn(t, exe, m, args, "gemm direct quads")
		requireNearF32(t, want.Leaves()[0], outs[0], 1e-4)
		requireSameForms(t, m, args, outs[0].Data, c.src, vkjit.CompileOptions{SharedGemm: true}, vkjit.CompileOptions{InvocationTiles: true}, vkjit.CompileOptions{StorageLoads: true})
	}
}

// vectorStores counts a kernel's stores to storage buffers of values of
// bits-wide components, comps of them ("1": scalars, "": any count).
func vectorStores(t *testing.T, words []uint32, bits, comps string) int {
	dis, err := spirv.Disassemble(words)
	require.NoError(t, err)
	wide, typed, ptrs, chains := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	n := 0
	for _, line := range strings.Split(dis, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && (f[2] == "OpTypeFloat" || f[2] == "OpTypeInt") && f[3] == bits:
			wide[f[0]] = true
			typed[f[0]] = comps == "1" || comps == ""
		case len(f) == 5 && f[2] == "OpTypeVector" && wide[f[3]]:
			typed[f[0]] = f[4] == comps || comps == ""
		case len(f) == 5 && f[2] == "OpTypePointer" && f[3] == "StorageBuffer" && typed[f[4]]:
			ptrs[f[0]] = true
		case len(f) > 4 && f[2] == "OpAccessChain" && ptrs[f[3]]:
			chains[f[0]] = true
		case len(f) == 3 && f[0] == "OpStore" && chains[f[1]]:
			n++
		}
	}
	return n
}

// TestVectorWideStores: on a CPU device a vector kernel stores its 8
// results as u64s (storeWide, storeNarrowLanes): a u64vec4 of 32-bit
// elements, a u64vec2 of 16-bit ones, a u64 of bytes; --vec4-access as
// two vec4s or as words. The values are the evaluator's and the same bit
// for bit either way.
func TestVectorWideStores(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		src  string
		wide string // u64 components of the stores expected on lavapipe
	}{
		{"HloModule m\nENTRY e {\n  x = f32[100,24] parameter(0)\n  y = f32[100,24] parameter(1)\n  a = f32[100,24] multiply(x, y)\n  ROOT s = f32[100,24] subtract(a, x)\n}", "4"},
		{"HloModule m\nENTRY e {\n  x = s32[2000] parameter(0)\n  y = s32[2000] parameter(1)\n  ROOT a = s32[2000] add(x, y)\n}", "4"},
		{"HloModule m\nENTRY e {\n  x = f16[2000] parameter(0)\n  y = f16[2000] parameter(1)\n  ROOT a = f16[2000] add(x, y)\n}", "2"},
		{"HloModule m\nENTRY e {\n  x = bf16[64,40] parameter(0)\n  y = bf16[64,40] parameter(1)\n  m = bf16[64,40] multiply(x, y)\n  ROOT a = bf16[64,40] add(m, x)\n}", "2"},
		{"HloModule m\nENTRY e {\n  x = s8[2000] parameter(0)\n  y = s8[2000] parameter(1)\n  ROOT a = s8[2000] subtract(x, y)\n}", "1"},
	} {
		m, exe, k := compileOne(t, c.src)
		require.Contains(t, k.Name, "_vec4", c.src)
		if rt.Device().Type == "cpu" {
			require.Positive(t, vectorStores(t, k.Words, "64", c.wide), "%s", c.src)
		}
		args := hlotest.UniformInputs(m, 3)
		_, want, outs := runBothOn(t, exe, m, args, "wide stores")
		require.Equal(t, want.Leaves()[0].Data, outs[0].Data, c.src)
		requireSameForms(t, m, args, outs[0].Data, c.src, vkjit.CompileOptions{Vec4Access: true})
		plain, err := rt.Compile(m, vkjit.CompileOptions{Vec4Access: true})
		require.NoError(t, err)
		require.Zero(t, vectorStores(t, vkjit.ProgramOf(plain).Kernels[0].Words, "64", ""), c.src)
		plain.Close()
	}
}

// TestVectorRowBroadcast: a vector kernel's lanes read a broadcast
// operand's row as vec4s fetched once for all of them where the
// broadcast keeps its operand's minor dimension (rows a multiple of the
// lanes: 8 columns or more), otherwise an element each; the values are
// the evaluator's, bit for bit.
func TestVectorRowBroadcast(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		src  string
		rows int // 16-byte texel views of broadcast operands expected on lavapipe
	}{
		// The same row twice (one fetch), and a second row.
		{"HloModule m\nENTRY e {\n  x = f32[64,24] parameter(0)\n  b = f32[24] parameter(1)\n  c = f32[24] parameter(2)\n  bb = f32[64,24] broadcast(b), dimensions={1}\n  cb = f32[64,24] broadcast(c), dimensions={1}\n  y = f32[64,24] add(x, bb)\n  z = f32[64,24] multiply(y, bb)\n  ROOT w = f32[64,24] subtract(z, cb)\n}", 2},
		// Integers, a rank-2 operand kept whole, a leading dimension of 1.
		{"HloModule m\nENTRY e {\n  x = s32[16,4,16] parameter(0)\n  b = s32[4,16] parameter(1)\n  o = s32[1,16] parameter(2)\n  bb = s32[16,4,16] broadcast(b), dimensions={1,2}\n  ob = s32[16,4,16] broadcast(o), dimensions={1,2}\n  y = s32[16,4,16] add(x, bb)\n  ROOT z = s32[16,4,16] subtract(y, ob)\n}", 2},
		// Rows of 12 (lanes cross rows) and a broadcast along rows: scalar.
		{"HloModule m\nENTRY e {\n  x = f32[128,12] parameter(0)\n  b = f32[12] parameter(1)\n  r = f32[128] parameter(2)\n  bb = f32[128,12] broadcast(b), dimensions={1}\n  rb = f32[128,12] broadcast(r), dimensions={0}\n  y = f32[128,12] add(x, bb)\n  ROOT z = f32[128,12] add(y, rb)\n}", 0},
	} {
		m, exe, k := compileOne(t, c.src)
		if rt.Device().Type == "cpu" {
			require.Contains(t, k.Name, "_vec4", c.src)
			rows := 0
			for _, v := range k.Texel {
				if v.Bytes == 16 && v.Binding > 0 { // binding 0 is x, a vec4 array
					rows++
				}
			}
			require.Equal(t, c.rows, rows, "%s: %+v", k.Name, k.Texel)
		}
		args := hlotest.UniformInputs(m, 3)
		_, want, outs := runBothOn(t, exe, m, args, "rows")
		require.Equal(t, want.Leaves()[0].Data, outs[0].Data, c.src)
	}
}

// requireSameForms compiles m in each of forms and holds its first
// result on args bit for bit want (what names the module).
func requireSameForms(t *testing.T, m *hlo.Module, args []*hlo.Literal, want []byte, what string, forms ...vkjit.CompileOptions) {
	t.Helper()
	for _, opts := range forms {
		exe, err := rt.Compile(m, opts)
		require.NoError(t, err)
		_, _, other := runBothOn(t, exe, m, args, "other form")
		require.Equal(t, want, other[0].Data, "%s %+v", what, opts)
	}
}

// compileOne parses src and compiles it with default options, for a
// test of its first kernel.
func compileOne(t *testing.T, src string) (*hlo.Module, *vkjit.Executable, *lower.Kernel) {
	t.Helper()
	m, err := hlo.Parse("test", src)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	return m, exe, vkjit.ProgramOf(exe).Kernels[0]
}

// requireNearF32 holds every element of the device's f32 result got
// within delta of the evaluator's want.
func requireNearF32(t *testing.T, want *hlo.Literal, got *vkjit.Tensor, delta float64) {
	t.Helper()
	w := &vkjit.Tensor{Type: vkjit.F32, Data: want.Data}
	for i := int64(0); i < want.Shape.NumElements(); i++ {
		require.InDelta(t, w.Float64At(i), got.Float64At(i), delta, "element %d", i)
	}
}

// TestTiledGemmNarrow: bf16 and f16 dots take the tiled kernel too (a
// subgroup's 16x32 tile; operands widened as loaded, on lavapipe four at
// a time from 8-byte texels where their layout allows (the first case's
// rhs, 70 columns, by scalars), sums in f32 as the general kernel makes
// them, the result rounded once), with an epilogue, and with a reshape
// of the result as JAX writes a batched dot's (stored at the same
// row-major positions); narrow results within an ulp of the reference's
// (f32 ones within 1e-5), and the same bits with storage loads (scalar
// reads) as through texel views and with a tile per invocation.
func TestTiledGemmNarrow(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ src, kernel string }{
		{"HloModule m\nENTRY e {\n  a = bf16[130,200] parameter(0)\n  b = bf16[200,70] parameter(1)\n  ROOT c = bf16[130,70] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", "gemm16x32_bf16_lanes8_vec4"},
		{"HloModule m\nENTRY e {\n  a = f16[3,64,100] parameter(0)\n  b = f16[3,100,72] parameter(1)\n  ROOT c = f32[3,64,72] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}", "gemm16x32_f16_f32_lanes8_vec4"},
		{"HloModule m\nENTRY e {\n  x = bf16[128,96] parameter(0)\n  w = bf16[96,100] parameter(1)\n  b = bf16[100] parameter(2)\n  h = bf16[128,100] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = bf16[128,100] broadcast(b), dimensions={1}\n  ROOT y = bf16[128,100] add(h, bb)\n}", "gemm16x32_bf16_lanes8_vec4_add"},
		{"HloModule m\nENTRY e {\n  a = bf16[12,128,64] parameter(0)\n  b = bf16[12,64,96] parameter(1)\n  d = bf16[12,128,96] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n  ROOT r = bf16[1,12,128,96] reshape(d)\n}", "gemm16x32_bf16_lanes8_vec4_reshape"},
	} {
		m, err := hlo.Parse("gemm", c.src)
		require.NoError(t, err)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		if cpuForms() {
			require.Equal(t, atLanes(c.kernel), vkjit.ProgramOf(exe).Kernels[0].Name, c.src)
		} else {
			require.Regexp(t, `^gemm\d+x\d+_`, vkjit.ProgramOf(exe).Kernels[0].Name, c.src)
		}
		args := hlotest.UniformInputs(m, 5)
		_, want, outs := runBothOn(t, exe, m, args, "gemm")
		w := want.Leaves()[0]
		wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
		for i := range w.Shape.NumElements() {
			wv, gv := wt.Float64At(i), outs[0].Float64At(i)
			if w.Shape.Elem == hlo.F32 { // sums of 100 products: a few f32 ulps from the reference's order
				require.InDelta(t, wv, gv, 1e-5*math.Max(1, math.Abs(wv)), "%s: element %d", c.kernel, i)
				continue
			}
			require.LessOrEqual(t, hlotest.ULPs(w.Shape.Elem, wv, gv), int64(1), "%s: element %d", c.kernel, i)
		}
		for _, opts := range []vkjit.CompileOptions{{StorageLoads: true}, {InvocationTiles: true}} {
			exe, err = rt.Compile(m, opts)
			require.NoError(t, err)
			_, _, other := runBothOn(t, exe, m, args, "gemm storage loads")
			require.Equal(t, outs[0].Data, other[0].Data, "%s %+v", c.kernel, opts)
		}
	}
}

// TestSubgroupReductions runs row reductions with a subgroup per output
// (forced on lavapipe, which does not choose them): integer, pred and
// max results equal the sequential reference exactly; float sums and
// argmax (whose ties and NaNs depend on the order) are checked on inputs
// without edge cases, sums to a tolerance for their different order.
func TestSubgroupReductions(t *testing.T) {
	defer noValidationMessages(t)
	opts := vkjit.CompileOptions{SubgroupReduce: true}
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.S8} {
		for _, c := range hlotest.RowReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.Name)
			if ty != hlo.PRED && cpuForms() {
				require.Contains(t, vkjit.ProgramOf(exe).Kernels[len(vkjit.ProgramOf(exe).Kernels)-1].Name, "_subgroup", c.Name)
			}
			requireRowReduction(t, exe, m, c.Name, ty, 11)
		}
	}
	// A row softmax: the max is a prologue of the sum's kernel, and both
	// take a subgroup per row.
	src, err := os.ReadFile("bench/workloads/softmax.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("softmax", strings.ReplaceAll(strings.ReplaceAll(string(src), "4096,1024", "64,200"), "f32[4096]", "f32[64]"))
	require.NoError(t, err)
	exe, err := rt.Compile(m, opts)
	require.NoError(t, err)
	require.Len(t, vkjit.ProgramOf(exe).Kernels, 2)
	if cpuForms() {
		require.Contains(t, vkjit.ProgramOf(exe).Kernels[0].Name, "_subgroup")
	}
	requireSoftmax(t, exe, m)
}

// TestColumnReductions runs reductions over leading dimensions in vector
// kernels, whose 8 lanes fold their columns in one loop, a row of the
// operand a step: each column still folds in the evaluator's order, so
// every result is bit for bit the reference's, NaNs and ties included.
func TestColumnReductions(t *testing.T) {
	defer noValidationMessages(t)
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.BF16, hlo.S8} {
		for _, c := range hlotest.ColumnReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, vkjit.CompileOptions{})
			require.NoError(t, err, c.Name)
			p := vkjit.ProgramOf(exe)
			require.Len(t, p.Kernels, 1, c.Name)
			if ty != hlo.PRED && ty.Bytes() <= 4 { // the vector kernels' types
				require.Equal(t, 8, p.Kernels[0].Vector, "%s: %s", c.Name, p.Kernels[0].Name)
			}
			_, want, outs := runBoth(t, exe, m, 13, c.Name)
			for i, w := range want.Leaves() {
				requireSameValues(t, w.Shape.Elem, w.Data, outs[i].Data, "%s out%d", c.Name, i)
			}
			exe.Close()
		}
	}
}

// TestColumnSoftmax: a softmax over the leading axis, whose column max
// is its sum's prologue in a vector kernel. The sum's lanes had folded
// their columns together with lane 0's max in the register for all of
// them: 146,445 of the 262,144 results were wrong.
func TestColumnSoftmax(t *testing.T) {
	defer noValidationMessages(t)
	src := `HloModule colsm
maxf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
addf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256,1024] parameter(0)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[1024] reduce(x, ninf), dimensions={0}, to_apply=maxf
  mb = f32[256,1024] broadcast(m), dimensions={1}
  d = f32[256,1024] subtract(x, mb)
  ex = f32[256,1024] exponential(d)
  s = f32[1024] reduce(ex, z), dimensions={0}, to_apply=addf
  sb = f32[256,1024] broadcast(s), dimensions={1}
  ROOT y = f32[256,1024] divide(ex, sb)
}`
	m, err := hlo.Parse("colsm", src)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	requireSoftmax(t, exe, m) // closes exe
}

// requireRowReduction runs a row reduction case on the device and in the
// reference: exactly equal for integers and max, within a tolerance for
// float sums (the lanes fold in another order).
func requireRowReduction(t *testing.T, exe *vkjit.Executable, m *hlo.Module, name string, ty hlo.ElementType, seed uint64) {
	t.Helper()
	exact := !ty.IsFloat() || strings.Contains(name, "max") && !strings.Contains(name, "argmax")
	args := hlotest.Inputs(m, seed)
	if !exact {
		args = hlotest.UniformInputs(m, seed)
	}
	_, want, outs := runBothOn(t, exe, m, args, name)
	for i, w := range want.Leaves() {
		g := outs[i]
		for j := int64(0); j < g.NumElements(); j++ {
			wv := (&vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}).Float64At(j)
			gv := g.Float64At(j)
			if exact || !g.Type.IsFloat() {
				if !(math.IsNaN(wv) && math.IsNaN(gv)) {
					require.Equal(t, wv, gv, "%s out%d[%d]", name, i, j)
				}
			} else {
				require.InDelta(t, wv, gv, 1e-4*float64(w.Shape.NumElements()+400), "%s out%d[%d]", name, i, j)
			}
		}
	}
}

// requireSoftmax runs a softmax on uniform inputs and checks it against
// the reference; it returns the device's results.
func requireSoftmax(t *testing.T, exe *vkjit.Executable, m *hlo.Module) []*vkjit.Tensor {
	t.Helper()
	_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 3), "softmax")
	w := want.Leaves()[0]
	for j := int64(0); j < w.Shape.NumElements(); j++ {
		require.InDelta(t, (&vkjit.Tensor{Type: vkjit.F32, Data: w.Data}).Float64At(j), outs[0].Float64At(j), 1e-6)
	}
	return outs
}

// TestWorkgroupReductions runs the row reductions long enough for it
// (4 elements per lane) with a workgroup per output, as GPUs do, on
// lavapipe: each must match the reference as the subgroup ones do, and
// softmax's two reductions (one a prologue of the other) each get their
// own shared memory.
func TestWorkgroupReductions(t *testing.T) {
	defer noValidationMessages(t)
	opts := vkjit.CompileOptions{WorkgroupReduce: true}
	lanes := 4 * vkjit.TargetOf(rt).SubgroupSize
	ran := 0
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.S32, hlo.U64, hlo.F64, hlo.PRED, hlo.S8} {
		for _, c := range hlotest.RowReduceCases(ty) {
			m, err := hlo.Parse(c.Name, c.Text)
			require.NoError(t, err, c.Text)
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.Name)
			red := m.Entry.Root
			count := red.Operands[0].Shape.NumElements() / max(red.Shape.Leaves()[0].NumElements(), 1)
			name := vkjit.ProgramOf(exe).Kernels[len(vkjit.ProgramOf(exe).Kernels)-1].Name
			switch {
			case !cpuForms():
			case count < 4*int64(lanes):
				require.NotContains(t, name, "_workgroup", c.Name)
			default:
				require.Contains(t, name, "_workgroup", c.Name)
				ran++
			}
			requireRowReduction(t, exe, m, c.Name, ty, 13)
		}
	}
	if cpuForms() { // the cases' rows are sized for lavapipe's 8 lanes
		require.Greater(t, ran, 8)
	}
	src, err := os.ReadFile("bench/workloads/softmax.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("softmax", strings.ReplaceAll(strings.ReplaceAll(string(src), "4096,1024", "64,600"), "f32[4096]", "f32[64]"))
	require.NoError(t, err)
	exe, err := rt.Compile(m, opts)
	require.NoError(t, err)
	require.Contains(t, vkjit.ProgramOf(exe).Kernels[0].Name, "_workgroup")
	outs := requireSoftmax(t, exe, m)
	// Fused and unfused agree bit for bit: the tree's order is the code's.
	exe, err = rt.Compile(m, vkjit.CompileOptions{WorkgroupReduce: true, NoFuse: true})
	require.NoError(t, err)
	_, _, plain := runBothOn(t, exe, m, hlotest.UniformInputs(m, 3), "softmax")
	require.Equal(t, outs[0].Data, plain[0].Data)
}

// TestConvGemm runs 2-D NHWC convolutions as implicit GEMMs (strides,
// asymmetric padding, kernel dilation, a partial column tile, a bias and
// ReLU epilogue) against the reference, in both of lavapipe's forms (a
// tile per subgroup or per invocation); 3 input features take the direct
// kernel.
func TestConvGemm(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		x, k, out, window string
		tiled             bool
	}{
		{"f32[4,33,35,32]", "f32[3,3,32,12]", "f32[4,33,35,12]", "size=3x3 pad=1_1x1_1", true},
		{"f32[6,40,42,32]", "f32[3,3,32,20]", "f32[6,20,21,20]", "size=3x3 stride=2x2 pad=1_0x0_1", true},
		{"f32[4,40,40,32]", "f32[3,3,32,16]", "f32[4,36,36,16]", "size=3x3 rhs_dilate=2x2", true},
		{"f32[4,30,30,3]", "f32[3,3,3,16]", "f32[4,30,30,16]", "size=3x3 pad=1_1x1_1", false},
	} {
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  x = %s parameter(0)
  k = %s parameter(1)
  b = f32[%s] parameter(2)
  c = %s convolution(x, k), window={%s}, dim_labels=b01f_01io->b01f
  bb = %s broadcast(b), dimensions={3}
  z = %s add(c, bb)
  zero = f32[] constant(0)
  zs = %s broadcast(zero), dimensions={}
  ROOT y = %s maximum(z, zs)
}`, c.x, c.k, c.k[strings.LastIndex(c.k, ",")+1:len(c.k)-1], c.out, c.window, c.out, c.out, c.out, c.out)
		m, err := hlo.Parse("conv", src)
		require.NoError(t, err, src)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err, src)
		name := vkjit.ProgramOf(exe).Kernels[0].Name
		if cpuForms() {
			require.Equal(t, c.tiled, strings.HasPrefix(name, "gemm"), "%s: %s", name, c.window)
		}
		_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 9), "conv")
		w := want.Leaves()[0]
		for i := int64(0); i < w.Shape.NumElements(); i++ {
			require.InDelta(t, (&vkjit.Tensor{Type: vkjit.F32, Data: w.Data}).Float64At(i), outs[0].Float64At(i), 1e-4, "%s element %d", c.window, i)
		}
		if !c.tiled || !cpuForms() {
			continue
		}
		// A subgroup per tile on lavapipe; a tile per invocation gives
		// the same bits.
		require.Contains(t, name, "_lanes", c.window)
		exe, err = rt.Compile(m, vkjit.CompileOptions{InvocationTiles: true})
		require.NoError(t, err, src)
		require.NotContains(t, vkjit.ProgramOf(exe).Kernels[0].Name, "_lanes", c.window)
		_, _, other := runBothOn(t, exe, m, hlotest.UniformInputs(m, 9), "conv invocation tiles")
		require.Equal(t, outs[0].Data, other[0].Data, c.window)
	}
}

// TestConvOrders runs a 3x3 convolution in other dimension orders than
// NHWC and HWIO (JAX's default NCHW and OIHW, TensorFlow's 01oi kernels,
// features first, an output order of its own): each becomes the implicit
// GEMM between transposes (lower/convorder.go), with a bias and ReLU
// after it, and matches the reference.
func TestConvOrders(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ x, k, out, labels, bias string }{
		{"f32[4,32,20,22]", "f32[16,32,3,3]", "f32[4,16,20,22]", "bf01_oi01->bf01", "1"},
		{"f32[4,20,22,32]", "f32[3,3,16,32]", "f32[4,20,22,16]", "b01f_01oi->b01f", "3"},
		{"f32[32,4,20,22]", "f32[32,3,3,16]", "f32[4,20,22,16]", "fb01_i01o->b01f", "3"},
		{"f32[4,20,22,32]", "f32[3,3,32,16]", "f32[16,4,20,22]", "b01f_01io->fb01", "0"},
	} {
		src := fmt.Sprintf(`HloModule m
ENTRY e {
  x = %s parameter(0)
  k = %s parameter(1)
  b = f32[16] parameter(2)
  c = %s convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=%s
  bb = %s broadcast(b), dimensions={%s}
  z = %s add(c, bb)
  zero = f32[] constant(0)
  zs = %s broadcast(zero), dimensions={}
  ROOT y = %s maximum(z, zs)
}`, c.x, c.k, c.out, c.labels, c.out, c.bias, c.out, c.out, c.out)
		m, err := hlo.Parse("conv", src)
		require.NoError(t, err, src)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err, src)
		if cpuForms() {
			var names []string
			for _, k := range vkjit.ProgramOf(exe).Kernels {
				names = append(names, k.Name)
			}
			require.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "gemm") }), "%s: %v", c.labels, names)
		}
		_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 5), "conv")
		requireNearEval(t, c.labels, outs, want, 1e-4)
	}
}

// TestTransposedConv runs the input gradient of a stride-2 3x3
// convolution as JAX writes it (a reversed kernel, a dilated input), a
// 1-D one of dilation 3 in NCW order and the gradient of a stride-2
// average pooling (a window sum over a pad with interior padding): split
// into the dense convolutions or windows of their phases
// (lower/transposedconv.go), the 2-D convolution by implicit GEMMs, all
// match the reference, fused and unfused.
func TestTransposedConv(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ name, src string }{
		{"2-D", `HloModule m
ENTRY e {
  g = f32[2,16,17,32] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  r = f32[3,3,16,32] reverse(w), dimensions={0,1}
  ROOT c = f32[2,32,34,16] convolution(g, r), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
}`},
		{"average pooling's gradient", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  g = f32[2,14,15,8] parameter(0)
  z = f32[] constant(0)
  p = f32[2,29,31,8] pad(g, z), padding=0_0x1_1_1x1_1_1x0_0
  ROOT r = f32[2,27,29,8] reduce-window(p, z), window={size=1x3x3x1}, to_apply=add
}`},
		{"1-D", `HloModule m
ENTRY e {
  x = f32[2,4,11] parameter(0)
  w = f32[8,4,5] parameter(1)
  ROOT c = f32[2,8,35] convolution(x, w), window={size=5 pad=4_4 lhs_dilate=3}, dim_labels=bf0_oi0->bf0
}`},
	} {
		m, err := hlo.Parse("conv", c.src)
		require.NoError(t, err, c.name)
		for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.name)
			if c.name == "2-D" && cpuForms() {
				gemms := 0
				for _, k := range vkjit.ProgramOf(exe).Kernels {
					if strings.HasPrefix(k.Name, "gemm") {
						gemms++
					}
				}
				require.Greater(t, gemms, 0, "a phase is an implicit GEMM")
			}
			_, want, outs := runBothOn(t, exe, m, hlotest.UniformInputs(m, 4), "transposed conv")
			requireNearEval(t, c.name, outs, want, 1e-4)
		}
	}
}

// TestConvRanks: 1-D convolutions (NCW as JAX's default, NWC with a
// stride, kernel dilation and a dilated input) become 2-D ones of a unit
// dimension, 3-D ones (NDHWC, NCDHW strided) sums of 2-D ones over
// their depth taps, one of 4 feature groups the dense one of a
// block-diagonal kernel, and one of 4 batch groups (a grouped kernel
// gradient) the diagonal blocks of a dense one, and bf16 and f16 ones f32
// convolutions rounded back (lower/convorder.go), which the implicit
// GEMM takes; all match the reference.
func TestConvRanks(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		name, src string
		tol       float64 // the sums of up to 1728 products, or 9216; a bf16 or f16 result's rounding
	}{
		{"ncw", "  x = f32[8,64,200] parameter(0)\n  k = f32[32,64,5] parameter(1)\n  ROOT c = f32[8,32,200] convolution(x, k), window={size=5 pad=2_2}, dim_labels=bf0_oi0->bf0", 1e-4},
		{"nwc_strided", "  x = f32[8,241,64] parameter(0)\n  k = f32[3,64,16] parameter(1)\n  ROOT c = f32[8,119,16] convolution(x, k), window={size=3 stride=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f", 1e-4},
		{"transposed", "  x = f32[8,100,64] parameter(0)\n  k = f32[4,64,16] parameter(1)\n  ROOT c = f32[8,199,16] convolution(x, k), window={size=4 pad=2_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f", 1e-4},
		{"groups", "  x = f32[4,32,32,32] parameter(0)\n  k = f32[3,3,8,32] parameter(1)\n  ROOT c = f32[4,32,32,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4", 1e-4},
		{"batch_groups", "  x = f32[16,24,24,32] parameter(0)\n  g = f32[16,24,24,32] parameter(1)\n  ROOT c = f32[3,3,8,32] convolution(x, g), window={size=24x24 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=4", 1e-3},
		{"bf16", "  x = bf16[4,32,32,32] parameter(0)\n  k = bf16[3,3,32,32] parameter(1)\n  ROOT c = bf16[4,32,32,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 0.07},
		{"f16_nchw", "  x = f16[4,32,32,32] parameter(0)\n  k = f16[32,32,3,3] parameter(1)\n  ROOT c = f16[4,32,16,16] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 0.01},
		{"ndhwc", "  x = f32[2,6,16,16,8] parameter(0)\n  k = f32[3,3,3,8,16] parameter(1)\n  ROOT c = f32[2,6,16,16,16] convolution(x, k), window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f", 1e-4},
		{"ncdhw_strided", "  x = f32[2,8,9,24,24] parameter(0)\n  k = f32[8,8,3,3,3] parameter(1)\n  ROOT c = f32[2,8,4,24,24] convolution(x, k), window={size=3x3x3 stride=2x1x1 pad=0_1x1_1x1_1}, dim_labels=bf012_oi012->bf012", 1e-4},
	} {
		src := "HloModule conv_" + c.name + "\nENTRY e {\n" + c.src + "\n}"
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err)
		if cpuForms() {
			require.Regexp(t, `(^| )gemm`, kernelNames(t, c.name, src), c.name)
		}
		res, want := deviceAndEval(t, c.name, src, literalTensors(hlotest.UniformInputs(m, 6))...)
		requireNearEval(t, c.name, res, want, c.tol)
	}
}

// TestDepthwiseConvs: depthwise convolutions, whose vector kernels fold
// their 8 lanes' windows in one loop (kgen's depthwiseLanes): NHWC with
// padding, strides and kernel dilation, a window reversed, an input
// gradient (lhs_dilate, split into phases) with its 01oi kernel, NCHW
// (the features not the minor dimension of the input), a fused
// producer of the input, bf16 and f16, and kernel gradients (f32, bf16:
// one reduction of every tap's products, lower/convorder.go); bit for
// bit with the evaluator on small integers, fused and unfused.
func TestDepthwiseConvs(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ name, src string }{
		{"nhwc", "  x = f32[2,12,12,64] parameter(0)\n  k = f32[3,3,1,64] parameter(1)\n  ROOT c = f32[2,12,12,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64"},
		{"strided_dilated", "  x = f32[2,15,14,40] parameter(0)\n  k = f32[3,2,1,40] parameter(1)\n  ROOT c = f32[2,7,12,40] convolution(x, k), window={size=3x2 stride=2x1 pad=0_1x0_0 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=40"},
		{"reversed", "  x = f32[2,10,10,48] parameter(0)\n  k = f32[3,3,1,48] parameter(1)\n  ROOT c = f32[2,10,10,48] convolution(x, k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=48"},
		{"input_grad", "  g = f32[2,8,8,64] parameter(0)\n  w = f32[3,3,64,1] parameter(1)\n  r = f32[3,3,64,1] reverse(w), dimensions={0,1}\n  ROOT c = f32[2,16,16,64] convolution(g, r), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f, feature_group_count=64"},
		{"nchw_in", "  x = f32[2,64,12,12] parameter(0)\n  k = f32[3,3,1,64] parameter(1)\n  ROOT c = f32[2,12,12,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->b01f, feature_group_count=64"},
		{"fused_input", "  x = f32[2,12,12,64] parameter(0)\n  k = f32[3,3,1,64] parameter(1)\n  y = f32[2,12,12,64] add(x, x)\n  ROOT c = f32[2,12,12,64] convolution(y, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64"},
		{"bf16", "  x = bf16[2,12,12,64] parameter(0)\n  k = bf16[3,3,1,64] parameter(1)\n  ROOT c = bf16[2,12,12,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64"},
		{"f16_to_f32", "  x = f16[2,12,12,64] parameter(0)\n  k = f16[3,3,1,64] parameter(1)\n  ROOT c = f32[2,12,12,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64"},
		{"filter_grad", "  x = f32[4,10,10,64] parameter(0)\n  g = f32[4,10,10,64] parameter(1)\n  ROOT c = f32[3,3,1,64] convolution(x, g), window={size=10x10 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=64"},
		{"filter_grad_bf16", "  x = bf16[4,10,10,64] parameter(0)\n  g = bf16[4,10,10,64] parameter(1)\n  ROOT c = bf16[3,3,1,64] convolution(x, g), window={size=10x10 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=64"},
		{"filter_grad_7x7", "  x = f32[2,12,12,64] parameter(0)\n  g = f32[2,12,12,64] parameter(1)\n  ROOT c = f32[7,7,1,64] convolution(x, g), window={size=12x12 pad=3_3x3_3}, dim_labels=f01b_i01o->01bf, batch_group_count=64"},
	} {
		requireExact(t, "depthwise_"+c.name, "HloModule depthwise_"+c.name+"\nENTRY e {\n"+c.src+"\n}", smallInts(4))
	}
}

// TestWindowLanes: reduce-windows whose minor dimension is no window
// dimension (NHWC pooling), whose vector kernels fold their 8 lanes'
// windows in one loop (kgen's windowLanes): a max pooling with padding
// (NaN, infinities and -0 among the values), a strided sum, a
// variadic (value, index) maximum, bf16, and a fused producer of the
// input; bit for bit with the evaluator, fused and unfused.
func TestWindowLanes(t *testing.T) {
	defer noValidationMessages(t)
	const reducers = `max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT m = $T[] maximum(a, b)
}
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] add(a, b)
}
argmax {
  a = $T[] parameter(0)
  i = s32[] parameter(1)
  b = $T[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  m = $T[] select(gt, b, a)
  k = s32[] select(gt, j, i)
  ROOT r = ($T[], s32[]) tuple(m, k)
}
`
	for _, c := range []struct{ name, ty, body string }{
		{"max_pool", "f32", "  x = $T[4,9,9,32] parameter(0)\n  z = $T[] constant(-inf)\n  ROOT r = $T[4,5,5,32] reduce-window(x, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max"},
		{"strided_sum", "f32", "  x = $T[4,10,10,24] parameter(0)\n  z = $T[] constant(0)\n  ROOT r = $T[4,3,5,24] reduce-window(x, z), window={size=1x3x2x1 stride=1x2x2x1 rhs_dilate=1x2x1x1}, to_apply=add"},
		{"argmax", "f32", "  x = $T[4,8,8,32] parameter(0)\n  i = s32[4,8,8,32] iota(), iota_dimension=2\n  z = $T[] constant(-inf)\n  n = s32[] constant(-1)\n  ROOT r = ($T[4,4,4,32], s32[4,4,4,32]) reduce-window(x, i, z, n), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=argmax"},
		{"bf16", "bf16", "  x = $T[2,9,9,16] parameter(0)\n  z = $T[] constant(0)\n  ROOT r = $T[2,9,9,16] reduce-window(x, z), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, to_apply=add"},
		{"fused_input", "f32", "  x = $T[4,9,9,32] parameter(0)\n  y = $T[4,9,9,32] multiply(x, x)\n  z = $T[] constant(0)\n  ROOT r = $T[4,5,5,32] reduce-window(y, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add"},
	} {
		src := strings.ReplaceAll("HloModule window_lanes_"+c.name+"\n"+reducers+"ENTRY e {\n"+c.body+"\n}", "$T", c.ty)
		requireExact(t, "window_lanes_"+c.name, src, smallInts(3))
		if c.ty == "f32" {
			requireExact(t, "window_lanes_"+c.name+"_edges", src, edgeInputs(4))
		}
	}
}

// TestHoistedLoop runs lower/testdata/licm.hlo (a while body with an
// invariant sum, hoisted before the loop) against the reference: the
// same result, and one dispatch per iteration fewer than without hoisting
// would take (the body keeps its small kernels only). And
// licm_passthrough.hlo, whose invariant product reads arrays the loop
// passes on, bit for bit (s32).
func TestHoistedLoop(t *testing.T) {
	t.Run("passthrough", func(t *testing.T) {
		defer noValidationMessages(t)
		mods, err := hlo.ParseFile("lower/testdata/licm_passthrough.hlo")
		require.NoError(t, err)
		m := mods[0]
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		_, want, got := runBothOn(t, exe, m, hlotest.UniformInputs(m, 3), "hoisted")
		require.Equal(t, want.Leaves()[0].Data, got[0].Data)
	})
	defer noValidationMessages(t)
	src, err := os.ReadFile("lower/testdata/licm.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("licm.hlo", string(src))
	require.NoError(t, err)
	want, err := eval.Run(m)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	outs, st, err := exe.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, want.Leaves()[0].Data, outs[0].Data)
	require.Less(t, st.Dispatches, 2*200+10, "200 iterations: the condition and the body's one kernel each, not the sum")
}

// TestTexelLoads: on a CPU device with texel buffer views, kernels fetch
// their read-only 32-bit inputs through views of their buffers
// (Kernel.Texel: vec4 texels in vector, row and tiled GEMM kernels,
// single elements elsewhere); the results are bit for bit those of the
// storage buffer loads (Options.StorageLoads), under the validation
// layer.
func TestTexelLoads(t *testing.T) {
	defer noValidationMessages(t)
	if !vkjit.TargetOf(rt).CPU || !vkjit.TargetOf(rt).TexelLoads {
		t.Skip("texel loads are for CPU devices with R32G32B32A32_UINT texel buffers")
	}
	views := map[int]int{} // texel views by texel bytes
	for _, src := range []string{
		// A vector kernel with a scalar-read bias row and an s32 input.
		"HloModule m\nENTRY e {\n  a = f32[64,256] parameter(0)\n  b = f32[256] parameter(1)\n  i = s32[64,256] parameter(2)\n  bb = f32[64,256] broadcast(b), dimensions={1}\n  c = f32[64,256] convert(i)\n  x = f32[64,256] multiply(a, bb)\n  ROOT y = f32[64,256] add(x, c)\n}",
		rowCases()[0].text,
		"HloModule m\nENTRY e {\n  x = f32[2,96,64] parameter(0)\n  w = f32[2,64,136] parameter(1)\n  ROOT c = f32[2,96,136] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}",
		"HloModule m\nENTRY e {\n  x = f32[4,16,16,32] parameter(0)\n  w = f32[3,3,32,64] parameter(1)\n  ROOT c = f32[4,16,16,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}",
		// Single elements: a transpose, a column reduction of u32, a
		// gather with s32 indices, pred read as its u32 storage.
		"HloModule m\nENTRY e {\n  x = f32[96,130] parameter(0)\n  ROOT y = f32[130,96] transpose(x), dimensions={1,0}\n}",
		"HloModule m\nadd {\n  a = u32[] parameter(0)\n  b = u32[] parameter(1)\n  ROOT s = u32[] add(a, b)\n}\nENTRY e {\n  x = u32[300,40] parameter(0)\n  z = u32[] constant(7)\n  ROOT y = u32[40] reduce(x, z), dimensions={0}, to_apply=add\n}",
		"HloModule m\nENTRY e {\n  x = f32[50,8] parameter(0)\n  i = s32[20,1] parameter(1)\n  ROOT g = f32[20,8] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n}",
		"HloModule m\nENTRY e {\n  p = pred[64,33] parameter(0)\n  x = f32[64,33] parameter(1)\n  z = f32[64,33] negate(x)\n  s = f32[64,33] select(p, x, z)\n  ROOT y = f32[33,64] transpose(s), dimensions={1,0}\n}",
		// Other widths: bf16 and s8 in a vector kernel (8 elements as
		// 16 or 8 bytes) and transposed (single 2- and 1-byte texels),
		// f64 transposed (8-byte texels); an empty u64 reduction (a
		// binding smaller than its texel).
		"HloModule m\nENTRY e {\n  x = bf16[64,128] parameter(0)\n  y = bf16[64,128] parameter(1)\n  m = bf16[64,128] multiply(x, y)\n  ROOT t = bf16[128,64] transpose(m), dimensions={1,0}\n}",
		"HloModule m\nENTRY e {\n  x = s8[64,128] parameter(0)\n  y = s8[64,128] parameter(1)\n  m = s8[64,128] add(x, y)\n  ROOT t = s8[128,64] transpose(m), dimensions={1,0}\n}",
		"HloModule m\nENTRY e {\n  x = f64[40,70] parameter(0)\n  ROOT t = f64[70,40] transpose(x), dimensions={1,0}\n}",
		"HloModule m\nadd {\n  a = u64[] parameter(0)\n  b = u64[] parameter(1)\n  ROOT s = u64[] add(a, b)\n}\nENTRY e {\n  x = u64[0,5] parameter(0)\n  z = u64[] constant(3)\n  ROOT y = u64[5] reduce(x, z), dimensions={0}, to_apply=add\n}",
	} {
		m, err := hlo.Parse("texel", src)
		require.NoError(t, err)
		args := hlotest.UniformInputs(m, 7)
		exe, err := rt.Compile(m, vkjit.CompileOptions{})
		require.NoError(t, err)
		texel := 0
		for _, k := range vkjit.ProgramOf(exe).Kernels {
			texel += len(k.Texel)
			for _, v := range k.Texel {
				views[v.Bytes]++
			}
		}
		require.Positive(t, texel, "no kernel fetches through a texel view: %s", src)
		_, _, got := runBothOn(t, exe, m, args, "texel")
		exe, err = rt.Compile(m, vkjit.CompileOptions{StorageLoads: true})
		require.NoError(t, err)
		for _, k := range vkjit.ProgramOf(exe).Kernels {
			require.Empty(t, k.Texel, k.Name)
		}
		_, _, want := runBothOn(t, exe, m, args, "storage")
		for i := range want {
			require.Equal(t, want[i].Data, got[i].Data, "%s out%d", src, i)
		}
	}
	for _, bytes := range []int{1, 2, 4, 8, 16} {
		require.Positive(t, views[bytes], "views of %d-byte texels", bytes)
	}
}

// TestZeroSize: empty arrays flow through elementwise ops, reductions and
// data movement; their kernels are skipped, and the planner once refused
// a reduce of an empty exponential ("reads temporary y before any step
// writes it") without fusion.
func TestZeroSize(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "zero_size", `HloModule zero
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[0,5] parameter(0)
  y = f32[0,5] exponential(x)
  z = f32[] constant(0)
  r = f32[5] reduce(y, z), dimensions={0}, to_apply=add
  t = f32[5,0] transpose(y), dimensions={1,0}
  s = f32[5] reduce(t, z), dimensions={1}, to_apply=add
  c = f32[3,5] pad(y, z), padding=1_2x0_0
  ROOT out = (f32[5], f32[5], f32[3,5], f32[0,5]) tuple(r, s, c, y)
}`, edgeInputs(1))
}

// TestIndexTypes: start indices of every integer type, in dynamic-slice,
// dynamic-update-slice, gather and scatter, fused and unfused. A u8 or
// s8 index once made invalid SPIR-V (an OpUConvert of a 32-bit register
// to u32), which only the validation layer caught.
func TestIndexTypes(t *testing.T) {
	defer noValidationMessages(t)
	for _, it := range []string{"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"} {
		src := fmt.Sprintf(`HloModule idx_%[1]s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[6,5] parameter(0)
  i = %[1]s[] parameter(1)
  j = %[1]s[] parameter(2)
  u = f32[2,3] parameter(3)
  ix = %[1]s[3,1] parameter(4)
  ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  dus = f32[6,5] dynamic-update-slice(x, u, j, i)
  g = f32[3,5] gather(x, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
  up = f32[3,5] parameter(5)
  sc = f32[6,5] scatter(x, ix, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[2,3], f32[6,5], f32[3,5], f32[6,5]) tuple(ds, dus, g, sc)
}`, it)
		requireExact(t, "idx_"+it, src, smallInts(3))
		requireExact(t, "idx_"+it+"_edges", src, edgeInputs(3))
	}
}

// TestWidenedCompare: a signed integer widened to 64 bits inside a
// kernel, then compared or used as a start index. Mesa 22.3's lavapipe
// compiled OpSConvert from 32 to 64 bits followed by a signed compare
// wrongly: compare(convert(x), 0), direction=LT was false for every
// negative x, so relu-like selects and the clamp of a negative start
// index (GoMLX mixes s32 and s64 indices this way) went wrong; kernels
// now widen through the value's two words.
func TestWidenedCompare(t *testing.T) {
	defer noValidationMessages(t)
	for _, from := range []string{"s8", "s16", "s32"} {
		src := fmt.Sprintf(`HloModule widen_%[1]s
ENTRY e {
  i = %[1]s[16] parameter(0)
  c = s64[16] convert(i)
  zero = s64[] constant(0)
  z = s64[16] broadcast(zero), dimensions={}
  lt = pred[16] compare(c, z), direction=LT
  relu = s64[16] select(lt, z, c)
  x = f32[8] parameter(1)
  j = %[1]s[] parameter(2)
  k = s64[] convert(j)
  ds = f32[3] dynamic-slice(x, k), dynamic_slice_sizes={3}
  u = f32[2] parameter(3)
  dus = f32[8] dynamic-update-slice(x, u, k)
  ROOT t = (pred[16], s64[16], f32[3], f32[8]) tuple(lt, relu, ds, dus)
}`, from)
		for seed := uint64(1); seed <= 4; seed++ {
			requireExact(t, "widen_"+from, src, smallInts(seed))
		}
	}
}

// TestControlResultAliases: a conditional whose branch returns its
// operand hands the operand's buffer on as its result, so the operand
// must live as long as the result: once a later value (the iota) took
// its memory. A while loop that runs no iteration does the same.
func TestControlResultAliases(t *testing.T) {
	defer noValidationMessages(t)
	for _, name := range []string{"conditional_alias", "while_alias"} {
		src, err := os.ReadFile("testdata/" + name + ".hlo")
		require.NoError(t, err)
		requireExact(t, name, string(src), smallInts(5))
		requireExact(t, name+"_edges", string(src), edgeInputs(5))
	}
}

// TestSelectAndScatter: the gradient of a max pool (select GE, scatter
// add) and of a min pool, with windows that overlap (stride below size),
// padding, ties (small integers) and a window larger than the stride in
// one dimension only, gaps between windows and a window of padding
// only, in f32, bf16 and s32, and edge values (NaN, inf, -0) in f32, bit
// for bit with the evaluator, fused and unfused: as a reduce-window that
// chooses and a fold of the choices (selectscatter.go), and, where more
// windows than maxSelectCandidates hold an element, by the direct
// kernel.
func TestSelectAndScatter(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		ty, dir, window, operand, source string
	}{
		{"f32", "GE", "size=2x2 stride=2x2", "4,6", "2,3"},
		{"f32", "GE", "size=3x3 stride=1x1 pad=1_1x1_1", "5,4", "5,4"},
		{"f32", "LE", "size=3x2 stride=2x1 pad=0_1x1_0", "6,5", "3,5"},
		{"bf16", "GE", "size=2x3 stride=1x2", "5,7", "4,3"},
		{"s32", "GE", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "2,5,5,3", "2,3,3,3"},
		{"f32", "GT", "size=2x3 stride=3x2 pad=2_0x0_1", "7,6", "3,3"},   // gaps between windows, one of padding only
		{"f32", "GE", "size=9x9 stride=1x1 pad=4_4x4_4", "10,9", "10,9"}, // 81 windows an element: the direct kernel
	} {
		src := fmt.Sprintf(`HloModule sas
select {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=%[2]s
}
add {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  ROOT c = %[1]s[] add(a, b)
}
ENTRY e {
  x = %[1]s[%[4]s] parameter(0)
  g = %[1]s[%[5]s] parameter(1)
  z = %[1]s[] constant(0)
  ROOT s = %[1]s[%[4]s] select-and-scatter(x, g, z), window={%[3]s}, select=select, scatter=add
}`, c.ty, c.dir, c.window, c.operand, c.source)
		requireExact(t, "select_and_scatter_"+c.ty, src, smallInts(5))
		if c.ty == "f32" { // NaN, infinities and -0 among the values
			requireExact(t, "select_and_scatter_edges", src, edgeInputs(6))
		}
	}
}

// TestRemapChains: fused chains of remaps whose indices split and merge
// one another's (kgen's unraveled): a slice of an upsampling (jnp.repeat)
// of a pad, a slice of a merge of dimensions of a broadcast of a
// transpose, a transpose of a split of its reverse, and concatenates of
// 3 and 4 operands (each read in a branch of its own positions) fused
// into a transpose and alone, bit for bit with the evaluator, fused and
// unfused.
func TestRemapChains(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "remap_chains", `HloModule chains
ENTRY e {
  x = f32[6,10,12] parameter(0)
  z = f32[] constant(0)
  p = f32[6,11,13] pad(x, z), padding=0_0x1_0x0_1
  b = f32[6,11,3,13,2] broadcast(p), dimensions={0,1,3}
  r = f32[6,33,26] reshape(b)
  s = f32[6,28,22] slice(r), slice={[0:6], [2:30], [1:23]}
  t = f32[12,6,10] transpose(x), dimensions={2,0,1}
  c = f32[12,4,6,10] broadcast(t), dimensions={0,2,3}
  m = f32[48,60] reshape(c)
  u = f32[47,30] slice(m), slice={[1:48], [0:60:2]}
  y = f32[48,60] reverse(m), dimensions={1}
  n = f32[12,4,6,10] reshape(y)
  v = f32[4,12,10,6] transpose(n), dimensions={1,0,3,2}
  e = f32[6,10,12] exponential(x)
  t2 = f32[6,10,12] negate(x)
  q = f32[24,10,12] concatenate(x, e, t2, x), dimensions={0}
  h = f32[10,12,24] transpose(q), dimensions={1,2,0}
  j = f32[6,10,36] concatenate(e, x, t2), dimensions={2}
  ROOT o = (f32[6,28,22], f32[47,30], f32[4,12,10,6], f32[10,12,24], f32[6,10,36]) tuple(s, u, v, h, j)
}`, smallInts(5))
}

// TestReducerCalls: a reducer or comparator that calls a function of its
// own (JAX writes jnp.logaddexp in a cumulative reduction so) runs with
// the call inlined: reduce, reduce-window, sort, and a reduce inside a
// while loop's body (exact ops on small integers, so bit for bit).
func TestReducerCalls(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "reducer_calls", `HloModule calls
sum_max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  s = f32[] add(a, b)
  ROOT r = f32[] add(m, s)
}
reducer {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] call(a, b), to_apply=sum_max
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] call(a, b), to_apply=lt
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  z = f32[] constant(0)
  r = f32[] reduce(v, z), dimensions={0}, to_apply=reducer
  rb = f32[8] broadcast(r), dimensions={}
  w = f32[8] subtract(v, rb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, w)
}
ENTRY e {
  x = f32[6,8] parameter(0)
  z = f32[] constant(0)
  r = f32[6] reduce(x, z), dimensions={1}, to_apply=reducer
  c = f32[6,8] reduce-window(x, z), window={size=1x8 pad=0_0x7_0}, to_apply=reducer
  s = f32[6,8] sort(x), dimensions={1}, to_apply=less
  v = f32[1,8] slice(x), slice={[0:1], [0:8]}
  v1 = f32[8] reshape(v)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, v1)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  l = f32[8] get-tuple-element(loop), index=1
  ROOT out = (f32[6], f32[6,8], f32[6,8], f32[8]) tuple(r, c, s, l)
}`, smallInts(2))
}

// TestOneProcessCollectives: a program of collectives (JAX prints them
// for a mesh of one device) runs as the one process vkjit is: all-reduce
// (variadic too), all-gather, reduce-scatter, all-to-all and
// collective-broadcast pass their operands on, collective-permute copies
// with a {0,0} pair and gives zeros with none, replica-id and
// partition-id are 0, in the entry and in a while body; the evaluator
// computes them by XLA's definitions independently.
func TestOneProcessCollectives(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "one_process", `HloModule one
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  r = f32[8] all-reduce(v), replica_groups={{0}}, to_apply=add
  p = u32[] partition-id()
  pf = f32[] convert(p)
  pb = f32[8] broadcast(pf), dimensions={}
  w = f32[8] add(r, pb)
  w2 = f32[8] add(w, v)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, w2)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  ar = (f32[4,8], f32[8]) all-reduce(x, y), replica_groups={}, to_apply=add
  a0 = f32[4,8] get-tuple-element(ar), index=0
  a1 = f32[8] get-tuple-element(ar), index=1
  ag = f32[4,8] all-gather(a0), dimensions={0}, replica_groups={{0}}
  rs = f32[4,8] reduce-scatter(ag), dimensions={1}, replica_groups={}, to_apply=add
  aa = f32[4,8] all-to-all(rs), dimensions={0}
  cp = f32[8] collective-permute(a1), source_target_pairs={{0,0}}
  cz = f32[8] collective-permute(a1), source_target_pairs={}
  rid = u32[] replica-id()
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, cp)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  l = f32[8] get-tuple-element(loop), index=1
  ROOT out = (f32[4,8], f32[8], f32[8], u32[], f32[8]) tuple(aa, cp, cz, rid, l)
}`, smallInts(3))
}

// TestAsyncPairs: XLA's scheduled forms run where they stand: copy-start
// and copy-done copy, an async-start runs the computation it wraps (here
// one with an all-reduce of a group of one) and its async-update and
// async-done give the result, all-reduce-start/-done, all-gather's and
// collective-permute's pass their operands on in both of XLA's forms (the
// start holding the results, or the operands, results and contexts),
// add-dependency passes its operand on, in the entry and in a while body;
// a start over other processes is refused by name.
func TestAsyncPairs(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "async_pairs", `HloModule async
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
wrapped {
  p = f32[8] parameter(0)
  q = f32[4,8] parameter(1)
  r = f32[8] all-reduce(p), replica_groups={{0}}, to_apply=add
  e = f32[8] multiply(r, r)
  ROOT s = f32[8] subtract(e, p)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  cs = (f32[8], f32[8], u32[]) copy-start(v)
  cd = f32[8] copy-done(cs)
  ars = f32[8] all-reduce-start(cd), replica_groups={}, to_apply=add
  ard = f32[8] all-reduce-done(ars)
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  w = f32[8] multiply(ard, hb)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, w)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  as = ((f32[8], f32[4,8]), f32[8], s32[]) async-start(y, x), calls=wrapped
  au = ((f32[8], f32[4,8]), f32[8], s32[]) async-update(as)
  ad = f32[8] async-done(au)
  cs = (f32[4,8], f32[4,8], u32[]) copy-start(x)
  cd = f32[4,8] copy-done(cs)
  ars = (f32[4,8], f32[4,8]) all-reduce-start(cd), replica_groups={{0}}, to_apply=add
  ard = f32[4,8] all-reduce-done(ars)
  ags = (f32[4,8], f32[4,8]) all-gather-start(ard), dimensions={0}, replica_groups={{0}}
  agd = f32[4,8] all-gather-done(ags)
  cps = (f32[8], f32[8], u32[], u32[]) collective-permute-start(ad), source_target_pairs={{0,0}}
  cpd = f32[8] collective-permute-done(cps)
  czs = f32[8] collective-permute-start(ad), source_target_pairs={}
  czd = f32[8] collective-permute-done(czs)
  tok = token[] after-all()
  dep = f32[8] add-dependency(cpd, tok)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, dep)
  loop = (s32[], f32[8]) while(init), condition=cond, body=body
  l = f32[8] get-tuple-element(loop), index=1
  ROOT out = (f32[4,8], f32[8], f32[8], f32[8]) tuple(agd, cpd, czd, l)
}`, smallInts(3))

	_, err := rt.CompileText("two.hlo", `HloModule two
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] all-reduce-start(x), replica_groups={{0,1}}, to_apply=add
  ROOT d = f32[8] all-reduce-done(s)
}`, vkjit.CompileOptions{})
	require.ErrorContains(t, err, "all-reduce-start joins processes other than this one")
}

// TestBatchNorm: batch-norm-training, -inference and -grad, written
// out as XLA's expander writes them, match the evaluator's independent
// loops over XLA's formulas in f32, f64, f16 and bf16, with the feature
// dimension first, in the middle and last, fused and not, on inputs
// uniform in [-1, 1): within a few of the type's ulps of the result's
// scale (the device sums a feature's values in its own order, the
// evaluator exactly).
func TestBatchNorm(t *testing.T) {
	defer noValidationMessages(t)
	for _, tc := range []struct {
		ty   string
		dims string
		f    int
		feat int
		tol  float64
	}{
		{"f32", "4,3,5", 1, 3, 1e-6},
		{"f32", "6,7", 0, 6, 1e-6},
		{"f64", "2,3,8", 2, 8, 1e-14},
		{"f16", "5,4", 1, 4, 2e-3},     // 2 ulp of 1
		{"bf16", "3,2,6", 0, 3, 16e-3}, // 2 ulp of 1
	} {
		text := fmt.Sprintf(`HloModule bn
ENTRY e {
  x = %[1]s[%[2]s] parameter(0)
  s = %[1]s[%[3]d] parameter(1)
  o = %[1]s[%[3]d] parameter(2)
  dy = %[1]s[%[2]s] parameter(3)
  tr = (%[1]s[%[2]s], %[1]s[%[3]d], %[1]s[%[3]d]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=%[4]d
  y = %[1]s[%[2]s] get-tuple-element(tr), index=0
  m = %[1]s[%[3]d] get-tuple-element(tr), index=1
  v = %[1]s[%[3]d] get-tuple-element(tr), index=2
  inf = %[1]s[%[2]s] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=%[4]d
  g = (%[1]s[%[2]s], %[1]s[%[3]d], %[1]s[%[3]d]) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index=%[4]d
  dx = %[1]s[%[2]s] get-tuple-element(g), index=0
  ds = %[1]s[%[3]d] get-tuple-element(g), index=1
  do = %[1]s[%[3]d] get-tuple-element(g), index=2
  ROOT r = (%[1]s[%[2]s], %[1]s[%[3]d], %[1]s[%[3]d], %[1]s[%[2]s], %[1]s[%[2]s], %[1]s[%[3]d], %[1]s[%[3]d]) tuple(y, m, v, inf, dx, ds, do)
}`, tc.ty, tc.dims, tc.feat, tc.f)
		name := fmt.Sprintf("batchnorm_%s_%s", tc.ty, tc.dims)
		m, err := hlo.Parse(name, text)
		require.NoError(t, err, text)
		require.NoError(t, hlo.Verify(m), name)
		args := hlotest.UniformInputs(m, 11)
		for _, opts := range []vkjit.CompileOptions{{}, {NoFuse: true}} {
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, name)
			_, want, outs := runBothOn(t, exe, m, args, name)
			for i, w := range want.Leaves() {
				wt := &vkjit.Tensor{Type: vkjit.DType(w.Shape.Elem), Dims: w.Shape.Dims, Data: w.Data}
				scale := 1.0
				for j := range wt.NumElements() {
					scale = math.Max(scale, math.Abs(wt.Float64At(j)))
				}
				for j := range wt.NumElements() {
					require.InDelta(t, wt.Float64At(j), outs[i].Float64At(j), tc.tol*scale, "%s out%d[%d] (%+v)", name, i, j, opts)
				}
			}
		}
	}
}

// TestStochasticConvert: stochastic-convert from f32, f16, bf16 and f64
// to s32, s8, s16, s64 and s4, written out as XLA's decomposer writes it,
// matches the evaluator bit for bit on edge-case inputs (NaN, infinities,
// extremes, values at the integer types' limits) and random bits, fused
// and not.
func TestStochasticConvert(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "stochastic_convert", `HloModule sc
ENTRY e {
  x = f32[64] parameter(0)
  r = u32[64] parameter(1)
  h = f16[64] parameter(2)
  rh = u16[64] parameter(3)
  b = bf16[64] parameter(4)
  d = f64[64] parameter(5)
  rd = u64[64] parameter(6)
  c32 = s32[64] stochastic-convert(x, r)
  c8 = s8[64] stochastic-convert(x, r)
  c4 = s4[64] stochastic-convert(x, r)
  ch = s16[64] stochastic-convert(h, rh)
  cb = s16[64] stochastic-convert(b, rh)
  cd = s64[64] stochastic-convert(d, rd)
  ROOT t = (s32[64], s8[64], s4[64], s16[64], s16[64], s64[64]) tuple(c32, c8, c4, ch, cb, cd)
}`, edgeInputs(5))
}

// TestRaggedDot: ragged-dot in JAX's three forms, written out in dots
// and selects, matches the evaluator's definition bit for bit (small
// integers: exact sums). Ragged rows with and without a batch dimension,
// groups that leave rows over, overrun the rows or are empty, the rhs's
// group dimension first or last, a ragged dimension that is not the
// lhs's first free one; a ragged contracting dimension (a result per
// group, an empty group's zeros, values past the groups left out); a
// ragged batch dimension (batches past the groups zeros). Group sizes
// per position of the lhs's outer dimensions, in all three forms (the
// rhs's partners of those dimensions out of order: a transpose before
// the broadcast).
func TestRaggedDot(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "ragged_dot", `HloModule rd
ENTRY e {
  a = f32[7,4] parameter(0)
  b = f32[3,4,5] parameter(1)
  s = s32[3] constant({2, 0, 3})
  r = f32[7,5] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  s2 = u32[3] constant({4, 4, 4})
  r2 = f32[7,5] ragged-dot(a, b, s2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  x = f32[2,4,6] parameter(2)
  y = f32[2,4,3,2] parameter(3)
  s3 = s64[2] constant({1, 4})
  r3 = f32[2,6,3] ragged-dot(x, y, s3), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={2}, rhs_group_dims={3}
  c = f32[3,6] parameter(4)
  d = f32[6,5] parameter(5)
  s4 = s32[4] constant({2, 3, 0, 3})
  r4 = f32[4,3,5] ragged-dot(c, d, s4), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
  u = f32[5,2,3] parameter(6)
  v = f32[5,3,4] parameter(7)
  s5 = s32[2] constant({1, 3})
  r5 = f32[5,2,4] ragged-dot(u, v, s5), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
  a6 = f32[3,7,4] parameter(8)
  s6 = s32[3,3] constant({{2, 0, 3}, {7, 1, 1}, {0, 3, 5}})
  r6 = f32[3,7,5] ragged-dot(a6, b, s6), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
  l7 = f32[2,3,6] parameter(9)
  m7 = f32[6,3,5,2] parameter(10)
  s7 = s64[2,3,2] constant({{{2, 4}, {0, 6}, {6, 0}}, {{3, 3}, {1, 2}, {5, 5}}})
  r7 = f32[2,2,5] ragged-dot(l7, m7, s7), lhs_batch_dims={0}, rhs_batch_dims={3}, lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}, lhs_ragged_dims={2}
  u8 = f32[2,5,3] parameter(11)
  v8 = f32[2,5,3,4] parameter(12)
  s8 = u32[2,2] constant({{1, 3}, {5, 0}})
  r8 = f32[2,5,4] ragged-dot(u8, v8, s8), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}
  ROOT t = (f32[7,5], f32[7,5], f32[2,6,3], f32[4,3,5], f32[5,2,4], f32[3,7,5], f32[2,2,5], f32[2,5,4]) tuple(r, r2, r3, r4, r5, r6, r7, r8)
}`, smallInts(4))
}

// TestGatherCollapsedEmptySlice: a gather whose collapsed dimension's
// slice size is 0 (XLA allows 0 or 1) reads it as a slice of 1 on the
// device as in the evaluator, starts past the end clamped to the last
// row; the device had read one row past the operand (FuzzMutants seed
// 110, mutation 195, where the evaluator panicked).
func TestGatherCollapsedEmptySlice(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "gather_empty_slice", `HloModule g
ENTRY e {
  x = f32[5,4] parameter(0)
  i = s32[6,1] constant({{0}, {5}, {4}, {-1}, {2}, {9}})
  g = f32[6,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={0,4}
  y = f32[6,2,3] parameter(1)
  j = s32[6,1] constant({{1}, {2}, {0}, {2}, {7}, {-3}})
  h = f32[6,3] gather(y, j), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,0,3}
  ROOT t = (f32[6,4], f32[6,3]) tuple(g, h)
}`, smallInts(4))
}

// TestGetDimensionSize: get-dimension-size of a static dimension is its
// size, in the entry and in a while body; of a bounded dynamic one, a
// refusal that says so.
func TestGetDimensionSize(t *testing.T) {
	defer noValidationMessages(t)
	requireExact(t, "dimension_size", `HloModule gds
cond {
  s = (s32[], f32[3,7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3,7] get-tuple-element(s), index=1
  n = s32[] get-dimension-size(v), dimensions={0}
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3,7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3,7] get-tuple-element(s), index=1
  w = f32[3,7] add(v, v)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[3,7]) tuple(j, w)
}
ENTRY e {
  x = f32[3,7] parameter(0)
  n = s32[] get-dimension-size(x), dimensions={1}
  zero = s32[] constant(0)
  init = (s32[], f32[3,7]) tuple(zero, x)
  loop = (s32[], f32[3,7]) while(init), condition=cond, body=body
  l = f32[3,7] get-tuple-element(loop), index=1
  ROOT r = (s32[], f32[3,7]) tuple(n, l)
}`, smallInts(6))
	_, err := rt.CompileText("dyn.hlo", "HloModule m\nENTRY e {\n  x = f32[<=5] parameter(0)\n  ROOT n = s32[] get-dimension-size(x), dimensions={0}\n}\n", vkjit.CompileOptions{})
	require.ErrorContains(t, err, "bounded dynamic dimension")
}

// TestCompileStableHLO: the library takes StableHLO where it takes HLO
// text, told apart by content. A program in both forms compiles (text
// and file, with the compile cache on) and gives the same bits, and
// ParseText reads both.
func TestCompileStableHLO(t *testing.T) {
	defer noValidationMessages(t)
	mlirPath := filepath.Join("hlo", "stablehlo", "testdata", "mlp_layer.mlir")
	mlir, err := os.ReadFile(mlirPath)
	require.NoError(t, err)
	text, err := os.ReadFile(filepath.Join("hlo", "stablehlo", "testdata", "mlp_layer.hlo"))
	require.NoError(t, err)
	twin, err := hlo.Parse("mlp_layer.hlo", string(text))
	require.NoError(t, err)
	args := hlotest.Inputs(twin, 7)
	ts := make([]*vkjit.Tensor, len(args))
	for i, a := range args {
		ts[i] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
	}
	run := func(exe *vkjit.Executable, err error) []byte {
		t.Helper()
		require.NoError(t, err)
		defer exe.Close()
		outs, _, err := exe.Run(context.Background(), ts...)
		require.NoError(t, err)
		require.Len(t, outs, 1)
		return outs[0].Data
	}
	want := run(rt.CompileText("mlp_layer.hlo", string(text), vkjit.CompileOptions{}))
	require.Equal(t, want, run(rt.CompileText("mlp_layer.mlir", string(mlir), vkjit.CompileOptions{})))
	require.Equal(t, want, run(rt.CompileText("mlp_layer.mlir", string(mlir), vkjit.CompileOptions{})), "a cache hit")
	require.Equal(t, want, run(rt.CompileFile(mlirPath, vkjit.CompileOptions{})))
	ms, err := vkjit.ParseText("mlp_layer.mlir", string(mlir))
	require.NoError(t, err)
	require.Len(t, ms, 1)
	ref, err := eval.Run(twin, args...)
	require.NoError(t, err)
	requireSameValues(t, ref.Leaves()[0].Shape.Elem, ref.Leaves()[0].Data, want)

	_, err = rt.CompileText("bad.mlir", "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %b : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n", vkjit.CompileOptions{})
	require.ErrorContains(t, err, "bad.mlir:2:")
}

// TestIntegerOperandsOfFloatProducts: an integer operand of a dot or
// convolution with a narrower float result is rounded to the result type
// before the product, as XLA's operand upcasting converts it (and the
// evaluator reads it): a u16 of 65535 is an f16 infinity (times 0: NaN),
// 2049 is 2048 in f16 and 2048 in bf16 (257: 256). The device had converted
// the integers to f32 and rounded only the sum (a FuzzMutants mutant, its
// dot by 0 giving 0 where XLA gives NaN).
func TestIntegerOperandsOfFloatProducts(t *testing.T) {
	defer noValidationMessages(t)
	// cycle fills each parameter with vals over and over.
	cycle := func(vals ...int64) func(*hlo.Module) []*hlo.Literal {
		return func(m *hlo.Module) []*hlo.Literal {
			var out []*hlo.Literal
			for _, p := range m.Entry.Params {
				s := p.Shape
				l := &hlo.Literal{Shape: s, Data: make([]byte, s.NumElements()*int64(s.Elem.Bytes()))}
				for j := range s.NumElements() {
					v := uint64(vals[(j+int64(len(out)))%int64(len(vals))])
					for b := range s.Elem.Bytes() {
						l.Data[j*int64(s.Elem.Bytes())+int64(b)] = byte(v >> (8 * b))
					}
				}
				out = append(out, l)
			}
			return out
		}
	}
	requireExact(t, "dot_u16_f16", `HloModule m
ENTRY e {
  a = u16[3,5] parameter(0)
  b = u16[5,4] parameter(1)
  ROOT r = f16[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, cycle(0, 65535, 2049, 7, 1, 0, 3))
	// Large enough for the tiled kernels.
	requireExact(t, "dot_s16_bf16", `HloModule m
ENTRY e {
  a = s16[64,16] parameter(0)
  b = s16[16,96] parameter(1)
  ROOT r = bf16[64,96] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, cycle(257, -1, 0, 1, 2049, -515, 3))
	requireExact(t, "conv_s16_f16", `HloModule m
ENTRY e {
  x = s16[1,6,6,3] parameter(0)
  k = s16[3,3,3,2] parameter(1)
  ROOT r = f16[1,6,6,2] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}`, cycle(2049, 0, 1, 0, -3))
}

// TestLongDot: a dot contracting more elements than lavapipe lets one
// invocation loop over (65,535) sums dots over parts of its contraction
// (lower/splitbound.go): two vectors of 100,003 (not a whole number of
// parts), a matrix product of contraction 100,000, a batched dot
// contracting two dimensions (300 x 400), against the evaluator within
// f32 rounding of sums of 10^5 terms, and an s32 dot exactly.
func TestLongDot(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		name, body string
		tol        float64
	}{
		{"vectors", "  x = f32[1,100003] parameter(0)\n  y = f32[100003,1] parameter(1)\n  ROOT r = f32[1,1] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1e-2},
		{"matrices", "  x = f32[8,100000] parameter(0)\n  y = f32[100000,5] parameter(1)\n  ROOT r = f32[8,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1e-2},
		{"batched_two_dims", "  x = f32[2,300,3,400] parameter(0)\n  y = f32[2,400,300] parameter(1)\n  ROOT r = f32[2,3] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1,3}, rhs_contracting_dims={2,1}", 1e-2},
		{"s32", "  x = s32[2,70000] parameter(0)\n  y = s32[70000,3] parameter(1)\n  ROOT r = s32[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 0},
	} {
		src := "HloModule dot_" + c.name + "\nENTRY e {\n" + c.body + "\n}"
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err)
		args := literalTensors(hlotest.SmallIntInputs(m, 11))
		if c.tol > 0 {
			args = literalTensors(hlotest.UniformInputs(m, 11))
		}
		res, want := deviceAndEval(t, c.name, src, args...)
		requireNearEval(t, c.name, res, want, c.tol)
	}
}

// TestBands: convolutions contracting more taps than lavapipe lets
// one invocation loop over sum convolutions over bands of their windows
// (lower/splitbound.go): a weight gradient (the window the whole image,
// the batch its input features: 65,536 taps an output), a 1-D NCW
// convolution of 1024 features by 70 taps, and a moving sum of 70,000
// (a reduce-window folding bands of its window), against the evaluator
// within the rounding of sums of 7*10^4 terms.
func TestBands(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct{ name, body string }{
		{"weight_gradient", "  x = f32[16,64,64,8] parameter(0)\n  g = f32[16,64,64,8] parameter(1)\n  ROOT r = f32[3,3,8,8] convolution(x, g), window={size=64x64 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf"},
		{"moving_sum", "  x = f32[70100] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[101] reduce-window(x, z), window={size=70000}, to_apply=add"},
		{"ncw", "  x = f32[1,1024,80] parameter(0)\n  k = f32[8,1024,70] parameter(1)\n  ROOT r = f32[1,8,11] convolution(x, k), window={size=70}, dim_labels=bf0_oi0->bf0"},
	} {
		src := "HloModule long_" + c.name + "\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n" + c.body + "\n}"
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err)
		res, want := deviceAndEval(t, c.name, src, literalTensors(hlotest.UniformInputs(m, 5))...)
		requireNearEval(t, c.name, res, want, 1e-2)
	}
}

// TestCumulativeReductions: jnp.cumsum, cumprod, cummax and the like
// (a reduce-window over a whole dimension) as tree scans on the device:
// forward and reversed, along any dimension, lengths no multiple of a
// block, against the evaluator (small integers: exact in any order); a
// cumulative sum of 100,000, past llvmpipe's loop bound as one window,
// against float64 sums. And a long window that is no scan, whose vector
// kernel would run its 8 lanes' loops past the bound (every eighth
// element of a cumulative sum of 8192 was lost so). Inits that are no
// identity (a sum from 1) and a reducer of several ops (a cumulative
// logsumexp) take the flagged scan.
func TestCumulativeReductions(t *testing.T) {
	defer noValidationMessages(t)
	reducer := func(op, typ string) string {
		return fmt.Sprintf("r_%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT s = %s[] %s(a, b)\n}\n", op, typ, typ, typ, op)
	}
	module := func(name, typ, op, init, x, out, window string) string {
		return "HloModule " + name + "\n" + reducer(op, typ) + fmt.Sprintf("ENTRY e {\n  x = %s[%s] parameter(0)\n  i = %s[] constant(%s)\n  ROOT r = %s[%s] reduce-window(x, i), window={%s}, to_apply=r_%s\n}\n",
			typ, x, typ, init, typ, out, window, op)
	}
	for _, c := range []struct{ name, typ, op, init, x, out, window string }{
		{"cumsum_rows", "f32", "add", "0", "16,1000", "16,1000", "size=1x1000 pad=0_0x999_0"},
		{"cumsum_reversed_columns", "f32", "add", "0", "1000,3,5", "1000,3,5", "size=1000x1x1 pad=0_999x0_0x0_0"},
		{"cumsum_exclusive", "s32", "add", "0", "4,777", "4,778", "size=1x777 pad=0_0x777_0"},
		{"cumprod", "s32", "multiply", "1", "5,600", "5,600", "size=1x600 pad=0_0x599_0"},
		{"cummax", "f32", "maximum", "-inf", "3,2000", "3,2000", "size=1x2000 pad=0_0x1999_0"},
		{"long_window", "f32", "add", "0", "9215", "1024", "size=8192"},
		{"cumsum_from_1", "f32", "add", "1", "6,1000", "6,1000", "size=1x1000 pad=0_0x999_0"},
		{"cumprod_reversed_from_2", "s32", "multiply", "2", "1000,3", "1000,3", "size=1000x1 pad=0_999x0_0"},
	} {
		src := module(c.name, c.typ, c.op, c.init, c.x, c.out, c.window)
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err)
		args := literalTensors(hlotest.SmallIntInputs(m, 5))
		res, want := deviceAndEval(t, c.name, src, args...)
		require.Equal(t, want.Leaves()[0].Data, res[0].Data, c.name)
	}
	// jax.lax.cumlogsumexp: jnp.logaddexp's ops from -inf, scanned with
	// a flag per fold; rounded in the tree's order.
	const logaddexp = "lae {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  m = f32[] maximum(a, b)\n  d = f32[] subtract(a, b)\n" +
		"  nan = pred[] compare(d, d), direction=NE\n  s = f32[] add(a, b)\n  ad = f32[] abs(d)\n  nd = f32[] negate(ad)\n  e = f32[] exponential(nd)\n" +
		"  l = f32[] log-plus-one(e)\n  r = f32[] add(m, l)\n  ROOT o = f32[] select(nan, s, r)\n}\n"
	src := "HloModule cumlogsumexp\n" + logaddexp + "ENTRY e {\n  x = f32[4,3000] parameter(0)\n  i = f32[] constant(-inf)\n" +
		"  ROOT r = f32[4,3000] reduce-window(x, i), window={size=1x3000 pad=0_0x2999_0}, to_apply=lae\n}\n"
	m, err := hlo.Parse("cumlogsumexp", src)
	require.NoError(t, err)
	require.Contains(t, kernelNames(t, "cumlogsumexp", src), "reduce_window")
	res, want := deviceAndEval(t, "cumlogsumexp", src, literalTensors(hlotest.UniformInputs(m, 3))...)
	requireNearEval(t, "cumlogsumexp", res, want, 1e-5)
	const n = 100000
	exe, err := rt.CompileText("cumsum_long", module("cumsum_long", "f32", "add", "0", "100000", "100000", "size=100000 pad=99999_0"), vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x := make([]float32, n)
	rng := rand.New(rand.NewPCG(7, 0))
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	arg, err := vkjit.Float32s([]int64{n}, x)
	require.NoError(t, err)
	res, _, err = exe.Run(context.Background(), arg)
	require.NoError(t, err)
	got, err := res[0].AsFloat32()
	require.NoError(t, err)
	sum := 0.0
	for i, v := range x {
		sum += float64(v)
		// f32 sums of 8 in a tree of 6 levels: far within 1e-4 of
		// magnitudes of ~100, where one sum left to right errs by ~1e-3.
		require.InDelta(t, sum, float64(got[i]), 1e-4, "element %d", i)
	}
}

// TestLongWindows: a reduce-window whose windows tile its operand and
// hold more elements than lavapipe lets one invocation loop over (a
// global pooling of 512 x 512 images) is a reduce of the operand split
// into its windows (lower/splitbound.go): a sum within f32 rounding of the
// evaluator's, a max exactly.
func TestLongWindows(t *testing.T) {
	defer noValidationMessages(t)
	for _, c := range []struct {
		name, comp, body string
		tol              float64
	}{
		{"sum_pool", "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n",
			"  x = f32[2,512,512,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2,1,1,3] reduce-window(x, z), window={size=1x512x512x1 stride=1x512x512x1}, to_apply=add", 1e-2},
		{"max_tiles", "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n",
			"  x = f32[4,600,400] parameter(0)\n  z = f32[] constant(-inf)\n  ROOT r = f32[4,2,1] reduce-window(x, z), window={size=1x300x400 stride=1x300x400}, to_apply=mx", 0},
	} {
		src := "HloModule w_" + c.name + "\n" + c.comp + "ENTRY e {\n" + c.body + "\n}"
		m, err := hlo.Parse(c.name, src)
		require.NoError(t, err)
		args := literalTensors(hlotest.UniformInputs(m, 13))
		res, want := deviceAndEval(t, c.name, src, args...)
		requireNearEval(t, c.name, res, want, c.tol)
	}
}
