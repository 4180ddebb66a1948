//go:build !linux

package vk

// adviseHuge does nothing where the kernel has no transparent huge
// pages to ask for (huge_linux.go).
func adviseHuge([]byte) {}
