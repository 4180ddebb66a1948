// Package gomlx makes vkjit a backend of GoMLX (github.com/gomlx/gomlx
// v0.26.0): GoMLX's graphs, autodiff, layers and training loops on any
// Vulkan device, and on the CPU through Mesa's lavapipe.
//
// Importing the package registers the backend as "vkjit":
//
//	import _ "github.com/vkjit/vkjit/gomlx"
//
//	GOMLX_BACKEND=vkjit            the device vkjit picks (VKJIT_DEVICE, else the most capable)
//	GOMLX_BACKEND=vkjit:llvmpipe   a device by name substring
//	GOMLX_BACKEND=vkjit:1          a device by index (`vkjit devices` lists them)
//
// A GoMLX Builder's op calls become one hlo.Module (GoMLX's implicit
// broadcasts made explicit), which vkjit compiles whole, with fusion and
// memory planning, through its compile cache. Buffers are vkjit
// DeviceTensors: a training loop's parameters stay on the device
// between steps, and donated inputs become vkjit's donation.
//
// The adapter is thin on purpose: the op semantics live in vkjit's hlo
// package, and GoMLX's interface (which newer GoMLX versions moved to
// github.com/gomlx/compute) only names them.
package gomlx

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/vkjit/vkjit"
)

// BackendName is the name GOMLX_BACKEND selects the backend by.
const BackendName = "vkjit"

func init() {
	backends.Register(BackendName, New)
}

// Backend is vkjit as a GoMLX backends.Backend: one open Vulkan device.
type Backend struct {
	rt        *vkjit.Runtime
	info      vkjit.DeviceInfo
	opts      vkjit.CompileOptions
	caps      backends.Capabilities
	finalized atomic.Bool
	closeOnce sync.Once
}

var _ backends.Backend = (*Backend)(nil)

// New opens the Vulkan device config names: empty for vkjit's default
// choice, else an index or a substring of the device's name, as
// vkjit.Options.Device. The rest of vkjit's settings come from its
// environment variables (VKJIT_VALIDATE, VKJIT_CACHE_DIR, ...).
func New(config string) (backends.Backend, error) {
	return Open(vkjit.Options{Device: config}, vkjit.CompileOptions{})
}

// Open is New with vkjit's options spelled out, for programs that set
// them in code; compile applies to every graph the backend compiles.
func Open(opts vkjit.Options, compile vkjit.CompileOptions) (*Backend, error) {
	rt, err := vkjit.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("vkjit backend: %w", err)
	}
	b := &Backend{rt: rt, info: rt.Device(), opts: compile}
	b.caps = capabilities(b.info)
	return b, nil
}

// Runtime is the vkjit runtime the backend runs on.
func (b *Backend) Runtime() *vkjit.Runtime { return b.rt }

// Name implements backends.Backend.
func (b *Backend) Name() string { return BackendName }

// String implements backends.Backend.
func (b *Backend) String() string { return BackendName }

// Description implements backends.Backend.
func (b *Backend) Description() string {
	return fmt.Sprintf("vkjit (Vulkan) on %s", b.info.Name)
}

// NumDevices implements backends.Backend: the backend drives one device.
func (b *Backend) NumDevices() int { return 1 }

// DeviceDescription implements backends.Backend.
func (b *Backend) DeviceDescription(deviceNum backends.DeviceNum) string {
	if deviceNum != 0 {
		return fmt.Sprintf("no device #%d (the vkjit backend drives one)", deviceNum)
	}
	return fmt.Sprintf("%s (%s, %s)", b.info.Name, b.info.Type, b.info.Driver)
}

// Capabilities implements backends.Backend.
func (b *Backend) Capabilities() backends.Capabilities { return b.caps.Clone() }

// Finalize implements backends.Backend: it closes the device, waiting for
// runs in flight. Buffers and executables of the backend are invalid
// after it.
func (b *Backend) Finalize() {
	b.closeOnce.Do(func() {
		b.finalized.Store(true)
		b.rt.Close()
	})
}

// IsFinalized implements backends.Backend.
func (b *Backend) IsFinalized() bool { return b.finalized.Load() }

func (b *Backend) check() error {
	if b == nil || b.finalized.Load() {
		return fmt.Errorf("vkjit backend: %w", vkjit.ErrClosed)
	}
	return nil
}

// capabilities lists what the backend computes: every op of GoMLX's
// interface but the collectives (one device), and every dtype with a Go
// type that the device can hold (64-bit types where the device has them).
func capabilities(info vkjit.DeviceInfo) backends.Capabilities {
	c := backends.Capabilities{Operations: map[backends.OpType]bool{}, DTypes: map[dtypes.DType]bool{}}
	for op := backends.OpTypeParameter; op < backends.OpTypeLast; op++ {
		switch op {
		case backends.OpTypeAllReduce, backends.OpTypeCollectiveBroadcast, backends.OpTypeAllGather,
			backends.OpTypeBroadcast, backends.OpTypeSelectAndScatterSum:
			// Not methods of the v0.26.0 Builder, or collectives across
			// devices.
		default:
			c.Operations[op] = true
		}
	}
	for dt := range elemTypes {
		switch dt {
		case dtypes.Float64, dtypes.Complex128:
			if !info.Float64 {
				continue
			}
		case dtypes.Int64, dtypes.Uint64:
			if !info.Int64 {
				continue
			}
		}
		c.DTypes[dt] = true
	}
	return c
}
