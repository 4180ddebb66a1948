package gomlx

import (
	"fmt"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/vkjit/vkjit/hlo"
)

// Builder turns GoMLX's op calls into one hlo.Module. Each op is checked
// where it is made (GoMLX reports an op's error at its call): its
// arguments by GoMLX's own shape rules where GoMLX states them, and the
// HLO instruction it becomes by hlo's verifier, which infers its shape.
type Builder struct {
	b        *Backend
	name     string
	hb       *hlo.Builder
	main     *hlo.CompBuilder
	params   []*node
	names    []string
	compiled bool
	comps    map[string]*hlo.Computation // scalar computations (reducers, comparators) by what they compute
}

var _ backends.Builder = (*Builder)(nil)

// node is an op's value while the graph is built: an HLO instruction of
// the entry computation and its GoMLX shape.
type node struct {
	in    *hlo.Instruction
	shape shapes.Shape
	b     *Builder
}

// Builder implements backends.Backend.
func (b *Backend) Builder(name string) backends.Builder {
	hb := hlo.NewBuilder(identifier(name))
	return &Builder{b: b, name: name, hb: hb, main: hb.Entry("main"), comps: map[string]*hlo.Computation{}}
}

// identifier makes a name HLO text can carry: letters, digits, '_', '.'
// and '-'.
func identifier(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
	if s == "" || s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[0] == '-' {
		s = "m_" + s
	}
	return s
}

// Name implements backends.Builder.
func (b *Builder) Name() string { return b.name }

// nodes checks that ops are values of this builder, still open.
func (b *Builder) nodes(opName string, ops ...backends.Op) ([]*node, error) {
	if err := b.b.check(); err != nil {
		return nil, err
	}
	if b.compiled {
		return nil, fmt.Errorf("vkjit backend: %s: builder %q was already compiled", opName, b.name)
	}
	ns := make([]*node, len(ops))
	for i, op := range ops {
		n, ok := op.(*node)
		switch {
		case op == nil || (ok && n == nil):
			return nil, fmt.Errorf("vkjit backend: %s: operand %d is nil", opName, i)
		case !ok:
			return nil, fmt.Errorf("vkjit backend: %s: operand %d (%T) is not a vkjit backend op", opName, i, op)
		case n.b != b:
			return nil, fmt.Errorf("vkjit backend: %s: operand %d was made by builder %q, not %q", opName, i, n.b.name, b.name)
		}
		ns[i] = n
	}
	return ns, nil
}

// OpShape implements backends.Builder.
func (b *Builder) OpShape(op backends.Op) (shapes.Shape, error) {
	ns, err := b.nodes("OpShape", op)
	if err != nil {
		return shapes.Invalid(), err
	}
	return ns[0].shape.Clone(), nil
}

// inst is one HLO instruction to add: its opcode, operands, attributes
// (name, value pairs in HLO text), its result shape where HLO cannot
// infer it, and the computations it calls.
type inst struct {
	op    hlo.Opcode
	args  []*node
	attrs []string
	shape *hlo.Shape
	calls []*hlo.Computation
}

// add adds in to the entry computation, checks it, and returns its value.
func (b *Builder) add(opName string, in inst) (*node, error) {
	ops := make([]*hlo.Instruction, len(in.args))
	for i, n := range in.args {
		ops[i] = n.in
	}
	ib := b.main.Op(in.op, ops...)
	for i := 0; i+1 < len(in.attrs); i += 2 {
		ib.Set(in.attrs[i], in.attrs[i+1])
	}
	if len(in.calls) > 0 {
		ib.Calls(in.calls...)
	}
	if in.shape != nil {
		ib.WithShape(*in.shape)
	}
	if err := ib.Check(); err != nil {
		return nil, fmt.Errorf("vkjit backend: %s: %w", opName, err)
	}
	n := &node{in: ib.Instruction, b: b}
	if ib.Shape.IsArray() {
		s, err := gomlxShape(ib.Shape)
		if err != nil {
			return nil, fmt.Errorf("vkjit backend: %s: %w", opName, err)
		}
		n.shape = s
	}
	return n, nil
}

