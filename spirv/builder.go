// Package spirv builds SPIR-V modules for vkjit's generated compute kernels
// and encodes them to the binary form that vkCreateShaderModule takes.
//
// The Builder keeps one list per logical section of the module, in the
// order the specification requires (capabilities, extensions, imports,
// memory model, entry points, execution modes, debug names, annotations,
// types/constants/globals, functions), hands out every result id from one
// counter, and deduplicates types and constants by value: two OpTypeInt 32 1
// would make equal array types look different to spirv-val. Capabilities
// are added on demand by the type constructors that need them.
package spirv

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ID is a SPIR-V result id. Zero is never a valid id.
type ID uint32

// Builder assembles one SPIR-V module.
type Builder struct {
	bound ID // next id to hand out

	caps      []Capability
	capSet    map[Capability]bool
	exts      []string
	extSet    map[string]bool
	imports   []uint32
	importIDs map[string]ID
	entries   []uint32
	modes     []uint32
	debug     []uint32
	annots    []uint32
	globals   []uint32 // types, constants and global variables, in definition order
	funcs     []uint32

	dedup     map[string]ID   // types and constants by value
	values    map[ID][]uint32 // each scalar OpConstant's value words
	key       []byte          // globalKey's scratch
	decorated map[string]bool // decorations made (Decorate)

	addressing uint32 // the memory model's addressing: Logical, or PhysicalStorageBuffer64
}

// NewBuilder returns an empty module that already declares the Shader
// capability and the Logical/GLSL450 memory model every Vulkan compute
// shader uses.
func NewBuilder() *Builder {
	b := &Builder{
		bound:     1,
		capSet:    map[Capability]bool{},
		extSet:    map[string]bool{},
		importIDs: map[string]ID{},
		dedup:     map[string]ID{},
		values:    map[ID][]uint32{},
	}
	b.Capability(CapabilityShader)
	return b
}

// NewID reserves a fresh result id.
func (b *Builder) NewID() ID {
	id := b.bound
	b.bound++
	return id
}

// Bound is one more than the largest id handed out so far.
func (b *Builder) Bound() ID { return b.bound }

// Capability declares c once; repeated calls are harmless.
func (b *Builder) Capability(c Capability) {
	if !b.capSet[c] {
		b.capSet[c] = true
		b.caps = append(b.caps, c)
	}
}

// HasCapability reports whether the module declares c.
func (b *Builder) HasCapability(c Capability) bool { return b.capSet[c] }

// Extension declares a SPIR-V extension once.
func (b *Builder) Extension(name string) {
	if !b.extSet[name] {
		b.extSet[name] = true
		b.exts = append(b.exts, name)
	}
}

// ExtInstImport imports an extended instruction set (such as
// "GLSL.std.450") once and returns its id.
func (b *Builder) ExtInstImport(name string) ID {
	if id, ok := b.importIDs[name]; ok {
		return id
	}
	id := b.NewID()
	b.importIDs[name] = id
	b.imports = appendInst(b.imports, OpExtInstImport, append([]uint32{uint32(id)}, String(name)...)...)
	return id
}

// GLSL returns the id of the GLSL.std.450 import.
func (b *Builder) GLSL() ID { return b.ExtInstImport("GLSL.std.450") }

// EntryPoint declares fn as a GLCompute entry point with the given
// interface variables (Input/Output builtins for SPIR-V 1.3).
func (b *Builder) EntryPoint(fn ID, name string, iface ...ID) {
	ops := []uint32{ExecutionModelGLCompute, uint32(fn)}
	ops = append(ops, String(name)...)
	for _, v := range iface {
		ops = append(ops, uint32(v))
	}
	b.entries = appendInst(b.entries, OpEntryPoint, ops...)
}

// LocalSize sets the workgroup size of entry point fn.
func (b *Builder) LocalSize(fn ID, x, y, z uint32) {
	b.modes = appendInst(b.modes, OpExecutionMode, uint32(fn), ExecutionModeLocalSize, x, y, z)
}

