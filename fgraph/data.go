package fgraph

// fgraphReserveData reserves size bytes on the current frame for user idx and
// returns the index of the payload's first word, or -1 (NULL).
// Source: fgraph_reserve_data(), kernel/trace/fgraph.c v6.11+ (91c46b0aa917).
// kernel-fgraph.md section 2.3.
func (m *Machine) fgraphReserveData(idx, sizeBytes int) int {
	if m.cfg.ReserveIrqOff {
		m.fence(SiteReserveCall, IrqOff)
		defer m.fence(SiteReserveCall, IrqOn)
	}
	c := m.cur()
	mu := m.cfg.Mutants
	curr := wordInt(m.ld(SiteReserveCurr, c+TaskCurr))

	if sizeBytes > FgraphMaxDataSize {
		m.warn(SiteReserveCurr, "fgraph_reserve_data: %d bytes > FGRAPH_MAX_DATA_SIZE", sizeBytes)
		return -1
	}
	// Convert the data size to number of longs (a shift by 3, as the kernel).
	dataSize := (sizeBytes + LongSize - 1) >> 3

	if curr-1 < 0 || curr-1 >= m.cfg.StackWords { //fgcheck:kept the port's range check
		// get_fgraph_entry(current, curr_ret_stack - 1) outside the array.
		m.crash(SiteReservePrev, "fgraph_reserve_data: read of ret_stack[-1] or beyond")
		return -1
	}
	val := m.ld(SiteReservePrev, m.word(curr-1))
	// data = &current->ret_stack[curr_ret_stack]; curr_ret_stack += ...:
	// further uses of the plain load of current->curr_ret_stack.
	data := wordInt(m.reread(SiteReserveCurrUse, c+TaskCurr, intWord(curr), Plain))

	curr = wordInt(m.reread(SiteReserveCurrUse, c+TaskCurr, intWord(curr), Plain)) + dataSize + 1
	if curr >= m.cfg.ShadowStackMaxOffset() {
		m.warn(SiteReserveCurr, "fgraph_reserve_data: no room")
		return -1
	}
	// make_data_type_val(idx, data_size, __get_offset(val) + data_size + 1);
	// size-1 is computed in int and shifted into an unsigned long, as in C.
	val = Word(int64(idx))<<FgraphDataIndexShift | Word(int64(dataSize-1))<<FgraphDataShift |
		FgraphTypeData<<FgraphTypeShift | Word(GetFrameOffset(val)+dataSize+1)

	if mu.Has(MReserve1) {
		m.st(SiteReserveW2, c+TaskCurr, intWord(curr))
		m.barrier(SiteReserveBarrier)
		m.st(SiteReserveW1, m.word(curr-1), val)
	} else {
		// Set the last word to be reserved.
		m.st(SiteReserveW1, m.word(curr-1), val)
		// Make sure interrupts see this.
		if !mu.Has(MReserveBarrier) {
			m.barrier(SiteReserveBarrier)
		}
		m.st(SiteReserveW2, c+TaskCurr, intWord(curr))
	}
	// Again sync with interrupts, and reset reserve.
	if !mu.Has(MReserve3) {
		m.st(SiteReserveW3, m.word(curr-1), val)
	}
	return data
}

// getFgraphEntry is get_fgraph_entry(t, offset): a plain read of a word. An
// index outside the array is a wild read in C; here it is a recorded crash.
func (m *Machine) getFgraphEntry(s Site, t, offset int) (Word, bool) {
	if offset < 0 || offset >= m.cfg.StackWords {
		m.crash(s, "read of ret_stack[out of range]")
		return 0, false
	}
	return m.ld(s, m.WordAddr(t, offset)), true
}

// fgraphRetrieveData returns the payload index and size in bytes of user
// idx's data on the current frame, or -1.
// Source: fgraph_retrieve_data(), kernel/trace/fgraph.c v6.11..v6.12.
func (m *Machine) fgraphRetrieveData(idx int) (int, int) {
	offset := wordInt(m.ld(SiteRetrieveCurr, m.cur()+TaskCurr)) - 1
	return m.dataChain(idx, offset)
}

