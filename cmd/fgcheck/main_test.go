package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// fgcheck runs the command in-process and returns its exit code and output.
func fgcheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeTemp writes a file into a fresh temporary directory.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// irqFile replays cleanly: an IRQ lands after task 0's second push has
// raised curr_ret_stack (W3) and before it rewrites the offset word (W4).
const irqFile = `fgcheck v1
# test: an IRQ between W3 and W4
scenario irq-after-w3
variant latest
layout frame=3 stack=64
user u1 filter=* accept=* data=8
setup u1
task ops=(call 1, call 2, ret, ret)
irq ops=(call 10, unwind, ret)
bound K=1 D=1 R=0 E=0
expect pass
irq id=1 in=task0 at=push.w3#2
`

// irqFileMessy is irqFile written the lenient way: scenario lines in
// another order, keys in another order, extra blanks, leading zeros.
const irqFileMessy = `fgcheck   v1
# test: an IRQ between W3 and W4
bound  D=1 K=01 E=0 R=0
variant latest
scenario irq-after-w3
user u1 data=8 accept=* filter=*
layout stack=64 frame=3
task ops=(call 1, call 2, ret, ret)
setup u1
irq ops=(call 10, unwind, ret)
expect pass
irq id=1 in=task0 at=push.w3#2
`

func TestMisuse(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte(irqFile), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.txt")
	badText := strings.Replace(irqFile, "task ops=(call 1,", "task ops=(cal 1,", 1)
	if err := os.WriteFile(bad, []byte(badText), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.txt")
	tests := []struct {
		name   string
		args   []string
		stderr string // a substring of stderr
		reason string
	}{
		{"no command", nil, "", "a bare fgcheck is misuse (it prints the usage)"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, "the registry rejects names it does not have"},
		{"help on an unknown command", []string{"help", "frobnicate"}, `fgcheck help: unknown command "frobnicate"`, "help names only commands that exist"},
		{"unknown flag", []string{"explore", "--frob"}, "flag provided but not defined: -frob", "the flag package reports it with ContinueOnError"},
		{"flag without value", []string{"explore", "--variant"}, "flag needs an argument", "a string flag at the end of the line"},
		{"unknown variant", []string{"explore", "--variant", "v9.9"}, `unknown variant "v9.9"`, "fgraph.ParseVariant's message"},
		{"unknown mutant", []string{"explore", "--mutant", "M-nope"}, `unknown mutant "M-nope"`, "fgraph.LookupMutant's message lists the known ones"},
		{"unknown fix", []string{"explore", "--fix", "no-bit0,frob"}, `unknown fix "frob"`, "every name of the list is checked"},
		{"bound without =", []string{"explore", "--bound", "K2"}, "want KEY=N", "bound syntax is KEY=N"},
		{"bound unknown key", []string{"explore", "--bound", "K=1,X=2"}, `unknown key "X"`, "only K, D, R, E and C exist"},
		{"bound negative", []string{"explore", "--bound", "K=-1"}, "want a number >= 0", "bounds are counts"},
		{"bound too deep", []string{"explore", "--bound", "D=7"}, "at most 6", "the harness nests at most 6 levels"},
		{"bound duplicate key", []string{"explore", "--bound", "K=1,K=2"}, "duplicate key K", "an override names a key once"},
		{"bad shard", []string{"explore", "--shard", "2/2"}, "want i/n with 0 <= i < n", "shards count from 0"},
		{"negative workers", []string{"explore", "--workers", "-1"}, "--workers -1", "0 means all cores; below is misuse"},
		{"unknown orders", []string{"explore", "--orders", "random"}, `--orders "random": want auto, lazy or eager`, "three ways to choose region orders"},
		{"lazy orders and exact", []string{"explore", "--orders", "lazy", "--exact"}, "--orders lazy and --exact", "--exact runs every schedule, a lazy run stands for many"},
		{"stray argument", []string{"explore", "std"}, "\nfgcheck explore: unexpected argument \"std\"\n", "the scenario is a flag, not an argument; the command named once"},
		{"random argument", []string{"random", "x"}, "\nfgcheck random: unexpected argument \"x\"\n", "random takes no argument"},
		{"mutants argument", []string{"mutants", "x"}, "\nfgcheck mutants: unexpected argument \"x\"\n", "mutants takes no argument"},
		{"missing scenario file", []string{"explore", "--scenario", missing}, "no such file", "a scenario that is neither std, peer-spin nor a file"},
		{"malformed scenario file", []string{"explore", "--scenario", bad}, bad + ":8:11: unknown op", "a parse error carries file:line:col"},
		{"random bad mode", []string{"random", "--mode", "dfs"}, `--mode "dfs"`, "random knows random and pct"},
		{"random bad seed", []string{"random", "--seed", "x1"}, `--seed "x1"`, "the seed is a number"},
		{"random no runs", []string{"random", "--runs", "0"}, "--runs 0", "at least one run"},
		{"replay missing file", []string{"replay", missing}, "no such file", "a missing file is misuse, not a verdict"},
		{"replay malformed file", []string{"replay", bad}, bad + ":8:11: unknown op \"cal\"", "the parse error's position, on stderr"},
		{"replay no file", []string{"replay"}, "want exactly one FILE", "replay needs its file"},
		{"replay two files", []string{"replay", good, good}, "want exactly one FILE", "one file per replay"},
		{"fmt no file", []string{"fmt"}, "no FILE given", "fmt needs files"},
		{"fmt malformed file", []string{"fmt", good, bad}, bad + ":8:11:", "a malformed file among good ones still fails the command"},
		{"fmt missing file", []string{"fmt", missing}, "no such file", "a missing file is misuse"},
		{"version argument", []string{"version", "x"}, "\nfgcheck version: unexpected argument \"x\"\n", "version takes no argument"},
		{"bad time budget", []string{"explore", "--time", "soon"}, `invalid value "soon" for flag -time`, "a budget is a Go duration"},
		{"bad checkpoint-every", []string{"explore", "--checkpoint-every", "0"}, "--checkpoint-every 0", "a save every 0 schedules means nothing"},
		{"checkpoint is a directory", []string{"explore", "--checkpoint", dir}, "--checkpoint", "a directory cannot be read as a checkpoint"},
		{"negative bound key", []string{"explore", "-E", "-1"}, `E="-1": want a number >= 0`, "-E is --bound E=N"},
		{"random checkpoint", []string{"random", "--checkpoint", "x"}, "flag provided but not defined: -checkpoint", "random is restarted with a seed, not resumed"},
		{"scenarios unknown flag", []string{"scenarios", "--frob"}, "flag provided but not defined: -frob", "every command parses its flags"},
		{"scenarios missing dir", []string{"scenarios", missing}, "no such file", "a missing path is misuse"},
		{"scenarios malformed file", []string{"scenarios", bad}, bad + ":8:11:", "the parse error's position"},
		{"minimize malformed file", []string{"minimize", "--json", bad}, bad + ":8:11:", "the parse error's position, even with --json"},
		{"minimize passing file", []string{"minimize", good}, "does not fail", "nothing to minimize is misuse"},
		{"fmt --json malformed", []string{"fmt", "--json", bad}, bad + ":8:11:", "the error is on stderr as well as in the JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := fgcheck(t, tc.args...)
			if code != exitMisuse {
				t.Errorf("fgcheck %q exited %d, want %d\nreason: %s\nstderr: %s", tc.args, code, exitMisuse, tc.reason, stderr)
			}
			// (a want that starts with a newline is a line's start)
			if !strings.Contains("\n"+stderr, tc.stderr) {
				t.Errorf("fgcheck %q: stderr\n%s\nwant it to contain %q\nreason: %s", tc.args, stderr, tc.stderr, tc.reason)
			}
		})
	}
}

