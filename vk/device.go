package vk

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	vk "github.com/goki/vulkan"
)

// DeviceType is VkPhysicalDeviceType.
type DeviceType int

const (
	TypeOther DeviceType = iota
	TypeIntegrated
	TypeDiscrete
	TypeVirtual
	TypeCPU
)

func (t DeviceType) String() string {
	switch t {
	case TypeIntegrated:
		return "integrated-gpu"
	case TypeDiscrete:
		return "discrete-gpu"
	case TypeVirtual:
		return "virtual-gpu"
	case TypeCPU:
		return "cpu"
	}
	return "other"
}

// preference orders device types for the default choice: discrete GPU,
// then integrated, virtual, CPU.
func (t DeviceType) preference() int {
	switch t {
	case TypeDiscrete:
		return 0
	case TypeIntegrated:
		return 1
	case TypeVirtual:
		return 2
	case TypeCPU:
		return 3
	}
	return 4
}

// MemoryHeap is one VkMemoryHeap.
type MemoryHeap struct {
	Size        uint64
	DeviceLocal bool
}

// MemoryType is one VkMemoryType.
type MemoryType struct {
	Heap                                               int
	DeviceLocal, HostVisible, HostCoherent, HostCached bool
}

// DeviceInfo describes a physical device: what `vkjit devices` prints and
// what the compiler plans kernels by.
type DeviceInfo struct {
	Index             int
	Name              string
	Type              DeviceType
	VendorID          uint32
	DeviceID          uint32
	APIVersion        string
	DriverVersion     uint32
	DriverName        string
	DriverInfo        string
	PipelineCacheUUID [16]byte
	Heaps             []MemoryHeap
	MemoryTypes       []MemoryType
	SubgroupSize      uint32
	// SubgroupOperations is VkSubgroupFeatureFlags, and SubgroupStages
	// the shader stages that have them.
	SubgroupOperations, SubgroupStages uint32

	MaxComputeWorkGroupCount       [3]uint32
	MaxComputeWorkGroupSize        [3]uint32
	MaxComputeWorkGroupInvocations uint32
	MaxComputeSharedMemorySize     uint32
	MaxPushConstantsSize           uint32
	MaxStorageBufferRange          uint32
	MaxBoundDescriptorSets         uint32
	MaxPerStageStorageBuffers      uint32
	MinStorageBufferOffsetAlign    uint64
	NonCoherentAtomSize            uint64
	// MaxTexelBufferElements and MinTexelBufferOffsetAlign bound uniform
	// texel buffer views; TexelFormats says views of every format of
	// texelFormats may be uniform texel buffers (a format feature).
	MaxTexelBufferElements    uint32
	MinTexelBufferOffsetAlign uint64
	TexelFormats              bool
	// MaxPerStageSampledImages bounds a stage's texel buffers (with its
	// sampled images), MaxPerStageResources all its resources.
	MaxPerStageSampledImages, MaxPerStageResources uint32
	// TimestampPeriod is nanoseconds per timestamp tick; Timestamps says
	// compute queues can write them (timestampComputeAndGraphics).
	TimestampPeriod float32
	Timestamps      bool

	ShaderFloat64, ShaderInt64, ShaderInt16 bool
	// BufferAddress: shaders may reach buffers through their device
	// addresses (bufferDeviceAddress, with shaderInt64), which no
	// maxStorageBufferRange bounds; vkjit enables it where it is.
	BufferAddress bool
	// Storage16 and Storage8: storage buffers may hold 16- and 8-bit
	// values (storageBuffer16BitAccess, storageBuffer8BitAccess; loads,
	// stores and conversions only).
	Storage16, Storage8 bool
	// SignedZeroInfNan32 and 64: shaders may ask that float arithmetic
	// of that width keep IEEE's signed zeros, infinities and NaNs
	// (shaderSignedZeroInfNanPreserveFloat32/64). Without the request a
	// driver may fold x*0 to 0 and x+0 to x (Mesa does), where IEEE says
	// inf*0 is NaN and -0+0 is +0.
	SignedZeroInfNan32, SignedZeroInfNan64 bool
	// DenormPreserve32 and 64: shaders may ask that float arithmetic of
	// that width keep subnormals (shaderDenormPreserveFloat32/64); a GPU
	// flushes them to zero unless asked.
	DenormPreserve32, DenormPreserve64 bool

	api vk.Version // APIVersion as a number
}

