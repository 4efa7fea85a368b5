package harness_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// The -update flag may also be defined by another test file of the package;
// share it instead of redefining it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool { return flag.Lookup("update").Value.String() == "true" }

// fataler is what testing.T and rapid.T have in common here.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkRoundTrip: the canonical text of f parses back to f, and formatting
// that is the same text again.
func checkRoundTrip(t fataler, name string, f *harness.File) {
	t.Helper()
	out := f.Format()
	g, err := harness.ParseFile(name, out)
	if err != nil {
		t.Fatalf("Format output does not parse: %v\n%s", err, out)
	}
	if d := cmp.Diff(f, g); d != "" {
		t.Fatalf("Parse(Format(f)) != f (-f +parsed):\n%s\ntext:\n%s", d, out)
	}
	if out2 := g.Format(); !bytes.Equal(out, out2) {
		t.Fatalf("Format not idempotent (-first +second):\n%s", cmp.Diff(string(out), string(out2)))
	}
}

// checkError: a rejected input gets a *FormatError naming the file and a
// position inside the input (or just past the end of a line).
func checkError(t fataler, name string, in []byte, err error) {
	t.Helper()
	var fe *harness.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	lines := strings.Split(string(in), "\n")
	if fe.File != name || fe.Line < 1 || fe.Line > len(lines) || fe.Col < 1 || fe.Col > len(lines[fe.Line-1])+1 {
		t.Fatalf("error %q: position outside the input (%d lines)", err, len(lines))
	}
	if want := fmt.Sprintf("%s:%d:%d: ", fe.File, fe.Line, fe.Col); !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q does not start with %q", err, want)
	}
}

// mustParse reads and parses a schedule file, failing the test if it
// cannot; it returns the file and its bytes.
func mustParse(t *testing.T, path string) (*harness.File, []byte) {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := harness.ParseFile(path, in)
	if err != nil {
		t.Fatal(err)
	}
	return f, in
}

// TestFormatGolden: every canonical file formats to itself byte for byte.
func TestFormatGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "format", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 4 {
		t.Fatalf("found %d canonical files in testdata/format, want at least 4", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, in := mustParse(t, path)
			if got := f.Format(); !bytes.Equal(got, in) {
				t.Errorf("not canonical (-file +Format):\n%s", cmp.Diff(string(in), string(got)))
			}
			checkRoundTrip(t, path, f)
		})
	}
}

// TestFormatNonCanonical: lenient inputs format to their golden canonical
// text, which parses to the same File. -update rewrites the golden files.
func TestFormatNonCanonical(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "format", "noncanonical", "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Fatalf("found %d inputs in testdata/format/noncanonical, want at least 2", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, in := mustParse(t, path)
			got := f.Format()
			if bytes.Equal(got, in) {
				t.Errorf("input is already canonical; put it in testdata/format/*.txt")
			}
			golden := strings.TrimSuffix(path, ".in") + ".golden"
			if updating() {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Format (-golden +got):\n%s", cmp.Diff(string(want), string(got)))
			}
			g, err := harness.ParseFile(golden, want)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(f, g); d != "" {
				t.Errorf("input and golden parse differently (-input +golden):\n%s", d)
			}
			checkRoundTrip(t, path, f)
		})
	}
}

func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

// Shared lines of the error cases: lines 1-3 and 4-5.
const (
	head = "fgcheck v1\nscenario s\nvariant latest\n"
	body = "task ops=(call 1, ret)\nbound K=2 D=2 R=0 E=1\n"
)

