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
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
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
}

// Runtime is an open Vulkan device that compiles and runs executables.
type Runtime struct {
	inst *vk.Instance
	dev  *vk.Device
}

// Open creates a Vulkan instance and opens the chosen device.
func Open(opts Options) (*Runtime, error) {
	inst, err := vk.NewInstance(opts.Validate || vk.ValidationRequested())
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
	dev, err := inst.OpenDevice(idx)
	if err != nil {
		inst.Destroy()
		return nil, err
	}
	return &Runtime{inst: inst, dev: dev}, nil
}

// Close releases the device. Executables must be closed first.
func (r *Runtime) Close() {
	if r.dev != nil {
		r.dev.Destroy()
		r.dev = nil
	}
	if r.inst != nil {
		r.inst.Destroy()
		r.inst = nil
	}
}

// Device describes the open device.
func (r *Runtime) Device() vk.DeviceInfo { return r.dev.Info }

// Target is what the code generator knows of the open device.
func (r *Runtime) Target() lower.Target {
	d := r.dev.Info
	return lower.Target{
		SubgroupSize:      d.SubgroupSize,
		MaxWorkgroupSize:  d.MaxComputeWorkGroupInvocations,
		MaxWorkgroupCount: d.MaxComputeWorkGroupCount,
		MaxStorageBuffers: d.MaxPerStageStorageBuffers,
		Float64:           d.ShaderFloat64,
		Int64:             d.ShaderInt64,
	}
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
	CompileMs   float64 // reading the module to executable ready
	Kernels     int     // distinct compiled kernels
	CacheHits   int     // kernels taken from the persistent cache (none yet)
	CacheMisses int     // kernels compiled because the cache lacked them
}

// Executable is a compiled module bound to a device.
type Executable struct {
	rt      *Runtime
	prog    *lower.Program
	kernels []*vk.Kernel
	consts  map[int]*vk.Buffer // constant buffers, uploaded once
	Stats   CompileStats
	started time.Time
}

// CompileFile reads, parses and compiles an HLO text file holding one
// module.
func (r *Runtime) CompileFile(path string, opts CompileOptions) (*Executable, error) {
	start := time.Now()
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := hlo.Parse(path, string(src))
	if err != nil {
		return nil, err
	}
	return r.compile(m, opts, start)
}

// CompileText compiles HLO text; name labels it in errors.
func (r *Runtime) CompileText(name, text string, opts CompileOptions) (*Executable, error) {
	start := time.Now()
	m, err := hlo.Parse(name, text)
	if err != nil {
		return nil, err
	}
	return r.compile(m, opts, start)
}

// Compile compiles a parsed module.
func (r *Runtime) Compile(m *hlo.Module, opts CompileOptions) (*Executable, error) {
	return r.compile(m, opts, time.Now())
}

func (r *Runtime) compile(m *hlo.Module, opts CompileOptions, start time.Time) (*Executable, error) {
	prog, err := lower.Compile(m, r.Target(), opts.Lower)
	if err != nil {
		return nil, err
	}
	e := &Executable{rt: r, prog: prog, consts: map[int]*vk.Buffer{}}
	for _, k := range prog.Kernels {
		vkk, err := r.dev.NewKernel(k.Name, k.Words, k.Bindings, uint32(k.PushSize))
		if err != nil {
			e.Close()
			return nil, err
		}
		e.kernels = append(e.kernels, vkk)
	}
	for i, b := range prog.Buffers {
		if b.Kind != lower.BufConstant {
			continue
		}
		buf, err := r.dev.NewBuffer(b.Size)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("vkjit: constant %s: %w", b.Name, err)
		}
		e.consts[i] = buf
		if err := buf.Write(0, b.Data); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.Stats = CompileStats{
		CompileMs:   ms(time.Since(start)),
		Kernels:     len(prog.Kernels),
		CacheMisses: len(prog.Kernels),
	}
	return e, nil
}

// Program is the compiled plan, for inspection.
func (e *Executable) Program() *lower.Program { return e.prog }

// Close releases the executable's device objects.
func (e *Executable) Close() {
	for _, k := range e.kernels {
		k.Destroy()
	}
	e.kernels = nil
	for _, b := range e.consts {
		b.Destroy()
	}
	e.consts = nil
}

// RunStats describes one run.
type RunStats struct {
	RunMs           float64 // wall time, transfers included
	Dispatches      int     // kernel dispatches
	PeakDeviceBytes int64   // the most device memory the executable held at once
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

// Run executes the program with args (one per entry parameter) and
// returns the result leaves in depth-first order. It is safe to call from
// several goroutines at once.
func (e *Executable) Run(args ...*Tensor) ([]*Tensor, RunStats, error) {
	start := time.Now()
	var st RunStats
	if err := e.CheckArgs(args); err != nil {
		return nil, st, err
	}
	p := e.prog
	bufs := make([]*vk.Buffer, len(p.Buffers))
	var runBufs []*vk.Buffer
	defer func() {
		for _, b := range runBufs {
			b.Destroy()
		}
	}()
	for i, b := range p.Buffers {
		if c, ok := e.consts[i]; ok {
			bufs[i] = c
			st.PeakDeviceBytes += paddedSize(b.Size)
			continue
		}
		buf, err := e.rt.dev.NewBuffer(b.Size)
		if err != nil {
			if errors.Is(err, vk.ErrOutOfDeviceMemory) {
				return nil, st, fmt.Errorf("vkjit: out of device memory allocating %s (%d bytes; %d held): %w", b.Name, b.Size, st.PeakDeviceBytes, err)
			}
			return nil, st, err
		}
		runBufs = append(runBufs, buf)
		bufs[i] = buf
		st.PeakDeviceBytes += paddedSize(b.Size)
		if b.Kind == lower.BufParam {
			if err := buf.Write(0, lower.ToStorage(b.Shape.Elem, args[b.Param].Data)); err != nil {
				return nil, st, err
			}
		}
	}
	ds := make([]vk.Dispatch, len(p.Steps))
	for i, s := range p.Steps {
		d := vk.Dispatch{Kernel: e.kernels[s.Kernel], Push: s.PushBytes(), Groups: s.Groups, AfterWrites: s.AfterWrites}
		for _, b := range s.Buffers {
			d.Buffers = append(d.Buffers, bufs[b])
		}
		ds[i] = d
	}
	if len(ds) > 0 {
		cl, err := e.rt.dev.Record(ds)
		if err != nil {
			return nil, st, err
		}
		err = cl.Submit()
		cl.Destroy()
		if err != nil {
			return nil, st, err
		}
	}
	st.Dispatches = len(ds)
	outs := make([]*Tensor, len(p.Outputs))
	for i, bi := range p.Outputs {
		shape := p.OutputShapes[i]
		data, err := lower.FromStorage(shape.Elem, bufs[bi].Bytes(), shape.NumElements())
		if err != nil {
			return nil, st, err
		}
		outs[i] = &Tensor{Type: shape.Elem, Dims: append([]int64{}, shape.Dims...), Data: append([]byte(nil), data...)}
	}
	st.RunMs = ms(time.Since(start))
	return outs, st, nil
}

func paddedSize(n int64) int64 {
	if n < 4 {
		return 4
	}
	return (n + 3) &^ 3
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
