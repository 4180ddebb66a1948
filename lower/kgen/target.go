package kgen

import (
	"fmt"

	"github.com/vkjit/vkjit/hlo"
)

// Target is what code generation needs to know about the device.
type Target struct {
	SubgroupSize uint32
	// SubgroupShuffle: compute shaders have subgroup shuffles, for
	// reductions by a subgroup per output (subgroup.go).
	SubgroupShuffle bool
	// TexelLoads: a kernel may read a storage binding through a uniform
	// texel buffer view of it as well (vk.DeviceInfo.TexelLoads).
	TexelLoads        bool
	MaxWorkgroupSize  uint32    // maxComputeWorkGroupInvocations
	MaxWorkgroupCount [3]uint32 // maxComputeWorkGroupCount
	MaxStorageBuffers uint32    // maxPerStageDescriptorStorageBuffers
	// MaxStorageRange is the most bytes one storage buffer binding may
	// span (maxStorageBufferRange; lavapipe 128 MiB); 0: no bound known.
	MaxStorageRange int64
	// MaxTexelElements is the most texels one texel buffer view holds
	// (maxTexelBufferElements; lavapipe 128 Mi); 0: no bound known. A
	// read-only array past MaxStorageRange with at most this many
	// elements is still read through texel views (texelAccess): on
	// lavapipe a load by device address is a loop over the lanes, one
	// scalar load each, and a 256 MiB gemv took 290 ms that way.
	MaxTexelElements int64
	// BufferAddress: kernels may reach a buffer through its device
	// address (bufferDeviceAddress and shaderInt64), which no range
	// bounds. AddressAbove, set by lower.Compile where the device has it,
	// is the size past which a binding is reached that way
	// (kernelBuilder.addBuffer): MaxStorageRange, or less to test it.
	BufferAddress  bool
	AddressAbove   int64
	MaxPushBytes   uint32 // maxPushConstantsSize: the step's constants and the addresses share it
	Float64, Int64 bool   // shaderFloat64, shaderInt64
	// Storage16 and Storage8: buffers hold 16- and 8-bit elements as they
	// are (storageBuffer16BitAccess, storageBuffer8BitAccess); without
	// them those types are stored widened to 32 bits.
	Storage16, Storage8 bool
	// SignedZeroInfNan32 and 64: kernels may ask the driver to keep
	// IEEE's signed zeros, infinities and NaNs in float arithmetic of
	// that width (vk.DeviceInfo's fields of the same names). Kernels ask
	// wherever they can: without it Mesa folds x*0 to 0 and x+0 to x once
	// fusion or unrolling shows it a constant zero, so that inf*0 came
	// out 0 and -0+0 came out -0 in fused programs only.
	SignedZeroInfNan32, SignedZeroInfNan64 bool
	// DenormPreserve32 and 64: kernels may ask the driver to keep
	// subnormal floats of that width (shaderDenormPreserveFloat32/64), as
	// XLA does; they ask wherever they can. A device that offers no such
	// request may flush them: NVIDIA's 580.159 offers none for f32 and
	// does (power(2, -149) came out 0). f16 and bf16 are computed in f32
	// and rounded by vkjit's integer code (normalize), whatever the
	// device offers.
	DenormPreserve32, DenormPreserve64 bool
	// IEEEDivSqrt: the driver's f32 OpFDiv and sqrt are IEEE's
	// correctly rounded ones (llvmpipe's are). Vulkan allows 2.5 ulps for
	// a quotient and sqrt's error is inversesqrt's; NVIDIA's division
	// multiplies by a reciprocal that flushes to 0 for a divisor past
	// 2^126 (abs(2e38+2e38i) came out 2e38). Elsewhere kernels divide and
	// take square roots as mathlib's div and sqrt do: through f64, to
	// IEEE's f32 results, where the device has f64.
	IEEEDivSqrt bool
	// Contracts: the driver may fuse multiplies into adds wherever
	// SPIR-V lets it (any but llvmpipe, taken to): the math library's
	// operations then each carry NoContraction (mathlib.Driver), as HLO's
	// own float ops always do (scalar.go, op).
	Contracts bool
	// FoldsZeros: the driver folds x*0 to 0, x+0 to x, 0-x to -x and 0/x
	// to 0 where it sees a constant zero, whatever the float controls
	// say (llvmpipe: gallivm's lp_build_mul, add, sub and div check for
	// it as they build), so that inf*0 is 0 rather than NaN, and -0+0 is
	// -0. Kernels then hide their float zeros and the integers they
	// convert to floats (iota) behind a zero the driver cannot see
	// (kernelBuilder.hiddenZero).
	FoldsZeros   bool
	StorageAlign uint32 // minStorageBufferOffsetAlignment: where arena buffers may start
	// MaxLoopIterations bounds the loop iterations one invocation may run
	// in all (0: no bound). llvmpipe (lavapipe) ends every loop of an
	// invocation after 65535 iterations shared by all its loops
	// (LP_MAX_TGSI_LOOP_ITERATIONS) without an error, so kernels are
	// planned to stay under it.
	MaxLoopIterations int64
	// CPU is a device that runs kernels on the host's cores (lavapipe),
	// Cores of them: workgroup sizes follow (localSize).
	CPU   bool
	Cores int
	// WideAccess: 8 consecutive 32-bit elements may be loaded or stored
	// as one u64vec4 (vector.go, wideLoad and storeWide); set by compile
	// for CPU devices with shaderInt64 unless Options.Vec4Access.
	WideAccess bool
	// TexelReads: read-only inputs are fetched through TexelReads buffer views
	// (vector.go, texelVar); set by compile for CPU devices with
	// TexelLoads unless Options.StorageLoads.
	TexelReads bool
}

