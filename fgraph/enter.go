package fgraph

import "math/bits"

// functionGraphEnterRegs runs the entry side for one traced call. It returns
// 0 when the return address must be hijacked, EBUSY otherwise.
// Source: function_graph_enter_regs(), kernel/trace/fgraph.c v6.14+
// (66611c047570, 000aa47a51233, dc1898433b96), which takes
// ftrace_test_recursion_trylock() itself since d576aec24df9;
// function_graph_enter() in v6.11..v6.13 (fe835e3ca40e) without it (the x86
// caller holds it: Machine.Call); the loop of [PATCH 04/20] for the seed.
// kernel-fgraph.md section 2.2.
func (m *Machine) functionGraphEnterRegs(ret, fn, fp, retp Word) int {
	c := m.cur()
	F := m.cfg.FrameWords
	mu := m.cfg.Mutants
	bit := -1
	if m.cfg.Variant == Latest && !mu.Has(MF14) {
		if bit = m.ftraceTestRecursionTrylock(); bit < 0 {
			return EBUSY
		}
	}
	tr := Trace{Func: fn, Retp: retp}
	tr.Depth = wordInt(m.ld(SiteEnterDepthLoad, c+TaskDepth)) + 1
	m.st(SiteEnterDepthStore, c+TaskDepth, intWord(tr.Depth))

	var bitmap uint16
	var gens Word
	off := m.ftracePushReturnTrace(ret, fn, fp, retp, 0)
	if off < 0 {
		goto out
	}

	if m.cfg.Variant == Seed {
		// [PATCH 04/20]: for (i = 0; i < fgraph_array_cnt; i++), plain
		// loads, no filter test, no per-user restore of curr_ret_stack.
		// The condition loads the global at every test.
		for i := 0; i < FgraphArraySize && i < wordInt(m.ld(SiteEnterArrayCnt, AddrArrayCnt)); i++ {
			gops := m.ld(SiteEnterArray, AddrArray+Addr(i))
			if gops == HandleStub {
				continue
			}
			// gops->entryfunc(&trace, gops): one use, after the stub test.
			use := m.reread(SiteEnterArrayUse, AddrArray+Addr(i), gops, Plain)
			if m.callEntry(use, use, &tr, use != gops) { //fgcheck:kept one indirect call (its target and argument); use != gops is the oracle's torn-read flag
				bitmap |= 1 << i
			}
		}
		gens = m.genBits(bitmap)
	} else if m.cfg.StaticCall && m.ldOnce(SiteEnterDirect, AddrDoDirect) != 0 && m.directEntry(&tr, &bitmap, &gens) {
		// direct mode handled the call
	} else {
		// READ_ONCE since 63a8dfb88911 (F2: the mutant makes it plain).
		k := Once
		if mu.Has(MF2) {
			k = Plain
		}
		// M-bitmask-plain: unsigned long mask = fgraph_array_bitmask;
		// for_each_set_bit(i, &mask, ...): one plain load, each later step
		// a further use of it (a re-load until the first callback, the
		// register after it).
		once, mk := mu.Has(MBitmaskPlain), Once
		var mask Word
		if once {
			mk = Plain
			mask = m.load(mk, SiteEnterBitmask, AddrBitmask)
		}
		for i := m.enterBit(once, mask, 0); i < FgraphArraySize; i = m.enterBit(once, m.reread(SiteEnterBitmaskUse, AddrBitmask, mask, mk), i+1) {
			gops := m.load(k, SiteEnterArray, AddrArray+Addr(i))
			if gops == HandleStub {
				continue
			}
			save := m.ld(SiteEnterSave, c+TaskCurr)
			// &gops->ops for ftrace_ops_test(): the next use of gops.
			use := m.reread(SiteEnterArrayUse, AddrArray+Addr(i), gops, k)
			if m.ftraceOpsTest(use, fn) && m.callEntry(use, use, &tr, use != gops) { //fgcheck:kept ftrace_ops_test() is out of line: gops->entryfunc(&trace, gops) after it uses the register; use != gops is the oracle's torn-read flag
				bitmap |= 1 << i
			} else if !mu.Has(MEnter1) {
				// Clear out any saved storage.
				m.st(SiteEnterRestore, c+TaskCurr, save)
			}
		}
		gens = m.genBits(bitmap)
	}

	if bitmap == 0 {
		goto outRet
	}
	// "Since this function uses fgraph_idx = 0 as a tail-call checking
	// flag, set that bit always." (stale comment, section 4 F1)
	if !m.cfg.NoBit0 || mu.Has(MF1Bit0) {
		bitmap |= 1 << 0
	}
	m.setBitmap(off, bitmap, gens)
	if bit >= 0 {
		m.ftraceTestRecursionUnlock(bit)
	}
	return 0

outRet:
	{
		cur := wordInt(m.ld(SiteEnterOutRetLoad, c+TaskCurr))
		d := F + 1
		if mu.Has(MRollbackOff) {
			d = F
		}
		m.st(SiteEnterOutRet, c+TaskCurr, intWord(cur-d))
	}
out:
	if !mu.Has(MRollbackDepth) {
		d := wordInt(m.ld(SiteEnterOutDepthLoad, c+TaskDepth))
		m.st(SiteEnterOutDepth, c+TaskDepth, intWord(d-1))
	}
	if bit >= 0 {
		m.ftraceTestRecursionUnlock(bit)
	}
	return EBUSY
}

