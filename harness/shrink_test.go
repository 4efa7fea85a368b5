package harness_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// minSlowFirst are the first failing schedules harness.Explore finds for the
// mutants it kills late (tens of thousands of runs): the files start there.
var minSlowFirst = map[string]string{
	"M-push-barrier1":   "order push.w1 = push.w2 push.w3 push.w1\n",
	"M-push-barrier2":   "irq id=1 in=task0 at=push.w5_ret#4\norder push.w3 = push.w4 push.w5_ret push.w3 push.w5_func push.w5_retp\n",
	"M-reserve-barrier": "irq id=1 in=task0 at=reserve.w3#4\norder reserve.w1 = reserve.w1 reserve.w3 reserve.w2\n",
}

// minFirstFailure explores std on latest with the mutant on and returns the
// first failing schedule as a file.
func minFirstFailure(t *testing.T, mutant string) *harness.File {
	t.Helper()
	mi, err := fgraph.LookupMutant(mutant)
	if err != nil {
		t.Fatal(err)
	}
	sc := harness.Standard(fgraph.Latest)
	sc.Mutant = mi.Mutant
	if sched, ok := minSlowFirst[mutant]; ok {
		text := string((&harness.File{Scenario: sc}).Format()) + sched
		f, err := harness.ParseFile(mutant, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s, err := harness.Explore(sc, harness.ExploreOptions{StopAtFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.First == nil {
		t.Fatalf("%s survived std", mutant)
	}
	return &harness.File{Scenario: sc, Schedule: s.First.Schedule}
}

// minVerdict replays f; "" if it passes, else the first violation's oracle.
func minVerdict(t *testing.T, f *harness.File, strict bool) string {
	t.Helper()
	res, err := harness.Replay(f, harness.RunOptions{Strict: strict})
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, f.Format())
	}
	if !res.Failed() {
		return ""
	}
	return res.Violations[0].Oracle
}

// The minimizer's output is 1-minimal: every single-element removal or
// simplification of it either passes or fails with another oracle. The
// minNeighbours are enumerated here independently of the minimizer's own
// candidate generator.
func TestMinimizeOneMinimal(t *testing.T) {
	for _, name := range []string{"M-push-1", "M-push-2", "M-push-barrier2", "M-reserve-barrier", "M-ret-1", "M-reserve-3", "F2", "F3", "F6", "F14"} {
		t.Run(name, func(t *testing.T) {
			f := minFirstFailure(t, name)
			before := string(f.Format())
			oracle := minVerdict(t, f, false)
			g, st, err := harness.Minimize(f, harness.MinimizeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.Format()); got != before {
				t.Fatalf("Minimize modified its input")
			}
			if st.Oracle != oracle || !st.Minimal {
				t.Fatalf("stats: oracle %q (want %q), minimal %v", st.Oracle, oracle, st.Minimal)
			}
			if g.Expect == nil || g.Expect.Pass || g.Expect.Oracle != oracle {
				t.Fatalf("result expects %+v, want violation %s", g.Expect, oracle)
			}
			if st.After.Lines() > st.Before.Lines() || st.After.Ops > st.Before.Ops {
				t.Fatalf("grew: %v -> %v", st.Before, st.After)
			}
			// The result is a valid file that fails the same way.
			g2, err := harness.ParseFile("min", g.Format())
			if err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, g.Format())
			}
			if v := minVerdict(t, g2, false); v != oracle {
				t.Fatalf("result fails with %q, want %q\n%s", v, oracle, g.Format())
			}
			n := 0
			for _, c := range minNeighbours(g2) {
				h, err := harness.ParseFile("minNeighbour", c.f.Format())
				if err != nil {
					continue // not a valid file: not a candidate
				}
				n++
				if v := minVerdict(t, h, false); v == oracle {
					t.Errorf("not 1-minimal: %s still fails with %s\n%s", c.what, v, h.Format())
				}
			}
			t.Logf("%s: %v -> %v; %d valid minNeighbours, none fails with %s", name, st.Before, st.After, n, oracle)
			if n == 0 {
				t.Errorf("no minNeighbour checked")
			}
		})
	}
}

type minNeighbour struct {
	what string
	f    *harness.File
}

