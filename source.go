package vkjit

import (
	"os"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/stablehlo"
)

// ParseText reads the modules of a file's text: StableHLO (MLIR, as JAX
// prints by default) or XLA's HLO text, told apart by content
// (stablehlo.IsMLIR), not by the file's name. A StableHLO module's
// check-dialect ops are dropped (vkjit test evaluates them).
func ParseText(name, src string) ([]*hlo.Module, error) {
	return ParseTextFor(name, src, nil)
}

// ParseTextFor is ParseText for arguments of the shapes args: a
// StableHLO entry of dynamic shapes is refined from them
// (CompileOptions.Arguments); nil leaves it dynamic, which is refused.
func ParseTextFor(name, src string, args []TensorSpec) ([]*hlo.Module, error) {
	if !stablehlo.IsMLIR(src) {
		return hlo.ParseModules(name, src)
	}
	ts, errs, err := stablehlo.ParseWith(name, src, stablehlo.Options{Args: specShapes(args)})
	if err != nil {
		return nil, err
	}
	out := make([]*hlo.Module, len(ts))
	for i, t := range ts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if out[i], err = t.WithoutChecks(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ParseFile is ParseText of a file.
func ParseFile(path string) ([]*hlo.Module, error) {
	return ParseFileFor(path, nil)
}

// ParseFileFor is ParseTextFor of a file.
func ParseFileFor(path string, args []TensorSpec) ([]*hlo.Module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTextFor(path, string(src), args)
}

// parseOne reads a text of one module, a StableHLO entry of dynamic
// shapes refined from opts.Arguments.
func parseOne(name, src string, opts CompileOptions) (*hlo.Module, error) {
	if !stablehlo.IsMLIR(src) {
		return hlo.Parse(name, src)
	}
	t, err := stablehlo.ParseOneWith(name, src, stablehlo.Options{Args: opts.shapes()})
	if err != nil {
		return nil, err
	}
	return t.WithoutChecks()
}

// ConstantsAsParameters turns the entry's array constants (of one or
// more dimensions, not empty, of a type a Tensor holds) into parameters
// after m's own, and returns their values: the arguments they now take.
// A module whose inputs are constants (a conformance file, JAX's export
// of a call on concrete values) would have the compiler fold its ops on
// the host with the reference evaluator; with these as arguments the
// device computes them, as it does for a program run on arguments.
// Scalars stay constants (kernels take them as such).
func ConstantsAsParameters(m *hlo.Module) []*Tensor {
	var args []*Tensor
	for _, in := range m.Entry.Instructions {
		if in.Op != hlo.OpConstant || !in.Shape.IsArray() || in.Shape.Rank() == 0 || in.Shape.NumElements() == 0 {
			continue
		}
		x, err := NewTensor(DType(in.Shape.Elem), in.Shape.Dims, in.Literal.Data)
		if err != nil {
			continue // a type no argument can have stays a constant
		}
		in.Op, in.Literal, in.ParamNum = hlo.OpParameter, nil, len(m.Entry.Params)
		m.Entry.Params = append(m.Entry.Params, in)
		args = append(args, x)
	}
	return args
}
