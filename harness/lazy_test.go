package harness

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// lazyView is what the lazy order engine must report as the eager one
// does: the schedule, violation and known-finding counts under both
// compiler models, the (oracle, known finding) verdicts, the oracles of
// the violations and the sites interrupted. (Not the choice points nor
// the first violation's place: a lazy run stands for many schedules.)
func lazyView(t *testing.T, sc *Scenario, opt ExploreOptions) (string, *Summary) {
	t.Helper()
	o, s := exploredSummary(t, sc, opt)
	return fmt.Sprintf("runs %d violations %d known {%s} kbuild %d/%d %v\nverdicts %v\nsites %v",
		o.runs, o.viol, o.known, s.Kbuild.Runs, s.Kbuild.Violations, sortedCounts(s.Kbuild.Known), o.verdicts, o.sites), s
}

func sortedCounts(m map[string]int64) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return out
}

// lazyScenarios are std, peer-spin, and each with every catalogue entry:
// std at C=1 (cheap: its regions are seldom reordered), peer-spin whole
// (where the orders are most of the space).
func lazyScenarios() []*Scenario {
	out := []*Scenario{Standard(fgraph.Latest), PeerSpin(fgraph.Latest)}
	for _, mi := range fgraph.Catalogue {
		sc := Standard(fgraph.Latest)
		sc.Mutant, sc.Name, sc.Bound.C = mi.Mutant, "std."+mi.Name, 1
		ps := PeerSpin(fgraph.Latest)
		ps.Mutant, ps.Name = mi.Mutant, "peer-spin."+mi.Name
		out = append(out, sc, ps)
	}
	return out
}

// TestLazySound: the lazy order engine and the eager one (both with the
// state cache) report the same counts and verdicts on std, peer-spin and
// each with every catalogue mutant, every violation of every run counted
// (KeepGoing). Every failing lazy run was run again with one of its
// orders on the way (lzMaterialize, which fails the test with an
// internal error if that run does not fail the same way); the first one
// must replay from its file. On peer-spin the lazy engine must run fewer
// schedules: that is what it is for. Lazy orders with merged remote
// placements too, where the scenario has remote actions (std; peer-spin
// has none).
func TestLazySound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	keep := RunOptions{KeepGoing: true}
	for _, sc := range lazyScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			eager, es := lazyView(t, sc, ExploreOptions{Cache: true, RunOptions: keep})
			lazy, ls := lazyView(t, sc, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep})
			if eager != lazy {
				t.Fatalf("lazy orders differ from eager:\neager:\n%s\nlazy:\n%s", eager, lazy)
			}
			if len(sc.Remotes) > 0 {
				// (peer-spin has no remote action: merging would run
				// the lazy exploration again, a third of this test's
				// time.)
				both, _ := lazyView(t, sc, ExploreOptions{Cache: true, LazyOrders: true, MergeRemotes: true, RunOptions: keep})
				if eager != both {
					t.Fatalf("lazy orders with merged remote placements differ from eager:\neager:\n%s\nlazy, merged:\n%s", eager, both)
				}
			}
			if sc.Name == "peer-spin" && ls.Executed*3 > es.Executed {
				t.Errorf("peer-spin: the lazy engine ran %d schedules, the eager one %d: want a third at most", ls.Executed, es.Executed)
			}
			if ls.First != nil {
				checkReplays(t, sc, ls.First)
			}
		})
	}
}

// TestLazyPickOrderDependent: a later instance of a pending region whose
// oracle bookkeeping depends on its order, though its first's did not
// (std with F2 at C=2: an instance of push.w4's region buffers
// enter.restore twice), makes each live option its own run (lzPick). Until 7
// Dec 2026 that was an internal error, in `fgcheck explore --mutant F2
// --keep-going` too. The counts must be the eager engine's, with merged
// remote placements and without.
func TestLazyPickOrderDependent(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std with F2 at C=2 three times")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	sc := Standard(fgraph.Latest)
	sc.Mutant, sc.Name = fgraph.MF2, "std.F2"
	keep := RunOptions{KeepGoing: true}
	eager, _ := lazyView(t, sc, ExploreOptions{Cache: true, RunOptions: keep})
	for _, merged := range []bool{false, true} {
		lazy, _ := lazyView(t, sc, ExploreOptions{Cache: true, LazyOrders: true, MergeRemotes: merged, RunOptions: keep})
		if lazy != eager {
			t.Errorf("merged placements %v: lazy orders differ from eager:\neager:\n%s\nlazy:\n%s", merged, eager, lazy)
		}
	}
}

