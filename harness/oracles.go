package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/model"
)

// Oracle names.
const (
	OracleUnwinder     = "unwinder"     // 1: the offset chain from curr_ret_stack reaches 0
	OracleRetAddr      = "ret-addr"     // 2: return addresses and ftrace_graph_get_ret_stack
	OracleModel        = "model"        // 3: the words abstract to the model
	OracleCallback     = "callback"     // 4: callbacks, data, depth
	OracleTransparency = "transparency" // 5: an interrupt leaves the live stack as it found it
	OracleCapacity     = "capacity"     // 6: no write at or past the limit
	OraclePanic        = "panic"        // 7: never the panic path, no WARN
)

// Oracles lists the oracle names in order.
var Oracles = []string{OracleUnwinder, OracleRetAddr, OracleModel, OracleCallback, OracleTransparency, OracleCapacity, OraclePanic}

// violate records a violation; unless it is a known finding (and not
// strict) or KeepGoing is set, the run stops.
func (r *runner) violate(oracle, msg string) { r.violateDetail(oracle, msg, nil) }

// violateDetail is violate for a message whose detail is dear to render
// (the model oracle's go-cmp diff): the known findings match on msg alone,
// and detail() is appended only to a violation that is kept, not to the
// repeats of a known finding already reported in the run (they are only
// counted) nor to a counterfactual re-run's. No Match reads a detail.
func (r *runner) violateDetail(oracle, msg string, detail func() string) {
	r.violateAs(oracle, msg, detail, "", false)
}

// violateAs is violateDetail with the known finding the report is given
// (given: a kept walk's replay, knownwalk.go) instead of matched; an
// in-place walk that is recording (runner.krec) gets the report.
func (r *runner) violateAs(oracle, msg string, detail func() string, known string, given bool) {
	if r.evalAny {
		r.probeFail = true // an evaluation (unwindext.go): nothing is kept
		return
	}
	at := "setup"
	if len(r.ctxs) > 0 {
		c := r.top()
		at = c.name
	}
	if r.quietStop && !r.probe {
		return // a merged representative's deferred stop (remotes.go)
	}
	r.violations++
	v := Violation{Oracle: oracle, Msg: msg, At: at, AliasDependent: r.aliasDep, Reader: r.rd.name}
	k := known
	if !given {
		k = r.known(v)
	}
	if r.krec.on && !r.probe {
		r.krec.reps = append(r.krec.reps, knownRep{oracle, msg, k})
	}
	if r.probe {
		// A counterfactual re-run (readers.go): only a violation that is
		// not itself a known finding counts against the allowance.
		if k == "" || r.opt.Strict {
			r.probeFail = true
		}
		return
	}
	if r.opt.Strict && k != "" {
		v.Strict = k // reported, with the finding it is
	}
	if k != "" && !r.opt.Strict {
		v.Known = k
		dup := slices.ContainsFunc(r.res.Known, func(x Violation) bool { return x.Known == k })
		if r.hashing && !(dup && detsReportedOnly) {
			r.logDet(knownIndex[k], oracleIndex[oracle]) // suppressed or not (cache.go, det)
		}
		if dup {
			return // one report per finding per run
		}
	}
	if detail != nil && (v.Known == "" || !r.opt.knownBrief) {
		v.Msg += detail() // a report that is kept
		if r.hk.detailsRendered != nil {
			r.hk.detailsRendered.Add(1)
		}
	}
	if v.Known != "" {
		r.res.Known = append(r.res.Known, v)
		r.traceViolation(TraceKnown, "KNOWN", v)
		return
	}
	r.res.Violations = append(r.res.Violations, v)
	r.traceViolation(TraceViolation, "VIOLATION", v)
	if r.tr != nil && !r.stopped {
		r.tracePicture(r.tr.last().Level, "at the violation")
	}
	if !r.opt.KeepGoing {
		if r.remDefer() {
			return // at the end of the segment (remotes.go)
		}
		r.stopped = true
		r.stopRun() // nothing more of the code under test runs (abort.go)
	}
}

