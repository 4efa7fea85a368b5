package mutants

import (
	"fmt"
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

func TestScratchBaseline(t *testing.T) {
	for _, mi := range fgraph.Catalogue {
		sc := harness.Standard(fgraph.Latest)
		sc.Mutant = mi.Mutant
		t0 := time.Now()
		s, err := harness.Explore(sc, harness.ExploreOptions{StopAtFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		o, sched := "-", ""
		if s.First != nil {
			o = s.First.Violations[0].Oracle
			sched = harness.FormatSchedule(sc, s.First.Schedule)
		}
		fmt.Printf("%-18s ctl=%-5v runs=%6d %6.0fms %s\n%s", mi.Name, mi.Control, s.Runs, d.Seconds()*1000, o, sched)
	}
}