// directEntry is the static-call branch of function_graph_enter_regs(). It
// reports false, to fall back to the loop, only with the direct-fallback fix
// variant when fgraph_direct_gops is the stub or disagrees with the static
// call: a switch of direct mode is in progress on another CPU.
func (m *Machine) directEntry(tr *Trace, bitmap *uint16, gens *Word) bool {
	c := m.cur()
	save := m.ld(SiteEnterSave, c+TaskCurr)
	// The kernel loads fgraph_direct_gops plain and uses it once (the
	// static call's argument). The direct-fallback fix tests it before the
	// call, so it reads it with READ_ONCE: with a plain load the compiler
	// could load it again for the argument, after the test.
	k := Plain
	if m.cfg.DirectFallback {
		k = Once
	}
	gops := m.load(k, SiteEnterDirectGops, AddrDirectGops)
	target := m.ldOnce(SiteEnterDirectCall, AddrFunc)
	if m.cfg.DirectFallback && (gops == HandleStub || target != gops) { //fgcheck:kept the direct-fallback fix's test; its load is READ_ONCE
		return false
	}
	if m.callEntry(target, gops, tr, false) {
		// bitmap |= BIT(fgraph_direct_gops->idx): the global is read again
		// (a plain load after an opaque call; found by the differential
		// against Debian's 6.12.117, where GCC loads it twice).
		gops = m.ld(SiteEnterDirectGops, AddrDirectGops)
		if g := m.opsOf(gops); g != nil {
			*bitmap |= 1 << uint(wordInt(m.ld(SiteUserIdx, m.opsAddr(g.k, OpsIdx)))&15)
		} else {
			*bitmap |= 1 << 0 // fgraph_stub.idx is 0
		}
		*gens = m.genBits(*bitmap)
	} else if !m.cfg.Mutants.Has(MEnter1) {
		// Clear out any saved storage.
		m.st(SiteEnterRestore, c+TaskCurr, save)
	}
	return true
}

// nextBit is one step of for_each_set_bit over fgraph_array_bitmask:
// find_next_bit() with a constant size of one word (small_const_nbits):
// val = *addr & GENMASK(size - 1, offset); return val ? __ffs(val) : size.
// The mask word is loaded at every step; val is derived from it, so a
// re-load for __ffs is not modelled (docs/fidelity.md, "Loads by kind").
// Source: include/linux/find.h (the 6.12.117 tree).
func (m *Machine) nextBit(s Site, from int) int {
	if from >= FgraphArraySize {
		return FgraphArraySize
	}
	return bitFrom(m.ld(s, AddrBitmask), from)
}

// bitFrom is find_next_bit() on a mask already loaded: val = mask &
// GENMASK(size - 1, from); val ? __ffs(val) : size.
func bitFrom(mask Word, from int) int {
	if from >= FgraphArraySize {
		return FgraphArraySize
	}
	val := mask &^ (Word(1)<<uint(from) - 1)
	if val == 0 {
		return FgraphArraySize
	}
	return min(bits.TrailingZeros64(uint64(val)), FgraphArraySize)
}

