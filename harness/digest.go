package harness

// Input digests skipped on replay.
//
// With the state cache each context digests every input its code reads
// (ctx.hist, state.go): a mix per load, store and fence, 7 % of std C=3's
// time. Most of a run's hook calls replay the previous run's prefix (the
// choice points before the one next() changed), and nothing looks a state
// up there: lookups are made at new choice points, after interrupts in a
// run's new part and at quiescent points after its last choice. So the
// digests are kept only from the changed choice point on:
//
//   - each choice point a run reaches for the first time (after its
//     changed one) records every context's digest as it is before the
//     option is taken (the task contexts, then the contexts on the CPU);
//   - the run that changes that choice point later replays up to it with
//     the digests off, and puts the recorded digests back right after the
//     chooser answered there, before the option runs.
//
// The record of a choice point is the one its first visit made: a run
// writes the records of its new choice points only, and the DFS path's
// entry at an index is replaced only by such a run. Between the start of
// a run and its changed choice point the contexts are the same, in the
// same places, as in the run that recorded it (the code is deterministic),
// so the digests put back are what they would have been. What a replay
// leaves in the digests before that point (in snaps and event snaps taken
// there too) is overwritten at the changed point, for every context then
// alive; a context made later digests from its start. The digests a
// context starts an op or an interrupt with (the op count and kind, the
// live words an interrupt found) are set with the digests off too: they
// are not chained onto earlier inputs.
//
// TestDigestReplaySound holds the counts to those of the digests kept in
// every run (and TestCacheSound to the plain explorer's);
// TestDigestReplayCaught shows that comparison fails when the digests are
// not put back.

// replaysDigests reports whether the run about to start replays a prefix
// of the previous run with its digests off: with check reuse (the same
// prefix, the same order of events), no trace.
func (r *runner) replaysDigests(opt RunOptions) bool {
	return r.reuse != nil && r.reuse.until >= 0 && !opt.Trace && (opt.hooks == nil || !opt.hooks.noDigestReplay)
}

// ask offers opts at choice point p to the chooser and returns its answer;
// every choice point of a run goes through it, so that the digests are
// recorded or put back there (chosen), and the yield point it is at
// (noteChoicePoint, fastreplay.go).
func (r *runner) ask(p *Point, opts []Option) int {
	r.noteChoicePoint(p)
	i := r.ch.Choose(p, opts)
	r.noteChange(p, opts, i)
	r.chosen(p.Index)
	return i
}

// chosen is called right after the chooser answered at choice point idx:
// at the changed point it puts the recorded digests back and turns the
// digests on; at a new point it records them.
func (r *runner) chosen(idx int) {
	if !r.hashing || r.reuse == nil {
		return
	}
	switch until := r.reuse.until; {
	case idx == until && !r.digest:
		if idx >= len(r.histRec) {
			internalf("digests: the changed choice point %d was never recorded (%d are)", idx, len(r.histRec))
		}
		rec := r.histRec[idx]
		if len(rec) != len(r.taskCt)+len(r.ctxs) {
			internalf("digests: choice point %d recorded %d contexts, the replay has %d", idx, len(rec), len(r.taskCt)+len(r.ctxs))
		}
		if !r.hk.digestNotPutBack {
			for i, c := range r.taskCt {
				c.hist = rec[i]
			}
			for i, c := range r.ctxs {
				c.hist = rec[len(r.taskCt)+i]
			}
		}
		r.digest = true
	case idx > until || r.digest:
		for len(r.histRec) <= idx {
			r.histRec = append(r.histRec, nil)
		}
		rec := r.histRec[idx][:0]
		for _, c := range r.taskCt {
			rec = append(rec, c.hist)
		}
		for _, c := range r.ctxs {
			rec = append(rec, c.hist)
		}
		r.histRec[idx] = rec
	}
}
