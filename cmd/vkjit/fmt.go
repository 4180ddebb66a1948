package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vkjit/vkjit"
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/hlo/stablehlo"
	"github.com/vkjit/vkjit/lower"
)

// cmdFmt prints each module of a file in vkjit's canonical HLO text,
// separated by "// -----" lines as in the input. Shapes left out of the
// input are filled in when the module verifies. A StableHLO file needs
// --hlo, which prints the HLO it becomes: vkjit prints no StableHLO.
// --plan prints instead what each module compiles to (no device needed):
// the kernel plan, buffers, kernels and steps (lower.Program.Describe).
func cmdFmt(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fmt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asHLO := fs.Bool("hlo", false, "print the HLO text a StableHLO module becomes")
	plan := fs.Bool("plan", false, "print the compiled plan instead of the HLO")
	target := fs.String("target", "lavapipe", "with --plan: the device to compile for (lavapipe; lavapipe-512, its 16 lanes on AMD AVX-512 hosts; or minimum: Vulkan's minimum limits)")
	noFuse := fs.Bool("no-fuse", false, "with --plan: every instruction its own kernel")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("fmt: %w", err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("fmt: want one file (usage: vkjit fmt [--hlo] [--plan [--target T] [--no-fuse]] GRAPH)")
	}
	src, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if *plan {
		wide := lower.LlvmpipeTarget
		wide.SubgroupSize = 16
		tg, ok := map[string]lower.Target{"lavapipe": lower.LlvmpipeTarget, "lavapipe-512": wide, "minimum": lower.DefaultTarget}[*target]
		if !ok {
			return fmt.Errorf("fmt: --target %q: want lavapipe, lavapipe-512 or minimum", *target)
		}
		return printPlans(pos[0], string(src), tg, lower.Options{NoFuse: *noFuse}, out)
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

// printPlans compiles each module of a file for tg and describes it.
func printPlans(path, src string, tg lower.Target, opts lower.Options, out io.Writer) error {
	mods, err := vkjit.ParseText(path, src)
	if err != nil {
		return err
	}
	for i, m := range mods {
		if i > 0 {
			if _, err := io.WriteString(out, "// -----\n"); err != nil {
				return err
			}
		}
		prog, err := lower.Compile(m, tg, opts)
		if err != nil {
			return err
		}
		if err := prog.Describe(out); err != nil {
			return err
		}
	}
	return nil
}
