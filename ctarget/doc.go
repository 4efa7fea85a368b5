// Package ctarget builds a kernel tree's own kernel/trace/fgraph.c, unmodified,
// into a shared object that fgcheck runs as the code under test.
//
// The tree's file is compiled in place with GCC's ThreadSanitizer
// instrumentation in KCSAN's configuration (-fsanitize=thread --param
// tsan-distinguish-volatile=1 --param tsan-instrument-func-entry-exit=0),
// against stub headers of our own (csrc/include, an overlay in which every
// header fgraph.c includes is fgc_kernel.h) and three headers generated at
// build time from the tree's include/linux/ftrace.h and
// include/linux/sched.h (the layout: struct ftrace_ret_stack,
// ftrace_graph_ent/ret, fgraph_ops, ftrace_ops, the graph-tracer fields of
// task_struct, FGRAPH_NO_DIRECT). The object links csrc/runtime.c, the C half
// of the harness: every instrumented access calls it first, it classifies
// the address as a word of the port's address space (fgraph.Machine.Mem)
// and reports it to Go, where the harness may deliver an interrupt before
// the access happens.
//
// Build needs gcc and a tree; it does not need cgo. Loading and running the
// object is package ctarget/cload, which needs cgo. Sites names the source
// line of every access from the object's DWARF line table and maps it to the
// port's Site of the same statement (Classify), so that schedules, the
// oracles' knowledge of in-flight frames, coverage and known findings mean
// the same on both targets.
package ctarget
