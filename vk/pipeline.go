package vk

import (
	"fmt"

	vk "github.com/goki/vulkan"
)

// Kernel is a compute pipeline made from one SPIR-V module: its storage
// buffer bindings are 0..Bindings-1 of descriptor set 0, then a uniform
// texel buffer per entry of Texel (binding Bindings+i views the buffer
// at storage binding Texel[i].Binding), and it takes PushSize bytes of
// push constants.
type Kernel struct {
	dev      *Device
	module   vk.ShaderModule
	setLay   vk.DescriptorSetLayout
	layout   vk.PipelineLayout
	pipeline vk.Pipeline
	Bindings int
	PushSize uint32
	Name     string
	Texel    []TexelView
	// Addressed lists the bindings the kernel reaches through their
	// buffers' device addresses (ByAddress): a dispatch pushes its own
	// PushSize-8*len(Addressed) bytes, and Record appends each one's
	// address.
	Addressed []int
}

// ByAddress says that the kernel reaches these bindings through the
// device addresses of the buffers bound there, which the last
// 8*len(bindings) bytes of its push constants hold, in this order.
func (k *Kernel) ByAddress(bindings []int) error {
	if len(bindings) == 0 {
		return nil
	}
	if !k.dev.Info.BufferAddress {
		return fmt.Errorf("vk: kernel %s reaches buffers by device address, which %s does not have (bufferDeviceAddress)", k.Name, k.dev.Info.Name)
	}
	if int(k.PushSize) < 8*len(bindings) {
		return fmt.Errorf("vk: kernel %s pushes %d bytes, too few for %d addresses", k.Name, k.PushSize, len(bindings))
	}
	for _, b := range bindings {
		if b < 0 || b >= k.Bindings {
			return fmt.Errorf("vk: kernel %s has no binding %d to reach by address", k.Name, b)
		}
	}
	k.Addressed = bindings
	return nil
}

// TexelView is a kernel's uniform texel buffer binding: a view of the
// buffer at storage binding Binding in texels of Bytes bytes (1, 2, 4, 8
// or 16: R8, R16, R32, R32G32 or R32G32B32A32_UINT).
type TexelView struct{ Binding, Bytes int }

// NewKernel creates a compute pipeline from SPIR-V words with entry point
// "main".
func (d *Device) NewKernel(name string, words []uint32, bindings int, pushSize uint32, texel ...TexelView) (*Kernel, error) {
	if pushSize > d.Info.MaxPushConstantsSize {
		return nil, fmt.Errorf("vk: kernel %s needs %d bytes of push constants, device allows %d", name, pushSize, d.Info.MaxPushConstantsSize)
	}
	if uint32(bindings) > d.Info.MaxPerStageStorageBuffers {
		return nil, fmt.Errorf("vk: kernel %s binds %d storage buffers, device allows %d", name, bindings, d.Info.MaxPerStageStorageBuffers)
	}
	if uint32(len(texel)) > d.Info.MaxPerStageSampledImages {
		return nil, fmt.Errorf("vk: kernel %s binds %d texel buffers, device allows %d", name, len(texel), d.Info.MaxPerStageSampledImages)
	}
	k := &Kernel{dev: d, Bindings: bindings, PushSize: pushSize, Name: name, Texel: texel}
	var err error
	if k.module, err = d.shaderModule(words); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	if k.setLay, err = d.setLayout(bindings, len(k.Texel)); err != nil {
		k.Destroy()
		return nil, err
	}
	if k.layout, err = d.pipelineLayout(k.setLay, pushSize); err != nil {
		k.Destroy()
		return nil, err
	}
	if k.pipeline, err = d.computePipeline(k.module, k.layout); err != nil {
		k.Destroy()
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	return k, nil
}

// Destroy releases the pipeline and its layouts.
func (k *Kernel) Destroy() {
	d := k.dev.dev
	if k.pipeline != vk.NullPipeline {
		vk.DestroyPipeline(d, k.pipeline, nil)
		k.pipeline = vk.NullPipeline
	}
	if k.layout != vk.NullPipelineLayout {
		vk.DestroyPipelineLayout(d, k.layout, nil)
		k.layout = vk.NullPipelineLayout
	}
	if k.setLay != vk.NullDescriptorSetLayout {
		vk.DestroyDescriptorSetLayout(d, k.setLay, nil)
		k.setLay = vk.NullDescriptorSetLayout
	}
	if k.module != vk.NullShaderModule {
		vk.DestroyShaderModule(d, k.module, nil)
		k.module = vk.NullShaderModule
	}
}
