package harness

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestSplitSound: the lazy engine with the totals kept per combo and
// without them (each state with pending regions cached whole) report the
// same counts and verdicts on std (C=2 and C=1), peer-spin and peer-spin
// at K=3, and the per-combo engine runs fewer schedules on peer-spin.
// TestLazySound holds the per-combo engine (the default) to the eager
// one on every catalogue mutant.
func TestSplitSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std and peer-spin twice")
	}
	keep := RunOptions{KeepGoing: true}
	std1 := Standard(fgraph.Latest)
	std1.Bound.C, std1.Name = 1, "std-C1"
	k3 := PeerSpin(fgraph.Latest)
	k3.Bound.K, k3.Name = 3, "peer-spin-K3"
	var closed atomic.Int64
	splitClosed = &closed
	defer func() { splitClosed = nil }()
	full := PeerSpin(fgraph.Latest)
	full.Name = "peer-spin-full"
	for _, sc := range []*Scenario{Standard(fgraph.Latest), std1, PeerSpin(fgraph.Latest), k3, full} {
		opt := ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}
		if sc == full {
			// A table that fills up half-way: the states met after are
			// cached whole (splitTable.closed).
			opt.CacheEntries = 20000
		}
		noSplit = true
		whole, ws := lazyView(t, sc, opt)
		noSplit = false
		split, ss := lazyView(t, sc, opt)
		if whole != split {
			t.Errorf("%s: the totals per combo differ from whole states:\nwhole:\n%s\nper combo:\n%s", sc.Name, whole, split)
		}
		if ss.Runs != ws.Runs || ss.Kbuild.Runs != ws.Kbuild.Runs {
			t.Errorf("%s: %d schedules (%d of kbuild's) per combo, %d (%d) whole", sc.Name, ss.Runs, ss.Kbuild.Runs, ws.Runs, ws.Kbuild.Runs)
		}
		t.Logf("%s: %d runs per combo, %d whole, for %d schedules", sc.Name, ss.Executed, ws.Executed, ss.Runs)
		if sc == full {
			if n := closed.Swap(0); n == 0 {
				t.Errorf("%s: the table of combos did not fill up", sc.Name)
			}
			continue
		}
		if sc.Bound.C == 0 && ss.Executed >= ws.Executed {
			t.Errorf("%s: %d runs per combo, %d whole: want fewer", sc.Name, ss.Executed, ws.Executed)
		}
	}
}

// TestSplitWrongRulesCaught: each rule of the per-combo totals, broken,
// is caught by the comparison with the eager engine.
func TestSplitWrongRulesCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin and std several times")
	}
	keep := RunOptions{KeepGoing: true}
	scs, want := eagerViews(t, keep)
	for _, tc := range []struct {
		wrong, drop string
		why         string
	}{
		{drop: "instance", why: "the reduced key must keep the instance in flight (its stores, anchor and bookkeeping), and the signatures its keys"},
		{wrong: "by", why: "a combo's known findings are its own: the subtree's overstate a state that stands for fewer combos"},
		{wrong: "partial", why: "a state is counted from the stored combos only when every one of its combos is stored"},
	} {
		name := tc.wrong + tc.drop
		caught := false
		for i, sc := range scs {
			splitWrong, lzStateDrop = tc.wrong, tc.drop
			// (An internal error is caught too: a combo's totals that do
			// not add up.)
			got := ""
			_, err := Explore(sc, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep})
			if err == nil {
				got, _ = lazyView(t, sc, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep})
			}
			splitWrong, lzStateDrop = "", ""
			if err != nil || got != want[i] {
				t.Logf("%s: caught on %s (%v)", name, sc.Name, err)
				caught = true
				break
			}
		}
		if !caught {
			t.Errorf("%s not caught: %s", name, tc.why)
		}
	}
}

// TestSplitBlockRoundTrip: a block gives back the totals stored in it,
// packed two counts to a word, after it grew; the block it left behind
// serves a new one; a combo whose counts do not fit 32 bits is not stored
// (the table closes) and its state then misses.
func TestSplitBlockRoundTrip(t *testing.T) {
	sp := &splitter{splitTable: newSplitTable(100, false)}
	k := stateKey{1, 2}
	const p0 = 3
	prog, other := combo{o: -1}, combo{site: 1, o: 2}
	want := map[combo]totals{
		prog:  {runs: 5, points: 5*p0 + 7, viol: 1, runsK: 4, violK: 1},
		other: {runs: math.MaxUint32, points: 10 * math.MaxUint32, viol: math.MaxUint32 - 1, runsK: 3, violK: 2},
	}
	// Stored one at a time: the second store grows the block.
	for i, c := range []combo{prog, other} {
		kd := &keyed{k: k, p0: p0, sp: []splitCombo{{c: c, sig: uint64(11 * (i + 1))}}}
		sp.store(kd, []weighted{{c: c, t: want[c]}}, nil)
	}
	pts := []splitCombo{{c: prog, sig: 11}, {c: other, sig: 22}}
	if !sp.take(pts, k, p0) {
		t.Fatal("a state whose two combos were stored missed")
	}
	for _, w := range sp.hit {
		if w.t != want[w.c] {
			t.Errorf("combo %+v: got %+v back, stored %+v", w.c, w.t, want[w.c])
		}
	}
	// The block left behind by the growth serves the next new block,
	// without what it held.
	k2 := stateKey{3, 4}
	third := combo{site: 3, o: 1}
	t3 := totals{runs: 7, points: 7 * p0, runsK: 7}
	sp.store(&keyed{k: k2, p0: p0, sp: []splitCombo{{c: third, sig: 44}}}, []weighted{{c: third, t: t3}}, nil)
	if n := len(sp.spare[1]); n != 0 {
		t.Errorf("%d blocks of room 1 left spare after a new block of room 1 was made", n)
	}
	if !sp.take([]splitCombo{{c: third, sig: 44}}, k2, p0) || len(sp.hit) != 1 || sp.hit[0].t != t3 {
		t.Errorf("a block made from a spare one read back %+v, stored %+v", sp.hit, t3)
	}
	if sp.take([]splitCombo{{c: prog, sig: 11}}, k2, p0) {
		t.Error("a block made from a spare one holds a combo of the block it was")
	}
	if !sp.take(pts, k, p0) || len(sp.hit) != 2 {
		t.Error("the grown block lost its combos when its old block was taken again")
	}
	wide := combo{site: 2, o: 1}
	kd := &keyed{k: k, p0: p0, sp: []splitCombo{{c: wide, sig: 33}}}
	sp.store(kd, []weighted{{c: wide, t: totals{runs: math.MaxUint32 + 1}}}, nil)
	if !sp.closed.Load() {
		t.Error("a combo of more than 2^32 schedules was stored, or refused without closing the table")
	}
	if sp.take(append(pts, splitCombo{c: wide, sig: 33}), k, p0) {
		t.Error("a state with a combo too wide to store hit")
	}
}