// checkReplays requires res's schedule file to replay to a violation of
// res's first oracle.
func checkReplays(t *testing.T, sc *Scenario, res *Result) {
	t.Helper()
	f := &File{Scenario: sc, Schedule: res.Schedule}
	g, err := ParseFile("first", f.Format())
	if err != nil {
		t.Fatalf("the first violation's file does not parse: %v", err)
	}
	rr, err := Replay(g, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Failed() || rr.Violations[0].Oracle != res.Violations[0].Oracle {
		t.Errorf("the first violation (%s) replays to %v:\n%s", res.Violations[0], rr.Violations, f.Format())
	}
}

// TestLazyWithoutCache: the lazy engine needs no state cache (explore
// --orders lazy where the cache is off, E > 1): its weighted counts are
// the plain DFS's.
func TestLazyWithoutCache(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin and std at C=1 twice without the cache")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	keep := RunOptions{KeepGoing: true}
	std := Standard(fgraph.Latest)
	std.Bound.C = 1
	for _, sc := range []*Scenario{PeerSpin(fgraph.Latest), std} {
		plain, _ := lazyView(t, sc, ExploreOptions{RunOptions: keep})
		lazy, ls := lazyView(t, sc, ExploreOptions{LazyOrders: true, RunOptions: keep})
		if plain != lazy {
			t.Errorf("%s: lazy orders without the cache differ from the plain DFS:\nplain:\n%s\nlazy:\n%s", sc.Name, plain, lazy)
		}
		if ls.Executed >= ls.Runs {
			t.Errorf("%s: %d runs for %d schedules: a lazy run stands for more than one", sc.Name, ls.Executed, ls.Runs)
		}
	}
}

// TestLazyCheckCrash: a check that crashes (a Go panic, the panic
// oracle's violation in a real run) in a state only some orders reach:
// push's retp rewritten before its func. The sandbox recovers from it and
// tells those orders apart; the lazy engine's counts are the eager one's,
// and its failing runs fail the same way when run again (lzMaterialize).
func TestLazyCheckCrash(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := &testHooks{checkHook: func(r *runner) {
		for _, c := range r.ctxs {
			if e := c.entry; e != nil && e.pushed && e.ok[2] && !e.ok[1] {
				var none []int
				_ = none[len(r.ctxs)] // an index out of range
			}
		}
	}}
	sc := PeerSpin(fgraph.Latest)
	keep := RunOptions{KeepGoing: true, hooks: h}
	eager, es := lazyView(t, sc, ExploreOptions{Cache: true, RunOptions: keep})
	lazy, _ := lazyView(t, sc, ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep})
	if es.Violations == 0 {
		t.Fatal("the hook crashed no check: the state it waits for was not reached")
	}
	if eager != lazy {
		t.Errorf("with a crashing check, lazy orders differ from eager:\neager:\n%s\nlazy:\n%s", eager, lazy)
	}
}

// TestLazyFirstKill: stopped at the first violation under kbuild, the
// lazy engine kills every non-control mutant the eager one kills at the
// std bound, with a schedule that replays.
func TestLazyFirstKill(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std with every mutant")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			continue
		}
		sc := Standard(fgraph.Latest)
		sc.Mutant = mi.Mutant
		s, err := Explore(sc, ExploreOptions{Cache: true, LazyOrders: true, StopAtFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		if s.First == nil {
			t.Errorf("%s: not killed by the lazy engine", mi.Name)
			continue
		}
		checkReplays(t, sc, s.First)
	}
}

// TestLazyIncompleteStateCaught: the state cache must know the pending
// regions (their live options) and, inside an instance, what its other
// options would do; leaving either out is caught by the comparison with
// the eager engine (the pending regions on peer-spin; the instance in
// flight on std, where peer-spin does not show it).
func TestLazyIncompleteStateCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin and std three times")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	keep := RunOptions{KeepGoing: true}
	scs, want := eagerViews(t, keep)
	for _, drop := range []string{"pending", "instance"} {
		caught := false
		for i, sc := range scs {
			// The whole state, as it is keyed without the totals per
			// combo (TestSplitWrongRulesCaught tests those).
			h := &testHooks{noSplit: true, lzStateDrop: drop}
			got, _ := lazyView(t, sc, hooked(ExploreOptions{Cache: true, LazyOrders: true, RunOptions: keep}, h))
			if got != want[i] {
				t.Logf("without the %s: %s differs", drop, sc.Name)
				caught = true
				break
			}
		}
		if !caught {
			t.Errorf("a state without the %s was not caught", drop)
		}
	}
}

