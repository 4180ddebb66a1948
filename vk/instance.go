// Package vk is vkjit's thin layer over Vulkan compute: it loads the
// loader headlessly, lists and chooses devices, and wraps buffers,
// compute pipelines, descriptor sets and command submission. Every
// VkResult becomes a Go error; nothing here knows about HLO.
//
// The goki/vulkan bindings carry Vulkan 1.0 entry points only; the few
// 1.1+ queries vkjit needs (subgroup and driver properties) go through a
// small cgo shim in props2.go that resolves them with
// vkGetInstanceProcAddr.
package vk

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/goki/vgpu/vkinit"
	vk "github.com/goki/vulkan"
)

// ValidationLayer is the Khronos validation layer's name.
const ValidationLayer = "VK_LAYER_KHRONOS_validation"

// InstallHint says which Debian packages bring a Vulkan loader and the
// lavapipe CPU driver.
const InstallHint = "install them with: apt-get install libvulkan1 mesa-vulkan-drivers"

// Instance is a VkInstance, with validation optionally enabled.
type Instance struct {
	inst      vk.Instance
	debug     vk.DebugReportCallback
	validated bool
}

var loadOnce struct {
	sync.Once
	err error
}

// load opens libvulkan.so.1 (vgpu's vkinit, not the bindings' own loader,
// which wants the -dev package's libvulkan.so).
func load() error {
	loadOnce.Do(func() {
		wideLavapipe() // before any driver reads it
		if err := vkinit.LoadVulkan(); err != nil {
			loadOnce.err = fmt.Errorf("%w: cannot open libvulkan.so.1 (%v); %s", ErrNoLoader, strings.TrimSpace(err.Error()), InstallHint)
		}
	})
	return loadOnce.err
}

// instanceMu serializes instance creation: NewDriverInstance names its
// driver to the loader through the process's environment.
var instanceMu sync.Mutex

// NewInstance creates a Vulkan instance. With validate, the Khronos
// validation layer and a debug-report callback are enabled; every message
// the layer reports is recorded (see ValidationMessages).
func NewInstance(validate bool) (*Instance, error) {
	instanceMu.Lock()
	defer instanceMu.Unlock()
	return newInstance(validate)
}

// NewDriverInstance is NewInstance with the loader reading only the
// driver manifest at path (see DriverManifests): it lists only that
// driver's devices.
func NewDriverInstance(validate bool, manifest string) (*Instance, error) {
	instanceMu.Lock()
	defer instanceMu.Unlock()
	// VK_DRIVER_FILES for loaders since 1.3.207, VK_ICD_FILENAMES for
	// older ones; both read at vkCreateInstance, and set only for it.
	for _, v := range DriverEnv[:2] {
		if err := os.Setenv(v, manifest); err != nil {
			return nil, fmt.Errorf("vk: %w", err)
		}
		defer os.Unsetenv(v)
	}
	return newInstance(validate)
}

func newInstance(validate bool) (*Instance, error) {
	if err := load(); err != nil {
		return nil, err
	}
	var layer, ext string
	if validate {
		if !layerPresent(ValidationLayer) {
			return nil, fmt.Errorf("vk: validation requested but %s is not installed; install it with: apt-get install vulkan-validationlayers", ValidationLayer)
		}
		layer, ext = ValidationLayer, "VK_EXT_debug_report"
	}
	// Through instcalls.go: the bindings' conversion of the name lists
	// can be freed by a collection during the call.
	inst, r := createInstance(uint32(vk.MakeVersion(1, 2, 0)), layer, ext)
	if r != vk.Success {
		if r == vk.ErrorIncompatibleDriver {
			return nil, fmt.Errorf("%w: the loader found no Vulkan 1.2 driver; %s", ErrNoDevice, InstallHint)
		}
		return nil, check("vkCreateInstance", r)
	}
	if err := vk.InitInstance(inst); err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, fmt.Errorf("vk: loading instance functions: %w", err)
	}
	in := &Instance{inst: inst, validated: validate}
	if validate {
		cb := &vk.DebugReportCallbackCreateInfo{
			SType:       vk.StructureTypeDebugReportCallbackCreateInfo,
			Flags:       vk.DebugReportFlags(vk.DebugReportErrorBit | vk.DebugReportWarningBit | vk.DebugReportPerformanceWarningBit),
			PfnCallback: debugCallback,
		}
		var dbg vk.DebugReportCallback
		if err := check("vkCreateDebugReportCallbackEXT", vk.CreateDebugReportCallback(inst, cb, nil, &dbg)); err != nil {
			vk.DestroyInstance(inst, nil)
			return nil, err
		}
		in.debug = dbg
	}
	return in, nil
}

// Validated reports whether the validation layer is on.
func (in *Instance) Validated() bool { return in.validated }

// Destroy releases the instance. Devices made from it must be destroyed first.
func (in *Instance) Destroy() {
	if in.inst == nil {
		return
	}
	if in.debug != vk.NullDebugReportCallback {
		vk.DestroyDebugReportCallback(in.inst, in.debug, nil)
	}
	vk.DestroyInstance(in.inst, nil)
	in.inst = nil
}

func layerPresent(name string) bool { return names(nil, nil)[name] }

// The validation layer's messages, process-wide: the bindings route every
// debug-report callback through one Go function.
var validation struct {
	sync.Mutex
	msgs []string
}

func debugCallback(flags vk.DebugReportFlags, objType vk.DebugReportObjectType, object, location uint64, code int32, prefix, msg string, user unsafe.Pointer) vk.Bool32 {
	validation.Lock()
	validation.msgs = append(validation.msgs, fmt.Sprintf("[%s] %s", prefix, msg))
	validation.Unlock()
	return vk.False
}

// ValidationMessages returns the messages the validation layer reported
// since the last call, and forgets them.
func ValidationMessages() []string {
	validation.Lock()
	defer validation.Unlock()
	m := validation.msgs
	validation.msgs = nil
	return m
}
