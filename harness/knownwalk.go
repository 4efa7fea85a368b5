package harness

import (
	"slices"

	"github.com/fgcheck/fgcheck/fgraph"
)

// The in-place walks that find a known finding, kept.
//
// The reader memos (readers.go, readseen.go) keep clean walks only. But on
// peer-spin K=3, 72,795 of the 74,295 in-place walks that still run report
// a known finding (an unwinder inside reserve-window's or
// reserve-reorder's window, a ret-addr walk that matched inflight-ret-addr's
// frame), and each report runs the findings' matchers, whose allowances
// run the walk again with the words they blame put right (passesWith):
// together 4 % of the exploration's instructions, for 2,257
// distinct inputs. knownWalks keeps, for such a walk, what it reported:
// the oracle, the message and the known finding it is (and how many
// violations the walk and its counterfactuals counted), under the digest
// of everything the walk and the matchers read:
//
//   - what a clean walk reads (readerSeen's key: the task, its ret_stack
//     and curr_ret_stack, its real stack, the words of the mask with
//     their values); the mask here also has the words the
//     counterfactuals read (their loads go through the same readWatch);
//   - what the matchers and the counterfactuals read besides (knownInputs):
//     the reader, the flags the allowances match on (reserve-window's
//     window, the compiler model, reserve-reorder's clobber and whether it
//     spread, and the order of the reservation's writes), the entries in
//     flight of the walked task (inflight-ret-addr's frame and the words it
//     compares, read without the hooks), the reservations in flight and the
//     clobbered words, each with what memory holds at its address.
//
// A later in-place check with the same digest reports the same, without
// the walk: violateAs replays the report with its known finding, which
// logs its detection and counts it as the walk's did, with the
// violations its counterfactuals counted. Only a walk that WARNed not,
// read no word outside its task's stack and its two fields, and whose
// every report was a known finding (the run goes on), is kept.
// TestKnownWalksVerified runs the walk behind every hit over std,
// peer-spin and the catalogue and compares; TestKnownWalksSound compares
// explorations with and without; TestKnownWalksCaught shows a digest
// without the matchers' inputs is caught.
//
// Bounded like readerSeen: at knownWalksMax outcomes it starts afresh.

const knownWalksMax = 1 << 16

// knownWalks holds the kept outcomes; the masks of each shape's kept
// walks are readerSeen's (kmasks), so that a shape without any costs
// nothing but the shape readerSeen digests anyway.
type knownWalks struct {
	out map[stateKey]knownWalk
}

// knownWalk is what a kept walk reported.
type knownWalk struct {
	reps []knownRep
	nv   int // the violations it counted (its reports' and its counterfactuals')
}

type knownRep struct{ oracle, msg, known string }

// knownRec, while an in-place walk runs, collects its reports (violateAs);
// kept is the outcome of the hit behind which the walk runs in verify
// mode.
type knownRec struct {
	on   bool
	reps []knownRep
	kept knownWalk
	hit  bool
}

// knownWalkBefore is checkReaders' lookup before an in-place walk of task
// t: on a hit it replays the kept walk and reports true (in verify mode it
// keeps the outcome to compare); else it starts recording the walk's
// reports.
func (r *runner) knownWalkBefore(t int) bool {
	o, ok := r.kwalks.lookup(r, t)
	if ok {
		if r.hk.knownWalksHits != nil {
			r.hk.knownWalksHits.Add(1)
		}
		if !r.hk.knownWalksVerify {
			prev := r.rd
			r.rd = readerCall{name: r.inPlaceReader(), on: true, cur: t, t: t, values: true}
			r.replayKnownWalk(&o)
			r.rd = prev
			r.rmemo.ok = false
			return true
		}
	}
	r.krec.on, r.krec.reps, r.krec.kept, r.krec.hit = true, r.krec.reps[:0], o, ok
	return false
}

// knownWalkAfter is checkReaders' end of a recorded in-place walk of
// task t (nv violations and nw WARNs before it): in verify mode it
// compares the walk with the kept one; else, if the walk found only known
// findings, read no other word and WARNed not, its outcome is kept.
func (r *runner) knownWalkAfter(t, nv, nw int) {
	r.krec.on = false
	if r.krec.hit {
		r.verifyKnownWalk(&r.krec.kept, r.violations-nv)
		return
	}
	if r.violations > nv && len(r.m.Warnings) == nw && !r.stopped && !r.rwatch.other && r.krec.allKnown() {
		r.kwalks.add(r, t, r.rwatch.mask, r.krec.reps, r.violations-nv)
	}
}

