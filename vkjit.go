// Package vkjit compiles XLA HLO programs to Vulkan compute kernels and
// runs them on any Vulkan device, GPUs and CPUs (Mesa's lavapipe) alike.
//
//	rt, err := vkjit.Open(vkjit.Options{})
//	defer rt.Close()
//	exe, err := rt.CompileFile("graph.hlo", vkjit.CompileOptions{})
//	defer exe.Close()
//	outs, stats, err := exe.Run(x, y)
//
// The data flow is HLO text -> hlo (parse, verify) -> lower (kernels and
// plan) -> spirv (module encoding) -> vk (pipelines, buffers, dispatch).
package vkjit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vkjit/vkjit/cache"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// Options choose the device and its debugging aids.
type Options struct {
	// Device selects the Vulkan device: an index or a substring of its
	// name. Empty means VKJIT_DEVICE, else the most capable device type.
	Device string
	// Validate enables the Khronos validation layer. When false,
	// VKJIT_VALIDATE=1 still enables it.
	Validate bool
	// CacheDir is the persistent compile cache's directory; empty means
	// VKJIT_CACHE_DIR, else os.UserCacheDir()/vkjit. VKJIT_CACHE_MAX_BYTES
	// bounds its size (default 1 GiB).
	CacheDir string
	// NoCache turns the compile cache off.
	NoCache bool
	// Warn receives warnings (a damaged cache entry dropped); nil means
	// standard error.
	Warn func(string)
	// Memory sets the device memory pool: block size, budget fraction,
	// limit, preallocation (zero fields: VKJIT_MEM_FRACTION,
	// VKJIT_MEM_LIMIT_BYTES, VKJIT_PREALLOCATE, VKJIT_BLOCK_BYTES, then
	// defaults; see pool.Config).
	Memory pool.Config
	// Staging chooses where tensors live on a device whose main memory
	// the host cannot map (a discrete GPU): vk.StagingAuto (the default)
	// stages there and nowhere else; VKJIT_STAGED=1 or 0 overrides it.
	Staging vk.Staging
}

// Runtime is an open Vulkan device that compiles and runs executables.
type Runtime struct {
	inst   *vk.Instance
	dev    *vk.Device
	pool   *pool.Pool   // every device buffer: arenas, parameters, constants
	cache  *cache.Cache // nil: off
	tg     lower.Target // what code generation knows of the device, read at Open
	info   vk.DeviceInfo
	staged bool

	pipelineData int // bytes of saved pipeline cache data loaded at Open

	life life // calls in flight; Close waits for them
	mu   sync.Mutex
	exes map[*Executable]bool // open executables, closed by Close
}

// Open creates a Vulkan instance and opens the chosen device.
func Open(opts Options) (*Runtime, error) {
	// The environment's settings are read first, so that a bad one
	// fails before any device work.
	validate, err := vk.ValidationRequested()
	if err != nil {
		return nil, err
	}
	cacheLimit, err := cache.DefaultLimitBytes()
	if err != nil {
		return nil, err
	}
	inst, err := vk.NewInstance(opts.Validate || validate)
	if err != nil {
		return nil, err
	}
	devs, err := inst.Devices()
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	idx, err := vk.ChooseDevice(devs, opts.Device)
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{Staging: opts.Staging})
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	mem, err := pool.New(dev, opts.Memory)
	if err != nil {
		dev.Destroy()
		inst.Destroy()
		return nil, err
	}
	r := &Runtime{inst: inst, dev: dev, pool: mem, tg: target(dev.Info), info: dev.Info, staged: dev.Staged(), exes: map[*Executable]bool{}}
	warn := opts.Warn
	if warn == nil {
		warn = func(s string) { fmt.Fprintln(os.Stderr, s) }
	}
	if !opts.NoCache {
		// A cache that cannot be opened only costs compile time.
		dir := opts.CacheDir
		if dir == "" {
			dir, err = cache.DefaultDir()
		}
		if err == nil {
			if r.cache, err = cache.Open(dir, cacheLimit); err != nil {
				warn(fmt.Sprintf("vkjit: compile cache off: %v", err))
			}
		} else {
			warn(fmt.Sprintf("vkjit: compile cache off: %v", err))
		}
		if r.cache != nil {
			r.cache.Warn = warn
		}
	}
	r.loadPipelineCache(warn)
	return r, nil
}

