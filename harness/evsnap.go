package harness

import (
	"reflect"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Interrupts skipped on replay.
//
// A run replays the prefix it shares with the previous run from the last
// snap before its changed choice (resume.go): a snap is taken only at a
// task-level quiescent point, because the contexts in flight live on the
// Go stack. An interrupt in that replayed part ran whole in an earlier
// run, with the same state before it and the same choices inside it: on
// std at C=3 these replays were half of the exploration's time (1.29 M
// interrupts run again, 10.0 s of 20.1 s; 0.09 M run for the first time).
//
// The interrupt's context returns before the interrupted one goes on, so
// right after it nothing of it is on the Go stack: what it left is data
// (memory and the machine's bookkeeping, the model, the runner's choices,
// schedule, verdicts, flags and check records, saveData). The contexts in
// flight below it are the same Go frames in both runs and it does not
// touch them. So each run saves that data when an interrupt returns
// (takeEvSnap: an event snap), and a later run that replays the
// interrupt's option with every choice inside it shared puts the data
// back instead of running it (restoreEvSnap), sets the DFS past the
// interrupt's choice points and goes on. The in-place checks inside it are
// the previous run's, as on any replayed prefix (reuse.go); the coverage
// it logged is counted again.
//
// The event snaps live along the DFS path like the snaps: before a run
// whose choices before choice point until are the previous run's, those
// of interrupts not over before it are dropped. On with the snaps, not
// with an OnChoice callback (it is called at each event) or a compiled
// target. With the lazy engine they hold its pending regions too; an
// instance in flight below the interrupt is the interrupted context's,
// which the interrupt does not touch, and the sandboxes it ran are records
// taken in order (reuse.go), which the restore sets past as it does the
// checks.

// evSnap is the data of a run right after an interrupt returned, or
// after one of the interrupt's ops (an op snap, below).
type evSnap struct {
	// start is the choice point index of the interrupt's option, end the
	// run's choice point count when it returned (or its op did).
	start, end int
	// op is -1 for the snap of a whole interrupt; i >= 0 for an op snap
	// taken after op i of its program, and c is then the interrupt's
	// context as it was.
	op int
	c  ctx
	// cov is the coverage it logged (its own delivery is logged before).
	cov []uint32
	// log and warn are the callback records and warnings it appended:
	// the machine's state keeps them by length only (fgraph.MachineState),
	// and the words past a run's length may have been written since by a
	// counterfactual re-run of a reader (readers.go), which truncates the
	// warnings after it.
	log  []fgraph.Record
	warn []fgraph.Warning
	snap
}

// evSnaps is a runner's event snaps along the DFS path.
type evSnaps struct {
	list []*evSnap // live entries first, in the order taken
	n    int
}

// skipper is a chooser that can be set past choice points a run does not
// reach because it restored what they led to (dfs).
type skipper interface {
	// skip sets the chooser past the replayed choice points up to (not
	// including) to.
	skip(to int)
}

// evStart begins a run whose choice points before until are the previous
// run's (until is the one next() changed): the event snaps of interrupts
// that do not lie wholly before it go.
func (e *evSnaps) evStart(until int) {
	k := 0
	for i := 0; i < e.n; i++ {
		if e.list[i].end <= until {
			e.list[k], e.list[i] = e.list[i], e.list[k]
			k++
		}
	}
	e.n = k
}

// evOn reports whether the run takes and restores event snaps.
func (r *runner) evOn() bool {
	return r.evs != nil && r.snaps != nil && !r.compiled && r.opt.OnChoice == nil && r.skipper != nil
}

// restoreEvSnap puts back the event snap of the interrupt whose option is
// choice point idx, if the run replays it whole; false if there is none.
func (r *runner) restoreEvSnap(idx int) bool {
	if !r.evOn() {
		return false
	}
	e := r.findEvSnap(idx, false)
	if e == nil {
		return false
	}
	m := r.m
	nlog, nwarn := len(m.Log), len(m.Warnings)
	var mem []fgraph.Word
	if r.hk.evDrop == "memory" {
		mem = append(mem, m.Mem...)
	}
	r.loadData(&e.snap)
	if r.hk.evDrop == "memory" {
		copy(m.Mem, mem)
	}
	if r.hk.evDrop != "pending" {
		r.loadPending(&e.snap)
	}
	if r.hk.evRestores != nil {
		r.hk.evRestores.Add(1)
	}
	r.replayLogged(e, nlog, nwarn)
	return true
}

// evMarks is where the coverage log, the callback records and the
// warnings end now: an interrupt's event and op snaps keep what it logged
// after them.
func (r *runner) evMarks() [3]int {
	n := [3]int{0, len(r.m.Log), len(r.m.Warnings)}
	if r.snaps != nil {
		n[0] = len(r.snaps.cov)
	}
	return n
}

// takeEvSnap saves the run's data right after the interrupt whose option
// was choice point idx returned (from: its evMarks when it started),
// unless the run can make no more choice (no later run replays past it)
// or a reader is running (its walk is on the Go stack).
func (r *runner) takeEvSnap(idx int, from [3]int) {
	if r.evSavable() {
		r.saveEvSnap(idx, -1, from)
	}
}

// evSavable reports whether an event or op snap may be taken now.
func (r *runner) evSavable() bool {
	return r.evOn() && !r.stopped && !r.noChoiceLeft() && r.rd == (readerCall{}) && !r.probe && r.m.CanSave()
}

// saveEvSnap fills the next entry of the list with the run's data: the
// snap after op op (-1: after the whole interrupt) of the interrupt whose
// option was choice point idx, with what it logged since from.
func (r *runner) saveEvSnap(idx, op int, from [3]int) *evSnap {
	p := r.nextEvSnap()
	r.fillEvSnap(p, idx, op, from)
	return p
}

// nextEvSnap is the next entry of the list, now live.
func (r *runner) nextEvSnap() *evSnap {
	e := r.evs
	if e.n == len(e.list) {
		e.list = append(e.list, &evSnap{})
	}
	p := e.list[e.n]
	e.n++
	return p
}

// fillEvSnap is saveEvSnap into p.
func (r *runner) fillEvSnap(p *evSnap, idx, op int, from [3]int) {
	p.start, p.end, p.points, p.op = idx, r.points, r.points, op
	p.cov = append(p.cov[:0], r.snaps.cov[from[0]:]...)
	p.log = append(p.log[:0], r.m.Log[from[1]:]...)
	p.warn = append(p.warn[:0], r.m.Warnings[from[2]:]...)
	r.savePending(&p.snap) // the interrupt may meet pending regions, pay for or end them
	r.saveData(&p.snap)
}

// findEvSnap is the snap of the interrupt whose option is choice point
// idx that a run replaying up to it puts back: the whole interrupt's, or
// with ops, the one after its latest op; nil if there is none.
func (r *runner) findEvSnap(idx int, ops bool) *evSnap {
	var e *evSnap
	for _, x := range r.evs.list[:r.evs.n] {
		if x.start == idx && (x.op >= 0) == ops && (e == nil || x.op > e.op) {
			e = x
		}
	}
	if e != nil && r.points != idx+1 {
		internalf("event snap: restored at choice point %d with %d consumed", idx, r.points)
	}
	return e
}

// replayLogged puts back, after loadData, what the interrupt of snap e had
// logged (the records and warnings after nlog and nwarn, the coverage)
// and sets the DFS past the choice points it made.
func (r *runner) replayLogged(e *evSnap, nlog, nwarn int) {
	m := r.m
	m.Log = append(m.Log[:nlog], e.log...)
	m.Warnings = append(m.Warnings[:nwarn], e.warn...)
	r.skipper.skip(e.end)
	r.snaps.cov = append(r.snaps.cov, e.cov...)
	r.applyCov(e.cov)
}

// Op snaps: the ops of an interrupt in flight skipped on replay.
//
// An event snap serves a run that replays an interrupt whole. A run whose
// changed choice lies inside an interrupt replays it up to there, its
// completed ops too: on std at C=3, 15 % of the steps replayed (19.1 M of
// 129.1 M) were ops of an interrupt still in flight that had ended before
// the changed choice. Between two ops of its program an interrupt has
// nothing of its own on the Go stack but interrupt()'s loop, whose
// locals are set before the first op (the live words it found, its
// context), so each run saves the data there as at an interrupt's return
// (takeOpSnap), with the interrupt's context; a later run that replays
// the interrupt's option with every choice up to the snap shared puts the
// data and the context back when the interrupt starts (restoreOpSnap),
// sets the DFS past those ops' choice points and goes on with the next
// op. They live in the event snaps' list, under the same rules.

// takeOpSnap saves the run's data after op i of the interrupt whose option
// was choice point idx and whose context is c, on the terms of takeEvSnap.
//
// With the state cache the snap is taken by the next op's exec, after the
// lookup between the two ops (betweenOps) missed: when it hits, the run
// stops there and no later run could put the snap back (its changed
// choice is this run's last one or an earlier one, and the snap ends
// after it). On peer-spin K=3, 33,000 of the 44,000 op snaps of
// interrupts at a task's level were taken right before such a hit, at
// 1,900 instructions a snap. The snap is the data as it was before the
// lookup: exec has counted the op and started the context's digest
// afresh, and the lookup moved the clock on; opPend keeps those three as
// they were, and takeOpSnapAt puts them in the snap.
func (r *runner) takeOpSnap(idx, i int, c *ctx, from [3]int) {
	q := opPend{idx: idx, op: i, from: from, nops: c.nops, hist: c.hist, tailN: r.tailN}
	if r.hashing && !r.hk.opSnapEarly {
		r.opPend = opPend{on: !r.stopped, idx: idx, op: i, from: from}
		if r.hk.opSnapVerify && r.opPend.on {
			// The snap as it would be taken here, for takeOpSnapAt to
			// compare with the one it takes.
			r.opEarly.ok = !r.hk.noOpSnaps && r.evSavable()
			if r.opEarly.ok {
				r.fillOpSnap(&r.opEarly.e, q, c)
			}
		}
		return
	}
	r.takeOpSnapAt(q, c)
}

// opPend is an op snap left for the next op's exec to take (takeOpSnap),
// with the context's op count and digest and the clock before that exec.
type opPend struct {
	on      bool
	idx, op int
	from    [3]int
	nops    int
	hist    uint64
	tailN   int64
}

// takeOpSnapAt takes the op snap q, of context c.
func (r *runner) takeOpSnapAt(q opPend, c *ctx) {
	if r.hk.noOpSnaps || !r.evSavable() || !r.opUse.worth(c.level, q.op) && !r.hk.opSnapAlways {
		return
	}
	r.opUse.took(c.level, q.op)
	if r.hk.opTaken != nil {
		r.hk.opTaken.Add(1)
	}
	if len(c.buf) > 0 || len(c.stored) > 0 || c.lz != nil || c.entry != nil || c.pop != nil || c.resv != nil {
		internalf("op snap: %s has stores, an instance or a call in flight after op %d", c.name, q.op)
	}
	p := r.nextEvSnap()
	r.fillOpSnap(p, q, c)
	if r.hk.opSnapVerify && q.on {
		if !r.opEarly.ok {
			internalf("op snap after op %d: taken after the lookup, not before it", q.op)
		}
		// (Empty and nil slices alike: the list's snaps and the one
		// compared reuse their arrays, from different first uses. cmp,
		// which is slower, only where DeepEqual finds a difference
		// emptyAsNil does not clear.)
		all := []cmp.Option{cmp.Exporter(func(reflect.Type) bool { return true }), cmpopts.EquateEmpty()}
		if a, b := emptyAsNil(*p), emptyAsNil(r.opEarly.e); !reflect.DeepEqual(a, b) && !cmp.Equal(*p, r.opEarly.e, all...) {
			internalf("op snap after op %d: the snap taken after the lookup differs from the one before it (-after +before):\n%s", q.op, cmp.Diff(*p, r.opEarly.e, all...))
		}
		r.opEarly.ok = false
	}
}

// emptyAsNil is e with its empty slices nil, for reflect.DeepEqual.
func emptyAsNil(e evSnap) evSnap {
	nilIfEmpty(&e.cov)
	nilIfEmpty(&e.log)
	nilIfEmpty(&e.warn)
	p := &e.snap
	nilIfEmpty(&p.used)
	nilIfEmpty(&p.orders)
	nilIfEmpty(&p.finish)
	nilIfEmpty(&p.events)
	nilIfEmpty(&p.evOrd)
	nilIfEmpty(&p.ords)
	nilIfEmpty(&p.viol)
	nilIfEmpty(&p.known)
	nilIfEmpty(&p.dets)
	nilIfEmpty(&p.clobberedFixes)
	nilIfEmpty(&p.pend)
	return e
}

func nilIfEmpty[T any](s *[]T) {
	if len(*s) == 0 {
		*s = nil
	}
}

// fillOpSnap fills p with the op snap q of context c.
func (r *runner) fillOpSnap(p *evSnap, q opPend, c *ctx) {
	r.fillEvSnap(p, q.idx, q.op, q.from)
	p.c = *c
	p.c.buf, p.c.spare, p.c.rest, p.c.restBuf, p.c.stored = nil, nil, nil, nil, nil
	if r.hk.opSnapDrop != "count" {
		p.c.nops, p.c.hist = q.nops, q.hist
	}
	if !r.hk.opSnapClockAfter {
		p.tailN = q.tailN
	}
}

// restoreOpSnap puts back the latest op snap of the interrupt whose option
// is choice point idx and whose context is c, if the run replays past it,
// and returns the index of the op to run next (0: none put back).
func (r *runner) restoreOpSnap(idx int, c *ctx) int {
	if !r.evOn() || r.hk.noOpSnaps {
		return 0
	}
	e := r.findEvSnap(idx, true)
	if e == nil {
		return 0
	}
	m := r.m
	nlog, nwarn := len(m.Log), len(m.Warnings)
	buf, spare, restBuf, stored := c.buf[:0], c.spare, c.restBuf, c.stored[:0]
	if r.hk.opSnapDrop != "context" {
		*c = e.c
	}
	c.buf, c.spare, c.restBuf, c.rest, c.stored = buf, spare, restBuf, nil, stored
	r.opUse.putBack(c.level, e.op)
	if r.hk.opRestores != nil {
		r.hk.opRestores.Add(1)
	}
	if r.hk.opSnapDrop != "data" {
		r.loadData(&e.snap)
		r.loadPending(&e.snap)
	}
	r.replayLogged(e, nlog, nwarn)
	return e.op + 1
}

// Op snaps no run puts back.
//
// A snap after op i of an interrupt serves a later run whose changed
// choice lies in a later op of that interrupt (or after it, where the
// interrupt left no snap of its own). Where the later ops make no choice,
// no run puts it back: on peer-spin K=3 the 45,000 op snaps of NMIs
// (after the call, before the return: the return, at the bound's last
// interrupt, offered no choice) were never put back, and cost 1.25 % of
// the exploration's instructions; std at C=3 took 3,476 and put back none.
// Whether a later op can make a choice depends on the program, the bound
// and the budget spent, so opSnapUse learns it: a worker stops taking the
// snaps after op i at level l once it has taken opSnapProbe of them and
// put back none. A snap not taken only makes a run replay the op (the
// snaps' tests compare explorations with and without them); the decision
// depends on the order a worker runs its pieces, the counts do not.

// opSnapProbe is how many op snaps a worker takes at a level and op
// before it stops taking those that none of them was put back.
const opSnapProbe = 256

// opSnapUse counts, per interrupt level and op, the op snaps a worker took
// and put back (levels and ops past 7 are always taken).
type opSnapUse struct {
	taken, put [8][8]int32
}

// worth reports whether an op snap after op i at level l may be put back.
func (u *opSnapUse) worth(l, i int) bool {
	if l >= 8 || i >= 8 {
		return true
	}
	return u.put[l][i] > 0 || u.taken[l][i] < opSnapProbe
}

func (u *opSnapUse) took(l, i int) {
	if l < 8 && i < 8 && u.taken[l][i] < opSnapProbe {
		u.taken[l][i]++
	}
}

func (u *opSnapUse) putBack(l, i int) {
	if l < 8 && i < 8 && u.put[l][i] < 1<<30 {
		u.put[l][i]++
	}
}
