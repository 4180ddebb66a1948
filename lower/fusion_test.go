package lower

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

// TestFusionTargets holds fusion to the dispatch counts and memory the
// fusion issue sets for the bench workloads.
func TestFusionTargets(t *testing.T) {
	chain := compileWorkload(t, "chain8.hlo", Options{})
	require.Len(t, chain.Steps, 1, "an 8-op elementwise chain is one kernel")
	plain := compileWorkload(t, "chain8.hlo", Options{NoFuse: true, NoReuse: true})
	require.Len(t, plain.Steps, 14, "8 ops and 6 broadcasts of constants")
	require.LessOrEqual(t, 4*chain.PeakBytes(), plain.PeakBytes(), "fused peak at most a quarter of --no-fuse --no-reuse")

	require.LessOrEqual(t, len(compileWorkload(t, "softmax.hlo", Options{}).Steps), 2, "row softmax")
	require.Len(t, compileWorkload(t, "dense_relu.hlo", Options{}).Steps, 1, "dense layer with bias and relu")
	// Two dense layers, the logits' dense, and a log-softmax in two: the
	// small logits dense is stored once rather than recomputed in the
	// log-softmax's reductions (fuseLoops: 14.6 ms of device time against 3.1).
	require.LessOrEqual(t, len(compileWorkload(t, "mlp_forward.hlo", Options{}).Steps), 5)
	for _, name := range []string{"chain8.hlo", "softmax.hlo", "dense_relu.hlo", "mlp_forward.hlo", "gemm1024.hlo"} {
		for _, k := range compileWorkload(t, name, Options{}).Kernels {
			require.NoError(t, spirv.Validate(k.Words), "%s: %s", name, k.Name)
		}
	}
}

// TestRowKernelPlans: on a CPU device a row softmax, the MLP's
// log-softmax and the transformer block's softmax and layer norms become
// row kernels (one dispatch where they were two or three), vector ones
// where the row length is a multiple of 8; GPUs, and SubgroupReduce on a
// CPU, keep the reduction kernels. Every kernel passes spirv-val.
func TestRowKernelPlans(t *testing.T) {
	cpu := desktop
	cpu.CPU = true
	compile := func(name string, tg Target, opts Options) *Program {
		mods, err := hlo.ParseFile(filepath.Join("../bench/workloads", name))
		require.NoError(t, err)
		p, err := Compile(mods[0], tg, opts)
		require.NoError(t, err)
		for _, k := range p.Kernels {
			require.NoError(t, spirv.Validate(k.Words), "%s: %s", name, k.Name)
		}
		return p
	}
	rows := func(p *Program) (n int, names []string) {
		for _, k := range p.Kernels {
			names = append(names, k.Name)
			if strings.HasPrefix(k.Name, "row_") {
				n++
			}
		}
		return n, names
	}
	sm := compile("softmax.hlo", cpu, Options{})
	require.Len(t, sm.Steps, 1)
	require.Equal(t, "row_divide_f32_vec4_online", sm.Kernels[0].Name, "the max and the sum in one pass (online.go)")
	require.Equal(t, uint32(4096), sm.Steps[0].Push[0], "an invocation per row")
	require.Len(t, compile("softmax.hlo", desktop, Options{}).Steps, 2, "GPU: reduction and normalization")
	require.Len(t, compile("softmax.hlo", cpu, Options{SubgroupReduce: true}).Steps, 2)

	n, names := rows(compile("mlp_forward.hlo", cpu, Options{}))
	require.Equal(t, 1, n, "the log-softmax: %v", names)
	n, names = rows(compile("transformer_block.hlo", cpu, Options{}))
	require.GreaterOrEqual(t, n, 2, "the attention softmax and a layer norm at least: %v", names)
}

