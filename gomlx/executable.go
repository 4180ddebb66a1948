package gomlx

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
)

// Executable is a compiled GoMLX graph: a vkjit Executable.
type Executable struct {
	b     *Backend
	m     *hlo.Module
	exe   *vkjit.Executable
	names []string
	ins   []shapes.Shape
	outs  []shapes.Shape

	mu     sync.Mutex
	closed bool
}

var _ backends.Executable = (*Executable)(nil)

func newExecutable(b *Backend, m *hlo.Module, names []string, ins, outs []shapes.Shape) (*Executable, error) {
	exe, err := b.rt.Compile(m, b.opts)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: compiling %s: %w", m.Name, err)
	}
	return &Executable{b: b, m: m, exe: exe, names: names, ins: ins, outs: outs}, nil
}

// Module is the HLO module the graph became, for inspection (its text is
// what `vkjit run` and `vkjit fmt --plan` take).
func (e *Executable) Module() *hlo.Module { return e.m }

// Plan is the compiled plan (vkjit's Executable.Plan): kernels, buffers,
// steps.
func (e *Executable) Plan() string { return e.exe.Plan() }

// Finalize implements backends.Executable.
func (e *Executable) Finalize() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		e.exe.Close()
	}
}

// Inputs implements backends.Executable.
func (e *Executable) Inputs() ([]string, []shapes.Shape) {
	return slices.Clone(e.names), cloneShapes(e.ins)
}

// Outputs implements backends.Executable.
func (e *Executable) Outputs() []shapes.Shape { return cloneShapes(e.outs) }

func cloneShapes(ss []shapes.Shape) []shapes.Shape {
	out := make([]shapes.Shape, len(ss))
	for i, s := range ss {
		out[i] = s.Clone()
	}
	return out
}

// Execute implements backends.Executable: it runs the program on the
// device tensors behind inputs and returns its outputs as new buffers,
// on the device. Donated inputs are finalized after the run: their
// memory goes back to the pool at once instead of at the caller's next
// collection.
func (e *Executable) Execute(inputs []backends.Buffer, donate []bool, defaultDevice backends.DeviceNum) ([]backends.Buffer, error) {
	if err := e.b.check(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("vkjit backend: Execute of a finalized executable: %w", vkjit.ErrClosed)
	}
	if defaultDevice != 0 {
		return nil, fmt.Errorf("vkjit backend: no device #%d (the backend drives one)", defaultDevice)
	}
	if len(inputs) != len(e.ins) {
		return nil, fmt.Errorf("vkjit backend: Execute: %d inputs for %d parameters", len(inputs), len(e.ins))
	}
	if donate != nil && len(donate) != len(inputs) {
		return nil, fmt.Errorf("vkjit backend: Execute: %d donate flags for %d inputs", len(donate), len(inputs))
	}
	args := make([]*vkjit.DeviceTensor, len(inputs))
	bufs := make([]*Buffer, len(inputs))
	for i, in := range inputs {
		vb, err := e.b.buffer(in, fmt.Sprintf("Execute input #%d (%q)", i, e.names[i]))
		if err != nil {
			return nil, err
		}
		if !vb.shape.Equal(e.ins[i]) {
			return nil, fmt.Errorf("vkjit backend: Execute: input #%d (%q) is %s, the parameter %s", i, e.names[i], vb.shape, e.ins[i])
		}
		if args[i], err = vb.device(); err != nil {
			return nil, err
		}
		bufs[i] = vb
	}
	res, _, err := e.exe.RunDevice(context.Background(), args...)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	for i, d := range donate {
		if d {
			e.b.BufferFinalize(bufs[i])
		}
	}
	outs := make([]backends.Buffer, len(res))
	for i, dt := range res {
		outs[i] = e.b.wrap(dt, e.outs[i].Clone())
	}
	return outs, nil
}
