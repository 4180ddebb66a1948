package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Dispatch is one kernel launch: buffers bound to bindings 0..n-1, push
// constant bytes, and the workgroup grid.
type Dispatch struct {
	Kernel  *Kernel
	Buffers []*Buffer
	Push    []byte
	Groups  [3]uint32
	// AfterWrites puts a memory barrier before this dispatch so that it
	// sees what earlier dispatches of the list wrote.
	AfterWrites bool
}

// CommandList is a recorded command buffer with its descriptor sets,
// replayable: record once, Submit many times.
type CommandList struct {
	dev     *Device
	cmdPool vk.CommandPool // its own: recording into a pool needs external synchronization
	pool    vk.DescriptorPool
	views   []vk.BufferView
	cmd     vk.CommandBuffer
	fence   vk.Fence
	mu      sync.Mutex   // a command buffer may be pending only once at a time
	Length  int          // dispatches recorded
	queries vk.QueryPool // profiled lists: a timestamp before the first dispatch and after each
}

// Record builds a command list from dispatches. A final barrier makes the
// shaders' writes visible to the host once Submit returns.
func (d *Device) Record(ds []Dispatch) (*CommandList, error) {
	return d.record(ds, false)
}

// RecordProfiled is Record with a timestamp around every dispatch and a
// barrier between every two, so that Timings can tell each one's time.
func (d *Device) RecordProfiled(ds []Dispatch) (*CommandList, error) {
	if !d.Info.Timestamps {
		return nil, fmt.Errorf("vk: %s cannot write timestamps from compute queues", d.Info.Name)
	}
	return d.record(ds, true)
}