// DenormPreserve makes float arithmetic of the width given (32 or 64) in
// entry point fn keep subnormal operands and results rather than flush
// them to zero (SPV_KHR_float_controls): the device must report
// shaderDenormPreserveFloat<width>.
func (b *Builder) DenormPreserve(fn ID, width uint32) {
	b.Extension("SPV_KHR_float_controls")
	b.Capability(CapabilityDenormPreserve)
	b.modes = appendInst(b.modes, OpExecutionMode, uint32(fn), ExecutionModeDenormPreserve, width)
}

// SignedZeroInfNanPreserve makes float arithmetic of the width given
// (16, 32 or 64) in entry point fn keep signed zeros, infinities and
// NaNs as IEEE says (SPV_KHR_float_controls): the device must report
// shaderSignedZeroInfNanPreserveFloat<width>.
func (b *Builder) SignedZeroInfNanPreserve(fn ID, width uint32) {
	b.Extension("SPV_KHR_float_controls")
	b.Capability(CapabilitySignedZeroInfNanPreserve)
	b.modes = appendInst(b.modes, OpExecutionMode, uint32(fn), ExecutionModeSignedZeroInfNanPreserve, width)
}

// Name attaches a debug name to id; it shows in disassembly and in
// validation-layer messages.
func (b *Builder) Name(id ID, name string) {
	b.debug = appendInst(b.debug, OpName, append([]uint32{uint32(id)}, String(name)...)...)
}

// Decorate adds a decoration to id.
// Decorating an id again the same way (an instruction Op reused) adds
// nothing.
func (b *Builder) Decorate(id ID, d Decoration, args ...uint32) {
	key := fmt.Sprint(id, d, args)
	if b.decorated[key] {
		return
	}
	if b.decorated == nil {
		b.decorated = map[string]bool{}
	}
	b.decorated[key] = true
	b.annots = appendInst(b.annots, OpDecorate, append([]uint32{uint32(id), uint32(d)}, args...)...)
}

// MemberDecorate adds a decoration to member m of struct type id.
func (b *Builder) MemberDecorate(id ID, m uint32, d Decoration, args ...uint32) {
	b.annots = appendInst(b.annots, OpMemberDecorate, append([]uint32{uint32(id), m, uint32(d)}, args...)...)
}

// global emits a deduplicated type or constant: the same op and operands
// always give the same id. extra distinguishes values that are equal in
// their operands but differ in decorations (Block structs).
func (b *Builder) global(op Op, extra string, operands ...uint32) (ID, bool) {
	key := b.globalKey(op, extra, 0, operands)
	if id, ok := b.dedup[string(key)]; ok {
		return id, false
	}
	id := b.NewID()
	b.dedup[string(key)] = id
	b.globals = appendInst(b.globals, op, append([]uint32{uint32(id)}, operands...)...)
	return id, true
}

// globalKey is the dedup key of a type or constant, in a scratch buffer
// (fmt.Sprint's keys were an eighth of a 100,000-op compile).
func (b *Builder) globalKey(op Op, extra string, typ ID, operands []uint32) []byte {
	b.key = appendKey(b.key[:0], op, typ, extra, operands)
	return b.key
}

// appendKey appends a dedup key of an instruction to k: its opcode, its
// type, extra (what tells apart equal operands: a Block struct's
// decorations) and its operands.
func appendKey(k []byte, op Op, typ ID, extra string, operands []uint32) []byte {
	k = binary.LittleEndian.AppendUint32(k, uint32(op))
	k = binary.LittleEndian.AppendUint32(k, uint32(typ))
	k = binary.LittleEndian.AppendUint32(k, uint32(len(extra)))
	k = append(k, extra...)
	for _, w := range operands {
		k = binary.LittleEndian.AppendUint32(k, w)
	}
	return k
}

// constant emits a deduplicated constant: unlike types, constants put
// their result type before the result id.
func (b *Builder) constant(op Op, typ ID, operands ...uint32) ID {
	key := b.globalKey(op, "const", typ, operands)
	if id, ok := b.dedup[string(key)]; ok {
		return id
	}
	id := b.NewID()
	b.dedup[string(key)] = id
	b.globals = appendInst(b.globals, op, append([]uint32{uint32(typ), uint32(id)}, operands...)...)
	if op == OpConstant {
		b.values[id] = slices.Clone(operands)
	}
	return id
}

