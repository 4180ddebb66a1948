// Package pool suballocates device memory: buffers are ranges of a few
// large blocks, so that a run's arena, its parameters and the constants of
// every executable cost a constant-time range allocation instead of a
// vkAllocateMemory each.
//
// The layers, top to bottom:
//
//	Pool    budget (VK_EXT_memory_budget or the heap size, times a
//	        fraction), statistics, out-of-memory after trim and retry
//	block   one VkDeviceMemory with one VkBuffer over it, mapped once;
//	        grown on demand; a request over half the block size gets a
//	        block of its own size (a dedicated allocation)
//	Ranges  TLSF over a block's bytes: O(1) allocate and free
//
// A buffer the pool returns is a view of its block's VkBuffer (offset and
// range in the descriptor), aligned to the device's
// minStorageBufferOffsetAlignment and nonCoherentAtomSize.
//
// Memory is host-visible, device-local where the device's main heap is
// (CPU devices such as lavapipe, integrated GPUs), so uploads and
// downloads are plain copies into the mapping. On a device that stages
// (vk.Staging: a discrete GPU without resizable BAR) blocks are unmapped
// device memory, and Upload, Download and Copy go through a staging ring
// of host memory (staging.go) on the transfer queue.
package pool

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/vkjit/vkjit/vk"
)

// ErrOutOfMemory is returned, wrapped, when a request does not fit in the
// budget or the device refuses memory, after empty blocks were given
// back and the request retried.
var ErrOutOfMemory = errors.New("pool: out of device memory")

// Config sets a pool's size policy; zero fields take the defaults. (The
// environment's settings are resolved by vkjit.Open, not here.)
type Config struct {
	// BlockBytes is the size of the blocks buffers are carved from
	// (default 64 MiB, at most the device's maxStorageBufferRange).
	BlockBytes int64
	// Fraction of the memory budget the pool may reserve (default 0.9):
	// the budget is VK_EXT_memory_budget's heap budget where the device
	// has it, else the heap's size.
	Fraction float64
	// LimitBytes, when positive, is the budget itself, in bytes;
	// Fraction is then ignored.
	LimitBytes int64
	// Preallocate reserves the whole limit at once, as one block per
	// BlockBytes, when the pool opens, so that later runs never allocate
	// device memory.
	Preallocate bool
	// StagingBytes is the staging ring's size on a device that stages
	// (default DefaultStagingBytes, at least 4096).
	StagingBytes int64
}

// DefaultBlockBytes is the default block size.
const DefaultBlockBytes = 64 << 20

// Stats describe a pool at one moment.
type Stats struct {
	ReservedBytes    int64   // device memory held in blocks
	InUseBytes       int64   // allocated to buffers, rounded to the granule
	PeakInUseBytes   int64   // the most ever in use at once
	LimitBytes       int64   // the budget the pool keeps under
	LargestFreeBytes int64   // the largest request that fits without a new block
	Fragmentation    float64 // 1 - (each block's largest free range, summed) / free bytes: 0 when every block's free space is one range
	Blocks           int
	Allocations      int
	BudgetFromDevice bool // the limit came from VK_EXT_memory_budget
}

// Pool suballocates host-visible storage buffers from blocks of device
// memory. It is safe for concurrent use.
type Pool struct {
	dev     *vk.Device
	cfg     Config
	granule int64
	limit   int64
	fromExt bool

	smu  sync.Mutex // the staging ring's
	ring *ring      // made on first staged transfer

	mu       sync.Mutex
	blocks   []*block
	where    map[*vk.Buffer]*block
	reserved int64
	inUse    int64
	peak     int64
}

type block struct {
	buf    *vk.Buffer
	ranges *Ranges
}

