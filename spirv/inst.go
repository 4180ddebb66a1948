package spirv

// Typed emission helpers for the instructions the kernel generators use,
// so that an emitter reads as the operations it builds:
// f.IAdd(u32, a, b) for f.Apply(OpIAdd, u32, a, b). Each takes its
// result type first, then its operands' ids in the specification's
// order.

// Load emits OpLoad.
func (f *Function) Load(typ, x ID) ID { return f.Apply(OpLoad, typ, x) }

// LoadAligned emits OpLoad with the Aligned memory operand: a load
// through a physical storage buffer pointer known to be align-aligned.
func (f *Function) LoadAligned(typ, x ID, align uint32) ID {
	return f.Op(OpLoad, typ, uint32(x), MemoryAccessAligned, align)
}

// StoreAligned is Store through a physical storage buffer pointer.
func (f *Function) StoreAligned(ptr, v ID, align uint32) {
	f.Void(OpStore, uint32(ptr), uint32(v), MemoryAccessAligned, align)
}

// ConvertUToPtr emits OpConvertUToPtr: a 64-bit address as a pointer of
// type typ (StoragePhysicalStorageBuffer).
func (f *Function) ConvertUToPtr(typ, x ID) ID { return f.Apply(OpConvertUToPtr, typ, x) }

// Bitcast emits OpBitcast.
func (f *Function) Bitcast(typ, x ID) ID { return f.Apply(OpBitcast, typ, x) }

// UConvert emits OpUConvert.
func (f *Function) UConvert(typ, x ID) ID { return f.Apply(OpUConvert, typ, x) }

// FConvert emits OpFConvert.
func (f *Function) FConvert(typ, x ID) ID { return f.Apply(OpFConvert, typ, x) }

// Not emits OpNot.
func (f *Function) Not(typ, x ID) ID { return f.Apply(OpNot, typ, x) }

// ConvertUToF emits OpConvertUToF.
func (f *Function) ConvertUToF(typ, x ID) ID { return f.Apply(OpConvertUToF, typ, x) }

// BitCount emits OpBitCount.
func (f *Function) BitCount(typ, x ID) ID { return f.Apply(OpBitCount, typ, x) }

// SNegate emits OpSNegate.
func (f *Function) SNegate(typ, x ID) ID { return f.Apply(OpSNegate, typ, x) }

// IsNan emits OpIsNan.
func (f *Function) IsNan(typ, x ID) ID { return f.Apply(OpIsNan, typ, x) }

// FNegate emits OpFNegate.
func (f *Function) FNegate(typ, x ID) ID { return f.Apply(OpFNegate, typ, x) }

// IAdd emits OpIAdd.
func (f *Function) IAdd(typ, a, b ID) ID { return f.Apply(OpIAdd, typ, a, b) }

// IMul emits OpIMul.
func (f *Function) IMul(typ, a, b ID) ID { return f.Apply(OpIMul, typ, a, b) }

// IEqual emits OpIEqual.
func (f *Function) IEqual(typ, a, b ID) ID { return f.Apply(OpIEqual, typ, a, b) }

// BitwiseAnd emits OpBitwiseAnd.
func (f *Function) BitwiseAnd(typ, a, b ID) ID { return f.Apply(OpBitwiseAnd, typ, a, b) }

// ISub emits OpISub.
func (f *Function) ISub(typ, a, b ID) ID { return f.Apply(OpISub, typ, a, b) }

// UDiv emits OpUDiv.
func (f *Function) UDiv(typ, a, b ID) ID { return f.Apply(OpUDiv, typ, a, b) }

// ULessThan emits OpULessThan.
func (f *Function) ULessThan(typ, a, b ID) ID { return f.Apply(OpULessThan, typ, a, b) }

// BitwiseOr emits OpBitwiseOr.
func (f *Function) BitwiseOr(typ, a, b ID) ID { return f.Apply(OpBitwiseOr, typ, a, b) }

// UMod emits OpUMod.
func (f *Function) UMod(typ, a, b ID) ID { return f.Apply(OpUMod, typ, a, b) }

// FMul emits OpFMul.
func (f *Function) FMul(typ, a, b ID) ID { return f.Apply(OpFMul, typ, a, b) }

// ShiftRightLogical emits OpShiftRightLogical.
func (f *Function) ShiftRightLogical(typ, a, b ID) ID { return f.Apply(OpShiftRightLogical, typ, a, b) }

// ShiftRightArithmetic emits OpShiftRightArithmetic.
func (f *Function) ShiftRightArithmetic(typ, a, b ID) ID {
	return f.Apply(OpShiftRightArithmetic, typ, a, b)
}