func TestHelpIsNotMisuse(t *testing.T) {
	tests := []struct {
		args   []string
		reason string
	}{
		{[]string{"help"}, "the command list"},
		{[]string{"help", "explore"}, "help COMMAND is COMMAND -h"},
		{[]string{"explore", "-h"}, "the flag package's ErrHelp"},
		{[]string{"replay", "--help"}, "both dash forms"},
		{[]string{"version"}, "version prints and exits 0"},
	}
	for _, tc := range tests {
		code, stdout, stderr := fgcheck(t, tc.args...)
		if code != exitClean || stdout+stderr == "" {
			t.Errorf("fgcheck %q exited %d with output %q, want 0 and some output\nreason: %s", tc.args, code, stdout+stderr, tc.reason)
		}
	}
}

// exploreJSON runs a command with --json and decodes its one object.
func exploreJSON(t *testing.T, wantCode int, args ...string) jsonSummary {
	t.Helper()
	code, stdout, stderr := fgcheck(t, append(args, "--json")...)
	if code != wantCode {
		t.Fatalf("fgcheck %q exited %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, stdout, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var js jsonSummary
	if err := dec.Decode(&js); err != nil {
		t.Fatalf("stdout is not the JSON summary: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	// The keys, in order, exactly.
	keys := regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(stdout, -1)
	var got []string
	for _, k := range keys {
		if !strings.Contains(k[1], "oracle") && k[1] != "message" && k[1] != "schedule" {
			got = append(got, k[1])
		}
	}
	// One object of counts per compiler model judged: kbuild and no-alias
	// on the port, kbuild alone with --alias, compiled on a compiled target.
	want := "variant mutant bound schedules violations known seconds first_violation complete stopped known_schedules shard target model verdict models" +
		strings.Repeat(" name schedules violations known_schedules", len(js.Models)) + " known_verdicts known_by readers"
	if js.Orders != "" {
		want += " orders remotes" // explore's
	}
	// The runs by change last with --run-kinds, one object per kind, and
	// then the remote runs by action, one object per action that ran.
	g := strings.Join(got, " ")
	if i := strings.Index(g, " runs_by_remote"); i >= 0 {
		if c := g[i:]; c != " runs_by_remote"+strings.Repeat(" remote runs hits accesses_replayed accesses_new", len(js.RunsByRemote)) || len(js.RunsByRemote) == 0 {
			t.Errorf("JSON runs_by_remote keys %q", c)
		}
		g = g[:i]
	}
	if i := strings.Index(g, " runs_by_change"); i >= 0 {
		if c := g[i:]; c != " runs_by_change"+strings.Repeat(" change runs hits accesses_replayed accesses_new", harness.NumChanges) {
			t.Errorf("JSON runs_by_change keys %q", c)
		}
		g = g[:i]
	}
	// The state cache's object then, where explore used it (the default)
	// or says why not.
	if i := strings.Index(g, " cache "); i >= 0 {
		if c := g[i:]; c != " cache states hits lookups schedules_run bytes full" && c != " cache states hits lookups schedules_run bytes full off" {
			t.Errorf("JSON cache keys %q", c)
		}
		g = g[:i]
	}
	if g != want && g != want+" resumed" {
		t.Errorf("JSON keys %v, want %s", got, want)
	}
	if js.Known == nil {
		t.Errorf("known is null, want a list: %s", stdout)
	}
	// Every known finding reported names the oracles that detected it.
	for _, k := range js.Known {
		if len(js.KnownBy[k]) == 0 {
			t.Errorf("known finding %s has no oracle in known_by %v", k, js.KnownBy)
		}
	}
	if len(js.KnownBy) != len(js.Known) {
		t.Errorf("known_by %v names other findings than known %v", js.KnownBy, js.Known)
	}
	return js
}

func TestExplorePeerSpinJSON(t *testing.T) {
	js := exploreJSON(t, exitClean, "explore", "--variant", "latest", "--scenario", "peer-spin", "--max-runs", "3000")
	if js.Variant != "latest" || js.Mutant != "" || js.Bound != "K=2 D=2 R=1 E=0" {
		t.Errorf("variant %q mutant %q bound %q, want latest, \"\" and peer-spin's K=2 D=2 R=1 E=0", js.Variant, js.Mutant, js.Bound)
	}
	// --max-runs bounds the schedules run; the state cache (the default)
	// covers more.
	if js.Cache == nil || js.Cache.Executed != 3000 || js.Schedules < 3000 {
		t.Errorf("schedules %d, cache %+v: want exactly --max-runs 3000 run, at least as many covered", js.Schedules, js.Cache)
	}
	if js.Violations != 0 || js.FirstViolation != nil {
		t.Errorf("violations %d, first %+v: the latest baseline must pass peer-spin", js.Violations, js.FirstViolation)
	}
	if js.Seconds < 0 {
		t.Errorf("seconds %v", js.Seconds)
	}
	for _, k := range js.Known {
		if !isKnownFinding(k) {
			t.Errorf("known %q is not in harness.KnownFindings", k)
		}
	}
}

func TestExplorePeerSpinComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("explores the whole peer-spin space (about 75k schedules)")
	}
	js := exploreJSON(t, exitClean, "explore", "--scenario", "peer-spin", "--workers", "0")
	if js.Schedules < 10000 || js.Violations != 0 {
		t.Errorf("peer-spin: %d schedules, %d violations; want the whole space with none", js.Schedules, js.Violations)
	}
	// The default state cache covers exactly the plain DFS's schedules.
	exact := exploreJSON(t, exitClean, "explore", "--scenario", "peer-spin", "--exact")
	if js.Cache == nil || exact.Cache != nil || js.Schedules != exact.Schedules || !maps.Equal(js.KnownSchedules, exact.KnownSchedules) || js.Cache.Executed >= exact.Schedules {
		t.Errorf("cached: %d schedules (cache %+v), known %v; --exact: %d, known %v", js.Schedules, js.Cache, js.KnownSchedules, exact.Schedules, exact.KnownSchedules)
	}
	one := exploreJSON(t, exitClean, "explore", "--scenario", "peer-spin", "--shard", "0/2")
	two := exploreJSON(t, exitClean, "explore", "--scenario", "peer-spin", "--shard", "1/2")
	if one.Schedules+two.Schedules != js.Schedules {
		t.Errorf("shards 0/2 and 1/2 explored %d + %d schedules, the whole space %d", one.Schedules, two.Schedules, js.Schedules)
	}
}

// TestExploreOrders: --orders auto chooses lazy region orders where the
// bound has no cap (peer-spin) and eager ones where it has (std), says so
// in the engine line and in JSON, and both ways give the same counts.
func TestExploreOrders(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"--scenario", "peer-spin"}, "lazy", "no cap: every order would multiply the interrupt space"},
		{nil, "lazy", "std on latest (C=2, R=1): every region of the default path fits a pending region"},
		{[]string{"--variant", "v6.11"}, "eager", "v6.11's push.w4 region has 120 orders, more than a pending region holds"},
		{[]string{"-C", "2", "-R", "2"}, "eager", "a capped bound with R=2: not measured, the eager engine"},
		{[]string{"--remotes", "merged"}, "lazy", "merged placements asked for: they combine with pending orders"},
		{[]string{"--orders", "lazy"}, "lazy", "asked for"},
		{[]string{"--scenario", "peer-spin", "--orders", "eager"}, "eager", "asked for"},
		{[]string{"--scenario", "peer-spin", "--exact"}, "eager", "the plain DFS runs every schedule"},
	} {
		js := exploreJSON(t, exitClean, append([]string{"explore", "--max-runs", "2000"}, c.args...)...)
		if js.Orders != c.want {
			t.Errorf("%v: orders %q, want %q: %s", c.args, js.Orders, c.want, c.why)
		}
	}
	_, text, _ := fgcheck(t, "explore", "--scenario", "peer-spin", "--max-runs", "10")
	if !strings.Contains(text, "engine:      exhaustive DFS with a visited-state cache and lazy region orders\n") {
		t.Errorf("the engine line does not say lazy region orders:\n%s", text)
	}
	lazy := exploreJSON(t, exitClean, "explore", "--orders", "lazy", "-C", "1")
	eager := exploreJSON(t, exitClean, "explore", "--orders", "eager", "--remotes", "each", "-C", "1")
	if lazy.Schedules != eager.Schedules || !maps.Equal(lazy.KnownSchedules, eager.KnownSchedules) || lazy.Cache.Executed >= eager.Cache.Executed {
		t.Errorf("std at C=1: lazy %d schedules %v (%d run), eager %d %v (%d run)", lazy.Schedules, lazy.KnownSchedules, lazy.Cache.Executed, eager.Schedules, eager.KnownSchedules, eager.Cache.Executed)
	}
}

