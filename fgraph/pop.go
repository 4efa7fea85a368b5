package fgraph

import "math/bits"

// ftracePopReturnTrace finds the top frame; it only reads the stack.
// It returns the frame start and sets *off to the BITMAP word, or -1.
// Source: ftrace_pop_return_trace(), kernel/trace/fgraph.c v6.11+.
// kernel-fgraph.md section 2.4.
func (m *Machine) ftracePopReturnTrace(tr *Trace, ret *Word, fp Word, off *int) int {
	c := m.cur()
	var start int
	if !m.getRetStack(SitePopOffset, m.Current, wordInt(m.ld(SitePopCurr, c+TaskCurr)), &start) {
		m.ftraceGraphStop()
		m.crash(SitePopOffset, "Bad function graph ret_stack pointer")
		// Might as well panic, otherwise we have no where to go.
		*ret = PanicAddr
		return -1
	}
	*off = start + m.cfg.FrameWords
	*ret = m.ld(SitePopRet, m.word(start+FieldRet))
	tr.Func = m.ld(SitePopFunc, m.word(start+FieldFunc))
	if ct := m.cfg.FieldCalltime(); ct >= 0 {
		tr.Calltime = m.ld(SitePopFunc, m.word(start+ct))
	}
	tr.Overrun = wordInt(m.ldAtomic(SitePopOverrun, c+TaskOverrun))
	tr.Depth = wordInt(m.ld(SitePopDepth, c+TaskDepth))
	// "Make sure the decrement is seen before ftrace_graph_return" (stale).
	m.barrier(SitePopBarrier)
	return start
}

// ftraceReturnToHandler is the return side: pop, run the retfuncs, drop the
// frame. It returns the original return address.
// Source: __ftrace_return_to_handler(), kernel/trace/fgraph.c v6.11+
// (fe835e3ca40e, 66611c047570, 000aa47a51233; with the recursion trylock of
// 0db0934e7f9b on latest, dc1898433b96); the loop over all 16 bits of
// [PATCH 04/20] for the seed. kernel-fgraph.md section 2.4.
func (m *Machine) ftraceReturnToHandler(fp Word) Word {
	c := m.cur()
	mu := m.cfg.Mutants
	var tr Trace
	var ret Word
	var off int
	if m.ftracePopReturnTrace(&tr, &ret, fp, &off) < 0 {
		m.ftraceGraphStop()
		// Might as well panic. What else to do?
		return PanicAddr
	}
	if m.cfg.FieldCalltime() >= 0 {
		// trace.rettime = trace_clock_local(); (through v6.13, where the
		// frame has calltime; found by the differential against Debian's
		// 6.12.117: without it the next push's calltime differed)
		m.traceClock()
	}
	if mu.Has(MRet1) {
		m.st(SiteRetLower, c+TaskCurr, intWord(off-m.cfg.FrameWords))
	}
	// "This can fail because ftrace_test_recursion_trylock() allows one
	// nest call. If we are already in a nested call, then we don't probe
	// this and just return the original return address."
	// Source: 0db0934e7f9b "tracing: fgraph: Protect return handler from
	// recursion loop" (Sep 2025, Cc stable; in linux-mm dc1898433b96, not in
	// gregkh/linux 000aa47a51233 nor in the 6.12.117 tree): latest only.
	bit := -1
	if m.cfg.Variant == Latest {
		if bit = m.ftraceTestRecursionTrylock(); bit < 0 {
			goto out
		}
	}
	m.retCallbacks(off, &tr)
	if bit >= 0 {
		m.ftraceTestRecursionUnlock(bit)
	}
out:
	// The ftrace_graph_return() may still access the current ret_stack
	// structure, we need to make sure the update of curr_ret_stack is after
	// that.
	if !mu.Has(MRetBarrier) {
		m.barrier(SiteRetBarrier)
	}
	if !mu.Has(MRet1) {
		to := off - m.cfg.FrameWords
		if mu.Has(MRetOff) {
			to = off
		}
		m.st(SiteRetLower, c+TaskCurr, intWord(to))
	}
	d := wordInt(m.ld(SiteRetDepthLoad, c+TaskDepth))
	m.st(SiteRetDepth, c+TaskDepth, intWord(d-1))
	return ret
}

