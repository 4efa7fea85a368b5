package harness

import "github.com/fgcheck/fgcheck/fgraph"

// Remote unwinds merged across commits (ExploreOptions.MergeRemotes, with
// remotes.go; docs/merged-remotes.md).
//
// remotes.go merges a remote unwind's placements within a segment, where
// nothing the unwinder reads changes. This file merges them across the
// commits of an op too, where the unwind is the run's last choice and
// reports nothing at any of them.
//
// The unwind only reads (the task's words and its real stack) and runs
// on no context: a run that fires it at a yield and then takes no other
// choice is the run that does not fire it, with a read inserted. When no
// choice is left after it (the bound is spent, or nothing else is left to
// offer), the rest of that run is the default path below the yield. So
// if the unwind, evaluated at each of its offer points along that path,
// reports nothing at all (no violation, no known finding, no warning),
// every placement of it there gives a schedule with the same verdicts:
// those of the default path. The first such placement stands for the
// others:
//
//   - The run that takes the default at the first placement (it comes
//     first in the DFS) opens the extension there (ctx.ux = uxOpening)
//     and, at each later offer point of the unwind, evaluates it in place
//     (unwindClean): clean, the unwind is not offered (uxOpen); not clean,
//     the extension closes and the unwind is offered there as before.
//   - The run that fires the unwind at the first placement (its
//     representative, ctx.ux = uxRep) walks the same path (the unwind
//     wrote nothing), evaluates at the same points and counts each
//     placement the default run left out (runner.rmult): those the
//     extension left out and those the segment rule left out after them,
//     until the extension closes.
//   - Both close at the end of the context's op, before any lookup of a
//     tail, so that no state is stored below the representative's count
//     while it still grows (the cache stores totals per schedule of the
//     path, remotes.go).
//
// The extension is in the state's encoding (appendCtx), in three states: a
// point where it is open stands for fewer placements below it than one
// where it is not, and the point where it opens (the unwind offered there,
// its representative counting the later ones) for more than one where it
// was open before (the unwind left out there too). With the last two
// alike, the cache counted std at C=2 2,231 schedules too many
// (TestUnwindExtKeyCaught).
//
// Any other choice taken ends the extension (no placement is left to
// merge: the unwind was the last choice). A representative's firing that
// reports anything although its evaluation did not is an internal error.

// The extension's states (ctx.ux).
const (
	uxNone    uint8 = iota
	uxOpening       // opened at this segment's offer point, where the unwind is offered
	uxOpen          // the default path: later placements are left out
	uxRep           // the representative: later placements are counted
)

// unwindExtIndex is the remote action the extension merges: the
// scenario's only remote unwind, with one remote event a run (-1: none).
func (r *runner) unwindExtIndex() int {
	if !r.mergeRem || r.hk.noUnwindExt || r.sc.Bound.E != 1 || r.sc.AnyReader {
		return -1
	}
	u := -1
	for i, rem := range r.sc.Remotes {
		if rem.Kind == RemoteUnwind {
			if u >= 0 {
				return -1
			}
			u = i
		}
	}
	return u
}

// uxAt is a yield of c where the remote unwind may be offered, after the
// segment rules left out the kinds in sup: it returns remUnwind if the
// extension leaves the unwind out here too, and counts the placement for
// a representative.
func (r *runner) uxAt(c *ctx, sup uint8) uint8 {
	if r.uxIdx < 0 {
		return 0
	}
	if c.ux == uxRep {
		// The default run's offer point: left out by the segment rule (a
		// placement of this representative's) or by the extension.
		if sup&remUnwind != 0 || r.uxClean(c) {
			r.rmult++
		} else {
			c.ux = uxNone
		}
		return 0
	}
	// Not offered here: left out by the segment rule, or the run's one
	// remote event (E=1, unwindExtIndex) is spent, or its bound.
	b := &r.sc.Bound
	if sup&remUnwind != 0 || r.eUsed >= b.E || b.spent(r.kUsed, r.rUsed, r.eUsed) {
		return 0
	}
	if c.ux == uxNone {
		// Opened where the unwind is offered as the last choice, clean.
		if r.unwindLast() && r.uxClean(c) {
			c.ux = uxOpening
		}
		return 0
	}
	if r.uxClean(c) {
		c.ux = uxOpen
		return remUnwind
	}
	c.ux = uxNone
	return 0
}

