package harness

import (
	"math/bits"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestLzStepsOf holds lzStepsOf, the kept walk of an instance's options
// from its anchor, to lzSteps's walk itself: the same sets step by step,
// and, for every visibility and due flag, a set is checked if and only if
// some step that commits it is checked. It runs each instance twice, the
// second time from the memo (and once more after another instance took
// the one-entry cache), so a key that left out the anchor, the live
// options or the list of orders would hand one instance another's walk.
func TestLzStepsOf(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &runner{}
		n := rapid.IntRange(2, 6).Draw(t, "stores")
		nopt := rapid.IntRange(1, 5).Draw(t, "options")
		lists := make([][][]int, rapid.IntRange(1, 2).Draw(t, "lists"))
		for l := range lists {
			for range nopt {
				perm := rapid.Permutation(identity(n)).Draw(t, "order")
				lists[l] = append(lists[l], perm)
			}
		}
		inst := func(l int, live uint64, anchorK int) *lzInst {
			lz := &lzInst{buf: make([]pending, n), anchorK: anchorK, ordsID: &lists[l][0]}
			for x := live; x != 0; x &= x - 1 {
				lz.ords[bits.TrailingZeros64(x)] = lists[l][bits.TrailingZeros64(x)]
			}
			return lz
		}
		type q struct {
			l       int
			live    uint64
			anchorK int
		}
		var qs []q
		for range rapid.IntRange(1, 6).Draw(t, "instances") {
			qs = append(qs, q{
				rapid.IntRange(0, len(lists)-1).Draw(t, "list"),
				rapid.Uint64Range(1, 1<<nopt-1).Draw(t, "live"),
				rapid.IntRange(0, n-1).Draw(t, "anchorK"),
			})
		}
		for _, x := range append(slices.Clone(qs), qs...) {
			lz := inst(x.l, x.live, x.anchorK)
			st := r.lzStepsOf(lz, x.live)
			var steps []uint64
			for mask := range lzSteps(lz, x.live, 0, false) {
				steps = append(steps, mask)
			}
			if !slices.Equal(steps, st.steps) {
				t.Fatalf("%+v: steps %v, lzSteps walks %v", x, st.steps, steps)
			}
			for _, due := range []bool{false, true} {
				for vis := lzVis(0); vis < 1<<n; vis++ {
					want := map[uint64]bool{}
					for mask, check := range lzSteps(lz, x.live, vis, due) {
						want[mask] = want[mask] || check
					}
					if len(want) != len(st.sets) {
						t.Fatalf("%+v: %d sets, lzSteps walks %d", x, len(st.sets), len(want))
					}
					for _, s := range st.sets {
						if got, ok := want[s.mask]; !ok || got != s.check(vis, due) {
							t.Fatalf("%+v vis %#x due %v: set %#x checked %v, lzSteps: %v (walked: %v)", x, vis, due, s.mask, s.check(vis, due), got, ok)
						}
					}
				}
			}
		}
	})
}
