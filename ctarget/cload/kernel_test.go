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

func kernel(t *testing.T, words int) *cload.Kernel { return cload.TestTree(t, words) }

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

// BenchmarkStdKernel explores the first 2,000 schedules of std on the
// compiled tree ($FGCHECK_KERNEL), per op; BenchmarkStdKernelCache the
// first 2,000 the state cache runs (it covers more).
func BenchmarkStdKernel(b *testing.B) {
	benchKernel(b, harness.ExploreOptions{Workers: 1, MaxRuns: 2000})
}

func BenchmarkStdKernelCache(b *testing.B) {
	benchKernel(b, harness.ExploreOptions{Workers: 1, MaxRuns: 2000, Cache: true})
}

func benchKernel(b *testing.B, opt harness.ExploreOptions) {
	dir := os.Getenv("FGCHECK_KERNEL")
	if dir == "" {
		b.Skip("no kernel tree: set FGCHECK_KERNEL")
	}
	k, err := cload.Open(dir, ctarget.Options{StackWords: 64})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sc := harness.Standard(fgraph.V612)
		sc.Target = k
		s, err := harness.Explore(sc, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Runs), "schedules/op")
	}
}
