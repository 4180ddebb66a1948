package lower

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/kgen"
	"github.com/vkjit/vkjit/spirv"
)

// chain is a module of n elementwise ops on f32[4096], each reading the
// one before (and the parameter, for binary ops), cycling through ops.
func chain(n int, ops ...string) string { return typedChain("f32", n, ops...) }

// typedChain is chain's module on elements of type typ.
func typedChain(typ string, n int, ops ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule chain\nENTRY main {\n  x0 = %s[4096] parameter(0)\n", typ)
	for i := 1; i <= n; i++ {
		root := ""
		if i == n {
			root = "ROOT "
		}
		op := ops[i%len(ops)]
		if o, _ := hlo.LookupOpcode(op); o.Arity() == 1 {
			fmt.Fprintf(&b, "  %sx%d = %s[4096] %s(x%d)\n", root, i, typ, op, i-1)
		} else {
			fmt.Fprintf(&b, "  %sx%d = %s[4096] %s(x%d, x0)\n", root, i, typ, op, i-1)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestKernelSizeBounded: fusion stops a kernel at maxKernelCost (fuse
// loops, and fuse siblings, which would otherwise put two such kernels
// in one), so a long chain becomes kernels of bounded size rather than
// one kernel the driver takes minutes to compile; library functions
// weigh more than adds.
func TestKernelSizeBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       int
		ops     []string
		kernels int
	}{
		{"adds", 5000, []string{"add", "multiply", "subtract", "maximum"}, 3},
		{"sines", 400, []string{"sine", "multiply"}, 8}, // 200 sines at 77 and 200 multiplies at 1: 15,600
		{"short", 100, []string{"add", "multiply"}, 1},
	} {
		m, err := hlo.Parse("chain", chain(c.n, c.ops...))
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, c.name)
		// (Kernels of the same code are one: count the dispatches.)
		require.Equal(t, c.kernels, stepKinds(p)[StepDispatch], c.name)
		for _, line := range p.Plan {
			_, inline, _ := strings.Cut(line, "; inline ")
			cost := 0
			for _, name := range strings.Fields(inline) {
				cost += kgen.OpCost(instructionOf(m, name))
			}
			require.LessOrEqual(t, cost, maxKernelCost, "%s: %s", c.name, line[:40])
		}
	}
}

// TestLibraryWords measures each library function's SPIR-V words an
// element for lavapipe, in f32 and f64 (an elementwise kernel of the
// function less one of a negate, per element of an invocation), and
// requires kgen.LibraryWords, which OpCost weighs functions by, within
// a fifth of it.
func TestLibraryWords(t *testing.T) {
	words := func(text string) (int, int) {
		m, err := hlo.Parse("f", text)
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1)
		return len(p.Kernels[0].Words), max(p.Kernels[0].Vector, 1)
	}
	for _, ty := range []hlo.ElementType{hlo.F32, hlo.F64} {
		unary := "HloModule f\nENTRY e {\n  x = %[1]s[4096] parameter(0)\n  ROOT r = %[1]s[4096] %[2]s(x)\n}\n"
		binary := "HloModule f\nENTRY e {\n  x = %[1]s[4096] parameter(0)\n  y = %[1]s[4096] parameter(1)\n  ROOT r = %[1]s[4096] %[2]s(x, y)\n}\n"
		base, lanes := words(fmt.Sprintf(unary, ty, "negate"))
		ops := kgen.LibraryOpcodes()
		require.Len(t, ops, 14)
		for _, op := range ops {
			name := op.String()
			text := unary
			if op.Arity() == 2 {
				text = binary
			}
			n, l := words(fmt.Sprintf(text, ty, name))
			require.Equal(t, lanes, l, "%s %s: elements per invocation", ty, name)
			got, want := float64(n-base)/float64(l), float64(kgen.LibraryWords(op, ty))
			require.InEpsilon(t, want, got, 0.2, "%s %s: %.0f words an element, kgen.LibraryWords says %.0f", ty, name, got, want)
		}
	}
}

// TestNarrowChainsBounded: an op of an f16, bf16 or f8 result rounds it
// in integer code, ten times an f32 op's words for f16 (roundCost): a
// chain of 1500 adds and multiplies is several kernels of bounded size,
// not one (f16: 438,628 words, a first run of 5 s on lavapipe).
func TestNarrowChainsBounded(t *testing.T) {
	for _, typ := range []string{"f16", "bf16", "f8e4m3fn"} {
		m, err := hlo.Parse("chain", typedChain(typ, 1500, "add", "multiply", "subtract", "maximum"))
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, typ)
		require.Greater(t, stepKinds(p)[StepDispatch], 1, typ)
		for _, k := range p.Kernels {
			require.Less(t, len(k.Words), 80_000, "%s: %s", typ, k.Name)
		}
	}
}

