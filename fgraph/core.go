package fgraph

// Core is the code under test: the entry points of kernel/trace/fgraph.c
// as the arch code, the users' callbacks, the unwinders and a remote CPU
// call them. A Machine is the CPU, the arch glue (real return-address
// slots, the recursion lock of the arch caller), the users and the tasks;
// its core is either this package's port (the default) or a tree's
// compiled fgraph.c (package ctarget), so the harness drives both through
// one Machine without knowing which runs.
//
// Every shared access a core makes goes through the Machine's hooks
// (Machine.Hooks) as an access of a word of Machine.Mem, named by a Site;
// a core whose memory is not Machine.Mem keeps Mem as the mirror of its
// own state and takes the stores it did not make itself through Poke.
type Core interface {
	// FunctionGraphEnter is function_graph_enter() (function_graph_enter_regs()
	// in v6.14+) on the current task: 0 when the return address must be
	// hijacked.
	FunctionGraphEnter(ret, fn, fp, retp Word) int
	// FtraceReturnToHandler is ftrace_return_to_handler(): the address to
	// return to.
	FtraceReturnToHandler(fp Word) Word
	// RegisterBegin runs register_ftrace_graph() up to
	// ftrace_startup_subops() and returns the index or a negative errno;
	// RegisterFinish runs the rest.
	RegisterBegin(o *Ops) int
	RegisterFinish(o *Ops)
	// UnregisterBegin runs unregister_ftrace_graph() up to
	// ftrace_shutdown_subops(), reporting whether it got there;
	// UnregisterFinish runs the rest.
	UnregisterBegin(o *Ops) bool
	UnregisterFinish(o *Ops)
	// FtraceGraphRetAddr is ftrace_graph_ret_addr() on task t, called with
	// current = task cur (NoTask: a remote CPU's task).
	FtraceGraphRetAddr(cur, t int, idx *int, ret, retp Word) Word
	// FtraceGraphGetRetStack is ftrace_graph_get_ret_stack(t, n).
	FtraceGraphGetRetStack(t, n int) (Frame, bool)
	// FgraphReserveData is fgraph_reserve_data() on the current task: the
	// word index of the data, or -1.
	FgraphReserveData(idx, sizeBytes int) int
	// FgraphRetrieveData is what a retfunc calls to get its data back
	// (fgraph_retrieve_data(), or fgraph_retrieve_parent_data(idx, &size,
	// 0) where the variant has it): the word index and size in bytes, or
	// -1.
	FgraphRetrieveData(idx int) (int, int)
	// FtraceGraphExitTask is ftrace_graph_exit_task() on task t.
	FtraceGraphExitTask(t int)
	// Reset returns the core's own state to its initial value (Machine.Reset
	// clears Mem).
	Reset()
	// Poke writes a store the harness made that the core did not (a user's
	// payload) into the core's memory; Mem already holds it.
	Poke(a Addr, v Word)
}

// SetCore replaces the machine's core (nil: the port). A core other than
// the port is attached to this machine and must not be shared.
func (m *Machine) SetCore(c Core) {
	if c == nil {
		c = portCore{m}
	}
	m.core = c
	_, port := c.(portCore)
	m.ext = !port
}

// portCore is the port: this package's line-by-line mirror of fgraph.c.
type portCore struct{ m *Machine }

func (p portCore) FunctionGraphEnter(ret, fn, fp, retp Word) int {
	return p.m.functionGraphEnterRegs(ret, fn, fp, retp)
}
func (p portCore) FtraceReturnToHandler(fp Word) Word { return p.m.ftraceReturnToHandler(fp) }
func (p portCore) RegisterBegin(o *Ops) int           { return p.m.registerBegin(o) }
func (p portCore) RegisterFinish(o *Ops)              { p.m.registerFinish(o) }
func (p portCore) UnregisterBegin(o *Ops) bool        { return p.m.unregisterBegin(o) }
func (p portCore) UnregisterFinish(o *Ops)            { p.m.unregisterFinish(o) }
func (p portCore) FtraceGraphRetAddr(cur, t int, idx *int, ret, retp Word) Word {
	return p.m.ftraceGraphRetAddr(cur, t, idx, ret, retp)
}
func (p portCore) FtraceGraphGetRetStack(t, n int) (Frame, bool) {
	return p.m.ftraceGraphGetRetStack(t, n)
}
func (p portCore) FgraphReserveData(idx, sizeBytes int) int {
	return p.m.fgraphReserveData(idx, sizeBytes)
}
func (p portCore) FgraphRetrieveData(idx int) (int, int) {
	if p.m.cfg.Variant == V611 || p.m.cfg.Variant == V612 {
		return p.m.fgraphRetrieveData(idx)
	}
	return p.m.fgraphRetrieveParentData(idx, 0)
}
func (p portCore) FtraceGraphExitTask(t int) { p.m.ftraceGraphExitTask(t) }
func (p portCore) Reset()                    {}
func (p portCore) Poke(a Addr, v Word)       {}

// The Machine's entry points into its core.

// RegisterBegin runs register_ftrace_graph() up to ftrace_startup_subops().
func (m *Machine) RegisterBegin(o *Ops) int { return m.core.RegisterBegin(o) }

