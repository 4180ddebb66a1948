package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/stablehlo"
)

// cmdFmt prints each module of a file in vkjit's canonical HLO text,
// separated by "// -----" lines as in the input. Shapes left out of the
// input are filled in when the module verifies. A StableHLO file needs
// --hlo, which prints the HLO it becomes: vkjit prints no StableHLO.
func cmdFmt(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asHLO := fs.Bool("hlo", false, "print the HLO text a StableHLO module becomes")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("fmt: %v", err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("fmt: want one file (usage: vkjit fmt [--hlo] GRAPH)")
	}
	src, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if stablehlo.IsMLIR(string(src)) && !*asHLO {
		return fmt.Errorf("fmt: %s is StableHLO, which vkjit does not print: --hlo prints the HLO it becomes", pos[0])
	}
	mods, err := vkjit.ParseText(pos[0], string(src))
	if err != nil {
		return err
	}
	for _, m := range mods {
		_ = hlo.Verify(m) // fills in omitted shapes; fmt prints invalid modules too
	}
	_, err = io.WriteString(out, hlo.Format(mods))
	return err
}
