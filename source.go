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
	if !stablehlo.IsMLIR(src) {
		return hlo.ParseModules(name, src)
	}
	ts, errs, err := stablehlo.Parse(name, src)
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
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseText(path, string(src))
}

// parseOne reads a text of one module.
func parseOne(name, src string) (*hlo.Module, error) {
	if !stablehlo.IsMLIR(src) {
		return hlo.Parse(name, src)
	}
	return stablehlo.ParseModule(name, src)
}