// TestHoistInvariants: a while body that sums the squares of an iota
// every iteration (as jit_compute_while in the corpus does) gets the sum
// computed once before the loop, carried in the loop state; the body
// keeps its variant work only, and the user's module is left as it was.
func TestHoistInvariants(t *testing.T) {
	mods, err := hlo.ParseFile("testdata/licm.hlo")
	require.NoError(t, err)
	m := mods[0]
	before := m.String()
	p, err := Compile(m, desktop, Options{HostLoops: true})
	require.NoError(t, err)
	require.Equal(t, before, m.String(), "the user's module is not modified")
	// Hoisting is what lets the loop run on the device: its state is
	// then scalars and an array read at the counter.
	dev, err := Compile(m, desktop, Options{})
	require.NoError(t, err)
	require.Equal(t, 1, stepKinds(dev)[StepLoop])
	reduces := func(p *Program) (n int) {
		for _, s := range p.Steps {
			if s.Kind == StepDispatch && strings.HasPrefix(p.Kernels[s.Kernel].Name, "reduce") {
				n++
			}
		}
		return n
	}
	require.NotZero(t, reduces(p), "the invariant reduction runs in the entry (in two steps: it is long)")
	var while Step
	for _, s := range p.Steps {
		if s.Kind == StepWhile {
			while = s
		}
	}
	require.Equal(t, StepWhile, while.Kind)
	require.Zero(t, reduces(p.Subs[while.Body]), "and not in the body")
	for _, k := range append(p.Kernels, p.Subs[while.Body].Kernels...) {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestHoistPassThrough: a product of two arrays the loop body passes on
// unchanged (testdata/licm_passthrough.hlo, a fori_loop's closed-over
// arrays) is computed once in the entry; the product of the two arrays
// that trade places every iteration stays in the body.
func TestHoistPassThrough(t *testing.T) {
	mods, err := hlo.ParseFile("testdata/licm_passthrough.hlo")
	require.NoError(t, err)
	p, err := Compile(mods[0], desktop, Options{})
	require.NoError(t, err)
	var hoisted []string
	var body *Program
	for _, s := range p.Steps {
		switch s.Kind {
		case StepDispatch:
			if strings.Contains(s.Inst, "/hoisted/") {
				hoisted = append(hoisted, s.Inst)
			}
		case StepWhile:
			body = p.Subs[s.Body]
		}
	}
	require.Equal(t, []string{"w/hoisted/d1"}, hoisted)
	require.NotNil(t, body)
	var fused []string
	for _, s := range body.Steps {
		fused = append(append(fused, s.Inst), s.Fused...)
	}
	require.Contains(t, fused, "d2", "the variant product stays in the body")
	require.NotContains(t, fused, "d1")
}

// TestReductionLanes: on a GPU target a row reduction takes one
// invocation per output when short, a subgroup when it has 4 elements
// per subgroup lane, and a workgroup of 4 subgroups (shared memory, a
// barrier tree) when it has 4 per workgroup lane; every kernel passes
// spirv-val. CPU targets take no workgroups (barriers cost more than
// they save) unless asked, but subgroups.
func TestReductionLanes(t *testing.T) {
	s := desktop.SubgroupSize
	for _, c := range []struct {
		cols      int64
		want, cpu string
	}{{int64(s), "reduce_f32", "reduce_f32"}, {int64(4 * s), "reduce_f32_subgroup", "reduce_f32_subgroup"},
		{int64(16 * s), "reduce_f32_workgroup", "reduce_f32_subgroup"}, {4000, "reduce_f32_workgroup", "reduce_f32_subgroup"}} {
		text := fmt.Sprintf("HloModule r\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[6,%d] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[6] reduce(x, z), dimensions={1}, to_apply=add\n}", c.cols)
		m, err := hlo.Parse("r.hlo", text)
		require.NoError(t, err)
		p, err := Compile(m, desktop, Options{})
		require.NoError(t, err)
		k := p.Kernels[len(p.Kernels)-1]
		require.Equal(t, c.want, k.Name, "%d columns", c.cols)
		require.NoError(t, spirv.Validate(k.Words), k.Name)
		cpu := desktop
		cpu.CPU = true
		p, err = Compile(m, cpu, Options{})
		require.NoError(t, err)
		require.Equal(t, c.cpu, p.Kernels[len(p.Kernels)-1].Name, "%d columns on a CPU", c.cols)
	}
}

// TestGemmForms: a tiled dot stages workgroup blocks through shared
// memory on GPU targets and keeps register tiles on CPU targets (or
// with a workgroup too small); every kernel passes spirv-val.
// TestGemmShortRows: on a CPU device (subgroups of 8, tiles of 16 rows)
// a product of fewer rows takes a subgroup tile of its own rows up to a
// subgroup, else of two subgroups' (1, 5, 8 -> 1, 5, 8; 9, 15 -> 16);
// on a GPU one of at most a register tile's rows (8) keeps register
// tiles (of its rows rounded up to quads: vec4 reads) instead of 64-row
// blocks in shared memory; a vector times a matrix, either way round, is
// a product of one row. On the CPU a product of at most 4 rows reads
// kgen's shortRowBytes of each rhs row a tile: at 8 lanes 8 rhs quads a
// lane (tiles 256 columns wide), at 16 lanes 512 bytes (2 quads of f32,
// 4 of bf16, 8 of f8 codes), fewer where the tiles would be wider than
// the product or fewer than the cores. A valid kernel each.
func TestGemmShortRows(t *testing.T) {
	cpu := desktop
	cpu.CPU = true
	for _, c := range []struct {
		m        int
		cpu, gpu string
	}{
		{1, "gemm1x256_f32_lanes8_vec4", "gemm4x16_f32_vec4"}, {4, "gemm4x256_f32_lanes8_vec4", "gemm4x16_f32_vec4"},
		{5, "gemm5x32_f32_lanes8_vec4", "gemm8x16_f32_vec4"},
		{8, "gemm8x32_f32_lanes8_vec4", "gemm8x16_f32_vec4"}, {9, "gemm16x32_f32_lanes8_vec4", "gemm4x4_shared64x64_f32"},
		{15, "gemm16x32_f32_lanes8_vec4", "gemm4x4_shared64x64_f32"}, {40, "gemm16x32_f32_lanes8_vec4", "gemm4x4_shared64x64_f32"},
	} {
		m, err := hlo.Parse("g.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  a = f32[%[1]d,1024] parameter(0)\n  b = f32[1024,1024] parameter(1)\n  ROOT c = f32[%[1]d,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", c.m))
		require.NoError(t, err)
		for _, tc := range []struct {
			tg   Target
			want string
		}{{cpu, c.cpu}, {desktop, c.gpu}} {
			p, err := Compile(m, tc.tg, Options{})
			require.NoError(t, err)
			k := p.Kernels[0]
			require.Equal(t, tc.want, k.Name, "m = %d", c.m)
			require.NoError(t, spirv.Validate(k.Words), k.Name)
		}
	}
	// Vectors: x @ W and W @ x (as x^T W^T, W's rows the columns) are
	// products of one row; the second reads its rhs along k, a quad a
	// lane.
	for src, cpuWant := range map[string]string{
		"HloModule m\nENTRY e {\n  x = f32[1024] parameter(0)\n  w = f32[1024,1024] parameter(1)\n  ROOT c = f32[1024] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}": "gemm1x256_f32_lanes8_vec4",
		"HloModule m\nENTRY e {\n  w = f32[1024,1024] parameter(0)\n  x = f32[1024] parameter(1)\n  ROOT c = f32[1024] dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}": "gemm1x32_f32_lanes8_vec4",
	} {
		m, err := hlo.Parse("g.hlo", src)
		require.NoError(t, err)
		for tg, want := range map[*Target]string{&cpu: cpuWant, &desktop: "gemm4x16_f32_vec4"} {
			p, err := Compile(m, *tg, Options{})
			require.NoError(t, err)
			require.Equal(t, want, p.Kernels[0].Name, src)
			require.NoError(t, spirv.Validate(p.Kernels[0].Words), src)
		}
	}
	// Narrow products and many cores take fewer quads.
	cores := cpu
	cores.Cores = 4
	for _, c := range []struct {
		n    int
		tg   Target
		want string
	}{{128, cpu, "gemm1x128_f32_lanes8_vec4"}, {64, cpu, "gemm1x64_f32_lanes8_vec4"}, {1024, cores, "gemm1x256_f32_lanes8_vec4"}, {512, cores, "gemm1x128_f32_lanes8_vec4"}} {
		m, err := hlo.Parse("g.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  a = f32[1,16384] parameter(0)\n  b = f32[16384,%[1]d] parameter(1)\n  ROOT c = f32[1,%[1]d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", c.n))
		require.NoError(t, err)
		p, err := Compile(m, c.tg, Options{})
		require.NoError(t, err)
		require.Equal(t, c.want, p.Kernels[0].Name, "n = %d, %d cores", c.n, c.tg.Cores)
		require.NoError(t, spirv.Validate(p.Kernels[0].Words), c.want)
	}
	// 16 lanes (lavapipe at 512 bits) read 512 bytes of each rhs row.
	wide := LlvmpipeTarget
	wide.SubgroupSize = 16
	for _, c := range []struct {
		typ, want string
	}{{"f32", "gemm1x128_f32_lanes16_vec4"}, {"bf16", "gemm1x256_bf16_lanes16_vec4"}, {"f8e4m3fn", "gemm1x512_f32_f8e4m3fn_f32_lanes16_vec4"}} {
		out := c.typ
		if c.typ == "f8e4m3fn" {
			out = "f32"
		}
		src := fmt.Sprintf("HloModule m\nENTRY e {\n  a = %[2]s[1,4096] parameter(0)\n  b = %[1]s[4096,4096] parameter(1)\n  ROOT c = %[2]s[1,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}", c.typ, out)
		m, err := hlo.Parse("g.hlo", src)
		require.NoError(t, err)
		p, err := Compile(m, wide, Options{})
		require.NoError(t, err)
		require.Equal(t, c.want, p.Kernels[len(p.Kernels)-1].Name, src)
		require.NoError(t, spirv.Validate(p.Kernels[len(p.Kernels)-1].Words), c.want)
	}
}

// TestGemmF8CodesPlan: a short product of f8 parameters reads their
// codes in the tiled kernel (one kernel, named by the operands' types;
// four codes a fetch through a texel view), on a CPU and a GPU target;
// a long one converts them to f32 first
// (two conversions and the GEMM). Valid kernels each.
func TestGemmF8CodesPlan(t *testing.T) {
	cpu := desktop
	cpu.CPU = true
	texel := cpu
	texel.TexelLoads = true
	for _, c := range []struct {
		src             string
		cpu, texel, gpu string
		kernels         int
	}{
		{"HloModule m\nENTRY e {\n  x = f32[1,1024] parameter(0)\n  w = f8e4m3fn[1024,1024] parameter(1)\n  ROOT y = f32[1,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
			"gemm1x32_f32_f8e4m3fn_f32_lanes8", "gemm1x256_f32_f8e4m3fn_f32_lanes8_vec4", "gemm1x8_f32_f8e4m3fn_f32", 1},
		{"HloModule m\nENTRY e {\n  a = f8e4m3fn[256,1024] parameter(0)\n  b = f8e5m2[1024,256] parameter(1)\n  ROOT y = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
			"gemm16x32_f32_lanes8_vec4", "gemm16x32_f32_lanes8_vec4", "gemm4x4_shared64x64_f32", 3},
	} {
		m, err := hlo.Parse("g.hlo", c.src)
		require.NoError(t, err)
		for _, tc := range []struct {
			tg   Target
			want string
		}{{cpu, c.cpu}, {texel, c.texel}, {desktop, c.gpu}} {
			p, err := Compile(m, tc.tg, Options{})
			require.NoError(t, err)
			require.Len(t, p.Kernels, c.kernels, c.src)
			require.Equal(t, tc.want, p.Kernels[len(p.Kernels)-1].Name, c.src)
			for _, k := range p.Kernels {
				require.NoError(t, spirv.Validate(k.Words), k.Name)
			}
		}
	}
}

