package harness

import (
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// quietIRQ is peer-spin with an interrupt that only walks the stack, run
// with the oracles off: the interrupt leaves no trace in the state (no
// store, no clock read, no pending in-place check), so the state right
// after it equals the state at the same yield of a run that took the same
// interrupt earlier, whose options at that yield are still ahead; only the
// mark afterEvent sets tells them apart.
func quietIRQ() (*Scenario, ExploreOptions) {
	sc := PeerSpin(fgraph.Latest)
	sc.Name = "peer-spin, an unwind-only interrupt"
	sc.IRQ = []Op{{OpUnwind, 0}}
	return sc, ExploreOptions{Cache: true, RunOptions: RunOptions{NoOracles: true}}
}

// afterEventModes are the explorations the tests of the lookups after an
// interrupt (cache.go, afterEvent) run both ways: std and peer-spin
// complete (KeepGoing: every violation of every run counted), with each
// engine that meets them (merged remote placements on std, lazy orders),
// a mutant whose violations are found inside interrupts, and quietIRQ.
func afterEventModes(t *testing.T) []soundMode {
	mi, err := fgraph.LookupMutant("M-push-barrier1")
	if err != nil {
		t.Fatal(err)
	}
	keep := RunOptions{KeepGoing: true}
	mut := Standard(fgraph.Latest)
	mut.Mutant = mi.Mutant
	mutPS := PeerSpin(fgraph.Latest)
	mutPS.Mutant = mi.Mutant
	qsc, qopt := quietIRQ()
	return []soundMode{
		{"std", Standard(fgraph.Latest), ExploreOptions{Cache: true, RunOptions: keep}},
		{"std merged", Standard(fgraph.Latest), ExploreOptions{Cache: true, MergeRemotes: true, RunOptions: keep}},
		{"std lazy", Standard(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
		{"M-push-barrier1 merged", mut, ExploreOptions{Cache: true, MergeRemotes: true, RunOptions: keep}},
		{"peer-spin", PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, RunOptions: keep}},
		{"peer-spin lazy", PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
		{"peer-spin M-push-barrier1 lazy", mutPS, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
		{"quiet interrupt", qsc, qopt},
	}
}

// afterEventOutcome is the outcome compared: the lazy engine's choice-point
// count is no count of the schedules' choice points (docs/lazy-orders.md),
// so it is left out there.
func afterEventOutcome(t *testing.T, m soundMode) outcome {
	t.Helper()
	o := explored(t, m.sc, m.opt)
	if m.opt.LazyOrders {
		o.points = 0
	}
	return o
}

// TestAfterEventSound: the cached explorer with the lookups right after an
// interrupt returns and without them gives the same schedule, choice-point,
// violation and known-finding counts, verdicts, sites interrupted and first
// violation; and the lookups hit, a thousand times at least but in
// quietIRQ. The lookups between an interrupt's ops are off in both
// explorations: they stop many runs before the interrupt returns
// (TestBetweenOpsSound compares the explorer with them and without them,
// these lookups on). (TestCacheSound
// holds the explorer with them to the plain one on every catalogue mutant,
// and TestCacheVerifyEverySubtree explores every stored subtree again.)
func TestAfterEventSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	var n atomic.Int64
	h := &testHooks{afterEvHits: &n, noBetweenOps: true}
	eachModeWithout(t, h, &h.noAfterEvent, func(t *testing.T, m soundMode, without, with outcome) {
		hits := n.Swap(0) // the lookups are off in the exploration without them
		if with.String() != without.String() {
			t.Errorf("the lookups after interrupts change the result:\nwithout:\n%s\nwith:\n%s", without, with)
		}
		if hits < 1000 && !m.opt.NoOracles { // quietIRQ's states after an interrupt are all new
			t.Errorf("%d hits right after an interrupt, want a thousand at least", hits)
		}
		t.Logf("%d hits right after an interrupt", hits)
	})
}

// TestAfterEventNestedSound: the lookups right after an interrupt returns
// into another interrupt, left out (afterEvent), give the same outcome
// when they are made (afterEvNested) on every mode of TestAfterEventSound;
// and leaving them out stores fewer states (peer-spin at K=3 with lazy
// orders) with the same runs. (At K=2 every such point is alone, cache.go:
// the nested interrupt that just returned is the only one that has, and
// its parent still runs. At K=3 an interrupt can have returned before.)
func TestAfterEventNestedSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.afterEvNested, "leaving out the lookups back inside an interrupt")
	sc, opt := PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true}
	sc.Bound.K = 3
	var on *Summary
	withSet(t, h, &h.afterEvNested, func() { _, on = exploredSummary(t, sc, hooked(opt, h)) })
	_, off := exploredSummary(t, sc, opt)
	if off.Cache.States >= on.Cache.States || off.Executed != on.Executed {
		t.Errorf("without the lookups back inside an interrupt: %d states stored and %d runs, with them %d and %d; want fewer states, the same runs",
			off.Cache.States, off.Executed, on.Cache.States, on.Executed)
	}
	t.Logf("states stored: %d without the lookups back inside an interrupt, %d with them", off.Cache.States, on.Cache.States)
}

