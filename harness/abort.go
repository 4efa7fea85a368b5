package harness

import (
	"fmt"
	"runtime"
	"strings"
)

// A run ends early in four ways, all by unwinding the code under test with
// a panic that runner.guard catches, so that nothing after the verdict
// executes the port (a corrupted stack cannot loop or recurse forever):
//
//   - the first violation that stops the run (abortRun);
//   - the step budget running out: the code under test made more shared
//     accesses than any terminating run of the scenario can (abortRun,
//     after a panic-oracle violation);
//   - a Go panic inside the code under test or an oracle reading its state
//     (an out-of-range index, a nil dereference): the panic oracle's
//     violation, with the schedule that led there; no known finding
//     excuses it;
//   - RunOptions.stop (a signal): the run has no verdict and is not
//     counted (haltRun, runner.halted).
//
// A panic of the harness itself (*InternalError) or of the chooser (the
// engine's) is not a verdict about the code under test: it goes on up.

// abortRun is the panic value that ends a run whose verdict is recorded.
type abortRun struct{}

// InternalError is a failure of fgcheck itself, not of the code under test
// (for example a replayed prefix that no longer offers the options it
// offered). Explore and Sample return it as their error.
type InternalError struct{ Msg string }

func (e *InternalError) Error() string { return "fgcheck internal error: " + e.Msg }

// internalf panics with an *InternalError.
func internalf(format string, args ...any) {
	panic(&InternalError{Msg: fmt.Sprintf(format, args...)})
}

// Step budget: every shared access of the code under test is a step.
const (
	// stepsPerOp is the budget per operation a run can execute. The
	// costliest run of std (every schedule, every variant) makes 635
	// steps in all, peer-spin's 383, against budgets of 442,368 and
	// 327,680 (a few milliseconds of work). The budget grows with the
	// scenario (2.7e9 steps at every limit of limits.go), and a signal
	// stops even such a run at once (RunOptions.stop).
	stepsPerOp = 1 << 14
	// stepsBase covers setup and the remote actions.
	stepsBase = 1 << 16
)

// StepBudget is the number of shared accesses a run of sc may make: linear
// in the operations the run can execute (every task op, and every
// interrupt's program once per interrupt the bound allows).
func StepBudget(sc *Scenario) int64 {
	ops := int64(0)
	for _, p := range sc.Tasks {
		ops += int64(len(p))
	}
	ops += int64(sc.Bound.K) * int64(len(sc.IRQ)+len(sc.NMI))
	ops += int64(sc.Bound.E) + int64(len(sc.Setup))
	return stepsBase + stepsPerOp*ops
}

// haltRun is the panic value of a run cut short by RunOptions.stop.
type haltRun struct{}

// step counts one shared access against the budget, and every 1,024 looks
// whether the run is to stop: one comparison an access, with the count at
// which either is due next (nextLook; setSteps).
func (r *runner) step() {
	r.steps++
	// With direct set, a remote CPU's or an oracle's call: a compiled
	// target makes it on another thread or under C frames that must return
	// normally; the next access of the run proper stops the run if it
	// must.
	if r.steps >= r.nextLook && r.direct == 0 {
		r.look()
	}
}

// look stops the run if Stop is set or the budget is spent, and sets when
// to look next: the next multiple of 1,024, or past the budget.
func (r *runner) look() {
	if r.opt.stop != nil && r.opt.stop.Load() {
		r.halted = true
		panic(haltRun{})
	}
	if r.steps > r.budget {
		r.skipped -= r.steps // the accesses executed stay as they were (changes.go)
		r.setSteps(0)        // the report below may read memory through the hooks
		r.fatal(fmt.Sprintf("step budget exhausted: %d shared accesses without the run ending (the code under test loops or recurses without end)", r.budget))
	}
	r.nextLook = min((r.steps|1023)+1, r.budget+1)
}

// setSteps sets the count of the run's accesses (a run that begins, or
// resumes at a snap): step looks again at the next access.
func (r *runner) setSteps(n int64) { r.steps, r.nextLook = n, 0 }

// guard runs body, the part of a run that executes the code under test,
// and turns the ways it can end early into its verdict.
func (r *runner) guard(body func()) {
	defer func() {
		switch x := recover().(type) {
		case nil, abortRun, haltRun:
		case *InternalError:
			panic(x)
		case chooserPanic:
			panic(x.x) // the engine's, not the code under test's
		default:
			r.crashed(x)
		}
	}()
	body()
}

// shielded marks the panics of a chooser: they belong to the engine (a
// rapid or gopter chooser may panic on purpose) and go on up unchanged.
type shielded struct{ ch Chooser }

// chooserPanic carries a chooser's panic through runner.guard.
type chooserPanic struct{ x any }

