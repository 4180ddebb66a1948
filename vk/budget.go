package vk

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// vkjit_instance_proc is vkGetInstanceProcAddr(instance, name), or 0
// (instcalls.go).
void* vkjit_instance_proc(void* instance, const char* name);
typedef void (*vkjit_memprops2_fn)(void* physicalDevice, void* props2);

// VkPhysicalDeviceMemoryBudgetPropertiesEXT (VK_MAX_MEMORY_HEAPS = 16).
typedef struct {
	uint32_t sType;
	void* pNext;
	uint64_t heapBudget[16];
	uint64_t heapUsage[16];
} vkjit_budget_props;

static int vkjit_budget(void* instance, void* physicalDevice, uint64_t* budget, uint64_t* usage) {
	vkjit_memprops2_fn f = (vkjit_memprops2_fn)vkjit_instance_proc(instance, "vkGetPhysicalDeviceMemoryProperties2");
	if (!f) return -3;
	vkjit_budget_props b;
	memset(&b, 0, sizeof b);
	b.sType = 1000237000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT
	// VkPhysicalDeviceMemoryProperties2: sType, pNext, then the 1.0
	// properties (under 1 KiB).
	unsigned char* p2 = calloc(1, 4096);
	if (!p2) return -4;
	*(uint32_t*)p2 = 1000059006; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2
	*(void**)(p2 + 8) = &b;
	f(physicalDevice, p2);
	free(p2);
	memcpy(budget, b.heapBudget, sizeof b.heapBudget);
	memcpy(usage, b.heapUsage, sizeof b.heapUsage);
	return 0;
}
*/
import "C"

import "unsafe"

// extMemoryBudget is VK_EXT_memory_budget: how much of each heap this
// process may use now, and uses.
const extMemoryBudget = "VK_EXT_memory_budget"

// HeapBudget is what VK_EXT_memory_budget reports for one heap.
type HeapBudget struct {
	Budget, Usage uint64 // bytes
}

// MemoryBudget reports each heap's budget and this process's usage;
// ok is false when the device lacks VK_EXT_memory_budget.
func (d *Device) MemoryBudget() (heaps []HeapBudget, ok bool) {
	if !d.memoryBudget {
		return nil, false
	}
	var budget, usage [16]C.uint64_t
	if C.vkjit_budget(unsafe.Pointer(d.inst.inst), unsafe.Pointer(d.phys), &budget[0], &usage[0]) != 0 {
		return nil, false
	}
	for i := range d.Info.Heaps {
		heaps = append(heaps, HeapBudget{Budget: uint64(budget[i]), Usage: uint64(usage[i])})
	}
	return heaps, true
}
