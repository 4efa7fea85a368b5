package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/report"
)

func init() {
	register(&command{name: "replay", short: "replay a schedule file with a step-by-step trace", run: runReplay})
}

const replayUsage = `fgcheck replay FILE [--trace=false] [--strict] [--json]
                    [--html OUT.html [--html-max-bytes N]]

Replays the file's schedule, prints the step-by-step trace (with pictures of
the shadow stacks before and after every interrupt and remote action and at
a violation) and the verdict. With an "expect" line: exit 0 when the verdict
matches it, 1 when not. Without: exit 1 on a violation, 0 when clean. Exit
2: misuse (a missing or malformed file: FILE:LINE:COL: message; a page that
cannot be written or cannot fit --html-max-bytes). The output depends only
on the file: two replays print the same bytes.

--html OUT.html also writes the replay as one self-contained HTML page
(timeline of the nested contexts, every commit and barrier, the pictures,
the violation highlighted), atomically; stdout is unchanged. A page over
--html-max-bytes (default 4 MiB) keeps the head of the trace and the part
before the violation and says what it left out.`

func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", stderr, replayUsage)
	trace := fs.Bool("trace", true, "print the step-by-step trace")
	strict := fs.Bool("strict", false, "turn every known-finding allowance off")
	asJSON := fs.Bool("json", false, "print the verdict (and the trace) as one JSON object")
	htmlOut := fs.String("html", "", "also write the replay as a self-contained HTML page to this file")
	htmlMax := fs.Int("html-max-bytes", report.DefaultMaxBytes, "size cap of the --html page in bytes (the trace is cut to fit)")
	var kf kernelFlags
	kf.register(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fs.Usage()
		return misuse(stderr, "replay", "want exactly one FILE, got %d arguments", len(pos))
	}
	path := pos[0]
	if *htmlMax <= 0 {
		return misuse(stderr, "replay", "--html-max-bytes must be positive, got %d", *htmlMax)
	}
	if given(fs)["html"] {
		if err := checkOutFile("--html", *htmlOut); err != nil {
			return misuse(stderr, "replay", "%v", err)
		}
		cleanStaleTemps(filepath.Dir(*htmlOut), filepath.Base(*htmlOut))
	}
	data, err := harness.ReadInput(path)
	if err != nil {
		return misuse(stderr, "replay", "%v", err)
	}
	f, err := harness.ParseFile(path, data)
	if err != nil {
		fmt.Fprintln(stderr, err) // FILE:LINE:COL: message
		return exitMisuse
	}
	if err := kf.attach(f.Scenario); err != nil {
		return misuse(stderr, "replay", "%v", err)
	}
	res, err := harness.Replay(f, harness.RunOptions{Trace: *trace || *htmlOut != "", Strict: *strict})
	if err != nil {
		return misuse(stderr, "replay", "%s: %v", path, err)
	}
	v := judge(f, res)
	if *htmlOut != "" {
		n, elided, err := writeReplayHTML(*htmlOut, *htmlMax, path, f, res, v, *strict)
		if err != nil {
			return misuse(stderr, "replay", "--html: %v", err)
		}
		note := ""
		if elided > 0 {
			note = fmt.Sprintf(", %d of %d events left out to fit --html-max-bytes %d", elided, len(res.Events), *htmlMax)
		}
		fmt.Fprintf(stderr, "replay: wrote %s (%d bytes%s)\n", *htmlOut, n, note)
	}
	if *asJSON {
		writeJSON(stdout, v.json(path, res, *trace))
	} else {
		v.writeText(stdout, res, *trace)
	}
	return v.code
}

// verdict is a replay's outcome against the file's expectation.
type verdict struct {
	expect   string // "pass", "violation ORACLE", or "" without an expect line
	matched  bool
	code     int
	unfired  int // events of the file that did not fire in a clean run
	schedLen int
}

func judge(f *harness.File, res *harness.Result) verdict {
	v := verdict{schedLen: len(f.Schedule.Events)}
	if !res.Failed() {
		v.unfired = len(f.Schedule.Events) - len(res.Schedule.Events)
	}
	switch {
	case f.Expect == nil:
		v.matched = !res.Failed()
	case f.Expect.Pass:
		v.expect = "pass"
		v.matched = !res.Failed()
	default:
		v.expect = "violation " + f.Expect.Oracle
		v.matched = res.Failed() && res.Violations[0].Oracle == f.Expect.Oracle
	}
	v.code = exitClean
	if !v.matched {
		v.code = exitViolation
	}
	return v
}

