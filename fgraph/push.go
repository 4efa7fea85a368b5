package fgraph

// EBUSY is the kernel's -EBUSY.
const EBUSY = -16

// ftracePushReturnTrace pushes a frame on current's shadow stack and returns
// the index of its RESERVED word, or EBUSY.
// Source: ftrace_push_return_trace(), kernel/trace/fgraph.c, v6.11..v6.18
// (fe835e3ca40e, 66611c047570, 000aa47a51233); calltime only through v6.13.
// kernel-fgraph.md section 2.1, writes W1..W5.
func (m *Machine) ftracePushReturnTrace(ret, fn, fp, retp Word, fgraphIdx int) int {
	_ = fp        // HAVE_FUNCTION_GRAPH_FP_TEST is off on x86-64
	_ = fgraphIdx // accepted but unused since S2 (seed review, section 3 item 3)
	c := m.cur()
	F := m.cfg.FrameWords
	mu := m.cfg.Mutants

	if m.ldOnce(SitePushDead, AddrDead) != 0 { // ftrace_graph_is_dead()
		return EBUSY
	}
	if m.ld(SitePushRetStack, c+TaskRetStack) == 0 { // !current->ret_stack
		return EBUSY
	}
	// Set val to "reserved" with the delta to the new fgraph frame.
	val := MakeReserved(F)
	// We must make sure the ret_stack is tested before we read anything else.
	m.fence(SitePushRmb, SmpRmb)

	if wordInt(m.ld(SitePushCheck, c+TaskCurr))+F+1 >= m.cfg.ShadowStackMaxOffset() && !m.cfg.Mutants.Has(MPushNoLimit) {
		m.atomicInc(SitePushOverrun, c+TaskOverrun)
		return EBUSY
	}
	var calltime Word
	if m.cfg.FieldCalltime() >= 0 {
		calltime = m.traceClock()
	}

	// offset = READ_ONCE(current->curr_ret_stack);
	// ret_stack = RET_STACK(current, offset); offset += FGRAPH_FRAME_OFFSET;
	k := Once
	if mu.Has(MPushCurrPlain) {
		k = Plain
	}
	offset := wordInt(m.load(k, SitePushCurr, c+TaskCurr))
	base := offset // the frame: ret_stack
	off := wordInt(m.reread(SitePushCurrUse, c+TaskCurr, intWord(offset), k)) + F
	if off >= m.cfg.StackWords || base < 0 {
		m.warn(SitePushCurr, "push: curr_ret_stack %d out of range", base)
		return EBUSY
	}

	if mu.Has(MPush1) {
		// M-push-1: the increment before the offset word.
		m.stOnce(SitePushW3, c+TaskCurr, intWord(off+1))
		m.barrier(SitePushBarrier1)
		m.st(SitePushW1, m.word(off), val)
		m.st(SitePushW2, m.word(base+FieldRet), ret)
	} else {
		// ret offset = FGRAPH_FRAME_OFFSET ; type = reserved
		m.st(SitePushW1, m.word(off), val)
		m.st(SitePushW2, m.word(base+FieldRet), ret)
		if m.cfg.RetpGuard {
			// Fix variant: no frame visible above the raise may carry a
			// retp before its ret is final.
			m.st(SitePushW2Retp, m.word(base+m.cfg.FieldRetp()), 0)
		}
		if mu.Has(MPush2) {
			// M-push-2: every frame field only before the increment.
			m.st(SitePushW5Func, m.word(base+FieldFunc), fn)
			if ct := m.cfg.FieldCalltime(); ct >= 0 {
				m.st(SitePushW5Calltime, m.word(base+ct), calltime)
			}
			m.st(SitePushW5Retp, m.word(base+m.cfg.FieldRetp()), retp)
		}
		// The unwinders expect curr_ret_stack to point to either zero or
		// an offset where to find the next ret_stack (kernel comment).
		if !mu.Has(MPushBarrier1) {
			m.barrier(SitePushBarrier1)
		}
		if mu.Has(MPushW3Plain) {
			m.st(SitePushW3, c+TaskCurr, intWord(off+1))
		} else {
			m.stOnce(SitePushW3, c+TaskCurr, intWord(off+1))
		}
	}
	// This next barrier is to ensure that an interrupt coming in will not
	// corrupt what we are about to write.
	if !mu.Has(MPushBarrier2) {
		m.barrier(SitePushBarrier2)
	}
	// Still keep it reserved even if an interrupt came in.
	if !mu.Has(MPush3) {
		m.st(SitePushW4, m.word(off), val)
	}
	if !mu.Has(MPush2) {
		m.st(SitePushW5Ret, m.word(base+FieldRet), ret)
		m.st(SitePushW5Func, m.word(base+FieldFunc), fn)
		if ct := m.cfg.FieldCalltime(); ct >= 0 {
			m.st(SitePushW5Calltime, m.word(base+ct), calltime)
		}
		if m.cfg.RetpGuard {
			m.barrier(SitePushW5Retp)
		}
		m.st(SitePushW5Retp, m.word(base+m.cfg.FieldRetp()), retp)
	}
	return off
}
