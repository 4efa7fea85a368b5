package main

// The failure writer that explore and random share: every failing
// schedule is on disk before anything else happens, and an interrupt
// still leaves a summary of what finished.

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/harness"
)

// huntFlags are the flags explore and random share besides the scenario.
type huntFlags struct {
	strict    bool
	workers   int
	out       string
	maxFiles  int
	json      bool
	keepGoing bool
	coverage  bool
	budget    time.Duration
	progress  string
}

func (h *huntFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&h.strict, "strict", false, "turn every known-finding allowance off")
	fs.IntVar(&h.workers, "workers", 1, "parallel workers (0: all cores)")
	fs.StringVar(&h.out, "out", "fgcheck-out", "`directory` for failing schedules (created when the first one is found)")
	fs.IntVar(&h.maxFiles, "max-files", 20, "write at most `N` failing schedules (all are counted)")
	fs.BoolVar(&h.json, "json", false, "print the summary as one JSON object")
	fs.BoolVar(&h.keepGoing, "keep-going", false, "go on after the first failing schedule (default: stop there)")
	fs.BoolVar(&h.coverage, "coverage", false, "print the per-site interrupt coverage table")
	fs.DurationVar(&h.budget, "time", 0, "time budget: stop between two schedules after `DURATION` (e.g. 90s, 10m; 0: none)")
	fs.StringVar(&h.progress, "progress", "auto", progressHelp)
}

// check reports misuse of the hunt flags.
func (h *huntFlags) check() error {
	if h.workers < 0 {
		return fmt.Errorf("--workers %d: want 0 (all cores) or more", h.workers)
	}
	if h.maxFiles < 0 {
		return fmt.Errorf("--max-files %d: want 0 or more", h.maxFiles)
	}
	if err := checkOutDir("--out", h.out); err != nil {
		return err
	}
	if h.budget < 0 {
		return fmt.Errorf("--time %v: want 0 (none) or more", h.budget)
	}
	if h.progress != "auto" && h.progress != "on" && h.progress != "off" {
		return fmt.Errorf("--progress %q: want auto, on or off", h.progress)
	}
	return nil
}

// nworkers is the worker count: 0 means every core.
func (h *huntFlags) nworkers() int {
	if h.workers == 0 {
		return runtime.NumCPU()
	}
	return h.workers
}

// parseShard parses "i/n" with 0 <= i < n.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

// hunt collects the failing runs of one exploration or sample: it writes
// each (up to maxFiles) to disk from OnViolation, before the engine goes
// on, and counts all of them.
type hunt struct {
	cmd      string // "explore" or "random"
	found    string // the command that finds the schedules (storyCommand)
	engine   string // how schedules were chosen, for the summary
	kind     string // the engine without run-specific detail, for the story
	sc       *harness.Scenario
	strict   bool
	out      string
	maxFiles int
	stderr   io.Writer
	start    time.Time

	mu        sync.Mutex // held while a failing run is recorded
	failing   int64
	files     []string
	first     *harness.Result
	firstText []byte
	// firstK is the first failing run of kbuild's compiler model.
	firstK     *harness.Result
	firstKText []byte
	writeErrs  int
	lastErr    error        // the last write error, for the summary
	earlier    int64        // failing schedules of earlier legs (a resumed checkpoint)
	stopped    bool         // interrupted at once: record nothing more
	signal     atomic.Int32 // 128+signal of a graceful interrupt, else 0
	budget     time.Duration
	overtime   atomic.Bool // the --time budget ran out
}

// watch arms what runs beside an engine: the --time budget and the
// signal handler, which both set stop, and the progress line (total and
// base as startProgress). Call engineDone when the engine returns, and
// release when the command is done reporting.
func (h *hunt) watch(hf *huntFlags, stop *atomic.Bool, p *harness.Progress, total, base int64) (engineDone, release func()) {
	cleanStaleTemps(h.out, "") // a killed run's half-written files
	h.budget = hf.budget
	var timer *time.Timer
	if hf.budget > 0 {
		timer = time.AfterFunc(hf.budget, func() {
			h.overtime.Store(true)
			stop.Store(true)
		})
	}
	release = h.watchInterrupt(stop, h.interrupted(p))
	var line *progressLine
	if hf.drawProgress(h.stderr) {
		line = startProgress(h.stderr, p, total, base)
	}
	engineDone = func() {
		if timer != nil {
			timer.Stop()
		}
		line.stop()
	}
	return engineDone, release
}

