package lower

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
	"github.com/vkjit/vkjit/spirv"
)

func TestPlan(t *testing.T) {
	prog, err := compileText(t, `HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  c = f32[1000] constant({...})
  s = f32[1000] add(x, y)
  t = f32[1000] add(s, c)
  ROOT r = (f32[1000], f32[1000]) tuple(t, s)
}`)
	require.Error(t, err, "elided constants cannot run")
	require.Contains(t, err.Error(), "elided")

	prog, err = compileText(t, `HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  s = f32[1000] add(x, y)
  t = f32[1000] add(s, x)
  u = f32[1000] multiply(t, y)
  ROOT r = (f32[1000], f32[1000]) tuple(u, s)
}`)
	require.NoError(t, err)
	// One kernel: u's (with t inline) computes s alongside, a sibling
	// reading the same x and y.
	require.Len(t, prog.Kernels, 1)
	require.Len(t, prog.Steps, 1)
	require.False(t, prog.Steps[0].AfterWrites)
	require.Equal(t, []string{"s", "t"}, prog.Steps[0].Fused)
	require.Equal(t, [3]uint32{16, 1, 1}, prog.Steps[0].Groups, "1000 elements in workgroups of 64")
	require.Equal(t, []uint32{1000}, prog.Steps[0].Push)
	require.Len(t, prog.Outputs, 2)
	require.Equal(t, "u", prog.Buffers[prog.Outputs[0]].Name)
	require.Equal(t, "s", prog.Buffers[prog.Outputs[1]].Name)
	// s and u are results.
	require.Equal(t, int64(2*4000+2*4096), prog.PeakBytes(), "2 parameters, 2 temporaries aligned to 256 bytes")
}

// TestMemoryPlan compiles every E2E corpus module with and without
// fusion and checks the memory plan's invariants; without reuse, the
// arena is the sum of the temporaries.
func TestMemoryPlan(t *testing.T) {
	planned := 0
	files, _ := hlotest.CorpusE2E(t)
	for _, file := range files {
		mods, err := hlo.ParseFile(file)
		require.NoError(t, err)
		for _, opts := range []Options{{}, {NoFuse: true}, {NoReuse: true}} {
			p, err := Compile(mods[0], DefaultTarget, opts)
			if err != nil {
				continue // refused by name; the device tests cover that
			}
			planned++
			checkMemoryPlan(t, file, p, int64(DefaultTarget.StorageAlign))
			if opts.NoReuse {
				var sum int64
				for b := range liveRanges(p) {
					sum += alignUp(PaddedSize(p.Buffers[b].Size), int64(DefaultTarget.StorageAlign))
				}
				require.Equal(t, sum, p.ArenaSize, file)
			}
		}
	}
	require.Greater(t, planned, 150)
}

// desktop is a typical desktop GPU or lavapipe: the fusion targets below
// assume a kernel may bind 16 storage buffers (Vulkan's minimum is 4).
var desktop = func() Target {
	t := DefaultTarget
	t.MaxStorageBuffers = 16
	t.MaxWorkgroupSize = 1024
	t.StorageAlign = 64
	return t
}()

func compileWorkload(t *testing.T, name string, opts Options) *Program {
	t.Helper()
	mods, err := hlo.ParseFile(filepath.Join("../bench/workloads", name))
	require.NoError(t, err)
	p, err := Compile(mods[0], desktop, opts)
	require.NoError(t, err)
	return p
}

