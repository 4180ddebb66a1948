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

// Executable is a compiled GoMLX graph: a vkjit Executable, and one
// more for each set of inputs Execute was asked to donate (vkjit's
// CompileOptions.Donate: the donated parameters live in the run's arena,
// whose memory later values reuse).
type Executable struct {
	b     *Backend
	m     *hlo.Module
	exe   *vkjit.Executable
	names []string
	ins   []shapes.Shape
	outs  []shapes.Shape

	mu      sync.Mutex
	closed  bool
	donated map[string]*vkjit.Executable // by the donated inputs' numbers
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
		for _, x := range e.donated {
			x.Close()
		}
	}
}

// forDonation is the executable that donates the inputs donate marks,
// compiled on first use.
func (e *Executable) forDonation(donate []bool) (*vkjit.Executable, error) {
	var list []int
	for i, d := range donate {
		if d {
			list = append(list, i)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("vkjit backend: Execute of a finalized executable: %w", vkjit.ErrClosed)
	}
	if len(list) == 0 {
		return e.exe, nil
	}
	key := fmt.Sprint(list)
	if x := e.donated[key]; x != nil {
		return x, nil
	}
	opts := e.b.opts
	opts.Donate = list
	x, err := e.b.rt.Compile(e.m, opts)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: compiling %s to donate inputs %v: %w", e.m.Name, list, err)
	}
	if e.donated == nil {
		e.donated = map[string]*vkjit.Executable{}
	}
	e.donated[key] = x
	return x, nil
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
// on the device. Donated inputs are vkjit's donation: the executable
// donating them copies each into its arena and gives its memory back
// before it computes, so that the arena reuses the space once the
// value is dead (a training step's new parameters where the old ones
// were); the buffers are finalized.
func (e *Executable) Execute(inputs []backends.Buffer, donate []bool, defaultDevice backends.DeviceNum) ([]backends.Buffer, error) {
	if err := e.b.check(); err != nil {
		return nil, err
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
	exe, err := e.forDonation(donate)
	if err != nil {
		return nil, err
	}
	for i, d := range donate {
		if d {
			args[i].Donate() // RunDevice gives it back
		}
	}
	res, _, err := exe.RunDevice(context.Background(), args...)
	for i, d := range donate {
		if d {
			e.b.BufferFinalize(bufs[i]) // its host copy, if shared
		}
	}
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	outs := make([]backends.Buffer, len(res))
	for i, dt := range res {
		outs[i] = e.b.wrap(dt, e.outs[i].Clone())
	}
	return outs, nil
}
