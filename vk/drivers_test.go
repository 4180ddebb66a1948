package vk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestManifestOf: a manifest's library_path names the library loaded
// as an absolute path, a path relative to the manifest (through
// symbolic links either way), or a bare name the dynamic linker found.
func TestManifestOf(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib", "libvulkan_x.so")
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, nil, 0o644))
	link := filepath.Join(dir, "libvulkan_link.so")
	require.NoError(t, os.Symlink(lib, link))
	icd := filepath.Join(dir, "icd.d")
	ms := []Manifest{
		{Path: filepath.Join(icd, "none.json")},
		{Path: filepath.Join(icd, "other.json"), Library: "/usr/lib/libvulkan_other.so"},
		{Path: filepath.Join(icd, "abs.json"), Library: link},
	}
	require.Equal(t, filepath.Join(icd, "abs.json"), manifestOf(lib, ms), "absolute, through a link")
	ms[2].Library = "../lib/libvulkan_x.so"
	require.Equal(t, filepath.Join(icd, "abs.json"), manifestOf(lib, ms), "relative to the manifest")
	ms[2].Library = "libvulkan_x.so"
	require.Equal(t, filepath.Join(icd, "abs.json"), manifestOf(lib, ms), "a bare name")
	require.Equal(t, "", manifestOf(filepath.Join(dir, "libVkLayer_khronos_validation.so"), ms), "a layer's library")
}

// TestDriverManifests reads the manifests of XDG_DATA_DIRS and changes
// the fingerprint when one is added.
func TestDriverManifests(t *testing.T) {
	data := t.TempDir()
	for _, v := range []string{"XDG_CONFIG_DIRS", "XDG_DATA_HOME"} {
		t.Setenv(v, filepath.Join(t.TempDir(), "none"))
	}
	t.Setenv("XDG_DATA_DIRS", data)
	icd := filepath.Join(data, "vulkan", "icd.d")
	require.NoError(t, os.MkdirAll(icd, 0o755))
	before := DriverFingerprint()
	require.NoError(t, os.WriteFile(filepath.Join(icd, "x.json"), []byte(`{"file_format_version": "1.0.0", "ICD": {"library_path": "libvulkan_x.so", "api_version": "1.3.0"}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(icd, "bad.json"), []byte(`{`), 0o644))
	var found []Manifest
	for _, m := range DriverManifests() {
		if filepath.Dir(m.Path) == icd {
			found = append(found, m)
		}
	}
	require.Len(t, found, 2)
	require.Equal(t, "", found[0].Library, "bad.json")
	require.Equal(t, "libvulkan_x.so", found[1].Library)
	require.NotEqual(t, before, DriverFingerprint())
}