// enterBit is a step of the entry loop's for_each_set_bit: over
// fgraph_array_bitmask itself (the kernel), or over the local copy mask
// (once, M-bitmask-plain).
func (m *Machine) enterBit(once bool, mask Word, from int) int {
	if once {
		return bitFrom(mask, from)
	}
	return m.nextBit(SiteEnterBitmask, from)
}

// callEntry calls target's entryfunc with gops, as an opaque call.
func (m *Machine) callEntry(target, gops Word, tr *Trace, torn bool) bool {
	m.fence(SiteEnterCall, CallIn)
	var ok bool
	if o := m.opsOf(target); o != nil {
		ok = m.entryfunc(o, gops, tr, torn)
	} else if torn {
		m.stubCall(RecEntry, tr) // ftrace_graph_entry_stub after the stub check passed
	}
	m.fence(SiteEnterCallRet, CallOut)
	return ok
}

// ftraceOpsTest is ftrace_ops_test(&gops->ops, func, NULL): the per-user
// filter hash. The stub's ops and an ops not yet started have no func_hash:
// the kernel dereferences NULL (F2, F4); here that is a recorded crash.
func (m *Machine) ftraceOpsTest(gops, fn Word) bool {
	o := m.opsOf(gops)
	if o == nil {
		m.crash(SiteEnterFilter, "ftrace_ops_test on &fgraph_stub: NULL func_hash dereference (F2)")
		return false
	}
	if m.ld(SiteEnterFilter, m.opsAddr(o.k, OpsReady)) == 0 {
		m.crash(SiteEnterFilter, "ftrace_ops_test on "+o.Name+" before ftrace_startup_subops: NULL func_hash dereference (F4)")
		return false
	}
	return o.Traces(FuncOf(fn))
}

// Crashes are WARNs whose message starts with this prefix.
const CrashPrefix = "BUG: "

func (m *Machine) crash(s Site, msg string) { m.warn(s, "%s%s", CrashPrefix, msg) }

// setBitmap writes the frame's BITMAP word.
// Source: set_bitmap(), kernel/trace/fgraph.c v6.11+. With the gen-counter
// fix the upper bits carry each accepted slot's 2-bit generation.
func (m *Machine) setBitmap(off int, bitmap uint16, gens Word) {
	at := off
	if m.cfg.Mutants.Has(MBitmapTop) {
		at = wordInt(m.ld(SiteEnterOutRetLoad, m.cur()+TaskCurr)) - 1
	}
	if at < 0 || at >= m.cfg.StackWords {
		m.warn(SiteSetBitmap, "set_bitmap: index %d out of range", at)
		return
	}
	m.st(SiteSetBitmap, m.word(at), MakeBitmap(bitmap, m.cfg.FrameWords)|gens)
}

// GenShift is where the gen-counter fix keeps slot generations in a BITMAP
// word: bits GenShift+2i..GenShift+2i+1 hold slot i's generation mod 4.
const GenShift = FgraphIndexShift + FgraphIndexBits // 28

func (m *Machine) genBits(bitmap uint16) Word {
	if !m.cfg.GenCounter {
		return 0
	}
	var g Word
	for i := 0; i < FgraphArraySize; i++ {
		if bitmap&(1<<i) != 0 {
			g |= (m.ld(SiteEnterGen, AddrSlotGen+Addr(i)) & 3) << (GenShift + 2*i)
		}
	}
	return g
}

// The function-recursion bits of current->trace_recursion used by
// ftrace_test_recursion_trylock(): TRACE_FTRACE_START plus a context bit
// (TRACE_CTX_NMI 0, TRACE_CTX_IRQ 1, TRACE_CTX_SOFTIRQ 2, TRACE_CTX_NORMAL 3)
// or TRACE_CTX_TRANSITION 4.
// Source: include/linux/trace_recursion.h (the enums; unchanged from
// fe835e3ca40e through the 6.12.117 tree and linux-mm dc1898433b96).
const (
	traceFtraceStart   = 0 // TRACE_FTRACE_START = TRACE_FTRACE_BIT
	traceCtxNMI        = 0
	traceCtxIRQ        = 1
	traceCtxNormal     = 3
	traceCtxTransition = 4
)

