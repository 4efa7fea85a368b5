package fuzz

import (
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// withKernel makes o run every input on the tree at dir: FuzzSchedule on
// the compiled fgraph.c, as
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzSchedule$' -args -fuzz.kernel .cache/kernel/linux-source-6.12
//
// A crash of the compiled code ends the fuzz worker process; the Go fuzzer
// reports it and keeps the input like any other failure.
func withKernel(tb testing.TB, dir string, o *Options) {
	tb.Helper()
	k, err := cload.Open(dir, ctarget.Options{StackWords: 64})
	if err != nil {
		tb.Fatalf("-fuzz.kernel: %v", err)
	}
	o.Target, o.TargetVariant = k, fgraph.V612
}

// TestSeedsOnKernel runs FuzzSchedule's seed inputs (every shape, the
// three streams, and the corpus's schedules) on the tree of
// $FGCHECK_KERNEL: no violation beyond the known findings.
func TestSeedsOnKernel(t *testing.T) {
	k := cload.TestTree(t, 64)
	o := Options{Target: k, TargetVariant: fgraph.V612}
	var inputs [][]byte
	for shape := 0; shape < o.shapes(); shape++ {
		for _, stream := range [][]byte{nil, {0, 0, 0, 0xff, 0, 0, 0, 0, 0xfe, 1}, {0xff, 0xff, 0xc0, 0xff, 0xff, 0xff}} {
			inputs = append(inputs, append(Header(fgraph.Latest, shape, 6, o, 0), stream...))
		}
	}
	for _, b := range scheduleFiles(t) {
		file, err := harness.ParseFile("seed", b)
		if err != nil {
			continue
		}
		if in, err := ScheduleInput(file, 6); err == nil {
			inputs = append(inputs, in)
		}
	}
	for _, in := range inputs {
		file, res, err := FileFromInput(in, o)
		if err != nil {
			t.Fatal(err)
		}
		if file.Scenario.Target == nil || file.Scenario.Variant != fgraph.V612 {
			t.Fatalf("input %x did not run on the tree's v6.12", in)
		}
		if res.Failed() {
			t.Errorf("input %x on the kernel: %v\n%s", in, res.Violations[0], file.Format())
		}
	}
	t.Logf("%d inputs on %s", len(inputs), o.Target.Name())
}
