package harness

import (
	"fmt"
	"math/bits"
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

// TestMixAvalanche: flipping any one bit of the word folded in, or of
// the digest it is folded into, changes about half the bits of mix's
// result, on average over a thousand digests and never fewer than a
// tenth: the 64-bit digests merge two histories with probability about
// 2⁻⁶⁴ (docs/state-cache.md, "Hashes and memory") only if no bit of an
// input is lost or kept apart. Two weak folds are rejected by the same
// measure: a plain xor, and a multiply alone (whose top bit reaches no
// other).
func TestMixAvalanche(t *testing.T) {
	if bad := avalancheFlaws(mix); len(bad) > 0 {
		t.Errorf("mix: %v", bad)
	}
	for _, weak := range []struct {
		name string
		f    func(h, x uint64) uint64
	}{
		{"xor", func(h, x uint64) uint64 { return h ^ x }},
		{"multiply", func(h, x uint64) uint64 { return (h ^ x) * 0xbf58476d1ce4e5b9 }},
	} {
		if len(avalancheFlaws(weak.f)) == 0 {
			t.Errorf("the measure took the weak fold %q for a good one", weak.name)
		}
	}
}

// avalancheFlaws returns the input bits whose flip changes the result of
// f by fewer than 28 or more than 36 bits on average, or by fewer than 6
// in one case, over a thousand digests and words from a fixed sequence.
func avalancheFlaws(f func(h, x uint64) uint64) []string {
	var flaws []string
	s := uint64(hashSeed)
	next := func() uint64 { // splitmix64
		s += 0x9e3779b97f4a7c15
		z := (s ^ s>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	const n = 1000
	for _, in := range []string{"x", "h"} {
		for b := 0; b < 64; b++ {
			sum, least := 0, 64
			for range n {
				h, x := next(), next()
				h2, x2 := h, x
				if in == "x" {
					x2 ^= 1 << b
				} else {
					h2 ^= 1 << b
				}
				d := bits.OnesCount64(f(h, x) ^ f(h2, x2))
				sum, least = sum+d, min(least, d)
			}
			if avg := float64(sum) / n; avg < 28 || avg > 36 || least < 6 {
				flaws = append(flaws, fmt.Sprintf("bit %d of %s: %.1f bits on average, %d at least", b, in, avg, least))
			}
		}
	}
	return flaws
}
