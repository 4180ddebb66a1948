package kgen

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/spirv"
)

// The opcode table. OpKind classifies each op by the kernel that
// computes it on its own; the kinds that compute an output element in
// one invocation have an element form (formOf), the code of one element
// with the operands read through bindings. The same form is emitted where
// the op is a kernel of its own (Generate) and where fusion put it inside
// a reader's kernel (kernelBuilder.compute), so an op's meaning on the
// device is written once; the planner (lower/plan.go) and the fusion
// passes ask OpKind what may be a kernel.

// OpKind is the kind of op's own kernel, or KindNone for ops that are no
// kernel (parameters, constants, tuples, control flow). Ops with a
// generator of their own come first, then data movement, then the
// elementwise ops.
func OpKind(op hlo.Opcode) Kind {
	switch op {
	case hlo.OpReduce:
		return KindReduce
	case hlo.OpDot:
		return KindDot
	case hlo.OpReduceWindow:
		return KindReduceWindow
	case hlo.OpSelectAndScatter:
		return KindSelectAndScatter
	case hlo.OpScatter:
		return KindScatter
	case hlo.OpConvolution:
		return KindConv
	case hlo.OpSort:
		return KindSort
	}
	switch {
	case RemapOps[op]:
		return KindRemap
	case op.IsElementwise():
		return KindElementwise
	}
	return KindNone
}

// valueFunc computes output element idx of every result of in, its
// operands read through binds.
type valueFunc func(k *kernelBuilder, in *hlo.Instruction, binds []int, idx spirv.ID) ([]val, error)

// elementForm is how one kind of op computes an output element.
type elementForm struct {
	name  func(in *hlo.Instruction) string // its own kernel's name
	value valueFunc
	// vector: its own kernel may take the vector form (vector.go) where
	// its accesses allow.
	vector bool
}

// formOf is kind's element form; ok is false for kinds without one.
func formOf(kind Kind) (f elementForm, ok bool) {
	operand := func(in *hlo.Instruction) string { return in.Operands[0].Shape.Elem.String() }
	result := func(in *hlo.Instruction) string { return in.Shape.Elem.String() }
	single := func(v func(k *kernelBuilder, in *hlo.Instruction, binds []int, idx spirv.ID) (val, error)) valueFunc {
		return func(k *kernelBuilder, in *hlo.Instruction, binds []int, idx spirv.ID) ([]val, error) {
			x, err := v(k, in, binds, idx)
			return []val{x}, err
		}
	}
	switch kind {
	case KindElementwise:
		return elementForm{func(in *hlo.Instruction) string {
			if len(in.Operands) == 0 {
				return in.Op.String()
			}
			return in.Op.String() + "_" + operand(in)
		}, single((*kernelBuilder).elementwiseValue), true}, true
	case KindRemap:
		return elementForm{func(in *hlo.Instruction) string { return in.Op.String() + "_" + result(in) },
			single((*kernelBuilder).remapValue), true}, true
	case KindDot:
		return elementForm{func(in *hlo.Instruction) string { return "dot_" + operand(in) + "_" + result(in) },
			single((*kernelBuilder).dotValue), true}, true
	case KindConv:
		return elementForm{func(in *hlo.Instruction) string { return "convolution_" + operand(in) + "_" + result(in) },
			single((*kernelBuilder).convValue), true}, true
	case KindReduce:
		return elementForm{func(in *hlo.Instruction) string { return "reduce_" + operand(in) },
			(*kernelBuilder).reduceValues, true}, true
	case KindReduceWindow:
		return elementForm{func(in *hlo.Instruction) string { return "reduce_window_" + operand(in) },
			(*kernelBuilder).reduceWindowValues, true}, true
	case KindSelectAndScatter:
		return elementForm{func(in *hlo.Instruction) string { return "select_and_scatter_" + result(in) },
			single((*kernelBuilder).selectAndScatterValue), false}, true
	}
	return elementForm{}, false
}

// Generate makes the kernel of in, of a kind that is one kernel over an
// invocation per output element (or a subgroup or workgroup of them per
// output): the kinds with an element form, and scatter.
func Generate(kind Kind, in *hlo.Instruction, env Env) (*Kernel, error) {
	switch kind {
	case KindScatter:
		return ScatterKernel(in, env)
	case KindReduce:
		return ReduceKernel(in, env)
	}
	f, ok := formOf(kind)
	if !ok {
		return nil, in.Errorf("no kernel generator for a %s kernel", kind)
	}
	values := func(k *kernelBuilder, binds []int, idx spirv.ID) ([]val, error) { return f.value(k, in, binds, idx) }
	return elementKernel(in, env, f.name(in), values, f.vector)
}
