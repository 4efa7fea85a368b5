package harness

import (
	"slices"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestKnownCandidates: known() tries, for a report of oracle o on
// variant v, only knownCandidates(v)[o]: every known finding of v whose
// oracle, or one of its Also, is o, in KnownFindings' order (the first
// that matches names the report). Held here to the whole list filtered
// by hand for every variant and oracle; a finding left out would turn
// its reports into violations, one put first would rename another's.
func TestKnownCandidates(t *testing.T) {
	total := 0
	for _, v := range []fgraph.Variant{fgraph.Latest, fgraph.V611, fgraph.Seed, fgraph.V612} {
		by := knownCandidates(v)
		if len(by) != len(Oracles) {
			t.Fatalf("%v: %d oracles' lists, want %d", v, len(by), len(Oracles))
		}
		for o, name := range Oracles {
			var want []string
			for _, k := range KnownFindings {
				if slices.Contains(k.Variants, v) && (k.Oracle == name || slices.Contains(k.Also, name)) {
					want = append(want, k.Name)
				}
			}
			var got []string
			for _, k := range by[o] {
				got = append(got, k.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v, oracle %s: candidates %q, want %q", v, name, got, want)
			}
			total += len(got)
		}
	}
	if total == 0 {
		t.Fatal("no candidate for any variant and oracle")
	}
}
