package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/mathlib"
	"github.com/vkjit/vkjit/spirv"
)

// libraryOps are the ops the math library computes (mathlib.Lib), by
// their operands.
var libraryOps = map[hlo.Opcode]func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error){
	hlo.OpExp:       libUnary(mathlib.Lib.Exp),
	hlo.OpExpm1:     libUnary(mathlib.Lib.Expm1),
	hlo.OpLog:       libUnary(mathlib.Lib.Log),
	hlo.OpLog1p:     libUnary(mathlib.Lib.Log1p),
	hlo.OpLogistic:  libUnary(mathlib.Lib.Logistic),
	hlo.OpTanh:      libUnary(mathlib.Lib.Tanh),
	hlo.OpSin:       libUnary(mathlib.Lib.Sin),
	hlo.OpCos:       libUnary(mathlib.Lib.Cos),
	hlo.OpTan:       libUnary(mathlib.Lib.Tan),
	hlo.OpErf:       libUnary(mathlib.Lib.Erf),
	hlo.OpCbrt:      libUnary(mathlib.Lib.Cbrt),
	hlo.OpAtan2:     libBinary(mathlib.Lib.Atan2),
	hlo.OpPower:     libBinary(mathlib.Lib.Pow),
	hlo.OpRemainder: func(m mathlib.Lib, a []spirv.ID) (spirv.ID, error) { return m.Fmod(a[0], a[1]) },
}

// OpCost is in's share of a fused kernel's code, for bounding a
// kernel's size before it is generated: a library function (a few
// hundred SPIR-V words, lavapipe: ~590 a function against ~39 an add)
// counts 16; an integer power 128, for the compile: its 32 steps of
// square-and-multiply (ipow) are a loop that NIR unrolls, and LLVM's
// known-bits analysis of the chained multiplies is slow (64 of them in
// a reduction's fold, 34,000 words, took lavapipe 3.6 s to compile,
// against 0.2 s for as many words of exponentials); any other op 1.
func OpCost(in *hlo.Instruction) int {
	switch {
	case in.Op == hlo.OpPower && !in.Shape.Elem.IsFloat() && !in.Shape.Elem.IsComplex():
		return 128
	case libraryOps[in.Op] != nil:
		return 16
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
	f := libraryOps[op]
	var m mathlib.Lib
	switch {
	case f == nil:
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
