package harness_test

import (
	"fmt"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// Exhaustively explore a small scenario: one IRQ anywhere in a task's two
// nested calls.
func ExampleExplore() {
	sc := &harness.Scenario{
		Name: "two-calls", Variant: fgraph.Latest, StackWords: 64,
		Users: []harness.User{{Name: "u0"}, {Name: "u1", DataBytes: 8}},
		Setup: []int{0, 1},
		Tasks: [][]harness.Op{{{Kind: harness.OpCall, Func: 1}, {Kind: harness.OpCall, Func: 2}, {Kind: harness.OpRet}, {Kind: harness.OpRet}}},
		IRQ:   []harness.Op{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpRet}},
		Bound: harness.Bound{K: 1, D: 1},
	}
	s, err := harness.Explore(sc, harness.ExploreOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("complete:", s.Complete, "violations:", s.Violations, "schedules > 1:", s.Runs > 1)
	// Output: complete: true violations: 0 schedules > 1: true
}

// Replay a schedule file: an IRQ lands after W2 and before the raise of
// curr_ret_stack, on a port whose push does not rewrite the frame after the
// raise (the M-push-2 mutant): the frame keeps the IRQ's return address, and
// the model-equivalence oracle sees it as soon as the call completes.
func ExampleReplay() {
	f, err := harness.ParseFile("example.txt", []byte(`fgcheck v1
scenario example
variant latest
layout frame=0 stack=64
mutant M-push-2
user u0 filter=* accept=* data=0
setup u0
task ops=(call 1, ret)
irq ops=(call 10, ret)
bound K=1 D=1 R=0 E=0
irq id=1 in=task0 at=push.w2#1
`))
	if err != nil {
		panic(err)
	}
	res, err := harness.Replay(f, harness.RunOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Violations[0].Oracle)
	// Output: model
}
