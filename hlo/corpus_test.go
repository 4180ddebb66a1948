package hlo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/internal/shared"
)

// invalidInCorpus lists the corpus modules that XLA's own verifier
// rejects, with what the error must name.
var invalidInCorpus = map[string]string{
	// Marked NEGATIVE in SOURCES.md: concatenated operands disagree.
	"tools_tests_invalid_concat.hlo": "cat.3 (concatenate): operand Arg_2.2 (f32[3,1]) does not match f32[2,1]",
	// A translator test, never verified upstream: its window is 3x3 over a
	// 2x2 kernel (XLA's ShapeInference: "Window dimensions do not match
	// RHS shape").
	"hlo_to_mhlo_import.hlo": "convolution.4 (convolution): window size 3 does not match kernel spatial dimension 2",
}

func corpusFiles(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(shared.Dir(t, "hlo-corpus"), "*", "*.hlo"))
	if len(files) == 0 {
		t.Fatal("the corpus holds no .hlo files")
	}
	return files
}

// TestCorpus parses every module of every corpus file, verifies it (or
// checks that the verifier names the problem), and prints it: the
// printed text parses to the same module, and printing that gives the
// same bytes.
func TestCorpus(t *testing.T) {
	modules := 0
	for _, f := range corpusFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		mods, err := ParseModules(f, string(src))
		require.NoError(t, err, f)
		modules += len(mods)
		var verr error
		for _, m := range mods {
			if err := Verify(m); err != nil && verr == nil {
				verr = err
			}
		}
		if want, bad := invalidInCorpus[filepath.Base(f)]; bad {
			require.Error(t, verr, f)
			require.Contains(t, verr.Error(), want)
		} else {
			require.NoError(t, verr, f)
		}
		out1 := Format(mods)
		mods2, err := ParseModules("fmt1.hlo", out1)
		require.NoError(t, err, "%s: printed text does not parse", f)
		require.Len(t, mods2, len(mods))
		for i := range mods {
			sameModule(t, f, mods[i], mods2[i])
		}
		require.Equal(t, out1, Format(mods2), "%s: fmt is not a fixed point", f)
	}
	t.Logf("%d modules", modules)
}

// sameModule compares two modules structurally.
func sameModule(t *testing.T, f string, a, b *Module) {
	t.Helper()
	require.Equal(t, a.Name, b.Name, f)
	require.Equal(t, a.Entry.Name, b.Entry.Name, f)
	require.Len(t, b.Computations, len(a.Computations), f)
	for i, ca := range a.Computations {
		cb := b.Computations[i]
		require.Equal(t, ca.Name, cb.Name, f)
		require.Equal(t, ca.Root.Name, cb.Root.Name, f)
		require.Len(t, cb.Instructions, len(ca.Instructions), f)
		for j, x := range ca.Instructions {
			y := cb.Instructions[j]
			where := f + ": " + x.Name
			require.Equal(t, x.Name, y.Name, where)
			require.Equal(t, x.Op, y.Op, where)
			require.Equal(t, x.Shape.String(), y.Shape.String(), where)
			require.Equal(t, x.ParamNum, y.ParamNum, where)
			require.Len(t, y.Operands, len(x.Operands), where)
			for k := range x.Operands {
				require.Equal(t, x.Operands[k].Name, y.Operands[k].Name, where)
			}
			require.Len(t, y.Attrs, len(x.Attrs), where)
			for k := range x.Attrs {
				require.Equal(t, x.Attrs[k].Name, y.Attrs[k].Name, where)
				require.Equal(t, x.Attrs[k].Value, y.Attrs[k].Value, where)
			}
			require.Equal(t, x.A, y.A, where)
			if x.Literal != nil {
				require.Equal(t, x.Literal.String(), y.Literal.String(), where)
			}
			require.Len(t, y.Called, len(x.Called), where)
			for k := range x.Called {
				require.Equal(t, x.Called[k].Name, y.Called[k].Name, where)
			}
		}
	}
}

// TestCorpusErrorPositions checks that breaking a corpus file anywhere
// gives a file:line:col error, never a panic.
func TestCorpusErrorPositions(t *testing.T) {
	for _, f := range corpusFiles(t)[:20] {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		s := string(src)
		for _, cut := range []int{len(s) / 3, len(s) / 2, 2 * len(s) / 3} {
			_, err := ParseModules("cut.hlo", s[:cut])
			if err != nil {
				require.Regexp(t, `^cut\.hlo:\d+:\d+: `, err.Error())
			}
			broken := s[:cut] + "= ( }" + s[cut:]
			_, err = ParseModules("cut.hlo", broken)
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), "cut.hlo:"), err.Error())
		}
	}
}