func instructionOf(m *hlo.Module, name string) *hlo.Instruction {
	for _, in := range m.Entry.Instructions {
		if in.Name == name {
			return in
		}
	}
	return &hlo.Instruction{Op: hlo.OpParameter}
}

// TestLargeKernelsStayScalar: a kernel whose element takes more than
// vectorMaxLaneWords is not made a vector kernel (eight lanes of the
// same code); a short one is.
func TestLargeKernelsStayScalar(t *testing.T) {
	for _, c := range []struct {
		n      int
		vector int
	}{{4, kgen.VectorWidth}, {40, 1}} {
		m, err := hlo.Parse("chain", chain(c.n, "sine", "multiply"))
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1)
		require.Equal(t, c.vector, p.Kernels[0].Vector, "%d ops, %d words", c.n, len(p.Kernels[0].Words))
	}
}

// TestSharedSubexpressions: a kernel computes a value its ops need
// several times once. Complex tan, sin, cos and exp take the sine and
// the cosine of one real part, each over the same Payne-Hanek reduction
// in f64 (14 32-bit multiplies), and the real and imaginary parts of a
// result are assembled by one kernel from the same elements: a c128
// tan kernel held 8 reductions (24,344 words, 2 s of lavapipe's compile at
// its first dispatch) where one suffices.
func TestSharedSubexpressions(t *testing.T) {
	for _, c := range []struct {
		op      string
		reduces int
	}{
		{"tan", 1}, {"sine", 1}, {"cosine", 1}, {"exponential", 1},
		{"exponential-minus-one", 2}, // sin b and sin b/2
		{"tanh", 1},
	} {
		text := fmt.Sprintf("HloModule m\nENTRY main {\n  x = c128[64] parameter(0)\n  ROOT r = c128[64] %s(x)\n}\n", c.op)
		m, err := hlo.Parse("m.hlo", text)
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, c.op)
		muls := 0
		for _, k := range p.Kernels {
			require.NoError(t, spirv.Validate(k.Words), c.op)
			dis, err := spirv.Disassemble(k.Words)
			require.NoError(t, err)
			muls += strings.Count(dis, "OpUMulExtended")
		}
		require.Equal(t, 14*c.reduces, muls, "%s: Payne-Hanek reductions", c.op)
	}
}

