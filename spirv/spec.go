package spirv

// Enumerants of the SPIR-V 1.3 specification and the GLSL.std.450 extended
// instruction set that vkjit's kernels use. Values are from the Khronos
// grammar (spirv.core.grammar.json); spirv-val checks every module the
// compiler emits, and the golden tests compare spirv-dis output, so a wrong
// number here fails loudly.

// Op is a SPIR-V opcode.
type Op uint16

const (
	OpNop                       Op = 0
	OpName                      Op = 5
	OpMemberName                Op = 6
	OpExtension                 Op = 10
	OpExtInstImport             Op = 11
	OpExtInst                   Op = 12
	OpMemoryModel               Op = 14
	OpEntryPoint                Op = 15
	OpExecutionMode             Op = 16
	OpCapability                Op = 17
	OpTypeVoid                  Op = 19
	OpTypeBool                  Op = 20
	OpTypeInt                   Op = 21
	OpTypeFloat                 Op = 22
	OpTypeVector                Op = 23
	OpTypeArray                 Op = 28
	OpTypeRuntimeArray          Op = 29
	OpTypeStruct                Op = 30
	OpTypePointer               Op = 32
	OpTypeFunction              Op = 33
	OpConstantTrue              Op = 41
	OpConstantFalse             Op = 42
	OpConstant                  Op = 43
	OpConstantComposite         Op = 44
	OpSpecConstant              Op = 50
	OpFunction                  Op = 54
	OpFunctionParameter         Op = 55
	OpFunctionEnd               Op = 56
	OpFunctionCall              Op = 57
	OpVariable                  Op = 59
	OpLoad                      Op = 61
	OpStore                     Op = 62
	OpAccessChain               Op = 65
	OpDecorate                  Op = 71
	OpMemberDecorate            Op = 72
	OpCompositeConstruct        Op = 80
	OpCompositeExtract          Op = 81
	OpConvertFToU               Op = 109
	OpConvertFToS               Op = 110
	OpConvertSToF               Op = 111
	OpConvertUToF               Op = 112
	OpUConvert                  Op = 113
	OpSConvert                  Op = 114
	OpFConvert                  Op = 115
	OpConvertUToPtr             Op = 120
	OpBitcast                   Op = 124
	OpSNegate                   Op = 126
	OpFNegate                   Op = 127
	OpIAdd                      Op = 128
	OpFAdd                      Op = 129
	OpISub                      Op = 130
	OpFSub                      Op = 131
	OpIMul                      Op = 132
	OpFMul                      Op = 133
	OpUDiv                      Op = 134
	OpSDiv                      Op = 135
	OpFDiv                      Op = 136
	OpUMod                      Op = 137
	OpSRem                      Op = 138
	OpSMod                      Op = 139
	OpFRem                      Op = 140
	OpFMod                      Op = 141
	OpVectorTimesScalar         Op = 142
	OpGroupNonUniformShuffleXor Op = 346
	OpGroupNonUniformShuffle    Op = 345
	OpTypeImage                 Op = 25
	OpImageFetch                Op = 95
	OpIsNan                     Op = 156
	OpIsInf                     Op = 157
	OpLogicalEqual              Op = 164
	OpLogicalNotEqual           Op = 165
	OpLogicalOr                 Op = 166
	OpLogicalAnd                Op = 167
	OpLogicalNot                Op = 168
	OpSelect                    Op = 169
	OpIEqual                    Op = 170
	OpINotEqual                 Op = 171
	OpUGreaterThan              Op = 172
	OpSGreaterThan              Op = 173
	OpUGreaterThanEqual         Op = 174
	OpSGreaterThanEqual         Op = 175
	OpULessThan                 Op = 176
	OpSLessThan                 Op = 177
	OpULessThanEqual            Op = 178
	OpSLessThanEqual            Op = 179
	OpFOrdEqual                 Op = 180
	OpFUnordEqual               Op = 181
	OpFOrdNotEqual              Op = 182
	OpFUnordNotEqual            Op = 183
	OpFOrdLessThan              Op = 184
	OpFUnordLessThan            Op = 185
	OpFOrdGreaterThan           Op = 186
	OpFUnordGreaterThan         Op = 187
	OpFOrdLessThanEqual         Op = 188
	OpFUnordLessThanEqual       Op = 189
	OpFOrdGreaterThanEqual      Op = 190
	OpFUnordGreaterThanEqual    Op = 191
	OpUMulExtended              Op = 151
	OpShiftRightLogical         Op = 194
	OpShiftRightArithmetic      Op = 195
	OpShiftLeftLogical          Op = 196
	OpBitwiseOr                 Op = 197
	OpBitwiseXor                Op = 198
	OpBitwiseAnd                Op = 199
	OpNot                       Op = 200
	OpBitCount                  Op = 205
	OpControlBarrier            Op = 224
	OpAtomicIAdd                Op = 234
	OpAtomicSMin                Op = 236
	OpAtomicUMin                Op = 237
	OpAtomicSMax                Op = 238
	OpAtomicUMax                Op = 239
	OpAtomicAnd                 Op = 240
	OpAtomicOr                  Op = 241
	OpAtomicXor                 Op = 242
	OpMemoryBarrier             Op = 225
	OpPhi                       Op = 245
	OpLoopMerge                 Op = 246
	OpSelectionMerge            Op = 247
	OpLabel                     Op = 248
	OpBranch                    Op = 249
	OpBranchConditional         Op = 250
	OpReturn                    Op = 253
	OpReturnValue               Op = 254
)

