package harness

import (
	"fmt"
	"slices"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/model"
)

// Readers are the kernel code that reads a task's shadow stack, each with
// the context it runs in and the condition under which it touches the
// stack. The unwinder and ret-addr oracles ask them; every violation they
// find names its reader (Violation.Reader). On x86-64 (the port's and the
// kernel target's arch):
//
//   - callchain: perf's or BPF's callchain from an NMI (at any instant) and
//     stack_trace_save() from an IRQ handler (where IRQs are on) walk the
//     interrupted task's real stack; for every slot that holds
//     return_to_handler, unwind_recover_ret_addr() calls
//     ftrace_graph_ret_addr(current, &state->graph_idx, ret, retp), which
//     walks the shadow stack down from curr_ret_stack until the frame whose
//     retp is the slot. A slot that is not hijacked is not looked up, so a
//     word below every hijacked slot's frame is read by nobody. Checked at
//     every yield point; "nmi-callchain" when IRQs are off (only an NMI can
//     look then).
//   - stack_trace_save: the task's or an interrupt's own stack dump (the
//     unwind op: a WARN's backtrace, a BPF program's bpf_get_stack()): the
//     same walk, from that context, at that point.
//   - livepatch: another CPU's reliable unwind of a task that is not
//     running (klp_check_and_switch_task() under task_call_func();
//     stack_trace_save_tsk_reliable()): ftrace_graph_ret_addr(task, ...)
//     over the sleeping task's stack. A remote unwind of a task that is
//     not running on this CPU.
//   - proc-stack: /proc/PID/stack of a running task (root only): the same
//     walk while the task runs on its CPU. fs/proc/base.c calls it racy by
//     design, so the addresses it prints are not judged; a WARN or a crash
//     in fgraph code still is (oracle 7). A remote unwind of the task
//     running on this CPU.
//   - profiler: the function profiler's callbacks read their own frames:
//     before v6.13 profile_graph_entry() calls
//     ftrace_graph_get_ret_stack(current, 0) and profile_graph_return()
//     calls it with 1 (the parent) and 0; since a312a0f7834e
//     profile_graph_return() calls fgraph_retrieve_parent_data(idx, &size,
//     1). A user with Ops.ParentDepth.
//   - retrieve-data: a retfunc's own fgraph_retrieve_data() (on latest
//     fgraph_retrieve_parent_data(idx, &size, 0), and the profiler's depth-1
//     read, which walk get_ret_stack() from curr_ret_stack).
//
// No x86 reader calls ftrace_graph_get_ret_stack(task, n) for every n, and
// none follows the offset chain below the frames it looks for: that is the
// any-instant walker (Scenario.AnyReader, `--reader any`), which checks the
// whole chain and every frame at every yield point, also on a running
// task from another CPU. It finds states no reader sees; its verdicts are
// labelled "any-instant".
const (
	ReaderCallchain    = "callchain"
	ReaderNMICallchain = "nmi-callchain"
	ReaderStackTrace   = "stack_trace_save"
	ReaderLivepatch    = "livepatch"
	ReaderProcStack    = "proc-stack"
	ReaderProfiler     = "profiler"
	ReaderRetrieve     = "retrieve-data"
	ReaderAny          = "any-instant"
)

// Readers names the readers that judge the scenario, for summaries.
func (s *Scenario) Readers() string {
	k := "the kernel's: NMI/IRQ callchains, stack_trace_save, livepatch (sleeping task), /proc/PID/stack (WARN only), the profiler"
	if s.AnyReader {
		return "any-instant walker (the whole chain at every yield), and " + k
	}
	return k
}

// inPlaceReader is the reader that can look at the current task now: an
// NMI's callchain always, an IRQ's stack_trace_save() only where IRQs are on.
func (r *runner) inPlaceReader() string {
	for _, x := range r.ctxs {
		if x.irqOff > 0 {
			return ReaderNMICallchain
		}
	}
	return ReaderCallchain
}

