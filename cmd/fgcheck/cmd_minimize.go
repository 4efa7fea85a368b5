package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{
		name:  "minimize",
		short: "shrink a failing schedule file to a 1-minimal one with the same oracle",
		run:   runMinimize,
	})
}

const minimizeUsage = `fgcheck minimize FILE [-o OUT] [--strict] [--known NAME] [--time DURATION] [--json]

Replays FILE, takes the oracle of its first violation as the target, and
shrinks the file (harness.Minimize): fewer events, shallower nesting, fewer
reordered regions, earlier occurrences, then a smaller scenario, keeping only
candidates that still fail with the same oracle, until no single removal or
simplification does. The result gets a story in '#' comments (sizes before
and after, the oracle, the violation) and an "expect violation ORACLE" line.
It is written atomically to OUT, or to stdout without -o.

--strict minimizes a known kernel finding as a violation (allowances off).
--known NAME minimizes a run in which the named known finding shows, alone,
in a non-strict replay.

--time DURATION stops the search after that long and writes the smallest
file found so far (its story says it is not 1-minimal).

--json prints one object (the sizes before and after, the search, and the
minimized file's text unless -o wrote it) instead of the file.

Exit status: 0 when the file was minimized; 2 on misuse, including a FILE
that is malformed or does not fail.`

func runMinimize(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("minimize", stderr, minimizeUsage)
	out := fs.String("o", "", "write the minimized file to `OUT` (atomically) instead of stdout")
	strict := fs.Bool("strict", false, "replay with every known-finding allowance off")
	known := fs.String("known", "", "minimize the known finding `NAME` (non-strict) instead of a violation")
	asJSON := fs.Bool("json", false, "print a JSON report instead of the minimized file")
	var kf kernelFlags
	kf.register(fs)
	budget := fs.Duration("time", 0, "time budget: stop the search after `DURATION` and write the smallest file so far (not 1-minimal; 0: none)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return misuse(stderr, "minimize", "want exactly one FILE, got %d arguments", len(pos))
	}
	if *known != "" {
		found := false
		for _, k := range harness.KnownFindings {
			found = found || k.Name == *known
		}
		if !found {
			return misuse(stderr, "minimize", "--known: unknown finding %q", *known)
		}
		if *strict {
			return misuse(stderr, "minimize", "--known and --strict exclude each other")
		}
	}
	if *budget < 0 {
		return misuse(stderr, "minimize", "--time %v: want 0 (none) or more", *budget)
	}
	if given(fs)["o"] {
		if err := checkOutFile("-o", *out); err != nil {
			return misuse(stderr, "minimize", "%v", err)
		}
		cleanStaleTemps(filepath.Dir(*out), filepath.Base(*out))
	}
	path := pos[0]
	data, err := harness.ReadInput(path)
	if err != nil {
		return misuse(stderr, "minimize", "%v", err)
	}
	f, err := harness.ParseFile(path, data)
	if err != nil {
		return misuse(stderr, "minimize", "%v", err)
	}
	if err := kf.attach(f.Scenario); err != nil {
		return misuse(stderr, "minimize", "%v", err)
	}
	mo := harness.MinimizeOptions{Strict: *strict, Known: *known}
	overtime := false
	if *budget > 0 {
		deadline := time.Now().Add(*budget)
		mo.Stop = func() bool {
			overtime = overtime || !time.Now().Before(deadline)
			return overtime
		}
	}
	small, st, err := harness.Minimize(f, mo)
	if err != nil {
		// harness.ErrNoViolation: the file does not fail (or not alone).
		return misuse(stderr, "minimize", "%s: %v", path, err)
	}
	mode := ""
	switch {
	case *strict:
		mode = " (strict)"
	case *known != "":
		mode = " (known finding " + *known + ")"
	}
	small.Comments = []string{
		fmt.Sprintf("minimized by fgcheck minimize from %s%s", path, mode),
		fmt.Sprintf("breaks: %s: %s", st.Oracle, oneLine(st.Msg)),
		"before: " + st.Before.String(),
		"after:  " + st.After.String(),
		fmt.Sprintf("search: %d candidates replayed, %d kept; 1-minimal: %s", st.Replays, st.Accepted, minimalWord(st.Minimal)),
	}
	if overtime && !st.Minimal {
		small.Comments[len(small.Comments)-1] += fmt.Sprintf(" (--time %v reached)", *budget)
	}
	if f.Expect != nil && !f.Expect.Pass && f.Expect.Oracle != st.Oracle {
		fmt.Fprintf(stderr, "fgcheck minimize: note: %s expected a %s violation; its replay fails with %s, which is kept\n", path, f.Expect.Oracle, st.Oracle)
	}
	text := small.Format()
	if *out != "" {
		if err := writeFileAtomic(*out, text, 0o644); err != nil {
			return misuse(stderr, "minimize", "-o: %v", err)
		}
	}
	switch {
	case *asJSON:
		js := jsonMinimize{File: path, Out: *out, Oracle: st.Oracle, Message: oneLine(st.Msg), Known: *known, Strict: *strict,
			Before: st.Before, After: st.After, Replays: st.Replays, Accepted: st.Accepted, Minimal: st.Minimal}
		if *out == "" {
			js.Text = string(text)
		}
		writeJSON(stdout, js)
	case *out == "":
		stdout.Write(text)
	}
	fmt.Fprintf(stderr, "[minimize] %s: %s; %d -> %d schedule lines, %d -> %d ops (%d replays)\n",
		path, st.Oracle, st.Before.Lines(), st.After.Lines(), st.Before.Ops, st.After.Ops, st.Replays)
	return exitClean
}

// minimalWord renders MinimizeStats.Minimal.
func minimalWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// jsonMinimize is minimize's --json output.
type jsonMinimize struct {
	File     string           `json:"file"`
	Out      string           `json:"out"` // "" when the text is in "text"
	Oracle   string           `json:"oracle"`
	Message  string           `json:"message"`
	Known    string           `json:"known"`
	Strict   bool             `json:"strict"`
	Before   harness.FileSize `json:"before"`
	After    harness.FileSize `json:"after"`
	Replays  int              `json:"replays"`
	Accepted int              `json:"accepted"`
	Minimal  bool             `json:"minimal"`
	Text     string           `json:"text,omitempty"`
}