// minNeighbours lists every single-element removal or simplification of f.
func minNeighbours(f *harness.File) []minNeighbour {
	var out []minNeighbour
	add := func(what string, edit func(g *harness.File) bool) {
		g := minClone(f)
		if edit(g) {
			out = append(out, minNeighbour{what, g})
		}
	}
	evs := f.Schedule.Events
	for i := range evs {
		add(fmt.Sprintf("drop event %d", i+1), func(g *harness.File) bool {
			g.Schedule.Events = minDropEvents(g.Schedule.Events, map[int]bool{evs[i].ID: true})
			return true
		})
		for occ := 1; occ < evs[i].At.Occ; occ++ {
			add(fmt.Sprintf("event %d at occurrence %d", i+1, occ), func(g *harness.File) bool {
				g.Schedule.Events[i].At.Occ = occ
				return true
			})
		}
		if p := minParentOf(evs, i); p >= 0 {
			for occ := 1; occ <= 24; occ++ {
				for _, before := range []bool{true, false} {
					add(fmt.Sprintf("minLift event %d to %s occurrence %d (before parent: %v)", i+1, evs[p].In, occ, before), func(g *harness.File) bool {
						return minLift(g, i, p, occ, before)
					})
				}
			}
		}
	}
	for i, o := range f.Schedule.Orders {
		add(fmt.Sprintf("drop order %s", o.Region), func(g *harness.File) bool {
			g.Schedule.Orders = slices.Delete(g.Schedule.Orders, i, i+1)
			return true
		})
		for k := range o.Drop {
			add(fmt.Sprintf("keep dead store %s of order %s", o.Drop[k], o.Region), func(g *harness.File) bool {
				g.Schedule.Orders[i].Drop = slices.Delete(g.Schedule.Orders[i].Drop, k, k+1)
				return true
			})
		}
	}
	sc := f.Scenario
	progEdits := func(what string, prog []harness.Op, set func(g *harness.File, p []harness.Op), truncate bool) {
		if truncate {
			for n := 0; n < len(prog); n++ {
				add(fmt.Sprintf("%s: keep %d ops", what, n), func(g *harness.File) bool {
					set(g, slices.Clone(prog[:n]))
					return true
				})
			}
		}
		for i, op := range prog {
			switch op.Kind {
			case harness.OpCall:
				add(fmt.Sprintf("%s: drop op %d (%s) and its ret", what, i+1, op), func(g *harness.File) bool {
					p := slices.Clone(prog)
					depth := 0
					for j := i; j < len(p); j++ {
						if p[j].Kind == harness.OpCall {
							depth++
						} else if p[j].Kind == harness.OpRet {
							if depth--; depth == 0 {
								p = slices.Delete(p, j, j+1)
								break
							}
						}
					}
					set(g, slices.Delete(p, i, i+1))
					return true
				})
			case harness.OpRet:
			default:
				add(fmt.Sprintf("%s: drop op %d (%s)", what, i+1, op), func(g *harness.File) bool {
					set(g, slices.Delete(slices.Clone(prog), i, i+1))
					return true
				})
			}
		}
	}
	for t := range sc.Tasks {
		progEdits(fmt.Sprintf("task%d", t), sc.Tasks[t], func(g *harness.File, p []harness.Op) { g.Scenario.Tasks[t] = p }, true)
		if len(sc.Tasks) > 1 {
			add(fmt.Sprintf("drop task%d", t), func(g *harness.File) bool { return minDropTask(g, t) })
		}
	}
	progEdits("irq", sc.IRQ, func(g *harness.File, p []harness.Op) { g.Scenario.IRQ = p }, false)
	progEdits("nmi", sc.NMI, func(g *harness.File, p []harness.Op) { g.Scenario.NMI = p }, false)
	for u, usr := range sc.Users {
		add("drop user "+usr.Name, func(g *harness.File) bool { return minDropUser(g, u) })
		if usr.DataBytes != 0 {
			add("user "+usr.Name+" data=0", func(g *harness.File) bool { g.Scenario.Users[u].DataBytes = 0; return true })
		}
		if usr.CallInEntry != 0 {
			add("user "+usr.Name+" without callin", func(g *harness.File) bool { g.Scenario.Users[u].CallInEntry = 0; return true })
		}
		for k := range usr.Filter {
			if len(usr.Filter) > 1 {
				add(fmt.Sprintf("user %s filter without %d", usr.Name, usr.Filter[k]), func(g *harness.File) bool {
					g.Scenario.Users[u].Filter = slices.Delete(g.Scenario.Users[u].Filter, k, k+1)
					return true
				})
			}
		}
		for k := range usr.Accept {
			if len(usr.Accept) > 1 {
				add(fmt.Sprintf("user %s accept without %d", usr.Name, usr.Accept[k]), func(g *harness.File) bool {
					g.Scenario.Users[u].Accept = slices.Delete(g.Scenario.Users[u].Accept, k, k+1)
					return true
				})
			}
		}
		for k := range usr.RejectAfter {
			add(fmt.Sprintf("user %s reject without %d", usr.Name, usr.RejectAfter[k]), func(g *harness.File) bool {
				g.Scenario.Users[u].RejectAfter = slices.Delete(g.Scenario.Users[u].RejectAfter, k, k+1)
				return true
			})
		}
	}
	for k := range sc.Setup {
		add(fmt.Sprintf("setup without %s", sc.Users[sc.Setup[k]].Name), func(g *harness.File) bool {
			g.Scenario.Setup = slices.Delete(g.Scenario.Setup, k, k+1)
			return true
		})
	}
	for r := range sc.Remotes {
		add("drop remote "+sc.Remotes[r].Label(sc), func(g *harness.File) bool { return minDropRemote(g, r) })
	}
	return out
}

