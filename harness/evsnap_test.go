package harness

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestEvSnapsSound: the explorer with event snaps (interrupts of a
// replayed prefix restored instead of run again, evsnap.go) and without
// give the same counts, verdicts, known findings, coverage, first
// violation and schedules run, on opSnapModes' explorations (std with the
// cache and without, with merged remote placements, with a mutant whose
// violations are found inside interrupts, and peer-spin with lazy region
// orders with and without a mutant); the snaps are restored there,
// hundreds of times at least.
// (TestResumeSound and TestCacheSound hold the explorer with them to the
// one without any prefix sharing on every mutant.)
func TestEvSnapsSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	snapsSound(t, h, &h.noEvSnaps, &h.evRestores, "interrupts restored from event snaps")
}

// snapsSound explores each of opSnapModes with *off set and as it is (off
// and restores are fields of h, which every exploration carries), with
// *restores counting what is put back, and requires the same outcome and
// the same schedules run, and hundreds put back at least; what names
// those.
func snapsSound(t *testing.T, h *testHooks, off *bool, restores **atomic.Int64, what string) {
	if testing.Short() {
		t.Skip("explores std and peer-spin twelve times")
	}
	for _, c := range opSnapModes(t) {
		c.opt = hooked(c.opt, h)
		t.Run(c.name, func(t *testing.T) {
			var without string
			withSet(t, h, off, func() { without = exploredWithSchedules(t, c.sc, c.opt) })
			var n atomic.Int64
			*restores = &n
			with := exploredWithSchedules(t, c.sc, c.opt)
			*restores = nil
			if with != without {
				t.Errorf("%s change the result:\nwithout:\n%s\nwith:\n%s", what, without, with)
			}
			if n.Load() < 100 {
				t.Errorf("%d %s, want hundreds", n.Load(), what)
			}
			t.Logf("%d %s", n.Load(), what)
		})
	}
}

// TestEvSnapsIncompleteCaught: an event snap that leaves out the words
// its interrupt wrote (std), or the lazy engine's pending regions it met
// or ended (peer-spin, lazy orders), is caught: by the explorer's own
// check of a replayed prefix (a choice point that offers other options
// than before, an internal error) or by TestEvSnapsSound's comparison.
func TestEvSnapsIncompleteCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std and peer-spin twice each")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	keep := RunOptions{KeepGoing: true}
	for _, c := range []struct {
		drop string
		sc   *Scenario
		opt  ExploreOptions
	}{
		{"memory", Standard(fgraph.Latest), ExploreOptions{Cache: true, RunOptions: keep}},
		{"pending", PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
	} {
		without := exploredFull(t, c.sc, hooked(c.opt, &testHooks{noEvSnaps: true}))
		wrong := hooked(c.opt, &testHooks{evDrop: c.drop})
		if _, err := Explore(c.sc, wrong); err != nil {
			t.Logf("without the %s: %v", c.drop, err)
			continue
		}
		if got := exploredFull(t, c.sc, wrong); got == without {
			t.Errorf("event snaps without the %s went unnoticed", c.drop)
		}
	}
}

// TestOpSnapsSound: the explorer with op snaps (the completed ops of an
// interrupt in flight put back instead of run again on replay, evsnap.go)
// and without gives the same counts, verdicts, known findings, coverage
// and first violation, with the cache and without, on std (also with
// merged remote placements), on std with a mutant whose violations are
// found inside interrupts, and on peer-spin with lazy region orders (with
// and without a mutant); the snaps are put back there, hundreds of times
// at least.
func TestOpSnapsSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	snapsSound(t, h, &h.noOpSnaps, &h.opRestores, "op snaps put back")
}

