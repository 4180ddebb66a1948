package vk

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMappedMainHeap: tensors stay mapped in place only where the main
// heap's host-visible memory is cached too. Layouts of the kinds drivers
// report: a CPU device, an integrated GPU, a discrete GPU with resizable
// BAR (its whole memory host-visible, uncached) and one with a 256 MiB
// BAR window beside its memory.
func TestMappedMainHeap(t *testing.T) {
	all := MemoryType{DeviceLocal: true, HostVisible: true, HostCoherent: true, HostCached: true}
	cases := []struct {
		name   string
		info   DeviceInfo
		mapped bool
	}{
		{"cpu", DeviceInfo{Heaps: []MemoryHeap{{Size: 8 << 30, DeviceLocal: true}}, MemoryTypes: []MemoryType{all}}, true},
		{"integrated", DeviceInfo{Heaps: []MemoryHeap{{Size: 8 << 30, DeviceLocal: true}},
			MemoryTypes: []MemoryType{{DeviceLocal: true}, all}}, true},
		{"resizable BAR", DeviceInfo{Heaps: []MemoryHeap{{Size: 140 << 30, DeviceLocal: true}, {Size: 94 << 30}},
			MemoryTypes: []MemoryType{
				{Heap: 0, DeviceLocal: true},
				{Heap: 1, HostVisible: true, HostCoherent: true},
				{Heap: 1, HostVisible: true, HostCoherent: true, HostCached: true},
				{Heap: 0, DeviceLocal: true, HostVisible: true, HostCoherent: true},
			}}, false},
		{"BAR window", DeviceInfo{Heaps: []MemoryHeap{{Size: 16 << 30, DeviceLocal: true}, {Size: 32 << 30}, {Size: 256 << 20, DeviceLocal: true}},
			MemoryTypes: []MemoryType{
				{Heap: 0, DeviceLocal: true},
				{Heap: 1, HostVisible: true, HostCoherent: true, HostCached: true},
				{Heap: 2, DeviceLocal: true, HostVisible: true, HostCoherent: true},
			}}, false},
	}
	for _, c := range cases {
		require.Equal(t, c.mapped, c.info.MappedMainHeap(), c.name)
	}
}

// TestCopyHost: the chunked copy copies what copy does, across chunk
// boundaries, for either side the shorter.
func TestCopyHost(t *testing.T) {
	src := make([]byte, 2*copyChunk+12345)
	for i := range src {
		src[i] = byte(i*7 + i>>13)
	}
	for _, n := range []int{0, 1, copyChunk - 1, copyChunk, copyChunk + 1, len(src), len(src) + 99} {
		dst := make([]byte, n)
		want := make([]byte, n)
		require.Equal(t, copy(want, src), CopyHost(dst, src), "dst of %d", n)
		require.Equal(t, want, dst, "dst of %d", n)
		// and from a shorter source
		short := src[:min(n, len(src))/2]
		for i := range dst {
			dst[i] = 0xAA
			want[i] = 0xAA
		}
		require.Equal(t, copy(want, short), CopyHost(dst, short), "src of %d", len(short))
		require.Equal(t, want, dst, "src of %d", len(short))
	}
}
