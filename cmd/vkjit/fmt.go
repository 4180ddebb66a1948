package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
)

// cmdFmt prints each module of a file in vkjit's canonical HLO text,
// separated by "// -----" lines as in the input. Shapes left out of the
// input are filled in when the module verifies. A StableHLO file prints
// as the HLO it becomes.
func cmdFmt(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("fmt: %v", err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("fmt: want one file (usage: vkjit fmt GRAPH)")
	}
	mods, err := vkjit.ParseFile(pos[0])
	if err != nil {
		return err
	}
	for _, m := range mods {
		_ = hlo.Verify(m) // fills in omitted shapes; fmt prints invalid modules too
	}
	_, err = io.WriteString(out, hlo.Format(mods))
	return err
}
