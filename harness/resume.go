package harness

import (
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/model"
)

// Prefix sharing: a run resumes from the last quiescent point it shares with
// an earlier run instead of running its prefix again.
//
// The DFS re-runs the prefix of the previous run: every choice before the
// one next() changed is replayed (reuse.go). A context's state lives on the
// Go stack, so a run cannot resume at an arbitrary choice point; but at a
// task-level quiescent point (between two ops of a task program, after the
// deferred halves of remote actions ran) no context is in flight: the
// interrupts have returned, the store buffers are empty, and what the rest
// of the run depends on is data: memory and the machine's bookkeeping
// (fgraph.MachineState), the model, the task contexts, the task program
// counters, the choices spent and the region orders chosen, the schedule,
// violations and known findings so far, the oracles' positions and flags.
// A snap holds all of it; a run whose first `points` choices are those of
// the run that took the snap restores it, sets the DFS past those choices,
// and goes on with the task programs from there. The port stays a plain
// mirror of fgraph.c: nothing of it is resumed, only the harness's data.
//
// The snaps form a stack along the current DFS path, one per number of
// choices consumed (the deepest quiescent point with that number, the one
// that got furthest). Before a run whose shared prefix ends before choice
// point `until`, the snaps taken after more than `until` choices are
// dropped; the top one is restored. The run then takes a snap at each
// quiescent point while it can still make a choice.
//
// A compiled target that encodes its state (StateTarget) is snapped too:
// its core's statics are data between entry points (fgraph.SnapCore), and
// no snap is taken while its remote CPU's thread is blocked in the
// compiled code (Machine.CanSave). An OnChoice callback (the compiled
// target's crash record) is called with the snap's schedule when a run
// resumes. An observer is kept beside the run if it is a SnapObserver
// (the differential's recorder): its record is saved with the snap and
// put back on resume. Off with a trace or another observer (their output
// comes from the code running) and for a target that is no StateTarget.
// With the state cache the contexts' input digests are part of the task
// contexts saved, so a resumed run looks up the same states. The exact counts,
// verdicts, coverage and bytes of a schedule are the same as without it
// (std_test.go's pins; resume_test.go compares std, peer-spin and every
// mutant with it on and off; cache_test.go the cache with it).

// snap is the state of a run at a task-level quiescent point.
type snap struct {
	points int // choice points consumed
	cur    int // the task on the CPU
	mach   fgraph.MachineState
	model  *model.State
	tasks  []ctx // the task contexts (store buffers empty)
	pc     []int
	used   []bool // remoteUsed
	orders []orderRec
	finish []tail
	obs    any // a SnapObserver's record (RunOptions.Observe)

	pending             [model.Slots]int
	kUsed, rUsed, eUsed int
	rmult               int64
	nextID              int
	events              []Event
	evOrd               []int32
	ords                []Order
	viol, known         []Violation
	dets                []det
	tailN               int64
	aliasDep            bool
	logSeen, warnSeen   int
	ver, checked        uint64
	inReserveWindow     bool
	staleRetp           bool
	clobbered           bool
	clobberedFixes      []wordFix
	clobberSpread       bool
	directRace          bool
	steps               int64
	nchoose             int32 // yield points reached (fastreplay.go)
	nchecks             int   // reuse records
	nux                 int   // reuse's unwind evaluations (unwindext.go)
	nsand               int   // reuse's sandbox records
	ncov                int   // coverage log
	// The lazy engine's pending regions (lazy.go).
	pend []pendRec
}

// pendRec is a pending region of the lazy engine, saved.
type pendRec struct {
	region fgraph.Site
	live   uint64
	paid   bool
	opt    *lzOpts
}

// orderRec is one entry of the chosen region orders (runner.orders).
type orderRec struct {
	region      fgraph.Site
	sites, drop []fgraph.Site
}

// snaps is a runner's stack of snaps along the DFS path, and the one the
// next run resumes from.
type snaps struct {
	stack []*snap
	n     int   // live entries of stack (the rest is storage to reuse)
	from  *snap // the snap the current run resumed from, or nil
	// cov logs the run's coverage events (covEvent), so that a run that
	// resumes counts those of the prefix it skips.
	cov []uint32
}

