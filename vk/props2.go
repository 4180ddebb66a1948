package vk

/*
#cgo LDFLAGS: -ldl
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Minimal declarations of the Vulkan 1.1/1.2 structures vkjit reads; the
// layouts follow vulkan_core.h (sType, then pNext at offset 8 on LP64).
// vkjit_instance_proc is vkGetInstanceProcAddr(instance, name), or 0
// (instcalls.go).
void* vkjit_instance_proc(void* instance, const char* name);
typedef void (*vkjit_props2_fn)(void* physicalDevice, void* props2);

typedef struct {
	uint32_t sType;
	void* pNext;
	uint32_t subgroupSize;
	uint32_t supportedStages;
	uint32_t supportedOperations;
	uint32_t quadOperationsInAllStages;
} vkjit_subgroup_props;

typedef struct {
	uint32_t sType;
	void* pNext;
	uint32_t driverID;
	char driverName[256];
	char driverInfo[256];
	uint8_t conformanceVersion[4];
} vkjit_driver_props;

typedef struct {
	uint32_t subgroupSize, subgroupStages, subgroupOps;
	uint32_t driverID;
	char driverName[256];
	char driverInfo[256];
} vkjit_props_out;

static int vkjit_props2(void* instance, void* physicalDevice, vkjit_props_out* out) {
	vkjit_props2_fn f = (vkjit_props2_fn)vkjit_instance_proc(instance, "vkGetPhysicalDeviceProperties2");
	if (!f) return -3;
	vkjit_subgroup_props sg;
	memset(&sg, 0, sizeof sg);
	sg.sType = 1000094000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
	vkjit_driver_props drv;
	memset(&drv, 0, sizeof drv);
	drv.sType = 1000196000; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
	drv.pNext = &sg;
	// VkPhysicalDeviceProperties2 is sType, pNext and VkPhysicalDeviceProperties
	// (under 1 KiB); a zeroed 4 KiB block holds it with room to spare.
	unsigned char* p2 = calloc(1, 4096);
	if (!p2) return -4;
	*(uint32_t*)p2 = 1000059001; // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
	*(void**)(p2 + 8) = &drv;
	f(physicalDevice, p2);
	free(p2);
	out->subgroupSize = sg.subgroupSize;
	out->subgroupStages = sg.supportedStages;
	out->subgroupOps = sg.supportedOperations;
	out->driverID = drv.driverID;
	memcpy(out->driverName, drv.driverName, 256);
	memcpy(out->driverInfo, drv.driverInfo, 256);
	out->driverName[255] = 0;
	out->driverInfo[255] = 0;
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// props2 holds what vkGetPhysicalDeviceProperties2 tells beyond 1.0.
type props2 struct {
	SubgroupSize       uint32
	SubgroupStages     uint32
	SubgroupOperations uint32
	DriverID           uint32
	DriverName         string
	DriverInfo         string
}

func queryProps2(inst vk.Instance, pd vk.PhysicalDevice) (props2, error) {
	var out C.vkjit_props_out
	if rc := C.vkjit_props2(unsafe.Pointer(inst), unsafe.Pointer(pd), &out); rc != 0 {
		return props2{}, fmt.Errorf("vk: vkGetPhysicalDeviceProperties2 unavailable (%d)", int(rc))
	}
	return props2{
		SubgroupSize:       uint32(out.subgroupSize),
		SubgroupStages:     uint32(out.subgroupStages),
		SubgroupOperations: uint32(out.subgroupOps),
		DriverID:           uint32(out.driverID),
		DriverName:         C.GoString(&out.driverName[0]),
		DriverInfo:         C.GoString(&out.driverInfo[0]),
	}, nil
}
