package stablehlo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkjit/vkjit/hlo"
)

// FuzzParse feeds the reader mutated StableHLO: whatever the text, Parse
// returns (no panic), every error it gives is placed (file:line:col), and
// every module it translates prints as HLO text that parses and verifies
// again. The seeds are testdata's programs, TestErrors' texts and, where
// ../shared is beside the checkout, the StableHLO suite's files:
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 10m -timeout 0 ./hlo/stablehlo
func FuzzParse(f *testing.F) {
	var seeds []string
	for _, pat := range []string{"testdata/*.mlir", "../../../shared/stablehlo-suite/testdata/*.mlir", "../../../shared/stablehlo-suite/interpret/*.mlir"} {
		files, _ := filepath.Glob(pat)
		seeds = append(seeds, files...)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(string(b))
		}
	}
	for _, c := range errorCases {
		f.Add(c.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ts, errs, err := Parse("f.mlir", src)
		if err != nil {
			placed(t, err)
			return
		}
		for i, e := range errs {
			if e != nil {
				placed(t, e)
				continue
			}
			text := ts[i].HLO.String()
			m, err := hlo.Parse("again.hlo", text)
			if err != nil {
				t.Fatalf("the translation does not parse back: %v\n%s", err, text)
			}
			if err := hlo.Verify(m); err != nil {
				t.Fatalf("the translation does not verify again: %v\n%s", err, text)
			}
		}
	})
}

func placed(t *testing.T, err error) {
	t.Helper()
	var he *hlo.Error
	if !errors.As(err, &he) || he.Pos.Line < 1 || !strings.HasPrefix(err.Error(), "f.mlir:") {
		t.Fatalf("an error without its place: %v", err)
	}
}
