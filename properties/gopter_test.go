package properties

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
)

// The gopter property is a commands-based stateful test over a Plan: the
// state is the plan built so far (Plan values are never mutated: NextState
// copies), the system under test accumulates the same steps and runs the
// whole plan with the plan's deterministic chooser after every command, and
// every postcondition is "no violation beyond the known findings". Gopter
// shrinks the command list (dropping commands, then shrinking each command
// with shrinkStep) and the last failing sequence it evaluates is the
// shrunk counterexample, whose schedule file the test writes.

// gopterCmd is one command: one plan step.
type gopterCmd struct{ step Step }

// gopterSUT is the system under test: the plan and its latest run.
type gopterSUT struct {
	plan   Plan
	rep    *reporter
	failed *harness.Result
}

func (c gopterCmd) Run(s commands.SystemUnderTest) commands.Result {
	sut := s.(*gopterSUT)
	if sut.failed != nil {
		return sut.failed // the sequence already failed; later commands change nothing
	}
	sut.plan.Steps = append(sut.plan.Steps, c.step)
	sc := sut.plan.Scenario()
	res, err := sut.rep.run(sc, sut.plan.Chooser())
	if err != nil {
		panic(fmt.Sprintf("misuse: %v", err))
	}
	if res.Failed() {
		sut.failed = res
		sut.rep.fail(sc, res, "gopter commands, plan "+sut.plan.String())
	}
	return res
}

func (c gopterCmd) NextState(s commands.State) commands.State {
	p := *s.(*Plan)
	p.Steps = append(append([]Step(nil), p.Steps...), c.step)
	return &p
}

func (c gopterCmd) PreCondition(s commands.State) bool {
	p := s.(*Plan)
	b := p.Base.Bound
	switch c.step.Kind {
	case StepOp:
		return p.Fixed || p.Valid(c.step.Op)
	case StepSleep:
		return !p.Fixed && p.Tasks > 1
	case StepIRQ:
		return len(p.Base.IRQ) > 0 && b.K > 0 && b.D > 0
	case StepNMI:
		return len(p.Base.NMI) > 0 && b.K > 1 && b.D > 1
	case StepRemote:
		return c.step.Remote < len(p.Base.Remotes) && b.E > 0
	case StepOrder:
		return b.R > 0
	}
	return false
}

func (c gopterCmd) PostCondition(_ commands.State, r commands.Result) *gopter.PropResult {
	if res, ok := r.(*harness.Result); ok && res != nil && res.Failed() {
		return &gopter.PropResult{Status: gopter.PropFalse, Labels: []string{res.Violations[0].String()}}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (c gopterCmd) String() string { return c.step.String() }

// genStep draws one step for the plan p (weights favour operations; the
// commands framework retries until the precondition holds).
func genStep(p *Plan, r *rand.Rand) Step {
	skip := func() int { return r.Intn(25) }
	w := r.Intn(100)
	if p.Fixed {
		switch {
		case w < 50:
			return Step{Kind: StepOp}
		case w < 75:
			return Step{Kind: StepIRQ, Skip: skip()}
		case w < 85:
			return Step{Kind: StepNMI, Skip: skip()}
		case w < 95:
			return Step{Kind: StepRemote, Remote: r.Intn(max(len(p.Base.Remotes), 1)), Skip: skip()}
		}
		return Step{Kind: StepOrder, Nth: r.Intn(8), Alt: r.Intn(8)}
	}
	fn := func() int { return 1 + r.Intn(TaskFuncs) }
	switch {
	case w < 30:
		return Step{Kind: StepOp, Op: harness.Op{Kind: harness.OpCall, Func: fn()}}
	case w < 50:
		return Step{Kind: StepOp, Op: harness.Op{Kind: harness.OpRet}}
	case w < 55:
		return Step{Kind: StepOp, Op: harness.Op{Kind: harness.OpTail, Func: fn()}}
	case w < 60:
		return Step{Kind: StepOp, Op: harness.Op{Kind: harness.OpUnwind}}
	case w < 67:
		return Step{Kind: StepSleep}
	case w < 83:
		return Step{Kind: StepIRQ, Skip: skip()}
	case w < 90:
		return Step{Kind: StepNMI, Skip: skip()}
	case w < 97:
		return Step{Kind: StepRemote, Remote: r.Intn(max(len(p.Base.Remotes), 1)), Skip: skip()}
	}
	return Step{Kind: StepOrder, Nth: r.Intn(8), Alt: r.Intn(8)}
}

// shrinkStep proposes simpler versions of a command: injections earlier
// (smaller Skip) and an NMI as an IRQ, calls of f1, orders of the first
// region in the first alternative.
func shrinkStep(v interface{}) gopter.Shrink {
	s := v.(gopterCmd).step
	var out []Step
	switch s.Kind {
	case StepIRQ, StepNMI, StepRemote:
		for _, k := range []int{0, s.Skip / 2, s.Skip - 1} {
			if k >= 0 && k < s.Skip {
				t := s
				t.Skip = k
				out = append(out, t)
			}
		}
		if s.Kind == StepNMI {
			t := s
			t.Kind = StepIRQ
			out = append(out, t)
		}
	case StepOp:
		if s.Op.Func > 1 {
			t := s
			t.Op.Func = 1
			out = append(out, t)
		}
	case StepOrder:
		if s.Nth > 0 {
			t := s
			t.Nth = 0
			out = append(out, t)
		}
		if s.Alt > 0 {
			t := s
			t.Alt = 0
			out = append(out, t)
		}
	}
	i := 0
	return func() (interface{}, bool) {
		if i >= len(out) {
			return nil, false
		}
		i++
		return gopterCmd{out[i-1]}, true
	}
}

// genBaseGopter draws a generated plan's base scenario with gopter's
// random source: std's users and remote actions, one or two tasks, the
// interrupt programs and a small bound (GenScenario's narrow space).
func genBaseGopter(v fgraph.Variant, r *rand.Rand) *Plan {
	std := harness.Standard(v)
	tasks := 1 + r.Intn(2)
	sc := &harness.Scenario{
		Name: "gopter", Variant: v, StackWords: []int{64, 40}[r.Intn(2)],
		Users: std.Users, Setup: std.Setup, Remotes: std.Remotes,
		Tasks: make([][]harness.Op, tasks),
		IRQ:   irqs[r.Intn(len(irqs))],
		NMI:   nmis[r.Intn(len(nmis))],
		Bound: harness.Bound{K: r.Intn(3), D: 1 + r.Intn(2), R: r.Intn(2), E: r.Intn(2)},
		Alias: r.Intn(4) == 3,
	}
	return &Plan{Base: sc, Tasks: tasks}
}

// gopterCommands is the commands definition: over the fixed scenario if
// fixed is set, else over generated plans of variant v.
func gopterCommands(v fgraph.Variant, mut fgraph.Mutant, fixed *harness.Scenario, rep *reporter) commands.Commands {
	initial := gopter.Gen(func(gp *gopter.GenParameters) *gopter.GenResult {
		var p *Plan
		if fixed != nil {
			p = &Plan{Base: withMutant(fixed, mut), Fixed: true}
		} else {
			p = genBaseGopter(v, gp.Rng)
			p.Base.Mutant = mut
		}
		return gopter.NewGenResult(p, gopter.NoShrinker)
	})
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(st commands.State) commands.SystemUnderTest {
			rep.begin()
			p := *st.(*Plan)
			p.Steps = nil
			return &gopterSUT{plan: p, rep: rep}
		},
		InitialStateGen: initial,
		GenCommandFunc: func(st commands.State) gopter.Gen {
			p := st.(*Plan)
			return func(gp *gopter.GenParameters) *gopter.GenResult {
				return gopter.NewGenResult(gopterCmd{genStep(p, gp.Rng)}, shrinkStep)
			}
		},
	}
}

// gopterParams are the test parameters: tests successful tests from seed,
// command lists of 1..20 commands.
func gopterParams(tests int, seed int64) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(seed)
	p.MinSuccessfulTests = tests
	p.MinSize, p.MaxSize = 1, 20
	p.MaxShrinkCount = 200
	return p
}

