package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const limitsHead = "fgcheck v1\nscenario s\nvariant latest\nuser u0\nsetup u0\nbound K=1 D=1 R=0 E=0\n"

// events is n event lines, ids 1..n.
func events(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "irq id=%d in=task0 at=push.w3#%d\n", i, i)
	}
	return b.String()
}

// longOps is about n ops of a program: depth open calls, then call/ret
// pairs (depth+1 deep), then the closing rets.
func longOps(n, depth int) string {
	var b []string
	for i := 0; i < depth; i++ {
		b = append(b, "call 1")
	}
	for len(b)+depth+2 <= n {
		b = append(b, "call 2", "ret")
	}
	for i := 0; i < depth; i++ {
		b = append(b, "ret")
	}
	return strings.Join(b, ", ")
}

func TestSizeLimits(t *testing.T) {
	big := strings.Repeat("x", 60<<10)
	tests := []struct {
		name, text, want string
	}{
		{"file", limitsHead + strings.Repeat("# padding\n", MaxFileBytes/10+1), "f:1:1: file larger than 1048576 bytes"},
		{"line", limitsHead + "task ops=(" + strings.Repeat("ret, ", 14000) + ")\n", fmt.Sprintf("f:7:%d: line longer than 65536 bytes", MaxLineBytes+1)},
		{"ops", limitsHead + "task ops=(" + strings.Repeat("call 1, ", MaxProgramOps) + "exit)\n", "program of more than 4096 ops"},
		{"depth", limitsHead + "task ops=(" + strings.Repeat("call 1, ", MaxCallDepth+1) + "exit)\n", "f:7:2059: task 0: op 257: more than 256 open calls"},
		{"tasks", limitsHead + strings.Repeat("task ops=(call 1, ret)\n", MaxTasks+1), "f:15:1: too many tasks: at most 8"},
		{"events", limitsHead + "task ops=(call 1, ret)\nirq ops=(call 10, ret)\n" + events(MaxEventLines+1), "f:1033:1: more than 1024 event lines"},
		{"quote", limitsHead + big + "\n", `f:7:1: unknown directive "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."`},
	}
	for _, tt := range tests {
		_, err := ParseFile("f", []byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %.200v, want %q", tt.name, err, tt.want)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("%s: a message of %d bytes", tt.name, len(err.Error()))
		}
	}
	// At the limits, accepted.
	ok := limitsHead + "task ops=(" + longOps(MaxProgramOps, MaxCallDepth-1) + ")\n"
	if _, err := ParseFile("f", []byte(ok)); err != nil {
		t.Errorf("a program of %d ops, %d deep: %v", MaxProgramOps, MaxCallDepth, err)
	}
}

func TestShortQuotesKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", 30) // 60 bytes
	got := shortQuotes("%s %q %d %%q %q", []any{"plain", s, 3, "short"})
	if got[0] != "plain" || got[2] != 3 || got[3] != "short" {
		t.Errorf("only %%q arguments change: %v", got)
	}
	if q := got[1].(string); q != strings.Repeat("é", 20)+"..." {
		t.Errorf("cut to %q", q)
	}
}

func TestReadInputStopsAtTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30) // a sparse 1 GiB file: read in full, this test would take seconds and 1 GiB
	f.Close()
	if _, err := ReadInput(p); err == nil || !IsTooLarge(err) || !strings.HasPrefix(err.Error(), p+":1:1: ") {
		t.Errorf("error %v", err)
	}
	if _, err := ReadInput(filepath.Dir(p)); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
}

// BenchmarkLongProgram: the cost of one run against the program's length,
// at the deepest nesting allowed (per op: ns/op divided by the ops).
func BenchmarkLongProgram(b *testing.B) {
	for _, n := range []int{1024, 2048, 4096} {
		text := limitsHead + "task ops=(" + longOps(n, MaxCallDepth-1) + ")\nirq ops=(call 10, unwind, ret)\n"
		f, err := ParseFile("f", []byte(text))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			r, err := newRunner(f.Scenario)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				if res := r.run(noChoice{}, RunOptions{}); res.Failed() {
					b.Fatal(res.Violations)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/program-op")
		})
	}
}

// TestTraceKeepsHeadAndTail: past MaxTraceEvents a traced run keeps the
// first half and the latest half of its events, in order, with a note of
// how many it left out between them.
func TestTraceKeepsHeadAndTail(t *testing.T) {
	for _, n := range []int{10, MaxTraceEvents, MaxTraceEvents + 1, 3*MaxTraceEvents + 7} {
		tr := &tracer{}
		for i := 0; i < n; i++ {
			tr.add(TraceEvent{Addr: i})
			if tr.last().Addr != i {
				t.Fatalf("n=%d: last() is event %d after adding %d", n, tr.last().Addr, i)
			}
		}
		all := tr.all()
		if n <= MaxTraceEvents {
			if len(all) != n || all[n-1].Addr != n-1 {
				t.Errorf("n=%d: kept %d events", n, len(all))
			}
			continue
		}
		head := MaxTraceEvents / 2
		if len(all) != MaxTraceEvents+1 {
			t.Fatalf("n=%d: kept %d events, want %d and the note", n, len(all), MaxTraceEvents)
		}
		want := fmt.Sprintf("... %d events left out", n-MaxTraceEvents)
		if all[head].Kind != TraceNote || !strings.HasPrefix(all[head].Text, want) {
			t.Errorf("n=%d: note %q, want %q", n, all[head].Text, want)
		}
		for i, e := range all {
			w := i
			if i == head {
				continue
			} else if i > head {
				w = n - (MaxTraceEvents - head) + (i - head - 1)
			}
			if e.Addr != w {
				t.Fatalf("n=%d: kept event %d is %d, want %d", n, i, e.Addr, w)
			}
		}
	}
}
