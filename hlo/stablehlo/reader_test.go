package stablehlo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/internal/shared"
)

func suiteFiles(t *testing.T) []string {
	dir := shared.Dir(t, "stablehlo-suite")
	var files []string
	for _, pat := range []string{"testdata/*.mlir", "interpret/*.mlir", "interpret/*/*.mlir"} {
		f, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, f...)
	}
	require.NotEmpty(t, files)
	return files
}

// TestParseSuite reads every file of the StableHLO suite into the IR.
func TestParseSuite(t *testing.T) {
	failed := 0
	for _, f := range suiteFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		if _, err := ParseIR(f, string(src)); err != nil {
			failed++
			if failed < 30 {
				t.Errorf("%v", err)
			}
		}
	}
	require.Zero(t, failed)
}

// TestTranslateSuite translates every module of the suite: each either
// becomes a verified HLO module or is refused as Unsupported, by name.
// Any other error is a defect of the reader or of the translation.
func TestTranslateSuite(t *testing.T) {
	modules, refused := 0, map[string]int{}
	for _, f := range suiteFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		_, errs, err := Parse(f, string(src))
		require.NoError(t, err)
		for _, e := range errs {
			modules++
			var u *Unsupported
			switch {
			case e == nil:
			case errors.As(e, &u):
				refused[u.Category]++
			default:
				t.Errorf("%v", e)
			}
		}
	}
	t.Logf("%d modules; refused by category: %v", modules, refused)
}

// TestTranslationDeterministic: the same text translates to the same
// module every time (names included: the compile cache's key is the
// module's text). Constants a region captures were once copied into it in
// map order.
func TestTranslationDeterministic(t *testing.T) {
	src := `func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c1 = stablehlo.constant dense<1.0> : tensor<f32>
  %c2 = stablehlo.constant dense<2.0> : tensor<f32>
  %c3 = stablehlo.constant dense<3.0> : tensor<f32>
  %c4 = stablehlo.constant dense<4.0> : tensor<f32>
  %c5 = stablehlo.constant dense<5.0> : tensor<f32>
  %r = stablehlo.while(%a = %x) : tensor<f32>
  cond {
    %s = stablehlo.add %c1, %c2 : tensor<f32>
    %t = stablehlo.add %s, %c3 : tensor<f32>
    %u = stablehlo.multiply %t, %c4 : tensor<f32>
    %v = stablehlo.subtract %u, %c5 : tensor<f32>
    %p = stablehlo.compare LT, %a, %v : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %b = stablehlo.add %a, %c1 : tensor<f32>
    stablehlo.return %b : tensor<f32>
  }
  return %r : tensor<f32>
}`
	first, err := ParseModule("d.mlir", src)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		m, err := ParseModule("d.mlir", src)
		require.NoError(t, err)
		require.Equal(t, first.String(), m.String(), "translation %d differs", i)
	}
}

// TestIsMLIR tells StableHLO text from HLO text by its first words.
func TestIsMLIR(t *testing.T) {
	for src, want := range map[string]bool{
		"module @jit_f {\n}":                            true,
		"// a comment\nfunc.func @main() {\n}":          true,
		"#loc = loc(unknown)\nmodule {\n}":              true,
		"sdy.mesh @mesh = <[\"x\"=1]>\nfunc.func @main": true,
		"\"sdy.mesh\"() <{}> : () -> ()":                true,
		"\"builtin.module\"() ({\n}) : () -> ()":        true,
		"HloModule m\nENTRY e {\n}":                     false,
		"":                                              false,
	} {
		require.Equal(t, want, IsMLIR(src), "%q", src)
	}
}
