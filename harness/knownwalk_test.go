package harness

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// knownWalkScenarios are the explorations the kept walks are tested on:
// std, peer-spin and each with every catalogue mutant (lazyScenarios),
// and peer-spin at K=3, where most of the kept walks are.
func knownWalkScenarios() []*Scenario {
	k3 := PeerSpin(fgraph.Latest)
	k3.Name, k3.Bound.K = "peer-spin K=3", 3
	return append(lazyScenarios(), k3)
}

// knownWalkOpts are the CLI's engines for sc, every violation counted.
func knownWalkOpts(sc *Scenario) ExploreOptions {
	opt := ExploreOptions{Cache: true, RunOptions: RunOptions{KeepGoing: true}}
	if strings.HasPrefix(sc.Name, "peer-spin") {
		opt.LazyOrders = true
	} else {
		opt.MergeRemotes = true
	}
	return opt
}

// TestKnownWalksSound: explorations with the kept walks and without give
// the same result (counts, verdicts, known findings, first violation,
// coverage) on std, peer-spin and every catalogue mutant, and the kept
// walks are used. (Peer-spin with M-push-barrier2 or M-push-2, every
// violation counted, takes 40 s an exploration: those two are left to
// TestKnownWalksVerified, which checks every hit of theirs.)
func TestKnownWalksSound(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant twice")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	var hits atomic.Int64
	for _, sc := range knownWalkScenarios() {
		if sc.Name == "peer-spin.M-push-barrier2" || sc.Name == "peer-spin.M-push-2" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			opt := knownWalkOpts(sc)
			off := exploredFull(t, sc, hooked(opt, &testHooks{knownWalksOff: true}))
			if on := exploredFull(t, sc, hooked(opt, &testHooks{knownWalksHits: &hits})); on != off {
				t.Errorf("the kept walks change the result:\nwithout:\n%s\nwith:\n%s", off, on)
			}
		})
	}
	if n := hits.Load(); n < 10000 {
		t.Errorf("%d in-place walks replayed from kept ones: too few to tell", n)
	} else {
		t.Logf("%d in-place walks replayed from kept ones", n)
	}
}

// TestKnownWalksVerified runs the walk behind every hit of the kept walks
// (knownWalksVerify) on the same explorations and requires it to report
// what the kept one did: the same oracles, messages and known findings,
// and as many violations counted. (The explorations run in parallel: the
// test is the package's longest.)
func TestKnownWalksVerified(t *testing.T) {
	if testing.Short() {
		t.Skip("explores std, peer-spin and every mutant")
	}
	t.Parallel() // its hooks are its explorations' (hooks.go)
	var n atomic.Int64
	t.Run("scenarios", func(t *testing.T) {
		for _, sc := range knownWalkScenarios() {
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				h := &testHooks{knownWalksVerify: true, knownWalksVerified: &n}
				if _, err := Explore(sc, hooked(knownWalkOpts(sc), h)); err != nil {
					t.Error(err)
				}
			})
		}
	})
	if n.Load() < 10000 {
		t.Errorf("%d hits verified: too few to tell", n.Load())
	} else {
		t.Logf("%d hits verified", n.Load())
	}
}

// TestKnownWalksCaught: kept walks looked up without what the findings'
// matchers and their counterfactuals read besides the walk's own words
// (knownInputs) hand a walk another's outcome, and verification sees it.
func TestKnownWalksCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	k3 := PeerSpin(fgraph.Latest)
	k3.Bound.K = 3
	_, err := Explore(k3, hooked(knownWalkOpts(k3), &testHooks{knownWalksVerify: true, knownWalksDrop: "inputs"}))
	if err == nil {
		t.Fatal("a digest without the matchers' inputs went unnoticed")
	}
	if !strings.Contains(err.Error(), "kept in-place walks") {
		t.Fatalf("caught, but not by the verification: %v", err)
	}
	t.Logf("caught: %.200s", err)
}