// checkInPlace runs the read-only oracles at a yield point.
func (r *runner) checkInPlace(c *ctx, s fgraph.Site) {
	if r.hk.checkHook != nil {
		r.hk.checkHook(r)
	}
	m := r.m
	if len(m.Log) > r.logSeen {
		for i, rec := range m.Log[r.logSeen:] {
			r.readLog(r.logSeen + i)
			r.checkRecord(rec)
		}
		r.logSeen = len(m.Log)
	}
	r.checkWarnings(c)
	if r.stopped {
		return
	}
	r.checkReaders(c, s) // readers.go
}

// checkFrames is the ftrace_graph_get_ret_stack(n) half of oracle 2 for the
// in-place check: the frames the walk found (the same get_ret_stack steps),
// top first, against the expected ones. The unwind op and remote unwinds
// call the port's ftrace_graph_get_ret_stack for every n instead.
func (r *runner) checkFrames(t int, starts []int) {
	m := r.m
	if m.Mem[m.TaskBase(t)+fgraph.TaskRetStack] == 0 {
		// No shadow stack (the task exited with calls live): no unwinder
		// asks fgraph about it, as in checkRetAddrs.
		return
	}
	exp := r.expected(t)
	if len(starts) != len(exp) {
		if len(starts) > len(exp) {
			st := starts[len(exp)]
			r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d) returned a frame (ret %#x func %#x) but only %d are live",
				t, len(exp), m.Mem[m.WordAddr(t, st+fgraph.FieldRet)], m.Mem[m.WordAddr(t, st+fgraph.FieldFunc)], len(exp)))
		} else {
			r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d) returned NULL, want the frame of func %#x", t, len(starts), exp[len(exp)-1-len(starts)].fn))
		}
		return
	}
	for n, st := range starts {
		e := exp[len(exp)-1-n]
		got := [3]fgraph.Word{m.Mem[m.WordAddr(t, st+fgraph.FieldRet)], m.Mem[m.WordAddr(t, st+fgraph.FieldFunc)], m.Mem[m.WordAddr(t, st+r.cfg.FieldRetp())]}
		want := [3]fgraph.Word{e.ret, e.fn, e.retp}
		for i, name := range [3]string{"ret", "func", "retp"} {
			if got[i] != want[i] && !e.bogus[i] {
				r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d).%s = %#x, want %#x", t, n, name, got[i], want[i]))
				return
			}
		}
	}
}

// walk follows task t's offset chain in memory like get_ret_stack, checking
// every meta word; it returns the frame starts, top first.
func (r *runner) walk(t int) ([]int, string) {
	m := r.m
	b := m.TaskBase(t)
	if m.Mem[b+fgraph.TaskRetStack] == 0 {
		return nil, ""
	}
	F := r.cfg.FrameWords
	curr := int(int64(m.Mem[b+fgraph.TaskCurr]))
	if curr < 0 || curr > r.maxOff {
		return nil, fmt.Sprintf("curr_ret_stack %d outside [0, %d]", curr, r.maxOff)
	}
	w0 := b + fgraph.TaskWords
	word := func(i int) fgraph.Word { return m.Mem[w0+fgraph.Addr(i)] }
	starts := r.walkBuf[:0]
	defer func() { r.walkBuf = starts[:0] }()
	pos := curr
	for pos > 0 {
		top := pos - 1
		w := word(top)
		for fgraph.GetType(w) == fgraph.FgraphTypeData {
			off, size := fgraph.GetFrameOffset(w), fgraph.GetDataSize(w)
			if off <= 0 || off > top || top-size-1 < 0 {
				return starts, fmt.Sprintf("word %d (%#x): DATA word with offset %d, size %d leads below word 0", top, w, off, size)
			}
			next := top - size - 1
			if got, want := fgraph.GetFrameOffset(word(next)), off-size-1; got != want {
				return starts, fmt.Sprintf("word %d (%#x): DATA offset %d, but word %d below has offset %d (want %d)", top, w, off, next, got, want)
			}
			top, w = next, word(next)
		}
		switch fgraph.GetType(w) {
		case fgraph.FgraphTypeBitmap, fgraph.FgraphTypeReserved:
		default:
			return starts, fmt.Sprintf("word %d (%#x): top meta word of type %d", top, w, fgraph.GetType(w))
		}
		if off := fgraph.GetFrameOffset(w); off != F {
			return starts, fmt.Sprintf("word %d (%#x): frame meta word offset %d, want F = %d", top, w, off, F)
		}
		if top-F < 0 {
			return starts, fmt.Sprintf("word %d (%#x): frame starts below word 0", top, w)
		}
		starts = append(starts, top-F)
		pos = top - F
	}
	return starts, ""
}

