package vk

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Timeline semaphores (Vulkan 1.2 core) through a shim: the bindings have
// the structures but not vkWaitSemaphores or vkGetSemaphoreCounterValue,
// and a pNext chain must live in C memory. Layouts follow vulkan_core.h
// on LP64: sType (4 bytes), then pNext at offset 8; handles are 8 bytes.

typedef void* (*vkjit_gdpa)(void* device, const char* name);
typedef void (*vkjit_features2_fn)(void* physicalDevice, void* features2);
typedef int32_t (*vkjit_create_sem_fn)(void* device, const void* info, const void* alloc, void** sem);
typedef void (*vkjit_destroy_sem_fn)(void* device, void* sem, const void* alloc);
typedef int32_t (*vkjit_submit_fn)(void* queue, uint32_t n, const void* submits, void* fence);
typedef int32_t (*vkjit_wait_sems_fn)(void* device, const void* info, uint64_t timeout);
typedef int32_t (*vkjit_counter_fn)(void* device, void* sem, uint64_t* value);

typedef struct {
	vkjit_create_sem_fn create;
	vkjit_destroy_sem_fn destroy;
	vkjit_submit_fn submit;
	vkjit_wait_sems_fn wait;
	vkjit_counter_fn counter;
} vkjit_timeline_fns;

// vkjit_instance_proc is vkGetInstanceProcAddr(instance, name), or 0
// (instcalls.go).
void* vkjit_instance_proc(void* instance, const char* name);

// vkjit_chained_bool calls fn (vkGetPhysicalDeviceFeatures2 or
// vkGetPhysicalDeviceProperties2) with a root structure of rootSType
// chained to one of sType, and reads the VkBool32 at offset in the
// latter (both layouts: sType, then pNext at offset 8).
static int vkjit_chained_bool(void* instance, void* physicalDevice, const char* fn, uint32_t rootSType, uint32_t sType, uint32_t offset) {
	if (offset + 4 > 256) return 0;
	vkjit_features2_fn f = (vkjit_features2_fn)vkjit_instance_proc(instance, fn);
	if (!f) return 0;
	unsigned char chained[256];
	memset(chained, 0, sizeof chained);
	*(uint32_t*)chained = sType;
	// The root: VkPhysicalDeviceFeatures2 (55 VkBool32s) or
	// VkPhysicalDeviceProperties2 (under 1 KiB).
	unsigned char* root = calloc(1, 2048);
	if (!root) return 0;
	*(uint32_t*)root = rootSType;
	*(void**)(root + 8) = chained;
	f(physicalDevice, root);
	free(root);
	return *(uint32_t*)(chained + offset) != 0;
}

// vkjit_feature reports the first VkBool32 (offset 16) of the feature
// structure with sType: every one vkjit asks about has its feature there.
static int vkjit_feature(void* instance, void* physicalDevice, uint32_t sType) {
	return vkjit_chained_bool(instance, physicalDevice, "vkGetPhysicalDeviceFeatures2", 1000059000, sType, 16);
}

// vkjit_property_bool reads the VkBool32 at offset in the property
// structure with sType.
static int vkjit_property_bool(void* instance, void* physicalDevice, uint32_t sType, uint32_t offset) {
	return vkjit_chained_bool(instance, physicalDevice, "vkGetPhysicalDeviceProperties2", 1000059001, sType, offset);
}

// vkjit_feature_link is a pNext link for vkCreateDevice that enables the
// first VkBool32 of the feature structure with sType, chained to next;
// the caller frees it.
static void* vkjit_feature_link(uint32_t sType, void* next) {
	unsigned char* p = calloc(1, 64);
	if (!p) return 0;
	*(uint32_t*)p = sType;
	*(void**)(p + 8) = next;
	*(uint32_t*)(p + 16) = 1;
	return p;
}

static int vkjit_timeline_load(void* instance, void* device, vkjit_timeline_fns* out) {
	vkjit_gdpa gdpa = (vkjit_gdpa)vkjit_instance_proc(instance, "vkGetDeviceProcAddr");
	if (!gdpa) return -2;
	out->create = (vkjit_create_sem_fn)gdpa(device, "vkCreateSemaphore");
	out->destroy = (vkjit_destroy_sem_fn)gdpa(device, "vkDestroySemaphore");
	out->submit = (vkjit_submit_fn)gdpa(device, "vkQueueSubmit");
	out->wait = (vkjit_wait_sems_fn)gdpa(device, "vkWaitSemaphores");
	out->counter = (vkjit_counter_fn)gdpa(device, "vkGetSemaphoreCounterValue");
	if (!out->create || !out->destroy || !out->submit || !out->wait || !out->counter) return -3;
	return 0;
}

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t semaphoreType;
	uint64_t initialValue;
} vkjit_sem_type_info;

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
} vkjit_sem_info;

