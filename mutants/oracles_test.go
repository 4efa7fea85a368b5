package mutants

import (
	"sort"
	"strings"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// TestEveryOracleKills fails if an oracle kills no mutant of the catalogue
// in std (latest, the kernel's readers): each non-control mutant runs a
// fixed sample of std's schedules (the uniform random walk, seed 1, and the
// first schedules of the DFS) with every violation recorded, and every
// oracle must report a violation (not a known finding) for at least one
// mutant. The kill counts per oracle are logged.
func TestEveryOracleKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sample of std for every mutant")
	}
	kills := map[string][]string{}
	for _, mi := range fgraph.Catalogue {
		if mi.Control {
			continue
		}
		sc := Scenario(mi, fgraph.Latest)
		seen := map[string]bool{}
		onRun := func(r *harness.Result) {
			for _, v := range r.Violations {
				seen[v.Oracle] = true
			}
		}
		opt := harness.ExploreOptions{Workers: 1, RunOptions: harness.RunOptions{KeepGoing: true}, OnRun: onRun}
		if _, err := harness.Sample(sc, 1, 1500, "random", opt); err != nil {
			t.Fatal(err)
		}
		opt.MaxRuns = 6000
		if _, err := harness.Explore(sc, opt); err != nil {
			t.Fatal(err)
		}
		for o := range seen {
			kills[o] = append(kills[o], mi.Name)
		}
	}
	for _, o := range harness.Oracles {
		ms := kills[o]
		sort.Strings(ms)
		t.Logf("%-12s kills %2d: %s", o, len(ms), strings.Join(ms, " "))
		if len(ms) == 0 {
			t.Errorf("oracle %s kills no mutant of the catalogue at std", o)
		}
	}
}
