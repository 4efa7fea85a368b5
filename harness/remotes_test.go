package harness

import (
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// mergedView is what merged remote placements must keep of an
// exploration: the schedule, violation and known-finding counts, the
// (oracle, known finding) verdicts and the sites interrupted (not the
// choice points, nor the first failing schedule: a representative stands
// for later placements the plain DFS meets first).
func mergedView(o outcome) outcome {
	o.points, o.first = 0, ""
	return o
}

// TestMergeRemotesSound: the cached explorer with merged remote
// placements (remotes.go) and the plain one give the same schedule,
// violation and known-finding counts, verdicts and sites on std and std
// with every catalogue mutant (peer-spin has no remote action), in
// soundModes' explorations and in
// a complete exploration at C=1 where each run stops at its first
// violation (a representative whose own action fails defers the stop to
// its segment's end: it does here), with eager region orders and with lazy
// ones (a run's weight is then both multipliers', and so are the totals
// per combo of split.go). Where a mutant is killed, the merged explorer
// kills it too, with a schedule that replays to a violation.
func TestMergeRemotesSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant three times")
	}
	t.Parallel()              // its hooks are its explorations' (hooks.go)
	var quiet [2]atomic.Int64 // by order engine: eager, lazy
	hs := [2]*testHooks{{remQuiet: &quiet[0]}, {remQuiet: &quiet[1]}}
	t.Run("all", func(t *testing.T) {
		for i, sc := range soundScenarios() {
			if len(sc.Remotes) == 0 {
				continue // peer-spin: nothing to merge
			}
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				modes := soundModes(i, sc)
				if i >= 2 {
					small := *sc
					small.Bound.C = 1
					modes = append(modes, soundMode{"complete C=1, a run stops at its first violation", &small, ExploreOptions{}})
				}
				for _, m := range modes {
					plain := explored(t, m.sc, m.opt)
					for lz, h := range hs {
						opt := m.opt
						opt.Cache, opt.MergeRemotes, opt.LazyOrders = true, true, lz == 1
						name := m.name + [2]string{", eager orders", ", lazy orders"}[lz]
						o, s := exploredSummary(t, m.sc, hooked(opt, h))
						if opt.StopAtFirst {
							if (plain.first == "") != (s.First == nil) {
								t.Errorf("%s: plain first violation %q, merged %v", name, plain.first, s.First)
							}
							if s.First != nil {
								res, err := Replay(&File{Scenario: m.sc, Schedule: s.First.Schedule}, RunOptions{})
								if err != nil || !res.Failed() {
									t.Errorf("%s: the merged explorer's first failing schedule does not fail on replay (err %v)", name, err)
								}
							}
							continue
						}
						if got, want := mergedView(o).String(), mergedView(plain).String(); got != want {
							t.Errorf("%s: merged remote placements differ from the plain DFS:\nplain:\n%s\nmerged:\n%s", name, want, got)
						}
					}
				}
			})
		}
	})
	for lz := range quiet {
		if quiet[lz].Load() == 0 {
			t.Errorf("%s orders: no representative deferred a violation: the quiet stop went untested", [2]string{"eager", "lazy"}[lz])
		}
	}
}