func TestGemmForms(t *testing.T) {
	m, err := hlo.Parse("g.hlo", "HloModule m\nENTRY e {\n  a = f32[2,200,300] parameter(0)\n  b = f32[2,300,148] parameter(1)\n  ROOT c = f32[2,200,148] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}")
	require.NoError(t, err)
	cpu, small := desktop, desktop
	cpu.CPU = true
	small.MaxWorkgroupSize = 128
	for _, c := range []struct {
		tg   Target
		opts Options
		want string
	}{{desktop, Options{}, "gemm4x4_shared64x64_f32"}, {cpu, Options{}, "gemm16x32_f32_lanes8_vec4"}, {cpu, Options{InvocationTiles: true}, "gemm8x16_f32_vec4"},
		{cpu, Options{SharedGemm: true}, "gemm4x4_shared64x64_f32"}, {small, Options{}, "gemm8x16_f32_vec4"}} {
		p, err := Compile(m, c.tg, c.opts)
		require.NoError(t, err)
		k := p.Kernels[0]
		require.Equal(t, c.want, k.Name)
		require.NoError(t, spirv.Validate(k.Words), k.Name)
		if c.want[4] == '4' {
			require.Equal(t, uint32(kgen.SharedThreads), k.LocalSize[0])
			require.Equal(t, [3]uint32{2 * 4 * 3, 1, 1}, p.Steps[0].Groups, "a workgroup per 64x64 block")
		}
		if strings.Contains(c.want, "lanes") {
			require.Equal(t, cpu.SubgroupSize, k.LocalSize[0], "a workgroup is the subgroup")
			require.Equal(t, [3]uint32{2 * 13 * 5, 1, 1}, p.Steps[0].Groups, "a subgroup per 16x32 tile")
		}
	}
	// On a CPU device with shaderInt64 the rhs read across columns (a
	// multiple of 8 of them) loads octets as u64vec4s in a tile per
	// invocation; not with Vec4Access, nor without shaderInt64, nor in a
	// subgroup's tile (a lane reads 4 columns).
	m, err = hlo.Parse("g.hlo", "HloModule m\nENTRY e {\n  a = f32[256,128] parameter(0)\n  b = f32[128,136] parameter(1)\n  ROOT c = f32[256,136] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}")
	require.NoError(t, err)
	noInt64, texel := cpu, cpu
	noInt64.Int64 = false
	texel.TexelLoads = true
	// With texel loads the operands are fetched through texel buffer
	// views instead (both read-only: two views), not as octets.
	for _, c := range []struct {
		tg    Target
		opts  Options
		wide  bool
		texel int
	}{
		{cpu, Options{InvocationTiles: true}, true, 0}, {cpu, Options{InvocationTiles: true, Vec4Access: true}, false, 0},
		{noInt64, Options{InvocationTiles: true}, false, 0}, {cpu, Options{}, false, 0},
		{desktop, Options{}, false, 0}, {texel, Options{}, false, 2}, {texel, Options{InvocationTiles: true}, false, 2},
		{texel, Options{StorageLoads: true, InvocationTiles: true}, true, 0},
	} {
		p, err := Compile(m, c.tg, c.opts)
		require.NoError(t, err)
		k := p.Kernels[0]
		require.NoError(t, spirv.Validate(k.Words), k.Name)
		require.Equal(t, c.wide, hasCapability(k.Words, spirv.CapabilityInt64), "%s %+v", k.Name, c.opts)
		require.Len(t, k.Texel, c.texel, "%s %+v", k.Name, c.opts)
		require.Equal(t, c.texel > 0, hasCapability(k.Words, spirv.CapabilitySampledBuffer), "%s %+v", k.Name, c.opts)
		if c.texel > 0 {
			require.Equal(t, []TexelView{{Binding: 0, Bytes: 16}, {Binding: 1, Bytes: 16}}, k.Texel, "vec4 views of the lhs and rhs bindings")
		}
	}
}

// hasCapability reports whether SPIR-V module words declare capability c.
func hasCapability(words []uint32, c spirv.Capability) bool {
	for i := 5; i < len(words); {
		n, op := words[i]>>16, words[i]&0xffff
		if n == 0 {
			return false
		}
		if op == 17 && n == 2 && words[i+1] == uint32(c) { // OpCapability
			return true
		}
		i += int(n)
	}
	return false
}

// TestBelowRowMax: exp's argument is known to be at most 0 (or NaN) only
// for v - broadcast(max of v) with the max's row broadcast back to each
// of its elements (mathlib's ExpNonPositive).
func TestBelowRowMax(t *testing.T) {
	const head = "HloModule m\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] %s(a, b)\n}\nENTRY e {\n  x = f32[8,8,8] parameter(0)\n  y = f32[8,8,8] parameter(1)\n  init = f32[] constant(%s)\n"
	cases := []struct {
		name, reducer, init, body string
		want                      bool
	}{
		{"last dim", "maximum", "-inf", "m = f32[8,8] reduce(x, init), dimensions={2}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={0,1}", true},
		{"middle dim", "maximum", "-inf", "m = f32[8,8] reduce(x, init), dimensions={1}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={0,2}", true},
		{"all dims, any init", "maximum", "0", "m = f32[] reduce(x, init), dimensions={0,1,2}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={}", true},
		{"min", "minimum", "inf", "m = f32[8,8] reduce(x, init), dimensions={2}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={0,1}", false},
		{"another tensor's max", "maximum", "-inf", "m = f32[8,8] reduce(y, init), dimensions={2}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={0,1}", false},
		{"another row's max", "maximum", "-inf", "m = f32[8,8] reduce(x, init), dimensions={2}, to_apply=mx\n  b = f32[8,8,8] broadcast(m), dimensions={0,2}", false},
	}
	for _, c := range cases {
		text := fmt.Sprintf(head, c.reducer, c.init) + "  " + c.body + "\n  d = f32[8,8,8] subtract(x, b)\n  ROOT e = f32[8,8,8] exponential(d)\n}"
		m, err := hlo.Parse(c.name, text)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, kgen.BelowRowMax(m.Entry.Root.Operands[0]), c.name)
		rev := strings.Replace(text, "subtract(x, b)", "subtract(b, x)", 1)
		m, err = hlo.Parse(c.name, rev)
		require.NoError(t, err, c.name)
		require.False(t, kgen.BelowRowMax(m.Entry.Root.Operands[0]), "%s: max - v", c.name)
	}
}