func (d *Device) record(ds []Dispatch, profile bool) (*CommandList, error) {
	cl := &CommandList{dev: d, Length: len(ds)}
	nbuf := 0
	for i, x := range ds {
		if len(x.Buffers) != x.Kernel.Bindings {
			return nil, fmt.Errorf("vk: dispatch %d of %s binds %d buffers, kernel has %d bindings", i, x.Kernel.Name, len(x.Buffers), x.Kernel.Bindings)
		}
		if want := x.Kernel.PushSize - 8*uint32(len(x.Kernel.Addressed)); uint32(len(x.Push)) != want {
			return nil, fmt.Errorf("vk: dispatch %d of %s pushes %d bytes, kernel takes %d", i, x.Kernel.Name, len(x.Push), want)
		}
		for a := 0; a < 3; a++ {
			if x.Groups[a] > d.Info.MaxComputeWorkGroupCount[a] {
				return nil, fmt.Errorf("vk: dispatch %d of %s: %d workgroups in dimension %d exceeds the device's %d", i, x.Kernel.Name, x.Groups[a], a, d.Info.MaxComputeWorkGroupCount[a])
			}
		}
		nbuf += len(x.Buffers)
	}
	if err := cl.allocate(len(ds), nbuf); err != nil {
		cl.Destroy()
		return nil, err
	}
	sets := make([]vk.DescriptorSet, len(ds))
	push := make([][]byte, len(ds))
	for i, x := range ds {
		push[i] = x.Push
		if len(x.Kernel.Addressed) > 0 {
			push[i] = append([]byte(nil), x.Push...)
			for _, b := range x.Kernel.Addressed {
				a := x.Buffers[b].Address()
				if a == 0 {
					cl.Destroy()
					return nil, fmt.Errorf("vk: dispatch %d of %s: binding %d has no device address", i, x.Kernel.Name, b)
				}
				push[i] = binary.LittleEndian.AppendUint64(push[i], a)
			}
		}
		dsai := &vk.DescriptorSetAllocateInfo{
			SType:              vk.StructureTypeDescriptorSetAllocateInfo,
			DescriptorPool:     cl.pool,
			DescriptorSetCount: 1,
			PSetLayouts:        []vk.DescriptorSetLayout{x.Kernel.setLay},
		}
		var set vk.DescriptorSet
		err := check("vkAllocateDescriptorSets", vk.AllocateDescriptorSets(d.dev, dsai, &set))
		// The bindings' C copy of dsai points at its layouts' Go array:
		// keep it from a collection until the call is over.
		runtime.KeepAlive(dsai)
		sets[i] = set
		if err != nil {
			cl.Destroy()
			return nil, err
		}
		if len(x.Buffers) == 0 {
			continue
		}
		bufs := make([]uint64, 0, 3*len(x.Buffers))
		for j, b := range x.Buffers {
			bi := b.descriptor()
			if slices.Contains(x.Kernel.Addressed, j) {
				// The kernel reads its address, not the descriptor; the
				// descriptor stays valid, within the device's range.
				bi.Range = vk.DeviceSize(min(b.span, int64(d.Info.MaxStorageBufferRange)))
			}
			bufs = append(bufs, handle(bi.Buffer), uint64(bi.Offset), uint64(bi.Range))
		}
		var views []uint64
		for _, tv := range x.Kernel.Texel {
			b := x.Buffers[tv.Binding]
			if b.span < int64(tv.Bytes) {
				// Smaller than one texel: the binding holds no element the
				// kernel can read (a zero-element tensor's word), and a
				// view must hold one; the device's spare texel stands in.
				if b, err = d.spareTexel(); err != nil {
					cl.Destroy()
					return nil, err
				}
			}
			view, err := b.texelView(tv.Bytes)
			if err != nil {
				cl.Destroy()
				return nil, fmt.Errorf("dispatch %d of %s: %w", i, x.Kernel.Name, err)
			}
			cl.views = append(cl.views, view)
			views = append(views, handle(view))
		}
		d.updateDescriptors(sets[i], bufs, views)
	}
	if profile {
		qpci := &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: uint32(len(ds) + 1)}
		var qp vk.QueryPool
		if err := check("vkCreateQueryPool", vk.CreateQueryPool(d.dev, qpci, nil, &qp)); err != nil {
			cl.Destroy()
			return nil, err
		}
		cl.queries = qp
	}
	begin := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo}
	if err := check("vkBeginCommandBuffer", vk.BeginCommandBuffer(cl.cmd, begin)); err != nil {
		cl.Destroy()
		return nil, err
	}
	shader := vk.PipelineStageFlags(vk.PipelineStageComputeShaderBit)
	if profile {
		vk.CmdResetQueryPool(cl.cmd, cl.queries, 0, uint32(len(ds)+1))
		vk.CmdWriteTimestamp(cl.cmd, vk.PipelineStageComputeShaderBit, cl.queries, 0)
	}
	for i, x := range ds {
		if (x.AfterWrites || profile) && i > 0 {
			d.barrier(cl.cmd, shader, shader, vk.AccessShaderWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit)
		}
		vk.CmdBindPipeline(cl.cmd, vk.PipelineBindPointCompute, x.Kernel.pipeline)
		vk.CmdBindDescriptorSets(cl.cmd, vk.PipelineBindPointCompute, x.Kernel.layout, 0, 1, sets[i:i+1], 0, nil)
		if p := push[i]; len(p) > 0 {
			vk.CmdPushConstants(cl.cmd, x.Kernel.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, uint32(len(p)), unsafe.Pointer(&p[0]))
		}
		vk.CmdDispatch(cl.cmd, x.Groups[0], x.Groups[1], x.Groups[2])
		if profile {
			vk.CmdWriteTimestamp(cl.cmd, vk.PipelineStageComputeShaderBit, cl.queries, uint32(i+1))
		}
	}
	if len(ds) > 0 {
		d.barrier(cl.cmd, shader, vk.PipelineStageFlags(vk.PipelineStageHostBit), vk.AccessShaderWriteBit, vk.AccessHostReadBit)
	}
	if err := check("vkEndCommandBuffer", vk.EndCommandBuffer(cl.cmd)); err != nil {
		cl.Destroy()
		return nil, err
	}
	return cl, nil
}

// commandBuffer allocates a primary command buffer from pool.
func (d *Device) commandBuffer(pool vk.CommandPool) (vk.CommandBuffer, error) {
	cbs := make([]vk.CommandBuffer, 1)
	cbai := &vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	err := check("vkAllocateCommandBuffers", vk.AllocateCommandBuffers(d.dev, cbai, cbs))
	return cbs[0], err
}