// New makes a pool on dev with cfg.
func New(dev *vk.Device, cfg Config) (*Pool, error) {
	if cfg.Fraction < 0 || cfg.Fraction > 1 {
		return nil, fmt.Errorf("pool: memory fraction %g is not in (0, 1]", cfg.Fraction)
	}
	if cfg.StagingBytes == 0 {
		cfg.StagingBytes = DefaultStagingBytes
	}
	if cfg.StagingBytes < 4096 {
		return nil, fmt.Errorf("pool: a staging ring of %d bytes is under 4096", cfg.StagingBytes)
	}
	info := dev.Info
	if cfg.BlockBytes <= 0 {
		cfg.BlockBytes = DefaultBlockBytes
	}
	if r := int64(info.MaxStorageBufferRange); r > 0 && cfg.BlockBytes > r {
		cfg.BlockBytes = r
	}
	if cfg.Fraction <= 0 {
		cfg.Fraction = 0.9
	}
	// The granule is every alignment a view needs: descriptor offsets
	// (minStorageBufferOffsetAlignment) and flushes of non-coherent
	// memory (nonCoherentAtomSize), and at least 64 bytes (a cache line).
	g := uint64(64)
	for _, a := range []uint64{info.MinStorageBufferOffsetAlign, info.NonCoherentAtomSize} {
		g = max(g, a)
	}
	if g&(g-1) != 0 {
		g = 1 << bits.Len64(g)
	}
	p := &Pool{dev: dev, cfg: cfg, granule: int64(g), where: map[*vk.Buffer]*block{}}
	p.limit, p.fromExt = p.budget()
	if cfg.Preallocate {
		for p.reserved+cfg.BlockBytes <= p.limit {
			if _, err := p.grow(cfg.BlockBytes); err != nil {
				break // the device gave less than its budget: keep what it gave
			}
		}
	}
	return p, nil
}

// budget is the most the pool may reserve, and whether the device's
// VK_EXT_memory_budget said so.
func (p *Pool) budget() (int64, bool) {
	if p.cfg.LimitBytes > 0 {
		return p.cfg.LimitBytes, false
	}
	heap := p.dev.StorageHeap()
	if hs, ok := p.dev.MemoryBudget(); ok && heap < len(hs) && hs[heap].Budget > 0 {
		// The budget counts what this process already uses.
		return int64(float64(hs[heap].Budget) * p.cfg.Fraction), true
	}
	var size uint64
	if heap < len(p.dev.Info.Heaps) {
		size = p.dev.Info.Heaps[heap].Size
	}
	return int64(float64(size) * p.cfg.Fraction), false
}

// refused is the error of an allocation the device refused: ErrOutOfMemory
// when it was out of memory, else err as it is.
func refused(err error, what string) error {
	if errors.Is(err, vk.ErrOutOfDeviceMemory) || errors.Is(err, vk.ErrOutOfHostMemory) {
		return fmt.Errorf("%w: the device refused %s: %v", ErrOutOfMemory, what, err)
	}
	return err
}

// Granule is the alignment and rounding unit of every allocation.
func (p *Pool) Granule() int64 { return p.granule }

// Alloc returns a buffer of size bytes. When no block has room and the
// budget allows no new one, empty blocks are given back and the request
// retried before ErrOutOfMemory.
func (p *Pool) Alloc(size int64) (*vk.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("pool: negative size %d", size)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	buf, err := p.alloc(size)
	if err == nil || !errors.Is(err, ErrOutOfMemory) {
		return buf, err
	}
	if p.trim() == 0 {
		return nil, err
	}
	return p.alloc(size)
}

func (p *Pool) alloc(size int64) (*vk.Buffer, error) {
	for _, b := range p.blocks {
		if buf, ok := p.carve(b, size); ok {
			return buf, nil
		}
	}
	need := p.round(size)
	bsize := p.cfg.BlockBytes
	if need > bsize/2 {
		bsize = need // a dedicated block
	}
	if p.reserved+need > p.limit {
		return nil, fmt.Errorf("%w: %d bytes requested, %d of the %d-byte limit reserved (%d in use)", ErrOutOfMemory, size, p.reserved, p.limit, p.inUse)
	}
	if p.reserved+bsize > p.limit {
		bsize = need // what is left of the budget still fits this request
	}
	b, err := p.grow(bsize)
	if err != nil {
		return nil, err
	}
	buf, ok := p.carve(b, size)
	if !ok {
		return nil, fmt.Errorf("pool: a new %d-byte block does not hold %d bytes", bsize, size)
	}
	return buf, nil
}

// BlockBytesFor is the size of the block that a new allocation of size
// bytes is carved from: the pool's block size, or its own (rounded) size
// past half of it. Lavapipe specializes a kernel's code on the size of
// the buffers bound to it, so warming (the root package) binds views of
// blocks of these sizes.
func (p *Pool) BlockBytesFor(size int64) int64 {
	if need := p.round(size); need > p.cfg.BlockBytes/2 {
		return need
	}
	return p.cfg.BlockBytes
}

