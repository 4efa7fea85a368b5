//go:build cgo

package cload_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestEveryAccessIsNamed: over std and the corpus's direct-mode scenario,
// the only accesses of the compiled code that no port site names are the
// loads of the task's ret_stack pointer (the port indexes the words
// directly) and the static calls' region boundaries. Every store, every
// barrier and every load of shared state has the port's site.
func TestEveryAccessIsNamed(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	sc.Target = k
	k.In.Trace = func(a ctarget.Access) {
		if a.Class == ctarget.ClassRetStack && !a.Store && a.Fence < 0 {
			return
		}
		if a.Fence == ctarget.FenceCallIn || a.Fence == ctarget.FenceCallOut {
			return
		}
		t.Errorf("unnamed access of the compiled code: %+v", a)
	}
	defer func() { k.In.Trace = nil }()
	if _, err := harness.Explore(sc, harness.ExploreOptions{Workers: 1, MaxRuns: 8000}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../corpus/kernel-register-switches-direct-mode-mid-entry.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, err := harness.ParseFile("x.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	f.Scenario.Variant = fgraph.V612
	f.Scenario.Target = k
	if _, err := harness.Explore(f.Scenario, harness.ExploreOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestLinesAndFunctions: the DWARF line table and subprograms place the
// statements the site rules rely on in the functions they are in.
func TestLinesAndFunctions(t *testing.T) {
	k := kernel(t, 64)
	src, err := os.ReadFile(k.Tree.Path(ctarget.FgraphC))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, tc := range []struct{ text, fn string }{
		{"WRITE_ONCE(current->curr_ret_stack, offset + 1);", "ftrace_push_return_trace"},
		{"current->curr_ret_stack = save_curr_ret_stack;", "function_graph_enter"},
		{"current->curr_ret_stack = offset - FGRAPH_FRAME_OFFSET;", "__ftrace_return_to_handler"},
		{"current->ret_stack[curr_ret_stack - 1] = val;", "fgraph_reserve_data"},
		{"if (ret_stack->retp == retp &&", "ftrace_graph_ret_addr"},
	} {
		found := false
		for i, l := range lines {
			if strings.TrimSpace(l) == tc.text {
				found = true
				if got := k.In.FuncOfLine(i + 1); got != tc.fn {
					t.Errorf("fgraph.c:%d %q is in %s, want %s", i+1, tc.text, got, tc.fn)
				}
			}
		}
		if !found {
			t.Errorf("the tree's fgraph.c has no line %q", tc.text)
		}
	}
}
