package main

// The summary of an exploration or a sample, as text and as JSON, with
// peak memory and the store-line coverage of a compiled target.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/fgcheck/fgcheck/harness"
)

var osExit = os.Exit

// outcome is what explore and random report.
type outcome struct {
	cmd      string
	sc       *harness.Scenario
	sum      *harness.Summary
	h        *hunt
	seconds  float64
	workers  int
	engine   string
	lazy     bool // explore's region orders are lazy (--orders)
	merged   bool // explore merges remote placements (--remotes)
	std      bool // the std scenario: coverage is a requirement
	sharded  bool
	shard    string // "i/n" when sharded
	coverage bool   // print the table
	runKinds bool   // print the runs by change (explore --run-kinds)
	// stopped says why an incomplete run stopped ("" when complete).
	stopped string
	// resumed is the schedule count a --checkpoint file resumed from
	// (-1: not resumed), earlier the exploring time of the earlier legs.
	resumed int64
	earlier float64
}

// stopReason says why the engine stopped before the end, from what the
// command knows: a signal, the time budget, --max-runs, a violation.
func (o *outcome) stopReason(maxRuns int64) string {
	switch {
	case o.sum.Complete && o.cmd == "explore":
		return ""
	case o.h.signal.Load() == 130:
		return "interrupted (SIGINT)"
	case o.h.signal.Load() == 143:
		return "interrupted (SIGTERM)"
	case o.h.overtime.Load():
		return "time budget " + o.h.budget.String() + " reached"
	case maxRuns > 0 && o.sum.Runs >= maxRuns:
		return fmt.Sprintf("--max-runs %d reached", maxRuns)
	case o.sum.Kbuild.Violations > 0 && len(o.sc.Models()) > 1:
		return "stopped at the first violation under kbuild (--keep-going goes on)"
	case o.sum.Violations > 0:
		return "stopped at the first violation (--keep-going goes on)"
	case o.cmd == "random":
		return ""
	}
	return "stopped early"
}

// missing is the required sites never hit, as names.
func (o *outcome) missing() []string {
	var out []string
	for _, s := range o.sum.Coverage.Missing(o.sc) {
		out = append(out, s.String())
	}
	return out
}

// coverageMisuse: the std bound explored completely without hitting every
// required site (only judged when no violation cut runs short).
func (o *outcome) coverageMisuse() bool {
	return o.std && o.sum.Complete && !o.sharded && o.sum.Violations == 0 && len(o.missing()) > 0
}

// exitCode is 1 on a violation, 2 when the std bound misses required
// sites, else 0.
func (o *outcome) exitCode() int {
	switch {
	case o.sum.Violations > 0:
		return exitViolation
	case o.h.signal.Load() != 0:
		return int(o.h.signal.Load())
	case o.coverageMisuse():
		return exitMisuse
	}
	return exitClean
}