func (cl *CommandList) allocate(nsets, nbuf int) error {
	d := cl.dev
	if nsets > 0 {
		pool, err := d.descriptorPool(nsets, max(nbuf, 1), max(nbuf, 1))
		if err != nil {
			return err
		}
		cl.pool = pool
	}
	pci := &vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		QueueFamilyIndex: d.family,
	}
	var cp vk.CommandPool
	if err := check("vkCreateCommandPool", vk.CreateCommandPool(d.dev, pci, nil, &cp)); err != nil {
		return err
	}
	cl.cmdPool = cp
	var err error
	if cl.cmd, err = d.commandBuffer(cp); err != nil {
		return err
	}
	fci := &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}
	var fence vk.Fence
	err = check("vkCreateFence", vk.CreateFence(d.dev, fci, nil, &fence))
	cl.fence = fence
	return err
}

// Submit runs the recorded commands and waits for them to finish. On a
// device that stages, they first wait for the copies of ticket after (the
// latest Ready ticket of the buffers they bind: see ReadyAll), and signal
// the compute timeline that later downloads wait for.
func (cl *CommandList) Submit(after Ticket) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	d := cl.dev
	if err := check("vkResetFences", vk.ResetFences(d.dev, 1, []vk.Fence{cl.fence})); err != nil {
		return err
	}
	var err error
	d.queueMu.Lock()
	if x := d.xfer; x != nil {
		c := x.compIssued.Load() + 1
		err = x.tl.submit(d.queue, cl.cmd, x.xfer, uint64(after), vk.PipelineStageComputeShaderBit, x.comp, c, cl.fence)
		if err == nil {
			x.compIssued.Store(c)
		}
	} else {
		err = d.queueSubmit(cl.cmd, cl.fence)
	}
	d.queueMu.Unlock()
	if err != nil {
		return err
	}
	return check("vkWaitForFences", vk.WaitForFences(d.dev, 1, []vk.Fence{cl.fence}, vk.True, math.MaxUint64))
}

// Timings returns each dispatch's time in the last Submit of a list from
// RecordProfiled.
func (cl *CommandList) Timings() ([]time.Duration, error) {
	if cl.queries == vk.NullQueryPool {
		return nil, fmt.Errorf("vk: the command list was not recorded with timestamps")
	}
	ts := make([]uint64, cl.Length+1)
	flags := vk.QueryResultFlags(vk.QueryResult64Bit | vk.QueryResultWaitBit)
	if err := check("vkGetQueryPoolResults", vk.GetQueryPoolResults(cl.dev.dev, cl.queries, 0, uint32(len(ts)), uint64(8*len(ts)), unsafe.Pointer(&ts[0]), 8, flags)); err != nil {
		return nil, err
	}
	out := make([]time.Duration, cl.Length)
	for i := range out {
		out[i] = time.Duration(float64(ts[i+1]-ts[i]) * float64(cl.dev.Info.TimestampPeriod))
	}
	return out, nil
}

// Destroy frees the command buffer, descriptor sets and fence.
func (cl *CommandList) Destroy() {
	d := cl.dev
	for _, v := range cl.views {
		vk.DestroyBufferView(d.dev, v, nil)
	}
	cl.views = nil
	if cl.queries != vk.NullQueryPool {
		vk.DestroyQueryPool(d.dev, cl.queries, nil)
		cl.queries = vk.NullQueryPool
	}
	if cl.fence != vk.NullFence {
		vk.DestroyFence(d.dev, cl.fence, nil)
		cl.fence = vk.NullFence
	}
	if cl.cmdPool != vk.NullCommandPool {
		vk.DestroyCommandPool(d.dev, cl.cmdPool, nil) // frees its command buffer
		cl.cmdPool = vk.NullCommandPool
		cl.cmd = nil
	}
	if cl.pool != vk.NullDescriptorPool {
		vk.DestroyDescriptorPool(d.dev, cl.pool, nil)
		cl.pool = vk.NullDescriptorPool
	}
}
