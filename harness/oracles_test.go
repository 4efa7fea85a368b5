package harness

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestModelDiffRendered: the model oracle's go-cmp diff is rendered only
// for a violation that is kept (violateDetail), so every kept one must
// carry it: a failing run's violation and the first report of a known
// finding the model oracle detected.
func TestModelDiffRendered(t *testing.T) {
	mut, err := fgraph.LookupMutant("M-enter-1")
	if err != nil {
		t.Fatal(err)
	}
	failing := Standard(fgraph.Latest)
	failing.Mutant = mut.Mutant
	cases := []struct {
		name string
		sc   *Scenario
		opt  ExploreOptions
		why  string
	}{
		{"violation", failing, ExploreOptions{StopAtFirst: true}, "M-enter-1's first violation is the model oracle's"},
		{"known finding", Standard(fgraph.Latest), ExploreOptions{Cache: true}, "std's reserve-reorder is detected first by the model oracle's diff in some schedules"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := 0
			check := func(v Violation) {
				if v.Oracle != OracleModel || !strings.Contains(v.Msg, "words do not abstract") {
					return
				}
				seen++
				head, diff, ok := strings.Cut(v.Msg, "(-model +words):\n")
				if !ok || !strings.Contains(diff, "model.Task{") || !strings.HasPrefix(head, "task") {
					t.Fatalf("model violation without its diff: %q", v.Msg)
				}
			}
			opt := tc.opt
			opt.OnRun = func(res *Result) {
				for _, v := range res.Violations {
					check(v)
				}
				for _, v := range res.Known {
					check(v)
				}
			}
			_, err := Explore(tc.sc, opt)
			if err != nil {
				t.Fatal(err)
			}
			if seen == 0 {
				t.Fatalf("no model-oracle report of words that do not abstract (%s)", tc.why)
			}
			t.Logf("%d reports, each with its diff", seen)
		})
	}
}

// TestKnownBriefSameSummary: an exploration that OnRun does not watch
// leaves the detail out of the reports of known findings
// (RunOptions.knownBrief) and counts the same: schedules, runs executed,
// verdicts, known findings with their oracles, coverage, cache. std's
// reserve-reorder is detected by the model oracle, whose detail is a
// go-cmp diff: rendered with OnRun set, never without.
func TestKnownBriefSameSummary(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	explore := func(watch bool) (*Summary, int64) {
		var n atomic.Int64
		opt := hooked(ExploreOptions{Cache: true, LazyOrders: true, MergeRemotes: true}, &testHooks{detailsRendered: &n})
		// OnViolation (the CLI's, to write failing schedules) leaves
		// the reports brief.
		opt.OnViolation = func(*Result) {}
		if watch {
			opt.OnRun = func(*Result) {}
		}
		s, err := Explore(Standard(fgraph.Latest), opt)
		if err != nil {
			t.Fatal(err)
		}
		return s, n.Load()
	}
	full, rendered := explore(true)
	brief, briefRendered := explore(false)
	if rendered == 0 {
		t.Fatalf("no detail rendered with OnRun set: the test no longer sees the model oracle's known reports")
	}
	if briefRendered != 0 {
		t.Errorf("%d details rendered in an exploration no callback watches, want 0", briefRendered)
	}
	if d := cmp.Diff(full, brief, cmpopts.IgnoreFields(Summary{}, "First")); d != "" {
		t.Errorf("the brief exploration's summary differs (-with details +brief):\n%s", d)
	}
	t.Logf("%d details rendered with OnRun, %d schedules, %d runs executed", rendered, full.Runs, full.Executed)
}
