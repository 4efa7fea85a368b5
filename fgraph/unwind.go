package fgraph

// getRetStack steps from pos to the frame below it: it sets *frame to the
// frame start and reports whether there was one.
// Source: get_ret_stack(), kernel/trace/fgraph.c v6.11+. The WARN_ON_ONCE on
// a bad offset is recorded.
func (m *Machine) getRetStack(s Site, t, pos int, frame *int) bool {
	if pos <= 0 {
		return false
	}
	pos--
	w, ok := m.getFgraphEntry(s, t, pos)
	if !ok {
		return false
	}
	offs := GetFrameOffset(w)
	if offs <= 0 || offs > pos {
		m.warn(s, "WARN_ON_ONCE: get_ret_stack: bad offset %d at word %d", offs, pos)
		return false
	}
	*frame = pos - offs
	return true
}

// Frame is a decoded struct ftrace_ret_stack.
type Frame struct {
	Start           int
	Ret, Func, Retp Word
}

func (m *Machine) readFrame(t, start int) Frame {
	f := Frame{Start: start}
	f.Ret = m.ld(SiteUnwindRet, m.WordAddr(t, start+FieldRet))
	f.Func = m.ld(SiteUnwindFunc, m.WordAddr(t, start+FieldFunc))
	f.Retp = m.ld(SiteUnwindRetp, m.WordAddr(t, start+m.cfg.FieldRetp()))
	return f
}

// FtraceGraphGetRetStack returns task t's n-th frame from the top.
// Source: ftrace_graph_get_ret_stack(), kernel/trace/fgraph.c v6.11+.
func (m *Machine) ftraceGraphGetRetStack(t, n int) (Frame, bool) {
	if !m.taskOK(SiteUnwindCurr, t) {
		return Frame{}, false
	}
	offset := wordInt(m.ld(SiteUnwindCurr, m.TaskBase(t)+TaskCurr))
	if offset < 0 {
		return Frame{}, false
	}
	// The first get_ret_stack(task, offset, &offset) is a further use of
	// the load; later steps use what get_ret_stack wrote.
	offset = wordInt(m.reread(SiteUnwindCurrUse, m.TaskBase(t)+TaskCurr, intWord(offset), Plain))
	var ok bool
	for {
		ok = m.getRetStack(SiteUnwindOffset, t, offset, &offset)
		n--
		if !ok || n < 0 {
			break
		}
	}
	if !ok {
		return Frame{}, false
	}
	return m.readFrame(t, offset), true
}

// FtraceGraphTopRetAddr returns the first return address on task t's shadow
// stack that is not return_to_handler, or 0.
// Source: ftrace_graph_top_ret_addr(), gregkh/linux 000aa47a51233.
func (m *Machine) FtraceGraphTopRetAddr(t int) Word {
	if !m.taskOK(SiteUnwindCurr, t) {
		return 0
	}
	offset := wordInt(m.ld(SiteUnwindCurr, m.TaskBase(t)+TaskCurr))
	if offset < 0 {
		return 0
	}
	offset = wordInt(m.reread(SiteUnwindCurrUse, m.TaskBase(t)+TaskCurr, intWord(offset), Plain))
	for {
		if !m.getRetStack(SiteUnwindOffset, t, offset, &offset) {
			return 0
		}
		if r := m.ld(SiteUnwindRet, m.WordAddr(t, offset+FieldRet)); r != ReturnToHandler {
			return m.reread(SiteUnwindRetUse, m.WordAddr(t, offset+FieldRet), r, Plain)
		}
	}
}

// FtraceGraphRetAddr converts a return address found on task t's real stack
// at retp back to its original value, called with current = task cur
// (NoTask: the task of another CPU). idx is the unwinder's cursor (nil for
// a caller that passes NULL).
// Source: ftrace_graph_ret_addr(), kernel/trace/fgraph.c v6.11+ with
// 29c1c24a2707 (idx cursor), 375bb57292f4 (tail calls) and "function_graph:
// Fix the ret_stack used by ftrace_graph_ret_addr()" (Petr Pavlu, for-linus
// 8 Aug 2024, v6.11-rc, Fixes 7aa1eaef9f42): it walks task's words. The seed
// ([PATCH 04/20], and 7aa1eaef9f42 as merged in fe835e3ca40e) starts from
// task->curr_ret_stack but walks get_ret_stack(current, ...): current's
// words, which are task's only when current is task. It also ignores idx and
// has no tail-call clause.
func (m *Machine) ftraceGraphRetAddr(cur, t int, idx *int, ret, retp Word) Word {
	if ret != ReturnToHandler || !m.taskOK(SiteUnwindCurr, t) {
		return ret
	}
	mu := m.cfg.Mutants
	seed := m.cfg.Variant == Seed
	if idx == nil && !seed {
		return ret
	}
	var i int
	if !seed && !mu.Has(MF5Idx) && *idx != 0 {
		i = *idx
	} else {
		i = wordInt(m.ld(SiteUnwindCurr, m.TaskBase(t)+TaskCurr))
	}
	w := t // whose words get_ret_stack() walks
	if mu.Has(MRetAddrCurrent) && !seed {
		w = cur
		if i > 0 && (w < 0 || w >= len(m.tasks)) { //fgcheck:kept the port's model of a walk of a task it does not hold (the mutant's)
			m.crash(SiteUnwindOffset, "ftrace_graph_ret_addr: get_ret_stack(current, ...) on another CPU's unwind: current is not the unwound task")
			return ret
		}
	}
	if seed {
		w = cur
		if i > 0 && (w < 0 || w >= len(m.tasks)) { //fgcheck:kept the port's model of a walk of a task it does not hold
			// get_ret_stack(current, ...) on a task the machine does not
			// hold: Petr Pavlu's NULL dereference when current->ret_stack
			// is NULL; garbage words otherwise.
			m.crash(SiteUnwindOffset, "ftrace_graph_ret_addr: the seed walks current->ret_stack, and current is not the unwound task")
			return ret
		}
	}
	for i > 0 {
		if !m.getRetStack(SiteUnwindOffset, w, i, &i) { //fgcheck:kept an unwinder runs at one instant of the harness (an oracle or a remote CPU's step), so a re-load of curr_ret_stack for the first step cannot differ; later steps use what get_ret_stack wrote
			break
		}
		// ret_stack->retp == retp && ret_stack->ret != return_handler,
		// then *idx = i and return ret_stack->ret: two loads of ->ret in
		// the source (the store through idx between them may alias it).
		if m.ld(SiteUnwindRetp, m.WordAddr(w, i+m.cfg.FieldRetp())) == retp &&
			(seed || mu.Has(MF5Tail) || m.ld(SiteUnwindRet, m.WordAddr(w, i+FieldRet)) != ReturnToHandler) {
			if idx != nil && !seed && !mu.Has(MF5Idx) {
				*idx = i
			}
			return m.ld(SiteUnwindRet, m.WordAddr(w, i+FieldRet))
		}
	}
	return ret
}

// taskOK refuses (and records) a task number the machine does not have: the
// kernel takes a task pointer and cannot get this wrong; a caller of the port
// can.
func (m *Machine) taskOK(s Site, t int) bool {
	if t < 0 || t >= len(m.tasks) {
		m.warn(s, "no task %d (machine has %d)", t, len(m.tasks))
		return false
	}
	return true
}
