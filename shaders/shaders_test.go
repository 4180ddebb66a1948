package shaders

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/spirv"
)

var update = flag.Bool("update", false, "write the golden files anew")

// gpuTarget is a typical discrete GPU (limits and features as NVIDIA's
// and AMD's current drivers report them): 32-wide subgroups with
// shuffles, 1024 invocations a workgroup, 16- and 8-bit storage, exact
// f16, no loop bound. Its kernels are the GPU forms: reductions by a
// subgroup or workgroup per output, GEMMs through shared memory.
var gpuTarget = lower.Target{
	SubgroupSize:       32,
	SubgroupShuffle:    true,
	MaxWorkgroupSize:   1024,
	MaxWorkgroupCount:  [3]uint32{1<<31 - 1, 65535, 65535},
	MaxStorageBuffers:  1 << 20,
	MaxStorageRange:    1<<32 - 1,
	BufferAddress:      true,
	MaxPushBytes:       256,
	Float64:            true,
	Int64:              true,
	Storage16:          true,
	Storage8:           true,
	DenormPreserve32:   true,
	DenormPreserve64:   true,
	Contracts:          true,
	SignedZeroInfNan32: true,
	SignedZeroInfNan64: true,
	StorageAlign:       16,
}

var targets = []struct {
	name string
	tg   lower.Target
}{
	{"lavapipe", lower.LlvmpipeTarget},
	{"gpu", gpuTarget},
}

// TestGolden compiles every program for every target and compares the
// plan and each kernel's disassembly with the files kept.
func TestGolden(t *testing.T) {
	progs, err := filepath.Glob(filepath.Join("programs", "*.hlo"))
	require.NoError(t, err)
	require.NotEmpty(t, progs)
	for _, tgt := range targets {
		for _, path := range progs {
			name := strings.TrimSuffix(filepath.Base(path), ".hlo")
			t.Run(tgt.name+"/"+name, func(t *testing.T) {
				files := generate(t, path, tgt.tg)
				dir := filepath.Join(tgt.name, name)
				if *update {
					write(t, dir, files)
				}
				compare(t, dir, files)
			})
		}
	}
}

// generate compiles the program and returns its golden files by name.
func generate(t *testing.T, path string, tg lower.Target) map[string]string {
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := hlo.Parse(path, string(src))
	require.NoError(t, err)
	prog, err := lower.Compile(m, tg, lower.Options{})
	require.NoError(t, err)
	files := map[string]string{}
	var plan bytes.Buffer
	require.NoError(t, prog.Describe(&plan))
	files["plan.txt"] = plan.String()
	add := func(prefix string, p *lower.Program) {}
	add = func(prefix string, p *lower.Program) {
		for i, k := range p.Kernels {
			require.NoError(t, spirv.Validate(k.Words), k.Name)
			dis, err := spirv.Disassemble(k.Words)
			require.NoError(t, err)
			files[fmt.Sprintf("%sk%d_%s.spvasm", prefix, i, fileSafe(k.Name))] = dis
		}
		for i, sub := range p.Subs {
			add(fmt.Sprintf("%ssub%d_", prefix, i), sub)
		}
	}
	add("", prog)
	return files
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func fileSafe(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// write replaces dir's files with files.
func write(t *testing.T, dir string, files map[string]string) {
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
}

// compare fails on a file that differs, is missing, or is kept but no
// longer generated.
func compare(t *testing.T, dir string, files map[string]string) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, "no golden files: run make shaders")
	var kept []string
	for _, e := range entries {
		kept = append(kept, e.Name())
	}
	var want []string
	for name := range files {
		want = append(want, name)
	}
	slices.Sort(want)
	require.Equal(t, want, kept, "%s: the kernels generated are not the ones kept; if the change is meant, run make shaders and review the diff", dir)
	for _, name := range want {
		old, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, string(old), files[name], "%s/%s differs; if the change is meant, run make shaders and review the diff", dir, name)
	}
}
