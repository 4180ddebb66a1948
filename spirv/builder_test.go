package spirv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStringEncoding(t *testing.T) {
	require.Equal(t, []uint32{0}, String(""))
	require.Equal(t, []uint32{0x6e69616d, 0}, String("main")) // NUL needs its own word
	require.Equal(t, []uint32{0x4c534c47, 0x6474732e, 0x3035342e, 0}, String("GLSL.std.450"))
	require.Equal(t, []uint32{0x00006261}, String("ab"))
}

func TestDedupAndCapabilities(t *testing.T) {
	b := NewBuilder()
	i32 := b.TypeInt(32, true)
	require.Equal(t, i32, b.TypeInt(32, true))
	require.NotEqual(t, i32, b.TypeInt(32, false))
	require.Equal(t, b.ConstS32(-1), b.ConstS32(-1))
	require.NotEqual(t, b.ConstS32(1), b.ConstU32(1), "same bits, different types")
	require.True(t, b.HasCapability(CapabilityShader))
	require.False(t, b.HasCapability(CapabilityInt64))
	require.False(t, b.HasCapability(CapabilityFloat64))
	b.TypeInt(64, false)
	require.True(t, b.HasCapability(CapabilityInt64))
	b.TypeFloat(64)
	require.True(t, b.HasCapability(CapabilityFloat64))
	f := b.TypeFloat(32)
	a1 := b.TypeRuntimeArray(f, 4)
	require.Equal(t, a1, b.TypeRuntimeArray(f, 4))
	require.NotEqual(t, b.TypeBlock([]ID{a1}, []uint32{0}), b.TypeBlock([]ID{a1}, []uint32{0}),
		"every block a type of its own (TypeBlock says why)")
}

// TestMinimalModule checks the header and that a module with an empty
// compute entry point passes spirv-val.
func TestMinimalModule(t *testing.T) {
	b := NewBuilder()
	void := b.TypeVoid()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	fn.Void(OpReturn)
	fn.End()
	b.EntryPoint(fn.ID, "main")
	b.LocalSize(fn.ID, 1, 1, 1)
	w := b.Words()
	require.Equal(t, uint32(MagicNumber), w[0])
	require.Equal(t, Version13, w[1])
	require.Equal(t, uint32(b.Bound()), w[3])
	require.NoError(t, Validate(w))
	back, err := FromBytes(Bytes(w))
	require.NoError(t, err)
	require.Equal(t, w, back)
	_, err = FromBytes([]byte{1, 2, 3})
	require.Error(t, err)
}

// TestValidateRejects makes sure the validator is really consulted: a
// module whose entry point has no LocalSize is invalid for Vulkan.
func TestValidateRejects(t *testing.T) {
	b := NewBuilder()
	void := b.TypeVoid()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	fn.Void(OpReturn)
	fn.End()
	b.EntryPoint(fn.ID, "main")
	require.Error(t, Validate(b.Words()))
}

// TestStructuredControl: If and While make structured control flow
// spirv-val accepts, nested, with the typed helpers inside; and the
// disassembly shows the instructions they name.
func TestStructuredControl(t *testing.T) {
	b := NewBuilder()
	void, u32, bl := b.TypeVoid(), b.TypeInt(32, false), b.TypeBool()
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	ptr := b.TypePointer(StorageFunction, u32)
	i := fn.LocalVariable(ptr)
	sum := fn.LocalVariable(ptr)
	zero, one, ten := b.Constant(u32, 0), b.Constant(u32, 1), b.Constant(u32, 10)
	fn.Store(i, zero)
	fn.Store(sum, zero)
	var iv ID
	require.NoError(t, fn.While(func() ID {
		iv = fn.Load(u32, i)
		return fn.ULessThan(bl, iv, ten)
	}, func() error {
		odd := fn.IEqual(bl, fn.BitwiseAnd(u32, iv, one), one)
		return fn.If(odd, func() error {
			fn.Store(sum, fn.IAdd(u32, fn.Load(u32, sum), fn.Select(u32, odd, iv, zero)))
			return nil
		})
	}, func() { fn.Store(i, fn.IAdd(u32, fn.Load(u32, i), one)) }))
	fn.Void(OpReturn)
	dis := finishValid(t, b, fn)
	for _, want := range []string{"OpLoopMerge", "OpSelectionMerge", "OpULessThan", "OpBitwiseAnd", "OpSelect", "OpIAdd"} {
		require.Contains(t, dis, want)
	}
}

// TestHoist: code emitted inside a branch and hoisted ahead of it
// dominates both branches' uses, and the module stays valid (spirv-val
// rejects a use its definition does not dominate).
func TestHoist(t *testing.T) {
	b, fn, u32, cu := newMain()
	x := fn.Op(OpIAdd, u32, cu(1), cu(2))
	at := fn.Len()
	var hoisted ID
	cond := fn.Op(OpULessThan, b.TypeBool(), uint32(x), cu(5))
	require.NoError(t, fn.If(cond, func() error {
		mark := fn.Len()
		hoisted = fn.Op(OpIMul, u32, uint32(x), cu(3))
		fn.Hoist(at, mark)
		return nil
	}))
	fn.Op(OpIAdd, u32, uint32(hoisted), uint32(x)) // after the branch: needs the hoisted value to dominate
	fn.Void(OpReturn)
	finishValid(t, b, fn)
}

