package harness

import (
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/model"
)

// The visited state of a run at a choice point, for the explorer's state
// cache (cache.go). Everything that decides the rest of the run, every
// oracle's verdict on it and the counts the explorer reports is encoded
// here, in one place; what is left out is said below with the reason.
//
// The harness runs the code under test on the Go stack (the port calls the
// hooks synchronously), so a context's locals cannot be read. They are a
// function of what the context's code has read since its current op began:
// each context keeps a digest of every answer the hooks gave it (the value
// of every load, every store it made, every fence, every value
// trace_clock_local() returned it: fgraph.Digester) and of the harness
// locals its op keeps across yield points (the user table at call and
// return entry, the slot being returned through, the live words an
// interrupt found). Two contexts that started the same op
// and read the same inputs hold the same locals: the code is deterministic.
//
// Left out on purpose:
//   - occurrence counters (ctx.occ) and event IDs: they name positions in a
//     schedule file, nothing reads them to decide what happens;
//   - the schedule so far, r.points, the trace: records, not state;
//   - the tails of remote actions (r.finish, r.later): encoded
//     by which remotes fired and the queue lengths, which determine them
//     while at most one remote event fires per run (E <= 1); the cache is
//     off for E > 1 (cacheable).

// The encoding's components, in order. Each is appended by appendState;
// stateDrop (a test's deliberately incomplete definition) skips one.
const (
	stMachine  = iota // memory and the machine's Go-side state (fgraph.Machine.AppendState)
	stLog             // the callback records an oracle or an op will still read
	stWarnings        // WARNs not yet judged by oracle 7
	stModel           // the reference model: user table, generations, every task's frames
	stProgram         // each task's program counter, the running task, the remotes fired and their pending tails
	stBudget          // interrupts, reordered regions and remote events used (the remaining budget)
	stOrders          // the region orders chosen so far (one order per static region per run)
	stVerdicts        // the oracles' own history: violations reported so far, the flags known findings match on, the in-place check pending
	stContexts        // every context: its stack position, store buffer, region being committed, in-flight entry, return and reservation, and its input digest
	stNum
)

var stNames = [stNum]string{"machine", "log", "warnings", "model", "program", "budget", "orders", "verdicts", "contexts"}

// StateComponents names the state's components in order (for tests and
// docs).
func StateComponents() []string { return stNames[:] }

// knownIndex numbers KnownFindings for the detection log and the counts.
// (Set by init: violate, which KnownFindings' matchers reach, reads it.)
var knownIndex map[string]int

func init() {
	knownIndex = map[string]int{}
	for i, k := range KnownFindings {
		knownIndex[k.Name] = i
	}
	if len(knownIndex) > maxKnown {
		panic("harness: more known findings than the state cache counts")
	}
}

const maxKnown = 32

var oracleIndex = func() map[string]int {
	m := map[string]int{}
	for i, o := range Oracles {
		m[o] = i
	}
	if len(Oracles) > 8 {
		// An OracleSet (and knownTot.by) has a bit per oracle in a byte.
		panic("harness: more oracles than an OracleSet holds")
	}
	return m
}()

