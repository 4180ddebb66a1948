package hlo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCorpusDebug(t *testing.T) {
	files, _ := filepath.Glob("../../shared/hlo-corpus/*/*.hlo")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		mods, err := ParseModules(f, string(src))
		if err != nil {
			t.Log(err)
			continue
		}
		for _, m := range mods {
			if err := Verify(m); err != nil {
				t.Log("VERIFY", err)
			}
		}
	}
}