func (p *Pool) round(size int64) int64 {
	return max((size+p.granule-1)/p.granule, 1) * p.granule
}

// grow adds a block of size bytes: unmapped device memory on a device
// that stages, else mapped memory.
func (p *Pool) grow(size int64) (*block, error) {
	newBuffer := p.dev.NewBuffer
	if p.dev.Staged() {
		newBuffer = p.dev.NewDeviceBuffer
	}
	buf, err := newBuffer(size)
	if err != nil {
		return nil, refused(err, fmt.Sprintf("a %d-byte block (%d reserved)", size, p.reserved))
	}
	b := &block{buf: buf, ranges: NewRanges(size, p.granule)}
	p.blocks = append(p.blocks, b)
	p.reserved += size
	return b, nil
}

func (p *Pool) carve(b *block, size int64) (*vk.Buffer, bool) {
	off, ok := b.ranges.Alloc(size)
	if !ok {
		return nil, false
	}
	v, err := b.buf.Carve(off, size)
	if err != nil {
		b.ranges.Free(off)
		return nil, false
	}
	p.where[v] = b
	p.inUse += p.round(size)
	p.peak = max(p.peak, p.inUse)
	return v, true
}

// Free gives a buffer from Alloc back. Freeing anything else is an error.
// A copy into it still in flight is waited for first, so that the next
// owner of its bytes never sees them change.
func (p *Pool) Free(buf *vk.Buffer) error {
	if err := p.dev.Wait(buf.Ready()); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.where[buf]
	if b == nil {
		return fmt.Errorf("pool: freeing a buffer the pool did not allocate (or freed already)")
	}
	delete(p.where, buf)
	off := buf.Identity()[1] - b.buf.Identity()[1]
	b.ranges.Free(int64(off))
	p.inUse -= p.round(buf.Size())
	return nil
}

// Trim gives empty blocks back to the device and returns the bytes
// released.
func (p *Pool) Trim() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trim()
}

func (p *Pool) trim() int64 {
	var freed int64
	keep := p.blocks[:0]
	for _, b := range p.blocks {
		if b.ranges.Allocations() == 0 && !p.cfg.Preallocate {
			freed += b.ranges.Size()
			b.buf.Destroy()
			continue
		}
		keep = append(keep, b)
	}
	clear(p.blocks[len(keep):])
	p.blocks = keep
	p.reserved -= freed
	return freed
}

// Stats describes the pool now.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{ReservedBytes: p.reserved, InUseBytes: p.inUse, PeakInUseBytes: p.peak, LimitBytes: p.limit, Blocks: len(p.blocks), Allocations: len(p.where), BudgetFromDevice: p.fromExt}
	var free, largest int64
	for _, b := range p.blocks {
		l := b.ranges.LargestFree()
		s.LargestFreeBytes = max(s.LargestFreeBytes, l)
		largest += l
		free += b.ranges.Size() - b.ranges.InUse()
	}
	if free > 0 {
		s.Fragmentation = 1 - float64(largest)/float64(free)
	}
	return s
}

// Check verifies every block's invariants and the pool's counters.
func (p *Pool) Check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var reserved, inUse int64
	n := 0
	for _, b := range p.blocks {
		if err := b.ranges.Check(); err != nil {
			return err
		}
		reserved += b.ranges.Size()
		inUse += b.ranges.InUse()
		n += b.ranges.Allocations()
	}
	if reserved != p.reserved || inUse != p.inUse || n != len(p.where) {
		return fmt.Errorf("pool: counters say %d reserved, %d in use, %d buffers; blocks hold %d, %d, %d", p.reserved, p.inUse, len(p.where), reserved, inUse, n)
	}
	return nil
}

// Close gives every block back. Buffers from the pool become invalid.
func (p *Pool) Close() {
	p.dev.WaitIdle() // copies may still read or write the blocks
	p.smu.Lock()
	if p.ring != nil {
		p.ring.buf.Destroy()
		p.ring = nil
	}
	p.smu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.blocks {
		b.buf.Destroy()
	}
	p.blocks, p.where, p.reserved, p.inUse = nil, map[*vk.Buffer]*block{}, 0, 0
}