// TestDotKeepsItsTiles: a dot big enough for the tiled kernel is fused
// only into a kernel that stays a tiled GEMM (an epilogue at its own
// index, or a reshape); read through a transpose it keeps a kernel of
// its own (inside the transpose it would be computed per element).
func TestDotKeepsItsTiles(t *testing.T) {
	const head = "HloModule m\nENTRY e {\n  a = f32[4,96,128] parameter(0)\n  b = f32[4,128,80] parameter(1)\n  d = f32[4,96,80] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
	for _, c := range []struct {
		tail  string
		names []string
	}{
		{"  ROOT y = f32[4,96,80] negate(d)\n}", []string{"gemm8x16_f32_vec4_negate"}},
		{"  ROOT y = f32[1,4,96,80] reshape(d)\n}", []string{"gemm8x16_f32_vec4_reshape"}},
		{"  tr = f32[4,80,96] transpose(d), dimensions={0,2,1}\n  ROOT y = f16[4,80,96] convert(tr)\n}", []string{"gemm8x16_f32_vec4", "convert_f32_vec4"}},
	} {
		p, err := compileText(t, head+c.tail)
		require.NoError(t, err)
		var names []string
		for _, k := range p.Kernels {
			names = append(names, k.Name)
		}
		require.Equal(t, c.names, names, c.tail)
	}
}

// TestTopKChunks: a top-k of a long row sorts chunks of it on their own
// and then the chunks' first k, not the whole row: two sorts, no merge
// pass over runs as long as a chunk; a row with no divisor to cut by is
// sorted whole.
func TestTopKChunks(t *testing.T) {
	require.Equal(t, int64(1000), topKChunk(50000, 10))
	require.Equal(t, int64(1000), topKChunk(6000, 7))
	require.Zero(t, topKChunk(2000, 10), "short enough to sort whole")
	require.Zero(t, topKChunk(4099, 7), "a prime")
	require.Zero(t, topKChunk(6000, 100), "chunks of at least 16k")
	// f64: no rounds of 32-bit keys (selectRounds).
	p, err := compileText(t, "HloModule m\nENTRY e {\n  x = f64[2,6000] parameter(0)\n  ROOT t = (f64[2,7], s32[2,7]) topk(x), k=7, largest=true\n}")
	require.NoError(t, err)
	var sorts int
	for _, st := range p.Steps {
		switch name := p.Kernels[st.Kernel].Name; {
		case strings.HasPrefix(name, "sort_block"), strings.HasPrefix(name, "sort_slice"):
			sorts++ // a sort's first step
		case strings.HasPrefix(name, "sort_merge"):
			require.Less(t, st.Push[1], uint32(1000), "a merge of runs no longer than a chunk")
		}
	}
	require.Equal(t, 2, sorts, "two sorts")
}

// TestSiblingFusionCycles: multi-output fusion must not make the kernel
// graph cyclic. Once, t0 (read by the last block) was computed in d1's
// kernel because they share x, while t0's input s0 was computed in s2's
// kernel, which needs t1, which needs d1: the schedule then ran s1's
// kernel before d1's ("reads temporary d1 before any step writes it"),
// fused only. The module, and a family like it (blocks of a dot, a row
// sum, a broadcast, a subtract and a tanh, with fan-out), compile.
func TestSiblingFusionCycles(t *testing.T) {
	text, err := os.ReadFile("testdata/sibling_cycle.hlo")
	require.NoError(t, err)
	_, err = compileText(t, string(text))
	require.NoError(t, err)
	tg := desktop
	tg.CPU, tg.TexelLoads = true, true
	for seed := uint64(0); seed < 400; seed++ {
		src := blocksModule(seed, 0)
		m, err := hlo.Parse("blocks", src)
		require.NoError(t, err)
		_, err = Compile(m, tg, Options{})
		require.NoError(t, err, "seed %d:\n%s", seed, src)
	}
}

// TestSiblingGroups: kernels of one shape that share an input are
// computed in one kernel, however many, up to the device's bindings, in
// whichever order the schedule runs them (a chain of selects reads its
// latest value first: jit_mass_matrix_35's 90 one-element sines took 90
// dispatches when each kernel took one sibling at most); a value every
// reader of which is in that kernel gets no buffer; and a copy made to
// save memory is not computed with what it copies.
func TestSiblingGroups(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule m\nENTRY e {\n  p = f32[1024] parameter(0)\n")
	ops := []string{"sine", "cosine", "exponential", "tanh", "log", "sqrt"}
	for i, op := range ops {
		fmt.Fprintf(&b, "  x%d = f32[1024] %s(p)\n", i, op)
	}
	b.WriteString("  ROOT t = (f32[1024], f32[1024], f32[1024], f32[1024], f32[1024], f32[1024]) tuple(x0, x1, x2, x3, x4, x5)\n}\n")
	m, err := hlo.Parse("six", b.String())
	require.NoError(t, err)
	p, err := Compile(m, desktop, Options{})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1, "six siblings, one kernel")
	narrow := desktop
	narrow.MaxStorageBuffers = 4
	p, err = Compile(m, narrow, Options{})
	require.NoError(t, err)
	require.Len(t, p.Steps, 2, "three results and the input a kernel")
	for _, st := range p.Steps {
		require.LessOrEqual(t, len(st.Buffers), 4)
	}

	// Scalars read by one kernel, in the text's order and in its
	// reverse (the schedule runs them as their reader reads them).
	for _, reverse := range []bool{false, true} {
		var b strings.Builder
		b.WriteString("HloModule m\nENTRY e {\n  p = f32[16] parameter(0)\n")
		for i := range 10 {
			fmt.Fprintf(&b, "  l%d = f32[1] slice(p), slice={[%d:%d]}\n  r%d = f32[] reshape(l%d)\n  s%d = f32[] sine(r%d)\n  b%d = f32[4096] broadcast(s%d), dimensions={}\n", i, i, i+1, i, i, i, i, i, i)
		}
		acc := "b0"
		for i := 1; i < 10; i++ {
			if reverse {
				fmt.Fprintf(&b, "  a%d = f32[4096] multiply(b%d, %s)\n", i, i, acc)
			} else {
				fmt.Fprintf(&b, "  a%d = f32[4096] multiply(%s, b%d)\n", i, acc, i)
			}
			acc = fmt.Sprintf("a%d", i)
		}
		fmt.Fprintf(&b, "  ROOT t = f32[4096] add(%s, %s)\n}\n", acc, acc)
		m, err := hlo.Parse("scalars", b.String())
		require.NoError(t, err)
		p, err := Compile(m, desktop, Options{})
		require.NoError(t, err)
		require.Len(t, p.Steps, 2, "reverse %v: the sines, then their reader", reverse)
	}

	// A row sum two siblings read, neither of them the program's result
	// alone: computed in their kernel, stored nowhere.
	m, err = hlo.Parse("red", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  u = f32[64] parameter(1)
  v = f32[64] parameter(2)
  z = f32[] constant(0)
  red = f32[64] reduce(x, z), dimensions={1}, to_apply=add
  c1 = f32[64] add(red, u)
  c2 = f32[64] subtract(red, v)
  ROOT t = (f32[64], f32[64]) tuple(c1, c2)
}`)
	require.NoError(t, err)
	p, err = Compile(m, desktop, Options{})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1)
	for _, buf := range p.Buffers {
		require.NotEqual(t, "red", buf.Name, "red kept in registers")
	}
	require.Equal(t, 3+2, len(p.Steps[0].Buffers), "x, u, v in; c1, c2 out")

	// Independent kernels of one shape are one kernel too, unless that
	// would hold a large value longer: k1's input x (a sort's) would live
	// until k2's step, after the last of its other readers.
	owners := func(text string) map[string]string {
		m, err := hlo.Parse("independent", text)
		require.NoError(t, err)
		p, err := Compile(m, desktop, Options{})
		require.NoError(t, err)
		return stepOwners(p)
	}
	const independent = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[%[1]d] parameter(0)
  q = f32[%[1]d] parameter(1)
  x = f32[%[1]d] sort(p), dimensions={0}, to_apply=lt
  k1 = f32[%[1]d] exponential(x)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  k2 = f32[%[1]d] cosine(q)
  ROOT t = (f32[%[1]d], f32[], f32[%[1]d]) tuple(k1, r, k2)
}`
	owner := owners(fmt.Sprintf(independent, 64))
	require.Equal(t, owner["k1"], owner["k2"], "64 elements: one kernel")
	owner = owners(fmt.Sprintf(independent, 65536))
	require.NotEqual(t, owner["k1"], owner["k2"], "x held until k2: two kernels")
	const apart = "HloModule m\nENTRY e {\n  p = f32[%[1]d] parameter(0)\n  q = f32[%[1]d] parameter(1)\n  k1 = f32[%[1]d] exponential(p)\n  k2 = f32[%[1]d] cosine(q)\n  ROOT t = (f32[%[1]d], f32[%[1]d]) tuple(k1, k2)\n}\n"
	owner = owners(fmt.Sprintf(apart, 1<<16))
	require.Equal(t, owner["k1"], owner["k2"], "2^16 elements: one kernel")
	owner = owners(fmt.Sprintf(apart, 1<<17))
	require.NotEqual(t, owner["k1"], owner["k2"], "2^17 elements: a dispatch saved is little")
}