// TestMergeRemotesFewerRuns: on std, merged placements run fewer
// schedules for the same totals, with the cache and without it (the plain
// DFS counts each run as the placements it stands for).
func TestMergeRemotesFewerRuns(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	sc := Standard(fgraph.Latest)
	for _, cache := range []bool{false, true} {
		each, err := Explore(sc, ExploreOptions{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		merged, err := Explore(sc, ExploreOptions{Cache: cache, MergeRemotes: true})
		if err != nil {
			t.Fatal(err)
		}
		if merged.Runs != each.Runs || merged.Kbuild.Runs != each.Kbuild.Runs || !maps.Equal(merged.Known, each.Known) {
			t.Errorf("cache %v: merged %d schedules (%d kbuild) %v, each %d (%d) %v", cache, merged.Runs, merged.Kbuild.Runs, merged.Known, each.Runs, each.Kbuild.Runs, each.Known)
		}
		if merged.Executed >= each.Executed*95/100 {
			t.Errorf("cache %v: merged placements ran %d schedules, each %d: want 5 %% fewer at least", cache, merged.Executed, each.Executed)
		}
	}
}

// TestMergeRemotesWrongRuleCaught: merging a writer's placements across a
// load of a global word (a rule that ignores that the load may see the
// action's stores) is caught by the comparison of TestMergeRemotesSound.
func TestMergeRemotesWrongRuleCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 1
	opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
	plain := mergedView(explored(t, sc, opt))
	opt.Cache, opt.MergeRemotes = true, true
	opt.hooks = &testHooks{remWrongRule: true}
	if got := mergedView(explored(t, sc, opt)); got.String() == plain.String() {
		t.Error("writers merged across loads of global words went unnoticed")
	}
}

// TestMergeRemotesWorkersShardsCheckpoint: with merged placements, two
// workers, three shards summed, and an exploration stopped and resumed
// from its checkpoint give the totals of one single-threaded exploration.
func TestMergeRemotesWorkersShardsCheckpoint(t *testing.T) {
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{Cache: true, MergeRemotes: true}
	whole, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, s *Summary) {
		t.Helper()
		if s.Runs != whole.Runs || s.Kbuild.Runs != whole.Kbuild.Runs || !maps.Equal(s.Known, whole.Known) {
			t.Errorf("%s: %d schedules (%d kbuild) %v; one exploration: %d (%d) %v", what, s.Runs, s.Kbuild.Runs, s.Known, whole.Runs, whole.Kbuild.Runs, whole.Known)
		}
	}
	two := opt
	two.Workers = 2
	s, err := Explore(sc, two)
	if err != nil {
		t.Fatal(err)
	}
	same("two workers", s)
	sum := &Summary{}
	for i := range 3 {
		sh := opt
		sh.Shard, sh.Shards = i, 3
		s, err := Explore(sc, sh)
		if err != nil {
			t.Fatal(err)
		}
		sum.Runs, sum.Kbuild.Runs = sum.Runs+s.Runs, sum.Kbuild.Runs+s.Kbuild.Runs
		for k, n := range s.Known {
			inc(&sum.Known, k, n)
		}
	}
	same("three shards", sum)
	var cp *Checkpoint
	part := opt
	part.MaxRuns, part.Checkpoint = 5000, func(c *Checkpoint) { cp = c }
	if s, err := Explore(sc, part); err != nil || s.Complete || cp == nil {
		t.Fatalf("a stop after 5000 runs: err %v, checkpoint %v", err, cp != nil)
	}
	part.MaxRuns, part.Resume = 0, cp
	s, err = Explore(sc, part)
	if err != nil {
		t.Fatal(err)
	}
	same("resumed", s)
}

// TestMergeRemotesWideWriters: a writer's set of same placements goes on
// across loads of global words it does not write (writerstores.go), so
// std runs fewer schedules than with the narrow rule, for the same
// totals; and a dry run that misses a word the writer stores (here the
// bitmask, which the entry path loads) is caught by the representative's
// check of its real stores: an internal error.
func TestMergeRemotesWideWriters(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	sc := Standard(fgraph.Latest)
	for _, lazy := range []bool{false, true} {
		opt := ExploreOptions{Cache: true, MergeRemotes: true, LazyOrders: lazy}
		wide, err := Explore(sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		narrow, err := Explore(sc, hooked(opt, &testHooks{remNarrow: true}))
		if err != nil {
			t.Fatal(err)
		}
		if wide.Runs != narrow.Runs || wide.Kbuild.Runs != narrow.Kbuild.Runs || !maps.Equal(wide.Known, narrow.Known) || !maps.Equal(wide.Kbuild.Known, narrow.Kbuild.Known) {
			t.Errorf("lazy %v: wide %d schedules (%d kbuild) %v, narrow %d (%d) %v", lazy, wide.Runs, wide.Kbuild.Runs, wide.Known, narrow.Runs, narrow.Kbuild.Runs, narrow.Known)
		}
		if wide.Executed >= narrow.Executed*97/100 {
			t.Errorf("lazy %v: the wide rule ran %d schedules, the narrow one %d: want 3 %% fewer at least", lazy, wide.Executed, narrow.Executed)
		}
		t.Logf("lazy %v: %d schedules run, %d with the narrow rule", lazy, wide.Executed, narrow.Executed)
	}
	_, err := Explore(sc, hooked(ExploreOptions{Cache: true, MergeRemotes: true}, &testHooks{wsDrop: int(fgraph.AddrBitmask) + 1}))
	if err == nil || !strings.Contains(err.Error(), "dry run") {
		t.Errorf("a dry run without the bitmask's store: %v, want the representative's check to fail", err)
	}
}
