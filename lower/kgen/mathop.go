package kgen

import (
	"maps"
	"slices"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/mathlib"
	"github.com/vkjit/vkjit/spirv"
)

// libraryOp is an op the math library computes (mathlib.Lib): its
// emitter, by its operands, and its SPIR-V words an element as kgen
// generates it for lavapipe, [0] in f32 (which f16 and bf16 compute in,
// and complex64's parts), [1] in f64, which OpCost weighs it by.
// TestLibraryWords measures the words again (an elementwise kernel of
// the function less one of a negate) and requires these within a fifth.
type libraryOp struct {
	emit  func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error)
	words [2]int
}

// libraryOps are the ops the math library computes.
var libraryOps = map[hlo.Opcode]libraryOp{
	hlo.OpExp:       {libUnary(mathlib.Lib.Exp), [2]int{196, 323}},
	hlo.OpExpm1:     {libUnary(mathlib.Lib.Expm1), [2]int{273, 425}},
	hlo.OpLog:       {libUnary(mathlib.Lib.Log), [2]int{278, 415}},
	hlo.OpLog1p:     {libUnary(mathlib.Lib.Log1p), [2]int{385, 536}},
	hlo.OpLogistic:  {libUnary(mathlib.Lib.Logistic), [2]int{181, 354}},
	hlo.OpTanh:      {libUnary(mathlib.Lib.Tanh), [2]int{199, 534}},
	hlo.OpSin:       {libUnary(mathlib.Lib.Sin), [2]int{933, 2580}},
	hlo.OpCos:       {libUnary(mathlib.Lib.Cos), [2]int{923, 2552}},
	hlo.OpTan:       {libUnary(mathlib.Lib.Tan), [2]int{907, 2579}},
	hlo.OpErf:       {libUnary(mathlib.Lib.Erf), [2]int{539, 1614}},
	hlo.OpCbrt:      {libUnary(mathlib.Lib.Cbrt), [2]int{423, 1138}},
	hlo.OpAtan2:     {libBinary(mathlib.Lib.Atan2), [2]int{269, 540}},
	hlo.OpPower:     {libBinary(mathlib.Lib.Pow), [2]int{1312, 1555}},
	hlo.OpRemainder: {func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error) { return m.Fmod(a[0], a[1]) }, [2]int{418, 667}},
}

// LibraryOpcodes are the ops the math library computes, in opcode
// order.
func LibraryOpcodes() []hlo.Opcode {
	ops := slices.Collect(maps.Keys(libraryOps))
	slices.Sort(ops)
	return ops
}

// LibraryWords is the SPIR-V words an element of library function op
// takes in type t (0 for an op the library does not compute).
func LibraryWords(op hlo.Opcode, t hlo.ElementType) int {
	l, ok := libraryOps[op]
	switch {
	case !ok:
		return 0
	case t == hlo.F64 || t == hlo.C128:
		return l.words[1]
	}
	return l.words[0]
}

// opWords is an op's SPIR-V words an element, the unit OpCost counts
// library functions in: about an op's in a GEMM's epilogue, where the
// bounds are tightest (transformer_block's tanh GELU after its GEMM,
// 35 ops a result, 128 results a tile: 48,921 words with the GEMM's
// own, 8-11 an op); an op that loads an operand takes more (a chain of
// adds: 26).
const opWords = 12

// OpCost is in's share of a fused kernel's code, for bounding a
// kernel's size before it is generated: any op 1 but these.
//   - An elementwise op of a narrow float result the rounding's words in
//     an f32 op's (roundCost): bf16 4, f16 11, the f8 types 13; but 1
//     for an f16 or bf16 op whose result is on its operands' grid
//     (keepsGrid), which needs none.
//   - A library function its words in opWords, and at least 16, what
//     every function counted before their sizes were measured, by which
//     the bounds were set (exp, logistic and tanh still count 16): sine,
//     cosine and tan count 77 in f32 (215 in f64), erf 44, power 109. A
//     GEMM's epilogue of tanh and sine, 154,919 words, took lavapipe
//     2.5 s to compile when each counted 16.
//   - An integer power 128, for the compile: its 32 steps of
//     square-and-multiply (ipow) are a loop that NIR unrolls, and LLVM's
//     known-bits analysis of the chained multiplies is slow (64 of them
//     in a reduction's fold, 34,000 words, took lavapipe 3.6 s to
//     compile, against 0.2 s for as many words of exponentials).
func OpCost(in *hlo.Instruction) int {
	switch words := LibraryWords(in.Op, in.Shape.Elem); {
	case in.Op == hlo.OpPower && !in.Shape.Elem.IsFloat() && !in.Shape.Elem.IsComplex():
		return 128
	case words > 0:
		return max(16, words/opWords)
	case in.Op.IsElementwise() && in.Op != hlo.OpBitcastConvert && !keepsGrid(in.Op, in.Shape.Elem) && in.Shape.IsArray():
		return roundCost(in.Shape.Elem)
	}
	return 1
}

