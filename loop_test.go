package vkjit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/eval"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/lower"
)

// TestDeviceLoops runs the while loops of lower/testdata/loops, which
// run as device loops (lower/seqloop.go): jit_compute_while's shape (a
// counter, an accumulator, a large array read at the counter) for more
// iterations than one dispatch runs on lavapipe; in-place scatter and
// dynamic-update-slice into a large array that is also returned
// unchanged; nested loops, unrolled (a fori_loop of 5 over u32[2] with
// slices and concatenates) and not (a trip count from the data, more
// iterations in all than one dispatch's bound, so dispatches end inside
// an outer iteration and repeat it); narrow and pred state with a small
// reduce; and workgroup loops (kgen/seqwide.go), whose values are wider
// than registers: an RNN-like scan (a dot, a wide update of a large
// array, a sum read from a wide value) over more dispatches than one,
// a stencil of pads, slices, a pred mask and an f64 leaf, 1000 points,
// matrix-vector products whose vectors are shuffled across subgroups,
// and a nested loop and a conditional carrying wide values. Each must match the reference evaluator bit for bit, with and
// without fusion, with wide values in shared memory as GPUs keep them
// (StorageLoads: no texel reads, so no scratch buffers) and (where that
// takes seconds, not minutes) with host-driven loops.
func TestDeviceLoops(t *testing.T) {
	defer noValidationMessages(t)
	files, err := filepath.Glob("lower/testdata/loops/*.hlo")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".hlo")
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		m, err := hlo.Parse(file, string(text))
		require.NoError(t, err, name)
		require.NoError(t, hlo.Verify(m), name)
		args := hlotest.SmallIntInputs(m, 3)
		// DeviceLoops: several run too few iterations to repay their
		// kernels' compile, and would run from the host.
		all := []vkjit.CompileOptions{{DeviceLoops: true}, {NoFuse: true, NoReuse: true, DeviceLoops: true}, {StorageLoads: true, DeviceLoops: true}, {HostLoops: true}}
		if name == "nested" || name == "gather_sum" {
			all = all[:3] // ~10^5 host round trips: a minute
		}
		for _, opts := range all {
			start := time.Now()
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, name)
			loops := 0
			for _, s := range vkjit.ProgramOf(exe).Steps {
				if s.Kind == lower.StepLoop {
					loops++
				}
			}
			require.Equal(t, !opts.HostLoops, loops == 1, "%s (%+v): %d device loops", name, opts, loops)
			_, want, outs := runBothOn(t, exe, m, args, name)
			for i, w := range want.Leaves() {
				requireSameValues(t, w.Shape.Elem, w.Data, outs[i].Data, "%s out%d (%+v)", name, i, opts)
			}
			t.Logf("%s (%+v): %v", name, opts, time.Since(start))
		}
	}
}

