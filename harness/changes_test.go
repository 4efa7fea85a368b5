package harness

import (
	"slices"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// sumChanges is the total of s's runs by change.
func sumChanges(s *Summary) (t ChangeCount) {
	for i := range s.ByChange {
		t.add(&s.ByChange[i])
	}
	return t
}

// TestByChangeTotals: the runs by change add up to the runs executed,
// their hits to the cache's, and one run of each piece changed nothing.
func TestByChangeTotals(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	k3 := PeerSpin(fgraph.Latest)
	for _, c := range []struct {
		name string
		sc   *Scenario
		opt  ExploreOptions
		want []int // kinds that must have runs
		none []int // kinds that must have none
		why  string
	}{
		{"std", Standard(fgraph.Latest), ExploreOptions{Cache: true, MergeRemotes: true}, []int{ChangeInterrupt, ChangeRemote, ChangeOrder}, []int{ChangeNarrow},
			"fgcheck's default on std: interrupts, remote actions and eager orders; nothing pending to narrow"},
		{"std plain", Standard(fgraph.Latest), ExploreOptions{}, []int{ChangeInterrupt, ChangeRemote, ChangeOrder}, []int{ChangeNarrow},
			"the plain DFS: no hits, every schedule a run"},
		{"peer-spin lazy", k3, ExploreOptions{Cache: true, LazyOrders: true}, []int{ChangeInterrupt, ChangeOrder, ChangeNarrow}, []int{ChangeRemote},
			"peer-spin has no remote action; the lazy engine narrows pending regions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Explore(c.sc, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			tot := sumChanges(s)
			var hits int64
			if s.Cache != nil {
				hits = s.Cache.Hits
			}
			if tot.Runs != s.Executed || tot.Hits != hits {
				t.Errorf("runs by change %+v: %d runs and %d hits, want the %d runs executed and the cache's %d hits", s.ByChange, tot.Runs, tot.Hits, s.Executed, hits)
			}
			if f := s.ByChange[ChangeNone]; f.Runs != 1 || f.Replayed != 0 || f.New == 0 {
				t.Errorf("first runs %+v: want the one piece's first run, with nothing replayed", f)
			}
			for _, k := range c.want {
				if s.ByChange[k].Runs == 0 || s.ByChange[k].Replayed == 0 {
					t.Errorf("no %s run replaying anything (%+v): %s", ChangeNames[k], s.ByChange, c.why)
				}
			}
			for _, k := range c.none {
				if s.ByChange[k].Runs != 0 {
					t.Errorf("%d %s runs: %s", s.ByChange[k].Runs, ChangeNames[k], c.why)
				}
			}
		})
	}
}

// TestByRemote: the remote runs split by the action each took add up to
// the remote change's counts, each action in its own place.
func TestByRemote(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	std := Standard(fgraph.Latest)
	one := Standard(fgraph.Latest)
	one.Bound = Bound{E: 1, C: 1}
	rev := *one
	rev.Remotes = slices.Clone(one.Remotes)
	slices.Reverse(rev.Remotes)
	split := func(name string, sc *Scenario, opt ExploreOptions, why string) []ChangeCount {
		t.Helper()
		s, err := Explore(sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		var sum ChangeCount
		for i := range s.ByRemote {
			if s.ByRemote[i].Runs == 0 {
				t.Errorf("%s: no run of %s (%+v): %s", name, sc.Remotes[i].Label(sc), s.ByRemote, why)
			}
			sum.add(&s.ByRemote[i])
		}
		if len(s.ByRemote) != len(sc.Remotes) || sum != s.ByChange[ChangeRemote] {
			t.Errorf("%s: runs by remote action %+v add up to %+v, want the remote runs' %+v: %s", name, s.ByRemote, sum, s.ByChange[ChangeRemote], why)
		}
		return s.ByRemote
	}
	split("std", std, ExploreOptions{Cache: true, MergeRemotes: true}, "fgcheck's default")
	split("std two workers", std, ExploreOptions{Cache: true, MergeRemotes: true, Workers: 2}, "the pieces' counts added")
	// One remote event and no other choice, merged placements, no cache:
	// each action runs once per set of same placements, the unwind's
	// sets being longer (every offer point of a segment) than the
	// writers'.
	opt := ExploreOptions{MergeRemotes: true}
	got := split("one remote event", one, opt, "each action at its sets of placements")
	unw := slices.IndexFunc(one.Remotes, func(r Remote) bool { return r.Kind == RemoteUnwind })
	for i, x := range got {
		if i != unw && x.Runs <= got[unw].Runs {
			t.Errorf("%s: %d runs, the unwind %d: want more (a writer's placements merge less)", one.Remotes[i].Label(one), x.Runs, got[unw].Runs)
		}
	}
	back := split("one remote event, actions reversed", &rev, opt, "the same actions listed the other way round")
	slices.Reverse(back)
	if !slices.Equal(back, got) {
		t.Errorf("the actions listed the other way round: %+v, reversed, want %+v", back, got)
	}
	s, err := Explore(PeerSpin(fgraph.Latest), ExploreOptions{Cache: true, LazyOrders: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.ByRemote != nil {
		t.Errorf("peer-spin (no remote action): runs by remote action %+v", s.ByRemote)
	}
}

// TestByChangeKinds: with a bound that allows one kind of choice only,
// every run but the first changes that kind.
func TestByChangeKinds(t *testing.T) {
	for _, c := range []struct {
		bound Bound
		kind  int
		why   string
	}{
		{Bound{K: 1, D: 1, C: 1}, ChangeInterrupt, "one IRQ, no order, no remote action"},
		{Bound{E: 1, C: 1}, ChangeRemote, "one remote action, no interrupt, no order"},
		{Bound{R: 1, C: 1}, ChangeOrder, "one region's order, no event"},
	} {
		sc := Standard(fgraph.Latest)
		sc.Bound = c.bound
		s, err := Explore(sc, ExploreOptions{Cache: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ByChange[c.kind].Runs; got != s.Executed-1 || got == 0 {
			t.Errorf("%+v: %d %s runs of %d (%+v), want all but the first: %s", c.bound, got, ChangeNames[c.kind], s.Executed, s.ByChange, c.why)
		}
	}
}

// TestByChangeReplay: the replayed accesses are what prefix sharing
// saves: without it (every run from the start) each run replays more,
// and runs the same accesses from the changed choice on.
func TestByChangeReplay(t *testing.T) {
	sc := Standard(fgraph.Latest)
	opt := ExploreOptions{Cache: true, MergeRemotes: true}
	shared, err := Explore(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Explore(sc, withoutResume(opt))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sumChanges(shared), sumChanges(full)
	if a.Runs != b.Runs || a.New != b.New || a.Replayed >= b.Replayed {
		t.Errorf("with prefix sharing %+v, without %+v: want the same runs and new accesses, fewer replayed with it", a, b)
	}
}