// ConstantWords is the value of id where it is a scalar OpConstant (its
// literal words, low-order first), so that an emitter can simplify what
// a known operand decides.
func (b *Builder) ConstantWords(id ID) ([]uint32, bool) {
	w, ok := b.values[id]
	return w, ok
}

// TypeVoid returns the void type.
func (b *Builder) TypeVoid() ID { id, _ := b.global(OpTypeVoid, ""); return id }

// TypeBool returns the boolean type.
func (b *Builder) TypeBool() ID { id, _ := b.global(OpTypeBool, ""); return id }

// TypeInt returns an integer type, declaring the capability its width needs.
func (b *Builder) TypeInt(width int, signed bool) ID {
	switch width {
	case 8:
		b.Capability(CapabilityInt8)
	case 16:
		b.Capability(CapabilityInt16)
	case 64:
		b.Capability(CapabilityInt64)
	}
	return b.intType(width, signed)
}

func (b *Builder) intType(width int, signed bool) ID {
	s := uint32(0)
	if signed {
		s = 1
	}
	id, _ := b.global(OpTypeInt, "", uint32(width), s)
	return id
}

// TypeFloat returns a float type, declaring the capability its width needs.
func (b *Builder) TypeFloat(width int) ID {
	switch width {
	case 16:
		b.Capability(CapabilityFloat16)
	case 64:
		b.Capability(CapabilityFloat64)
	}
	id, _ := b.global(OpTypeFloat, "", uint32(width))
	return id
}

// TypeStorageUint returns an unsigned 8- or 16-bit integer type for
// storage buffer elements only (loads, stores, width conversions): it
// declares the storage capability and extension instead of Int8 or Int16.
func (b *Builder) TypeStorageUint(width int) ID {
	b.storage(width)
	return b.intType(width, false)
}

func (b *Builder) storage(width int) {
	if width == 8 {
		b.Capability(CapabilityStorageBuffer8BitAccess)
		b.Extension("SPV_KHR_8bit_storage")
	} else {
		b.Capability(CapabilityStorageBuffer16BitAccess)
		b.Extension("SPV_KHR_16bit_storage")
	}
}

// TypeVector returns an n-component vector of elem.
func (b *Builder) TypeVector(elem ID, n int) ID {
	id, _ := b.global(OpTypeVector, "", uint32(elem), uint32(n))
	return id
}

// TypeArray returns a fixed-size array; length is a constant id.
func (b *Builder) TypeArray(elem, length ID, stride uint32) ID {
	id, fresh := b.global(OpTypeArray, fmt.Sprint("stride", stride), uint32(elem), uint32(length))
	if fresh && stride != 0 {
		b.Decorate(id, DecorationArrayStride, stride)
	}
	return id
}

// TypeRuntimeArray returns a runtime-sized array with the given ArrayStride.
func (b *Builder) TypeRuntimeArray(elem ID, stride uint32) ID {
	id, fresh := b.global(OpTypeRuntimeArray, fmt.Sprint("stride", stride), uint32(elem))
	if fresh {
		b.Decorate(id, DecorationArrayStride, stride)
	}
	return id
}

// TypeBlock returns a new struct decorated Block whose members sit at the
// given byte offsets: the type of a storage buffer or push-constant block.
// Every call declares a type of its own, never shared between variables,
// as glslang writes one per block: NVIDIA's driver (580.159 on an H200)
// lets one variable's NonWritable reach every variable of its block type,
// and read a sort's scratch buffers, of the same u32 block as its
// read-only u32 keys, through a path that missed the invocation's own
// writes (a sort of u32 or pred keys came back unsorted there).
func (b *Builder) TypeBlock(members []ID, offsets []uint32) ID {
	ops := make([]uint32, len(members))
	for i, m := range members {
		ops[i] = uint32(m)
	}
	id := b.NewID()
	b.globals = appendInst(b.globals, OpTypeStruct, append([]uint32{uint32(id)}, ops...)...)
	b.Decorate(id, DecorationBlock)
	for i, off := range offsets {
		b.MemberDecorate(id, uint32(i), DecorationOffset, off)
	}
	return id
}

