package differential_test

import (
	"os"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget"
	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/differential"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func kernel(t *testing.T, words int) *cload.Kernel {
	t.Helper()
	dir := os.Getenv("FGCHECK_KERNEL")
	if dir == "" || !cload.Available {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: the differential needs FGCHECK_KERNEL (make kernel) and cgo")
		}
		t.Skip("no kernel tree: set FGCHECK_KERNEL (make kernel)")
	}
	k, err := cload.Open(dir, ctarget.Options{StackWords: words})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestStdV612(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	rep, err := differential.Run(sc, k, differential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *rep)
	for _, d := range rep.Divergences {
		t.Errorf("run %d %v:\n%s", d.Run, d.Schedule, d.What)
	}
}
