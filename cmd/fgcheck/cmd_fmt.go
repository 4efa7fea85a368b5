package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/fgcheck/fgcheck/harness"
)

func init() {
	register(&command{name: "fmt", short: "print schedule files in canonical form (-w: rewrite them)", run: runFmt})
}

const fmtUsage = `fgcheck fmt [-w] [-l] [--json] FILE...

Prints each schedule file in canonical form (harness File.Format). With -w,
rewrites the files that are not canonical, atomically; with -l, lists them;
with --json, prints one object per file: {"file", "canonical", "rewritten",
"error"} (an array), and neither the files nor the list.
Exit 2 if a file is missing or malformed (FILE:LINE:COL: message); the
other files are still processed.`

func runFmt(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fmt", stderr, fmtUsage)
	write := fs.Bool("w", false, "rewrite the files in place (atomically) instead of printing them")
	list := fs.Bool("l", false, "list the files whose formatting differs from the canonical form")
	asJSON := fs.Bool("json", false, "report on each file as JSON (with -w: whether it was rewritten)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fs.Usage()
		return misuse(stderr, "fmt", "no FILE given")
	}
	code = exitClean
	report := []jsonFmt{}
	for _, path := range pos {
		r := jsonFmt{File: path}
		fail := func(msg string) {
			fmt.Fprintln(stderr, msg)
			r.Error, code = msg, exitMisuse
			report = append(report, r)
		}
		data, err := harness.ReadInput(path)
		if err != nil {
			fail(fmt.Sprintf("fgcheck fmt: %v", err))
			continue
		}
		f, err := harness.ParseFile(path, data)
		if err != nil {
			fail(err.Error()) // FILE:LINE:COL: message
			continue
		}
		out := f.Format()
		same := bytes.Equal(out, data)
		r.Canonical = same
		if *list && !same && !*asJSON {
			fmt.Fprintln(stdout, path)
		}
		switch {
		case *write && !same:
			perm := os.FileMode(0o644)
			if st, err := os.Stat(path); err == nil {
				perm = st.Mode().Perm()
			}
			if err := writeFileAtomic(path, out, perm); err != nil {
				fail(fmt.Sprintf("fgcheck fmt: %v", err))
				continue
			}
			r.Rewritten = true
		case !*write && !*list && !*asJSON:
			stdout.Write(out)
		}
		report = append(report, r)
	}
	if *asJSON {
		writeJSON(stdout, report)
	}
	return code
}

// jsonFmt is one file of fmt's --json report.
type jsonFmt struct {
	File      string `json:"file"`
	Canonical bool   `json:"canonical"`
	Rewritten bool   `json:"rewritten"`
	Error     string `json:"error,omitempty"`
}
