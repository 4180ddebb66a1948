package vk

import (
	"fmt"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Buffer is a storage buffer with its own host-visible memory, mapped for
// the buffer's lifetime. (The pool package suballocates; this is the
// primitive it builds on.)
type Buffer struct {
	dev    *Device
	buf    vk.Buffer
	mem    vk.DeviceMemory
	size   int64 // bytes the caller asked for
	data   []byte
	offset int64   // a view: where it starts in parent
	parent *Buffer // a view's buffer; nil for a buffer that owns its memory
	from   *Buffer // the buffer View was called on
	alloc  bool    // an allocation of its own (Carve): Root stops here
}

// View returns size bytes of b from offset as a buffer of their own, for
// binding to a kernel: offset must be a multiple of the device's
// minStorageBufferOffsetAlignment. A view owns nothing; it is valid while
// b is.
func (b *Buffer) View(offset, size int64) (*Buffer, error) {
	alloc := (max(size, 4) + 3) &^ 3
	if offset < 0 || offset+alloc > int64(len(b.data)) {
		return nil, fmt.Errorf("vk: view of %d bytes at %d is outside a %d-byte buffer", size, offset, len(b.data))
	}
	owner := b
	if b.parent != nil {
		owner = b.parent
	}
	return &Buffer{dev: b.dev, buf: b.buf, size: size, data: b.data[offset : offset+alloc], offset: b.offset + offset, parent: owner, from: b}, nil
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

// storageTypes are the memory properties storage buffers are made in,
// best first: device-local and host-visible (integrated GPUs, CPU devices
// such as lavapipe), then any host-visible coherent memory.
var storageTypes = []func(MemoryType) bool{
	func(t MemoryType) bool { return t.DeviceLocal && t.HostVisible && t.HostCoherent },
	func(t MemoryType) bool { return t.HostVisible && t.HostCoherent },
}

// storageType is the memory type, among those bits allows, that
// NewBuffer uses.
func (d *Device) storageType(bits uint32) (uint32, bool) {
	for _, want := range storageTypes {
		if idx, ok := d.memoryType(bits, want); ok {
			return idx, true
		}
	}
	return 0, false
}

// StorageHeap is the memory heap NewBuffer's memory comes from (the one a
// memory budget applies to).
func (d *Device) StorageHeap() int {
	if idx, ok := d.storageType(^uint32(0)); ok {
		return d.Info.MemoryTypes[idx].Heap
	}
	return 0
}

// NewBuffer creates a host-visible storage buffer of size bytes, in
// device-local memory when the device has host-visible device-local
// memory (integrated GPUs, CPU devices such as lavapipe).
func (d *Device) NewBuffer(size int64) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("vk: negative buffer size %d", size)
	}
	alloc := size
	if alloc < 4 {
		alloc = 4 // Vulkan forbids empty buffers; zero-element tensors get a word
	}
	alloc = (alloc + 3) &^ 3
	b := &Buffer{dev: d, size: size}
	bci := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(alloc),
		Usage:       vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	var buf vk.Buffer
	if err := check("vkCreateBuffer", vk.CreateBuffer(d.dev, bci, nil, &buf)); err != nil {
		return nil, err
	}
	b.buf = buf
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, b.buf, &req)
	req.Deref()
	idx, ok := d.storageType(req.MemoryTypeBits)
	if !ok {
		vk.DestroyBuffer(d.dev, b.buf, nil)
		return nil, fmt.Errorf("vk: %s has no host-visible coherent memory for storage buffers", d.Info.Name)
	}
	mai := &vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: idx,
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
	var p unsafe.Pointer
	if err := check("vkMapMemory", vk.MapMemory(d.dev, b.mem, 0, vk.DeviceSize(vk.WholeSize), 0, &p)); err != nil {
		b.Destroy()
		return nil, err
	}
	b.data = unsafe.Slice((*byte)(p), alloc)
	return b, nil
}

// Size is the buffer's size in bytes as requested.
func (b *Buffer) Size() int64 { return b.size }

// Bytes is the mapped contents. Read it only when no submitted work
// writes the buffer.
func (b *Buffer) Bytes() []byte { return b.data[:b.size] }

// Write copies src into the buffer at offset.
func (b *Buffer) Write(offset int64, src []byte) error {
	if offset < 0 || offset+int64(len(src)) > b.size {
		return fmt.Errorf("vk: write of %d bytes at %d overflows a %d-byte buffer", len(src), offset, b.size)
	}
	copy(b.data[offset:], src)
	return nil
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
	return vk.DescriptorBufferInfo{Buffer: b.buf, Offset: vk.DeviceSize(b.offset), Range: vk.DeviceSize(len(b.data))}
}

// Identity names the memory a buffer (or view) binds: the VkBuffer, the
// offset and the size. Equal identities bind the same bytes.
func (b *Buffer) Identity() [3]uint64 {
	return [3]uint64{uint64(uintptr(unsafe.Pointer(b.buf))), uint64(b.offset), uint64(len(b.data))}
}
