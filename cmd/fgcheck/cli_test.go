package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestMain lets a test run the real command in a child process (for
// signals): with FGCHECK_TEST_MAIN=1 the test binary is fgcheck.
// kernelTree is $FGCHECK_KERNEL, taken out of the environment so that the
// CLI's tests run the port unless a test asks for the tree.
var kernelTree string

func TestMain(m *testing.M) {
	if os.Getenv("FGCHECK_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	kernelTree = os.Getenv("FGCHECK_KERNEL")
	os.Unsetenv("FGCHECK_KERNEL")
	os.Exit(m.Run())
}

// child returns the test binary set up to run as fgcheck with args in dir.
func child(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FGCHECK_TEST_MAIN=1")
	return cmd
}

// exitCode is the exit code of a finished command.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// TestEveryCommandHasHelpWithExamples: each subcommand's -h exits 0 and
// prints its usage, its flags and examples; every example parses (the
// example's flags are parsed before the -h appended to it, so a flag the
// command lacks or a malformed value exits 2).
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for name := range commands {
		code, _, stderr := fgcheck(t, name, "-h")
		if code != exitClean || !strings.Contains(stderr, "usage: fgcheck "+name) || !strings.Contains(stderr, "\nExamples:\n") {
			t.Errorf("fgcheck %s -h: exit %d, want 0 with usage and examples:\n%s", name, code, stderr)
		}
		if len(examples[name]) < 2 {
			t.Errorf("fgcheck %s: %d examples, want at least 2", name, len(examples[name]))
		}
	}
	for name, exs := range examples {
		if commands[name] == nil {
			t.Errorf("examples for %q, which is not a command", name)
		}
		for _, ex := range exs {
			line, _, _ := strings.Cut(ex, "#")
			args := strings.Fields(line)
			if len(args) < 2 || args[0] != "fgcheck" || args[1] != name {
				t.Errorf("example %q of %s does not start with \"fgcheck %s\"", ex, name, name)
				continue
			}
			if code, _, stderr := fgcheck(t, append(args[1:], "-h")...); code != exitClean {
				t.Errorf("example %q does not parse: exit %d\n%s", ex, code, stderr)
			}
		}
	}
}

// TestScenarios lists the built-ins and a directory of schedule files.
func TestScenarios(t *testing.T) {
	code, out, _ := fgcheck(t, "scenarios")
	if code != exitClean || !strings.Contains(out, "std ") || !strings.Contains(out, "peer-spin ") || !strings.Contains(out, "replace u0 u2") {
		t.Fatalf("scenarios: exit %d\n%s", code, out)
	}
	files, _ := filepath.Glob("../../corpus/*.txt")
	code, out, stderr := fgcheck(t, "scenarios", "--json", "../../corpus")
	var rows []jsonScenario
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != exitClean {
		t.Fatalf("scenarios --json corpus: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if len(rows) != 2+len(files) || len(files) < 30 {
		t.Fatalf("%d rows for 2 built-ins and %d corpus files", len(rows), len(files))
	}
	for _, r := range rows[2:] {
		if r.File == "" || r.Expect == "" {
			t.Errorf("corpus row %+v: want a file and an expectation", r)
		}
	}
	bad := writeTemp(t, "bad.txt", "fgcheck v1\nscenario x\nvariant nosuch\n")
	code, _, stderr = fgcheck(t, "scenarios", bad)
	if code != exitMisuse || !strings.Contains(stderr, bad+":3:") {
		t.Errorf("scenarios on a malformed file: exit %d, stderr %q; want 2 and FILE:LINE:COL", code, stderr)
	}
	if code, _, _ := fgcheck(t, "scenarios", "--variant", "v9"); code != exitMisuse {
		t.Errorf("scenarios --variant v9: exit %d, want 2", code)
	}
}

// TestVersionJSON: version --json is one object with the formats.
func TestVersionJSON(t *testing.T) {
	code, out, _ := fgcheck(t, "version", "--json")
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitClean {
		t.Fatalf("version --json: exit %d, %v\n%s", code, err, out)
	}
	if v["tool"] != version || v["schedule_format"] != "v1" || v["checkpoint_format"] != harness.CheckpointFormat {
		t.Errorf("version --json = %v", v)
	}
	// go test builds this package, a main package, as go build does: with
	// cmd/fgcheck/default.pgo (make pgo). A build that lost the profile
	// (the file gone or renamed) runs the explorer about a tenth slower
	// (docs/state-cache.md, "Profile-guided builds").
	if v["pgo"] != "default.pgo" {
		t.Errorf("version --json: pgo = %q, want default.pgo (the binary is built without its profile)", v["pgo"])
	}
	code, out, _ = fgcheck(t, "version")
	if code != exitClean || !strings.Contains(out, ", profile-guided by default.pgo)") {
		t.Errorf("version: exit %d, %q does not name the profile", code, out)
	}
}

// TestFmtJSON reports each file: canonical, rewritten, or its error.
func TestFmtJSON(t *testing.T) {
	messy := writeTemp(t, "messy.txt", irqFileMessy)
	clean := writeTemp(t, "clean.txt", irqFile)
	code, out, _ := fgcheck(t, "fmt", "--json", "-w", messy, clean, "/no/such/file.txt")
	var rows []jsonFmt
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("fmt --json: %v\n%s", err, out)
	}
	if code != exitMisuse || len(rows) != 3 {
		t.Fatalf("fmt --json with a missing file: exit %d, %d rows; want 2 and 3 rows", code, len(rows))
	}
	want := []jsonFmt{{File: messy, Rewritten: true}, {File: clean, Canonical: true}, {File: "/no/such/file.txt"}}
	rows[2].Error = ""
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("fmt --json rows (-want +got):\n%s", diff)
	}
}