// LoopBudget is the loop iterations a kernel's invocation may plan for:
// the device's bound with room for the short loops of the math library
// (fmod, integer power), or no bound.
func (tg Target) LoopBudget() int64 {
	if tg.MaxLoopIterations == 0 {
		return 1 << 62
	}
	return tg.MaxLoopIterations - 2048
}

// LlvmpipeLoopLimit is llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS.
const LlvmpipeLoopLimit = 65535

// DefaultTarget is a conservative Vulkan 1.2 device (the minimum limits
// the specification guarantees), for compiling without a device.
var DefaultTarget = Target{
	SubgroupSize:      8,
	SubgroupShuffle:   true, // Vulkan 1.1 requires basic subgroups; shuffles are near universal
	MaxWorkgroupSize:  128,
	MaxWorkgroupCount: [3]uint32{65535, 65535, 65535},
	MaxStorageBuffers: 4,
	MaxPushBytes:      128,
	Float64:           true,
	Int64:             true,
	StorageAlign:      256, // the largest the specification allows
	Contracts:         true,
	MaxLoopIterations: LlvmpipeLoopLimit,
}

// LlvmpipeTarget is what lavapipe (Mesa 22.3, llvmpipe with 256-bit
// vectors) reports on a 2-core host, the device CI runs on: compiling for
// it without a device gives the kernels CI runs (shaders/ keeps their
// disassembly). The root package's TestLlvmpipeTarget holds it to what the
// device reports (with 16 lanes where vkjit runs lavapipe 512 bits wide,
// vk.WideLavapipeHost).
var LlvmpipeTarget = Target{
	SubgroupSize:       8,
	SubgroupShuffle:    true,
	TexelLoads:         true,
	MaxWorkgroupSize:   1024,
	MaxWorkgroupCount:  [3]uint32{65535, 65535, 65535},
	MaxStorageBuffers:  32,
	MaxStorageRange:    128 << 20,
	MaxTexelElements:   128 << 20,
	BufferAddress:      true,
	MaxPushBytes:       128,
	Float64:            true,
	Int64:              true,
	Storage16:          true,
	Storage8:           true,
	SignedZeroInfNan32: true,
	SignedZeroInfNan64: true,
	FoldsZeros:         true,
	IEEEDivSqrt:        true,
	StorageAlign:       16,
	MaxLoopIterations:  LlvmpipeLoopLimit,
	CPU:                true,
	Cores:              2,
}

// StorageType is how an element type is held in a device buffer.
//
// pred is stored as a 32-bit 0 or 1 (and is a SPIR-V bool in registers):
// 8-bit storage is an optional Vulkan feature, and one consistent
// representation keeps every kernel simple. The runtime widens and
// narrows pred when it copies to and from the host.
//
// The 8- and 16-bit types are stored as they are, as the host holds them
// (bf16 as its 16 bits), where the device has 8- and 16-bit storage
// (Target.Storage8, Storage16; lavapipe and most GPUs do): a bf16 tensor
// takes half the memory and traffic of f32. Elsewhere they are stored
// widened to 32 bits (s8 and s16 sign-extended, u8 and u16
// zero-extended, f16 and bf16 as f32 holding exactly representable
// values). The small float types are stored as their codes, as u8 or
// u32 (minifloat.go). Either way kernels compute in 32-bit registers and normalize
// every result to the narrow type (wrap, or round to nearest even),
// which is XLA's semantics; loads widen and stores narrow exactly.
func StorageType(t hlo.ElementType, tg Target) (hlo.ElementType, error) {
	if hlo.IsMiniFloat(t) { // their codes (minifloat.go)
		if tg.Storage8 {
			return hlo.U8, nil
		}
		return hlo.U32, nil
	}
	switch t {
	case hlo.F32, hlo.S32, hlo.U32:
		return t, nil
	case hlo.U8, hlo.S8:
		if tg.Storage8 {
			return t, nil
		}
	case hlo.U16, hlo.S16, hlo.F16, hlo.BF16:
		if tg.Storage16 {
			return t, nil
		}
	}
	switch t {
	case hlo.PRED, hlo.U8, hlo.U16:
		return hlo.U32, nil
	case hlo.S8, hlo.S16:
		return hlo.S32, nil
	case hlo.F16, hlo.BF16:
		return hlo.F32, nil
	case hlo.F64:
		if !tg.Float64 {
			return 0, fmt.Errorf("element type f64 needs a device with shaderFloat64")
		}
		return t, nil
	case hlo.S64, hlo.U64:
		if !tg.Int64 {
			return 0, fmt.Errorf("element type %s needs a device with shaderInt64", t)
		}
		return t, nil
	}
	return 0, fmt.Errorf("element type %s is not supported on the device yet", t)
}

// PaddedSize is what a buffer of n bytes occupies on the device: Vulkan
// has no empty buffers, and vkjit rounds to whole 32-bit words (vk's
// buffers do the same).
func PaddedSize(n int64) int64 {
	if n < 4 {
		return 4
	}
	return (n + 3) &^ 3
}

// StorageBytes is the device buffer size of an array shape.
func StorageBytes(s hlo.Shape, tg Target) (int64, error) {
	st, err := StorageType(s.Elem, tg)
	if err != nil {
		return 0, err
	}
	return s.NumElements() * int64(st.Bytes()), nil
}