static int32_t vkjit_timeline_create(vkjit_timeline_fns* fns, void* device, void** sem) {
	vkjit_sem_type_info ti;
	memset(&ti, 0, sizeof ti);
	ti.sType = 1000207002; // VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO
	ti.semaphoreType = 1;  // VK_SEMAPHORE_TYPE_TIMELINE
	vkjit_sem_info si;
	memset(&si, 0, sizeof si);
	si.sType = 9; // VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO
	si.pNext = &ti;
	return fns->create(device, &si, 0, sem);
}

static void vkjit_timeline_destroy(vkjit_timeline_fns* fns, void* device, void* sem) {
	fns->destroy(device, sem, 0);
}

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t waitSemaphoreValueCount;
	const uint64_t* pWaitSemaphoreValues;
	uint32_t signalSemaphoreValueCount;
	const uint64_t* pSignalSemaphoreValues;
} vkjit_timeline_submit_info;

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t waitSemaphoreCount;
	void* const* pWaitSemaphores;
	const uint32_t* pWaitDstStageMask;
	uint32_t commandBufferCount;
	void* const* pCommandBuffers;
	uint32_t signalSemaphoreCount;
	void* const* pSignalSemaphores;
} vkjit_submit_info;

// vkjit_timeline_submit submits one command buffer that waits, at
// waitStage, until waitSem reaches waitValue (no wait when waitSem is
// null), and then signals signalSem with signalValue, and the fence.
static int32_t vkjit_timeline_submit(vkjit_timeline_fns* fns, void* queue, void* cmd,
		void* waitSem, uint64_t waitValue, uint32_t waitStage,
		void* signalSem, uint64_t signalValue, void* fence) {
	vkjit_timeline_submit_info ts;
	memset(&ts, 0, sizeof ts);
	ts.sType = 1000207003; // VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO
	ts.waitSemaphoreValueCount = waitSem ? 1 : 0;
	ts.pWaitSemaphoreValues = &waitValue;
	ts.signalSemaphoreValueCount = 1;
	ts.pSignalSemaphoreValues = &signalValue;
	vkjit_submit_info si;
	memset(&si, 0, sizeof si);
	si.sType = 4; // VK_STRUCTURE_TYPE_SUBMIT_INFO
	si.pNext = &ts;
	si.waitSemaphoreCount = waitSem ? 1 : 0;
	si.pWaitSemaphores = &waitSem;
	si.pWaitDstStageMask = &waitStage;
	si.commandBufferCount = 1;
	si.pCommandBuffers = &cmd;
	si.signalSemaphoreCount = 1;
	si.pSignalSemaphores = &signalSem;
	return fns->submit(queue, 1, &si, fence);
}

typedef struct {
	uint32_t sType;
	const void* pNext;
	uint32_t flags;
	uint32_t semaphoreCount;
	void* const* pSemaphores;
	const uint64_t* pValues;
} vkjit_sem_wait_info;

static int32_t vkjit_timeline_wait(vkjit_timeline_fns* fns, void* device, void* sem, uint64_t value, uint64_t timeout) {
	vkjit_sem_wait_info wi;
	memset(&wi, 0, sizeof wi);
	wi.sType = 1000207004; // VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO
	wi.semaphoreCount = 1;
	wi.pSemaphores = &sem;
	wi.pValues = &value;
	return fns->wait(device, &wi, timeout);
}