// TestParseFileErrors pins the exact message and position of malformed
// inputs.
func TestParseFileErrors(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		want   string
		reason string
	}{
		{"empty", "", "f:1:1: missing \"fgcheck v1\" header",
			"an empty file is not a scenario"},
		{"only-comments", "# story\n\n# more\n", "f:1:1: missing \"fgcheck v1\" header",
			"comments alone carry no version"},
		{"no-header", lines("", "scenario s"), "f:2:1: missing \"fgcheck v1\" header",
			"the first non-blank, non-comment line must be the version"},
		{"version-2", lines("# c", "fgcheck v2"), "f:2:9: unsupported format version \"v2\"",
			"only v1 exists; the column points at the version token"},
		{"version-extra", "fgcheck v1 x\n", "f:1:12: unexpected \"x\"",
			"the version line is exactly two tokens"},
		{"version-twice", head + "fgcheck v1\n", "f:4:1: duplicate \"fgcheck v1\" header (first at line 1)",
			"a second header is most likely two files pasted together"},
		{"unknown-directive", head + "frobnicate 1\n" + body, "f:4:1: unknown directive \"frobnicate\"",
			"unknown directives are errors, not ignored"},
		{"unknown-variant", "fgcheck v1\nscenario s\nvariant v7\n", "f:3:9: unknown variant \"v7\" (want latest, v6.12, v6.11 or seed)",
			"fgraph.ParseVariant's message at the variant token"},
		{"duplicate-line", head + "variant seed\n" + body, "f:4:1: duplicate \"variant\" line (first at line 3)",
			"singleton directives appear once"},
		{"bad-scenario-name", "fgcheck v1\nscenario a/b\n", "f:2:10: bad scenario name \"a/b\" (want letters, digits, '_', '.' or '-')",
			"names are [A-Za-z0-9_.-]+"},
		{"unknown-mutant", head + "mutant M-nope\n" + body, "f:4:8: unknown mutant \"M-nope\"",
			"mutants are looked up in fgraph.Catalogue"},
		{"unknown-fix", head + "fixes no-bit0 bit1\n" + body, "f:4:15: unknown fix \"bit1\" (want no-bit0, gen-counter, entry-for-all, reserve-irqoff, retp-guard, direct-fallback or no-transition)",
			"fixes are a closed set"},
		{"frame-5", head + "layout frame=5\n" + body, "f:4:14: frame=5: want 3 or 4 (0: the variant's default)",
			"struct ftrace_ret_stack is 3 or 4 words; the column points at the value"},
		{"stack-too-small", head + "layout stack=8\n" + body, "f:4:14: stack of 8 words, want 28..1024",
			"fgraph.Config.Validate's message (16 task vars + F + 1 + 8), attributed to the stack value"},
		{"unknown-key", head + "task ops=(call 1, ret)\nbound K=2 D=2 R=0 E=1 X=1\n", "f:5:23: unknown key \"X\" for bound",
			"unknown keys are errors, pointing at the key"},
		{"duplicate-key", head + "task ops=(call 1, ret)\nbound K=2 K=3 D=2 R=0 E=1\n", "f:5:11: duplicate key \"K\"",
			"a key appears once per line"},
		{"missing-key", head + "task ops=(call 1, ret)\nbound K=2 D=2 R=0\n", "f:5:1: missing key \"E\"",
			"bound needs all four keys"},
		{"bad-number", head + "task ops=(call 1, ret)\nbound K=x D=2 R=0 E=1\n", "f:5:9: bad number \"x\"",
			"the column points at the value, after K="},
		{"negative-number", head + "task ops=(call 1, ret)\nbound K=-1 D=2 R=0 E=1\n", "f:5:9: bad number \"-1\"",
			"numbers are unsigned decimal"},
		{"bound-K-17", head + "task ops=(call 1, ret)\nbound K=17 D=2 R=0 E=1\n", "f:5:9: K=17: at most 16",
			"Scenario.Validate's bound limit, attributed to the value"},
		{"not-key-value", head + "task ops\n", "f:4:6: want key=value, got \"ops\"",
			"arguments of task are keys"},
		{"unterminated-paren", head + "task ops=(call 1, ret\n", "f:4:10: unterminated \"(\"",
			"an op list must close on its line"},
		{"unknown-op", head + "task ops=(call 1, jump 2, ret)\n" + "bound K=0 D=0 R=0 E=0\n", "f:4:19: unknown op \"jump\" (want call, tail, ret, sleep, unwind or exit)",
			"op names are a closed set; the column points at the op"},
		{"empty-op", head + "task ops=(call 1,, ret)\n", "f:4:18: empty op",
			"a doubled comma leaves an empty op"},
		{"call-no-func", head + "task ops=(call)\n", "f:4:11: call wants a function number",
			"call and tail take a function"},
		{"ret-argument", head + "task ops=(call 1, ret 1)\n", "f:4:23: unexpected \"1\" after ret",
			"ret takes no argument"},
		{"ret-unbalanced", head + "task ops=(ret)\nbound K=0 D=0 R=0 E=0\n", "f:4:11: task 0: op 1: ret with no open call",
			"Scenario.Validate's program check, at the failing op"},
		{"tail-outside", head + "task ops=(call 1, ret)\ntask ops=(tail 2)\nbound K=0 D=0 R=0 E=0\n", "f:5:11: task 1: op 1: tail call outside a function",
			"the failing task is named by its index"},
		{"irq-unbalanced", head + body + "irq ops=(call 10)\n", "f:6:9: irq: 1 calls never return",
			"an interrupt must return from every call; not attributable to one op"},
		{"irq-sleeps", head + body + "irq ops=(call 10, sleep, ret)\n", "f:6:19: irq: op 2: sleep in an interrupt",
			"interrupts cannot sleep"},
		{"func-out-of-range", head + "task ops=(call 65536)\nbound K=0 D=0 R=0 E=0\n", "f:4:11: task 0: op 1: function 65536 out of range 1..65519",
			"functions are 16-bit"},
		{"missing-bound", head + "task ops=(call 1, ret)\n", "f:1:1: missing \"bound\" line",
			"bound is required; a missing line has no position"},
		{"missing-task", head + "bound K=0 D=0 R=0 E=0\n", "f:1:1: missing \"task\" line",
			"at least one task"},
		{"missing-variant", "fgcheck v1\nscenario s\n" + body, "f:1:1: missing \"variant\" line",
			"variant is required"},
		{"nine-tasks", head + strings.Repeat("task ops=()\n", 9) + "bound K=0 D=0 R=0 E=0\n", "f:12:1: too many tasks: at most 8",
			"fgraph.Config allows 1..8 tasks; the ninth task line is the culprit"},
		{"nine-users", head + "user a\nuser b\nuser c\nuser d\nuser e\nuser f\nuser g\nuser h\nuser i\n" + body, "f:12:1: too many users: at most 8",
			"fgraph.MaxOps users"},
		{"duplicate-user", head + "user u1\nuser u1 data=8\n" + body, "f:5:6: duplicate user \"u1\" (first at line 4)",
			"users are referred to by name"},
		{"filter-func-0", head + "user u1 filter=1,0\n" + body, "f:4:18: function 0 out of range 1..65519",
			"the column points at the list element"},
		{"unknown-setup-user", head + "user u1\nsetup u1 nobody\n" + body, "f:5:10: unknown user \"nobody\"",
			"setup names declared users"},
		{"unknown-remote-user", head + "remote unregister u9\n" + body, "f:4:19: unknown user \"u9\"",
			"remote register/unregister name declared users"},
		{"remote-unwind-no-task", head + "remote unwind task1\n" + body, "f:4:15: no task1: the scenario has 1 task",
			"remote unwind names an existing task"},
		{"unknown-remote-action", head + "remote kill task0\n" + body, "f:4:8: unknown remote action \"kill\" (want register, unregister, replace or unwind)",
			"remote actions are a closed set"},
		{"duplicate-remote", head + "user u1\nremote register u1\nremote register u1\n" + body, "f:6:8: duplicate remote \"register u1\" (first at line 5)",
			"remote events name a remote by its label, so labels are unique"},
		{"bad-expect", head + body + "expect fail\n", "f:6:8: expect wants \"pass\" or \"violation ORACLE\", got \"fail\"",
			"only pass or violation"},
		{"expect-no-oracle", head + body + "expect violation\n", "f:6:8: missing oracle",
			"a violation names its oracle"},
		{"event-id-gap", head + body + "irq id=2 in=task0 at=push.w3#1\n", "f:6:8: event id 2, want 1 (ids count 1, 2, 3, ... in file order)",
			"ids are 1, 2, 3 in file order"},
		{"event-missing-at", head + body + "irq id=1 in=task0\n", "f:6:1: missing key \"at\"",
			"events need id, in and at"},
		{"event-unknown-site", head + body + "irq id=1 in=task0 at=push.w9#1\n", "f:6:22: unknown site \"push.w9\"",
			"sites are checked with fgraph.ParseSite"},
		{"event-no-occurrence", head + body + "irq id=1 in=task0 at=push.w3\n", "f:6:22: bad position \"push.w3\" (want SITE#N)",
			"a position is SITE#N"},
		{"event-occurrence-0", head + body + "irq id=1 in=task0 at=push.w3#0\n", "f:6:30: occurrence 0, want 1 or more",
			"occurrences count from 1; the column points at the number"},
		{"event-task-out-of-range", head + body + "irq id=1 in=task1 at=push.w3#1\n", "f:6:13: no task1: the scenario has 1 task",
			"in=taskN with N >= number of tasks"},
		{"event-bad-context", head + body + "irq id=1 in=task at=push.w3#1\n", "f:6:13: bad task \"task\" (want taskN)",
			"the task is numbered"},
		{"event-later-parent", head + body + "irq id=1 in=2 at=push.w3#1\n", "f:6:13: no event 2 before this line",
			"in= names an earlier event"},
		{"event-remote-parent", head + "user u1\nremote unregister u1\n" + body + "remote id=1 in=task0 at=push.w3#1 do=unregister u1\nirq id=2 in=1 at=push.w1#1\n",
			"f:9:13: event 1 is a remote event, not a context", "remote events run on another CPU; nothing fires inside them"},
		{"irq-in-irq", head + body + "irq id=1 in=task0 at=push.w3#1\nirq id=2 in=1 at=push.w1#1\n", "f:7:13: irq must fire in a task, not in event 1",
			"an interrupt inside an interrupt is an nmi"},
		{"nmi-in-task", head + body + "nmi id=1 in=task0 at=push.w3#1\n", "f:6:13: nmi must fire in an irq or nmi event, not in task0",
			"nmi is the level-2 interrupt"},
		{"remote-unknown-label", head + "user u1\nremote unregister u1\n" + body + "remote id=1 in=task0 at=push.w3#1 do=register u1\n",
			"f:8:38: no remote \"register u1\" in the scenario", "do= names one of the remote lines"},
		{"remote-do-incomplete", head + "user u1\nremote unregister u1\n" + body + "remote id=1 in=task0 at=push.w3#1 do=unregister\n",
			"f:8:35: do= wants an action and its argument: do=unregister u1", "the label is two words"},
		{"irq-do", head + body + "irq id=1 in=task0 at=push.w3#1 do=unregister u1\n", "f:6:32: unknown key \"do\" for irq",
			"only remote events have do="},
		{"scenario-after-event", head + body + "irq id=1 in=task0 at=push.w3#1\nvariant seed\n", "f:7:1: \"variant\" line after the first event or order line (line 6)",
			"the scenario comes before the schedule"},
		{"program-after-order", head + body + "order push.w4 = push.w4\nirq ops=(call 1, ret)\n", "f:7:1: \"irq\" line after the first event or order line (line 6)",
			"an irq line with ops= is a scenario line"},
		{"region-twice", head + body + "order push.w4 = push.w4\norder push.w4 = push.w5_func\n", "f:7:7: region push.w4 already ordered at line 6",
			"one order per region"},
		{"order-no-equals", head + body + "order push.w4 push.w4\n", "f:6:15: want \"=\" after the region, got \"push.w4\"",
			"order REGION = SITES"},
		{"order-unknown-drop", head + body + "order push.w4 = -push.w9\n", "f:6:18: unknown site \"push.w9\"",
			"the column skips the drop marker"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if c.name == "" || c.reason == "" || seen[c.name] {
			t.Fatalf("case %q: every case needs a unique name and a reason", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			f, err := harness.ParseFile("f", []byte(c.in))
			if err == nil {
				t.Fatalf("accepted; want %s (%s)\n%s", c.want, c.reason, f.Format())
			}
			if err.Error() != c.want {
				t.Errorf("error (-want +got):\n%s\nreason: %s", cmp.Diff(c.want, err.Error()), c.reason)
			}
			checkError(t, "f", []byte(c.in), err)
		})
	}
}

