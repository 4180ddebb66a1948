package vk

/*
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The instance-level calls that fill or read arrays of structures,
// through a shim of ours, for calls.go's reason: the bindings hand such
// arrays to the driver in C memory that a finalizer frees at the next
// garbage collection after the conversion returns, possibly during the
// call. The driver writing extension and queue family lists into freed
// memory corrupted the heap when warming opened devices while other
// goroutines allocated: glibc's "malloc(): unsorted double linked list
// corrupted" in a `vkjit test --validate` run over the StableHLO suite and
// in a clean clone's make test, and in 1 of 5 runs of
// TestOpenDevicesUnderGC (0 of 10 since). Layouts follow vulkan_core.h
// (LP64).

typedef void* (*vkjit_gipa_i)(void* instance, const char* name);
typedef int32_t (*vkjit_enum_fn)(void* pd, const char* layer, uint32_t* count, void* props);
typedef int32_t (*vkjit_enum_layers_fn)(uint32_t* count, void* props);
typedef void (*vkjit_queue_props_fn)(void* pd, uint32_t* count, void* props);
typedef int32_t (*vkjit_create_device_fn)(void* pd, const void* info, const void* alloc, void** device);

typedef int32_t (*vkjit_create_instance_fn)(const void* info, const void* alloc, void** instance);

typedef struct {
	uint32_t sType; const void* pNext; const char* pApplicationName; uint32_t applicationVersion;
	const char* pEngineName; uint32_t engineVersion, apiVersion;
} vkjit_app_info;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags; const vkjit_app_info* pApplicationInfo;
	uint32_t enabledLayerCount; const char* const* ppEnabledLayerNames;
	uint32_t enabledExtensionCount; const char* const* ppEnabledExtensionNames;
} vkjit_instance_info;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags, queueFamilyIndex, queueCount; const float* pQueuePriorities;
} vkjit_queue_info;
typedef struct {
	uint32_t sType; const void* pNext; uint32_t flags, queueCreateInfoCount; const vkjit_queue_info* pQueueCreateInfos;
	uint32_t enabledLayerCount; const char* const* ppEnabledLayerNames;
	uint32_t enabledExtensionCount; const char* const* ppEnabledExtensionNames;
	const uint32_t* pEnabledFeatures;
} vkjit_device_info;

// vkjit_instance_proc is vkGetInstanceProcAddr(instance, name), or 0;
// the one lookup of the package's shims (budget.go, calls.go, props2.go
// and timeline.go declare it).
void* vkjit_instance_proc(void* instance, const char* name) {
	void* lib = dlopen("libvulkan.so.1", RTLD_LAZY);
	if (!lib) return 0;
	vkjit_gipa_i gipa = (vkjit_gipa_i)dlsym(lib, "vkGetInstanceProcAddr");
	dlclose(lib); // the loader stays resident: vkinit opened it first
	return gipa ? gipa(instance, name) : 0;
}

typedef struct {
	uint32_t sType; const void* pNext; uint32_t enabledValidationFeatureCount; const uint32_t* pEnabledValidationFeatures;
	uint32_t disabledValidationFeatureCount; const uint32_t* pDisabledValidationFeatures;
} vkjit_validation_features;

// vkjit_create_instance calls vkCreateInstance for API version api, with
// the layer and the extension named (each may be 0). With the layer
// (the validation layer) it turns on the layer's synchronization
// validation too (VK_EXT_validation_features): a missing barrier
// between dispatches shows on lavapipe, which runs one dispatch after
// another, only there; on a GPU the dispatches overlap.
static int32_t vkjit_create_instance(uint32_t api, const char* layer, const char* ext, void** instance) {
	vkjit_create_instance_fn f = (vkjit_create_instance_fn)vkjit_instance_proc(0, "vkCreateInstance");
	if (!f) return -3; // VK_ERROR_INITIALIZATION_FAILED
	vkjit_app_info app;
	memset(&app, 0, sizeof app);
	app.sType = 0; // VK_STRUCTURE_TYPE_APPLICATION_INFO
	app.pApplicationName = "vkjit";
	app.pEngineName = "vkjit";
	app.apiVersion = api;
	vkjit_instance_info info;
	memset(&info, 0, sizeof info);
	info.sType = 1; // VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
	info.pApplicationInfo = &app;
	info.enabledLayerCount = layer ? 1 : 0;
	info.ppEnabledLayerNames = &layer;
	const char* exts[2] = {ext, "VK_EXT_validation_features"};
	info.enabledExtensionCount = ext ? 1 : 0;
	info.ppEnabledExtensionNames = exts;
	uint32_t sync = 4; // VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
	vkjit_validation_features features;
	memset(&features, 0, sizeof features);
	if (layer) {
		features.sType = 1000247000; // VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT
		features.enabledValidationFeatureCount = 1;
		features.pEnabledValidationFeatures = &sync;
		info.pNext = &features;
		info.enabledExtensionCount = 2;
	}
	return f(&info, 0, instance);
}

// vkjit_names returns the names of pd's device extensions (instance: the
// loader's layers, when pd is 0), each in a record of size bytes with the
// name first (VkExtensionProperties: 260, VkLayerProperties: 520), in
// memory the caller frees; *count is their number; 0 on failure.
static char* vkjit_names(void* instance, void* pd, uint32_t size, uint32_t* count) {
	uint32_t n = 0;
	vkjit_enum_fn ext = 0;
	vkjit_enum_layers_fn layers = 0;
	if (pd) {
		ext = (vkjit_enum_fn)vkjit_instance_proc(instance, "vkEnumerateDeviceExtensionProperties");
		if (!ext || ext(pd, 0, &n, 0) != 0) return 0;
	} else {
		layers = (vkjit_enum_layers_fn)vkjit_instance_proc(0, "vkEnumerateInstanceLayerProperties");
		if (!layers || layers(&n, 0) != 0) return 0;
	}
	if (n == 0) return 0;
	char* recs = calloc(n, size);
	if (!recs) return 0;
	int32_t rc = pd ? ext(pd, 0, &n, recs) : layers(&n, recs);
	if (rc != 0 && rc != 5) { // VK_INCOMPLETE: the list grew; keep what came
		free(recs);
		return 0;
	}
	*count = n;
	return recs;
}

// vkjit_queue_flags writes the queueFlags of pd's first (at most) max
// queue families to flags and returns how many there are.
static uint32_t vkjit_queue_flags(void* instance, void* pd, uint32_t* flags, uint32_t max) {
	vkjit_queue_props_fn f = (vkjit_queue_props_fn)vkjit_instance_proc(instance, "vkGetPhysicalDeviceQueueFamilyProperties");
	if (!f) return 0;
	uint32_t n = 0;
	f(pd, &n, 0);
	if (n == 0) return 0;
	// VkQueueFamilyProperties: queueFlags, queueCount, timestampValidBits,
	// minImageTransferGranularity (3 uint32): 24 bytes.
	uint32_t* props = calloc(n, 24);
	if (!props) return 0;
	f(pd, &n, props);
	for (uint32_t i = 0; i < n && i < max; i++) flags[i] = props[i * 6];
	free(props);
	return n;
}

// vkjit_create_device calls vkCreateDevice for one queue of each of
// families (priority 1), the extensions exts, the pNext chain next, and
// of VkPhysicalDeviceFeatures shaderFloat64, shaderInt64 and shaderInt16
// (its VkBool32s 39, 40 and 41) as given.
static int32_t vkjit_create_device(void* instance, void* pd, uint32_t nq, const uint32_t* families,
		uint32_t next, const char* const* exts, const void* chain, uint32_t f64, uint32_t i64, uint32_t i16, void** device) {
	vkjit_create_device_fn f = (vkjit_create_device_fn)vkjit_instance_proc(instance, "vkCreateDevice");
	if (!f || nq > 2) return -3; // VK_ERROR_INITIALIZATION_FAILED
	float one = 1.0f;
	vkjit_queue_info q[2];
	memset(q, 0, sizeof q);
	for (uint32_t i = 0; i < nq; i++) {
		q[i].sType = 2; // VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
		q[i].queueFamilyIndex = families[i];
		q[i].queueCount = 1;
		q[i].pQueuePriorities = &one;
	}
	uint32_t features[55];
	memset(features, 0, sizeof features);
	features[39] = f64;
	features[40] = i64;
	features[41] = i16;
	vkjit_device_info info;
	memset(&info, 0, sizeof info);
	info.sType = 3; // VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
	info.pNext = chain;
	info.queueCreateInfoCount = nq;
	info.pQueueCreateInfos = q;
	info.enabledExtensionCount = next;
	info.ppEnabledExtensionNames = exts;
	info.pEnabledFeatures = features;
	return f(pd, &info, 0, device);
}
*/
import "C"

