package vk

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Buffer is a storage buffer with its own memory: host-visible and
// mapped for the buffer's lifetime (NewBuffer), or device-local and
// unmapped on a device that stages (NewDeviceBuffer). (The pool package
// suballocates; this is the primitive it builds on.)
type Buffer struct {
	dev    *Device
	buf    vk.Buffer
	mem    vk.DeviceMemory
	size   int64   // bytes the caller asked for
	span   int64   // bytes it covers: size padded to a whole word
	data   []byte  // the mapping; nil when unmapped
	offset int64   // a view: where it starts in parent
	parent *Buffer // a view's buffer; nil for a buffer that owns its memory
	from   *Buffer // the buffer View was called on
	alloc  bool    // an allocation of its own (Carve): Root stops here

	ready atomic.Uint64 // an allocation's Ready ticket (Root's only)
	addr  atomic.Uint64 // the device address of buf, once asked (the owner's only)
}

// View returns size bytes of b from offset as a buffer of their own, for
// binding to a kernel: offset must be a multiple of the device's
// minStorageBufferOffsetAlignment. A view owns nothing; it is valid while
// b is.
func (b *Buffer) View(offset, size int64) (*Buffer, error) {
	alloc := wordsFor(size)
	if offset < 0 || offset+alloc > b.span {
		return nil, fmt.Errorf("vk: view of %d bytes at %d is outside a %d-byte buffer", size, offset, b.span)
	}
	owner := b
	if b.parent != nil {
		owner = b.parent
	}
	v := &Buffer{dev: b.dev, buf: b.buf, size: size, span: alloc, offset: b.offset + offset, parent: owner, from: b}
	if b.data != nil {
		v.data = b.data[offset : offset+alloc]
	}
	return v, nil
}

// Carve is View for an allocator: the view is an allocation of its own,
// the Root of every view cut from it.
func (b *Buffer) Carve(offset, size int64) (*Buffer, error) {
	v, err := b.View(offset, size)
	if err == nil {
		v.alloc = true
	}
	return v, err
}

// Root is the allocation b's bytes belong to: b itself when it owns its
// memory or was carved by an allocator, else the Root of the buffer it
// is a view of.
func (b *Buffer) Root() *Buffer {
	for b.from != nil && !b.alloc {
		b = b.from
	}
	return b
}

// mappedTypes are the memory properties of mapped storage buffers, best
// first: host-visible memory on the device's main heap (CPU devices such
// as lavapipe, integrated GPUs, resizable BAR), then any host-visible
// coherent memory (a discrete GPU's 256 MiB BAR window is no place for
// tensors: system memory is).
func (d *Device) mappedTypes() []func(MemoryType) bool {
	main := d.Info.MainHeap()
	return []func(MemoryType) bool{
		func(t MemoryType) bool { return t.DeviceLocal && t.HostVisible && t.HostCoherent && t.Heap == main },
		func(t MemoryType) bool { return t.HostVisible && t.HostCoherent },
	}
}

// stagingTypes are the memory properties of staging buffers: host
// memory the device reads and writes, cached where possible (downloads
// read it back).
var stagingTypes = []func(MemoryType) bool{
	func(t MemoryType) bool { return t.HostVisible && t.HostCoherent && t.HostCached },
	func(t MemoryType) bool { return t.HostVisible && t.HostCoherent },
}

// deviceTypes are those of unmapped device buffers.
var deviceTypes = []func(MemoryType) bool{
	func(t MemoryType) bool { return t.DeviceLocal },
	func(t MemoryType) bool { return true },
}

// MainHeap is the largest device-local heap (the first heap when none
// says device-local): where tensors belong.
func (d *DeviceInfo) MainHeap() int {
	best := 0
	for i, h := range d.Heaps {
		if h.DeviceLocal && (!d.Heaps[best].DeviceLocal || h.Size > d.Heaps[best].Size) {
			best = i
		}
	}
	return best
}

