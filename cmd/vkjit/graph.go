package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/outfile"
	"github.com/vkjit/vkjit/internal/target"
	"github.com/vkjit/vkjit/lower"
)

// cmdGraph draws a module's entry computation with its fusion clusters:
// one box per kernel dispatch holding the instructions it computes.
func cmdGraph(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the drawing here: .dot, .svg or .png (default: DOT on stdout)")
	device := fs.String("device", "", "plan for this device (default: VKJIT_DEVICE, else best type; a conservative generic target without one)")
	noFuse := fs.Bool("no-fuse", false, "draw the plan without fusion")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("graph: want one HLO file (usage: vkjit graph [-o FILE] GRAPH.hlo)")
	}
	mods, err := vkjit.ParseFile(pos[0])
	if err != nil {
		return err
	}
	tg := lower.DefaultTarget
	if d, err := chosenDevice(*device); err == nil {
		tg = target.For(d)
	}
	prog, err := lower.Compile(mods[0], tg, lower.Options{NoFuse: *noFuse})
	if err != nil {
		return err
	}
	dot := drawDOT(mods[0], prog)
	switch ext := strings.ToLower(filepath.Ext(*out)); {
	case *out == "":
		_, err = io.WriteString(stdout, dot)
		return err
	case ext == ".dot" || ext == ".gv":
		return outfile.WriteFile(*out, []byte(dot))
	case ext == ".svg" || ext == ".png":
		bin, err := exec.LookPath("dot")
		if err != nil {
			return fmt.Errorf("graph: %s needs graphviz's dot (apt-get install graphviz), or write .dot", ext)
		}
		// dot draws to its standard output, and outfile writes that, so
		// that -o follows the same rules as every file vkjit writes.
		cmd := exec.Command(bin, "-T"+ext[1:])
		cmd.Stdin = strings.NewReader(dot)
		var img, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &img, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("graph: dot: %v: %s", err, strings.TrimSpace(stderr.String()))
		}
		return outfile.WriteFile(*out, img.Bytes())
	default:
		return fmt.Errorf("graph: %q: write .dot, .svg or .png", *out)
	}
}

// drawDOT renders the entry computation: instructions as nodes, operands
// as edges, each dispatch's instructions inside one cluster box.
func drawDOT(m *hlo.Module, p *lower.Program) string {
	var b strings.Builder
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	fmt.Fprintf(&b, "digraph %s {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n", q(m.Name))
	placed := map[string]bool{}
	where := map[string][]string{} // the dispatches computing each instruction
	for i, st := range p.Steps {
		if st.Kind.IsDispatch() {
			for _, n := range append([]string{st.Inst}, st.Fused...) {
				where[n] = append(where[n], fmt.Sprint(i))
			}
		}
	}
	for i, st := range p.Steps {
		if !st.Kind.IsDispatch() {
			continue
		}
		names := append([]string{st.Inst}, st.Fused...)
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s; style=rounded; color=\"#4060c0\";\n", i, q(fmt.Sprintf("dispatch %d: %s", i, p.Kernels[st.Kernel].Name)))
		for _, n := range names {
			if !placed[n] {
				fmt.Fprintf(&b, "    %s;\n", q(n))
				placed[n] = true
			}
		}
		b.WriteString("  }\n")
	}
	for _, in := range m.Entry.Instructions {
		label := fmt.Sprintf("%s\n%s %s", in.Name, in.Op, in.Shape)
		if w := where[in.Name]; len(w) > 1 {
			label += "\nrecomputed in dispatches " + strings.Join(w, ", ")
		}
		style := ""
		switch {
		case in.Op == hlo.OpParameter:
			style = ", style=filled, fillcolor=\"#e0f0e0\""
		case in.Op == hlo.OpConstant:
			style = ", style=filled, fillcolor=\"#f0f0f0\""
		case in == m.Entry.Root:
			style = ", penwidth=2"
		}
		fmt.Fprintf(&b, "  %s [label=%s%s];\n", q(in.Name), q(label), style)
		for _, o := range in.Operands {
			fmt.Fprintf(&b, "  %s -> %s;\n", q(o.Name), q(in.Name))
		}
	}
	b.WriteString("}\n")
	return b.String()
}
