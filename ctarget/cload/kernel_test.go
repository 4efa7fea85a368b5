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

func TestStdOnTheKernel(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	sc.Target = k
	sum, err := harness.Explore(sc, harness.ExploreOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d schedules, %d violations, known %v", k.Name(), sum.Runs, sum.Violations, sum.Known)
	if sum.First != nil {
		t.Logf("first violation: %v\n%v", sum.First.Violations, sum.First.Schedule)
	}
	t.Logf("unmapped: %v", k.In.Unmapped)
}