// Parameter implements backends.Builder. Parameters are the executable's
// inputs in the order they are made.
func (b *Builder) Parameter(name string, shape shapes.Shape, sharding *backends.ShardingSpec) (backends.Op, error) {
	if _, err := b.nodes("Parameter"); err != nil {
		return nil, err
	}
	if sharding != nil {
		return nil, fmt.Errorf("vkjit backend: Parameter %q: sharding needs several devices; the backend drives one", name)
	}
	for _, n := range b.names {
		if n == name {
			return nil, fmt.Errorf("vkjit backend: parameter named %q already exists", name)
		}
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Parameter %q: %w", name, err)
	}
	p := &node{in: b.main.Parameter(hs), shape: shape.Clone(), b: b}
	b.params = append(b.params, p)
	b.names = append(b.names, name)
	return p, nil
}

// Constant implements backends.Builder: flat is a slice of a supported
// dtype's Go type, copied into the module.
func (b *Builder) Constant(flat any, dims ...int) (backends.Op, error) {
	if _, err := b.nodes("Constant"); err != nil {
		return nil, err
	}
	if flat == nil {
		return nil, fmt.Errorf("vkjit backend: Constant: nil flat value")
	}
	s := shapes.Make(dtypeOfSlice(flat), dims...)
	hs, err := hloShape(s)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Constant: %w", err)
	}
	data, err := flatBytes(flat, s.DType, s.Size())
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Constant: %w", err)
	}
	lit, err := hlo.NewLiteral(hs, append([]byte(nil), data...))
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Constant: %w", err)
	}
	return &node{in: b.main.Constant(lit), shape: s, b: b}, nil
}

// Identity implements backends.Builder: the value itself.
func (b *Builder) Identity(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Identity", x)
	if err != nil {
		return nil, err
	}
	return ns[0], nil
}

// Compile implements backends.Builder: the outputs become the entry's
// result tuple, and vkjit compiles the module (through its compile
// cache). The builder takes no ops after it.
func (b *Builder) Compile(outputs []backends.Op, shardings []*backends.ShardingSpec) (backends.Executable, error) {
	ns, err := b.nodes("Compile", outputs...)
	if err != nil {
		return nil, err
	}
	for _, s := range shardings {
		if s != nil {
			return nil, fmt.Errorf("vkjit backend: Compile: sharding needs several devices; the backend drives one")
		}
	}
	outs := make([]shapes.Shape, len(ns))
	for i, n := range ns {
		outs[i] = n.shape.Clone()
	}
	root, err := b.add("Compile", inst{op: hlo.OpTuple, args: ns})
	if err != nil {
		return nil, err
	}
	b.main.SetRoot(root.in)
	b.compiled = true
	m, err := b.hb.Build()
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: Compile %q: %w", b.name, err)
	}
	ins := make([]shapes.Shape, len(b.params))
	for i, p := range b.params {
		ins[i] = p.shape.Clone()
	}
	return newExecutable(b.b, m, b.names, ins, outs)
}

// DistributedSPMD implements backends.Builder: one device only.
func (b *Builder) DistributedSPMD(numDevices int) error {
	if numDevices == 1 {
		return nil
	}
	return fmt.Errorf("vkjit backend: DistributedSPMD over %d devices: the backend drives one", numDevices)
}

// DistributedAutoSharding implements backends.Builder: one device only.
func (b *Builder) DistributedAutoSharding(meshes ...backends.Mesh) error {
	return fmt.Errorf("vkjit backend: DistributedAutoSharding: the backend drives one device")
}

// DeviceAssignment implements backends.Builder: device 0 only.
func (b *Builder) DeviceAssignment(devices ...backends.DeviceNum) error {
	if len(devices) == 1 && devices[0] == 0 {
		return nil
	}
	return fmt.Errorf("vkjit backend: DeviceAssignment %v: the backend drives one device, #0", devices)
}

// AllReduce implements backends.CollectiveOps: a collective needs several
// devices, and the backend drives one.
func (b *Builder) AllReduce(operands []backends.Op, reductionType backends.ReduceOpType, replicaGroups [][]int) ([]backends.Op, error) {
	return nil, fmt.Errorf("vkjit backend: AllReduce: collectives need several devices; the backend drives one")
}
