package vkjit

import (
	"github.com/vkjit/vkjit/hlo"
	"github.com/vkjit/vkjit/internal/settings"
	"github.com/vkjit/vkjit/lower"
	"github.com/vkjit/vkjit/pool"
	"github.com/vkjit/vkjit/vk"
)

// Toggle is an on/off option that may be left to the environment: Auto
// takes the variable named in the option's doc when it is set, else the
// default; On and Off win over the variable.
type Toggle int8

const (
	Auto Toggle = iota
	On
	Off
)

// explicit is the toggle as settings.Bool takes it: nil for Auto.
func (t Toggle) explicit() *bool {
	switch t {
	case On:
		v := true
		return &v
	case Off:
		v := false
		return &v
	}
	return nil
}

// Options choose the device and its debugging aids. Every field left at
// its zero value takes its environment variable when that is set, else
// the default: an explicit option wins over the variable, which wins over
// the default. A malformed variable makes Open fail, naming it.
type Options struct {
	// Device selects the Vulkan device: an index or a substring of its
	// name (VKJIT_DEVICE); by default the most capable device type.
	Device string
	// Validate enables the Khronos validation layer (VKJIT_VALIDATE;
	// default off). ValidationMessages returns what it reports.
	Validate Toggle
	// CacheDir is the persistent compile cache's directory
	// (VKJIT_CACHE_DIR; default os.UserCacheDir()/vkjit), CacheMaxBytes
	// its size bound (VKJIT_CACHE_MAX_BYTES; default 1 GiB).
	CacheDir      string
	CacheMaxBytes int64
	// NoCache turns the compile cache off.
	NoCache bool
	// Warn receives warnings (a damaged cache entry dropped); nil means
	// standard error.
	Warn func(string)
	// Memory sets the device memory pool.
	Memory MemoryOptions
	// Staged keeps tensors in device memory the host cannot map, reached
	// through copies on a transfer queue (VKJIT_STAGED). Auto stages on
	// a device whose main memory the host cannot map, or maps only
	// uncached (a discrete GPU, resizable BAR or not), and nowhere else;
	// On stages wherever the device can (on lavapipe, to test a discrete
	// GPU's path).
	Staged Toggle
	// WarmPipelines compiles a program's kernels on several threads
	// before its first run, where the device compiles them at their first
	// dispatch on one (lavapipe) and Mesa's shader disk cache is on
	// (VKJIT_WARM_PIPELINES). Auto warms a program once (the compile
	// cache remembers it) where threads would save enough of the
	// compile, judged by its kernels' sizes (warm.go's minWarmWords); On
	// warms every program it can; Off never.
	WarmPipelines Toggle
}

// MemoryOptions set the device memory pool's size policy.
type MemoryOptions struct {
	// BlockBytes is the size of the blocks buffers are carved from
	// (VKJIT_BLOCK_BYTES; default 64 MiB, at most the device's
	// maxStorageBufferRange).
	BlockBytes int64
	// Fraction of the device's memory budget the pool may reserve
	// (VKJIT_MEM_FRACTION; default 0.9): VK_EXT_memory_budget's heap
	// budget where the device has it, else the heap's size.
	Fraction float64
	// LimitBytes is the budget itself, in bytes (VKJIT_MEM_LIMIT_BYTES);
	// Fraction is then ignored.
	LimitBytes int64
	// Preallocate reserves the whole budget when the runtime opens, so
	// that runs never allocate device memory (VKJIT_PREALLOCATE; default
	// off), as JAX's XLA_PYTHON_CLIENT_PREALLOCATE.
	Preallocate Toggle
	// StagingBytes is the staging ring's size on a device that stages
	// (VKJIT_STAGING_BYTES; default 32 MiB, at least 4096).
	StagingBytes int64
}