// expectFrame is one frame an unwinder should see, with the in-flight
// allowance: a field whose rewrite (W5) has not committed may be bogus.
type expectFrame struct {
	ret, fn, retp fgraph.Word
	bogus         [3]bool
	mi            int // the model frame's index; -1 for an entry in flight
}

// expected builds the frames task t's shadow stack should hold now, bottom
// first: the model's frames, minus frames whose return already lowered
// curr_ret_stack, plus frames of entries that raised it.
func (r *runner) expected(t int) []expectFrame {
	fr := r.model.Tasks[t].Frames
	out := r.expBuf[:0]
	// The contexts of this task with an entry or a return in flight.
	var busy [8]*ctx
	nb := 0
	for _, x := range r.ctxs {
		if x.task == t && nb < len(busy) && (x.entry != nil && x.entry.pushed || x.pop != nil && x.pop.lowered > 0) {
			busy[nb] = x
			nb++
		}
	}
	if nb == 0 {
		for i := range fr {
			out = append(out, expectFrame{ret: fr[i].Ret, fn: fr[i].Func, retp: fr[i].Retp, mi: i})
		}
		r.expBuf = out
		return out
	}
	for i := 0; i <= len(fr); i++ {
		removed := false
		for _, x := range busy[:nb] {
			if e := x.entry; e != nil && e.pushed && e.modelPos == i {
				out = append(out, expectFrame{ret: e.ret, fn: e.fn, retp: e.retp, bogus: [3]bool{!e.ok[0], !e.ok[1], !e.ok[2]}, mi: -1})
			}
			if p := x.pop; p != nil && i >= p.modelTop-p.lowered && i < p.modelTop {
				removed = true
			}
		}
		if i < len(fr) && !removed {
			out = append(out, expectFrame{ret: fr[i].Ret, fn: fr[i].Func, retp: fr[i].Retp, mi: i})
		}
	}
	r.expBuf = out
	return out
}