// TestFormatSchedule pins the log form of schedules.
func TestFormatSchedule(t *testing.T) {
	sc := &harness.Scenario{
		Users:   []harness.User{{Name: "u1"}},
		Tasks:   [][]harness.Op{nil, nil},
		Remotes: []harness.Remote{{Kind: harness.RemoteUnwind, Task: 1}, {Kind: harness.RemoteRegister, User: 0}},
	}
	cases := []struct {
		name   string
		s      harness.Schedule
		want   string
		reason string
	}{
		{"empty", harness.Schedule{}, "", "no choices, no lines"},
		{"events", harness.Schedule{Events: []harness.Event{
			{ID: 1, Kind: harness.EvIRQ, In: "task1", At: harness.Pos{Site: fgraph.SitePushW3, Occ: 2}},
			{ID: 2, Kind: harness.EvNMI, In: "1", At: harness.Pos{Site: fgraph.SitePopRet, Occ: 1}},
			{ID: 3, Kind: harness.EvRemote, In: "2", At: harness.Pos{Site: fgraph.SiteEnterSave, Occ: 3}, Remote: 1},
		}}, "irq id=1 in=task1 at=push.w3#2\nnmi id=2 in=1 at=pop.ret#1\nremote id=3 in=2 at=enter.save#3 do=register u1\n",
			"one line per event, remote actions by label"},
		{"orders", harness.Schedule{Orders: []harness.Order{
			{Region: fgraph.SitePushW4, Sites: []fgraph.Site{fgraph.SitePushW5Func, fgraph.SitePushW4}, Drop: []fgraph.Site{fgraph.SiteEnterRestore}},
			{Region: fgraph.SitePopRet},
		}}, "order push.w4 = push.w5_func push.w4 -enter.restore\norder pop.ret =\n",
			"kept sites in commit order, then the dropped ones; no trailing space"},
	}
	for _, c := range cases {
		if got := harness.FormatSchedule(sc, c.s); got != c.want {
			t.Errorf("%s (-want +got):\n%s\nreason: %s", c.name, cmp.Diff(c.want, got), c.reason)
		}
	}
}

