package properties

import (
	"testing"
	"time"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

type cnt struct{ n, yields, orders int }

func (c *cnt) Choose(p *harness.Point, opts []harness.Option) int {
	c.n++
	if p.Kind == harness.PointOrder {
		c.orders++
	} else {
		c.yields++
	}
	return 0
}

func TestScratch(t *testing.T) {
	for _, v := range []fgraph.Variant{fgraph.Latest, fgraph.V611, fgraph.Seed} {
		for _, sc := range []*harness.Scenario{harness.Standard(v), harness.PeerSpin(v)} {
			c := &cnt{}
			st := time.Now()
			res, err := harness.Run(sc, c, harness.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %v: points=%d yields=%d orders=%d viol=%v known=%v %v", sc.Name, v, res.Points, c.yields, c.orders, res.Violations, len(res.Known), time.Since(st))
			st = time.Now()
			s, _ := harness.Sample(sc, 1, 2000, "random", harness.ExploreOptions{})
			t.Logf("  random 2000: %v viol=%d known=%v", time.Since(st), s.Violations, s.Known)
		}
	}
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			continue
		}
		sc := harness.Standard(fgraph.Latest)
		sc.Mutant = mi.Mutant
		st := time.Now()
		s, err := harness.Sample(sc, 1, 20000, "random", harness.ExploreOptions{StopAtFirst: true})
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if s.First != nil {
			msg = s.First.Violations[0].String()
		}
		t.Logf("%-18s random runs=%d viol=%d %v %s", mi.Name, s.Runs, s.Violations, time.Since(st), msg)
	}
}
