package main

// Shared pieces of the subcommands: flag parsing (with flags allowed after
// the positional arguments), the scenario flags, the failure writer that
// records every failing schedule on disk before anything else happens, the
// exploration summary (text and JSON), peak memory, and atomic file writes.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// version is the tool's version; the schedule format has its own ("fgcheck
// v1" header, harness/format.go).
const version = "0.1.0-dev"

func init() {
	register(&command{name: "version", short: "print the versions of the tool and of the schedule and checkpoint formats", run: runVersion})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr, "fgcheck version [--json]\n\nPrints the tool version, the schedule and checkpoint format versions, and\nthe Go version and platform.")
	asJSON := fs.Bool("json", false, "print the versions as one JSON object")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return misuse(stderr, "version", "unexpected argument %q", pos[0])
	}
	mod := ""
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		mod = " module " + bi.Main.Version
	}
	if *asJSON {
		writeJSON(stdout, map[string]string{"tool": version, "module": strings.TrimPrefix(mod, " module "),
			"schedule_format": "v1", "checkpoint_format": harness.CheckpointFormat, "go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
		return exitClean
	}
	fmt.Fprintf(stdout, "fgcheck %s%s (schedule format v1, checkpoint format %s, %s %s/%s)\n", version, mod, harness.CheckpointFormat, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitClean
}

// engineFailed reports an error of harness.Explore or Sample: an internal
// error of fgcheck (exit 3), else misuse. No summary follows: the run did
// not finish.
func engineFailed(stderr io.Writer, cmd string, err error) int {
	var ie *harness.InternalError
	if errors.As(err, &ie) {
		fmt.Fprintf(stderr, "fgcheck %s: %v (a bug in fgcheck, not in the code under test; no summary: the run did not finish)\n", cmd, err)
		return exitInternal
	}
	return misuse(stderr, cmd, "%v", err)
}

// misuse prints "fgcheck CMD: message" on stderr and returns exitMisuse.
func misuse(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "fgcheck %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitMisuse
}

// newFlagSet returns a fresh FlagSet that reports errors on stderr, with a
// usage line followed by the flag defaults.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("fgcheck "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
		if ex := examples[name]; len(ex) > 0 {
			fmt.Fprintf(stderr, "\nExamples:\n")
			for _, e := range ex {
				fmt.Fprintf(stderr, "  %s\n", e)
			}
		}
	}
	return fs
}

// parseArgs parses args with fs, allowing flags before, between and after
// positional arguments ("replay FILE --trace=false"); "--" ends the flags.
// It returns the positional arguments, or ok=false and the exit code: 0 for
// -h/--help, 2 for a flag error (already reported on stderr by fs).
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitClean, false
			}
			return nil, exitMisuse, false
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), 0, true
		}
		if len(rest) == 0 {
			return pos, 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// given reports which flags were set on the command line.
func given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// scenarioFlags select and adjust the scenario of explore and random.
type scenarioFlags struct {
	variant    string
	scenario   string
	mutant     string
	fixes      string
	bound      string
	alias      bool
	storesOnly bool
	reader     string
	keys       [5]int // -K -D -R -E -C: bound keys one at a time (-1: not given)
	kernel     string
}

// boundKeys are the bound's keys, in the order of scenarioFlags.keys.
var boundKeys = [5]string{"K", "D", "R", "E", "C"}

var boundKeyHelp = [5]string{
	"interrupts per run, at most 16",
	"nesting depth (IRQ, NMI, ...), at most 6",
	"regions run in a non-program order",
	"remote-CPU events per run",
	"cap on non-default choices per run (0: no cap)",
}

func (s *scenarioFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.variant, "variant", "latest", "kernel `variant`: latest, v6.12, v6.11 or seed (with a scenario FILE: overrides the file's)")
	fs.StringVar(&s.scenario, "scenario", "std", "`scenario`: std (the benchmark bound, docs/std.md), peer-spin, or a scenario FILE (its schedule lines are ignored)")
	fs.StringVar(&s.mutant, "mutant", "", "switch on the catalogue mutant `NAME` (fgraph.Catalogue; fgcheck mutants lists them)")
	fs.StringVar(&s.fixes, "fix", "", "comma-separated fix `list`: "+strings.Join(harness.FixNames(), ", "))
	fs.StringVar(&s.bound, "bound", "", "bound `overrides`, e.g. K=2,D=2,R=1,E=1,C=2 (keys not named keep the scenario's value; C=0: no cap)")
	fs.BoolVar(&s.alias, "alias", false, "explore kbuild's compiler model alone (GCC and Clang with -fno-strict-aliasing: stores through ret_stack keep their order against task fields); without it every schedule is judged under kbuild's model and the no-alias model")
	fs.BoolVar(&s.storesOnly, "stores-only", false, "deliver interrupts only at store commits")
	fs.StringVar(&s.reader, "reader", "kernel", "who reads the shadow stack: `kernel` (the kernel's readers: callchains, stack dumps, livepatch, the profiler; harness/readers.go) or any (also the any-instant walker: the whole chain at every yield)")
	fs.StringVar(&s.kernel, "kernel", os.Getenv("FGCHECK_KERNEL"), "kernel source tree `DIR`: build and run its own kernel/trace/fgraph.c instead of the port (default $FGCHECK_KERNEL; variant v6.12 unless --variant says otherwise; needs gcc and cgo)")
	for i, k := range boundKeys {
		fs.IntVar(&s.keys[i], k, -1, fmt.Sprintf("`N` %s (the same as --bound %s=N)", boundKeyHelp[i], k))
	}
}