// genProgram draws a program that passes Scenario.Validate.
func genProgram(t *rapid.T, label string, task bool) []harness.Op {
	var p []harness.Op
	n := rapid.IntRange(0, 8).Draw(t, label+".len")
	depth := 0
	fn := rapid.OneOf(rapid.IntRange(1, 20), rapid.IntRange(1, 0xffef))
	for i := 0; i < n; i++ {
		kinds := []harness.OpKind{harness.OpCall, harness.OpUnwind}
		if depth > 0 {
			kinds = append(kinds, harness.OpTail, harness.OpRet)
		}
		if task {
			kinds = append(kinds, harness.OpSleep, harness.OpExit)
		}
		op := harness.Op{Kind: rapid.SampledFrom(kinds).Draw(t, label+".op")}
		switch op.Kind {
		case harness.OpCall:
			depth++
			op.Func = fn.Draw(t, label+".func")
		case harness.OpTail:
			op.Func = fn.Draw(t, label+".func")
		case harness.OpRet:
			depth--
		}
		p = append(p, op)
	}
	for ; !task && depth > 0; depth-- {
		p = append(p, harness.Op{Kind: harness.OpRet})
	}
	return p
}

func genFuncs(t *rapid.T, label string) []int {
	if rapid.Bool().Draw(t, label+".all") {
		return nil
	}
	return rapid.SliceOfN(rapid.IntRange(1, 0xffef), 1, 4).Draw(t, label)
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// genFile draws a valid File in the form ParseFile returns (nil for empty
// lists).
func genFile(t *rapid.T) *harness.File {
	sc := &harness.Scenario{
		Name:       rapid.StringMatching(`[A-Za-z0-9_.-]{1,12}`).Draw(t, "name"),
		Variant:    rapid.SampledFrom(fgraph.Variants()).Draw(t, "variant"),
		FrameWords: rapid.SampledFrom([]int{0, 3, 4}).Draw(t, "frame"),
		Fixes: harness.Fixes{
			NoBit0:      rapid.Bool().Draw(t, "noBit0"),
			GenCounter:  rapid.Bool().Draw(t, "genCounter"),
			EntryForAll: rapid.Bool().Draw(t, "entryForAll"),
		},
		StoresOnly: rapid.Bool().Draw(t, "storesOnly"),
		Alias:      rapid.Bool().Draw(t, "alias"),
		Bound: harness.Bound{
			K: rapid.IntRange(0, 16).Draw(t, "K"),
			D: rapid.IntRange(0, 6).Draw(t, "D"),
			R: rapid.IntRange(0, 9).Draw(t, "R"),
			E: rapid.IntRange(0, 9).Draw(t, "E"),
		},
	}
	if rapid.Bool().Draw(t, "stackSet") {
		sc.StackWords = rapid.IntRange(32, 1024).Draw(t, "stack")
	}
	if rapid.Bool().Draw(t, "mutantSet") {
		sc.Mutant = rapid.SampledFrom(fgraph.Catalogue).Draw(t, "mutant").Mutant
	}
	nUsers := rapid.IntRange(0, fgraph.MaxOps).Draw(t, "users")
	for i := 0; i < nUsers; i++ {
		u := harness.User{
			// The index suffix keeps names unique.
			Name:      rapid.StringMatching(`[A-Za-z0-9_.-]{0,6}`).Draw(t, "user") + fmt.Sprint(i),
			Filter:    genFuncs(t, "filter"),
			Accept:    genFuncs(t, "accept"),
			DataBytes: rapid.IntRange(0, 256).Draw(t, "data"),
		}
		if rapid.Bool().Draw(t, "callinSet") {
			u.CallInEntry = rapid.IntRange(1, 0xffef).Draw(t, "callin")
		}
		sc.Users = append(sc.Users, u)
	}
	if nUsers > 0 {
		sc.Setup = nilIfEmpty(rapid.SliceOfN(rapid.IntRange(0, nUsers-1), 0, 4).Draw(t, "setup"))
	}
	nTasks := rapid.IntRange(1, 8).Draw(t, "tasks")
	for i := 0; i < nTasks; i++ {
		sc.Tasks = append(sc.Tasks, nilIfEmpty(genProgram(t, "task", true)))
	}
	sc.IRQ = nilIfEmpty(genProgram(t, "irq", false))
	sc.NMI = nilIfEmpty(genProgram(t, "nmi", false))
	var remotes []harness.Remote
	for i := 0; i < nUsers; i++ {
		remotes = append(remotes, harness.Remote{Kind: harness.RemoteRegister, User: i}, harness.Remote{Kind: harness.RemoteUnregister, User: i})
	}
	for i := 0; i < nTasks; i++ {
		remotes = append(remotes, harness.Remote{Kind: harness.RemoteUnwind, Task: i})
	}
	remotes = rapid.Permutation(remotes).Draw(t, "remotes")
	sc.Remotes = nilIfEmpty(remotes[:rapid.IntRange(0, min(4, len(remotes))).Draw(t, "nRemotes")])
	if err := sc.Validate(); err != nil {
		t.Fatalf("generator made an invalid scenario: %v", err)
	}

	f := &harness.File{Scenario: sc}
	for _, c := range rapid.SliceOfN(rapid.StringMatching(`[ -~\tπé]{0,30}`), 0, 3).Draw(t, "comments") {
		f.Comments = append(f.Comments, strings.TrimRight(c, " \t"))
	}
	switch rapid.IntRange(0, 2).Draw(t, "expect") {
	case 1:
		f.Expect = &harness.Expect{Pass: true}
	case 2:
		f.Expect = &harness.Expect{Oracle: rapid.StringMatching(`[a-z][a-z0-9-]{0,10}`).Draw(t, "oracle")}
	}

	sites := fgraph.Sites()
	var interrupts []string // ids of irq and nmi events
	nEvents := rapid.IntRange(0, 6).Draw(t, "events")
	for id := 1; id <= nEvents; id++ {
		kinds := []harness.EventKind{harness.EvIRQ}
		if len(interrupts) > 0 {
			kinds = append(kinds, harness.EvNMI)
		}
		if len(sc.Remotes) > 0 {
			kinds = append(kinds, harness.EvRemote)
		}
		ev := harness.Event{
			ID:   id,
			Kind: rapid.SampledFrom(kinds).Draw(t, "kind"),
			At: harness.Pos{
				Site: rapid.SampledFrom(sites).Draw(t, "site"),
				Occ:  rapid.IntRange(1, 1000).Draw(t, "occ"),
			},
		}
		task := fmt.Sprintf("task%d", rapid.IntRange(0, nTasks-1).Draw(t, "inTask"))
		switch ev.Kind {
		case harness.EvIRQ:
			ev.In = task
		case harness.EvNMI:
			ev.In = rapid.SampledFrom(interrupts).Draw(t, "inEvent")
		case harness.EvRemote:
			ev.In = rapid.SampledFrom(append([]string{task}, interrupts...)).Draw(t, "in")
			ev.Remote = rapid.IntRange(0, len(sc.Remotes)-1).Draw(t, "remote")
		}
		if ev.Kind != harness.EvRemote {
			interrupts = append(interrupts, fmt.Sprint(id))
		}
		f.Schedule.Events = append(f.Schedule.Events, ev)
	}
	regions := rapid.Permutation(sites).Draw(t, "regions")
	for _, r := range regions[:rapid.IntRange(0, 3).Draw(t, "orders")] {
		f.Schedule.Orders = append(f.Schedule.Orders, harness.Order{
			Region: r,
			Sites:  nilIfEmpty(rapid.SliceOfN(rapid.SampledFrom(sites), 0, 5).Draw(t, "sites")),
			Drop:   nilIfEmpty(rapid.SliceOfN(rapid.SampledFrom(sites), 0, 2).Draw(t, "drop")),
		})
	}
	return f
}

// TestFormatRoundTripRapid: for random valid files, Parse(Format(f)) == f
// and Format is idempotent.
func TestFormatRoundTripRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkRoundTrip(t, "gen", genFile(t))
	})
}