// checkRetAddrs is oracle 2 for task t: ftrace_graph_ret_addr over every
// live real-stack slot, top down with one idx cursor (the x86 unwinder's
// unwind_recover_ret_addr()), and, for the any-instant walker only,
// ftrace_graph_get_ret_stack(n) for every n. Unless viaShim, it reads
// memory directly (what an interrupt arriving now would see). With values
// false only a WARN or a crash of the walk counts (a racy reader whose
// output nobody trusts).
//
// cur is the unwinder's current: t for a reader on this CPU (an interrupt
// or the task itself), fgraph.NoTask for another CPU's.
func (r *runner) checkRetAddrs(cur, t int, c *ctx, viaShim, values bool) {
	m := r.m
	if m.Mem[m.TaskBase(t)+fgraph.TaskRetStack] == 0 {
		return
	}
	nw := len(m.Warnings)
	// One deferred call, not three, and not a closure: with this many
	// returns, three defers are not open-coded (the runtime's defer
	// records were 4 % of std's profile), and a closure's captures cost 1
	// % of peer-spin K=3's instructions.
	defer r.retAddrsDone(r.cursorDepth, nw, viaShim)
	if !viaShim {
		// Read memory directly: detach the hooks so the port's loads take
		// the shim's fast path, or record what the walk reads (readers.go).
		if r.rwatch.on {
			m.SetHooks(&r.rwatch)
		} else {
			m.SetHooks(nil)
		}
	}
	getAll := viaShim && values && r.sc.AnyReader
	var exp []expectFrame
	if getAll {
		exp = r.expected(t)
	}
	for n := 0; getAll; n++ {
		f, ok := m.FtraceGraphGetRetStack(t, n)
		if len(m.Warnings) > nw {
			r.checkWarnings(c) // the port's own WARN (getAll is via the shim), reported now
			return
		}
		if n >= len(exp) {
			if ok {
				r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d) returned a frame (ret %#x func %#x) but only %d are live", t, n, f.Ret, f.Func, len(exp)))
			}
			break
		}
		e := exp[len(exp)-1-n]
		if !ok {
			r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d) returned NULL, want the frame of func %#x", t, n, e.fn))
			return
		}
		got := [3]fgraph.Word{f.Ret, f.Func, f.Retp}
		want := [3]fgraph.Word{e.ret, e.fn, e.retp}
		for i, name := range [3]string{"ret", "func", "retp"} {
			if got[i] != want[i] && !e.bogus[i] {
				r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_get_ret_stack(%d).%s = %#x, want %#x", t, n, name, got[i], want[i]))
				return
			}
		}
	}
	// The unwinder over the real stack, top down. The cursor lives in the
	// runner (one per nesting of this check: via the shim, a load can
	// yield to an interrupt that checks again): a local would escape
	// through the Core interface, one allocation per check.
	var pidx *int
	if r.cursorDepth < len(r.cursors) {
		pidx = &r.cursors[r.cursorDepth]
		*pidx = 0
	} else {
		pidx = new(int)
	}
	r.cursorDepth++
	prev := -1
	for i := m.SlotCount(t) - 1; i >= 0; i-- {
		retp, val, orig := m.SlotWords(t, i)
		got := m.FtraceGraphRetAddrFrom(cur, t, pidx, val, retp)
		if len(m.Warnings) > nw {
			if viaShim {
				r.checkWarnings(c)
			} else {
				r.violate(OracleUnwinder, r.unwMsg(t, retp, m.Warnings[nw].Msg))
			}
			return
		}
		if !values {
			continue
		}
		if got != orig {
			r.staleRetp = r.inflightStaleRetp(t, retp, got)
			r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_ret_addr(slot %#x holding %#x) = %#x, want %#x", t, retp, val, got, orig))
			r.staleRetp = false
			return
		}
		if val == fgraph.ReturnToHandler && r.sc.Variant != fgraph.Seed {
			// The cursor contract (29c1c24a2707): after a hit, *idx is the
			// found frame's start, and the walk only goes down.
			if *pidx <= 0 && prev != 0 {
				if !r.cursorAtBottom(t, retp) {
					r.violate(OracleRetAddr, fmt.Sprintf("task%d: ftrace_graph_ret_addr(slot %#x) found the frame but left the idx cursor at %d", t, retp, *pidx))
					return
				}
			}
			if prev >= 0 && *pidx > prev {
				r.violate(OracleRetAddr, fmt.Sprintf("task%d: idx cursor moved up from %d to %d", t, prev, *pidx))
				return
			}
			prev = *pidx
		}
	}
}

// retAddrsDone ends checkRetAddrs however it returns (a check's crash
// panics through it): the cursor it took given back, and, if it read
// memory with the hooks detached, their WARNs dropped (the caller reports
// them) and the hooks attached again.
func (r *runner) retAddrsDone(depth, nw int, viaShim bool) {
	r.cursorDepth = depth
	if !viaShim {
		m := r.m
		if len(m.Warnings) > nw {
			m.Warnings = m.Warnings[:nw]
		}
		m.SetHooks(r)
	}
}

// inflightStaleRetp reports whether ftrace_graph_ret_addr matched a frame
// in flight on task t: curr_ret_stack is raised (W3) but its ret or retp word
// is not rewritten yet (W5), and its words hold retp and got.
func (r *runner) inflightStaleRetp(t int, retp, got fgraph.Word) bool {
	m := r.m
	for _, x := range r.ctxs {
		e := x.entry
		if x.task != t || e == nil || !e.pushed || (e.ok[0] && e.ok[2]) {
			continue
		}
		if m.Mem[m.WordAddr(t, e.base+r.cfg.FieldRetp())] == retp && m.Mem[m.WordAddr(t, e.base)] == got {
			return true
		}
	}
	return false
}

// cursorAtBottom reports whether the frame for retp starts at word 0 (then
// *idx = 0 is the kernel's documented corner, section 2.5).
func (r *runner) cursorAtBottom(t int, retp fgraph.Word) bool {
	m := r.m
	return m.Mem[m.WordAddr(t, r.cfg.FieldRetp())] == retp
}

// snapshotLive copies curr_ret_stack, curr_ret_depth and the live words.
func (r *runner) snapshotLive(out []fgraph.Word, t int) []fgraph.Word {
	m := r.m
	b := m.TaskBase(t)
	curr := int(int64(m.Mem[b+fgraph.TaskCurr]))
	if curr < 0 || curr > r.cfg.StackWords {
		curr = 0
	}
	out = append(out[:0], m.Mem[b+fgraph.TaskCurr], m.Mem[b+fgraph.TaskDepth])
	return append(out, m.Mem[b+fgraph.TaskWords:b+fgraph.TaskWords+fgraph.Addr(curr)]...)
}

