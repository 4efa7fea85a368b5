package harness

import (
	"math/bits"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Merged remote placements (ExploreOptions.MergeRemotes;
// docs/merged-remotes.md).
//
// A remote action placed at two yield points of a context between which
// the context does nothing the action can see or change leaves the same
// state, and every oracle the same verdicts, at either: the two schedules
// are the same run but for the position of the event. The explorer then
// runs the first placement only and counts it for the others.
//
// Which placements are the same, per context, in a segment (the steps
// between two region boundaries: a fence, an atomic, the end of an op):
//   - A remote unwind only reads (the task's words and real stack): it is
//     the same at every offer point of a segment. Between two of them the
//     context only loads and buffers stores (a commit ends a region), and
//     neither is visible to the unwinder or changes what it reads.
//   - A register, unregister or tracer switch writes global words (the
//     fgraph_array, the bitmask, the static calls, the users' words): it
//     is the same at a segment's plain commit yield (after a barrier,
//     smp_rmb, smp_wmb or atomic) and at the first offer point after it,
//     the yield before the next load of a global word: between them the
//     context loads only its own task's words. The load of a global word
//     right after that yield may see the action's stores, so the
//     placements after it are not the same, unless the writer is wide
//     (an unregister or a tracer switch) and does not write that word:
//     then the next offer point is the same placement too, and so on up
//     to the first load of a word it writes (writerstores.go finds its
//     stores by a dry run). A set of a wide writer may also begin at any
//     offer point of a segment, not only at a plain commit yield.
//   - A commit yield inside any other fence (an opaque call's entry or
//     return, irq on or off, the end of an op) is followed by the
//     harness's own bookkeeping of that fence, which reads flags an
//     oracle reads, and an op's first yield by the harness's call or
//     return bookkeeping (the model's user table, the real stack): such a
//     yield is merged with nothing after it.
//   - A yield at a site where the remote action's direct-mode test reads
//     the context's last site (runner.remote: known finding
//     direct-switch-race) is merged with nothing for the writers.
//
// Each context keeps, per writer, whether its next offer point is the same
// placement as the last one (ctx.rws). In the run that fires the action
// at the first placement (its representative), the context goes on the
// same way up to the set's end, and counts the later placements it
// passes; the run stands for that many schedules (runner.rmult,
// Result.weight). The runs that continue past the first placement do not
// offer the action at the later ones (remLoad's masks). A violation or a
// crash of the representative after the action stops it only at the
// set's end (quietStop), silently, so that the count is complete: the
// later placements fail the same way.
//
// The state cache stores a subtree's totals divided by the multiplier of
// the run that recorded its point and multiplies them by the hitting
// run's (keyed.mult): a state below a merged action stands for as many
// schedules as its path does.

// The kinds of remote action for merging: bits of a suppression mask.
const (
	remUnwind uint8 = 1 << iota // a pure reader
	remWriter                   // writes global words only
)

// remKind is the merging kind of remote action i.
func (r *runner) remKind(i int) uint8 {
	if r.sc.Remotes[i].Kind == RemoteUnwind {
		return remUnwind
	}
	return remWriter
}

// directSite reports whether runner.remote reads site s as the context's
// last one (the direct-switch-race flag).
func directSite(s fgraph.Site) bool {
	switch s {
	case fgraph.SiteEnterSave, fgraph.SiteEnterDirectGops, fgraph.SiteEnterDirectCall,
		fgraph.SiteRetDirectGops, fgraph.SiteRetDirectCall:
		return true
	}
	return false
}

// Segment states (ctx.rcls).
const (
	segNone   uint8 = iota // no offer point in the segment yet
	segCommit              // the segment's first offer point was a plain commit yield, no load's since
	segLoads               // otherwise
)

// remYield is a commit yield (plain: in a barrier or an atomic) or an
// op's first yield of c at site s, before its options.
func (r *runner) remYield(c *ctx, s fgraph.Site, plain bool) {
	if c.rrep != 0 {
		r.remEnd(c) // a commit since: the memory differs
	}
	c.rcls, c.rws, c.wsOK = segNone, 0, false
	if plain && !directSite(s) {
		c.rcls = segCommit
		c.rws = r.remWriters // the first offer point after is the same
	}
}

// remLoad is the yield before c's load at site s of global word a: it
// returns the kinds of remote action not offered there (placed at an
// earlier offer point of the segment) and sets r.supW, the writers not
// offered there; it counts the placement for a representative, and ends a
// writer's representative if the load may read what the writer wrote.
func (r *runner) remLoad(c *ctx, s fgraph.Site, a fgraph.Addr) (sup uint8) {
	if c.rcls != segNone {
		sup |= remUnwind
	}
	direct := directSite(s)
	if !direct {
		r.supW = c.rws
	}
	c.rcls = segLoads
	// The writers whose next offer point is the same as this one: the
	// wide ones that do not write a (writerstores.go), none at a direct
	// site.
	next := uint32(0)
	switch {
	case direct:
	case c.rrep == remWriter:
		if r.remWide>>c.rrepW&1 != 0 && !c.repWS.has(a) || r.hk.remWrongRule {
			next = 1 << c.rrepW
		}
	case r.remWide != 0 && r.eUsed < r.sc.Bound.E && !r.sc.Bound.spent(r.kUsed, r.rUsed, r.eUsed):
		// (With no remote action left to offer in this run, no set is
		// open.)
		r.writerStores(c) // writerstores.go
		e := &r.wsTab[c.wsIdx]
		for w := r.remWide; w != 0; w &= w - 1 {
			i := bits.TrailingZeros32(w)
			if !e.ws[i].has(a) || r.hk.remWrongRule {
				next |= 1 << i
			}
		}
	}
	c.rws = next
	switch c.rrep {
	case remUnwind:
		if sup&remUnwind != 0 {
			r.rmult++
		}
	case remWriter:
		if r.supW>>c.rrepW&1 != 0 {
			r.rmult++
		}
		if next == 0 {
			r.remEnd(c) // no later placement can be the same
		}
	}
	return sup
}

// remBoundary is a region boundary of c: the segment ends.
func (r *runner) remBoundary(c *ctx) {
	c.rcls, c.rws, c.wsOK = segNone, 0, false
	if c.rrep != 0 {
		r.remEnd(c)
	}
}

// remEnd ends c's representative; a violation or crash it deferred stops
// the run now.
func (r *runner) remEnd(c *ctx) {
	c.rrep = 0
	if r.quietStop {
		r.stopped = true
		r.stopRun()
	}
}

// remFired is a remote action i fired by c at an offer point: it
// represents the later placements of its segment that are the same, if
// the next offer point is one (for the unwind: not after an op's first
// yield, nor after a commit yield whose fence has bookkeeping after it;
// for a writer: ctx.rws).
func (r *runner) remFired(c *ctx, i int) {
	k := r.remKind(i)
	switch {
	case k == remUnwind && c.rcls != segNone:
		c.rrep = k
	case k == remWriter && c.rws>>i&1 != 0:
		// The next offer point is the same placement: this one
		// represents it, and those after it that are the same too (a
		// writer that is not wide: up to the first load of a global).
		c.rrep, c.rrepW = k, uint8(i)
		if r.remWide>>i&1 != 0 {
			r.writerStores(c) // of the memory before the action
			c.repWS = r.wsTab[c.wsIdx].ws[i]
		}
	}
}

// remFiredCheck is a wide writer i fired by c as a representative: the
// stores it made must be those its dry run found (writerStores), or the
// placements it counted for would not be the same.
func (r *runner) remFiredCheck(c *ctx, i int) {
	if c.rrep == remWriter && int(c.rrepW) == i && r.remWide>>i&1 != 0 && r.wsGot != c.repWS {
		internalf("remote %d (%s): its stores %v are not those its dry run found %v", i, r.sc.Remotes[i].Label(r.sc), r.wsGot, c.repWS)
	}
}

// remDefer reports whether a violation that stops the run is deferred to
// the end of a representative's segment (and defers it).
func (r *runner) remDefer() bool {
	if !r.mergeRem || r.quietStop {
		return r.quietStop
	}
	for _, c := range r.ctxs {
		if c.rrep != 0 {
			r.quietStop = true
			if r.hk.remQuiet != nil {
				r.hk.remQuiet.Add(1)
			}
			return true
		}
	}
	return false
}

// remFilter returns opts less the remote actions whose kind is in sup
// and the writers in r.supW, in r.remOpts' storage.
func (r *runner) remFilter(opts []Option, sup uint8) []Option {
	out := r.remOpts[:0]
	for _, o := range opts {
		if o.Kind == OptRemote && (r.remKind(o.Remote)&sup != 0 || r.supW>>o.Remote&1 != 0) {
			continue
		}
		out = append(out, o)
	}
	r.remOpts = out
	return out
}
