package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/mutants"
)

func init() {
	register(&command{
		name:  "mutants",
		short: "run the mutant catalogue against std and print the mutation score",
		run:   runMutants,
	})
}

const mutantsUsage = `fgcheck mutants [--variant latest] [--json|--markdown] [--workers N] [--out DIR]
                       [--order near|dfs|iddfs] [--mutant NAME,...] [--quiet] [--kernel DIR]

Runs every mutant of the catalogue (or the --mutant ones) with the exhaustive
std exploration of the baseline variant and prints the table: mutant,
killed, the compiler model of the kill, oracle, time and runs to the kill,
lines of the minimized failing schedule, verdict and origin. Every schedule
is judged under two compiler models: kbuild's (alias-aware, as GCC and Clang
build the kernel with -fno-strict-aliasing) and the no-alias model (what a
compiler that could prove the stores distinct may do). A mutant is "killed
under kbuild" when a run of kbuild's model fails (the exploration stops at
the first), "killed only if the compiler can prove no alias" when only runs
that need the no-alias model fail (the exploration then covers the whole
bound to show that), or "survives". With --out each
minimized failing schedule is written to DIR/<mutant>.txt as soon as it is
found. Progress goes to stderr.

With --kernel DIR (default $FGCHECK_KERNEL) every mutant that has a C form
(the same change as a patch of a copy of the tree's fgraph.c, ctarget.Mutants)
is also explored on the compiled code, std on v6.12's arch glue, and the
table gets a column with that verdict. A C mutant that survives is reported,
not failed: the compiled code of that tree does not show the change (the
compiler kept the order a dropped barrier allowed it to change).

Exit status: 0 when every non-control mutant is killed and no control is;
1 when a mutant survives or a control is flagged; 2 on misuse.`

// runCatalogue is mutants.Run; tests replace it.
var runCatalogue = mutants.Run

func runMutants(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("mutants", stderr, mutantsUsage)
	variant := fs.String("variant", "latest", "baseline `variant` the mutants are applied to: latest, v6.12, v6.11 or seed")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of the table")
	asMarkdown := fs.Bool("markdown", false, "print the report as a README-ready markdown table instead")
	workers := fs.Int("workers", 0, "explorations run at once (0: one per CPU)")
	out := fs.String("out", "", "write each minimized failing schedule to `DIR`/<mutant>.txt")
	order := fs.String("order", "near", "exploration `order`: near, dfs or iddfs (the same schedules, a different time to kill)")
	only := fs.String("mutant", "", "comma-separated mutant `names` (default: the whole catalogue)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	kernel := fs.String("kernel", os.Getenv("FGCHECK_KERNEL"), "also explore the C form of each mutant on the kernel tree `DIR` (default $FGCHECK_KERNEL)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *asJSON && *asMarkdown {
		return misuse(stderr, "mutants", "--json and --markdown exclude each other")
	}
	v, err := fgraph.ParseVariant(*variant)
	if err != nil {
		return misuse(stderr, "mutants", "--variant: %v", err)
	}
	ord, err := mutants.ParseOrder(*order)
	if err != nil {
		return misuse(stderr, "mutants", "--order: %v", err)
	}
	if *workers < 0 {
		return misuse(stderr, "mutants", "--workers %d: want 0 or more", *workers)
	}
	if given(fs)["out"] {
		if err := checkOutDir("--out", *out); err != nil {
			return misuse(stderr, "mutants", "%v", err)
		}
		cleanStaleTemps(*out, "")
	}
	opt := mutants.Options{Variant: v, Workers: *workers, Order: ord}
	if *kernel != "" {
		dir := *kernel
		opt.KernelVariant = fgraph.V612
		opt.Kernel = func(name string) (harness.Target, error) {
			return openKernel(dir, name, harness.Standard(fgraph.V612))
		}
	}
	if *only != "" {
		for _, n := range strings.Split(*only, ",") {
			n = strings.TrimSpace(n)
			if _, err := fgraph.LookupMutant(n); err != nil {
				return misuse(stderr, "mutants", "--mutant: %v", err)
			}
			opt.Names = append(opt.Names, n)
		}
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return misuse(stderr, "mutants", "--out: %v", err)
		}
	}
	var writeErr error
	opt.OnResult = func(r mutants.Result) {
		// Write the failing schedule before anything else can go wrong.
		if *out != "" && r.Minimized != nil {
			path := filepath.Join(*out, r.Name+".txt")
			if err := writeFileAtomic(path, r.Minimized.Format(), 0o644); err != nil && writeErr == nil {
				writeErr = err
			}
		}
		if *quiet {
			return
		}
		if r.C != nil {
			fmt.Fprintf(stderr, "[mutants] %s on the tree: %s\n", r.Name, r.C.Text())
			return
		}
		switch {
		case r.Killed:
			fmt.Fprintf(stderr, "[mutants] %s: %s, by %s after %d runs (%.1f ms), minimized to %d schedule lines\n",
				r.Name, r.Model(), r.Oracle, r.Runs, r.Seconds*1000, r.ScheduleLines)
		default:
			fmt.Fprintf(stderr, "[mutants] %s: survived %d schedules (%.1f s)\n", r.Name, r.Runs, r.Seconds)
		}
	}
	rep, err := runCatalogue(opt)
	if err != nil {
		return misuse(stderr, "mutants", "%v", err)
	}
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return misuse(stderr, "mutants", "%v", err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else if *asMarkdown {
		fmt.Fprint(stdout, rep.Markdown())
	} else {
		fmt.Fprint(stdout, rep.Table())
	}
	if writeErr != nil {
		return misuse(stderr, "mutants", "--out: %v", writeErr)
	}
	if !rep.OK() {
		return exitViolation
	}
	return exitClean
}
