// Package lower compiles a verified HLO module into a Program: SPIR-V
// kernels and the plan that runs them (buffers, dispatch steps, where
// parameters go in and results come out). It knows the device only
// through Target, so it compiles and tests without one.
package lower

import "github.com/vkjit/vkjit/lower/kgen"

// The device as code generation sees it, and the kernels it makes, are
// kgen's: lower compiles for a kgen.Target into kgen.Kernels.
type (
	Target    = kgen.Target
	Kernel    = kgen.Kernel
	TexelView = kgen.TexelView
)

// LlvmpipeLoopLimit is llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS.
const LlvmpipeLoopLimit = kgen.LlvmpipeLoopLimit

var (
	// DefaultTarget is a conservative Vulkan 1.2 device (the minimum
	// limits the specification guarantees), for compiling without one.
	DefaultTarget = kgen.DefaultTarget
	// LlvmpipeTarget is what lavapipe reports on CI's 2-core host.
	LlvmpipeTarget = kgen.LlvmpipeTarget
)