// knownInputs digests what the matchers and their counterfactuals of an
// in-place walk of task t read besides the walk's words.
func (r *runner) knownInputs(t int) uint64 {
	if r.hk.knownWalksDrop == "inputs" {
		return 0 // (a test's wrong digest)
	}
	m := r.m
	var wr bool
	if len(r.ctxs) > 0 {
		wr = r.top().windowRead
	}
	h := mix(boolU(r.inPlaceReader() == ReaderNMICallchain), uint64(boolU(r.inReserveWindow))|uint64(boolU(r.aliasDep))<<1|
		uint64(boolU(r.clobbered))<<2|uint64(boolU(r.clobberSpread))<<3|uint64(boolU(r.staleRetp))<<4|uint64(boolU(wr))<<5)
	for _, s := range r.orders.sites[fgraph.SiteReserveW2] {
		h = mix(h, uint64(s))
	}
	for _, x := range r.ctxs {
		if e := x.entry; e != nil && x.task == t {
			var ok uint64
			for i, b := range e.ok {
				if b {
					ok |= 1 << i
				}
			}
			h = mix(mix(mix(mix(h, 1), uint64(e.ret)), uint64(e.fn)), uint64(e.retp))
			h = mix(mix(h, uint64(e.base)<<32|uint64(uint32(e.top))), ok<<1|boolU(e.pushed))
			if e.base >= 0 && e.base+r.cfg.FrameWords <= r.cfg.StackWords {
				for i := range r.cfg.FrameWords {
					h = mix(h, uint64(m.Mem[m.WordAddr(t, e.base+i)]))
				}
			}
		}
		if v := x.resv; v != nil {
			h = mix(mix(mix(mix(h, 2), uint64(v.addr)), uint64(v.val)), boolU(v.raised)<<1|uint64(m.Mem[v.addr])<<2)
		}
	}
	for _, f := range r.clobberedFixes {
		h = mix(mix(mix(mix(h, 3), uint64(f.addr)), uint64(f.val)), uint64(m.Mem[f.addr]))
	}
	return h
}

// key is the digest of a walk of task t that read the words of mask
// (readerSeen's shape set for t).
func (k *knownWalks) key(r *runner, t int, mask uint64, inputs uint64) stateKey {
	w := r.rseen.key(r, t, mask)
	return stateKey{mix(w.a, inputs), mix(w.b, ^inputs)}
}

// lookup returns the kept outcome of an in-place walk of task t, if
// there is one (its shape's masks first: the matchers' inputs are
// digested only for a shape with walks kept).
func (k *knownWalks) lookup(r *runner, t int) (knownWalk, bool) {
	if len(k.out) == 0 {
		return knownWalk{}, false
	}
	r.rseen.setShape(r, t)
	ms := r.rseen.shapeK
	if len(ms) == 0 {
		return knownWalk{}, false
	}
	inputs := r.knownInputs(t)
	for _, mask := range ms {
		if o, ok := k.out[k.key(r, t, mask, inputs)]; ok {
			return o, true
		}
	}
	return knownWalk{}, false
}

// add keeps the outcome of a walk of task t that read the words of mask.
// (The walk changes none of its inputs: its counterfactuals put memory
// and the flags back.)
func (k *knownWalks) add(r *runner, t int, mask uint64, reps []knownRep, nv int) {
	inputs := r.knownInputs(t)
	if k.out == nil || len(k.out) >= knownWalksMax {
		k.out = map[stateKey]knownWalk{}
	}
	mask |= 1 << r.cfg.FieldRetp()
	r.rseen.setShape(r, t)
	if !r.rseen.addKnownMask(mask) {
		return
	}
	k.out[k.key(r, t, mask, inputs)] = knownWalk{reps: slices.Clone(reps), nv: nv}
}

// replay reports what o reported, as the walk did.
func (r *runner) replayKnownWalk(o *knownWalk) {
	r.violations += o.nv - len(o.reps)
	for _, x := range o.reps {
		r.violateAs(x.oracle, x.msg, nil, x.known, true)
	}
}

// knownWalksOn reports whether in-place walks are kept now: the reader
// memo's conditions, and no trace (a replay makes no walk to trace).
func (r *runner) knownWalksOn() bool {
	return !r.hk.knownWalksOff && r.readerMemoOn() && r.tr == nil && r.hk.checkHook == nil
}

// allKnown reports whether the walk reported something, all of it known
// findings.
func (k *knownRec) allKnown() bool {
	for _, x := range k.reps {
		if x.known == "" {
			return false
		}
	}
	return len(k.reps) > 0
}

// verifyKnownWalk, in tests (knownWalksVerify), fails with an internal
// error unless the walk just run behind a hit reported what the kept one
// did.
func (r *runner) verifyKnownWalk(o *knownWalk, nv int) {
	if nv != o.nv || !slices.Equal(r.krec.reps, o.reps) {
		internalf("kept in-place walks: the walk behind a hit reported %v (%d violations), the kept one %v (%d)", r.krec.reps, nv, o.reps, o.nv)
	}
	if r.hk.knownWalksVerified != nil {
		r.hk.knownWalksVerified.Add(1)
	}
}
