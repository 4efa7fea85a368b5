package harness

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fgcheck/fgcheck/fgraph"
)

// small is a scenario whose interrupt points can be counted by hand.
func small(k int) *Scenario {
	return &Scenario{
		Name: "small", Variant: fgraph.Latest, StackWords: 64,
		Users: []User{{Name: "u0"}, {Name: "u1", DataBytes: 8}},
		Setup: []int{0, 1},
		Tasks: [][]Op{{{OpCall, 1}, {OpCall, 2}, {OpRet, 0}, {OpRet, 0}}},
		IRQ:   []Op{{OpCall, 10}, {OpRet, 0}},
		Bound: Bound{K: k, D: 1},
	}
}

// interruptPoints counts, from the trace of the interrupt-free run, the
// yield points where an interrupt may be delivered: every store commit and
// every op start of the task context (docs/compiler-model.md). It does not
// use the explorer.
func interruptPoints(t *testing.T, sc *Scenario) int {
	t.Helper()
	res, err := Run(sc, noChoice{}, RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range res.Trace {
		if strings.HasPrefix(l, "task0 commit ") {
			n++
		}
	}
	for _, p := range sc.Tasks {
		n += len(p) // one op.start per op
	}
	return n
}

func TestExhaustiveCountClosedForm(t *testing.T) {
	p := interruptPoints(t, small(1))
	tests := []struct {
		k      int
		want   int64
		reason string
	}{
		{0, 1, "no interrupt: the one program-order run"},
		{1, int64(1 + p), "one IRQ at any of the P task points, or none"},
		{2, int64(1 + p + p*(p-1)/2), "two IRQs at distinct task points (D=1: none inside an IRQ); a transparent IRQ leaves the task's points unchanged"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("K=%d", tc.k), func(t *testing.T) {
			s, err := Explore(small(tc.k), ExploreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Runs != tc.want || s.Violations != 0 || !s.Complete {
				t.Errorf("explored %d schedules (violations %d, complete %v), want %d with P=%d\nreason: %s", s.Runs, s.Violations, s.Complete, tc.want, p, tc.reason)
			}
		})
	}
}

// TestShardsPartitionTheSpace: the shards of a space (and the pieces the
// workers pull) are disjoint and together hold every schedule of the
// unsharded run, each once, with the same known-finding counts.
func TestShardsPartitionTheSpace(t *testing.T) {
	std := Standard(fgraph.V611)
	std.Bound.C = 1
	cases := []struct {
		name   string
		sc     *Scenario
		shards int
		why    string
	}{
		{"small in 3", small(2), 3, "the closed-form space, cut in an odd number of shards"},
		{"std v6.11 C=1 in 4", std, 4, "remote events, orders and known findings, cut like the CI matrix"},
		{"std v6.11 C=1 in 7", std, 7, "more shards than the first choice points of many paths"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			collect := func(opt ExploreOptions) (map[string]int, *Summary) {
				seen := map[string]int{}
				opt.OnRun = func(r *Result) { seen[FormatSchedule(tc.sc, r.Schedule)]++ }
				s, err := Explore(tc.sc, opt)
				if err != nil {
					t.Fatal(err)
				}
				return seen, s
			}
			whole, ws := collect(ExploreOptions{})
			if int64(len(whole)) != ws.Runs {
				t.Fatalf("the unsharded run visited %d distinct schedules in %d runs", len(whole), ws.Runs)
			}
			union := map[string]int{}
			known := map[string]int64{}
			for i := 0; i < tc.shards; i++ {
				part, ps := collect(ExploreOptions{Shard: i, Shards: tc.shards})
				for k, n := range part {
					union[k] += n
				}
				for k, n := range ps.Known {
					known[k] += n
				}
			}
			for k, n := range union {
				if n != 1 {
					t.Errorf("schedule in %d shards (%s):\n%s", n, tc.why, k)
				}
				if whole[k] == 0 {
					t.Errorf("a shard ran a schedule the whole run does not have (%s):\n%s", tc.why, k)
				}
			}
			if len(union) != len(whole) {
				t.Errorf("the shards hold %d schedules, the whole run %d (%s)", len(union), len(whole), tc.why)
			}
			if diff := cmp.Diff(ws.Known, known, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("summed known-finding counts differ (-whole +shards):\n%s", diff)
			}
			par, _ := collect(ExploreOptions{Workers: 2})
			if diff := cmp.Diff(whole, par); diff != "" {
				t.Errorf("two workers' pieces ran other schedules (-one worker +two):\n%s", diff)
			}
		})
	}
}

// TestInflightAllowance shows the oracle-2 allowance of the kernel comment
// in ftrace_push_return_trace(): an IRQ that pushes before W3 leaves its own
// ret in our frame; between W3 and the rewrite (W5) that bogus ret is
// tolerated, and after the rewrite it is not (M-push-2 drops the rewrite).
func TestInflightAllowance(t *testing.T) {
	sched := Schedule{Events: []Event{{ID: 1, Kind: EvIRQ, In: "task0", At: Pos{fgraph.SitePushW2, 1}}}}
	sc := small(2)
	var sawBogus bool
	inner := NewReplay(sc, sched)
	probe := ChooserFunc(func(p *Point, opts []Option) int {
		if p.Ctx == "task0" && p.Pos == (Pos{fgraph.SitePushW3, 1}) {
			// Oracles already ran at this yield point: the frame is in
			// flight with the IRQ's ret in it.
			sawBogus = true
		}
		return inner.Choose(p, opts)
	})
	res, err := Run(sc, probe, RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("tolerated case failed: %v", res.Violations)
	}
	if !sawBogus {
		t.Fatal("the run never reached the W3 commit with the IRQ's frame underneath")
	}
	// The IRQ really did clobber the word: the trace shows its ret written
	// at word 0 before our W3.
	if !strings.Contains(strings.Join(res.Trace, "\n"), "irq 1 in task0") {
		t.Fatalf("no IRQ in the trace:\n%s", strings.Join(res.Trace, "\n"))
	}

	rej := small(2)
	rej.Mutant = fgraph.MPush2
	res, err = Run(rej, NewReplay(rej, sched), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Once the entry completed the frame must be exact: the first check
	// after it (the model at the quiescent point, or an unwinder) rejects.
	if !res.Failed() || (res.Violations[0].Oracle != OracleRetAddr && res.Violations[0].Oracle != OracleModel) ||
		!strings.Contains(res.Violations[0].Msg, "Ret") && !strings.Contains(res.Violations[0].Msg, ".ret") {
		t.Fatalf("rejected case (no rewrite after W3): violations %v, want the frame's ret reported wrong", res.Violations)
	}
}

func TestReplayIsDeterministic(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sc.Mutant = fgraph.MPush2
	s, err := Explore(sc, ExploreOptions{StopAtFirst: true})
	if err != nil || s.First == nil {
		t.Fatalf("no failing schedule to replay: %v", err)
	}
	f := &File{Scenario: sc, Schedule: s.First.Schedule}
	var traces [2]string
	for i := range traces {
		res, err := Replay(f, RunOptions{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		traces[i] = strings.Join(res.Trace, "\n")
		if !res.Failed() {
			t.Fatalf("replay %d passed", i)
		}
	}
	if traces[0] != traces[1] {
		t.Error("two replays of one schedule gave different traces")
	}
	// The recorded schedule of a replay is the schedule replayed.
	res, _ := Replay(f, RunOptions{})
	if got, want := FormatSchedule(sc, res.Schedule), FormatSchedule(sc, f.Schedule); got != want {
		t.Errorf("replay recorded\n%s\nwant\n%s", got, want)
	}
}

func TestCheckpointResume(t *testing.T) {
	sc := small(2)
	whole, err := Explore(sc, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Stop after 25 runs, keeping the last checkpoint; resume from it.
	var last *Checkpoint
	part, err := Explore(sc, ExploreOptions{MaxRuns: 25, CheckpointEvery: 5, Checkpoint: func(c *Checkpoint) { last = c }})
	if err != nil || last == nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	if last.Runs() != 25 || part.Complete {
		t.Fatalf("checkpoint after %d runs (complete %v), want 25", last.Runs(), part.Complete)
	}
	rest, err := Explore(sc, ExploreOptions{Resume: last})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Runs != whole.Runs || !rest.Complete {
		t.Errorf("resumed exploration ended at %d schedules (complete %v), the whole space has %d", rest.Runs, rest.Complete, whole.Runs)
	}
}

// TestMPush3Explained replays the interleaving docs/m-push-3.md walks
// through: it must pass, and the IRQ's stale BITMAP word must be what the
// unwinder saw.
func TestMPush3Explained(t *testing.T) {
	f := parseTestFile(t, "../docs/m-push-3.txt")
	res, err := Replay(f, RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("M-push-3 failed: %v", res.Violations)
	}
	tr := strings.Join(res.Trace, "\n")
	if !strings.Contains(tr, "irq 1 in task0 at push.w2#1") || !strings.Contains(tr, "irq 2 in task0 at push.w3#1") {
		t.Fatalf("the documented interleaving did not happen:\n%s", tr)
	}
}

// TestCheckpointResumeParallel stops explorations part-way (as a SIGINT or
// a time budget does, through Stop), resumes them from the last checkpoint,
// possibly with another worker count and more than once, and checks that
// the totals are those of one uninterrupted run: schedules, violations,
// known-finding counts, points and coverage.
func TestCheckpointResumeParallel(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	mut, err := fgraph.LookupMutant("M-enter-1")
	if err != nil {
		t.Fatal(err)
	}
	withMutant := Standard(fgraph.V611)
	withMutant.Bound.C = 1
	withMutant.Mutant = mut.Mutant
	baseline := Standard(fgraph.V611)
	baseline.Bound.K, baseline.Bound.E = 1, 0
	cases := []struct {
		name    string
		sc      *Scenario
		workers []int // the worker count of each leg; every leg but the last is stopped
		stopAt  int64 // each stopped leg runs about this many more schedules
		shard   [2]int
		why     string
	}{
		{"one worker", baseline, []int{1, 1}, 3000, [2]int{}, "the single-piece path of a long run"},
		{"two then one", baseline, []int{2, 1}, 2500, [2]int{}, "a resumed run keeps the pieces it was cut into, whatever the workers now"},
		{"three legs", withMutant, []int{2, 2, 2}, 120, [2]int{}, "violations and known findings counted across legs"},
		{"one then two, sharded", baseline, []int{1, 2}, 1000, [2]int{1, 3}, "a CI shard checkpoints and resumes its own part"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := ExploreOptions{Shard: tc.shard[0], Shards: tc.shard[1]}
			whole, err := Explore(tc.sc, ExploreOptions{Shard: base.Shard, Shards: base.Shards, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			var last *Checkpoint
			var got *Summary
			for leg, w := range tc.workers {
				var stop atomic.Bool
				opt := base
				opt.Workers, opt.Resume, opt.CheckpointEvery = w, last, 50
				from := int64(0)
				if last != nil {
					from = last.Runs()
				}
				stopped := leg < len(tc.workers)-1
				opt.Checkpoint = func(c *Checkpoint) {
					last = c
					if stopped && c.Runs() >= from+tc.stopAt {
						stop.Store(true)
					}
				}
				opt.Stop = &stop
				got, err = Explore(tc.sc, opt)
				if err != nil {
					t.Fatal(err)
				}
				if stopped && (got.Complete || last.Done()) {
					t.Fatalf("leg %d (%s) was not stopped: %d schedules of %d", leg, tc.why, got.Runs, whole.Runs)
				}
				if got.Runs != last.Runs() || got.Violations != last.Violations() {
					t.Fatalf("leg %d: summary %d/%d, checkpoint %d/%d", leg, got.Runs, got.Violations, last.Runs(), last.Violations())
				}
			}
			if !got.Complete || !last.Done() {
				t.Fatalf("last leg incomplete (%s)", tc.why)
			}
			if got.Runs != whole.Runs || got.Violations != whole.Violations || got.Points != whole.Points {
				t.Errorf("resumed totals %d schedules, %d violations, %d points; uninterrupted %d, %d, %d (%s)",
					got.Runs, got.Violations, got.Points, whole.Runs, whole.Violations, whole.Points, tc.why)
			}
			if diff := cmp.Diff(whole.Known, got.Known); diff != "" {
				t.Errorf("known-finding counts differ (-whole +resumed):\n%s", diff)
			}
			if !reflect.DeepEqual(got.Coverage, whole.Coverage) {
				t.Errorf("coverage differs after resume (%s)", tc.why)
			}
		})
	}
}

// TestExploreMaxRunsIsGlobal: MaxRuns caps the schedules of all workers
// together, not of each piece.
func TestExploreMaxRunsIsGlobal(t *testing.T) {
	sc := Standard(fgraph.V611)
	sc.Bound.K, sc.Bound.E = 1, 0
	s, err := Explore(sc, ExploreOptions{Workers: 2, MaxRuns: 500})
	if err != nil {
		t.Fatal(err)
	}
	// Each worker may finish the run it is in: at most one more per worker.
	if s.Runs < 500 || s.Runs > 502 || s.Complete {
		t.Errorf("MaxRuns 500 with 2 workers ran %d schedules (complete %v)", s.Runs, s.Complete)
	}
}

// TestProgress: the live counters end at the summary's totals.
func TestProgress(t *testing.T) {
	sc := Standard(fgraph.V611)
	sc.Bound.C = 1
	var p Progress
	s, err := Explore(sc, ExploreOptions{Workers: 2, Progress: &p})
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs.Load() != s.Runs || p.Violations.Load() != s.Violations {
		t.Errorf("progress %d schedules, %d violations; summary %d, %d", p.Runs.Load(), p.Violations.Load(), s.Runs, s.Violations)
	}
	var q Progress
	if _, err := Sample(sc, 1, 300, "random", ExploreOptions{Workers: 2, Progress: &q}); err != nil {
		t.Fatal(err)
	}
	if q.Runs.Load() != 300 {
		t.Errorf("sample progress %d runs, want 300", q.Runs.Load())
	}
}
