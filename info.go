package vkjit

import (
	"github.com/vkjit/vkjit/internal/settings"
	"github.com/vkjit/vkjit/internal/target"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// DeviceInfo describes a Vulkan device: what ListDevices reports and
// Runtime.Device returns.
type DeviceInfo struct {
	Index      int    // the device's place in Vulkan's list (Options.Device takes it)
	Name       string // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
	Type       string // discrete-gpu, integrated-gpu, virtual-gpu, cpu or other
	Driver     string // the driver's name and version
	APIVersion string // the Vulkan version the device supports
	VendorID   uint32
	DeviceID   uint32
	// DefaultChoice marks the device Open picks when Options.Device is
	// empty (VKJIT_DEVICE, else the most capable type).
	DefaultChoice bool
	// MemoryBytes is the size of the heap tensors live in.
	MemoryBytes int64
	// Staged: tensors live in memory the host cannot map (a discrete GPU),
	// reached through copies (Runtime.Device only; see Options.Staged).
	Staged bool
	// What kernels may use: 64-bit floats and integers, subnormal f32s
	// kept (flushed to zero otherwise), 8- and 16-bit storage (narrower
	// types are widened otherwise), the subgroup size, the most
	// invocations in a workgroup.
	Float64, Int64, Subnormals, Storage8, Storage16 bool
	SubgroupSize                                    int
	MaxWorkgroupSize                                int
}

func deviceInfo(d vk.DeviceInfo, storageHeap int) DeviceInfo {
	info := DeviceInfo{
		Index: d.Index, Name: d.Name, Type: d.Type.String(), Driver: d.Driver(), APIVersion: d.APIVersion,
		VendorID: d.VendorID, DeviceID: d.DeviceID,
		Float64: d.ShaderFloat64, Int64: d.ShaderInt64, Subnormals: target.KeepsSubnormals(d),
		Storage8: d.Storage8, Storage16: d.Storage16,
		SubgroupSize: int(d.SubgroupSize), MaxWorkgroupSize: int(d.MaxComputeWorkGroupInvocations),
	}
	if storageHeap >= 0 && storageHeap < len(d.Heaps) {
		info.MemoryBytes = int64(d.Heaps[storageHeap].Size)
	} else {
		for _, h := range d.Heaps {
			if h.DeviceLocal {
				info.MemoryBytes = max(info.MemoryBytes, int64(h.Size))
			}
		}
	}
	return info
}

// ListDevices lists the Vulkan devices without opening one, marking the
// one Open would choose by default.
func ListDevices() ([]DeviceInfo, error) {
	inst, err := vk.NewInstance(false)
	if err != nil {
		return nil, err
	}
	defer inst.Destroy()
	devs, err := inst.Devices()
	if err != nil {
		return nil, err
	}
	chosen, chooseErr := vk.ChooseDevice(devs, settings.String("", "VKJIT_DEVICE"))
	out := make([]DeviceInfo, len(devs))
	for i, d := range devs {
		out[i] = deviceInfo(d, -1)
		out[i].DefaultChoice = chooseErr == nil && i == chosen
	}
	return out, nil
}

// ValidationMessages returns, and clears, what the validation layer has
// reported in this process.
func ValidationMessages() []string { return vk.ValidationMessages() }

// MemoryStats describe the device memory pool at one moment.
type MemoryStats struct {
	ReservedBytes    int64   // device memory held in blocks
	InUseBytes       int64   // allocated to buffers, rounded to the pool's granule
	PeakInUseBytes   int64   // the most ever in use at once
	LimitBytes       int64   // the budget the pool keeps under
	LargestFreeBytes int64   // the largest request that fits without a new block
	Fragmentation    float64 // 1 - (each block's largest free range, summed) / free bytes
	Blocks           int
	Allocations      int
	BudgetFromDevice bool // the limit came from VK_EXT_memory_budget
}

func memoryStats(s pool.Stats) MemoryStats {
	return MemoryStats{
		ReservedBytes: s.ReservedBytes, InUseBytes: s.InUseBytes, PeakInUseBytes: s.PeakInUseBytes,
		LimitBytes: s.LimitBytes, LargestFreeBytes: s.LargestFreeBytes, Fragmentation: s.Fragmentation,
		Blocks: s.Blocks, Allocations: s.Allocations, BudgetFromDevice: s.BudgetFromDevice,
	}
}