// TypeStruct returns a plain (undecorated) structure type, such as the
// result of OpUMulExtended.
func (b *Builder) TypeStruct(members ...ID) ID {
	ops := make([]uint32, len(members))
	for i, m := range members {
		ops[i] = uint32(m)
	}
	id, _ := b.global(OpTypeStruct, "plain", ops...)
	return id
}

// TypePointer returns a pointer to elem in storage class sc.
func (b *Builder) TypePointer(sc StorageClass, elem ID) ID {
	id, _ := b.global(OpTypePointer, "", uint32(sc), uint32(elem))
	return id
}

// TypeFunction returns a function type.
func (b *Builder) TypeFunction(ret ID, params ...ID) ID {
	ops := []uint32{uint32(ret)}
	for _, p := range params {
		ops = append(ops, uint32(p))
	}
	id, _ := b.global(OpTypeFunction, "", ops...)
	return id
}

// Constant returns a scalar constant of type typ with the given literal
// words (one word for 32-bit types and smaller, two for 64-bit ones, low
// word first).
func (b *Builder) Constant(typ ID, words ...uint32) ID {
	return b.constant(OpConstant, typ, words...)
}

// ConstantBool returns true or false.
func (b *Builder) ConstantBool(v bool) ID {
	op := OpConstantFalse
	if v {
		op = OpConstantTrue
	}
	return b.constant(op, b.TypeBool())
}

// ConstU32 returns a 32-bit unsigned integer constant.
func (b *Builder) ConstU32(v uint32) ID { return b.Constant(b.TypeInt(32, false), v) }

// ConstS32 returns a 32-bit signed integer constant.
func (b *Builder) ConstS32(v int32) ID { return b.Constant(b.TypeInt(32, true), uint32(v)) }

// ConstF32 returns a 32-bit float constant.
func (b *Builder) ConstF32(v float32) ID { return b.Constant(b.TypeFloat(32), math.Float32bits(v)) }

// ConstantComposite returns a composite constant.
func (b *Builder) ConstantComposite(typ ID, parts ...ID) ID {
	var ops []uint32
	for _, p := range parts {
		ops = append(ops, uint32(p))
	}
	return b.constant(OpConstantComposite, typ, ops...)
}

// TypeBufferImage is a uniform texel buffer image of sampled type t
// (Dim Buffer, not depth, not arrayed, single-sampled, used with a
// sampler: Sampled 1, format Unknown).
func (b *Builder) TypeBufferImage(t ID) ID {
	b.Capability(CapabilitySampledBuffer)
	id, _ := b.global(OpTypeImage, "", uint32(t), 5, 0, 0, 0, 1, 0)
	return id
}

// Variable declares a global variable of pointer type ptr in storage class sc.
func (b *Builder) Variable(ptr ID, sc StorageClass) ID {
	id := b.NewID()
	b.VariableAt(id, ptr, sc)
	return id
}

// ConstVariable is a Private variable of pointer type ptr initialized to
// constant init, for tables that code indexes (read with
// Function.LoadInvariant; nothing may store to it). The same table is
// one variable.
func (b *Builder) ConstVariable(ptr, init ID) ID {
	key := string(b.globalKey(OpVariable, "const-variable", ptr, []uint32{uint32(init)}))
	if id, ok := b.dedup[key]; ok {
		return id
	}
	id := b.NewID()
	b.globals = appendInst(b.globals, OpVariable, uint32(ptr), uint32(id), uint32(StoragePrivate), uint32(init))
	b.dedup[key] = id
	return id
}

// VariableAt declares global variable id, handed out earlier by NewID:
// code may use a variable whose type is settled only when the function
// is done (a push-constant block that gains members as the code needs
// them), since the module lists globals ahead of functions.
func (b *Builder) VariableAt(id, ptr ID, sc StorageClass) {
	b.globals = appendInst(b.globals, OpVariable, uint32(ptr), uint32(id), uint32(sc))
}

