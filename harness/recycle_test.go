package harness

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestRecycledResultsLeaveHandedOutOnesAlone: the explorer builds later
// runs in the results it recycles, so a result it handed out (to
// OnViolation, as Summary.First) must be one it never recycles. Every
// failing run's result, as OnViolation saw it, must be what it is once
// the exploration is over, and Summary.First must be the first of them.
func TestRecycledResultsLeaveHandedOutOnesAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cache  bool
		sample string // "": the DFS
	}{
		{"plain DFS: every run is built in a recycled result", false, ""},
		{"cache: hits and resumed runs too", true, ""},
		{"random sampling recycles too", false, "random"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := Standard(fgraph.Latest)
			// A mutant that fails some runs and passes most (15 of 757
			// at C=1, 3 Dec 2026).
			sc.Mutant = fgraph.MPush2
			sc.Bound.C = 1
			type seen struct {
				res  *Result
				copy Result
			}
			var got []seen
			opt := ExploreOptions{Cache: tc.cache, RunOptions: RunOptions{KeepGoing: true}, OnViolation: func(r *Result) {
				c := *r
				c.Violations, c.Known = slices.Clone(r.Violations), slices.Clone(r.Known)
				c.Schedule = r.Schedule.clone()
				got = append(got, seen{r, c})
			}}
			var s *Summary
			var err error
			if tc.sample != "" {
				s, err = Sample(sc, 1, 3000, tc.sample, opt)
			} else {
				s, err = Explore(sc, opt)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < 2 || s.Runs <= int64(len(got)) {
				t.Fatalf("%d failing runs of %d: the test needs a mutant that fails some runs and passes most", len(got), s.Runs)
			}
			for i, g := range got {
				if d := cmp.Diff(g.copy, *g.res, cmpopts.IgnoreUnexported(Result{}), cmpopts.EquateEmpty()); d != "" {
					t.Fatalf("failing run %d of %d changed after OnViolation saw it (-then +now):\n%s", i+1, len(got), d)
				}
			}
			if s.First != got[0].res {
				t.Errorf("Summary.First is not the first failing run OnViolation saw")
			}
		})
	}
}

// TestResultPool: a failing run's result is never recycled; a recycled
// one is handed out again only after the one recycled after it (the next
// run still reads the last one: reuse's prevRes), emptied, and like a new
// one once the run settles it.
func TestResultPool(t *testing.T) {
	var r runner
	failed := &Result{Violations: []Violation{{Oracle: "model"}}}
	r.recycle(failed)
	r.recycle(&Result{})
	if r.pool.get() == failed {
		t.Fatal("a failing run's result (Summary.First keeps it) was recycled")
	}
	r.pool = resultPool{}
	a := &Result{Known: []Violation{{Known: "F1-bit0"}}, Points: 7,
		Schedule: Schedule{Events: []Event{{ID: 1}}, Orders: []Order{{Drop: []fgraph.Site{1}}}}, dets: []det{{at: 3}}}
	b := &Result{Points: 9}
	ev := &a.Schedule.Events[0]
	r.recycle(a)
	if got := r.pool.get(); got == a {
		t.Fatal("get handed out the result recycled last, which the next run still reads")
	}
	r.recycle(a)
	r.recycle(b)
	got := r.pool.get()
	if got != a {
		t.Fatalf("get = %p, want the result recycled before the last (%p)", got, a)
	}
	if len(got.Violations)+len(got.Known)+len(got.dets)+got.Points != 0 || got.Schedule.Events != nil || got.Schedule.Orders != nil {
		t.Fatalf("a recycled result is not empty: %+v", got)
	}
	if cap(got.Known) == 0 || cap(got.dets) == 0 {
		t.Errorf("a recycled result lost its slices' storage")
	}
	if e := r.pool.events(1); cap(e) == 0 || &e[:1][0] != ev {
		t.Errorf("the run's events are not built in the recycled result's")
	}
	if e := r.pool.events(1); cap(e) != 1 || len(e) != 0 {
		t.Errorf("events handed out a slice twice: %d, %d", len(e), cap(e))
	}
	if o := r.pool.orders(4); cap(o) < 4 {
		t.Errorf("orders(4) has room for %d", cap(o))
	}
	settle(got)
	if d := cmp.Diff(&Result{}, got, cmp.AllowUnexported(Result{}, det{}), cmpopts.IgnoreFields(Result{}, "dets")); d != "" {
		t.Errorf("a settled empty result is not a new one (-new +settled):\n%s", d)
	}
	if r.pool.get() == a {
		t.Errorf("the spare result was handed out twice")
	}
}