// TestInPlace: without fusion, each op of a chain over temporaries
// writes over its dead input, so the arena holds one value, not two.
func TestInPlace(t *testing.T) {
	m, err := hlo.Parse("chain.hlo", `HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  a = f32[1000] exponential(x)
  b = f32[1000] log(a)
  c = f32[1000] negate(b)
  ROOT d = f32[1000] abs(c)
}`)
	require.NoError(t, err)
	p, err := Compile(m, desktop, Options{NoFuse: true})
	require.NoError(t, err)
	require.Len(t, p.Steps, 4)
	require.Equal(t, int64(4032), p.ArenaSize, "one 4000-byte value, aligned to 64")
	for _, st := range p.Steps[1:] {
		require.Len(t, st.InPlace, 1)
	}
	checkMemoryPlan(t, "chain", p, int64(desktop.StorageAlign))
	// A transpose reads elsewhere than it writes: no in-place update.
	m, err = hlo.Parse("tr.hlo", `HloModule m
ENTRY e {
  x = f32[30,40] parameter(0)
  a = f32[30,40] exponential(x)
  ROOT b = f32[40,30] transpose(a), dimensions={1,0}
}`)
	require.NoError(t, err)
	p, err = Compile(m, desktop, Options{NoFuse: true})
	require.NoError(t, err)
	require.Empty(t, p.Steps[1].InPlace)
	require.Equal(t, int64(2*4800), p.ArenaSize)
	// Neither do reductions, in any of their forms on a CPU device: a
	// row's subgroup reading 16-byte texels, a row sum inline in a
	// divide, a vector kernel's lanes folding columns together, a row
	// kernel that spills (its row sum kept in registers). Were x's
	// memory (donated) to hold a result, one invocation's store would
	// overwrite elements another has still to read.
	for _, red := range []string{
		"ROOT s = f32[64] reduce(x, z), dimensions={1}, to_apply=add",
		"s = f32[64] reduce(x, z), dimensions={1}, to_apply=add\n  n = f32[64] broadcast(z), dimensions={}\n  ROOT m = f32[64] divide(s, n)",
		"ROOT s = f32[1024] reduce(x, z), dimensions={0}, to_apply=add",
		// A row kernel whose fold stores v in y's memory (its spill)
		// before the elements read x there again.
		"v = f32[64,1024] multiply(x, x)\n  s = f32[64] reduce(v, z), dimensions={1}, to_apply=add\n  sb = f32[64,1024] broadcast(s), dimensions={0}\n  w = f32[64,1024] divide(v, sb)\n  ROOT y = f32[64,1024] multiply(w, x)",
	} {
		m, err = hlo.Parse("red.hlo", `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,1024] parameter(0)
  z = f32[] constant(0)
  `+red+`
}`)
		require.NoError(t, err)
		p, err = Compile(m, LlvmpipeTarget, Options{Donate: []int{0}})
		require.NoError(t, err)
		require.Len(t, p.Steps, 1, red)
		require.Empty(t, p.Steps[0].InPlace, "%s: %s", red, p.Kernels[0].Name)
	}
}

// TestMemoryBudget: below the default peak, values are recomputed until
// the plan fits; an impossible budget fails with the smallest peak.
func TestMemoryBudget(t *testing.T) {
	mods, err := hlo.ParseFile("../tests/testdata/mlp_train/graph.hlo")
	require.NoError(t, err)
	def, err := Compile(mods[0], desktop, Options{})
	require.NoError(t, err)
	p, err := Compile(mods[0], desktop, Options{MemoryBudget: def.PeakBytes() - 1})
	require.NoError(t, err)
	require.Less(t, p.PeakBytes(), def.PeakBytes())
	require.Greater(t, len(p.Steps), len(def.Steps), "recomputation costs a dispatch")
	checkMemoryPlan(t, "mlp_train under budget", p, int64(desktop.StorageAlign))
	_, err = Compile(mods[0], desktop, Options{MemoryBudget: 1000})
	require.ErrorIs(t, err, ErrMemoryBudget)
	require.Contains(t, err.Error(), fmt.Sprintf("smallest peak %d bytes", p.PeakBytes()))
}

