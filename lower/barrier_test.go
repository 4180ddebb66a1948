package lower

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/hlotest"
)

// hazards lists the dispatches of p (and its sub-programs) that touch
// memory an earlier dispatch since the last barrier wrote, or write
// memory one read, with no barrier before them. Its model of the
// runtime's memory is its own, not planBarriers': a temporary is its
// range of its program's arena (a donated parameter's buffer where it
// has an Alias), anything else its own buffer, and a while step's
// result j may be its initial element j's memory (a loop that runs no
// iteration, or updates that element in place). The runtime finishes
// every dispatch around a control step.
func hazards(p *Program) []string {
	type span struct {
		space  int // -1: the arena
		lo, hi int64
	}
	own := func(b int) span {
		buf := p.Buffers[b]
		switch {
		case buf.InArena():
			return span{-1, buf.Offset, buf.Offset + PaddedSize(buf.Size)}
		case buf.Kind == BufTemp && buf.Alias != 0:
			return span{buf.Alias - 1, 0, PaddedSize(buf.Size)}
		}
		return span{b, 0, PaddedSize(buf.Size)}
	}
	mem := map[int][]span{}
	at := func(b int) []span {
		if m, ok := mem[b]; ok {
			return m
		}
		return []span{own(b)}
	}
	for _, st := range p.Steps {
		if st.Kind == StepWhile {
			for j, out := range st.Out {
				mem[out] = append([]span{own(out)}, at(st.In[0][j])...)
			}
		}
	}
	meet := func(xs, ys []span) bool {
		for _, x := range xs {
			for _, y := range ys {
				if x.space == y.space && x.lo < y.hi && y.lo < x.hi {
					return true
				}
			}
		}
		return false
	}
	var out []string
	var read, wrote []span
	for i, st := range p.Steps {
		if st.Kind != StepDispatch {
			read, wrote = nil, nil
			continue
		}
		if st.AfterWrites {
			read, wrote = nil, nil
		}
		nr := len(st.Buffers) - st.Writes
		for j, b := range st.Buffers {
			if meet(at(b), wrote) || j >= nr && meet(at(b), read) {
				out = append(out, fmt.Sprintf("%s step %d (%s) b%d", p.Module, i, st.Inst, b))
			}
		}
		for j, b := range st.Buffers {
			if j < nr {
				read = append(read, at(b)...)
			} else {
				wrote = append(wrote, at(b)...)
			}
		}
	}
	for _, sub := range p.Subs {
		out = append(out, hazards(sub)...)
	}
	return out
}

// TestBarriersCoverLoopResults: no dispatch goes without the barrier the
// runtime's memory needs, in programs whose loops update their state in
// place and whose temporaries then reuse that state's arena range. An
// eigendecomposition of order 17 (LAPACK's geev, a host-driven dlahqr
// loop) had five such writes after reads on an H200, which overlapped
// the dispatches and read half-written values; lavapipe runs one
// dispatch after another and showed nothing. Also the loop testdata and
// the corpus's end-to-end modules, their loops of known trip counts on
// the device too (DeviceLoops).
func TestBarriersCoverLoopResults(t *testing.T) {
	geev := `HloModule eig
ENTRY e {
  a = f32[1,17,17] parameter(0)
  ROOT r = (f32[1,17], f32[1,17], c64[1,17,17], c64[1,17,17], s32[1]) custom-call(a), custom_call_target="lapack_sgeev_ffi", backend_config={compute_left = 78 : ui8, compute_right = 86 : ui8}
}`
	files := map[string]string{"geev": geev}
	paths, err := filepath.Glob("testdata/loops/*.hlo")
	require.NoError(t, err)
	corpus, _ := hlotest.CorpusE2E(t)
	for _, f := range append(paths, corpus...) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		files[f] = string(b)
	}
	for name, src := range files {
		m, err := hlo.Parse(name, src)
		require.NoError(t, err, name)
		for _, tg := range []Target{LlvmpipeTarget, desktop} {
			for _, opts := range []Options{{}, {DeviceLoops: true}} {
				p, err := Compile(m, tg, opts)
				if err != nil {
					continue // a module this target refuses: not this test's
				}
				require.Empty(t, hazards(p), "%s (%+v): dispatches without the barrier they need", name, opts)
			}
		}
	}
}
