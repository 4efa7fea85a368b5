package differential_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fgcheck/fgcheck/ctarget/cload"
	"github.com/fgcheck/fgcheck/differential"
	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func kernel(t *testing.T, words int) *cload.Kernel { return cload.TestTree(t, words) }

// TestV612IsTheTree holds the port's v6.12 to the tree's compiled fgraph.c
// (CI: Debian's 6.12.117) on every schedule of std and of every corpus
// scenario (its mutant and fixes off) at its own bound: no divergence, and
// every schedule the C ran replays on the port. It also is the exploration
// of std on the real code: complete, no violation, and the findings that
// need no compiler reordering reproduce.
func TestV612IsTheTree(t *testing.T) {
	std := harness.Standard(fgraph.V612)
	k := kernel(t, std.Config().StackWords)
	scs := []*harness.Scenario{std}
	files, _ := filepath.Glob("../corpus/*.txt")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := harness.ParseFile(p, data)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, differential.Baseline(f.Scenario, filepath.Base(p), fgraph.V612))
	}
	for _, sc := range scs {
		if sc.Config().StackWords != std.Config().StackWords {
			t.Errorf("%s: stack of %d words; the test builds one object", sc.Name, sc.Config().StackWords)
			continue
		}
		rep, err := differential.Run(sc, k, differential.Options{})
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		t.Logf("%s: %d schedules, %d divergent, %d unreplayable, %d reordered; C: %d violations, known %v",
			sc.Name, rep.Runs, rep.Divergent, rep.Unreplayable, rep.Reordered, rep.CViolations, rep.CKnown)
		for _, d := range rep.Divergences {
			t.Errorf("%s: run %d %v:\n%s", sc.Name, d.Run, d.Schedule, d.What)
		}
		if rep.Unreplayable > 0 {
			t.Errorf("%s: %d schedules of the C reach positions the port does not (first %s)", sc.Name, rep.Unreplayable, rep.FirstUnplay)
		}
		if !rep.Complete || rep.CViolations != 0 {
			t.Errorf("%s: complete=%v, %d violations on the C", sc.Name, rep.Complete, rep.CViolations)
		}
		if sc == std {
			for _, want := range []string{"F1-bit0", "reserve-window", "inflight-ret-addr"} {
				if rep.CKnown[want] == 0 {
					t.Errorf("std: known finding %s does not reproduce on the kernel (known: %v)", want, rep.CKnown)
				}
			}
			if rep.CKnown["reserve-reorder"] != 0 {
				t.Errorf("std: reserve-reorder needs a reordering compiler; it cannot appear in GCC's order (%v)", rep.CKnown)
			}
		}
	}
}

// TestDivergenceIsFound: the differential must be able to fail. The port
// with a mutant that changes what a push stores (M-push-2: no rewrite after
// W3) is not the tree, and the first schedule where an interrupt lands
// between W3 and the rewrite says so.
func TestDivergenceIsFound(t *testing.T) {
	sc := harness.Standard(fgraph.V612)
	k := kernel(t, sc.Config().StackWords)
	sc.Mutant = fgraph.MPush2
	rep, err := differential.Run(sc, k, differential.Options{MaxRuns: 400})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Divergent == 0 || len(rep.Divergences) == 0 {
		t.Fatalf("the port with M-push-2 agreed with the tree on %d schedules", rep.Runs)
	}
	t.Logf("first divergence of M-push-2: run %d: %s", rep.Divergences[0].Run, rep.Divergences[0].What)
}