// Capability is a SPIR-V capability.
type Capability uint32

const (
	CapabilityShader                   Capability = 1
	CapabilityFloat16                  Capability = 9
	CapabilityFloat64                  Capability = 10
	CapabilityInt64                    Capability = 11
	CapabilityInt16                    Capability = 22
	CapabilityInt8                     Capability = 39
	CapabilityGroupNonUniform          Capability = 61
	CapabilitySampledBuffer            Capability = 46
	CapabilityGroupNonUniformArith     Capability = 63
	CapabilityGroupNonUniformShuffle   Capability = 65
	CapabilityStorageBuffer16BitAccess Capability = 4433
	CapabilityStorageBuffer8BitAccess  Capability = 4448
	CapabilityDenormPreserve           Capability = 4464 // SPV_KHR_float_controls
	CapabilitySignedZeroInfNanPreserve Capability = 4466
	// SPV_KHR_physical_storage_buffer: pointers made from buffer device
	// addresses (Builder.PhysicalAddressing).
	CapabilityPhysicalStorageBufferAddresses Capability = 5347
)

// StorageClass says where a variable lives.
type StorageClass uint32

const (
	StorageUniformConstant StorageClass = 0
	StorageInput           StorageClass = 1
	StorageUniform         StorageClass = 2
	StorageOutput          StorageClass = 3
	StorageWorkgroup       StorageClass = 4
	StoragePrivate         StorageClass = 6
	StorageFunction        StorageClass = 7
	StoragePushConstant    StorageClass = 9
	StorageStorageBuffer   StorageClass = 12
	// StoragePhysicalStorageBuffer is memory reached through a buffer
	// device address: no descriptor, so no maxStorageBufferRange.
	StoragePhysicalStorageBuffer StorageClass = 5349
)

// Decoration values.
type Decoration uint32

const (
	DecorationSpecID        Decoration = 1
	DecorationBlock         Decoration = 2
	DecorationArrayStride   Decoration = 6
	DecorationBuiltIn       Decoration = 11
	DecorationNoContraction Decoration = 42
	DecorationNonWritable   Decoration = 24
	DecorationNonReadable   Decoration = 25
	DecorationBinding       Decoration = 33
	DecorationDescriptorSet Decoration = 34
	DecorationOffset        Decoration = 35
)

