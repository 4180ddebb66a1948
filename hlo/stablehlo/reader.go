// Package stablehlo reads StableHLO, the MLIR dialect that JAX prints by
// default (jax.jit(f).lower(x).as_text()) and that jax.export, IREE and
// the PJRT plugins take, and translates it into an hlo.Module that the
// rest of vkjit compiles as it compiles HLO text.
//
// It reads MLIR's syntax as JAX and the StableHLO tools print it:
// modules and func.func, the generic form of every op
// ("stablehlo.op"(...) <{...}> ({...}) {...} : (...) -> ...) and the
// custom assembly forms (custom.go), types, attributes and locations;
// the check dialect's ops of StableHLO's conformance tests become
// Checks, compared on the host by the caller. Errors are
// file:line:col: message, and an op or type outside what vkjit runs is
// named.
package stablehlo

import (
	"strings"

	"github.com/vkjit/vkjit/hlo"
)

// IsMLIR reports whether src looks like MLIR text rather than HLO text:
// its first words are module, func.func or sdy.mesh (either form) or an
// attribute alias (#loc), where HLO text starts with HloModule.
func IsMLIR(src string) bool {
	for _, ln := range strings.Split(src, "\n") {
		t := strings.TrimSpace(ln)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		for _, w := range []string{"module", "func.func", "#", `"builtin.module"`, `"func.func"`, "sdy.mesh", `"sdy.mesh"`} {
			if strings.HasPrefix(t, w) {
				return true
			}
		}
		return false
	}
	return false
}

// ParseIR reads every module of a file (// ----- lines separate them)
// into the package's MLIR IR.
func ParseIR(file, src string) ([]*Module, error) {
	var out []*Module
	for _, part := range splitModules(src) {
		p := &parser{s: newScanner(file, part.text, part.line), aliases: map[string]*Attr{}}
		if p.s.peek() == 0 {
			continue // only comments
		}
		m, err := p.parseModule()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

type part struct {
	text string
	line int // where the text starts in the file
}

// splitModules cuts src at // ----- lines, keeping each part's first
// line number so that positions stay true to the file.
func splitModules(src string) []part {
	lines := strings.Split(src, "\n")
	var parts []part
	start := 0
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimSpace(ln), hlo.ModuleSeparator) {
			parts = append(parts, part{strings.Join(lines[start:i], "\n"), start + 1})
			start = i + 1
		}
	}
	return append(parts, part{strings.Join(lines[start:], "\n"), start + 1})
}
