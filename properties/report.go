package properties

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/fgcheck/fgcheck/harness"
)

// Failure is a failing run as a schedule file: the canonical record of a
// counterexample, whichever engine found it.
type Failure struct {
	Engine   string // "rapid", "gopter", ...
	Test     string // the Go test name, for the path and the comments
	Scenario *harness.Scenario
	Result   *harness.Result
	// Notes are extra comment lines (the plan, the seed, ...).
	Notes []string
}

// File returns the schedule file of the failure: the scenario, the
// non-default choices of the run and the violated oracle as its expected
// verdict.
func (f *Failure) File() *harness.File {
	v := f.Result.Violations[0]
	comments := []string{
		fmt.Sprintf("found by %s in %s", f.Engine, f.Test),
		fmt.Sprintf("violation: %s", oneLine(v.String())),
	}
	for _, n := range f.Notes {
		comments = append(comments, oneLine(n))
	}
	return &harness.File{
		Comments: comments,
		Scenario: f.Scenario,
		Schedule: f.Result.Schedule,
		Expect:   &harness.Expect{Oracle: v.Oracle},
	}
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

// SafeName turns a test name into a file name, as rapid does for its fail
// files.
func SafeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// FailPath is where a test's failure is written:
// testdata/fgcheck/<Test>/<Test>-<timestamp>-<pid>.txt (rapid's layout for
// its fail files, with the schedule text format).
func FailPath(test string) string {
	n := SafeName(test)
	return filepath.Join("testdata", "fgcheck", n, fmt.Sprintf("%s-%s-%d.txt", n, time.Now().Format("20060102150405"), os.Getpid()))
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a partial file.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".fgcheck-tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Write writes the failure's file to path atomically and returns the report
// text: the violation, the canonical file and the replay command.
func (f *Failure) Write(path string) (string, error) {
	text := f.File().Format()
	err := WriteFileAtomic(path, text)
	var b strings.Builder
	fmt.Fprintf(&b, "[fgcheck] %s: %s\n", f.Engine, f.Result.Violations[0])
	b.WriteString("===== SCHEDULE =====\n")
	b.Write(text)
	if err != nil {
		fmt.Fprintf(&b, "[fgcheck] could not write the schedule file: %v\n", err)
	} else {
		abs := path
		if wd, werr := os.Getwd(); werr == nil {
			abs = filepath.Join(filepath.Base(wd), path)
		}
		fmt.Fprintf(&b, "[fgcheck] written to %s\nTo replay: fgcheck replay %s\n", abs, abs)
	}
	return b.String(), err
}