func (v verdict) writeText(w io.Writer, res *harness.Result, trace bool) {
	if trace {
		fmt.Fprintln(w, "===== TRACE =====")
		for _, l := range res.Trace {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w, "===== VERDICT =====")
	if !res.Failed() {
		fmt.Fprintln(w, "pass")
	}
	for _, x := range res.Violations {
		fmt.Fprintf(w, "violation %s\n", x)
	}
	for _, x := range res.Known {
		fmt.Fprintf(w, "known finding %s: %s\n", x.Known, x)
	}
	if v.unfired > 0 {
		fmt.Fprintf(w, "note: %d of the file's %d events never fired (their positions were not reached)\n", v.unfired, v.schedLen)
	}
	switch {
	case v.expect == "":
	case v.matched:
		fmt.Fprintf(w, "expect %s: as expected\n", v.expect)
	default:
		got := "pass"
		if res.Failed() {
			got = "violation " + res.Violations[0].Oracle
		}
		fmt.Fprintf(w, "expect %s: MISMATCH, got %s\n", v.expect, got)
		if h := mismatchHint(v, res); h != "" {
			fmt.Fprintf(w, "hint: %s\n", h)
		}
	}
}

// mismatchHint explains the usual mismatch of a kernel-finding file
// replayed without --strict: the violation it expects is excused as the
// known finding it is.
func mismatchHint(v verdict, res *harness.Result) string {
	if res.Failed() || !strings.HasPrefix(v.expect, "violation ") {
		return ""
	}
	oracle := strings.TrimPrefix(v.expect, "violation ")
	for _, k := range res.Known {
		if k.Oracle == oracle {
			return fmt.Sprintf("the %s violation is the known kernel finding %s, excused without --strict: replay with --strict to see it as a violation", oracle, k.Known)
		}
	}
	return ""
}

// jsonReplay is replay's --json output.
type jsonReplay struct {
	File       string        `json:"file"`
	Verdict    string        `json:"verdict"` // "pass" or "violation"
	Violations []jsonFinding `json:"violations"`
	Known      []jsonFinding `json:"known"`
	Expect     *string       `json:"expect"`  // "pass", "violation ORACLE", or null
	Matched    *bool         `json:"matched"` // null without an expect line
	Unfired    int           `json:"unfired_events"`
	Trace      []string      `json:"trace,omitempty"`
}

type jsonFinding struct {
	Oracle         string `json:"oracle"`
	Message        string `json:"message"`
	At             string `json:"at"`
	Known          string `json:"known,omitempty"`
	AliasDependent bool   `json:"alias_dependent"`
	Reader         string `json:"reader,omitempty"`
}

func findings(vs []harness.Violation) []jsonFinding {
	out := make([]jsonFinding, 0, len(vs))
	for _, x := range vs {
		out = append(out, jsonFinding{Oracle: x.Oracle, Message: x.Msg, At: x.At, Known: x.Known, AliasDependent: x.AliasDependent, Reader: x.Reader})
	}
	return out
}

func (v verdict) json(path string, res *harness.Result, trace bool) jsonReplay {
	js := jsonReplay{File: path, Verdict: "pass", Violations: findings(res.Violations), Known: findings(res.Known), Unfired: v.unfired}
	if res.Failed() {
		js.Verdict = "violation"
	}
	if v.expect != "" {
		e, m := v.expect, v.matched
		js.Expect, js.Matched = &e, &m
	}
	if trace {
		js.Trace = res.Trace
		if js.Trace == nil {
			js.Trace = []string{}
		}
	}
	return js
}

// writeReplayHTML renders the replay as an HTML page and writes it to out
// atomically. It returns the page's size and the events it left out.
func writeReplayHTML(out string, maxBytes int, path string, f *harness.File, res *harness.Result, v verdict, strict bool) (size, elided int, err error) {
	sc := f.Scenario
	cfg := sc.Config()
	facts := []string{"variant " + sc.Variant.String()}
	if sc.Mutant != 0 {
		facts = append(facts, "mutant "+sc.Mutant.String())
	}
	if fx := sc.Fixes.Names(); len(fx) > 0 {
		facts = append(facts, "fixes "+strings.Join(fx, " "))
	}
	facts = append(facts, fmt.Sprintf("F=%d, %d-word stacks, %s", cfg.FrameWords, cfg.StackWords, plural(len(sc.Tasks), "task")))
	if strict || f.Strict {
		facts = append(facts, "strict")
	}
	var vb bytes.Buffer
	v.writeText(&vb, res, false)
	lines := strings.Split(strings.TrimSuffix(vb.String(), "\n"), "\n")
	if len(lines) > 0 && lines[0] == "===== VERDICT =====" {
		lines = lines[1:]
	}
	page := &report.Page{
		Title: path, Scenario: sc.Name, Facts: facts, Comments: f.Comments, File: string(f.Format()),
		Verdict: lines, Failed: res.Failed(), Mismatch: v.expect != "" && !v.matched, Events: res.Events,
	}
	html, elided, err := report.Render(page, maxBytes)
	if err != nil {
		return 0, 0, err
	}
	return len(html), elided, writeFileAtomic(out, html, 0o644)
}