// roundCost is an elementwise op's cost with a result of type t, which
// it computes in f32 and rounds to t in integer code (normalize): in a
// chain of adds, SPIR-V words an element against f32's 26, bf16 91,
// f16 279, f8e4m3fn 308, f8e5m2 348. A chain of 1500 f16 ops fused
// whole at 1 each, 438,628 words, made a first run of 5.1-5.3 s (0.9 s
// as kernels of this bound).
func roundCost(t hlo.ElementType) int {
	switch {
	case isMini(t):
		return 13
	case t == hlo.F16:
		return 11
	case t == hlo.BF16:
		return 4
	}
	return 1
}

func libUnary(f func(mathlib.Lib, spirv.ID) spirv.ID) func(mathlib.Lib, []spirv.ID) (spirv.ID, error) {
	return func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error) { return f(m, a[0]), nil }
}

func libBinary(f func(mathlib.Lib, spirv.ID, spirv.ID) spirv.ID) func(mathlib.Lib, []spirv.ID) (spirv.ID, error) {
	return func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error) { return f(m, a[0], a[1]), nil }
}

// mathDriver is what the math library needs to know of the target.
func (k *kernelBuilder) mathDriver() mathlib.Driver {
	return mathlib.Driver{IEEEDivSqrt: k.tg.IEEEDivSqrt, Float64: k.tg.Float64, Contracts: k.tg.Contracts}
}

// mathOp emits a library function for op on values a; ok is false for
// ops and types the library does not have. nonPositive says exp's
// argument is at most 0 (belowRowMax), which takes ExpNonPositive.
func (k *kernelBuilder) mathOp(op hlo.Opcode, a []val, nonPositive bool) (v val, ok bool, err error) {
	t := a[0].t
	l, known := libraryOps[op]
	f := l.emit
	var m mathlib.Lib
	switch {
	case !known:
		return val{}, false, nil
	case t == hlo.F32 || t == hlo.F16 || t == hlo.BF16:
		m = mathlib.F32(k.b, k.f, k.mathDriver())
	case t == hlo.F64:
		m = mathlib.F64(k.b, k.f, k.mathDriver())
	default:
		return val{}, false, nil
	}
	if op == hlo.OpExp && nonPositive {
		f = libUnary(mathlib.Lib.ExpNonPositive)
	}
	ids := make([]spirv.ID, len(a))
	for i, x := range a {
		ids[i] = x.id
	}
	r, err := f(m, ids)
	if err != nil {
		return val{}, false, err
	}
	return val{r, t}, true, nil
}

// ipow is XLA's integer power: square-and-multiply over the exponent's
// bits; a negative exponent gives 0 except for bases 1 and -1.
func (k *kernelBuilder) ipow(x, y val) (val, error) {
	t := x.t
	typ := k.scalarType(t)
	bits := regBits(t)
	ptr := k.b.TypePointer(spirv.StorageFunction, typ)
	rv, bv, ev := k.f.LocalVariable(ptr), k.f.LocalVariable(ptr), k.f.LocalVariable(ptr)
	one := val{k.constInt(t, 1), t}
	k.f.Store(rv, one.id)
	k.f.Store(bv, x.id)
	k.f.Store(ev, k.masked(y).id)
	err := k.loop(k.cu32(uint32(bits)), func(spirv.ID) error {
		load := func(v spirv.ID) spirv.ID { return k.f.Load(typ, v) }
		r, b, e := load(rv), load(bv), load(ev)
		odd := k.boolOp(spirv.OpINotEqual, k.op(spirv.OpBitwiseAnd, t, e, one.id).id, k.zero(t))
		r = k.sel(odd, k.op(spirv.OpIMul, t, r, b), val{r, t}).id
		k.f.Store(rv, r)
		k.f.Store(bv, k.op(spirv.OpIMul, t, b, b).id)
		k.f.Store(ev, k.op(spirv.OpShiftRightLogical, t, e, one.id).id)
		return nil
	})
	if err != nil {
		return val{}, err
	}
	r := val{k.f.Load(typ, rv), t}
	if t.Kind() != hlo.KindSigned && t != hlo.U64 {
		return r, nil
	}
	// Negative exponents: 1 -> 1, -1 -> ±1 by parity, anything else 0.
	// XLA's emitter compares the exponent as signed whatever its type,
	// so u64 exponents from 2^63 count as negative too (hlo/eval agrees).
	odd := k.boolOp(spirv.OpINotEqual, k.op(spirv.OpBitwiseAnd, t, y.id, one.id).id, k.zero(t))
	minus1 := val{k.constInt(t, allOnes(t)), t}
	neg := k.sel(k.boolOp(spirv.OpIEqual, x.id, one.id), one, val{k.zero(t), t})
	neg = k.sel(k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpIEqual, x.id, minus1.id), odd), minus1, neg)
	neg = k.sel(k.boolOp(spirv.OpLogicalAnd, k.boolOp(spirv.OpIEqual, x.id, minus1.id), k.boolOp(spirv.OpLogicalNot, odd)), one, neg)
	return k.sel(k.boolOp(spirv.OpSLessThan, y.id, k.zero(t)), neg, r), nil
}