// TestExploreLazySavesReplayableFiles: the files of failing schedules that
// lazy region orders found (peer-spin, a reordering mutant that only the
// no-alias model kills, so the exploration goes to its end) are schedules
// of the eager engine, each of which replays as it says.
func TestExploreLazySavesReplayableFiles(t *testing.T) {
	out := t.TempDir()
	js := exploreJSON(t, exitViolation, "explore", "--scenario", "peer-spin", "--mutant", "M-push-barrier1", "--out", out, "--max-files", "3")
	if js.Orders != "lazy" || js.Violations == 0 {
		t.Fatalf("orders %q, %d violations: want lazy orders to kill M-push-barrier1 on peer-spin", js.Orders, js.Violations)
	}
	ents, err := os.ReadDir(out)
	if err != nil || len(ents) == 0 {
		t.Fatalf("out dir holds %v (err %v), want the failing schedules", ents, err)
	}
	for _, e := range ents {
		path := filepath.Join(out, e.Name())
		if code, stdout, stderr := fgcheck(t, "replay", path); code != exitClean || !strings.Contains(stdout, "as expected") {
			t.Errorf("replay %s exited %d, want 0 and \"as expected\"\nstdout: %s\nstderr: %s", path, code, stdout, stderr)
		}
	}
}

func isKnownFinding(name string) bool {
	for _, k := range harness.KnownFindings {
		if k.Name == name {
			return true
		}
	}
	return false
}

