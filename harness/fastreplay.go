package harness

// The replayed choice points' fast path.
//
// A run replays the previous run's choices up to the one next() changed
// (reuse.go), from the snap or event snap it resumed at (resume.go,
// evsnap.go). At each yield point of that prefix choose built the yield's
// options, filtered the merged remotes, asked the DFS through the chooser's
// panic shield and recorded nothing: most of those yields are no choice
// point at all, or one where the previous run took the default option,
// which changes nothing but the choice point count. On std at C=3 that
// machinery was about 9 % of the exploration's time (48.7 M replayed
// choice points, 37 a run).
//
// So each run numbers its yield points (runner.nchoose: choose calls, kept
// in snaps and event snaps like the step count) and records, at each
// choice point it reaches as the slow path, the yield point it was
// (runner.cpAt, by choice point index). The code under test is
// deterministic and the prefix is the previous run's, so on replay the
// yield point numbered cpAt[points] is the next choice point and no other
// yield point before it is one. There, if the previous run took the
// default option, the fast path counts the point and sets the DFS past it;
// any other option takes the slow path, which asks the DFS as before. So
// does the default at the last commit of a pending instance of the lazy
// engine, where the slow path narrows the region's live orders even for
// the default (lzStay). At the instance's other yields the slow path's
// lazy part only lists the options (lzOptions) and the default changes
// nothing. (Until 6 Dec 2026 the fast path kept out of every instance:
// those yields were 3 % of peer-spin K=3's CPU samples, all in replayed
// prefixes, and −1.8 % of its instructions.)
//
// Only where the run asks the explorer's DFS directly (no wrapped chooser,
// no trace, not a compiled target) and reuses the previous run's checks.
// TestFastReplaySound explores with and without it and requires the same
// counts, verdicts, sites and first violation; TestFastReplayCaught shows
// that a fast path taken at an instance's last commit too is caught.

// fastReplays reports whether the run about to start with chooser ch takes
// the fast path on its replayed prefix.
func (r *runner) fastReplays(ch Chooser, opt RunOptions) bool {
	return r.fdfs != nil && ch == Chooser(r.fdfs) && opt.wrap == nil && !opt.Trace && !r.compiled &&
		r.reuse != nil && r.reuse.until >= 0 && (opt.hooks == nil || !opt.hooks.noFastReplay)
}

// replayed reports whether the yield point just numbered is done with on
// the fast path: no choice point, or the default option taken again
// anywhere but at the last commit of a pending instance.
func (r *runner) replayed(c *ctx) bool {
	if r.points >= len(r.cpAt) {
		internalf("fast replay: choice point %d was never recorded (%d are)", r.points, len(r.cpAt))
	}
	at := r.cpAt[r.points]
	if 2*r.nchoose < at {
		return true // no choice point here
	}
	if 2*r.nchoose != at {
		internalf("fast replay: yield point %d is past choice point %d's (%d)", r.nchoose, r.points, at)
	}
	d := r.fdfs
	if lz := c.lz; lz != nil && (lz.k == len(lz.buf) || r.hk.fastAvoidsLazy) && !r.hk.fastIgnoresLazy || d.path[r.points].c != 0 {
		return false
	}
	if d.pos != r.points {
		internalf("fast replay: the DFS is at choice point %d, the run at %d", d.pos, r.points)
	}
	r.points++
	d.pos++
	return true
}

// noteChoicePoint records where choice point p is: 2n at yield point n,
// 2n+1 after yield point n and before the next (a region's order, asked
// at the start of its commit).
func (r *runner) noteChoicePoint(p *Point) {
	i := p.Index
	for len(r.cpAt) <= i {
		r.cpAt = append(r.cpAt, 0)
	}
	at := 2 * r.nchoose
	if p.Kind != PointYield {
		at++
	}
	r.cpAt[i] = at
}