// eagerViews is peer-spin and std, with the eager engine's outcome of
// each (lazyView), for the tests of a wrong rule of the lazy engine.
func eagerViews(t *testing.T, keep RunOptions) ([]*Scenario, []string) {
	t.Helper()
	scs := []*Scenario{PeerSpin(fgraph.Latest), Standard(fgraph.Latest)}
	var want []string
	for _, sc := range scs {
		w, _ := lazyView(t, sc, ExploreOptions{Cache: true, RunOptions: keep})
		want = append(want, w)
	}
	return scs, want
}

// TestLazySnapWithoutPendingCaught: a snap that forgets the pending
// regions is caught (an internal error of a replayed prefix, or other
// counts than the eager engine's on peer-spin).
func TestLazySnapWithoutPendingCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := PeerSpin(fgraph.Latest)
	want, _ := lazyView(t, sc, ExploreOptions{Cache: true})
	wrong := hooked(ExploreOptions{Cache: true, LazyOrders: true}, &testHooks{snapDrop: "pending"})
	if _, err := Explore(sc, wrong); err != nil {
		t.Logf("without the pending regions: %v", err)
		return
	}
	if got, _ := lazyView(t, sc, wrong); got == want {
		t.Error("a snap without the pending regions went unnoticed")
	}
}

// TestLazyWorkersAndShards: two workers, and three shards merged, give
// one worker's totals.
func TestLazyWorkersAndShards(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin five times")
	}
	sc := PeerSpin(fgraph.Latest)
	opt := ExploreOptions{Cache: true, LazyOrders: true}
	one, _ := lazyView(t, sc, opt)
	opt.Workers = 2
	if two, _ := lazyView(t, sc, opt); two != one {
		t.Errorf("two workers:\n%s\none:\n%s", two, one)
	}
	var runs, kb int64
	known := map[string]int64{}
	for i := range 3 {
		s, err := Explore(sc, ExploreOptions{Cache: true, LazyOrders: true, Shard: i, Shards: 3})
		if err != nil {
			t.Fatal(err)
		}
		runs, kb = runs+s.Runs, kb+s.Kbuild.Runs
		for k, n := range s.Known {
			known[k] += n
		}
	}
	s, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if runs != s.Runs || kb != s.Kbuild.Runs || !maps.Equal(known, s.Known) {
		t.Errorf("three shards: %d schedules (%d kbuild) %v; one exploration: %d (%d) %v", runs, kb, known, s.Runs, s.Kbuild.Runs, s.Known)
	}
}

// TestLazyCheckpointResume: an exploration stopped after some runs and
// resumed from its checkpoint ends with the totals of one that was not.
func TestLazyCheckpointResume(t *testing.T) {
	sc := PeerSpin(fgraph.Latest)
	whole, err := Explore(sc, ExploreOptions{Cache: true, LazyOrders: true})
	if err != nil {
		t.Fatal(err)
	}
	var cp *Checkpoint
	opt := ExploreOptions{Cache: true, LazyOrders: true, MaxRuns: 2000, Checkpoint: func(c *Checkpoint) { cp = c }}
	part, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if part.Complete || cp == nil {
		t.Fatalf("a stop after 2000 runs: complete %v, checkpoint %v", part.Complete, cp != nil)
	}
	opt.MaxRuns, opt.Resume = 0, cp
	rest, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rest.Runs != whole.Runs || rest.Kbuild.Runs != whole.Kbuild.Runs || !maps.Equal(rest.Known, whole.Known) {
		t.Errorf("resumed: %d schedules (%d kbuild) %v; whole: %d (%d) %v", rest.Runs, rest.Kbuild.Runs, rest.Known, whole.Runs, whole.Kbuild.Runs, whole.Known)
	}
}

// TestLazySandboxReuse: the sandboxes a run takes over from the previous
// one (reuse.go) are the ones it would find itself: with the check on,
// each reused sandbox is run again and compared.
func TestLazySandboxReuse(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := &testHooks{lzVerifyReuse: true}
	for _, sc := range []*Scenario{PeerSpin(fgraph.Latest), Standard(fgraph.Latest)} {
		if _, err := Explore(sc, hooked(ExploreOptions{Cache: true, LazyOrders: true}, h)); err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
	}
	if h.lzReuseChecked.Load() == 0 {
		t.Fatal("no reused sandbox was checked")
	}
}

// TestEsum: the schedules a run with pending regions stands for.
func TestEsum(t *testing.T) {
	for _, c := range []struct {
		m    []int
		J    int
		want int64
		why  string
	}{
		{nil, 1, 1, "no pending region: program order"},
		{[]int{23}, 1, 24, "one region, one order left in the budget: program order or one of 23"},
		{[]int{23}, 0, 1, "no order left: program order only"},
		{[]int{23, 1}, 1, 25, "R=1: at most one region reordered"},
		{[]int{23, 1}, 2, 48, "R=2: both may be, 24 x 2"},
		{[]int{3, 4, 5}, 5, 120, "J above the regions: every combination, 4 x 5 x 6"},
		{[]int{2}, -1, 0, "a spent budget below zero stands for nothing"},
	} {
		if got := esum(c.m, c.J); got != c.want {
			t.Errorf("esum(%v, %d) = %d, want %d: %s", c.m, c.J, got, c.want, c.why)
		}
	}
}

