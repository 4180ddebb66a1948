package vk

import (
	"fmt"
	"sync"
	"sync/atomic"

	vk "github.com/goki/vulkan"
)

// Staging says where tensors live when the host cannot see them.
//
// A device whose large device-local heap is host-visible (CPU devices
// such as lavapipe, integrated GPUs, discrete GPUs with resizable BAR)
// keeps every buffer there, and the host reads and writes it through the
// mapping. Otherwise buffers are device-local and unmapped, and uploads
// and downloads are copies through a host-visible staging buffer on the
// transfer queue (a transfer-only queue family where the device has one,
// else the compute queue), ordered with timeline semaphores: a compute
// submit waits for the transfers its buffers depend on, a download waits
// for the computes before it.
type Staging int

const (
	// StagingAuto stages when the device-local heap is not host-visible
	// and the device has timeline semaphores.
	StagingAuto Staging = iota
	// StagingOn stages whenever the device has timeline semaphores (on
	// lavapipe, to test the staged path).
	StagingOn
	// StagingOff keeps every buffer host-visible.
	StagingOff
)

// DeviceOptions configure OpenDevice.
type DeviceOptions struct {
	Staging Staging
}

// Ticket is a point on the transfer timeline: the copies submitted with
// it are done when the transfer semaphore reaches it. Ticket 0 is always
// done.
type Ticket uint64

// transfers is the device's transfer machinery when it stages.
type transfers struct {
	tl     *timelines
	queue  vk.Queue
	family uint32
	mu     *sync.Mutex // the queue's lock: the compute queue's when shared

	xfer, comp             semaphore     // the transfer and compute timelines
	xferIssued, compIssued atomic.Uint64 // the last values submitted to signal

	// Command buffers: recorded per copy, recycled once their ticket is
	// reached (guarded by mu, which also guards the pool).
	cmdPool  vk.CommandPool
	inflight []xferCmd
	spare    []vk.CommandBuffer
}

type xferCmd struct {
	cmd vk.CommandBuffer
	t   Ticket
}

// Staged reports whether the device's buffers are unmapped device-local
// memory that the host reaches through copies (Upload, Download).
func (d *Device) Staged() bool { return d.xfer != nil }

// TransferQueueFamily is the queue family copies run on, and whether it
// is a dedicated transfer family (not the compute queue's).
func (d *Device) TransferQueueFamily() (uint32, bool) {
	if d.xfer == nil {
		return d.family, false
	}
	return d.xfer.family, d.xfer.family != d.family
}

func (d *Device) openTransfers(tl *timelines, family uint32) error {
	x := &transfers{tl: tl, family: family, mu: &d.queueMu}
	if family != d.family {
		x.mu = new(sync.Mutex)
		var q vk.Queue
		vk.GetDeviceQueue(d.dev, family, 0, &q)
		x.queue = q
	} else {
		x.queue = d.queue
	}
	var err error
	if x.xfer, err = tl.create(); err != nil {
		return err
	}
	if x.comp, err = tl.create(); err != nil {
		tl.destroy(x.xfer)
		return err
	}
	pci := &vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		Flags:            vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit | vk.CommandPoolCreateTransientBit),
		QueueFamilyIndex: family,
	}
	var cp vk.CommandPool
	if err := check("vkCreateCommandPool", vk.CreateCommandPool(d.dev, pci, nil, &cp)); err != nil {
		tl.destroy(x.xfer)
		tl.destroy(x.comp)
		return err
	}
	x.cmdPool = cp
	d.xfer = x
	return nil
}

func (d *Device) closeTransfers() {
	x := d.xfer
	if x == nil {
		return
	}
	vk.DestroyCommandPool(d.dev, x.cmdPool, nil)
	x.tl.destroy(x.xfer)
	x.tl.destroy(x.comp)
	d.xfer = nil
}

// Region is one copy: Size bytes from Src at SrcOffset to Dst at
// DstOffset (offsets within the buffers or views given).
type Region struct {
	Src, Dst             *Buffer
	SrcOffset, DstOffset int64
	Size                 int64
}