// minClone deep-copies f through its text form.
func minClone(f *harness.File) *harness.File {
	g, err := harness.ParseFile("minClone", f.Format())
	if err != nil {
		panic(err)
	}
	return g
}

func minParentOf(evs []harness.Event, i int) int {
	for p := range evs {
		if evs[i].In == strconv.Itoa(evs[p].ID) {
			return p
		}
	}
	return -1
}

// minDropEvents drops the events with the given ids and everything nested in
// them, then renumbers.
func minDropEvents(evs []harness.Event, gone map[int]bool) []harness.Event {
	var kept []harness.Event
	for _, e := range evs {
		if n, err := strconv.Atoi(e.In); err == nil && gone[n] {
			gone[e.ID] = true
		}
		if !gone[e.ID] {
			kept = append(kept, e)
		}
	}
	return minRenumber(kept)
}

// minRenumber gives events ids 1..n in list order and updates in=.
func minRenumber(evs []harness.Event) []harness.Event {
	ids := map[string]string{}
	for i, e := range evs {
		ids[strconv.Itoa(e.ID)] = strconv.Itoa(i + 1)
	}
	for i := range evs {
		if n, ok := ids[evs[i].In]; ok {
			evs[i].In = n
		}
		evs[i].ID = i + 1
	}
	return evs
}

func minLift(g *harness.File, i, p, occ int, before bool) bool {
	evs := g.Schedule.Events
	e := evs[i]
	e.In, e.At.Occ = evs[p].In, occ
	if e.Kind == harness.EvNMI && strings.HasPrefix(e.In, "task") {
		e.Kind = harness.EvIRQ
	}
	for j, x := range evs {
		if j != i && x.In == e.In && x.At == e.At {
			return false
		}
	}
	var out []harness.Event
	for j, x := range evs {
		if j == p && before {
			out = append(out, e)
		}
		if j == i {
			if !before {
				out = append(out, e)
			}
			continue
		}
		out = append(out, x)
	}
	g.Schedule.Events = minRenumber(out)
	return true
}

func minDropTask(g *harness.File, t int) bool {
	sc := g.Scenario
	gone := map[int]bool{}
	name := "task" + strconv.Itoa(t)
	for _, e := range g.Schedule.Events {
		if e.In == name || (e.Kind == harness.EvRemote && sc.Remotes[e.Remote].Kind == harness.RemoteUnwind && sc.Remotes[e.Remote].Task == t) {
			gone[e.ID] = true
		}
	}
	g.Schedule.Events = minDropEvents(g.Schedule.Events, gone)
	for r := len(sc.Remotes) - 1; r >= 0; r-- {
		if sc.Remotes[r].Kind == harness.RemoteUnwind && sc.Remotes[r].Task == t {
			minDropRemote(g, r)
		}
	}
	for r := range sc.Remotes {
		if sc.Remotes[r].Kind == harness.RemoteUnwind && sc.Remotes[r].Task > t {
			sc.Remotes[r].Task--
		}
	}
	for i, e := range g.Schedule.Events {
		if n, ok := strings.CutPrefix(e.In, "task"); ok {
			if k, _ := strconv.Atoi(n); k > t {
				g.Schedule.Events[i].In = "task" + strconv.Itoa(k-1)
			}
		}
	}
	sc.Tasks = slices.Delete(sc.Tasks, t, t+1)
	return true
}