// exploredWithSchedules is exploredFull with a digest of every counted
// run's schedule, in the order run: an event's position (site and
// occurrence) counts the yields of its context, which an op snap puts
// back, and no count shows a wrong one.
func exploredWithSchedules(t *testing.T, sc *Scenario, opt ExploreOptions) string {
	t.Helper()
	h := fnv.New64a()
	opt.OnRun = func(res *Result) { fmt.Fprintf(h, "%v\n", res.Schedule) }
	return fmt.Sprintf("%s\nschedules %#x", exploredFull(t, sc, opt), h.Sum64())
}

// opSnapModes are TestOpSnapsSound's explorations.
func opSnapModes(t *testing.T) []soundMode {
	mutant := func(sc *Scenario, name string) *Scenario {
		mi, err := fgraph.LookupMutant(name)
		if err != nil {
			t.Fatal(err)
		}
		sc.Mutant = mi.Mutant
		return sc
	}
	keep := RunOptions{KeepGoing: true}
	return []soundMode{
		{"std", Standard(fgraph.Latest), ExploreOptions{RunOptions: keep}},
		{"std cached", Standard(fgraph.Latest), ExploreOptions{Cache: true, RunOptions: keep}},
		{"std merged", Standard(fgraph.Latest), ExploreOptions{Cache: true, MergeRemotes: true, RunOptions: keep}},
		{"M-push-barrier1 cached", mutant(Standard(fgraph.Latest), "M-push-barrier1"), ExploreOptions{Cache: true, RunOptions: keep}},
		{"peer-spin lazy", PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
		{"peer-spin M-push-barrier1 lazy", mutant(PeerSpin(fgraph.Latest), "M-push-barrier1"), ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}},
	}
}

// TestOpSnapsIncompleteCaught: an op snap that leaves out the data (the
// words and bookkeeping the interrupt's first ops left), or the
// interrupt's context, is caught: by the explorer's own check of a
// replayed prefix (an internal error) or by TestOpSnapsSound's comparison.
func TestOpSnapsIncompleteCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std twice for each part left out")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	m := opSnapModes(t)[1]
	without := exploredWithSchedules(t, m.sc, hooked(m.opt, &testHooks{noOpSnaps: true}))
	for _, drop := range []string{"data", "context"} {
		t.Run(drop, func(t *testing.T) {
			wrong := hooked(m.opt, &testHooks{opSnapDrop: drop})
			if _, err := Explore(m.sc, wrong); err != nil {
				t.Logf("without the %s: %v", drop, err)
				return
			}
			if got := exploredWithSchedules(t, m.sc, wrong); got == without {
				t.Errorf("op snaps without the %s went unnoticed", drop)
			}
		})
	}
}

// TestOpSnapsAfterLookupVerified: with the state cache, an op snap is
// taken after the lookup between the interrupt's ops (takeOpSnap), so that
// a run that stops there takes none. Every snap so taken must be the one
// taken before the lookup, the op count, the context's digest and the
// clock as they were then: opSnapVerify fills that one too and compares
// them whole (an internal error if they differ), on every cached mode of
// TestOpSnapsSound, peer-spin K=3 included, which also gives the same
// outcome as the snaps taken before the lookups.
func TestOpSnapsAfterLookupVerified(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	modes := opSnapModes(t)
	k3 := PeerSpin(fgraph.Latest)
	k3.Bound.K = 3
	modes = append(modes, soundMode{"peer-spin K=3 lazy", k3, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: RunOptions{KeepGoing: true}}})
	for _, m := range modes {
		if !m.opt.Cache {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			early := exploredWithSchedules(t, m.sc, hooked(m.opt, &testHooks{opSnapEarly: true}))
			var n atomic.Int64
			late := exploredWithSchedules(t, m.sc, hooked(m.opt, &testHooks{opSnapVerify: true, opRestores: &n}))
			if late != early {
				t.Errorf("op snaps taken after the lookups:\n%s\nbefore them:\n%s", late, early)
			}
			if n.Load() == 0 {
				t.Errorf("no op snap was put back")
			}
			t.Logf("%d op snaps put back", n.Load())
		})
	}
}