// TestDonation: donated parameters give their memory to a result of
// their size written after their last read (as input_output_alias), or
// join the arena, where it is reused once they are dead: the peak drops;
// input_output_alias and buffer_donor donate the parameters they name.
func TestDonation(t *testing.T) {
	mods, err := hlo.ParseFile("../tests/testdata/mlp_train/graph.hlo")
	require.NoError(t, err)
	def, err := Compile(mods[0], desktop, Options{})
	require.NoError(t, err)
	don, err := Compile(mods[0], desktop, Options{Donate: []int{0, 1, 2, 3, 4, 5}})
	require.NoError(t, err)
	require.Less(t, don.PeakBytes(), def.PeakBytes())
	checkMemoryPlan(t, "donated", don, int64(desktop.StorageAlign))
	_, err = Compile(mods[0], desktop, Options{Donate: []int{6}})
	require.ErrorContains(t, err, "donated parameter leaf 6 does not exist")

	m, err := hlo.Parse("alias.hlo", "HloModule f, input_output_alias={{}: (0, {}, must-alias)}\nENTRY f {\n  a = s32[1000] parameter(0)\n  ROOT sum = s32[1000] add(a, a)\n}")
	require.NoError(t, err)
	p, err := Compile(m, desktop, Options{})
	require.NoError(t, err)
	a := p.Buffers[p.Params[0]]
	require.True(t, a.Donated)
	require.Equal(t, p.Outputs[0]+1, a.Alias, "the result takes over the parameter's memory")
	require.Equal(t, p.Params[0]+1, p.Buffers[p.Outputs[0]].Alias)
	require.Equal(t, int64(4000), p.PeakBytes(), "no arena: the result is written over the parameter")

	// buffer_donor donates too (JAX's donated arguments that no result
	// aliases).
	m, err = hlo.Parse("donor.hlo", "HloModule f, buffer_donor={ (0, {}) }\nENTRY f {\n  a = s32[1000] parameter(0)\n  b = s32[1000] parameter(1)\n  ROOT sum = s32[1000] add(a, b)\n}")
	require.NoError(t, err)
	p, err = Compile(m, desktop, Options{})
	require.NoError(t, err)
	require.True(t, p.Buffers[p.Params[0]].Donated)
	require.False(t, p.Buffers[p.Params[1]].Donated)
	require.Equal(t, p.Outputs[0]+1, p.Buffers[p.Params[0]].Alias, "the result takes over the donor's memory")

	// A result of the parameter's size but written before its last read
	// cannot take its memory: the parameter stays in the arena.
	m, err = hlo.Parse("early.hlo", `HloModule f
ENTRY f {
  a = s32[1000] parameter(0)
  n = s32[1000] negate(a)
  r = s32[1000] reverse(a), dimensions={0}
  s = s32[1000] add(n, r)
  ROOT t = (s32[1000], s32[1000]) tuple(n, s)
}`)
	require.NoError(t, err)
	p, err = Compile(m, desktop, Options{Donate: []int{0}, NoFuse: true})
	require.NoError(t, err)
	n := p.Buffers[p.Outputs[0]]
	require.Zero(t, n.Alias, "n is written while reverse has yet to read a")
	checkMemoryPlan(t, "early", p, int64(desktop.StorageAlign))

	// A donated parameter no step reads is left alone (it had no place
	// in the arena, and the run bound it there: GoMLX donates unused
	// inputs).
	m, err = hlo.Parse("unused.hlo", "HloModule f\nENTRY f {\n  a = s32[10] parameter(0)\n  b = s32[10] parameter(1)\n  ROOT n = s32[10] negate(b)\n}")
	require.NoError(t, err)
	p, err = Compile(m, desktop, Options{Donate: []int{0}})
	require.NoError(t, err)
	require.False(t, p.Buffers[p.Params[0]].InArena())
	checkMemoryPlan(t, "unused", p, int64(desktop.StorageAlign))
}

// TestConvertNotInPlace: a convert between element widths reads its
// input only at its own index, but must not write over it: element i of
// the result would land on element i/2 (or 2i) of the input, which
// another invocation may not have read yet. (An f16 -> f32 convert did,
// in a corpus module without fusion, once 16-bit storage made f16 two
// bytes.)
func TestConvertNotInPlace(t *testing.T) {
	tg := desktop
	tg.Storage16 = true
	for _, ty := range []string{"f64", "f16"} {
		m, err := hlo.Parse("c.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  x = %[1]s[64] parameter(0)\n  a = %[1]s[64] negate(x)\n  c = f32[64] convert(a)\n  ROOT r = f32[64] negate(c)\n}", ty))
		require.NoError(t, err)
		p, err := Compile(m, tg, Options{NoFuse: true})
		require.NoError(t, err)
		var a, c Buffer
		for _, b := range p.Buffers {
			switch b.Name {
			case "a":
				a = b
			case "c":
				c = b
			}
		}
		require.True(t, a.Offset+a.Size <= c.Offset || c.Offset+c.Size <= a.Offset, "%s: a at [%d,%d), c at [%d,%d)", ty, a.Offset, a.Offset+a.Size, c.Offset, c.Offset+c.Size)
	}
}

