package hlo

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var posRE = regexp.MustCompile(`^fuzz\.hlo:\d+:\d+: `)

// FuzzParse feeds arbitrary text to the parser, the verifier and the
// printer: none may panic, every error carries a position, and whatever
// parses and verifies prints to text that parses again. Seeded with the
// corpus. Run: go test ./hlo -run '^$' -fuzz FuzzParse -fuzztime 10m -timeout 0
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../shared/hlo-corpus/*/*.hlo")
	for _, p := range files {
		if src, err := os.ReadFile(p); err == nil && len(src) < 64<<10 {
			f.Add(string(src))
		}
	}
	f.Add("HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n")
	f.Fuzz(func(t *testing.T, src string) {
		mods, err := ParseModules("fuzz.hlo", src)
		if err != nil {
			if !posRE.MatchString(err.Error()) {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for _, m := range mods {
			if err := Verify(m); err != nil {
				if !posRE.MatchString(err.Error()) {
					t.Fatalf("verifier error without position: %v", err)
				}
			}
		}
		out := Format(mods)
		if _, err := ParseModules("fuzz.hlo", out); err != nil {
			t.Fatalf("printed module does not parse: %v\n%s", err, out)
		}
	})
}