func (s shielded) Choose(p *Point, opts []Option) int {
	defer func() {
		if x := recover(); x != nil {
			panic(chooserPanic{x})
		}
	}()
	return s.ch.Choose(p, opts)
}

// stopRun ends the run after a violation that stops it.
func (r *runner) stopRun() { panic(abortRun{}) }

// crashed records a Go panic of the code under test as the panic oracle's
// violation.
func (r *runner) crashed(x any) {
	msg := r.crashMsg(x)
	defer func() {
		if recover() != nil { // fatal's abortRun; or the state is too broken to draw
			r.stopped = true
		}
	}()
	r.fatal(msg)
}

// quietCrash is crashed for a merged representative (remotes.go): the
// violation is recorded and the run stops at the end of its segment.
func (r *runner) quietCrash(x any) {
	if r.quietStop {
		return
	}
	msg := r.crashMsg(x)
	r.res.Violations = append(r.res.Violations, Violation{Oracle: OraclePanic, Msg: msg, At: r.top().name, AliasDependent: r.aliasDep, Reader: r.rd.name})
	r.quietStop = true
}

// crashMsg is the panic oracle's message for a Go panic x of the code
// under test.
func (r *runner) crashMsg(x any) string {
	msg := fmt.Sprint(x)
	if err, ok := x.(error); ok {
		msg = err.Error()
	}
	where := panicSite()
	if len(r.ctxs) > 0 {
		if s := r.top().lastSite; s != 0 {
			where += fmt.Sprintf(", after yield point %s", s)
		}
	}
	return fmt.Sprintf("the code under test panicked: %s (%s)", oneLineText(msg), where)
}

// fatal records a panic-oracle violation that no known finding excuses and
// no option lets the run survive, and ends the run.
func (r *runner) fatal(msg string) {
	if r.quietStop {
		// A merged representative's run has its verdict (remotes.go).
		r.stopped = true
		panic(abortRun{})
	}
	at := "setup"
	if len(r.ctxs) > 0 {
		at = r.top().name
	}
	v := Violation{Oracle: OraclePanic, Msg: msg, At: at, AliasDependent: r.aliasDep, Reader: r.rd.name}
	r.res.Violations = append(r.res.Violations, v)
	r.traceViolation(TraceViolation, "VIOLATION", v)
	wasStopped := r.stopped
	r.stopped = true
	if r.tr != nil && !wasStopped {
		func() {
			defer func() { recover() }() // no picture of a broken state
			r.direct++
			defer func() { r.direct-- }()
			r.tracePicture(r.tr.last().Level, "at the violation")
		}()
	}
	panic(abortRun{})
}

// panicSite names the innermost function of the code under test (package
// fgraph, the shim's primitives left out) on the panicking goroutine's
// stack, else the innermost of the harness: deterministic for one build.
func panicSite() string {
	pcs := make([]uintptr, 128)
	n := runtime.Callers(1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking, harness := false, ""
	for {
		f, more := frames.Next()
		fn := f.Function
		short := fn[strings.LastIndex(fn, "/")+1:]
		switch {
		case fn == "runtime.gopanic":
			panicking = true
		case !panicking || strings.HasPrefix(fn, "runtime."):
		case strings.HasPrefix(short, "fgraph.") && !shimFunc[short[strings.LastIndex(short, ".")+1:]]:
			return "in " + short
		case harness == "" && strings.HasPrefix(short, "harness."):
			harness = short
		}
		if !more {
			break
		}
	}
	if harness != "" {
		return "in " + harness
	}
	return "in the code under test"
}

// shimFunc are the methods of fgraph/shim.go: every access goes through
// them, so they never say where it came from.
var shimFunc = map[string]bool{"ld": true, "ldOnce": true, "ldAtomic": true, "st": true, "stOnce": true,
	"stAtomic": true, "atomicInc": true, "fence": true, "barrier": true, "reread": true}

// oneLineText folds a message onto one line.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// protect runs f, turning any panic that escapes it (the harness's own:
// the code under test's are verdicts, runner.guard) into an *InternalError.
func protect(f func() (*Summary, error)) (s *Summary, err error) {
	defer func() {
		if x := recover(); x != nil {
			ie, ok := x.(*InternalError)
			if !ok {
				ie = &InternalError{Msg: fmt.Sprint(x)}
			}
			s, err = nil, ie
		}
	}()
	return f()
}

// wrapped is ch, wrapped by the test hook RunOptions.wrap if set.
func wrapped(wrap func(*runner, Chooser) Chooser, r *runner, ch Chooser) Chooser {
	if wrap == nil {
		return ch
	}
	return wrap(r, ch)
}
