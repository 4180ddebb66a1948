package vk_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkjit/vkjit/vk"
)

// TestLavapipeWidth: with LP_NATIVE_VECTOR_WIDTH unset, lavapipe runs 512
// bits wide (16 lanes) on an AMD AVX-512 host and at Mesa's 256 bits (8
// lanes) elsewhere; a width the user sets is left as it is. The choice
// is made once a process, so each case runs in a child process of this
// test binary.
func TestLavapipeWidth(t *testing.T) {
	if os.Getenv("VKJIT_TEST_WIDTH_CHILD") != "" {
		inst, err := vk.NewInstance(false)
		require.NoError(t, err)
		defer inst.Destroy()
		devs, err := inst.Devices()
		require.NoError(t, err)
		for _, d := range devs {
			if strings.Contains(d.Name, "llvmpipe") {
				fmt.Printf("lanes=%d set_here=%v var=%s\n", d.SubgroupSize, vk.LavapipeWidthSetHere(), os.Getenv(vk.LavapipeWidthVar))
				return
			}
		}
		fmt.Println("no llvmpipe")
		return
	}
	unset := uint32(8)
	if vk.WideLavapipeHost() {
		unset = 16
	}
	for _, c := range []struct {
		env     string // "" leaves the variable unset
		lanes   uint32
		setHere bool
	}{{"", unset, unset == 16}, {"256", 8, false}, {"512", 16, false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLavapipeWidth$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, vk.LavapipeWidthVar+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "VKJIT_TEST_WIDTH_CHILD=1")
		if c.env != "" {
			cmd.Env = append(cmd.Env, vk.LavapipeWidthVar+"="+c.env)
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		if strings.Contains(string(out), "no llvmpipe") {
			t.Skip("no lavapipe device")
		}
		want := fmt.Sprintf("lanes=%d set_here=%v var=", c.lanes, c.setHere)
		require.Contains(t, string(out), want, "%s=%q", vk.LavapipeWidthVar, c.env)
	}
}