// eachModeWithout explores each of afterEventModes with *off set (the
// explorer without the part under test; off is a field of h, which every
// exploration carries) and then as it is, and hands f the two outcomes.
func eachModeWithout(t *testing.T, h *testHooks, off *bool, f func(t *testing.T, m soundMode, without, with outcome)) {
	if testing.Short() {
		t.Skip("explores std and peer-spin sixteen times")
	}
	for _, m := range afterEventModes(t) {
		m.opt = hooked(m.opt, h)
		t.Run(m.name, func(t *testing.T) {
			var without outcome
			withSet(t, h, off, func() { without = afterEventOutcome(t, m) })
			f(t, m, without, afterEventOutcome(t, m))
		})
	}
}

// sameWithout explores each of afterEventModes with *off set (a field of
// h) and as it is, and requires the same outcome; what names the part
// under test.
func sameWithout(t *testing.T, h *testHooks, off *bool, what string) {
	eachModeWithout(t, h, off, func(t *testing.T, _ soundMode, without, with outcome) {
		if with.String() != without.String() {
			t.Errorf("%s changes the result:\nwithout:\n%s\nwith:\n%s", what, without, with)
		}
	})
}

// caughtWith explores afterEventModes' exploration named name as it is and
// with *wrong set (a wrong rule of the part under test, a field of h), and
// requires the outcomes to differ; a crash of the wrong rule (an internal
// error) is caught too. what names the wrong rule.
func caughtWith(t *testing.T, name string, h *testHooks, wrong *bool, what string) {
	for _, m := range afterEventModes(t) {
		if m.name != name {
			continue
		}
		m.opt = hooked(m.opt, h)
		t.Run(m.name, func(t *testing.T) {
			want := afterEventOutcome(t, m)
			var got outcome
			func() {
				defer func() {
					if x := recover(); x != nil {
						t.Logf("panicked: %v", x)
						got.runs = -1
					}
				}()
				withSet(t, h, wrong, func() {
					if _, err := Explore(m.sc, m.opt); err != nil {
						t.Logf("internal error: %v", err)
						got.runs = -1
						return
					}
					got = afterEventOutcome(t, m)
				})
			}()
			if got.String() == want.String() {
				t.Fatalf("%s went unnoticed: %d schedules", what, got.runs)
			}
			t.Logf("%s:\n%s\ninstead of\n%s", what, got, want)
		})
		return
	}
	t.Fatalf("no exploration %q in afterEventModes", name)
}

// TestAfterEventUnmarkedCaught: without the mark that tells the state right
// after an interrupt from a choice point's at the same yield (whose
// options are still ahead), the two merge where nothing else tells them
// apart (quietIRQ), and the comparison catches it. (With the oracles on,
// the in-place check an interrupt leaves pending tells them apart too:
// there the mark changes no count.)
func TestAfterEventUnmarkedCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc, opt := quietIRQ()
	h := new(testHooks)
	m := soundMode{"quiet interrupt", sc, hooked(opt, h)}
	var without, with outcome
	withSet(t, h, &h.noAfterEvent, func() { without = afterEventOutcome(t, m) })
	withSet(t, h, &h.afterEvUnmarked, func() { with = afterEventOutcome(t, m) })
	if with.String() == without.String() {
		t.Fatalf("the states after interrupts without their mark went unnoticed: %d schedules", with.runs)
	}
	t.Logf("without the mark: %d schedules instead of %d", with.runs, without.runs)
}

// TestBetweenOpsSound: the cached explorer with the lookups between an
// interrupt's ops (cache.go, betweenOps) and without them gives the same
// outcome on every mode of TestAfterEventSound, and the lookups hit, a
// thousand times at least where an interrupt has two ops (quietIRQ's has
// one).
func TestBetweenOpsSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	var n atomic.Int64
	h := &testHooks{betweenOpsHits: &n}
	eachModeWithout(t, h, &h.noBetweenOps, func(t *testing.T, m soundMode, without, with outcome) {
		hits := n.Swap(0)
		if with.String() != without.String() {
			t.Errorf("the lookups between an interrupt's ops change the result:\nwithout:\n%s\nwith:\n%s", without, with)
		}
		if hits < 1000 && len(m.sc.IRQ) > 1 {
			t.Errorf("%d hits between an interrupt's ops, want a thousand at least", hits)
		}
		t.Logf("%d hits between an interrupt's ops", hits)
	})
}

// TestBetweenOpsNestedSound: the lookups between the ops of an interrupt
// nested in another, left out, give the same outcome when they are made.
func TestBetweenOpsNestedSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.betweenOpsNested, "leaving out the lookups between a nested interrupt's ops")
}

// TestBetweenOpsNoClockCaught: the point between an interrupt's ops
// looked up without moving the clock on is caught (std's known findings
// detected just after it are counted for the wrong subtrees).
func TestBetweenOpsNoClockCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	caughtWith(t, "std", h, &h.betweenOpsNoClock, "the points between an interrupt's ops looked up without moving the clock")
}