// RegisterFinish runs the rest of register_ftrace_graph().
func (m *Machine) RegisterFinish(o *Ops) { m.core.RegisterFinish(o) }

// UnregisterBegin runs unregister_ftrace_graph() up to ftrace_shutdown_subops().
func (m *Machine) UnregisterBegin(o *Ops) bool { return m.core.UnregisterBegin(o) }

// UnregisterFinish runs the rest of unregister_ftrace_graph().
func (m *Machine) UnregisterFinish(o *Ops) { m.core.UnregisterFinish(o) }

// FtraceGraphRetAddr converts a return address found on task t's real stack
// at retp back to its original value (ftrace_graph_ret_addr()), called by
// code running on this CPU (current is Machine.Current). idx is the
// unwinder's cursor (nil for a caller that passes NULL).
func (m *Machine) FtraceGraphRetAddr(t int, idx *int, ret, retp Word) Word {
	return m.FtraceGraphRetAddrFrom(m.Current, t, idx, ret, retp)
}

// NoTask is a `current` whose shadow stack the machine does not hold: the
// task running on another CPU (a remote unwinder).
const NoTask = -1

// FtraceGraphRetAddrFrom is ftrace_graph_ret_addr(task t, idx, ret, retp)
// called with current = task cur (NoTask: the task of another CPU).
func (m *Machine) FtraceGraphRetAddrFrom(cur, t int, idx *int, ret, retp Word) Word {
	if t < 0 || t >= len(m.tasks) {
		m.warn(SiteUnwindCurr, "no task %d (machine has %d)", t, len(m.tasks))
		return ret
	}
	return m.core.FtraceGraphRetAddr(cur, t, idx, ret, retp)
}

// FtraceGraphGetRetStack returns task t's n-th frame from the top
// (ftrace_graph_get_ret_stack()).
func (m *Machine) FtraceGraphGetRetStack(t, n int) (Frame, bool) {
	if t < 0 || t >= len(m.tasks) {
		m.warn(SiteUnwindCurr, "no task %d (machine has %d)", t, len(m.tasks))
		return Frame{}, false
	}
	return m.core.FtraceGraphGetRetStack(t, n)
}

// FtraceGraphExitTask drops task t's stack (ftrace_graph_exit_task()); the
// task is dead from then on.
func (m *Machine) FtraceGraphExitTask(t int) {
	if t < 0 || t >= len(m.tasks) {
		m.warn(SiteExitTask, "exit of unknown task %d", t)
		return
	}
	m.core.FtraceGraphExitTask(t)
	m.tasks[t].alive = false
}

// The arch and user side, for a core outside this package.

// Warn records a WARN or refusal of the code under test at site s.
func (m *Machine) Warn(s Site, msg string) { m.warn(s, "%s", msg) }

// Crash records a crash of the code under test (a WARN whose message
// starts with CrashPrefix).
func (m *Machine) Crash(s Site, msg string) { m.crash(s, msg) }

// UserEntry runs user k's entryfunc for a call reaching it with gops (the
// fgraph_ops pointer passed, as a handle), as the port's callbacks do.
func (m *Machine) UserEntry(k int, gops Word, tr *Trace) bool {
	if k < 0 || k >= len(m.ops) {
		return false
	}
	return m.entryfunc(m.ops[k], gops, tr, false)
}

// UserReturn runs user k's retfunc.
func (m *Machine) UserReturn(k int, gops Word, tr *Trace) {
	if k < 0 || k >= len(m.ops) {
		return
	}
	m.retfunc(m.ops[k], gops, tr, false)
}

// OpsTest is ftrace_ops_test(&gops->ops, fn, NULL) for user k: its filter
// hash, readable once ftrace_startup_subops() made it live.
func (m *Machine) OpsTest(k int, fn Word) bool {
	if k < 0 || k >= len(m.ops) {
		return false
	}
	return m.ftraceOpsTest(OpsHandle(k), fn)
}

// TraceClock is trace_clock_local(): a deterministic counter.
func (m *Machine) TraceClock() Word { return m.traceClock() }

// MarkRegistered records that o was given an index: a new registration
// generation (for the model and the oracles).
func (m *Machine) MarkRegistered(o *Ops) {
	m.regGen++
	o.gen, o.reg = m.regGen, true
}

// MarkUnregistered records that o's unregister completed.
func (m *Machine) MarkUnregistered(o *Ops) { o.reg = false }

// CurrentRetp is the slot address of the call the current context is
// entering (what a user reads from fregs), 0 outside an entry.
func (m *Machine) CurrentRetp() Word { return m.entryRetp[m.Level&7] }

// poke is a store with no hooks attached: Mem, and the core's memory.
func (m *Machine) poke(a Addr, v Word) {
	m.Mem[a] = v
	if m.ext {
		m.core.Poke(a, v)
	}
}

// Poke writes v at a in Mem and in the core's memory: the harness's
// commit of a store.
func (m *Machine) Poke(a Addr, v Word) { m.poke(a, v) }

// ReadFrame reads the frame at word start of task t's shadow stack the way
// an unwinder that got it from ftrace_graph_get_ret_stack() does.
func (m *Machine) ReadFrame(t, start int) Frame { return m.readFrame(t, start) }