// unwindLast reports whether no choice is left after the remote unwind.
func (r *runner) unwindLast() bool {
	b := &r.sc.Bound
	return b.spent(r.kUsed, r.rUsed, r.eUsed+1) || r.kUsed >= b.K && r.rUsed >= b.R && r.eUsed+1 >= b.E
}

// uxTaken is option o taken by c at a choice point: the representative
// begins, or the extension ends.
func (r *runner) uxTaken(c *ctx, o Option) bool {
	if r.uxIdx < 0 {
		return false
	}
	if o.Kind == OptRemote && o.Remote == r.uxIdx && c.ux == uxOpening {
		c.ux = uxRep
		return true
	}
	for _, x := range r.ctxs {
		x.ux = uxNone
	}
	return false
}

// uxClean is unwindClean where every schedule the run stands for has the
// memory of the run: not while an instance of a paid pending region is in
// flight with more than one option live (lzMixed), whose orders leave
// other words in memory between its commits than the representative's,
// which the evaluation reads. The test reads only what the default run
// and the representative share: the representative narrows a region at
// its event and collapses the unpaid ones when the unwind spends the
// bound (docs/merged-remotes.md, "With lazy region orders").
func (r *runner) uxClean(c *ctx) bool {
	return !r.lzMixed() && r.unwindClean(c)
}

// unwindClean reports whether the remote unwind, fired now, would report
// nothing: remoteUnwind's walk, reading memory directly, with every report
// caught (evalAny) and nothing of it kept. Through the shim (as fired) a
// warning of the walk is reported by checkWarnings, here by the walk
// itself: a report either way. The answer holds until memory an unwinder
// reads changes (runner.ver).
//
// Over a prefix shared with the previous run the answer is that run's, in
// the same order (reuse.go): on std at C=3 the evaluations in replayed
// prefixes were 5 % of the exploration's time.
func (r *runner) unwindClean(c *ctx) bool {
	if r.hk.uxAlwaysClean {
		return true
	}
	u := r.reuse
	if u == nil || r.tr != nil {
		return r.unwindEval(c)
	}
	// Every call is recorded, answered from the cache or not: a resumed
	// run's cache starts empty (loadData), so only the calls line up.
	var ok bool
	if r.points <= u.until && u.uxN < len(u.ux) && !r.hk.noUxReplay {
		ok = u.ux[u.uxN] != r.hk.uxFlip
	} else {
		ok = r.unwindEval(c)
		u.ux = append(u.ux[:u.uxN], ok)
	}
	u.uxN++
	return ok
}

// unwindEval is unwindClean's walk, or its answer for the same memory.
func (r *runner) unwindEval(c *ctx) bool {
	m := r.m
	// The walk reads the real stack too, whose changes (a call's slot, its
	// hijack by the return trampoline) do not move ver: without its
	// version here, std at C=4 took a clean answer for a walk that
	// warned, and the representative's own unwind reported (an internal
	// error, on main since the extension was built).
	if r.uxVer == r.ver && (r.uxSlots == m.SlotsVersion() || r.hk.uxMemoNoSlots) && r.uxCur == m.Current {
		if ok := r.uxOK; r.hk.uxMemoVerify {
			r.uxVer = 0
			if walk := r.unwindEval(c); walk != ok {
				internalf("merged remote unwind: the memo's answer %v, a walk's %v", ok, walk)
			}
		}
		return r.uxOK
	}
	t := r.sc.Remotes[r.uxIdx].Task
	prev, fail := r.rd, r.probeFail
	r.rd = r.remoteReader(t) // never the any-instant walker's (unwindExtIndex)
	r.evalAny, r.probeFail = true, false
	r.checkRetAddrs(fgraph.NoTask, t, c, false, r.rd.values)
	ok := !r.probeFail
	r.evalAny, r.probeFail, r.rd = false, fail, prev
	r.uxVer, r.uxSlots, r.uxCur, r.uxOK = r.ver, m.SlotsVersion(), m.Current, ok
	return ok
}

// uxKey is the extension's state as the state's encoding has it (merge:
// the test hook uxKeyMerge).
func uxKey(x uint8, merge bool) uint8 {
	if merge && x == uxOpening {
		return uxOpen
	}
	return x
}
