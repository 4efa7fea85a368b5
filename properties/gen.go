package properties

import (
	"fmt"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
	"pgregory.net/rapid"
)

// Functions of generated programs: tasks call 1..TaskFuncs, interrupts call
// 10, 11 and 20 (filters name them too).
const TaskFuncs = 6

var (
	filters = [][]int{nil, {1, 2}, {1, 3, 5}, {2, 4, 10, 20}, {3, 6, 11}}
	accepts = [][]int{nil, nil, {1, 2, 3}, {2, 4, 6, 10}, {5, 20}}
	irqs    = [][]harness.Op{
		nil,
		{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpRet}},
		{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpUnwind}, {Kind: harness.OpRet}},
		{{Kind: harness.OpCall, Func: 10}, {Kind: harness.OpCall, Func: 11}, {Kind: harness.OpRet}, {Kind: harness.OpRet}},
	}
	nmis = [][]harness.Op{
		nil,
		{{Kind: harness.OpCall, Func: 20}, {Kind: harness.OpRet}},
		{{Kind: harness.OpUnwind}},
	}
)

// UserGen draws a user: a filter, accept rule and data size from small
// tables, so that rejections, reservations and retrievals all happen.
func genUser(t *rapid.T, i int) harness.User {
	u := harness.User{Name: fmt.Sprintf("u%d", i)}
	u.Filter = filters[rapid.IntRange(0, len(filters)-1).Draw(t, u.Name+" filter")]
	u.Accept = accepts[rapid.IntRange(0, len(accepts)-1).Draw(t, u.Name+" accept")]
	u.DataBytes = 8 * rapid.IntRange(0, 3).Draw(t, u.Name+" data words")
	if u.DataBytes > 0 && rapid.IntRange(0, 3).Draw(t, u.Name+" reject after reserve") == 3 {
		u.RejectAfter = []int{3}
	}
	return u
}

// GenScenario draws the base scenario of a generated plan for variant v:
// one or two tasks, the interrupt programs, the stack size, options and a
// small bound. Its task programs are left empty: the plan's steps build
// them. The users and remote actions are std's (the triaged space), unless
// wide: then one to three users with drawn filters, accept rules and data
// sizes, some registered up front, and drawn remote actions.
func GenScenario(t *rapid.T, v fgraph.Variant, wide bool) (*harness.Scenario, int) {
	std := harness.Standard(v)
	sc := &harness.Scenario{Name: "rapid-sm", Variant: v, Users: std.Users, Setup: std.Setup, Remotes: std.Remotes}
	sc.StackWords = rapid.SampledFrom([]int{64, 40}).Draw(t, "stack words")
	tasks := rapid.IntRange(1, 2).Draw(t, "tasks")
	sc.Tasks = make([][]harness.Op, tasks)
	if wide {
		sc.Users, sc.Setup = nil, nil
		nu := rapid.IntRange(1, 3).Draw(t, "users")
		for i := 0; i < nu; i++ {
			sc.Users = append(sc.Users, genUser(t, i))
		}
		for i := 0; i < nu; i++ {
			if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("u%d not set up", i)) < 3 {
				sc.Setup = append(sc.Setup, i)
			}
		}
		sc.Remotes = genRemotes(t, sc, tasks, true)
	}
	sc.IRQ = irqs[rapid.IntRange(0, len(irqs)-1).Draw(t, "irq program")]
	sc.NMI = nmis[rapid.IntRange(0, len(nmis)-1).Draw(t, "nmi program")]
	sc.Bound = harness.Bound{
		K: rapid.IntRange(0, 2).Draw(t, "K"),
		D: rapid.IntRange(1, 2).Draw(t, "D"),
		R: rapid.IntRange(0, 1).Draw(t, "R"),
		E: rapid.IntRange(0, min(len(sc.Remotes), 1)).Draw(t, "E"),
	}
	if wide {
		sc.Bound.E = rapid.IntRange(0, len(sc.Remotes)).Draw(t, "E wide")
	}
	if v != fgraph.Seed {
		sc.Fixes.NoBit0 = rapid.IntRange(0, 3).Draw(t, "fix no-bit0") == 3
		sc.Fixes.GenCounter = rapid.IntRange(0, 3).Draw(t, "fix gen-counter") == 3
	}
	sc.Alias = rapid.IntRange(0, 3).Draw(t, "alias") == 3
	return sc, tasks
}

// genRemotes draws remote actions: unregister a set-up user, register one
// that is not set up, a tracer switch, and (if unwinds) a remote unwind.
func genRemotes(t *rapid.T, sc *harness.Scenario, tasks int, unwinds bool) []harness.Remote {
	var out []harness.Remote
	set := make([]bool, len(sc.Users))
	for _, u := range sc.Setup {
		set[u] = true
	}
	for u := range sc.Users {
		name := sc.Users[u].Name
		if set[u] {
			if rapid.Bool().Draw(t, "remote unregister "+name) {
				out = append(out, harness.Remote{Kind: harness.RemoteUnregister, User: u})
			}
		} else if rapid.Bool().Draw(t, "remote register "+name) {
			out = append(out, harness.Remote{Kind: harness.RemoteRegister, User: u})
		}
	}
	for u := range sc.Users {
		for w := range sc.Users {
			if set[u] && !set[w] && rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("remote replace u%d u%d", u, w)) == 3 {
				out = append(out, harness.Remote{Kind: harness.RemoteReplace, User: u, With: w})
			}
		}
	}
	if unwinds && rapid.IntRange(0, 2).Draw(t, "remote unwind") == 2 {
		out = append(out, harness.Remote{Kind: harness.RemoteUnwind, Task: rapid.IntRange(0, tasks-1).Draw(t, "unwind task")})
	}
	return out
}
