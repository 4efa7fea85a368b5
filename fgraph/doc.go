// Package fgraph is a word-level Go port of the Linux function-graph tracer's
// multi-user shadow stack (kernel/trace/fgraph.c, multi-user form merged in
// v6.11).
//
// Every function carries a provenance comment naming the kernel function and
// the version it follows. Kernel names are kept in Go mixedCaps
// (ftrace_push_return_trace becomes ftracePushReturnTrace). Every access to
// shared state (task words, curr_ret_stack, curr_ret_depth, trace_overrun, the
// global user table) goes through the shim in shim.go with a site name and an
// access kind, and every barrier is a call: the harness plugs in there through
// [Hooks]. With no hooks attached the shim is a plain slice access.
//
// The port is deterministic: no goroutines, clocks or randomness. A Machine is
// one CPU, its tasks and the global tracer state; its [Core] is this port or,
// through package ctarget, a kernel tree's compiled fgraph.c.
//
// Variants ([Variant]) select the kernel version being ported: Latest (v6.14+
// with the 2025 and 2026 fixes), V612 (6.12.y stable as Debian ships it),
// V611 (the v6.11 release: the merged series plus its v6.11-rc fixes, not
// the merge tip) and Seed (patch 04/20 of the May 2024 series, the seed
// review). docs/fidelity.md lists, function by function, what each variant
// ports and where it differs on purpose. Fix variants that are
// proposals, not upstream, are options on the Config (GenCounter, NoBit0).
package fgraph