// Close waits for the calls in flight (runs, compiles, copies), closes
// the executables still open and releases the device. Every call after
// it returns ErrClosed; device tensors need no Release after it (their
// memory went with the device), and a second Close does nothing.
func (r *Runtime) Close() {
	if !r.life.close() {
		return
	}
	r.mu.Lock()
	exes := make([]*Executable, 0, len(r.exes))
	for e := range r.exes {
		exes = append(exes, e)
	}
	r.mu.Unlock()
	for _, e := range exes {
		e.Close()
	}
	r.savePipelineCache()
	r.pool.Close()
	r.dev.Destroy()
	r.inst.Destroy()
}

// MemoryStats describes the device memory pool: reserved, in use, peak,
// largest free range, fragmentation.
func (r *Runtime) MemoryStats() (pool.Stats, error) {
	if err := r.life.enter(); err != nil {
		return pool.Stats{}, err
	}
	defer r.life.exit()
	return r.pool.Stats(), nil
}

// Staged reports whether the device keeps tensors in memory the host
// cannot map, reached through copies on the transfer queue (vk.Staging).
func (r *Runtime) Staged() bool { return r.staged }

// TrimMemory gives the pool's empty blocks back to the device and returns
// the bytes released.
func (r *Runtime) TrimMemory() (int64, error) {
	if err := r.life.enter(); err != nil {
		return 0, err
	}
	defer r.life.exit()
	return r.pool.Trim(), nil
}

// Device describes the open device.
func (r *Runtime) Device() vk.DeviceInfo { return r.info }

// Target is what the code generator knows of the open device (read once,
// at Open: every compilation and every host copy of narrow types
// follows it).
func (r *Runtime) Target() lower.Target { return r.tg }

func target(d vk.DeviceInfo) lower.Target {
	return lower.Target{
		SubgroupSize:       d.SubgroupSize,
		SubgroupShuffle:    d.SubgroupShuffle(),
		TexelLoads:         d.TexelLoads(),
		MaxWorkgroupSize:   d.MaxComputeWorkGroupInvocations,
		MaxWorkgroupCount:  d.MaxComputeWorkGroupCount,
		MaxStorageBuffers:  d.MaxPerStageStorageBuffers,
		Float64:            d.ShaderFloat64,
		Int64:              d.ShaderInt64,
		Storage16:          d.Storage16,
		Storage8:           d.Storage8,
		Float16:            d.Float16Exact && d.Storage16,
		SignedZeroInfNan16: d.SignedZeroInfNan16,
		SignedZeroInfNan32: d.SignedZeroInfNan32,
		SignedZeroInfNan64: d.SignedZeroInfNan64,
		StorageAlign:       uint32(d.MinStorageBufferOffsetAlign),
		MaxLoopIterations:  loopLimit(d),
		FoldsZeros:         isLlvmpipe(d),
		CPU:                d.Type == vk.TypeCPU,
		Cores:              cpuThreads(),
	}
}

// cpuThreads is how many threads a CPU Vulkan device runs kernels on:
// lavapipe's LP_NUM_THREADS when set, else the host's CPUs.
func cpuThreads() int {
	if v, err := strconv.Atoi(os.Getenv("LP_NUM_THREADS")); err == nil && v > 0 {
		return v
	}
	return runtime.NumCPU()
}

// loopLimit is the device's bound on loop iterations per invocation, where
// its driver has one (see lower.Target.MaxLoopIterations).
func loopLimit(d vk.DeviceInfo) int64 {
	if isLlvmpipe(d) {
		return lower.LlvmpipeLoopLimit
	}
	return 0
}

