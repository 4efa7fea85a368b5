package mutants

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

var benchOrder = flag.String("mutants.order", "near", "exploration order of BenchmarkTimeToKill: near, dfs or iddfs")

// The CI gate: on latest, every non-control mutant of the catalogue is
// killed by the std exploration and no control is. The mutation score must
// not drop.
func TestCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std completely for every control (about a minute on two cores)")
	}
	rep, err := Run(Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep.Table())
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	controls := 0
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			controls++
		}
	}
	if rep.Total != len(fgraph.Catalogue)-controls || rep.Killed != rep.Total {
		t.Errorf("score %d/%d, want %d/%d", rep.Killed, rep.Total, len(fgraph.Catalogue)-controls, len(fgraph.Catalogue)-controls)
	}
	// The kills that need a compiler that can prove no alias: push's
	// barriers #1 and #2 dropped (the reorders they let through move a
	// ret_stack word store across a curr_ret_stack store, which kbuild's
	// -fno-strict-aliasing keeps in order). Every other kill holds under
	// kbuild.
	noAliasOnly := map[string]bool{"M-push-barrier1": true, "M-push-barrier2": true}
	for _, m := range rep.Mutants {
		switch {
		case m.Control && !m.Complete:
			t.Errorf("control %s: the exploration did not cover the bound", m.Name)
		case m.Killed:
			checkMinimized(t, m)
			if m.KilledKbuild == noAliasOnly[m.Name] {
				t.Errorf("%s: %s, want %q", m.Name, m.Model(), map[bool]string{true: "killed only if the compiler can prove no alias", false: "killed under kbuild"}[noAliasOnly[m.Name]])
			}
			if !m.KilledKbuild && !m.Complete {
				t.Errorf("%s: killed only under the no-alias model, but the search did not cover the bound", m.Name)
			}
		}
	}
	if rep.KilledKbuild != rep.Killed-len(noAliasOnly) {
		t.Errorf("%d killed under kbuild of %d, want all but %d", rep.KilledKbuild, rep.Killed, len(noAliasOnly))
	}
}

// checkMinimized replays a killed mutant's minimized file: it fails with the
// reported oracle, passes without the mutant, and has the reported size.
func checkMinimized(t *testing.T, m Result) {
	t.Helper()
	f := m.Minimized
	if f == nil {
		t.Errorf("%s: killed but no minimized file", m.Name)
		return
	}
	g, err := harness.ParseFile(m.Name, f.Format())
	if err != nil {
		t.Errorf("%s: the minimized file does not parse: %v", m.Name, err)
		return
	}
	res, err := harness.Replay(g, harness.RunOptions{})
	if err != nil || !res.Failed() || res.Violations[0].Oracle != m.Oracle {
		t.Errorf("%s: the minimized file does not fail with %s: %v %v", m.Name, m.Oracle, err, res)
	}
	if err := PassesBaselines(g); err != nil {
		t.Errorf("%s: %v", m.Name, err)
	}
	if m.ScheduleLines != g.Schedule.Len() || m.ScheduleLines > m.Found.Schedule.Len() {
		t.Errorf("%s: %d schedule lines reported, the file has %d, the run as found %d", m.Name, m.ScheduleLines, g.Schedule.Len(), m.Found.Schedule.Len())
	}
	if len(g.Comments) == 0 || !strings.HasPrefix(g.Comments[0], m.Name+": ") {
		t.Errorf("%s: the minimized file has no story: %q", m.Name, g.Comments)
	}
}

// small is std with one task that calls and returns, and at most one
// interrupt: every order must visit exactly the schedules harness.Explore
// visits (about 5k).
func small() *harness.Scenario {
	sc := harness.Standard(fgraph.Latest)
	sc.Tasks = [][]harness.Op{{{Kind: harness.OpCall, Func: 1}, {Kind: harness.OpRet}}}
	sc.Bound = harness.Bound{K: 1, D: 1, R: 1, E: 1, C: 2}
	return sc
}

