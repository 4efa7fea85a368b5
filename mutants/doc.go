// Package mutants runs the mutant catalogue (fgraph.Catalogue) against the
// `std` bound and reports the mutation score: for every seeded bug, whether
// the exhaustive exploration kills it, by which oracle, how fast (runs and
// seconds to the first violation) and how small its minimized failing
// schedule is.
//
//	rep, err := mutants.Run(mutants.Options{})
//	if err != nil { ... }
//	fmt.Print(rep.Table())
//	if !rep.OK() { ... } // a mutant survived, or a control was flagged
//
// Each mutant gets one single-threaded exploration of harness.Standard on
// the baseline variant (Options.Variant, latest by default) with the
// mutant switched on; it stops at the first violation beyond the known
// kernel findings, which are excused as in every non-strict run. The
// explorations run in parallel, one per worker; the report lists them in
// catalogue order whatever order they finish in.
//
// A non-control mutant is killed when a violation shows up; a control is
// "killed" the same way, and that is a failure: controls are edits the
// oracles must not flag (fgraph.MutantInfo.Reason says why). Report.Killed
// and Report.Total count non-control mutants only; a control never counts
// toward the score. Survivors and controls cost a complete exploration of
// the bound (about 57k schedules for std).
//
// The exploration order (Options.Order) decides only how fast a kill is
// found, never what is explored: every order visits the same schedules
// (OrderIDDFS re-runs the one-choice schedules once). OrderNear, the
// default, visits schedules by their number of non-default choices and
// then by the distance between consecutive choices, so that a region
// order chosen at the start of a run is tried with an interrupt right
// after it long before the depth-first odometer would get there.
// docs/mutants.md has the figures.
//
// Every failing schedule is minimized with harness.Minimize; the minimized
// file carries its story in comments and is what corpus/ keeps.
package mutants