// checkReaders runs the readers that may look at the current task at this
// yield point (checkInPlace).
func (r *runner) checkReaders(c *ctx, s fgraph.Site) {
	t := r.m.Current
	m := r.m
	if m.Mem[m.TaskBase(t)+fgraph.TaskRetStack] != 0 {
		// Not a reader's check: a curr_ret_stack outside the stack means
		// the next read of ret_stack[curr_ret_stack - 1], by the task's own
		// push, reservation or pop or by any unwinder, is a wild access (on
		// a compiled target, of the process itself), so it is reported here,
		// before any code reads it.
		if curr := int(int64(m.Mem[m.TaskBase(t)+fgraph.TaskCurr])); curr < 0 || curr > r.cfg.StackWords {
			r.violate(OracleUnwinder, fmt.Sprintf("task%d at %s: curr_ret_stack %d outside [0, %d]: the next read of ret_stack[curr_ret_stack - 1] is outside the shadow stack", t, s, curr, r.cfg.StackWords))
			return
		}
	}
	memo := r.readerMemoOn()
	if memo && r.rmemo.same(r, t) {
		if r.hk.readerMemoSkips != nil {
			r.hk.readerMemoSkips.Add(1)
		}
		return
	}
	if memo {
		if mask, ok := r.rseen.hit(r, t); ok {
			if r.hk.readerMemoSkips != nil {
				r.hk.readerMemoSkips.Add(1)
			}
			if r.hk.readerSeenHits != nil {
				r.hk.readerSeenHits.Add(1)
			}
			r.rmemo.saveSlots(r, t, mask, r.rseen.slots) // (the real stack hit just compared)
			return
		}
	}
	nv, nw := r.violations, len(m.Warnings)
	if memo && r.knownWalksOn() && r.knownWalkBefore(t) {
		return // a walk with these inputs found known findings (knownwalk.go)
	}
	w := &r.rwatch
	if memo {
		b := m.TaskBase(t)
		*w = readWatch{m: m, lo: m.WordAddr(t, 0), also: [2]fgraph.Addr{b + fgraph.TaskRetStack, b + fgraph.TaskCurr}, on: true}
	}
	prev := r.rd // an unwind op's walk, when this yield is inside it
	r.inPlaceReaders(c, s, t)
	r.rd = prev
	w.on = false
	if r.krec.on {
		r.knownWalkAfter(t, nv, nw)
	}
	if memo && r.violations == nv && len(m.Warnings) == nw && !r.stopped && !w.other {
		r.rmemo.save(r, t, w.mask)
		r.rseen.add(r, t, w.mask)
	} else {
		r.rmemo.ok = false
	}
}

// readWatch is the hooks an in-place walk reads memory through while the
// reader memo is on (checkRetAddrs attaches it instead of none): it
// records which words the walk read, a bit of mask for each word of
// lo..lo+63, the words of also by themselves, and other for any other
// word. (A branch for it in the port's hook-less loads took them over the
// inliner's budget: 2 % of std C=2 in calls to ld.)
type readWatch struct {
	m     *fgraph.Machine
	lo    fgraph.Addr
	mask  uint64
	also  [2]fgraph.Addr
	other bool
	on    bool // a walk of checkReaders is recording
}

func (w *readWatch) Load(s fgraph.Site, a fgraph.Addr, k fgraph.Kind) fgraph.Word {
	switch d := a - w.lo; {
	case d >= 0 && d < 64:
		w.mask |= 1 << d
	case a != w.also[0] && a != w.also[1]:
		w.other = true
	}
	return w.m.Mem[a]
}

// Reread keeps the value, as the hook-less shim does.
func (w *readWatch) Reread(s fgraph.Site, a fgraph.Addr, prev fgraph.Word) fgraph.Word {
	return prev
}

// Store, AtomicAdd and Fence: a walk makes none (an internal error if it
// did: it would have written memory with no hooks either).
func (w *readWatch) Store(s fgraph.Site, a fgraph.Addr, v fgraph.Word, k fgraph.Kind) {
	internalf("an in-place walk stored to %d", a)
}
func (w *readWatch) AtomicAdd(s fgraph.Site, a fgraph.Addr, d int64) fgraph.Word {
	internalf("an in-place walk added to %d", a)
	return 0
}
func (w *readWatch) Fence(s fgraph.Site, f fgraph.Fence) {}