// shareRuns turns on what lets a runner's consecutive runs share their
// prefix (Explore's pieces, Session): check reuse where the code under
// test is deterministic (the port, a StateTarget), and snaps where opt
// lets a run skip its prefix (no trace, no observer that is no
// SnapObserver, no wrapped chooser, not the in-order port).
func (r *runner) shareRuns(opt RunOptions) {
	r.hk = opt.testHooks()
	r.rmemo.blindCurr = r.hk.readerMemoDrop == "curr"
	if r.sc.Target != nil && !encodes(r.sc.Target) {
		return
	}
	r.reuse = &reuse{}
	if !opt.Trace && snapObserver(opt.Observe) && opt.wrap == nil && !opt.InOrder && !opt.noResume {
		r.snaps = &snaps{}
		if !r.hk.noEvSnaps {
			r.evs = &evSnaps{}
			r.ent = &entrySnaps{}
		}
	}
}

// snapObserver reports whether o lets runs resume from snaps: none, or one
// that saves and restores its record (SnapObserver).
func snapObserver(o Observer) bool {
	if o == nil {
		return true
	}
	_, ok := o.(SnapObserver)
	return ok
}

// startShared begins a run whose choices before choice point until are
// the previous run's (-1: none shared): it reuses the checks of that
// prefix and returns the snap it resumes from (nil: from the start).
func (r *runner) startShared(until int) *snap {
	if r.reuse == nil {
		return nil
	}
	r.reuse.startRun(until, r.res)
	if r.snaps == nil {
		return nil
	}
	r.snaps.startRun(until)
	if r.evs != nil {
		r.evs.evStart(until)
	}
	if r.ent != nil {
		r.ent.entryStart(until)
	}
	return r.snaps.from
}

// startRun drops the snaps that a run whose choices before choice point
// until are shared does not share, and picks the deepest one left.
func (s *snaps) startRun(until int) {
	for s.n > 0 && s.stack[s.n-1].points > until {
		s.n--
	}
	s.from = nil
	if s.n > 0 {
		s.from = s.stack[s.n-1]
	}
}

// Coverage events, logged while snaps are on.
const (
	covHit    = 2 << 30
	covLine   = 1 << 30 // a compiled target's line: the rest is the line
	covCommit = 0
	covKind   = 3 << 30
)

// covHitAt counts an interrupt delivered at s (coverage), logged.
func (r *runner) covHitAt(s fgraph.Site, level int) {
	r.logCov(covHit | uint32(s)<<8 | uint32(level))
	if r.cov != nil {
		r.cov.hit(s, level, 1)
	}
}

// covLineAt counts an interrupt delivered right after the compiled
// target's line (coverage), logged.
func (r *runner) covLineAt(line int) {
	r.logCov(covLine | uint32(line))
	if r.cov != nil {
		r.cov.hitLine(line, 1)
	}
}

// covCommitAt counts a commit at s (coverage), logged.
func (r *runner) covCommitAt(s fgraph.Site) {
	r.logCov(covCommit | uint32(s)<<8)
	if r.cov != nil {
		r.cov.commit(s, 1)
	}
}

// logCov logs a coverage event the run counts: for the snaps (a resumed
// run counts its prefix's again, applyCov) and, when the run may be cut
// short (RunOptions.stop), for takeBackCov: a halted run is not counted.
// (A copy of the whole table before every run did the same at 1.3 % of
// std C=2's instructions.)
func (r *runner) logCov(e uint32) {
	if r.snaps != nil {
		r.snaps.cov = append(r.snaps.cov, e)
	}
	if r.cov != nil && r.opt.stop != nil {
		r.covAdded = append(r.covAdded, e)
	}
}

// takeBackCov takes the counts of the run, which Stop cut short, back out
// of cov.
func (r *runner) takeBackCov(cov *Coverage) {
	for _, e := range r.covAdded {
		cov.addEvent(e, -1)
	}
	r.covAdded = r.covAdded[:0]
}