// MappedMainHeap reports whether the main heap has host-visible coherent
// memory that the host's cache holds, so that the host reads and writes
// tensors in place at memory speed: no staging (CPU devices such as
// lavapipe, integrated GPUs). A discrete GPU's resizable BAR maps its
// whole memory uncached: the host's reads of it crawl across the bus one
// uncached load at a time (an H200, NVIDIA 580: a 64 MB result read in
// place 1.3-1.7 s, by a copy into cached staging memory 33 ms with the
// upload), so such a device stages.
func (d *DeviceInfo) MappedMainHeap() bool {
	main := d.MainHeap()
	for _, t := range d.MemoryTypes {
		if t.DeviceLocal && t.HostVisible && t.HostCoherent && t.HostCached && t.Heap == main {
			return true
		}
	}
	return false
}

func (d *Device) pickType(bits uint32, prefs []func(MemoryType) bool) (uint32, bool) {
	for _, want := range prefs {
		if idx, ok := d.memoryType(bits, want); ok {
			return idx, true
		}
	}
	return 0, false
}

// StorageHeap is the memory heap the pool's blocks come from (the one a
// memory budget applies to): NewDeviceBuffer's on a device that stages,
// else NewBuffer's.
func (d *Device) StorageHeap() int {
	prefs := d.mappedTypes()
	if d.Staged() {
		prefs = deviceTypes
	}
	if idx, ok := d.pickType(^uint32(0), prefs); ok {
		return d.Info.MemoryTypes[idx].Heap
	}
	return 0
}

// NewBuffer creates a host-visible storage buffer of size bytes, mapped,
// in device-local memory when the device's main heap is host-visible
// (integrated GPUs, CPU devices such as lavapipe).
func (d *Device) NewBuffer(size int64) (*Buffer, error) {
	return d.newBuffer(size, d.mappedTypes(), true)
}

// NewStagingBuffer creates a mapped host-memory buffer for copies to and
// from device buffers.
func (d *Device) NewStagingBuffer(size int64) (*Buffer, error) {
	return d.newBuffer(size, stagingTypes, true)
}

// NewDeviceBuffer creates an unmapped device-local storage buffer: the
// host reaches it only through Copy. Only a device that stages has them.
func (d *Device) NewDeviceBuffer(size int64) (*Buffer, error) {
	if !d.Staged() {
		return nil, fmt.Errorf("vk: %s does not stage; its buffers are mapped (NewBuffer)", d.Info.Name)
	}
	return d.newBuffer(size, deviceTypes, false)
}

func (d *Device) newBuffer(size int64, prefs []func(MemoryType) bool, mapped bool) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("vk: negative buffer size %d", size)
	}
	alloc := wordsFor(size)
	b := &Buffer{dev: d, size: size, span: alloc}
	bci := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(alloc),
		Usage:       vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageUniformTexelBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	if d.Info.BufferAddress {
		bci.Usage |= vk.BufferUsageFlags(vk.BufferUsageShaderDeviceAddressBit)
	}
	if fam, own := d.TransferQueueFamily(); own {
		// Used by the compute and the transfer queue: concurrent sharing
		// instead of ownership transfers.
		bci.SharingMode = vk.SharingModeConcurrent
		bci.QueueFamilyIndexCount = 2
		bci.PQueueFamilyIndices = []uint32{d.family, fam}
	}
	var buf vk.Buffer
	if err := check("vkCreateBuffer", vk.CreateBuffer(d.dev, bci, nil, &buf)); err != nil {
		return nil, err
	}
	b.buf = buf
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, b.buf, &req)
	req.Deref()
	idx, ok := d.pickType(req.MemoryTypeBits, prefs)
	if !ok {
		vk.DestroyBuffer(d.dev, b.buf, nil)
		if mapped {
			return nil, fmt.Errorf("vk: %s has no host-visible coherent memory for storage buffers", d.Info.Name)
		}
		return nil, fmt.Errorf("vk: %s has no memory type for storage buffers", d.Info.Name)
	}
	mai := &vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: idx,
	}
	if d.Info.BufferAddress {
		mai.PNext = addressFlags()
	}
	var mem vk.DeviceMemory
	if err := check("vkAllocateMemory", vk.AllocateMemory(d.dev, mai, nil, &mem)); err != nil {
		vk.DestroyBuffer(d.dev, b.buf, nil)
		return nil, fmt.Errorf("allocating %d bytes: %w", alloc, err)
	}
	b.mem = mem
	if err := check("vkBindBufferMemory", vk.BindBufferMemory(d.dev, b.buf, b.mem, 0)); err != nil {
		b.Destroy()
		return nil, err
	}
	if !mapped {
		return b, nil
	}
	var p unsafe.Pointer
	if err := check("vkMapMemory", vk.MapMemory(d.dev, b.mem, 0, vk.DeviceSize(vk.WholeSize), 0, &p)); err != nil {
		b.Destroy()
		return nil, err
	}
	b.data = unsafe.Slice((*byte)(p), alloc)
	if d.Info.Type == TypeCPU {
		adviseHuge(b.data)
	}
	return b, nil
}