// The in-place readers' last clean inputs.
//
// An in-place check runs the readers (inPlaceReaders) at every yield after
// a commit an unwinder can see (runner.ver), yet half of those checks read
// the very words the last clean one read: a commit wrote a value already
// there (a push's rewrite of its reserved frame), or a word the walk does
// not read (curr_ret_depth, trace_recursion, a frame's func or DATA
// words). The readers are a function of task t's ret_stack and
// curr_ret_stack fields, the words of its shadow stack their walk reads
// (recorded by readWatch, with the slot word cursorAtBottom reads) and its
// real stack of return addresses. So after a clean check the memo keeps
// which words those are and the real stack, every write of memory
// (runner.poke) that changes one of the words forgets it, and so do a
// reset and a restore (loadData); a check of the same task with the same
// real stack is then clean again, and is not run. (A walk that reads any
// other word, or more than 64 words of the stack, is not kept.) Off where
// the readers read more (the any-instant walker reads the model, a
// compiled target its own memory) and where a report would not count (an
// evaluation, a counterfactual probe, a deferred stop).
// Past the last clean check, readerSeen (readseen.go) keeps the inputs
// of every clean one of the worker's exploration.
// TestReaderMemoSound compares explorations with it and without it;
// TestReaderMemoCaught shows that a memo blind to curr_ret_stack is
// caught. (One blind to the real stack, or to the frame
// above curr_ret_stack, is not: in std, peer-spin and the catalogue those
// never change while the words below curr_ret_stack stay. They are kept
// because the readers read them.)
type readerMemo struct {
	ok          bool
	t           int
	lo          fgraph.Addr   // ret_stack[0]
	mask        uint64        // the words of ret_stack[0, 64) it covers
	fRet, fCurr fgraph.Addr   // task t's ret_stack and curr_ret_stack
	slots       []fgraph.Word // retp, val, orig per slot of the real stack
	// The machine and its real stacks' version (fgraph.SlotsVersion)
	// when slots were last seen current: while both stay, so do the slots.
	sm   *fgraph.Machine
	sver uint64
	// blindCurr is the test hook readerMemoDrop "curr" (set with the
	// runner's hooks: shareRuns).
	blindCurr bool
}

func (r *runner) readerMemoOn() bool {
	return !r.hk.readerMemoOff && !r.sc.AnyReader && !r.compiled && r.sc.Target == nil && !r.evalAny && !r.probe && !r.quietStop
}

// covers reports whether a write of a can change what the memo keeps.
func (p *readerMemo) covers(a fgraph.Addr) bool {
	if d := a - p.lo; d >= 0 && d < 64 {
		return p.mask>>d&1 != 0
	}
	return a == p.fCurr && !p.blindCurr || a == p.fRet
}

// same reports whether a check of task t reads what the clean one kept
// read: memory is the same by then (poke), the real stack is compared.
func (p *readerMemo) same(r *runner, t int) bool {
	if !p.ok || p.t != t {
		return false
	}
	m := r.m
	if p.sm == m && (p.sver == m.SlotsVersion() || r.hk.readerMemoDrop == "slots") {
		return true // no real stack changed since the slots were current
	}
	n := m.SlotCount(t)
	if 3*n != len(p.slots) {
		return false
	}
	for i := 0; i < n; i++ {
		retp, val, orig := m.SlotWords(t, i)
		if p.slots[3*i] != retp || p.slots[3*i+1] != val || p.slots[3*i+2] != orig {
			return false
		}
	}
	p.sm, p.sver = m, m.SlotsVersion()
	return true
}

// save keeps what a clean check of task t read: the words of mask (bit i:
// ret_stack[i]) and the slot word cursorAtBottom reads.
func (p *readerMemo) save(r *runner, t int, mask uint64) {
	m := r.m
	p.set(r, t, mask)
	for i := 0; i < m.SlotCount(t); i++ {
		retp, val, orig := m.SlotWords(t, i)
		p.slots = append(p.slots, retp, val, orig)
	}
	p.sm, p.sver = m, m.SlotsVersion()
}

// saveSlots is save with task t's real stack given (retp, val, orig per
// slot): readerSeen's hit has just read it.
func (p *readerMemo) saveSlots(r *runner, t int, mask uint64, slots []fgraph.Word) {
	p.set(r, t, mask)
	p.slots = append(p.slots, slots...)
	p.sm, p.sver = r.m, r.m.SlotsVersion()
}

// set is save but for the real stack, which it empties.
func (p *readerMemo) set(r *runner, t int, mask uint64) {
	m := r.m
	b := m.TaskBase(t)
	p.ok, p.t = true, t
	p.lo = m.WordAddr(t, 0)
	p.mask = mask | 1<<r.cfg.FieldRetp()
	p.fRet, p.fCurr = b+fgraph.TaskRetStack, b+fgraph.TaskCurr
	p.slots = p.slots[:0]
}