// atLeast reports whether the device's API version is at least 1.minor.
func (d *DeviceInfo) atLeast(minor int) bool {
	return d.api.Major() > 1 || d.api.Minor() >= minor
}

// SubgroupShuffle reports whether compute shaders have subgroup shuffles
// (VK_SUBGROUP_FEATURE_SHUFFLE_BIT in the compute stage).
func (d *DeviceInfo) SubgroupShuffle() bool {
	const shuffleBit, computeStage = 0x10, 0x20
	return d.SubgroupOperations&shuffleBit != 0 && d.SubgroupStages&computeStage != 0
}

// TexelLoads reports whether a kernel may read any of its storage
// bindings through uniform texel buffer views as well (Kernel.Texel):
// views of every size of element are supported, one of bytes can span
// the largest storage binding, every storage binding's offset suits a view, and a
// stage may have as many texel buffers as storage buffers besides them.
func (d *DeviceInfo) TexelLoads() bool {
	a, n := d.MinTexelBufferOffsetAlign, d.MaxPerStageStorageBuffers
	return d.TexelFormats && uint64(d.MaxTexelBufferElements) >= uint64(d.MaxStorageBufferRange) &&
		a != 0 && d.MinStorageBufferOffsetAlign%a == 0 &&
		d.MaxPerStageSampledImages >= n && uint64(d.MaxPerStageResources) >= 2*uint64(n)
}

// Driver is the driver's name and version text.
func (d *DeviceInfo) Driver() string {
	if d.DriverName == "" {
		return fmt.Sprintf("version %d", d.DriverVersion)
	}
	if d.DriverInfo == "" {
		return d.DriverName
	}
	return d.DriverName + " (" + d.DriverInfo + ")"
}

func (in *Instance) physicalDevices() ([]vk.PhysicalDevice, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.inst, &n, nil)); err != nil {
		return nil, err
	}
	pds := make([]vk.PhysicalDevice, n)
	if n > 0 {
		if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.inst, &n, pds)); err != nil {
			return nil, err
		}
	}
	return pds[:n], nil
}

