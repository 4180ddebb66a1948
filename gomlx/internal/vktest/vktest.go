// Package vktest is what the vkjit backend's test packages share: a
// TestMain that opens the backend with the Khronos validation layer on
// and a compile cache of its own, and fails the run on any message the
// layer reported.
package vktest

import (
	"fmt"
	"os"
	"testing"

	"github.com/vkjit/vkjit"
)

// Main runs m's tests between open (given vkjit's options for tests) and
// close, and exits: with the tests' status, or 1 if the validation
// layer said anything.
func Main(m *testing.M, open func(vkjit.Options) error, close func()) {
	cacheDir, err := os.MkdirTemp("", "vkjit-gomlx-cache")
	if err != nil {
		panic(err)
	}
	// A cache of its own: the tests must not fill the user's cache.
	if err := open(vkjit.Options{Validate: vkjit.On, CacheDir: cacheDir}); err != nil {
		fmt.Fprintln(os.Stderr, "the vkjit backend's tests need a Vulkan device:", err)
		os.RemoveAll(cacheDir)
		os.Exit(1)
	}
	code := m.Run()
	close()
	os.RemoveAll(cacheDir)
	if msgs := vkjit.ValidationMessages(); len(msgs) > 0 {
		for _, msg := range msgs {
			fmt.Fprintln(os.Stderr, "validation:", msg)
		}
		fmt.Fprintf(os.Stderr, "FAIL: the validation layer reported %d message(s)\n", len(msgs))
		code = 1
	}
	os.Exit(code)
}