// TestDeviceLoopBound runs a loop whose iterations each run a nested
// loop of a length given as the argument: two of 40000 take two
// dispatches (the second outer iteration does not fit the first
// dispatch's bound and runs again in the next); one of 100000 cannot
// run in one invocation at all, which must be an error that says so,
// not a result cut short.
func TestDeviceLoopBound(t *testing.T) {
	defer noValidationMessages(t)
	if vkjit.TargetOf(rt).MaxLoopIterations == 0 {
		t.Skip("the device has no loop bound")
	}
	exe, err := rt.CompileFile("lower/testdata/long_inner_loop.hlo", vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	run := func(lim int32) ([]*vkjit.Tensor, vkjit.RunStats, error) {
		arg := &vkjit.Tensor{Type: vkjit.S32, Data: []byte{byte(lim), byte(lim >> 8), byte(lim >> 16), byte(lim >> 24)}}
		return exe.Run(context.Background(), arg)
	}
	outs, st, err := run(40000)
	require.NoError(t, err)
	require.Equal(t, []byte{0x40, 0x9c, 0, 0}, outs[0].Data)
	require.Equal(t, 2, st.Dispatches)
	_, _, err = run(100000)
	require.ErrorContains(t, err, "loop iterations than the device allows one invocation")
}

// TestLoopStateInPlace: a host-driven loop's body updates its state in
// place (lower: the body's state is donated; Step.InPlace for initial
// values the caller no longer needs), and never writes over what is not
// the loop's: the caller's argument (read back after the run), an
// initial value two state elements share, or the body's own constant
// that became state. Each runs twice, bit for bit the evaluator's.
func TestLoopStateInPlace(t *testing.T) {
	defer noValidationMessages(t)
	const st = "(s32[], f32[4096], f32[4096])"
	loop := func(body, init string) string {
		return `HloModule m
cond {
  p = ` + st + ` parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = ` + st + ` parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4096] get-tuple-element(p), index=1
  y = f32[4096] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
` + body + `
}
ENTRY e {
  a = f32[4096] parameter(0)
  b = f32[4096] parameter(1)
  z = s32[] constant(0)
` + init + `
  w = ` + st + ` while(t), condition=cond, body=body
  ROOT r = f32[4096] get-tuple-element(w), index=1
}
`
	}
	for _, c := range []struct {
		name, body, init string
		inPlace          int // initial values the loop may write over
	}{
		{"arena", "  c = f32[] constant(1.5)\n  cc = f32[4096] broadcast(c), dimensions={}\n  m = f32[4096] multiply(x, cc)\n  x1 = f32[4096] add(m, y)\n  ROOT o = " + st + " tuple(i1, x1, y)",
			"  na = f32[4096] negate(a)\n  t = " + st + " tuple(z, na, b)", 1},
		{"argument", "  c = f32[] constant(1.5)\n  cc = f32[4096] broadcast(c), dimensions={}\n  m = f32[4096] multiply(x, cc)\n  x1 = f32[4096] add(m, y)\n  ROOT o = " + st + " tuple(i1, x1, y)",
			"  t = " + st + " tuple(z, a, b)", 0},
		{"shared", "  x1 = f32[4096] add(x, y)\n  ROOT o = " + st + " tuple(i1, x1, y)",
			"  na = f32[4096] negate(a)\n  t = " + st + " tuple(z, na, na)", 0},
		{"constant", "  k = f32[4096] constant({...})\n  s = f32[4096] add(x, y)\n  ROOT o = " + st + " tuple(i1, k, s)",
			"  na = f32[4096] negate(a)\n  nb = f32[4096] negate(b)\n  t = " + st + " tuple(z, na, nb)", 1},
	} {
		text := loop(c.body, c.init)
		if c.name == "constant" { // a constant of distinct values
			vals := make([]string, 4096)
			for i := range vals {
				vals[i] = fmt.Sprint(i%97 - 40)
			}
			text = strings.Replace(text, "{...}", "{"+strings.Join(vals, ",")+"}", 1)
		}
		m, err := hlo.Parse(c.name, text)
		require.NoError(t, err, c.name)
		require.NoError(t, hlo.Verify(m), c.name)
		args := hlotest.SmallIntInputs(m, 5)
		exe, err := rt.Compile(m, vkjit.CompileOptions{HostLoops: true})
		require.NoError(t, err, c.name)
		p := vkjit.ProgramOf(exe)
		var while lower.Step
		for _, s := range p.Steps {
			if s.Kind == lower.StepWhile {
				while = s
			}
		}
		require.Len(t, while.InPlace, c.inPlace, c.name)
		body := p.Subs[while.Body]
		donated := 0
		for _, b := range body.Buffers {
			if b.Kind == lower.BufParam && b.Alias != 0 && b.Shape.Rank() == 1 {
				donated++
			}
		}
		// (The counter's step rides in that array's kernel: fuseScalars.)
		require.Equal(t, 1, donated, "%s: one array updated in place", c.name)
		want, err := eval.Run(m, args...)
		require.NoError(t, err, c.name)
		ins := make([]*vkjit.DeviceTensor, len(args))
		for i, a := range args {
			ins[i], err = rt.Upload(&vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data})
			require.NoError(t, err)
		}
		for run := range 2 {
			outs, _, err := exe.RunDevice(context.Background(), ins...)
			require.NoError(t, err, c.name)
			got, err := outs[0].ToHost()
			require.NoError(t, err)
			require.Equal(t, want.Leaves()[0].Data, got.Data, "%s run %d", c.name, run)
			outs[0].Close()
			for i, in := range ins {
				back, err := in.ToHost()
				require.NoError(t, err)
				require.Equal(t, args[i].Data, back.Data, "%s run %d: argument %d written over", c.name, run, i)
			}
		}
		for _, in := range ins {
			in.Close()
		}
		exe.Close()
	}
}