// Size is the buffer's size in bytes as requested.
func (b *Buffer) Size() int64 { return b.size }

// Mapped reports whether the host can read and write the buffer through
// Bytes and Write.
func (b *Buffer) Mapped() bool { return b.data != nil }

// Bytes is the mapped contents (nil for an unmapped buffer). Read it only
// when no submitted work writes the buffer.
func (b *Buffer) Bytes() []byte {
	if b.data == nil {
		return nil
	}
	return b.data[:b.size]
}

// Write copies src into the mapped buffer at offset.
func (b *Buffer) Write(offset int64, src []byte) error {
	if b.data == nil {
		return fmt.Errorf("vk: write to an unmapped device buffer (copy through staging)")
	}
	if offset < 0 || offset+int64(len(src)) > b.size {
		return fmt.Errorf("vk: write of %d bytes at %d overflows a %d-byte buffer", len(src), offset, b.size)
	}
	CopyHost(b.data[offset:], src)
	return nil
}

// copyChunk is how much CopyHost copies between preemption points: a
// few hundred microseconds of memmove and page faults.
const copyChunk = 4 << 20

// CopyHost copies src into dst on the host, as copy does, yielding
// between chunks. The runtime's memmove cannot be preempted, and a loop
// of copies has no call whose prologue would take a pending preemption
// (the signals land in memmove): a result of 600 MB copied in one call
// held the collector's stack scan for the whole copy, its mark workers
// spinning on signals meanwhile (a quarter of the process's CPU in perf;
// mark phases of 380-460 ms under `vkjit bench --include-transfers`).
func CopyHost(dst, src []byte) int {
	n := min(len(dst), len(src))
	for i := 0; i < n; i += copyChunk {
		if i > 0 {
			runtime.Gosched()
		}
		copy(dst[i:n], src[i:min(i+copyChunk, n)])
	}
	return n
}

// Destroy frees the buffer and its memory (nothing for a view).
func (b *Buffer) Destroy() {
	if b.parent != nil || b.buf == vk.NullBuffer {
		return
	}
	if b.data != nil {
		vk.UnmapMemory(b.dev.dev, b.mem)
		b.data = nil
	}
	vk.DestroyBuffer(b.dev.dev, b.buf, nil)
	vk.FreeMemory(b.dev.dev, b.mem, nil)
	b.buf = vk.NullBuffer
}

// descriptor is how a storage-buffer descriptor names b.
func (b *Buffer) descriptor() vk.DescriptorBufferInfo {
	if b.parent == nil {
		return vk.DescriptorBufferInfo{Buffer: b.buf, Range: vk.DeviceSize(vk.WholeSize)}
	}
	return vk.DescriptorBufferInfo{Buffer: b.buf, Offset: vk.DeviceSize(b.offset), Range: vk.DeviceSize(b.span)}
}

