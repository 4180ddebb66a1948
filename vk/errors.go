package vk

import (
	"errors"
	"fmt"

	vk "github.com/goki/vulkan"
)

// Sentinel errors that callers test with errors.Is.
var (
	ErrNoLoader          = errors.New("vk: Vulkan loader not found")
	ErrNoDevice          = errors.New("vk: no Vulkan device")
	ErrOutOfDeviceMemory = errors.New("vk: out of device memory")
	ErrOutOfHostMemory   = errors.New("vk: out of host memory")
	ErrDeviceLost        = errors.New("vk: device lost")
	ErrValidation        = errors.New("vk: validation layer reported a problem")
)

// ResultError is a failed Vulkan call: which call, and the VkResult.
type ResultError struct {
	Call   string
	Result vk.Result
}

func (e *ResultError) Error() string {
	return fmt.Sprintf("%s: %s", e.Call, resultName(e.Result))
}

// Is maps VkResults to the sentinel errors.
func (e *ResultError) Is(target error) bool {
	switch target {
	case ErrOutOfDeviceMemory:
		return e.Result == vk.ErrorOutOfDeviceMemory
	case ErrOutOfHostMemory:
		return e.Result == vk.ErrorOutOfHostMemory
	case ErrDeviceLost:
		return e.Result == vk.ErrorDeviceLost
	}
	return false
}

// check turns a VkResult into nil or a *ResultError naming the call.
func check(call string, r vk.Result) error {
	if r == vk.Success {
		return nil
	}
	return &ResultError{Call: call, Result: r}
}

var resultNames = map[vk.Result]string{
	vk.Success:                    "VK_SUCCESS",
	vk.NotReady:                   "VK_NOT_READY",
	vk.Timeout:                    "VK_TIMEOUT",
	vk.EventSet:                   "VK_EVENT_SET",
	vk.EventReset:                 "VK_EVENT_RESET",
	vk.Incomplete:                 "VK_INCOMPLETE",
	vk.ErrorOutOfHostMemory:       "VK_ERROR_OUT_OF_HOST_MEMORY",
	vk.ErrorOutOfDeviceMemory:     "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	vk.ErrorInitializationFailed:  "VK_ERROR_INITIALIZATION_FAILED",
	vk.ErrorDeviceLost:            "VK_ERROR_DEVICE_LOST",
	vk.ErrorMemoryMapFailed:       "VK_ERROR_MEMORY_MAP_FAILED",
	vk.ErrorLayerNotPresent:       "VK_ERROR_LAYER_NOT_PRESENT",
	vk.ErrorExtensionNotPresent:   "VK_ERROR_EXTENSION_NOT_PRESENT",
	vk.ErrorFeatureNotPresent:     "VK_ERROR_FEATURE_NOT_PRESENT",
	vk.ErrorIncompatibleDriver:    "VK_ERROR_INCOMPATIBLE_DRIVER",
	vk.ErrorTooManyObjects:        "VK_ERROR_TOO_MANY_OBJECTS",
	vk.ErrorFormatNotSupported:    "VK_ERROR_FORMAT_NOT_SUPPORTED",
	vk.ErrorFragmentedPool:        "VK_ERROR_FRAGMENTED_POOL",
	vk.ErrorOutOfPoolMemory:       "VK_ERROR_OUT_OF_POOL_MEMORY",
	vk.ErrorInvalidExternalHandle: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	vk.ErrorFragmentation:         "VK_ERROR_FRAGMENTATION",
	vk.ErrorValidationFailed:      "VK_ERROR_VALIDATION_FAILED_EXT",
	vk.ErrorInvalidShaderNv:       "VK_ERROR_INVALID_SHADER_NV",
}

func resultName(r vk.Result) string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}