// edits are fragments spliced into valid text by TestParseFileMutatedRapid.
var edits = []string{" ", "\t", "\n", "\r", "#", "=", "(", ")", ",", "-", "0", "1", "9", "*", "task0",
	"task9", "u0", "irq ", "nmi ", "remote ", "order ", "id=", "in=", "at=", "do=", "ops=(", "push.w3#",
	"call ", "ret", "variant ", "scenario x\n", "bound K=1 D=1 R=1 E=1\n", "irq id=1 in=task0 at=push.w3#1\n",
	"99999999999999999999", "fgcheck v1\n", "\xff"}

// TestParseFileMutatedRapid: valid text with random edits never panics;
// when it is still accepted it round-trips, and when it is rejected the
// error is a *FormatError inside the input.
func TestParseFileMutatedRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genFile(t).Format()
		for range rapid.IntRange(1, 4).Draw(t, "nEdits") {
			i := rapid.IntRange(0, len(b)).Draw(t, "at")
			j := min(len(b), i+rapid.IntRange(0, 8).Draw(t, "cut"))
			ins := ""
			if rapid.Bool().Draw(t, "insert") {
				ins = rapid.SampledFrom(edits).Draw(t, "edit")
			}
			b = append(b[:i:i], append([]byte(ins), b[j:]...)...)
		}
		checkParse(t, b)
	})
}

