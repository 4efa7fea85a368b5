package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fgcheck/fgcheck/harness"
)

// goldenTraces are the files whose replay trace, shadow-stack pictures
// included, is pinned in testdata/picture/NAME.trace.
var goldenTraces = []struct {
	path, reason string
}{
	{"../corpus/irq-before-w3-clobbers-ret.txt", "an IRQ before W3: the half-pushed frame as a stale tail, the clobbered ret at the violation"},
	{"../corpus/rejecting-user-leaves-ghost-data.txt", "a DATA word and its payload inside a frame"},
	{"testdata/picture/worked-example.txt", "kernel-fgraph.md section 1.6: two frames, bits {0,3}, two words of data for index 3"},
	{"testdata/regress/reserve-window-nested-v611.txt", "F = 4 (calltime), nested NMIs, the walk stopping at a clobbered word"},
	{"../corpus/kernel-irq-push-over-discarded-tail-frame-stale-retp.txt", "a remote action between pictures, a known finding"},
	{"../corpus/compiler-sinks-data-word-below-reserve-raise.txt", "a replayed commit order; the walk stops at a word the reorder left 0"},
}

func replayTrace(t *testing.T, path string) (*harness.Result, string) {
	t.Helper()
	f, _ := mustParse(t, path)
	res, err := harness.Replay(f, harness.RunOptions{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range res.Trace {
		b.WriteString(l + "\n")
	}
	for _, v := range res.Violations {
		fmt.Fprintf(&b, "=> violation %s\n", v)
	}
	return res, b.String()
}

// TestPictureGolden compares the replay traces of goldenTraces with the
// files in testdata/picture; -update rewrites them.
func TestPictureGolden(t *testing.T) {
	for _, g := range goldenTraces {
		name := strings.TrimSuffix(filepath.Base(g.path), ".txt")
		t.Run(name, func(t *testing.T) {
			_, got := replayTrace(t, g.path)
			golden := filepath.Join("testdata", "picture", name+".trace")
			if updating() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./harness -run Golden -update to create it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("trace of %s (%s) differs from %s (-want +got):\n%s\nIf the change is intended: go test ./harness -run Golden -update", g.path, g.reason, golden, d)
			}
		})
	}
}

// TestPictureWorkedExample checks the decoding of the section 1.6 stack row
// by row, independently of the text layout.
func TestPictureWorkedExample(t *testing.T) {
	res, _ := replayTrace(t, "testdata/picture/worked-example.txt")
	var p *harness.Picture
	for _, e := range res.Events {
		if e.Kind == harness.TracePicture && e.Text == "before irq 1" {
			p = e.Picture
		}
	}
	if p == nil || len(p.Stacks) != 1 {
		t.Fatalf("no picture of one stack before irq 1: %+v", p)
	}
	sp := p.Stacks[0]
	type row struct {
		Index        int
		Word         uint64
		Kind         string
		Frame, Owner int
		Curr         bool
	}
	var got []row
	for _, x := range sp.Rows {
		got = append(got, row{x.Index, x.Word, x.Kind.String(), x.Frame, x.Owner, x.Curr})
	}
	want := []row{
		{11, 0, "stale", -1, -1, true},
		{10, 0x1403, "BITMAP", 0, -1, false},
		{9, 0xffffc90000000008, "retp", 0, -1, false},
		{8, 0xffffffff82000200, "func", 0, -1, false},
		{7, 0xffffffff82000108, "ret", 0, -1, false},
		{6, 0x61806, "DATA", 1, 3, false},
		{5, 0xda30040001000001, "data", 1, 3, false},
		{4, 0xda30040001000000, "data", 1, 3, false},
		{3, 0x9403, "BITMAP", 1, -1, false},
		{2, 0xffffc90000000000, "retp", 1, -1, false},
		{1, 0xffffffff82000100, "func", 1, -1, false},
		{0, 0xffffffff82000004, "ret", 1, -1, false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("section 1.6 stack decoded wrong (-want +got):\n%s", d)
	}
	if sp.Curr != 11 || sp.Frames != 2 || sp.Walk != "" {
		t.Errorf("curr_ret_stack %d, %d frames, walk %q; want 11, 2 frames, a walk to word 0", sp.Curr, sp.Frames, sp.Walk)
	}
	if !sp.Rows[1].RuleAbove || !sp.Rows[5].RuleAbove || !sp.Rows[len(sp.Rows)-1].RuleBelow || sp.Rows[2].RuleAbove {
		t.Error("rules are not at the frame boundaries (above words 10 and 6, below word 0)")
	}
	if strings.Join(p.Array, " ") != "0=u0 1=u1 2=u2 3=u3" {
		t.Errorf("fgraph_array %q", p.Array)
	}
}

// TestTraceEvents checks that the text trace is derived from the events and
// that interrupts are bracketed by pictures.
func TestTraceEvents(t *testing.T) {
	res, _ := replayTrace(t, "../corpus/kernel-irq-push-over-discarded-tail-frame-stale-retp.txt")
	if d := cmp.Diff(res.Trace, harness.TraceText(res.Events)); d != "" {
		t.Errorf("Result.Trace is not TraceText(Result.Events):\n%s", d)
	}
	var kinds []string
	barriers := 0
	for i, e := range res.Events {
		switch e.Kind {
		case harness.TraceEnter, harness.TraceExit:
			kinds = append(kinds, fmt.Sprintf("%s %s %s", e.Kind, e.CtxKind, e.Ctx))
			if i+1 >= len(res.Events) || res.Events[i+1].Kind != harness.TracePicture {
				t.Errorf("event %d (%s) is not followed by a picture", i, e.Text)
			}
		case harness.TraceCommit:
			if e.Where == "" || e.Site == "" {
				t.Errorf("commit %q without address name or site", e.Text)
			}
		case harness.TraceBarrier:
			barriers++
		}
	}
	want := []string{"enter remote remote 1", "exit remote remote 1", "enter irq 2", "exit irq 2"}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("enter/exit events (-want +got):\n%s", d)
	}
	if barriers == 0 {
		t.Error("no barrier events")
	}
}

// TestPictureInCLIDoc keeps the picture quoted in docs/cli.md in step with
// the trace.
func TestPictureInCLIDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := replayTrace(t, "testdata/picture/worked-example.txt")
	for _, e := range res.Events {
		if e.Kind == harness.TracePicture && e.Text == "before irq 1" {
			block := strings.Join(e.Picture.Lines(), "\n")
			if !strings.Contains(string(doc), "```\n"+block+"\n```") {
				t.Errorf("docs/cli.md does not quote the current picture of worked-example.txt before irq 1:\n%s", block)
			}
			return
		}
	}
	t.Fatal("no picture before irq 1")
}