// dataChain walks the DATA words down from offset.
// Source: the loop shared by fgraph_retrieve_data() and
// fgraph_retrieve_parent_data(), with get_data_type_data().
// Each DATA word is used up to three times (__get_type, __get_data_index,
// __get_data_size): the further uses are re-reads of the word.
func (m *Machine) dataChain(idx, offset int) (int, int) {
	val, ok := m.getFgraphEntry(SiteRetrieveWord, m.Current, offset)
	for ok && GetType(val) == FgraphTypeData {
		if GetDataIndex(m.reread(SiteRetrieveWordUse, m.word(offset), val, Plain)) == idx {
			size := GetDataSize(m.reread(SiteRetrieveWordUse, m.word(offset), val, Plain))
			return offset - size, size * LongSize
		}
		step := GetDataSize(m.reread(SiteRetrieveWordUse, m.word(offset), val, Plain)) + 1
		if m.cfg.Mutants.Has(MDataChainStep) {
			step-- // steps over the payload only
		}
		offset -= step
		val, ok = m.getFgraphEntry(SiteRetrieveWord, m.Current, offset)
	}
	return -1, 0
}

// fgraphRetrieveParentData returns user idx's data of the frame depth levels
// up (0 is the current function), or -1.
// Source: fgraph_retrieve_parent_data(), kernel/trace/fgraph.c v6.13+
// (a312a0f7834e; 000aa47a51233).
func (m *Machine) fgraphRetrieveParentData(idx, depth int) (int, int) {
	offset := wordInt(m.ld(SiteRetrieveCurr, m.cur()+TaskCurr))
	if offset <= 0 {
		return -1, 0
	}
	// The first get_ret_stack(current, offset, &next_offset) is a further
	// use of the load.
	offset = wordInt(m.reread(SiteRetrieveCurrUse, m.cur()+TaskCurr, intWord(offset), Plain))
	found := false
	for {
		var next int
		found = m.getRetStack(SiteRetrieveWord, m.Current, offset, &next)
		depth--
		if m.cfg.Mutants.Has(MParentDepth) && depth == 0 {
			depth--
		}
		if !found || depth < 0 {
			break
		}
		offset = next
	}
	if !found {
		return -1, 0
	}
	return m.dataChain(idx, offset-1)
}

// RetrieveData is fgraph_retrieve_data (v6.11) or
// fgraph_retrieve_parent_data(idx, size, 0) (later) on the current task, for
// tests: it returns the payload words or nil.
func (m *Machine) RetrieveData(idx int) []Word {
	var p, size int
	if m.cfg.Variant == V611 || m.cfg.Variant == V612 {
		p, size = m.fgraphRetrieveData(idx)
	} else {
		p, size = m.fgraphRetrieveParentData(idx, 0)
	}
	if p < 0 {
		return nil
	}
	out := make([]Word, size/LongSize)
	for i := range out {
		out[i] = m.ld(SiteUserPayloadLoad, m.word(p+i))
	}
	return out
}

// TraceGraphNotrace is TRACE_GRAPH_NOTRACE, 1 << TRACE_GRAPH_NOTRACE_BIT:
// the function graph tracer's per-task "inside a set_graph_notrace
// function" flag, kept in its task variable since b84214890a9b.
// Source: kernel/trace/trace.h (TRACE_GRAPH_FL 1, TRACE_GRAPH_DEPTH_START_BIT,
// TRACE_GRAPH_DEPTH_END_BIT, TRACE_GRAPH_NOTRACE_BIT: bit 4; read in the
// 6.12.117 tree).
const TraceGraphNotrace Word = 1 << 4

// fgraphGetTaskVar returns the address of gops' task variable on current:
// &SHADOW_STACK_TASK_VARS(current->ret_stack)[gops->idx], or -1 when the
// variant has no task variables (the seed predates 4497412a1f7b).
// Source: fgraph_get_task_var() and ret_stack_get_task_var(),
// kernel/trace/fgraph.c v6.11+ (4497412a1f7b; 000aa47a51233).
func (m *Machine) fgraphGetTaskVar(idx int) Addr {
	vb := m.cfg.TaskVarBase()
	if vb < 0 || idx < 0 || idx >= FgraphArraySize {
		return -1
	}
	return m.word(vb + idx)
}

// TaskVar returns task t's task variable idx (memory), for tests.
func (m *Machine) TaskVar(t, idx int) Word {
	vb := m.cfg.TaskVarBase()
	if vb < 0 || idx < 0 || idx >= FgraphArraySize {
		return 0
	}
	return m.Mem[m.WordAddr(t, vb+idx)]
}