// appendState appends the encoding of the run's state to dst, leaving out
// component drop (stNum: none).
func (r *runner) appendState(dst []uint64, drop int) []uint64 {
	m := r.m
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	sep := func(i int) { dst = append(dst, 0x5eb0000+uint64(i)) }
	for comp := 0; comp < stNum; comp++ {
		if comp == drop {
			continue
		}
		sep(comp)
		switch comp {
		case stMachine:
			// Memory decides every later load; the Go-side arch and user
			// state (real stacks, per-level counters, generations, the
			// clock) decides the calls and returns the port makes.
			dst = m.AppendState(dst)
		case stLog:
			// The records a later check reads (appendLog says which).
			dst = r.appendLog(dst)
		case stWarnings:
			// A WARN not yet judged is a violation to come.
			w := m.Warnings[min(r.warnSeen, len(m.Warnings)):]
			dst = append(dst, uint64(len(w)))
			for _, x := range w {
				dst = append(dst, uint64(x.Site), strHash(x.Msg))
			}
		case stModel:
			// The model is what every later oracle compares with.
			dst = appendModel(dst, r.model)
		case stProgram:
			// What is left to run: the task programs, which task runs, the
			// remotes still offered and the tails of those that fired
			// (r.finish / r.later, determined by these while E <= 1), the
			// registrations whose tail has not published yet.
			dst = append(dst, uint64(len(r.pc)), uint64(m.Current))
			for _, pc := range r.pc {
				dst = append(dst, uint64(pc))
			}
			var used uint64
			for i, u := range r.remoteUsed {
				if u {
					used |= 1 << (i & 63)
				}
			}
			// Whether the state is the one right after an interrupt
			// returned (cache.go, afterEvent): the yield it returned to
			// offers nothing more, where a choice point's state at the
			// same yield still has its options ahead.
			dst = append(dst, used, uint64(len(r.finish)), uint64(len(r.later)), boolU(r.afterEv))
			dst = append(dst, intWords(r.pending[:])...)
		case stBudget:
			// The remaining budget decides the options of every later
			// choice point (and so the schedules below this one).
			dst = append(dst, uint64(r.kUsed)|uint64(r.rUsed)<<16|uint64(r.eUsed)<<32)
		case stOrders:
			// A region chosen once keeps its order at every later instance.
			// A region that kept program order differs from one not met
			// yet only while a reordering is still in the budget: once it
			// is spent, every region not reordered keeps program order, so
			// those entries are left out (states that differ only in the
			// regions they met in program order merge).
			dst = r.appendOrders(dst, r.rUsed >= r.sc.Bound.R || r.sc.Bound.spent(r.kUsed, r.rUsed, r.eUsed))
			// The pending regions of the lazy engine (lazy.go): the orders
			// each one still stands for, and whether it has spent an order.
			// (No state is looked up inside a pending instance, so this is
			// all the engine keeps of them.)
			dst = r.appendPending(dst)
		case stVerdicts:
			// A violation stops the run (or, with KeepGoing, marks it
			// failed); the flags the allowances match on; whether the
			// in-place oracles still have to look at the last change.
			// Not the known findings reported so far (nor their oracles):
			// they change only which later detections are reported, once
			// per run, never the course of the run, and a stored subtree
			// holds its known findings whatever its prefix reported
			// (cache.go, knownTot).
			var viol uint64
			for _, v := range r.res.Violations {
				viol |= 1 << oracleIndex[v.Oracle]
			}
			dst = append(dst, viol,
				b2u(r.stopped)|b2u(r.aliasDep)<<1|b2u(r.inReserveWindow)<<2|b2u(r.staleRetp)<<3|b2u(r.clobbered)<<4|
					b2u(r.directRace)<<5|b2u(r.checked != r.ver)<<6|uint64(r.direct)<<8,
				uint64(len(r.clobberedFixes))|b2u(r.clobberSpread)<<32)
			for _, f := range r.clobberedFixes {
				dst = append(dst, uint64(f.addr), f.val)
			}
		case stContexts:
			// The contexts on the CPU, bottom first, and the tasks off it.
			dst = append(dst, uint64(len(r.ctxs)))
			for _, c := range r.taskCt {
				dst = appendCtx(dst, c, r.idle(c), r.hk.uxKeyMerge)
			}
			for _, c := range r.ctxs {
				dst = appendCtx(dst, c, r.idle(c), r.hk.uxKeyMerge)
			}
			// The instances of pending regions in flight (lazy.go).
			for _, c := range r.ctxs {
				if c.lz != nil {
					dst = r.appendInst(dst, c.lz)
				}
			}
		}
	}
	return dst
}