// checkTransparent is oracle 5.
func (r *runner) checkTransparent(c *ctx, before []fgraph.Word) {
	after := r.snapshotLive(r.liveAfter[:0], r.m.Current)
	r.liveAfter = after
	if len(after) != len(before) || after[0] != before[0] {
		r.violate(OracleTransparency, fmt.Sprintf("curr_ret_stack was %d before the interrupt, %d after", int64(before[0]), int64(after[0])))
		return
	}
	if after[1] != before[1] {
		r.violate(OracleTransparency, fmt.Sprintf("curr_ret_depth was %d before the interrupt, %d after", int64(before[1]), int64(after[1])))
		return
	}
	for i := 2; i < len(after); i++ {
		if after[i] != before[i] {
			r.violate(OracleTransparency, fmt.Sprintf("live word %d was %#x before the interrupt, %#x after", i-2, before[i], after[i]))
			return
		}
	}
}

// checkCapacity is oracle 6, on every committed store.
func (r *runner) checkCapacity(c *ctx, st pending) {
	if t := r.stackAt[st.addr]; t < 0 || st.addr < r.stacks[t].lo+fgraph.Addr(r.maxOff) {
		return // not at or past any task's SHADOW_STACK_MAX_OFFSET
	}
	switch st.site {
	case fgraph.SiteInitTask, fgraph.SiteTaskVars:
		return
	}
	for t := range r.sc.Tasks {
		w0 := r.m.TaskBase(t) + fgraph.TaskWords
		i := int(st.addr - w0)
		if i < 0 || i >= r.cfg.StackWords {
			continue
		}
		if st.site == fgraph.SiteTaskVar && i >= r.varBase && r.varBase >= 0 {
			continue // a user's own task variable (fgraph_get_task_var)
		}
		if i >= r.maxOff {
			r.violate(OracleCapacity, fmt.Sprintf("%s wrote word %d of task%d, at or past SHADOW_STACK_MAX_OFFSET %d", st.site, i, t, r.maxOff))
		}
	}
}

// checkWarnings is oracle 7: a WARN, a BUG or the kill switch.
func (r *runner) checkWarnings(c *ctx) {
	m := r.m
	for r.warnSeen < len(m.Warnings) {
		w := m.Warnings[r.warnSeen]
		r.warnSeen++
		if strings.HasPrefix(w.Msg, fgraph.CrashPrefix) || strings.HasPrefix(w.Msg, "WARN") {
			r.violate(OraclePanic, fmt.Sprintf("%s at %s", w.Msg, w.Site))
			return
		}
	}
}

// checkRecord checks one callback record as soon as it appears.
func (r *runner) checkRecord(rec fgraph.Record) {
	switch {
	case rec.Reentered && rec.Nest == 1 && rec.Transition:
		r.violate(OracleCallback, fmt.Sprintf("entryfunc of user %d re-entered in the same context (level %d) for func %#x: nested call 1, let through on TRACE_CTX_TRANSITION", rec.Ops, rec.Level, rec.Func))
	case rec.Reentered:
		r.violate(OracleCallback, fmt.Sprintf("entryfunc of user %d re-entered in the same context (level %d) for func %#x (nested call %d)", rec.Ops, rec.Level, rec.Func, rec.Nest))
	case rec.Torn && rec.Ops < 0:
		r.violate(OracleCallback, fmt.Sprintf("%s callback reached &fgraph_stub through a re-read of fgraph_array after the stub check passed", kindName(rec.Kind)))
	case rec.Torn:
		r.violate(OracleCallback, fmt.Sprintf("%s callback of user %d reached through a re-read of fgraph_array that differs from the checked value", kindName(rec.Kind), rec.Ops))
	case rec.Ops >= 0 && rec.Gops != fgraph.OpsHandle(rec.Ops):
		r.violate(OracleCallback, fmt.Sprintf("%s callback of user %d called with gops %#x", kindName(rec.Kind), rec.Ops, rec.Gops))
	}
}

func kindName(k fgraph.RecordKind) string {
	if k == fgraph.RecEntry {
		return "entry"
	}
	return "return"
}

