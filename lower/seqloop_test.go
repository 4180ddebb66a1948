package lower

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/shared"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

// stepKinds counts a program's steps by kind, sub-programs included.
func stepKinds(p *Program) map[StepKind]int {
	n := map[StepKind]int{}
	for _, s := range p.Steps {
		n[s.Kind]++
	}
	for _, sub := range p.Subs {
		for k, c := range stepKinds(sub) {
			n[k] += c
		}
	}
	return n
}

// compileFile parses an HLO file and compiles it for tg.
func compileFile(t *testing.T, file string, tg kgen.Target, opts Options) *Program {
	t.Helper()
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	m, err := hlo.Parse(file, string(text))
	require.NoError(t, err)
	p, err := Compile(m, tg, opts)
	require.NoError(t, err, file)
	return p
}

// TestDeviceLoopPlans compiles the device loops of testdata/loops (one
// of them over a complex array) and the corpus's two long loops
// (without a device): each becomes one device loop step whose kernel
// passes spirv-val, with no host loop left, and with HostLoops each is
// a host loop again. A loop computing
// on a large array stays a host loop, as do one whose kernel would be
// too large to compile quickly and one whose kernel would bind more
// buffers than the device allows.
func TestDeviceLoopPlans(t *testing.T) {
	files, err := filepath.Glob("testdata/loops/*.hlo")
	require.NoError(t, err)
	files = append(files, "testdata/long_inner_loop.hlo")
	// many_leaves needs more bindings than this target's 16 even with
	// CopyInit; TestCopyInit compiles it for lavapipe.
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "many_leaves.hlo") })
	requireDeviceLoops(t, files)
	t.Run("corpus", func(t *testing.T) {
		corpus := shared.Dir(t, "hlo-corpus")
		requireDeviceLoops(t, []string{
			filepath.Join(corpus, "jax/jit_compute_while_b380442861.hlo"),
			filepath.Join(corpus, "jax/jit_f_in_place_dynamic_update_slice.hlo")})
	})

	p, err := compileText(t, `HloModule big
cond {
  p = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[1000] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[1000] add(x, x)
  ROOT t = (s32[], f32[1000]) tuple(j, y)
}
ENTRY main {
  x = f32[1000] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[1000]) tuple(z, x)
  ROOT w = (s32[], f32[1000]) while(t), condition=cond, body=body
}`)
	require.NoError(t, err)
	kinds := stepKinds(p)
	require.Equal(t, 1, kinds[StepWhile])
	require.Zero(t, kinds[StepLoop])

	p = compileFile(t, "testdata/sines_loop.hlo", desktop, Options{})
	require.Zero(t, stepKinds(p)[StepLoop], "a kernel too large to compile quickly")

	// 9 bindings, 5 with its 4 small leaves copied into their results
	// first (CopyInit): a device loop where 8 are allowed, not where 4.
	text, err := os.ReadFile("testdata/loops/narrow_state.hlo")
	require.NoError(t, err)
	for _, c := range []struct {
		max        uint32
		loop, host int
	}{{8, 1, 0}, {4, 0, 1}} {
		m, err := hlo.Parse("narrow_state", string(text))
		require.NoError(t, err)
		tg := desktop
		tg.MaxStorageBuffers = c.max
		p, err = Compile(m, tg, Options{})
		require.NoError(t, err)
		kinds = stepKinds(p)
		require.Equal(t, c.host, kinds[StepWhile], "%d bindings allowed", c.max)
		require.Equal(t, c.loop, kinds[StepLoop], "%d bindings allowed", c.max)
	}
}

// TestTripCount counts the counted loops (hlo.CountedLoop) whose counter
// starts at a constant, for unrolling in device loops.
func TestTripCount(t *testing.T) {
	loop := func(start, limit, step, dir string) string {
		return `HloModule t
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(` + limit + `)
  ROOT c = pred[] compare(i, n), direction=` + dir + `
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(` + step + `)
  j = s32[] add(one, i)
  ROOT t = (s32[], f32[]) tuple(j, x)
}
ENTRY main {
  x = f32[] parameter(0)
  z = s32[] constant(` + start + `)
  t = (s32[], f32[]) tuple(z, x)
  ROOT w = (s32[], f32[]) while(t), condition=cond, body=body
}`
	}
	for _, c := range []struct {
		start, limit, step, dir string
		n                       int64
		ok                      bool
	}{
		{"0", "5", "1", "LT", 5, true},
		{"-3", "4", "1", "LT", 7, true},
		{"9", "4", "1", "LT", 0, true},
		{"0", "5", "2", "LT", 3, true},
		{"0", "5", "1", "LE", 6, true},
		{"0", "5", "-1", "LT", 0, false}, // runs until the counter wraps around
	} {
		m, err := hlo.Parse("t", loop(c.start, c.limit, c.step, c.dir))
		require.NoError(t, err)
		w := m.Entry.Root
		cond, body := w.WhileComputations()
		n, ok := kgen.TripCount(w, cond, body)
		require.Equal(t, c.ok, ok, "%+v", c)
		require.Equal(t, c.n, n, "%+v", c)
	}
}

