package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tourCommand is one "$ COMMAND" line of the README's tour and the output
// printed under it.
type tourCommand struct {
	line int
	cmd  string
	want []string
}

// readmeTour returns the commands of the README's "A five-minute tour"
// section, in order: every code block line that starts with "$ " and the
// block's lines after it, up to the next "$ " line or the block's end.
func readmeTour(t *testing.T, readme []byte) []tourCommand {
	t.Helper()
	lines := strings.Split(string(readme), "\n")
	in, block := false, false
	var out []tourCommand
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## A five-minute tour"
		case !in:
		case strings.HasPrefix(l, "```"):
			block = !block
		case block && strings.HasPrefix(l, "$ "):
			out = append(out, tourCommand{line: i + 1, cmd: strings.TrimPrefix(l, "$ ")})
		case block && len(out) > 0:
			out[len(out)-1].want = append(out[len(out)-1].want, l)
		}
	}
	if len(out) < 4 {
		t.Fatalf("README tour: %d commands found, want the explore, mutant, minimize and replay steps", len(out))
	}
	return out
}

// volatile are the lines whose figures vary run to run: only their words
// are compared.
var volatile = regexp.MustCompile(`^(time|peak memory):`)

var figures = regexp.MustCompile(`[0-9][0-9.]*`)

// tourLineMatch compares one output line with the README's: "..." inside a
// line stands for any text; time and memory figures are not compared.
func tourLineMatch(want, got string) bool {
	if volatile.MatchString(want) {
		want, got = figures.ReplaceAllString(want, "N"), figures.ReplaceAllString(got, "N")
	}
	parts := strings.Split(want, "...")
	if len(parts) == 1 {
		return want == got
	}
	if !strings.HasPrefix(got, parts[0]) {
		return false
	}
	got = got[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		k := strings.Index(got, p)
		if last {
			return strings.HasSuffix(got, p)
		}
		if k < 0 {
			return false
		}
		got = got[k+len(p):]
	}
	return true
}

// tourMatch matches output with the README's lines: a line that is only
// "..." (indented or not) stands for any number of lines.
func tourMatch(want, got []string) (bool, string) {
	j := 0
	for i := 0; i < len(want); i++ {
		if strings.TrimSpace(want[i]) == "..." {
			if i == len(want)-1 {
				return true, ""
			}
			// The next line the README names, anywhere further on.
			for j < len(got) && !tourLineMatch(want[i+1], got[j]) {
				j++
			}
			continue
		}
		if j >= len(got) {
			return false, "output ends before README line " + want[i]
		}
		if !tourLineMatch(want[i], got[j]) {
			return false, "README: " + want[i] + "\noutput: " + got[j]
		}
		j++
	}
	if j < len(got) {
		return false, "output goes on after the README's last line: " + got[j]
	}
	return true, ""
}

// TestReadmeTour runs the README's tour commands exactly as written, one
// after the other in a clean clone of the repository (its committed
// state), and compares what each prints (stdout and stderr) with the
// README. A command whose README output shows a violation must exit 1,
// the others 0. go run's own "exit status N" line is not fgcheck's output.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the tour runs the std exploration in a clone")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git to clone the repository")
	}
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	root := strings.TrimSpace(string(top))
	clone := filepath.Join(t.TempDir(), "fgcheck")
	if out, err := exec.Command(git, "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readmeTour(t, readme) {
		cmd := exec.Command("bash", "-c", c.cmd)
		cmd.Dir = clone
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("README:%d: %s: %v", c.line, c.cmd, err)
		}
		got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if n := len(got); n > 0 && regexp.MustCompile(`^exit status \d+$`).MatchString(got[n-1]) {
			got = got[:n-1]
		}
		want := 0
		if strings.Contains(strings.Join(c.want, "\n"), "first violation:") {
			want = 1
		}
		if code != want {
			t.Errorf("README:%d: %s: exit %d, want %d\n%s", c.line, c.cmd, code, want, out.String())
		}
		if ok, why := tourMatch(c.want, got); !ok {
			t.Errorf("README:%d: %s: the output differs from the README:\n%s\n--- full output:\n%s", c.line, c.cmd, why, out.String())
		}
	}
	if st, err := exec.Command(git, "-C", clone, "status", "--porcelain").Output(); err != nil || len(st) != 0 {
		t.Errorf("the tour left files in the repository (git status: %q, %v)", st, err)
	}
}

func TestTourMatch(t *testing.T) {
	tests := []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "c"}, false},
		{[]string{"a"}, []string{"a", "b"}, false},
		{[]string{"...", "c"}, []string{"a", "b", "c"}, true},
		{[]string{"a", "  ...", "d", "e"}, []string{"a", "b", "c", "d", "e"}, true},
		{[]string{"a", "..."}, []string{"a", "b"}, true},
		{[]string{"x ...: y"}, []string{"x file.txt: y"}, true},
		{[]string{"x ...: y"}, []string{"x file.txt: z"}, false},
		{[]string{"time:        2.37 s, 23975 schedules/s, 1 worker"}, []string{"time:        6.26 s, 9070 schedules/s, 1 worker"}, true},
		{[]string{"schedules:   56766 (complete)"}, []string{"schedules:   56767 (complete)"}, false},
	}
	for _, tt := range tests {
		if ok, why := tourMatch(tt.want, tt.got); ok != tt.ok {
			t.Errorf("tourMatch(%q, %q) = %v (%s), want %v", tt.want, tt.got, ok, why, tt.ok)
		}
	}
}