// inPlaceReaders is checkReaders' walks: the any-instant walker when it is
// on, then the callchain.
func (r *runner) inPlaceReaders(c *ctx, s fgraph.Site, t int) {
	if r.sc.AnyReader {
		r.rd = readerCall{name: ReaderAny, on: true, walk: true, cur: t, t: t, values: true}
		starts, err := r.walk(t)
		if err != "" {
			r.violate(OracleUnwinder, fmt.Sprintf("task%d at %s: %s", t, s, err))
			return
		}
		r.checkFrames(t, starts)
		if r.stopped {
			return
		}
	}
	r.rd = readerCall{name: r.inPlaceReader(), on: true, cur: t, t: t, values: true}
	r.checkRetAddrs(t, t, c, false, true)
}

// remoteUnwind is a remote CPU unwinding task t: livepatch when t is not
// running, /proc/PID/stack when it is (its addresses are not judged unless
// the any-instant walker is on).
func (r *runner) remoteUnwind(c *ctx, t int) {
	prev := r.rd
	r.rd = r.remoteReader(t)
	r.checkRetAddrs(fgraph.NoTask, t, c, true, r.rd.values)
	r.rd = prev
}

// remoteReader is the reader of a remote CPU's unwind of task t.
func (r *runner) remoteReader(t int) readerCall {
	rd := readerCall{name: ReaderLivepatch, on: true, cur: fgraph.NoTask, t: t, values: true}
	switch {
	case t != r.m.Current:
	case r.sc.AnyReader:
		rd.name = ReaderAny
	default:
		rd.name, rd.values = ReaderProcStack, false
	}
	return rd
}

// readerCall is the reader running now: its name, for Violation.Reader,
// and, when on, its stack walk, so that an allowance can run it again on a
// counterfactual memory (passesWith). With frames, it is a callback's walk
// of its own task's get_ret_stack() chain, n+1 frames down.
type readerCall struct {
	name                     string
	on, walk, values, frames bool
	cur, t, n                int
}

// callbackReader brackets a callback's out-of-line read of its own shadow
// stack (fgraph_retrieve_*data(), the profiler's
// ftrace_graph_get_ret_stack()): a WARN inside it is that reader's, and
// the allowances may re-run its get_ret_stack() walk.
func (r *runner) callbackReader(c *ctx, s fgraph.Site, f fgraph.Fence) {
	switch f {
	case fgraph.CallIn:
		r.cbRd = r.rd
		r.rd = readerCall{name: ReaderRetrieve, on: true, frames: true, cur: c.task, t: c.task, n: r.parentDepth}
		if s == fgraph.SiteGetRetStackCall {
			r.rd.name = ReaderProfiler
		}
	case fgraph.CallOut:
		if r.inReserveWindow && !c.windowRead {
			c.windowRead = r.readDiffers(c.task, r.rd.n, r.reserveWindowFixes())
		}
		r.checkWarnings(c)
		r.rd = r.cbRd
	}
}

// readDiffers reports whether the get_ret_stack() walk n+1 frames down
// task t gives another frame, or WARNs otherwise, with the words in fixes at
// their intended values: the callback's read just now depended on them.
func (r *runner) readDiffers(t, n int, fixes []wordFix) bool {
	if len(fixes) == 0 {
		return false
	}
	f0, ok0, w0 := r.frameWalk(t, n)
	var f1 fgraph.Frame
	var ok1, w1 bool
	r.withFixes(fixes, func() { f1, ok1, w1 = r.frameWalk(t, n) })
	return f0 != f1 || ok0 != ok1 || w0 != w1
}

// frameWalk is ftrace_graph_get_ret_stack(t, n) reading memory directly
// (no yield, no hooks): the frame, whether there was one, and whether the
// walk WARNed (the warning is not kept).
func (r *runner) frameWalk(t, n int) (fgraph.Frame, bool, bool) {
	m := r.m
	m.SetHooks(nil)
	defer m.SetHooks(r)
	nw := len(m.Warnings)
	f, ok := m.FtraceGraphGetRetStack(t, n)
	warned := len(m.Warnings) > nw
	m.Warnings = m.Warnings[:nw]
	return f, ok, warned
}

// wordFix is a word and the value it would hold but for a known finding.
type wordFix struct {
	addr fgraph.Addr
	val  fgraph.Word
}

