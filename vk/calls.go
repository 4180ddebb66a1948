package vk

/*
#include <stdint.h>
#include <stddef.h>
#include <string.h>

// The calls that take arrays of structures, through a shim of ours. The
// bindings convert such arrays into C memory whose release they tie to a
// finalizer on a variable that is unreachable as soon as the conversion
// returns (c-for-go's unpackArgS / unpackS helpers), so that a garbage
// collection during the call can free the memory the driver is reading:
// vkUpdateDescriptorSets crashed so, now and then, at a small address
// (the fuzzer found it). Here the structures live on the C stack for the
// call. Layouts follow vulkan_core.h (LP64); non-dispatchable handles
// are 8 bytes, passed as uint64_t.

// vkjit_instance_proc is vkGetInstanceProcAddr(instance, name), or 0
// (instcalls.go).
void* vkjit_instance_proc(void* instance, const char* name);
typedef void* (*vkjit_gdpa_c)(void* device, const char* name);

typedef struct { uint64_t buffer, offset, range; } vkjit_buffer_info;
typedef struct {
	uint32_t sType; const void* pNext;
	uint64_t dstSet; uint32_t dstBinding, dstArrayElement, descriptorCount, descriptorType;
	const void* pImageInfo; const vkjit_buffer_info* pBufferInfo; const uint64_t* pTexelBufferView;
} vkjit_write;
typedef struct {
	uint32_t sType; const void* pNext;
	uint32_t waitSemaphoreCount; const void* pWaitSemaphores; const uint32_t* pWaitDstStageMask;
	uint32_t commandBufferCount; void* const* pCommandBuffers;
	uint32_t signalSemaphoreCount; const void* pSignalSemaphores;
} vkjit_submit;
typedef struct { uint32_t sType; const void* pNext; uint32_t srcAccessMask, dstAccessMask; } vkjit_memory_barrier;
typedef struct { uint64_t srcOffset, dstOffset, size; } vkjit_copy;
typedef struct { uint32_t type, count; } vkjit_pool_size;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags, maxSets, poolSizeCount; const vkjit_pool_size* pPoolSizes;
} vkjit_pool_info;
typedef struct { uint32_t binding, descriptorType, descriptorCount, stageFlags; const void* pImmutableSamplers; } vkjit_binding;
typedef struct { uint32_t sType; const void* pNext; uint32_t flags, bindingCount; const vkjit_binding* pBindings; } vkjit_set_layout_info;
typedef struct { uint32_t stageFlags, offset, size; } vkjit_push_range;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags, setLayoutCount; const uint64_t* pSetLayouts;
	uint32_t pushConstantRangeCount; const vkjit_push_range* pPushConstantRanges;
} vkjit_pipeline_layout_info;
typedef struct { uint32_t sType; const void* pNext; uint32_t flags; size_t codeSize; const uint32_t* pCode; } vkjit_module_info;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags, stage; uint64_t module; const char* pName; const void* pSpecializationInfo;
} vkjit_stage_info;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags; vkjit_stage_info stage;
	uint64_t layout, basePipelineHandle; int32_t basePipelineIndex;
} vkjit_compute_info;

typedef void (*vkjit_update_fn)(void*, uint32_t, const vkjit_write*, uint32_t, const void*);
typedef int32_t (*vkjit_queue_submit_fn)(void*, uint32_t, const vkjit_submit*, uint64_t);
typedef void (*vkjit_barrier_fn)(void*, uint32_t, uint32_t, uint32_t, uint32_t, const vkjit_memory_barrier*, uint32_t, const void*, uint32_t, const void*);
typedef void (*vkjit_copy_fn)(void*, uint64_t, uint64_t, uint32_t, const vkjit_copy*);
typedef int32_t (*vkjit_create_fn)(void*, const void*, const void*, uint64_t*);
typedef int32_t (*vkjit_pipelines_fn)(void*, uint64_t, uint32_t, const vkjit_compute_info*, const void*, uint64_t*);
typedef struct { uint32_t sType; const void* pNext; uint64_t buffer; } vkjit_address_info;
typedef uint64_t (*vkjit_address_fn)(void*, const vkjit_address_info*);

// vkjit_address_flags is the VkMemoryAllocateFlagsInfo that lets a
// buffer bound to the memory have a device address
// (VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT), in C memory for pNext.
static const struct { uint32_t sType; const void* pNext; uint32_t flags, deviceMask; } vkjit_address_flags = {1000060000, 0, 2, 0};
static const void* vkjit_address_flags_ptr(void) { return &vkjit_address_flags; }

typedef struct {
	vkjit_update_fn update;
	vkjit_queue_submit_fn submit;
	vkjit_barrier_fn barrier;
	vkjit_copy_fn copy;
	vkjit_create_fn pool, setLayout, pipelineLayout, module;
	vkjit_pipelines_fn pipelines;
	vkjit_address_fn address; // vkGetBufferDeviceAddress (Vulkan 1.2); 0 on older devices
} vkjit_calls;

static int vkjit_calls_load(void* instance, void* device, vkjit_calls* c) {
	vkjit_gdpa_c gdpa = (vkjit_gdpa_c)vkjit_instance_proc(instance, "vkGetDeviceProcAddr");
	if (!gdpa) return -2;
	c->update = (vkjit_update_fn)gdpa(device, "vkUpdateDescriptorSets");
	c->submit = (vkjit_queue_submit_fn)gdpa(device, "vkQueueSubmit");
	c->barrier = (vkjit_barrier_fn)gdpa(device, "vkCmdPipelineBarrier");
	c->copy = (vkjit_copy_fn)gdpa(device, "vkCmdCopyBuffer");
	c->pool = (vkjit_create_fn)gdpa(device, "vkCreateDescriptorPool");
	c->setLayout = (vkjit_create_fn)gdpa(device, "vkCreateDescriptorSetLayout");
	c->pipelineLayout = (vkjit_create_fn)gdpa(device, "vkCreatePipelineLayout");
	c->module = (vkjit_create_fn)gdpa(device, "vkCreateShaderModule");
	c->pipelines = (vkjit_pipelines_fn)gdpa(device, "vkCreateComputePipelines");
	c->address = (vkjit_address_fn)gdpa(device, "vkGetBufferDeviceAddress");
	if (!c->update || !c->submit || !c->barrier || !c->copy || !c->pool || !c->setLayout || !c->pipelineLayout || !c->module || !c->pipelines) return -3;
	return 0;
}

// vkjit_update writes set's descriptors: storage buffers 0..nbuf-1 (each
// buffer, offset, range in bufs) and uniform texel buffer views from
// binding nbuf on.
static void vkjit_update(vkjit_calls* c, void* device, uint64_t set, uint32_t nbuf, const uint64_t* bufs, uint32_t nviews, const uint64_t* views) {
	uint32_t n = nbuf + nviews;
	if (n == 0) return;
	vkjit_buffer_info infos[nbuf > 0 ? nbuf : 1];
	vkjit_write writes[n];
	memset(writes, 0, sizeof writes);
	for (uint32_t i = 0; i < n; i++) {
		writes[i].sType = 35; // VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
		writes[i].dstSet = set;
		writes[i].dstBinding = i;
		writes[i].descriptorCount = 1;
		if (i < nbuf) {
			infos[i].buffer = bufs[3*i]; infos[i].offset = bufs[3*i+1]; infos[i].range = bufs[3*i+2];
			writes[i].descriptorType = 7; // VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
			writes[i].pBufferInfo = &infos[i];
		} else {
			writes[i].descriptorType = 4; // VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
			writes[i].pTexelBufferView = &views[i - nbuf];
		}
	}
	c->update(device, n, writes, 0, 0);
}

static uint64_t vkjit_buffer_address(vkjit_calls* c, void* device, uint64_t buffer) {
	vkjit_address_info info;
	memset(&info, 0, sizeof info);
	info.sType = 1000244001; // VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
	info.buffer = buffer;
	return c->address(device, &info);
}

static int32_t vkjit_submit_one(vkjit_calls* c, void* queue, void* cmd, uint64_t fence) {
	vkjit_submit si;
	memset(&si, 0, sizeof si);
	si.sType = 4; // VK_STRUCTURE_TYPE_SUBMIT_INFO
	si.commandBufferCount = 1;
	si.pCommandBuffers = &cmd;
	return c->submit(queue, 1, &si, fence);
}

static void vkjit_barrier(vkjit_calls* c, void* cmd, uint32_t src, uint32_t dst, uint32_t srcAccess, uint32_t dstAccess) {
	vkjit_memory_barrier mb;
	memset(&mb, 0, sizeof mb);
	mb.sType = 46; // VK_STRUCTURE_TYPE_MEMORY_BARRIER
	mb.srcAccessMask = srcAccess;
	mb.dstAccessMask = dstAccess;
	c->barrier(cmd, src, dst, 0, 1, &mb, 0, 0, 0, 0);
}

static void vkjit_copy_buffer(vkjit_calls* c, void* cmd, uint64_t src, uint64_t dst, uint64_t srcOffset, uint64_t dstOffset, uint64_t size) {
	vkjit_copy r = {srcOffset, dstOffset, size};
	c->copy(cmd, src, dst, 1, &r);
}

static int32_t vkjit_descriptor_pool(vkjit_calls* c, void* device, uint32_t maxSets, uint32_t nstorage, uint32_t ntexel, uint64_t* pool) {
	vkjit_pool_size sizes[2] = {{7, nstorage}, {4, ntexel}};
	vkjit_pool_info pi;
	memset(&pi, 0, sizeof pi);
	pi.sType = 33; // VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
	pi.maxSets = maxSets;
	pi.poolSizeCount = 2;
	pi.pPoolSizes = sizes;
	return c->pool(device, &pi, 0, pool);
}

// vkjit_set_layout makes nstorage storage buffer bindings, then ntexel
// uniform texel buffer bindings, for the compute stage.
static int32_t vkjit_set_layout(vkjit_calls* c, void* device, uint32_t nstorage, uint32_t ntexel, uint64_t* out) {
	uint32_t n = nstorage + ntexel;
	vkjit_binding b[n > 0 ? n : 1];
	memset(b, 0, sizeof b);
	for (uint32_t i = 0; i < n; i++) {
		b[i].binding = i;
		b[i].descriptorType = i < nstorage ? 7 : 4;
		b[i].descriptorCount = 1;
		b[i].stageFlags = 0x20; // VK_SHADER_STAGE_COMPUTE_BIT
	}
	vkjit_set_layout_info li;
	memset(&li, 0, sizeof li);
	li.sType = 32; // VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
	li.bindingCount = n;
	li.pBindings = b;
	return c->setLayout(device, &li, 0, out);
}

static int32_t vkjit_pipeline_layout(vkjit_calls* c, void* device, uint64_t setLayout, uint32_t pushSize, uint64_t* out) {
	vkjit_push_range r = {0x20, 0, pushSize};
	vkjit_pipeline_layout_info li;
	memset(&li, 0, sizeof li);
	li.sType = 30; // VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
	li.setLayoutCount = 1;
	li.pSetLayouts = &setLayout;
	li.pushConstantRangeCount = pushSize > 0 ? 1 : 0;
	li.pPushConstantRanges = &r;
	return c->pipelineLayout(device, &li, 0, out);
}

static int32_t vkjit_shader_module(vkjit_calls* c, void* device, const uint32_t* code, size_t n, uint64_t* out) {
	vkjit_module_info mi;
	memset(&mi, 0, sizeof mi);
	mi.sType = 16; // VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
	mi.codeSize = 4 * n;
	mi.pCode = code;
	return c->module(device, &mi, 0, out);
}

static int32_t vkjit_compute_pipeline(vkjit_calls* c, void* device, uint64_t cache, uint64_t module, uint64_t layout, uint64_t* out) {
	vkjit_compute_info ci;
	memset(&ci, 0, sizeof ci);
	ci.sType = 29; // VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
	ci.stage.sType = 18; // VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
	ci.stage.stage = 0x20;
	ci.stage.module = module;
	ci.stage.pName = "main";
	ci.layout = layout;
	ci.basePipelineIndex = -1;
	return c->pipelines(device, cache, 1, &ci, 0, out);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// calls are the device functions vkjit calls through its own shim.
type calls struct{ fns C.vkjit_calls }

func loadCalls(in *Instance, dev vk.Device) (*calls, error) {
	c := &calls{}
	if rc := C.vkjit_calls_load(unsafe.Pointer(in.inst), unsafe.Pointer(dev), &c.fns); rc != 0 {
		return nil, fmt.Errorf("vk: the loader lacks device functions vkjit calls (%d)", rc)
	}
	return c, nil
}

// handle is a non-dispatchable handle's 64 bits (a pointer on LP64, as
// the bindings declare them).
func handle[T any](h T) uint64 {
	return uint64(*(*uintptr)(unsafe.Pointer(&h)))
}

// fromHandle makes a handle of type T from its 64 bits.
func fromHandle[T any](v C.uint64_t) T {
	p := uintptr(v)
	return *(*T)(unsafe.Pointer(&p))
}

// updateDescriptors points set's storage buffer bindings at bufs (buffer,
// offset, range triples) and its texel buffer bindings at views.
func (d *Device) updateDescriptors(set vk.DescriptorSet, bufs []uint64, views []uint64) {
	var pb, pv *C.uint64_t
	if len(bufs) > 0 {
		pb = (*C.uint64_t)(unsafe.Pointer(&bufs[0]))
	}
	if len(views) > 0 {
		pv = (*C.uint64_t)(unsafe.Pointer(&views[0]))
	}
	C.vkjit_update(&d.calls.fns, unsafe.Pointer(d.dev), C.uint64_t(handle(set)), C.uint32_t(len(bufs)/3), pb, C.uint32_t(len(views)), pv)
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(views)
}

// bufferAddress is buf's device address (vkGetBufferDeviceAddress), or
// 0 where the device has none.
func (d *Device) bufferAddress(buf vk.Buffer) uint64 {
	if d.calls.fns.address == nil || !d.Info.BufferAddress {
		return 0
	}
	return uint64(C.vkjit_buffer_address(&d.calls.fns, unsafe.Pointer(d.dev), C.uint64_t(handle(buf))))
}

// addressFlags is the pNext of a memory allocation for buffers with
// device addresses.
func addressFlags() unsafe.Pointer { return unsafe.Pointer(C.vkjit_address_flags_ptr()) }

func (d *Device) queueSubmit(cmd vk.CommandBuffer, fence vk.Fence) error {
	return check("vkQueueSubmit", vk.Result(C.vkjit_submit_one(&d.calls.fns, unsafe.Pointer(d.queue), unsafe.Pointer(cmd), C.uint64_t(handle(fence)))))
}

// barrier records a global memory barrier.
func (d *Device) barrier(cmd vk.CommandBuffer, src, dst vk.PipelineStageFlags, srcAccess, dstAccess vk.AccessFlagBits) {
	C.vkjit_barrier(&d.calls.fns, unsafe.Pointer(cmd), C.uint32_t(src), C.uint32_t(dst), C.uint32_t(srcAccess), C.uint32_t(dstAccess))
}

func (d *Device) copyBuffer(cmd vk.CommandBuffer, src, dst vk.Buffer, srcOffset, dstOffset, size int64) {
	C.vkjit_copy_buffer(&d.calls.fns, unsafe.Pointer(cmd), C.uint64_t(handle(src)), C.uint64_t(handle(dst)), C.uint64_t(srcOffset), C.uint64_t(dstOffset), C.uint64_t(size))
}

func (d *Device) descriptorPool(maxSets, storage, texel int) (vk.DescriptorPool, error) {
	var p C.uint64_t
	err := check("vkCreateDescriptorPool", vk.Result(C.vkjit_descriptor_pool(&d.calls.fns, unsafe.Pointer(d.dev), C.uint32_t(maxSets), C.uint32_t(storage), C.uint32_t(texel), &p)))
	return fromHandle[vk.DescriptorPool](p), err
}

func (d *Device) setLayout(storage, texel int) (vk.DescriptorSetLayout, error) {
	var l C.uint64_t
	err := check("vkCreateDescriptorSetLayout", vk.Result(C.vkjit_set_layout(&d.calls.fns, unsafe.Pointer(d.dev), C.uint32_t(storage), C.uint32_t(texel), &l)))
	return fromHandle[vk.DescriptorSetLayout](l), err
}

func (d *Device) pipelineLayout(set vk.DescriptorSetLayout, pushSize uint32) (vk.PipelineLayout, error) {
	var l C.uint64_t
	err := check("vkCreatePipelineLayout", vk.Result(C.vkjit_pipeline_layout(&d.calls.fns, unsafe.Pointer(d.dev), C.uint64_t(handle(set)), C.uint32_t(pushSize), &l)))
	return fromHandle[vk.PipelineLayout](l), err
}

func (d *Device) shaderModule(words []uint32) (vk.ShaderModule, error) {
	if len(words) == 0 {
		return vk.NullShaderModule, fmt.Errorf("vk: an empty SPIR-V module")
	}
	var m C.uint64_t
	rc := C.vkjit_shader_module(&d.calls.fns, unsafe.Pointer(d.dev), (*C.uint32_t)(unsafe.Pointer(&words[0])), C.size_t(len(words)), &m)
	runtime.KeepAlive(words)
	return fromHandle[vk.ShaderModule](m), check("vkCreateShaderModule", vk.Result(rc))
}

func (d *Device) computePipeline(module vk.ShaderModule, layout vk.PipelineLayout) (vk.Pipeline, error) {
	var p C.uint64_t
	err := check("vkCreateComputePipelines", vk.Result(C.vkjit_compute_pipeline(&d.calls.fns, unsafe.Pointer(d.dev), C.uint64_t(handle(d.pipelineCache)), C.uint64_t(handle(module)), C.uint64_t(handle(layout)), &p)))
	return fromHandle[vk.Pipeline](p), err
}