// onViolation is the ExploreOptions.OnViolation callback. The engine calls
// it synchronously (and serialized) for every failing run.
func (h *hunt) onViolation(res *harness.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.failing++
	if h.first != nil && (h.firstK != nil || !res.Kbuild()) && len(h.files) >= h.maxFiles {
		// Nothing keeps this run's file: with --keep-going on a mutant,
		// formatting every failing run's was 7 % of the exploration
		// (peer-spin with M-push-barrier2, perf, 7 Dec 2026).
		return
	}
	text := h.fileText(res)
	if h.first == nil {
		h.first, h.firstText = res, text
	}
	if h.firstK == nil && res.Kbuild() {
		h.firstK, h.firstKText = res, text
	}
	if len(h.files) >= h.maxFiles {
		return
	}
	path := filepath.Join(h.out, failName(h.sc, res.Violations[0].Oracle, text))
	if err := os.MkdirAll(h.out, 0o755); err != nil {
		h.writeErr(err)
		return
	}
	if err := writeFileAtomic(path, text, 0o644); err != nil {
		h.writeErr(err)
		return
	}
	h.files = append(h.files, path)
}

// crashRecorder is a compiled target that can save a failing schedule
// when its code crashes (cload.Kernel).
type crashRecorder interface {
	SetCrashRecord(path string, text []byte)
}

// onChoice keeps the compiled target's crash record current: at every
// choice, the schedule file of the run so far and the path it would be
// saved at, so that a crash of the compiled code is a violation with its
// schedule on disk (docs/kernel-target.md). nil for the port, whose
// crashes are Go panics the engines catch.
func (h *hunt) onChoice() func(harness.Schedule) {
	cr, ok := h.sc.Target.(crashRecorder)
	if !ok {
		return nil
	}
	if err := os.MkdirAll(h.out, 0o755); err != nil {
		h.writeErr(err)
		return nil
	}
	return func(s harness.Schedule) {
		story := []string{
			"found by: " + h.found,
			fmt.Sprintf("engine: %s; bound %s", h.kind, h.sc.Bound),
			"violation: panic: the compiled fgraph.c crashed in this run (signal, BUG(), or a runaway loop: see the message of the run)",
			"target: " + h.sc.Target.Name(),
			reproduce(h.sc),
		}
		f := &harness.File{Comments: story, Scenario: h.sc, Schedule: s, Expect: &harness.Expect{Oracle: harness.OraclePanic}}
		text := f.Format()
		cr.SetCrashRecord(filepath.Join(h.out, failName(h.sc, harness.OraclePanic, text)), text)
	}
}

func (h *hunt) writeErr(err error) {
	h.writeErrs++
	h.lastErr = err
	if h.writeErrs <= 3 {
		fmt.Fprintf(h.stderr, "fgcheck %s: cannot save a failing schedule: %v\n", h.cmd, err)
	}
}

// fileText is the schedule file of a failing run: the story of how it was
// found, the scenario, the schedule and the expected verdict. It is a
// function of the schedule and the scenario flags alone (not of the
// worker count, the shard, a resume, the seed or the order schedules were
// found in), and so is its name (failName).
func (h *hunt) fileText(res *harness.Result) []byte {
	v := res.Violations[0]
	story := []string{
		"found by: " + h.found,
		fmt.Sprintf("engine: %s; bound %s", h.kind, h.sc.Bound),
		"violation: " + oneLine(v.String()),
	}
	if len(res.Violations) > 1 {
		story = append(story, fmt.Sprintf("(%d more violations in the same run)", len(res.Violations)-1))
	}
	if !res.Kbuild() {
		story = append(story, "verdict: "+harness.VerdictNoAlias+": the run reordered stores that -fno-strict-aliasing keeps in order (not a run of kbuild's model, --alias)")
	}
	if h.strict {
		story = append(story, "found with --strict: replay with fgcheck replay --strict")
	}
	if h.sc.Target != nil {
		story = append(story, "target: "+h.sc.Target.Name(), "model: "+h.sc.Model())
		for _, e := range res.Schedule.Events {
			if e.Line > 0 {
				story = append(story, fmt.Sprintf("event %d (%s at %s): right after the store at fgraph.c:%d", e.ID, e.Kind, e.At, e.Line))
			}
		}
	}
	story = append(story, reproduce(h.sc))
	f := &harness.File{Comments: story, Scenario: h.sc, Schedule: res.Schedule, Expect: &harness.Expect{Oracle: v.Oracle}}
	return f.Format()
}

