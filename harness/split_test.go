package harness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
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
	t.Parallel() // its hooks are its explorations' (hooks.go)
	keep := RunOptions{KeepGoing: true}
	std1 := Standard(fgraph.Latest)
	std1.Bound.C, std1.Name = 1, "std-C1"
	k3 := PeerSpin(fgraph.Latest)
	k3.Bound.K, k3.Name = 3, "peer-spin-K3"
	var closed atomic.Int64
	full := PeerSpin(fgraph.Latest)
	full.Name = "peer-spin-full"
	for _, sc := range []*Scenario{Standard(fgraph.Latest), std1, PeerSpin(fgraph.Latest), k3, full} {
		opt := ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}
		if sc == full {
			// A table that fills up half-way: the states met after are
			// cached whole (splitTable.closed).
			opt.CacheEntries = 20000
		}
		whole, ws := lazyView(t, sc, hooked(opt, &testHooks{noSplit: true}))
		split, ss := lazyView(t, sc, hooked(opt, &testHooks{splitClosed: &closed}))
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
	t.Parallel() // its hooks are its explorations' (hooks.go)
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
			// (An internal error is caught too: a combo's totals that do
			// not add up.)
			got := ""
			opt := hooked(ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}, &testHooks{splitWrong: tc.wrong, lzStateDrop: tc.drop})
			_, err := Explore(sc, opt)
			if err == nil {
				got, _ = lazyView(t, sc, opt)
			}
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
		sp.store(kd, []weighted{{c: c, t: want[c]}}, 0)
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
	sp.store(&keyed{k: k2, p0: p0, sp: []splitCombo{{c: third, sig: 44}}}, []weighted{{c: third, t: t3}}, 0)
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
	sp.store(kd, []weighted{{c: wide, t: totals{runs: math.MaxUint32 + 1}}}, 0)
	if !sp.closed.Load() {
		t.Error("a combo of more than 2^32 schedules was stored, or refused without closing the table")
	}
	if sp.take(append(pts, splitCombo{c: wide, sig: 33}), k, p0) {
		t.Error("a state with a combo too wide to store hit")
	}
}

// TestSplitSharedConcurrent: two workers store combos in one shared table
// and look them up at the same time, without the lock (blockShared), and
// a third looks up the keys being stored. Keys get their combos two at a
// time (a point's combos, stored at once), so their blocks grow and move,
// and the index doubles under the readers. A lookup may miss a combo
// stored a moment ago; whatever it finds must be exactly what was stored,
// known findings included, and at the end every combo is found. (Run it
// with -race too: the readers' plain reads are ordered after the writes
// by the length and the index's slots, written whole.)
func TestSplitSharedConcurrent(t *testing.T) {
	const keys, combos, p0 = 3000, 6, 2
	tbl := newSplitTable(1<<20, true)
	want := func(key, ci int) (totals, knownTot) {
		runs := int64(key*combos + ci + 1)
		var kt knownTot
		if ci%2 == 1 {
			kt.d[0], kt.dk[0], kt.by[0] = runs, runs/2, uint8(ci)
			kt.d[2], kt.dk[2], kt.by[2] = 1, 0, 3
			kt.nz = 1<<0 | 1<<2
		}
		return totals{runs: runs, points: runs*p0 + int64(ci), viol: int64(ci), runsK: runs / 3, violK: int64(ci % 2)}, kt
	}
	kOf := func(key int) stateKey { return stateKey{uint64(key)*0x9e3779b97f4a7c15 + 1, uint64(key)} }
	cOf := func(ci int) splitCombo {
		return splitCombo{c: combo{site: fgraph.Site(ci), o: 1}, sig: uint64(ci)*1000 + 7}
	}
	check := func(sp *splitter, key, n int) error {
		pts := make([]splitCombo, n)
		for ci := range pts {
			pts[ci] = cOf(ci)
		}
		if !sp.take(pts, kOf(key), p0) {
			return nil // a miss costs time only
		}
		for ci, w := range sp.hit {
			wt, wk := want(key, ci)
			if w.t != wt {
				return fmt.Errorf("key %d combo %d: totals %+v, stored %+v", key, ci, w.t, wt)
			}
			var got knownTot
			if w.kt != nil {
				got = *w.kt
			}
			if got != wk {
				return fmt.Errorf("key %d combo %d: known findings %+v, stored %+v", key, ci, got, wk)
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	// A third worker looks up, again and again, the keys the writers
	// store next (a writer's keys go two by two): those whose blocks are
	// being written.
	var last atomic.Int64
	var done atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		sp := &splitter{splitTable: tbl}
		for i := 0; !done.Load(); i++ {
			key := int(last.Load()) + 1 + i%2
			if err := check(sp, key%keys, combos); err != nil && errs[2] == nil {
				errs[2] = err
			}
		}
	}()
	var writers sync.WaitGroup
	for w := 0; w < 2; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			sp := &splitter{splitTable: tbl}
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			// Four passes: the first half of the keys gets combos 0-1,
			// 2-3, 4-5 in passes 0-2, the second half in passes 1-3, so
			// that its new blocks can take those the first half's keys
			// left behind (spareBlock, once no lookup can be reading
			// them). Worker w stores its half of the keys (odd or even),
			// and looks up keys of both halves.
			for pass := 0; pass < 4; pass++ {
				for key := w; key < keys; key += 2 {
					ci := 2 * (pass - key*2/keys)
					if ci < 0 || ci >= combos {
						continue
					}
					var ws []weighted
					for cj := ci; cj < ci+2; cj++ {
						wt, wk := want(key, cj)
						w8 := weighted{c: cOf(cj).c, t: wt}
						if wk != (knownTot{}) {
							w8.kt = &wk
						}
						ws = append(ws, w8)
					}
					sp.store(&keyed{k: kOf(key), p0: p0, sp: []splitCombo{cOf(ci), cOf(ci + 1)}}, ws, 1<<0|1<<1|1<<2)
					last.Store(int64(key))
					if err := check(sp, rng.IntN(keys), 1+rng.IntN(combos)); err != nil && errs[w] == nil {
						errs[w] = err
					}
				}
			}
		}(w)
	}
	writers.Wait()
	done.Store(true)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if tbl.closed.Load() {
		t.Fatal("the table filled up")
	}
	sp := &splitter{splitTable: tbl}
	for key := 0; key < keys; key++ {
		pts := make([]splitCombo, combos)
		for ci := range pts {
			pts[ci] = cOf(ci)
		}
		if !sp.take(pts, kOf(key), p0) {
			t.Fatalf("key %d: its %d combos, all stored, missed", key, combos)
		}
		if err := check(sp, key, combos); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(*tbl.pub.Load()); n < 4096 {
		t.Errorf("an index of %d slots for %d keys: it never doubled under the readers", n, keys)
	}
	if tbl.reused == 0 {
		t.Error("no block left behind was taken again: the test did not exercise retire and reclaim")
	}
	t.Logf("%d blocks taken again from %d keys' growth", tbl.reused, keys)
}