// TestComplexPartsComputedOnce checks that a complex result's two parts
// share what they compute. A small output's kernel computes both parts
// of a position in one invocation (a parts kernel), with less float
// arithmetic than the kernels of its real part alone and its imaginary
// part alone together where the parts share work (exp(a) in exp's, sin
// a and cos a in sine's); a large output's vector kernel, eight elements
// (four positions) per invocation, holds at most four times the parts
// kernel's, where computing each element on its own held eight times.
func TestComplexPartsComputedOnce(t *testing.T) {
	kernel := func(n int, root string) *kgen.Kernel {
		text := fmt.Sprintf("HloModule m\nENTRY main {\n  x = c64[%d] parameter(0)\n%s}\n", n, root)
		m, err := hlo.Parse("m.hlo", text)
		require.NoError(t, err)
		p, err := Compile(m, LlvmpipeTarget, Options{})
		require.NoError(t, err, root)
		require.Len(t, p.Kernels, 1, root)
		require.NoError(t, spirv.Validate(p.Kernels[0].Words), root)
		return p.Kernels[0]
	}
	floatOps := func(k *kgen.Kernel) int {
		dis, err := spirv.Disassemble(k.Words)
		require.NoError(t, err)
		n := 0
		for _, l := range strings.Split(dis, "\n") {
			if strings.Contains(l, "= OpF") || strings.Contains(l, "OpExtInst ") {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		op     string
		shares bool
	}{{"multiply", false}, {"exponential", true}, {"sine", true}, {"tanh", true}, {"log", false}} {
		args := "x"
		if c.op == "multiply" {
			args = "x, x"
		}
		whole := func(n int) string {
			return fmt.Sprintf("  ROOT r = c64[%d] %s(%s)\n", n, c.op, args)
		}
		part := func(which string) string {
			return fmt.Sprintf("  z = c64[64] %s(%s)\n  ROOT r = f32[64] %s(z)\n", c.op, args, which)
		}
		parts, vec := kernel(64, whole(64)), kernel(4096, whole(4096))
		require.True(t, strings.HasSuffix(parts.Name, "_parts"), "%s: %s", c.op, parts.Name)
		require.Equal(t, 2, parts.Vector, c.op)
		require.Equal(t, kgen.VectorWidth, vec.Vector, c.op)
		if c.shares {
			apart := floatOps(kernel(64, part("real"))) + floatOps(kernel(64, part("imag")))
			require.Less(t, 4*floatOps(parts), 3*apart, "%s: %d float ops for both parts, %d for each apart", c.op, floatOps(parts), apart)
		}
		require.LessOrEqual(t, floatOps(vec), kgen.VectorWidth/2*floatOps(parts), c.op)
	}
}

// foldChain is a module whose 7 row sums over 256 elements, each of ops
// applied one after another to the parameter, are added to a vector of
// 7: a reduction that the kernel of the add computes inline.
func foldChain(typ string, ops ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule fold\nadd {\n  x = %[1]s[] parameter(0)\n  y = %[1]s[] parameter(1)\n  ROOT a = %[1]s[] add(x, y)\n}\n", typ)
	fmt.Fprintf(&b, "ENTRY main {\n  c0 = %[1]s[7,256] parameter(0)\n  b = %[1]s[7] parameter(1)\n", typ)
	for i, op := range ops {
		if o, _ := hlo.LookupOpcode(op); o.Arity() == 1 {
			fmt.Fprintf(&b, "  c%d = %s[7,256] %s(c%d)\n", i+1, typ, op, i)
		} else {
			fmt.Fprintf(&b, "  c%d = %s[7,256] %s(c%d, c%d)\n", i+1, typ, op, i, i)
		}
	}
	fmt.Fprintf(&b, "  z = %[1]s[] constant(0)\n  r = %[1]s[7] reduce(c%[2]d, z), dimensions={1}, to_apply=add\n  ROOT s = %[1]s[7] add(r, b)\n}\n", typ, len(ops))
	return b.String()
}

// rowChain is foldChain's ops before a row max of f32[1024,256] that
// the rows then subtract (a softmax's first half): a row kernel's shape.
func rowChain(ops ...string) string {
	src := foldChain("f32", ops...)
	src = strings.ReplaceAll(src, "[7,256]", "[1024,256]")
	src = strings.ReplaceAll(src, "[7]", "[1024]")
	src = strings.Replace(src, "ROOT a = f32[] add(x, y)", "ROOT a = f32[] maximum(x, y)", 1)
	last := fmt.Sprintf("c%d", len(ops))
	return strings.Replace(src, "ROOT s = f32[1024] add(r, b)",
		"rb = f32[1024,256] broadcast(r), dimensions={0}\n  ROOT s = f32[1024,256] subtract("+last+", rb)", 1)
}

// gemmChain is [256,512] x [512,512] followed by ops (binary ones read
// the dot's result again).
func gemmChain(ops ...string) string {
	var b strings.Builder
	b.WriteString("HloModule gemm\nENTRY main {\n  x = f32[256,512] parameter(0)\n  w = f32[512,512] parameter(1)\n")
	b.WriteString("  c0 = f32[256,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n")
	for i, op := range ops {
		root := ""
		if i == len(ops)-1 {
			root = "ROOT "
		}
		if o, _ := hlo.LookupOpcode(op); o.Arity() == 1 {
			fmt.Fprintf(&b, "  %sc%d = f32[256,512] %s(c%d)\n", root, i+1, op, i)
		} else {
			fmt.Fprintf(&b, "  %sc%d = f32[256,512] %s(c%d, c0)\n", root, i+1, op, i)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestInlineFoldCost: a reduction computed inside another kernel folds in
// its own kernel's lane order, a step of every lane's elements unrolled
// (kgen.InlineFoldCopies), so fusion counts its producers' code that
// many times: eight library functions before a row sum of 256 made a
// kernel of 579,051 words at 16 lanes that lavapipe took 8.6 s to
// compile; weighted, the kernel that folds inline keeps what fits
// maxKernelCost. An integer power (a loop NIR unrolls, slow for LLVM:
// kgen.OpCost 128) stays out of such a fold: the fuzzer's seed 1516 made
// 194 loops in one kernel of 64,104 words and 5-10 s of compile.
func TestInlineFoldCost(t *testing.T) {
	wide := LlvmpipeTarget
	wide.SubgroupSize = 16
	for _, tg := range []Target{LlvmpipeTarget, wide} {
		for _, src := range []string{
			foldChain("f32", "tanh", "sine", "cosine", "exponential", "log", "sine", "cosine", "exponential"),
			foldChain("s32", "power", "negate"),
		} {
			m, err := hlo.Parse("fold.hlo", src)
			require.NoError(t, err)
			p, err := Compile(m, tg, Options{})
			require.NoError(t, err)
			r := instructionOf(m, "r")
			copies := kgen.InlineFoldCopies(r, kgen.Env{Target: tg, SubgroupReduce: true})
			require.Equal(t, int(4*tg.SubgroupSize), copies, "a step of every lane's quad")
			folded := false
			for _, line := range p.Plan {
				_, inline, _ := strings.Cut(line, "; inline ")
				names := strings.Fields(inline)
				if !slices.Contains(names, "r") {
					continue
				}
				folded = true
				cost := kgen.OpCost(r)
				for _, name := range names {
					if name != "r" && name != "z" {
						cost += copies * kgen.OpCost(instructionOf(m, name))
					}
				}
				require.LessOrEqual(t, cost, maxKernelCost, "%d lanes: %s", tg.SubgroupSize, line)
				require.NotContains(t, names, "c1", "%d lanes: the power (or the chain's first op) computed apart: %s", tg.SubgroupSize, line)
			}
			require.True(t, folded, "the sums computed inline in the add's kernel")
			for _, k := range p.Kernels {
				require.Less(t, len(k.Words), 160_000, "%d lanes: %s", tg.SubgroupSize, k.Name)
				require.NoError(t, spirv.Validate(k.Words), k.Name)
			}
		}
		// A row kernel computing the max first folds it unrolled the same
		// way: with the chain fused it was 584,586 words at 16 lanes.
		m, err := hlo.Parse("rows.hlo", rowChain("tanh", "sine", "cosine", "exponential", "log", "sine", "cosine", "exponential"))
		require.NoError(t, err)
		p, err := Compile(m, tg, Options{})
		require.NoError(t, err)
		for _, k := range p.Kernels {
			require.Less(t, len(k.Words), 160_000, "%d lanes: %s (%s)", tg.SubgroupSize, k.Name, p.Plan)
		}
		// A GEMM's epilogue runs once per result of a tile, its code
		// copied for each (maxEpilogueCost): eight library functions
		// after [256,512] x [512,512] made 585,471 words at 16 lanes.
		m, err = hlo.Parse("gemm.hlo", gemmChain("tanh", "sine", "cosine", "exponential", "log", "sine", "cosine", "exponential"))
		require.NoError(t, err)
		p, err = Compile(m, tg, Options{})
		require.NoError(t, err)
		for _, k := range p.Kernels {
			require.Less(t, len(k.Words), 160_000, "%d lanes: %s (%s)", tg.SubgroupSize, k.Name, p.Plan)
		}
		m, err = hlo.Parse("gemm.hlo", gemmChain("add", "maximum"))
		require.NoError(t, err)
		p, err = Compile(m, tg, Options{})
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1, "%d lanes: a short epilogue stays fused: %s", tg.SubgroupSize, p.Plan)
		// A cheap producer keeps the row kernel.
		m, err = hlo.Parse("rowmax.hlo", rowChain("exponential"))
		require.NoError(t, err)
		p, err = Compile(m, tg, Options{})
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1, "%d lanes: %s", tg.SubgroupSize, p.Plan)
	}
}