func TestOrdersVisitTheSameSchedules(t *testing.T) {
	for _, mutant := range []fgraph.Mutant{0, fgraph.MPushBarrier2} {
		sc := small()
		sc.Mutant = mutant
		ref, err := harness.Explore(sc, harness.ExploreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Order{OrderNear, OrderDFS} {
			out, err := explore(sc, o, false)
			if err != nil {
				t.Fatal(err)
			}
			if out.runs != ref.Runs || !out.complete {
				t.Errorf("%v, order %s: %d schedules (complete %v), harness.Explore visits %d", mutant, o, out.runs, out.complete, ref.Runs)
			}
			if (out.first != nil) != (ref.First != nil) {
				t.Errorf("%v, order %s: found a violation %v, harness.Explore %v", mutant, o, out.first != nil, ref.First != nil)
			}
		}
		// Iterative deepening re-runs the schedules with at most one choice.
		one := *sc
		one.Bound.C = 1
		ref1, err := harness.Explore(&one, harness.ExploreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := explore(sc, OrderIDDFS, false); err != nil || out.first == nil && out.runs != ref.Runs+ref1.Runs {
			t.Errorf("%v, order iddfs: %d schedules (%v), want %d + %d", mutant, out.runs, err, ref.Runs, ref1.Runs)
		}
		t.Logf("%v: %d schedules", mutant, ref.Runs)
	}
}

// TestNearShareSound: the near order with prefix sharing between its
// consecutive runs (harness.Session) and without it visit the same
// schedules and find the same first violation of each model, at the same
// run, on std at C=1 with every mutant of the catalogue and without one
// (explored completely), and at the std bound to the first kill.
func TestNearShareSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores every mutant twice")
	}
	describe := func(o outcome) string {
		f := func(r *harness.Result) string {
			if r == nil {
				return "none"
			}
			return fmt.Sprintf("%s %v", r.Violations[0].Oracle, r.Schedule)
		}
		return fmt.Sprintf("runs %d complete %v first (run %d) %s firstK (run %d) %s", o.runs, o.complete, o.firstRuns, f(o.first), o.kRuns, f(o.firstK))
	}
	muts := []fgraph.Mutant{0}
	for _, mi := range fgraph.Catalogue {
		muts = append(muts, mi.Mutant)
	}
	for _, mu := range muts {
		for _, stop := range []bool{false, true} {
			sc := harness.Standard(fgraph.Latest)
			sc.Mutant = mu
			if !stop {
				sc.Bound.C = 1
			} else if mu == 0 || mu.Info().Control {
				continue // the whole std bound: TestCatalogue's
			}
			var plain outcome
			func() {
				noShare = true
				defer func() { noShare = false }()
				var err error
				if plain, err = exploreNear(sc, harness.RunOptions{}, stop); err != nil {
					t.Fatal(err)
				}
			}()
			shared, err := exploreNear(sc, harness.RunOptions{}, stop)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := describe(plain), describe(shared); a != b {
				t.Errorf("%v (stop %v): prefix sharing changes the near order's outcome:\nwithout: %s\nwith:    %s", mu, stop, a, b)
			}
		}
	}
}

// OrderNear finds the region-order kills that the depth-first odometer
// reaches last within a few thousand runs. (M-push-barrier1 is killed only
// under the no-alias model, so the search goes on over the whole of std to
// settle kbuild's verdict.)
func TestNearFindsOrderKillsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("M-push-barrier1's search covers std")
	}
	for _, name := range []string{"M-push-barrier1", "M-reserve-barrier"} {
		mi, _ := fgraph.LookupMutant(name)
		out, err := explore(Scenario(mi, fgraph.Latest), OrderNear, true)
		if err != nil {
			t.Fatal(err)
		}
		if out.first == nil || out.firstRuns > 2000 {
			t.Errorf("%s: near order: killed %v after %d runs, want a kill within 2000", name, out.first != nil, out.firstRuns)
		}
	}
}

func TestRunMisuse(t *testing.T) {
	if _, err := Run(Options{Names: []string{"M-no-such"}}); err == nil {
		t.Error("no error for an unknown mutant")
	}
	if _, err := Run(Options{Names: []string{"M-push-1"}, Order: Order(9)}); err == nil {
		t.Error("no error for an unknown order")
	}
	for _, s := range []string{"near", "dfs", "iddfs"} {
		o, err := ParseOrder(s)
		if err != nil || o.String() != s {
			t.Errorf("ParseOrder(%q) = %v, %v", s, o, err)
		}
	}
	if _, err := ParseOrder("bfs"); err == nil {
		t.Error("ParseOrder(bfs): no error")
	}
}