// TestMinimizeJSON: the report carries the sizes and the minimized text.
func TestMinimizeJSON(t *testing.T) {
	code, out, stderr := fgcheck(t, "minimize", "--json", "../../corpus/irq-before-w3-clobbers-ret.txt")
	var js jsonMinimize
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != exitClean {
		t.Fatalf("minimize --json: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if js.Oracle != "model" || !js.Minimal || js.After.Events != 1 || !strings.HasPrefix(js.Text, "fgcheck v1\n") {
		t.Errorf("minimize --json = %+v", js)
	}
}

// TestBoundKeyFlags: -K/-D/-R/-E/-C are --bound one key at a time.
func TestBoundKeyFlags(t *testing.T) {
	a := exploreJSON(t, exitClean, "explore", "--variant", "v6.11", "-K", "1", "-E", "0", "-C", "1")
	b := exploreJSON(t, exitClean, "explore", "--variant", "v6.11", "--bound", "K=1,E=0,C=1")
	if a.Bound != "K=1 D=2 R=1 E=0 C=1" || a.Schedules != b.Schedules {
		t.Errorf("-K 1 -E 0 -C 1: bound %q, %d schedules; --bound: %d", a.Bound, a.Schedules, b.Schedules)
	}
	for _, tc := range []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"-K", "1", "--bound", "K=2"}, "-K and --bound K=... both given", "two values for one key"},
		{[]string{"-D", "7"}, "at most 6", "the nesting cap"},
		{[]string{"-R", "x"}, "invalid value", "not a number"},
	} {
		code, _, stderr := fgcheck(t, append([]string{"explore"}, tc.args...)...)
		if code != exitMisuse || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v (%s): exit %d, stderr %q; want 2 and %q", tc.args, tc.why, code, stderr, tc.want)
		}
	}
}