// PhysicalAddressing switches the module to the PhysicalStorageBuffer64
// addressing model (SPV_KHR_physical_storage_buffer, Vulkan 1.2): its
// kernels may make pointers from buffer device addresses
// (Function.ConvertUToPtr) and must load and store through them with
// Function.LoadAligned and StoreAligned.
func (b *Builder) PhysicalAddressing() {
	b.Capability(CapabilityPhysicalStorageBufferAddresses)
	b.Extension("SPV_KHR_physical_storage_buffer")
	b.addressing = AddressingPhysicalStorageBuffer64
}

// Function starts a function definition. Add blocks with Label, emit into
// the current block, and finish with End.
func (b *Builder) Function(ret, fnType ID) *Function {
	f := &Function{b: b, ID: b.NewID()}
	f.words = appendInst(f.words, OpFunction, uint32(ret), uint32(f.ID), FunctionControlNone, uint32(fnType))
	return f
}

// Function is a function under construction.
type Function struct {
	b     *Builder
	ID    ID
	words []uint32
	vars  []uint32 // OpVariable (Function storage) must open the first block
	body  []uint32
	first bool
	block ID // the block being emitted into

	values   map[string]Defined // pure instructions' results by opcode, type and operands (Op)
	key      []byte             // Op's scratch key
	unshared int                // Unshared's depth: no reuse while above 0
	idom     map[ID]ID          // each block's immediate dominator, from If and While
}

// Defined is a value and the block it was defined in.
type Defined struct{ Block, ID ID }

// Label starts a new block and returns its label id. Pass a label made
// earlier with NewID to start a block that branches already target.
func (f *Function) Label(id ID) ID {
	if id == 0 {
		id = f.b.NewID()
	}
	f.block = id
	if !f.first {
		f.first = true
		f.words = appendInst(f.words, OpLabel, uint32(id))
		return id
	}
	f.body = appendInst(f.body, OpLabel, uint32(id))
	return id
}

// Block is the label of the block being emitted into: an id defined
// earlier in it dominates whatever is emitted next.
func (f *Function) Block() ID { return f.block }

// maxDominatorWalk bounds Dominates' walk up the dominator tree: past
// it a block is taken as not dominated, which only forgoes a reuse.
const maxDominatorWalk = 4096

// Dominates reports whether every path to block b passes through block
// a, so that an id defined in a may be used in b. The blocks If and While
// start know their immediate dominators (the function's only blocks
// besides its first); the walk from b up that tree is short, as
// kernels nest few constructs.
func (f *Function) Dominates(a, b ID) bool {
	for range maxDominatorWalk {
		if a == b {
			return true
		}
		up, ok := f.idom[b]
		if !ok {
			return false
		}
		b = up
	}
	return false
}

// Usable reports whether d, defined earlier, may be used in the block
// being emitted into: its block dominates it.
func (f *Function) Usable(d Defined) bool { return f.Dominates(d.Block, f.block) }

// labelUnder starts block id, immediately dominated by block dom.
func (f *Function) labelUnder(id, dom ID) {
	if f.idom == nil {
		f.idom = map[ID]ID{}
	}
	f.idom[id] = dom
	f.Label(id)
}

// LocalVariable declares a Function-storage variable; it is placed at the
// start of the entry block as the specification requires.
func (f *Function) LocalVariable(ptr ID) ID {
	id := f.b.NewID()
	f.vars = appendInst(f.vars, OpVariable, uint32(ptr), uint32(id), uint32(StorageFunction))
	return id
}

// Op emits an instruction with a result of type typ and returns its id.
// A pure instruction (pureOps) that repeats one emitted earlier in a
// block that dominates the current one is not emitted again: Op returns
// the earlier result. Kernels built from
// composable pieces compute the same index or value more than once (a
// complex result's real and imaginary parts each unravel and ravel
// the same element), and the driver's compiler, which would merge
// them, then spends its time on the copies first: lavapipe compiles a
// kernel at its first dispatch in time that grows faster than its size.
func (f *Function) Op(op Op, typ ID, operands ...uint32) ID {
	return f.emit(op, typ, int(op) < len(pureOps) && pureOps[op], operands)
}

