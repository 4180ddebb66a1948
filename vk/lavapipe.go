package vk

import (
	"os"
	"sync"

	"github.com/klauspost/cpuid/v2"
)

// lavapipe's vector width. llvmpipe compiles a compute shader so that
// each invocation is one lane of a SIMD vector LP_NATIVE_VECTOR_WIDTH
// bits wide (its subgroup size is that width over 32), and Mesa keeps
// it at 256 bits even where the CPU has AVX-512, "until we're confident
// llvmpipe with 512 is as correct and not slower" (lp_bld_init.c). On
// AMD's AVX-512 cores (Zen 4 and later), which run a 512-bit operation
// as two 256-bit halves without lowering their clock, the arithmetic's
// throughput is the same at either width, but what a kernel does per
// instruction rather than per element (address arithmetic, the blends
// that store each loop-carried value through the execution mask, a
// texel fetch's call) is spread over twice the elements. Measured on a
// Zen 4 (docs/BENCHMARKS.md, session 35): the GEMMs 5-11% faster (and
// as much again with tiles for 16 lanes, kgen.tileRows), the bench
// workloads and the DLRM step's warm process as fast or faster, results
// bit for bit the same; LLVM's first compile of each kernel about a
// fifth longer. vkjit's tests and the StableHLO suite pass at 512 bits
// under the validation layer.
//
// So where the host is such a core and the user has not set the
// variable, vkjit sets it to 512 before the driver first reads it (at
// its first instance; the driver reads it again at every instance, so
// it stays set for the process). Intel's AVX-512 cores, some of which
// lower their clock for 512-bit work, keep Mesa's default: vkjit has
// not measured one. LP_NATIVE_VECTOR_WIDTH=256 keeps Mesa's choice.

// LavapipeWidthVar is the variable through which llvmpipe takes its
// vector width.
const LavapipeWidthVar = "LP_NATIVE_VECTOR_WIDTH"

var widthOnce struct {
	sync.Once
	set bool
}

// wideLavapipe sets LavapipeWidthVar as above, once per process.
func wideLavapipe() {
	widthOnce.Do(func() {
		if _, ok := os.LookupEnv(LavapipeWidthVar); ok || !WideLavapipeHost() {
			return
		}
		widthOnce.set = os.Setenv(LavapipeWidthVar, "512") == nil
	})
}

// WideLavapipeHost reports whether this host is one where vkjit runs
// lavapipe 512 bits wide unless told otherwise: an AMD CPU with
// AVX-512 (Zen 4 and later).
func WideLavapipeHost() bool {
	return cpuid.CPU.VendorID == cpuid.AMD && cpuid.CPU.Supports(cpuid.AVX512F)
}

// LavapipeWidthSetHere reports whether vkjit set LavapipeWidthVar in
// this process (rather than the user, or nobody).
func LavapipeWidthSetHere() bool {
	return widthOnce.set
}
