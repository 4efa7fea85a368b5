package harness

import "github.com/fgcheck/fgcheck/fgraph"

// Standard returns the `std` scenario for a variant: the project's benchmark
// bound, written down in docs/std.md. Do not change it silently.
//
//   - users: u0 filters {1,2,3,10,20} and takes no data; u1 traces every
//     function and reserves 8 bytes it checks on return, except for f3,
//     where it reserves and then rejects (the kernel must discard it); u2
//     (not set up) traces every function, and its entryfunc calls the
//     traced f6 (the recursion lock lets that call through once, on
//     TRACE_CTX_TRANSITION, and refuses the one it makes in turn).
//   - task0: call 1, call 2, call 3, ret, ret, ret (depth 3), with a sleep
//     inside f2 that lets task1 run, and f3 tail-calling f5 (u0 hijacks
//     f3, u1 f5: two frames share one return slot); task1: call 4, ret.
//   - IRQ: a traced call of f10 (both users, u1 reserves), an unwinder
//     walk, return. NMI (inside the IRQ): a traced call of f20 and return.
//   - remote: unregister u1 (u0 is left alone: direct mode), and replace
//     u0 by u2 (a tracer switch: unregister then register).
//   - bound: K=2 (interrupts), D=2 (IRQ + NMI), R=1, E=1, and at most C=2
//     non-default choices per run (docs/std.md says why).
func Standard(v fgraph.Variant) *Scenario {
	return &Scenario{
		Name:       "std",
		Variant:    v,
		StackWords: 64,
		Users: []User{
			{Name: "u0", Filter: []int{1, 2, 3, 10, 20}, DataBytes: 24, ParentDepth: 1},
			{Name: "u1", DataBytes: 8, RejectAfter: []int{3}},
			{Name: "u2", CallInEntry: 6},
		},
		Setup: []int{0, 1},
		Tasks: [][]Op{
			{{OpCall, 1}, {OpCall, 2}, {OpSleep, 0}, {OpCall, 3}, {OpTail, 5}, {OpRet, 0}, {OpRet, 0}, {OpRet, 0}},
			{{OpCall, 4}, {OpRet, 0}},
		},
		IRQ:     []Op{{OpCall, 10}, {OpUnwind, 0}, {OpRet, 0}},
		NMI:     []Op{{OpCall, 20}, {OpRet, 0}},
		Remotes: []Remote{{Kind: RemoteUnregister, User: 1}, {Kind: RemoteReplace, User: 0, With: 2}, {Kind: RemoteUnwind, Task: 0}},
		Bound:   Bound{K: 2, D: 2, R: 1, E: 1, C: 2},
	}
}

// PeerSpin is the `peer-spin` scenario, the same problem a hand-written
// Promela model checks with SPIN (DESIGN.md "Speed"): one task calling
// f1 -> f2 -> f3 and returning, user 0 accepting everything with no data,
// user 1 accepting everything and reserving 8 bytes it checks on return, an
// interrupt of one traced call and return, K=2, D=2, R=1, E=0, interrupts
// only at store commits.
func PeerSpin(v fgraph.Variant) *Scenario {
	return &Scenario{
		Name:       "peer-spin",
		Variant:    v,
		StackWords: 64,
		Users:      []User{{Name: "u0"}, {Name: "u1", DataBytes: 8}},
		Setup:      []int{0, 1},
		Tasks:      [][]Op{{{OpCall, 1}, {OpCall, 2}, {OpCall, 3}, {OpRet, 0}, {OpRet, 0}, {OpRet, 0}}},
		IRQ:        []Op{{OpCall, 10}, {OpRet, 0}},
		NMI:        []Op{{OpCall, 20}, {OpRet, 0}},
		Bound:      Bound{K: 2, D: 2, R: 1, E: 0},
		StoresOnly: true,
	}
}