// TestLoopWindows: dynamic slices and updates of a device loop's small
// state, which move their windows by the starts' bits (lower/kgen
// seqwindow.go), over ranks 1 to 3, windows as large as the array and
// of one element, every element type class, and start indices of
// signed, unsigned and narrow types that run below zero and past the
// end (clamped, as XLA clamps them): each loop a device loop, bit for
// bit the evaluator's after 12 iterations, fused and not.
func TestLoopWindows(t *testing.T) {
	defer noValidationMessages(t)
	cases := []struct {
		elem, index  string
		dims, window []int64
	}{
		{"f32", "s32", []int64{7}, []int64{3}},
		{"f16", "s64", []int64{5, 4}, []int64{2, 3}},
		{"s8", "u32", []int64{3, 1, 6}, []int64{1, 1, 4}},
		{"pred", "s8", []int64{33}, []int64{1}},
		{"f64", "s32", []int64{8}, []int64{8}},
		{"u16", "s32", []int64{4, 9}, []int64{4, 2}},
		{"bf16", "u8", []int64{2, 3, 5}, []int64{1, 2, 2}},
	}
	dimList := func(d []int64) string {
		s := make([]string, len(d))
		for i, x := range d {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s[%s]_%s[%s]_%s", c.elem, dimList(c.dims), c.elem, dimList(c.window), c.index)
		t.Run(name, func(t *testing.T) {
			x := fmt.Sprintf("%s[%s]", c.elem, dimList(c.dims))
			w := fmt.Sprintf("%s[%s]", c.elem, dimList(c.window))
			st := "(s32[], " + x + ")"
			var body strings.Builder
			// Start d of the slice is i*(d+1) - 2, of the update 5 - i*(d+1):
			// both run out of range on either side within 12 iterations.
			var slice, update []string
			for d := range c.dims {
				fmt.Fprintf(&body, "  k%d = s32[] constant(%d)\n  ik%d = s32[] multiply(i, k%d)\n", d, d+1, d, d)
				fmt.Fprintf(&body, "  a%d = s32[] subtract(ik%d, two)\n  b%d = s32[] subtract(five, ik%d)\n", d, d, d, d)
				fmt.Fprintf(&body, "  s%d = %s[] convert(a%d)\n  u%d = %s[] convert(b%d)\n", d, c.index, d, d, c.index, d)
				slice = append(slice, fmt.Sprintf("s%d", d))
				update = append(update, fmt.Sprintf("u%d", d))
			}
			op := "negate"
			if c.elem == "pred" || c.elem[0] == 'u' {
				op = "not"
			}
			text := fmt.Sprintf(`HloModule windows
cond {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = %[1]s parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = %[2]s get-tuple-element(p), index=1
  one = s32[] constant(1)
  two = s32[] constant(2)
  five = s32[] constant(5)
  j = s32[] add(i, one)
%[3]s  w = %[4]s dynamic-slice(x, %[5]s), dynamic_slice_sizes={%[6]s}
  w2 = %[4]s %[7]s(w)
  x2 = %[2]s dynamic-update-slice(x, w2, %[8]s)
  ROOT t = %[1]s tuple(j, x2)
}
ENTRY e {
  x = %[2]s parameter(0)
  z = s32[] constant(0)
  t = %[1]s tuple(z, x)
  l = %[1]s while(t), condition=cond, body=body
  ROOT r = %[2]s get-tuple-element(l), index=1
}
`, st, x, body.String(), w, strings.Join(slice, ", "), dimList(c.window), op, strings.Join(update, ", "))
			m, err := hlo.Parse(name, text)
			require.NoError(t, err, text)
			exe, err := rt.Compile(m, vkjit.CompileOptions{DeviceLoops: true})
			require.NoError(t, err)
			kinds := map[lower.StepKind]int{}
			for _, s := range vkjit.ProgramOf(exe).Steps {
				kinds[s.Kind]++
			}
			exe.Close()
			require.Equal(t, 1, kinds[lower.StepLoop], "a device loop")
			requireExact(t, name, text, edgeInputs(7))
		})
	}
}

// TestCountedLoops: loops whose iterations follow from their counter's
// start (lower.Counter) run them without reading the condition back,
// several iterations a submit: counters of each width stepping up and
// down to limits of each direction, no iterations, more dispatches than
// one submit takes, a loop nested in a counted one, and a counter that
// wraps around (not counted: its condition decides). Bit for bit the
// evaluator's, fused and not.
func TestCountedLoops(t *testing.T) {
	defer noValidationMessages(t)
	loop := func(ty, start, limit, dir, next, inner string) string {
		st := "(" + ty + "[], f32[3000], f32[3000])"
		return `HloModule m
cond {
  p = ` + st + ` parameter(0)
  i = ` + ty + `[] get-tuple-element(p), index=0
  n = ` + ty + `[] constant(` + limit + `)
  ROOT c = pred[] compare(i, n), direction=` + dir + `
}
icond {
  p = (s32[], f32[3000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
ibody {
  p = (s32[], f32[3000]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[3000] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  s = f32[3000] sine(x)
  ROOT o = (s32[], f32[3000]) tuple(i1, s)
}
body {
  p = ` + st + ` parameter(0)
  i = ` + ty + `[] get-tuple-element(p), index=0
  x = f32[3000] get-tuple-element(p), index=1
  acc = f32[3000] get-tuple-element(p), index=2
  i1 = ` + ty + `[] ` + next + `
  h = f32[] constant(0.5)
  hb = f32[3000] broadcast(h), dimensions={}
  m = f32[3000] multiply(x, hb)
  ic = f32[] convert(i)
  icb = f32[3000] broadcast(ic), dimensions={}
  x1 = f32[3000] add(m, icb)
` + inner + `
  acc1 = f32[3000] add(acc, x2)
  ROOT o = ` + st + ` tuple(i1, x2, acc1)
}
ENTRY e {
  a = f32[3000] parameter(0)
  z = ` + ty + `[] constant(` + start + `)
  t = ` + st + ` tuple(z, a, a)
  w = ` + st + ` while(t), condition=cond, body=body
  ROOT r = f32[3000] get-tuple-element(w), index=2
}
`
	}
	const plain = "  x2 = f32[3000] copy(x1)"
	const nested = "  iz = s32[] constant(0)\n  it = (s32[], f32[3000]) tuple(iz, x1)\n  iw = (s32[], f32[3000]) while(it), condition=icond, body=ibody\n  x2 = f32[3000] get-tuple-element(iw), index=1"
	for _, c := range []struct {
		name, ty, start, limit, dir, next, inner string
		counted                                  bool
	}{
		{"up", "s32", "-3", "300", "LT", "add(i, k)", plain, true}, // 303 iterations: several submits
		{"s64 by two", "s64", "0", "17", "LE", "add(k, i)", plain, true},
		{"down", "s32", "50", "0", "GT", "subtract(i, k)", plain, true},
		{"u32 to equal", "u32", "4", "40", "NE", "add(i, k)", plain, true},
		{"none", "s32", "10", "5", "LT", "add(i, k)", plain, true},
		{"nested", "s32", "0", "40", "LT", "add(i, k)", nested, true},
		{"wraps", "s8", "0", "5", "LT", "subtract(i, k)", plain, true}, // 0, -1 ... -128, 127: 129 iterations by its condition
	} {
		step := map[string]string{"s64 by two": "2", "down": "3", "u32 to equal": "4"}[c.name]
		if step == "" {
			step = "1"
		}
		text := strings.Replace(loop(c.ty, c.start, c.limit, c.dir, c.next, c.inner), "  i1 = "+c.ty+"[] "+c.next,
			"  k = "+c.ty+"[] constant("+step+")\n  i1 = "+c.ty+"[] "+c.next, 1)
		m, err := hlo.Parse(c.name, text)
		require.NoError(t, err, c.name)
		require.NoError(t, hlo.Verify(m), c.name)
		for _, opts := range []vkjit.CompileOptions{{HostLoops: true}, {HostLoops: true, NoFuse: true, NoReuse: true}} {
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.name)
			counted := false
			for _, s := range vkjit.ProgramOf(exe).Steps {
				if s.Kind == lower.StepWhile && s.Counter != nil {
					counted = true
				}
			}
			require.Equal(t, c.counted, counted, c.name)
			_, want, outs := runBothOn(t, exe, m, hlotest.SmallIntInputs(m, 9), c.name)
			requireSameValues(t, hlo.F32, want.Leaves()[0].Data, outs[0].Data, "%s %+v", c.name, opts)
		}
	}
}