// blocksModule is a random chain of blocks d = dot(v, w), s = row sum of
// d, u = v' - broadcast(s), t = tanh(u), each block's v and v' drawn from
// the earlier blocks' results; of 2 to 7 rows, or of rows to rows + 16.
func blocksModule(seed uint64, rows int) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n")
	n, m, k := 2+rng.IntN(6), 2+rng.IntN(6), 2+rng.IntN(6)
	if rows > 0 {
		m = rows + rng.IntN(17)
	}
	fmt.Fprintf(&b, "  x = f32[%d,%d] parameter(0)\n  w = f32[%d,%d] parameter(1)\n  z = f32[] constant(0)\n", m, k, k, k)
	vals := []string{"x"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  d%d = f32[%d,%d] dot(%s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", i, m, k, vals[rng.IntN(len(vals))])
		fmt.Fprintf(&b, "  s%d = f32[%d] reduce(d%d, z), dimensions={1}, to_apply=add\n", i, m, i)
		fmt.Fprintf(&b, "  b%d = f32[%d,%d] broadcast(s%d), dimensions={0}\n", i, m, k, i)
		o := vals[rng.IntN(len(vals))]
		if rng.IntN(2) == 0 {
			o = fmt.Sprintf("d%d", i)
		}
		fmt.Fprintf(&b, "  u%d = f32[%d,%d] subtract(%s, b%d)\n", i, m, k, o, i)
		fmt.Fprintf(&b, "  t%d = f32[%d,%d] tanh(u%d)\n", i, m, k, i)
		vals = append(vals, fmt.Sprintf("t%d", i))
	}
	var outs, shapes []string
	for i := 0; i < 1+rng.IntN(3); i++ {
		outs = append(outs, vals[1+rng.IntN(len(vals)-1)])
		shapes = append(shapes, fmt.Sprintf("f32[%d,%d]", m, k))
	}
	fmt.Fprintf(&b, "  ROOT r = (%s) tuple(%s)\n}\n", strings.Join(shapes, ", "), strings.Join(outs, ", "))
	return b.String()
}

// TestRowFusionCycles: row fusion must not make the kernel graph cyclic
// either. In row_cycle.hlo a row kernel k2 taking the row sum r would
// read o, whose kernel reads r: r stays a kernel of its own (without the
// check, "reads temporary r before any step writes it"). And the blocks
// of TestSiblingFusionCycles over 64 to 80 rows, where lavapipe makes row
// kernels of them, compile.
func TestRowFusionCycles(t *testing.T) {
	text, err := os.ReadFile("testdata/row_cycle.hlo")
	require.NoError(t, err)
	m, err := hlo.Parse("row_cycle.hlo", string(text))
	require.NoError(t, err)
	p, err := Compile(m, LlvmpipeTarget, Options{})
	require.NoError(t, err)
	require.Contains(t, p.Plan, "r reduce; inline z")
	require.Contains(t, p.Plan, "k2 elementwise; inline d br ot")
	rows := 0
	for seed := uint64(0); seed < 200; seed++ {
		src := blocksModule(seed, 64)
		m, err := hlo.Parse("blocks", src)
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, "seed %d:\n%s", seed, src)
		for _, k := range p.Kernels {
			if strings.HasPrefix(k.Name, "row_") {
				rows++
			}
		}
	}
	require.Greater(t, rows, 100, "row kernels among the blocks")
}

// TestMixedPrecisionReducer: a reducer over floats of another width than
// its operand (the verifier accepts it, as XLA does) is refused by name:
// its kernel once passed f64 registers to f32 code and the driver failed
// to create the pipeline (VK_ERROR_UNKNOWN).
func TestMixedPrecisionReducer(t *testing.T) {
	_, err := compileText(t, `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f64[2,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(x, z), dimensions={0}, to_apply=add
}`)
	require.ErrorContains(t, err, "test.hlo:10:3: r (reduce): reduce's computation add takes f32 as parameter 1 where the operand is f64")
	require.ErrorContains(t, err, "not supported on the device yet")
}

