package lower

import (
	"fmt"
	"io"
	"strings"
)

// Describe writes the program as text, a line per buffer, kernel and
// step, its sub-programs after it: what `vkjit fmt --plan` prints and
// shaders/ keeps beside its kernels' disassembly, so that a change's
// effect on the plan (a kernel more, a buffer moved, a fusion lost) reads
// in review as a diff.
func (p *Program) Describe(w io.Writer) error {
	var b strings.Builder
	p.describe(&b, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Program) describe(b *strings.Builder, indent string) {
	line := func(format string, args ...any) {
		b.WriteString(indent)
		fmt.Fprintf(b, format, args...)
		b.WriteByte('\n')
	}
	line("program %s: %d buffers, %d kernels, %d steps; arena %d B, live bound %d B, temporaries %d B, fused away %d B",
		p.Module, len(p.Buffers), len(p.Kernels), len(p.Steps), p.ArenaSize, p.LiveBound, p.TempBytes, p.FusedBytes)
	for i, buf := range p.Buffers {
		where := ""
		switch buf.Kind {
		case BufParam:
			where = fmt.Sprintf(" parameter leaf %d", buf.Param)
			switch {
			case buf.Alias != 0:
				where += fmt.Sprintf(", donated to b%d", buf.Alias-1)
			case buf.Donated:
				where += fmt.Sprintf(", donated @%d", buf.Offset)
			}
		case BufTemp:
			where = fmt.Sprintf(" @%d", buf.Offset)
			if buf.Alias != 0 {
				where = fmt.Sprintf(" in b%d's memory", buf.Alias-1)
			}
		}
		line("  b%d %s %s %s, %d B%s", i, buf.Kind, buf.Name, buf.Shape, buf.Size, where)
	}
	for i, k := range p.Kernels {
		extra := ""
		if k.Vector > 1 {
			extra += fmt.Sprintf(", %d elements per invocation", k.Vector)
		}
		if k.Lanes > 1 {
			extra += fmt.Sprintf(", %d invocations per element", k.Lanes)
		}
		for _, t := range k.Texel {
			extra += fmt.Sprintf(", texel view of binding %d (%d B)", t.Binding, t.Bytes)
		}
		for _, b := range k.Addressed {
			extra += fmt.Sprintf(", binding %d by device address", b)
		}
		line("  k%d %s: workgroup %dx%dx%d, %d bindings, %d B push, %d words%s",
			i, k.Name, k.LocalSize[0], k.LocalSize[1], k.LocalSize[2], k.Bindings, k.PushSize, len(k.Words), extra)
	}
	for _, kp := range p.Plan {
		line("  plan %s", kp)
	}
	for i, s := range p.Steps {
		switch s.Kind {
		case StepDispatch, StepLoop:
			verb := "dispatch"
			if s.Kind == StepLoop {
				verb = fmt.Sprintf("device loop until b%d is 0:", s.Pred)
				if s.Dispatches > 0 {
					verb = fmt.Sprintf("device loop in %d dispatches, b%d checked after:", s.Dispatches, s.Pred)
				}
			}
			reads, writes := s.Buffers[:len(s.Buffers)-s.Writes], s.Buffers[len(s.Buffers)-s.Writes:]
			extra := ""
			if len(s.Fused) > 0 {
				extra += " fusing " + strings.Join(s.Fused, " ")
			}
			if len(s.InPlace) > 0 {
				extra += " in place over " + bufList(s.InPlace)
			}
			if s.AfterWrites {
				extra += "; barrier before"
			}
			line("  s%d %s %s k%d %dx%dx%d push %v: %s -> %s%s", i, s.Inst, verb, s.Kernel,
				s.Groups[0], s.Groups[1], s.Groups[2], s.Push, bufList(reads), bufList(writes), extra)
		case StepWhile:
			extra := ""
			if len(s.InPlace) > 0 {
				extra = " in place over " + bufList(s.InPlace)
			}
			if c := s.Counter; c != nil {
				extra += fmt.Sprintf("; counted: b%d %s %d, step %d", s.In[0][c.Leaf], c.Dir, c.Limit, c.Step)
			}
			line("  s%d %s while sub%d do sub%d: %s -> %s%s", i, s.Inst, s.Cond, s.Body, bufList(s.In[0]), bufList(s.Out), extra)
		case StepConditional:
			var bs []string
			for j, br := range s.Branches {
				bs = append(bs, fmt.Sprintf("sub%d %s", br, bufList(s.In[j])))
			}
			line("  s%d %s conditional on b%d: %s -> %s", i, s.Inst, s.Pred, strings.Join(bs, ", "), bufList(s.Out))
		}
	}
	for i, sub := range p.Subs {
		line("  sub%d:", i)
		sub.describe(b, indent+"    ")
	}
}

func bufList(bs []int) string {
	parts := make([]string, len(bs))
	for i, x := range bs {
		parts[i] = fmt.Sprintf("b%d", x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
