package harness

import "testing"

// TestExitWithLiveCall: a task that exits inside a traced call has no
// shadow stack any more; no oracle asks fgraph about its frames (it
// reported a ret-addr violation on every variant before).
func TestExitWithLiveCall(t *testing.T) {
	f, err := ParseFile("exit.txt", []byte("fgcheck v1\nscenario exit1\nvariant latest\nlayout frame=0 stack=64\n"+
		"user u0 filter=* accept=* data=0\nsetup u0\ntask ops=(call 1, exit)\nbound K=0 D=0 R=0 E=0\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Explore(f.Scenario, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Violations != 0 || sum.Runs != 1 {
		t.Errorf("%d schedules, %d violations (first: %v), want none", sum.Runs, sum.Violations, sum.First)
	}
}
