package harness

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestCapacityUnderInterrupts explores a stack that fills up
// (testdata/scenarios/capacity.txt: 40 words, three nested calls with
// 16-byte reservations) with IRQs and NMIs anywhere: pushes and
// reservations are refused and counted, never written past the limit
// (oracle 6), and the model's room accounting (entries in flight claim their
// words) agrees with the kernel's at every point.
func TestCapacityUnderInterrupts(t *testing.T) {
	f := parseTestFile(t, "testdata/scenarios/capacity.txt")
	for _, v := range []fgraph.Variant{fgraph.Latest, fgraph.V611} {
		sc := *f.Scenario
		sc.Variant = v
		s, err := Explore(&sc, ExploreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Violations != 0 || !s.Complete {
			t.Errorf("%s: %d violations (complete %v); first %v", v, s.Violations, s.Complete, s.First.Violations)
		}
	}
	// An IRQ after the third call finds the stack full: its push is
	// refused and counted.
	sc := *f.Scenario
	r, err := newRunner(&sc)
	if err != nil {
		t.Fatal(err)
	}
	res := r.run(NewReplay(&sc, Schedule{Events: []Event{{ID: 1, Kind: EvIRQ, In: "task0", At: Pos{fgraph.SiteOpStart, 4}}}}), RunOptions{})
	if res.Failed() || len(res.Schedule.Events) != 1 {
		t.Fatalf("replay: violations %v, events fired %d", res.Violations, len(res.Schedule.Events))
	}
	if got := r.m.Snapshot(0).Overrun; got != 1 {
		t.Errorf("trace_overrun = %d after an IRQ on a full stack, want 1", got)
	}
}
