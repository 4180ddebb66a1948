package vkjit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vkjit/vkjit/vk"
)

// TestDriverRecord: an Open without validation (whose layer hides the
// driver's functions) records the driver behind its device; the next
// Open with the same selection, with validation on, loads only that
// driver and gets the same device; a record that no longer holds (the
// machine's drivers changed, another selection, a driver that lists no
// such device, a corrupt file) is passed over for every driver, and the
// user's own VK_DRIVER_FILES or a selection by index turns it off.
func TestDriverRecord(t *testing.T) {
	for _, v := range vk.DriverEnv {
		unsetenv(t, v) // set but empty, the loader reads no driver
	}
	t.Setenv("VKJIT_DEVICE", "")
	dir := t.TempDir()
	path := filepath.Join(dir, driverFile)
	rt, err := Open(Options{CacheDir: dir, Validate: Off})
	require.NoError(t, err)
	name := rt.dev.Info.Name
	manifest := rt.dev.Manifest()
	rt.Close()
	if manifest == "" {
		// NVIDIA's vkCmdDispatch lives in a library no manifest names
		// (580.159): its driver cannot be told, so none is recorded and
		// every Open loads every driver, as without the record.
		require.NoFileExists(t, path)
		t.Skipf("the driver behind %s cannot be told from its commands' library: no record", name)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the first Open records its driver")
	var rec driverRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	require.Equal(t, name, rec.Device)
	require.Equal(t, "", rec.Selection)
	require.Equal(t, vk.DriverFingerprint(), rec.Fingerprint)
	require.FileExists(t, rec.Manifest)

	open := func(opts Options) (string, bool) {
		t.Helper()
		set, err := opts.resolve()
		require.NoError(t, err)
		inst, devs, idx, restricted, err := openInstance(opts, set)
		require.NoError(t, err)
		defer inst.Destroy()
		if restricted {
			for _, d := range devs {
				require.Equal(t, rec.Manifest, manifestFor(t, d.Name), "a restricted instance lists only the driver's devices")
			}
		}
		return devs[idx].Name, restricted
	}
	on := Options{CacheDir: dir, Validate: On}
	got, restricted := open(on)
	require.True(t, restricted, "the record is used")
	require.Equal(t, name, got)
	rt, err = Open(on)
	require.NoError(t, err, "a whole Open on the record, validation on")
	rt.Close()

	write := func(r driverRecord) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
	stale := rec
	stale.Fingerprint = "another machine"
	write(stale)
	got, restricted = open(on)
	require.False(t, restricted, "the drivers changed")
	require.Equal(t, name, got)
	other := rec
	other.Selection = "some other device"
	write(other)
	_, restricted = open(on)
	require.False(t, restricted, "recorded for another selection")
	gone := rec
	gone.Device = "a device this driver does not list"
	write(gone)
	got, restricted = open(on)
	require.False(t, restricted)
	require.Equal(t, name, got)
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	got, restricted = open(on)
	require.False(t, restricted, "a corrupt record")
	require.Equal(t, name, got)

	write(rec)
	t.Setenv("VKJIT_DEVICE", "0")
	_, restricted = open(on)
	require.False(t, restricted, "a selection by index counts every driver's devices")
	t.Setenv("VKJIT_DEVICE", "")
	_, restricted = open(Options{CacheDir: dir, Validate: On, Device: name})
	require.False(t, restricted, "Options.Device")
	t.Setenv("VK_DRIVER_FILES", rec.Manifest)
	_, restricted = open(on)
	require.False(t, restricted, "the user names the drivers")
	unsetenv(t, "VK_DRIVER_FILES")
	_, restricted = open(Options{NoCache: true, Validate: On})
	require.False(t, restricted, "no cache directory, no record")
}

// manifestFor opens the named device on a full instance and returns its
// driver's manifest.
func manifestFor(t *testing.T, name string) string {
	t.Helper()
	inst, err := vk.NewInstance(false)
	require.NoError(t, err)
	defer inst.Destroy()
	devs, err := inst.Devices()
	require.NoError(t, err)
	idx, err := vk.ChooseDevice(devs, name)
	require.NoError(t, err)
	dev, err := inst.OpenDevice(idx, vk.DeviceOptions{})
	require.NoError(t, err)
	defer dev.Destroy()
	return dev.Manifest()
}

// unsetenv removes variable v for the test (t.Setenv can only set it).
func unsetenv(t *testing.T, v string) {
	t.Setenv(v, "") // restores the old value at cleanup
	require.NoError(t, os.Unsetenv(v))
}