// spareTexel is a buffer of one texel of every size, for texel views of
// bindings smaller than a texel (created at first use, destroyed with
// the device).
func (d *Device) spareTexel() (*Buffer, error) {
	d.spareMu.Lock()
	defer d.spareMu.Unlock()
	if d.spare == nil {
		prefs, mapped := d.mappedTypes(), true
		if d.Staged() {
			prefs, mapped = deviceTypes, false
		}
		b, err := d.newBuffer(16, prefs, mapped)
		if err != nil {
			return nil, err
		}
		d.spare = b
	}
	return d.spare, nil
}

// texelFormats are the formats of texel buffer views by texel bytes:
// unsigned integers, so that fetches return the bits as they are.
var texelFormats = map[int]vk.Format{
	1: vk.FormatR8Uint, 2: vk.FormatR16Uint, 4: vk.FormatR32Uint,
	8: vk.FormatR32g32Uint, 16: vk.FormatR32g32b32a32Uint,
}

// texelView creates a uniform texel buffer view of b's bytes as texels
// of bytes bytes (texelFormats; Kernel.Texel): its whole texels, which
// are the elements a runtime array of such elements over the same bytes
// has, up to maxTexelBufferElements of them (an array past
// maxStorageBufferRange that kernels read through views has no more
// elements than that: lower/kgen's Target.MaxTexelElements; its padding
// may take the span past it). The caller destroys it.
func (b *Buffer) texelView(bytes int) (vk.BufferView, error) {
	format, ok := texelFormats[bytes]
	if !ok {
		return vk.NullBufferView, fmt.Errorf("vk: no texel format of %d bytes", bytes)
	}
	size := b.span &^ int64(bytes-1)
	if most := int64(b.dev.Info.MaxTexelBufferElements) * int64(bytes); most > 0 {
		size = min(size, most)
	}
	if size == 0 {
		return vk.NullBufferView, fmt.Errorf("vk: a texel view of %d bytes holds no %d-byte texel", b.span, bytes)
	}
	bvci := &vk.BufferViewCreateInfo{
		SType:  vk.StructureTypeBufferViewCreateInfo,
		Buffer: b.buf,
		Format: format,
		Offset: vk.DeviceSize(b.offset),
		Range:  vk.DeviceSize(size),
	}
	var view vk.BufferView
	if err := check("vkCreateBufferView", vk.CreateBufferView(b.dev.dev, bvci, nil, &view)); err != nil {
		return vk.NullBufferView, err
	}
	return view, nil
}

// Address is the device address of b's first byte, for kernels that
// reach b that way (lower/kgen Kernel.Addressed); 0 where the device has
// no buffer device addresses.
func (b *Buffer) Address() uint64 {
	owner := b
	if b.parent != nil {
		owner = b.parent
	}
	a := owner.addr.Load()
	if a == 0 {
		if a = b.dev.bufferAddress(b.buf); a == 0 {
			return 0
		}
		owner.addr.Store(a)
	}
	return a + uint64(b.offset)
}

// handle is the VkBuffer b's bytes are in, and where they start in it.
func (b *Buffer) handle() (vk.Buffer, int64) { return b.buf, b.offset }

// Identity names the memory a buffer (or view) binds: the VkBuffer, the
// offset and the size. Equal identities bind the same bytes.
func (b *Buffer) Identity() [3]uint64 {
	return [3]uint64{uint64(uintptr(unsafe.Pointer(b.buf))), uint64(b.offset), uint64(b.span)}
}

// wordsFor is the bytes a buffer of size bytes takes: Vulkan forbids
// empty buffers, so a zero-element tensor gets a word, and every buffer
// is whole 32-bit words (lower.PaddedSize plans the same).
func wordsFor(size int64) int64 { return (max(size, 4) + 3) &^ 3 }
