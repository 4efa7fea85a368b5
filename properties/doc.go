// Package properties holds fgcheck's stateful property tests, written with
// pgregory.net/rapid and github.com/leanovate/gopter, and the pieces they
// share. Every property drives harness.Run through a harness.Chooser, so
// every counterexample is an ordinary schedule file, whichever library
// found it.
//
//   - RapidChooser draws every choice of a run from a rapid.T (an injection
//     only after Flips coin draws come up true, so rapid shrinks toward "no
//     injection"). TestRapidSchedule runs it over std and peer-spin of
//     every baseline variant.
//   - Plan is a test case as data: task-level operations (call, tail, ret,
//     sleep, unwind; or "step" through a fixed program) and injections
//     (irq, nmi, remote, reorder) with a deterministic Chooser.
//     TestRapidStateMachine is a rapid T.Repeat state machine over plans,
//     on generated scenarios (GenScenario) and on std; TestGopterCommands
//     is a gopter commands property over the same plans, with shrinkers
//     for the commands. Both rerun the plan after every command, so the
//     oracles check every prefix.
//   - TestDifferentialNoInterrupts (issue 2) compares the port with the
//     model on random multi-task programs with register and unregister
//     between operations and no interrupts; TestDifferentialFindsSequentialMutants
//     shows the same property fails on mutants that break sequential
//     behaviour.
//   - TestPropertiesKillMutants and TestPropertiesBaselinesClean pin what
//     the properties find within a fixed budget from fixed seeds;
//     TestEngineComparison (FGCHECK_COMPARE=1) measures every engine
//     against the mutant catalogue (docs/engines.md).
//   - TestTriage replays the counterexamples in testdata/triage/ that the
//     wide generators (-fgcheck.wide) find on the baselines and that the
//     harness has yet to triage.
//
// On a failure a property writes the shrunk counterexample atomically to
// testdata/fgcheck/<Test>/<Test>-<time>-<pid>.txt, logs its canonical text,
// and prints the commands that reproduce it:
//
//	go test ./properties -run '^TestRapidSchedule$/^latest-std$' -rapid.failfile=testdata/rapid/...
//	go test ./properties -run '^TestGopterCommands$/^latest-std$' -gopter.seed=N
//	fgcheck replay properties/testdata/fgcheck/...txt
//
// Budgets: -rapid.checks (default 100, also RAPID_CHECKS), -rapid.steps
// (actions per state machine) and -gopter.tests (default 100), with
// -rapid.seed and -gopter.seed to start from a given seed.
package properties
