// Package harness runs the fgraph port under simulated interrupts and checks
// it against the reference model.
//
// A [Scenario] says what runs: the users, the task programs, the IRQ and NMI
// programs, the remote-CPU actions, and the [Bound]. A [Chooser] decides, at
// every choice point, whether to continue, deliver an interrupt, run a remote
// action, or (once per static region) which commit order the compiler chose;
// every engine is a Chooser: the exhaustive DFS of [Explore], the random and
// PCT samplers of [Sample], [NewReplay] for schedule files, and the rapid,
// gopter and fuzz choosers of the properties/ and fuzz/ packages. Every run
// records its non-default choices as a [Schedule], the same text record for
// every engine (see [ParseFile] and [File.Format]).
//
// With [RunOptions].Trace a run records its steps as [TraceEvent]s in
// Result.Events (ops, commits, barriers, order choices, drops, interrupt
// entries and exits, violations) and, before and after every interrupt and
// remote action and at a violation, a [Picture] of the shadow stacks drawn
// like the header comment of kernel/trace/fgraph.c; Result.Trace is their
// text ([TraceText]). Package report renders the events as an HTML page.
//
// The execution model (contexts, the compiler store buffer, yield points) and
// the seven oracles are described in docs/compiler-model.md; the standard
// bound in docs/std.md; the known kernel findings in docs/findings.md.
// [Explore]'s ways of running fewer schedules for the same counts: the
// visited-state cache and prefix sharing, with its lookups at choice
// points, at quiescent points and right after an interrupt returns
// (docs/state-cache.md), lazy region orders (docs/lazy-orders.md), merged
// remote placements and event snaps (docs/merged-remotes.md).
//
// The core is deterministic: no goroutines, clocks or global randomness in a
// run; the same schedule gives the same trace byte for byte. Parallelism
// lives at the edges (Explore's workers, Sample's workers).
package harness
