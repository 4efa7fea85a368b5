package harness

import (
	"math"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Runs that start at an interrupt's entry.
//
// A run whose changed choice lies inside an interrupt replays the task's
// op up to the yield the interrupt was taken at, because the interrupt
// runs on the task's Go stack and the task goes on after it returns. Yet
// most such runs never go on: on std at C=3, 79 % of the runs change a
// choice inside an interrupt, and 94 % of those stop inside it or at the
// cache's lookup right after it returns (afterEvent); their replay of the
// task's op before the interrupt was 23 M of the 58 M accesses replayed.
// The interrupt needs none of the task's Go stack: what it reads of the
// task (its context, its stores still to commit) is data.
//
// So a run saves its whole state when a task's interrupt begins (an entry
// snap: what saveData saves, with the task contexts whole, their pending
// stores included), and a later run whose changed choice lies inside that
// interrupt restores it and calls interrupt() from a fresh Go stack
// (startInIRQ), the DFS set past the choices before it. If the run stops
// before the task has to go on, that is the run. If it has to go on (the
// lookup after the interrupt missed), it catches up: it saves its whole
// state again, restores the task-level snap it would have resumed from,
// replays the task's op to the interrupt's yield, and there puts the saved
// state back (catchUp, in choose) over the Go stack the replay rebuilt:
// the frames below that yield computed what they hold from the same data
// in both runs, and the interrupt touches none of it.
//
// On with the cache (without it there is no lookup after an interrupt and
// every run would catch up) and the event snaps (evOn), and only for an
// interrupt of a task with no nested call in flight. With lazy orders the
// snap keeps the pending regions (savePending) and the task's instance of
// one, if the interrupt came inside it (instSnap): the instance's record is
// data the interrupt reads (its state's encoding does) but does not change,
// so a start fills the pool's record again, and a catch-up checks that its
// replay rebuilt the same one under the commit loop.
// TestIRQStartSound and TestIRQStartLazySound compare explorations with
// it and without it; TestIRQStartCaught and TestIRQStartLazyCaught show
// that a catch-up that leaves the data as the replay made it, and starts
// that leave out the pending regions or the task's instance, are caught.

// fullSnap is the whole state of a run at a task's yield where an
// interrupt begins or has just returned: all but the Go stack.
type fullSnap struct {
	snap
	// The task contexts' stores, which a snap between ops has none of.
	bufs, rests [][]pending
	stores      [][]fgraph.Addr
	// The task contexts' pending instances (lazy orders), if any.
	insts   []instSnap
	cov     []uint32
	log     []fgraph.Record
	warn    []fgraph.Warning
	quiet   bool // runner.quietStop
	digest  bool
	skipped int64
}

// entrySnap is the state of a run as the interrupt whose option is choice
// point idx began.
type entrySnap struct {
	fullSnap
	idx int
	// end is the choice point count when the interrupt last returned
	// (math.MaxInt while it has not: the last run to run it stopped in it).
	end  int
	id   int
	kind EventKind
	at   Pos
}

// entrySnaps is a runner's entry snaps along the DFS path.
type entrySnaps struct {
	list []*entrySnap // live entries first
	n    int
	// catch is the state a run catching up puts back at the yield of
	// choice point catchAt (catchUp).
	catch   *fullSnap
	catchAt int
	spare   fullSnap
	noData  snap // irqStartDrop's
	// cov is the run's coverage while a catch-up replays (which counts
	// none: the replayed part is counted).
	cov *Coverage
}

// irqStartOn reports whether this run may take and use entry snaps.
func (r *runner) irqStartOn() bool {
	return r.ent != nil && r.evOn() && r.opt.Observe == nil && r.fdfs != nil && r.skipper == skipper(r.fdfs) && r.fastRep
}

// entryStart drops the entry snaps a run whose choices before until are
// the previous run's does not share (the interrupt's option at or after
// until).
func (e *entrySnaps) entryStart(until int) {
	k := 0
	for i := 0; i < e.n; i++ {
		if e.list[i].idx < until {
			e.list[k], e.list[i] = e.list[i], e.list[k]
			k++
		}
	}
	e.n = k
	e.catch = nil
}

// find is the entry snap of the interrupt whose option is choice point
// idx, or nil.
func (e *entrySnaps) find(idx int) *entrySnap {
	for _, x := range e.list[:e.n] {
		if x.idx == idx {
			return x
		}
	}
	return nil
}

// instSnap is a task context's instance of a pending region (lazy.go), as
// an entry snap keeps it. The record lives in the runner's pool
// (lzFree) and later runs fill it again, so its slices are copied; ords
// are the shape's, read-only, and kept as they are.
type instSnap struct {
	has   bool
	inst  lzInst // the scalars and the read-only ords; the copies below replace its other slices
	buf   []pending
	keys  []lzKey
	vals  []fgraph.Word
	occ   []int32
	fixes []wordFix
	clean []uint64
}

// save copies lz (nil: none) into s.
func (s *instSnap) save(lz *lzInst) {
	s.has = lz != nil
	if lz == nil {
		return
	}
	s.inst = *lz
	s.buf = append(s.buf[:0], lz.buf...)
	s.keys = append(s.keys[:0], lz.keys...)
	s.vals = append(s.vals[:0], lz.an.vals...)
	s.occ = append(s.occ[:0], lz.an.occ...)
	s.fixes = append(s.fixes[:0], lz.an.fixes...)
	s.clean = append(s.clean[:0], lz.cleanList...)
}

// load puts the instance s saved into the pool's record lz, on a fresh Go
// stack: no commit loop holds lz, and its slices become lz's own copies
// (buf the snap's, which nothing writes through an instance).
func (s *instSnap) load(lz *lzInst) {
	kown, vals, occ, fixes, clean := lz.kown, lz.an.vals, lz.an.occ, lz.an.fixes, lz.cleanList
	*lz = s.inst
	lz.buf = s.buf[:len(s.buf):len(s.buf)]
	lz.kown = append(kown[:0], s.keys...)
	lz.keys = lz.kown
	lz.an.vals = append(vals[:0], s.vals...)
	lz.an.occ = append(occ[:0], s.occ...)
	lz.an.fixes = append(fixes[:0], s.fixes...)
	lz.cleanList = append(clean[:0], s.clean...)
}

// same reports whether the live instance lz, which a catch-up's replay
// rebuilt under its commit loop, is the one s saved after the interrupt:
// an interrupt changes no instance of its task (its own are records of
// their own, and what it narrows is the regions' live options, data).
func (s *instSnap) same(lz *lzInst) bool {
	if !s.has || lz == nil {
		return s.has == (lz != nil)
	}
	x := &s.inst
	return lz.region == x.region && lz.rep == x.rep && lz.k == x.k && lz.anchorK == x.anchorK && lz.evAt == x.evAt &&
		lz.klive == x.klive && lz.kn == x.kn && len(lz.buf) == len(s.buf) && len(lz.keys) == len(s.keys)
}

// entryAt is called as the interrupt whose option is choice point idx
// begins on task context parent: it takes the entry snap if there is
// none, and marks the interrupt as not returned.
func (r *runner) entryAt(parent *ctx, id int, k EventKind, at Pos, idx int) {
	if parent.level != 0 || len(r.ctxs) != 1 || !r.irqStartOn() {
		return
	}
	e := r.ent
	if x := e.find(idx); x != nil {
		x.end = math.MaxInt
		return
	}
	if !r.evSavable() {
		return
	}
	if e.n == len(e.list) {
		e.list = append(e.list, &entrySnap{})
	}
	x := e.list[e.n]
	e.n++
	x.idx, x.end, x.id, x.kind, x.at = idx, math.MaxInt, id, k, at
	r.saveFull(&x.fullSnap)
}

// entryReturned is called as a task's interrupt whose option is choice
// point idx returns.
func (r *runner) entryReturned(idx int) {
	if r.ent == nil {
		return
	}
	if x := r.ent.find(idx); x != nil {
		x.end = r.points
	}
}

// irqStartFor is the entry snap the run about to start begins at: the
// interrupt's option is before the changed choice until, the interrupt
// had not returned there in the previous run, and the snap the run would
// resume from is before it (the catch-up's start).
func (r *runner) irqStartFor(until int) *entrySnap {
	if r.ent == nil || r.hk.noIRQStart || r.snaps == nil || r.snaps.from == nil || r.tails == nil {
		return nil // (without the cache every run goes on after the interrupt)
	}
	var best *entrySnap
	for _, x := range r.ent.list[:r.ent.n] {
		if x.idx < until && until < x.end && r.snaps.from.points <= x.idx && (best == nil || x.idx > best.idx) {
			best = x
		}
	}
	return best
}

// startInIRQ is execute for a run that starts at entry snap e: the
// interrupt runs from a fresh Go stack; if the run is to go on after it,
// it catches up.
func (r *runner) startInIRQ(e *entrySnap) {
	if r.hk.irqStarts != nil {
		r.hk.irqStarts.Add(1)
	}
	r.loadFull(&e.fullSnap, false)
	c := r.taskCt[e.cur]
	r.ctxs = append(r.ctxs[:0], c)
	r.interrupt(c, e.id, e.kind, e.at, e.idx)
	r.afterEvent()
	if r.stopped {
		return
	}
	// The task goes on: rebuild its Go stack (catchUp).
	if r.hk.catchUps != nil {
		r.hk.catchUps.Add(1)
	}
	ent := r.ent
	f := &ent.spare
	r.saveFull(f)
	ent.catch, ent.catchAt = f, e.idx
	ent.cov, r.cov = r.cov, nil // the replayed part's coverage is counted already
	from := r.snaps.from
	chg, chgExec, chgRem := r.chg, r.chgExec, r.chgRem
	r.reset() // what the run chose since (the region orders among them) goes
	r.chg, r.chgExec, r.chgRem = chg, chgExec, chgRem
	r.restoreSnap(from)
	r.fdfs.rewind(from.points)
	r.digest = false
	r.runTasks(from.cur)
	r.cov = ent.cov
	if ent.catch != nil {
		internalf("interrupt start: the catch-up never reached choice point %d", e.idx)
	}
	r.quiescent()
}

// catchUp is choice point idx's option taken on a catch-up's replay: at
// the interrupt the run started in, the state it had after it returned is
// put back, and the run goes on from there.
func (r *runner) catchUp(idx int) bool {
	e := r.ent
	if e == nil || e.catch == nil || idx != e.catchAt {
		return false
	}
	f := e.catch
	e.catch = nil
	r.loadFull(f, true)
	r.cov = e.cov
	return true
}

// saveFull saves the run's whole state into f.
func (r *runner) saveFull(f *fullSnap) {
	p := &f.snap
	p.points, p.cur = r.points, r.m.Current
	p.tasks = p.tasks[:0]
	f.bufs, f.rests, f.stores, f.insts = f.bufs[:0], f.rests[:0], f.stores[:0], f.insts[:0]
	n := 0
	for i, c := range r.taskCt {
		p.tasks = append(p.tasks, *c)
		if i == len(f.bufs) {
			f.bufs, f.rests, f.stores = append(f.bufs, nil), append(f.rests, nil), append(f.stores, nil)
		}
		if i == cap(f.insts) {
			f.insts = append(f.insts, instSnap{})
		}
		f.insts = f.insts[:i+1]
		f.bufs[i] = append(f.bufs[i][:0], c.buf...)
		f.rests[i] = append(f.rests[i][:0], c.rest...)
		f.stores[i] = append(f.stores[i][:0], c.stored...)
		f.insts[i].save(c.lz)
		if c.lz != nil {
			n++
		}
	}
	if n != r.lzN {
		// Taken at a task's yield: every context inside an instance is a
		// task's.
		internalf("interrupt start: %d contexts inside a pending instance, %d of them tasks", r.lzN, n)
	}
	p.pc = append(p.pc[:0], r.pc...)
	r.saveData(p)
	r.savePending(p)
	f.cov = append(f.cov[:0], r.snaps.cov...)
	f.log = append(f.log[:0], r.m.Log...)
	f.warn = append(f.warn[:0], r.m.Warnings...)
	f.quiet, f.digest, f.skipped = r.quietStop, r.digest, r.skipped
}

// loadFull puts back the state f saved. At a yield the replay reached
// (live), the task contexts keep their slices, which the Go stack's
// frames share, and must hold the stores f saved; on a fresh Go stack
// they take f's.
func (r *runner) loadFull(f *fullSnap, live bool) {
	p := &f.snap
	for i, c := range r.taskCt {
		buf, spare, rest, restBuf, stored := c.buf, c.spare, c.rest, c.restBuf, c.stored
		if live {
			if len(buf) != len(f.bufs[i]) || len(rest) != len(f.rests[i]) || len(stored) != len(f.stores[i]) {
				internalf("interrupt start: %s has %d, %d, %d stores after the catch-up, %d, %d, %d before", c.name, len(buf), len(rest), len(stored), len(f.bufs[i]), len(f.rests[i]), len(f.stores[i]))
			}

			if !f.insts[i].same(c.lz) {
				internalf("interrupt start: %s's pending instance after the catch-up is not the one the interrupt left", c.name)
			}
			lz := c.lz
			*c = p.tasks[i]
			c.buf, c.spare, c.rest, c.restBuf, c.stored = buf, spare, rest, restBuf, stored
			c.lz = lz // the record the commit loop on the Go stack holds
			continue
		}
		*c = p.tasks[i]
		c.buf = append(buf[:0], f.bufs[i]...)
		c.stored = append(stored[:0], f.stores[i]...)
		c.spare, c.rest, c.restBuf = spare, nil, restBuf
		if len(f.rests[i]) > 0 {
			// The rest of a commit the interrupt was taken in: it takes
			// the array of rests (the commit's own, on the Go stack,
			// would). With none, the array stays the context's for its
			// next commit, which would make a new one.
			c.rest, c.restBuf = append(restBuf[:0], f.rests[i]...), nil
		}
		if f.insts[i].has {
			// The record the run that saved it used (the pool's, in the
			// order the instances began), filled again.
			if r.lzN >= len(r.lzPool) || c.lz != r.lzPool[r.lzN] {
				internalf("interrupt start: %s's pending instance is not the pool's record %d", c.name, r.lzN)
			}
			if r.hk.irqStartDrop != "instance" {
				f.insts[i].load(c.lz)
			}
			r.lzN++
		} else if c.lz != nil {
			internalf("interrupt start: %s holds a pending instance the snap has none of", c.name)
		}
	}
	copy(r.pc, p.pc)
	if live && r.hk.irqStartDrop == "data" {
		p = &r.ent.noData
		r.saveData(p) // the data as the replay left it
	}
	r.loadData(p)
	if r.hk.irqStartDrop != "pending" {
		r.loadPending(p)
	}
	m := r.m
	m.Log = append(m.Log[:0], f.log...)
	m.Warnings = append(m.Warnings[:0], f.warn...)
	s := r.snaps
	s.cov = append(s.cov[:0], f.cov...)
	if !live {
		r.applyCov(s.cov)
	}
	r.quietStop, r.digest = f.quiet, f.digest
	r.skipped = f.skipped
	r.setSteps(p.steps)
	if !live {
		r.skipped = p.steps // the accesses before the interrupt were not executed (changes.go)
	}
	// The DFS goes on to where the run's choice points are (it is before
	// them: at the snap the explorer set it to, or at the interrupt's
	// option on a catch-up).
	if r.fdfs.skip(p.points); r.fdfs.pos != p.points {
		internalf("interrupt start: the DFS is at choice point %d, the state at %d", r.fdfs.pos, p.points)
	}
}