// build returns the scenario the flags select. Every error is misuse.
func (s *scenarioFlags) build(fs *flag.FlagSet) (*harness.Scenario, error) {
	set := given(fs)
	v, err := fgraph.ParseVariant(s.variant)
	if err != nil {
		return nil, err
	}
	if s.kernel != "" && !set["variant"] {
		// The port variant whose arch glue and known findings fit the
		// tree: Debian's 6.12 is v6.12.
		v = fgraph.V612
		set["variant"] = true
	}
	var sc *harness.Scenario
	switch s.scenario {
	case "std":
		sc = harness.Standard(v)
	case "peer-spin":
		sc = harness.PeerSpin(v)
	default:
		data, err := harness.ReadInput(s.scenario)
		if harness.IsTooLarge(err) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("scenario: %v (want std, peer-spin or a scenario file)", err)
		}
		f, err := harness.ParseFile(s.scenario, data)
		if err != nil {
			return nil, err
		}
		sc = f.Scenario
		if set["variant"] {
			sc.Variant = v
		}
	}
	if s.mutant != "" && s.kernel == "" {
		mi, err := fgraph.LookupMutant(s.mutant)
		if err != nil {
			return nil, err
		}
		sc.Mutant = mi.Mutant
	}
	if set["fix"] {
		fx, err := parseFixes(s.fixes)
		if err != nil {
			return nil, err
		}
		sc.Fixes = fx
	}
	var one []string
	for i, k := range boundKeys {
		if set[k] {
			if strings.Contains(s.bound, k+"=") {
				return nil, fmt.Errorf("-%s and --bound %s=... both given: keep one", k, k)
			}
			one = append(one, fmt.Sprintf("%s=%d", k, s.keys[i]))
		}
	}
	if s.bound != "" || len(one) > 0 {
		b, err := parseBound(sc.Bound, strings.Join(append([]string{s.bound}, one...), ","))
		if err != nil {
			if len(one) > 0 {
				err = errors.New(strings.Replace(err.Error(), "--bound: ", "", 1))
			}
			return nil, err
		}
		sc.Bound = b
	}
	if set["alias"] {
		sc.Alias = s.alias
	}
	if set["stores-only"] {
		sc.StoresOnly = s.storesOnly
	}
	if set["reader"] {
		switch s.reader {
		case "kernel":
			sc.AnyReader = false
		case "any":
			sc.AnyReader = true
		default:
			return nil, fmt.Errorf("--reader %q: want kernel or any", s.reader)
		}
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if s.kernel != "" {
		sc.Mutant = 0 // the C mutant is a patch of the C, not a switch of the port's arch glue
		k, err := openKernel(s.kernel, s.mutant, sc)
		if err != nil {
			return nil, err
		}
		sc.Target = k
	}
	return sc, nil
}

