package harness

import (
	"testing"
)

// TestDigestReplaySound: the cached explorer with the input digests off on
// replay (digest.go) and with them on in every run gives the same
// schedule, choice-point, violation and known-finding counts, verdicts,
// sites interrupted and first violation, on the explorations of
// afterEventModes (std and peer-spin with every engine, a mutant, an
// interrupt that leaves no trace). TestCacheSound holds the explorer to
// the plain one on every catalogue mutant.
func TestDigestReplaySound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.noDigestReplay, "keeping the digests from the changed choice point on only")
}

// TestDigestReplayCaught: a replay that leaves the digests as they are at
// the changed choice point (missing every input of the prefix) merges
// states whose contexts read different things, and the comparison catches
// it on each problem below. What it changes there is the count of choice
// points (std: 15,024,598 instead of 15,024,650): the input digests tell
// apart few states that memory, the model and the contexts' positions do
// not (docs/state-cache.md), and in the other explorations of
// afterEventModes (peer-spin, std without merged placements) nothing the
// comparison sees changes.
func TestDigestReplayCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	for _, name := range []string{"std merged", "M-push-barrier1 merged"} {
		h := new(testHooks)
		caughtWith(t, name, h, &h.digestNotPutBack, "digests not put back")
	}
}