static int32_t vkjit_timeline_value(vkjit_timeline_fns* fns, void* device, void* sem, uint64_t* value) {
	return fns->counter(device, sem, value);
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Feature structures vkjit enables (their sType; the feature is the
// structure's first VkBool32).
const (
	featTimeline      = 1000207000 // VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore
	feat16Storage     = 1000083000 // VkPhysicalDevice16BitStorageFeatures.storageBuffer16BitAccess
	feat8Storage      = 1000177000 // VkPhysicalDevice8BitStorageFeatures.storageBuffer8BitAccess
	featBufferAddress = 1000257000 // VkPhysicalDeviceBufferDeviceAddressFeatures.bufferDeviceAddress
)

// VkPhysicalDeviceFloatControlsProperties (Vulkan 1.2) and the offsets of
// the properties vkjit needs.
const (
	propFloatControls     = 1000197000
	offSignedZeroInfNan32 = 28 // shaderSignedZeroInfNanPreserveFloat32
	offSignedZeroInfNan64 = 32 // shaderSignedZeroInfNanPreserveFloat64
	offDenormPreserve32   = 40 // shaderDenormPreserveFloat32
	offDenormPreserve64   = 44 // shaderDenormPreserveFloat64
)

// hasProperty reads a VkBool32 of a property structure (by sType) at
// byte offset.
func hasProperty(in *Instance, pd vk.PhysicalDevice, sType, offset uint32) bool {
	return C.vkjit_property_bool(unsafe.Pointer(in.inst), unsafe.Pointer(pd), C.uint32_t(sType), C.uint32_t(offset)) != 0
}

// hasFeature asks vkGetPhysicalDeviceFeatures2 (Vulkan 1.1, which
// vkjit's 1.2 instance has) for one of those features.
func hasFeature(in *Instance, pd vk.PhysicalDevice, sType uint32) bool {
	return C.vkjit_feature(unsafe.Pointer(in.inst), unsafe.Pointer(pd), C.uint32_t(sType)) != 0
}

// featureChain is a pNext chain that enables features (by sType) at
// vkCreateDevice; free it after.
type featureChain struct{ links []unsafe.Pointer }

func (c *featureChain) add(sType uint32) error {
	p := C.vkjit_feature_link(C.uint32_t(sType), c.head())
	if p == nil {
		return fmt.Errorf("vk: out of host memory")
	}
	c.links = append(c.links, p)
	return nil
}

// head is the chain's first link (nil when empty).
func (c *featureChain) head() unsafe.Pointer {
	if len(c.links) == 0 {
		return nil
	}
	return c.links[len(c.links)-1]
}

func (c *featureChain) free() {
	for _, p := range c.links {
		C.free(p)
	}
	c.links = nil
}

// timelines is the device's entry points for timeline semaphores.
type timelines struct {
	fns C.vkjit_timeline_fns
	dev unsafe.Pointer
}

func loadTimelines(in *Instance, dev vk.Device) (*timelines, error) {
	t := &timelines{dev: unsafe.Pointer(dev)}
	if rc := C.vkjit_timeline_load(unsafe.Pointer(in.inst), t.dev, &t.fns); rc != 0 {
		return nil, fmt.Errorf("vk: timeline semaphore entry points unavailable (%d)", int(rc))
	}
	return t, nil
}

// semaphore is a timeline semaphore.
type semaphore struct {
	h unsafe.Pointer
}

func (t *timelines) create() (semaphore, error) {
	var h unsafe.Pointer
	if err := check("vkCreateSemaphore", vk.Result(C.vkjit_timeline_create(&t.fns, t.dev, &h))); err != nil {
		return semaphore{}, err
	}
	return semaphore{h}, nil
}

func (t *timelines) destroy(s semaphore) {
	if s.h != nil {
		C.vkjit_timeline_destroy(&t.fns, t.dev, s.h)
	}
}

// submit submits cmd on queue: it waits, at stage, until wait reaches
// waitValue (not at all when waitValue is 0), then signals signal with
// signalValue, and fence (may be null).
func (t *timelines) submit(queue vk.Queue, cmd vk.CommandBuffer, wait semaphore, waitValue uint64, stage vk.PipelineStageFlagBits, signal semaphore, signalValue uint64, fence vk.Fence) error {
	w := wait.h
	if waitValue == 0 {
		w = nil
	}
	f := *(*unsafe.Pointer)(unsafe.Pointer(&fence))
	rc := C.vkjit_timeline_submit(&t.fns, unsafe.Pointer(queue), unsafe.Pointer(cmd), w, C.uint64_t(waitValue), C.uint32_t(stage), signal.h, C.uint64_t(signalValue), f)
	return check("vkQueueSubmit", vk.Result(rc))
}

// wait blocks until s reaches value.
func (t *timelines) wait(s semaphore, value uint64) error {
	return check("vkWaitSemaphores", vk.Result(C.vkjit_timeline_wait(&t.fns, t.dev, s.h, C.uint64_t(value), C.uint64_t(math.MaxUint64))))
}

// value is s's counter now.
func (t *timelines) value(s semaphore) (uint64, error) {
	var v C.uint64_t
	err := check("vkGetSemaphoreCounterValue", vk.Result(C.vkjit_timeline_value(&t.fns, t.dev, s.h, &v)))
	return uint64(v), err
}