// retCallbacks reads the frame's bitmap word at off and runs the retfuncs:
// the middle of __ftrace_return_to_handler(), from get_bitmap_bits() to the
// end of the direct or loop branch.
func (m *Machine) retCallbacks(off int, tr *Trace) {
	mu := m.cfg.Mutants
	w, _ := m.getFgraphEntry(SiteRetBitmap, m.Current, off)
	bitmap := GetBitmapBits(w)

	if m.cfg.Variant != Seed && m.cfg.StaticCall && m.ldOnce(SiteRetDirect, AddrDoDirect) != 0 && m.directReturn(w, bitmap, tr) { //fgcheck:kept the gen-counter fix's generations come from the same load (a proposal)
		// direct mode handled the return
	} else {
		// READ_ONCE since d65474033740 (v6.13, backported to 6.12.y)
		k := Once
		if m.cfg.Variant == V611 || m.cfg.Variant == Seed || mu.Has(MF3) {
			k = Plain
		}
		// for_each_set_bit(i, &bitmap, ...)
		for rest := bitmap; rest != 0; rest &= rest - 1 {
			i := bits.TrailingZeros16(rest)
			gops := m.load(k, SiteRetArray, AddrArray+Addr(i))
			if gops == HandleStub {
				continue
			}
			if !m.genOK(w, i) { //fgcheck:kept the gen-counter fix (a proposal) keeps the frame's word; it is below curr_ret_stack, which no other context changes (oracle 5)
				continue
			}
			// gops->retfunc(&trace, gops): the next use of gops.
			use := m.reread(SiteRetArrayUse, AddrArray+Addr(i), gops, k)
			m.callRet(use, use, tr, use != gops) //fgcheck:kept one indirect call (its target and argument); use != gops is the oracle's torn-read flag
		}
	}
}

// directReturn is the static-call branch of __ftrace_return_to_handler();
// false falls back to the loop (direct-fallback fix variant only, as in
// directEntry).
func (m *Machine) directReturn(w Word, bitmap uint16, tr *Trace) bool {
	// As in directEntry: plain in the kernel, used once each; READ_ONCE
	// with the direct-fallback fix, which tests the value before its use.
	k := Plain
	if m.cfg.DirectFallback {
		k = Once
	}
	gops := m.load(k, SiteRetDirectGops, AddrDirectGops)
	if m.cfg.DirectFallback && gops == HandleStub { //fgcheck:kept the direct-fallback fix's test; its load is READ_ONCE
		return false
	}
	idx := 0 // fgraph_stub.idx
	if g := m.opsOf(gops); g != nil {
		idx = wordInt(m.ld(SiteUserIdx, m.opsAddr(g.k, OpsIdx))) & 15
	}
	if bitmap&(1<<idx) != 0 && m.genOK(w, idx) {
		// static_call(fgraph_retfunc)(&trace, fgraph_direct_gops): the
		// argument reads the global again after test_bit(->idx) (found by
		// the differential: GCC loads it twice).
		gops = m.load(k, SiteRetDirectGops, AddrDirectGops)
		target := m.ldOnce(SiteRetDirectCall, AddrRetfunc)
		if m.cfg.DirectFallback && target != gops { //fgcheck:kept the direct-fallback fix's test; its load is READ_ONCE
			return false
		}
		m.callRet(target, gops, tr, false)
	}
	return true
}

// genOK is the gen-counter fix's test: slot i's generation now equals the
// one saved at entry.
func (m *Machine) genOK(bitmapWord Word, i int) bool {
	if !m.cfg.GenCounter {
		return true
	}
	saved := (bitmapWord >> (GenShift + 2*uint(i))) & 3
	return m.ld(SiteRetGen, AddrSlotGen+Addr(i))&3 == saved
}

func (m *Machine) callRet(target, gops Word, tr *Trace, torn bool) {
	m.fence(SiteRetCall, CallIn)
	if o := m.opsOf(target); o != nil {
		m.retfunc(o, gops, tr, torn)
	} else if torn {
		m.stubCall(RecReturn, tr)
	}
	m.fence(SiteRetCallRet, CallOut)
}

// ftraceGraphStop is ftrace_graph_stop(): the kill switch.
func (m *Machine) ftraceGraphStop() { m.stOnce(SiteGraphStop, AddrDead, 1) }
