// Package vkjit compiles XLA HLO programs to Vulkan compute kernels and
// runs them on any Vulkan device, GPUs and CPUs (Mesa's lavapipe) alike.
//
//	rt, err := vkjit.Open(vkjit.Options{})
//	defer rt.Close()
//	exe, err := rt.CompileFile("graph.hlo", vkjit.CompileOptions{})
//	defer exe.Close()
//	outs, stats, err := exe.Run(ctx, x, y)
//
// The data flow is HLO text -> hlo (parse, verify) -> lower (kernels and
// plan) -> spirv (module encoding) -> vk (pipelines, buffers, dispatch).
package vkjit

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/vkjit/vkjit/cache"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/settings"
	"github.com/vkjit/vkjit/internal/target"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// Runtime is an open Vulkan device that compiles and runs executables.
type Runtime struct {
	inst   *vk.Instance
	dev    *vk.Device
	pool   *pool.Pool   // every device buffer: arenas, parameters, constants
	cache  *cache.Cache // nil: off
	tg     lower.Target // what code generation knows of the device, read at Open
	info   DeviceInfo
	staged bool

	pipelineData int        // bytes of saved pipeline cache data loaded at Open
	devIndex     int        // the device's index, for warming's worker devices
	warmMode     *bool      // Options.WarmPipelines resolved: nil Auto
	warmMu       sync.Mutex // one program warms at a time (warm.go)

	life life // calls in flight; Close waits for them
	mu   sync.Mutex
	exes map[*Executable]bool // open executables, closed by Close
}

// Open creates a Vulkan instance and opens the chosen device.
func Open(opts Options) (*Runtime, error) {
	set, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("vkjit: %w", err)
	}
	inst, devs, idx, restricted, err := openInstance(opts, set)
	if err != nil {
		return nil, err
	}
	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{Staging: set.staging})
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	if !restricted {
		recordDriver(opts, set, dev)
	}
	mem, err := pool.New(dev, set.pool)
	if err != nil {
		dev.Destroy()
		inst.Destroy()
		return nil, err
	}
	r := &Runtime{inst: inst, dev: dev, pool: mem, tg: target.For(dev.Info), staged: dev.Staged(), exes: map[*Executable]bool{},
		devIndex: idx, warmMode: set.warm}
	r.info = deviceInfo(dev.Info, dev.StorageHeap())
	r.info.Staged = r.staged
	// The default choice is this one unless Options.Device named another.
	r.info.DefaultChoice = true
	if opts.Device != "" {
		d, err := vk.ChooseDevice(devs, settings.String("", "VKJIT_DEVICE"))
		r.info.DefaultChoice = err == nil && d == idx
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(s string) { fmt.Fprintln(os.Stderr, s) }
	}
	if !opts.NoCache {
		// A cache that cannot be opened only costs compile time.
		err := set.cacheErr
		if err == nil {
			if r.cache, err = cache.Open(set.cacheDir, set.cacheLimit); err == nil {
				r.cache.Warn = warn
			}
		}
		if err != nil {
			warn(fmt.Sprintf("vkjit: compile cache off: %v", err))
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
func (r *Runtime) MemoryStats() (MemoryStats, error) {
	if err := r.life.enter(); err != nil {
		return MemoryStats{}, err
	}
	defer r.life.exit()
	return memoryStats(r.pool.Stats()), nil
}

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
func (r *Runtime) Device() DeviceInfo { return r.info }

// CompileStats describes one compilation.
type CompileStats struct {
	Compile     time.Duration // Compile's call to executable ready
	Codegen     time.Duration // vkjit's own work: the module to SPIR-V and plan (a cache lookup on a hit)
	Pipeline    time.Duration // the driver's pipeline creation, constant uploads and warming
	Kernels     int           // distinct compiled kernels
	CacheHits   int           // kernels whose SPIR-V and plan came from the persistent cache
	CacheMisses int           // kernels generated because the cache lacked them
	Warmed      int           // dispatches compiled ahead of the first run (Options.WarmPipelines)
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
		if a.Type.elem() != want.Elem {
			return &ArgError{i, name, fmt.Sprintf("want element type %s, got %s", want.Elem, a.Type)}
		}
		if !a.shape().SameDims(want) {
			return &ArgError{i, name, fmt.Sprintf("want shape %s, got %s", want.DimsString(), a.shape().DimsString())}
		}
		if int64(len(a.Data)) != want.ByteSize() {
			return &ArgError{i, name, fmt.Sprintf("holds %d bytes, shape %s needs %d", len(a.Data), want.DimsString(), want.ByteSize())}
		}
	}
	return nil
}
