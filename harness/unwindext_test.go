package harness

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestUnwindExtFewerRuns: on std, merging the remote unwind's placements
// across commits (unwindext.go) keeps the schedule and known-finding
// counts and runs far fewer remote unwinds, with the cache and without
// it; turned off, the merged placements are remotes.go's alone.
func TestUnwindExtFewerRuns(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	unw := slices.IndexFunc(sc.Remotes, func(r Remote) bool { return r.Kind == RemoteUnwind })
	for _, cache := range []bool{false, true} {
		opt := ExploreOptions{Cache: cache, MergeRemotes: true}
		off, err := Explore(sc, hooked(opt, &testHooks{noUnwindExt: true}))
		if err != nil {
			t.Fatal(err)
		}
		on, err := Explore(sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		if on.Runs != off.Runs || on.Kbuild.Runs != off.Kbuild.Runs || !maps.Equal(on.Known, off.Known) || on.Violations != off.Violations {
			t.Errorf("cache %v: with the extension %d schedules (%d kbuild) %v, without %d (%d) %v", cache, on.Runs, on.Kbuild.Runs, on.Known, off.Runs, off.Kbuild.Runs, off.Known)
		}
		if on.Executed >= off.Executed*90/100 {
			t.Errorf("cache %v: %d runs with the extension, %d without: want 10 %% fewer at least", cache, on.Executed, off.Executed)
		}
		if a, b := on.ByRemote[unw].Runs, off.ByRemote[unw].Runs; a*3 >= b {
			t.Errorf("cache %v: %d remote unwinds run with the extension, %d without: want a third at most", cache, a, b)
		}
	}
}

// TestUnwindExtKeyCaught: a state encoding that does not tell the point
// where the extension opens (the unwind offered, its representative
// counting the later placements) from one where it was open before (the
// unwind left out) lets the cache count std's schedules wrong, and the
// comparison with the plain DFS sees it.
func TestUnwindExtKeyCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	plain, err := Explore(sc, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Explore(sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true}, &testHooks{uxKeyMerge: true}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs == plain.Runs && maps.Equal(s.Known, plain.Known) {
		t.Errorf("the extension's opening point encoded as an open one went unnoticed: %d schedules %v, plain %d %v", s.Runs, s.Known, plain.Runs, plain.Known)
	}
}

// TestUnwindExtEvaluationCaught: an evaluation that finds every unwind
// clean merges placements whose unwind reports something. Where the
// representative's own unwind is one of them the exploration stops with
// an internal error; otherwise its counts differ from the plain DFS's. On
// the catalogue's mutants at C=1, some must be caught.
func TestUnwindExtEvaluationCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every mutant twice")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	caught, internal := 0, 0
	for _, sc := range soundScenarios()[2:] {
		small := *sc
		small.Bound.C = 1
		opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
		plain, err := Explore(&small, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Cache, opt.MergeRemotes = true, true
		s, err := Explore(&small, hooked(opt, &testHooks{uxAlwaysClean: true}))
		switch {
		case err != nil:
			caught++
			internal++
		case s.Runs != plain.Runs || s.Violations != plain.Violations || !maps.Equal(s.Known, plain.Known):
			caught++
		}
	}
	if caught == 0 {
		t.Error("an evaluation that finds every remote unwind clean went unnoticed on every mutant")
	}
	t.Logf("caught on %d mutants (%d by the internal error)", caught, internal)
}

// TestUnwindExtVerifyEverySubtree re-explores every subtree whose state
// the cache has seen (verify mode) on std with the merged placements and
// the extension, and requires the same schedule, violation and
// known-finding totals as the first visit, whatever the extension's state
// in the encoding. The choice-point counts are left out: a representative
// stands for placements whose choice points it does not pass, with the
// segment rule alone too (mergedView).
func TestUnwindExtVerifyEverySubtree(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std in verify mode")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	bad := 0
	h := new(testHooks)
	h.verifyHook = func(first, again Schedule, want, got cacheEntry, same, sameKnown bool) {
		want.rel, got.rel = 0, 0
		if want != got || !sameKnown {
			bad++
			if bad <= 2 {
				f1, f2 := &File{Scenario: sc, Schedule: first}, &File{Scenario: sc, Schedule: again}
				t.Errorf("one state, two outcomes (same encoding: %v, same known-finding totals: %v): %+v then %+v\nfirst visit:\n%s\nagain:\n%s", same, sameKnown, want, got, f1.Format(), f2.Format())
			}
		}
	}
	if _, err := Explore(sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true}, h)); err != nil {
		t.Fatal(err)
	}
}

// TestUnwindExtReplayedAnswers: the unwind's evaluations over a replayed
// prefix take the previous run's answers (unwindClean). The exploration is
// the same, run for run, as one that evaluates them again; with each
// recorded answer taken wrong it is not.
func TestUnwindExtReplayedAnswers(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{Cache: true, MergeRemotes: true}
	again, err := Explore(sc, hooked(opt, &testHooks{noUxReplay: true}))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Runs != again.Runs || rec.Kbuild.Runs != again.Kbuild.Runs || rec.Executed != again.Executed ||
		rec.Cache.States != again.Cache.States || !maps.Equal(rec.Known, again.Known) || rec.Violations != again.Violations {
		t.Errorf("recorded answers: %d schedules (%d kbuild), %d runs, %d states, %v; evaluated again: %d (%d), %d, %d, %v",
			rec.Runs, rec.Kbuild.Runs, rec.Executed, rec.Cache.States, rec.Known, again.Runs, again.Kbuild.Runs, again.Executed, again.Cache.States, again.Known)
	}
	bad, err := Explore(sc, hooked(opt, &testHooks{uxFlip: true}))
	if err == nil && bad.Runs == again.Runs && bad.Executed == again.Executed && maps.Equal(bad.Known, again.Known) {
		t.Errorf("recorded answers taken wrong went unnoticed: %d schedules, %d runs, %v", bad.Runs, bad.Executed, bad.Known)
	}
	t.Logf("answers taken wrong: err %v", err)
}

// TestUnwindExtMemo: the memo of the unwind's evaluations (unwindEval)
// holds while neither memory an unwinder reads (runner.ver) nor any real
// stack (fgraph.SlotsVersion) changed. Keyed by memory alone (until 7 Dec
// 2026) it answered clean for a walk that warned, and the representative's
// own unwind reported: an internal error on std with M-retaddr-current,
// every violation counted, and on std at C=4 and C=0 with the default
// engine. With the version, every answer of the memo is a walk's
// (uxMemoVerify walks again at each), and the counts are the plain
// placements', with eager orders and with lazy ones; without it
// (uxMemoNoSlots) the verification sees a memo answer a walk does not give.
func TestUnwindExtMemo(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	sc.Mutant, sc.Name = fgraph.MRetAddrCurrent, "std.M-retaddr-current"
	keep := RunOptions{KeepGoing: true}
	want, _ := lazyView(t, sc, ExploreOptions{Cache: true, RunOptions: keep})
	for _, lazy := range []bool{false, true} {
		got, _ := lazyView(t, sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true, LazyOrders: lazy, RunOptions: keep}, &testHooks{uxMemoVerify: true}))
		if got != want {
			t.Errorf("lazy orders %v: merged placements differ from each placement:\neach:\n%s\nmerged:\n%s", lazy, want, got)
		}
	}
	_, err := Explore(sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true, RunOptions: keep}, &testHooks{uxMemoVerify: true, uxMemoNoSlots: true}))
	if err == nil || !strings.Contains(err.Error(), "the memo's answer") {
		t.Fatalf("a memo without the real stacks' version: %v; want the verification to catch it", err)
	}
}
