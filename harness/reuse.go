package harness

import (
	"math/bits"
	"slices"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Checks carried over from the previous run (with the state cache on).
//
// The DFS re-runs the prefix its previous run ran: every choice before the
// one next() changed is replayed, so until that choice point the run is the
// previous run, step for step, and so is every in-place oracle check
// (checkInPlace) in it. Such a check is not run again: its effects as the
// previous run recorded them are applied instead, in the same order: the
// violations and known findings it reported (the known-finding flags of the
// prefix carried over, without which a later report would be lost or
// doubled), the log and warning positions it left, whether it stopped the
// run. The soundness tests of the cache (cache_test.go) hold the result to
// the plain explorer's, which runs every check.

// checkRec is what one in-place check did: it reported the violations
// v0..v1-1 and known findings k0..k1-1, and logged the detections
// d0..d1-1 (indices into reuse's copies of them: viol, known, dets). No
// pointers: a record is appended at every check.
type checkRec struct {
	v0, v1, k0, k1    int32
	d0, d1            int32
	logSeen, warnSeen int32
	stopped           bool
}

// reuse is the runner's record of its checks: recs[:n] are this run's,
// and while the run is still the previous run, recs[n:] are the previous
// run's, which the next checks replay. One list serves both (a replayed
// check moves n on, a check run anew truncates the list after it): the
// copy of every replayed record from one run's list into the next's was
// 3 % of std C=3. until is the last choice point index whose prefix is
// shared with the previous run (-1: none).
type reuse struct {
	recs  []checkRec
	n     int
	until int
	// viol, known and dets are the violations, known findings and
	// detections the recorded checks added, which the records index
	// (checkRec's ranges), in record order. They are copies: the run's own
	// lists do not keep them, since a lazy region narrowed to another
	// class puts its lists back to the anchor (lzRestore), while a later
	// run replays the records of the checks before the narrowing. (The
	// records indexed the previous run's result until 7 Dec 2026: std at
	// C=4 with an OnRun callback, whose results are not recycled, sliced
	// past its detections' capacity; recycled, it read stale ones.)
	viol, known []Violation
	dets        []det
	// The lazy engine's sandboxes (lazy.go): each one's live options and
	// keys, in run order. Unlike the checks' records they are kept across
	// runs: startRun keeps those made before the choice point next()
	// changed, which the run then takes in order (sandNext) instead of
	// running them, and the run appends its own after them.
	sand     []sandRec
	keys     []lzKey
	sandNext int
	// ux is what the remote unwind's evaluations in place found
	// (unwindClean), in run order, like recs: ux[:uxN] this run's, ux[uxN:]
	// the previous run's while the run is still the previous run.
	ux  []bool
	uxN int
}

// sandRec is what one sandbox found: for each option of live, n keys,
// from keys[off] on, and the committed sets below 64 whose in-place check
// it found clean; points is the run's choice points when it ran.
type sandRec struct {
	live, clean    uint64
	off, n, points int32
}

// keysEnd is where the keys of the first n sandbox records end.
func (u *reuse) keysEnd(n int) int {
	if n == 0 {
		return 0
	}
	s := u.sand[n-1]
	return int(s.off) + int(s.n)*bits.OnesCount64(s.live)
}

// startRun begins a run whose first until+1 choice points (indices 0..until)
// replay the previous run's choices.
// prev is the previous run's result.
func (u *reuse) startRun(until int, prev *Result) {
	u.n, u.uxN = 0, 0
	u.until = until
	if prev == nil {
		u.until = -1
	}
	n := len(u.sand)
	for n > 0 && int(u.sand[n-1].points) > u.until {
		n--
	}
	u.sand, u.keys, u.sandNext = u.sand[:n], u.keys[:u.keysEnd(n)], 0
}

// checkInPlaceOnce runs the in-place check, or applies the previous run's
// record of it while the run is still the previous run.
func (r *runner) checkInPlaceOnce(c *ctx, s fgraph.Site) {
	if r.replayCheck() {
		return
	}
	n := r.marks()
	r.checkInPlace(c, s)
	r.recordCheck(n)
}

// checkModelOnce is checkInPlaceOnce for oracle 3 at a quiescent point.
func (r *runner) checkModelOnce() {
	if r.reuse == nil {
		r.checkModel()
		return
	}
	if r.replayCheck() {
		return
	}
	n := r.marks()
	r.checkModel()
	r.recordCheck(n)
}

// checkTransparentOnce is checkInPlaceOnce for oracle 5 after an interrupt.
func (r *runner) checkTransparentOnce(c *ctx, before []fgraph.Word) {
	if r.reuse == nil {
		r.checkTransparent(c, before)
		return
	}
	if r.replayCheck() {
		return
	}
	n := r.marks()
	r.checkTransparent(c, before)
	r.recordCheck(n)
}

// replayCheck applies the previous run's record of the next check, if the
// run is still the previous run; it reports whether it did. The checks of a
// run happen in the same order in every run that shares its prefix (the
// run is deterministic), so the k-th check of this run is the k-th of the
// previous run while the choice points so far are shared.
func (r *runner) replayCheck() bool {
	u := r.reuse
	k := u.n
	if r.tr != nil || r.points > u.until || k >= len(u.recs) {
		return false
	}
	rec := &u.recs[k]
	u.n++
	if rec.v1 > rec.v0 {
		r.res.Violations = append(r.res.Violations, u.viol[rec.v0:rec.v1]...)
	}
	if rec.k1 > rec.k0 {
		r.res.Known = append(r.res.Known, u.known[rec.k0:rec.k1]...)
	}
	if rec.d1 > rec.d0 {
		r.res.dets = append(r.res.dets, u.dets[rec.d0:rec.d1]...)
	}
	r.logSeen, r.warnSeen = int(rec.logSeen), int(rec.warnSeen)
	if rec.stopped {
		r.stopped = true
	}
	return true
}

// marks are the lengths of the run's violations, known findings and
// detections before a check.
func (r *runner) marks() [3]int {
	return [3]int{len(r.res.Violations), len(r.res.Known), len(r.res.dets)}
}

// recordCheck records what the check just run did: the violations, known
// findings and detections after the marks n, the positions it left,
// whether it stopped.
func (r *runner) recordCheck(n [3]int) {
	u := r.reuse
	var v0, k0, d0 int32 // where this run's records so far end in u's copies
	if u.n > 0 {
		p := &u.recs[u.n-1]
		v0, k0, d0 = p.v1, p.k1, p.d1
	}
	// Most checks report nothing: the copies are touched only for what a
	// check added (beyond a record's end they are the next one's to
	// overwrite).
	v1, k1, d1 := v0, k0, d0
	if x := r.res.Violations[n[0]:]; len(x) > 0 {
		u.viol = append(u.viol[:v0], x...)
		v1 = int32(len(u.viol))
	}
	if x := r.res.Known[n[1]:]; len(x) > 0 {
		u.known = append(u.known[:k0], x...)
		k1 = int32(len(u.known))
	}
	if x := r.res.dets[n[2]:]; len(x) > 0 {
		u.dets = append(u.dets[:d0], x...)
		d1 = int32(len(u.dets))
	}
	u.recs = append(u.recs[:u.n], checkRec{
		v0: v0, v1: v1, k0: k0, k1: k1, d0: d0, d1: d1,
		logSeen: int32(r.logSeen), warnSeen: int32(r.warnSeen), stopped: r.stopped,
	})
	u.n++
}

// takeSandbox gives lz the keys a sandbox at this place of the shared
// prefix found (a run before this one), if there is one: the next record.
// The keys are the record's, read only.
func (r *runner) takeSandbox(lz *lzInst, live uint64) (sandRec, bool) {
	u := r.reuse
	k := u.sandNext
	if k >= len(u.sand) {
		return sandRec{}, false
	}
	rec := u.sand[k]
	if int(rec.points) != r.points || rec.live != live || int(rec.n) != len(lz.buf)-lz.anchorK {
		internalf("lazy orders: sandbox %d of a shared prefix has options %#x and %d keys at choice point %d, %#x and %d at %d before",
			k, live, len(lz.buf)-lz.anchorK, r.points, rec.live, rec.n, rec.points)
	}
	u.sandNext++
	lz.clean = rec.clean
	end := int(rec.off) + int(rec.n)*bits.OnesCount64(live)
	lz.setKeys(u.keys[rec.off:end:end], int(rec.n))
	return rec, true
}

// recordSandbox records the keys lz's sandbox just found.
func (r *runner) recordSandbox(lz *lzInst, live uint64) {
	u := r.reuse
	n := len(lz.buf) - lz.anchorK
	u.sand = append(u.sand, sandRec{live: live, clean: lz.clean, off: int32(len(u.keys)), n: int32(n), points: int32(r.points)})
	u.keys = append(u.keys, lz.keys...)
	u.sandNext++
}

// sameKeys reports whether lz's keys for live are rec's.
func (u *reuse) sameKeys(lz *lzInst, live uint64, rec sandRec) bool {
	end := int(rec.off) + int(rec.n)*bits.OnesCount64(live)
	return slices.Equal(lz.keys, u.keys[rec.off:end])
}