// Devices lists the physical devices the loader sees.
func (in *Instance) Devices() ([]DeviceInfo, error) {
	pds, err := in.physicalDevices()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, len(pds))
	for i, pd := range pds {
		if out[i], err = in.describe(i, pd); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (in *Instance) describe(index int, pd vk.PhysicalDevice) (DeviceInfo, error) {
	var p vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	d := DeviceInfo{
		Index:                          index,
		Name:                           vk.ToString(p.DeviceName[:]),
		VendorID:                       p.VendorID,
		DeviceID:                       p.DeviceID,
		APIVersion:                     vk.Version(p.ApiVersion).String(),
		api:                            vk.Version(p.ApiVersion),
		DriverVersion:                  p.DriverVersion,
		PipelineCacheUUID:              p.PipelineCacheUUID,
		MaxComputeWorkGroupCount:       p.Limits.MaxComputeWorkGroupCount,
		MaxComputeWorkGroupSize:        p.Limits.MaxComputeWorkGroupSize,
		MaxComputeWorkGroupInvocations: p.Limits.MaxComputeWorkGroupInvocations,
		MaxComputeSharedMemorySize:     p.Limits.MaxComputeSharedMemorySize,
		MaxPushConstantsSize:           p.Limits.MaxPushConstantsSize,
		MaxStorageBufferRange:          p.Limits.MaxStorageBufferRange,
		MaxBoundDescriptorSets:         p.Limits.MaxBoundDescriptorSets,
		MaxPerStageStorageBuffers:      p.Limits.MaxPerStageDescriptorStorageBuffers,
		MinStorageBufferOffsetAlign:    uint64(p.Limits.MinStorageBufferOffsetAlignment),
		NonCoherentAtomSize:            uint64(p.Limits.NonCoherentAtomSize),
		MaxTexelBufferElements:         p.Limits.MaxTexelBufferElements,
		MinTexelBufferOffsetAlign:      uint64(p.Limits.MinTexelBufferOffsetAlignment),
		MaxPerStageSampledImages:       p.Limits.MaxPerStageDescriptorSampledImages,
		MaxPerStageResources:           p.Limits.MaxPerStageResources,
		TimestampPeriod:                p.Limits.TimestampPeriod,
		Timestamps:                     p.Limits.TimestampComputeAndGraphics == vk.True,
	}
	switch p.DeviceType {
	case vk.PhysicalDeviceTypeIntegratedGpu:
		d.Type = TypeIntegrated
	case vk.PhysicalDeviceTypeDiscreteGpu:
		d.Type = TypeDiscrete
	case vk.PhysicalDeviceTypeVirtualGpu:
		d.Type = TypeVirtual
	case vk.PhysicalDeviceTypeCpu:
		d.Type = TypeCPU
	}
	d.TexelFormats = true
	for _, f := range texelFormats {
		var fp vk.FormatProperties
		vk.GetPhysicalDeviceFormatProperties(pd, f, &fp)
		fp.Deref()
		d.TexelFormats = d.TexelFormats && fp.BufferFeatures&vk.FormatFeatureFlags(vk.FormatFeatureUniformTexelBufferBit) != 0
	}
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	for i := uint32(0); i < mp.MemoryHeapCount; i++ {
		h := mp.MemoryHeaps[i]
		h.Deref()
		d.Heaps = append(d.Heaps, MemoryHeap{Size: uint64(h.Size), DeviceLocal: h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0})
	}
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		t := mp.MemoryTypes[i]
		t.Deref()
		f := t.PropertyFlags
		d.MemoryTypes = append(d.MemoryTypes, MemoryType{
			Heap:         int(t.HeapIndex),
			DeviceLocal:  f&vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit) != 0,
			HostVisible:  f&vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit) != 0,
			HostCoherent: f&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCoherentBit) != 0,
			HostCached:   f&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit) != 0,
		})
	}
	var feat vk.PhysicalDeviceFeatures
	vk.GetPhysicalDeviceFeatures(pd, &feat)
	feat.Deref()
	d.ShaderFloat64 = feat.ShaderFloat64 == vk.True
	d.ShaderInt64 = feat.ShaderInt64 == vk.True
	d.ShaderInt16 = feat.ShaderInt16 == vk.True
	if d.atLeast(1) {
		p2, err := queryProps2(in.inst, pd)
		if err != nil {
			return d, err
		}
		d.SubgroupSize = p2.SubgroupSize
		d.SubgroupOperations, d.SubgroupStages = p2.SubgroupOperations, p2.SubgroupStages
		d.DriverName, d.DriverInfo = p2.DriverName, p2.DriverInfo
		d.Storage16 = hasFeature(in, pd, feat16Storage)
		d.Storage8 = d.atLeast(2) && hasFeature(in, pd, feat8Storage)
		d.DenormPreserve32 = hasProperty(in, pd, propFloatControls, offDenormPreserve32)
		d.DenormPreserve64 = hasProperty(in, pd, propFloatControls, offDenormPreserve64)
		d.SignedZeroInfNan32 = hasProperty(in, pd, propFloatControls, offSignedZeroInfNan32)
		d.SignedZeroInfNan64 = hasProperty(in, pd, propFloatControls, offSignedZeroInfNan64)
		d.BufferAddress = d.atLeast(2) && d.ShaderInt64 && hasFeature(in, pd, featBufferAddress)
	}
	return d, nil
}

