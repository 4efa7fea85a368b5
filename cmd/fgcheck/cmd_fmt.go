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

const fmtUsage = `fgcheck fmt [-w] [-l] FILE...

Prints each schedule file in canonical form (harness File.Format). With -w,
rewrites the files that are not canonical, atomically; with -l, lists them.
Exit 2 if a file is missing or malformed (FILE:LINE:COL: message); the
other files are still processed.`

func runFmt(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fmt", stderr, fmtUsage)
	write := fs.Bool("w", false, "rewrite the files in place (atomically) instead of printing them")
	list := fs.Bool("l", false, "list the files whose formatting differs from the canonical form")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fs.Usage()
		return misuse(stderr, "fmt", "no FILE given")
	}
	code = exitClean
	for _, path := range pos {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "fgcheck fmt: %v\n", err)
			code = exitMisuse
			continue
		}
		f, err := harness.ParseFile(path, data)
		if err != nil {
			fmt.Fprintln(stderr, err)
			code = exitMisuse
			continue
		}
		out := f.Format()
		same := bytes.Equal(out, data)
		if *list && !same {
			fmt.Fprintln(stdout, path)
		}
		switch {
		case *write:
			if same {
				continue
			}
			perm := os.FileMode(0o644)
			if st, err := os.Stat(path); err == nil {
				perm = st.Mode().Perm()
			}
			if err := writeFileAtomic(path, out, perm); err != nil {
				fmt.Fprintf(stderr, "fgcheck fmt: %v\n", err)
				code = exitMisuse
			}
		case !*list:
			stdout.Write(out)
		}
	}
	return code
}