// CompileOptions change how a module compiles. The zero value is what
// production wants; the switches below it exist to compare against.
type CompileOptions struct {
	// MemoryBudget, when not 0, is the most device bytes the program's
	// own memory (arena, parameters, constants) may plan for: values are
	// recomputed instead of kept until the plan fits.
	MemoryBudget int64
	// Donate lists entry parameter leaves (depth-first) whose memory the
	// program may reuse once they are dead, as jax.jit's donate_argnums;
	// the module's input_output_alias donates its parameters too.
	Donate []int

	NoFuse    bool // every instruction its own kernel and buffer
	NoReuse   bool // every temporary its own memory
	HostLoops bool // every while loop run from the host, none as a device loop
	// DeviceLoops runs every while loop that fits a device loop as one,
	// even one of a known trip count too short to repay its kernel's
	// first compile (which Mesa's shader cache then keeps).
	DeviceLoops bool
	// CPU devices' code generation choices, made the GPU way (subgroup
	// and workgroup row reductions, GEMM tiles and a real FFT's passes
	// through shared memory) or the older way (vec4 loads, no texel
	// buffer views, a GEMM tile per invocation rather than per subgroup).
	SubgroupReduce, WorkgroupReduce, SharedGemm, SharedFft, Vec4Access, StorageLoads, InvocationTiles bool
	// RefinedDivSqrt divides f32s and takes their square roots as on a
	// GPU whose own are not exact (through f64), to test that form.
	RefinedDivSqrt bool
	// AddressAbove, when not 0, reaches every array of more bytes through
	// its buffer device address, as arrays past the device's
	// maxStorageBufferRange are, to test and measure that path.
	AddressAbove int64
	// Arguments, for a StableHLO text whose entry takes dynamic shapes
	// (tensor<?x4xf32>: jax.export with symbolic shapes), are the
	// arguments' types and shapes, which its shapes are refined from
	// before it compiles (as XLA refines such a module); the executable
	// then takes arguments of these shapes. A static module ignores them.
	Arguments []TensorSpec
}

// shapes is Arguments as HLO shapes (nil where none are given).
func (o CompileOptions) shapes() []hlo.Shape { return specShapes(o.Arguments) }

// specShapes is specs as HLO shapes (nil for nil).
func specShapes(specs []TensorSpec) []hlo.Shape {
	if specs == nil {
		return nil
	}
	s := make([]hlo.Shape, len(specs))
	for i, a := range specs {
		s[i] = a.shape()
	}
	return s
}

// lower is the options as the code generator takes them.
func (o CompileOptions) lower() lower.Options {
	return lower.Options{
		NoFuse: o.NoFuse, NoReuse: o.NoReuse, MemoryBudget: o.MemoryBudget, Donate: o.Donate,
		SubgroupReduce: o.SubgroupReduce, WorkgroupReduce: o.WorkgroupReduce, SharedGemm: o.SharedGemm, SharedFft: o.SharedFft,
		HostLoops: o.HostLoops, DeviceLoops: o.DeviceLoops, Vec4Access: o.Vec4Access, StorageLoads: o.StorageLoads,
		InvocationTiles: o.InvocationTiles, AddressAbove: o.AddressAbove, RefinedDivSqrt: o.RefinedDivSqrt,
	}
}

// resolved is Options with the environment applied: what Open uses.
type resolved struct {
	device     string
	validate   bool
	cacheDir   string // "": no cache
	cacheLimit int64
	cacheErr   error // why there is no cache directory (Open warns)
	staging    vk.Staging
	pool       pool.Config
	warm       *bool // nil: Auto
}

// resolve applies the environment to o's unset fields. It runs before any
// device work, so that a bad variable fails first.
func (o Options) resolve() (resolved, error) {
	var r resolved
	var err error
	r.device = settings.String(o.Device, "VKJIT_DEVICE")
	validate, err := settings.Bool(o.Validate.explicit(), "VKJIT_VALIDATE")
	if err != nil {
		return r, err
	}
	r.validate = settings.On(validate)
	if !o.NoCache {
		if r.cacheLimit, err = settings.CacheLimit(o.CacheMaxBytes); err != nil {
			return r, err
		}
		// A cache without a directory only costs compile time: Open warns.
		r.cacheDir, r.cacheErr = settings.CacheDir(o.CacheDir)
	}
	switch staged, err := settings.Bool(o.Staged.explicit(), "VKJIT_STAGED"); {
	case err != nil:
		return r, err
	case staged == nil:
		r.staging = vk.StagingAuto
	case *staged:
		r.staging = vk.StagingOn
	default:
		r.staging = vk.StagingOff
	}
	if r.warm, err = settings.Bool(o.WarmPipelines.explicit(), "VKJIT_WARM_PIPELINES"); err != nil {
		return r, err
	}
	m, c := o.Memory, &r.pool
	if c.BlockBytes, err = settings.Bytes(m.BlockBytes, "VKJIT_BLOCK_BYTES", 1); err != nil {
		return r, err
	}
	if c.Fraction, err = settings.Fraction(m.Fraction, "VKJIT_MEM_FRACTION"); err != nil {
		return r, err
	}
	if c.LimitBytes, err = settings.Bytes(m.LimitBytes, "VKJIT_MEM_LIMIT_BYTES", 1); err != nil {
		return r, err
	}
	pre, err := settings.Bool(m.Preallocate.explicit(), "VKJIT_PREALLOCATE")
	if err != nil {
		return r, err
	}
	c.Preallocate = settings.On(pre)
	if c.StagingBytes, err = settings.Bytes(m.StagingBytes, "VKJIT_STAGING_BYTES", 4096); err != nil {
		return r, err
	}
	return r, nil
}
