// Package model is the reference model of the fgraph shadow stack: a plain
// list of frames per task and a 16-slot user table with registration
// generations. It has no words, no offsets and no concurrency, and it does
// not import the port.
//
// The model answers two questions for the oracles:
//   - what the stack should hold after each completed task-level operation
//     (Call, Return, Register, Unregister), and which callbacks the kernel
//     runs with which data;
//   - what a quiescent word image means: Abstract maps a task's words to
//     the frames they encode, or returns a descriptive error naming the word
//     and what is wrong with it.
//
// The model is parameterised by the documented semantics of a kernel variant
// (Config), not by its code: BIT(0) always set, the gen-counter fix, the
// seed's lack of per-user filters.
package model
