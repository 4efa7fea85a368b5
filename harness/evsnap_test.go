package harness

import (
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// withoutEvSnaps runs f with the event snaps off.
func withoutEvSnaps(f func()) {
	noEvSnaps = true
	defer func() { noEvSnaps = false }()
	f()
}

// TestEvSnapsSound: the explorer with event snaps (interrupts of a
// replayed prefix restored instead of run again, evsnap.go) and without
// give the same counts, verdicts, known findings, coverage and first
// violation, with the cache and without, on std (complete, KeepGoing) and
// on std with a mutant whose violations are found inside interrupts; the
// snaps are restored there, hundreds of times.
// (TestResumeSound and TestCacheSound hold the explorer with them to the
// one without any prefix sharing on every mutant.)
func TestEvSnapsSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std four times")
	}
	for _, c := range []struct {
		name   string
		mutant string
		bound  int
		cache  bool
	}{
		{"std", "", 2, false},
		{"std cached", "", 2, true},
		{"M-push-barrier1 cached", "M-push-barrier1", 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := Standard(fgraph.Latest)
			sc.Bound.C = c.bound
			if c.mutant != "" {
				mi, err := fgraph.LookupMutant(c.mutant)
				if err != nil {
					t.Fatal(err)
				}
				sc.Mutant = mi.Mutant
			}
			opt := ExploreOptions{Cache: c.cache, RunOptions: RunOptions{KeepGoing: true}}
			var without string
			withoutEvSnaps(func() { without = exploredFull(t, sc, opt) })
			var n atomic.Int64
			evRestores = &n
			with := exploredFull(t, sc, opt)
			evRestores = nil
			if with != without {
				t.Errorf("event snaps change the result:\nwithout:\n%s\nwith:\n%s", without, with)
			}
			if n.Load() < 100 {
				t.Errorf("%d interrupts restored from event snaps, want hundreds", n.Load())
			}
			t.Logf("%d interrupts restored", n.Load())
		})
	}
}

// TestEvSnapsIncompleteCaught: an event snap that leaves out the words
// its interrupt wrote is caught: by the explorer's own check of a replayed
// prefix (a choice point that offers other options than before, an
// internal error) or by TestEvSnapsSound's comparison.
func TestEvSnapsIncompleteCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std twice")
	}
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{Cache: true, RunOptions: RunOptions{KeepGoing: true}}
	var without string
	withoutEvSnaps(func() { without = exploredFull(t, sc, opt) })
	evDrop = "memory"
	defer func() { evDrop = "" }()
	if _, err := Explore(sc, opt); err != nil {
		t.Logf("without the memory: %v", err)
		return
	}
	if got := exploredFull(t, sc, opt); got == without {
		t.Error("event snaps without the words their interrupt wrote went unnoticed")
	}
}