func isLlvmpipe(d vk.DeviceInfo) bool {
	return strings.Contains(d.Name, "llvmpipe") || strings.Contains(d.DriverName, "llvmpipe")
}

// ValidationMessages returns, and clears, what the validation layer has
// reported in this process.
func ValidationMessages() []string { return vk.ValidationMessages() }

// ListDevices lists the Vulkan devices without opening one.
func ListDevices() ([]vk.DeviceInfo, error) {
	inst, err := vk.NewInstance(false)
	if err != nil {
		return nil, err
	}
	defer inst.Destroy()
	return inst.Devices()
}

// CompileOptions change how a module compiles.
type CompileOptions struct {
	Lower lower.Options
}

// CompileStats describes one compilation.
type CompileStats struct {
	CompileMs   float64 // Compile's call to executable ready
	CodegenMs   float64 // vkjit's own work: the module to SPIR-V and plan (a cache lookup on a hit)
	PipelineMs  float64 // the driver's pipeline creation and constant uploads
	Kernels     int     // distinct compiled kernels
	CacheHits   int     // kernels whose SPIR-V and plan came from the persistent cache
	CacheMisses int     // kernels generated because the cache lacked them
}

// CompileFile reads, parses and compiles a file holding one module:
// HLO text or StableHLO (ParseText).
func (r *Runtime) CompileFile(path string, opts CompileOptions) (*Executable, error) {
	start := time.Now()
	if err := r.life.enter(); err != nil {
		return nil, err
	}
	defer r.life.exit()
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return r.compileSource(path, src, opts, start)
}

// CompileText compiles a module's text, HLO or StableHLO (ParseText);
// name labels it in errors. With the compile cache on, text compiled
// before is not even parsed.
func (r *Runtime) CompileText(name, text string, opts CompileOptions) (*Executable, error) {
	if err := r.life.enter(); err != nil {
		return nil, err
	}
	defer r.life.exit()
	return r.compileSource(name, []byte(text), opts, time.Now())
}

// Compile compiles a parsed module.
func (r *Runtime) Compile(m *hlo.Module, opts CompileOptions) (*Executable, error) {
	if err := r.life.enter(); err != nil {
		return nil, err
	}
	if m == nil {
		r.life.exit()
		return nil, fmt.Errorf("vkjit: Compile of a nil module")
	}
	defer r.life.exit()
	return r.compile(m, opts, time.Now())
}

// ArgError is a wrong argument: which parameter, and what is wrong.
type ArgError struct {
	Index int    // parameter number
	Name  string // the parameter instruction's name
	Msg   string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("argument %d (parameter %s): %s", e.Index, e.Name, e.Msg)
}

// CheckArgs checks that args match the entry parameters in number, type
// and shape.
func (e *Executable) CheckArgs(args []*Tensor) error {
	ps := e.prog.ParamShapes
	if len(args) != len(ps) {
		return fmt.Errorf("vkjit: %s takes %d arguments, got %d", e.prog.Module, len(ps), len(args))
	}
	for i, a := range args {
		want := ps[i]
		name := e.prog.Buffers[e.prog.Params[i]].Name
		if a == nil {
			return &ArgError{i, name, "is nil"}
		}
		if a.Type != want.Elem {
			return &ArgError{i, name, fmt.Sprintf("want element type %s, got %s", want.Elem, a.Type)}
		}
		if !a.Shape().SameDims(want) {
			return &ArgError{i, name, fmt.Sprintf("want shape %s, got %s", want.DimsString(), a.Shape().DimsString())}
		}
		if int64(len(a.Data)) != want.ByteSize() {
			return &ArgError{i, name, fmt.Sprintf("holds %d bytes, shape %s needs %d", len(a.Data), want.DimsString(), want.ByteSize())}
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
