package harness

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestAloneNeverHits: the states alone leaves out (cache.go: no remote
// action taken, every interrupt taken still running or just returned)
// are looked up (aloneProbe), on every mode of TestAfterEventSound (std
// and peer-spin, every engine, a mutant found inside interrupts), and
// none of those lookups hits: leaving them out loses no hit. There are
// such states in every mode, and the outcome with them left out is the
// outcome with them looked up.
func TestAloneNeverHits(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std and peer-spin sixteen times")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	for _, m := range afterEventModes(t) {
		t.Run(m.name, func(t *testing.T) {
			var n aloneCounts
			probed := afterEventOutcome(t, soundMode{m.name, m.sc, hooked(m.opt, &testHooks{aloneProbe: &n})})
			with := afterEventOutcome(t, m)
			lookups, hits := n.lookups.Load(), n.hits.Load()
			if hits != 0 {
				t.Errorf("%d of the %d lookups alone leaves out hit", hits, lookups)
			}
			if lookups == 0 {
				t.Errorf("no state of the exploration is alone: the rule is not exercised")
			}
			if with.String() != probed.String() {
				t.Errorf("leaving out the lookups of states that are alone changes the result:\nwith them:\n%s\nwithout:\n%s", probed, with)
			}
			t.Logf("%d lookups left out, none would hit", lookups)
		})
	}
}

// TestAloneWrongCaught: wrong rules are seen to leave out lookups that
// hit, on std (where remote actions are placed and two interrupts
// return): a state after a remote action taken for one no other path
// reaches, or a state after an interrupt that returned before the last
// one.
func TestAloneWrongCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	for _, wrong := range []string{"remote", "returned"} {
		t.Run(wrong, func(t *testing.T) {
			var n aloneCounts
			explored(t, Standard(fgraph.Latest), hooked(ExploreOptions{Cache: true}, &testHooks{aloneProbe: &n, aloneWrong: wrong}))
			if n.hits.Load() == 0 {
				t.Fatalf("the wrong rule went unnoticed: none of its %d lookups hit", n.lookups.Load())
			}
			t.Logf("the wrong rule: %d of its %d lookups hit", n.hits.Load(), n.lookups.Load())
		})
	}
}

// TestAloneStoresFewer: on std at its default bound, leaving out the
// states that are alone makes fewer lookups and stores fewer states, for
// the same runs and hits.
func TestAloneStoresFewer(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc, opt := Standard(fgraph.Latest), ExploreOptions{Cache: true}
	_, all := exploredSummary(t, sc, hooked(opt, &testHooks{noAlone: true}))
	_, some := exploredSummary(t, sc, opt)
	a, s := all.Cache, some.Cache
	if s.Lookups >= a.Lookups || s.States >= a.States || s.Hits != a.Hits || some.Executed != all.Executed {
		t.Errorf("with the states that are alone left out: %d lookups, %d hits, %d states, %d runs; looked up: %d, %d, %d, %d; want fewer lookups and states, the same hits and runs",
			s.Lookups, s.Hits, s.States, some.Executed, a.Lookups, a.Hits, a.States, all.Executed)
	}
	t.Logf("lookups %d instead of %d, states stored %d instead of %d", s.Lookups, a.Lookups, s.States, a.States)
}