// takeSnap saves the state at a task-level quiescent point of task cur,
// unless no choice can follow (the snap would serve no later run).
func (r *runner) takeSnap(cur int) {
	s := r.snaps
	b := &r.sc.Bound
	if r.stopped || b.spent(r.kUsed, r.rUsed, r.eUsed) && !r.lzSplittable() || !r.m.CanSave() {
		return
	}
	var p *snap
	switch {
	case s.n > 0 && s.stack[s.n-1].points == r.points:
		p = s.stack[s.n-1] // the same choices, further on
	case s.n < len(s.stack):
		p = s.stack[s.n]
		s.n++
	default:
		p = &snap{}
		s.stack = append(s.stack, p)
		s.n++
	}
	p.points, p.cur = r.points, cur
	p.tasks = p.tasks[:0]
	for _, c := range r.taskCt {
		if len(c.stored) > 0 {
			// A snap is taken between ops, and an op ends at a region
			// boundary: the copy below may share c.stored's array only
			// because it is empty (restoreSnap reuses c's array).
			internalf("snap: %s has %d stores since its last region boundary", c.name, len(c.stored))
		}
		p.tasks = append(p.tasks, *c)
	}
	p.pc = append(p.pc[:0], r.pc...)
	r.saveData(p)
	if r.lzN > 0 {
		internalf("snap: taken inside an instance of a pending region")
	}
	r.savePending(p)
	p.ncov = len(s.cov)
}

// savePending saves the lazy engine's pending regions into p (takeSnap,
// takeEvSnap).
func (r *runner) savePending(p *snap) {
	p.pend = p.pend[:0]
	for _, reg := range r.lzList {
		p.pend = append(p.pend, pendRec{region: reg, live: r.lzLive[reg], paid: r.lzPaid[reg], opt: r.lzOpt[reg]})
	}
}

// loadPending makes the pending regions p saved the run's, and no other.
func (r *runner) loadPending(p *snap) {
	for _, reg := range r.lzList {
		r.lzLive[reg], r.lzOpt[reg], r.lzPaid[reg] = 0, nil, false
	}
	r.lzList = r.lzList[:0]
	for _, x := range p.pend {
		r.lzLive[x.region], r.lzPaid[x.region], r.lzOpt[x.region] = x.live, x.paid, x.opt
		r.lzList = append(r.lzList, x.region)
	}
}

// saveData saves into p the run's data but its task contexts and
// programs, the lazy engine's regions and the coverage log: what an
// interrupt can change as well (takeSnap, takeEvSnap).
func (r *runner) saveData(p *snap) {
	r.m.SaveState(&p.mach)
	p.model = r.model.CopyTo(p.model)
	p.used = append(p.used[:0], r.remoteUsed...)
	p.orders = p.orders[:0]
	for _, reg := range r.orders.list {
		p.orders = append(p.orders, orderRec{region: reg, sites: r.orders.sites[reg], drop: r.orders.drops[reg]})
	}
	p.finish = append(p.finish[:0], r.finish...)
	if so, ok := r.opt.Observe.(SnapObserver); ok {
		p.obs = so.Save()
	}
	p.pending = r.pending
	p.kUsed, p.rUsed, p.eUsed, p.nextID = r.kUsed, r.rUsed, r.eUsed, r.nextID
	p.rmult = r.rmult
	p.events = append(p.events[:0], r.sched.Events...)
	p.evOrd = append(p.evOrd[:0], r.evOrd...)
	p.ords = append(p.ords[:0], r.sched.Orders...)
	p.viol = append(p.viol[:0], r.res.Violations...)
	p.known = append(p.known[:0], r.res.Known...)
	p.dets, p.tailN = append(p.dets[:0], r.res.dets...), r.tailN
	p.aliasDep = r.aliasDep
	p.logSeen, p.warnSeen = r.logSeen, r.warnSeen
	p.ver, p.checked = r.ver, r.checked
	p.inReserveWindow, p.staleRetp, p.clobbered, p.directRace = r.inReserveWindow, r.staleRetp, r.clobbered, r.directRace
	p.clobberedFixes, p.clobberSpread = append(p.clobberedFixes[:0], r.clobberedFixes...), r.clobberSpread
	if r.rd != (readerCall{}) || r.probe {
		internalf("resume: a snap taken while a reader runs")
	}
	p.steps, p.nchoose = r.steps, r.nchoose
	p.nchecks, p.nsand, p.nux = -1, -1, -1
	if r.reuse != nil {
		p.nchecks, p.nsand, p.nux = r.reuse.n, r.reuse.sandNext, r.reuse.uxN
	}
}