// ChooseDevice picks a device: by sel (an index, or a substring of the
// name, case-insensitive) when it is not empty; otherwise the most
// preferred type (discrete, integrated, virtual, CPU), first listed among
// equals.
func ChooseDevice(devs []DeviceInfo, sel string) (int, error) {
	if len(devs) == 0 {
		return 0, fmt.Errorf("%w: the Vulkan loader lists no devices; %s", ErrNoDevice, InstallHint)
	}
	if sel != "" {
		if i, err := strconv.Atoi(sel); err == nil {
			if i < 0 || i >= len(devs) {
				return 0, fmt.Errorf("%w: device index %d out of range (0..%d)", ErrNoDevice, i, len(devs)-1)
			}
			return i, nil
		}
		for i, d := range devs {
			if strings.Contains(strings.ToLower(d.Name), strings.ToLower(sel)) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%w: no device name contains %q", ErrNoDevice, sel)
	}
	order := make([]int, len(devs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return devs[order[a]].Type.preference() < devs[order[b]].Type.preference() })
	return order[0], nil
}

// Device is a logical device with one compute queue.
type Device struct {
	spareMu sync.Mutex
	spare   *Buffer // spareTexel
	Info    DeviceInfo
	inst    *Instance
	phys    vk.PhysicalDevice
	dev     vk.Device
	queue   vk.Queue
	family  uint32
	queueMu sync.Mutex // vkQueueSubmit needs external synchronization

	calls *calls // the calls the bindings cannot make safely (calls.go)

	memoryBudget  bool // VK_EXT_memory_budget enabled
	pipelineCache vk.PipelineCache

	xfer *transfers // nil unless the device stages (see Staging)
}

// OpenDevice creates a logical device on physical device index with a
// queue from the first family that supports compute, and, when the device
// stages, a transfer queue (see Staging).
func (in *Instance) OpenDevice(index int, opts DeviceOptions) (*Device, error) {
	staging := opts.Staging
	pds, err := in.physicalDevices()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(pds) {
		return nil, fmt.Errorf("%w: device index %d out of range", ErrNoDevice, index)
	}
	pd := pds[index]
	info, err := in.describe(index, pd)
	if err != nil {
		return nil, err
	}
	qf := queueFlags(in, pd)
	family := -1
	for i := range qf {
		if qf[i]&vk.QueueFlags(vk.QueueComputeBit) != 0 {
			family = i
			break
		}
	}
	if family < 0 {
		return nil, fmt.Errorf("%w: %s has no compute queue", ErrNoDevice, info.Name)
	}
	// A transfer-only family is a DMA engine: copies there overlap the
	// compute queue's kernels.
	xferFamily := family
	for i := range qf {
		const gc = vk.QueueGraphicsBit | vk.QueueComputeBit
		if qf[i]&vk.QueueFlags(vk.QueueTransferBit) != 0 && qf[i]&vk.QueueFlags(gc) == 0 {
			xferFamily = i
			break
		}
	}
	var exts []string
	if names(in, pd)[extMemoryBudget] {
		exts = append(exts, extMemoryBudget)
	}
	d := &Device{Info: info, inst: in, phys: pd, family: uint32(family), memoryBudget: len(exts) > 0}
	// Stage when told to, or when the main heap is not host-visible; it
	// takes timeline semaphores.
	stage := staging == StagingOn || (staging == StagingAuto && !info.MappedMainHeap())
	if stage && !(info.atLeast(2) && hasFeature(in, pd, featTimeline)) {
		stage = false // mapped system memory: correct, slower
	}
	families := []uint32{uint32(family)} // a queue of each
	if stage && xferFamily != family {
		families = append(families, uint32(xferFamily))
	}
	var chain featureChain
	defer chain.free()
	for _, f := range []struct {
		on    bool
		sType uint32
	}{{stage, featTimeline}, {info.Storage16, feat16Storage}, {info.Storage8, feat8Storage}, {info.BufferAddress, featBufferAddress}} {
		if f.on {
			if err := chain.add(f.sType); err != nil {
				return nil, err
			}
		}
	}
	dev, rc := createDevice(in, pd, families, exts, chain.head(), info.ShaderFloat64, info.ShaderInt64, info.ShaderInt16)
	if err := check("vkCreateDevice", rc); err != nil {
		return nil, err
	}
	d.dev = dev
	var q vk.Queue
	vk.GetDeviceQueue(d.dev, d.family, 0, &q)
	d.queue = q
	if d.calls, err = loadCalls(in, d.dev); err != nil {
		d.Destroy()
		return nil, err
	}
	if stage {
		tl, err := loadTimelines(in, d.dev)
		if err == nil {
			err = d.openTransfers(tl, uint32(xferFamily))
		}
		if err != nil {
			d.Destroy()
			return nil, err
		}
	}
	return d, nil
}

// Destroy waits for the device to go idle and releases it.
func (d *Device) Destroy() {
	if d.dev == nil {
		return
	}
	vk.DeviceWaitIdle(d.dev)
	d.closeTransfers()
	if d.spare != nil {
		d.spare.Destroy()
		d.spare = nil
	}
	if d.pipelineCache != vk.NullPipelineCache {
		vk.DestroyPipelineCache(d.dev, d.pipelineCache, nil)
		d.pipelineCache = vk.NullPipelineCache
	}
	vk.DestroyDevice(d.dev, nil)
	d.dev = nil
}

// WaitIdle waits until the device has finished all submitted work.
func (d *Device) WaitIdle() error {
	if d.dev == nil {
		return nil
	}
	return check("vkDeviceWaitIdle", vk.DeviceWaitIdle(d.dev))
}

// memoryType finds the first memory type allowed by bits with all the
// wanted properties.
func (d *Device) memoryType(bits uint32, want func(MemoryType) bool) (uint32, bool) {
	for i, t := range d.Info.MemoryTypes {
		if bits&(1<<uint(i)) != 0 && want(t) {
			return uint32(i), true
		}
	}
	return 0, false
}
