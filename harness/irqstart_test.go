package harness

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// countIRQStarts is the hooks that count the runs that start at an
// interrupt's entry (starts) and their catch-ups (catches).
func countIRQStarts() (h *testHooks, starts, catches *atomic.Int64) {
	starts, catches = new(atomic.Int64), new(atomic.Int64)
	return &testHooks{irqStarts: starts, catchUps: catches}, starts, catches
}

// TestIRQStartSound: runs that start at an interrupt's entry
// (irqstart.go) leave the counts, verdicts, known findings, coverage and
// first violation as they are without them, in every mode of the
// soundness tests (cache_test.go: std and peer-spin complete, every
// catalogue mutant at C=1 and to its first kill), with the cache and
// merged placements; both starts and catch-ups happen.
func TestIRQStartSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h, starts, catches := countIRQStarts()
	for i, sc := range soundScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			for _, m := range soundModes(i, sc) {
				m.opt.Cache, m.opt.MergeRemotes = true, true // the runs start only with the cache
				off := exploredFull(t, m.sc, hooked(m.opt, &testHooks{noIRQStart: true}))
				if on := exploredFull(t, m.sc, hooked(m.opt, h)); on != off {
					t.Errorf("%s: runs that start at an interrupt change the result:\nwithout:\n%s\nwith:\n%s", m.name, off, on)
				}
			}
		})
	}
	t.Logf("%d runs started at an interrupt's entry, %d of them caught up", starts.Load(), catches.Load())
	if starts.Load() < 1000 || catches.Load() == 0 {
		t.Errorf("%d runs started at an interrupt's entry, %d caught up: too few to tell", starts.Load(), catches.Load())
	}
}

// TestIRQStartCaught: a catch-up that leaves the data as its replay made
// it (not as it was after the interrupt) changes std's result, and the
// comparison sees it.
func TestIRQStartCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	off := exploredFull(t, sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true}, &testHooks{noIRQStart: true}))
	opt := hooked(ExploreOptions{Cache: true, MergeRemotes: true}, &testHooks{irqStartDrop: "data"})
	if _, err := Explore(sc, opt); err != nil {
		t.Logf("caught: %v", err)
		return
	}
	if on := exploredFull(t, sc, opt); on == off {
		t.Errorf("a catch-up that leaves out the data went unnoticed")
	}
}

// TestIRQStartLazySound: with lazy region orders, runs that start at an
// interrupt's entry leave the counts, verdicts, known findings, coverage
// and first violation as they are without them, on lazyScenarios (std and
// peer-spin, each with every catalogue mutant) and on peer-spin at K=3;
// both starts and catch-ups happen, interrupts that came inside a task's
// pending instance among them (instSnap). std, peer-spin, peer-spin K=3
// and the mutants of std at C=1 are explored completely (every violation
// of every run counted); the mutants of peer-spin to their first kill,
// but M-push-barrier2, whose kills are no-alias's only, so that it runs
// to the end (10-20 s each way; TestLazySound compares it, starts on,
// with the eager engine).
func TestIRQStartLazySound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice with lazy orders")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h, starts, catches := countIRQStarts()
	k3 := PeerSpin(fgraph.Latest)
	k3.Name, k3.Bound.K = "peer-spin K=3", 3
	for _, sc := range append(lazyScenarios(), k3) {
		if sc.Name == "peer-spin.M-push-barrier2" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			opt := ExploreOptions{Cache: true, LazyOrders: true, RunOptions: RunOptions{KeepGoing: true}}
			if strings.HasPrefix(sc.Name, "peer-spin.") { // lazyScenarios names peer-spin's mutants "peer-spin.M..."
				opt = ExploreOptions{Cache: true, LazyOrders: true, StopAtFirst: true}
			}
			off := exploredFull(t, sc, hooked(opt, &testHooks{noIRQStart: true}))
			if on := exploredFull(t, sc, hooked(opt, h)); on != off {
				t.Errorf("runs that start at an interrupt change the lazy engine's result:\nwithout:\n%s\nwith:\n%s", off, on)
			}
		})
	}
	t.Logf("%d runs started at an interrupt's entry, %d of them caught up", starts.Load(), catches.Load())
	if starts.Load() < 1000 || catches.Load() < 100 {
		t.Errorf("%d runs started at an interrupt's entry, %d caught up: too few to tell", starts.Load(), catches.Load())
	}
}

// TestIRQStartLazyCaught: with lazy orders, starts and catch-ups that
// leave the pending regions as the run had them, and starts that leave the
// task's pending instance as the pool's record holds it (the last run to
// use it filled it), instead of putting back the entry snap's, are
// caught on peer-spin: the exploration stops with an internal error (the
// combos' totals, or the catch-up's check of the instance) or its result
// differs.
func TestIRQStartLazyCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := PeerSpin(fgraph.Latest)
	opt := ExploreOptions{Cache: true, LazyOrders: true, RunOptions: RunOptions{KeepGoing: true}}
	off := exploredFull(t, sc, hooked(opt, &testHooks{noIRQStart: true}))
	for _, drop := range []string{"pending", "instance"} {
		t.Run(drop, func(t *testing.T) {
			opt := hooked(opt, &testHooks{irqStartDrop: drop})
			if _, err := Explore(sc, opt); err != nil {
				t.Logf("caught: %v", err)
				return
			}
			if on := exploredFull(t, sc, opt); on == off {
				t.Errorf("starts that leave out the %s went unnoticed", drop)
			}
		})
	}
}