var failNameRE = regexp.MustCompile(`^latest-M-push-1-([a-z-]+)-([0-9a-f]{8})\.txt$`)

func TestExploreMutantSavesReplayableFile(t *testing.T) {
	out := t.TempDir()
	// Eager orders: a lazy run that fails stands for every order of its
	// class, counted as that many failing schedules.
	js := exploreJSON(t, exitViolation, "explore", "--mutant", "M-push-1", "--orders", "eager", "--max-runs", "5000", "--out", out)
	if js.Mutant != "M-push-1" || js.Violations != 1 || js.FirstViolation == nil {
		t.Fatalf("mutant %q, violations %d, first %+v: M-push-1 must be killed, stopping at the first failing schedule", js.Mutant, js.Violations, js.FirstViolation)
	}
	ents, err := os.ReadDir(out)
	if err != nil || len(ents) != 1 {
		t.Fatalf("out dir holds %v (err %v), want exactly one file", ents, err)
	}
	name := ents[0].Name()
	m := failNameRE.FindStringSubmatch(name)
	if m == nil {
		t.Fatalf("file name %q, want latest-M-push-1-ORACLE-HASH.txt", name)
	}
	path := filepath.Join(out, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if m[1] != js.FirstViolation.Oracle || m[2] != hex.EncodeToString(sum[:4]) {
		t.Errorf("file name %q: want oracle %s and the first 8 hex digits of the content's sha256 %x", name, js.FirstViolation.Oracle, sum[:4])
	}
	if string(data) != js.FirstViolation.Schedule {
		t.Errorf("first_violation.schedule differs from the saved file:\n%s\n---\n%s", js.FirstViolation.Schedule, data)
	}
	f, err := harness.ParseFile(path, data)
	if err != nil {
		t.Fatalf("the saved file does not parse: %v", err)
	}
	if f.Expect == nil || f.Expect.Pass || f.Expect.Oracle != js.FirstViolation.Oracle {
		t.Errorf("expect %+v, want violation %s", f.Expect, js.FirstViolation.Oracle)
	}
	if !strings.Contains(string(data), "# found by: fgcheck explore --mutant M-push-1") {
		t.Errorf("the story does not say how the file was found:\n%s", data)
	}

	// With its expect line, the replay matches: exit 0, same violation.
	wantLine := "violation " + js.FirstViolation.Oracle + ": " + js.FirstViolation.Message
	code, stdout, stderr := fgcheck(t, "replay", path)
	if code != exitClean || !strings.Contains(stdout, "\n"+wantLine+"\n") || !strings.Contains(stdout, "as expected") {
		t.Errorf("replay %s exited %d, want 0 with the line %q and \"as expected\"\nstdout: %s\nstderr: %s", path, code, wantLine, stdout, stderr)
	}
	// Without it, a violation exits 1.
	f.Expect = nil
	bare := writeTemp(t, "bare.txt", string(f.Format()))
	code, stdout, _ = fgcheck(t, "replay", bare)
	if code != exitViolation || !strings.Contains(stdout, "\n"+wantLine+"\n") {
		t.Errorf("replay without expect exited %d, want 1 with %q\n%s", code, wantLine, stdout)
	}
	// Expecting another oracle is a mismatch: exit 1.
	f.Expect = &harness.Expect{Oracle: "capacity"}
	if js.FirstViolation.Oracle == "capacity" {
		f.Expect.Oracle = "model"
	}
	other := writeTemp(t, "other.txt", string(f.Format()))
	code, stdout, _ = fgcheck(t, "replay", other)
	if code != exitViolation || !strings.Contains(stdout, "MISMATCH") {
		t.Errorf("replay expecting %s exited %d, want 1 and MISMATCH\n%s", f.Expect.Oracle, code, stdout)
	}
	// Expecting a pass is a mismatch too.
	f.Expect = &harness.Expect{Pass: true}
	pass := writeTemp(t, "pass.txt", string(f.Format()))
	if code, stdout, _ = fgcheck(t, "replay", pass); code != exitViolation {
		t.Errorf("replay expecting pass exited %d, want 1\n%s", code, stdout)
	}
}

func TestExploreMaxFiles(t *testing.T) {
	out := t.TempDir()
	// M-push-1 fails in most of its 65 schedules (a run ends at its
	// violation, so its space is small). --remotes each and eager orders: a
	// run is one schedule.
	js := exploreJSON(t, exitViolation, "explore", "--mutant", "M-push-1", "--keep-going", "--orders", "eager", "--remotes", "each", "--max-runs", "40", "--max-files", "2", "--out", out)
	if js.Schedules != 40 || js.Violations <= 2 {
		t.Fatalf("schedules %d violations %d: --keep-going must go on (M-push-1 fails in most schedules)", js.Schedules, js.Violations)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 2 {
		t.Errorf("out dir holds %d files, want --max-files 2 (of %d failing schedules)", len(ents), js.Violations)
	}
	for _, e := range ents {
		if !failNameRE.MatchString(e.Name()) {
			t.Errorf("stray file %q (a temporary file left behind?)", e.Name())
		}
	}
}

// TestHuntKeepsFirstKbuildPastMaxFiles: once --max-files is reached and
// the first failing run is kept, a failing run is only counted, its file
// not formatted; but the first failing run of kbuild's model is still
// kept, with its text, when only no-alias runs came before it.
func TestHuntKeepsFirstKbuildPastMaxFiles(t *testing.T) {
	h := &hunt{cmd: "explore", found: "fgcheck explore", kind: "exhaustive DFS", sc: harness.Standard(fgraph.Latest),
		out: t.TempDir(), maxFiles: 1, stderr: &bytes.Buffer{}}
	fail := func(oracle string, noAlias bool) *harness.Result {
		return &harness.Result{Violations: []harness.Violation{{Oracle: oracle}}, AliasDependent: noAlias}
	}
	runs := []*harness.Result{
		fail("model", true),     // first, saved: the one file
		fail("unwinder", true),  // counted only
		fail("ret-addr", false), // the first of kbuild's: kept with its text
		fail("callback", false), // counted only
	}
	for _, r := range runs {
		h.onViolation(r)
	}
	if h.failing != 4 || len(h.files) != 1 {
		t.Fatalf("%d failing, %d files; want 4 counted and --max-files 1 saved", h.failing, len(h.files))
	}
	if h.first != runs[0] || h.firstText == nil {
		t.Errorf("first failing run %v (text %d bytes), want the first one with its text", h.first, len(h.firstText))
	}
	if h.firstK != runs[2] || !bytes.Equal(h.firstKText, h.fileText(runs[2])) {
		t.Errorf("first kbuild run %v (text %d bytes), want the third with its text", h.firstK, len(h.firstKText))
	}
}

func TestExploreText(t *testing.T) {
	code, stdout, stderr := fgcheck(t, "explore", "--exact", "--scenario", "peer-spin", "--max-runs", "500", "--coverage")
	if code != exitClean {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"fgcheck explore: scenario peer-spin, variant latest, mutant none",
		"\nschedules:   500 (incomplete: --max-runs 500 reached): 500 under kbuild, 500 under no-alias\n",
		"\nviolations:  0 under kbuild, 0 under no-alias\n",
		"\nknown:       finding ",
		"  detected by\n",
		"  violates under kbuild  by unwinder\n",
		"schedules/s, 1 worker\n",
		"\npeak memory: ",
		"\ncoverage:    ",
		"\nsite ", // the --coverage table
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

func TestStdCoverageIsRequired(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		reason string
	}{
		{[]string{"explore", "--bound", "K=0,R=0,E=0"}, exitMisuse, "std explored in full without a single interrupt misses every required site: the bound is misused"},
		{[]string{"explore", "--scenario", "peer-spin", "--bound", "K=0,R=0"}, exitClean, "only std requires coverage"},
		{[]string{"explore", "--bound", "K=0,R=0,E=0", "--shard", "0/2"}, exitClean, "a shard covers only its part: not judged"},
	}
	for _, tc := range tests {
		code, stdout, stderr := fgcheck(t, tc.args...)
		if code != tc.code {
			t.Errorf("fgcheck %q exited %d, want %d\nreason: %s\n%s%s", tc.args, code, tc.code, tc.reason, stdout, stderr)
		}
		if tc.code == exitMisuse && !strings.Contains(stderr, "push.w1") {
			t.Errorf("the misuse message does not name the missing sites:\n%s", stderr)
		}
	}
}

func TestRandom(t *testing.T) {
	js := exploreJSON(t, exitClean, "random", "--scenario", "peer-spin", "--runs", "300", "--seed", "0x5eed")
	if js.Schedules != 300 || js.Violations != 0 {
		t.Errorf("random on peer-spin: %d schedules, %d violations; want 300 and none", js.Schedules, js.Violations)
	}
	js = exploreJSON(t, exitClean, "random", "--mode", "pct", "--scenario", "peer-spin", "--runs", "200", "--workers", "2")
	if js.Schedules != 200 {
		t.Errorf("pct with 2 workers: %d schedules, want 200", js.Schedules)
	}
	out := t.TempDir()
	js = exploreJSON(t, exitViolation, "random", "--mutant", "M-push-1", "--runs", "100", "--out", out)
	if js.Violations < 1 || js.FirstViolation == nil {
		t.Fatalf("random did not kill M-push-1: %+v", js)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != int(js.Violations) {
		t.Errorf("%d files for %d failing schedules", len(ents), js.Violations)
	}
	if len(ents) > 0 {
		data, _ := os.ReadFile(filepath.Join(out, ents[0].Name()))
		// The file is a function of its schedule: the engine, not the
		// seed (worker w draws from seed+w) nor the run's flags.
		if !strings.Contains(string(data), "# found by: fgcheck random --mutant M-push-1\n# engine: random; bound") {
			t.Errorf("the story does not name the command and the engine:\n%s", data)
		}
	}
}

func TestReplayIsByteIdentical(t *testing.T) {
	// A failing file (with the stack dump) and a clean one with an IRQ.
	out := t.TempDir()
	exploreJSON(t, exitViolation, "explore", "--mutant", "M-push-2", "--out", out)
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Fatalf("M-push-2 left %d files, want 1", len(ents))
	}
	files := []string{filepath.Join(out, ents[0].Name()), writeTemp(t, "irq.txt", irqFile)}
	for _, p := range files {
		for _, args := range [][]string{{"replay", p}, {"replay", p, "--json"}, {"replay", "--trace=false", p}} {
			c1, o1, e1 := fgcheck(t, args...)
			c2, o2, e2 := fgcheck(t, args...)
			if c1 != c2 || o1 != o2 || e1 != e2 {
				t.Errorf("fgcheck %q twice: exit %d/%d, outputs differ:\n%s\n---\n%s", args, c1, c2, o1, o2)
			}
			if c1 != exitClean {
				t.Errorf("fgcheck %q exited %d: the file's expect line holds\n%s%s", args, c1, o1, e1)
			}
		}
	}
	_, stdout, _ := fgcheck(t, "replay", files[0])
	if !strings.Contains(stdout, "===== TRACE =====") || !regexp.MustCompile(`0x[0-9a-f]{16}`).MatchString(stdout) {
		t.Errorf("the trace of a violation lacks the shadow-stack words in hex:\n%s", stdout)
	}
	_, stdout, _ = fgcheck(t, "replay", files[1])
	if !strings.Contains(stdout, "irq 1 in task0") || !strings.HasSuffix(stdout, "===== VERDICT =====\npass\nexpect pass: as expected\n") {
		t.Errorf("clean replay output:\n%s", stdout)
	}
	_, stdout, _ = fgcheck(t, "replay", "--trace=false", files[1])
	if stdout != "===== VERDICT =====\npass\nexpect pass: as expected\n" {
		t.Errorf("--trace=false prints only the verdict, got:\n%s", stdout)
	}
}

func TestReplayJSON(t *testing.T) {
	p := writeTemp(t, "irq.txt", irqFile)
	code, stdout, _ := fgcheck(t, "replay", p, "--json", "--trace=false")
	if code != exitClean {
		t.Fatalf("exit %d", code)
	}
	var js jsonReplay
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatal(err)
	}
	if js.Verdict != "pass" || js.Expect == nil || *js.Expect != "pass" || js.Matched == nil || !*js.Matched || js.Trace != nil {
		t.Errorf("replay --json: %s", stdout)
	}
}

func TestReplayUnfiredEvents(t *testing.T) {
	// push.w3#9 is never reached: the file passes, but says so.
	p := writeTemp(t, "stale.txt", strings.Replace(irqFile, "push.w3#2", "push.w3#9", 1))
	code, stdout, _ := fgcheck(t, "replay", "--trace=false", p)
	if code != exitClean || !strings.Contains(stdout, "note: 1 of the file's 1 events never fired") {
		t.Errorf("exit %d, output:\n%s\nwant a note about the event that never fired", code, stdout)
	}
}

func TestFmtRoundTrip(t *testing.T) {
	messy := writeTemp(t, "messy.txt", irqFileMessy)
	code, stdout, stderr := fgcheck(t, "fmt", messy)
	if code != exitClean || stdout != irqFile {
		t.Fatalf("fmt exited %d (%s); got\n%s\nwant the canonical\n%s", code, stderr, stdout, irqFile)
	}
	canon := writeTemp(t, "canon.txt", irqFile)
	if code, stdout, _ = fgcheck(t, "fmt", canon); code != exitClean || stdout != irqFile {
		t.Errorf("fmt of a canonical file changed it:\n%s", stdout)
	}
	if code, stdout, _ = fgcheck(t, "fmt", "-l", messy, canon); code != exitClean || stdout != messy+"\n" {
		t.Errorf("fmt -l listed %q, want only %s", stdout, messy)
	}
	if code, stdout, _ = fgcheck(t, "fmt", messy, "-w"); code != exitClean || stdout != "" {
		t.Errorf("fmt -w exited %d and printed %q, want 0 and nothing", code, stdout)
	}
	data, _ := os.ReadFile(messy)
	if string(data) != irqFile {
		t.Errorf("fmt -w wrote\n%s", data)
	}
	ents, _ := os.ReadDir(filepath.Dir(messy))
	if len(ents) != 1 {
		t.Errorf("fmt -w left %d files in the directory, want 1 (no temporary files)", len(ents))
	}
	if _, stdout, _ = fgcheck(t, "fmt", "-l", messy); stdout != "" {
		t.Errorf("after -w, fmt -l still lists %q", stdout)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	for _, text := range []string{"first\n", "second, longer\n", ""} {
		if err := writeFileAtomic(p, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != text {
			t.Errorf("read back %q (%v), want %q", got, err, text)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		reason string
	}{
		{"no directory", filepath.Join(dir, "nodir", "f.txt"), "the temporary file cannot be created"},
		{"onto a directory", sub, "the rename fails; the temporary file must be removed"},
	}
	for _, tc := range tests {
		if err := writeFileAtomic(tc.path, []byte("x"), 0o644); err == nil {
			t.Errorf("%s: no error\nreason: %s", tc.name, tc.reason)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 || ents[0].Name() != "f.txt" || ents[1].Name() != "sub" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only f.txt and sub (no temporary file left)", names)
	}
}

func TestParseBound(t *testing.T) {
	std := harness.Bound{K: 2, D: 2, R: 1, E: 1, C: 2}
	tests := []struct {
		in     string
		want   harness.Bound
		reason string
	}{
		{"K=3", harness.Bound{K: 3, D: 2, R: 1, E: 1, C: 2}, "keys not named keep their value"},
		{"K=1,D=1,R=0,E=0,C=0", harness.Bound{K: 1, D: 1}, "every key"},
		{"C=0 E=2", harness.Bound{K: 2, D: 2, R: 1, E: 2}, "spaces separate too, any order"},
	}
	for _, tc := range tests {
		got, err := parseBound(std, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseBound(%q) = %v, %v; want %v\nreason: %s", tc.in, got, err, tc.want, tc.reason)
		}
	}
	for _, bad := range []string{"", ",", "K", "K=", "K=x", "k=1", "K=17", "D=7", "K=1,K=1"} {
		if _, err := parseBound(std, bad); err == nil {
			t.Errorf("parseBound(%q) accepted", bad)
		}
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	tests := []struct {
		args   []string
		pos    []string
		trace  bool
		reason string
	}{
		{[]string{"a", "--trace=false", "b"}, []string{"a", "b"}, false, "flags between positional arguments"},
		{[]string{"--trace=false", "a"}, []string{"a"}, false, "flags first"},
		{[]string{"a", "--", "--trace=false"}, []string{"a", "--trace=false"}, true, "-- ends the flags"},
		{nil, nil, true, "nothing"},
	}
	for _, tc := range tests {
		fs := newFlagSet("t", &bytes.Buffer{}, "t")
		trace := fs.Bool("trace", true, "")
		pos, _, ok := parseArgs(fs, tc.args)
		if !ok || strings.Join(pos, "|") != strings.Join(tc.pos, "|") || *trace != tc.trace {
			t.Errorf("parseArgs(%q) = %q, trace=%v, ok=%v; want %q, trace=%v\nreason: %s", tc.args, pos, *trace, ok, tc.pos, tc.trace, tc.reason)
		}
	}
}

// TestInterruptWaitsForTheWrite: on SIGINT the handler waits until the
// failing schedule being written is on disk, then reports and exits 1.
func TestInterruptWaitsForTheWrite(t *testing.T) {
	codes := make(chan int, 1)
	saved := osExit
	osExit = func(code int) { codes <- code }
	defer func() { osExit = saved }()

	h := &hunt{cmd: "explore", start: time.Now()}
	var report bytes.Buffer
	reported := make(chan struct{})
	stop := h.watchInterrupt(nil, func(failing int64, files []string) {
		report.WriteString(strings.Join(files, ","))
		close(reported)
	})
	defer stop()

	h.mu.Lock() // a failing schedule is being written
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reported:
		t.Fatal("the handler reported while a write was in progress")
	case <-time.After(200 * time.Millisecond):
	}
	h.failing, h.files = 1, []string{"out/x.txt"}
	h.mu.Unlock() // the write is done
	select {
	case code := <-codes:
		if code != exitViolation {
			t.Errorf("exit code %d after a violation, want %d", code, exitViolation)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler never exited")
	}
	if report.String() != "out/x.txt" {
		t.Errorf("the interrupted summary listed %q, want the file written", report.String())
	}
	// No failing schedule is recorded after the interrupt.
	before := h.failing
	h.sc = harness.Standard(fgraph.Latest)
	h.onViolation(&harness.Result{Violations: []harness.Violation{{Oracle: "model"}}})
	if h.failing != before {
		t.Error("a failing run was recorded after the interrupt")
	}
}

// TestExploreModels: explore reports the verdict under both compiler
// models, labelled, in the text and in --json; --alias explores kbuild's
// model alone. M-push-barrier1 (push's first barrier dropped) is killed
// only if the compiler can prove no alias: the reorder it allows moves a
// ret_stack word store past a curr_ret_stack store, which kbuild's
// -fno-strict-aliasing keeps in order. M-push-2 is killed under kbuild.
func TestExploreModels(t *testing.T) {
	type model struct {
		name       string
		schedules  int64
		violations int64
	}
	for _, tc := range []struct {
		name, reason string
		args         []string
		code         int
		verdict      string
		models       []model
		text         []string
	}{
		{
			name: "no-alias only", reason: "every failing run reorders stores kbuild keeps in order, so the whole space is explored and kbuild's model shows none",
			args: []string{"explore", "--mutant", "M-push-barrier1", "-C", "1"}, code: exitViolation,
			verdict: harness.VerdictNoAlias, models: []model{{"kbuild", 751, 0}, {"no-alias", 781, 3}},
			text: []string{"\nschedules:   781 (complete): 751 under kbuild, 781 under no-alias\n",
				"\nviolations:  0 under kbuild, 3 under no-alias\nverdict:     only if the compiler can prove no alias\n",
				"[only if the compiler can prove no alias]"},
		},
		{
			name: "alias", reason: "--alias explores kbuild's model alone: its schedules are the kbuild ones of the default run",
			args: []string{"explore", "--mutant", "M-push-barrier1", "-C", "1", "--alias"}, code: exitClean,
			verdict: "", models: []model{{"kbuild", 751, 0}},
			text: []string{"\nmodel:       port: kbuild's model only (--alias", "\nschedules:   751 (complete)\n", "\nviolations:  0 under kbuild\n"},
		},
		{
			name: "kbuild", reason: "a kill without any reorder holds under kbuild; the exploration stops there",
			args: []string{"explore", "--mutant", "M-push-2", "-C", "1"}, code: exitViolation,
			verdict: harness.VerdictKbuild,
			text:    []string{"stopped at the first violation under kbuild (--keep-going goes on)", "\nverdict:     violates under kbuild\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.reason == "" {
				t.Fatal("case without a reason")
			}
			out := t.TempDir()
			js := exploreJSON(t, tc.code, append(tc.args, "--out", out)...)
			if js.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q (%s)", js.Verdict, tc.verdict, tc.reason)
			}
			if tc.models != nil {
				var got []model
				for _, m := range js.Models {
					got = append(got, model{m.Model, m.Schedules, m.Violations})
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.models) {
					t.Errorf("models %v, want %v (%s)", got, tc.models, tc.reason)
				}
			}
			for k, v := range js.KnownVerdicts {
				if v != harness.VerdictKbuild && v != harness.VerdictNoAlias {
					t.Errorf("known finding %s: verdict %q", k, v)
				}
			}
			_, stdout, _ := fgcheck(t, append(tc.args, "--out", out)...)
			for _, want := range tc.text {
				if !strings.Contains(stdout, want) {
					t.Errorf("summary lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// explore --run-kinds counts the runs by the choice each changed: in the
// text summary, and in the JSON one, where they add up to the runs the
// cache reports; without the flag neither says anything of them.
func TestExploreRunKinds(t *testing.T) {
	_, text, _ := fgcheck(t, "explore", "--orders", "eager", "--run-kinds")
	for _, want := range []string{"\nruns:        32085, by the choice each changed from the run before", "\n             first ", "\n             interrupt ",
		"\n             remote ", "\n               unregister u1 ", "\n               replace u0 u2 ", "\n               unwind task0 ", "\n             order "} {
		if !strings.Contains(text, want) {
			t.Errorf("explore --run-kinds: no %q in\n%s", want, text)
		}
	}
	// The remote runs by action add up to the remote runs.
	jstd := exploreJSON(t, exitClean, "explore", "--orders", "eager", "--run-kinds")
	var rem jsonRuns
	for i, c := range jstd.RunsByRemote {
		if want := []string{"unregister u1", "replace u0 u2", "unwind task0"}; i < len(want) && c.Remote != want[i] {
			t.Errorf("runs_by_remote[%d] is %q, want %q (std's remote lines, in order)", i, c.Remote, want[i])
		}
		rem.Runs, rem.Hits, rem.Replayed, rem.New = rem.Runs+c.Runs, rem.Hits+c.Hits, rem.Replayed+c.Replayed, rem.New+c.New
	}
	if r := jstd.RunsByChange[harness.ChangeRemote].jsonRuns; len(jstd.RunsByRemote) != 3 || rem != r {
		t.Errorf("std --run-kinds: runs_by_remote %+v add up to %+v, want the remote runs %+v", jstd.RunsByRemote, rem, r)
	}
	if strings.Contains(text, " narrowed ") {
		t.Errorf("explore --run-kinds on std lists narrowed runs (eager orders have none):\n%s", text)
	}
	js := exploreJSON(t, exitClean, "explore", "--scenario", "peer-spin", "--run-kinds")
	var runs, hits int64
	for i, c := range js.RunsByChange {
		if c.Change != harness.ChangeNames[i] {
			t.Errorf("runs_by_change[%d] is %q, want %q", i, c.Change, harness.ChangeNames[i])
		}
		runs += c.Runs
		hits += c.Hits
	}
	if len(js.RunsByChange) != harness.NumChanges || runs != js.Cache.Executed || hits != js.Cache.Hits {
		t.Errorf("peer-spin --run-kinds: %+v: %d runs and %d hits, want the cache's %d and %d", js.RunsByChange, runs, hits, js.Cache.Executed, js.Cache.Hits)
	}
	if js.RunsByRemote != nil {
		t.Errorf("peer-spin --run-kinds (no remote action): runs_by_remote %+v", js.RunsByRemote)
	}
	if _, text, _ := fgcheck(t, "explore", "--max-runs", "10"); strings.Contains(text, "\nruns:") {
		t.Errorf("explore without --run-kinds prints the runs by change:\n%s", text)
	}
	if js := exploreJSON(t, exitClean, "explore", "--max-runs", "10"); js.RunsByChange != nil {
		t.Errorf("explore --json without --run-kinds has runs_by_change %+v", js.RunsByChange)
	}
}

// TestExploreRemotes: --remotes auto merges remote placements on the port
// with the cache where a remote action can be placed, with either order
// engine, and says so; merged and each give the same totals, merged with
// fewer schedules run, with eager orders and with lazy ones; merged with
// --exact or with a compiled tree is misuse.
func TestExploreRemotes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"--variant", "v6.11"}, "merged", "std on v6.11: the cache and eager orders (auto)"},
		{nil, "merged", "std on latest: the cache and lazy orders (auto)"},
		{[]string{"--remotes", "each"}, "each", "asked for"},
		{[]string{"--scenario", "peer-spin"}, "each", "peer-spin has no remote action"},
		{[]string{"-E", "0"}, "each", "no remote event in the bound"},
		{[]string{"--exact"}, "each", "the plain DFS runs every schedule"},
	} {
		js := exploreJSON(t, exitClean, append([]string{"explore", "--max-runs", "2000"}, c.args...)...)
		if js.Remotes != c.want {
			t.Errorf("%v: remotes %q, want %q: %s", c.args, js.Remotes, c.want, c.why)
		}
	}
	_, text, _ := fgcheck(t, "explore", "--variant", "v6.11", "--max-runs", "10")
	if !strings.Contains(text, "engine:      exhaustive DFS with a visited-state cache and merged remote placements\n") {
		t.Errorf("the engine line does not say merged remote placements:\n%s", text)
	}
	_, text, _ = fgcheck(t, "explore", "--max-runs", "10")
	if !strings.Contains(text, "engine:      exhaustive DFS with a visited-state cache and lazy region orders and merged remote placements\n") {
		t.Errorf("the engine line does not say both:\n%s", text)
	}
	for _, orders := range []string{"eager", "lazy"} {
		merged := exploreJSON(t, exitClean, "explore", "--orders", orders, "--remotes", "merged")
		each := exploreJSON(t, exitClean, "explore", "--orders", orders, "--remotes", "each")
		if merged.Schedules != each.Schedules || !maps.Equal(merged.KnownSchedules, each.KnownSchedules) || merged.Cache.Executed >= each.Cache.Executed {
			t.Errorf("std, %s orders: merged %d schedules %v (%d run), each %d %v (%d run)", orders, merged.Schedules, merged.KnownSchedules, merged.Cache.Executed, each.Schedules, each.KnownSchedules, each.Cache.Executed)
		}
	}
	for _, args := range [][]string{
		{"--remotes", "merged", "--exact"},
		{"--remotes", "sometimes"},
	} {
		if code, _, stderr := fgcheck(t, append([]string{"explore"}, args...)...); code != exitMisuse || !strings.Contains(stderr, "--remotes") {
			t.Errorf("%v: exit %d, stderr %q; want misuse naming --remotes", args, code, stderr)
		}
	}
}