import (
	"unsafe"

	vk "github.com/goki/vulkan"
)

// createInstance calls vkCreateInstance (vkjit_create_instance) for API
// version api, with the layer and extension named ("": none).
func createInstance(api uint32, layer, ext string) (vk.Instance, vk.Result) {
	cstr := func(s string) *C.char {
		if s == "" {
			return nil
		}
		return C.CString(s)
	}
	cl, ce := cstr(layer), cstr(ext)
	defer C.free(unsafe.Pointer(cl))
	defer C.free(unsafe.Pointer(ce))
	var inst unsafe.Pointer
	rc := C.vkjit_create_instance(C.uint32_t(api), cl, ce, &inst)
	return *(*vk.Instance)(unsafe.Pointer(&inst)), vk.Result(rc)
}

// names lists pd's device extensions, or with pd nil the instance layers.
func names(in *Instance, pd vk.PhysicalDevice) map[string]bool {
	size := C.uint32_t(260) // VkExtensionProperties
	var inst unsafe.Pointer
	if pd == nil {
		size = 520 // VkLayerProperties
	} else {
		inst = unsafe.Pointer(in.inst)
	}
	var n C.uint32_t
	recs := C.vkjit_names(inst, unsafe.Pointer(pd), size, &n)
	if recs == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(recs))
	out := map[string]bool{}
	for i := 0; i < int(n); i++ {
		out[C.GoString((*C.char)(unsafe.Add(unsafe.Pointer(recs), i*int(size))))] = true
	}
	return out
}