func knownNames(known map[string]int64) []string {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func mutantName(sc *harness.Scenario) string {
	if sc.Mutant == 0 {
		return ""
	}
	return sc.Mutant.String()
}

// jsonSummary is the --json output of explore and random: exactly these
// keys, in this order.
type jsonSummary struct {
	Variant        string         `json:"variant"`
	Mutant         string         `json:"mutant"` // "" when none
	Bound          string         `json:"bound"`
	Schedules      int64          `json:"schedules"`
	Violations     int64          `json:"violations"`
	Known          []string       `json:"known"`
	Seconds        float64        `json:"seconds"`
	FirstViolation *jsonViolation `json:"first_violation"`
	// Complete: explore covered its whole space (or shard), random ran
	// every schedule asked for.
	Complete bool `json:"complete"`
	// Stopped says why an incomplete run stopped ("" when complete).
	Stopped string `json:"stopped"`
	// KnownSchedules counts, per known finding, the schedules that hit it.
	KnownSchedules map[string]int64 `json:"known_schedules"`
	// Shard is "i/n" for explore --shard i/n, else "".
	Shard string `json:"shard"`
	// Target is what ran: "port", or the kernel tree, its fgraph.c's
	// sha256 and any C mutant; Model the compiler model of the verdict.
	Target string `json:"target"`
	Model  string `json:"model"`
	// Verdict is the verdict by compiler model: "violates under kbuild",
	// "only if the compiler can prove no alias" (the port), "on the
	// compiled code" (a compiled target), or "" when no schedule failed.
	Verdict string `json:"verdict"`
	// Models are the counts under each compiler model the run judged,
	// in order: kbuild then no-alias on the port, kbuild alone with
	// --alias, compiled alone on a compiled target.
	Models []jsonModel `json:"models"`
	// KnownVerdicts gives each known finding's verdict by compiler model.
	KnownVerdicts map[string]string `json:"known_verdicts"`
	// KnownBy names, per known finding, the oracles that detected it
	// first in some schedule, in harness.Oracles' order.
	KnownBy map[string][]string `json:"known_by"`
	// Readers are the readers that judged the run (harness/readers.go).
	Readers string `json:"readers"`
	// Orders is how explore chose the region orders: "lazy" or "eager"
	// (--orders; absent for random).
	Orders string `json:"orders,omitempty"`
	// Remotes is how explore placed the remote actions: "merged" or
	// "each" (--remotes; absent for random).
	Remotes string `json:"remotes,omitempty"`
	// Resumed is the schedule count a --checkpoint resumed from (absent
	// when the run did not resume).
	Resumed *int64 `json:"resumed,omitempty"`
	// Cache is what explore --cache's state cache did (absent without it).
	Cache *jsonCache `json:"cache,omitempty"`
	// RunsByChange counts the runs executed by the choice each changed
	// from the run before (explore --run-kinds; absent without it).
	RunsByChange []jsonChange `json:"runs_by_change,omitempty"`
	// RunsByRemote splits runs_by_change's remote runs by the remote
	// action each took (explore --run-kinds; absent without it, and when
	// no run changed a remote action).
	RunsByRemote []jsonRemoteRuns `json:"runs_by_remote,omitempty"`
}

// jsonChange is one kind of change's runs (harness.ChangeCount).
type jsonChange struct {
	Change string `json:"change"`
	jsonRuns
}

// jsonRemoteRuns is one remote action's runs (harness.Summary.ByRemote),
// the action named as a schedule file's remote line does.
type jsonRemoteRuns struct {
	Remote string `json:"remote"`
	jsonRuns
}

// jsonRuns is a harness.ChangeCount.
type jsonRuns struct {
	Runs     int64 `json:"runs"`
	Hits     int64 `json:"hits"`
	Replayed int64 `json:"accesses_replayed"`
	New      int64 `json:"accesses_new"`
}

func runsOf(c *harness.ChangeCount) jsonRuns {
	return jsonRuns{Runs: c.Runs, Hits: c.Hits, Replayed: c.Replayed, New: c.New}
}

// jsonModel is an exploration's counts under one compiler model.
type jsonModel struct {
	Model          string           `json:"name"` // kbuild, no-alias or compiled
	Schedules      int64            `json:"schedules"`
	Violations     int64            `json:"violations"`
	KnownSchedules map[string]int64 `json:"known_schedules"`
}

type jsonCache struct {
	States   int64  `json:"states"`
	Hits     int64  `json:"hits"`
	Lookups  int64  `json:"lookups"`
	Executed int64  `json:"schedules_run"`
	Bytes    int64  `json:"bytes"`
	Full     int64  `json:"full"`
	Off      string `json:"off,omitempty"`
}

type jsonViolation struct {
	Oracle   string `json:"oracle"`
	Message  string `json:"message"`
	Schedule string `json:"schedule"` // the schedule file text
}

// violationMessage is the violation without its oracle prefix, with the
// context and the alias-analysis label.
func violationMessage(v harness.Violation) string {
	return strings.TrimPrefix(v.String(), v.Oracle+": ")
}

func (o *outcome) writeJSON(w io.Writer) {
	target := "port"
	if o.sc.Target != nil {
		target = o.sc.Target.Name()
	}
	js := jsonSummary{
		Target:     target,
		Model:      o.sc.Model(),
		Readers:    o.sc.Readers(),
		Variant:    o.sc.Variant.String(),
		Mutant:     mutantName(o.sc),
		Bound:      o.sc.Bound.String(),
		Schedules:  o.sum.Runs,
		Violations: o.sum.Violations,
		Known:      knownNames(o.sum.Known),
		Seconds:    roundSeconds(o.seconds),
		Complete:   o.stopped == "",
		Stopped:    o.stopped,

		KnownSchedules: map[string]int64{},
		Shard:          o.shard,
	}
	for k, n := range o.sum.Known {
		js.KnownSchedules[k] = n
	}
	compiled := o.sc.Target != nil
	js.Verdict = harness.Verdict(compiled, o.sum.Violations, o.sum.Kbuild.Violations)
	js.KnownVerdicts = map[string]string{}
	for k, n := range o.sum.Known {
		js.KnownVerdicts[k] = harness.Verdict(compiled, n, o.sum.Kbuild.Known[k])
	}
	js.KnownBy = map[string][]string{}
	for k := range o.sum.Known {
		js.KnownBy[k] = o.sum.KnownBy[k].Names()
	}
	for _, m := range o.sc.Models() {
		ms := o.sum.Model(m)
		jm := jsonModel{Model: m, Schedules: ms.Runs, Violations: ms.Violations, KnownSchedules: map[string]int64{}}
		for k, n := range ms.Known {
			jm.KnownSchedules[k] = n
		}
		js.Models = append(js.Models, jm)
	}
	if o.resumed >= 0 {
		r := o.resumed
		js.Resumed = &r
	}
	if c := o.sum.Cache; c != nil {
		js.Cache = &jsonCache{States: c.States, Hits: c.Hits, Lookups: c.Lookups, Executed: o.sum.Executed, Bytes: c.Bytes, Full: c.Full}
	} else if o.sum.CacheOff != "" {
		js.Cache = &jsonCache{Executed: o.sum.Executed, Off: o.sum.CacheOff}
	}
	if o.runKinds {
		for i := range o.sum.ByChange {
			js.RunsByChange = append(js.RunsByChange, jsonChange{harness.ChangeNames[i], runsOf(&o.sum.ByChange[i])})
		}
		for i := range o.sum.ByRemote {
			js.RunsByRemote = append(js.RunsByRemote, jsonRemoteRuns{o.sc.Remotes[i].Label(o.sc), runsOf(&o.sum.ByRemote[i])})
		}
	}
	if o.cmd == "explore" {
		js.Orders = "eager"
		if o.lazy {
			js.Orders = "lazy"
		}
		js.Remotes = "each"
		if o.merged {
			js.Remotes = "merged"
		}
	}
	if first, text := o.first(); first != nil {
		v := first.Violations[0]
		js.FirstViolation = &jsonViolation{Oracle: v.Oracle, Message: violationMessage(v), Schedule: string(text)}
	}
	writeJSON(w, js)
}

func roundSeconds(s float64) float64 {
	return float64(int64(s*1000+0.5)) / 1000
}

func writeJSON(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain types: cannot fail
	}
	w.Write(b.Bytes())
}

