// Package corpus holds the curated, minimized failing interleavings of
// fgcheck, one commented file each, and the code that loads and checks
// them. corpus/README.md indexes every file with one paragraph.
//
// A corpus file is a schedule file (harness.ParseFile) whose '#' comments
// tell the story: the numbered steps of the interleaving, the oracle that
// breaks, and how it was found (engine, runs to the first kill, size before
// and after minimizing). Its "expect violation ORACLE" line is the verdict,
// judged mechanically by Check:
//
//   - a mutant's file (it has a "mutant" line) must fail on replay with
//     ORACLE, beyond the known findings;
//   - a known kernel finding's file carries a "# finding: NAME" comment
//     naming an entry of harness.KnownFindings; its non-strict replay must
//     show that finding and no violation, its strict replay must fail with
//     ORACLE through one of the replay's known findings, and the same
//     schedule with the finding's fix (the first word of KnownFinding.Fix:
//     a fix variant such as reserve-irqoff, or a kernel variant such as
//     latest) must pass with the finding gone (non-strictly: an unrelated
//     known finding of the fix variant, such as F1-bit0 on latest, may
//     still show). When the fix variant fails even the program-order run
//     of the scenario, Check returns a *FixBrokenError instead;
//   - either way, the same schedule must pass, non-strictly, on every
//     baseline of mutants.Baselines: the mutant cleared on latest, v6.11
//     and seed, and, for a mutant that implies a fix, its variant with
//     that fix. Where a variant never reaches a position the schedule
//     names, the event is not injected, and the run must still pass.
//
// Every event of a file must fire on its own replay: a file whose events
// no longer fire (the code moved under it) is stale, and Check says so.
// Malformed files are collected in a *MalformedError by Load.
//
//	entries, err := corpus.Load(".")
//	if err != nil { ... }
//	for _, e := range entries {
//		if err := corpus.Check(e); err != nil { ... }
//	}
package corpus
