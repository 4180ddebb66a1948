package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vkjit/vkjit/internal/settings"
	"github.com/vkjit/vkjit/internal/target"
	"github.com/vkjit/vkjit/vk"
)

func cmdDevices(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	// The Vulkan facts in full, not the library's summary of them.
	inst, err := vk.NewInstance(false)
	if err != nil {
		return err
	}
	defer inst.Destroy()
	devs, err := inst.Devices()
	if err != nil {
		return err
	}
	chosen, chooseErr := vk.ChooseDevice(devs, settings.String("", "VKJIT_DEVICE"))
	for _, d := range devs {
		mark := " "
		if chooseErr == nil && d.Index == chosen {
			mark = "*"
		}
		fmt.Fprintf(out, "%s%d: %s\n", mark, d.Index, d.Name)
		fmt.Fprintf(out, "    type:          %s\n", d.Type)
		fmt.Fprintf(out, "    driver:        %s\n", d.Driver())
		fmt.Fprintf(out, "    api version:   %s\n", d.APIVersion)
		width := ""
		if vk.LavapipeWidthSetHere() && d.Type == vk.TypeCPU {
			width = fmt.Sprintf(" (%s=512: vkjit's choice on AMD AVX-512 hosts; 256 is Mesa's)", vk.LavapipeWidthVar)
		}
		fmt.Fprintf(out, "    subgroup size: %d%s\n", d.SubgroupSize, width)
		var heaps []string
		for i, h := range d.Heaps {
			kind := "host"
			if h.DeviceLocal {
				kind = "device-local"
			}
			heaps = append(heaps, fmt.Sprintf("%d: %s %s", i, formatBytes(h.Size), kind))
		}
		fmt.Fprintf(out, "    memory heaps:  %s\n", strings.Join(heaps, ", "))
		narrow := "widened to 32 bits"
		switch {
		case d.Storage8 && d.Storage16:
			narrow = "stored at their width (8- and 16-bit storage)"
		case d.Storage16:
			narrow = "16-bit stored at their width, 8-bit widened"
		}
		fmt.Fprintf(out, "    narrow types:  %s\n", narrow)
		sub := "f32 ones flushed to zero (the driver offers no shaderDenormPreserveFloat32)"
		switch {
		case d.DenormPreserve32:
			sub = "kept (shaderDenormPreserveFloat32)"
		case target.KeepsSubnormals(d):
			sub = "kept (by the driver, unasked)"
		}
		fmt.Fprintf(out, "    subnormals:    %s\n", sub)
		texel := "storage buffers only"
		if d.TexelLoads() {
			texel = "storage buffers, or texel buffer views of them (on CPU devices: fetched as SIMD vectors)"
		}
		fmt.Fprintf(out, "    kernel reads:  %s\n", texel)
		if d.MappedMainHeap() {
			fmt.Fprintf(out, "    tensors:       heap %d, mapped: the host reads and writes them in place\n", d.MainHeap())
		} else {
			fmt.Fprintf(out, "    tensors:       heap %d, %s: copies through a staging ring on the transfer queue\n", d.MainHeap(), unmapped(d))
		}
	}
	if chooseErr == nil {
		fmt.Fprintln(out, "(* = the device vkjit uses by default; choose with VKJIT_DEVICE or --device)")
	}
	return nil
}

func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// chosenDevice describes the device a runtime would open for sel (an
// index or a name's substring; empty: VKJIT_DEVICE, else the most capable
// type), without opening it.
func chosenDevice(sel string) (vk.DeviceInfo, error) {
	inst, err := vk.NewInstance(false)
	if err != nil {
		return vk.DeviceInfo{}, err
	}
	defer inst.Destroy()
	devs, err := inst.Devices()
	if err != nil {
		return vk.DeviceInfo{}, err
	}
	i, err := vk.ChooseDevice(devs, settings.String(sel, "VKJIT_DEVICE"))
	if err != nil {
		return vk.DeviceInfo{}, err
	}
	return devs[i], nil
}

// unmapped says why a device's tensors are staged: its main heap is not
// host-visible, or the host sees it only uncached (resizable BAR).
func unmapped(d vk.DeviceInfo) string {
	main := d.MainHeap()
	for _, t := range d.MemoryTypes {
		if t.DeviceLocal && t.HostVisible && t.Heap == main {
			return "host-visible but uncached (resizable BAR)"
		}
	}
	return "unmapped"
}
