package harness

import (
	"fmt"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// exploredFull is explored plus the whole coverage table (every site's
// interrupt and commit counts, a compiled target's lines), which a resumed
// run must count for the prefix it skips.
func exploredFull(t *testing.T, sc *Scenario, opt ExploreOptions) string {
	t.Helper()
	return full(exploredSummary(t, sc, opt))
}

// full is an outcome with its exploration's whole coverage table.
func full(o outcome, s *Summary) string {
	return fmt.Sprintf("%s\nhits %v\ncommits %v\nlines %v", o, s.Coverage.Hits, s.Coverage.Commits, s.Coverage.Lines)
}

// withoutResume returns o with prefix sharing off.
func withoutResume(o ExploreOptions) ExploreOptions {
	o.noResume = true
	return o
}

// withSet runs f with the test hook *p, a field of h, set, and clears it
// however f ends (a t.Fatal inside f ends its goroutine); f must run an
// exploration or a run that carries h (hooked).
func withSet(t *testing.T, h *testHooks, p *bool, f func()) {
	t.Helper()
	ran := h.ran.Load()
	*p = true
	defer func() { *p = false }()
	f()
	if h.ran.Load() == ran {
		t.Fatal("a test hook set, and no run carried it")
	}
}

// withGlobal runs f with the package variable *p set (the hooks that stay
// package variables: cache.go's ktCheck, ...), and clears it however f
// ends. A test that calls it must not run in parallel.
func withGlobal(p *bool, f func()) {
	*p = true
	defer func() { *p = false }()
	f()
}

// hooked returns opt with the test hooks h (hooks.go).
func hooked(opt ExploreOptions, h *testHooks) ExploreOptions {
	opt.hooks = h
	return opt
}

// TestResumeSound: the explorer with prefix sharing (runs resume from a
// snap, resume.go) and without it give the same counts, verdicts, known
// findings, coverage and first violation, on std and peer-spin explored
// completely (KeepGoing), and on std with every catalogue mutant explored
// completely at C=1 and, but for the controls, to its first kill at the
// std bound.
func TestResumeSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice")
	}
	t.Parallel() // sets no test hook (parallel_test.go)
	for i, sc := range soundScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			modes := soundModes(i, sc) // cache_test.go
			for _, m := range modes {
				plain := exploredFull(t, m.sc, withoutResume(m.opt))
				resumed := exploredFull(t, m.sc, m.opt)
				if plain != resumed {
					t.Errorf("%s: prefix sharing changes the result:\nwithout:\n%s\nwith:\n%s", m.name, plain, resumed)
				}
			}
		})
	}
}

// TestResumeIncompleteSnapCaught: a snap that leaves out part of the state
// (here the model, or the chosen region orders) is caught: either the
// explorer's own check of a replayed prefix fails (a choice point offers
// other options than before: an internal error) or the comparison of
// TestResumeSound sees a difference.
func TestResumeIncompleteSnapCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std three times")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	// std at C=1: the same snaps at a tenth of the cost (the full std is
	// TestResumeSound's).
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 1
	opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true}}
	plain := exploredFull(t, sc, withoutResume(opt))
	for _, drop := range []string{"model", "orders"} {
		func() {
			opt := hooked(opt, &testHooks{snapDrop: drop})
			if _, err := Explore(sc, opt); err != nil {
				t.Logf("without %s: %v", drop, err)
				return
			}
			if got := exploredFull(t, sc, opt); got == plain {
				t.Errorf("a snap without %s went unnoticed", drop)
			}
		}()
	}
}

// TestOnChoiceHoldsTheSchedule: the schedule OnChoice saw last is, when a
// run ends, that run's whole schedule: also for a run that resumed from a
// snap and skipped the choices of its prefix, and after a region order (a
// compiled target keeps it as its crash record: a crash must write every
// choice). It once missed the orders: OnChoice followed events only.
func TestOnChoiceHoldsTheSchedule(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sc.Bound.C = 1
	var last Schedule
	runs, resumed := 0, 0
	opt := ExploreOptions{RunOptions: RunOptions{KeepGoing: true, OnChoice: func(s Schedule) { last = s.clone() }}}
	opt.OnRun = func(r *Result) {
		runs++
		if len(r.Schedule.Events) > 0 && len(last.Events) > 0 {
			resumed++
		}
		if got, want := fmt.Sprint(last), fmt.Sprint(r.Schedule); got != want {
			t.Fatalf("run %d: OnChoice last saw %s, the run's schedule is %s", runs, got, want)
		}
	}
	if _, err := Explore(sc, opt); err != nil {
		t.Fatal(err)
	}
	if runs < 100 || resumed == 0 {
		t.Fatalf("%d runs, %d with choices: too few to tell", runs, resumed)
	}
}