// TestCopyInit: a loop whose state has more small leaves than lavapipe
// has bindings for an initial value and a result each (38 of 32) copies
// the small leaves into their results before the loop and binds them
// once (20); with fewer bindings than that (16) it stays a host loop,
// saying why.
func TestCopyInit(t *testing.T) {
	p := compileFile(t, "testdata/loops/many_leaves.hlo", LlvmpipeTarget, Options{})
	require.Equal(t, 1, stepKinds(p)[StepLoop])
	var copies int
	for _, s := range p.Steps {
		switch {
		case s.Kind == StepLoop:
			require.Len(t, s.Buffers, 20, "18 small leaves once, the big one, the flag")
			require.NoError(t, spirv.Validate(p.Kernels[s.Kernel].Words))
		case s.Kind == StepDispatch:
			copies++
		}
	}
	require.Equal(t, 19, copies, "each small leaf and the updated big one copied into its result")
	require.Len(t, p.Kernels, 3, "the copies of one type share a kernel: s32, f32, and the loop")
	p = compileFile(t, "testdata/loops/many_leaves.hlo", desktop, Options{})
	require.Equal(t, 1, stepKinds(p)[StepWhile])
	var plan strings.Builder
	p.Describe(&plan)
	require.Contains(t, plan.String(), "20 bindings, beyond the device's 16")
}

// TestComputedReads: a device loop reads its small state at computed
// indices by selects among the elements where an op's reads take few
// enough, and through a function array otherwise (kgen's array), and
// moves dynamic slices' and updates' windows by the starts' bits
// (seqwindow.go), reading no array: the loop of
// testdata/loops/computed_reads.hlo loads at computed indices from
// exactly two arrays, of 64 f32 elements and of 32 f64 ones, its two
// gathers over the bound; its two other gathers (f32 and s32) select,
// and its dynamic slices and updates (f32, f64 and pred, one and two
// dimensions) shift.
func TestComputedReads(t *testing.T) {
	p := compileFile(t, "testdata/loops/computed_reads.hlo", LlvmpipeTarget, Options{})
	require.Equal(t, 1, stepKinds(p)[StepLoop])
	var dis string
	for _, s := range p.Steps {
		if s.Kind == StepLoop {
			require.NoError(t, spirv.Validate(p.Kernels[s.Kernel].Words))
			var err error
			dis, err = spirv.Disassemble(p.Kernels[s.Kernel].Words)
			require.NoError(t, err)
		}
	}
	// Each definition's words after "=", by result id, in order.
	defs := map[string][]string{}
	var order []string
	for _, line := range strings.Split(dis, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == "=" {
			defs[f[0]] = f[2:]
			order = append(order, f[0])
		}
	}
	// The arrays (function variables) that a load reads at an index
	// that is not a constant, by element type and length.
	read := map[string]bool{}
	for _, id := range order {
		d := defs[id]
		if d[0] != "OpLoad" || defs[d[2]][0] != "OpAccessChain" {
			continue
		}
		chain := defs[d[2]]
		v, idx := defs[chain[2]], defs[chain[3]]
		if v[0] != "OpVariable" || v[2] != "Function" || idx[0] == "OpConstant" {
			continue
		}
		arr := defs[defs[v[1]][2]]
		require.Equal(t, "OpTypeArray", arr[0])
		read[strings.Join(defs[arr[1]], " ")+" x "+defs[arr[2]][2]] = true
	}
	require.Equal(t, map[string]bool{"OpTypeFloat 32 x 64": true, "OpTypeFloat 64 x 32": true}, read)
}

// requireDeviceLoops: each file's while loop is one device loop step
// whose kernel passes spirv-val, and a host loop with HostLoops.
func requireDeviceLoops(t *testing.T, files []string) {
	t.Helper()
	for _, file := range files {
		p := compileFile(t, file, desktop, Options{})
		kinds := stepKinds(p)
		require.Equal(t, 1, kinds[StepLoop], file)
		require.Zero(t, kinds[StepWhile], file)
		for _, s := range p.Steps {
			if s.Kind == StepLoop {
				k := p.Kernels[s.Kernel]
				require.NoError(t, spirv.Validate(k.Words), file)
				require.Len(t, s.Buffers, k.Bindings, file)
			}
		}
		host := compileFile(t, file, desktop, Options{HostLoops: true})
		require.Zero(t, stepKinds(host)[StepLoop], file)
	}
}
