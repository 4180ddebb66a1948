package vkjit

import "github.com/vkjit/vkjit/lower"

// ProgramOf is an executable's compiled program, for tests that check
// what was generated (kernel kinds, steps). Not part of the API: users
// read Plan, Params, Results and MemoryPlan.
func ProgramOf(e *Executable) *lower.Program { return e.prog }

// TargetOf is what the code generator knows of a runtime's device.
func TargetOf(r *Runtime) lower.Target { return r.tg }

// CompilesAtDispatch reports whether r's device compiles kernels at their
// first dispatch and Mesa's disk cache can carry code between devices:
// where WarmPipelines warms.
func CompilesAtDispatch(r *Runtime) bool { return r.compilesAtDispatch() }
