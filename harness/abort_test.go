package harness

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/fgraph"
)

// breakOnIRQ is a test hook of ExploreOptions: once a run's chooser
// delivers an IRQ to task0, every load the code under test makes inside an
// interrupt goes 2^20 words past the address it meant, as a port edit that
// loses a bound of get_ret_stack would: the load indexes outside machine
// memory, a Go panic inside the code under test (the crash, in
// runner.Load during an IRQ).
func breakOnIRQ(r *runner, ch Chooser) Chooser {
	return ChooserFunc(func(p *Point, opts []Option) int {
		i := ch.Choose(p, opts)
		if i > 0 && opts[i].Kind == OptIRQ && p.Ctx == "task0" {
			r.m.SetHooks(wildLoads{r})
		}
		return i
	})
}

// wildLoads are the runner's hooks with an interrupt's loads gone wild.
type wildLoads struct{ *runner }

func (w wildLoads) Load(s fgraph.Site, a fgraph.Addr, k fgraph.Kind) fgraph.Word {
	if len(w.ctxs) > 1 {
		a += 1 << 20
	}
	return w.runner.Load(s, a, k)
}

// checkCrash checks that res is the panic oracle's report of breakOnIRQ.
func checkCrash(t *testing.T, res *Result) {
	t.Helper()
	if res == nil || !res.Failed() {
		t.Fatalf("no failing run: %+v", res)
	}
	v := res.Violations[0]
	if v.Oracle != OraclePanic || !strings.Contains(v.Msg, "the code under test panicked: runtime error: index out of range [1048") {
		t.Errorf("violation %v, want the panic oracle's report of an index out of range", v)
	}
	if !strings.Contains(v.Msg, "in fgraph.") {
		t.Errorf("violation %q does not name the port's function", v.Msg)
	}
	if len(res.Violations) != 1 {
		t.Errorf("%d violations, want 1 (the run stops at the crash): %v", len(res.Violations), res.Violations)
	}
	var irq bool
	for _, e := range res.Schedule.Events {
		irq = irq || e.Kind == EvIRQ && e.In == "task0"
	}
	if !irq {
		t.Errorf("schedule %v lacks the IRQ that led to the crash", res.Schedule)
	}
}

func TestCrashOfCodeUnderTestIsPanicViolation(t *testing.T) {
	for _, workers := range []int{1, 2} {
		var mu sync.Mutex
		var seen []*Result
		sum, err := Explore(Standard(fgraph.Latest), ExploreOptions{
			Workers: workers, StopAtFirst: true, RunOptions: RunOptions{wrap: breakOnIRQ},
			OnViolation: func(r *Result) { mu.Lock(); seen = append(seen, r); mu.Unlock() },
		})
		if err != nil {
			t.Fatalf("workers %d: %v", workers, err)
		}
		if sum.Violations < 1 || len(seen) != int(sum.Violations) {
			t.Fatalf("workers %d: %d violations, %d reported to OnViolation", workers, sum.Violations, len(seen))
		}
		if sum.Complete {
			t.Errorf("workers %d: stopped at the first violation but reported complete", workers)
		}
		checkCrash(t, sum.First)
		checkCrash(t, seen[0])
	}
}

func TestCrashInSample(t *testing.T) {
	sum, err := Sample(Standard(fgraph.Latest), 1, 20000, "random", ExploreOptions{Workers: 2, StopAtFirst: true, RunOptions: RunOptions{wrap: breakOnIRQ}})
	if err != nil {
		t.Fatal(err)
	}
	checkCrash(t, sum.First)
}

