//go:build linux

package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMallocTunables checks that `vkjit run` starts itself again under
// glibc's allocator tunables (cmd/vkjit/tunables_linux.go) with its
// arguments and the rest of its environment, and that a tunable the
// user set wins. The graph is a FIFO: once the process has it open (the
// image that runs the command: the exec comes before Go's main) it
// waits for the graph while the test reads the environment that image
// started with (/proc/PID/environ; an exec keeps the PID). glibc
// rewrites GLIBC_TUNABLES's value in place as it parses it, so the
// test looks for each setting in the raw bytes.
func TestMallocTunables(t *testing.T) {
	const graph = "HloModule t\nENTRY e {\n  a = f32[2] constant({1.5, -2})\n  ROOT n = f32[2] negate(a)\n}\n"
	ours := []string{"glibc.malloc.hugetlb=1", "glibc.malloc.top_pad=33554432"}
	for _, tc := range []struct {
		name, user    string
		want, notWant []string
	}{
		{"added", "", ours, nil},
		{"kept beside the user's", "glibc.malloc.tcache_count=0", append([]string{"glibc.malloc.tcache_count=0"}, ours...), nil},
		{"the user's wins", "glibc.malloc.hugetlb=0", []string{"glibc.malloc.hugetlb=0"}, ours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "graph.hlo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			cmd := exec.Command(vkjitBin, "run", fifo)
			cmd.Env = append(os.Environ(), "GLIBC_TUNABLES="+tc.user, "VKJIT_TEST_MARK=kept")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			w, err := openWriter(fifo)
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("vkjit run never opened its graph: %v; %s", err, out.String())
			}
			env, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
			require.NoError(t, err)
			_, err = w.WriteString(graph)
			require.NoError(t, err)
			require.NoError(t, w.Close()) // the run reads the graph and goes on
			require.NoError(t, cmd.Wait(), "%s", out.String())
			vars := strings.Split(string(env), "\x00")
			require.Contains(t, vars, "VKJIT_TEST_MARK=kept", "the rest of the environment goes along")
			_, tun, _ := strings.Cut(string(env), "GLIBC_TUNABLES=")
			tun = tun[:min(len(tun), 160)] // the value, NULs and all, and what follows it
			for _, s := range tc.want {
				require.Contains(t, tun, s)
			}
			for _, s := range tc.notWant {
				require.NotContains(t, tun, s)
			}
			require.Contains(t, out.String(), "out0: f32[2] [-1.5 2]", "the arguments go along")
		})
	}
}

// openWriter opens the FIFO for writing once a reader has it open,
// giving up after a while (a process that died first never opens it).
func openWriter(fifo string) (*os.File, error) {
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		var f *os.File
		if f, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			return f, nil
		}
	}
	return nil, err // ENXIO: no reader
}
