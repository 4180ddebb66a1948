package cache

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("VKJIT_CACHE_CHILD"); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(m.Run())
}

// child is one of the processes of TestManyProcesses: it writes and
// reads shared keys; every entry it reads must be whole.
func child(dir string) int {
	c, err := Open(dir, 1<<20)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bad := 0
	c.Warn = func(s string) { fmt.Fprintln(os.Stderr, s); bad++ }
	for i := 0; i < 200; i++ {
		key := Key([]byte(fmt.Sprint(i % 20)))
		want := bytes.Repeat([]byte{byte(i % 20)}, 1000+i%20)
		if got, ok := c.Get(key); ok && !bytes.Equal(got, want) {
			fmt.Fprintln(os.Stderr, "wrong contents for", i%20)
			return 1
		}
		if err := c.Put(key, want); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if bad > 0 {
		return 1
	}
	return 0
}

func TestPutGet(t *testing.T) {
	c, err := Open(t.TempDir(), 0)
	require.NoError(t, err)
	k := Key([]byte("module"), []byte("options"))
	require.NotEqual(t, k, Key([]byte("moduleo"), []byte("ptions")), "parts are length-prefixed")
	_, ok := c.Get(k)
	require.False(t, ok)
	require.NoError(t, c.Put(k, []byte("payload")))
	got, ok := c.Get(k)
	require.True(t, ok)
	require.Equal(t, []byte("payload"), got)
	st, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, 1, st.Entries)
	require.NoError(t, c.Clear())
	st, _ = c.Stats()
	require.Zero(t, st.Entries)
}

// TestDamagedEntries: corrupt, truncated, foreign and other-format
// entries are misses, reported and removed.
func TestDamagedEntries(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 0)
	require.NoError(t, err)
	var warnings []string
	c.Warn = func(s string) { warnings = append(warnings, s) }
	damage := map[string]func([]byte) []byte{
		"corrupt":   func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)-3] },
		"header":    func(b []byte) []byte { return b[:10] },
		"foreign":   func(b []byte) []byte { return []byte("not a cache entry at all, longer than a header") },
		"format":    func(b []byte) []byte { b[4] = 99; return b },
		// Another key's whole, valid entry copied over this one.
		"renamed": func([]byte) []byte { return encode(Key([]byte("another module")), []byte("another program")) },
	}
	for name, f := range damage {
		k := Key([]byte(name))
		require.NoError(t, c.Put(k, []byte("some payload bytes")))
		p := filepath.Join(dir, k+".vkjit")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, f(b), 0o644))
		_, ok := c.Get(k)
		require.False(t, ok, name)
		_, err = os.Stat(p)
		require.True(t, os.IsNotExist(err), "%s: the damaged entry is removed", name)
		// And it is rebuilt on the next Put.
		require.NoError(t, c.Put(k, []byte("rebuilt")))
		got, ok := c.Get(k)
		require.True(t, ok)
		require.Equal(t, []byte("rebuilt"), got)
	}
	require.Len(t, warnings, len(damage))
	require.Contains(t, strings.Join(warnings, "\n"), "checksum mismatch")
	require.Contains(t, strings.Join(warnings, "\n"), "copied or renamed?")
}

// TestLeastRecentlyUsed: over the limit, the entries used longest ago go.
func TestLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 3*(headerSize+64+1000)) // three entries: header, key, payload
	require.NoError(t, err)
	keys := []string{Key([]byte("a")), Key([]byte("b")), Key([]byte("c")), Key([]byte("d"))}
	old := time.Now().Add(-time.Hour)
	for i, k := range keys[:3] {
		require.NoError(t, c.Put(k, make([]byte, 1000)))
		at := old.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(filepath.Join(dir, k+".vkjit"), at, at))
	}
	_, ok := c.Get(keys[0]) // a is now the most recently used
	require.True(t, ok)
	require.NoError(t, c.Put(keys[3], make([]byte, 1000)))
	_, ok = c.Get(keys[1])
	require.False(t, ok, "b was used least recently")
	for _, k := range []string{keys[0], keys[2], keys[3]} {
		_, ok = c.Get(k)
		require.True(t, ok)
	}
}

// TestManyProcesses: 8 processes share one directory at once; all
// succeed, and every entry left is whole.
func TestManyProcesses(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := 0; i < 8; i++ {
		cmd := exec.Command(exe, "-test.run", "^$")
		cmd.Env = append(os.Environ(), "VKJIT_CACHE_CHILD="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "process %d: %s", i, outs[i])
	}
	c, err := Open(dir, 0)
	require.NoError(t, err)
	c.Warn = func(s string) { t.Error(s) }
	st, err := c.Stats()
	require.NoError(t, err)
	require.Equal(t, 20, st.Entries)
	for i := 0; i < 20; i++ {
		got, ok := c.Get(Key([]byte(fmt.Sprint(i))))
		require.True(t, ok)
		require.Len(t, got, 1000+i)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "tmp-*"))
	require.Empty(t, leftovers)
}

// TestSizeHint: writes keep the size hint equal to the entries' bytes
// (an entry written over counted once), a hint that cannot be read is
// put right by a scan, and Clear takes it with the entries.
func TestSizeHint(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, 1<<20)
	require.NoError(t, err)
	check := func(what string) {
		t.Helper()
		st, err := c.Stats()
		require.NoError(t, err)
		n, ok := c.readSize()
		require.True(t, ok, what)
		require.Equal(t, st.Bytes, n, what)
	}
	for i := range 10 {
		require.NoError(t, c.Put(Key([]byte{byte(i)}), make([]byte, 100*i)))
	}
	check("ten entries")
	require.NoError(t, c.Put(Key([]byte{3}), make([]byte, 5000)))
	check("one written over")
	require.NoError(t, os.WriteFile(filepath.Join(dir, sizeFile), []byte("12ab"), 0o644))
	require.NoError(t, c.Put(Key([]byte{11}), make([]byte, 7)))
	check("after a damaged hint")
	require.NoError(t, os.Remove(filepath.Join(dir, sizeFile)))
	require.NoError(t, c.Put(Key([]byte{12}), make([]byte, 7)))
	check("after a missing hint")
	require.NoError(t, c.Clear())
	_, ok := c.readSize()
	require.False(t, ok, "Clear leaves the hint")
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*"))
	require.Empty(t, leftovers)
}