func TestCrashIsNeverExcused(t *testing.T) {
	t.Parallel() // sets no test hook (parallel_test.go)
	// Every schedule with an IRQ in task0 crashes, many of them inside
	// windows of known findings that cover the panic oracle too
	// (reserve-window): none may excuse a Go panic.
	var crashes, runs int64
	sum, err := Explore(Standard(fgraph.Latest), ExploreOptions{RunOptions: RunOptions{wrap: breakOnIRQ}, OnRun: func(r *Result) {
		runs++
		for _, v := range r.Known {
			if strings.Contains(v.Msg, "panicked") {
				t.Errorf("a crash excused as %s: %v", v.Known, v)
			}
		}
		if r.Failed() && strings.Contains(r.Violations[0].Msg, "panicked") {
			crashes++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if crashes == 0 || crashes != sum.Violations {
		t.Errorf("%d crashes of %d violations in %d schedules", crashes, sum.Violations, runs)
	}
}

func TestStepBudgetEndsTheRun(t *testing.T) {
	sc := Standard(fgraph.Latest)
	r, err := newRunner(sc)
	if err != nil {
		t.Fatal(err)
	}
	full := r.run(noChoice{}, RunOptions{})
	if full.Failed() {
		t.Fatalf("program-order run fails: %v", full.Violations)
	}
	if r.steps <= 100 || r.steps*100 > r.budget {
		t.Fatalf("the program-order run took %d steps of a budget of %d: want more than 100 and under 1 %%", r.steps, r.budget)
	}
	for _, keep := range []bool{false, true} {
		r.budget = 100
		res := r.run(noChoice{}, RunOptions{KeepGoing: keep, Trace: true})
		if len(res.Violations) != 1 || res.Violations[0].Oracle != OraclePanic || !strings.Contains(res.Violations[0].Msg, "step budget exhausted: 100 shared accesses") {
			t.Fatalf("KeepGoing=%v: violations %v, want one step-budget report", keep, res.Violations)
		}
		if r.steps > 100 {
			t.Errorf("KeepGoing=%v: the run went on for %d steps after its budget", keep, r.steps)
		}
		if !strings.Contains(strings.Join(res.Trace, "\n"), "VIOLATION panic: step budget exhausted") {
			t.Errorf("KeepGoing=%v: the trace does not show the report", keep)
		}
	}
}

func TestStepBudgetIsLinear(t *testing.T) {
	sc := Standard(fgraph.Latest)
	b0 := StepBudget(sc)
	sc.Tasks[0] = append(append([]Op(nil), sc.Tasks[0]...), sc.Tasks[0]...)
	if d := StepBudget(sc) - b0; d != stepsPerOp*int64(len(Standard(fgraph.Latest).Tasks[0])) {
		t.Errorf("doubling task0's program adds %d steps, want %d per op", d, stepsPerOp)
	}
}

func TestStopAtViolationRunsNoMoreCode(t *testing.T) {
	// M-push-2 fails at its first schedule with an IRQ; after the verdict
	// the port does not run on: the run's schedule ends at the event that
	// led there and its trace at the violation.
	sc := Standard(fgraph.Latest)
	mi, err := fgraph.LookupMutant("M-push-2")
	if err != nil {
		t.Fatal(err)
	}
	sc.Mutant = mi.Mutant
	sum, err := Explore(sc, ExploreOptions{StopAtFirst: true})
	if err != nil || sum.First == nil {
		t.Fatalf("no violation: %v", err)
	}
	res, err := Run(sc, NewReplay(sc, sum.First.Schedule), RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trace
	last := -1
	for i, l := range tr {
		if strings.HasPrefix(strings.TrimSpace(l), "VIOLATION") {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no VIOLATION in the trace")
	}
	for _, l := range tr[last+1:] {
		if strings.Contains(l, " commit ") || strings.Contains(l, " call ") || strings.Contains(l, " barrier ") {
			t.Errorf("the code under test ran on after the violation: %q", l)
		}
	}
}

func TestChooserPanicPassesThrough(t *testing.T) {
	defer func() {
		if x := recover(); x != "the engine's own" {
			t.Errorf("recovered %v, want the chooser's panic value unchanged", x)
		}
	}()
	Run(Standard(fgraph.Latest), ChooserFunc(func(*Point, []Option) int { panic("the engine's own") }), RunOptions{})
	t.Error("Run returned")
}

func TestInternalErrorIsReturned(t *testing.T) {
	// A panic of the engine is fgcheck's bug: Explore returns it, with
	// workers too, and the process does not die.
	for _, workers := range []int{1, 2} {
		n := 0
		var mu sync.Mutex
		_, err := Explore(Standard(fgraph.Latest), ExploreOptions{Workers: workers, RunOptions: RunOptions{wrap: func(_ *runner, ch Chooser) Chooser {
			return ChooserFunc(func(p *Point, opts []Option) int {
				mu.Lock()
				n++
				k := n
				mu.Unlock()
				if k == 500 {
					internalf("test: choice %d", k)
				}
				return ch.Choose(p, opts)
			})
		}}})
		var ie *InternalError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "test: choice 500") {
			t.Errorf("workers %d: error %v, want the internal error", workers, err)
		}
	}
}

// TestStopCutsALongRun: Stop ends a run in the middle; the run is not
// counted, and the checkpoint resumes to the totals of one uninterrupted
// exploration.
func TestStopCutsALongRun(t *testing.T) {
	text := limitsHead + "task ops=(" + longOps(MaxProgramOps, MaxCallDepth-1) + ")\nirq ops=(call 10, unwind, ret)\n"
	f, err := ParseFile("f", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	sc := f.Scenario
	sc.Bound = Bound{K: 1, D: 1}
	whole, err := Explore(sc, ExploreOptions{MaxRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	stop := new(atomic.Bool)
	var cp *Checkpoint
	runs := 0
	sum, err := Explore(sc, ExploreOptions{MaxRuns: 3, Stop: stop, Checkpoint: func(c *Checkpoint) { cp = c },
		RunOptions: RunOptions{wrap: func(r *runner, ch Chooser) Chooser {
			runs++
			return ChooserFunc(func(p *Point, opts []Option) int {
				if runs == 2 && p.Index == 40 {
					stop.Store(true) // mid-run: the second run is cut short
				}
				return ch.Choose(p, opts)
			})
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 1 || sum.Complete {
		t.Fatalf("stopped: %d schedules, complete %v; want 1 and incomplete", sum.Runs, sum.Complete)
	}
	rest, err := Explore(sc, ExploreOptions{MaxRuns: 2, Resume: cp})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Runs != whole.Runs || !cmp.Equal(rest.Coverage, whole.Coverage) || !cmp.Equal(rest.Known, whole.Known) {
		t.Errorf("resumed: %d schedules, known %v; want %d, %v, and the same coverage", rest.Runs, rest.Known, whole.Runs, whole.Known)
	}
}

// TestMaxRunsExactWithWorkers: MaxRuns is a bound on the schedules run,
// all workers together, not one more (two workers once both took the
// last).
func TestMaxRunsExactWithWorkers(t *testing.T) {
	for i := 0; i < 5; i++ {
		sum, err := Explore(Standard(fgraph.Latest), ExploreOptions{Workers: 2, MaxRuns: 3000})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Runs != 3000 || sum.Complete {
			t.Fatalf("MaxRuns 3000 with 2 workers: %d schedules, complete %v", sum.Runs, sum.Complete)
		}
	}
}

// TestCrashInReplayAndMinimize: the failing file of a crash replays to the
// same panic violation, and minimizes like any other, keeping the oracle.
func TestCrashInReplayAndMinimize(t *testing.T) {
	sc := Standard(fgraph.Latest)
	sum, err := Explore(sc, ExploreOptions{StopAtFirst: true, RunOptions: RunOptions{wrap: breakOnIRQ}})
	if err != nil || sum.First == nil {
		t.Fatalf("no crash: %v", err)
	}
	f := &File{Scenario: sc, Schedule: sum.First.Schedule, Expect: &Expect{Oracle: OraclePanic}}
	g, err := ParseFile("crash.txt", f.Format())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(g, RunOptions{Trace: true, wrap: breakOnIRQ})
	if err != nil {
		t.Fatal(err)
	}
	checkCrash(t, res)
	if !strings.Contains(strings.Join(res.Trace, "\n"), "VIOLATION panic: the code under test panicked") {
		t.Error("the replay's trace does not show the crash")
	}
	small, st, err := Minimize(g, MinimizeOptions{run: RunOptions{wrap: breakOnIRQ}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Oracle != OraclePanic || small.Expect.Oracle != OraclePanic || st.After.Ops > st.Before.Ops {
		t.Errorf("minimized to oracle %s, %d -> %d ops", st.Oracle, st.Before.Ops, st.After.Ops)
	}
}