// Copy submits regions to the transfer queue and returns their ticket
// without waiting. With afterCompute the copies wait for every compute
// submit made before (they read what kernels wrote); uploads from
// staging memory do not. Each destination allocation's Ready ticket is
// raised to the copy's, so that a compute submit that binds it waits for
// it (see CommandList.Submit). A device that does not stage copies with
// the host: mapped memory, done at once.
func (d *Device) Copy(regions []Region, afterCompute bool) (Ticket, error) {
	for _, r := range regions {
		if r.Size < 0 || r.SrcOffset < 0 || r.DstOffset < 0 || r.SrcOffset+r.Size > r.Src.size || r.DstOffset+r.Size > r.Dst.size {
			return 0, fmt.Errorf("vk: copy of %d bytes from %d of a %d-byte buffer to %d of a %d-byte buffer is out of bounds", r.Size, r.SrcOffset, r.Src.size, r.DstOffset, r.Dst.size)
		}
	}
	x := d.xfer
	if x == nil {
		for _, r := range regions {
			if r.Src.data == nil || r.Dst.data == nil {
				return 0, fmt.Errorf("vk: copy between unmapped buffers on a device that does not stage")
			}
			CopyHost(r.Dst.data[r.DstOffset:r.DstOffset+r.Size], r.Src.data[r.SrcOffset:r.SrcOffset+r.Size])
		}
		return 0, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.reclaim(); err != nil {
		return 0, err
	}
	var cmd vk.CommandBuffer
	if n := len(x.spare); n > 0 {
		cmd, x.spare = x.spare[n-1], x.spare[:n-1]
	} else {
		var err error
		if cmd, err = d.commandBuffer(x.cmdPool); err != nil {
			return 0, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			vk.ResetCommandBuffer(cmd, 0)
			x.spare = append(x.spare, cmd)
		}
	}()
	begin := &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo, Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)}
	if err := check("vkBeginCommandBuffer", vk.BeginCommandBuffer(cmd, begin)); err != nil {
		return 0, err
	}
	// Copies on one queue are ordered with the ones submitted before
	// (a buffer freed after a download may be the next upload's target).
	all := vk.PipelineStageFlags(vk.PipelineStageAllCommandsBit)
	xferStage := vk.PipelineStageFlags(vk.PipelineStageTransferBit)
	d.barrier(cmd, all, xferStage, vk.AccessMemoryWriteBit, vk.AccessTransferReadBit|vk.AccessTransferWriteBit)
	for _, r := range regions {
		if r.Size == 0 {
			continue
		}
		src, soff := r.Src.handle()
		dst, doff := r.Dst.handle()
		d.copyBuffer(cmd, src, dst, soff+r.SrcOffset, doff+r.DstOffset, r.Size)
	}
	// What the copies wrote becomes visible to the host (downloads) once
	// the host has waited for the ticket.
	d.barrier(cmd, xferStage, vk.PipelineStageFlags(vk.PipelineStageHostBit), vk.AccessTransferWriteBit, vk.AccessHostReadBit)
	if err := check("vkEndCommandBuffer", vk.EndCommandBuffer(cmd)); err != nil {
		return 0, err
	}
	var waitValue uint64
	if afterCompute {
		waitValue = x.compIssued.Load()
	}
	t := x.xferIssued.Load() + 1
	if err := x.tl.submit(x.queue, cmd, x.comp, waitValue, vk.PipelineStageTransferBit, x.xfer, t, vk.NullFence); err != nil {
		return 0, err
	}
	ok = true
	x.xferIssued.Store(t)
	x.inflight = append(x.inflight, xferCmd{cmd, Ticket(t)})
	for _, r := range regions {
		r.Dst.Root().raiseReady(Ticket(t))
	}
	return Ticket(t), nil
}

// reclaim recycles the command buffers of finished copies (x.mu held).
func (x *transfers) reclaim() error {
	if len(x.inflight) == 0 {
		return nil
	}
	done, err := x.tl.value(x.xfer)
	if err != nil {
		return err
	}
	n := 0
	for _, c := range x.inflight {
		if uint64(c.t) > done {
			break
		}
		vk.ResetCommandBuffer(c.cmd, 0)
		x.spare = append(x.spare, c.cmd)
		n++
	}
	x.inflight = append(x.inflight[:0], x.inflight[n:]...)
	return nil
}

// Wait blocks until the copies of ticket t are done.
func (d *Device) Wait(t Ticket) error {
	if t == 0 || d.xfer == nil {
		return nil
	}
	return d.xfer.tl.wait(d.xfer.xfer, uint64(t))
}

// Done reports whether the copies of ticket t are done.
func (d *Device) Done(t Ticket) (bool, error) {
	if t == 0 || d.xfer == nil {
		return true, nil
	}
	v, err := d.xfer.tl.value(d.xfer.xfer)
	return v >= uint64(t), err
}

// Ready is the ticket of the last copy into b's allocation: a kernel
// that reads b must not start before it.
func (b *Buffer) Ready() Ticket { return Ticket(b.Root().ready.Load()) }

func (b *Buffer) raiseReady(t Ticket) {
	for {
		old := b.ready.Load()
		if old >= uint64(t) || b.ready.CompareAndSwap(old, uint64(t)) {
			return
		}
	}
}

// ReadyAll is the latest Ready ticket among the buffers dispatches bind.
func ReadyAll(ds []Dispatch) Ticket {
	var t Ticket
	for _, d := range ds {
		for _, b := range d.Buffers {
			t = max(t, b.Ready())
		}
	}
	return t
}