// withFixes runs f with the words in fixes at their intended values, in
// memory and in a compiled core's (Machine.Poke), and puts them back.
func (r *runner) withFixes(fixes []wordFix, f func()) {
	var buf [8]fgraph.Word
	saved := buf[:0]
	for _, x := range fixes {
		saved = append(saved, r.m.Mem[x.addr])
		r.poke(x.addr, x.val)
	}
	f()
	for i := len(fixes) - 1; i >= 0; i-- {
		r.poke(fixes[i].addr, saved[i])
	}
}

// passesWith reports whether the reader running now (r.rd) finds nothing
// when the words in fixes hold their intended values: the violation being
// judged is then caused by those words and by nothing else. The reader runs
// again reading memory directly, its violations counted but not recorded;
// memory and the runner's flags are restored.
func (r *runner) passesWith(fixes []wordFix) bool {
	if !r.rd.on || len(fixes) == 0 || r.probe {
		return false // no counterfactual inside a counterfactual
	}
	m := r.m
	probe, fail, stale, nw := r.probe, r.probeFail, r.staleRetp, len(m.Warnings)
	r.probe, r.probeFail = true, false
	rd := r.rd
	r.withFixes(fixes, func() {
		defer func() {
			if recover() != nil {
				r.probeFail = true
			}
		}()
		if rd.frames {
			if _, _, warned := r.frameWalk(rd.t, rd.n); warned {
				r.probeFail = true
			}
			return
		}
		if rd.walk {
			if starts, err := r.walk(rd.t); err != "" {
				r.probeFail = true
			} else {
				r.checkFrames(rd.t, starts)
			}
		}
		if !r.probeFail {
			r.checkRetAddrs(rd.cur, rd.t, nil, false, rd.values)
		}
	})
	ok := !r.probeFail
	r.probe, r.probeFail, r.staleRetp, r.rd = probe, fail, stale, rd
	m.Warnings = m.Warnings[:nw]
	return ok
}

// checkProfilerEntry checks what the profiler's entryfunc read: its own
// frame, just pushed.
func (r *runner) checkProfilerEntry(rec *fgraph.Record, fn int) {
	if len(rec.Prof) == 0 {
		return
	}
	if want := fgraph.FuncAddr(fn); rec.Prof[0] != want {
		prev := r.rd
		r.rd = readerCall{name: ReaderProfiler}
		r.violate(OracleRetAddr, fmt.Sprintf("entryfunc of user %d for func %#x: ftrace_graph_get_ret_stack(current, 0) returned the frame of %#x", rec.Ops, want, rec.Prof[0]))
		r.rd = prev
	}
}

// checkProfilerReturn checks what the profiler's retfunc read of its frame
// (f, just popped from the model) and of its parent: the frame ParentDepth
// levels below on the stack as it is now (expected: a return in flight
// below has removed its frame, an entry in flight has added one):
// ftrace_graph_get_ret_stack(current, depth) and (current, 0) before v6.13,
// fgraph_retrieve_parent_data(idx, &size, depth) since. The data of a
// parent that is an entry in flight is not judged (its callbacks may not
// have reserved yet).
func (r *runner) checkProfilerReturn(t int, rec *fgraph.Record, e model.RetCall, f model.Frame) {
	depth := r.ops[rec.Ops].ParentDepth
	if depth == 0 {
		return
	}
	exp := r.expected(t) // bottom first; f is already gone from it
	var parent *expectFrame
	if n := len(exp) - depth; n >= 0 {
		parent = &exp[n]
	}
	defer func(prev readerCall) { r.rd = prev }(r.rd)
	r.rd = readerCall{name: ReaderProfiler}
	if len(rec.Prof) == 2 {
		var want fgraph.Word
		if parent != nil {
			want = parent.fn
		}
		if rec.Prof[0] != want && (parent == nil || !parent.bogus[1]) {
			r.violate(OracleRetAddr, fmt.Sprintf("retfunc of user %d for func %#x: ftrace_graph_get_ret_stack(current, %d) returned the frame of %#x, want %#x", rec.Ops, f.Func, depth, rec.Prof[0], want))
			return
		}
		if rec.Prof[1] != f.Func {
			r.violate(OracleRetAddr, fmt.Sprintf("retfunc of user %d for func %#x: ftrace_graph_get_ret_stack(current, 0) returned the frame of %#x", rec.Ops, f.Func, rec.Prof[1]))
		}
		return
	}
	if r.sc.Variant != fgraph.Latest || (parent != nil && parent.mi < 0) {
		return
	}
	var want []fgraph.Word
	var pf fgraph.Word
	if parent != nil && !r.mcfg.NoData {
		mf := &r.model.Tasks[t].Frames[parent.mi]
		pf = mf.Func
		for _, d := range mf.Data {
			if d.Idx == e.Idx {
				want = d.Words
			}
		}
	}
	if !slices.Equal(rec.Parent, want) {
		r.violate(OracleCallback, fmt.Sprintf("retfunc of user %d for func %#x: fgraph_retrieve_parent_data(%d, &size, %d) returned %x, the parent frame (func %#x) holds %x", rec.Ops, f.Func, e.Idx, depth, rec.Parent, pf, want))
	}
}

