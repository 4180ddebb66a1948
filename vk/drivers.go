package vk

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

void* vkjit_instance_proc(void* instance, const char* name);
typedef void* (*vkjit_gdpa_fn)(void* device, const char* name);

// vkjit_device_library names the shared object that holds the device's
// vkCmdDispatch as vkGetDeviceProcAddr hands it out (the driver's own
// function where no layer intercepts it), or returns 0.
static const char* vkjit_device_library(void* instance, void* device) {
	vkjit_gdpa_fn gdpa = (vkjit_gdpa_fn)vkjit_instance_proc(instance, "vkGetDeviceProcAddr");
	if (!gdpa) return 0;
	void* f = gdpa(device, "vkCmdDispatch");
	Dl_info info;
	if (!f || !dladdr(f, &info) || !info.dli_fname) return 0;
	return info.dli_fname;
}
*/
import "C"

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// Loading one driver. The Vulkan loader opens every installed driver at
// vkCreateInstance (Debian's mesa-vulkan-drivers installs four), each
// with its own libraries: 14-17 ms of a 54-57 ms process that runs a
// tiny graph on lavapipe. Where vkjit knows which driver's device it
// will choose, it names only that driver's manifest to the loader
// (VK_DRIVER_FILES); DriverManifests lists the manifests the loader
// would read, and Device.Manifest finds the one behind a device.

// DriverEnv are the environment variables through which a user chooses
// the loader's drivers; where one is set, vkjit leaves the choice to it.
var DriverEnv = []string{"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"}

// UserChoosesDrivers reports whether one of DriverEnv is set.
func UserChoosesDrivers() bool {
	for _, v := range DriverEnv {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// Manifest is a driver's manifest file (an ICD JSON file) as the loader
// finds it.
type Manifest struct {
	Path    string // the manifest file
	Library string // its ICD.library_path, as written
	Size    int64
	ModTime int64 // nanoseconds
}

// manifestDirs are the directories the Linux loader searches for driver
// manifests, in its order (the loader's documentation,
// LoaderDriverInterface.md: XDG_CONFIG_DIRS, SYSCONFDIR, EXTRASYSCONFDIR,
// XDG_DATA_HOME, XDG_DATA_DIRS, each with vulkan/icd.d).
func manifestDirs() []string {
	split := func(env, def string) []string {
		v := os.Getenv(env)
		if v == "" {
			v = def
		}
		return strings.Split(v, ":")
	}
	var dirs []string
	dirs = append(dirs, split("XDG_CONFIG_DIRS", "/etc/xdg")...)
	dirs = append(dirs, "/etc", "/usr/local/etc")
	home := os.Getenv("XDG_DATA_HOME")
	if home == "" && os.Getenv("HOME") != "" {
		home = filepath.Join(os.Getenv("HOME"), ".local/share")
	}
	if home != "" {
		dirs = append(dirs, home)
	}
	dirs = append(dirs, split("XDG_DATA_DIRS", "/usr/local/share:/usr/share")...)
	var out []string
	for _, d := range dirs {
		if d != "" {
			out = append(out, filepath.Join(d, "vulkan", "icd.d"))
		}
	}
	return out
}

// DriverManifests lists the driver manifests the loader would read, with
// the library each names (unreadable or malformed ones are listed with
// no library: they still count in DriverFingerprint).
func DriverManifests() []Manifest {
	var out []Manifest
	seen := map[string]bool{}
	for _, dir := range manifestDirs() {
		des, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, de := range des {
			p := filepath.Join(dir, de.Name())
			if !strings.HasSuffix(de.Name(), ".json") || seen[p] {
				continue
			}
			seen[p] = true
			info, err := os.Stat(p)
			if err != nil || info.IsDir() {
				continue
			}
			m := Manifest{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixNano()}
			if b, err := os.ReadFile(p); err == nil {
				var j struct {
					ICD struct {
						LibraryPath string `json:"library_path"`
					} `json:"ICD"`
				}
				if json.Unmarshal(b, &j) == nil {
					m.Library = j.ICD.LibraryPath
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// DriverFingerprint digests what decides which devices a full instance
// lists: the driver manifests (paths, sizes, times) and the device nodes
// drivers open (/dev/dri's and NVIDIA's). A choice of driver recorded
// under one fingerprint holds while it is unchanged: a driver installed
// or removed, or a GPU added, changes it.
func DriverFingerprint() string {
	ms := DriverManifests()
	slices.SortFunc(ms, func(a, b Manifest) int { return cmp.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", m.Path, m.Size, m.ModTime)
	}
	if des, err := os.ReadDir("/dev/dri"); err == nil {
		for _, de := range des {
			fmt.Fprintf(h, "dri/%s\n", de.Name())
		}
	}
	if des, err := os.ReadDir("/dev"); err == nil {
		for _, de := range des {
			if strings.HasPrefix(de.Name(), "nvidia") {
				fmt.Fprintf(h, "%s\n", de.Name())
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Manifest returns the path of the driver manifest whose library holds
// the device's commands, or "" when it cannot tell (a layer intercepts
// them, as the validation layer does, or no manifest names that
// library).
func (d *Device) Manifest() string {
	lib := C.vkjit_device_library(unsafe.Pointer(d.inst.inst), unsafe.Pointer(d.dev))
	if lib == nil {
		return ""
	}
	return manifestOf(C.GoString(lib), DriverManifests())
}

// manifestOf finds the manifest of the library loaded from path: a
// library_path with a slash names a file (relative to its manifest's
// directory), one without is a name the dynamic linker searched for, so
// its base name must match.
func manifestOf(path string, ms []Manifest) string {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	loaded := real(path)
	for _, m := range ms {
		switch {
		case m.Library == "":
		case strings.Contains(m.Library, "/"):
			lib := m.Library
			if !filepath.IsAbs(lib) {
				lib = filepath.Join(filepath.Dir(m.Path), lib)
			}
			if real(lib) == loaded {
				return m.Path
			}
		case filepath.Base(path) == m.Library || filepath.Base(loaded) == m.Library:
			return m.Path
		}
	}
	return ""
}