// TestProgramEncoding: every corpus program encodes and decodes to the
// same encoding, and every truncation of an encoding is an error, not a
// panic.
func TestProgramEncoding(t *testing.T) {
	n := 0
	files, _ := hlotest.CorpusE2E(t)
	for _, file := range files {
		mods, err := hlo.ParseFile(file)
		require.NoError(t, err)
		p, err := Compile(mods[0], desktop, Options{})
		if err != nil {
			continue
		}
		b, err := p.MarshalBinary()
		require.NoError(t, err)
		var q Program
		require.NoError(t, q.UnmarshalBinary(b), file)
		b2, err := q.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, b2, file)
		require.Equal(t, len(p.Steps), len(q.Steps))
		for i := range p.Kernels {
			require.Equal(t, p.Kernels[i].Words, q.Kernels[i].Words)
		}
		if n < 5 { // every prefix of a few encodings
			for i := 0; i < len(b); i += 1 + len(b)/200 {
				require.Error(t, new(Program).UnmarshalBinary(b[:i]), "%s truncated at %d", file, i)
			}
		}
		n++
	}
	require.Greater(t, n, 60)
}

// TestCompileScalesLinearly: compiling a chain of n negates, fused into
// kernels of maxKernelCost, allocates in proportion to n. Each fused
// operand's buffer name was built from the path to it, so a chain's names summed to n^2
// bytes: 50,000 negates took 32 s and 9.3 GB. Allocation, not time, is
// measured: it does not depend on the machine.
func TestCompileScalesLinearly(t *testing.T) {
	alloc := func(n int) uint64 {
		m, err := hlo.Parse("chain", chain(n, "negate"))
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, err := Compile(m, DefaultTarget, Options{})
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		dispatches := 0
		for _, st := range p.Steps {
			if st.Kind.IsDispatch() {
				dispatches++
			}
		}
		// (The full chunks' kernels are one: the same code on other values.)
		require.Equal(t, (n+maxKernelCost-1)/maxKernelCost, dispatches, "fused whole, in kernels of maxKernelCost")
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(2000), alloc(8000)
	t.Logf("2000 negates: %d bytes allocated; 8000: %d (%.1fx)", small, large, float64(large)/float64(small))
	require.Less(t, float64(large)/float64(small), 6.0, "four times the program, more than six times the allocation")
}

// TestStorageRangeLimit: an array larger than the device binds to a
// kernel (maxStorageBufferRange) is reached through its buffer device
// address, and refused by name before any run on a device without them;
// one of exactly that size takes a descriptor unless AddressAbove asks.
func TestStorageRangeLimit(t *testing.T) {
	neg := func(n int) *hlo.Module {
		m, err := hlo.Parse("t.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  ROOT y = f32[%d] negate(x)\n}\n", n, n))
		require.NoError(t, err)
		return m
	}
	tg := desktop
	tg.MaxStorageRange = 4096
	for _, c := range []struct {
		n         int
		address   bool  // the device has buffer device addresses
		above     int64 // Options.AddressAbove
		addressed []int // the kernel's Addressed, or nil
		err       string
	}{
		{1024, false, 0, nil, ""},
		{1025, false, 0, nil, "an array of 4100 bytes needs a device with bufferDeviceAddress and shaderInt64: this one binds at most 4096 bytes"},
		{1024, true, 0, nil, ""},
		{1025, true, 0, []int{0, 1}, ""},
		{1024, true, 4095, []int{0, 1}, ""}, // asked for below the range
		{1024, true, 8192, nil, ""},         // the range bounds what is asked
		{1024, false, 4, nil, ""},           // nothing to reach them by
	} {
		tg.BufferAddress = c.address
		p, err := Compile(neg(c.n), tg, Options{AddressAbove: c.above})
		if c.err != "" {
			require.ErrorContains(t, err, c.err)
			continue
		}
		require.NoError(t, err, "%+v", c)
		require.Len(t, p.Kernels, 1)
		require.Equal(t, c.addressed, p.Kernels[0].Addressed, "%+v", c)
		require.NoError(t, spirv.Validate(p.Kernels[0].Words))
	}
	// Addresses take 8 bytes of push constants each: past maxStorageBufferRange
	// an array must have one; below it, one that does not fit keeps its
	// descriptor.
	add := func(n int) *hlo.Module {
		m, err := hlo.Parse("t.hlo", fmt.Sprintf("HloModule m\nENTRY e {\n  x = f32[%d] parameter(0)\n  y = f32[%d] parameter(1)\n  ROOT z = f32[%d] add(x, y)\n}\n", n, n, n))
		require.NoError(t, err)
		return m
	}
	tg.BufferAddress, tg.MaxPushBytes = true, 20 // the count and two addresses
	p, err := Compile(add(512), tg, Options{AddressAbove: 4})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, p.Kernels[0].Addressed)
	_, err = Compile(add(2048), tg, Options{})
	require.ErrorContains(t, err, "a kernel reaches more arrays past maxStorageBufferRange (4096 bytes) than its 20 bytes of push constants hold the addresses of")
}

