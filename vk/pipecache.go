package vk

// #include <stdlib.h>
import "C"

import (
	"encoding/binary"
	"fmt"

	vk "github.com/goki/vulkan"
)

// The driver's pipeline cache (VkPipelineCache) turns SPIR-V into
// machine code once per device and driver; its data is saved between
// processes (see the root package) and reloaded only when its header
// names this device: vendorID, deviceID and pipelineCacheUUID, checked
// here, and driverVersion, which the saved file records beside it.

// pipelineCacheHeader is VkPipelineCacheHeaderVersionOne's size.
const pipelineCacheHeader = 32

// checkPipelineCacheData reports why data is not a pipeline cache of this
// device, or nil.
func (d *Device) checkPipelineCacheData(data []byte) error {
	if len(data) < pipelineCacheHeader {
		return fmt.Errorf("vk: pipeline cache data of %d bytes is shorter than its header", len(data))
	}
	le := binary.LittleEndian
	size, version := le.Uint32(data[0:]), le.Uint32(data[4:])
	vendor, device := le.Uint32(data[8:]), le.Uint32(data[12:])
	var uuid [16]byte
	copy(uuid[:], data[16:32])
	switch {
	case size < pipelineCacheHeader || int(size) > len(data):
		return fmt.Errorf("vk: pipeline cache header size %d is wrong", size)
	case version != 1: // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
		return fmt.Errorf("vk: pipeline cache header version %d is not 1", version)
	case vendor != d.Info.VendorID || device != d.Info.DeviceID:
		return fmt.Errorf("vk: pipeline cache is for device %04x:%04x, not %04x:%04x", vendor, device, d.Info.VendorID, d.Info.DeviceID)
	case uuid != d.Info.PipelineCacheUUID:
		return fmt.Errorf("vk: pipeline cache UUID %x is not the device's %x", uuid, d.Info.PipelineCacheUUID)
	}
	return nil
}

// UsePipelineCache gives the device a VkPipelineCache for the pipelines
// it creates from now on, started from data when data (saved from
// PipelineCacheData, possibly by another process) passes the header
// checks. A rejected data set still gets an empty cache; the error says
// why the data was not used.
func (d *Device) UsePipelineCache(data []byte) error {
	var reject error
	if data != nil {
		if reject = d.checkPipelineCacheData(data); reject != nil {
			data = nil
		}
	}
	ci := &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo}
	if len(data) > 0 {
		p := C.CBytes(data) // the driver reads it during the call only
		defer C.free(p)
		ci.InitialDataSize, ci.PInitialData = uint64(len(data)), p
	}
	var pc vk.PipelineCache
	if err := check("vkCreatePipelineCache", vk.CreatePipelineCache(d.dev, ci, nil, &pc)); err != nil {
		return err
	}
	if d.pipelineCache != vk.NullPipelineCache {
		vk.DestroyPipelineCache(d.dev, d.pipelineCache, nil)
	}
	d.pipelineCache = pc
	return reject
}

// PipelineCacheData returns the pipeline cache's contents, for saving;
// nil when the device has no pipeline cache.
func (d *Device) PipelineCacheData() ([]byte, error) {
	if d.pipelineCache == vk.NullPipelineCache {
		return nil, nil
	}
	var n uint64
	if err := check("vkGetPipelineCacheData", vk.GetPipelineCacheData(d.dev, d.pipelineCache, &n, nil)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	p := C.malloc(C.size_t(n))
	defer C.free(p)
	if err := check("vkGetPipelineCacheData", vk.GetPipelineCacheData(d.dev, d.pipelineCache, &n, p)); err != nil {
		return nil, err
	}
	return C.GoBytes(p, C.int(n)), nil
}
