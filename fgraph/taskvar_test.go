package fgraph

import (
	"slices"
	"testing"
)

// accepted lists the functions whose entry user k accepted, in log order.
func accepted(m *Machine, k int) []int {
	var out []int
	for _, r := range records(m.Log, RecEntry, k) {
		if r.Accepted {
			out = append(out, FuncOf(r.Func))
		}
	}
	return out
}

// TestTaskVarNotrace: fgraph_get_task_var() is the word
// SHADOW_STACK_TASK_VARS + gops->idx of current's stack, and the graph
// tracer keeps TRACE_GRAPH_NOTRACE there (trace_graph_entry/return since
// b84214890a9b, mask fixed by c8c9b1d2d5b4): on entry to a set_graph_notrace
// function it sets the flag and accepts, refuses every entry while the flag
// is set, and its retfunc clears it. The flag is per task: task1 is traced
// while task0 is inside the notrace function.
func TestTaskVarNotrace(t *testing.T) {
	for _, v := range []Variant{Latest, V611} {
		t.Run(v.String(), func(t *testing.T) {
			m := MustMachine(DefaultConfig(v))
			g := m.AddOps(&Ops{Name: "graph", Notrace: []int{2}})
			idx := mustRegister(t, m, g, 0)
			if a, want := m.fgraphGetTaskVar(idx), m.WordAddr(0, m.cfg.TaskVarBase()+idx); a != want {
				t.Fatalf("fgraph_get_task_var at %d, want %d (SHADOW_STACK_TASK_VARS + idx)", a, want)
			}
			m.Call(1, false)
			m.Call(2, false) // set_graph_notrace: sets the flag, accepted
			if m.TaskVar(0, idx) != TraceGraphNotrace {
				t.Fatalf("task var %#x after entering the notrace function, want TRACE_GRAPH_NOTRACE %#x", m.TaskVar(0, idx), TraceGraphNotrace)
			}
			if m.Call(3, false) {
				t.Errorf("f3 inside the notrace function was traced")
			}
			m.Current = 1
			if !m.Call(4, false) {
				t.Errorf("task1's f4 not traced: the flag is task0's")
			}
			m.Return()
			m.Current = 0
			m.Return() // f3 (not hijacked)
			m.Return() // f2: the retfunc clears the flag
			if m.TaskVar(0, idx) != 0 {
				t.Errorf("task var %#x after the notrace function returned", m.TaskVar(0, idx))
			}
			if !m.Call(5, false) {
				t.Errorf("f5 after the notrace function not traced")
			}
			if got, want := accepted(m, g.k), []int{1, 2, 4, 5}; !slices.Equal(got, want) {
				t.Errorf("accepted %v, want %v", got, want)
			}
		})
	}
}

// TestTaskVarNotraceClearedByBit0 documents what BIT(0) (F1) does to the
// graph tracer's notrace flag when the tracer holds index 0 and another
// user traces a function called inside a set_graph_notrace function: the
// other user's frame carries BIT(0), so trace_graph_return() runs for it,
// finds the flag set and clears it, and the rest of the notrace function is
// traced by the graph tracer. The no-bit0 fix keeps the flag.
func TestTaskVarNotraceClearedByBit0(t *testing.T) {
	for _, fix := range []bool{false, true} {
		c := DefaultConfig(Latest)
		c.NoBit0 = fix
		m := MustMachine(c)
		g := m.AddOps(&Ops{Name: "graph", Notrace: []int{2}})
		o := m.AddOps(&Ops{Name: "other"})
		mustRegister(t, m, g, 0)
		mustRegister(t, m, o, 1)
		m.Call(2, false) // g: notrace flag set
		m.Call(3, false) // g refuses, other accepts: bitmap {1} (| BIT(0))
		m.Return()       // f3's return: with BIT(0), g's retfunc clears the flag
		m.Call(4, false) // still inside f2
		m.Return()
		m.Return()
		got := accepted(m, g.k)
		want := []int{2, 4}
		if fix {
			want = []int{2}
		}
		if !slices.Equal(got, want) {
			t.Errorf("no-bit0=%v: graph tracer accepted %v, want %v", fix, got, want)
		}
	}
}

// TestRetrieveParentData: fgraph_retrieve_parent_data(idx, &size, depth)
// from a retfunc, as the profiler's profile_graph_return() calls it with
// depth 1 (a312a0f7834e): depth d walks d frames down with get_ret_stack(),
// whichever users accepted them, and returns idx's payload of that frame,
// or NULL when that frame has none or there is no such frame.
func TestRetrieveParentData(t *testing.T) {
	for _, depth := range []int{1, 2, 3} {
		m := MustMachine(DefaultConfig(Latest))
		p := m.AddOps(&Ops{Name: "profiler", DataBytes: 16, Accept: []int{1, 3}, ParentDepth: depth})
		o := m.AddOps(&Ops{Name: "other"})
		mustRegister(t, m, p, 0)
		mustRegister(t, m, o, 1)
		m.Call(1, false) // p reserves
		m.Call(2, false) // only other accepts: no data of p
		m.Call(3, false) // p reserves
		retp1, retp2 := m.SlotAt(0, 0).Retp, m.SlotAt(0, 1).Retp
		m.Return() // f3: p's retfunc reads its parent data
		var rec *Record
		for i, r := range m.Log {
			if r.Kind == RecReturn && r.Ops == p.k && r.Func == FuncAddr(3) {
				rec = &m.Log[i]
			}
		}
		if rec == nil {
			t.Fatalf("depth %d: no retfunc of the profiler for f3", depth)
		}
		switch depth {
		case 1: // f2: accepted only by other, no payload of p
			if rec.Parent != nil {
				t.Errorf("depth 1: got %x, want NULL (f2 holds no data of idx 0)", rec.Parent)
			}
			_ = retp2
		case 2: // f1: p's own payload, written at f1's entry
			want := []Word{Pattern(p.k, p.gen, 1, retp1, 0), Pattern(p.k, p.gen, 1, retp1, 1)}
			if len(rec.Parent) != 2 || rec.Parent[0] != want[0] || rec.Parent[1] != want[1] {
				t.Errorf("depth 2: got %x, want f1's payload %x", rec.Parent, want)
			}
		case 3: // below the bottom frame
			if rec.Parent != nil {
				t.Errorf("depth 3: got %x, want NULL (no such frame)", rec.Parent)
			}
		}
		if len(m.Warnings) != 0 {
			t.Errorf("depth %d: warnings %v", depth, m.Warnings)
		}
	}
}
