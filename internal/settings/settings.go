// Package settings is the one place vkjit reads its environment
// variables. Each setting is resolved the same way: a value the caller
// set explicitly wins, then the variable, then the default. The library
// (vkjit.Open) and the command (vkjit cache, vkjit devices) both resolve
// through it, so that they never disagree about which device or cache
// directory is meant; vk, pool and cache take explicit values only.
package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vkjit/vkjit/cache"
)

// Var is one environment variable vkjit reads, and what it sets.
type Var struct {
	Name, Doc string
}

// Vars lists every variable, in the order README documents them.
var Vars = []Var{
	{"VKJIT_DEVICE", "the Vulkan device: an index, or a substring of its name"},
	{"VKJIT_VALIDATE", "1 enables the Khronos validation layer, 0 keeps it off"},
	{"VKJIT_CACHE_DIR", "the compile cache's directory (default: the user cache directory's vkjit)"},
	{"VKJIT_CACHE_MAX_BYTES", "the compile cache's size bound (default 1 GiB)"},
	{"VKJIT_STAGED", "1 keeps tensors in unmapped device memory reached by copies, 0 never; unset: where the host cannot map device memory, or maps it uncached"},
	{"VKJIT_STAGING_BYTES", "the staging ring's size (default 32 MiB, at least 4096)"},
	{"VKJIT_MEM_FRACTION", "the fraction of the device's memory budget the pool may reserve (default 0.9)"},
	{"VKJIT_MEM_LIMIT_BYTES", "the pool's budget in bytes (Fraction is then ignored)"},
	{"VKJIT_BLOCK_BYTES", "the size of the pool's blocks (default 64 MiB)"},
	{"VKJIT_PREALLOCATE", "1 reserves the whole budget when the runtime opens"},
	{"VKJIT_WARM_PIPELINES", "1 compiles every program's kernels on several threads before its first run (lavapipe), 0 never; unset: programs of 16 kernels or more, once"},
	{"LP_NATIVE_VECTOR_WIDTH", "lavapipe's SIMD width in bits, Mesa's variable (unset: vkjit sets 512 on AMD AVX-512 hosts, else Mesa's 256)"},
}

// DefaultCacheLimit bounds the compile cache when nothing else does.
const DefaultCacheLimit = cache.DefaultLimit

// String is explicit when set, else the variable's value ("" when unset).
func String(explicit, name string) string {
	if explicit != "" {
		return explicit
	}
	return os.Getenv(name)
}

// Bool is explicit when set (non-nil), else the variable's value, else
// nil: neither says, the caller's default decides. A variable that is not
// a boolean is an error.
func Bool(explicit *bool, name string) (*bool, error) {
	if explicit != nil {
		return explicit, nil
	}
	v := strings.ToLower(os.Getenv(name))
	var b bool
	switch v {
	case "":
		return nil, nil
	case "1", "true", "yes", "on":
		b = true
	case "0", "false", "no", "off":
	default:
		return nil, fmt.Errorf("%s=%q is not true or false", name, v)
	}
	return &b, nil
}

// On is Bool's answer with default off.
func On(b *bool) bool { return b != nil && *b }

// Bytes is explicit when positive, else the variable's value (a byte
// count of at least least), else 0: the caller's default.
func Bytes(explicit int64, name string, least int64) (int64, error) {
	if explicit > 0 {
		return explicit, nil
	}
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < least {
		if least > 1 {
			return 0, fmt.Errorf("%s=%q is not a byte count of at least %d", name, v, least)
		}
		return 0, fmt.Errorf("%s=%q is not a positive byte count", name, v)
	}
	return n, nil
}

// Fraction is explicit when positive, else the variable's value (in
// (0, 1]), else 0: the caller's default.
func Fraction(explicit float64, name string) (float64, error) {
	if explicit > 0 {
		if explicit > 1 {
			return 0, fmt.Errorf("fraction %g is not in (0, 1]", explicit)
		}
		return explicit, nil
	}
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 1 {
		return 0, fmt.Errorf("%s=%q is not a fraction in (0, 1]", name, v)
	}
	return f, nil
}

// CacheDir is the compile cache's directory: explicit, else
// VKJIT_CACHE_DIR, else the user cache directory's vkjit.
func CacheDir(explicit string) (string, error) {
	if dir := String(explicit, "VKJIT_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (set VKJIT_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "vkjit"), nil
}

// CacheLimit is the compile cache's size bound: explicit, else
// VKJIT_CACHE_MAX_BYTES, else DefaultCacheLimit.
func CacheLimit(explicit int64) (int64, error) {
	n, err := Bytes(explicit, "VKJIT_CACHE_MAX_BYTES", 1)
	if n == 0 && err == nil {
		n = DefaultCacheLimit
	}
	return n, err
}
