package fgraph

// graphInitTask gives task t a fresh shadow stack.
// Source: graph_init_task(), kernel/trace/fgraph.c v6.11+ (section 2.8):
// counters first, smp_wmb(), then publish t->ret_stack.
func (m *Machine) graphInitTask(t int) {
	b := m.tasks[t].base
	m.stAtomic(SiteInitTask, b+TaskOverrun, 0)
	if vb := m.cfg.TaskVarBase(); vb >= 0 {
		for i := 0; i < FgraphArraySize; i++ { // ret_stack_init_task_vars()
			m.st(SiteInitTask, m.WordAddr(t, vb+i), 0)
		}
	}
	m.st(SiteInitTask, b+TaskCurr, 0)
	m.st(SiteInitTask, b+TaskDepth, intWord(-1))
	// make curr_ret_stack visible before we add the ret_stack
	m.fence(SiteInitTask, SmpWmb)
	m.st(SiteInitTask, b+TaskRetStack, 1)
}

// startGraphTracing gives every live task without a stack one, idle task
// included. Source: start_graph_tracing() and alloc_retstack_tasklist().
// Mutant F7: the idle task is left without a stack.
func (m *Machine) startGraphTracing() {
	for t := range m.tasks {
		ti := &m.tasks[t]
		if !ti.alive || m.ld(SiteInitTask, ti.base+TaskRetStack) != 0 {
			continue
		}
		if ti.idle && m.cfg.Mutants.Has(MF7) {
			continue
		}
		m.graphInitTask(t)
	}
}

// initTaskVars zeroes task variable idx in every stack.
// Source: init_task_vars().
func (m *Machine) initTaskVars(idx int) {
	vb := m.cfg.TaskVarBase()
	if vb < 0 {
		return
	}
	for t := range m.tasks {
		if m.ld(SiteTaskVars, m.tasks[t].base+TaskRetStack) != 0 {
			m.st(SiteTaskVars, m.WordAddr(t, vb+idx), 0)
		}
	}
}

// FtraceGraphExitTask drops task t's stack.
// Source: ftrace_graph_exit_task(): NULL the pointer, barrier(), free.
func (m *Machine) ftraceGraphExitTask(t int) {
	b := m.tasks[t].base
	m.ld(SiteExitTask, b+TaskRetStack) // ret_stack = t->ret_stack
	m.st(SiteExitTask, b+TaskRetStack, 0)
	// NULL must become visible to IRQs before we free it.
	m.barrier(SiteExitTask)
}

// FtraceGraphInitTask is fork: clear the child's fields, allocate if active.
// Source: ftrace_graph_init_task().
func (m *Machine) FtraceGraphInitTask(t int) {
	if !m.taskOK(SiteInitTask, t) {
		return
	}
	b := m.tasks[t].base
	m.st(SiteInitTask, b+TaskRetStack, 0)
	m.st(SiteInitTask, b+TaskCurr, 0)
	m.st(SiteInitTask, b+TaskDepth, intWord(-1))
	m.tasks[t].alive = true
	m.tasks[t].slots = m.tasks[t].slots[:0]
	m.slotVer++
	if m.ld(SiteInitTask, AddrActive) != 0 {
		m.graphInitTask(t)
	}
}

// BaseFunc is the symbolic function a context starts in: 0 for a task (its
// entry point), 0xfff0+level for an interrupt handler, so return addresses
// of different contexts never coincide.
func baseFunc(level int) int {
	if level == 0 {
		return 0
	}
	return 0xfff0 + level
}

// retpBase is where a context's real stack lives: distinct per task and
// context level, so a slot address is unique while it is live.
func retpBase(task, level int) Word {
	return 0xffffc90000000000 + Word(level)<<20 + Word(task)<<16
}

// archGate says whether the arch calls function_graph_enter for fn: some
// started user's filter contains it (the graph_ops manager's hash), or, on
// an entry-for-all arch, any user is active.
// Source: ftrace's per-ops call sites (kernel/trace/ftrace.c graph_ops
// subops); prepare_ftrace_return() in arch/x86/kernel/ftrace.c.
func (m *Machine) archGate(fn int) bool {
	any := false
	for _, o := range m.ops {
		if m.ld(SiteArchGate, m.opsAddr(o.k, OpsReady)) == 0 {
			continue
		}
		any = true
		if m.cfg.Variant == Seed || o.Traces(fn) {
			return true
		}
	}
	return any && m.cfg.EntryForAll
}

// PeekCall returns the return address and slot address that Call(fn, tail)
// will use, without doing anything.
func (m *Machine) PeekCall(tail bool) (ret, retp Word) {
	ti := &m.tasks[m.Current]
	if tail && len(ti.slots) > 0 && ti.slots[len(ti.slots)-1].ctx == m.Level {
		sl := ti.slots[len(ti.slots)-1]
		return sl.val, sl.retp
	}
	caller, n := baseFunc(m.Level), 0
	for i := len(ti.slots) - 1; i >= 0; i-- {
		if ti.slots[i].ctx == m.Level {
			if n == 0 {
				caller = ti.slots[i].fn
			}
			n++
		}
	}
	return CallSite(caller, n), retpBase(m.Current, m.Level) + Word(n)*8
}