// LoadInvariant is Load of memory nothing writes (a ConstVariable):
// like a pure instruction, a repeat where the first dominates is the
// first.
func (f *Function) LoadInvariant(typ, ptr ID) ID {
	return f.emit(OpLoad, typ, true, []uint32{uint32(ptr)})
}

func (f *Function) emit(op Op, typ ID, pure bool, operands []uint32) ID {
	if pure {
		k := appendKey(f.key[:0], op, typ, "", operands)
		f.key = k
		// Only the latest definition is kept: structured code is
		// emitted in dominator-tree preorder, so once a definition does
		// not dominate the block being emitted, no later block is
		// dominated by an earlier one either.
		if d, ok := f.values[string(k)]; ok && f.unshared == 0 && f.Usable(d) {
			return d.ID
		}
	}
	id := f.b.NewID()
	f.body = appendInst(f.body, op, append([]uint32{uint32(typ), uint32(id)}, operands...)...)
	if pure {
		if f.values == nil {
			f.values = map[string]Defined{}
		}
		f.values[string(f.key)] = Defined{f.block, id}
	}
	return id
}

// Unshared runs emit with Op's reuse of earlier results turned off, for
// code that Hoist will move ahead of results emitted before it.
func (f *Function) Unshared(emit func()) {
	f.unshared++
	defer func() { f.unshared-- }()
	emit()
}

// pureOps are the instructions whose result depends on their operands
// alone: arithmetic, comparisons, conversions, composites, address
// arithmetic and GLSL.std.450's functions. Loads, image reads, subgroup
// operations and anything with an effect are not.
var pureOps = func() (p [256]bool) {
	for _, op := range []Op{
		OpExtInst, OpAccessChain, OpCompositeConstruct, OpCompositeExtract,
		OpConvertFToU, OpConvertFToS, OpConvertSToF, OpConvertUToF, OpUConvert, OpSConvert, OpFConvert, OpBitcast,
		OpSNegate, OpFNegate, OpIAdd, OpFAdd, OpISub, OpFSub, OpIMul, OpFMul, OpUDiv, OpSDiv, OpFDiv,
		OpUMod, OpSRem, OpSMod, OpFRem, OpFMod, OpVectorTimesScalar, OpUMulExtended,
		OpIsNan, OpIsInf, OpLogicalEqual, OpLogicalNotEqual, OpLogicalOr, OpLogicalAnd, OpLogicalNot, OpSelect,
		OpIEqual, OpINotEqual, OpUGreaterThan, OpSGreaterThan, OpUGreaterThanEqual, OpSGreaterThanEqual,
		OpULessThan, OpSLessThan, OpULessThanEqual, OpSLessThanEqual,
		OpFOrdEqual, OpFUnordEqual, OpFOrdNotEqual, OpFUnordNotEqual, OpFOrdLessThan, OpFUnordLessThan,
		OpFOrdGreaterThan, OpFUnordGreaterThan, OpFOrdLessThanEqual, OpFUnordLessThanEqual,
		OpFOrdGreaterThanEqual, OpFUnordGreaterThanEqual,
		OpShiftRightLogical, OpShiftRightArithmetic, OpShiftLeftLogical,
		OpBitwiseOr, OpBitwiseXor, OpBitwiseAnd, OpNot, OpBitCount,
	} {
		p[op] = true
	}
	return p
}()

// Void emits an instruction without a result id.
func (f *Function) Void(op Op, operands ...uint32) {
	f.body = appendInst(f.body, op, operands...)
}

// Apply emits an instruction of result type typ whose operands are all
// ids (arithmetic, comparisons, conversions, loads, access chains...) and
// returns its result's id. Op takes the rest: literals among the
// operands.
func (f *Function) Apply(op Op, typ ID, args ...ID) ID {
	return f.Op(op, typ, words(args)...)
}

// Do emits an instruction without a result whose operands are all ids
// (a store, a branch).
func (f *Function) Do(op Op, args ...ID) {
	f.Void(op, words(args)...)
}

