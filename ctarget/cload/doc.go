// Package cload loads an object built by package ctarget (a kernel tree's
// fgraph.c with fgcheck's runtime) and makes it the core of an
// fgraph.Machine: the harness then explores, fuzzes and replays the
// compiled kernel code exactly as it does the port. It needs cgo; without
// it, Open reports that the kernel target is not in this build.
//
// One object is loaded once per process (its statics are its state), so
// one Machine at a time runs it: explorations of the kernel target use one
// worker per process.
package cload