// TestOpSnapsAfterLookupCaught: an op snap taken after the lookup with the
// clock as the lookup left it, or with the op count and digest as the next
// op's exec left them, differs from the one taken before it. The clock is
// caught by this comparison only: the explorations compared by
// TestOpSnapsSound gave the same outcome with it (every later clock of a
// run that puts such a snap back is one tail lookup on, and all of them
// come after its changed choice point, past the clocks of the points on
// its shared prefix).
func TestOpSnapsAfterLookupCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)

	m := opSnapModes(t)[1] // std cached
	for _, tc := range []struct {
		name  string
		wrong *testHooks
	}{
		{"the clock after the lookup", &testHooks{opSnapClockAfter: true}},
		{"the op count and digest after exec", &testHooks{opSnapDrop: "count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.wrong.opSnapVerify = true
			_, err := Explore(m.sc, hooked(m.opt, tc.wrong))
			if err == nil || !strings.Contains(err.Error(), "op snap after op") {
				t.Fatalf("%s went unnoticed (err %v)", tc.name, err)
			}
			t.Logf("caught: %v", err)
		})
	}
}

// TestOpSnapUseWorth: the snaps after an op stop at opSnapProbe taken
// with none put back, and go on once one was put back.
func TestOpSnapUseWorth(t *testing.T) {
	for _, tc := range []struct {
		name       string
		taken, put int32
		level, op  int
		want       bool
	}{
		{"none taken yet", 0, 0, 2, 0, true},
		{"one short of the probe", opSnapProbe - 1, 0, 2, 0, true},
		{"the probe taken, none put back", opSnapProbe, 0, 2, 0, false},
		{"the probe taken, one put back", opSnapProbe, 1, 1, 0, true},
		{"a level past the table is always taken", opSnapProbe, 0, 8, 0, true},
		{"an op past the table is always taken", opSnapProbe, 0, 2, 8, true},
	} {
		var u opSnapUse
		if tc.level < 8 && tc.op < 8 {
			u.taken[tc.level][tc.op], u.put[tc.level][tc.op] = tc.taken, tc.put
		}
		if got := u.worth(tc.level, tc.op); got != tc.want {
			t.Errorf("%s: worth(%d, %d) = %v, want %v", tc.name, tc.level, tc.op, got, tc.want)
		}
	}
}

// TestOpSnapUseKeepsRestores: the op snaps a worker stops taking
// (opSnapUse) are snaps no run would have put back: peer-spin K=2 and
// K=3 and std put back as many with the rule as with every op snap taken,
// and peer-spin K=3 takes fewer (its NMIs' snaps before their return).
func TestOpSnapUseKeepsRestores(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	k3 := PeerSpin(fgraph.Latest)
	k3.Bound.K = 3
	opt := ExploreOptions{Cache: true, LazyOrders: true}
	for _, m := range []soundMode{
		{"peer-spin", PeerSpin(fgraph.Latest), opt},
		{"peer-spin K=3", k3, opt},
		{"std", Standard(fgraph.Latest), ExploreOptions{Cache: true, MergeRemotes: true}},
	} {
		t.Run(m.name, func(t *testing.T) {
			count := func(always bool) (taken, put int64) {
				var tk, pb atomic.Int64
				h := &testHooks{opTaken: &tk, opRestores: &pb, opSnapAlways: always}
				if _, err := Explore(m.sc, hooked(m.opt, h)); err != nil {
					t.Fatal(err)
				}
				return tk.Load(), pb.Load()
			}
			taken, put := count(false)
			allTaken, allPut := count(true)
			t.Logf("op snaps taken %d (every one: %d), put back %d (%d)", taken, allTaken, put, allPut)
			if put != allPut || put == 0 {
				t.Errorf("op snaps put back: %d, with every one taken %d", put, allPut)
			}
			if m.name == "peer-spin K=3" && taken >= allTaken {
				t.Errorf("op snaps taken: %d, with every one taken %d", taken, allTaken)
			}
		})
	}
}
