package main

// Flag parsing shared by the subcommands (flags allowed after the
// positional arguments), the scenario and bound flags, and the exit codes
// of misuse and of a failed engine.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

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

// parseFlags is parseArgs for a command that takes no positional
// argument: one is misuse, reported on stderr.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code, false
	}
	if len(pos) > 0 {
		return misuse(stderr, strings.TrimPrefix(fs.Name(), "fgcheck "), "unexpected argument %q", pos[0]), false
	}
	return 0, true
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