// appendInst encodes an instance of a pending region in flight: its
// stores, the option committed and how far; then what decides how its
// other live options go on: their keys from here to its end, and the
// anchor their commits go back to (the memory at the instance's
// addresses, the committing context's bookkeeping, the oracles' flags and
// violations then). Suspended at an event, only the first part: when the
// event returns, the anchor moves there and the keys are found again.
func (r *runner) appendInst(dst []uint64, lz *lzInst) []uint64 {
	if !r.lzActive(lz) || r.hk.lzStateDrop == "instance" {
		return append(dst, 0)
	}
	rep := uint64(lz.rep)
	if r.reduced {
		rep = 0 // the combos' signatures say what each option has committed (split.go)
	}
	dst = append(dst, uint64(lz.region)|rep<<32, uint64(lz.k), uint64(len(lz.buf)))
	for _, p := range lz.buf {
		dst = append(dst, uint64(p.site)|uint64(p.kind)<<16|uint64(uint32(p.addr))<<32, uint64(p.val))
	}
	if lz.evAt == lz.k {
		return append(dst, 1)
	}
	a := &lz.an
	dst = append(dst, 2, uint64(lz.anchorK))
	for _, v := range a.vals {
		dst = append(dst, uint64(v))
	}
	var viol uint64
	for _, v := range r.res.Violations[:a.nv] {
		viol |= 1 << oracleIndex[v.Oracle]
	}
	dst = append(dst, boolU(a.hasE)|boolU(a.hasP)<<1|boolU(a.hasR)<<2|boolU(a.inRW)<<3|boolU(a.spread)<<4|boolU(a.stale)<<5|boolU(a.stopped)<<6|boolU(a.checked != a.ver)<<7,
		viol, uint64(a.logSeen), uint64(a.warnSeen), uint64(len(a.fixes)))
	for _, f := range a.fixes {
		dst = append(dst, uint64(f.addr), f.val)
	}
	if a.hasE {
		e := &a.entryV
		var ok uint64
		for i, b := range e.ok {
			ok |= boolU(b) << i
		}
		dst = append(dst, uint64(e.ret), uint64(e.fn), uint64(e.retp), uint64(e.modelPos), uint64(e.base)<<32|uint64(uint32(e.top)), ok<<1|boolU(e.pushed))
	}
	if a.hasP {
		dst = append(dst, uint64(a.popV.modelTop), uint64(a.popV.lowered))
	}
	if a.hasR {
		dst = append(dst, uint64(a.resvV.addr), uint64(a.resvV.val), boolU(a.resvV.raised))
	}
	if r.reduced {
		return dst
	}
	j := lz.k - lz.anchorK - 1
	for l := r.lzLive[lz.region]; l != 0 && j >= 0 && lz.kn > 0; l &= l - 1 {
		o := bits.TrailingZeros64(l)
		dst = append(dst, uint64(o))
		for x := j; x < lz.kn; x++ {
			k := lz.key(o, x)
			dst = append(dst, k.mask, k.sig)
		}
	}
	return dst
}

// idle reports whether c is a task context between two ops: off the CPU
// (a task switch happens only between ops), or on it at a quiescent point
// (runner.between, a tail lookup).
func (r *runner) idle(c *ctx) bool {
	if r.taskCt[c.task] != c {
		return false // an interrupt's or a nested call's context is in flight
	}
	return r.hk.idleAll || r.between || len(r.ctxs) == 0 || r.ctxs[0] != c // idleAll: a test's wrong rule
}

// appendLog encodes the log window of the state (appendState's stLog):
// every record some later check reads, each with the mask of its readers
// (bit 0 the in-place oracle, bit 1+i the i-th context on its way through
// an op, task contexts first, whose records() will see it). The in-place
// oracle reads the records after logSeen, call and ret the records their
// context owns from its logFrom on. An idle task context's logFrom is dead
// (its next op sets it before any read), and a record before logSeen that
// no context on its way owns is never read again: neither is encoded.
func (r *runner) appendLog(dst []uint64) []uint64 {
	m := r.m
	lo := r.logSeen
	var buf [16]*ctx
	live := buf[:0]
	for _, c := range r.taskCt {
		if !r.idle(c) {
			live = append(live, c)
		}
	}
	for _, c := range r.ctxs {
		if r.taskCt[c.task] != c { // an interrupt's or a nested call's
			live = append(live, c)
		}
	}
	for _, c := range live {
		lo = min(lo, c.logFrom)
	}
	if len(live) > 63 {
		panic("harness: more contexts than the log window's reader mask holds")
	}
	lo = max(0, min(lo, len(m.Log)))
	if r.hk.checkDeadLog {
		for i := range lo {
			r.markDead(i)
		}
	}
	count := 0
	for i := lo; i < len(m.Log); i++ {
		rec := &m.Log[i]
		var mask uint64
		if i >= r.logSeen {
			mask = 1
		}
		for j, c := range live {
			if i >= c.logFrom && c.owns(rec) {
				mask |= 2 << j
			}
		}
		if mask == 0 || r.hk.logTooNarrow && mask&1 == 0 {
			if r.hk.checkDeadLog {
				r.markDead(i)
			}
			continue
		}
		count++
		dst = append(dst, mask, uint64(rec.Kind)|uint64(rec.Task)<<8|uint64(rec.Level)<<16|uint64(uint8(rec.Ops))<<24|uint64(uint16(rec.Nest))<<32|
			boolU(rec.Accepted)<<48|boolU(rec.Torn)<<49|boolU(rec.Reentered)<<50|boolU(rec.Transition)<<51|boolU(rec.Data != nil)<<52|boolU(rec.Parent != nil)<<53,
			uint64(rec.Gen), uint64(rec.Idx), uint64(rec.Func), uint64(rec.Depth), uint64(rec.Handler), uint64(rec.Gops),
			uint64(len(rec.Data)), uint64(len(rec.Parent)))
		for _, w := range rec.Data {
			dst = append(dst, uint64(w))
		}
		for _, w := range rec.Parent {
			dst = append(dst, uint64(w))
		}
	}
	return append(dst, uint64(count), uint64(len(live)))
}

