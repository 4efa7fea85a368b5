//go:build cgo

package cload_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestUnmappedLines logs the fgraph.c lines whose accesses no site rule
// names (c.other), with their text, over std and the corpus's direct-mode
// scenario.
func TestUnmappedLines(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	sc.Target = k
	k.In.Trace = func(a ctarget.Access) {
		if a.Line == 0 || a.Class != ctarget.ClassRetStack {
			t.Logf("c.other: %+v", a)
		}
	}
	defer func() { k.In.Trace = nil }()
	if _, err := harness.Explore(sc, harness.ExploreOptions{Workers: 1, MaxRuns: 20000}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("../../corpus/kernel-register-switches-direct-mode-mid-entry.txt")
	f, err := harness.ParseFile("x.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	f.Scenario.Variant = fgraph.V612
	f.Scenario.Target = k
	if _, err := harness.Explore(f.Scenario, harness.ExploreOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(k.Tree.Path("kernel/trace/fgraph.c"))
	lines := strings.Split(string(src), "\n")
	var ls []int
	for l := range k.In.Unmapped {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	for _, l := range ls {
		text := ""
		if l > 0 && l <= len(lines) {
			text = strings.TrimSpace(lines[l-1])
		}
		t.Logf("fgraph.c:%d (%d keys): %s", l, k.In.Unmapped[l], text)
	}
}

func TestFuncOfLine(t *testing.T) {
	k := kernel(t, 64)
	for _, l := range []int{249, 269, 371, 564, 592, 642, 801, 1224} {
		t.Logf("%d: %s", l, k.In.FuncOfLine(l))
	}
}
