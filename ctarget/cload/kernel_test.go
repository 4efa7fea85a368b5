//go:build cgo

package cload_test

import (
	"os"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func kernel(t *testing.T, words int) *cload.Kernel {
	t.Helper()
	dir := os.Getenv("FGCHECK_KERNEL")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: FGCHECK_KERNEL is not set (make kernel extracts Debian's linux-source-6.12)")
		}
		t.Skip("no kernel tree: set FGCHECK_KERNEL (make kernel)")
	}
	k, err := cload.Open(dir, ctarget.Options{StackWords: words})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestStdOnTheKernel explores std on the tree's compiled fgraph.c: every
// schedule, no violation beyond the known findings, and the findings that
// need no compiler reordering (the C runs in the order GCC chose) are
// there: reserve-window and inflight-ret-addr reproduce on the real code.
func TestStdOnTheKernel(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	sc.Target = k
	sum, err := harness.Explore(sc, harness.ExploreOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d schedules, %d violations, known %v, unmapped lines %v", k.Name(), sum.Runs, sum.Violations, sum.Known, k.In.Unmapped)
	if sum.First != nil {
		t.Errorf("violation on the kernel: %v\n%v", sum.First.Violations, sum.First.Schedule)
	}
	if !sum.Complete || sum.Runs < 10000 {
		t.Errorf("explored %d schedules, complete=%v", sum.Runs, sum.Complete)
	}
	for _, want := range []string{"F1-bit0", "reserve-window", "inflight-ret-addr"} {
		if sum.Known[want] == 0 {
			t.Errorf("known finding %s does not reproduce on the kernel (known: %v)", want, sum.Known)
		}
	}
	if sum.Known["reserve-reorder"] != 0 {
		t.Errorf("reserve-reorder needs a reordering compiler: it cannot appear in GCC's order (%v)", sum.Known)
	}
}

// TestLayoutFromTheTree checks that the compiled frame is the tree's:
// struct ftrace_ret_stack of 6.12 without the profiler is ret, func,
// calltime, retp (F = 4), and curr_ret_stack is an int.
func TestLayoutFromTheTree(t *testing.T) {
	k := kernel(t, 64)
	l := k.In.Layout()
	if l.FrameBytes != 32 || l.Ret != 0 || l.Func != 8 || l.Calltime != 16 || l.Retp != 24 || l.Subtime != -1 {
		t.Errorf("layout %+v, want 6.12's ret, func, calltime, retp", l)
	}
	if l.CurrBytes != 4 || l.PageSize != 512 || l.NoDirect {
		t.Errorf("layout %+v: want a 4-byte curr_ret_stack, PAGE_SIZE 512 for 64 words, direct calls (x86-64)", l)
	}
	if len(k.Obj.Sha256) != 64 {
		t.Errorf("sha256 %q", k.Obj.Sha256)
	}
}