func minDropRemote(g *harness.File, r int) bool {
	gone := map[int]bool{}
	for _, e := range g.Schedule.Events {
		if e.Kind == harness.EvRemote && e.Remote == r {
			gone[e.ID] = true
		}
	}
	g.Schedule.Events = minDropEvents(g.Schedule.Events, gone)
	for i, e := range g.Schedule.Events {
		if e.Kind == harness.EvRemote && e.Remote > r {
			g.Schedule.Events[i].Remote--
		}
	}
	g.Scenario.Remotes = slices.Delete(g.Scenario.Remotes, r, r+1)
	return true
}

func minDropUser(g *harness.File, u int) bool {
	sc := g.Scenario
	for r := len(sc.Remotes) - 1; r >= 0; r-- {
		x := sc.Remotes[r]
		if x.Kind != harness.RemoteUnwind && (x.User == u || (x.Kind == harness.RemoteReplace && x.With == u)) {
			minDropRemote(g, r)
		}
	}
	for r := range sc.Remotes {
		x := &sc.Remotes[r]
		if x.Kind != harness.RemoteUnwind && x.User > u {
			x.User--
		}
		if x.Kind == harness.RemoteReplace && x.With > u {
			x.With--
		}
	}
	var setup []int
	for _, s := range sc.Setup {
		if s != u {
			setup = append(setup, s-minBtoi(s > u))
		}
	}
	sc.Setup = setup
	sc.Users = slices.Delete(sc.Users, u, u+1)
	return true
}

func minBtoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestMinimizeRefusesPassingFile(t *testing.T) {
	f := &harness.File{Scenario: harness.Standard(fgraph.Latest)}
	_, _, err := harness.Minimize(f, harness.MinimizeOptions{})
	if !errors.Is(err, harness.ErrNoViolation) {
		t.Fatalf("err = %v, want ErrNoViolation", err)
	}
	if _, _, err := harness.Minimize(&harness.File{}, harness.MinimizeOptions{}); err == nil {
		t.Fatal("no error for a file without a scenario")
	}
}

func TestMinimizeDeterministic(t *testing.T) {
	f := minFirstFailure(t, "F6")
	a, _, err := harness.Minimize(f, harness.MinimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := harness.Minimize(f, harness.MinimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Format(), b.Format()) {
		t.Fatalf("two minimizations differ:\n%s\n%s", a.Format(), b.Format())
	}
}

func TestMinimizeMaxReplays(t *testing.T) {
	f := minFirstFailure(t, "F14")
	g, st, err := harness.Minimize(f, harness.MinimizeOptions{MaxReplays: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.Minimal || st.Replays != 3 {
		t.Fatalf("stats %+v: want 3 replays, not minimal", st)
	}
	if v := minVerdict(t, g, false); v != st.Oracle {
		t.Fatalf("bounded result fails with %q, want %q", v, st.Oracle)
	}
}

// A known finding is minimized either strictly (as a violation) or by name
// (it must show, alone, in a non-strict replay).
func TestMinimizeKnownFinding(t *testing.T) {
	sc := harness.Standard(fgraph.V611)
	s, err := harness.Explore(sc, harness.ExploreOptions{RunOptions: harness.RunOptions{Strict: true}, StopAtFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.First == nil {
		t.Skip("v6.11 shows no known finding in std")
	}
	f := &harness.File{Scenario: sc, Schedule: s.First.Schedule}
	if _, _, err := harness.Minimize(f, harness.MinimizeOptions{}); err == nil && minVerdict(t, f, false) == "" {
		t.Fatal("non-strict minimization of a known finding did not fail")
	}
	g, st, err := harness.Minimize(f, harness.MinimizeOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := minVerdict(t, g, true); v != st.Oracle {
		t.Fatalf("strict result fails with %q, want %q", v, st.Oracle)
	}
	res, err := harness.Replay(g, harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || len(res.Known) == 0 {
		t.Fatalf("non-strict replay of the strict result: violations %v, known %v", res.Violations, res.Known)
	}
	name := res.Known[0].Known
	h, st2, err := harness.Minimize(f, harness.MinimizeOptions{Known: name})
	if err != nil {
		t.Fatal(err)
	}
	res, err = harness.Replay(h, harness.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() || !slices.ContainsFunc(res.Known, func(v harness.Violation) bool { return v.Known == name }) {
		t.Fatalf("Known=%s result: violations %v, known %v", name, res.Violations, res.Known)
	}
	t.Logf("%s: strict %v -> %v; by name %v -> %v", name, st.Before, st.After, st2.Before, st2.After)
}
