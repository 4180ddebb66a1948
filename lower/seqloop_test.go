package lower

import (
	"fmt"
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
// of them over a complex array; with DeviceLoops, as several run too
// few iterations to repay their kernels' compile) and the corpus's two
// long loops (without a device): each becomes one device loop step
// whose kernel passes spirv-val, with no host loop left, and with
// HostLoops each is a host loop again. A loop computing
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
	requireDeviceLoops(t, files, Options{DeviceLoops: true})
	t.Run("corpus", func(t *testing.T) {
		corpus := shared.Dir(t, "hlo-corpus")
		requireDeviceLoops(t, []string{
			filepath.Join(corpus, "jax/jit_compute_while_b380442861.hlo"),
			filepath.Join(corpus, "jax/jit_f_in_place_dynamic_update_slice.hlo")}, Options{})
	})

	p, err := compileText(t, `HloModule big
cond {
  p = (s32[], f32[5000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[5000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[5000] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[5000] add(x, x)
  ROOT t = (s32[], f32[5000]) tuple(j, y)
}
ENTRY main {
  x = f32[5000] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[5000]) tuple(z, x)
  ROOT w = (s32[], f32[5000]) while(t), condition=cond, body=body
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

// TestShortLoopsOnHost: a loop of a known trip count whose device loop
// kernel would take longer to compile than its host loop's iterations
// take stays a host loop, saying why; with DeviceLoops it is a device
// loop. computed_reads runs 9 iterations, its kernel about 35,000
// words (lavapipe took 4.9-5.1 s to compile it, against 0.45 s for the
// whole run as a host loop).
func TestShortLoopsOnHost(t *testing.T) {
	for _, tg := range []Target{desktop, kgen.LlvmpipeTarget} {
		p := compileFile(t, "testdata/loops/computed_reads.hlo", tg, Options{})
		require.Equal(t, 1, stepKinds(p)[StepWhile])
		require.Zero(t, stepKinds(p)[StepLoop])
		var plan strings.Builder
		p.Describe(&plan)
		require.Regexp(t, `not a device loop: a kernel of \d+ SPIR-V words for 9 iterations`, plan.String())
		p = compileFile(t, "testdata/loops/computed_reads.hlo", tg, Options{DeviceLoops: true})
		require.Equal(t, 1, stepKinds(p)[StepLoop])
	}
}

// TestShortLoopsWeighHostForm: a loop of a known short trip count whose
// device loop kernel is past LoopWords runs on the device all the same
// where its host form compiles as many words or more (the corpus's
// controller: 3 iterations, a body of 12 small kernels), and stays on
// the host where that form is smaller (a body fusion makes 4 kernels).
func TestShortLoopsWeighHostForm(t *testing.T) {
	// hostWords is the words of the host loop's sub-programs.
	hostWords := func(p *Program) int {
		n := 0
		for _, st := range p.Steps {
			if st.Kind == StepWhile {
				n += p.Subs[st.Cond].Words() + p.Subs[st.Body].Words()
			}
		}
		return n
	}
	loopWords := func(p *Program) int {
		n := 0
		for _, st := range p.Steps {
			if st.Kind == StepLoop {
				n += len(p.Kernels[st.Kernel].Words)
			}
		}
		return n
	}
	tg := kgen.LlvmpipeTarget
	p := compileFile(t, "testdata/loops/short_elimination.hlo", tg, Options{})
	require.Equal(t, 1, stepKinds(p)[StepWhile])
	dev := compileFile(t, "testdata/loops/short_elimination.hlo", tg, Options{DeviceLoops: true})
	require.Equal(t, 1, stepKinds(dev)[StepLoop])
	require.Greater(t, loopWords(dev), max(4096, hostWords(p)))

	file := filepath.Join(shared.Dir(t, "hlo-corpus"), "jax", "jit_controller_issue26021_f64.hlo")
	host := compileFile(t, file, tg, Options{HostLoops: true})
	p = compileFile(t, file, tg, Options{})
	// The short loop (3 iterations): a device loop past LoopWords,
	// within its host form's words.
	short := 0
	for _, st := range p.Steps {
		if st.Kind != StepLoop || !strings.HasSuffix(st.Inst, "custom-call.162.ts226") {
			continue
		}
		short = len(p.Kernels[st.Kernel].Words)
		for _, hs := range host.Steps {
			if hs.Inst == st.Inst {
				require.LessOrEqual(t, short, host.Subs[hs.Cond].Words()+host.Subs[hs.Body].Words())
			}
		}
	}
	require.Greater(t, short, 4096)
}

// TestLoopWords: the bound follows the trip count, between seqFewWords
// and SeqWords (2^62 iterations of an s64 counter too: no overflow); a
// loop of unknown count gets SeqWords.
func TestLoopWords(t *testing.T) {
	for _, c := range []struct {
		typ, start, limit string
		words             int
	}{{"s32", "0", "9", 4096}, {"s32", "0", "100", 6400}, {"s32", "10", "1010", 64000}, {"s32", "0", "100000", kgen.SeqWords},
		{"s64", "0", "4611686018427387904", kgen.SeqWords}, {"s32", "p", "9", kgen.SeqWords}} {
		init := c.typ + "[] constant(" + c.start + ")"
		if c.start == "p" {
			init = c.typ + "[] parameter(1)"
		}
		m, err := hlo.Parse("trips", strings.ReplaceAll(fmt.Sprintf(`HloModule trips
cond {
  s = (T[], f32[4]) parameter(0)
  i = T[] get-tuple-element(s), index=0
  n = T[] constant(%s)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (T[], f32[4]) parameter(0)
  i = T[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = T[] constant(1)
  i1 = T[] add(i, one)
  ROOT t = (T[], f32[4]) tuple(i1, x)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = %s
  init = (T[], f32[4]) tuple(z, x)
  ROOT w = (T[], f32[4]) while(init), condition=cond, body=body
}`, c.limit, init), "T[]", c.typ+"[]"))
		require.NoError(t, err)
		require.Equal(t, c.words, kgen.LoopWords(m.Entry.Root), "%+v", c)
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
	p := compileFile(t, "testdata/loops/many_leaves.hlo", LlvmpipeTarget, Options{DeviceLoops: true})
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
	p = compileFile(t, "testdata/loops/many_leaves.hlo", desktop, Options{DeviceLoops: true})
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
	p := compileFile(t, "testdata/loops/computed_reads.hlo", LlvmpipeTarget, Options{DeviceLoops: true})
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

// requireDeviceLoops: each file's while loop, compiled with opts, is
// one device loop step whose kernel passes spirv-val, for a GPU (wide
// values in shared memory) and for lavapipe (in scratch buffers), and a
// host loop with HostLoops.
func requireDeviceLoops(t *testing.T, files []string, opts Options) {
	t.Helper()
	for _, file := range files {
		for _, tg := range []Target{desktop, kgen.LlvmpipeTarget} {
			p := compileFile(t, file, tg, opts)
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
		}
		host := compileFile(t, file, desktop, Options{HostLoops: true})
		require.Zero(t, stepKinds(host)[StepLoop], file)
	}
}

// wideLoop is a loop of 10 steps over state (s32[], f32[w], extra...):
// body computes z, f32[w], from x, the f32[w] leaf, and the state
// becomes (i+1, z, extra...).
func wideLoop(w int, extra, body string) string {
	st := fmt.Sprintf("(s32[], f32[%d]%s)", w, extra)
	var args, passes string
	for j, e := range strings.Split(strings.TrimPrefix(extra, ", "), ", ") {
		if e == "" {
			continue
		}
		args += fmt.Sprintf("\n  e%d = %s parameter(%d)", j, e, j+1)
		passes += fmt.Sprintf("\n  q%d = %s get-tuple-element(p), index=%d", j, e, j+2)
	}
	names := func(prefix string) string {
		var out string
		for j, e := range strings.Split(strings.TrimPrefix(extra, ", "), ", ") {
			if e != "" {
				out += fmt.Sprintf(", %s%d", prefix, j)
			}
		}
		return out
	}
	return fmt.Sprintf(`HloModule wide
cond {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[%[2]d] get-tuple-element(p), index=1%[4]s
  %[3]s
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = %[1]s tuple(j, z%[5]s)
}
ENTRY main {
  x = f32[%[2]d] parameter(0)%[6]s
  z = s32[] constant(0)
  t = %[1]s tuple(z, x%[7]s)
  ROOT w = %[1]s while(t), condition=cond, body=body
}`, st, w, body, passes, names("q"), args, names("e"))
}

// TestWorkgroupLoops: loops whose values are wider than a device loop's
// registers run as one workgroup (kgen/seqwide.go), their wide values
// in shared memory on GPUs and in scratch buffers on lavapipe, while
// they fit: the values live at once in Vulkan's least shared memory
// (the arrays of dead values taken again), and an iteration's element
// loops in half the loop bound.
func TestWorkgroupLoops(t *testing.T) {
	loopStep := func(p *Program) (*kgen.Kernel, Step, bool) {
		for _, s := range p.Steps {
			if s.Kind == StepLoop {
				return p.Kernels[s.Kernel], s, true
			}
		}
		return nil, Step{}, false
	}
	p := compileFile(t, "testdata/loops/wide_rnn.hlo", desktop, Options{DeviceLoops: true})
	k, s, ok := loopStep(p)
	require.True(t, ok)
	require.Equal(t, [3]uint32{96, 1, 1}, k.LocalSize, "its widest phase's 96 elements, in whole subgroups")
	require.Len(t, s.Buffers, 10, "h, b and s in and out, w, ys, the counter in and out, the flag: no scratch buffer")
	p = compileFile(t, "testdata/loops/wide_rnn.hlo", kgen.LlvmpipeTarget, Options{DeviceLoops: true})
	k, s, ok = loopStep(p)
	require.True(t, ok)
	require.Equal(t, [3]uint32{96, 1, 1}, k.LocalSize)
	require.Len(t, s.Buffers, 11, "and a scratch buffer")
	require.Equal(t, hlo.F32, p.Buffers[s.Buffers[10]].Shape.Elem)
	// Their dots' outputs fill the workgroup: their vectors are
	// shuffled. wide_small_rnn's values fit registers, but not its
	// matrix: a workgroup of 48.
	// On lavapipe each invocation keeps the column of the matrix its
	// output's products read, loaded before the loop (kgen's colCache),
	// where there are more than 64 of them (not wide_small_rnn's 48); a
	// GPU's registers would not hold it.
	for _, file := range []string{"wide_rnn", "wide_matvec", "wide_small_rnn"} {
		for _, tg := range []Target{desktop, kgen.LlvmpipeTarget} {
			p := compileFile(t, "testdata/loops/"+file+".hlo", tg, Options{DeviceLoops: true})
			kept := slices.ContainsFunc(p.Plan, func(l string) bool { return strings.Contains(l, "device-loop; columns of ") })
			require.Equal(t, tg.CPU && file != "wide_small_rnn", kept, "%s (CPU %v): %q", file, tg.CPU, p.Plan)
			k, _, ok = loopStep(p)
			require.True(t, ok, file)
			dis, err := spirv.Disassemble(k.Words)
			require.NoError(t, err)
			require.Contains(t, dis, "OpGroupNonUniformShuffle", file)
			if file == "wide_small_rnn" {
				require.Equal(t, [3]uint32{48, 1, 1}, k.LocalSize)
			}
		}
	}

	for _, c := range []struct {
		name, extra, body string
		w                 int
		desktop, llvmpipe string // why a host loop ("": a device loop)
	}{
		// x and z, 16 KiB each (y and xx are computed in z's phase):
		// past 16 KiB of shared memory; lavapipe's scratch holds them.
		{"shared memory", "", "y = f32[4096] negate(x)\n  xx = f32[4096] multiply(x, x)\n  z = f32[4096] subtract(xx, y)",
			4096, "bytes of shared memory, beyond 16384", ""},
		// x, a, b, c, d of 4 KiB each (each read twice: computed
		// once): 12 KiB at once, c taking a's array and d b's.
		{"arrays taken again", "", `a = f32[1024] exponential(x)
  b = f32[1024] multiply(a, a)
  c = f32[1024] add(b, b)
  z = f32[1024] add(c, c)`, 1024, "", ""},
		// Each of 2048 elements sums 2048 products: 16 x 2049 loop
		// iterations an iteration, past half of either's budget.
		{"element loops", ", f32[2048,2048]", `y = f32[2048] dot(x, q0), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  z = f32[2048] subtract(x, y)`, 2048, "an iteration's wide values run 328", "an iteration's wide values run 328"},
	} {
		for _, tc := range []struct {
			tg  Target
			why string
		}{{desktop, c.desktop}, {kgen.LlvmpipeTarget, c.llvmpipe}} {
			text := wideLoop(c.w, c.extra, c.body)
			m, err := hlo.Parse(c.name, text)
			require.NoError(t, err, text)
			p, err := Compile(m, tc.tg, Options{DeviceLoops: true})
			require.NoError(t, err, c.name)
			var plan strings.Builder
			p.Describe(&plan)
			k, _, ok := loopStep(p)
			if tc.why != "" {
				require.False(t, ok, c.name)
				require.Contains(t, plan.String(), tc.why, c.name)
				continue
			}
			require.True(t, ok, "%s: %s", c.name, plan.String())
			require.NoError(t, spirv.Validate(k.Words), c.name)
		}
	}
}

// TestBatchedLoops: a device loop that a known count of dispatches
// surely ends (a known trip count, no nested loop of a count of its own:
// one dispatch within a dispatch's budget, two past it) is planned as
// that many dispatches of the batch: a barrier before what reads its
// results after it, its flag live to the end (the runtime reads it once
// the batch is done), kept by the program's encoding. A loop whose count
// is a parameter, one of more dispatches than maxBatchedDispatches and
// one around a loop of unknown count stay loops the host reads back.
// The corpus's long loop, rewritten by loop invariant code motion, is
// batched too.
func TestBatchedLoops(t *testing.T) {
	module := func(limit, nested string) string {
		return `HloModule m
icond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  x = f32[8] get-tuple-element(p), index=1
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=sum
  ns = f32[] convert(n)
  a = pred[] compare(s, ns), direction=LT
  b = pred[] compare(i, n), direction=LT
  ROOT c = pred[] and(a, b)
}
ibody {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[8] add(x, x)
  ROOT o = (s32[], f32[8]) tuple(i1, y)
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[8], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] ` + limit + `
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8], f32[8], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  acc = f32[8] get-tuple-element(p), index=2
  k = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[8] broadcast(h), dimensions={}
  x1 = f32[8] multiply(x, hb)
` + nested + `
  acc1 = f32[8] add(acc, x2)
  ROOT o = (s32[], f32[8], f32[8], s32[]) tuple(i1, x2, acc1, k)
}
ENTRY e {
  a = f32[8] parameter(0)
  k = s32[] parameter(1)
  ex = f32[8] exponential(a)
  z = s32[] constant(0)
  t = (s32[], f32[8], f32[8], s32[]) tuple(z, ex, a, k)
  w = (s32[], f32[8], f32[8], s32[]) while(t), condition=cond, body=body
  r = f32[8] get-tuple-element(w), index=2
  ROOT b = f32[8] add(r, ex)
}`
	}
	const plain = "  x2 = f32[8] copy(x1)"
	const nested = "  iz = s32[] constant(0)\n  it = (s32[], f32[8]) tuple(iz, x1)\n  iw = (s32[], f32[8]) while(it), condition=icond, body=ibody\n  x2 = f32[8] get-tuple-element(iw), index=1"
	for _, c := range []struct {
		name, limit, nested string
		dispatches          int
	}{
		{"counted", "constant(5)", plain, 1},
		{"within the budget", "constant(60000)", plain, 1},
		{"past the budget", "constant(100000)", plain, 2},
		{"dispatches past the batch's bound", "constant(10000000)", plain, 0},
		{"count a parameter", "get-tuple-element(p), index=3", plain, 0},
		{"nested loop of its own count", "constant(5)", nested, 0},
	} {
		m, err := hlo.Parse(c.name, module(c.limit, c.nested))
		require.NoError(t, err, c.name)
		require.NoError(t, hlo.Verify(m), c.name)
		p, err := Compile(m, kgen.LlvmpipeTarget, Options{DeviceLoops: true})
		require.NoError(t, err, c.name)
		var plan strings.Builder
		require.NoError(t, p.Describe(&plan))
		var loop = -1
		for i, s := range p.Steps {
			if s.Kind == StepLoop {
				require.Equal(t, -1, loop, "%s: one device loop", c.name)
				loop = i
			}
		}
		require.GreaterOrEqual(t, loop, 0, "%s: a device loop\n%s", c.name, plan.String())
		s := p.Steps[loop]
		require.Equal(t, c.dispatches, s.Dispatches, "%s\n%s", c.name, plan.String())
		if c.dispatches == 0 {
			continue
		}
		require.Contains(t, plan.String(), fmt.Sprintf("device loop in %d dispatches", c.dispatches), c.name)
		require.True(t, s.AfterWrites, c.name)
		// The add after the loop reads its result in the same submit.
		require.Less(t, loop, len(p.Steps)-1, c.name)
		next := p.Steps[loop+1]
		require.Equal(t, StepDispatch, next.Kind, c.name)
		require.True(t, next.AfterWrites, "%s: a barrier after the loop\n%s", c.name, plan.String())
		lr := liveRanges(p)
		require.Equal(t, 2*len(p.Steps)+1, lr[s.Pred].last, "%s: the flag lives to the end", c.name)
		b, err := p.MarshalBinary()
		require.NoError(t, err)
		var q Program
		require.NoError(t, q.UnmarshalBinary(b))
		require.Equal(t, c.dispatches, q.Steps[loop].Dispatches, c.name)
	}
	// jit_compute_while's 10^6 iterations, after loop invariant code
	// motion rewrote its body's results as elements of a tuple: counted
	// all the same (hlo.Element), 17 dispatches of a batch.
	t.Run("corpus", func(t *testing.T) {
		p := compileFile(t, filepath.Join(shared.Dir(t, "hlo-corpus"), "jax/jit_compute_while_b380442861.hlo"), kgen.LlvmpipeTarget, Options{})
		dispatches := -1
		for _, s := range p.Steps {
			if s.Kind == StepLoop {
				dispatches = s.Dispatches
			}
		}
		require.Equal(t, 17, dispatches)
	})
}