// TestTimeBudget: --time stops between two schedules; the run is clean
// but incomplete and says why.
func TestTimeBudget(t *testing.T) {
	js := exploreJSON(t, exitClean, "explore", "--variant", "v6.11", "--time", "100ms")
	if js.Complete || !strings.Contains(js.Stopped, "time budget 100ms") || js.Schedules == 0 || js.Schedules >= 110765 {
		t.Errorf("--time 100ms: complete %v, stopped %q, %d schedules", js.Complete, js.Stopped, js.Schedules)
	}
	code, out, _ := fgcheck(t, "random", "--runs", "100000000", "--time", "100ms")
	if code != exitClean || !strings.Contains(out, "sampled, time budget 100ms reached") {
		t.Errorf("random --time: exit %d\n%s", code, out)
	}
	if code, _, _ := fgcheck(t, "explore", "--time", "-1s"); code != exitMisuse {
		t.Errorf("--time -1s: exit %d, want 2", code)
	}
}

// TestProgressDisplay: --progress on draws the count on stderr; auto
// draws nothing when stderr is not a terminal (here a buffer).
func TestProgressDisplay(t *testing.T) {
	code, _, stderr := fgcheck(t, "explore", "--variant", "v6.11", "-C", "1", "--progress", "on")
	if code != exitClean || !strings.Contains(stderr, "880 schedules") {
		t.Errorf("--progress on: exit %d, stderr %q; want the final count 880", code, stderr)
	}
	code, _, stderr = fgcheck(t, "random", "--runs", "300", "--progress", "on")
	if code != exitClean || !strings.Contains(stderr, "300/300") {
		t.Errorf("random --progress on: exit %d, stderr %q; want 300/300", code, stderr)
	}
	code, _, stderr = fgcheck(t, "explore", "--variant", "v6.11", "-C", "1")
	if code != exitClean || stderr != "" {
		t.Errorf("--progress auto without a terminal: exit %d, stderr %q; want nothing", code, stderr)
	}
	if code, _, _ := fgcheck(t, "explore", "--progress", "sometimes"); code != exitMisuse {
		t.Errorf("--progress sometimes: exit %d, want 2", code)
	}
}

