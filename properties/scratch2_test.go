package properties

import (
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func TestScratch2(t *testing.T) {
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			continue
		}
		sc := harness.Standard(fgraph.Latest)
		sc.Mutant = mi.Mutant
		st := time.Now()
		s, err := harness.Explore(sc, harness.ExploreOptions{StopAtFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-18s exh runs=%d viol=%d %v", mi.Name, s.Runs, s.Violations, time.Since(st))
		st = time.Now()
		s, _ = harness.Sample(sc, 1, 20000, "pct", harness.ExploreOptions{StopAtFirst: true})
		t.Logf("%-18s pct runs=%d viol=%d %v", mi.Name, s.Runs, s.Violations, time.Since(st))
	}
	st := time.Now()
	s, _ := harness.Explore(harness.Standard(fgraph.Latest), harness.ExploreOptions{})
	t.Logf("std latest full: runs=%d viol=%d %v", s.Runs, s.Violations, time.Since(st))
}
