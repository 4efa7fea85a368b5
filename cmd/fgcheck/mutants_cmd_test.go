package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"github.com/fgcheck/fgcheck/mutants"
)

func TestMutantsCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := fgcheck(t, "mutants", "--mutant", "M-push-1,F9", "--out", out, "--workers", "2")
	if code != exitClean {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"MUTANT", "COMPILER MODEL", "M-push-1", "F9", "killed 2 of 2 mutants (controls not counted) on latest, order near: 2 under kbuild, 0 only if the compiler can prove no alias"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[mutants] F9: killed under kbuild, by model") {
		t.Errorf("no progress line on stderr:\n%s", stderr)
	}
	for name, oracle := range map[string]string{"M-push-1": "unwinder", "F9": "model"} {
		data, err := os.ReadFile(filepath.Join(out, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := harness.ParseFile(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Expect == nil || f.Expect.Oracle != oracle {
			t.Errorf("%s: expect %+v, want violation %s", name, f.Expect, oracle)
		}
		res, err := harness.Replay(f, harness.RunOptions{})
		if err != nil || !res.Failed() || res.Violations[0].Oracle != oracle {
			t.Errorf("%s: replay %v %v", name, err, res)
		}
	}
	// Only the files themselves: no temporary left behind.
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Errorf("%d files in --out, want 2", len(ents))
	}
}

func TestMutantsCommandJSON(t *testing.T) {
	code, stdout, stderr := fgcheck(t, "mutants", "--mutant", "F5-tail", "--json", "--quiet")
	if code != exitClean {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("--quiet, but stderr: %s", stderr)
	}
	var rep struct {
		Mutants []struct {
			Name          string  `json:"name"`
			Killed        bool    `json:"killed"`
			Oracle        string  `json:"oracle"`
			Runs          int64   `json:"runs"`
			Seconds       float64 `json:"seconds"`
			ScheduleLines int     `json:"schedule_lines"`
		} `json:"mutants"`
		Killed, Total int
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(rep.Mutants) != 1 || !rep.Mutants[0].Killed || rep.Mutants[0].Oracle != "ret-addr" || rep.Killed != 1 || rep.Total != 1 {
		t.Errorf("report %+v", rep)
	}
}

// A survivor or a flagged control makes the exit status 1.
func TestMutantsCommandExitViolation(t *testing.T) {
	defer func(f func(mutants.Options) (*mutants.Report, error)) { runCatalogue = f }(runCatalogue)
	for _, c := range []struct {
		name string
		res  mutants.Result
		want int
	}{
		{"survivor", mutants.Result{Name: "M-x", Runs: 10}, exitViolation},
		{"flagged control", mutants.Result{Name: "M-y", Control: true, Killed: true, Oracle: "model"}, exitViolation},
		{"control survives", mutants.Result{Name: "M-z", Control: true, Runs: 10, Complete: true}, exitClean},
	} {
		runCatalogue = func(mutants.Options) (*mutants.Report, error) {
			return &mutants.Report{Mutants: []mutants.Result{c.res}}, nil
		}
		if code, stdout, _ := fgcheck(t, "mutants", "--quiet"); code != c.want {
			t.Errorf("%s: exit %d, want %d\n%s", c.name, code, c.want, stdout)
		}
	}
}

func TestMutantsCommandMisuse(t *testing.T) {
	for _, args := range [][]string{
		{"--variant", "v9"},
		{"--order", "bfs"},
		{"--mutant", "M-nope"},
		{"--workers", "-1"},
		{"extra"},
		{"--no-such-flag"},
		{"--json", "--markdown"},
	} {
		code, _, stderr := fgcheck(t, append([]string{"mutants"}, args...)...)
		if code != exitMisuse || stderr == "" {
			t.Errorf("mutants %v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	if code, _, _ := fgcheck(t, "mutants", "-h"); code != exitClean {
		t.Errorf("mutants -h: exit %d", code)
	}
}

// f2File is the first failing schedule harness.Explore finds for F2 on std:
// an IRQ at the last return, and the unregister nested in it.
func f2File(t *testing.T) string {
	t.Helper()
	sc := harness.Standard(fgraph.Latest)
	mi, _ := fgraph.LookupMutant("F2")
	sc.Mutant = mi.Mutant
	text := string((&harness.File{Comments: []string{"found by explore"}, Scenario: sc, Expect: &harness.Expect{Oracle: "panic"}}).Format()) +
		"irq id=1 in=task0 at=ret.depth#4\nremote id=2 in=1 at=enter.array_use#2 do=unregister u1\n"
	return writeTemp(t, "f2.txt", text)
}

func TestMinimizeCommand(t *testing.T) {
	in := f2File(t)
	out := filepath.Join(t.TempDir(), "min.txt")
	code, stdout, stderr := fgcheck(t, "minimize", in, "-o", out)
	if code != exitClean {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if stdout != "" {
		t.Errorf("with -o, stdout: %s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := harness.ParseFile(out, data)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"# minimized by fgcheck minimize from " + in, "# breaks: panic: ", "# before: 2 schedule lines", "# after:  1 schedule line", "1-minimal: yes", "expect violation panic"} {
		if !strings.Contains(text, want) {
			t.Errorf("minimized file lacks %q:\n%s", want, text)
		}
	}
	if len(f.Schedule.Events) != 1 || f.Schedule.Events[0].In != "task0" {
		t.Errorf("want the unregister lifted into task0:\n%s", text)
	}
	if !strings.Contains(stderr, "[minimize] ") {
		t.Errorf("no summary on stderr: %s", stderr)
	}
	// Without -o the file goes to stdout; the input is untouched.
	code, stdout2, _ := fgcheck(t, "minimize", in)
	if code != exitClean || stdout2 != text {
		t.Errorf("stdout differs from -o output (exit %d)", code)
	}
	if orig, _ := os.ReadFile(in); !strings.Contains(string(orig), "irq id=1") {
		t.Error("the input file was modified")
	}
}

func TestMinimizeCommandKnown(t *testing.T) {
	// The program-order run of std on latest shows F1-bit0 (a known finding).
	in := writeTemp(t, "std.txt", string((&harness.File{Scenario: harness.Standard(fgraph.Latest)}).Format()))
	if code, _, stderr := fgcheck(t, "minimize", in); code != exitMisuse || !strings.Contains(stderr, "F1-bit0") {
		t.Errorf("non-strict minimize of a known finding: exit %d, %s", code, stderr)
	}
	for _, args := range [][]string{{"--strict"}, {"--known", "F1-bit0"}} {
		code, stdout, stderr := fgcheck(t, append([]string{"minimize", in}, args...)...)
		if code != exitClean || !strings.Contains(stdout, "expect violation callback") {
			t.Errorf("minimize %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
}

func TestMinimizeCommandMisuse(t *testing.T) {
	in := f2File(t)
	bad := writeTemp(t, "bad.txt", "fgcheck v1\nscenario x\nvariant nope\n")
	pass := writeTemp(t, "pass.txt", "fgcheck v1\nscenario x\nvariant latest\ntask ops=(call 1, ret)\nbound K=0 D=0 R=0 E=0\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want exactly one FILE"},
		{[]string{in, in}, "want exactly one FILE"},
		{[]string{filepath.Join(t.TempDir(), "missing.txt")}, "no such file"},
		{[]string{bad}, "bad.txt:3:9"},
		{[]string{pass}, "does not fail"},
		{[]string{in, "--known", "nope"}, "unknown finding"},
		{[]string{in, "--known", "F1-bit0", "--strict"}, "exclude each other"},
		{[]string{in, "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "x.txt")}, "-o"},
	} {
		code, _, stderr := fgcheck(t, append([]string{"minimize"}, c.args...)...)
		if code != exitMisuse || !strings.Contains(stderr, c.want) {
			t.Errorf("minimize %v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
