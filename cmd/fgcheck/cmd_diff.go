package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fgcheck/fgcheck/differential"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "diff", short: "hold a port variant to a kernel tree's compiled fgraph.c, schedule by schedule", run: runDiff})
}

const diffUsage = `fgcheck diff --kernel DIR [--variant v6.12] [--scenario std|FILE] [--corpus DIR]
             [--max-runs N] [--json]

Explores each scenario on the tree's compiled kernel/trace/fgraph.c and
replays every schedule it ran on the port variant, in program order, and
compares the two runs at every quiescent point (the shadow-stack words,
curr_ret_stack, depth and overrun of every task, the callback log, and the
answers of ftrace_graph_ret_addr() and ftrace_graph_get_ret_stack()) and,
region by region, the stores each made (the same (address, value) pairs; a
different order within a region is the compiler's, counted apart). The
scenarios: std, then every file of --corpus (default corpus/) at its own
bound, on the variant, with the file's port mutant and fixes switched off
(the C has neither: its programs, users and remote actions are what the
corpus adds to std). The first divergence of a scenario is printed with the
C source line of each store and the port's site.

Exit 0: no divergence; 1: a divergence; 2: misuse. See docs/kernel-target.md.`

type jsonDiff struct {
	Scenario     string           `json:"scenario"`
	Schedules    int64            `json:"schedules"`
	Complete     bool             `json:"complete"`
	Divergent    int64            `json:"divergent"`
	First        string           `json:"first_divergence"`
	Unreplayable int64            `json:"unreplayable"`
	Reordered    int64            `json:"reordered_regions"`
	CViolations  int64            `json:"c_violations"`
	CKnown       map[string]int64 `json:"c_known"`
	Seconds      float64          `json:"seconds"`
	Skipped      string           `json:"skipped,omitempty"`
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", stderr, diffUsage)
	kernel := fs.String("kernel", os.Getenv("FGCHECK_KERNEL"), "kernel source tree `DIR` (default $FGCHECK_KERNEL)")
	variant := fs.String("variant", "v6.12", "the port `variant` held to the tree")
	scenario := fs.String("scenario", "", "only this `scenario`: std or a scenario FILE (default: std and the corpus)")
	corpusDir := fs.String("corpus", "corpus", "`DIR` of corpus files to compare after std (\"\" for none)")
	maxRuns := fs.Int64("max-runs", 0, "compare at most `N` schedules per scenario (0: all)")
	asJSON := fs.Bool("json", false, "print one JSON array, a row per scenario")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return misuse(stderr, "diff", "unexpected arguments %q", pos)
	}
	if *kernel == "" {
		return misuse(stderr, "diff", "--kernel DIR is required (or FGCHECK_KERNEL)")
	}
	v, err := fgraph.ParseVariant(*variant)
	if err != nil {
		return misuse(stderr, "diff", "%v", err)
	}
	type item struct {
		sc   *harness.Scenario
		skip string
	}
	var items []item
	addFile := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := harness.ParseFile(path, data)
		if err != nil {
			return err
		}
		items = append(items, item{sc: differential.Baseline(f.Scenario, filepath.Base(path), v)})
		return nil
	}
	switch *scenario {
	case "", "std":
		items = append(items, item{sc: harness.Standard(v)})
		if *scenario == "" && *corpusDir != "" {
			files, _ := filepath.Glob(filepath.Join(*corpusDir, "*.txt"))
			for _, p := range files {
				if err := addFile(p); err != nil {
					return misuse(stderr, "diff", "%v", err)
				}
			}
		}
	default:
		if err := addFile(*scenario); err != nil {
			return misuse(stderr, "diff", "%v", err)
		}
	}
	var rows []jsonDiff
	code = exitClean
	targets := map[int]harness.Target{}
	for _, it := range items {
		row := jsonDiff{Scenario: it.sc.Name, Skipped: it.skip}
		if it.skip == "" {
			words := it.sc.Config().StackWords
			k := targets[words]
			if k == nil {
				if k, err = openKernel(*kernel, "", it.sc); err != nil {
					return misuse(stderr, "diff", "%v", err)
				}
				targets[words] = k
			}
			start := time.Now()
			rep, err := differential.Run(it.sc, k, differential.Options{MaxRuns: *maxRuns, Keep: 1})
			if err != nil {
				return misuse(stderr, "diff", "%s: %v", it.sc.Name, err)
			}
			row.Seconds = time.Since(start).Seconds()
			row.Schedules, row.Complete, row.Divergent = rep.Runs, rep.Complete, rep.Divergent
			row.Unreplayable, row.Reordered, row.CViolations, row.CKnown = rep.Unreplayable, rep.Reordered, rep.CViolations, rep.CKnown
			if len(rep.Divergences) > 0 {
				d := rep.Divergences[0]
				row.First = fmt.Sprintf("schedule %d %s: %s", d.Run, scheduleText(it.sc, d.Schedule), d.What)
				code = exitViolation
			}
			if !*asJSON {
				state := "complete"
				if !rep.Complete {
					state = "incomplete"
				}
				fmt.Fprintf(stdout, "%s: %d schedules (%s), %d divergent, %d not replayable on the port, %d regions reordered by the compiler; C: %d violations, known %s (%.1f s)\n",
					it.sc.Name, rep.Runs, state, rep.Divergent, rep.Unreplayable, rep.Reordered, rep.CViolations, knownText(rep.CKnown), row.Seconds)
				if rep.Unreplayable > 0 {
					fmt.Fprintf(stdout, "  first position the port does not reach: %s\n", rep.FirstUnplay)
				}
				if row.First != "" {
					fmt.Fprintf(stdout, "  first divergence: %s\n", row.First)
				}
			}
		} else if !*asJSON {
			fmt.Fprintf(stdout, "%s: skipped: %s\n", it.sc.Name, it.skip)
		}
		rows = append(rows, row)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintln(stdout, string(b))
	}
	return code
}

func knownText(k map[string]int64) string {
	if len(k) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(k)) {
		parts = append(parts, fmt.Sprintf("%s (%d)", n, k[n]))
	}
	return strings.Join(parts, ", ")
}

// scheduleText is a schedule on one line, in the file format's words.
func scheduleText(sc *harness.Scenario, s harness.Schedule) string {
	t := strings.TrimSpace(harness.FormatSchedule(sc, s))
	if t == "" {
		return "(program order)"
	}
	return "[" + strings.ReplaceAll(t, "\n", "; ") + "]"
}