// restoreSnap returns a reset runner to the state p saved.
func (r *runner) restoreSnap(p *snap) {
	for i, c := range r.taskCt {
		buf, spare, restBuf, stored := c.buf[:0], c.spare, c.restBuf, c.stored[:0]
		*c = p.tasks[i]
		c.buf, c.spare, c.restBuf, c.rest = buf, spare, restBuf, nil
		c.entry, c.pop, c.resv = nil, nil, nil
		c.stored = append(stored, p.tasks[i].stored...) // empty (takeSnap); c's own array
	}
	copy(r.pc, p.pc)
	r.loadData(p)
	if r.hk.snapDrop != "pending" {
		r.loadPending(p)
	}
	s := r.snaps
	s.cov = s.cov[:p.ncov]
	r.applyCov(s.cov)
}

// applyCov counts the coverage events es (logged by covHitAt, covLineAt
// and covCommitAt) into the run's coverage.
func (r *runner) applyCov(es []uint32) {
	if r.cov == nil {
		return
	}
	for _, e := range es {
		r.cov.addEvent(e, 1)
	}
	if r.opt.stop != nil {
		r.covAdded = append(r.covAdded, es...)
	}
}

// loadData puts back what saveData saved (restoreSnap, restoreEvSnap).
func (r *runner) loadData(p *snap) {
	r.rmemo.ok = false // memory and the real stacks go back (readers.go)
	r.m.RestoreState(&p.mach)
	if r.hk.snapDrop != "model" {
		r.model = p.model.CopyTo(r.model)
	}
	copy(r.remoteUsed, p.used)
	for _, o := range p.orders {
		if r.hk.snapDrop == "orders" {
			break
		}
		r.orders.set(o.region, o.sites, o.drop)
	}
	r.finish = append(r.finish[:0], p.finish...)
	if so, ok := r.opt.Observe.(SnapObserver); ok {
		so.Restore(p.obs)
	}
	r.pending = p.pending
	r.kUsed, r.rUsed, r.eUsed, r.nextID = p.kUsed, p.rUsed, p.eUsed, p.nextID
	r.rmult = p.rmult
	r.points = p.points
	// The run's own slices (its schedule is handed out with its result:
	// recycled ones when the explorer handed one back, recycle.go), with
	// room for the run's own choices. Those the run held already (an
	// event snap restored after a snap) go back to the pool first: a new
	// pair at every restore but the first was 23 MB of garbage on
	// peer-spin K=3.
	if r.opt.OnChoice == nil { // a callback that saw them may keep them
		r.pool.giveBack(r.sched.Events, r.sched.Orders)
	}
	r.sched.Events, r.sched.Orders = nil, nil
	if len(p.events) > 0 {
		r.sched.Events = append(r.pool.events(len(p.events)+r.sc.Bound.K+r.sc.Bound.E), p.events...)
	}
	if len(p.ords) > 0 {
		r.sched.Orders = append(r.pool.orders(len(p.ords)+r.sc.Bound.R), p.ords...)
	}
	r.evOrd = append(r.evOrd[:0], p.evOrd...)
	r.res.Violations = append(r.res.Violations[:0], p.viol...)
	r.res.Known = append(r.res.Known[:0], p.known...)
	r.res.dets, r.tailN = append(r.res.dets[:0], p.dets...), p.tailN
	r.aliasDep = p.aliasDep
	r.logSeen, r.warnSeen = p.logSeen, p.warnSeen
	r.ver, r.checked = p.ver, p.checked
	r.uxVer = 0 // its evaluation was of other memory (unwindext.go)
	r.inReserveWindow, r.staleRetp, r.clobbered, r.directRace = p.inReserveWindow, p.staleRetp, p.clobbered, p.directRace
	r.clobberedFixes, r.clobberSpread = append(r.clobberedFixes[:0], p.clobberedFixes...), p.clobberSpread
	r.skipped += p.steps - r.steps // accesses the run did not execute (changes.go)
	r.nchoose = p.nchoose
	r.setSteps(p.steps)
	if r.reuse != nil {
		u := r.reuse
		if p.nchecks < 0 || p.nchecks > len(u.recs) {
			internalf("resume: a snap with %d check records, %d in the previous run", p.nchecks, len(u.recs))
		}
		u.n = p.nchecks
		if p.nsand < 0 || p.nsand > len(u.sand) {
			internalf("resume: a snap after %d sandboxes, %d kept of the shared prefix", p.nsand, len(u.sand))
		}
		u.sandNext = p.nsand
		if p.nux < 0 || p.nux > len(u.ux) {
			internalf("resume: a snap after %d unwind evaluations, %d in the previous run", p.nux, len(u.ux))
		}
		u.uxN = p.nux
	}
}