// TestScalarSiblings: a scalar elementwise kernel rides along with a
// later kernel of more elements that does not read it (lower's
// fuseScalars): invocation 0 computes and stores it. Loop counters
// beside a vector kernel that updates the state in place, and scalars
// beside an elementwise kernel, a reduction, a row kernel and a dot, of
// each width: bit for bit the evaluator's, fused and unfused, and each
// scalar in another kernel's step.
func TestScalarSiblings(t *testing.T) {
	defer noValidationMessages(t)
	const entry = `HloModule scalars
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY e {
  a = f32[64,256] parameter(0)
  s = f32[] parameter(1)
  n = s32[] parameter(2)
  d = f64[] parameter(3)
  h = u8[] parameter(4)
  w = f32[256,32] parameter(5)
  s2 = f32[] multiply(s, s)
  one = s32[] constant(1)
  n1 = s32[] add(n, one)
  d2 = f64[] sqrt(d)
  h2 = u8[] not(h)
  e = f32[64,256] multiply(a, a)
  z = f32[] constant(-inf)
  r = f32[64] reduce(e, z), dimensions={1}, to_apply=max
  rb = f32[64,256] broadcast(r), dimensions={0}
  q = f32[64,256] subtract(e, rb)
  m = f32[64,32] dot(q, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[], s32[], f64[], u8[], f32[64,256], f32[64,32]) tuple(s2, n1, d2, h2, q, m)
}`
	requireExact(t, "scalars", entry, smallInts(4))
	exe, err := rt.CompileText("scalars", entry, vkjit.CompileOptions{})
	require.NoError(t, err)
	fused := map[string]bool{}
	for _, s := range vkjit.ProgramOf(exe).Steps {
		for _, f := range s.Fused {
			fused[f] = true
		}
	}
	exe.Close()
	for _, x := range []string{"s2", "n1", "d2", "h2"} {
		require.True(t, fused[x], "%s has a step of its own", x)
	}
}