// TestCheckpointMisuse: a checkpoint of another exploration or a file that
// is not one is refused, and nothing is overwritten.
func TestCheckpointMisuse(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.ckpt")
	// (--remotes each: a run is one schedule, so the stop is at 100.)
	js := exploreJSON(t, exitClean, "explore", "--variant", "v6.11", "-C", "1", "--remotes", "each", "--checkpoint", ck, "--max-runs", "100")
	if js.Complete || js.Schedules != 100 {
		t.Fatalf("--max-runs 100: %d schedules, complete %v", js.Schedules, js.Complete)
	}
	before, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := fgcheck(t, "explore", "--variant", "latest", "-C", "1", "--checkpoint", ck)
	if code != exitMisuse || !strings.Contains(stderr, "belongs to another exploration") {
		t.Errorf("resume with another variant: exit %d, %q", code, stderr)
	}
	code, _, stderr = fgcheck(t, "explore", "--variant", "v6.11", "-C", "1", "--checkpoint", ck, "--strict")
	if code != exitMisuse || !strings.Contains(stderr, "belongs to another exploration") {
		t.Errorf("resume with --strict: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(ck); string(after) != string(before) {
		t.Error("a refused resume changed the checkpoint file")
	}
	junk := writeTemp(t, "junk.ckpt", "{not json")
	if code, _, stderr := fgcheck(t, "explore", "--checkpoint", junk); code != exitMisuse || !strings.Contains(stderr, "not a checkpoint file") {
		t.Errorf("a malformed checkpoint: exit %d, %q", code, stderr)
	}
	// Merged remote placements (the default) are another engine: their
	// choice points are not the checkpoint's.
	code, _, stderr = fgcheck(t, "explore", "--variant", "v6.11", "-C", "1", "--checkpoint", ck)
	if code != exitMisuse || !strings.Contains(stderr, "belongs to another exploration") {
		t.Errorf("resume with merged remote placements: exit %d, %q", code, stderr)
	}
	// The rest of the run resumes: 880 schedules in all, as uninterrupted.
	js = exploreJSON(t, exitClean, "explore", "--variant", "v6.11", "-C", "1", "--remotes", "each", "--checkpoint", ck)
	if !js.Complete || js.Schedules != 880 || js.Resumed == nil || *js.Resumed != 100 {
		t.Errorf("resumed: %d schedules, complete %v, resumed %v; want 880 from 100", js.Schedules, js.Complete, js.Resumed)
	}
}

// TestSIGINTResumeLosesNothing interrupts a real fgcheck process with
// SIGINT in the middle of an exploration that keeps finding violations,
// resumes it from its checkpoint, and compares with one uninterrupted
// run: the same totals (schedules, violations, known-finding counts) and
// byte-identical failing-schedule files, all of them.
func TestSIGINTResumeLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three explorations in child processes")
	}
	// --exact: every failing schedule is run and saved (the state cache
	// counts those of a pruned subtree; a resumed leg starts with an empty
	// cache, so it prunes other subtrees than one uninterrupted run).
	args := []string{"explore", "--exact", "--variant", "v6.11", "--mutant", "M-push-2", "-R", "0", "-E", "0",
		"--keep-going", "--max-files", "100000", "--out", "out", "--json",
		"--checkpoint", "run.ckpt", "--checkpoint-every", "200"}

	// The reference, uninterrupted, in its own directory (same argv, so
	// the same file contents and names).
	refDir := t.TempDir()
	refOut, err := child(t, refDir, args...).Output()
	if code := exitCode(t, err); code != exitViolation {
		t.Fatalf("reference run: exit %d, want 1", code)
	}
	var ref jsonSummary
	if err := json.Unmarshal(refOut, &ref); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cmd := child(t, dir, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first checkpoint is on disk: the run is under way.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "run.ckpt")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no checkpoint within 60 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	code := exitCode(t, err)
	if !strings.Contains(stderr.String(), "stopping after the current schedules") {
		t.Fatalf("the first run was not interrupted (exit %d):\n%s", code, stderr.String())
	}
	if code != exitViolation {
		t.Errorf("interrupted run with violations: exit %d, want 1", code)
	}

	out, err := child(t, dir, args...).Output()
	if code := exitCode(t, err); code != exitViolation {
		t.Fatalf("resumed run: exit %d, want 1", code)
	}
	var got jsonSummary
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Resumed == nil || *got.Resumed == 0 || *got.Resumed >= ref.Schedules {
		t.Errorf("the second run did not resume part-way: resumed %v of %d", got.Resumed, ref.Schedules)
	}
	if got.Schedules != ref.Schedules || got.Violations != ref.Violations || !got.Complete {
		t.Errorf("resumed totals %d schedules, %d violations (complete %v); uninterrupted %d, %d",
			got.Schedules, got.Violations, got.Complete, ref.Schedules, ref.Violations)
	}
	if diff := cmp.Diff(ref.KnownSchedules, got.KnownSchedules); diff != "" {
		t.Errorf("known-finding counts differ (-uninterrupted +resumed):\n%s", diff)
	}
	if diff := cmp.Diff(ref.Models, got.Models); diff != "" || len(got.Models) != 2 {
		t.Errorf("the counts per compiler model differ (-uninterrupted +resumed):\n%s", diff)
	}
	want, gotFiles := dirFiles(t, filepath.Join(refDir, "out")), dirFiles(t, filepath.Join(dir, "out"))
	if int64(len(want)) != ref.Violations {
		t.Fatalf("reference wrote %d files for %d violations", len(want), ref.Violations)
	}
	if diff := cmp.Diff(want, gotFiles); diff != "" {
		t.Errorf("failing-schedule files differ (-uninterrupted +interrupted and resumed):\n%s", diff)
	}
}

// dirFiles maps each file name of dir to its content.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	m := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		m[n] = string(b)
	}
	return m
}

