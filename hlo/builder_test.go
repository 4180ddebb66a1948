package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuilder(t *testing.T) {
	b := NewBuilder("built")
	add := b.Computation("add")
	x, y := add.Parameter(ArrayShape(F32)), add.Parameter(ArrayShape(F32))
	add.Op(OpAdd, x, y)
	e := b.Entry("main")
	p := e.Parameter(ArrayShape(F32, 2, 3))
	zero := e.Constant(ScalarLiteral(F32, 0))
	sum := e.Op(OpReduce, p, zero).Set("dimensions", "{1}").Calls(add.Computation())
	bc := e.Op(OpBroadcast, sum.Instruction).Set("dimensions", "{0}").WithShape(ArrayShape(F32, 2, 3))
	e.Op(OpDivide, p, bc.Instruction)
	m, err := b.Build()
	require.NoError(t, err)
	require.Equal(t, "f32[2]", sum.Shape.String(), "inferred")
	require.Equal(t, "f32[2,3]", m.Entry.Root.Shape.String())

	// What it prints parses back to the same text.
	text := m.String()
	m2, err := Parse("built.hlo", text)
	require.NoError(t, err)
	require.NoError(t, Verify(m2))
	require.Equal(t, text, m2.String())

	b = NewBuilder("bad")
	e = b.Entry("main")
	p = e.Parameter(ArrayShape(F32, 2))
	q := e.Parameter(ArrayShape(S32, 2))
	e.Op(OpAdd, p, q)
	_, err = b.Build()
	require.ErrorContains(t, err, "add.1 (add): operands parameter.1 and parameter.2 differ")

	b = NewBuilder("badattr")
	e = b.Entry("main")
	e.Op(OpTranspose, e.Parameter(ArrayShape(F32, 2))).Set("dimensions", "{x}")
	_, err = b.Build()
	require.ErrorContains(t, err, "bad dimensions={x}")
}

// TestBuilderCheck: Check infers an instruction's shape where it is made,
// and takes an instruction that fails out of the module, which stays
// buildable.
func TestBuilderCheck(t *testing.T) {
	b := NewBuilder("checked")
	e := b.Entry("main")
	p := e.Parameter(ArrayShape(F32, 2, 3))
	q := e.Parameter(ArrayShape(S32, 2, 3))
	neg := e.Op(OpNegate, p)
	require.NoError(t, neg.Check())
	require.Equal(t, "f32[2,3]", neg.Shape.String(), "inferred at Check")

	bad := e.Op(OpAdd, neg.Instruction, q)
	require.ErrorContains(t, bad.Check(), "differ")
	badAttr := e.Op(OpTranspose, p).Set("dimensions", "{0,")
	require.Error(t, badAttr.Check())

	m, err := b.Build()
	require.NoError(t, err, "the failed instructions are gone")
	require.Equal(t, neg.Instruction, m.Entry.Root)
	require.Len(t, m.Entry.Instructions, 3)
}
