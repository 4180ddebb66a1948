// Package shaders holds golden SPIR-V disassembly of the kernels vkjit
// generates for a few representative programs (programs/*.hlo), for two
// targets: lavapipe, the device CI runs on (lower.LlvmpipeTarget), and a
// typical discrete GPU (gpuTarget in the test). A change to code
// generation shows in review as a diff of these files, as naga and Tint
// keep theirs. Each target/program directory holds plan.txt (the
// program's buffers, kernels and steps, lower.Program.Describe) and one
// .spvasm file per kernel.
//
// TestGolden fails when the generated code differs; `make shaders` (go
// test ./shaders -update) writes them anew.
package shaders