// first is the first failing run the hunt recorded (the one whose file
// text it kept), else the summary's: of kbuild's model if one failed,
// else of the no-alias model.
func (o *outcome) first() (*harness.Result, []byte) {
	o.h.mu.Lock()
	defer o.h.mu.Unlock()
	if o.h.firstK != nil {
		return o.h.firstK, o.h.firstKText
	}
	if o.sum.Kbuild.First != nil {
		return o.sum.Kbuild.First, o.h.fileText(o.sum.Kbuild.First)
	}
	if o.h.first != nil {
		return o.h.first, o.h.firstText
	}
	if o.sum.First != nil {
		return o.sum.First, o.h.fileText(o.sum.First)
	}
	return nil, nil
}

// writeText prints the human summary.
func (o *outcome) writeText(w io.Writer) {
	sc := o.sc
	mut := mutantName(sc)
	if mut == "" {
		mut = "none"
	}
	fmt.Fprintf(w, "fgcheck %s: scenario %s, variant %s, mutant %s%s\n", o.cmd, sc.Name, sc.Variant, mut, scenarioExtras(sc, o.h.strict))
	fmt.Fprintf(w, "engine:      %s\n", o.engine)
	if sc.Target != nil {
		fmt.Fprintf(w, "target:      %s\n", sc.Target.Name())
	} else {
		fmt.Fprintf(w, "target:      the Go port (fgraph/)\n")
	}
	fmt.Fprintf(w, "model:       %s\n", sc.Model())
	fmt.Fprintf(w, "readers:     %s\n", sc.Readers())
	fmt.Fprintf(w, "bound:       %s\n", sc.Bound)
	state := "complete"
	switch {
	case o.cmd == "random" && o.stopped == "":
		state = "sampled"
	case o.cmd == "random":
		state = "sampled, " + o.stopped
	case !o.sum.Complete:
		state = "incomplete: " + o.stopped
	}
	if o.resumed >= 0 {
		state += fmt.Sprintf("; resumed from a checkpoint at %d", o.resumed)
	}
	two := len(sc.Models()) > 1
	if two {
		// Every schedule is one of the no-alias model's; kbuild's are those
		// that chose no order only the no-alias model allows.
		fmt.Fprintf(w, "schedules:   %d (%s): %d under kbuild, %d under no-alias\n", o.sum.Runs, state, o.sum.Kbuild.Runs, o.sum.Runs)
	} else {
		fmt.Fprintf(w, "schedules:   %d (%s)\n", o.sum.Runs, state)
	}
	if c := o.sum.Cache; c != nil {
		fmt.Fprintf(w, "states:      %d stored, %d cache hits of %d lookups, %d schedules run for the %d covered (%.1f MiB of tables)\n",
			c.States, c.Hits, c.Lookups, o.sum.Executed, o.sum.Runs, float64(c.Bytes)/(1<<20))
		if c.Full > 0 {
			fmt.Fprintf(w, "             the tables were full: %d subtrees not stored (--cache-entries)\n", c.Full)
		}
	} else if o.sum.CacheOff != "" {
		fmt.Fprintf(w, "states:      no cache (%s): the plain DFS ran\n", o.sum.CacheOff)
	}
	if o.runKinds {
		o.writeRunKinds(w)
	}
	switch {
	case sc.Alias && sc.Target == nil:
		fmt.Fprintf(w, "violations:  %d under kbuild\n", o.sum.Violations)
	case !two:
		fmt.Fprintf(w, "violations:  %d\n", o.sum.Violations)
	default:
		fmt.Fprintf(w, "violations:  %d under kbuild, %d under no-alias\n", o.sum.Kbuild.Violations, o.sum.Violations)
		if v := harness.Verdict(false, o.sum.Violations, o.sum.Kbuild.Violations); v != "" {
			// Kbuild's verdict is settled by a failing kbuild schedule, or
			// by the whole space without one.
			switch {
			case v != harness.VerdictNoAlias:
			case o.cmd == "random":
				v += " (in this sample: a sample cannot show that kbuild's model has none)"
			case !o.sum.Complete:
				v += " (so far: the space was not explored in full)"
			}
			fmt.Fprintf(w, "verdict:     %s\n", v)
		}
	}
	switch {
	case len(o.sum.Known) == 0:
		fmt.Fprintf(w, "known:       none\n")
	case !two:
		var parts []string
		for _, k := range knownNames(o.sum.Known) {
			parts = append(parts, fmt.Sprintf("%s (%s; %s)", k, plural(int(o.sum.Known[k]), "schedule"), o.knownBy(k)))
		}
		fmt.Fprintf(w, "known:       %s\n", strings.Join(parts, ", "))
	default:
		o.writeKnownTable(w)
	}
	rate := 0.0
	if o.seconds > 0 {
		rate = float64(o.sum.Runs) / o.seconds
	}
	if o.resumed >= 0 {
		rate = float64(o.sum.Runs-o.resumed) / o.seconds
	}
	fmt.Fprintf(w, "time:        %.2f s, %.0f schedules/s, %s", o.seconds, rate, plural(o.workers, "worker"))
	if o.resumed >= 0 {
		fmt.Fprintf(w, " (this leg; %.2f s in all)", o.seconds+o.earlier)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "peak memory: %s\n", peakMemory())
	miss := o.missing()
	switch {
	case len(miss) == 0:
		fmt.Fprintf(w, "coverage:    complete: every required site saw an interrupt (%d sites)\n", len(harness.RequiredSites(sc)))
	case !o.sum.Complete || o.sharded || o.sum.Violations > 0:
		req := len(harness.RequiredSites(sc))
		why := "the space was not explored in full"
		switch {
		case o.sum.Complete && o.sharded:
			why = "one shard of the space"
		case o.sum.Complete:
			why = "violations ended runs early"
		}
		fmt.Fprintf(w, "coverage:    not judged (%s): %d of %d required sites saw an interrupt\n", why, req-len(miss), req)
	default:
		fmt.Fprintf(w, "coverage:    INCOMPLETE: no interrupt at %s\n", strings.Join(miss, ", "))
	}
	if sl, ok := sc.Target.(storeLiner); ok {
		fmt.Fprintf(w, "lines:       %s\n", lineCoverage(sl.StoreLines(), o.sum.Coverage.Lines))
	}
	if o.coverage {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(o.sum.Coverage.Table(), "\n"))
	}
	if first, _ := o.first(); first != nil {
		fmt.Fprintf(w, "\nfirst violation: %s\n", first.Violations[0])
		fmt.Fprintf(w, "schedule:\n")
		sched := harness.FormatSchedule(sc, first.Schedule)
		if sched == "" {
			sched = "(the program-order run, no injected event)\n"
		}
		for _, l := range strings.Split(strings.TrimRight(sched, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	o.writeFiles(w)
}

// writeKnownTable prints the known findings with their schedule counts
// under each compiler model, the verdict and the oracles that detected
// them, in name order.
func (o *outcome) writeKnownTable(w io.Writer) {
	names := knownNames(o.sum.Known)
	width, vwidth := len("finding"), len("verdict")
	for _, k := range names {
		width = max(width, len(k))
		vwidth = max(vwidth, len(harness.Verdict(false, o.sum.Known[k], o.sum.Kbuild.Known[k])))
	}
	fmt.Fprintf(w, "known:       %-*s  %8s  %8s  %-*s  %s\n", width, "finding", "kbuild", "no-alias", vwidth, "verdict", "detected by")
	for _, k := range names {
		n, kb := o.sum.Known[k], o.sum.Kbuild.Known[k]
		fmt.Fprintf(w, "             %-*s  %8d  %8d  %-*s  %s\n", width, k, kb, n, vwidth, harness.Verdict(false, n, kb), o.knownBy(k))
	}
}

// knownBy names the oracles that detected known finding k first in some
// schedule ("by unwinder, panic"). A checkpoint that names a finding
// without its oracles is refused when it is loaded, so "none recorded"
// means a summary built by hand.
func (o *outcome) knownBy(k string) string {
	names := o.sum.KnownBy[k].Names()
	if len(names) == 0 {
		return "none recorded"
	}
	return "by " + strings.Join(names, ", ")
}

// writeFiles lists the saved failing schedules.
func (o *outcome) writeFiles(w io.Writer) {
	o.h.mu.Lock()
	defer o.h.mu.Unlock()
	if o.h.failing == 0 {
		return
	}
	fmt.Fprintf(w, "saved %d of %d failing schedules", len(o.h.files), o.h.failing)
	var why []string
	if o.h.writeErrs > 0 {
		why = append(why, fmt.Sprintf("%d not written: %v", o.h.writeErrs, o.h.lastErr))
	}
	if o.h.earlier > 0 {
		why = append(why, fmt.Sprintf("%d found before the resume", o.h.earlier))
	}
	if rest := int(o.h.failing-o.h.earlier) - len(o.h.files) - o.h.writeErrs; rest > 0 {
		why = append(why, fmt.Sprintf("%d over --max-files %d", rest, o.h.maxFiles))
	}
	if o.sum.Cache != nil && o.sum.Violations > o.h.failing {
		// Counted, not run: each continues a state that a schedule run
		// before reached, with the same suffix.
		why = append(why, fmt.Sprintf("%d more in subtrees the state cache pruned, each the continuation of a state a saved schedule reached: --exact runs and saves them", o.sum.Violations-o.h.failing))
	}
	if len(why) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(why, "; "))
	}
	fmt.Fprintln(w, ":")
	files := append([]string(nil), o.h.files...)
	sort.Strings(files) // the same list whatever order workers found them in
	for _, p := range files {
		fmt.Fprintf(w, "  %s\n", p)
	}
	if len(o.h.files) > 0 {
		fmt.Fprintf(w, "reproduce:   %s replay %s\n", selfCommand(), o.h.files[0])
	}
}