// reproduce is the story's line that says how to run the file again: a C
// mutant is a patch of the tree, not a line of the file, so its flag is
// named.
func reproduce(sc *harness.Scenario) string {
	if sc.Target == nil {
		return "reproduce: fgcheck replay THIS_FILE"
	}
	if k, ok := sc.Target.(*cload.Kernel); ok && k.Mutant != "" {
		return "reproduce: fgcheck replay --kernel TREE --mutant " + k.Mutant + " THIS_FILE"
	}
	return "reproduce: fgcheck replay --kernel TREE THIS_FILE"
}

// failName is <variant>-<mutant or baseline>-<oracle>-<8 hex of sha256>.txt.
func failName(sc *harness.Scenario, oracle string, text []byte) string {
	mut := "baseline"
	if sc.Mutant != 0 {
		mut = sc.Mutant.String()
	}
	sum := sha256.Sum256(text)
	return fmt.Sprintf("%s-%s-%s-%s.txt", sc.Variant, mut, oracle, hex.EncodeToString(sum[:4]))
}

// selfCommand is how to run fgcheck the way it was started: "go run
// ./cmd/fgcheck" when the binary lives where go run puts it (a go-build
// directory: the temporary one or the build cache), else "fgcheck".
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil || filepath.Base(exe) != "fgcheck" {
		return "fgcheck"
	}
	cache := os.Getenv("GOCACHE")
	if strings.Contains(exe, string(filepath.Separator)+"go-build") || cache != "" && strings.HasPrefix(exe, cache+string(filepath.Separator)) {
		return "go run ./cmd/fgcheck"
	}
	return "fgcheck"
}

// oneLine folds a message into one comment line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// storyFlags are the flags that decide the scenario and the verdict: a
// failing file's "found by" line names them, and only them.
var storyFlags = map[string]bool{"variant": true, "scenario": true, "mutant": true, "fix": true, "bound": true,
	"K": true, "D": true, "R": true, "E": true, "C": true, "alias": true, "stores-only": true, "strict": true, "mode": true, "reader": true}

// storyCommand is "fgcheck CMD" with the story flags set on the command
// line, in name order.
func storyCommand(cmd string, fs *flag.FlagSet) string {
	argv := []string{cmd}
	fs.Visit(func(f *flag.Flag) {
		if !storyFlags[f.Name] {
			return
		}
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if f.Value.String() == "true" {
				argv = append(argv, name)
			} else {
				argv = append(argv, name+"=false")
			}
			return
		}
		argv = append(argv, name, f.Value.String())
	})
	return commandLine(argv)
}

// commandLine renders argv as a shell command.
func commandLine(argv []string) string {
	parts := []string{"fgcheck"}
	for _, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// watchInterrupt handles SIGINT and SIGTERM while an engine runs. With
// graceful non-nil, the first signal only sets it: the engine stops between
// two runs (saving its checkpoint), and the command reports the partial
// totals and exits 128+signal (1 if a violation was found). A second
// signal, or the first when graceful is nil, waits for a failing schedule
// being written to finish, prints what is known so far with partial, and
// exits at once. The returned function uninstalls the handler.
func (h *hunt) watchInterrupt(graceful *atomic.Bool, partial func(failing int64, files []string)) (stop func()) {
	ch := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for {
			select {
			case sig := <-ch:
				code := 130
				if sig == syscall.SIGTERM {
					code = 143
				}
				if graceful != nil && h.signal.CompareAndSwap(0, int32(code)) {
					graceful.Store(true)
					fmt.Fprintf(h.stderr, "\nfgcheck %s: %v: stopping after the current schedules (send it again to quit at once)\n", h.cmd, sig)
					continue
				}
				h.mu.Lock() // the current write, if any, finishes first
				h.stopped = true
				partial(h.failing, h.files)
				if h.failing > 0 {
					code = exitViolation
				}
				osExit(code)
				h.mu.Unlock() // reached only when a test replaced osExit
				return
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// interrupted is the report of a second signal (the engine is not waited
// for): time, schedules so far, and the failing schedules written.
func (h *hunt) interrupted(p *harness.Progress) func(failing int64, files []string) {
	return func(failing int64, files []string) {
		fmt.Fprintf(h.stderr, "\nfgcheck %s: interrupted after %.2f s, %d schedules\n", h.cmd, time.Since(h.start).Seconds(), p.Runs.Load())
		fmt.Fprintf(h.stderr, "failing schedules so far: %d\n", failing)
		for _, f := range files {
			fmt.Fprintf(h.stderr, "  %s\n", f)
		}
	}
}

// osExit is os.Exit; tests replace it.