// TestReshapeAliases: a reshape of a kernel's result is that result's
// buffer read in its own dimensions, with no kernel of its own, at the
// root and before a reader that takes buffers (an FFT's passes); a
// reshape of a parameter, a reshape beside its operand among the
// results, and two reshapes of one value among them keep their copies.
func TestReshapeAliases(t *testing.T) {
	for _, c := range []struct {
		body    string
		kernels int
	}{
		{"  y = f32[8] reduce(x, c), dimensions={1}, to_apply=add\n  ROOT r = f32[2,4] reshape(y)", 1},
		{"  ROOT r = f32[48] reshape(x)", 1},
		{"  y = f32[8] reduce(x, c), dimensions={1}, to_apply=add\n  r = f32[2,4] reshape(y)\n  ROOT t = (f32[8], f32[2,4]) tuple(y, r)", 2},
		{"  y = f32[8] reduce(x, c), dimensions={1}, to_apply=add\n  r = f32[2,4] reshape(y)\n  q = f32[4,2] reshape(y)\n  ROOT t = (f32[2,4], f32[4,2]) tuple(r, q)", 2},
		{"  y = f32[8] reduce(x, c), dimensions={1}, to_apply=add\n  r = f32[2,4] reshape(y)\n  q = f32[4,2] reshape(y)\n  ROOT t = (f32[2,4], f32[4,2], f32[8]) tuple(r, q, y)", 3},
	} {
		p, err := compileText(t, "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[8,6] parameter(0)\n  c = f32[] constant(0)\n"+c.body+"\n}")
		require.NoError(t, err, c.body)
		require.Len(t, p.Steps, c.kernels, c.body)
		seen := map[int]bool{}
		for _, b := range p.Outputs {
			require.False(t, seen[b], "%s: one buffer is two results", c.body)
			seen[b] = true
		}
	}
	// The IRFFT of an even length past 1000 ends in its passes' pairs
	// reshaped into the signal: the last pass writes the result.
	p, err := compileText(t, "HloModule m\nENTRY e {\n  x = c64[2,1025] parameter(0)\n  ROOT f = f32[2,2048] fft(x), fft_type=IRFFT, fft_length={2048}\n}")
	require.NoError(t, err)
	last := p.Steps[len(p.Steps)-1]
	require.True(t, strings.HasPrefix(p.Kernels[last.Kernel].Name, "fft_pass"), p.Kernels[last.Kernel].Name)
	require.Equal(t, p.Outputs[0], last.Buffers[len(last.Buffers)-1])
}