// INotEqual emits OpINotEqual.
func (f *Function) INotEqual(typ, a, b ID) ID { return f.Apply(OpINotEqual, typ, a, b) }

// UGreaterThanEqual emits OpUGreaterThanEqual.
func (f *Function) UGreaterThanEqual(typ, a, b ID) ID { return f.Apply(OpUGreaterThanEqual, typ, a, b) }

// UGreaterThan emits OpUGreaterThan.
func (f *Function) UGreaterThan(typ, a, b ID) ID { return f.Apply(OpUGreaterThan, typ, a, b) }

// ShiftLeftLogical emits OpShiftLeftLogical.
func (f *Function) ShiftLeftLogical(typ, a, b ID) ID { return f.Apply(OpShiftLeftLogical, typ, a, b) }

// SDiv emits OpSDiv.
func (f *Function) SDiv(typ, a, b ID) ID { return f.Apply(OpSDiv, typ, a, b) }

// FOrdEqual emits OpFOrdEqual.
func (f *Function) FOrdEqual(typ, a, b ID) ID { return f.Apply(OpFOrdEqual, typ, a, b) }

// FAdd emits OpFAdd.
func (f *Function) FAdd(typ, a, b ID) ID { return f.Apply(OpFAdd, typ, a, b) }

// ImageFetch emits OpImageFetch: the texel of image at coord.
func (f *Function) ImageFetch(typ, image, coord ID) ID {
	return f.Apply(OpImageFetch, typ, image, coord)
}

// Select emits OpSelect: a where cond holds, else b.
func (f *Function) Select(typ, cond, a, b ID) ID { return f.Apply(OpSelect, typ, cond, a, b) }

// AccessChain emits OpAccessChain: a pointer of type ptr into base at the
// indices.
func (f *Function) AccessChain(ptr, base ID, indices ...ID) ID {
	return f.Apply(OpAccessChain, ptr, append([]ID{base}, indices...)...)
}

// CompositeConstruct emits OpCompositeConstruct of the parts.
func (f *Function) CompositeConstruct(typ ID, parts ...ID) ID {
	return f.Apply(OpCompositeConstruct, typ, parts...)
}

// GroupNonUniformShuffleXor emits OpGroupNonUniformShuffleXor: value from
// the invocation whose id is this one's xor mask, in scope.
func (f *Function) GroupNonUniformShuffleXor(typ, scope, value, mask ID) ID {
	return f.Apply(OpGroupNonUniformShuffleXor, typ, scope, value, mask)
}

// GroupNonUniformShuffle emits OpGroupNonUniformShuffle: value from
// invocation id of the group in scope.
func (f *Function) GroupNonUniformShuffle(typ, scope, value, id ID) ID {
	return f.Apply(OpGroupNonUniformShuffle, typ, scope, value, id)
}

// Store emits OpStore of v through ptr.
func (f *Function) Store(ptr, v ID) { f.Do(OpStore, ptr, v) }

// If emits `if cond { then() }` as a structured selection: a merge
// block after the then block. then's error ends the emission.
func (f *Function) If(cond ID, then func() error) error {
	thenL, merge := f.b.NewID(), f.b.NewID()
	header := f.block
	f.Void(OpSelectionMerge, uint32(merge), SelectionControlNone)
	f.Do(OpBranchConditional, cond, thenL, merge)
	f.labelUnder(thenL, header)
	if err := then(); err != nil {
		return err
	}
	f.Do(OpBranch, merge)
	f.labelUnder(merge, header)
	return nil
}

// While emits `for check() { body(); step() }` as a structured loop:
// check in its own block after the header (what it computes is visible
// to body), step in the continue block.
func (f *Function) While(check func() ID, body func() error, step func()) error {
	header, checkL, bodyL, cont, merge := f.b.NewID(), f.b.NewID(), f.b.NewID(), f.b.NewID(), f.b.NewID()
	f.Do(OpBranch, header)
	f.labelUnder(header, f.block)
	f.Void(OpLoopMerge, uint32(merge), uint32(cont), LoopControlNone)
	f.Do(OpBranch, checkL)
	f.labelUnder(checkL, header)
	f.Do(OpBranchConditional, check(), bodyL, merge)
	f.labelUnder(bodyL, checkL)
	if err := body(); err != nil {
		return err
	}
	// The continue block's one predecessor is where the body ended.
	f.Do(OpBranch, cont)
	f.labelUnder(cont, f.block)
	step()
	f.Do(OpBranch, header)
	f.labelUnder(merge, checkL)
	return nil
}