// traceGetContextBit is trace_get_context_bit(): TRACE_CTX_NORMAL -
// interrupt_context_level(). The harness's level 0 is task context, level 1
// a hard IRQ (delivered only at level 0), level 2 and up an NMI.
func traceGetContextBit(level int) int {
	switch {
	case level <= 0:
		return traceCtxNormal
	case level == 1:
		return traceCtxIRQ
	default:
		return traceCtxNMI
	}
}

// ftraceTestRecursionTrylock is ftrace_test_recursion_trylock(ip, pip), that
// is trace_test_and_set_recursion(ip, pip, TRACE_FTRACE_START): the bit of
// the current context; if that is already held, TRACE_CTX_TRANSITION ("let a
// single instance happen via the TRANSITION_BIT", meant for an interrupt
// that traces before preempt_count says so); -1 only when both are held. So
// the first nested call in the same context gets through, the second does
// not. READ_ONCE of the word, a plain store, barrier(). It returns the bit
// or -1.
// Source: trace_test_and_set_recursion(), include/linux/trace_recursion.h
// (read in the Debian 6.12.117 tree; the same in linux-mm dc1898433b96);
// taken in function_graph_enter_regs() since d576aec24df9 (v6.14), by the
// arch caller before (x86 prepare_ftrace_return()). The
// CONFIG_FTRACE_VALIDATE_RCU_IS_WATCHING test and the recursion record
// are not ported (docs/fidelity.md).
func (m *Machine) ftraceTestRecursionTrylock() int {
	a := m.cur() + TaskRecursion
	k := Once
	if m.cfg.Mutants.Has(MRecursionPlain) {
		k = Plain
	}
	val := m.load(k, SiteRecursion, a)
	bit := traceGetContextBit(m.Level) + traceFtraceStart
	if val&(1<<uint(bit)) != 0 {
		if m.cfg.NoTransition {
			return -1
		}
		bit = traceCtxTransition + traceFtraceStart
		if m.reread(SiteRecursionUse, a, val, k)&(1<<uint(bit)) != 0 {
			return -1
		}
	}
	val = m.reread(SiteRecursionUse, a, val, k) | 1<<uint(bit)
	m.st(SiteRecursion, a, val)
	m.barrier(SiteRecursion)
	return bit
}

// ftraceTestRecursionUnlock is ftrace_test_recursion_unlock(bit):
// trace_clear_recursion(): barrier(), then clear the bit (a plain
// read-modify-write of current->trace_recursion).
func (m *Machine) ftraceTestRecursionUnlock(bit int) {
	a := m.cur() + TaskRecursion
	m.barrier(SiteRecursionUnlock)
	m.st(SiteRecursionUnlock, a, m.ld(SiteRecursionUnlock, a)&^(Word(1)<<uint(bit&63)))
}

// RecursionRefuses reports whether ftrace_test_recursion_trylock() would
// fail now for a call at context level on task t: the context's bit and
// TRACE_CTX_TRANSITION are both held (memory, not a store buffer).
func (m *Machine) RecursionRefuses(t, level int) bool {
	val := m.Mem[m.tasks[t].base+TaskRecursion]
	b := Word(1) << uint(traceGetContextBit(level)+traceFtraceStart)
	tb := Word(1) << (traceCtxTransition + traceFtraceStart)
	return val&b != 0 && (val&tb != 0 || m.cfg.NoTransition)
}

// RecursionHeld reports whether task t holds the recursion bit of context
// level (memory): true while function_graph_enter's callbacks run.
func (m *Machine) RecursionHeld(t, level int) bool {
	return m.Mem[m.tasks[t].base+TaskRecursion]&(1<<uint(traceGetContextBit(level)+traceFtraceStart)) != 0
}

// RecursionTransition reports whether task t currently holds
// TRACE_CTX_TRANSITION in its trace_recursion word: a nested call in the
// same context is running (the recursion-transition known finding).
func (m *Machine) RecursionTransition(t int) bool {
	return m.Mem[m.tasks[t].base+TaskRecursion]&(1<<(traceCtxTransition+traceFtraceStart)) != 0
}

// traceClock stands for trace_clock_local(): a deterministic counter.
// The value it returns is an input of the running context that no load
// hook sees, so a Digester (the state cache) is handed it here, as a
// compiled target's answers are (cload).
func (m *Machine) traceClock() Word {
	m.clock++
	if m.dig != nil {
		m.dig.Digest(uint64(m.clock))
	}
	return m.clock
}