// Extract emits OpCompositeExtract: the member of composite at the
// literal indices.
func (f *Function) Extract(typ, composite ID, indices ...uint32) ID {
	return f.Op(OpCompositeExtract, typ, append([]uint32{uint32(composite)}, indices...)...)
}

func words(ids []ID) []uint32 {
	ws := make([]uint32, len(ids))
	for i, id := range ids {
		ws[i] = uint32(id)
	}
	return ws
}

// Ext emits a GLSL.std.450 instruction.
func (f *Function) Ext(typ ID, inst GLSLInst, args ...ID) ID {
	ops := []uint32{uint32(f.b.GLSL()), uint32(inst)}
	for _, a := range args {
		ops = append(ops, uint32(a))
	}
	return f.Op(OpExtInst, typ, ops...)
}

// End closes the function and appends it to the module.
func (f *Function) End() {
	f.b.funcs = append(f.b.funcs, f.words...)
	f.b.funcs = append(f.b.funcs, f.vars...)
	f.b.funcs = append(f.b.funcs, f.body...)
	f.b.funcs = appendInst(f.b.funcs, OpFunctionEnd)
}

// Words returns the finished module as SPIR-V words, header first.
func (b *Builder) Words() []uint32 {
	w := []uint32{MagicNumber, Version13, GeneratorID, uint32(b.bound), 0}
	for _, c := range b.caps {
		w = appendInst(w, OpCapability, uint32(c))
	}
	for _, e := range b.exts {
		w = appendInst(w, OpExtension, String(e)...)
	}
	w = append(w, b.imports...)
	w = appendInst(w, OpMemoryModel, b.addressing, MemoryModelGLSL450)
	w = append(w, b.entries...)
	w = append(w, b.modes...)
	w = append(w, b.debug...)
	w = append(w, b.annots...)
	w = append(w, b.globals...)
	w = append(w, b.funcs...)
	return w
}

// Bytes encodes words little-endian, the byte order Vulkan drivers expect.
func Bytes(words []uint32) []byte {
	out := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// FromBytes decodes a little-endian SPIR-V binary.
func FromBytes(data []byte) ([]uint32, error) {
	if len(data)%4 != 0 || len(data) < 20 {
		return nil, fmt.Errorf("spirv: binary of %d bytes is not a module", len(data))
	}
	w := make([]uint32, len(data)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(data[4*i:])
	}
	if w[0] != MagicNumber {
		return nil, fmt.Errorf("spirv: bad magic number %#x", w[0])
	}
	return w, nil
}

// String encodes a literal string: UTF-8, NUL-terminated, padded to whole
// words, low byte first.
func String(s string) []uint32 {
	if strings.IndexByte(s, 0) >= 0 {
		panic("spirv: literal string holds a NUL byte")
	}
	n := len(s)/4 + 1
	out := make([]uint32, n)
	for i := 0; i < len(s); i++ {
		out[i/4] |= uint32(s[i]) << (8 * (i % 4))
	}
	return out
}

func appendInst(w []uint32, op Op, operands ...uint32) []uint32 {
	n := len(operands) + 1
	if n > 0xffff {
		panic(fmt.Sprintf("spirv: instruction %d has %d words", op, n))
	}
	w = append(w, uint32(n)<<16|uint32(op))
	return append(w, operands...)
}

// Hoist moves the instructions emitted since mark (a Len) to position
// at (an earlier Len), ahead of those emitted in between: a value that
// code emitted later finds it needs, placed where it dominates all of
// that code (a vector kernel's row of a broadcast operand, fetched once
// for all its lanes). The moved instructions may use only ids defined
// before at, and neither range may hold a label.
func (f *Function) Hoist(at, mark int) {
	moved := slices.Clone(f.body[mark:])
	copy(f.body[at+len(moved):], f.body[at:mark])
	copy(f.body[at:], moved)
}

// Len is the words of the function's blocks so far (its variables and
// first label apart): how much code a part of it took.
func (f *Function) Len() int { return len(f.body) }
