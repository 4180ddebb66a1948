package spirv

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoTools means the SPIRV-Tools programs are not installed.
var ErrNoTools = errors.New("spirv: spirv-val/spirv-dis not found; install them with: apt-get install spirv-tools")

// TargetEnv is the spirv-val target environment vkjit's kernels must
// satisfy: Vulkan 1.2, the API version vkjit asks for.
const TargetEnv = "vulkan1.2"

// Validate runs spirv-val on a module.
func Validate(words []uint32) error {
	if _, err := exec.LookPath("spirv-val"); err != nil {
		return ErrNoTools
	}
	cmd := exec.Command("spirv-val", "--target-env", TargetEnv, "-")
	cmd.Stdin = bytes.NewReader(Bytes(words))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("spirv-val: %s", strings.TrimSpace(string(out)))
	}
	return nil
}

// Disassemble returns spirv-dis's text for a module, without the header
// comment lines, for golden tests and debugging.
func Disassemble(words []uint32) (string, error) {
	if _, err := exec.LookPath("spirv-dis"); err != nil {
		return "", ErrNoTools
	}
	cmd := exec.Command("spirv-dis", "--no-color", "--raw-id", "-")
	cmd.Stdin = bytes.NewReader(Bytes(words))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("spirv-dis: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var b strings.Builder
	for _, ln := range strings.SplitAfter(string(out), "\n") {
		if strings.HasPrefix(ln, ";") {
			continue
		}
		b.WriteString(ln)
	}
	return b.String(), nil
}
