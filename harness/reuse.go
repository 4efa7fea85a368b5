package harness

import (
	"math/bits"
	"slices"
	"sync/atomic"

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

// checkRec is what one in-place check did: it reported the run's
// violations v0..v1-1 and known findings k0..k1-1, and logged the
// detections d0..d1-1 (indices into its Result's lists; a run that shares
// the prefix has the same lists up to there). No pointers: a record is
// appended at every check.
type checkRec struct {
	v0, v1, k0, k1    int32
	d0, d1            int32
	logSeen, warnSeen int32
	stopped           bool
}

// reuse is the runner's record of its checks, this run's and the previous
// run's; until is the last choice point index whose prefix is shared with
// the previous run (-1: none).
type reuse struct {
	prev, cur []checkRec
	until     int
	// prevRes is the previous run's result, which the records of prev
	// index.
	prevRes *Result
	// The lazy engine's sandboxes (lazy.go), the same way: each one's live
	// options and keys (flat, option by option, in keys*).
	sandPrev, sandCur []sandRec
	keysPrev, keysCur []lzKey
}

// sandRec is what one sandbox found: for each option of live, n keys,
// from keys[off] on.
type sandRec struct {
	live   uint64
	off, n int32
}

// keysEnd is where the keys of the first n sandbox records of the
// previous run end.
func (u *reuse) keysEnd(n int) int {
	if n == 0 {
		return 0
	}
	s := u.sandPrev[n-1]
	return int(s.off) + int(s.n)*bits.OnesCount64(s.live)
}

// startRun begins a run whose first until+1 choice points (indices 0..until)
// replay the previous run's choices.
// prev is the previous run's result.
func (u *reuse) startRun(until int, prev *Result) {
	u.prev, u.cur = u.cur, u.prev[:0]
	u.sandPrev, u.sandCur = u.sandCur, u.sandPrev[:0]
	u.keysPrev, u.keysCur = u.keysCur, u.keysPrev[:0]
	u.until = until
	u.prevRes = prev
	if prev == nil {
		u.until = -1
	}
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
	k := len(u.cur)
	if r.tr != nil || r.points > u.until || k >= len(u.prev) {
		return false
	}
	rec := u.prev[k]
	u.cur = append(u.cur, rec)
	if rec.v1 > rec.v0 {
		r.res.Violations = append(r.res.Violations, u.prevRes.Violations[rec.v0:rec.v1]...)
	}
	if rec.k1 > rec.k0 {
		r.res.Known = append(r.res.Known, u.prevRes.Known[rec.k0:rec.k1]...)
	}
	if rec.d1 > rec.d0 {
		r.res.dets = append(r.res.dets, u.prevRes.dets[rec.d0:rec.d1]...)
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
	r.reuse.cur = append(r.reuse.cur, checkRec{
		v0: int32(n[0]), v1: int32(len(r.res.Violations)), k0: int32(n[1]), k1: int32(len(r.res.Known)),
		d0: int32(n[2]), d1: int32(len(r.res.dets)),
		logSeen: int32(r.logSeen), warnSeen: int32(r.warnSeen), stopped: r.stopped,
	})
}

// replaySandbox gives lz the keys the previous run's sandbox at the same
// place found, if the run is still the previous run; it reports whether
// it did. Otherwise the caller runs the sandbox and records it.
func (r *runner) replaySandbox(lz *lzInst, live uint64) bool {
	u := r.reuse
	k := len(u.sandCur)
	if r.points > u.until || k >= len(u.sandPrev) {
		return false
	}
	rec := u.sandPrev[k]
	if rec.live != live || int(rec.n) != len(lz.buf)-lz.anchorK {
		internalf("lazy orders: sandbox %d of a shared prefix has options %#x and %d keys, %#x and %d before", k, live, len(lz.buf)-lz.anchorK, rec.live, rec.n)
	}
	off := int(rec.off)
	keys := u.keysPrev[off : off+int(rec.n)*bits.OnesCount64(live)]
	if lzVerifyReuse {
		return false // lzSandbox runs it and compares (lzCheckReuse)
	}
	r.recordSandbox(lz, live, keys)
	for l := live; l != 0; l &= l - 1 {
		o := bits.TrailingZeros64(l)
		lz.keys[o] = append(lz.keys[o][:0], u.keysPrev[off:off+int(rec.n)]...)
		off += int(rec.n)
	}
	return true
}

// recordSandbox records the keys of a sandbox (flat, option by option;
// nil: lz's own).
func (r *runner) recordSandbox(lz *lzInst, live uint64, keys []lzKey) {
	u := r.reuse
	n := len(lz.buf) - lz.anchorK
	u.sandCur = append(u.sandCur, sandRec{live: live, off: int32(len(u.keysCur)), n: int32(n)})
	if keys != nil {
		u.keysCur = append(u.keysCur, keys...)
		return
	}
	for l := live; l != 0; l &= l - 1 {
		u.keysCur = append(u.keysCur, lz.keys[bits.TrailingZeros64(l)]...)
	}
}

// lzVerifyReuse, in tests, runs every sandbox the previous run's record
// would have given and compares its keys with the record's
// (lzCheckReuse); lzReuseChecked counts those compared.
var (
	lzVerifyReuse  bool
	lzReuseChecked atomic.Int64
)

// lzCheckReuse compares the keys the sandbox just found with the
// previous run's record of it, if the run is still the previous run.
func (r *runner) lzCheckReuse(lz *lzInst, live uint64) {
	u := r.reuse
	k := len(u.sandCur) - 1
	if r.points > u.until || k >= len(u.sandPrev) {
		return
	}
	rec, got := u.sandPrev[k], u.sandCur[k]
	n := int(rec.n) * bits.OnesCount64(rec.live)
	if rec.live != got.live || rec.n != got.n || !slices.Equal(u.keysPrev[rec.off:int(rec.off)+n], u.keysCur[got.off:int(got.off)+n]) {
		internalf("lazy orders: sandbox %d of a shared prefix found other keys than the previous run's", k)
	}
	lzReuseChecked.Add(1)
}
