package properties

import (
	"fmt"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"pgregory.net/rapid"
)

// scheduleProp is the rapid property over a fixed scenario: every choice
// of the run (interrupt, remote action, region order) is a rapid draw, and
// the run must not violate any oracle beyond the known findings.
func scheduleProp(sc *harness.Scenario, rep *reporter) func(*rapid.T) {
	flips := flipsFor(sc)
	return func(t *rapid.T) {
		rep.begin()
		res, err := rep.run(sc, &RapidChooser{T: t, Flips: flips})
		if err != nil {
			t.Fatalf("misuse: %v", err)
		}
		if res.Failed() {
			t.Log(rep.fail(sc, res, fmt.Sprintf("rapid chooser, flips=%d", flips)))
			t.Fatalf("%s", res.Violations[0])
		}
	}
}

// TestRapidSchedule: rapid explores the schedules of the written-down
// scenarios (std, peer-spin) of every baseline variant; none may violate
// an oracle beyond its known findings.
func TestRapidSchedule(t *testing.T) {
	for _, v := range variants {
		for _, sc := range fixedScenarios(v) {
			t.Run(scenarioName(sc), func(t *testing.T) {
				rep := newReporter("rapid", t.Name(), false)
				rapidCheck(t, rep, scheduleProp(sc, rep))
			})
		}
	}
}

// machine is the rapid state machine over a Plan: task-level operations
// (call, tail, ret, sleep, unwind; or "step" through a fixed program) and
// injections (irq, nmi, remote, reorder). After every action the whole plan
// runs again with the plan's deterministic chooser, so the oracles check
// every prefix and the first failing action is the end of the test case.
type machine struct {
	plan  Plan
	rep   *reporter
	dirty bool
}

func (m *machine) add(s Step) {
	m.plan.Steps = append(m.plan.Steps, s)
	m.dirty = true
}

// actions is the Repeat map.
func (m *machine) actions() map[string]func(*rapid.T) {
	sc := m.plan.Base
	b := sc.Bound
	a := map[string]func(*rapid.T){
		"": m.check,
		"irq": func(t *rapid.T) {
			if len(sc.IRQ) == 0 || b.K == 0 || b.D == 0 {
				t.Skip("no irq")
			}
			m.add(Step{Kind: StepIRQ, Skip: rapid.IntRange(0, 24).Draw(t, "skip")})
		},
		"nmi": func(t *rapid.T) {
			if len(sc.NMI) == 0 || b.K < 2 || b.D < 2 {
				t.Skip("no nmi")
			}
			m.add(Step{Kind: StepNMI, Skip: rapid.IntRange(0, 24).Draw(t, "skip")})
		},
		"remote": func(t *rapid.T) {
			if len(sc.Remotes) == 0 || b.E == 0 {
				t.Skip("no remote")
			}
			r := rapid.IntRange(0, len(sc.Remotes)-1).Draw(t, "remote")
			m.add(Step{Kind: StepRemote, Remote: r, Skip: rapid.IntRange(0, 24).Draw(t, "skip")})
		},
		"reorder": func(t *rapid.T) {
			if b.R == 0 {
				t.Skip("no reorder")
			}
			m.add(Step{Kind: StepOrder, Nth: rapid.IntRange(0, 7).Draw(t, "region"), Alt: rapid.IntRange(0, 7).Draw(t, "order")})
		},
	}
	if m.plan.Fixed {
		a["step"] = func(t *rapid.T) { m.add(Step{Kind: StepOp}) }
		return a
	}
	op := func(k harness.OpKind, withFunc bool) func(*rapid.T) {
		return func(t *rapid.T) {
			o := harness.Op{Kind: k}
			if withFunc {
				o.Func = 1
			}
			if !m.plan.Valid(o) {
				t.Skip("no open call") // before any draw: rapid picks another action
			}
			if withFunc {
				o.Func = rapid.IntRange(1, TaskFuncs).Draw(t, "func")
			}
			m.add(Step{Kind: StepOp, Op: o})
		}
	}
	a["call"] = op(harness.OpCall, true)
	a["tail"] = op(harness.OpTail, true)
	a["ret"] = op(harness.OpRet, false)
	a["unwind"] = op(harness.OpUnwind, false)
	a["sleep"] = func(t *rapid.T) {
		if m.plan.Tasks < 2 {
			t.Skip("one task")
		}
		m.add(Step{Kind: StepSleep})
	}
	return a
}

// check runs the plan if it changed and fails on a violation.
func (m *machine) check(t *rapid.T) {
	if !m.dirty {
		return
	}
	m.dirty = false
	sc := m.plan.Scenario()
	res, err := m.rep.run(sc, m.plan.Chooser())
	if err != nil {
		t.Fatalf("misuse: %v", err)
	}
	if res.Failed() {
		t.Log(m.rep.fail(sc, res, "rapid state machine, plan "+m.plan.String()))
		t.Fatalf("%s", res.Violations[0])
	}
}

// machineProp is the state-machine property: on a scenario drawn by
// GenScenario for variant v (fixed == nil), or on a fixed scenario.
func machineProp(v fgraph.Variant, mut fgraph.Mutant, fixed *harness.Scenario, rep *reporter) func(*rapid.T) {
	return func(t *rapid.T) {
		rep.begin()
		m := &machine{rep: rep}
		if fixed != nil {
			m.plan = Plan{Base: withMutant(fixed, mut), Fixed: true}
			m.dirty = true // the fixed program runs even without steps
		} else {
			sc, tasks := GenScenario(t, v, *wide)
			sc.Mutant = mut
			m.plan = Plan{Base: sc, Tasks: tasks}
		}
		t.Repeat(m.actions())
	}
}

// TestRapidStateMachine: rapid's state machine over generated scenarios of
// every baseline variant, and over std in fixed-program mode.
func TestRapidStateMachine(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String()+"-generated", func(t *testing.T) {
			rep := newReporter("rapid", t.Name(), false)
			rapidCheck(t, rep, machineProp(v, 0, nil, rep))
		})
		t.Run(v.String()+"-std", func(t *testing.T) {
			rep := newReporter("rapid", t.Name(), false)
			rapidCheck(t, rep, machineProp(v, 0, harness.Standard(v), rep))
		})
	}
}
