package lower

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower/mathlib"
	"github.com/vkjit/vkjit/spirv"
)

// mathOp emits a library function for op on values a; ok is false for
// ops and types the library does not have.
func (k *kernelBuilder) mathOp(op hlo.Opcode, a []val, nonPositive bool) (v val, ok bool, err error) {
	t := a[0].t
	var m mathlib.Lib
	switch {
	case (t == hlo.F32 || t == hlo.F16 || t == hlo.BF16) && libraryOps[op]:
		m = mathlib.F32(k.b, k.f)
	case t == hlo.F64 && libraryOps[op]:
		m = mathlib.F64(k.b, k.f)
	default:
		return val{}, false, nil
	}
	x := a[0].id
	var r spirv.ID
	switch op {
	case hlo.OpExp:
		if nonPositive {
			r = m.ExpNonPositive(x)
		} else {
			r = m.Exp(x)
		}
	case hlo.OpExpm1:
		r = m.Expm1(x)
	case hlo.OpLog:
		r = m.Log(x)
	case hlo.OpLog1p:
		r = m.Log1p(x)
	case hlo.OpLogistic:
		r = m.Logistic(x)
	case hlo.OpTanh:
		r = m.Tanh(x)
	case hlo.OpSin:
		r = m.Sin(x)
	case hlo.OpCos:
		r = m.Cos(x)
	case hlo.OpTan:
		r = m.Tan(x)
	case hlo.OpErf:
		r = m.Erf(x)
	case hlo.OpCbrt:
		r = m.Cbrt(x)
	case hlo.OpAtan2:
		r = m.Atan2(x, a[1].id)
	case hlo.OpPower:
		r = m.Pow(x, a[1].id)
	case hlo.OpRemainder:
		if r, err = m.Fmod(x, a[1].id); err != nil {
			return val{}, false, err
		}
	}
	return val{r, t}, true, nil
}

var libraryOps = map[hlo.Opcode]bool{
	hlo.OpExp: true, hlo.OpExpm1: true, hlo.OpLog: true, hlo.OpLog1p: true, hlo.OpLogistic: true,
	hlo.OpTanh: true, hlo.OpSin: true, hlo.OpCos: true, hlo.OpTan: true, hlo.OpErf: true,
	hlo.OpCbrt: true, hlo.OpAtan2: true, hlo.OpPower: true, hlo.OpRemainder: true,
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
