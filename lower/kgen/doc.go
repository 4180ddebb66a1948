// Package kgen generates the SPIR-V compute kernels of a planned
// program: each kernel from its Plan (what the fusion passes of package
// lower decided: its kind, its fused cluster, its prologue, its tiles or
// device loop) by its kind's generator. It knows the device only through
// Target. Package lower imports it and never the reverse: lower decides
// what each kernel computes, kgen how.
package kgen