func scenarioExtras(sc *harness.Scenario, strict bool) string {
	var ex []string
	for _, name := range sc.Fixes.Names() {
		ex = append(ex, "fix "+name)
	}
	if sc.Alias {
		ex = append(ex, "alias")
	}
	if sc.StoresOnly {
		ex = append(ex, "stores-only")
	}
	if sc.AnyReader {
		ex = append(ex, "any-instant reader")
	}
	if strict {
		ex = append(ex, "strict")
	}
	if len(ex) == 0 {
		return ""
	}
	return ", " + strings.Join(ex, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// report prints the outcome (text or JSON) and the coverage misuse message,
// and returns the exit code.
func (o *outcome) report(stdout, stderr io.Writer, asJSON bool) int {
	if asJSON {
		o.writeJSON(stdout)
		if o.coverage {
			fmt.Fprint(stderr, o.sum.Coverage.Table())
		}
	} else {
		o.writeText(stdout)
	}
	if o.coverageMisuse() {
		fmt.Fprintf(stderr, "fgcheck %s: the std bound %s explored in full but never interrupted %s: the bound is too small for std (docs/std.md)\n",
			o.cmd, o.sc.Bound, strings.Join(o.missing(), ", "))
	}
	return o.exitCode()
}

// peakMemory is the process's peak memory and where the figure comes from:
// the peak resident set size (VmHWM in /proc/self/status) on Linux, else the
// Go runtime's total memory obtained from the OS (runtime.MemStats.Sys).
func peakMemory() string {
	if b, ok := vmHWM(); ok {
		return fmt.Sprintf("%s peak RSS (VmHWM, /proc/self/status)", mib(b))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("%s obtained from the OS (runtime.MemStats.Sys; no /proc)", mib(ms.Sys))
}

func vmHWM() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseUint(f[0], 10, 64)
				if err == nil {
					return n * 1024, true
				}
			}
		}
	}
	return 0, false
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// storeLiner is a compiled target that knows the source lines of its
// stores in push, set_bitmap, reserve and pop (cload.Kernel).
type storeLiner interface {
	StoreLines() map[int]string
}

