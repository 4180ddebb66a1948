package vkjit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vkjit/vkjit/vk"
)

// Open remembers which driver's device it chose in the compile cache's
// directory, and the next Open with the same selection loads only that
// driver (vk.NewDriverInstance): a tiny graph's process on lavapipe
// 54-57 -> 37-43 ms (docs/BENCHMARKS.md). The record holds while
// vk.DriverFingerprint is unchanged (no driver installed or removed, no
// device node added); the restricted instance must still list a device
// the selection chooses, of the name recorded, or Open loads every
// driver as before. It is not used where the user names drivers to the
// loader (vk.DriverEnv), nor for Options.Device or a selection by index
// (an index counts every driver's devices).

// driverFile is the record's name in the cache directory.
const driverFile = "driver.json"

type driverRecord struct {
	Selection   string // the device selection (VKJIT_DEVICE), "" the default
	Fingerprint string // vk.DriverFingerprint when recorded
	Manifest    string // the driver's manifest
	Device      string // the chosen device's name
}

// driverHint says whether Open may use and keep a driver record, and
// where it is.
func driverHint(opts Options, set resolved) (path string, ok bool) {
	if set.cacheDir == "" || opts.Device != "" || vk.UserChoosesDrivers() {
		return "", false
	}
	if _, err := strconv.Atoi(set.device); err == nil {
		return "", false
	}
	return filepath.Join(set.cacheDir, driverFile), true
}

// readDriverRecord returns the record at path when it holds for
// selection on this machine as it is now, or nil.
func readDriverRecord(path, selection string) *driverRecord {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rec driverRecord
	if json.Unmarshal(b, &rec) != nil || rec.Manifest == "" || rec.Selection != selection ||
		rec.Fingerprint != vk.DriverFingerprint() {
		return nil
	}
	return &rec
}

// writeDriverRecord keeps rec at path (replaced whole, through a
// temporary file, so that a concurrent Open reads the old record or the
// new one). Failing only costs the next process its start-up time.
func writeDriverRecord(path string, rec driverRecord) {
	if old, err := os.ReadFile(path); err == nil {
		var was driverRecord
		if json.Unmarshal(old, &was) == nil && was == rec {
			return
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp-driver-")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// openInstance creates the instance Open uses and chooses its device:
// through the driver record where one holds (restricted reports that),
// otherwise with every driver.
func openInstance(opts Options, set resolved) (inst *vk.Instance, devs []vk.DeviceInfo, idx int, restricted bool, err error) {
	if path, ok := driverHint(opts, set); ok {
		if rec := readDriverRecord(path, set.device); rec != nil {
			if inst, err := vk.NewDriverInstance(set.validate, rec.Manifest); err == nil {
				if devs, err := inst.Devices(); err == nil {
					if idx, err := vk.ChooseDevice(devs, set.device); err == nil && devs[idx].Name == rec.Device {
						return inst, devs, idx, true, nil
					}
				}
				inst.Destroy()
			}
		}
	}
	if inst, err = vk.NewInstance(set.validate); err != nil {
		return nil, nil, 0, false, err
	}
	if devs, err = inst.Devices(); err == nil {
		idx, err = vk.ChooseDevice(devs, set.device)
	}
	if err != nil {
		inst.Destroy()
		return nil, nil, 0, false, err
	}
	return inst, devs, idx, false, nil
}

// recordDriver keeps the driver of dev, chosen on an instance with every
// driver, for the next Open (see openInstance).
func recordDriver(opts Options, set resolved, dev *vk.Device) {
	path, ok := driverHint(opts, set)
	if !ok {
		return
	}
	if m := dev.Manifest(); m != "" {
		writeDriverRecord(path, driverRecord{Selection: set.device, Fingerprint: vk.DriverFingerprint(), Manifest: m, Device: dev.Info.Name})
	}
}