// BuiltIn values (used with DecorationBuiltIn).
type BuiltIn uint32

const (
	BuiltInNumWorkgroups             BuiltIn = 24
	BuiltInWorkgroupSize             BuiltIn = 25
	BuiltInWorkgroupID               BuiltIn = 26
	BuiltInLocalInvocationID         BuiltIn = 27
	BuiltInGlobalInvocationID        BuiltIn = 28
	BuiltInLocalInvocationIndex      BuiltIn = 29
	BuiltInSubgroupSize              BuiltIn = 36
	BuiltInSubgroupLocalInvocationID BuiltIn = 41
)

// Execution models, modes, addressing and memory models.
const (
	ExecutionModelGLCompute = 5
	ExecutionModeLocalSize  = 17
	// SPV_KHR_float_controls: per float width, keep denormals / round
	// conversions and arithmetic to nearest even.
	ExecutionModeDenormPreserve           = 4459
	ExecutionModeSignedZeroInfNanPreserve = 4461
	AddressingLogical                     = 0
	AddressingPhysicalStorageBuffer64     = 5348
	MemoryModelGLSL450                    = 1
)

// Scopes and memory semantics for barriers.
const (
	ScopeDevice    = 1
	ScopeWorkgroup = 2
	ScopeSubgroup  = 3

	// MemoryAccessAligned is the memory operand that every load and store
	// through a physical storage buffer pointer carries, with the
	// alignment in bytes the pointer is known to have.
	MemoryAccessAligned = 0x2

	SemanticsAcquireRelease         = 0x8
	SemanticsWorkgroupMemory        = 0x100
	SemanticsUniformMemory          = 0x40
	SemanticsImageMemory            = 0x800
	SelectionControlNone            = 0
	LoopControlNone                 = 0
	FunctionControlNone             = 0
	MagicNumber                     = 0x07230203
	Version13                uint32 = 0x00010300
	// GeneratorID is the tool id in the module header's generator word.
	// 0 is "unregistered"; the low 16 bits carry vkjit's own version of
	// the generator so that disassembly shows which emitter wrote a module.
	GeneratorID uint32 = 0x0000_0001
)

// GLSL.std.450 extended instructions.
type GLSLInst uint32

const (
	GLSLRound       GLSLInst = 1
	GLSLRoundEven   GLSLInst = 2
	GLSLTrunc       GLSLInst = 3
	GLSLFAbs        GLSLInst = 4
	GLSLSAbs        GLSLInst = 5
	GLSLFSign       GLSLInst = 6
	GLSLSSign       GLSLInst = 7
	GLSLFloor       GLSLInst = 8
	GLSLCeil        GLSLInst = 9
	GLSLSin         GLSLInst = 13
	GLSLCos         GLSLInst = 14
	GLSLTan         GLSLInst = 15
	GLSLTanh        GLSLInst = 21
	GLSLAtan2       GLSLInst = 25
	GLSLPow         GLSLInst = 26
	GLSLExp         GLSLInst = 27
	GLSLLog         GLSLInst = 28
	GLSLSqrt        GLSLInst = 31
	GLSLInverseSqrt GLSLInst = 32
	GLSLFMin        GLSLInst = 37
	GLSLUMin        GLSLInst = 38
	GLSLSMin        GLSLInst = 39
	GLSLFMax        GLSLInst = 40
	GLSLUMax        GLSLInst = 41
	GLSLSMax        GLSLInst = 42
	GLSLFClamp      GLSLInst = 43
	GLSLUClamp      GLSLInst = 44
	GLSLSClamp      GLSLInst = 45
	GLSLFma         GLSLInst = 50
	GLSLLdexp       GLSLInst = 53
	GLSLFindUMsb    GLSLInst = 75
	GLSLNMin        GLSLInst = 79
	GLSLNMax        GLSLInst = 80
)