// checkEntries compares the entry callbacks of one call with the model, and
// records the entry depth on the model frame.
func (r *runner) checkEntries(c *ctx, fn int, res model.CallResult) {
	recs := r.records(c, fgraph.RecEntry)
	if len(recs) != len(res.Entries) {
		r.violate(OracleCallback, fmt.Sprintf("call %d: %d entry callbacks, model expects %d (%s)", fn, len(recs), len(res.Entries), describeEntries(res.Entries)))
		return
	}
	for i, rec := range recs {
		e := res.Entries[i]
		if rec.Ops != e.User || rec.Idx != e.Idx || rec.Gen != e.Gen || rec.Accepted != e.Accepted {
			r.violate(OracleCallback, fmt.Sprintf("call %d: entry callback %d went to user %d idx %d gen %d accepted=%v, model expects user %d idx %d gen %d accepted=%v",
				fn, i, rec.Ops, rec.Idx, rec.Gen, rec.Accepted, e.User, e.Idx, e.Gen, e.Accepted))
			return
		}
		if !slices.Equal(rec.Data, e.Data) {
			r.violate(OracleCallback, fmt.Sprintf("call %d: user %d wrote %x, model expects %x", fn, e.User, rec.Data, e.Data))
			return
		}
		if r.checkProfilerEntry(rec, fn); r.stopped {
			return
		}
	}
	if res.Pushed && len(recs) > 0 {
		tk := &r.model.Tasks[c.task]
		tk.Frames[len(tk.Frames)-1].EntryDepth = recs[0].Depth
	}
}

func describeEntries(es []model.EntryCall) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "user %d idx %d", e.User, e.Idx)
	}
	return b.String()
}

// checkReturn compares one handler run's retfuncs with the model, and
// checks the protocol: a retfunc runs only for a frame its user accepted
// in the same registration, gets exactly its own data and the entry depth.
// It returns the records not consumed.
func (r *runner) checkReturn(c *ctx, mr model.ReturnResult, recs []*fgraph.Record) []*fgraph.Record {
	f := mr.Frame
	n := len(mr.Calls)
	if len(recs) < n {
		r.violate(OracleCallback, fmt.Sprintf("return from func %#x: %d retfuncs ran, the kernel semantics call %d", f.Func, len(recs), n))
		return nil
	}
	for i := 0; i < n; i++ {
		rec, e := recs[i], mr.Calls[i]
		if rec.Ops != e.User || rec.Idx != e.Idx {
			r.violate(OracleCallback, fmt.Sprintf("return from func %#x: retfunc %d went to user %d idx %d, model expects user %d idx %d", f.Func, i, rec.Ops, rec.Idx, e.User, e.Idx))
			return nil
		}
		if rec.Depth != f.EntryDepth {
			r.violate(OracleCallback, fmt.Sprintf("return from func %#x: retfunc of user %d got depth %d, entry had %d", f.Func, rec.Ops, rec.Depth, f.EntryDepth))
			return nil
		}
		if rec.Func != f.Func {
			r.violate(OracleCallback, fmt.Sprintf("return: retfunc of user %d got func %#x, the frame is %#x", rec.Ops, rec.Func, f.Func))
			return nil
		}
		if !slices.Equal(rec.Data, e.Data) {
			r.violate(OracleCallback, fmt.Sprintf("return from func %#x: user %d retrieved %x, the frame holds %x for idx %d", f.Func, rec.Ops, rec.Data, e.Data, e.Idx))
			return nil
		}
		if r.checkProfilerReturn(c.task, rec, e, f); r.stopped {
			return nil
		}
		// The protocol.
		if !f.AcceptedBy(e.Idx, e.User, rec.Gen) {
			accepted := false
			for _, a := range f.Accepted {
				if a.Idx == e.Idx {
					accepted = true
				}
			}
			switch {
			case !accepted:
				r.violate(OracleCallback, fmt.Sprintf("retfunc of user %d (idx %d) ran for func %#x, whose entry it never accepted (bitmap %#x)", e.User, e.Idx, f.Func, f.Bits))
			default:
				r.violate(OracleCallback, fmt.Sprintf("retfunc of user %d (idx %d, generation %d) ran for func %#x, accepted by idx %d in another registration; it retrieved %x", e.User, e.Idx, rec.Gen, f.Func, e.Idx, rec.Data))
			}
			if r.stopped {
				return nil
			}
		}
	}
	return recs[n:]
}