// openKernel builds and loads a tree's fgraph.c for sc's stack size, with
// the C form of mutant (ctarget.Mutants) applied to a copy when one is named.
func openKernel(dir, mutant string, sc *harness.Scenario) (harness.Target, error) {
	opt := ctarget.Options{StackWords: sc.Config().StackWords}
	if mutant == "" {
		k, err := cload.Open(dir, opt)
		if err != nil {
			return nil, fmt.Errorf("--kernel: %v", err)
		}
		return k, nil
	}
	mu, ok := ctarget.LookupMutant(mutant)
	if !ok {
		var names []string
		for _, m := range ctarget.Mutants {
			names = append(names, m.Name)
		}
		return nil, fmt.Errorf("--kernel --mutant: %s has no C form (want %s)", mutant, strings.Join(names, ", "))
	}
	k, err := cload.OpenMutant(dir, mu, opt)
	if err != nil {
		return nil, fmt.Errorf("--kernel: %v", err)
	}
	return k, nil
}

// parseFixes parses "no-bit0,retp-guard".
func parseFixes(s string) (harness.Fixes, error) {
	var fx harness.Fixes
	if strings.TrimSpace(s) == "" {
		return fx, nil
	}
	for _, name := range strings.Split(s, ",") {
		if !fx.Set(strings.TrimSpace(name)) {
			return fx, fmt.Errorf("--fix: unknown fix %q (want %s)", name, strings.Join(harness.FixNames(), ", "))
		}
	}
	return fx, nil
}

// parseBound applies "K=2,D=2,R=1,E=1,C=2" (commas or spaces, any subset,
// any order) to b.
func parseBound(b harness.Bound, s string) (harness.Bound, error) {
	seen := map[string]bool{}
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return b, fmt.Errorf("--bound: want KEY=N, got %q (keys K, D, R, E, C)", kv)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return b, fmt.Errorf("--bound: %s=%q: want a number >= 0", k, v)
		}
		if seen[k] {
			return b, fmt.Errorf("--bound: duplicate key %s", k)
		}
		seen[k] = true
		switch k {
		case "K":
			if n > 16 {
				return b, fmt.Errorf("--bound: K=%d: at most 16", n)
			}
			b.K = n
		case "D":
			if n > 6 {
				return b, fmt.Errorf("--bound: D=%d: at most 6", n)
			}
			b.D = n
		case "R":
			b.R = n
		case "E":
			b.E = n
		case "C":
			b.C = n
		default:
			return b, fmt.Errorf("--bound: unknown key %q (keys K, D, R, E, C)", k)
		}
	}
	if len(seen) == 0 {
		return b, fmt.Errorf("--bound: empty (want for example K=2,D=2,R=1,E=1,C=2)")
	}
	return b, nil
}

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
	std      bool // the std scenario: coverage is a requirement
	sharded  bool
	shard    string // "i/n" when sharded
	coverage bool   // print the table
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
	// Readers are the readers that judged the run (harness/readers.go).
	Readers string `json:"readers"`
	// Resumed is the schedule count a --checkpoint resumed from (absent
	// when the run did not resume).
	Resumed *int64 `json:"resumed,omitempty"`
	// Cache is what explore --cache's state cache did (absent without it).
	Cache *jsonCache `json:"cache,omitempty"`
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
			parts = append(parts, fmt.Sprintf("%s (%s)", k, plural(int(o.sum.Known[k]), "schedule")))
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
// under each compiler model and the verdict, in name order.
func (o *outcome) writeKnownTable(w io.Writer) {
	names := knownNames(o.sum.Known)
	width := len("finding")
	for _, k := range names {
		width = max(width, len(k))
	}
	fmt.Fprintf(w, "known:       %-*s  %8s  %8s  %s\n", width, "finding", "kbuild", "no-alias", "verdict")
	for _, k := range names {
		n, kb := o.sum.Known[k], o.sum.Kbuild.Known[k]
		fmt.Fprintf(w, "             %-*s  %8d  %8d  %s\n", width, k, kb, n, harness.Verdict(false, n, kb))
	}
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
