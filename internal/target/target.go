// Package target turns what Vulkan reports of a device into what the
// code generator needs to know of it (lower.Target). The library reads it
// once, when a runtime opens; `vkjit graph` uses it to draw the plan a
// device would get.
package target

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/vk"
)

// For is the code generator's view of device d.
func For(d vk.DeviceInfo) lower.Target {
	return lower.Target{
		SubgroupSize:       d.SubgroupSize,
		SubgroupShuffle:    d.SubgroupShuffle(),
		TexelLoads:         d.TexelLoads(),
		MaxWorkgroupSize:   d.MaxComputeWorkGroupInvocations,
		MaxWorkgroupCount:  d.MaxComputeWorkGroupCount,
		MaxStorageBuffers:  d.MaxPerStageStorageBuffers,
		MaxStorageRange:    int64(d.MaxStorageBufferRange),
		MaxTexelElements:   int64(d.MaxTexelBufferElements),
		BufferAddress:      d.BufferAddress,
		MaxPushBytes:       d.MaxPushConstantsSize,
		Float64:            d.ShaderFloat64,
		Int64:              d.ShaderInt64,
		Storage16:          d.Storage16,
		Storage8:           d.Storage8,
		DenormPreserve32:   d.DenormPreserve32,
		DenormPreserve64:   d.DenormPreserve64,
		SignedZeroInfNan32: d.SignedZeroInfNan32,
		SignedZeroInfNan64: d.SignedZeroInfNan64,
		StorageAlign:       uint32(d.MinStorageBufferOffsetAlign),
		MaxLoopIterations:  loopLimit(d),
		FoldsZeros:         isLlvmpipe(d),
		IEEEDivSqrt:        isLlvmpipe(d),
		Contracts:          !isLlvmpipe(d),
		CPU:                d.Type == vk.TypeCPU,
		Cores:              cpuThreads(),
	}
}

// cpuThreads is how many threads a CPU Vulkan device runs kernels on:
// lavapipe's own LP_NUM_THREADS when set (Mesa's variable, read to model
// the driver, not one of vkjit's settings), else the host's CPUs.
func cpuThreads() int {
	if v, err := strconv.Atoi(os.Getenv("LP_NUM_THREADS")); err == nil && v > 0 {
		return v
	}
	return runtime.NumCPU()
}

// loopLimit is the device's bound on loop iterations per invocation, where
// its driver has one (see lower.Target.MaxLoopIterations).
func loopLimit(d vk.DeviceInfo) int64 {
	if isLlvmpipe(d) {
		return lower.LlvmpipeLoopLimit
	}
	return 0
}

// KeepsSubnormals reports whether f32 subnormals survive the device's
// arithmetic: kernels ask for it where the driver lets them
// (shaderDenormPreserveFloat32), and llvmpipe keeps them unasked.
// NVIDIA's driver (580.159) offers no such request, and flushes them.
func KeepsSubnormals(d vk.DeviceInfo) bool { return d.DenormPreserve32 || isLlvmpipe(d) }

func isLlvmpipe(d vk.DeviceInfo) bool {
	return strings.Contains(d.Name, "llvmpipe") || strings.Contains(d.DriverName, "llvmpipe")
}