// checkModel is oracle 3 at a quiescent point: every task's words abstract
// to the model, and the globals agree with the model's user table.
func (r *runner) checkModel() {
	m := r.m
	for t := range r.sc.Tasks {
		if !m.Alive(t) {
			continue
		}
		im := m.View(t) // got shares the words and r.abs: compared here, not kept
		got, err := r.abs.Abstract(r.mcfg, model.Image{HasStack: im.HasStack, Curr: im.Curr, Depth: im.Depth, Overrun: im.Overrun, Words: im.Words})
		if err != nil {
			r.violate(OracleModel, fmt.Sprintf("task%d: %v", t, err))
			return
		}
		if want := &r.model.Tasks[t]; !equalTask(want, &got) {
			// got shares r.abs: the detail is rendered inside the call.
			r.violateDetail(OracleModel, fmt.Sprintf("task%d: words do not abstract to the model (-model +words):\n", t), func() string { return r.diffs.diff(want, got) })
			return
		}
		if im.HasStack && im.Depth != len(r.model.Tasks[t].Frames)-1 {
			r.violate(OracleModel, fmt.Sprintf("task%d: curr_ret_depth %d with %d frames", t, im.Depth, len(r.model.Tasks[t].Frames)))
			return
		}
	}
	r.checkGlobals()
}

// checkGlobals compares fgraph_array, the bitmask, ftrace_graph_active and
// direct mode with the model's user table.
func (r *runner) checkGlobals() {
	m := r.m
	if m.Mem[fgraph.AddrDead] != 0 {
		r.violate(OraclePanic, "ftrace_graph_stop() was called: graph tracing is dead")
		return
	}
	active := 0
	var only fgraph.Word
	for i, sl := range r.model.Slots {
		got := m.Mem[fgraph.AddrArray+fgraph.Addr(i)]
		want := fgraph.HandleStub
		if sl.User >= 0 {
			want = fgraph.OpsHandle(sl.User)
			active++
			only = want
		} else if r.pending[i] > 0 {
			active++ // allocated, published by its tail
			only = fgraph.OpsHandle(r.pending[i] - 1)
		}
		if got == fgraph.HandleNull && active == 0 && sl.User < 0 {
			continue // never initialised
		}
		if got != want {
			r.violate(OracleModel, fmt.Sprintf("fgraph_array[%d] = %#x, model expects %#x", i, got, want))
			return
		}
	}
	if got := int(int64(m.Mem[fgraph.AddrActive])); got != active {
		r.violate(OracleModel, fmt.Sprintf("ftrace_graph_active = %d, model has %d users", got, active))
		return
	}
	if !r.cfg.NoDirect() {
		key := m.Mem[fgraph.AddrDoDirect] != 0
		if active == 1 && (!key || m.Mem[fgraph.AddrDirectGops] != only) {
			r.violate(OracleModel, fmt.Sprintf("one user registered but direct mode is off (fgraph_do_direct=%v, fgraph_direct_gops=%#x)", key, m.Mem[fgraph.AddrDirectGops]))
			return
		}
		if active > 1 && key {
			r.violate(OracleModel, "several users registered but direct mode is on")
			return
		}
	}
}

// unwMsg is the unwinder oracle's report of warning w at slot retp of task
// t, from a memo of those rendered before (the same few are met tens of
// thousands of times: peer-spin K=3's in-place checks report
// reserve-window's bad offset about 80,000 times, and this Sprintf was
// 2 % of its time). At most 4,096 are kept; the memo is emptied when full.
func (r *runner) unwMsg(t int, retp fgraph.Word, w string) string {
	k := unwKey{t, retp, w}
	if msg, ok := r.unwMsgs[k]; ok {
		return msg
	}
	if r.unwMsgs == nil || len(r.unwMsgs) >= 1<<12 {
		r.unwMsgs = make(map[unwKey]string)
	}
	msg := fmt.Sprintf("task%d: ftrace_graph_ret_addr(slot %#x): %s", t, retp, w)
	r.unwMsgs[k] = msg
	return msg
}

// unwKey is what an unwinder report says (unwMsg).
type unwKey struct {
	t    int
	retp fgraph.Word
	w    string
}