// queueFlags lists the queueFlags of pd's queue families.
func queueFlags(in *Instance, pd vk.PhysicalDevice) []vk.QueueFlags {
	var flags [64]C.uint32_t
	n := C.vkjit_queue_flags(unsafe.Pointer(in.inst), unsafe.Pointer(pd), &flags[0], 64)
	out := make([]vk.QueueFlags, min(int(n), len(flags)))
	for i := range out {
		out[i] = vk.QueueFlags(flags[i])
	}
	return out
}

// createDevice calls vkCreateDevice (vkjit_create_device) with the
// queue families (one queue each), extensions, pNext chain and features.
// The arrays are Go memory holding no Go pointers, which cgo lets the
// call read while it runs.
func createDevice(in *Instance, pd vk.PhysicalDevice, families []uint32, exts []string, chain unsafe.Pointer, f64, i64, i16 bool) (vk.Device, vk.Result) {
	cexts := make([]*C.char, len(exts)+1) // one more: &cexts[0] with none
	for i, e := range exts {
		cexts[i] = C.CString(e)
		defer C.free(unsafe.Pointer(cexts[i]))
	}
	b := func(x bool) C.uint32_t {
		if x {
			return 1
		}
		return 0
	}
	var dev unsafe.Pointer
	rc := C.vkjit_create_device(unsafe.Pointer(in.inst), unsafe.Pointer(pd), C.uint32_t(len(families)), (*C.uint32_t)(unsafe.Pointer(&families[0])),
		C.uint32_t(len(exts)), &cexts[0], chain, b(f64), b(i64), b(i16), &dev)
	return *(*vk.Device)(unsafe.Pointer(&dev)), vk.Result(rc)
}
