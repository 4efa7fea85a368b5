package properties

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
	"github.com/fgcheck/fgcheck/harness"
)

// killBudget is the fixed number of checks (rapid) and tests (gopter) the
// properties get to kill each named mutant on std, from fixed seeds.
const (
	killBudget = 200
	killSeed   = 1
)

// killTargets are the mutants the stateful properties must kill on std:
// orderings of push, reservation and pop, a historical fix (F5-idx) and
// three that need an injected interrupt or remote action (M-reserve-3, F4,
// F14). The engine comparison (docs/engines.md) shows each dies within a
// few checks; the budget leaves a wide margin.
var killTargets = []string{"M-push-1", "M-ret-1", "M-ret-off", "M-bitmap-top", "F5-idx", "M-reserve-1", "M-reserve-3", "F4", "F14"}

// propertyEngines are the stateful properties under their fixed budgets.
var propertyEngines = []struct {
	name string
	run  func(sc *harness.Scenario) kill
}{
	{"rapid", func(sc *harness.Scenario) kill { return rapidKill(sc, killBudget, killSeed) }},
	{"rapid-sm", func(sc *harness.Scenario) kill { return rapidMachineKill(sc, killBudget, killSeed) }},
	{"gopter", func(sc *harness.Scenario) kill { return gopterKill(sc, killBudget, killSeed) }},
}

// TestPropertiesKillMutants: within killBudget checks from a fixed seed,
// rapid (the schedule property and the state machine) and gopter each
// kill every mutant of killTargets on std.
func TestPropertiesKillMutants(t *testing.T) {
	for _, e := range propertyEngines {
		t.Run(e.name, func(t *testing.T) {
			killed := 0
			for _, name := range killTargets {
				mi, err := fgraph.LookupMutant(name)
				if err != nil {
					t.Fatal(err)
				}
				k := e.run(withMutant(harness.Standard(fgraph.Latest), mi.Mutant))
				if !k.Killed {
					t.Errorf("%s survived %d checks (%d runs) from seed %d", name, k.Checks, k.Runs, killSeed)
					continue
				}
				killed++
				t.Logf("%-13s killed at check %d (run %d): %s", name, k.Checks, k.Runs, k.Msg)
			}
			if killed < 5 {
				t.Errorf("%s killed %d named mutants, want at least 5", e.name, killed)
			}
		})
	}
}

// TestPropertiesBaselinesClean: with the same budget and seed, none of
// the properties reports a violation (beyond the known findings) on std
// or peer-spin of a baseline variant.
func TestPropertiesBaselinesClean(t *testing.T) {
	for _, e := range propertyEngines {
		for _, v := range variants {
			for _, sc := range fixedScenarios(v) {
				t.Run(e.name+"/"+scenarioName(sc), func(t *testing.T) {
					if k := e.run(sc); k.Killed {
						t.Errorf("violation at check %d (run %d): %s", k.Checks, k.Runs, k.Msg)
					}
				})
			}
		}
	}
}