// TestSecondSignalQuitsAtOnce: the first SIGINT only asks the engine to
// stop (graceful); the second reports what is known and exits, without
// waiting for the engine.
func TestSecondSignalQuitsAtOnce(t *testing.T) {
	codes := make(chan int, 1)
	saved := osExit
	osExit = func(code int) { codes <- code }
	defer func() { osExit = saved }()

	var errb syncBuffer
	h := &hunt{cmd: "explore", start: time.Now(), stderr: &errb}
	var graceful atomic.Bool
	p := new(harness.Progress)
	p.Runs.Store(1234)
	stop := h.watchInterrupt(&graceful, h.interrupted(p))
	defer stop()

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !graceful.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first SIGINT did not ask the engine to stop")
		}
	}
	select {
	case code := <-codes:
		t.Fatalf("the first SIGINT exited (%d)", code)
	case <-time.After(100 * time.Millisecond):
	}
	if h.signal.Load() != 130 || !strings.Contains(errb.String(), "stopping after the current schedules") {
		t.Errorf("after the first SIGINT: signal %d, stderr %q", h.signal.Load(), errb.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-codes:
		if code != 130 {
			t.Errorf("the second SIGINT exited %d, want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not exit")
	}
	if !strings.Contains(errb.String(), "interrupted after") || !strings.Contains(errb.String(), "1234 schedules") {
		t.Errorf("the second SIGINT's report: %q", errb.String())
	}
}

// syncBuffer is a strings.Builder safe for the signal goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHelpLayout: each -h has one "Flags:" heading and one "Examples:".
func TestHelpLayout(t *testing.T) {
	for name := range commands {
		_, _, stderr := fgcheck(t, name, "-h")
		if strings.Count(stderr, "Flags:") != 1 || strings.Count(stderr, "Examples:") != 1 {
			t.Errorf("fgcheck %s -h has %d Flags: and %d Examples: headings:\n%s", name, strings.Count(stderr, "Flags:"), strings.Count(stderr, "Examples:"), stderr)
		}
	}
}

// TestSummaryNamesEveryFix: the summary's first line names each fix given
// (from the one fix table, so a new fix cannot be left out).
func TestSummaryNamesEveryFix(t *testing.T) {
	all := strings.Join(harness.FixNames(), ",")
	code, out, _ := fgcheck(t, "explore", "--fix", all, "--max-runs", "1")
	first, _, _ := strings.Cut(out, "\n")
	for _, name := range harness.FixNames() {
		if !strings.Contains(first, "fix "+name) {
			t.Errorf("exit %d; summary header %q lacks fix %s", code, first, name)
		}
	}
}

// TestCheckpointEngineRevision: a checkpoint of merged remote placements
// written before the remote unwind merged across commits (its yields
// offered more placements: its choice points are not this engine's) has
// another fingerprint, so resuming it is refused as another
// exploration's; lazy orders and the plain DFS keep theirs.
func TestCheckpointEngineRevision(t *testing.T) {
	// The fingerprint as the engine before computed it: a frozen copy of
	// fingerprint's old text, on purpose (calling fingerprint would test
	// nothing).
	old := func(scenario string, strict bool, shard, shards int, lazy, merged bool) string {
		text := fmt.Sprintf("%s\nstrict=%v shard=%d/%d\n", scenario, strict, shard, shards)
		if lazy {
			text += "lazy-orders\n"
		}
		if merged {
			text += "merged-remotes\n"
		}
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:8])
	}
	sc := scenarioText(harness.Standard(fgraph.Latest))
	for _, c := range []struct {
		lazy, merged, same bool
		why                string
	}{
		{false, true, false, "merged placements: the unwind now merges across commits"},
		{false, false, true, "the plain DFS did not change"},
		{true, false, true, "lazy orders did not change"},
	} {
		if got := fingerprint(sc, false, 0, 1, c.lazy, c.merged) == old(sc, false, 0, 1, c.lazy, c.merged); got != c.same {
			t.Errorf("lazy %v merged %v: same fingerprint as before %v, want %v: %s", c.lazy, c.merged, got, c.same, c.why)
		}
	}
}