// TestSiblingGroups: kernels of one shape that share inputs computed in
// one kernel, many at once (lower's fuseSiblings), one of them a row
// sum the others read from its register and nothing stores, and
// one-element values of a parameter's elements in one dispatch: bit for
// bit the evaluator's, fused and unfused, in fewer steps than kernels.
func TestSiblingGroups(t *testing.T) {
	defer noValidationMessages(t)
	const entry = `HloModule siblings
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
  c3 = f32[64] multiply(u, v)
  c4 = f32[64] maximum(u, v)
  x1 = f32[64,256] multiply(x, x)
  x2 = f32[64,256] negate(x)
  x3 = f32[64,256] abs(x)
  x4 = f32[64,256] add(x, x)
  s0 = f32[1] slice(u), slice={[0:1]}
  s1 = f32[1] slice(u), slice={[1:2]}
  s2 = f32[1] slice(u), slice={[2:3]}
  s3 = f32[1] slice(u), slice={[3:4]}
  e0 = f32[1] multiply(s0, s3)
  e1 = f32[1] subtract(s1, s2)
  e2 = f32[1] add(s2, s0)
  ROOT t = (f32[64], f32[64], f32[64], f32[64], f32[64,256], f32[64,256], f32[64,256], f32[64,256], f32[1], f32[1], f32[1]) tuple(c1, c2, c3, c4, x1, x2, x3, x4, e0, e1, e2)
}`
	requireExact(t, "siblings", entry, smallInts(6))
	exe, err := rt.CompileText("siblings", entry, vkjit.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	prog := vkjit.ProgramOf(exe)
	require.Len(t, prog.Steps, 3, "a kernel for each shape")
	for _, b := range prog.Buffers {
		require.NotEqual(t, "red", b.Name, "the row sum is kept in registers")
	}
}

// TestCountedLoopsConcurrently: counted loops of runs on one runtime at
// once. A counted loop batches its iterations, and the memory one leaves
// must not go back to the pool before the batch that reads it is done:
// another run would take it and write it first.
func TestCountedLoopsConcurrently(t *testing.T) {
	defer noValidationMessages(t)
	const text = `HloModule m
cond {
  p = (s32[], f32[2048], f32[2048]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(400)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2048], f32[2048]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2048] get-tuple-element(p), index=1
  y = f32[2048] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  r = f32[2048] reverse(x), dimensions={0}
  s = f32[2048] sine(r)
  q = f32[2048] reverse(s), dimensions={0}
  y1 = f32[2048] add(y, q)
  ROOT o = (s32[], f32[2048], f32[2048]) tuple(i1, q, y1)
}
ENTRY e {
  a = f32[2048] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[2048], f32[2048]) tuple(z, a, a)
  w = (s32[], f32[2048], f32[2048]) while(t), condition=cond, body=body
  ROOT r = f32[2048] get-tuple-element(w), index=2
}`
	m, err := hlo.Parse("m", text)
	require.NoError(t, err)
	exe, err := rt.Compile(m, vkjit.CompileOptions{HostLoops: true, NoFuse: true})
	require.NoError(t, err)
	defer exe.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := hlotest.UniformInputs(m, uint64(g))
			want, err := eval.Run(m, args...)
			if err != nil {
				errs <- err
				return
			}
			for run := range 8 {
				outs, _, err := exe.Run(context.Background(), &vkjit.Tensor{Type: vkjit.F32, Dims: args[0].Shape.Dims, Data: args[0].Data})
				if err != nil {
					errs <- err
					return
				}
				if string(outs[0].Data) != string(want.Leaves()[0].Data) {
					errs <- fmt.Errorf("goroutine %d run %d: not the evaluator's result", g, run)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestBatchedLoops: device loops that a known count of dispatches ends
// (lower.Step.Dispatches) run inside the batch: a program of two such
// loops, each between kernels that read what the one before wrote, is
// one submit, bit for bit the evaluator's, fused and not, whether a loop
// takes one dispatch or two (its iterations past a dispatch's budget, on
// lavapipe and on GPUs); a loop whose trip count is an argument is read
// back (two submits more), computing the same values.
func TestBatchedLoops(t *testing.T) {
	defer noValidationMessages(t)
	text := func(limit string) string {
		return `HloModule one
cond {
  p = (s32[], f32[64], f32[64], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] ` + limit + `
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64], f32[64], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64] get-tuple-element(p), index=1
  acc = f32[64] get-tuple-element(p), index=2
  k = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[64] broadcast(h), dimensions={}
  x1 = f32[64] multiply(x, hb)
  ic = f32[] convert(i)
  icb = f32[64] broadcast(ic), dimensions={}
  x2 = f32[64] add(x1, icb)
  acc1 = f32[64] add(acc, x2)
  ROOT o = (s32[], f32[64], f32[64], s32[]) tuple(i1, x2, acc1, k)
}
ENTRY e {
  a = f32[64] parameter(0)
  k = s32[] parameter(1)
  ex = f32[64] exponential(a)
  z = s32[] constant(0)
  t = (s32[], f32[64], f32[64], s32[]) tuple(z, ex, a, k)
  w = (s32[], f32[64], f32[64], s32[]) while(t), condition=cond, body=body
  r = f32[64] get-tuple-element(w), index=2
  b = f32[64] subtract(r, ex)
  t2 = (s32[], f32[64], f32[64], s32[]) tuple(z, b, r, k)
  w2 = (s32[], f32[64], f32[64], s32[]) while(t2), condition=cond, body=body
  r2 = f32[64] get-tuple-element(w2), index=1
  ROOT m = f32[64] multiply(r2, b)
}`
	}
	for _, c := range []struct {
		name, limit string
		count       int32
		submits     int
		dispatches  int // each loop's, where batched
	}{
		{"counted", "constant(7)", 0, 1, 1},
		{"count an argument", "get-tuple-element(p), index=3", 7, 3, 0},
		{"past a dispatch", "constant(70000)", 0, 1, 2},
	} {
		m, err := hlo.Parse(c.name, text(c.limit))
		require.NoError(t, err, c.name)
		require.NoError(t, hlo.Verify(m), c.name)
		args := hlotest.SmallIntInputs(m, 3)
		args[1] = hlo.ScalarLiteral(hlo.S32, float64(c.count))
		for _, opts := range []vkjit.CompileOptions{{DeviceLoops: true}, {DeviceLoops: true, NoFuse: true, NoReuse: true}} {
			exe, err := rt.Compile(m, opts)
			require.NoError(t, err, c.name)
			var batched []int
			for _, s := range vkjit.ProgramOf(exe).Steps {
				if s.Kind == lower.StepLoop {
					batched = append(batched, s.Dispatches)
				}
			}
			want, err := eval.Run(m, args...)
			require.NoError(t, err, c.name)
			ts := make([]*vkjit.Tensor, len(args))
			for i, a := range args {
				ts[i] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
			}
			outs, st, err := exe.Run(context.Background(), ts...)
			exe.Close()
			require.NoError(t, err, c.name)
			requireSameValues(t, hlo.F32, want.Leaves()[0].Data, outs[0].Data, "%s %+v", c.name, opts)
			require.Equal(t, c.submits, st.Submits, "%s %+v", c.name, opts)
			require.Equal(t, []int{c.dispatches, c.dispatches}, batched, c.name)
		}
	}
}

// TestXLAScan: XLA's scan op (lower's expandScans, a while loop as XLA's
// ScanExpander writes it) on the device, bit for bit the evaluator's
// (which runs it directly), fused and unfused: running sums forward
// and reversed, long enough to take several device loop dispatches;
// along dimension 1 of a matrix with a vector carry; two inputs of two
// types with two carries; an output alone and a carry alone.
func TestXLAScan(t *testing.T) {
	defer noValidationMessages(t)
	sum := "add_comp {\n  in = f32[] parameter(0)\n  carry = f32[] parameter(1)\n  add = f32[] add(carry, in)\n  ROOT t = (f32[], f32[]) tuple(add, add)\n}\n"
	for _, c := range []struct{ name, text string }{
		{"cumsum", "HloModule cumsum\n" + sum + "ENTRY e {\n  x = f32[2000] parameter(0)\n  z = f32[] parameter(1)\n  ROOT s = (f32[2000], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_associative=true, to_apply=add_comp\n}"},
		{"reversed past a dispatch", "HloModule rev\n" + sum + "ENTRY e {\n  x = f32[70000] parameter(0)\n  z = f32[] parameter(1)\n  s = (f32[70000], f32[]) scan(x, z), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add_comp\n  y = f32[70000] get-tuple-element(s), index=0\n  ROOT m = f32[70000] multiply(y, x)\n}"},
		{"rows", "HloModule rows\nrows {\n  in = f32[3] parameter(0)\n  carry = f32[3] parameter(1)\n  add = f32[3] add(carry, in)\n  m = f32[3] multiply(in, carry)\n  ROOT t = (f32[3], f32[3]) tuple(m, add)\n}\nENTRY e {\n  x = f32[3,50] parameter(0)\n  z = f32[3] parameter(1)\n  ROOT s = (f32[3,50], f32[3]) scan(x, z), dimensions={1}, num_carries=1, to_apply=rows\n}"},
		{"two of each", "HloModule two\ntwo {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  m = f32[] parameter(2)\n  n = s32[] parameter(3)\n  bf = f32[] convert(b)\n  ab = f32[] multiply(a, bf)\n  mx = f32[] maximum(m, a)\n  nb = s32[] add(n, b)\n  ROOT t = (f32[], f32[], f32[], s32[]) tuple(ab, mx, mx, nb)\n}\nENTRY e {\n  a = f32[40] parameter(0)\n  b = s32[40] parameter(1)\n  m = f32[] parameter(2)\n  n = s32[] parameter(3)\n  ROOT s = (f32[40], f32[40], f32[], s32[]) scan(a, b, m, n), dimensions={0}, num_carries=2, to_apply=two\n}"},
		{"output alone", "HloModule out\nneg {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\nENTRY e {\n  x = f32[4,30] parameter(0)\n  ROOT s = f32[4,30] scan(x), dimensions={1}, num_carries=0, to_apply=neg\n}"},
		{"carry alone", "HloModule fold\nfold {\n  a = f32[] parameter(0)\n  c = f32[] parameter(1)\n  h = f32[] constant(0.5)\n  ch = f32[] multiply(c, h)\n  ROOT n = f32[] add(ch, a)\n}\nENTRY e {\n  x = f32[64] parameter(0)\n  z = f32[] parameter(1)\n  ROOT s = f32[] scan(x, z), dimensions={0}, num_carries=1, to_apply=fold\n}"},
	} {
		requireExact(t, c.name, c.text, func(m *hlo.Module) []*hlo.Literal { return hlotest.SmallIntInputs(m, 5) })
	}
}

// TestBatchScalars: a program of many independent scalar library calls
// (lower's batchScalars: sines and cosines of joint angles, atan2 of
// pairs, f64 sines, exponentials of products) computes them as vectors,
// a kernel each: the same bits as the unfused program, where each is
// its own kernel, and within the functions' error of the evaluator.
func TestBatchScalars(t *testing.T) {
	defer noValidationMessages(t)
	var b strings.Builder
	b.WriteString("HloModule joints\nENTRY e {\n  q = f32[12] parameter(0)\n  d = f64[5] parameter(1)\n")
	var outs, shapes []string
	out := func(name, shape string) { outs, shapes = append(outs, name), append(shapes, shape) }
	for i := range 12 {
		fmt.Fprintf(&b, "  s%d = f32[1] slice(q), slice={[%d:%d]}\n  x%d = f32[] reshape(s%d)\n  sin%d = f32[] sine(x%d)\n", i, i, i+1, i, i, i, i)
		out(fmt.Sprintf("sin%d", i), "f32[]")
	}
	for i := range 6 {
		fmt.Fprintf(&b, "  a%d = f32[] add(x%d, x%d)\n  cos%d = f32[] cosine(a%d)\n", i, i, 11-i, i, i)
		fmt.Fprintf(&b, "  m%d = f32[] multiply(x%d, x%d)\n  exp%d = f32[] exponential(m%d)\n", i, i, i+1, i, i)
		out(fmt.Sprintf("cos%d", i), "f32[]")
		out(fmt.Sprintf("exp%d", i), "f32[]")
	}
	for i := range 4 {
		fmt.Fprintf(&b, "  at%d = f32[] atan2(x%d, x%d)\n", i, i, i+4)
		out(fmt.Sprintf("at%d", i), "f32[]")
	}
	for i := range 5 {
		fmt.Fprintf(&b, "  t%d = f64[1] slice(d), slice={[%d:%d]}\n  y%d = f64[] reshape(t%d)\n  dsin%d = f64[] sine(y%d)\n", i, i, i+1, i, i, i, i)
		out(fmt.Sprintf("dsin%d", i), "f64[]")
	}
	// The scalars read together too, as a select chain reads them.
	b.WriteString("  p = pred[] compare(sin0, cos0), direction=LT\n  sel = f32[] select(p, exp1, at2)\n")
	out("sel", "f32[]")
	fmt.Fprintf(&b, "  ROOT t = (%s) tuple(%s)\n}\n", strings.Join(shapes, ", "), strings.Join(outs, ", "))
	m, err := hlo.Parse("joints", b.String())
	require.NoError(t, err)
	require.NoError(t, hlo.Verify(m))
	args := hlotest.SmallIntInputs(m, 4)
	want, err := eval.Run(m, args...)
	require.NoError(t, err)
	var results [2][]*vkjit.Tensor
	for i, opts := range []vkjit.CompileOptions{{}, {NoFuse: true, NoReuse: true}} {
		exe, err := rt.Compile(m, opts)
		require.NoError(t, err)
		if i == 0 {
			batched := 0
			for _, s := range vkjit.ProgramOf(exe).Steps {
				for _, x := range append([]string{s.Inst}, s.Fused...) {
					if strings.HasSuffix(x, ".vector0") {
						batched++
					}
				}
			}
			require.Equal(t, 5, batched, "sines, cosines, exponentials, atan2s and f64 sines: a vector each")
		}
		ts := make([]*vkjit.Tensor, len(args))
		for j, a := range args {
			ts[j] = &vkjit.Tensor{Type: vkjit.DType(a.Shape.Elem), Dims: a.Shape.Dims, Data: a.Data}
		}
		results[i], _, err = exe.Run(context.Background(), ts...)
		exe.Close()
		require.NoError(t, err)
		requireNearEval(t, "joints", results[i], want, 1e-5)
	}
	for o := range results[0] {
		require.Equal(t, results[1][o].Data, results[0][o].Data, "output %d (%s): batched and unfused, the same bits", o, outs[o])
	}
}