func checkParse(t fataler, in []byte) {
	t.Helper()
	f, err := harness.ParseFile("m", in)
	if err != nil {
		checkError(t, "m", in, err)
		return
	}
	if f.Scenario.Validate() != nil {
		t.Fatalf("accepted a scenario that fails Validate: %v", f.Scenario.Validate())
	}
	checkRoundTrip(t, "m", f)
}

// FuzzParseFile: the same checks as TestParseFileMutatedRapid, seeded with
// the golden files.
func FuzzParseFile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "format", "*.txt"))
	more, _ := filepath.Glob(filepath.Join("testdata", "format", "noncanonical", "*.in"))
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkParse(t, in) })
}

func ExampleParseFile() {
	src := `fgcheck v1
#an IRQ between W3 and W4 of task 0's second push
scenario   irq-after-w3
variant latest
bound E=0 R=0 D=1 K=1
task ops=(call 1,call 2,ret,ret)
irq ops=(call 10,ret)
irq id=1 in=task0 at=push.w3#2
`
	f, err := harness.ParseFile("example.txt", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(f.Format()))

	_, err = harness.ParseFile("bad.txt", []byte("fgcheck v1\nscenario x\nvariant v7\n"))
	fmt.Println(err)
	// Output:
	// fgcheck v1
	// # an IRQ between W3 and W4 of task 0's second push
	// scenario irq-after-w3
	// variant latest
	// task ops=(call 1, call 2, ret, ret)
	// irq ops=(call 10, ret)
	// bound K=1 D=1 R=0 E=0
	// irq id=1 in=task0 at=push.w3#2
	// bad.txt:3:9: unknown variant "v7" (want latest, v6.12, v6.11 or seed)
}