// TestReuse: a pure instruction repeated in its block is the first one;
// in another block, under Unshared, or as a load of memory that may be
// written it is emitted again. A ConstVariable's loads are invariant,
// and a table is one variable.
func TestReuse(t *testing.T) {
	b, fn, u32, cu := newMain()
	x := fn.Op(OpIAdd, u32, cu(1), cu(2))
	require.Equal(t, x, fn.Op(OpIAdd, u32, cu(1), cu(2)), "same block")
	require.NotEqual(t, x, fn.Op(OpIAdd, u32, cu(2), cu(1)), "other operands")
	fn.Unshared(func() { require.NotEqual(t, x, fn.Op(OpIAdd, u32, cu(1), cu(2)), "unshared") })

	arr := b.TypeArray(u32, b.ConstU32(2), 0)
	table := b.ConstantComposite(arr, b.ConstU32(7), b.ConstU32(9))
	tv := b.ConstVariable(b.TypePointer(StoragePrivate, arr), table)
	require.Equal(t, tv, b.ConstVariable(b.TypePointer(StoragePrivate, arr), table), "one variable a table")
	elem := b.TypePointer(StoragePrivate, u32)
	p := fn.AccessChain(elem, tv, ID(x))
	require.Equal(t, p, fn.AccessChain(elem, tv, ID(x)))
	v := fn.LoadInvariant(u32, p)
	require.Equal(t, v, fn.LoadInvariant(u32, p), "invariant load")

	local := fn.LocalVariable(b.TypePointer(StorageFunction, u32))
	fn.Store(local, x)
	l := fn.Load(u32, local)
	fn.Store(local, v)
	require.NotEqual(t, l, fn.Load(u32, local), "a load of written memory")

	b.Decorate(x, DecorationNoContraction)
	b.Decorate(x, DecorationNoContraction) // x reused: decorated once
	next := fn.b.NewID()
	fn.Do(OpBranch, next)
	fn.Label(next)
	y := fn.Op(OpIAdd, u32, cu(1), cu(2))
	require.NotEqual(t, x, y, "another block")
	fn.Void(OpReturn)
	dis := finishValid(t, b, fn)
	require.Equal(t, 1, strings.Count(dis, "NoContraction"))
}

func TestReuseWhereDominated(t *testing.T) {
	b, fn, u32, cu := newMain()
	boolT := b.TypeBool()
	op := func(a, c uint32) ID { return fn.Op(OpIMul, u32, cu(a), cu(c)) }
	x := op(1, 2)
	var inThen ID
	require.NoError(t, fn.If(fn.ULessThan(boolT, x, ID(cu(5))), func() error {
		require.Equal(t, x, op(1, 2), "the header dominates the then block")
		inThen = op(3, 4)
		return nil
	}))
	require.Equal(t, x, op(1, 2), "and the merge block")
	require.NotEqual(t, inThen, op(3, 4), "the then block does not dominate the merge block")

	var inCheck, inBody ID
	require.NoError(t, fn.While(func() ID {
		inCheck = op(5, 6)
		return fn.ULessThan(boolT, inCheck, ID(cu(7)))
	}, func() error {
		require.Equal(t, inCheck, op(5, 6), "the check dominates the body")
		inBody = op(8, 9)
		return fn.If(fn.ULessThan(boolT, inBody, ID(cu(3))), func() error {
			require.Equal(t, inBody, op(8, 9), "nested")
			return nil
		})
	}, func() {
		require.Equal(t, inBody, op(8, 9), "the body dominates the continue block")
	}))
	require.Equal(t, inCheck, op(5, 6), "the check dominates the loop's merge block")
	require.NotEqual(t, inBody, op(8, 9), "the body does not")
	require.True(t, fn.Dominates(fn.Block(), fn.Block()))
	fn.Void(OpReturn)
	finishValid(t, b, fn)
}

// newMain starts a module with a void function in its first block, and
// returns the u32 type and a maker of u32 constants.
func newMain() (*Builder, *Function, ID, func(uint32) uint32) {
	b := NewBuilder()
	void, u32 := b.TypeVoid(), b.TypeInt(32, false)
	fn := b.Function(void, b.TypeFunction(void))
	fn.Label(0)
	return b, fn, u32, func(v uint32) uint32 { return uint32(b.Constant(u32, v)) }
}

// finishValid ends fn, makes it the entry point of one invocation, and
// returns the module's disassembly once spirv-val accepts it.
func finishValid(t *testing.T, b *Builder, fn *Function) string {
	t.Helper()
	fn.End()
	b.EntryPoint(fn.ID, "main")
	b.LocalSize(fn.ID, 1, 1, 1)
	w := b.Words()
	require.NoError(t, Validate(w))
	dis, err := Disassemble(w)
	require.NoError(t, err)
	return dis
}