// gopterCheck runs the commands property and, on failure, writes the
// shrunk counterexample's schedule file and reports it with gopter's own
// report, the seed and the replay commands.
func gopterCheck(t *testing.T, cmds commands.Commands, rep *reporter) {
	t.Helper()
	seed := *gopterSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	res := commands.Prop(cmds).Check(gopterParams(*gopterTests, seed))
	if res.Passed() {
		t.Logf("[gopter] OK, passed %d tests (seed %d)", res.Succeeded, seed)
		return
	}
	var b bytes.Buffer
	gopter.NewFormatedReporter(true, 100, &b).ReportTestResult(t.Name(), res)
	fmt.Fprintf(&b, "[gopter] seed %d\n", seed)
	if rep.last != nil {
		rep.path = FailPath(t.Name())
		text, _ := rep.last.Write(rep.path)
		b.WriteString(text)
	}
	fmt.Fprintf(&b, "[fgcheck] to reproduce:\n  go test ./properties -run '%s' -gopter.seed=%d\n", runPattern(t.Name()), seed)
	if rep.path != "" {
		fmt.Fprintf(&b, "  fgcheck replay properties/%s\n", rep.path)
	}
	t.Error(b.String())
}

// TestGopterCommands: gopter's commands over generated plans and over std
// (fixed program, injections only), on every baseline variant.
func TestGopterCommands(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String()+"-generated", func(t *testing.T) {
			rep := newReporter("gopter", t.Name(), true)
			gopterCheck(t, gopterCommands(v, 0, nil, rep), rep)
		})
		t.Run(v.String()+"-std", func(t *testing.T) {
			rep := newReporter("gopter", t.Name(), true)
			gopterCheck(t, gopterCommands(v, 0, harness.Standard(v), rep), rep)
		})
	}
}

// gopterBudget runs the commands property quietly for at most tests tests
// from seed and returns the reporter (its kill fields say whether and when
// it failed).
func gopterBudget(v fgraph.Variant, mut fgraph.Mutant, fixed *harness.Scenario, tests int, seed int64) *reporter {
	rep := newReporter("gopter", "budget", true)
	p := gopterParams(tests, seed)
	p.MaxShrinkCount = 0
	commands.Prop(gopterCommands(v, mut, fixed, rep)).Check(p)
	return rep
}
