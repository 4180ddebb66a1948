package vkjit

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"github.com/vkjit/vkjit/cache"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
)

// selfHash identifies the code that compiled an entry: the running
// executable's path, size and modification time, so that rebuilding
// vkjit (or the program that links it) makes old entries misses rather
// than stale plans. (Hashing the executable's bytes costs 5 ms a run.)
var selfHash = sync.OnceValue(func() []byte {
	p, err := os.Executable()
	if err != nil {
		return []byte("unknown executable")
	}
	info, err := os.Stat(p)
	if err != nil {
		return []byte(p)
	}
	return []byte(fmt.Sprintf("%s|%d|%d", p, info.Size(), info.ModTime().UnixNano()))
})

// cacheKey hashes everything that changes a compiled program: vkjit's
// code, the device and its driver, the target the code generator sees,
// the compile options, and the module: its canonical text, or (kind
// "source") the text as given, which spares a hit the parse.
func (r *Runtime) cacheKey(kind string, module []byte, opts CompileOptions) string {
	d := r.dev.Info
	device := fmt.Sprintf("%s|%x|%x|%d|%s", d.Name, d.VendorID, d.DeviceID, d.DriverVersion, d.Driver())
	return cache.Key([]byte("vkjit program"), []byte(kind), selfHash(), []byte(device),
		[]byte(fmt.Sprintf("%+v", r.tg)), []byte(fmt.Sprintf("%+v", opts.lower())), []byte(fmt.Sprint(opts.shapes())), module)
}

// cachedProgram returns the program for m from the cache, or compiles
// and stores it. hit says which.
func (r *Runtime) cachedProgram(m *hlo.Module, opts CompileOptions) (*lower.Program, bool, error) {
	if r.cache == nil {
		p, err := lower.Compile(m, r.tg, opts.lower())
		return p, false, err
	}
	return r.lookup(r.cacheKey("module", []byte(m.String()), opts), func() (*hlo.Module, error) { return m, nil }, opts)
}

// sourceProgram is cachedProgram for HLO text: a hit needs no parse.
func (r *Runtime) sourceProgram(name string, src []byte, opts CompileOptions) (*lower.Program, bool, error) {
	parse := func() (*hlo.Module, error) { return parseOne(name, string(src), opts) }
	if r.cache == nil {
		m, err := parse()
		if err != nil {
			return nil, false, err
		}
		return r.cachedProgram(m, opts)
	}
	return r.lookup(r.cacheKey("source", src, opts), parse, opts)
}

// lookup returns the cached program under key, or compiles the module
// that get returns and stores the program.
func (r *Runtime) lookup(key string, get func() (*hlo.Module, error), opts CompileOptions) (*lower.Program, bool, error) {
	if b, ok := r.cache.Get(key); ok {
		var p lower.Program
		if err := p.UnmarshalBinary(b); err == nil {
			return &p, true, nil
		} else if r.cache.Warn != nil {
			r.cache.Warn(fmt.Sprintf("vkjit cache: dropping an entry that does not decode: %v", err))
		}
	}
	m, err := get()
	if err != nil {
		return nil, false, err
	}
	p, err := lower.Compile(m, r.tg, opts.lower())
	if err != nil {
		return nil, false, err
	}
	if b, err := p.MarshalBinary(); err == nil {
		if err := r.cache.Put(key, b); err != nil && r.cache.Warn != nil {
			r.cache.Warn(fmt.Sprintf("vkjit cache: %v", err))
		}
	}
	return p, false, nil
}

// The driver's VkPipelineCache is saved in the compile cache as one entry
// per device, so that a driver update replaces the old data instead of
// piling up beside it. The entry is the driver version (4 bytes, little
// endian) and the data vkGetPipelineCacheData gave; it is loaded only
// when the driver version is the running one and the data's header names
// this device (vk checks vendorID, deviceID and pipelineCacheUUID).
// Lavapipe's data is its 32-byte header alone (it compiles at first
// dispatch, and Mesa keeps its own disk cache), so nothing is saved there.

func (r *Runtime) pipelineCacheKey() string {
	d := r.dev.Info
	return cache.Key([]byte("vkjit pipeline cache"), []byte(fmt.Sprintf("%s|%x|%x", d.Name, d.VendorID, d.DeviceID)))
}

// loadPipelineCache gives the device a pipeline cache, started from the
// saved entry when it fits this device and driver.
func (r *Runtime) loadPipelineCache(warn func(string)) {
	var data []byte
	if r.cache != nil {
		if b, ok := r.cache.Get(r.pipelineCacheKey()); ok {
			if v, d, ok := splitPipelineCache(b); ok && v == r.dev.Info.DriverVersion {
				data = d
			}
		}
	}
	if err := r.dev.UsePipelineCache(data); err != nil {
		warn(fmt.Sprintf("vkjit cache: saved pipeline cache not used: %v", err))
	}
	r.pipelineData = len(data)
}

// savePipelineCache stores the pipeline cache when it holds more than its
// header and grew since it was loaded.
func (r *Runtime) savePipelineCache() {
	if r.cache == nil {
		return
	}
	data, err := r.dev.PipelineCacheData()
	if err != nil || len(data) <= 32 || len(data) == r.pipelineData {
		return
	}
	if err := r.cache.Put(r.pipelineCacheKey(), joinPipelineCache(r.dev.Info.DriverVersion, data)); err != nil && r.cache.Warn != nil {
		r.cache.Warn(fmt.Sprintf("vkjit cache: %v", err))
	}
}

func joinPipelineCache(driverVersion uint32, data []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, driverVersion), data...)
}

func splitPipelineCache(b []byte) (driverVersion uint32, data []byte, ok bool) {
	if len(b) < 4 {
		return 0, nil, false
	}
	return binary.LittleEndian.Uint32(b), b[4:], true
}