// markDead marks record i as left out of the state (checkDeadLog).
func (r *runner) markDead(i int) {
	for len(r.deadLog) <= i {
		r.deadLog = append(r.deadLog, false)
	}
	if !r.deadLog[i] {
		r.deadLog[i] = true
		r.hk.deadLogMarks.Add(1)
	}
}

// readLog notes a read of record i by a check (checkDeadLog).
func (r *runner) readLog(i int) {
	if i < len(r.deadLog) && r.deadLog[i] {
		r.hk.deadLogReads.Add(1)
	}
}

// appendCtx encodes one context: where it is (level, nesting, its input
// digest and op count), what it has not committed yet, and what the
// oracles track of its entry, return and reservation in flight. Of an idle
// task context (between two ops) the input digest and the last yield site
// are left out: the next op starts its digest afresh (from the op count and
// the op) and yields at its start before anything reads the site, so
// nothing later depends on them, and two runs that reach the same point
// by different inputs to an op already done merge. (uxMerge: the test
// hook uxKeyMerge.)
func appendCtx(dst []uint64, c *ctx, idle, uxMerge bool) []uint64 {
	hist, last := c.hist, uint64(c.lastSite)
	if idle {
		hist, last = 0, 0
	}
	dst = append(dst, uint64(c.level)|uint64(c.kind)<<8|uint64(c.task)<<16|uint64(c.nest)<<24|uint64(c.irqOff)<<32|uint64(c.inCallback)<<40|uint64(boolU(c.windowRead))<<48|uint64(boolU(idle))<<56,
		last, uint64(c.nops), hist, c.base, uint64(len(c.buf)), uint64(len(c.rest)),
		// The merged remote placements' segment (remotes.go) and the
		// remote unwind's extension (unwindext.go): which remote actions
		// the next offer points leave out.
		uint64(c.rcls)|uint64(c.rrep)<<8|uint64(boolU(c.plain))<<16|uint64(uxKey(c.ux, uxMerge))<<24|uint64(c.rws)<<32)
	if c.rrep == remWriter {
		// A writer's representative: which placements it counts (the
		// loads ahead that do not read what it wrote).
		dst = append(dst, uint64(c.rrepW), c.repWS[0], c.repWS[1])
	}
	for _, p := range c.buf {
		dst = append(dst, uint64(p.site)|uint64(p.kind)<<16|uint64(uint32(p.addr))<<32, uint64(p.val))
	}
	for _, p := range c.rest {
		dst = append(dst, uint64(p.site)|uint64(p.kind)<<16|uint64(uint32(p.addr))<<32, uint64(p.val))
	}
	if e := c.entry; e != nil {
		var ok uint64
		for i, b := range e.ok {
			if b {
				ok |= 1 << i
			}
		}
		dst = append(dst, 1, uint64(e.ret), uint64(e.fn), uint64(e.retp), uint64(e.modelPos), uint64(e.base)<<32|uint64(uint32(e.top)), ok<<1|boolU(e.pushed))
	} else {
		dst = append(dst, 0)
	}
	if p := c.pop; p != nil {
		dst = append(dst, 1, uint64(p.modelTop), uint64(p.lowered))
	} else {
		dst = append(dst, 0)
	}
	if v := c.resv; v != nil {
		dst = append(dst, 1, uint64(v.addr), uint64(v.val), boolU(v.raised))
	} else {
		dst = append(dst, 0)
	}
	return dst
}