// reserveWindowFixes lists the DATA words of reservations in their window
// (raised, rewrite pending) that an interrupt overwrote, with the values
// reserve.w1 wrote.
func (r *runner) reserveWindowFixes() []wordFix {
	var out []wordFix
	for _, x := range r.ctxs {
		if v := x.resv; v != nil && v.raised && r.m.Mem[v.addr] != v.val {
			out = append(out, wordFix{v.addr, v.val})
		}
	}
	return out
}

// openFindingFixes lists the words every window finding open now leaves
// wrong, with the values the code will write or wrote: the frame in flight
// the ret-addr walk matched (inflight-ret-addr), the DATA words of raised
// reservations (reserve-window) and the clobbered DATA words still wrong
// (reserve-reorder). A counterfactual that judges one finding restores
// them all: two known findings on one walk are still known (std at C = 0:
// a tail call's discarded frame in flight under an interrupt over a DATA
// word reserve-reorder left wrong, where each finding's own words alone
// still failed).
func (r *runner) openFindingFixes() []wordFix {
	var out []wordFix
	if r.staleRetp {
		out = append(out, r.inflightFixes(r.rd.t)...)
	}
	out = append(out, r.reserveWindowFixes()...)
	if r.clobbered {
		out = append(out, r.wrongClobbered()...)
	}
	return out
}

// inflightFixes lists the fields of task t's frames in flight (W3
// committed, W5 pending) with the values W5 will write.
func (r *runner) inflightFixes(t int) []wordFix {
	var out []wordFix
	m := r.m
	for _, x := range r.ctxs {
		e := x.entry
		if x.task != t || e == nil || !e.pushed {
			continue
		}
		for i, f := range [3]struct {
			field int
			val   fgraph.Word
		}{{fgraph.FieldRet, e.ret}, {fgraph.FieldFunc, e.fn}, {r.cfg.FieldRetp(), e.retp}} {
			if !e.ok[i] {
				out = append(out, wordFix{m.WordAddr(t, e.base+f.field), f.val})
			}
		}
	}
	return out
}

// modelPassesWith reports whether oracle 3 passes now with the words in
// fixes at their intended values (memory restored afterwards).
func (r *runner) modelPassesWith(fixes []wordFix) bool {
	if r.probe {
		return false
	}
	probe, fail := r.probe, r.probeFail
	r.probe, r.probeFail = true, false
	r.withFixes(fixes, r.checkModel)
	ok := !r.probeFail
	r.probe, r.probeFail = probe, fail
	return ok
}

// stillClobbered reports whether a is a DATA word a reservation returned
// with overwritten (known finding reserve-reorder) and is still wrong.
func (r *runner) stillClobbered(a fgraph.Addr) bool {
	for _, f := range r.clobberedFixes {
		if f.addr == a && r.m.Mem[a] != f.val {
			return true
		}
	}
	return false
}

// forgetClobbered drops a clobbered DATA word the code has written since
// (known finding reserve-reorder): the word now holds a later store of
// the code, such as a new frame's over a reservation the entry discarded,
// and setting it back to the reservation's value would break that store.
func (r *runner) forgetClobbered(a fgraph.Addr) {
	r.clobberedFixes = slices.DeleteFunc(r.clobberedFixes, func(f wordFix) bool { return f.addr == a })
}

// wrongClobbered lists the clobbered DATA words still wrong.
func (r *runner) wrongClobbered() []wordFix {
	var out []wordFix
	for _, f := range r.clobberedFixes {
		if r.m.Mem[f.addr] != f.val {
			out = append(out, f)
		}
	}
	return out
}