// lineCoverage says how many store lines of push, reserve and pop saw an
// interrupt right after them, and names those that did not.
func lineCoverage(stores map[int]string, hits map[int]int64) string {
	var lines []int
	for l := range stores {
		lines = append(lines, l)
	}
	sort.Ints(lines)
	var miss []string
	for _, l := range lines {
		if hits[l] == 0 {
			miss = append(miss, fmt.Sprintf("fgraph.c:%d (%s)", l, stores[l]))
		}
	}
	s := fmt.Sprintf("%d of %d source lines of stores in push, set_bitmap, reserve and pop saw an interrupt right after", len(lines)-len(miss), len(lines))
	if len(miss) > 0 {
		s += "; not: " + strings.Join(miss, ", ")
	}
	return s
}

// writeRunKinds prints the runs executed by the choice each changed from
// the run before (explore --run-kinds; harness/changes.go): the kinds
// that ran, with their share of the runs, the share that stopped at a
// cached state, and the shared accesses a run replayed and ran anew.
func (o *outcome) writeRunKinds(w io.Writer) {
	fmt.Fprintf(w, "runs:        %d, by the choice each changed from the run before (accesses: loads, stores, atomics, fences)\n", o.sum.Executed)
	fmt.Fprintf(w, "             %-10s %12s %7s %8s %20s %13s\n", "change", "runs", "share", "hits", "replayed (a run)", "anew (a run)")
	row := func(label string, c harness.ChangeCount) {
		if c.Runs == 0 {
			return
		}
		// The label and the runs take 23 columns, as "change" and "runs"
		// do, while the label leaves room.
		lw := max(10, len(label))
		share, hits := 100*float64(c.Runs)/float64(max(o.sum.Executed, 1)), 100*float64(c.Hits)/float64(c.Runs)
		fmt.Fprintf(w, "             %-*s %*d %6.1f%% %7.1f%% %20.1f %13.1f\n", lw, label, max(1, 22-lw), c.Runs, share, hits,
			float64(c.Replayed)/float64(c.Runs), float64(c.New)/float64(c.Runs))
	}
	for i, c := range o.sum.ByChange {
		row(harness.ChangeNames[i], c)
		if i == harness.ChangeRemote {
			for j, rc := range o.sum.ByRemote {
				row("  "+o.sc.Remotes[j].Label(o.sc), rc)
			}
		}
	}
}