// intWords is x's words as they are: an int is a uint64 here (the
// encoding of an array of counts, copied whole rather than word by word).
func intWords(x []int) []uint64 {
	var _ [unsafe.Sizeof(int(0)) - 8]struct{} // (does not compile where an int is not 8 bytes)
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// appendOrders encodes the region orders chosen so far (runner.orders),
// sorted by region; with spent, only the reordered ones.
func (r *runner) appendOrders(dst []uint64, spent bool) []uint64 {
	var keys [8]fgraph.Site
	ks := keys[:0]
	for _, k := range r.orders.list {
		if spent && r.orders.sites[k] == nil && r.orders.drops[k] == nil {
			continue
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	dst = append(dst, uint64(len(ks)))
	for _, k := range ks {
		v, d := r.orders.sites[k], r.orders.drops[k]
		dst = append(dst, uint64(k), uint64(len(v)), boolU(v == nil), uint64(len(d)))
		for _, s := range v {
			dst = append(dst, uint64(s))
		}
		for _, s := range d {
			dst = append(dst, uint64(s))
		}
	}
	return dst
}

// appendPending encodes the lazy engine's pending regions, by site: each
// one's option list (its first instance's shape), live options, and
// whether it has spent an order.
func (r *runner) appendPending(dst []uint64) []uint64 {
	if len(r.lzList) == 0 || r.hk.lzStateDrop == "pending" {
		return append(dst, 0)
	}
	var keys [8]fgraph.Site
	ks := append(keys[:0], r.lzList...)
	slices.Sort(ks)
	dst = append(dst, uint64(len(ks)))
	for _, k := range ks {
		if r.reduced {
			// The live options are the combos' (split.go).
			dst = append(dst, uint64(k)|boolU(r.lzPaid[k])<<32, r.lzOpt[k].key)
			continue
		}
		dst = append(dst, uint64(k)|boolU(r.lzPaid[k])<<32, r.lzOpt[k].key, r.lzLive[k])
	}
	return dst
}

func appendModel(dst []uint64, s *model.State) []uint64 {
	// The user table: only the slots that are not free (of the 16, the
	// two or three a scenario's users take), each with its index, after
	// their number. A free slot is the stub with generation 0 and no flag
	// (model.New). Then the slots' registration counts, all 16 as they
	// are (one copy; listing the ones not 0 took a loop).
	n := len(dst)
	dst = append(dst, 0)
	for i := range s.Slots {
		if sl := &s.Slots[i]; !slotFree(sl) {
			dst = append(dst, uint64(i)<<48|uint64(uint32(sl.User)), uint64(uint32(sl.Gen))|boolU(sl.Ready)<<32|boolU(sl.Leaving)<<33)
			dst[n]++
		}
	}
	dst = append(dst, uint64(s.Gen), boolU(s.Cfg.NoFilter))
	dst = append(dst, intWords(s.SlotGen[:])...)
	for _, st := range s.Started {
		dst = append(dst, boolU(st))
	}
	for i := range s.Tasks {
		dst = appendTask(dst, &s.Tasks[i])
	}
	return dst
}

// appendTask appends the encoding of a model task: every field, the
// variable-length ones after their length. Two tasks without acceptors
// (the visible parts diffTask compares) that differ append different
// words: every other field is kept whole (Bits and Gens share a word, 16
// and 32 bits).
func appendTask(dst []uint64, t *model.Task) []uint64 {
	dst = append(dst, boolU(t.HasStack), uint64(t.Depth), uint64(t.Overrun), uint64(len(t.Frames)))
	for _, f := range t.Frames {
		dst = append(dst, f.Ret, f.Func, f.Retp, uint64(f.Bits)|uint64(f.Gens)<<16, uint64(f.EntryDepth), uint64(len(f.Data)), uint64(len(f.Accepted)))
		for _, d := range f.Data {
			dst = append(dst, uint64(d.Idx), uint64(len(d.Words)))
			dst = append(dst, d.Words...)
		}
		for _, a := range f.Accepted {
			dst = append(dst, uint64(a.Idx)|uint64(a.User)<<16|uint64(a.Gen)<<32)
		}
	}
	return dst
}

// ---- digests ----

const hashSeed = 0x243f6a8885a308d3

// mix folds x into the digest h (a context's input history, and the
// other digests of words: the readers' memo keys, the kept walks' keys,
// a sandbox's signature). It is wyhash's mum (Wang Yi): the 128-bit
// product of h^x and an odd constant, its halves folded, so that every
// bit of h^x reaches every bit of the result (TestMixAvalanche). One
// multiply where the combine it replaced (boost's hash_combine, then a
// multiply and a shift) was a chain of nine dependent instructions: 34
// million calls on peer-spin K=3, 2.1 % of its instructions.
func mix(h, x uint64) uint64 {
	hi, lo := bits.Mul64(h^x, 0xbf58476d1ce4e5b9)
	return hi ^ lo
}

// slotFree reports whether sl holds no user: the stub model.New puts in
// every slot (User -1, generation 0, no flag), field by field against
// constants (a comparison with a stub variable loaded both structs whole
// at every slot: 0.8 % of peer-spin K=3's instructions in these loops).
// TestSlotFree holds it to the comparison with the stub.
func slotFree(sl *model.Slot) bool {
	return sl.User == -1 && sl.Gen == 0 && !sl.Ready && !sl.Leaving
}

// slotsDigest digests the user table: its slots that are not free, each
// with its index (most of the 16 are free).
func slotsDigest(s *[model.Slots]model.Slot) uint64 {
	h := uint64(hashSeed)
	for i := range s {
		if sl := &s[i]; !slotFree(sl) {
			h = mix(mix(h, uint64(i)<<48|uint64(uint32(sl.User))), uint64(uint32(sl.Gen))|boolU(sl.Ready)<<32|boolU(sl.Leaving)<<33)
		}
	}
	return h
}

func wordsDigest(w []fgraph.Word) uint64 {
	h := uint64(hashSeed) ^ uint64(len(w))
	for _, x := range w {
		h = mix(h, uint64(x))
	}
	return h
}

func strHash(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// stateKey is a state's 128-bit hash: XXH3-128 of its encoding's bytes
// (github.com/zeebo/xxh3, the reference algorithm with AVX2 and SSE2
// kernels; its output is the same on every path and machine of one byte
// order). Taken as a random function, a false hit among n stored states
// has probability about n^2 / 2^129 (for 10^6 states, 1.5e-27); the
// table keeps 96 bits of it (cache.go's slot), n^2 / 2^97 (3.2e-18). Each
// context's input digest (ctx.hist) is one 64-bit word inside the
// encoding: two different input histories of one context merge with
// probability about 2^-64 per pair. ExploreOptions.CacheExact stores the
// encodings themselves instead.
//
// Until 5 Dec 2026 the key was two 64-bit multiply-fold chains of our own
// (wyhash's mum over two pairings of the words); XXH3-128 hashes std's
// 800 words in 110 ns where they took 560 ns (docs/state-cache.md).
type stateKey struct{ a, b uint64 }

// hashState hashes a state's encoding (appendState's words, as bytes in
// the machine's order: a key never leaves the process).
func hashState(w []uint64) stateKey {
	h := xxh3.Hash128(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8))
	k := stateKey{h.Lo, h.Hi}
	if k == (stateKey{}) {
		k.a = 1 // (0, 0) marks a free slot of the table
	}
	return k
}

// Cacheable reports whether the explorer can cache the states of sc
// (ExploreOptions.Cache), and if not why: the port only (a compiled core
// keeps state the harness cannot read), and at most one remote event per
// run (see the comment at the top).
func Cacheable(sc *Scenario) (bool, string) {
	switch {
	case sc.Target != nil && !encodes(sc.Target):
		return false, "the compiled target does not encode its state"
	case sc.Bound.E > 1:
		return false, "E > 1: the state does not encode the order of several remote tails"
	}
	return true, ""
}

// encodes reports whether target t encodes its state for the cache (its
// core is an fgraph.StateCore and its hooks' inputs go to fgraph.Digester).
func encodes(t Target) bool {
	s, ok := t.(StateTarget)
	return ok && s.EncodesState()
}

// wordsString renders an encoding as a map key (CacheExact).
func wordsString(w []uint64) string {
	var b strings.Builder
	b.Grow(8 * len(w))
	for _, x := range w {
		for i := 0; i < 8; i++ {
			b.WriteByte(byte(x >> (8 * i)))
		}
	}
	return b.String()
}