// Call is a call to function fn by the current context on the current task,
// through the arch's graph entry (prepare_ftrace_return on x86): it pushes a
// real return-address slot, runs function_graph_enter, and on success
// replaces the slot's content with return_to_handler. With tail, the current
// function jumps to fn reusing its slot. It reports whether the slot was
// hijacked.
func (m *Machine) Call(fn int, tail bool) bool {
	ti := &m.tasks[m.Current]
	var sl *slot
	m.slotVer++
	if tail && len(ti.slots) > 0 && ti.slots[len(ti.slots)-1].ctx == m.Level {
		sl = &ti.slots[len(ti.slots)-1]
		sl.fn = fn
	} else {
		caller, n := baseFunc(m.Level), 0
		for i := len(ti.slots) - 1; i >= 0; i-- {
			if ti.slots[i].ctx == m.Level {
				if n == 0 {
					caller = ti.slots[i].fn
				}
				n++
			}
		}
		ret := CallSite(caller, n)
		ti.slots = append(ti.slots, slot{retp: retpBase(m.Current, m.Level) + Word(n)*8, val: ret, orig: ret, fn: fn, ctx: m.Level})
		sl = &ti.slots[len(ti.slots)-1]
	}
	if !m.archGate(fn) {
		return false
	}
	bit := -1
	if m.cfg.Variant != Latest && !m.cfg.Mutants.Has(MF14) {
		// Before v6.14 the arch caller holds the recursion lock (x86).
		if bit = m.ftraceTestRecursionTrylock(); bit < 0 {
			return false
		}
	}
	retp := sl.retp
	prevRetp := m.entryRetp[m.Level&7]
	m.entryRetp[m.Level&7] = retp
	r := m.core.FunctionGraphEnter(sl.val, FuncAddr(fn), 0, retp)
	m.entryRetp[m.Level&7] = prevRetp
	m.fence(SiteCallDone, CallOut) // function_graph_enter is out of line
	sl = &m.tasks[m.Current].slots[m.slotIndex(retp)]
	if r == 0 {
		sl.val = ReturnToHandler // *parent = return_hooker
		m.slotVer++
	}
	if bit >= 0 {
		m.ftraceTestRecursionUnlock(bit)
	}
	return r == 0
}

func (m *Machine) slotIndex(retp Word) int {
	s := m.tasks[m.Current].slots
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].retp == retp {
			return i
		}
	}
	return len(s) - 1
}

// Return returns from the current context's top function: the ret
// instruction pops the slot; while it holds return_to_handler the trampoline
// runs ftrace_return_to_handler (twice for a tail call). It returns the
// address control reaches and the one the caller pushed.
func (m *Machine) Return() (got, want Word) {
	ti := &m.tasks[m.Current]
	if len(ti.slots) == 0 || ti.slots[len(ti.slots)-1].ctx != m.Level {
		m.warn(SiteCallDone, "return with no call in this context")
		return 0, 0
	}
	sl := ti.slots[len(ti.slots)-1]
	ti.slots = ti.slots[:len(ti.slots)-1]
	m.slotVer++
	v := sl.val
	for n := 0; v == ReturnToHandler && n < 64; n++ {
		m.Handlers[m.Level&7]++
		v = m.core.FtraceReturnToHandler(0)
		m.fence(SiteCallDone, CallOut)
	}
	return v, sl.orig
}

// Slot is one live real-stack return-address slot, for unwinders.
type Slot struct {
	Retp, Val, Orig Word
	Func, Level     int
}

// Slots returns task t's live real-stack slots, bottom first.
func (m *Machine) Slots(t int) []Slot {
	s := m.tasks[t].slots
	out := make([]Slot, len(s))
	for i, x := range s {
		out[i] = Slot{Retp: x.retp, Val: x.val, Orig: x.orig, Func: x.fn, Level: x.ctx}
	}
	return out
}

// SlotsVersion is a count that moves on at every change of any task's
// real stack: two reads of it that agree, on the same machine, saw the
// same slots in between.
func (m *Machine) SlotsVersion() uint64 { return m.slotVer }

// SlotCount is the number of live slots of task t.
func (m *Machine) SlotCount(t int) int { return len(m.tasks[t].slots) }

// SlotAt returns slot i (0 = bottom) of task t.
func (m *Machine) SlotAt(t, i int) Slot {
	x := m.tasks[t].slots[i]
	return Slot{Retp: x.retp, Val: x.val, Orig: x.orig, Func: x.fn, Level: x.ctx}
}

// SlotWords returns the address, the content and the pushed return
// address of slot i (0 = bottom) of task t: SlotAt for a hot loop, whose
// struct result was built with word stores and copied with wider loads
// that stalled on store forwarding (3 % of the explorer's time).
func (m *Machine) SlotWords(t, i int) (retp, val, orig Word) {
	x := &m.tasks[t].slots[i]
	return x.retp, x.val, x.orig
}

// Alive reports whether task t has not exited.
func (m *Machine) Alive(t int) bool { return m.tasks[t].alive }
