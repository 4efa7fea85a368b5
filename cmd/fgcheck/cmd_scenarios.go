package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "scenarios", short: "list the built-in scenarios and the schedule files of directories", run: runScenarios})
}

const scenariosUsage = `fgcheck scenarios [--variant latest|v6.11|seed] [--json] [DIR|FILE ...]

Lists the built-in scenarios that --scenario names (std, peer-spin) with
their programs, users, remote actions and bound; then, for each DIR (its
*.txt files) or FILE given, the schedule files: scenario name, variant,
mutant, expected verdict, schedule size and the first line of the story.
A file that does not parse is reported as FILE:LINE:COL: message and makes
the exit code 2; the others are still listed.`

// builtinScenario is one scenario --scenario can name.
type builtinScenario struct {
	name, about string
	build       func(fgraph.Variant) *harness.Scenario
}

var builtinScenarios = []builtinScenario{
	{"std", "the benchmark scenario and bound (docs/std.md): three users (a filter, data with a reject, a recursing entry), two tasks with a sleep and a tail call, IRQ with an unwind, NMI, unregister and tracer-switch remotes", harness.Standard},
	{"peer-spin", "the problem a hand-written Promela model checks with SPIN: one task f1->f2->f3, a data user, one interrupting traced call, stores only", harness.PeerSpin},
}

// jsonScenario is one row of scenarios' --json output.
type jsonScenario struct {
	Name     string   `json:"name"`
	File     string   `json:"file,omitempty"` // "" for a built-in
	Variant  string   `json:"variant"`
	Mutant   string   `json:"mutant"`
	Fixes    []string `json:"fixes"`
	Tasks    []string `json:"tasks"`
	IRQ      string   `json:"irq"`
	NMI      string   `json:"nmi"`
	Users    int      `json:"users"`
	Remotes  []string `json:"remotes"`
	Bound    string   `json:"bound"`
	Expect   string   `json:"expect,omitempty"`
	Events   int      `json:"events"`
	About    string   `json:"about"`
	Problems string   `json:"error,omitempty"`
}

func runScenarios(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("scenarios", stderr, scenariosUsage)
	variant := fs.String("variant", "latest", "kernel `variant` of the built-in scenarios")
	asJSON := fs.Bool("json", false, "print one JSON array")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	v, err := fgraph.ParseVariant(*variant)
	if err != nil {
		return misuse(stderr, "scenarios", "%v", err)
	}
	var rows []jsonScenario
	for _, b := range builtinScenarios {
		rows = append(rows, describe(b.build(v), "", b.about, nil, 0))
	}
	code = exitClean
	for _, p := range pos {
		files, err := scheduleFiles(p)
		if err != nil {
			code = misuse(stderr, "scenarios", "%v", err)
			continue
		}
		for _, path := range files {
			data, err := harness.ReadInput(path)
			if err == nil {
				var f *harness.File
				if f, err = harness.ParseFile(path, data); err == nil {
					about := ""
					if len(f.Comments) > 0 {
						about = strings.TrimSpace(f.Comments[0])
					}
					rows = append(rows, describe(f.Scenario, path, about, f.Expect, len(f.Schedule.Events)+len(f.Schedule.Orders)))
					continue
				}
			}
			fmt.Fprintln(stderr, err)
			code = exitMisuse
		}
	}
	if *asJSON {
		writeJSON(stdout, rows)
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVARIANT\tMUTANT\tBOUND\tEXPECT\tSCHEDULE\tABOUT")
	for _, r := range rows {
		name, mut, exp, sched := r.Name, r.Mutant, r.Expect, fmt.Sprint(r.Events)
		if r.File != "" {
			name = r.File
		} else {
			exp, sched = "-", "-"
		}
		if mut == "" {
			mut = "-"
		}
		if exp == "" {
			exp = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, r.Variant, mut, r.Bound, exp, sched, r.About)
	}
	tw.Flush()
	if len(pos) == 0 {
		fmt.Fprintln(stdout)
		for _, r := range rows {
			fmt.Fprintf(stdout, "%s: tasks %s; irq (%s); nmi (%s); %s; remotes: %s\n", r.Name,
				strings.Join(r.Tasks, " | "), r.IRQ, r.NMI, plural(r.Users, "user"), orNone(r.Remotes))
		}
	}
	return code
}

// scheduleFiles is path itself, or the *.txt files of a directory, sorted.
func scheduleFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.txt"))
	sort.Strings(files)
	return files, err
}

func describe(sc *harness.Scenario, file, about string, exp *harness.Expect, events int) jsonScenario {
	r := jsonScenario{Name: sc.Name, File: file, Variant: sc.Variant.String(), Mutant: mutantName(sc),
		Fixes: sc.Fixes.Names(), Users: len(sc.Users), Bound: sc.Bound.String(), Events: events, About: about,
		IRQ: harness.OpsText(sc.IRQ), NMI: harness.OpsText(sc.NMI), Tasks: []string{}, Remotes: []string{}}
	if r.Fixes == nil {
		r.Fixes = []string{}
	}
	for _, t := range sc.Tasks {
		r.Tasks = append(r.Tasks, harness.OpsText(t))
	}
	for _, rm := range sc.Remotes {
		r.Remotes = append(r.Remotes, rm.Label(sc))
	}
	switch {
	case exp == nil:
	case exp.Pass:
		r.Expect = "pass"
	default:
		r.Expect = "violation " + exp.Oracle
	}
	return r
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
