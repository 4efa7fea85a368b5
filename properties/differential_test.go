package properties

import (
	"fmt"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"pgregory.net/rapid"
)

// GenDifferential draws a scenario for the differential property (issue
// 2): two or three tasks running random balanced programs of calls, tail
// calls, returns, unwinds and sleeps; two or three users with filters,
// accept rules and data sizes (so fgraph_reserve_data and
// fgraph_retrieve_data run), some registered up front; remote register and
// unregister actions, all of which may fire; no interrupts and no region
// reordering. Unless -fgcheck.wide, u0 is registered throughout, so the
// number of users never drops to zero (see wide).
func genDifferential(t *rapid.T, v fgraph.Variant) *harness.Scenario {
	sc := &harness.Scenario{Name: "differential", Variant: v, StackWords: 64}
	nu := rapid.IntRange(2, 3).Draw(t, "users")
	for i := 0; i < nu; i++ {
		sc.Users = append(sc.Users, genUser(t, i))
	}
	if sc.Users[0].DataBytes == 0 {
		sc.Users[0].DataBytes = 8 // someone always reserves and retrieves
	}
	set := make([]bool, nu)
	for i := range set {
		set[i] = i == 0 || rapid.Bool().Draw(t, fmt.Sprintf("u%d set up", i))
		if set[i] {
			sc.Setup = append(sc.Setup, i)
		}
	}
	for u := 0; u < nu; u++ {
		name := sc.Users[u].Name
		if u == 0 && !*wide {
			continue // u0 stays registered: see wideFlag
		}
		if set[u] {
			if rapid.Bool().Draw(t, "remote unregister "+name) {
				sc.Remotes = append(sc.Remotes, harness.Remote{Kind: harness.RemoteUnregister, User: u})
			}
		} else if rapid.Bool().Draw(t, "remote register "+name) {
			sc.Remotes = append(sc.Remotes, harness.Remote{Kind: harness.RemoteRegister, User: u})
		}
	}
	tasks := rapid.IntRange(2, 3).Draw(t, "tasks")
	for i := 0; i < tasks; i++ {
		sc.Tasks = append(sc.Tasks, genProgram(t, fmt.Sprintf("task%d", i)))
	}
	sc.Bound = harness.Bound{E: len(sc.Remotes)}
	return sc
}

// genProgram draws a task program: calls (depth at most 4), tail calls,
// returns, unwinds and sleeps; open calls at the end are returned.
func genProgram(t *rapid.T, name string) []harness.Op {
	n := rapid.IntRange(1, 12).Draw(t, name+" length")
	var p []harness.Op
	depth := 0
	for i := 0; i < n; i++ {
		k := rapid.IntRange(0, 9).Draw(t, name+" op")
		switch {
		case k <= 3 && depth < 4:
			p = append(p, harness.Op{Kind: harness.OpCall, Func: rapid.IntRange(1, TaskFuncs).Draw(t, name+" func")})
			depth++
		case k <= 6 && depth > 0:
			p = append(p, harness.Op{Kind: harness.OpRet})
			depth--
		case k == 7 && depth > 0:
			p = append(p, harness.Op{Kind: harness.OpTail, Func: rapid.IntRange(1, TaskFuncs).Draw(t, name+" func")})
		case k == 8:
			p = append(p, harness.Op{Kind: harness.OpSleep})
		default:
			p = append(p, harness.Op{Kind: harness.OpUnwind})
		}
	}
	for ; depth > 0; depth-- {
		p = append(p, harness.Op{Kind: harness.OpRet})
	}
	return p
}

// atOpStart lets a chooser deliver remote actions only between task-level
// operations, never an interrupt: the sequential behaviour of the port.
func atOpStart(p *harness.Point, o harness.Option) bool {
	return p.Kind == harness.PointYield && p.Pos.Site == fgraph.SiteOpStart && o.Kind == harness.OptRemote
}

// differentialProp is the differential property: the port against the
// model after every step (the harness's oracles 3 and 4 compare the word
// image with the model at every quiescent point and every callback record,
// retfunc calls and retrieved data included, with the model's prediction).
func differentialProp(v fgraph.Variant, mut fgraph.Mutant, rep *reporter) func(*rapid.T) {
	return func(t *rapid.T) {
		rep.begin()
		sc := genDifferential(t, v)
		sc.Mutant = mut
		ch := &RapidChooser{T: t, Flips: 2, Allow: atOpStart}
		res, err := rep.run(sc, ch)
		if err != nil {
			t.Fatalf("misuse: %v", err)
		}
		for _, e := range res.Schedule.Events {
			if e.Kind != harness.EvRemote || e.At.Site != fgraph.SiteOpStart {
				t.Fatalf("the chooser delivered %s at %s", e.Kind, e.At)
			}
			rep.mu.Lock()
			rep.remotes++
			rep.mu.Unlock()
		}
		if res.Failed() {
			t.Log(rep.fail(sc, res, "differential: remote actions at op.start only, no interrupts"))
			t.Fatalf("%s", res.Violations[0])
		}
	}
}

// TestDifferentialNoInterrupts (issue 2): random sequences over two or more
// tasks of register, unregister, call, return, sleep/wake, reserve and
// retrieve agree with the model after every step, on every variant.
func TestDifferentialNoInterrupts(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			rep := newReporter("rapid", t.Name(), false)
			rapidCheck(t, rep, differentialProp(v, 0, rep))
			// Vacuity: the remote actions did fire between operations.
			if rep.checks >= 20 && rep.remotes == 0 {
				t.Errorf("%d checks and no remote register or unregister delivered", rep.checks)
			}
			t.Logf("%d checks, %d remote actions delivered", rep.checks, rep.remotes)
		})
	}
}

// TestDifferentialFindsSequentialMutants: the same property is able to
// fail. With a mutant that breaks sequential behaviour it finds a
// counterexample within a fixed budget from a fixed seed.
func TestDifferentialFindsSequentialMutants(t *testing.T) {
	const checks, seed = 100, 1
	for _, m := range []fgraph.Mutant{fgraph.MRetOff, fgraph.MRollbackDepth} {
		for _, v := range variants {
			name := v.String() + "+" + m.String()
			t.Run(name, func(t *testing.T) {
				rep := newReporter("rapid", t.Name(), true)
				failed, log := rapidBudget(t.Name(), checks, seed, 100*time.Millisecond, differentialProp(v, m, rep))
				if !failed || rep.first == nil {
					t.Fatalf("no counterexample in %d checks from seed %d:\n%s", checks, seed, log)
				}
				t.Logf("killed at check %d: %s", rep.killCheck, rep.first.Violations[0])
			})
		}
	}
}