// TestLazyCleanSound: a sandbox whose checks are all clean by the readers'
// memos finds its options' keys without committing them (lzClean), and
// the explorations of afterEventModes give what committing every option
// gave; so they do with the sets looked up in readerSeen left out
// (lzCleanSets).
func TestLazyCleanSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.lzSimulateAll, "the keys of sandboxes whose checks are all clean")
	h = new(testHooks)
	sameWithout(t, h, &h.lzCleanNoSets, "the sets of a sandbox looked up in readerSeen")
}

// TestLazyCleanVerified: on std, peer-spin (K=2 and K=3) and peer-spin
// with a barrier of the push dropped (M-push-barrier1), every sandbox that lzClean
// leaves uncommitted is committed after all (lzVerifyClean) and finds
// the keys and clean sets lzCleanKeys gave; there are such sandboxes.
// (TestLazyCleanSound compares whole explorations with and without it,
// and TestLazySound, every mutant, with the eager engine.)
func TestLazyCleanVerified(t *testing.T) {
	if testing.Short() {
		t.Skip("explores peer-spin at K=3 with every sandbox committed twice")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	k3 := PeerSpin(fgraph.Latest)
	k3.Name, k3.Bound.K = "peer-spin K=3", 3
	scs := []*Scenario{Standard(fgraph.Latest), PeerSpin(fgraph.Latest), k3}
	for _, sc := range lazyScenarios() {
		if sc.Name == "peer-spin.M-push-barrier1" {
			scs = append(scs, sc)
		}
	}
	if len(scs) != 4 {
		t.Fatalf("%d explorations, want 4: the mutant's name changed", len(scs))
	}
	h := &testHooks{lzVerifyClean: true}
	for _, sc := range scs {
		if _, err := Explore(sc, hooked(ExploreOptions{Cache: true, LazyOrders: true, RunOptions: RunOptions{KeepGoing: true}}, h)); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
	}
	if n := h.lzCleanVerified.Load(); n < 1000 {
		t.Errorf("%d sandboxes left uncommitted in %d explorations, want 1000 at least", n, len(scs))
	} else {
		t.Logf("%d sandboxes left uncommitted and verified in %d explorations", n, len(scs))
	}
}

// TestLazyCleanCaught: keys found without the check a sandbox makes after
// its first commit when one is due at the anchor leave that set unmarked
// clean, and committing the options finds it; so does a set's stores
// left in memory after lzCleanSets looked at it (memory is compared).
func TestLazyCleanCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	for _, tc := range []struct {
		wrong  *testHooks
		reason string
	}{
		{&testHooks{lzCleanWrong: true}, "the check due at the anchor left out"},
		{&testHooks{lzCleanKeepsProbe: true}, "a set's stores left in memory"},
	} {
		tc.wrong.lzVerifyClean = true
		_, err := Explore(PeerSpin(fgraph.Latest), hooked(ExploreOptions{Cache: true, LazyOrders: true}, tc.wrong))
		if err == nil {
			t.Errorf("%s went unnoticed", tc.reason)
		} else {
			t.Logf("%s: %.200s", tc.reason, err)
		}
	}
}

// TestLazyCheckRecordsCopied: the records of the in-place checks that a
// later run replays hold copies of what the checks reported (reuse.viol,
// known, dets). They indexed the previous run's result until 7 Dec 2026;
// a region narrowed to another class puts the run's lists back to its
// anchor (lzRestore), so a later run that replayed a check made before
// the narrowing sliced past what the result still held: with an OnRun
// callback (results not recycled, so no spare capacity) std at C=4 with
// lazy orders stopped after 13,037 runs with an internal error (a Go
// panic the engine took for the code under test's). 15,000 runs of it
// must go through.
func TestLazyCheckRecordsCopied(t *testing.T) {
	if testing.Short() {
		t.Skip("15,000 runs of std at C=4")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 4
	stop, n := new(atomic.Bool), 0
	opt := ExploreOptions{Cache: true, LazyOrders: true, Stop: stop, OnRun: func(*Result) {
		if n++; n == 15000 {
			stop.Store(true)
		}
	}}
	if _, err := Explore(sc, opt); err != nil {
		t.Fatal(err)
	}
	if n < 15000 {
		t.Fatalf("%d runs: the exploration ended before the runs that used to fail", n)
	}
}
