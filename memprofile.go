package vkjit

import (
	"io"

	"github.com/google/pprof/profile"
)

// WriteMemoryProfile writes the executable's device memory at its
// planned peak in pprof format (as JAX's device_memory_profile does):
// one sample per buffer live then (temporaries in the arena, parameters,
// constants), in bytes, with the HLO instruction that made it as the leaf
// frame and the buffer kind and module above it. Read it with
// `go tool pprof -top FILE`.
func (e *Executable) WriteMemoryProfile(w io.Writer) error {
	p := e.prog
	prof := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "space", Unit: "bytes"}},
		DefaultSampleType: "space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	funcs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := funcs[name]; ok {
			return l
		}
		f := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: name, SystemName: name}
		prof.Function = append(prof.Function, f)
		l := &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: f}}}
		prof.Location = append(prof.Location, l)
		funcs[name] = l
		return l
	}
	for _, b := range p.LiveAtPeak() {
		buf := p.Buffers[b]
		size := buf.Size
		if size < 4 {
			size = 4
		}
		prof.Sample = append(prof.Sample, &profile.Sample{
			Location: []*profile.Location{loc(buf.Name), loc(buf.Kind.String()), loc(p.Module)},
			Value:    []int64{size},
			Label:    map[string][]string{"kind": {buf.Kind.String()}, "shape": {buf.Shape.String()}},
		})
	}
	return prof.Write(w)
}