// A few fast kills, in parallel, in catalogue order whatever the order
// they finish in.
func TestRunSelection(t *testing.T) {
	names := []string{"F9", "M-push-1", "F5-tail", "M-ret-1"}
	var seen []string
	rep, err := Run(Options{Names: names, Workers: 3, OnResult: func(r Result) { seen = append(seen, r.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rep.Mutants {
		got = append(got, m.Name)
		checkMinimized(t, m)
	}
	if want := []string{"M-push-1", "M-ret-1", "F5-tail", "F9"}; !slices.Equal(got, want) {
		t.Errorf("report order %v, want catalogue order %v", got, want)
	}
	slices.Sort(seen)
	if want := []string{"F5-tail", "F9", "M-push-1", "M-ret-1"}; !slices.Equal(seen, want) {
		t.Errorf("OnResult saw %v", seen)
	}
	if rep.Killed != 4 || rep.Total != 4 || !rep.OK() {
		t.Errorf("score %d/%d ok=%v", rep.Killed, rep.Total, rep.OK())
	}
}

func sampleReport() *Report {
	return &Report{
		Mutants: []Result{
			{Name: "M-a", Origin: "o|a", Killed: true, KilledKbuild: true, Oracle: "unwinder", Seconds: 0.0015, Runs: 7, SearchRuns: 7, ScheduleLines: 2},
			{Name: "M-b", Origin: "o-b", Seconds: 5, Runs: 56766},
			{Name: "M-c", Origin: "o-c", Control: true, Reason: "harmless", Seconds: 5.5, Runs: 56766, Complete: true},
			{Name: "M-d", Origin: "o-d", Control: true, Reason: "harmless", Killed: true, KilledKbuild: true, Oracle: "model", Msg: "boom", Seconds: 0.2, Runs: 40, ScheduleLines: 1},
			{Name: "M-e", Origin: "o-e", Killed: true, Oracle: "ret-addr", Seconds: 0.0015, Runs: 9, SearchRuns: 56766, Complete: true, ScheduleLines: 1},
		},
		Killed: 2, KilledKbuild: 1, Total: 3,
	}
}

// The JSON shape is fixed: {"mutants":[{name, origin, control, killed,
// killed_kbuild, model, oracle, seconds, runs, search_runs,
// schedule_lines}], "killed", "killed_kbuild", "total"}.
func TestReportJSON(t *testing.T) {
	b, err := json.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if keys := sortedKeys(top); !slices.Equal(keys, []string{"killed", "killed_kbuild", "mutants", "total"}) {
		t.Errorf("top-level keys %v", keys)
	}
	var ms []map[string]any
	if err := json.Unmarshal(top["mutants"], &ms); err != nil {
		t.Fatal(err)
	}
	want := []string{"control", "killed", "killed_kbuild", "model", "name", "oracle", "origin", "runs", "schedule_lines", "search_runs", "seconds"}
	for _, m := range ms {
		if keys := sortedKeys(m); !slices.Equal(keys, want) {
			t.Errorf("mutant keys %v, want %v", keys, want)
		}
	}
	if string(top["killed"]) != "2" || string(top["killed_kbuild"]) != "1" || string(top["total"]) != "3" || ms[0]["name"] != "M-a" || ms[0]["runs"] != 7.0 || ms[0]["schedule_lines"] != 2.0 ||
		ms[0]["model"] != "killed under kbuild" || ms[4]["model"] != "killed only if the compiler can prove no alias" || ms[4]["search_runs"] != 56766.0 || ms[1]["model"] != "survives" {
		t.Errorf("values: %s", b)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

func TestReportTable(t *testing.T) {
	rep := sampleReport()
	tab := rep.Table()
	for _, want := range []string{"MUTANT", "M-a", "unwinder", "1.50 ms", "SURVIVED", "ok (control survives)", "FLAGGED (control)",
		"killed 2 of 3 mutants (controls not counted) on latest, order near: 1 under kbuild, 1 only if the compiler can prove no alias",
		"COMPILER MODEL", "killed only if the compiler can prove no alias", "survives",
		"FAIL: mutant M-b survived 56766 schedules", "FAIL: control M-d was flagged by model"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	if rep.OK() || len(rep.Problems()) != 2 {
		t.Errorf("problems %v", rep.Problems())
	}
	md := rep.Markdown()
	if !strings.Contains(md, `| M-a | o\|a | yes | killed under kbuild | unwinder | 1.50 ms | 7 | 2 |`) || !strings.Contains(md, "| M-c | o-c | no (control) | survives | — |") ||
		!strings.Contains(md, "| M-e | o-e | yes | killed only if the compiler can prove no alias | ret-addr | 1.50 ms | 9 | 1 |") {
		t.Errorf("markdown:\n%s", md)
	}
	med, worst, slow := rep.TimeToKill()
	if med != 0.0015 || worst != 0.0015 || slow != "M-e" {
		t.Errorf("TimeToKill = %v %v %q", med, worst, slow)
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("a\n  b\tc", 0); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := OneLine("alpha beta gamma", 12); got != "alpha beta ..." {
		t.Errorf("OneLine cut = %q", got)
	}
}

// BenchmarkTimeToKill measures, per non-control mutant, the exhaustive std
// exploration up to the first violation (no minimization), single-threaded,
// in the order -mutants.order (near by default). runs/kill is the number of
// schedules run. Timing is reported, never asserted.
func BenchmarkTimeToKill(b *testing.B) {
	order, err := ParseOrder(*benchOrder)
	if err != nil {
		b.Fatal(err)
	}
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			continue
		}
		b.Run(mi.Name, func(b *testing.B) {
			sc := Scenario(mi, fgraph.Latest)
			var runs int64
			for b.Loop() {
				out, err := explore(sc, order, true)
				if err != nil {
					b.Fatal(err)
				}
				if out.first == nil {
					b.Fatalf("%s survived", mi.Name)
				}
				runs = out.firstRuns
				if out.firstK != nil {
					runs = out.kRuns
				}
			}
			b.ReportMetric(float64(runs), "runs/kill")
		})
	}
}

func ExampleRun() {
	rep, err := Run(Options{Names: []string{"M-push-1", "F5-tail"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rep.Mutants {
		fmt.Printf("%s killed=%v by %s; minimized to %d schedule lines\n", m.Name, m.Killed, m.Oracle, m.ScheduleLines)
	}
	fmt.Printf("score %d/%d\n", rep.Killed, rep.Total)
	// Output:
	// M-push-1 killed=true by unwinder; minimized to 0 schedule lines
	// F5-tail killed=true by ret-addr; minimized to 0 schedule lines
	// score 2/2
}

// TestFirstDiff: the first choice point at which the next run of the near
// order may choose otherwise than the one before it.
func TestFirstDiff(t *testing.T) {
	s := func(j, o int) step { return step{j: j, o: o, n: 3} }
	for _, tc := range []struct {
		why     string
		a, b    []step
		last, d int
	}{
		{"the first run after the root: b's choice at 4 is new", nil, []step{s(4, 1)}, 4, 4},
		{"siblings: the same point, another option", []step{s(4, 1)}, []step{s(4, 2)}, 4, 4},
		{"cousins: the earlier of the two points", []step{s(2, 1), s(9, 1)}, []step{s(2, 1), s(5, 1)}, 5, 5},
		{"the earlier point is a's", []step{s(2, 1), s(3, 1)}, []step{s(2, 1), s(5, 1)}, 5, 3},
		{"b shorter (a new level begins): capped after b's last choice", []step{s(1, 1), s(7, 1)}, []step{s(1, 1)}, 1, 2},
		{"a shorter: b's next choice is new", []step{s(1, 1)}, []step{s(1, 1), s(6, 2)}, 6, 6},
		{"the root after anything: nothing shared", []step{s(3, 1)}, nil, -1, 0},
	} {
		if got := firstDiff(tc.a, tc.b, tc.last); got != tc.d {
			t.Errorf("%s: firstDiff(%v, %v, %d) = %d, want %d", tc.why, tc.a, tc.b, tc.last, got, tc.d)
		}
	}
}