// TestLongSortPlan: a slice of 5000 is sorted in blocks of 8, then by
// 10 merge passes (run widths 8 to 4096) that move the values along:
// three kernels (the blocks read the operand, the last pass writes the
// result, the others scratch copies), each pass writing one buffer;
// a merge pass's chunk is 2w up to 128 places, below a tree of
// log2(2w / chunk) levels of boundaries.
func TestLongSortPlan(t *testing.T) {
	prog, err := compileText(t, "HloModule m\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\nENTRY e {\n  x = f32[5000] parameter(0)\n  ROOT s = f32[5000] sort(x), dimensions={0}, to_apply=lt\n}")
	require.NoError(t, err)
	require.Len(t, prog.Steps, 11)
	require.Len(t, prog.Kernels, 3)
	require.Equal(t, []uint32{625}, prog.Steps[0].Push, "blocks")
	for i, st := range prog.Steps[1:] {
		w := uint32(8) << i
		chunk := min(128, 2*w)
		levels := uint32(bits.Len32(2*w/chunk) - 1)
		require.Equal(t, []uint32{(5000 + chunk - 1) / chunk, w, levels, chunk}, st.Push, "pass %d", i)
	}
	for _, st := range prog.Steps {
		require.Equal(t, 1, st.Writes)
	}
	for _, k := range prog.Kernels {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestSortKeyBlocks: a comparator of one operand's values through one
// expression of each, in a total order, has keys (kgen/sortkey.go), and
// its blocks are sorted 16 at a time, its runs merged four at a time;
// any other comparator's blocks 8 at a time, its runs two at a time. A
// slice of 5000: 313 blocks or 625.
func TestSortKeyBlocks(t *testing.T) {
	for _, c := range []struct {
		name, ty, cmp string
		keyed         bool
	}{
		{"total order", "f32", "ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER", true},
		{"descending", "bf16", "ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER", true},
		{"signed", "s32", "ROOT r = pred[] compare(a, b), direction=LT", true},
		{"unsigned", "u16", "ROOT r = pred[] compare(a, b), direction=GT", true},
		{"an expression of each", "f32", "na = f32[] negate(a)\n  nb = f32[] negate(b)\n  k = f32[] constant(2)\n  ka = f32[] multiply(na, k)\n  kb = f32[] multiply(nb, k)\n  ROOT r = pred[] compare(ka, kb), direction=LT, type=TOTALORDER", true},
		{"NaNs unordered", "f32", "ROOT r = pred[] compare(a, b), direction=LT", false},
		{"not strict", "s32", "ROOT r = pred[] compare(a, b), direction=LE", false},
		{"f16 floats", "f16", "ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER", false},
		{"64 bits", "s64", "ROOT r = pred[] compare(a, b), direction=LT", false},
		{"unsigned order of a signed type", "s32", "ROOT r = pred[] compare(a, b), direction=LT, type=UNSIGNED", false},
		{"different expressions", "f32", "nb = f32[] negate(b)\n  ROOT r = pred[] compare(a, nb), direction=LT, type=TOTALORDER", false},
		{"both values on one side", "s32", "s = s32[] add(a, b)\n  ROOT r = pred[] compare(s, b), direction=LT", false},
		{"the other operand", "s32", "ROOT r = pred[] compare(a, j), direction=LT", false},
		{"not a comparison", "s32", "ROOT r = pred[] constant(false)", false},
	} {
		src := fmt.Sprintf(`HloModule m
cmp {
  a = %[1]s[] parameter(0)
  b = %[1]s[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  %[2]s
}
ENTRY e {
  x = %[1]s[5000] parameter(0)
  y = s32[5000] iota(), iota_dimension=0
  ROOT s = (%[1]s[5000], s32[5000]) sort(x, y), dimensions={0}, is_stable=true, to_apply=cmp
}`, c.ty, c.cmp)
		prog, err := compileText(t, src)
		require.NoError(t, err, c.name)
		blocks := uint32(625)
		if c.keyed {
			blocks = 313
		}
		var push []uint32
		merges, ways := 0, 2
		for _, st := range prog.Steps {
			name := prog.Kernels[st.Kernel].Name
			switch {
			case st.Kind != StepDispatch:
			case strings.HasPrefix(name, "sort_block"):
				push = st.Push
			case strings.HasPrefix(name, "sort_merge4"):
				merges, ways = merges+1, 4
			case strings.HasPrefix(name, "sort_merge"):
				merges++
			}
		}
		require.Equal(t, []uint32{blocks}, push, c.name)
		// Runs of 16 merged four at a time past 5000 (5 passes), or of
		// 8 two at a time (10).
		if c.keyed {
			require.Equal(t, [2]int{4, 5}, [2]int{ways, merges}, c.name)
		} else {
			require.Equal(t, [2]int{2, 10}, [2]int{ways, merges}, c.name)
		}
		for _, k := range prog.Kernels {
			require.NoError(t, spirv.Validate(k.Words), "%s: %s", c.name, k.Name)
		}
	}
}

// TestSortKeep: a top-k's sort (keys, read only through slices of its
// first k) merges each group's first k places: its last pass writes the
// slices' first 10 places, one invocation each, where a sort read whole
// writes all 6000 (47 chunks of 128 places a slice).
func TestSortKeep(t *testing.T) {
	last := func(src string) []uint32 {
		p, err := compileText(t, src)
		require.NoError(t, err)
		var push []uint32
		for _, st := range p.Steps {
			if st.Kind == StepDispatch && strings.HasPrefix(p.Kernels[st.Kernel].Name, "sort_merge4") {
				push = st.Push
			}
		}
		return push
	}
	topk := "HloModule m\nENTRY e {\n  x = f32[2,6000] parameter(0)\n  ROOT t = (f32[2,10], s32[2,10]) topk(x), k=10, largest=true\n}"
	require.Equal(t, []uint32{2, 4096, 128}, last(topk))
	whole := "HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER\n}\nENTRY e {\n  x = f32[2,6000] parameter(0)\n  s = f32[2,6000] sort(x), dimensions={1}, to_apply=cmp\n  a = f32[2,10] slice(s), slice={[0:2], [0:10]}\n  ROOT t = (f32[2,10], f32[2,6000]) tuple(a, s)\n}"
	require.Equal(t, []uint32{94, 4096, 128}, last(whole))
}

// checkMemoryPlan requires what memory planning promises of p and its
// sub-programs: temporaries whose lives overlap never share bytes, every
// offset is aligned, and the arena is no smaller than the liveness bound.
func checkMemoryPlan(t *testing.T, name string, p *Program, align int64) {
	t.Helper()
	lr := liveRanges(p)
	for a := range lr {
		ba := p.Buffers[a]
		if ba.InArena() {
			require.Zero(t, ba.Offset%align, "%s: %s offset %d", name, ba.Name, ba.Offset)
			require.LessOrEqual(t, ba.Offset+PaddedSize(ba.Size), p.ArenaSize, "%s: %s", name, ba.Name)
		} else {
			require.NotZero(t, ba.Alias, "%s: %s is neither in the arena nor in a donated parameter's memory", name, ba.Name)
			require.Equal(t, a+1, p.Buffers[ba.Alias-1].Alias, "%s: %s's alias names it back", name, ba.Name)
		}
		for b := range lr {
			if a >= b || !p.span(a).overlaps(p.span(b)) {
				continue
			}
			require.False(t, lr[a].overlaps(lr[b]), "%s: %s and %s are live together and share memory", name, ba.Name, p.Buffers[b].Name)
			if lr[a].adjacent(lr[b]) || lr[b].adjacent(lr[a]) {
				require.Equal(t, ba.Offset, p.Buffers[b].Offset, "%s: %s updated in place into %s must line up element for element", name, p.Buffers[b].Name, ba.Name)
			}
		}
	}
	require.GreaterOrEqual(t, p.ArenaSize, p.LiveBound, name)
	for i, sub := range p.Subs {
		checkMemoryPlan(t, fmt.Sprintf("%s/sub%d", name, i), sub, align)
	}
}

func TestWideConcatenateSplits(t *testing.T) {
	src := "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[140] concatenate(" + strings.TrimSuffix(strings.Repeat("p, ", 70), ", ") + "), dimensions={0}\n}"
	m, err := hlo.Parse("wide.hlo", src)
	require.NoError(t, err)
	prog, err := Compile(m, DefaultTarget, Options{}) // 4 storage buffers per kernel
	require.NoError(t, err)
	for _, k := range prog.Kernels {
		require.LessOrEqual(t, k.Bindings, 4)
	}
	require.Len(t, m.Entry.Root.Operands, 70, "the user's module is not modified")
	require.Equal(t, "c", prog.Buffers[prog.Outputs[0]].Name)
}

// TestKernelsSharedAcrossNames: two updates that compute the same ops
// on different values (an optimizer's, one a parameter) generate code
// that differs only in its buffers' debug names: one kernel serves
// both steps (wordsKey), and each step binds its own buffers. (On a
// device of four bindings: where more are bound, the two are one
// kernel, siblings of one shape.)
func TestKernelsSharedAcrossNames(t *testing.T) {
	m, err := hlo.Parse("two.hlo", `HloModule two
ENTRY e {
  w1 = f32[64,32] parameter(0)
  g1 = f32[64,32] parameter(1)
  w2 = f32[64,32] parameter(2)
  g2 = f32[64,32] parameter(3)
  lr = f32[] constant(0.1)
  lrb = f32[64,32] broadcast(lr), dimensions={}
  s1 = f32[64,32] multiply(g1, lrb)
  u1 = f32[64,32] subtract(w1, s1)
  s2 = f32[64,32] multiply(g2, lrb)
  u2 = f32[64,32] subtract(w2, s2)
  ROOT out = (f32[64,32], f32[64,32]) tuple(u1, u2)
}`)
	require.NoError(t, err)
	tg := desktop
	tg.MaxStorageBuffers = 4
	p, err := Compile(m, tg, Options{})
	require.NoError(t, err)
	require.Len(t, p.Kernels, 1, "one kernel: %v", kernelNames(p))
	var bufs [][]int
	for _, st := range p.Steps {
		if st.Kind.IsDispatch() {
			require.Equal(t, 0, st.Kernel)
			bufs = append(bufs, st.Buffers)
		}
	}
	require.Len(t, bufs, 2)
	require.NotEqual(t, bufs[0], bufs[1], "each step its own buffers")
	require.NoError(t, spirv.Validate(p.Kernels[0].Words))
}

func kernelNames(p *Program) []string {
	var names []string
	for _, k := range p.Kernels {
		names = append(names, k.Name)
	}
	return names
}

// TestSplitPartialsStayKernels: a long column sum is split
// (splitMajorReduce: its rows cut into chunks in place) into partial
// sums over chunks and their reduction, and
// the partials stay a kernel of their own, one invocation per partial,
// rather than being fused back into the final reduction's fewer
// invocations; a reduction feeding one of the same size still fuses.
func TestSplitPartialsStayKernels(t *testing.T) {
	m, err := hlo.Parse("colsum.hlo", `HloModule colsum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  g = f32[8192,64] parameter(0)
  z = f32[] constant(0)
  c = f32[64] reduce(g, z), dimensions={0}, to_apply=add
  r = f32[1,64] reshape(c)
  ROOT o = f32[64] reduce(r, z), dimensions={0}, to_apply=add
}`)
	require.NoError(t, err)
	p, err := Compile(m, desktop, Options{})
	require.NoError(t, err)
	var steps []string
	for _, st := range p.Steps {
		if st.Kind.IsDispatch() {
			steps = append(steps, st.Inst)
			if st.Inst == "c/split/partial0" {
				// splitMajorReduce: the rows split in place, no transpose.
				require.NotContains(t, st.Fused, "c/split/transpose0")
				require.Contains(t, st.Fused, "c/split/chunks0")
			}
		}
	}
	require.Equal(t, []string{"c/split/partial0", "o"}, steps, "the partials, then the final sum with the trivial one fused")
	for _, k := range p.Kernels {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestHeavyWorkgroupsSpread: on a CPU device, a heavy kernel of few
// invocations (the MLP's [256,10] logits: 32 invocations of 8x12 tiles)
// is split into workgroups for every core, where one workgroup of 64
// would run on one thread; a light kernel of few invocations keeps the
// usual size (each size is a kernel of its own), and a GPU's are
// unchanged.
func TestHeavyWorkgroupsSpread(t *testing.T) {
	m, err := hlo.Parse("g.hlo", "HloModule m\nENTRY e {\n  a = f32[256,512] parameter(0)\n  b = f32[512,10] parameter(1)\n  c = f32[256,10] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  d = f32[6] parameter(2)\n  e = f32[6] negate(d)\n  ROOT t = (f32[256,10], f32[6]) tuple(c, e)\n}")
	require.NoError(t, err)
	for _, tg := range []Target{LlvmpipeTarget, desktop} {
		p, err := Compile(m, tg, Options{})
		require.NoError(t, err)
		for _, s := range p.Steps {
			k := p.Kernels[s.Kernel]
			switch {
			case strings.HasPrefix(k.Name, "gemm") && tg.CPU:
				require.Equal(t, "gemm8x12_f32_vec4", k.Name)
				require.Equal(t, uint32(8), k.LocalSize[0], "32 invocations in workgroups of a subgroup")
				require.Equal(t, uint32(2*tg.Cores), s.Groups[0])
			case strings.HasPrefix(k.Name, "gemm"): // a GPU's block tile
				require.Equal(t, uint32(kgen.SharedThreads), k.LocalSize[0])
			default:
				require.Equal(t, "negate_f32", k.Name)
				require.Equal(t, kgen.ElementwiseLocalSize(tg), k.LocalSize[0])
			}
		}
	}
}

// TestFusionCountsSites: a value that several ops of one kernel read at
// the same element is computed there once (kgen.compute keeps it), so
// fusion counts it once: a dense layer's GELU (x + b read four times)
// is the GEMM's epilogue, one kernel where it was two, and a recurrence
// x' = x*x + x of 40 steps is one kernel, its 2^40 paths walked once
// each value (loopIters, the row and sibling checks).
func TestFusionCountsSites(t *testing.T) {
	gelu := `HloModule gelu
ENTRY main {
  x = f32[64,128] parameter(0)
  w = f32[128,128] parameter(1)
  b = f32[128] parameter(2)
  d = f32[64,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,128] broadcast(b), dimensions={1}
  h = f32[64,128] add(d, bb)
  c0 = f32[] constant(0.5)
  half = f32[64,128] broadcast(c0), dimensions={}
  c1 = f32[] constant(0.044715)
  k1 = f32[64,128] broadcast(c1), dimensions={}
  one = f32[] constant(1)
  ones = f32[64,128] broadcast(one), dimensions={}
  h3 = f32[64,128] multiply(h, h)
  cube = f32[64,128] multiply(h3, h)
  t1 = f32[64,128] multiply(cube, k1)
  t2 = f32[64,128] add(h, t1)
  t4 = f32[64,128] tanh(t2)
  t5 = f32[64,128] add(t4, ones)
  t6 = f32[64,128] multiply(h, half)
  ROOT r = f32[64,128] multiply(t6, t5)
}
`
	p, err := compileText(t, gelu)
	require.NoError(t, err)
	require.Len(t, p.Kernels, 1, "dense + GELU")
	require.True(t, strings.HasPrefix(p.Kernels[0].Name, "gemm"), p.Kernels[0].Name)

	var b strings.Builder
	b.WriteString("HloModule rec\nENTRY main {\n  x0 = f32[1024] parameter(0)\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "  m%d = f32[1024] multiply(x%d, x%d)\n", i, i-1, i-1)
		root := ""
		if i == 40 {
			root = "ROOT "
		}
		fmt.Fprintf(&b, "  %sx%d = f32[1024] add(m%d, x%d)\n", root, i, i, i-1)
	}
	b.WriteString("}\n")
	p, err = compileText(t, b.String())
	require.NoError(t, err)
	require.Len(t, p.Kernels, 1, "the recurrence")
	for _, k := range p.Kernels {
		require.NoError(t, spirv.Validate(k.Words), k.Name)
	}
}

// TestFuseScalars: a scalar elementwise kernel rides in a later kernel
// of more elements (its step names it), but not one whose fused
// producers loop (a reduction's fold would run in invocation 0 alone).
// (Two scalars are siblings of one shape: one kernel, with or without a
// loop; each module has one.)
func TestFuseScalars(t *testing.T) {
	const text = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[3000] parameter(0)
  s = f32[] parameter(1)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  two = f32[] constant(2)
  y = f32[] multiply(r, two)
  s2 = f32[] multiply(s, s)
  e = f32[3000] exponential(x)
  f = f32[3000] add(e, x)
  ROOT t = (f32[], f32[3000]) tuple(%s, f)
}`
	for _, c := range []struct{ scalar, owner, why string }{
		{"s2", "f", "s2 rides in f's kernel"},
		{"y", "y", "y folds a reduction: a step of its own"},
	} {
		p, err := compileText(t, fmt.Sprintf(text, c.scalar))
		require.NoError(t, err)
		require.Equal(t, c.owner, stepOwners(p)[c.scalar], c.why)
	}
}

// stepOwners names, for each instruction a step computes, the step's.
func stepOwners(p *Program) map[string]string {
	owner := map[string]string{}
	for _, st := range p.Steps {
		owner[st.Inst] = st.Inst
		for _, f := range st.Fused {
			owner[f] = st.Inst
		}
	}
	return owner
}

// TestConcatenateKeepsLoops: a concatenate's kernel computes every
// operand at each element and selects one, so convolutions stacked by
// one (the phases of a transposed convolution) run as kernels of their
// own, while the concatenate itself, of cheap operands now, fuses into
// the transpose that interleaves them.
func TestConcatenateKeepsLoops(t *testing.T) {
	m, err := hlo.Parse("stack.hlo", `HloModule stack
ENTRY e {
  x = f32[2,8,8,64] parameter(0)
  k = f32[3,3,1,64] parameter(1)
  a = f32[2,8,8,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64
  n = f32[2,8,8,64] negate(x)
  b = f32[2,8,8,64] convolution(n, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=64
  ra = f32[1,2,8,8,64] reshape(a)
  rb = f32[1,2,8,8,64] reshape(b)
  s = f32[2,2,8,8,64] concatenate(ra, rb), dimensions={0}
  ROOT t = f32[2,8,8,2,64] transpose(s), dimensions={1,2,3,0,4}
}`)
	require.NoError(t, err)
	p, err := Compile(m, LlvmpipeTarget, Options{})
	require.NoError(t, err)
	fused := map[string]string{}
	for _, st := range p.Steps {
		if st.Kind.IsDispatch() {
			fused[st.Inst] = strings.Join(st.Fused, " ")
		}
	}
	inT := strings.Fields(fused["t"])
	require.NotContains(t, inT, "a", fused)
	require.NotContains(t, inT, "b", fused)
	require.Contains(t, inT, "s", "the concatenate is computed where the transpose reads it")
}

// pointScatterChain is an HLO module that sets n elements of a [35,35]
// matrix one scatter at a time, x.at[i, j].set(v) as JAX writes it,
// each value a scalar parameter of its own.
func pointScatterChain(n int) string {
	var b strings.Builder
	b.WriteString("HloModule chain\nset {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\nENTRY e {\n")
	b.WriteString("  z = f32[] constant(0)\n  m0 = f32[35,35] broadcast(z), dimensions={}\n")
	for k := range n {
		fmt.Fprintf(&b, "  v%d = f32[] parameter(%d)\n  i%d = s32[2] constant({%d, %d})\n", k, k, k, k%35, 3*k%35)
		fmt.Fprintf(&b, "  m%d = f32[35,35] scatter(m%d, i%d, v%d), update_window_dims={}, inserted_window_dims={0,1}, "+
			"scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=set\n", k+1, k, k, k)
	}
	fmt.Fprintf(&b, "  ROOT r = f32[35,35] negate(m%d)\n}\n", n)
	return b.String()
}

// TestPointScatterChain: a chain of scatters of one element at constant
// indices becomes selects (pointScatter) that fuse into kernels of as
// many links as the device binds inputs (cutCluster): 60 links in 2 or 3
// kernels on lavapipe, which binds 32 buffers; each scatter was a kernel
// of its own, and a cluster past the limit, unfused whole, made every
// link's iota, compare and broadcast one (182 dispatches).
func TestPointScatterChain(t *testing.T) {
	m, err := hlo.Parse("chain", pointScatterChain(60))
	require.NoError(t, err)
	p, err := Compile(m, LlvmpipeTarget, Options{})
	require.NoError(t, err)
	var plan strings.Builder
	require.NoError(t, p.Describe(&plan))
	require.LessOrEqual(t, len(p.Steps), 3, plan.String())
	for _, k := range p.Kernels {
		require.NotContains(t, k.Name, "scatter")
	}
}

// TestBatchScalars: independent scalar sines of one depth (a robot's
// joint angles) are one sine over the vector of their operands, each
// scalar a slice of it, so the function's code is in one kernel; a
// sine of a sine is at another depth and joins a group of its own
// (here too small), as do the cosines (fewer than batchMin), and so do
// sines of another type. Unfused, nothing is batched. The program's
// SPIR-V is less than its sines' code unbatched.
func TestBatchScalars(t *testing.T) {
	var b strings.Builder
	b.WriteString("HloModule joints\nENTRY e {\n  q = f32[8] parameter(0)\n  d = f64[4] parameter(1)\n")
	var outs, shapes []string
	for i := range 8 {
		fmt.Fprintf(&b, "  s%d = f32[1] slice(q), slice={[%d:%d]}\n  x%d = f32[] reshape(s%d)\n  sin%d = f32[] sine(x%d)\n", i, i, i+1, i, i, i, i)
		outs, shapes = append(outs, fmt.Sprintf("sin%d", i)), append(shapes, "f32[]")
	}
	for i := range 4 {
		fmt.Fprintf(&b, "  t%d = f64[1] slice(d), slice={[%d:%d]}\n  y%d = f64[] reshape(t%d)\n  dsin%d = f64[] sine(y%d)\n", i, i, i+1, i, i, i, i)
		outs, shapes = append(outs, fmt.Sprintf("dsin%d", i)), append(shapes, "f64[]")
	}
	b.WriteString("  cos0 = f32[] cosine(x0)\n  cos1 = f32[] cosine(x1)\n  sinsin = f32[] sine(sin0)\n")
	outs, shapes = append(outs, "cos0", "cos1", "sinsin"), append(shapes, "f32[]", "f32[]", "f32[]")
	fmt.Fprintf(&b, "  ROOT t = (%s) tuple(%s)\n}\n", strings.Join(shapes, ", "), strings.Join(outs, ", "))
	m, err := hlo.Parse("joints.hlo", b.String())
	require.NoError(t, err)
	words := func(p *Program) int {
		n := 0
		for _, k := range p.Kernels {
			n += len(k.Words)
		}
		return n
	}
	fused, err := Compile(m, kgen.LlvmpipeTarget, Options{})
	require.NoError(t, err)
	var plan strings.Builder
	require.NoError(t, fused.Describe(&plan))
	require.Regexp(t, `plan sin0\.batch1\.vector0 elementwise`, plan.String(), "the eight f32 sines, one vector")
	require.Regexp(t, `plan dsin0\.batch2\.vector0 elementwise`, plan.String(), "the four f64 sines, another")
	require.NotContains(t, plan.String(), "batch3", "two cosines and one sine of a sine: no batch")
	vectors := 0
	for _, s := range fused.Steps {
		if strings.Contains(s.Inst, ".vector") {
			vectors++
		}
	}
	require.Equal(t, 2, vectors, "a kernel for each vector\n%s", plan.String())
	unfused, err := Compile(m, kgen.LlvmpipeTarget, Options{NoFuse: true})
	require.NoError(t, err)
	plan.Reset()
	require.NoError(t, unfused.Describe(&plan))
	require.NotContains(t, plan.String(), ".batch")

	// Unbatched, each sine's code would be in the program once at least.
	sines := 8*kgen.LibraryWords(hlo.OpSin, hlo.F32) + 4*kgen.LibraryWords(hlo.OpSin, hlo.F64)
	t.Logf("SPIR-V words: %d, the sines alone unbatched %d", words(fused), sines)
	require.Less(t, words(fused), sines)
}
