package harness

import "testing"

// TestFastReplaySound: the explorer with the replayed choice points' fast
// path (fastreplay.go) and without it gives the same schedule,
// choice-point, violation and known-finding counts, verdicts, sites
// interrupted and first violation, on the explorations of afterEventModes
// (std and peer-spin with every engine, a mutant, an interrupt that leaves
// no trace).
func TestFastReplaySound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.noFastReplay, "the fast path")
}

// TestFastReplayInInstancesSound: the fast path taken at the yields of a
// pending instance of the lazy engine but its last commit gives what the
// fast path kept out of every instance gave.
func TestFastReplayInInstancesSound(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	sameWithout(t, h, &h.fastAvoidsLazy, "the fast path inside pending instances")
}

// TestFastReplayCaught: a fast path that also takes the default option
// again at the last commit of a pending instance of the lazy engine skips
// the bookkeeping the slow path keeps there (lzStay narrows the region's
// live orders), and the comparison catches it on peer-spin with
// M-push-barrier1 (105,977 schedules and 12,028 violations instead of
// 103,528 and 9,639). Elsewhere in afterEventModes nothing it compares
// changes.
func TestFastReplayCaught(t *testing.T) {
	t.Parallel() // its hooks are its explorations' (hooks.go)
	h := new(testHooks)
	caughtWith(t, "peer-spin M-push-barrier1 lazy", h, &h.fastIgnoresLazy, "the fast path at an instance's last commit")
}
